//! Channels: lookups by id and name, a user's channels and memberships, and
//! making direct and group message channels.

use std::sync::MutexGuard;

use axum::http::StatusCode;

use super::shared::{
    ApiResult, Body, Caller, PathParams, Session, channel_not_found, json_response,
    member_not_found, ok, readable_channel, require_id, require_self, require_team_member,
    user_param,
};
use crate::error::ApiError;
use crate::model::{Channel, ChannelMember, is_valid_id, now_millis};
use crate::state::State as ServerState;

/// The caller's own id (`raw_user` must name them) and the state, for the
/// routes about one's channels in a team one is in.
fn own_team_state<'s>(
    caller: &'s Caller,
    raw_user: &str,
    team_id: &str,
) -> Result<(String, MutexGuard<'s, ServerState>), ApiError> {
    let user_id = user_param(&caller.session, raw_user)?;
    require_id(team_id, "team_id")?;
    require_self(&caller.session, &user_id)?;
    let state = caller.lock();
    require_team_member(&state, team_id, &user_id)?;
    Ok((user_id, state))
}

/// `GET /users/{user_id}/teams/{team_id}/channels`: the channels one is in
/// for a team, with one's direct and group channels.
pub(crate) async fn for_user(
    caller: Caller,
    PathParams((raw_user, team_id)): PathParams<(String, String)>,
) -> ApiResult {
    let (user_id, state) = own_team_state(&caller, &raw_user, &team_id)?;
    let channels: Vec<&Channel> = state.channels_of(&user_id, &team_id);
    ok(&channels)
}

/// `GET /users/{user_id}/teams/{team_id}/channels/members`: one's
/// memberships of those channels.
pub(crate) async fn members_for_user(
    caller: Caller,
    PathParams((raw_user, team_id)): PathParams<(String, String)>,
) -> ApiResult {
    let (user_id, state) = own_team_state(&caller, &raw_user, &team_id)?;
    let members: Vec<&ChannelMember> = state
        .channels_of(&user_id, &team_id)
        .iter()
        .filter_map(|c| state.member(&c.id, &user_id))
        .collect();
    ok(&members)
}

/// `GET /channels/{channel_id}`.
pub(crate) async fn get(caller: Caller, PathParams(channel_id): PathParams<String>) -> ApiResult {
    let state = caller.lock();
    ok(readable_channel(&state, &caller.session, &channel_id)?)
}

/// `GET /channels/{channel_id}/members/{user_id}`: one membership.
pub(crate) async fn member(
    caller: Caller,
    PathParams((channel_id, raw_user)): PathParams<(String, String)>,
) -> ApiResult {
    require_id(&channel_id, "channel_id")?;
    let user_id = user_param(&caller.session, &raw_user)?;
    let state = caller.lock_readable_channel(&channel_id)?;
    let member = state
        .member(&channel_id, &user_id)
        .ok_or_else(|| member_not_found(&channel_id, &user_id))?;
    ok(member)
}

/// Answers a channel found by name the server's way: a public channel to
/// anyone in its team (else 403); a private one only to its members, and
/// to others as if it did not exist (404), so names do not leak.
fn by_name_answer(state: &ServerState, session: &Session, team_id: &str, name: &str) -> ApiResult {
    let missing = || {
        ApiError::not_found(
            "app.channel.get_by_name.missing.app_error",
            "Channel does not exist.",
            format!("teamId={team_id}, name={name}"),
        )
    };
    let channel = state.channel_by_name(team_id, name).ok_or_else(missing)?;
    if channel.kind == "O" {
        if !state.is_team_member(team_id, &session.user_id) {
            return Err(ApiError::forbidden(&session.user_id, "read_public_channel"));
        }
    } else if !state.is_channel_member(&channel.id, &session.user_id) {
        return Err(missing());
    }
    ok(channel)
}

/// `GET /teams/{team_id}/channels/name/{name}`.
pub(crate) async fn by_name(
    caller: Caller,
    PathParams((team_id, name)): PathParams<(String, String)>,
) -> ApiResult {
    require_id(&team_id, "team_id")?;
    let state = caller.lock();
    by_name_answer(&state, &caller.session, &team_id, &name)
}

/// `GET /teams/name/{team_name}/channels/name/{name}`.
pub(crate) async fn by_team_and_channel_name(
    caller: Caller,
    PathParams((team_name, name)): PathParams<(String, String)>,
) -> ApiResult {
    let state = caller.lock();
    let team_id = state
        .team_by_name(&team_name)
        .map(|t| t.id.clone())
        .ok_or_else(|| super::teams::missing_team_name(&team_name))?;
    by_name_answer(&state, &caller.session, &team_id, &name)
}

/// Checks every id in a user id list has the right shape and names a user.
fn existing_users(state: &ServerState, ids: &[String]) -> Result<(), ApiError> {
    for id in ids {
        if !is_valid_id(id) {
            return Err(ApiError::invalid_body_param("user_id"));
        }
        if state.user(id).is_none() {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "api.context.invalid_body_param.app_error",
                "Invalid or missing user_ids in request body.",
            )
            .detail(format!("user {id} does not exist")));
        }
    }
    Ok(())
}

/// `POST /channels/direct` with `[user_id, user_id]`: the direct channel of
/// the two (one of them the caller), made when needed; 201 either way.
pub(crate) async fn create_direct(caller: Caller, body: Body) -> ApiResult {
    let ids: Vec<String> = body.json("user_ids")?;
    if ids.len() != 2 {
        return Err(ApiError::invalid_body_param("user_ids"));
    }
    let mut state = caller.lock();
    existing_users(&state, &ids)?;
    if !ids.contains(&caller.session.user_id) {
        return Err(ApiError::forbidden(
            &caller.session.user_id,
            "manage_system",
        ));
    }
    let (id, _) = state.direct_channel(&ids[0], &ids[1], now_millis());
    let channel = state
        .channel(&id)
        .ok_or_else(|| ApiError::internal("a channel just made is missing"))?;
    json_response(StatusCode::CREATED, channel)
}

/// `POST /channels/group` with user ids (the caller is added when absent):
/// the group channel of exactly those 3–8 people, made when needed.
pub(crate) async fn create_group(caller: Caller, body: Body) -> ApiResult {
    let mut ids: Vec<String> = body.json("user_ids")?;
    let mut state = caller.lock();
    existing_users(&state, &ids)?;
    if !ids.contains(&caller.session.user_id) {
        ids.push(caller.session.user_id.clone());
    }
    ids.sort();
    ids.dedup();
    if !(3..=8).contains(&ids.len()) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.channel.create_group.bad_size.app_error",
            "Group message channels must contain at least 3 and no more than 8 users.",
        )
        .detail(format!("{} users", ids.len())));
    }
    let (id, _) = state.group_channel(&ids, now_millis());
    let channel = state.channel(&id).ok_or_else(|| channel_not_found(&id))?;
    json_response(StatusCode::CREATED, channel)
}
