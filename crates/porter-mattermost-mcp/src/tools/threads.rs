//! The tools about threads: `read_post` (a post with its whole thread)
//! and `follow_thread`.

use std::fmt::Write as _;

use porter_mattermost::Post;
use porter_mcp::tool::Call;
use porter_mcp::tool::Hints;
use porter_mcp::tool::Outcome;
use porter_mcp::tool::Tool;
use porter_mcp::tool::ToolError;
use porter_mcp::tool::done;
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

use crate::MattermostServer;
use crate::output::DoneOut;
use crate::output::ThreadOut;
use crate::paging::LIST_MAX;
use crate::paging::LIST_PAGE;
use crate::paging::more_line;
use crate::render::post_text;

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

/// `read_post`: Read a post and its thread.
pub(crate) struct ReadPost;

impl Tool<MattermostServer> for ReadPost {
    type Args = ReadPostArgs;
    type Out = ThreadOut;
    const NAME: &'static str = "read_post";
    const TITLE: &'static str = "Read a post and its thread";
    const DESCRIPTION: &'static str = "One post (by id or permalink) with its whole thread: the first post and the replies, oldest first, with their files.";
    const HINTS: Hints = Hints::READ;

    async fn call(&self, server: &MattermostServer, args: ReadPostArgs, _call: Call) -> Outcome {
        Ok(server.read_post_impl(args).await?.into())
    }
}

impl MattermostServer {
    pub(crate) async fn read_post_impl(
        &self,
        args: ReadPostArgs,
    ) -> Result<CallToolResult, ToolError> {
        let paging = self.paging::<_, usize>(
            "read_post",
            &args,
            args.limit,
            args.cursor.as_deref(),
            LIST_PAGE,
            LIST_MAX,
        )?;
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
        let root_id = if asked.root_id.is_empty() {
            asked.id.clone()
        } else {
            asked.root_id.clone()
        };
        let root = posts
            .iter()
            .find(|p| p.id == root_id)
            .cloned()
            .unwrap_or_else(|| asked.clone());
        let replies: Vec<Post> = posts.into_iter().filter(|p| p.id != root.id).collect();
        let total = replies.len() as u64;
        let (page, next) = self.slice("read_post", &paging, &replies);
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

/// `follow_thread`: Follow a thread.
pub(crate) struct FollowThread;

impl Tool<MattermostServer> for FollowThread {
    type Args = FollowThreadArgs;
    type Out = DoneOut;
    const NAME: &'static str = "follow_thread";
    const TITLE: &'static str = "Follow a thread";
    const DESCRIPTION: &'static str = "Follows a thread (or stops following it with follow=false), so its replies show in your threads. It changes only your own state, so porter does not ask the person.";
    const HINTS: Hints = Hints::write(false, true);

    async fn call(
        &self,
        server: &MattermostServer,
        args: FollowThreadArgs,
        _call: Call,
    ) -> Outcome {
        Ok(server.follow_thread_impl(args).await?.into())
    }
}

impl MattermostServer {
    pub(crate) async fn follow_thread_impl(
        &self,
        args: FollowThreadArgs,
    ) -> Result<CallToolResult, ToolError> {
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
