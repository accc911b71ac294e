//! The HTTP side: routes, authentication, request recording, and the
//! helpers every handler shares.

mod channels;
mod channels_more;
mod files;
pub(crate) mod oauth;
pub(crate) mod own_state;
mod post_changes;
mod posts;
mod search;
mod shared;
mod system;
mod teams;
mod users;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::error::ApiError;
use crate::sim::{RecordedRequest, Sim};
use crate::state::MAX_FILES_PER_POST;
use shared::{ApiResult, ok, status_ok};

/// Builds the whole application for a simulator.
pub(crate) fn router(sim: &Sim) -> Router {
    let max_file = sim.lock().config.max_file_size;
    // A request may carry up to ten files, each up to the limit, plus the
    // multipart framing; each file is checked against the limit itself.
    let upload_limit = max_file
        .saturating_mul(MAX_FILES_PER_POST as u64)
        .saturating_add(1024 * 1024);
    let upload_limit = usize::try_from(upload_limit).unwrap_or(usize::MAX);

    let api = Router::new()
        .route("/system/ping", get(system::ping))
        .route("/config/client", get(system::client_config))
        .route("/users/ids", post(users::by_ids))
        .route("/users/usernames", post(users::by_usernames))
        .route("/users/search", post(users::search))
        .route("/users/username/{username}", get(users::by_username))
        .route("/users/{user_id}", get(users::get))
        .route("/users/{user_id}/teams", get(teams::for_user))
        .route(
            "/users/{user_id}/teams/{team_id}/channels",
            get(channels::for_user),
        )
        .route(
            "/users/{user_id}/teams/{team_id}/channels/members",
            get(channels::members_for_user),
        )
        .route("/teams/{team_id}", get(teams::get))
        .route("/teams/name/{name}", get(teams::by_name))
        .route(
            "/teams/{team_id}/channels/name/{name}",
            get(channels::by_name),
        )
        .route(
            "/teams/name/{team_name}/channels/name/{name}",
            get(channels::by_team_and_channel_name),
        )
        .route("/teams/{team_id}/posts/search", post(search::posts))
        .route("/posts/search", post(search::posts))
        .route("/teams/{team_id}/files/search", post(search::files))
        .route("/files/search", post(search::files))
        .route("/channels/direct", post(channels::create_direct))
        .route("/channels/group", post(channels::create_group))
        .route("/channels/{channel_id}", get(channels::get))
        .route(
            "/channels/{channel_id}/members/{user_id}",
            get(channels::member),
        )
        .route("/channels/{channel_id}/posts", get(posts::for_channel))
        .route("/posts", post(posts::create))
        .route("/posts/{post_id}", get(posts::get))
        .route("/posts/{post_id}/thread", get(posts::thread))
        .route("/posts/{post_id}/files/info", get(posts::file_infos))
        .route(
            "/files",
            post(files::upload).layer(DefaultBodyLimit::max(upload_limit)),
        )
        .route("/files/{file_id}", get(files::download))
        .route("/files/{file_id}/info", get(files::info))
        .merge(channels_more::routes())
        .merge(post_changes::routes())
        .merge(own_state::routes())
        .merge(oauth::api_routes())
        .fallback(no_route)
        .method_not_allowed_fallback(no_route);

    Router::new()
        .nest("/api/v4", api)
        .route("/_redirect/pl/{post_id}", get(posts::permalink))
        .route("/{team}/pl/{post_id}", get(posts::permalink_page))
        .merge(oauth::web_routes())
        .fallback(web_not_found)
        .layer(middleware::from_fn_with_state(sim.clone(), record))
        // Added after the recording layer, so looking does not change what
        // is seen: a test in another process reads the log through these.
        .route("/__sim/requests", get(inspect_requests))
        .route("/__sim/requests/clear", post(inspect_clear))
        .route("/__sim/state", get(inspect_state))
        .route("/__sim/oauth/expire", post(oauth::expire_all))
        .with_state(sim.clone())
}

/// `GET /__sim/requests`: the request log as `[{method, path, query}]`, for
/// tests that drive the emulator from another process (a separate MCP
/// server, a Python client). Not part of Mattermost's API; not recorded.
async fn inspect_requests(State(sim): State<Sim>) -> ApiResult {
    ok(&sim.requests())
}

/// `POST /__sim/requests/clear`: forgets the log, so a test sees only what
/// its own step causes.
async fn inspect_clear(State(sim): State<Sim>) -> ApiResult {
    sim.clear_requests();
    status_ok()
}

/// `GET /__sim/state`: the whole state (users, channels, posts, files), to
/// compare before and after a step.
async fn inspect_state(State(sim): State<Sim>) -> ApiResult {
    ok(&sim.snapshot())
}

/// Answers any path under `/api/v4` that no route serves, whatever the
/// method, with the server's JSON 404.
async fn no_route() -> ApiError {
    ApiError::no_route()
}

/// Answers paths outside the API, where the server would serve its web app.
async fn web_not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        "Not found. This Mattermost emulator serves only the API (/api/v4) and permalinks.\n",
    )
        .into_response()
}

/// Records every request before it is handled, and adds the headers every
/// server answer carries (`X-Version-Id`, `X-Request-Id`).
async fn record(State(sim): State<Sim>, request: Request, next: Next) -> Response {
    sim.record(RecordedRequest {
        method: request.method().as_str().to_owned(),
        path: request.uri().path().to_owned(),
        query: request.uri().query().map(str::to_owned),
        user_agent: request
            .headers()
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
    });
    let version = {
        let state = sim.lock();
        format!(
            "{v}.{v}.porter-mmsim.false",
            v = state.config.version.as_str()
        )
    };
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&version) {
        headers.insert("x-version-id", value);
    }
    if !headers.contains_key("x-request-id")
        && let Ok(value) = HeaderValue::from_str(&crate::model::Ids::random_id())
    {
        headers.insert("x-request-id", value);
    }
    response
}
