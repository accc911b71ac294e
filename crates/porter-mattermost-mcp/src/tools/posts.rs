//! The tools about posts: `read_channel`, `search_posts`, `read_unread`,
//! `list_pinned_posts`, `list_saved`, `list_mentions` (read, paged by
//! cursor); `create_post`, `dm`, `group_message` (posting); `update_post`,
//! `delete_post`, `add_reaction`, `remove_reaction`, `pin_post` (changing
//! what others see); `save_post`, `set_post_reminder` (the person's own
//! state, never asked).
//!
//! Posting and changing ask the person first (unless the operator left
//! approval to the client), with the form of [`crate::ask`]: one required,
//! default-less `confirm` box, whose message names who posts where, every
//! file and the message, or exactly what will change. Nothing is read from
//! Mattermost or disk before the client is known to be able to ask. The
//! answer is bound to a digest of the call's input and the fingerprint of
//! what it acts on; just before acting every file (or the post) is read
//! again and compared, and a change whose post moved meanwhile is refused.
//!
//! Sessions up to 2025-11-25 are asked during the call (`elicitation/create`);
//! on 2026-07-28 the call answers "input required" with a sealed request
//! state, and the client calls again with the person's answer.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::str::FromStr as _;

use porter_mattermost::Channel;
use porter_mattermost::ChannelPosts;
use porter_mattermost::ChannelType;
use porter_mattermost::Error;
use porter_mattermost::FLAGGED_POST;
use porter_mattermost::NewPost;
use porter_mattermost::Post;
use porter_mattermost::PostPatch;
use porter_mattermost::Preference;
use porter_mattermost::Team;
use porter_mattermost::UploadFile;
use porter_mattermost::User;
use porter_mcp::tool::Call;
use porter_mcp::tool::Hints;
use porter_mcp::tool::ToolError;
use porter_mcp::tool::done;
use rmcp::model::CallToolResponse;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;

use crate::ask::AskedChange;
use crate::ask::Looked;
use crate::ask::NOTHING_POSTED;
use crate::ask::Question;
use crate::lookup::ChannelRef;
use crate::names::username;
use crate::options::Transport;
use crate::outgoing;
use crate::outgoing::FileRequest;
use crate::outgoing::OutgoingLimits;
use crate::outgoing::Prepared;
use crate::outgoing::PreparedFile;
use crate::outgoing::Refusal;
use crate::outgoing::checks;
use crate::outgoing::checks::Reach;
use crate::outgoing::checks::check_message;
use crate::output::ChannelOut;
use crate::output::DoneOut;
use crate::output::PostOut;
use crate::output::PostedOut;
use crate::output::PostsOut;
use crate::paging::Page;
use crate::paging::Paging;
use crate::paging::SEARCH_DEPTH;
use crate::paging::SearchArgs;
use crate::paging::Sizes;
use crate::paging::all_pages;
use crate::paging::more_line;
use crate::paging::page_text;
use crate::paging::paged;
use crate::paging::search_teams;
use crate::render::channel_label;
use crate::render::channel_line;
use crate::render::post_text;
use crate::server::MattermostServer;
use crate::tools::Reply;
use crate::tools::channels::ChannelArgs;

/// The page sizes of the post lists (and of the followed threads): 20, at
/// most 100, smaller than other lists, because each item is a whole post.
pub(crate) const POST_LIST: Sizes = Sizes {
    default: 20,
    max: 100,
};
/// Unread posts shown per channel by default, and at most.
pub(crate) const UNREAD_POSTS: u32 = 10;
pub(crate) const UNREAD_POSTS_MAX: u32 = 50;
/// Page size when reading a whole list from Mattermost, and how deep.
pub(crate) const FETCH_PAGE: u32 = 200;
pub(crate) const FETCH_DEPTH: usize = 1000;
/// The sentence every refusal of a change ends with.
pub(crate) const NOTHING_CHANGED: &str = "Nothing was changed.";

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
    // Which page of posts.
    #[serde(flatten)]
    pub page: Page,
}

/// A page of a channel's pinned posts.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct PinnedArgs {
    // The channel, by id or name (and team).
    #[serde(flatten)]
    pub channel: ChannelRef,
    // Which page of posts.
    #[serde(flatten)]
    pub page: Page,
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

paged!(ReadUnreadArgs, TeamPageArgs);
paged!(page: SavedArgs, PinnedArgs);

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

method_tools! {
    /// `read_unread`: Unread messages.
    ReadUnread = read_unread_impl(args) {
        name: "read_unread", title: "Unread messages", hints: Hints::READ, args: ReadUnreadArgs, out: UnreadOut,
        description: "The channels with messages you have not read, with the counts and the newest unread posts of each.",
    }
    /// `list_pinned_posts`: Pinned posts.
    ListPinnedPosts = list_pinned_impl(args) {
        name: "list_pinned_posts", title: "Pinned posts", hints: Hints::READ, args: PinnedArgs, out: PostsOut,
        description: "The posts pinned in a channel, newest first.",
    }
    /// `list_saved`: Saved posts.
    ListSaved = list_saved_impl(args) {
        name: "list_saved", title: "Saved posts", hints: Hints::READ, args: SavedArgs, out: PostsOut,
        description: "The posts you saved (flagged), newest first.",
    }
    /// `list_mentions`: Mentions of me.
    ListMentions = list_mentions_impl(args) {
        name: "list_mentions", title: "Mentions of me", hints: Hints::READ, args: TeamPageArgs, out: PostsOut,
        description: "Posts by others that mention you by @username, newest first.",
    }
    /// `read_channel`: Read a channel.
    ReadChannel = read_channel_impl(args) {
        name: "read_channel", title: "Read a channel", hints: Hints::READ, args: ReadChannelArgs, out: PostsOut,
        description: "A channel's posts, newest first, each with its author, time, permalink and files. Page back with next_cursor.",
    }
    /// `search_posts`: Search posts.
    SearchPosts = search_posts_impl(args) {
        name: "search_posts", title: "Search posts", hints: Hints::READ, args: SearchArgs, out: PostsOut,
        description: "Searches posts with Mattermost's search syntax (words, \"phrases\", from:, in:, before:, after:, on:), newest first.",
    }
    /// `save_post`: Save a post.
    SavePost = save_post_impl(args) {
        name: "save_post", title: "Save a post", hints: Hints::write(false, true), args: SavePostArgs, out: DoneOut,
        description: "Saves a post to your saved posts (or removes it with saved=false). It changes only your own state, so porter does not ask the person.",
    }
    /// `set_post_reminder`: Remind me of a post.
    SetPostReminder = set_post_reminder_impl(args) {
        name: "set_post_reminder", title: "Remind me of a post", hints: Hints::write(false, true), args: PostReminderArgs, out: ReminderOut,
        description: "Has Mattermost remind you of a post at a time (ISO 8601; without an offset the time is read in your Mattermost time zone). It changes only your own state, so porter does not ask the person.",
    }
}

method_tools! {
    /// `update_post`: Edit a post.
    UpdatePost = ask_then_change(tool, args, call, Change::Update) {
        name: "update_post", title: "Edit a post", hints: Hints::write(true, true), args: UpdatePostArgs, out: PostChangeOut,
        description: "Replaces the text of one of your posts; the person sees the old and the new text. Mentions must name real accounts.",
    }
    /// `delete_post`: Delete a post.
    DeletePost = ask_then_change(tool, args, call, Change::Delete) {
        name: "delete_post", title: "Delete a post", hints: Hints::write(true, true), args: PostArgs, out: PostChangeOut,
        description: "Deletes one of your posts; deleting a thread's first post deletes its replies too, and the person is told how many.",
    }
    /// `add_reaction`: React to a post.
    AddReaction = ask_then_change(tool, args, call, |args| Change::React(args, true)) {
        name: "add_reaction", title: "React to a post", hints: Hints::write(false, true), args: ReactionArgs, out: PostChangeOut,
        description: "Adds your emoji reaction to a post (emoji by name, :name: or the character).",
    }
    /// `remove_reaction`: Remove a reaction.
    RemoveReaction = ask_then_change(tool, args, call, |args| Change::React(args, false)) {
        name: "remove_reaction", title: "Remove a reaction", hints: Hints::write(true, true), args: ReactionArgs, out: PostChangeOut,
        description: "Removes your emoji reaction from a post (emoji by name, :name: or the character).",
    }
    /// `pin_post`: Pin a post.
    PinPost = ask_then_change(tool, args, call, Change::Pin) {
        name: "pin_post", title: "Pin a post", hints: Hints::write(false, true), args: PinArgs, out: PostChangeOut,
        description: "Pins a post to its channel for everyone in it (or, with unpin, takes the pin off).",
    }
}

// ----- asking -----

/// A change, with its arguments.
pub(crate) enum Change {
    Update(UpdatePostArgs),
    Delete(PostArgs),
    React(ReactionArgs, bool),
    Pin(PinArgs),
}

/// What a change acts on, looked up just now, and the question about it.
pub(crate) struct Look {
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

impl Look {
    /// Writes the question: `title`, who does what to the post (`doing`,
    /// with where it is and its link), then the post's text quoted.
    fn ask(&mut self, me: &User, title: String, doing: &str) {
        self.text = format!(
            "{title}\n\n@{} {doing}\n\n{}",
            me.username,
            quote(&self.post.message)
        );
        self.title = title;
    }
}

impl Looked for Look {
    fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    fn nothing_to_do(&self) -> Option<&str> {
        self.nothing_to_do.as_deref()
    }
}

impl AskedChange for Change {
    type Found = Look;

    async fn look(&self, server: &MattermostServer) -> Result<Look, ToolError> {
        server.look(self).await
    }

    fn question(&self, look: &Look) -> Question {
        let (label, about) = box_words(self);
        Question {
            title: look.title.clone(),
            text: look.text.clone(),
            label,
            about,
        }
    }

    fn changed(&self, tool: &str, _: &Self::Found) -> ToolError {
        changed_since(tool)
    }

    async fn make(&self, server: &MattermostServer, look: Look) -> Reply {
        server.act_change(self, look).await
    }
}

/// The fingerprint a question about a post is bound to: its parts, each
/// kept apart by its length (no text can run into the next part).
pub(crate) fn fingerprint(parts: &[&str]) -> String {
    let bytes: Vec<&[u8]> = parts.iter().map(|part| part.as_bytes()).collect();
    porter_paths::fingerprint(&bytes)
}

impl MattermostServer {
    /// Where a post is, for the question: `~name` or the conversation.
    pub(crate) async fn post_place(&self, post: &Post) -> String {
        match self.shared.client.channel(&post.channel_id).await {
            Ok(channel) => {
                let channel = self.named_channel(channel).await;
                place_label(&channel)
            }
            Err(_) => format!("channel {}", post.channel_id),
        }
    }

    pub(crate) async fn author_of(&self, post: &Post) -> String {
        match self.post_out(post.clone()).await.username.as_str() {
            "" => format!("user {}", post.user_id),
            name => format!("@{name}"),
        }
    }

    /// Looks up what a change acts on and writes the question.
    pub(crate) async fn look(&self, change: &Change) -> Result<Look, ToolError> {
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
        let naming = Naming {
            id: &id,
            me: &me,
            author: &author,
            place: &place,
            link: &link,
        };
        let post = &look.post;
        match change {
            Change::Update(args) => self.update_question(args, &mut look, &naming).await?,
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
                let what = match replies {
                    0 if post.root_id.is_empty() => "It has no replies.".to_owned(),
                    0 => "It is a reply; only it is deleted, not the thread.".to_owned(),
                    1 => "Its 1 reply is deleted with it.".to_owned(),
                    n => format!("Its {n} replies are deleted with it."),
                };
                look.ask(
                    &me,
                    format!("Delete a post in {place}"),
                    &format!(
                        "deletes this post by {author} in {place} ({link}). {what} It cannot be undone."
                    ),
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
                let title = if *add {
                    format!("React with :{emoji}: in {place}")
                } else {
                    format!("Remove your :{emoji}: reaction in {place}")
                };
                let doing = if *add {
                    format!("reacts with :{emoji}: to")
                } else {
                    format!("removes their :{emoji}: reaction from")
                };
                look.ask(
                    &me,
                    title,
                    &format!("{doing} this post by {author} in {place} ({link}):"),
                );
                look.emoji = emoji;
            }
            Change::Pin(args) => pin_question(args, &mut look, &naming),
        }
        Ok(look)
    }

    /// The question of `update_post`: the old text and the new; refused
    /// for another's post or an empty message.
    async fn update_question(
        &self,
        args: &UpdatePostArgs,
        look: &mut Look,
        naming: &Naming<'_>,
    ) -> Result<(), ToolError> {
        let Naming {
            id,
            me,
            author,
            place,
            link,
        } = *naming;
        let post = &look.post;
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
            return Ok(());
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
        Ok(())
    }

    pub(crate) async fn act_change(&self, change: &Change, look: Look) -> Reply {
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

pub(crate) fn changed_since(tool: &str) -> ToolError {
    ToolError::Tool(format!(
        "the post changed between the question and the answer (its text, replies, or reactions are not what the person was asked about); nothing was changed. Call {tool} again to ask about it as it is now."
    ))
}

pub(crate) fn of_posted(sentence: &str) -> String {
    sentence.replace("Nothing was posted.", NOTHING_CHANGED)
}

/// The label and description of the question's box, naming the change's
/// own action.
pub(crate) fn box_words(change: &Change) -> (&'static str, &'static str) {
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

pub(crate) fn is_admin(roles: &str) -> bool {
    roles.split_whitespace().any(|r| r == "system_admin")
}

pub(crate) fn place_label(channel: &Channel) -> String {
    match channel.kind {
        ChannelType::Direct | ChannelType::Group => {
            format!("the conversation {}", channel.display_name)
        }
        _ => format!("~{}", channel.name),
    }
}

/// Text quoted for the question, line by line.
pub(crate) fn quote(text: &str) -> String {
    if text.is_empty() {
        return "> (no text)".to_owned();
    }
    text.lines()
        .map(|line| format!("> {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `EMOJI` maps common emoji characters to Mattermost's names for them.
pub(crate) const EMOJI: &[(&str, &str)] = &[
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
pub(crate) fn emoji_name(given: &str) -> Option<String> {
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
    pub(crate) async fn read_unread_impl(&self, args: ReadUnreadArgs) -> Reply {
        let paging = self.paging::<_, usize>("read_unread", &args, POST_LIST)?;
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
        let (page, next) = self.slice(&paging, &unread);
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

    pub(crate) async fn list_pinned_impl(&self, args: PinnedArgs) -> Reply {
        let paging = self.paging::<_, usize>("list_pinned_posts", &args, POST_LIST)?;
        let (channel, _) = self.channel_at(&args.channel).await?;
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
        self.posts_page(&paging, &posts, channel, &empty, &head, "posts")
            .await
    }

    pub(crate) async fn list_saved_impl(&self, args: SavedArgs) -> Reply {
        let paging = self.paging::<_, usize>("list_saved", &args, POST_LIST)?;
        let mut posts = all_pages(FETCH_PAGE, FETCH_DEPTH, |page| async move {
            let list = self.shared.client.flagged_posts(page, FETCH_PAGE).await?;
            Ok::<_, ToolError>((list.order.len(), list.into_ordered()))
        })
        .await?;
        newest_first(&mut posts);
        self.posts_page(
            &paging,
            &posts,
            None,
            "You have saved no posts.\n",
            "Your saved posts, newest first:\n\n",
            "posts",
        )
        .await
    }

    pub(crate) async fn list_mentions_impl(&self, args: TeamPageArgs) -> Reply {
        let paging = self.paging::<_, usize>("list_mentions", &args, POST_LIST)?;
        let me = self.me().await?;
        let teams = self.teams_for(args.team_id.as_deref()).await?;
        let query = format!("@{}", me.username);
        let mut posts = self
            .search_posts_in(&teams, &query, paging.end(FETCH_DEPTH))
            .await?;
        posts.retain(|post| post.user_id != me.id);
        let head = format!("Posts that mention @{}, newest first:\n\n", me.username);
        let empty = format!("No post mentions @{}.\n", me.username);
        self.posts_page(&paging, &posts, None, &empty, &head, "posts")
            .await
    }

    /// One page of a list of posts, as text (`empty` for an empty list,
    /// else `head` and the posts, and whether more `what` follow) and
    /// `PostsOut`.
    pub(crate) async fn posts_page(
        &self,
        paging: &Paging<usize>,
        posts: &[Post],
        channel: Option<ChannelOut>,
        empty: &str,
        head: &str,
        what: &str,
    ) -> Reply {
        let (page, next) = self.slice(paging, posts);
        let posts_out = self.posts_out(page).await;
        let opening = if posts.is_empty() { empty } else { head };
        let lines = posts_out.iter().map(post_text);
        let text = page_text(opening.to_owned(), lines, next.as_ref(), what);
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

pub(crate) fn newest_first(posts: &mut [Post]) {
    posts.sort_by(|a, b| b.create_at.cmp(&a.create_at).then_with(|| a.id.cmp(&b.id)));
}

/// The page sizes of `read_channel`: 30, at most 200.
pub(crate) const POSTS: Sizes = Sizes {
    default: 30,
    max: 200,
};

/// A page of a channel's posts.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct ReadChannelArgs {
    // The channel, as `get_channel_info` takes it.
    #[serde(flatten)]
    pub channel: ChannelArgs,
    /// Most posts in this page, newest first (default 30, at most 200).
    #[serde(default)]
    pub limit: Option<u32>,
    /// The next_cursor of the previous page (older posts).
    #[serde(default)]
    pub cursor: Option<String>,
}

paged!(ReadChannelArgs);

impl MattermostServer {
    pub(crate) async fn read_channel_impl(&self, args: ReadChannelArgs) -> Reply {
        let paging = self.paging::<_, String>("read_channel", &args, POSTS)?;
        let (channel, team) = self
            .resolve_channel(&args.channel.channel_id, args.channel.team_id.as_deref())
            .await?;
        let mut query = ChannelPosts::page(0, (paging.limit + 1) as u32);
        if !paging.position.is_empty() {
            query.before = Some(paging.position.clone());
        }
        let list = self
            .shared
            .client
            .channel_posts(&channel.id, &query)
            .await?;
        let mut posts = list.into_ordered();
        let more = posts.len() > paging.limit;
        posts.truncate(paging.limit);
        let next = if more {
            posts
                .last()
                .map(|oldest| self.next_cursor(&paging, &oldest.id))
        } else {
            None
        };
        let posts = self.posts_out(posts).await;
        let channel_out = ChannelOut::from(&channel);
        let opening = format!(
            "{} — {} posts, newest first{}:\n\n",
            channel_line(&channel_out, team.as_ref().map(|t| t.name.as_str())),
            posts.len(),
            if paging.position.is_empty() {
                ""
            } else {
                ", older than the previous page"
            }
        );
        let lines = posts.iter().map(post_text);
        let text = page_text(opening, lines, next.as_ref(), "older posts");
        done(
            text,
            &PostsOut {
                channel: Some(channel_out),
                posts,
                next_cursor: next,
            },
        )
    }

    pub(crate) async fn search_posts_impl(&self, args: SearchArgs) -> Reply {
        let paging = self.search_paging("search_posts", &args)?;
        let teams = self.teams_for(args.team_id.as_deref()).await?;
        let end = paging.end(SEARCH_DEPTH);
        let found = self.search_posts_in(&teams, &args.terms, end).await?;
        let empty = format!("No post matches {:?}.\n", args.terms);
        let head = format!("Posts matching {:?}, newest first:\n\n", args.terms);
        self.posts_page(&paging, &found, None, &empty, &head, "results")
            .await
    }

    /// Results `[0, end)` of a search in each of `in_teams`, each post
    /// once, newest first.
    pub(crate) async fn search_posts_in(
        &self,
        in_teams: &[Team],
        terms: &str,
        end: usize,
    ) -> Result<Vec<Post>, ToolError> {
        let key = |post: &Post| post.id.clone();
        let mut found = search_teams(in_teams, terms, end, key, |team, search| async move {
            let list = self.shared.client.search_posts(&team.id, &search).await?;
            Ok((list.order.len(), list.into_ordered()))
        })
        .await?;
        newest_first(&mut found);
        Ok(found)
    }
}

/// A post to save or unsave.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct SavePostArgs {
    /// The post: id or permalink.
    pub post_id: String,
    /// true (default) to save it, false to remove it from your saved posts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved: Option<bool>,
}

/// A reminder about a post.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct PostReminderArgs {
    /// The post: id or permalink.
    pub post_id: String,
    /// When, in ISO 8601: `2026-12-01T09:00` (your Mattermost time zone) or with an offset (`2026-12-01T09:00+01:00`, `…Z`).
    pub at: String,
}

/// `ReminderOut` is a reminder as set.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReminderOut {
    /// The post.
    pub post_id: String,
    /// When, in UTC (ISO 8601).
    pub at_utc: String,
    /// When, in the time zone used, with its offset.
    pub at_local: String,
    /// The time zone the time was read in (IANA name, or `UTC`).
    pub time_zone: String,
    /// Seconds since the epoch, as sent to Mattermost.
    pub target_time: i64,
}

/// Reads an ISO 8601 time: with an offset or `Z` as given, without one in
/// `zone` (an IANA name; UTC when the person set none).
pub(crate) fn reminder_time(
    text: &str,
    zone: Option<&str>,
) -> Result<jiff::ZonedDateTime, ToolError> {
    let text = text.trim();
    if let Ok(instant) = jiff::Timestamp::from_str(text) {
        let tz = match zone {
            Some(name) => jiff::tz::TimeZone::get(name).unwrap_or(jiff::tz::TimeZone::UTC),
            None => jiff::tz::TimeZone::UTC,
        };
        return Ok(instant.to_zoned_datetime(tz));
    }
    let civil = jiff::civil::DateTime::from_str(text).map_err(|_| {
        ToolError::Tool(format!(
            "{text:?} is not an ISO 8601 time; pass one such as 2026-12-01T09:00 (read in the person's Mattermost time zone) or 2026-12-01T09:00+01:00"
        ))
    })?;
    let tz = match zone {
        Some(name) => jiff::tz::TimeZone::get(name).map_err(|_| {
            ToolError::Tool(format!(
                "the person's Mattermost time zone {name:?} is not one porter knows; pass the time with an offset, such as {text}+01:00"
            ))
        })?,
        None => jiff::tz::TimeZone::UTC,
    };
    civil.to_zoned_datetime(tz).map_err(|e| {
        ToolError::Tool(format!(
            "{text:?} does not exist in {}: {e}; pass another time",
            zone.unwrap_or("UTC")
        ))
    })
}

impl MattermostServer {
    pub(crate) async fn save_post_impl(&self, args: SavePostArgs) -> Reply {
        let saved = args.saved.unwrap_or(true);
        let id = Self::post_id(&args.post_id)?;
        // Reading it first turns a wrong id into "no such post" rather than
        // a preference for nothing.
        let post = self.shared.client.post(&id).await?;
        let me = self.my_id().await?;
        let preference = Preference {
            user_id: me.clone(),
            category: FLAGGED_POST.to_owned(),
            name: post.id.clone(),
            value: "true".to_owned(),
        };
        let client = &self.shared.client;
        if saved {
            client.save_preferences(&me, &[preference]).await?;
        } else {
            client.delete_preferences(&me, &[preference]).await?;
        }
        let permalink = client.permalink(&post.id);
        let (state, text) = if saved {
            (
                "saved",
                format!("Saved post {permalink} to your saved posts."),
            )
        } else {
            (
                "not saved",
                format!("Removed post {permalink} from your saved posts."),
            )
        };
        done(
            text,
            &DoneOut {
                id: post.id,
                state: state.to_owned(),
            },
        )
    }

    pub(crate) async fn set_post_reminder_impl(&self, args: PostReminderArgs) -> Reply {
        let id = Self::post_id(&args.post_id)?;
        let zone_name = self.shared.client.my_timezone().await?;
        let when = reminder_time(&args.at, zone_name.as_deref())?;
        let now = jiff::Timestamp::now();
        if when.timestamp() <= now {
            return Err(ToolError::Tool(format!(
                "{} is not in the future (it is now {}); pass a later time",
                when.strftime("%Y-%m-%dT%H:%M%:z (%Z)"),
                now.strftime("%Y-%m-%dT%H:%MZ")
            )));
        }
        let target = when.timestamp().as_second();
        match self.shared.client.set_post_reminder(&id, target).await {
            Ok(()) => {}
            // A 404 from the reminder route is a missing post only when the
            // post is gone; for a post that is there, the server has no
            // reminders (a release before them, or a proxy that hides the
            // route).
            Err(missing @ Error::NotFound { .. }) => {
                return Err(match self.shared.client.post(&id).await {
                    Ok(_) => ToolError::Tool(format!(
                        "this Mattermost does not seem to support post reminders: it answered 404 for the reminder while post {id} exists (a release from before reminders, or a proxy that blocks the route). No reminder was set; ask the Mattermost admin, or keep the time another way"
                    )),
                    Err(_) => missing.into(),
                });
            }
            Err(other) => return Err(other.into()),
        }
        let time_zone = zone_name.unwrap_or_else(|| "UTC".to_owned());
        let out = ReminderOut {
            post_id: id.clone(),
            at_utc: when.timestamp().strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
            at_local: when.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string(),
            time_zone,
            target_time: target,
        };
        done(
            format!(
                "Mattermost will remind you of post {} at {} ({}, {} UTC).",
                self.shared.client.permalink(&id),
                out.at_local,
                out.time_zone,
                out.at_utc
            ),
            &out,
        )
    }
}

/// `MAX_GROUP_OTHERS` / `MIN_GROUP_OTHERS`: a group message has 3 to 8
/// members, the account included.
pub(crate) const MIN_GROUP_OTHERS: usize = 2;
pub(crate) const MAX_GROUP_OTHERS: usize = 7;

/// A file to attach: `{path}` on the person's machine (stdio only), or
/// `{name, content}` text written for the post.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileArg {
    /// A file on the person's machine: an absolute path or one starting with `~/` (only when porter runs locally over stdio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The name of a file you write for this post (with `content`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The text of a file you write for this post (with `name`; at most 1 MiB; never base64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

/// What a write call posts: the message and its files, flattened into
/// the arguments of each tool that posts.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Posting {
    /// The message (Markdown).
    pub message: String,
    /// Files to attach (at most 10).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileArg>,
}

/// A post in a channel.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct CreatePostArgs {
    // The channel, by id or name (and team).
    #[serde(flatten)]
    pub channel: ChannelRef,
    /// The post to reply to (id or permalink), to post in its thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_id: Option<String>,
    // The message and its files.
    #[serde(flatten)]
    pub posting: Posting,
}

/// A direct message.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct DmArgs {
    /// Who to write to (with or without `@`); leave out to write to yourself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    // The message and its files.
    #[serde(flatten)]
    pub posting: Posting,
}

/// A group message.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct GroupMessageArgs {
    /// Who to write to besides yourself: 2 to 7 usernames (with or without `@`).
    pub usernames: Vec<String>,
    // The message and its files.
    #[serde(flatten)]
    pub posting: Posting,
}

method_tools! {
    /// `create_post`: Post in a channel.
    CreatePost = write(tool, args, call, |args| (args.posting.clone(), Target::Channel(args))) {
        name: "create_post", title: "Post in a channel", hints: Hints::write(false, false), args: CreatePostArgs, out: PostedOut,
        description: "Posts a message in a channel (or replies in a thread with root_id), with files: {path} from the person's machine (local server only) or {name, content} text you write.",
    }
    /// `dm`: Send a direct message.
    Dm = write(tool, args, call, |args| (args.posting, Target::Direct(args.username))) {
        name: "dm", title: "Send a direct message", hints: Hints::write(false, false), args: DmArgs, out: PostedOut,
        description: "Sends a direct message to one person (or, without username, to yourself), with files: {path} from the person's machine (local server only) or {name, content} text you write.",
    }
    /// `group_message`: Send a group message.
    GroupMessage = write(tool, args, call, |args| (args.posting, Target::Group(args.usernames))) {
        name: "group_message", title: "Send a group message", hints: Hints::write(false, false), args: GroupMessageArgs, out: PostedOut,
        description: "Sends a message to a group of 2 to 7 other people, with files: {path} from the person's machine (local server only) or {name, content} text you write.",
    }
}

/// Where a write goes, as the call named it.
pub(crate) enum Target {
    Channel(CreatePostArgs),
    Direct(Option<String>),
    Group(Vec<String>),
}

impl Target {
    /// The destination as given, bound into the files' fingerprint before
    /// anything is looked up.
    fn as_given(&self) -> String {
        match self {
            Target::Channel(args) => format!(
                "channel:{}|team:{}|root:{}",
                args.channel.channel_id.trim(),
                args.channel.team_id.as_deref().unwrap_or_default().trim(),
                args.root_id.as_deref().unwrap_or_default().trim()
            ),
            Target::Direct(name) => format!("dm:{}", name.as_deref().unwrap_or_default().trim()),
            Target::Group(names) => format!("group:{}", names.join(",")),
        }
    }
}

/// Where a write goes, looked up: an existing channel, or the people of a
/// direct or group channel that is created only once the person agreed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Place {
    Channel {
        channel_id: String,
        root_id: String,
        label: String,
    },
    People {
        me: String,
        others: Vec<String>,
        label: String,
    },
}

impl Place {
    fn label(&self) -> &str {
        match self {
            Place::Channel { label, .. } | Place::People { label, .. } => label,
        }
    }
}

/// What a write posts, looked up and checked: the files (read once), the
/// destination, the message's notes, and what the person's yes is bound
/// to (the files' fingerprint and the destination).
pub(crate) struct Written {
    requests: Vec<FileRequest>,
    prepared: Prepared,
    place: Place,
    notes: Vec<String>,
    fingerprint: String,
}

impl Looked for Written {
    fn fingerprint(&self) -> &str {
        &self.fingerprint
    }
}

impl MattermostServer {
    /// A post to write, the whole of its call: what `aim` makes of `args`
    /// (the post and where it goes) checked, asked about (bound to `args`;
    /// see [`MattermostServer::ask_first`]), then every file read again,
    /// compared, uploaded as read, and posted.
    pub(crate) async fn write<A: Serialize>(
        &self,
        tool: &'static str,
        args: A,
        call: Call,
        aim: impl FnOnce(A) -> (Posting, Target),
    ) -> Result<CallToolResponse, ToolError> {
        let asking = self.asking(tool, &args, call, NOTHING_POSTED)?;
        let (posting, target) = aim(args);
        let local = self.shared.options.transport == Transport::Stdio;
        let given = target.as_given();
        // The files are read again just before posting (in `reread`).
        let asking = asking.looking_once();
        // Who asks, for the question (only when there is one to put).
        let who = if asking.will_ask() {
            self.me().await.map(|u| u.username).unwrap_or_default()
        } else {
            String::new()
        };
        let gate = self
            .ask_first(
                &asking,
                || self.written(&posting, &target, local, &given),
                |written: &Written| {
                    let title = action_title(tool, &written.place);
                    let mut who_where = format!("@{who} {}", written.place.label());
                    for note in &written.notes {
                        who_where.push('\n');
                        who_where.push_str(note);
                    }
                    let text = outgoing::question(&title, &who_where, &written.prepared, &posting.message);
                    // One required box without a default, so a client that
                    // approves everything cannot tick it unseen.
                    Question {
                        title,
                        text,
                        label: "Yes, post this",
                        about: "Tick to post exactly what is shown above; leave unticked or decline to post nothing.",
                    }
                },
                |_| {
                    ToolError::Tool(format!(
                        "what {tool} would post is not what the person was asked about (a file or the destination changed); nothing was posted. Call {tool} again to ask about it as it is now."
                    ))
                },
            )
            .await?;
        // Act: read every file again, compare, upload exactly those bytes,
        // open the channel only now, post.
        gate.then(|written| async move {
            let Written {
                requests,
                prepared,
                place,
                ..
            } = written;
            let bytes = self.reread(prepared, requests, local, given).await?;
            self.act(tool, &place, &posting.message, bytes).await
        })
        .await
    }

    /// Every rule about the message and the files, before any request;
    /// then the files read and the destination looked up.
    pub(crate) async fn written(
        &self,
        call: &Posting,
        target: &Target,
        local: bool,
        given: &str,
    ) -> Result<Written, ToolError> {
        if call.message.trim().is_empty() && call.files.is_empty() {
            return Err(ToolError::Tool(
                "the message is empty and there are no files; pass the text to post. Nothing was posted.".to_owned(),
            ));
        }
        let requests = file_requests(&call.files)?;
        let prepared = self.prepare(&requests, local, given).await?;
        let place = self.place(target).await?;
        self.check_length(&call.message).await?;
        let checked = self.check_mentions(&call.message, &place).await?;
        let fingerprint = format!(
            "{}\0{}",
            prepared.fingerprint,
            serde_json::to_string(&place).unwrap_or_default()
        );
        Ok(Written {
            requests,
            prepared,
            place,
            notes: checked.notes,
            fingerprint,
        })
    }

    pub(crate) async fn prepare(
        &self,
        requests: &[FileRequest],
        local: bool,
        destination: &str,
    ) -> Result<Prepared, ToolError> {
        let (requests, destination) = (requests.to_vec(), destination.to_owned());
        self.read_files(
            "checking the files",
            requests,
            local,
            destination,
            outgoing::prepare,
        )
        .await
    }

    pub(crate) async fn reread(
        &self,
        prepared: Prepared,
        requests: Vec<FileRequest>,
        local: bool,
        destination: String,
    ) -> Result<Vec<(PreparedFile, Vec<u8>)>, ToolError> {
        let doing = "reading the files again";
        self.read_files(doing, requests, local, destination, move |post| {
            outgoing::reread(&prepared, post)
        })
        .await
    }

    /// Runs `read` (one of `outgoing`'s passes over a post's files: its
    /// requests, whether the server is local, and its destination, with
    /// the home directory, the server's own token and the default limits)
    /// off the async threads, since it reads files; `doing` names it if the
    /// task stops.
    async fn read_files<T: Send + 'static>(
        &self,
        doing: &str,
        requests: Vec<FileRequest>,
        local: bool,
        destination: String,
        read: impl FnOnce(&outgoing::Outgoing<'_>) -> Result<T, Refusal> + Send + 'static,
    ) -> Result<T, ToolError> {
        let home = self.shared.options.home.clone();
        let token = self.own_token().await;
        tokio::task::spawn_blocking(move || {
            read(&outgoing::Outgoing {
                requests: &requests,
                local,
                home: &home,
                token: &token,
                destination: &destination,
                limits: OutgoingLimits::default(),
            })
        })
        .await
        .map_err(|e| ToolError::Tool(format!("{doing} stopped unexpectedly: {e}")))?
        .map_err(|refusal| ToolError::Tool(refusal.to_string()))
    }

    /// Looks the destination up without changing anything.
    pub(crate) async fn place(&self, target: &Target) -> Result<Place, ToolError> {
        match target {
            Target::Channel(args) => {
                let (channel, team) = self.channel_at(&args.channel).await?;
                let mut root_id = String::new();
                if let Some(root) = args.root_id.as_deref().filter(|r| !r.trim().is_empty()) {
                    let id = Self::post_id(root)?;
                    let post = self.shared.client.post(&id).await?;
                    if post.channel_id != channel.id {
                        return Err(ToolError::Tool(format!(
                            "post {id} is in another channel than {}; pass that post's channel as channel_id, or leave root_id out. Nothing was posted.",
                            args.channel.channel_id
                        )));
                    }
                    post.thread_root().clone_into(&mut root_id);
                }
                let mut label = format!("posts in {}", channel_label(&channel));
                if let Some(team) = team {
                    let _ = write!(label, " (team {})", team.name);
                }
                if !root_id.is_empty() {
                    let _ = write!(label, ", replying in the thread of post {root_id}");
                }
                Ok(Place::Channel {
                    channel_id: channel.id,
                    root_id,
                    label,
                })
            }
            Target::Direct(name) => {
                let me = self.me().await?;
                let other = match name.as_deref().map(username) {
                    None | Some("") => me.clone(),
                    Some(name) => self.active_user(name).await?,
                };
                let label = if other.id == me.id {
                    "writes a direct message to themself".to_owned()
                } else {
                    format!("writes a direct message to @{}", other.username)
                };
                Ok(Place::People {
                    me: me.id,
                    others: vec![other.id],
                    label,
                })
            }
            Target::Group(names) => {
                let me = self.me().await?;
                let mut others: Vec<User> = Vec::new();
                for name in names {
                    let name = username(name);
                    if name.is_empty() || name.eq_ignore_ascii_case(&me.username) {
                        continue;
                    }
                    if others.iter().any(|u| u.username.eq_ignore_ascii_case(name)) {
                        continue;
                    }
                    others.push(self.active_user(name).await?);
                }
                if !(MIN_GROUP_OTHERS..=MAX_GROUP_OTHERS).contains(&others.len()) {
                    return Err(ToolError::Tool(format!(
                        "a group message goes to {MIN_GROUP_OTHERS} to {MAX_GROUP_OTHERS} other people, and {} were named; use dm for one person. Nothing was posted.",
                        others.len()
                    )));
                }
                let names: Vec<String> =
                    others.iter().map(|u| format!("@{}", u.username)).collect();
                Ok(Place::People {
                    me: me.id,
                    others: others.into_iter().map(|u| u.id).collect(),
                    label: format!("writes a group message to {}", names.join(", ")),
                })
            }
        }
    }

    /// An active account by username; a deactivated or unknown one is
    /// refused with what to do.
    pub(crate) async fn active_user(&self, name: &str) -> Result<User, ToolError> {
        match self.shared.client.user_by_username(name).await {
            Ok(user) if user.is_active() => Ok(user),
            Ok(user) => Err(ToolError::Tool(format!(
                "@{} is deactivated and cannot be messaged. Nothing was posted.",
                user.username
            ))),
            Err(Error::NotFound { .. }) => Err(ToolError::Tool(format!(
                "there is no account named @{name}; search_users finds accounts by part of a name. Nothing was posted."
            ))),
            Err(other) => Err(other.into()),
        }
    }

    /// The message checks (every mention an account, broadcasts counted)
    /// for where the message goes.
    pub(crate) async fn check_mentions(
        &self,
        message: &str,
        place: &Place,
    ) -> Result<checks::MessageCheck, ToolError> {
        let reach = match place {
            Place::Channel { channel_id, .. } => checks::Reach::Channel(channel_id.clone()),
            Place::People { others, .. } => checks::Reach::People(others.len()),
        };
        checks::check_message(&self.shared.client, message, &reach, "Nothing was posted.")
            .await
            .map_err(ToolError::Tool)
    }

    /// Refuses a message longer than the server takes, with both numbers.
    pub(super) async fn check_length(&self, message: &str) -> Result<(), ToolError> {
        let length = message.chars().count() as u64;
        if let Ok(config) = self.shared.client.client_config().await
            && let Some(max) = config.max_post_size
            && length > max
        {
            return Err(ToolError::Tool(format!(
                "the message is {length} characters and this Mattermost takes at most {max}; shorten it or split it. Nothing was posted."
            )));
        }
        Ok(())
    }

    /// Creates the channel if needed, uploads every file one at a time,
    /// and posts.
    pub(crate) async fn act(
        &self,
        tool: &str,
        place: &Place,
        message: &str,
        files: Vec<(PreparedFile, Vec<u8>)>,
    ) -> Reply {
        let client = &self.shared.client;
        let (channel, root_id) = match place {
            Place::Channel {
                channel_id,
                root_id,
                ..
            } => (client.channel(channel_id).await?, root_id.clone()),
            Place::People { me, others, .. } => {
                let channel = if others.len() == 1 {
                    client.direct_channel(me, &others[0]).await?
                } else {
                    let mut ids = vec![me.clone()];
                    ids.extend(others.iter().cloned());
                    client.group_channel(&ids).await?
                };
                (channel, String::new())
            }
        };
        let mut file_ids = Vec::with_capacity(files.len());
        for (file, bytes) in files {
            let upload = UploadFile::new(file.name.clone(), file.mime_type.clone(), bytes);
            let infos = client
                .upload_files(&channel.id, std::slice::from_ref(&upload))
                .await
                .map_err(|e| {
                    ToolError::Tool(format!(
                        "{e}. {} file(s) were uploaded but not posted; nothing was posted.",
                        file_ids.len()
                    ))
                })?;
            file_ids.extend(infos.into_iter().map(|i| i.id));
        }
        let mut post = NewPost::new(channel.id.clone(), message);
        post.root_id = root_id;
        post.file_ids = file_ids;
        if self.shared.options.mark_ai_generated {
            let me = self.me().await.map(|u| u.id).unwrap_or_default();
            post.props
                .insert("ai_generated_by".to_owned(), Value::String(me));
        }
        let created = client.create_post(&post).await?;
        let post = self.post_out(created).await;
        let channel = ChannelOut::from(&self.named_channel(channel).await);
        let text = format!(
            "Posted with {tool}: {}\n{}",
            post.permalink,
            post_text(&post)
        );
        done(text, &PostedOut { post, channel })
    }
}

/// The files as `outgoing` takes them; a file that is neither `{path}`
/// nor `{name, content}` is refused before anything is read.
pub(crate) fn file_requests(files: &[FileArg]) -> Result<Vec<FileRequest>, ToolError> {
    files
        .iter()
        .enumerate()
        .map(|(i, f)| match (&f.path, &f.name, &f.content) {
            (Some(path), None, None) => Ok(FileRequest::Path { path: path.clone() }),
            (None, Some(name), Some(content)) => Ok(FileRequest::Written {
                name: name.clone(),
                content: content.clone(),
            }),
            _ => Err(ToolError::Tool(format!(
                "file {} must be either {{\"path\": …}} or {{\"name\": …, \"content\": …}}; nothing was posted, and the person was not asked.",
                i + 1
            ))),
        })
        .collect()
}

/// The question's title: the action and the place.
pub(crate) fn action_title(tool: &str, place: &Place) -> String {
    let label = place.label();
    if tool == "create_post" {
        format!("Post in {}", label.trim_start_matches("posts in "))
    } else {
        let mut title = label.trim_start_matches("writes ").to_owned();
        if let Some(first) = title.get(0..1) {
            title.replace_range(0..1, &first.to_uppercase());
        }
        format!(
            "Send {}",
            title.trim_start_matches("A ").trim_start_matches("a ")
        )
        .replace("Send direct", "Send a direct")
        .replace("Send group", "Send a group")
    }
}

/// The question of `pin_post`: what pinning (or unpinning) shows everyone.
fn pin_question(args: &PinArgs, look: &mut Look, naming: &Naming<'_>) {
    let Naming {
        id,
        me,
        author,
        place,
        link,
    } = *naming;
    let post = &look.post;
    if post.is_pinned != args.unpin {
        let state = if args.unpin {
            "is not pinned"
        } else {
            "is already pinned"
        };
        look.nothing_to_do = Some(format!("post {id} {state}; there is nothing to change."));
    }
    let verb = if args.unpin { "unpin" } else { "pin" };
    look.fingerprint = fingerprint(&[verb, &post.id, &post.message]);
    let title = if args.unpin {
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
    look.ask(me, title, &format!("{doing} ({link}):"));
}

/// What every post change's question names: the post's id, who asks, the
/// post's author, its place and its link.
#[derive(Clone, Copy)]
pub(crate) struct Naming<'a> {
    id: &'a str,
    me: &'a User,
    author: &'a str,
    place: &'a str,
    link: &'a str,
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
    fn no_text_can_shift_a_fingerprint_into_the_next_part() {
        // A message may hold any character, NUL too: the reaction asked
        // about must not share a fingerprint with another message and emoji.
        assert_ne!(
            fingerprint(&["react", "p1", "yes\0no", "thumbsup"]),
            fingerprint(&["react", "p1", "yes", "no\0thumbsup"])
        );
    }

    #[test]
    fn quotes_mark_every_line_and_show_empty_text() {
        assert_eq!(quote("a\nb"), "> a\n> b");
        assert_eq!(quote(""), "> (no text)");
    }

    #[test]
    fn a_time_without_an_offset_is_read_in_the_persons_zone() {
        let cases = [
            (
                "2026-12-01T09:00",
                Some("Europe/Berlin"),
                "2026-12-01T08:00:00Z",
            ),
            (
                "2026-07-01T09:00",
                Some("Europe/Berlin"),
                "2026-07-01T07:00:00Z",
            ),
            ("2026-12-01T09:00", None, "2026-12-01T09:00:00Z"),
            (
                "2026-12-01T09:00+02:00",
                Some("Asia/Tokyo"),
                "2026-12-01T07:00:00Z",
            ),
            (
                "2026-12-01T09:00:00Z",
                Some("Europe/Berlin"),
                "2026-12-01T09:00:00Z",
            ),
        ];
        for (text, zone, utc) in cases {
            let when = reminder_time(text, zone).unwrap_or_else(|_| panic!("{text} parses"));
            assert_eq!(
                when.timestamp().strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
                utc,
                "{text} in {zone:?}"
            );
        }
    }

    #[test]
    fn a_time_that_is_not_iso_8601_or_a_zone_porter_lacks_is_refused_with_the_fix() {
        for (text, zone, words) in [
            ("tomorrow at nine", None, "not an ISO 8601 time"),
            ("2026-12-01T09:00", Some("Mars/Olympus"), "offset"),
        ] {
            match reminder_time(text, zone) {
                Err(ToolError::Tool(message)) => assert!(message.contains(words), "{message}"),
                other => panic!("{text}: expected a refusal, got {other:?}"),
            }
        }
    }

    #[test]
    fn titles_name_the_action_and_the_place() {
        let channel = Place::Channel {
            channel_id: "c".into(),
            root_id: String::new(),
            label: "posts in ~town-square (team porter)".into(),
        };
        assert_eq!(
            action_title("create_post", &channel),
            "Post in ~town-square (team porter)"
        );
        let dm = Place::People {
            me: "m".into(),
            others: vec!["b".into()],
            label: "writes a direct message to @bob".into(),
        };
        assert_eq!(action_title("dm", &dm), "Send a direct message to @bob");
        let group = Place::People {
            me: "m".into(),
            others: vec!["b".into(), "c".into()],
            label: "writes a group message to @bob, @carol".into(),
        };
        assert_eq!(
            action_title("group_message", &group),
            "Send a group message to @bob, @carol"
        );
    }

    #[test]
    fn a_file_is_a_path_or_a_name_with_content() {
        let ok = [
            FileArg {
                path: Some("~/a.txt".into()),
                ..FileArg::default()
            },
            FileArg {
                name: Some("n.md".into()),
                content: Some("x".into()),
                ..FileArg::default()
            },
        ];
        assert_eq!(file_requests(&ok).unwrap().len(), 2);
        for bad in [
            FileArg::default(),
            FileArg {
                path: Some("/a".into()),
                name: Some("n".into()),
                ..FileArg::default()
            },
            FileArg {
                name: Some("n".into()),
                ..FileArg::default()
            },
        ] {
            assert!(file_requests(&[bad]).is_err());
        }
    }
}
