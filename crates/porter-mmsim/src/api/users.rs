//! `/users/...`: who someone is, by id, username or search.

use axum::http::StatusCode;
use serde::Deserialize;

use super::shared::{ApiResult, Body, Caller, PathParams, ok, user_id_list, user_param};
use crate::error::ApiError;
use crate::model::User;

/// `GET /users/{user_id}` (and `/users/me`).
pub(crate) async fn get(caller: Caller, PathParams(raw): PathParams<String>) -> ApiResult {
    let id = user_param(&caller.session, &raw)?;
    let state = caller.lock();
    let user = state.user(&id).ok_or_else(|| missing_user(&id))?;
    ok(user)
}

/// The server's 404 for a user that does not exist.
fn missing_user(what: &str) -> ApiError {
    ApiError::not_found(
        "app.user.missing_account.const",
        "Unable to find the user.",
        format!("user={what}"),
    )
}

/// `GET /users/username/{username}`.
pub(crate) async fn by_username(
    caller: Caller,
    PathParams(username): PathParams<String>,
) -> ApiResult {
    let state = caller.lock();
    let user = state.user_by_name(&username).ok_or_else(|| {
        ApiError::not_found(
            "app.user.get_by_username.app_error",
            "Unable to find an existing account matching your username for this team. This team may require an invite from the team owner to join.",
            format!("username={username}"),
        )
    })?;
    ok(user)
}

/// `POST /users/ids`: the users among the ids given (unknown ids are
/// skipped, as the server does).
pub(crate) async fn by_ids(caller: Caller, body: Body) -> ApiResult {
    let ids = user_id_list(&body)?;
    let state = caller.lock();
    let users: Vec<&User> = state.users.iter().filter(|u| ids.contains(&u.id)).collect();
    ok(&users)
}

/// `POST /users/usernames`: the users among the usernames given.
pub(crate) async fn by_usernames(caller: Caller, body: Body) -> ApiResult {
    let names: Vec<String> = body.json("usernames")?;
    if names.is_empty() {
        return Err(ApiError::invalid_body_param("usernames"));
    }
    let state = caller.lock();
    let users: Vec<&User> = state
        .users
        .iter()
        .filter(|u| names.iter().any(|n| n.eq_ignore_ascii_case(&u.username)))
        .collect();
    ok(&users)
}

/// The body of `POST /users/search` (`model.UserSearch`).
#[derive(Deserialize, Default)]
#[serde(default)]
struct UserSearch {
    term: String,
    team_id: String,
    not_in_team_id: String,
    in_channel_id: String,
    not_in_channel_id: String,
    allow_inactive: bool,
    limit: i64,
}

/// `USER_SEARCH_DEFAULT_LIMIT` and `USER_SEARCH_MAX_LIMIT` are the server's
/// result limits for user search.
const USER_SEARCH_DEFAULT_LIMIT: i64 = 100;
/// See [`USER_SEARCH_DEFAULT_LIMIT`].
const USER_SEARCH_MAX_LIMIT: i64 = 1000;

/// `POST /users/search`: users whose username, names or nickname (or any
/// word of them) start with the term.
pub(crate) async fn search(caller: Caller, body: Body) -> ApiResult {
    let query: UserSearch = body.json("term")?;
    let term = query.term.trim().trim_start_matches('@').to_lowercase();
    if term.is_empty() {
        return Err(ApiError::invalid_body_param("term"));
    }
    let limit = match query.limit {
        0 => USER_SEARCH_DEFAULT_LIMIT,
        n if !(1..=USER_SEARCH_MAX_LIMIT).contains(&n) => {
            return Err(ApiError::invalid_body_param("limit"));
        }
        n => n,
    };
    let state = caller.lock();
    let matches = |user: &User| {
        let full_name = format!("{} {}", user.first_name, user.last_name).to_lowercase();
        user.search_fields()
            .iter()
            .map(|f| f.to_lowercase())
            .chain(std::iter::once(full_name))
            .any(|field| {
                field.starts_with(&term)
                    || field
                        .split(|c: char| !c.is_alphanumeric())
                        .any(|word| word.starts_with(&term))
            })
    };
    let users: Vec<&User> = state
        .users
        .iter()
        .filter(|u| query.allow_inactive || !u.is_deleted())
        .filter(|u| query.team_id.is_empty() || state.is_team_member(&query.team_id, &u.id))
        .filter(|u| {
            query.not_in_team_id.is_empty() || !state.is_team_member(&query.not_in_team_id, &u.id)
        })
        .filter(|u| {
            query.in_channel_id.is_empty() || state.is_channel_member(&query.in_channel_id, &u.id)
        })
        .filter(|u| {
            query.not_in_channel_id.is_empty()
                || !state.is_channel_member(&query.not_in_channel_id, &u.id)
        })
        .filter(|u| matches(u))
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
        .collect();
    super::shared::json_response(StatusCode::OK, &users)
}
