//! Reading more and changing posts: pinned and saved (flagged) posts, the
//! threads a person follows, edits, deletions, pins, emoji reactions, a
//! channel's stats, and the list of accounts (for closest-name hints).

use axum::Router;
use axum::http::StatusCode;
use axum::routing::{delete, get, post, put};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::posts::post_list;
use super::shared::{
    ApiResult, Body, Caller, PathParams, Query, Session, ok, own_team_member, own_user, page_size,
    readable_post, require_channel_member, require_id, status_ok, user_param,
};
use crate::error::ApiError;
use crate::model::{Reaction, StoredPost, now_millis};
use crate::sim::Sim;
use crate::state::State as ServerState;

/// `THREADS_PAGE_DEFAULT` is the server's page of followed threads.
const THREADS_PAGE_DEFAULT: usize = 30;
/// `EMOJI_NAME_CHARS` is the longest emoji name the server accepts.
const EMOJI_NAME_CHARS: usize = 64;

/// The routes of this file, merged into the API router.
pub(crate) fn routes() -> Router<Sim> {
    Router::new()
        .route("/users", get(users))
        .route("/channels/{channel_id}/stats", get(stats))
        .route("/channels/{channel_id}/pinned", get(pinned))
        .route("/posts/{post_id}/pin", post(pin))
        .route("/posts/{post_id}/unpin", post(unpin))
        .route("/posts/{post_id}/patch", put(patch))
        .route("/posts/{post_id}", delete(delete_post))
        .route("/posts/{post_id}/reactions", get(reactions))
        .route("/reactions", post(add_reaction))
        .route(
            "/users/{user_id}/posts/{post_id}/reactions/{emoji_name}",
            delete(remove_reaction),
        )
        .route("/users/{user_id}/posts/flagged", get(flagged))
        .route("/users/{user_id}/teams/{team_id}/threads", get(threads))
}

/// Whether the account may act on others' posts (a system admin).
fn is_admin(state: &ServerState, user_id: &str) -> bool {
    state
        .user(user_id)
        .is_some_and(|u| u.roles.split_whitespace().any(|r| r == "system_admin"))
}

/// Checks the session may change a post: its author may, and an admin
/// may change others' posts, which otherwise needs `permission`.
fn require_author_or_admin(
    state: &ServerState,
    session: &Session,
    post_id: &str,
    permission: &str,
) -> Result<(), ApiError> {
    let author = &readable_post(state, session, post_id)?.user_id;
    if *author == session.user_id || is_admin(state, &session.user_id) {
        Ok(())
    } else {
        Err(ApiError::forbidden(&session.user_id, permission))
    }
}

/// `GET /users`: accounts by username, paged, optionally only those in a
/// channel or team, or only active ones (`active=true`).
pub(crate) async fn users(caller: Caller, query: Query) -> ApiResult {
    let state = caller.lock();
    let mut list: Vec<&crate::model::User> = state
        .users
        .iter()
        .filter(|u| {
            query
                .given("in_channel")
                .is_none_or(|c| state.is_channel_member(c, &u.id))
        })
        .filter(|u| {
            query
                .given("in_team")
                .is_none_or(|t| state.is_team_member(t, &u.id))
        })
        .filter(|u| match query.get("active") {
            Some("true") => !u.is_deleted(),
            Some("false") => u.is_deleted(),
            _ => true,
        })
        .collect();
    list.sort_by(|a, b| a.username.cmp(&b.username));
    ok(&query.page_of(&list))
}

/// `GET /channels/{channel_id}/stats`: how many active members a channel
/// has, its pinned posts and (unless excluded) its files.
pub(crate) async fn stats(
    caller: Caller,
    PathParams(channel_id): PathParams<String>,
    query: Query,
) -> ApiResult {
    let state = caller.lock_readable_channel(&channel_id)?;
    let pinned = state
        .channel_posts(&channel_id)
        .iter()
        .filter(|p| p.is_pinned)
        .count();
    let files: i64 = if query.flag("exclude_files_count") {
        -1
    } else {
        let count = state
            .files
            .iter()
            .filter(|f| f.info.channel_id == channel_id && f.info.delete_at == 0)
            .count();
        i64::try_from(count).unwrap_or(i64::MAX)
    };
    ok(&json!({
        "channel_id": channel_id,
        "member_count": state.active_member_count(&channel_id),
        "guest_count": 0,
        "pinnedpost_count": pinned,
        "files_count": files,
    }))
}

/// `GET /channels/{channel_id}/pinned`: the channel's pinned posts, newest
/// first, as a post list.
pub(crate) async fn pinned(
    caller: Caller,
    PathParams(channel_id): PathParams<String>,
) -> ApiResult {
    let state = caller.lock_readable_channel(&channel_id)?;
    let order: Vec<&StoredPost> = state
        .channel_posts(&channel_id)
        .into_iter()
        .filter(|p| p.is_pinned)
        .collect();
    ok(&post_list(&state, &order, &[], "", "", None))
}

/// Sets or clears a post's pin.
fn set_pinned(caller: &Caller, post_id: &str, pinned: bool) -> ApiResult {
    let mut state = caller.lock();
    let channel_id = readable_post(&state, &caller.session, post_id)?
        .channel_id
        .clone();
    require_channel_member(&state, &caller.session, &channel_id, "read_channel_content")?;
    let at = now_millis();
    if let Some(post) = state.post_mut(post_id) {
        post.is_pinned = pinned;
        post.update_at = at;
    }
    drop(state);
    status_ok()
}

/// `POST /posts/{post_id}/pin`.
pub(crate) async fn pin(caller: Caller, PathParams(post_id): PathParams<String>) -> ApiResult {
    set_pinned(&caller, &post_id, true)
}

/// `POST /posts/{post_id}/unpin`.
pub(crate) async fn unpin(caller: Caller, PathParams(post_id): PathParams<String>) -> ApiResult {
    set_pinned(&caller, &post_id, false)
}

/// The body of `PUT /posts/{post_id}/patch` (`model.PostPatch`): only the
/// fields given change; `props` replaces the whole map.
#[derive(Deserialize, Default)]
#[serde(default)]
struct PostPatch {
    message: Option<String>,
    is_pinned: Option<bool>,
    props: Option<Map<String, Value>>,
}

/// `PUT /posts/{post_id}/patch`: changes one's own post (others' need
/// `edit_others_posts`); a new message sets `edit_at`.
pub(crate) async fn patch(
    caller: Caller,
    PathParams(post_id): PathParams<String>,
    body: Body,
) -> ApiResult {
    let change: PostPatch = body.json("post")?;
    let mut state = caller.lock();
    require_author_or_admin(&state, &caller.session, &post_id, "edit_others_posts")?;
    if let Some(message) = &change.message
        && message.chars().count() as u64 > state.config.max_post_size
    {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "model.post.is_valid.message_length.app_error",
            "Post Message property is longer than the maximum permitted length.",
        ));
    }
    let at = now_millis();
    let Some(post) = state.post_mut(&post_id) else {
        return Err(ApiError::internal("a readable post vanished"));
    };
    if let Some(message) = change.message
        && message != post.message
    {
        post.message = message;
        post.edit_at = at;
    }
    if let Some(pinned) = change.is_pinned {
        post.is_pinned = pinned;
    }
    if let Some(props) = change.props {
        post.props = Value::Object(props);
    }
    post.update_at = at;
    let post = post.clone();
    ok(&state.post_json(&post))
}

/// `DELETE /posts/{post_id}`: deletes one's own post (others' need
/// `delete_others_posts`), and a thread's replies with its root.
pub(crate) async fn delete_post(
    caller: Caller,
    PathParams(post_id): PathParams<String>,
) -> ApiResult {
    let mut state = caller.lock();
    require_author_or_admin(&state, &caller.session, &post_id, "delete_others_posts")?;
    state.delete_post(&post_id, now_millis());
    drop(state);
    status_ok()
}

/// `GET /posts/{post_id}/reactions`: every reaction on a post, oldest first.
pub(crate) async fn reactions(
    caller: Caller,
    PathParams(post_id): PathParams<String>,
) -> ApiResult {
    let state = caller.lock_readable_post(&post_id)?;
    ok(&state.reactions_of(&post_id))
}

/// Tells whether an emoji name is one the server accepts.
fn valid_emoji_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= EMOJI_NAME_CHARS
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+'))
}

fn invalid_emoji() -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "model.reaction.is_valid.emoji_name.app_error",
        "Invalid emoji name.",
    )
}

/// The body of `POST /reactions`.
#[derive(Deserialize)]
struct NewReaction {
    user_id: String,
    post_id: String,
    emoji_name: String,
}

/// `POST /reactions`: adds the session's own reaction to a post in a
/// channel it belongs to; the same reaction again answers the one there.
pub(crate) async fn add_reaction(caller: Caller, body: Body) -> ApiResult {
    let wanted: NewReaction = body.json("reaction")?;
    require_id(&wanted.post_id, "post_id")?;
    if wanted.user_id != caller.session.user_id {
        return Err(ApiError::forbidden(
            &caller.session.user_id,
            "edit_other_users",
        ));
    }
    if !valid_emoji_name(&wanted.emoji_name) {
        return Err(invalid_emoji());
    }
    let mut state = caller.lock();
    let channel_id = readable_post(&state, &caller.session, &wanted.post_id)?
        .channel_id
        .clone();
    require_channel_member(&state, &caller.session, &channel_id, "add_reaction")?;
    if let Some(found) = state.reactions.iter().find(|r| {
        r.delete_at == 0
            && r.post_id == wanted.post_id
            && r.user_id == wanted.user_id
            && r.emoji_name == wanted.emoji_name
    }) {
        return ok(found);
    }
    let at = now_millis();
    let reaction = Reaction {
        user_id: wanted.user_id,
        post_id: wanted.post_id,
        emoji_name: wanted.emoji_name,
        create_at: at,
        update_at: at,
        delete_at: 0,
        remote_id: String::new(),
        channel_id,
    };
    state.reactions.push(reaction.clone());
    drop(state);
    ok(&reaction)
}

/// `DELETE /users/{user_id}/posts/{post_id}/reactions/{emoji_name}`:
/// removes one's own reaction; removing one that is not there is no error.
pub(crate) async fn remove_reaction(
    caller: Caller,
    PathParams((raw_user, post_id, emoji_name)): PathParams<(String, String, String)>,
) -> ApiResult {
    let user_id = user_param(&caller.session, &raw_user)?;
    require_id(&post_id, "post_id")?;
    if !valid_emoji_name(&emoji_name) {
        return Err(invalid_emoji());
    }
    if user_id != caller.session.user_id {
        return Err(ApiError::forbidden(
            &caller.session.user_id,
            "remove_others_reactions",
        ));
    }
    let mut state = caller.lock_readable_post(&post_id)?;
    state
        .reactions
        .retain(|r| !(r.post_id == post_id && r.user_id == user_id && r.emoji_name == emoji_name));
    drop(state);
    status_ok()
}

/// `GET /users/{user_id}/posts/flagged`: the posts a person saved, newest
/// first, optionally within a channel or team, paged.
pub(crate) async fn flagged(
    caller: Caller,
    PathParams(raw_user): PathParams<String>,
    query: Query,
) -> ApiResult {
    let user_id = own_user(&caller.session, &raw_user)?;
    let state = caller.lock();
    let mut saved: Vec<&StoredPost> = state
        .posts
        .iter()
        .filter(|p| p.delete_at == 0 && state.is_flagged(&user_id, &p.id))
        .filter(|p| {
            state
                .channel(&p.channel_id)
                .is_some_and(|c| state.can_read(&user_id, c))
        })
        .filter(|p| query.given("channel_id").is_none_or(|c| p.channel_id == c))
        .filter(|p| {
            query.given("team_id").is_none_or(|t| {
                state
                    .channel(&p.channel_id)
                    .is_some_and(|c| c.team_id == t || c.is_direct_or_group())
            })
        })
        .collect();
    saved.sort_by_key(|p| std::cmp::Reverse(p.create_at));
    let order = query.page_of(&saved);
    ok(&post_list(&state, &order, &[], "", "", None))
}

/// `GET /users/{user_id}/teams/{team_id}/threads`: the threads a person
/// takes part in (wrote the root or a reply) in a team's channels and their
/// direct and group channels, most recent reply first; `before`/`after` a
/// thread id, `per_page`, `unread` (only threads with replies by others).
pub(crate) async fn threads(
    caller: Caller,
    PathParams((raw_user, team_id)): PathParams<(String, String)>,
    query: Query,
) -> ApiResult {
    let state = caller.lock();
    let user_id = own_team_member(&state, &caller.session, &raw_user, &team_id)?;
    let mut all: Vec<(Value, i64, String, usize)> = Vec::new();
    for root in state.posts.iter().filter(|p| {
        p.delete_at == 0
            && p.root_id.is_empty()
            && state.channel(&p.channel_id).is_some_and(|c| {
                (c.team_id == team_id || c.is_direct_or_group())
                    && state.is_channel_member(&c.id, &user_id)
            })
    }) {
        let thread = state.thread(&root.id);
        let replies: Vec<&&StoredPost> = thread.iter().filter(|p| p.id != root.id).collect();
        if replies.is_empty() || !thread.iter().any(|p| p.user_id == user_id) {
            continue;
        }
        let last_reply_at = replies.iter().map(|p| p.create_at).max().unwrap_or(0);
        let mut participants: Vec<String> = Vec::new();
        for post in &thread {
            if !participants.contains(&post.user_id) {
                participants.push(post.user_id.clone());
            }
        }
        let unread = replies.iter().filter(|p| p.user_id != user_id).count();
        let participants: Vec<Value> = participants
            .iter()
            .map(|id| {
                if query.flag("extended") {
                    state.user(id).map_or(json!({"id": id}), |u| json!(u))
                } else {
                    json!({"id": id})
                }
            })
            .collect();
        let mentioned = state
            .user(&user_id)
            .map(|u| format!("@{}", u.username))
            .unwrap_or_default();
        let mentions = replies
            .iter()
            .filter(|p| p.user_id != user_id && p.message.contains(&mentioned))
            .count();
        all.push((
            json!({
                "id": root.id,
                "reply_count": replies.len(),
                "last_reply_at": last_reply_at,
                "last_viewed_at": 0,
                "participants": participants,
                "post": state.post_json(root),
                "unread_replies": unread,
                "unread_mentions": mentions,
                "is_urgent": false,
                "type": "",
            }),
            last_reply_at,
            root.id.clone(),
            unread,
        ));
    }
    all.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.2.cmp(&b.2)));
    if query.flag("unread") {
        all.retain(|t| t.3 > 0);
    }
    let total = all.len();
    let total_unread_threads = all.iter().filter(|t| t.3 > 0).count();
    let total_unread_mentions: i64 = all
        .iter()
        .map(|t| t.0["unread_mentions"].as_i64().unwrap_or(0))
        .sum();
    if let Some(before) = query.given("before")
        && let Some(at) = all.iter().position(|t| t.2 == before)
    {
        all.drain(..=at);
    }
    if let Some(after) = query.given("after")
        && let Some(at) = all.iter().position(|t| t.2 == after)
    {
        all.truncate(at);
    }
    let per_page = page_size(query.get("per_page"), THREADS_PAGE_DEFAULT);
    let threads: Vec<Value> = if query.flag("totalsOnly") {
        Vec::new()
    } else {
        all.into_iter().take(per_page).map(|t| t.0).collect()
    };
    ok(&json!({
        "threads": threads,
        "total": total,
        "total_unread_threads": total_unread_threads,
        "total_unread_mentions": total_unread_mentions,
        "total_unread_urgent_mentions": 0,
    }))
}

#[cfg(test)]
mod tests {
    use super::valid_emoji_name;

    #[test]
    fn emoji_names_are_letters_digits_and_a_few_marks() {
        for (name, ok) in [
            ("+1", true),
            ("white_check_mark", true),
            ("flag-de", true),
            ("", false),
            ("two words", false),
            (":tada:", false),
            (&"x".repeat(65), false),
        ] {
            assert_eq!(valid_emoji_name(name), ok, "{name}");
        }
    }
}
