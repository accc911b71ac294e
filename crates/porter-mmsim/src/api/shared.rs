//! What every handler shares: the result type and page sizes, the request
//! extractors (session, query, path, body), the JSON answers, and the
//! checks and 404s of the server's own wording.

use std::collections::HashMap;
use std::sync::MutexGuard;

use axum::extract::{FromRequest, FromRequestParts, OptionalFromRequestParts, Path, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{ApiError, JSON_TYPE};
use crate::model::{StoredPost, is_valid_id};
use crate::sim::Sim;
use crate::state::State as ServerState;

/// `ApiResult` is what every handler returns: a response, or Mattermost's
/// error JSON.
pub(crate) type ApiResult = Result<Response, ApiError>;

/// `PER_PAGE_DEFAULT` is the server's page size when none is asked for.
pub(crate) const PER_PAGE_DEFAULT: usize = 60;
/// `PER_PAGE_MAX` is the largest page the server gives; bigger asks are cut
/// to it, not refused.
pub(crate) const PER_PAGE_MAX: usize = 200;

/// Serializes `value` as the answer, with `Content-Type` exactly
/// `application/json` (Client4 parses nothing else).
pub(crate) fn json_response<T: Serialize + ?Sized>(status: StatusCode, value: &T) -> ApiResult {
    let body = serde_json::to_vec(value).map_err(|err| ApiError::internal(&err.to_string()))?;
    let mut response = (status, body).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON_TYPE));
    Ok(response)
}

/// 200 with a JSON body.
pub(crate) fn ok<T: Serialize + ?Sized>(value: &T) -> ApiResult {
    json_response(StatusCode::OK, value)
}

/// The server's `{"status": "OK"}`, the answer of a change that has
/// nothing else to say.
pub(crate) fn status_ok() -> ApiResult {
    ok(&serde_json::json!({"status": "OK"}))
}

/// `Session` is the user a request authenticates as: from
/// `Authorization: Bearer <token>` (or `Token <token>`, scheme in any
/// case — Client4 sends `BEARER`), else the `MMAUTHTOKEN` cookie, else the
/// `access_token` query parameter, in the server's order.
pub(crate) struct Session {
    pub user_id: String,
}

/// The session token a browser carries in its `MMAUTHTOKEN` cookie.
pub(crate) fn cookie_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| pair.trim().strip_prefix("MMAUTHTOKEN=").map(str::to_owned))
}

/// `Caller` is what a handler for a signed-in user starts from: the
/// request's [`Session`] and the server it asks, whose state
/// [`Caller::lock`] opens.
pub(crate) struct Caller {
    sim: Sim,
    pub session: Session,
}

impl Caller {
    /// Locks the server state.
    pub(crate) fn lock(&self) -> MutexGuard<'_, ServerState> {
        self.sim.lock()
    }

    /// Locks the server state once `channel_id` names a channel the caller
    /// may read, as [`readable_channel`] checks.
    pub(crate) fn lock_readable_channel(
        &self,
        channel_id: &str,
    ) -> Result<MutexGuard<'_, ServerState>, ApiError> {
        let state = self.lock();
        readable_channel(&state, &self.session, channel_id)?;
        Ok(state)
    }

    /// Locks the server state once `post_id` names a post the caller may
    /// read, as [`readable_post`] checks.
    pub(crate) fn lock_readable_post(
        &self,
        post_id: &str,
    ) -> Result<MutexGuard<'_, ServerState>, ApiError> {
        let state = self.lock();
        readable_post(&state, &self.session, post_id)?;
        Ok(state)
    }
}

impl FromRequestParts<Sim> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, sim: &Sim) -> Result<Self, Self::Rejection> {
        let session = Session::from_request_parts(parts, sim).await?;
        Ok(Caller {
            sim: sim.clone(),
            session,
        })
    }
}

/// Finds the token a request carries, if any.
fn token_of(parts: &Parts) -> Option<String> {
    if let Some(value) = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        && let Some((scheme, token)) = value.split_once(' ')
        && (scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("token"))
    {
        return Some(token.trim().to_owned());
    }
    if let Some(token) = cookie_token(&parts.headers) {
        return Some(token);
    }
    let query = parts.uri.query().unwrap_or("");
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(key, _)| key == "access_token")
        .map(|(_, value)| value.into_owned())
}

impl FromRequestParts<Sim> for Session {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, sim: &Sim) -> Result<Self, Self::Rejection> {
        let Some(token) = token_of(parts).filter(|t| !t.is_empty()) else {
            return Err(ApiError::unauthorized("UserRequired"));
        };
        let state = sim.lock();
        state
            .user_for_token(&token)
            .map(|user| Session {
                user_id: user.id.clone(),
            })
            .ok_or_else(|| ApiError::unauthorized("token is invalid or its user is deactivated"))
    }
}

/// `Query` holds the query parameters (the first value of each), parsed
/// leniently as the server does: a malformed page number falls back to
/// the default instead of failing the request.
pub(crate) struct Query(HashMap<String, String>);

impl Query {
    /// A parameter's value, if present.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// A parameter's value when present and not empty: the server reads an
    /// empty one as absent.
    pub(crate) fn given(&self, key: &str) -> Option<&str> {
        self.get(key).filter(|value| !value.is_empty())
    }

    /// A parameter that is true only when exactly `true`, as the server
    /// reads flags such as `skipFetchThreads`.
    pub(crate) fn flag(&self, key: &str) -> bool {
        self.get(key) == Some("true")
    }

    /// `page`, zero-based; missing, negative or malformed means 0.
    pub(crate) fn page(&self) -> usize {
        self.get("page").and_then(|p| p.parse().ok()).unwrap_or(0)
    }

    /// `per_page`: missing, negative or malformed means 60, and more than
    /// 200 is cut to 200 (the server's `PerPageMaximum`).
    pub(crate) fn per_page(&self) -> usize {
        page_size(self.get("per_page"), PER_PAGE_DEFAULT)
    }

    /// The page of `items` that `page` and `per_page` select.
    pub(crate) fn page_of<T: Clone>(&self, items: &[T]) -> Vec<T> {
        items[page_range(self.page(), self.per_page(), items.len())].to_vec()
    }
}

/// Reads a page size the server's way: missing, negative or malformed
/// means `default`, and more than [`PER_PAGE_MAX`] is cut to it.
pub(crate) fn page_size(raw: Option<&str>, default: usize) -> usize {
    raw.and_then(|p| p.parse::<usize>().ok())
        .map_or(default, |n| n.min(PER_PAGE_MAX))
}

/// Where page `page` (zero-based) of `per_page` items lies in a list of
/// `total`: empty past the end.
pub(crate) fn page_range(page: usize, per_page: usize, total: usize) -> std::ops::Range<usize> {
    let start = page.saturating_mul(per_page).min(total);
    let end = start.saturating_add(per_page).min(total);
    start..end
}

impl<S: Send + Sync> FromRequestParts<S> for Query {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let mut map = HashMap::new();
        let query = parts.uri.query().unwrap_or("");
        for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
            map.entry(key.into_owned())
                .or_insert_with(|| value.into_owned());
        }
        Ok(Query(map))
    }
}

/// `PathParams` is axum's `Path` with failures answered as the server's
/// 400 JSON instead of plain text.
pub(crate) struct PathParams<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for PathParams<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        <Path<T> as FromRequestParts<S>>::from_request_parts(parts, state)
            .await
            .map(|Path(value)| PathParams(value))
            .map_err(|_| ApiError::invalid_url_param("path"))
    }
}

/// `Option<PathParams<T>>` lets one handler serve a route with parameters
/// and one without any (`None`), as axum's `Option<Path<T>>` does.
impl<S: Send + Sync, T: DeserializeOwned + Send + 'static> OptionalFromRequestParts<S>
    for PathParams<T>
{
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &S,
    ) -> Result<Option<Self>, Self::Rejection> {
        <Path<T> as OptionalFromRequestParts<S>>::from_request_parts(parts, state)
            .await
            .map(|found| found.map(|Path(value)| PathParams(value)))
            .map_err(|_| ApiError::invalid_url_param("path"))
    }
}

/// `Body` is the raw request body, with failures (too large, cut off)
/// answered as the server's JSON.
pub(crate) struct Body(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for Body {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        Bytes::from_request(request, state)
            .await
            .map(Body)
            .map_err(|rejection| {
                if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError::new(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        "api.context.request_body_too_large.app_error",
                        "The request body is too large.",
                    )
                } else {
                    ApiError::new(
                        StatusCode::BAD_REQUEST,
                        "api.context.invalid_body_param.app_error",
                        "The request body could not be read.",
                    )
                }
            })
    }
}

impl Body {
    /// Parses the body as JSON; a body that does not parse is the server's
    /// "invalid or missing `name`" 400.
    pub(crate) fn json<T: DeserializeOwned>(&self, name: &str) -> Result<T, ApiError> {
        serde_json::from_slice(&self.0).map_err(|err| {
            ApiError::invalid_body_param(name).detail(format!("could not parse the body: {err}"))
        })
    }
}

/// Reads a body that is a list of user ids: 400 when it is empty or an id
/// is malformed.
pub(crate) fn user_id_list(body: &Body) -> Result<Vec<String>, ApiError> {
    let ids: Vec<String> = body.json("user_ids")?;
    if ids.is_empty() || ids.iter().any(|id| !is_valid_id(id)) {
        return Err(ApiError::invalid_body_param("user_ids"));
    }
    Ok(ids)
}

/// Checks a URL id parameter's shape before anything is looked up, as the
/// server does (400, not 404, for a malformed id).
pub(crate) fn require_id(value: &str, name: &str) -> Result<(), ApiError> {
    if is_valid_id(value) {
        Ok(())
    } else {
        Err(ApiError::invalid_url_param(name))
    }
}

/// Resolves a `user_id` URL parameter: `me` is the session's user.
pub(crate) fn user_param(session: &Session, raw: &str) -> Result<String, ApiError> {
    if raw == "me" {
        return Ok(session.user_id.clone());
    }
    require_id(raw, "user_id")?;
    Ok(raw.to_owned())
}

/// Refuses access to another user's private lists (teams, channels) with
/// the server's 403.
pub(crate) fn require_self(session: &Session, user_id: &str) -> Result<(), ApiError> {
    if session.user_id == user_id {
        Ok(())
    } else {
        Err(ApiError::forbidden(&session.user_id, "edit_other_users"))
    }
}

/// The `{user_id}` of a path about one's own things (`me` or one's id):
/// another user's is refused as [`require_self`] does.
pub(crate) fn own_user(session: &Session, raw: &str) -> Result<String, ApiError> {
    let user_id = user_param(session, raw)?;
    require_self(session, &user_id)?;
    Ok(user_id)
}

/// The `{user_id}` of a path about one's own things in a team (one's own,
/// as [`own_user`] checks), once the `{team_id}` is well formed and names a
/// team one is in.
pub(crate) fn own_team_member(
    state: &ServerState,
    session: &Session,
    raw_user: &str,
    team_id: &str,
) -> Result<String, ApiError> {
    let user_id = own_user(session, raw_user)?;
    require_id(team_id, "team_id")?;
    require_team_member(state, team_id, &user_id)?;
    Ok(user_id)
}

/// The server's 404 for a channel id that names no channel.
pub(crate) fn channel_not_found(id: &str) -> ApiError {
    ApiError::not_found(
        "app.channel.get.existing.app_error",
        "Unable to find the existing channel.",
        format!("channel_id={id}"),
    )
}

/// The server's 404 for a user id that names no account.
pub(crate) fn user_not_found(id: &str) -> ApiError {
    ApiError::not_found(
        "app.user.missing_account.const",
        "Unable to find the user.",
        format!("user_id={id}"),
    )
}

/// The server's 404 for a user who is not in a channel.
pub(crate) fn member_not_found(channel_id: &str, user_id: &str) -> ApiError {
    ApiError::not_found(
        "app.channel.get_member.missing.app_error",
        "No channel member found for that user ID and channel ID.",
        format!("channel_id={channel_id}, user_id={user_id}"),
    )
}

/// Refuses a team the user is not in with the server's 403 (`view_team`).
pub(crate) fn require_team_member(
    state: &ServerState,
    team_id: &str,
    user_id: &str,
) -> Result<(), ApiError> {
    if state.is_team_member(team_id, user_id) {
        Ok(())
    } else {
        Err(ApiError::forbidden(user_id, "view_team"))
    }
}

/// Finds a channel the session may read: 400 for a malformed id, 404 when
/// it does not exist, 403 when the user may not read it.
pub(crate) fn readable_channel<'s>(
    state: &'s ServerState,
    session: &Session,
    channel_id: &str,
) -> Result<&'s crate::model::Channel, ApiError> {
    require_id(channel_id, "channel_id")?;
    let channel = state
        .channel(channel_id)
        .ok_or_else(|| channel_not_found(channel_id))?;
    if state.can_read(&session.user_id, channel) {
        Ok(channel)
    } else {
        Err(ApiError::forbidden(
            &session.user_id,
            "read_channel_content",
        ))
    }
}

/// The server's 404 for a post id that names no post.
pub(crate) fn post_not_found(post_id: &str) -> ApiError {
    ApiError::not_found(
        "app.post.get.app_error",
        "Unable to get the post.",
        format!("post_id={post_id}"),
    )
}

/// Finds a post the session may read: 400 for a malformed id, 404 when
/// it does not exist, 403 when its channel is closed to the user.
pub(crate) fn readable_post<'s>(
    state: &'s ServerState,
    session: &Session,
    post_id: &str,
) -> Result<&'s StoredPost, ApiError> {
    require_id(post_id, "post_id")?;
    let post = state.post(post_id).ok_or_else(|| post_not_found(post_id))?;
    readable_channel(state, session, &post.channel_id)?;
    Ok(post)
}

/// Refuses a channel the session's user is not in (or that does not exist)
/// with the server's 403 for `permission`, what posting, uploading, pinning
/// or reacting there needs.
pub(crate) fn require_channel_member(
    state: &ServerState,
    session: &Session,
    channel_id: &str,
    permission: &str,
) -> Result<(), ApiError> {
    if state.channel(channel_id).is_some() && state.is_channel_member(channel_id, &session.user_id)
    {
        Ok(())
    } else {
        Err(ApiError::forbidden(&session.user_id, permission))
    }
}
