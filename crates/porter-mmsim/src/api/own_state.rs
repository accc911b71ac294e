//! A person's own state: typing, followed threads, preferences (saved
//! posts are the `flagged_post` category), post reminders, drafts, and
//! signing in with a password (`POST /users/login`).
//!
//! None of this is seen by other people, so a real server checks little
//! beyond "is it your own account" and "may you read or post in that
//! channel"; the emulator checks the same and keeps what was set so tests
//! can read it back through the API or `/__sim/state`.

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode};
use axum::routing::{delete, get, post, put};
use serde::Deserialize;

use super::shared::{
    ApiResult, Body, Caller, PathParams, Session, json_response, ok, own_team_member, own_user,
    readable_channel, readable_post, require_channel_member, require_id, status_ok,
};
use crate::error::ApiError;
use crate::model::{Ids, now_millis};
use crate::sim::Sim;
use crate::state::State as ServerState;
use crate::state::own::{Draft, Following, Preference, Reminder, Typing};

/// `MAX_PREFERENCES` is the most preferences one request may set or
/// delete, as on a server.
const MAX_PREFERENCES: usize = 100;

/// `FLAGGED_POST` is the preference category Mattermost keeps saved
/// ("flagged") posts in: one preference per post, named by its id.
pub(crate) const FLAGGED_POST: &str = "flagged_post";

/// The routes of this file, merged into the API router.
pub(crate) fn routes() -> Router<Sim> {
    Router::new()
        .route("/users/login", post(login))
        .route("/users/{user_id}/typing", post(typing))
        .route(
            "/users/{user_id}/teams/{team_id}/threads/{thread_id}/following",
            put(follow).delete(unfollow),
        )
        .route(
            "/users/{user_id}/preferences",
            get(preferences).put(save_preferences),
        )
        .route(
            "/users/{user_id}/preferences/delete",
            post(delete_preferences),
        )
        .route("/users/{user_id}/posts/{post_id}/reminder", post(reminder))
        .route("/users/{user_id}/teams/{team_id}/drafts", get(drafts))
        .route("/drafts", post(upsert_draft))
        .route(
            "/users/{user_id}/channels/{channel_id}/drafts",
            delete(delete_channel_draft),
        )
        .route(
            "/users/{user_id}/channels/{channel_id}/drafts/{root_id}",
            delete(delete_thread_draft),
        )
}

/// A channel the session may post in (membership, as `create_post`
/// needs): 400 for a malformed id, 404 when missing, 403 otherwise.
fn postable_channel(
    state: &ServerState,
    session: &Session,
    channel_id: &str,
) -> Result<(), ApiError> {
    readable_channel(state, session, channel_id)?;
    require_channel_member(state, session, channel_id, "create_post")
}

// ----- login -----

/// The body of `POST /users/login`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct LoginBody {
    login_id: String,
    password: String,
    token: String,
}

/// `POST /users/login`: a username or e-mail and password (and the MFA
/// code when the account has MFA). Answers the user, with the new session
/// token in the `Token` header, as the server does.
async fn login(State(sim): State<Sim>, body: Body) -> ApiResult {
    let asked: LoginBody = body.json("login_id")?;
    if asked.login_id.is_empty() {
        return Err(ApiError::invalid_body_param("login_id"));
    }
    let invalid = || {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "api.user.login.invalid_credentials_email_username",
            "Enter a valid email or username and/or password.",
        )
    };
    let mut state = sim.lock();
    let wanted = asked.login_id.trim().to_ascii_lowercase();
    let user = state
        .users
        .iter()
        .find(|u| u.username == wanted.trim_start_matches('@') || u.email == wanted)
        .cloned()
        .ok_or_else(invalid)?;
    let login = state
        .own
        .logins
        .get(&user.id)
        .cloned()
        .ok_or_else(invalid)?;
    if login.password != asked.password {
        return Err(invalid());
    }
    if let Some(code) = &login.mfa_code
        && code != asked.token.trim()
    {
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "mfa.validate_token.authenticate.app_error",
            "Invalid MFA token.",
        ));
    }
    if user.is_deleted() {
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "api.user.login.inactive.app_error",
            "Login failed because your account has been deactivated. Please contact an administrator.",
        ));
    }
    let token = Ids::random_id();
    state.tokens.insert(token.clone(), user.id.clone());
    let mut response = json_response(StatusCode::OK, &user)?;
    let value = HeaderValue::from_str(&token).map_err(|e| ApiError::internal(&e.to_string()))?;
    response.headers_mut().insert("token", value);
    Ok(response)
}

// ----- typing, threads, reminders -----

/// The body of `POST /users/{user_id}/typing`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct TypingBody {
    channel_id: String,
    parent_id: String,
}

/// `POST /users/{user_id}/typing`: tells the channel the person is typing.
async fn typing(caller: Caller, PathParams(raw): PathParams<String>, body: Body) -> ApiResult {
    let user_id = own_user(&caller.session, &raw)?;
    let asked: TypingBody = body.json("channel_id")?;
    let mut state = caller.lock();
    postable_channel(&state, &caller.session, &asked.channel_id)?;
    if !asked.parent_id.is_empty() {
        readable_post(&state, &caller.session, &asked.parent_id)?;
    }
    state.own.typing.push(Typing {
        user_id,
        channel_id: asked.channel_id,
        parent_id: asked.parent_id,
        at: now_millis(),
    });
    status_ok()
}

/// Checks a follow or unfollow and answers what it acts on.
fn thread_target(
    state: &ServerState,
    session: &Session,
    raw_user: &str,
    team_id: &str,
    thread_id: &str,
) -> Result<Following, ApiError> {
    let user_id = own_team_member(state, session, raw_user, team_id)?;
    let post = readable_post(state, session, thread_id)?;
    if !post.root_id.is_empty() {
        return Err(ApiError::invalid_url_param("thread_id"));
    }
    Ok(Following {
        user_id,
        team_id: team_id.to_owned(),
        thread_id: thread_id.to_owned(),
    })
}

/// `PUT /users/{user_id}/teams/{team_id}/threads/{thread_id}/following`.
async fn follow(
    caller: Caller,
    PathParams((raw, team_id, thread_id)): PathParams<(String, String, String)>,
) -> ApiResult {
    let mut state = caller.lock();
    let target = thread_target(&state, &caller.session, &raw, &team_id, &thread_id)?;
    let known = state
        .own
        .following
        .iter()
        .any(|f| f.user_id == target.user_id && f.thread_id == target.thread_id);
    if !known {
        state.own.following.push(target);
    }
    status_ok()
}

/// `DELETE /users/{user_id}/teams/{team_id}/threads/{thread_id}/following`.
async fn unfollow(
    caller: Caller,
    PathParams((raw, team_id, thread_id)): PathParams<(String, String, String)>,
) -> ApiResult {
    let mut state = caller.lock();
    let target = thread_target(&state, &caller.session, &raw, &team_id, &thread_id)?;
    state
        .own
        .following
        .retain(|f| !(f.user_id == target.user_id && f.thread_id == target.thread_id));
    status_ok()
}

/// The body of `POST /users/{user_id}/posts/{post_id}/reminder`.
#[derive(Deserialize)]
struct ReminderBody {
    target_time: i64,
}

/// `POST /users/{user_id}/posts/{post_id}/reminder`: `target_time` is in
/// seconds since the epoch and must be in the future.
async fn reminder(
    caller: Caller,
    PathParams((raw, post_id)): PathParams<(String, String)>,
    body: Body,
) -> ApiResult {
    if !caller.lock().config.post_reminders {
        return Err(ApiError::no_route());
    }
    let user_id = own_user(&caller.session, &raw)?;
    let asked: ReminderBody = body.json("target_time")?;
    let mut state = caller.lock_readable_post(&post_id)?;
    if asked.target_time <= now_millis() / 1000 {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "app.post.set_reminder.past_time.app_error",
            "Target time cannot be in the past.",
        ));
    }
    state
        .own
        .reminders
        .retain(|r| !(r.user_id == user_id && r.post_id == post_id));
    state.own.reminders.push(Reminder {
        user_id,
        post_id,
        target_time: asked.target_time,
    });
    status_ok()
}

// ----- preferences -----

/// `GET /users/{user_id}/preferences`: every preference of the person.
async fn preferences(caller: Caller, PathParams(raw): PathParams<String>) -> ApiResult {
    let user_id = own_user(&caller.session, &raw)?;
    let state = caller.lock();
    let mine: Vec<&Preference> = state
        .own
        .preferences
        .iter()
        .filter(|p| p.user_id == user_id)
        .collect();
    ok(&mine)
}

/// Reads and checks a list of preferences for the `{user_id}` of the path,
/// which must be one's own: 1 to 100, each the session's.
fn preference_list(
    session: &Session,
    raw_user: &str,
    body: &Body,
) -> Result<Vec<Preference>, ApiError> {
    let user_id = own_user(session, raw_user)?;
    let list: Vec<Preference> = body.json("preferences")?;
    if list.is_empty() || list.len() > MAX_PREFERENCES {
        return Err(ApiError::invalid_body_param("preferences"));
    }
    if list.iter().any(|p| p.user_id != user_id) {
        return Err(ApiError::forbidden(&user_id, "edit_other_users"));
    }
    if list
        .iter()
        .any(|p| p.category.is_empty() || p.name.is_empty())
    {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "model.preference.is_valid.category.app_error",
            "Invalid category or name.",
        ));
    }
    Ok(list)
}

/// `PUT /users/{user_id}/preferences`: sets each (category, name); saving a
/// post (`flagged_post`) needs read access to it.
async fn save_preferences(
    caller: Caller,
    PathParams(raw): PathParams<String>,
    body: Body,
) -> ApiResult {
    let list = preference_list(&caller.session, &raw, &body)?;
    let mut state = caller.lock();
    for preference in &list {
        if preference.category == FLAGGED_POST {
            readable_post(&state, &caller.session, &preference.name)?;
        }
    }
    for preference in list {
        let own = &mut state.own.preferences;
        match own.iter_mut().find(|p| {
            p.user_id == preference.user_id
                && p.category == preference.category
                && p.name == preference.name
        }) {
            Some(existing) => existing.value = preference.value,
            None => own.push(preference),
        }
    }
    status_ok()
}

/// `POST /users/{user_id}/preferences/delete`.
async fn delete_preferences(
    caller: Caller,
    PathParams(raw): PathParams<String>,
    body: Body,
) -> ApiResult {
    let list = preference_list(&caller.session, &raw, &body)?;
    let mut state = caller.lock();
    state.own.preferences.retain(|p| {
        !list
            .iter()
            .any(|d| d.user_id == p.user_id && d.category == p.category && d.name == p.name)
    });
    status_ok()
}

// ----- drafts -----

/// `GET /users/{user_id}/teams/{team_id}/drafts`: the person's drafts in
/// the team's channels and in their direct and group channels, newest
/// first.
async fn drafts(
    caller: Caller,
    PathParams((raw, team_id)): PathParams<(String, String)>,
) -> ApiResult {
    let state = caller.lock();
    let user_id = own_team_member(&state, &caller.session, &raw, &team_id)?;
    let mut list: Vec<&Draft> = state
        .own
        .drafts
        .iter()
        .filter(|d| d.user_id == user_id && d.delete_at == 0)
        .filter(|d| {
            state
                .channel(&d.channel_id)
                .is_some_and(|c| c.team_id == team_id || c.is_direct_or_group())
        })
        .collect();
    list.sort_by_key(|d| std::cmp::Reverse(d.update_at));
    ok(&list)
}

/// `POST /drafts`: creates or replaces the draft for (user, channel,
/// root); answers it with 201, as the server does.
async fn upsert_draft(caller: Caller, body: Body) -> ApiResult {
    let mut draft: Draft = body.json("draft")?;
    if draft.user_id != caller.session.user_id {
        return Err(ApiError::forbidden(&caller.session.user_id, "create_post"));
    }
    let mut state = caller.lock();
    postable_channel(&state, &caller.session, &draft.channel_id)?;
    if !draft.root_id.is_empty() {
        let root = readable_post(&state, &caller.session, &draft.root_id)?;
        if root.channel_id != draft.channel_id {
            return Err(ApiError::invalid_body_param("root_id"));
        }
    }
    if draft.message.chars().count() as u64 > state.config.max_post_size {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "model.draft.is_valid.message_length.app_error",
            "Invalid message length.",
        ));
    }
    let now = now_millis();
    let drafts = &mut state.own.drafts;
    if let Some(existing) = drafts.iter_mut().find(|d| {
        d.user_id == draft.user_id && d.channel_id == draft.channel_id && d.root_id == draft.root_id
    }) {
        draft.create_at = if existing.delete_at == 0 {
            existing.create_at
        } else {
            now
        };
        draft.update_at = now;
        draft.delete_at = 0;
        *existing = draft.clone();
    } else {
        draft.create_at = now;
        draft.update_at = now;
        draft.delete_at = 0;
        drafts.push(draft.clone());
    }
    json_response(StatusCode::CREATED, &draft)
}

/// Deletes the draft of (session, channel, root).
fn delete_draft(caller: &Caller, raw: &str, channel_id: &str, root_id: &str) -> ApiResult {
    let user_id = own_user(&caller.session, raw)?;
    require_id(channel_id, "channel_id")?;
    if !root_id.is_empty() {
        require_id(root_id, "root_id")?;
    }
    let mut state = caller.lock();
    state
        .own
        .drafts
        .retain(|d| !(d.user_id == user_id && d.channel_id == channel_id && d.root_id == root_id));
    status_ok()
}

/// `DELETE /users/{user_id}/channels/{channel_id}/drafts`.
async fn delete_channel_draft(
    caller: Caller,
    PathParams((raw, channel_id)): PathParams<(String, String)>,
) -> ApiResult {
    delete_draft(&caller, &raw, &channel_id, "")
}

/// `DELETE /users/{user_id}/channels/{channel_id}/drafts/{root_id}`.
async fn delete_thread_draft(
    caller: Caller,
    PathParams((raw, channel_id, root_id)): PathParams<(String, String, String)>,
) -> ApiResult {
    delete_draft(&caller, &raw, &channel_id, &root_id)
}
