//! The tools about threads: `read_post` (a post with its whole thread)
//! and `follow_thread`.

use std::collections::HashSet;
use std::fmt::Write as _;

use porter_mattermost::Post;
use porter_mcp::tool::Hints;
use porter_mcp::tool::ToolError;
use porter_mcp::tool::done;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

use crate::output::DoneOut;
use crate::output::PostOut;
use crate::output::ThreadOut;
use crate::paging::LIST;
use crate::paging::more_line;
use crate::paging::paged;
use crate::render::iso_utc;
use crate::render::post_text;
use crate::server::MattermostServer;
use crate::tools::Reply;
use crate::tools::posts::{FETCH_DEPTH, FETCH_PAGE, POST_LIST, TeamPageArgs};

/// One post and its thread.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct ReadPostArgs {
    /// The post: its id or permalink.
    pub post_id: String,
    /// Most replies in this page, oldest first (default 50, at most 200).
    #[serde(default)]
    pub limit: Option<u32>,
    /// The next_cursor of the previous page of replies.
    #[serde(default)]
    pub cursor: Option<String>,
}

paged!(ReadPostArgs);

method_tools! {
    /// `read_post`: Read a post and its thread.
    ReadPost = read_post_impl(args) {
        name: "read_post", title: "Read a post and its thread", hints: Hints::READ, args: ReadPostArgs, out: ThreadOut,
        description: "One post (by id or permalink) with its whole thread: the first post and the replies, oldest first, with their files.",
    }
    /// `follow_thread`: Follow a thread.
    FollowThread = follow_thread_impl(args) {
        name: "follow_thread", title: "Follow a thread", hints: Hints::write(false, true), args: FollowThreadArgs, out: DoneOut,
        description: "Follows a thread (or stops following it with follow=false), so its replies show in your threads. It changes only your own state, so porter does not ask the person.",
    }
    /// `list_threads`: Followed threads.
    ListThreads = list_threads_impl(args) {
        name: "list_threads", title: "Followed threads", hints: Hints::READ, args: TeamPageArgs, out: ThreadsOut,
        description: "The threads you follow, most recent reply first, with their unread replies.",
    }
}

impl MattermostServer {
    pub(crate) async fn read_post_impl(&self, args: ReadPostArgs) -> Reply {
        let paging = self.paging::<_, usize>("read_post", &args, LIST)?;
        let post_id = Self::post_id(&args.post_id)?;
        let thread = self.shared.client.post_thread(&post_id).await?;
        let mut posts: Vec<Post> = thread.posts.into_values().collect();
        posts.sort_by_key(|p| (p.create_at, p.id.clone()));
        let asked = posts
            .iter()
            .find(|p| p.id == post_id)
            .cloned()
            .ok_or_else(|| {
                ToolError::Tool(format!(
                    "Mattermost's thread of post {post_id} does not hold the post itself; try read_channel on its channel"
                ))
            })?;
        let root = posts
            .iter()
            .find(|p| p.id == asked.thread_root())
            .cloned()
            .unwrap_or_else(|| asked.clone());
        let replies: Vec<Post> = posts.into_iter().filter(|p| p.id != root.id).collect();
        let total = replies.len() as u64;
        let (page, next) = self.slice(&paging, &replies);
        let post = self.post_out(asked).await;
        let root = self.post_out(root).await;
        let replies = self.posts_out(page).await;
        let mut text = String::new();
        if post.id == root.id {
            let _ = writeln!(text, "The post starts a thread of {total} replies.\n");
        } else {
            let _ = writeln!(
                text,
                "The post {} is a reply in the thread of {} ({total} replies).\n",
                post.id, root.id
            );
        }
        text.push_str(&post_text(&root));
        if !replies.is_empty() {
            let _ = writeln!(
                text,
                "\nReplies {}–{} of {total}, oldest first:\n",
                paging.position.min(replies.len() + paging.position) + 1,
                paging.position + replies.len()
            );
        }
        for reply in &replies {
            text.push_str(&post_text(reply));
            text.push('\n');
        }
        more_line(&mut text, next.as_ref(), "replies");
        done(
            text,
            &ThreadOut {
                post,
                root,
                replies,
                reply_count: total,
                next_cursor: next,
            },
        )
    }
}

/// A thread to follow or stop following.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct FollowThreadArgs {
    /// Any post of the thread: id or permalink.
    pub post_id: String,
    /// true (default) to follow, false to stop following.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow: Option<bool>,
}

impl MattermostServer {
    pub(crate) async fn follow_thread_impl(&self, args: FollowThreadArgs) -> Reply {
        let follow = args.follow.unwrap_or(true);
        let (root, channel_id) = self.thread_of(&args.post_id).await?;
        let channel = self.shared.client.channel(&channel_id).await?;
        let team = self.team_for(&channel).await?;
        self.shared
            .client
            .follow_thread(&team, &root, follow)
            .await?;
        let (state, text) = if follow {
            (
                "following",
                format!(
                    "You now follow the thread of post {root}; its replies show in your threads."
                ),
            )
        } else {
            (
                "not following",
                format!("You no longer follow the thread of post {root}."),
            )
        };
        done(
            text,
            &DoneOut {
                id: root,
                state: state.to_owned(),
            },
        )
    }
}

/// `ThreadItemOut` is one followed thread.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ThreadItemOut {
    /// The thread's first post.
    pub root: PostOut,
    /// Replies in all.
    pub reply_count: i64,
    /// Replies you have not read.
    pub unread_replies: i64,
    /// Unread mentions of you.
    pub unread_mentions: i64,
    /// When the newest reply came (ISO 8601, UTC).
    pub last_reply: String,
}

/// `ThreadsOut` is a page of followed threads.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ThreadsOut {
    /// The threads, most recent reply first.
    pub threads: Vec<ThreadItemOut>,
    /// Pass this as `cursor` for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

impl MattermostServer {
    pub(crate) async fn list_threads_impl(&self, args: TeamPageArgs) -> Reply {
        let paging = self.paging::<_, usize>("list_threads", &args, POST_LIST)?;
        let teams = self.teams_for(args.team_id.as_deref()).await?;
        let mut seen = HashSet::new();
        let mut threads = Vec::new();
        for team in &teams {
            let mut before: Option<String> = None;
            loop {
                let list = self
                    .shared
                    .client
                    .user_threads(&team.id, before.as_deref(), FETCH_PAGE)
                    .await?;
                let got = list.threads.len();
                before = list.threads.last().map(|t| t.id.clone());
                for thread in list.threads {
                    if seen.insert(thread.id.clone()) {
                        threads.push(thread);
                    }
                }
                if got < FETCH_PAGE as usize || threads.len() >= FETCH_DEPTH {
                    break;
                }
            }
        }
        threads.sort_by(|a, b| {
            b.last_reply_at
                .cmp(&a.last_reply_at)
                .then_with(|| a.id.cmp(&b.id))
        });
        let (page, next) = self.slice(&paging, &threads);
        let mut text = if threads.is_empty() {
            "You follow no threads.\n".to_owned()
        } else {
            format!(
                "You follow {} threads, most recent reply first:\n\n",
                threads.len()
            )
        };
        let mut out = Vec::with_capacity(page.len());
        for thread in page {
            let root = self.post_out(thread.post.clone()).await;
            let last_reply = iso_utc(thread.last_reply_at);
            let _ = writeln!(
                text,
                "Thread {}: {} replies ({} unread, {} mentions of you), last reply {last_reply}",
                thread.id, thread.reply_count, thread.unread_replies, thread.unread_mentions
            );
            text.push_str(&post_text(&root));
            text.push('\n');
            out.push(ThreadItemOut {
                root,
                reply_count: thread.reply_count,
                unread_replies: thread.unread_replies,
                unread_mentions: thread.unread_mentions,
                last_reply,
            });
        }
        more_line(&mut text, next.as_ref(), "threads");
        done(
            text,
            &ThreadsOut {
                threads: out,
                next_cursor: next,
            },
        )
    }
}
