//! The run HTTP API and its web page: how a person (or a script holding an
//! API key) reaches a run's inbox from outside the run.
//!
//! Every `/v1` route wants `Authorization: Bearer <key>`; a missing and a
//! wrong key get the same 401. A run the key may not read answers exactly
//! like a run that does not exist, on every route, so that a key learns
//! nothing about other tenants' runs.
//!
//! - `GET /v1/runs`: the runs the key may read, each with its files.
//! - `POST /v1/runs/{run_id}/file`: the `File` tool on that run; the body is
//!   the tool's arguments (`{"op": "ls"}`), the answer its result.
//! - `GET /v1/runs/{run_id}/inbox/{path}`: one recorded inbox file, always as
//!   an attachment, under a type a browser cannot run, with its SHA-256 and
//!   producer while the bytes still match the record.
//! - `GET /v1/runs/{run_id}/events?from_seq=N`: the run's events (SSE),
//!   backlog then live; `GET /v1/events`: every readable run's live events.
//! - `/porter.v1.Runs/WatchEvents` and `/porter.v1.Runs/WatchAll`: the same
//!   two streams over gRPC (HTTP/2), the key in the `authorization` metadata
//!   ([`grpc`], `proto/porter/v1/runs.proto`).
//! - `POST /v1/runs/{run_id}/downloads`: a one-use link (`GET
//!   /downloads/{token}`, no key, one minute) to one inbox file or to all of
//!   them as a zip, so that a browser can stream a download itself.
//! - `GET /`: a small page listing the key's runs and their files, live.
//!
//! It deliberately does not run `download` or `upload` for an outside caller
//! (those fetch from or send to the network on a run's behalf), and it never
//! serves a path that is not a recorded file of the run's inbox.
//!
//! ```no_run
//! # async fn serve(state: std::sync::Arc<porter_gateway::api::ApiState>) -> std::io::Result<()> {
//! let app = porter_gateway::api::router(state);
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8766").await?;
//! axum::serve(listener, app).await
//! # }
//! ```

mod download;
mod downloads;
mod error;
mod events;
pub mod grpc;
mod page;
mod runs;
mod state;

use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::header;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post};

pub use error::ApiError;
pub use state::ApiState;

/// `API_BODY_MAX_BYTES` is the largest request body the API takes (the
/// `File` tool's arguments; 2 MiB). A body that declares more is refused on
/// its `Content-Length` before it is read.
pub const API_BODY_MAX_BYTES: usize = 2 * 1024 * 1024;

/// The HTTP API and the web page, ready to be merged with the MCP endpoint
/// on one listener. The page at `/` loads without a key (it asks for one);
/// everything under `/v1` wants one.
pub fn router(state: Arc<ApiState>) -> Router {
    let api_body_max = u64::try_from(API_BODY_MAX_BYTES).unwrap_or(u64::MAX);
    Router::new()
        .route("/v1/runs", get(runs::list))
        .route("/v1/runs/{run_id}/file", post(runs::file_op))
        .route("/v1/runs/{run_id}/inbox/{*path}", get(download::inbox_file))
        .route("/v1/runs/{run_id}/events", get(events::run_events))
        .route("/v1/events", get(events::all_events))
        .route("/v1/runs/{run_id}/downloads", post(downloads::link))
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            authenticate,
        ))
        // gRPC checks the key itself, to answer UNAUTHENTICATED as gRPC does.
        .route_service(
            "/porter.v1.Runs/{*method}",
            grpc::service(Arc::clone(&state)),
        )
        .route("/", get(page::page))
        .route("/app.js", get(page::script))
        .route("/app.css", get(page::style))
        .route("/favicon.ico", get(page::favicon))
        .route("/downloads/{token}", get(downloads::fetch))
        .layer(axum::Extension(Arc::new(downloads::Tickets::default())))
        .layer(DefaultBodyLimit::max(API_BODY_MAX_BYTES))
        .layer(middleware::from_fn_with_state(
            api_body_max,
            crate::serve::declared_body_limit,
        ))
        .with_state(state)
}

/// Finds the caller's key from its `Authorization` header and hands it to the
/// route as a request extension; anything else is a 401.
async fn authenticate(
    State(state): State<Arc<ApiState>>,
    mut request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    let key = state
        .keys
        .from_authorization(presented)
        .cloned()
        .ok_or(ApiError::Unauthorized)?;
    request.extensions_mut().insert(key);
    Ok(next.run(request).await)
}
