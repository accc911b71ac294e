//! `/teams/...` and `/users/{id}/teams`.

use super::shared::{ApiResult, Caller, PathParams, Session, ok, own_user, require_id};
use crate::error::ApiError;
use crate::model::Team;
use crate::state::State as ServerState;

/// `GET /users/{user_id}/teams`: the teams a user (only oneself) is in.
pub(crate) async fn for_user(caller: Caller, PathParams(raw): PathParams<String>) -> ApiResult {
    let user_id = own_user(&caller.session, &raw)?;
    let state = caller.lock();
    let teams: Vec<&Team> = state.teams_of(&user_id);
    ok(&teams)
}

/// Answers a team the session may view: members may; everyone else gets
/// the server's 403 (no demo team is open to all).
fn visible<'s>(state: &'s ServerState, session: &Session, team: &'s Team) -> ApiResult {
    if state.is_team_member(&team.id, &session.user_id) {
        ok(team)
    } else {
        Err(ApiError::forbidden(&session.user_id, "view_team"))
    }
}

/// `GET /teams/{team_id}`.
pub(crate) async fn get(caller: Caller, PathParams(team_id): PathParams<String>) -> ApiResult {
    require_id(&team_id, "team_id")?;
    let state = caller.lock();
    let team = state
        .team(&team_id)
        .ok_or_else(|| team_not_found(format!("id={team_id}")))?;
    visible(&state, &caller.session, team)
}

/// `GET /teams/name/{name}`.
pub(crate) async fn by_name(caller: Caller, PathParams(name): PathParams<String>) -> ApiResult {
    let state = caller.lock();
    let team = state
        .team_by_name(&name)
        .ok_or_else(|| missing_team_name(&name))?;
    visible(&state, &caller.session, team)
}

/// The server's 404 for a team that cannot be found; `detail` says what
/// was looked for.
pub(crate) fn team_not_found(detail: String) -> ApiError {
    ApiError::not_found(
        "app.team.get.find.app_error",
        "Unable to find the existing team.",
        detail,
    )
}

/// The server's 404 for a team name that names no team.
pub(crate) fn missing_team_name(name: &str) -> ApiError {
    ApiError::not_found(
        "app.team.get_by_name.missing.app_error",
        "Unable to find the existing team.",
        format!("name={name}"),
    )
}
