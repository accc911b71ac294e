//! Posts: a channel's pages, single posts, threads, their files, new posts,
//! and permalinks.

use std::collections::BTreeSet;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::shared::{
    ApiResult, Body, Caller, PathParams, Query, Session, json_response, ok, post_not_found,
    readable_post, require_channel_member, require_id,
};
use crate::error::ApiError;
use crate::model::{StoredPost, escape_markup, is_valid_id};
use crate::sim::Sim;
use crate::state::{MAX_FILES_PER_POST, State as ServerState};

/// Builds a `PostList`: `order` as given, and `posts` holding those posts
/// plus `extra` ones (thread context the server adds without listing them
/// in `order`).
pub(crate) fn post_list(
    state: &ServerState,
    order: &[&StoredPost],
    extra: &[&StoredPost],
    next_post_id: &str,
    prev_post_id: &str,
    has_next: Option<bool>,
) -> Value {
    let mut posts = Map::new();
    for post in order.iter().chain(extra) {
        posts.insert(post.id.clone(), state.post_json(post));
    }
    let order: Vec<&str> = order.iter().map(|p| p.id.as_str()).collect();
    let mut list = json!({
        "order": order,
        "posts": posts,
        "next_post_id": next_post_id,
        "prev_post_id": prev_post_id,
        "first_inaccessible_post_time": 0,
    });
    if let (Some(has_next), Some(object)) = (has_next, list.as_object_mut()) {
        object.insert("has_next".to_owned(), Value::Bool(has_next));
    }
    list
}

/// The other posts of every thread that a page touches, which the server
/// adds to `posts` unless asked to `skipFetchThreads`.
fn thread_context<'s>(state: &'s ServerState, page: &[&StoredPost]) -> Vec<&'s StoredPost> {
    let listed: BTreeSet<&str> = page.iter().map(|p| p.id.as_str()).collect();
    let roots: BTreeSet<&str> = page
        .iter()
        .map(|p| {
            if p.root_id.is_empty() {
                p.id.as_str()
            } else {
                p.root_id.as_str()
            }
        })
        .collect();
    roots
        .into_iter()
        .flat_map(|root| state.thread(root))
        .filter(|p| !listed.contains(p.id.as_str()))
        .collect()
}

/// `GET /channels/{channel_id}/posts`: a page of a channel, newest first,
/// by `page`/`per_page`, or `since` a time, or `before`/`after` a post,
/// with `next_post_id`/`prev_post_id` computed as the server does
/// (`AddCursorIdsForPostList`).
pub(crate) async fn for_channel(
    caller: Caller,
    PathParams(channel_id): PathParams<String>,
    query: Query,
) -> ApiResult {
    require_id(&channel_id, "channel_id")?;
    let after = query.given("after");
    let before = query.given("before");
    if after.is_some_and(|id| !is_valid_id(id)) {
        return Err(ApiError::invalid_body_param("after"));
    }
    if before.is_some_and(|id| !is_valid_id(id)) {
        return Err(ApiError::invalid_body_param("before"));
    }
    let since: i64 = match query.given("since") {
        None => 0,
        Some(text) => text
            .parse()
            .map_err(|_| ApiError::invalid_body_param("since"))?,
    };
    let page = query.page();
    let per_page = query.per_page();
    let collapsed = query.flag("collapsedThreads");

    let state = caller.lock_readable_channel(&channel_id)?;
    let all: Vec<&StoredPost> = state
        .channel_posts(&channel_id)
        .into_iter()
        .filter(|p| !collapsed || p.root_id.is_empty())
        .collect();
    let skip = page.saturating_mul(per_page);

    let (order, preset_next, preset_prev): (Vec<&StoredPost>, Option<String>, Option<String>) =
        if since > 0 {
            let changed = all
                .iter()
                .copied()
                .filter(|p| p.update_at > since)
                .collect();
            (changed, Some(String::new()), Some(String::new()))
        } else if let Some(after) = after {
            let order: Vec<&StoredPost> = match state.post(after) {
                None => Vec::new(),
                Some(anchor) => {
                    let mut newer: Vec<&StoredPost> = all
                        .iter()
                        .copied()
                        .filter(|p| p.create_at > anchor.create_at)
                        .collect();
                    newer.reverse();
                    let mut chosen: Vec<&StoredPost> =
                        newer.into_iter().skip(skip).take(per_page).collect();
                    chosen.reverse();
                    chosen
                }
            };
            let prev = (page == 0).then(|| after.to_owned());
            let next = (order.len() < per_page).then(String::new);
            (order, next, prev)
        } else if let Some(before) = before {
            let order: Vec<&StoredPost> = match state.post(before) {
                None => Vec::new(),
                Some(anchor) => all
                    .iter()
                    .copied()
                    .filter(|p| p.create_at < anchor.create_at)
                    .skip(skip)
                    .take(per_page)
                    .collect(),
            };
            let next = (page == 0).then(|| before.to_owned());
            let prev = (order.len() < per_page).then(String::new);
            (order, next, prev)
        } else {
            let order = all.iter().copied().skip(skip).take(per_page).collect();
            (order, None, None)
        };

    // The neighbours just outside the page, in the same (filtered) stream.
    let next_post_id = preset_next.unwrap_or_else(|| {
        order.first().map_or(String::new(), |newest| {
            all.iter()
                .rev()
                .find(|p| p.create_at > newest.create_at)
                .map_or(String::new(), |p| p.id.clone())
        })
    });
    let prev_post_id = preset_prev.unwrap_or_else(|| {
        order.last().map_or(String::new(), |oldest| {
            all.iter()
                .find(|p| p.create_at < oldest.create_at)
                .map_or(String::new(), |p| p.id.clone())
        })
    });
    let has_next = if since > 0 {
        false
    } else if after.is_some() {
        !next_post_id.is_empty()
    } else {
        !prev_post_id.is_empty()
    };
    let extra = if query.flag("skipFetchThreads") || collapsed {
        Vec::new()
    } else {
        thread_context(&state, &order)
    };
    ok(&post_list(
        &state,
        &order,
        &extra,
        &next_post_id,
        &prev_post_id,
        Some(has_next),
    ))
}

/// `GET /posts/{post_id}`.
pub(crate) async fn get(caller: Caller, PathParams(post_id): PathParams<String>) -> ApiResult {
    let state = caller.lock();
    let post = readable_post(&state, &caller.session, &post_id)?;
    ok(&state.post_json(post))
}

/// `GET /posts/{post_id}/thread`: the whole thread of any of its posts,
/// newest first. With `perPage` (Client4 always sends 60) the replies are
/// paged from the oldest and `has_next` says whether more follow.
pub(crate) async fn thread(
    caller: Caller,
    PathParams(post_id): PathParams<String>,
    query: Query,
) -> ApiResult {
    let per_page = match query.given("perPage") {
        None => 0,
        Some(text) => match text.parse::<usize>() {
            Ok(n) if n <= super::shared::PER_PAGE_MAX => n,
            _ => return Err(ApiError::invalid_body_param("perPage")),
        },
    };
    let state = caller.lock();
    let post = readable_post(&state, &caller.session, &post_id)?;
    let root = if post.root_id.is_empty() {
        post.id.clone()
    } else {
        post.root_id.clone()
    };
    let all = state.thread(&root);
    let (mut chosen, has_next) = if per_page == 0 {
        (all, false)
    } else {
        let has_next = all.len() > per_page + 1;
        (all.into_iter().take(per_page + 1).collect(), has_next)
    };
    chosen.sort_by_key(|p| std::cmp::Reverse(p.create_at));
    ok(&post_list(&state, &chosen, &[], "", "", Some(has_next)))
}

/// `GET /posts/{post_id}/files/info`: the file infos of a post's files.
pub(crate) async fn file_infos(
    caller: Caller,
    PathParams(post_id): PathParams<String>,
) -> ApiResult {
    let state = caller.lock();
    let post = readable_post(&state, &caller.session, &post_id)?;
    let infos: Vec<&crate::model::FileInfo> = post
        .file_ids
        .iter()
        .filter_map(|id| state.file(id))
        .map(|f| &f.info)
        .collect();
    ok(&infos)
}

/// The body of `POST /posts` (the fields of `model.Post` a client sets).
#[derive(Deserialize, Default)]
#[serde(default)]
struct NewPost {
    channel_id: String,
    message: String,
    root_id: String,
    file_ids: Vec<String>,
    props: Option<Value>,
    pending_post_id: String,
}

/// `POST /posts`: a new post or reply by the caller, who must be in the
/// channel. Files must have been uploaded by the caller to this channel
/// and not be attached yet; others are left out, as the server does.
pub(crate) async fn create(caller: Caller, body: Body) -> ApiResult {
    let new: NewPost = body.json("post")?;
    let props = match new.props {
        None | Some(Value::Null) => json!({}),
        Some(object @ Value::Object(_)) => object,
        Some(_) => return Err(ApiError::invalid_body_param("post")),
    };
    let mut state = caller.lock();
    require_channel_member(&state, &caller.session, &new.channel_id, "create_post")?;
    if !new.root_id.is_empty() {
        let valid_root = state
            .post(&new.root_id)
            .filter(|root| root.root_id.is_empty());
        match valid_root {
            None => {
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "api.post.create_post.root_id.app_error",
                    "Invalid RootId parameter.",
                ));
            }
            Some(root) if root.channel_id != new.channel_id => {
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "api.post.create_post.channel_root_id.app_error",
                    "Invalid ChannelId for RootId parameter.",
                ));
            }
            Some(_) => {}
        }
    }
    let length = new.message.chars().count() as u64;
    if length > state.config.max_post_size {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "model.post.is_valid.message_length.app_error",
            "Post Message property is longer than the maximum permitted length.",
        )
        .detail(format!(
            "length={length}, max={}",
            state.config.max_post_size
        )));
    }
    if new.file_ids.len() > MAX_FILES_PER_POST {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "model.post.is_valid.file_ids.app_error",
            "Invalid file ids. Note that uploads are limited to 10 files maximum. Please use additional posts for more files.",
        ));
    }
    let mut attachable: Vec<String> = Vec::new();
    for id in &new.file_ids {
        let usable = state.file(id).is_some_and(|f| {
            f.info.user_id == caller.session.user_id
                && f.info.channel_id == new.channel_id
                && f.info.post_id.is_empty()
        });
        if usable && !attachable.contains(id) {
            attachable.push(id.clone());
        } else {
            tracing::warn!(file_id = %id, "mmsim: a file id was left out of a new post");
        }
    }
    let at = state.next_post_time(&new.channel_id);
    let id = state.add_post(
        &caller.session.user_id,
        &new.channel_id,
        &new.root_id,
        new.message,
        props,
        attachable,
        at,
        new.pending_post_id,
    );
    let post = state
        .post(&id)
        .ok_or_else(|| ApiError::internal("a post just made is missing"))?;
    json_response(StatusCode::CREATED, &state.post_json(post))
}

/// `GET /_redirect/pl/{post_id}`: a permalink that works from any team;
/// it redirects to `/<team>/pl/<post_id>` in the post's team (for a direct
/// or group message: the viewer's first team, else the author's).
pub(crate) async fn permalink(
    State(sim): State<Sim>,
    session: Result<Session, ApiError>,
    PathParams(post_id): PathParams<String>,
) -> ApiResult {
    require_id(&post_id, "post_id")?;
    let state = sim.lock();
    let post = state
        .post(&post_id)
        .ok_or_else(|| post_not_found(&post_id))?;
    let channel_team = state
        .channel(&post.channel_id)
        .map(|c| c.team_id.clone())
        .unwrap_or_default();
    let team = state.team(&channel_team).or_else(|| {
        session
            .as_ref()
            .ok()
            .and_then(|s| state.teams_of(&s.user_id).first().copied())
            .or_else(|| state.teams_of(&post.user_id).first().copied())
    });
    let Some(team) = team else {
        return Err(super::teams::team_not_found(
            "the post's people are in no team".to_owned(),
        ));
    };
    let location = format!("/{}/pl/{post_id}", team.name);
    Ok((StatusCode::FOUND, [(header::LOCATION, location)]).into_response())
}

/// `GET /{team}/pl/{post_id}`: where a permalink lands. The emulator has no
/// web app, so this small page says so and where the post can be read.
pub(crate) async fn permalink_page(
    PathParams((team, post_id)): PathParams<(String, String)>,
) -> Response {
    let body = format!(
        "<!doctype html><meta charset=\"utf-8\"><title>Post {id}</title><p>This Mattermost emulator has no web app. The permalink points at post <code>{id}</code> in team <code>{team}</code>; read it at <code>/api/v4/posts/{id}</code>.</p>\n",
        id = escape_markup(&post_id),
        team = escape_markup(&team),
    );
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body,
    )
        .into_response()
}
