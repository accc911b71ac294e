//! Teams, channels and people beyond the core: a team's public and
//! archived channels, channel stats and members (list, add, remove),
//! creating a channel, marking one read, and presence (status and custom
//! status).

use axum::Router;
use axum::http::StatusCode;
use axum::routing::{get, post, put};
use serde::Deserialize;
use serde_json::{Value, json};

use super::shared::{
    ApiResult, Body, Caller, PathParams, Query, Session, channel_not_found, json_response,
    member_not_found, ok, own_user, require_id, require_self, status_ok, user_id_list,
    user_not_found, user_param,
};
use crate::error::ApiError;
use crate::model::{Channel, ChannelMember, Status, is_valid_id, now_millis};
use crate::sim::Sim;
use crate::state::State as ServerState;

/// `CHANNEL_NAME_MAX` is the longest channel URL name the server takes.
const CHANNEL_NAME_MAX: usize = 64;
/// `CUSTOM_STATUS_TEXT_MAX` is the longest custom status text, in characters.
const CUSTOM_STATUS_TEXT_MAX: usize = 100;
/// `STATUSES` are the presences a person can set.
const STATUSES: [&str; 4] = ["online", "away", "dnd", "offline"];

/// The routes this file serves, merged into the API router.
pub(crate) fn routes() -> Router<Sim> {
    Router::new()
        .route("/teams/{team_id}/channels", get(team_channels))
        .route("/teams/{team_id}/channels/deleted", get(archived_channels))
        .route("/channels", post(create))
        .route(
            "/channels/{channel_id}/members",
            get(members).post(add_members),
        )
        .route(
            "/channels/{channel_id}/members/{user_id}",
            axum::routing::delete(remove_member),
        )
        .route("/channels/members/{user_id}/view", post(view))
        .route("/users/status/ids", post(statuses_by_ids))
        .route("/users/{user_id}/status", get(status).put(set_status))
        .route(
            "/users/{user_id}/status/custom",
            put(set_custom_status).delete(clear_custom_status),
        )
}

/// Checks the user is in a team (`list_team_channels`).
fn require_team(state: &ServerState, session: &Session, team_id: &str) -> Result<(), ApiError> {
    if state.is_team_member(team_id, &session.user_id) {
        Ok(())
    } else {
        Err(ApiError::forbidden(&session.user_id, "list_team_channels"))
    }
}

/// A page of the team's channels that `keep` admits, in shown-name order,
/// for a user who is in the team.
fn team_listing(
    caller: &Caller,
    team_id: &str,
    query: &Query,
    keep: impl Fn(&ServerState, &Channel) -> bool,
) -> ApiResult {
    require_id(team_id, "team_id")?;
    let state = caller.lock();
    require_team(&state, &caller.session, team_id)?;
    let mut list: Vec<Channel> = state
        .channels
        .iter()
        .filter(|c| c.team_id == team_id && keep(&state, c))
        .cloned()
        .collect();
    list.sort_by(|a, b| (&a.display_name, &a.name).cmp(&(&b.display_name, &b.name)));
    ok(&query.page_of(&list))
}

/// `GET /teams/{team_id}/channels`: the team's public, unarchived channels.
async fn team_channels(
    caller: Caller,
    PathParams(team_id): PathParams<String>,
    query: Query,
) -> ApiResult {
    team_listing(&caller, &team_id, &query, |_, c| {
        c.kind == "O" && c.delete_at == 0
    })
}

/// `GET /teams/{team_id}/channels/deleted`: the team's archived channels:
/// public ones, and private ones the user is in.
async fn archived_channels(
    caller: Caller,
    PathParams(team_id): PathParams<String>,
    query: Query,
) -> ApiResult {
    team_listing(&caller, &team_id, &query, |state, c| {
        c.delete_at != 0
            && (c.kind == "O" || state.is_channel_member(&c.id, &caller.session.user_id))
    })
}

/// `GET /channels/{channel_id}/members`: the memberships, paged.
async fn members(
    caller: Caller,
    PathParams(channel_id): PathParams<String>,
    query: Query,
) -> ApiResult {
    let state = caller.lock_readable_channel(&channel_id)?;
    let list: Vec<ChannelMember> = state
        .members
        .iter()
        .filter(|m| m.channel_id == channel_id)
        .cloned()
        .collect();
    ok(&query.page_of(&list))
}

/// The body of `POST /channels/{channel_id}/members`: one `user_id` or
/// several `user_ids`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct AddMembers {
    user_id: String,
    user_ids: Vec<String>,
}

/// The permission the session needs to change a channel's members: its
/// own joining of a public channel needs only the team; anything else
/// needs the channel.
fn may_manage(state: &ServerState, session: &Session, channel: &Channel, only_self: bool) -> bool {
    if channel.kind == "O" && only_self {
        state.is_team_member(&channel.team_id, &session.user_id)
    } else {
        state.is_channel_member(&channel.id, &session.user_id)
    }
}

fn manage_permission(channel: &Channel) -> &'static str {
    if channel.kind == "O" {
        "manage_public_channel_members"
    } else {
        "manage_private_channel_members"
    }
}

/// `USER_IDS_SINCE` is the first Mattermost release whose
/// `POST /channels/{channel_id}/members` reads `user_ids`; older ones read
/// only `user_id` and answer 400 without it.
const USER_IDS_SINCE: (u32, u32) = (9, 3);

/// Whether a server of `version` (`major.minor…`) reads `user_ids`; a
/// version the emulator cannot read counts as a current one.
fn reads_user_ids(version: &str) -> bool {
    let mut parts = version.split('.').map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) => (major, minor) >= USER_IDS_SINCE,
        _ => true,
    }
}

/// `POST /channels/{channel_id}/members`: adds one person (`user_id`,
/// answering the membership) or several (`user_ids`, answering the list;
/// from 9.3 on, as the seed's version says); 201.
async fn add_members(
    caller: Caller,
    PathParams(channel_id): PathParams<String>,
    body: Body,
) -> ApiResult {
    require_id(&channel_id, "channel_id")?;
    let mut asked: AddMembers = body.json("user_id")?;
    if !reads_user_ids(&caller.lock().config.version) {
        asked.user_ids.clear();
        if asked.user_id.is_empty() {
            return Err(ApiError::invalid_body_param("user_id"));
        }
    }
    let single = asked.user_ids.is_empty();
    let ids = if single {
        vec![asked.user_id]
    } else {
        asked.user_ids
    };
    if ids.iter().any(|id| !is_valid_id(id)) {
        return Err(ApiError::invalid_body_param(if single {
            "user_id"
        } else {
            "user_ids"
        }));
    }
    let mut state = caller.lock();
    let channel = state
        .channel(&channel_id)
        .cloned()
        .ok_or_else(|| channel_not_found(&channel_id))?;
    if channel.is_direct_or_group() {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.channel.add_user_to_channel.type.app_error",
            "Can not add user to this channel type.",
        ));
    }
    let only_self = ids.iter().all(|id| *id == caller.session.user_id);
    if !may_manage(&state, &caller.session, &channel, only_self) {
        let permission = if only_self {
            "join_public_channels"
        } else {
            manage_permission(&channel)
        };
        return Err(ApiError::forbidden(&caller.session.user_id, permission));
    }
    if channel.delete_at != 0 {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.channel.add_members.deleted.app_error",
            "The channel is archived; unarchive it to add members.",
        )
        .detail(format!("channel_id={channel_id}")));
    }
    for id in &ids {
        let user = state.user(id).ok_or_else(|| user_not_found(id))?;
        if user.is_deleted() || !state.is_team_member(&channel.team_id, id) {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "api.channel.add_user.to.channel.failed.deleted.app_error",
                "Failed to add user to channel because they have been removed from the team.",
            )
            .detail(format!("user_id={id}")));
        }
    }
    let at = now_millis();
    for id in &ids {
        state.add_channel_member(&channel_id, id, at);
    }
    let added: Vec<ChannelMember> = ids
        .iter()
        .filter_map(|id| state.member(&channel_id, id).cloned())
        .collect();
    if single {
        let member = added
            .first()
            .ok_or_else(|| ApiError::internal("a member just added is missing"))?;
        json_response(StatusCode::CREATED, member)
    } else {
        json_response(StatusCode::CREATED, &added)
    }
}

/// `DELETE /channels/{channel_id}/members/{user_id}`: leaving (oneself) or
/// removing someone; never from a direct or group channel, nor from the
/// team's default channel.
async fn remove_member(
    caller: Caller,
    PathParams((channel_id, raw_user)): PathParams<(String, String)>,
) -> ApiResult {
    require_id(&channel_id, "channel_id")?;
    let user_id = user_param(&caller.session, &raw_user)?;
    let mut state = caller.lock();
    let channel = state
        .channel(&channel_id)
        .cloned()
        .ok_or_else(|| channel_not_found(&channel_id))?;
    if !state.can_read(&caller.session.user_id, &channel) {
        return Err(ApiError::forbidden(&caller.session.user_id, "read_channel"));
    }
    if channel.is_direct_or_group() {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.channel.remove_user_from_channel.type.app_error",
            "Can not remove user from this channel type.",
        ));
    }
    if channel.name == "town-square" {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.channel.remove.default.app_error",
            format!(
                "Unable to remove user from the default channel {}.",
                channel.name
            ),
        ));
    }
    let only_self = user_id == caller.session.user_id;
    if !only_self && !state.is_channel_member(&channel_id, &caller.session.user_id) {
        return Err(ApiError::forbidden(
            &caller.session.user_id,
            manage_permission(&channel),
        ));
    }
    if !state.remove_channel_member(&channel_id, &user_id) {
        return Err(member_not_found(&channel_id, &user_id));
    }
    status_ok()
}

/// The body of `POST /channels`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct NewChannel {
    team_id: String,
    name: String,
    display_name: String,
    #[serde(rename = "type")]
    kind: String,
    purpose: String,
    header: String,
}

/// Tells whether a URL name keeps the server's rules: 2 to 64 of
/// lowercase letters, digits, `-` and `_`, starting and ending with a
/// letter or digit, and not shaped like a direct channel's `id__id`.
pub(crate) fn valid_channel_name(name: &str) -> bool {
    let allowed = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    let ends = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    (2..=CHANNEL_NAME_MAX).contains(&name.len())
        && allowed
        && ends(name.chars().next())
        && ends(name.chars().last())
        && !name.contains("__")
}

fn invalid_channel(id: &'static str, message: &str, detail: String) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, id, message).detail(detail)
}

/// `POST /channels`: a new public (`O`) or private (`P`) channel in a team
/// the user is in, with them as its admin; 201.
async fn create(caller: Caller, body: Body) -> ApiResult {
    let asked: NewChannel = body.json("channel")?;
    if asked.kind == "D" || asked.kind == "G" {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.channel.create_channel.direct_channel.app_error",
            "Must use createDirectChannel API service for direct message channel creation.",
        ));
    }
    if asked.kind != "O" && asked.kind != "P" {
        return Err(ApiError::invalid_body_param("channel.type"));
    }
    if !is_valid_id(&asked.team_id) {
        return Err(ApiError::invalid_body_param("channel.team_id"));
    }
    let mut state = caller.lock();
    if !state.is_team_member(&asked.team_id, &caller.session.user_id) {
        let permission = if asked.kind == "O" {
            "create_public_channel"
        } else {
            "create_private_channel"
        };
        return Err(ApiError::forbidden(&caller.session.user_id, permission));
    }
    let display = asked.display_name.trim();
    if display.is_empty() || display.chars().count() > CHANNEL_NAME_MAX {
        return Err(invalid_channel(
            "model.channel.is_valid.display_name.app_error",
            "Invalid display name.",
            format!("display_name={display}"),
        ));
    }
    if !valid_channel_name(&asked.name) {
        return Err(invalid_channel(
            "model.channel.is_valid.2_or_more.app_error",
            "Name must be 2 or more lowercase alphanumeric characters.",
            format!("name={}", asked.name),
        ));
    }
    if asked.purpose.chars().count() > 250 {
        return Err(invalid_channel(
            "model.channel.is_valid.purpose.app_error",
            "Invalid purpose.",
            String::new(),
        ));
    }
    if asked.header.chars().count() > 1024 {
        return Err(invalid_channel(
            "model.channel.is_valid.header.app_error",
            "Invalid header.",
            String::new(),
        ));
    }
    if let Some(taken) = state.channel_by_name(&asked.team_id, &asked.name) {
        let (id, message) = if taken.delete_at == 0 {
            (
                "store.sql_channel.save_channel.exists.app_error",
                "A channel with that name already exists on the same team.",
            )
        } else {
            (
                "store.sql_channel.save_channel.previously.app_error",
                "A channel with that URL was previously created.",
            )
        };
        return Err(invalid_channel(id, message, format!("name={}", asked.name)));
    }
    let id = state.create_team_channel(
        &asked.team_id,
        &asked.kind,
        &asked.name,
        display,
        &caller.session.user_id,
        now_millis(),
    );
    if let Some(made) = state.channels.iter_mut().find(|c| c.id == id) {
        made.purpose = asked.purpose;
        made.header = asked.header;
    }
    let channel = state.channel(&id).ok_or_else(|| channel_not_found(&id))?;
    json_response(StatusCode::CREATED, channel)
}

/// The body of `POST /channels/members/{user_id}/view`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct View {
    channel_id: String,
}

/// `POST /channels/members/{user_id}/view`: marks a channel read for
/// oneself; answers the times set, per channel (none when not a member).
async fn view(caller: Caller, PathParams(raw_user): PathParams<String>, body: Body) -> ApiResult {
    let user_id = own_user(&caller.session, &raw_user)?;
    let asked: View = body.json("channel_id")?;
    if !is_valid_id(&asked.channel_id) {
        return Err(ApiError::invalid_body_param("channel_view.channel_id"));
    }
    let mut state = caller.lock();
    let count = state
        .channel(&asked.channel_id)
        .map(|c| (c.total_msg_count, c.total_msg_count_root));
    let mut times = serde_json::Map::new();
    if let Some((total, root)) = count
        && let Some(member) = state.member_mut(&asked.channel_id, &user_id)
    {
        let at = now_millis();
        member.last_viewed_at = at;
        member.last_update_at = at;
        member.msg_count = total;
        member.msg_count_root = root;
        member.mention_count = 0;
        member.mention_count_root = 0;
        member.urgent_mention_count = 0;
        times.insert(asked.channel_id.clone(), json!(at));
    }
    ok(&json!({"status": "OK", "last_viewed_at_times": times}))
}

/// Someone's presence; offline when never set.
fn status_of(state: &ServerState, user_id: &str) -> Status {
    state.statuses.get(user_id).cloned().unwrap_or(Status {
        user_id: user_id.to_owned(),
        status: "offline".to_owned(),
        manual: false,
        last_activity_at: 0,
        dnd_end_time: 0,
    })
}

/// `GET /users/{user_id}/status`.
async fn status(caller: Caller, PathParams(raw_user): PathParams<String>) -> ApiResult {
    let user_id = user_param(&caller.session, &raw_user)?;
    let state = caller.lock();
    state
        .user(&user_id)
        .ok_or_else(|| user_not_found(&user_id))?;
    ok(&status_of(&state, &user_id))
}

/// `POST /users/status/ids`: the presences of the users among the ids.
async fn statuses_by_ids(caller: Caller, body: Body) -> ApiResult {
    let ids = user_id_list(&body)?;
    let state = caller.lock();
    let list: Vec<Status> = ids
        .iter()
        .filter(|id| state.user(id).is_some())
        .map(|id| status_of(&state, id))
        .collect();
    ok(&list)
}

/// The body of `PUT /users/{user_id}/status`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct NewStatus {
    user_id: String,
    status: String,
    dnd_end_time: i64,
}

/// `PUT /users/{user_id}/status`: sets one's own presence by hand.
async fn set_status(
    caller: Caller,
    PathParams(raw_user): PathParams<String>,
    body: Body,
) -> ApiResult {
    let user_id = user_param(&caller.session, &raw_user)?;
    let asked: NewStatus = body.json("status")?;
    if asked.user_id != user_id {
        return Err(ApiError::invalid_body_param("user_id"));
    }
    require_self(&caller.session, &user_id)?;
    if !STATUSES.contains(&asked.status.as_str()) {
        return Err(ApiError::invalid_body_param("status"));
    }
    let status = Status {
        user_id: user_id.clone(),
        dnd_end_time: if asked.status == "dnd" {
            asked.dnd_end_time.max(0)
        } else {
            0
        },
        status: asked.status,
        manual: true,
        last_activity_at: now_millis(),
    };
    let mut state = caller.lock();
    state.statuses.insert(user_id, status.clone());
    ok(&status)
}

/// The body of `PUT /users/{user_id}/status/custom`.
#[derive(Deserialize, serde::Serialize, Default)]
#[serde(default)]
struct CustomStatus {
    emoji: String,
    text: String,
    duration: String,
    expires_at: String,
}

/// Keeps a custom status (as JSON text) in the user's
/// `props.customStatus`, or with `None` takes it away.
fn set_custom_status_prop(caller: &Caller, user_id: &str, text: Option<String>) -> ApiResult {
    let mut state = caller.lock();
    let user = state
        .users
        .iter_mut()
        .find(|u| u.id == user_id)
        .ok_or_else(|| user_not_found(user_id))?;
    match text {
        Some(text) => user
            .props
            .insert("customStatus".to_owned(), Value::String(text)),
        None => user.props.remove("customStatus"),
    };
    user.update_at = now_millis();
    status_ok()
}

/// `PUT /users/{user_id}/status/custom`: sets one's custom status (kept
/// in the user's `props.customStatus` as a JSON string, as the server does).
async fn set_custom_status(
    caller: Caller,
    PathParams(raw_user): PathParams<String>,
    body: Body,
) -> ApiResult {
    let user_id = own_user(&caller.session, &raw_user)?;
    let asked: CustomStatus = body.json("custom_status")?;
    if asked.text.trim().is_empty() && asked.emoji.trim().is_empty() {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.custom_status.set_custom_statuses.update.app_error",
            "Failed to update the custom status. Please add either emoji or custom text status or both.",
        ));
    }
    let durations = [
        "",
        "thirty_minutes",
        "one_hour",
        "four_hours",
        "today",
        "this_week",
        "date_and_time",
    ];
    if asked.text.chars().count() > CUSTOM_STATUS_TEXT_MAX
        || !durations.contains(&asked.duration.as_str())
        || (!asked.expires_at.is_empty()
            && crate::model::parse_rfc3339_millis(&asked.expires_at).is_none())
    {
        return Err(ApiError::invalid_body_param("custom_status"));
    }
    let text = serde_json::to_string(&asked).map_err(|e| ApiError::internal(&e.to_string()))?;
    set_custom_status_prop(&caller, &user_id, Some(text))
}

/// `DELETE /users/{user_id}/status/custom`: clears one's custom status.
async fn clear_custom_status(
    caller: Caller,
    PathParams(raw_user): PathParams<String>,
) -> ApiResult {
    let user_id = own_user(&caller.session, &raw_user)?;
    set_custom_status_prop(&caller, &user_id, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channel_names_follow_the_servers_rules() {
        for good in ["ab", "release-2026", "team_room", "a1"] {
            assert!(valid_channel_name(good), "{good}");
        }
        let long = "a".repeat(65);
        for bad in [
            "a",
            "Upper",
            "has space",
            "-lead",
            "trail_",
            "abcdefghijklmnopqrstuvwxyz__abcdefghijklmnopqrstuvwxyz",
            long.as_str(),
            "dots.here",
        ] {
            assert!(!valid_channel_name(bad), "{bad}");
        }
    }

    #[test]
    fn only_servers_from_9_3_on_read_user_ids() {
        for (version, reads) in [
            ("9.2.5", false),
            ("8.1.0", false),
            ("9.3.0", true),
            ("9.11.1", true),
            ("10.11.0", true),
            ("", true),
        ] {
            assert_eq!(reads_user_ids(version), reads, "{version:?}");
        }
    }
}
