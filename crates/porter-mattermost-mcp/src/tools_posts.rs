//! Reading more and changing posts: `read_unread`, `list_threads`,
//! `list_pinned_posts`, `list_saved`, `list_mentions` (read, paged by
//! cursor), and `update_post`, `delete_post`, `add_reaction`,
//! `remove_reaction`, `pin_post`, which change what others see and so ask
//! the person first.
//!
//! A change is asked about the way a post is (see `write.rs`): one
//! required, default-less box; the answer bound to a digest of the input
//! and a fingerprint of what the change acts on (the post's text, its reply
//! count); just before acting the post is read again and compared, so an
//! edit whose post changed between question and answer is refused.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use rmcp::model::{CallToolResponse, CallToolResult, ElicitResult, ProtocolVersion};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ask::{
    Answer, CONFIRM, ask_binding, can_elicit, form_with, input_digest, judge, now_ms,
};
use crate::output::{ChannelOut, PostOut, PostsOut};
use crate::paging::more_line;
use crate::render::{iso_utc, post_text};
use porter_mcp::tool::{Call, Hints, Outcome, Tool, ToolError, done};

use crate::MattermostServer;
use crate::ask::missing_elicitation;
use crate::outgoing::checks::{Reach, check_message};
use porter_mattermost::{Channel, ChannelPosts, ChannelType, Post, PostPatch};

/// Default and largest page sizes.
const LIST_PAGE: usize = 20;
const LIST_MAX: usize = 100;
/// Unread posts shown per channel by default, and at most.
const UNREAD_POSTS: u32 = 10;
const UNREAD_POSTS_MAX: u32 = 50;
/// Page size when reading a whole list from Mattermost, and how deep.
const FETCH_PAGE: u32 = 200;
const FETCH_DEPTH: usize = 1000;
/// The sentence every refusal of a change ends with.
const NOTHING_CHANGED: &str = "Nothing was changed.";

// ----- parameters -----

/// Unread messages, by channel.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct ReadUnreadArgs {
    /// The team, by id or name; all your teams when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
    /// Most unread posts shown per channel, newest first (default 10, at most 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub posts_per_channel: Option<u32>,
    /// Most channels in this page (default 20, at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// The next_cursor of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// A page of a list across your teams.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct TeamPageArgs {
    /// The team, by id or name; all your teams when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
    /// Most items in this page (default 20, at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// The next_cursor of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// A page of your saved posts.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct SavedArgs {
    /// Most posts in this page (default 20, at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// The next_cursor of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// A page of a channel's pinned posts.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct PinnedArgs {
    /// The channel: its id or name (`~town-square`, `town-square` or `Town Square`).
    pub channel_id: String,
    /// The team, by id or name, when the channel name is in several teams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
    /// Most posts in this page (default 20, at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// The next_cursor of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// An edit of one of your posts.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct UpdatePostArgs {
    /// The post: its id or permalink.
    pub post_id: String,
    /// The whole new text (Markdown); it replaces the old text.
    pub message: String,
}

/// One post.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct PostArgs {
    /// The post: its id or permalink.
    pub post_id: String,
}

/// A reaction on a post.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct ReactionArgs {
    /// The post: its id or permalink.
    pub post_id: String,
    /// The emoji: its name (`thumbsup`), `:name:`, or the character itself (👍).
    pub emoji: String,
}

/// A pin (or unpin).
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct PinArgs {
    /// The post: its id or permalink.
    pub post_id: String,
    /// True to take the pin off instead.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unpin: bool,
}

// ----- outputs -----

/// `UnreadChannelOut` is one channel with unread messages.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UnreadChannelOut {
    /// The channel.
    pub channel: ChannelOut,
    /// Messages not yet read, as Mattermost counts them.
    pub unread: i64,
    /// Unread mentions of you.
    pub mentions: i64,
    /// The newest unread posts by others, newest first.
    pub posts: Vec<PostOut>,
}

/// `UnreadOut` is a page of channels with unread messages.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UnreadOut {
    /// The channels, most recent post first.
    pub channels: Vec<UnreadChannelOut>,
    /// Pass this as `cursor` for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
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

/// `PostChangeOut` is what a change did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PostChangeOut {
    /// `edited`, `deleted`, `reacted`, `unreacted`, `pinned` or `unpinned`.
    pub action: String,
    /// The post changed.
    pub post_id: String,
    /// Its permalink.
    pub permalink: String,
    /// The post as it is now (absent once deleted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub post: Option<PostOut>,
    /// The emoji's name, for reactions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emoji: Option<String>,
    /// Replies deleted with the post.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replies_deleted: Option<u64>,
}

// ----- the tools -----

/// `read_unread`: Unread messages.
pub(crate) struct ReadUnread;

impl Tool<MattermostServer> for ReadUnread {
    type Args = ReadUnreadArgs;
    type Out = UnreadOut;
    const NAME: &'static str = "read_unread";
    const TITLE: &'static str = "Unread messages";
    const DESCRIPTION: &'static str = "The channels with messages you have not read, with the counts and the newest unread posts of each.";
    const HINTS: Hints = Hints::READ;

    async fn call(&self, server: &MattermostServer, args: ReadUnreadArgs, _call: Call) -> Outcome {
        Ok(server.read_unread_impl(args).await?.into())
    }
}

/// `list_threads`: Followed threads.
pub(crate) struct ListThreads;

impl Tool<MattermostServer> for ListThreads {
    type Args = TeamPageArgs;
    type Out = ThreadsOut;
    const NAME: &'static str = "list_threads";
    const TITLE: &'static str = "Followed threads";
    const DESCRIPTION: &'static str =
        "The threads you follow, most recent reply first, with their unread replies.";
    const HINTS: Hints = Hints::READ;

    async fn call(&self, server: &MattermostServer, args: TeamPageArgs, _call: Call) -> Outcome {
        Ok(server.list_threads_impl(args).await?.into())
    }
}

/// `list_pinned_posts`: Pinned posts.
pub(crate) struct ListPinnedPosts;

impl Tool<MattermostServer> for ListPinnedPosts {
    type Args = PinnedArgs;
    type Out = PostsOut;
    const NAME: &'static str = "list_pinned_posts";
    const TITLE: &'static str = "Pinned posts";
    const DESCRIPTION: &'static str = "The posts pinned in a channel, newest first.";
    const HINTS: Hints = Hints::READ;

    async fn call(&self, server: &MattermostServer, args: PinnedArgs, _call: Call) -> Outcome {
        Ok(server.list_pinned_impl(args).await?.into())
    }
}

/// `list_saved`: Saved posts.
pub(crate) struct ListSaved;

impl Tool<MattermostServer> for ListSaved {
    type Args = SavedArgs;
    type Out = PostsOut;
    const NAME: &'static str = "list_saved";
    const TITLE: &'static str = "Saved posts";
    const DESCRIPTION: &'static str = "The posts you saved (flagged), newest first.";
    const HINTS: Hints = Hints::READ;

    async fn call(&self, server: &MattermostServer, args: SavedArgs, _call: Call) -> Outcome {
        Ok(server.list_saved_impl(args).await?.into())
    }
}

/// `list_mentions`: Mentions of me.
pub(crate) struct ListMentions;

impl Tool<MattermostServer> for ListMentions {
    type Args = TeamPageArgs;
    type Out = PostsOut;
    const NAME: &'static str = "list_mentions";
    const TITLE: &'static str = "Mentions of me";
    const DESCRIPTION: &'static str =
        "Posts by others that mention you by @username, newest first.";
    const HINTS: Hints = Hints::READ;

    async fn call(&self, server: &MattermostServer, args: TeamPageArgs, _call: Call) -> Outcome {
        Ok(server.list_mentions_impl(args).await?.into())
    }
}

/// `update_post`: Edit a post.
pub(crate) struct UpdatePost;

impl Tool<MattermostServer> for UpdatePost {
    type Args = UpdatePostArgs;
    type Out = PostChangeOut;
    const NAME: &'static str = "update_post";
    const TITLE: &'static str = "Edit a post";
    const DESCRIPTION: &'static str = "Replaces the text of one of your posts; the person sees the old and the new text. Mentions must name real accounts.";
    const HINTS: Hints = Hints::write(true, true);

    async fn call(&self, server: &MattermostServer, args: UpdatePostArgs, call: Call) -> Outcome {
        let Call {
            context,
            state,
            answers,
            ..
        } = call;

        let call = Asking::new("update_post", &args, state, answers);
        server.change(&call, Change::Update(args), &context).await
    }
}

/// `delete_post`: Delete a post.
pub(crate) struct DeletePost;

impl Tool<MattermostServer> for DeletePost {
    type Args = PostArgs;
    type Out = PostChangeOut;
    const NAME: &'static str = "delete_post";
    const TITLE: &'static str = "Delete a post";
    const DESCRIPTION: &'static str = "Deletes one of your posts; deleting a thread's first post deletes its replies too, and the person is told how many.";
    const HINTS: Hints = Hints::write(true, true);

    async fn call(&self, server: &MattermostServer, args: PostArgs, call: Call) -> Outcome {
        let Call {
            context,
            state,
            answers,
            ..
        } = call;

        let call = Asking::new("delete_post", &args, state, answers);
        server.change(&call, Change::Delete(args), &context).await
    }
}

/// `add_reaction`: React to a post.
pub(crate) struct AddReaction;

impl Tool<MattermostServer> for AddReaction {
    type Args = ReactionArgs;
    type Out = PostChangeOut;
    const NAME: &'static str = "add_reaction";
    const TITLE: &'static str = "React to a post";
    const DESCRIPTION: &'static str =
        "Adds your emoji reaction to a post (emoji by name, :name: or the character).";
    const HINTS: Hints = Hints::write(false, true);

    async fn call(&self, server: &MattermostServer, args: ReactionArgs, call: Call) -> Outcome {
        let Call {
            context,
            state,
            answers,
            ..
        } = call;

        let call = Asking::new("add_reaction", &args, state, answers);
        server
            .change(&call, Change::React(args, true), &context)
            .await
    }
}

/// `remove_reaction`: Remove a reaction.
pub(crate) struct RemoveReaction;

impl Tool<MattermostServer> for RemoveReaction {
    type Args = ReactionArgs;
    type Out = PostChangeOut;
    const NAME: &'static str = "remove_reaction";
    const TITLE: &'static str = "Remove a reaction";
    const DESCRIPTION: &'static str =
        "Removes your emoji reaction from a post (emoji by name, :name: or the character).";
    const HINTS: Hints = Hints::write(true, true);

    async fn call(&self, server: &MattermostServer, args: ReactionArgs, call: Call) -> Outcome {
        let Call {
            context,
            state,
            answers,
            ..
        } = call;

        let call = Asking::new("remove_reaction", &args, state, answers);
        server
            .change(&call, Change::React(args, false), &context)
            .await
    }
}

/// `pin_post`: Pin a post.
pub(crate) struct PinPost;

impl Tool<MattermostServer> for PinPost {
    type Args = PinArgs;
    type Out = PostChangeOut;
    const NAME: &'static str = "pin_post";
    const TITLE: &'static str = "Pin a post";
    const DESCRIPTION: &'static str =
        "Pins a post to its channel for everyone in it (or, with unpin, takes the pin off).";
    const HINTS: Hints = Hints::write(false, true);

    async fn call(&self, server: &MattermostServer, args: PinArgs, call: Call) -> Outcome {
        let Call {
            context,
            state,
            answers,
            ..
        } = call;

        let call = Asking::new("pin_post", &args, state, answers);
        server.change(&call, Change::Pin(args), &context).await
    }
}

// ----- asking -----

/// One change as it arrived.
struct Asking {
    tool: &'static str,
    input: Value,
    state: Option<String>,
    answers: Option<rmcp::model::InputResponses>,
}

impl Asking {
    fn new<A: Serialize>(
        tool: &'static str,
        args: &A,
        state: Option<String>,
        answers: Option<rmcp::model::InputResponses>,
    ) -> Asking {
        Asking {
            tool,
            input: serde_json::to_value(args).unwrap_or(Value::Null),
            state,
            answers,
        }
    }
}

/// A change, with its arguments.
enum Change {
    Update(UpdatePostArgs),
    Delete(PostArgs),
    React(ReactionArgs, bool),
    Pin(PinArgs),
}

/// What the sealed request state carries from the question to the retry.
#[derive(Debug, Serialize, Deserialize)]
struct Sealed {
    digest: String,
    fingerprint: String,
    time_ms: u64,
}

/// What a change acts on, looked up just now, and the question about it.
struct Look {
    post: Post,
    /// A digest of what the change is bound to.
    fingerprint: String,
    title: String,
    text: String,
    /// Replies a delete takes with it.
    replies: u64,
    /// The reaction's emoji name.
    emoji: String,
    /// Set when there is nothing to do (already pinned, already reacted):
    /// the sentence to answer without asking.
    nothing_to_do: Option<String>,
}

fn fingerprint(parts: &[&str]) -> String {
    porter_paths::sha256_hex(parts.join("\0").as_bytes())
}

/// `NOTHING_DONE` is what a change says did not happen when the answer is
/// not a yes.
const NOTHING_DONE: &str = "nothing was changed";

impl MattermostServer {
    async fn change(
        &self,
        call: &Asking,
        change: Change,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ToolError> {
        let ask = self.shared.options.ask_before_writes;
        // 1. Can the person be asked at all? Decided before anything is read.
        if ask && !can_elicit(context) {
            return Err(ToolError::Rpc(missing_elicitation(call.tool)));
        }
        let modern = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let digest = input_digest(call.tool, &call.input);
        // 2. A retry with the person's answer: the answer first; a "no"
        //    reads nothing.
        let mut asked: Option<Sealed> = None;
        if ask && modern && call.state.is_some() {
            let opened = self.open_sealed(call, &digest)?;
            match self.answer_in(call, opened.time_ms)? {
                Answer::Yes => asked = Some(opened),
                Answer::No(sentence) => return Err(ToolError::Tool(sentence)),
            }
        }
        // 3. Look at what the change acts on, with every check.
        let look = self.look(&change).await?;
        if let Some(sentence) = &look.nothing_to_do {
            return Err(ToolError::Tool(sentence.clone()));
        }
        if let Some(asked) = &asked
            && (asked.digest != digest || asked.fingerprint != look.fingerprint)
        {
            return Err(changed_since(call.tool));
        }
        // 4. Ask, unless asked already or asking is left to the client.
        if ask && asked.is_none() {
            let (label, about) = box_words(&change);
            let question = form_with(&look.title, look.text.clone(), label, about)?;
            if modern {
                let sealed = Sealed {
                    digest: digest.clone(),
                    fingerprint: look.fingerprint.clone(),
                    time_ms: now_ms(),
                };
                return self.input_required_with(call.tool, &digest, &sealed, question);
            }
            let answer = self
                .ask_now_with(call.tool, question, NOTHING_DONE, context)
                .await;
            if let Answer::No(sentence) = answer {
                return Err(ToolError::Tool(sentence));
            }
            // 5. Re-check just before acting: the person may have taken
            //    their time, and others may have changed the post.
            let again = self.look(&change).await?;
            if again.fingerprint != look.fingerprint {
                return Err(changed_since(call.tool));
            }
        }
        let result = self.act_change(&change, look).await?;
        Ok(CallToolResponse::from(result))
    }

    fn open_sealed(&self, call: &Asking, digest: &str) -> Result<Sealed, ToolError> {
        let bound = ask_binding(call.tool, digest);
        self.shared
            .asks
            .open_json_with::<Sealed>(call.state.as_deref().unwrap_or_default(), &bound)
            .map_err(|_| {
                ToolError::Tool(format!(
                    "this answer belongs to another question (the call's arguments differ from those asked about, or the server restarted); nothing was changed. Call {} again to ask the person afresh.",
                    call.tool
                ))
            })
    }

    fn answer_in(&self, call: &Asking, time_ms: u64) -> Result<Answer, ToolError> {
        let Some(raw) = call.answers.as_ref().and_then(|a| a.get(CONFIRM)) else {
            return Ok(Answer::No(format!(
                "the call came back without the person's answer; {NOTHING_DONE}. Call {} again to ask them.",
                call.tool
            )));
        };
        let result: ElicitResult = serde_json::from_value(raw.clone()).map_err(|e| {
            ToolError::Rpc(ErrorData::invalid_params(
                format!("inputResponses.{CONFIRM} is not an elicitation result: {e}"),
                None,
            ))
        })?;
        Ok(judge(
            &result,
            call.tool,
            NOTHING_DONE,
            time_ms,
            self.shared.options.ask_timeout,
        ))
    }

    /// Where a post is, for the question: `~name` or the conversation.
    async fn post_place(&self, post: &Post) -> String {
        match self.shared.client.channel(&post.channel_id).await {
            Ok(channel) => {
                let channel = self.named_channel(channel).await;
                place_label(&channel)
            }
            Err(_) => format!("channel {}", post.channel_id),
        }
    }

    async fn author_of(&self, post: &Post) -> String {
        match self.post_out(post.clone()).await.username.as_str() {
            "" => format!("user {}", post.user_id),
            name => format!("@{name}"),
        }
    }

    /// Looks up what a change acts on and writes the question.
    async fn look(&self, change: &Change) -> Result<Look, ToolError> {
        let wanted = match change {
            Change::Update(a) => &a.post_id,
            Change::Delete(a) => &a.post_id,
            Change::React(a, _) => &a.post_id,
            Change::Pin(a) => &a.post_id,
        };
        let id = Self::post_id(wanted)?;
        let post = self.shared.client.post(&id).await?;
        let me = self.me().await?;
        let place = self.post_place(&post).await;
        let author = self.author_of(&post).await;
        let link = self.shared.client.permalink(&post.id);
        let mut look = Look {
            fingerprint: String::new(),
            title: String::new(),
            text: String::new(),
            replies: 0,
            emoji: String::new(),
            nothing_to_do: None,
            post,
        };
        let post = &look.post;
        match change {
            Change::Update(args) => {
                if post.user_id != me.id {
                    return Err(ToolError::Tool(format!(
                        "post {id} was written by {author}, and you can edit only your own posts. {NOTHING_CHANGED}"
                    )));
                }
                if args.message.trim().is_empty() {
                    return Err(ToolError::Tool(format!(
                        "the new message is empty; to remove the post use delete_post. {NOTHING_CHANGED}"
                    )));
                }
                if args.message == post.message {
                    look.nothing_to_do = Some(format!(
                        "post {id} already says exactly that; there is nothing to change."
                    ));
                    return Ok(look);
                }
                self.check_length(&args.message)
                    .await
                    .map_err(|f| match f {
                        ToolError::Tool(s) => ToolError::Tool(of_posted(&s)),
                        other @ ToolError::Rpc(_) => other,
                    })?;
                let checked = check_message(
                    &self.shared.client,
                    &args.message,
                    &Reach::Channel(post.channel_id.clone()),
                    NOTHING_CHANGED,
                )
                .await
                .map_err(ToolError::Tool)?;
                look.fingerprint = fingerprint(&["update", &post.id, &post.message]);
                look.title = format!("Edit your post in {place}");
                let mut text = format!(
                    "{}\n\n@{} edits their post in {place} ({link}).\n",
                    look.title, me.username
                );
                for note in &checked.notes {
                    let _ = writeln!(text, "{note}");
                }
                let _ = write!(
                    text,
                    "\nThe old text:\n{}\n\nThe new text:\n{}",
                    quote(&post.message),
                    quote(&args.message)
                );
                look.text = text;
            }
            Change::Delete(_) => {
                if post.user_id != me.id && !is_admin(&me.roles) {
                    return Err(ToolError::Tool(format!(
                        "post {id} was written by {author}, and you can delete only your own posts. {NOTHING_CHANGED}"
                    )));
                }
                if post.root_id.is_empty() {
                    let thread = self.shared.client.post_thread(&post.id).await?;
                    look.replies = thread
                        .posts
                        .values()
                        .filter(|p| p.id != post.id && p.delete_at == 0)
                        .count() as u64;
                }
                let replies = look.replies;
                look.fingerprint =
                    fingerprint(&["delete", &post.id, &post.message, &replies.to_string()]);
                look.title = format!("Delete a post in {place}");
                let what = match replies {
                    0 if post.root_id.is_empty() => "It has no replies.".to_owned(),
                    0 => "It is a reply; only it is deleted, not the thread.".to_owned(),
                    1 => "Its 1 reply is deleted with it.".to_owned(),
                    n => format!("Its {n} replies are deleted with it."),
                };
                look.text = format!(
                    "{}\n\n@{} deletes this post by {author} in {place} ({link}). {what} It cannot be undone.\n\n{}",
                    look.title,
                    me.username,
                    quote(&post.message)
                );
            }
            Change::React(args, add) => {
                let emoji = emoji_name(&args.emoji).ok_or_else(|| {
                    ToolError::Tool(format!(
                        "{:?} is not an emoji name (letters, digits, _, - and +, like thumbsup or :white_check_mark:) nor an emoji porter knows; pass its name. {NOTHING_CHANGED}",
                        args.emoji
                    ))
                })?;
                let reactions = self.shared.client.post_reactions(&post.id).await?;
                let mine = reactions
                    .iter()
                    .any(|r| r.user_id == me.id && r.emoji_name == emoji);
                if *add && mine {
                    look.nothing_to_do = Some(format!(
                        "you already reacted with :{emoji}: to post {id}; there is nothing to change."
                    ));
                }
                if !*add && !mine {
                    return Err(ToolError::Tool(format!(
                        "you have no :{emoji}: reaction on post {id}, so there is none to remove. {NOTHING_CHANGED}"
                    )));
                }
                let verb = if *add { "add" } else { "remove" };
                look.fingerprint = fingerprint(&[verb, &post.id, &post.message, &emoji]);
                look.title = if *add {
                    format!("React with :{emoji}: in {place}")
                } else {
                    format!("Remove your :{emoji}: reaction in {place}")
                };
                let doing = if *add {
                    format!("reacts with :{emoji}: to")
                } else {
                    format!("removes their :{emoji}: reaction from")
                };
                look.text = format!(
                    "{}\n\n@{} {doing} this post by {author} in {place} ({link}):\n\n{}",
                    look.title,
                    me.username,
                    quote(&post.message)
                );
                look.emoji = emoji;
            }
            Change::Pin(args) => {
                if post.is_pinned != args.unpin {
                    let state = if args.unpin {
                        "is not pinned"
                    } else {
                        "is already pinned"
                    };
                    look.nothing_to_do =
                        Some(format!("post {id} {state}; there is nothing to change."));
                }
                let verb = if args.unpin { "unpin" } else { "pin" };
                look.fingerprint = fingerprint(&[verb, &post.id, &post.message]);
                look.title = if args.unpin {
                    format!("Unpin a post in {place}")
                } else {
                    format!("Pin a post in {place}")
                };
                let doing = if args.unpin {
                    format!("takes the pin off this post by {author} in {place}")
                } else {
                    format!(
                        "pins this post by {author} to {place}, where everyone in the channel sees it among the pinned posts"
                    )
                };
                look.text = format!(
                    "{}\n\n@{} {doing} ({link}):\n\n{}",
                    look.title,
                    me.username,
                    quote(&post.message)
                );
            }
        }
        Ok(look)
    }

    async fn act_change(&self, change: &Change, look: Look) -> Result<CallToolResult, ToolError> {
        let client = &self.shared.client;
        let post_id = look.post.id.clone();
        let permalink = client.permalink(&post_id);
        let mut out = PostChangeOut {
            action: String::new(),
            post_id: post_id.clone(),
            permalink: permalink.clone(),
            post: None,
            emoji: None,
            replies_deleted: None,
        };
        let text = match change {
            Change::Update(args) => {
                let mut props = look.post.props.clone();
                if self.shared.options.mark_ai_generated {
                    let me = self.me().await.map(|u| u.id).unwrap_or_default();
                    props.insert("ai_generated_by".to_owned(), Value::String(me));
                }
                let patch = PostPatch {
                    message: Some(args.message.clone()),
                    props: Some(props),
                };
                let post = client.patch_post(&post_id, &patch).await?;
                let post = self.post_out(post).await;
                "edited".clone_into(&mut out.action);
                let text = format!("Edited post {post_id}: {permalink}\n{}", post_text(&post));
                out.post = Some(post);
                text
            }
            Change::Delete(_) => {
                client.delete_post(&post_id).await?;
                "deleted".clone_into(&mut out.action);
                out.replies_deleted = Some(look.replies);
                format!(
                    "Deleted post {post_id} and {} repl{}.",
                    look.replies,
                    if look.replies == 1 { "y" } else { "ies" }
                )
            }
            Change::React(_, add) => {
                let me = self.me().await?;
                if *add {
                    client.add_reaction(&me.id, &post_id, &look.emoji).await?;
                    "reacted".clone_into(&mut out.action);
                } else {
                    client
                        .remove_reaction(&me.id, &post_id, &look.emoji)
                        .await?;
                    "unreacted".clone_into(&mut out.action);
                }
                let text = if *add {
                    format!(
                        "Reacted with :{}: to post {post_id}: {permalink}",
                        look.emoji
                    )
                } else {
                    format!(
                        "Removed your :{}: reaction from post {post_id}: {permalink}",
                        look.emoji
                    )
                };
                out.emoji = Some(look.emoji.clone());
                text
            }
            Change::Pin(args) => {
                if args.unpin {
                    client.unpin_post(&post_id).await?;
                    "unpinned".clone_into(&mut out.action);
                    format!("Unpinned post {post_id}: {permalink}")
                } else {
                    client.pin_post(&post_id).await?;
                    "pinned".clone_into(&mut out.action);
                    format!("Pinned post {post_id}: {permalink}")
                }
            }
        };
        done(text, &out)
    }
}

fn changed_since(tool: &str) -> ToolError {
    ToolError::Tool(format!(
        "the post changed between the question and the answer (its text, replies, or reactions are not what the person was asked about); nothing was changed. Call {tool} again to ask about it as it is now."
    ))
}

fn of_posted(sentence: &str) -> String {
    sentence.replace("Nothing was posted.", NOTHING_CHANGED)
}

/// The label and description of the question's box, naming the change's
/// own action.
fn box_words(change: &Change) -> (&'static str, &'static str) {
    match change {
        Change::Update(_) => (
            "Yes, edit this post",
            "Tick to replace the old text with the new text shown above; leave unticked or decline to change nothing.",
        ),
        Change::Delete(_) => (
            "Yes, delete this post",
            "Tick to delete the post (and the replies named) shown above; leave unticked or decline to delete nothing.",
        ),
        Change::React(_, true) => (
            "Yes, add this reaction",
            "Tick to add the reaction shown above; leave unticked or decline to add nothing.",
        ),
        Change::React(_, false) => (
            "Yes, remove this reaction",
            "Tick to remove the reaction shown above; leave unticked or decline to keep it.",
        ),
        Change::Pin(args) if args.unpin => (
            "Yes, unpin this post",
            "Tick to unpin the post shown above; leave unticked or decline to keep it pinned.",
        ),
        Change::Pin(_) => (
            "Yes, pin this post",
            "Tick to pin the post shown above to its channel; leave unticked or decline to leave it unpinned.",
        ),
    }
}

fn is_admin(roles: &str) -> bool {
    roles.split_whitespace().any(|r| r == "system_admin")
}

fn place_label(channel: &Channel) -> String {
    match channel.kind {
        ChannelType::Direct | ChannelType::Group => {
            format!("the conversation {}", channel.display_name)
        }
        _ => format!("~{}", channel.name),
    }
}

/// Text quoted for the question, line by line.
fn quote(text: &str) -> String {
    if text.is_empty() {
        return "> (no text)".to_owned();
    }
    text.lines()
        .map(|line| format!("> {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `EMOJI` maps common emoji characters to Mattermost's names for them.
const EMOJI: &[(&str, &str)] = &[
    ("👍", "+1"),
    ("👎", "-1"),
    ("❤", "heart"),
    ("😀", "grinning"),
    ("😃", "smiley"),
    ("😄", "smile"),
    ("😁", "grin"),
    ("😆", "laughing"),
    ("😂", "joy"),
    ("🙂", "slightly_smiling_face"),
    ("😉", "wink"),
    ("😊", "blush"),
    ("😍", "heart_eyes"),
    ("🤔", "thinking_face"),
    ("😮", "open_mouth"),
    ("😢", "cry"),
    ("😭", "sob"),
    ("😡", "rage"),
    ("😎", "sunglasses"),
    ("🎉", "tada"),
    ("🚀", "rocket"),
    ("🔥", "fire"),
    ("👀", "eyes"),
    ("👏", "clap"),
    ("🙏", "pray"),
    ("🙌", "raised_hands"),
    ("👋", "wave"),
    ("👌", "ok_hand"),
    ("💪", "muscle"),
    ("💯", "100"),
    ("✅", "white_check_mark"),
    ("✔", "heavy_check_mark"),
    ("❌", "x"),
    ("⭐", "star"),
    ("✨", "sparkles"),
    ("💡", "bulb"),
    ("⚠", "warning"),
    ("🐛", "bug"),
    ("☕", "coffee"),
    ("🍕", "pizza"),
];

/// `emoji_name` reads an emoji as a name (`thumbsup`), `:name:`, or the
/// character; `None` when it is none of those.
fn emoji_name(given: &str) -> Option<String> {
    let trimmed = given.trim();
    let bare: String = trimmed
        .chars()
        .filter(|c| *c != '\u{fe0f}' && *c != '\u{fe0e}')
        .collect();
    if let Some((_, name)) = EMOJI.iter().find(|(c, _)| *c == bare) {
        return Some((*name).to_owned());
    }
    let name = trimmed
        .strip_prefix(':')
        .and_then(|n| n.strip_suffix(':'))
        .unwrap_or(trimmed)
        .to_ascii_lowercase();
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+'));
    valid.then_some(name)
}

// ----- the read tools' bodies -----

impl MattermostServer {
    async fn read_unread_impl(&self, args: ReadUnreadArgs) -> Result<CallToolResult, ToolError> {
        let paging = self.paging::<_, usize>(
            "read_unread",
            &args,
            args.limit,
            args.cursor.as_deref(),
            LIST_PAGE,
            LIST_MAX,
        )?;
        let per_channel = args
            .posts_per_channel
            .unwrap_or(UNREAD_POSTS)
            .clamp(1, UNREAD_POSTS_MAX);
        let me = self.me().await?;
        let teams = self.teams_for(args.team_id.as_deref()).await?;
        let channels = self.my_channels(&teams).await?;
        let mut members = HashMap::new();
        for team in &teams {
            for member in self.shared.client.my_channel_members(&team.id).await? {
                members.insert(member.channel_id.clone(), member);
            }
        }
        let mut unread: Vec<(Channel, i64, i64, i64)> = channels
            .into_iter()
            .filter_map(|(channel, _)| {
                let member = members.get(&channel.id)?;
                let count = channel.total_msg_count - member.msg_count;
                (count > 0).then_some((channel, count, member.mention_count, member.last_viewed_at))
            })
            .collect();
        unread.sort_by(|a, b| {
            b.0.last_post_at
                .cmp(&a.0.last_post_at)
                .then_with(|| a.0.id.cmp(&b.0.id))
        });
        let (page, next) = self.slice("read_unread", &paging, &unread);
        let mut out = Vec::with_capacity(page.len());
        let mut text = if unread.is_empty() {
            "Nothing unread: you have read every channel.\n".to_owned()
        } else {
            format!("{} channels have unread messages:\n\n", unread.len())
        };
        for (channel, count, mentions, viewed) in page {
            let list = self
                .shared
                .client
                .channel_posts(&channel.id, &ChannelPosts::page(0, per_channel))
                .await?;
            let posts: Vec<Post> = list
                .into_ordered()
                .into_iter()
                .filter(|p| p.create_at > viewed && p.user_id != me.id)
                .collect();
            let posts = self.posts_out(posts).await;
            let channel = self.named_channel(channel).await;
            let channel_out = ChannelOut::from(&channel);
            let _ = writeln!(
                text,
                "{}: {count} unread, {mentions} mentions of you (channel id {})",
                place_label(&channel),
                channel.id
            );
            for post in &posts {
                text.push_str(&post_text(post));
                text.push('\n');
            }
            out.push(UnreadChannelOut {
                channel: channel_out,
                unread: count,
                mentions,
                posts,
            });
        }
        more_line(&mut text, next.as_ref(), "channels");
        done(
            text,
            &UnreadOut {
                channels: out,
                next_cursor: next,
            },
        )
    }

    async fn list_threads_impl(&self, args: TeamPageArgs) -> Result<CallToolResult, ToolError> {
        let paging = self.paging::<_, usize>(
            "list_threads",
            &args,
            args.limit,
            args.cursor.as_deref(),
            LIST_PAGE,
            LIST_MAX,
        )?;
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
        let (page, next) = self.slice("list_threads", &paging, &threads);
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

    async fn list_pinned_impl(&self, args: PinnedArgs) -> Result<CallToolResult, ToolError> {
        let paging = self.paging::<_, usize>(
            "list_pinned_posts",
            &args,
            args.limit,
            args.cursor.as_deref(),
            LIST_PAGE,
            LIST_MAX,
        )?;
        let (channel, _) = self
            .resolve_channel(&args.channel_id, args.team_id.as_deref())
            .await?;
        let mut posts = self
            .shared
            .client
            .pinned_posts(&channel.id)
            .await?
            .into_ordered();
        newest_first(&mut posts);
        let label = place_label(&channel);
        let empty = format!("Nothing is pinned in {label}.\n");
        let head = format!("Pinned in {label}, newest first:\n\n");
        let channel = Some(ChannelOut::from(&channel));
        self.posts_page("list_pinned_posts", &paging, &posts, channel, &empty, &head)
            .await
    }

    async fn list_saved_impl(&self, args: SavedArgs) -> Result<CallToolResult, ToolError> {
        let paging = self.paging::<_, usize>(
            "list_saved",
            &args,
            args.limit,
            args.cursor.as_deref(),
            LIST_PAGE,
            LIST_MAX,
        )?;
        let mut posts = Vec::new();
        let mut page = 0;
        loop {
            let list = self.shared.client.flagged_posts(page, FETCH_PAGE).await?;
            let got = list.order.len();
            posts.extend(list.into_ordered());
            if got < FETCH_PAGE as usize || posts.len() >= FETCH_DEPTH {
                break;
            }
            page += 1;
        }
        newest_first(&mut posts);
        self.posts_page(
            "list_saved",
            &paging,
            &posts,
            None,
            "You have saved no posts.\n",
            "Your saved posts, newest first:\n\n",
        )
        .await
    }

    async fn list_mentions_impl(&self, args: TeamPageArgs) -> Result<CallToolResult, ToolError> {
        let paging = self.paging::<_, usize>(
            "list_mentions",
            &args,
            args.limit,
            args.cursor.as_deref(),
            LIST_PAGE,
            LIST_MAX,
        )?;
        let me = self.me().await?;
        let teams = self.teams_for(args.team_id.as_deref()).await?;
        let query = format!("@{}", me.username);
        let end = (paging.position + paging.limit + 1).min(FETCH_DEPTH);
        let mut seen = HashSet::new();
        let mut posts = Vec::new();
        for team in &teams {
            for post in self.search_team_posts(team, &query, end).await? {
                if post.user_id != me.id && seen.insert(post.id.clone()) {
                    posts.push(post);
                }
            }
        }
        newest_first(&mut posts);
        let head = format!("Posts that mention @{}, newest first:\n\n", me.username);
        let empty = format!("No post mentions @{}.\n", me.username);
        self.posts_page("list_mentions", &paging, &posts, None, &empty, &head)
            .await
    }

    /// One page of a list of posts, as text and `PostsOut`.
    async fn posts_page(
        &self,
        tool: &str,
        paging: &crate::paging::Paging<usize>,
        posts: &[Post],
        channel: Option<ChannelOut>,
        empty: &str,
        head: &str,
    ) -> Result<CallToolResult, ToolError> {
        let (page, next) = self.slice(tool, paging, posts);
        let posts_out = self.posts_out(page).await;
        let mut text = if posts.is_empty() {
            empty.to_owned()
        } else {
            head.to_owned()
        };
        for post in &posts_out {
            text.push_str(&post_text(post));
            text.push('\n');
        }
        more_line(&mut text, next.as_ref(), "posts");
        done(
            text,
            &PostsOut {
                channel,
                posts: posts_out,
                next_cursor: next,
            },
        )
    }
}

fn newest_first(posts: &mut [Post]) {
    posts.sort_by(|a, b| b.create_at.cmp(&a.create_at).then_with(|| a.id.cmp(&b.id)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emoji_are_read_as_names_colon_names_or_characters() {
        let cases = [
            ("thumbsup", Some("thumbsup")),
            (":white_check_mark:", Some("white_check_mark")),
            ("👍", Some("+1")),
            ("❤️", Some("heart")),
            (" :Tada: ", Some("tada")),
            ("+1", Some("+1")),
            ("not an emoji", None),
            ("::", None),
            ("🦄", None),
        ];
        for (given, want) in cases {
            assert_eq!(emoji_name(given).as_deref(), want, "{given}");
        }
    }

    #[test]
    fn a_fingerprint_changes_with_the_text_it_is_bound_to() {
        let a = fingerprint(&["update", "p1", "old text"]);
        assert_eq!(a, fingerprint(&["update", "p1", "old text"]));
        assert_ne!(a, fingerprint(&["update", "p1", "old text!"]));
        assert_ne!(a, fingerprint(&["delete", "p1", "old text"]));
    }

    #[test]
    fn quotes_mark_every_line_and_show_empty_text() {
        assert_eq!(quote("a\nb"), "> a\n> b");
        assert_eq!(quote(""), "> (no text)");
    }
}
