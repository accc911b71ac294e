//! The tools for a person's own state: `typing`, `follow_thread`,
//! `save_post`, `set_post_reminder`, `save_draft` (U: they change only the
//! person's own state, so they never ask), `list_drafts` (R),
//! `delete_draft` (A: it asks, bound to the draft's text, and re-checks the
//! draft just before deleting), and `diagnose` (R).

use std::fmt::Write as _;
use std::str::FromStr as _;

use rmcp::RoleServer;
use rmcp::model::{CallToolResponse, CallToolResult, ElicitationAction, ProtocolVersion};
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cursor::canonical_json;
use crate::doctor::{Level, Report, check_download_dir, server_checks};
use crate::paging::Paging;
use crate::render::iso_utc;
use crate::write::{Answer, answer_of, ask_binding, can_elicit, form_with, input_digest, now_ms};
use porter_mcp::tool::{Call, Hints, Outcome, Tool, ToolError, done};

use crate::{MattermostServer, Transport, missing_elicitation};
use porter_mattermost::{Channel, ChannelType, Draft, Error, FLAGGED_POST, Preference, Team};

/// Default and largest page sizes of `list_drafts`.
const DRAFTS_PAGE: usize = 20;
const DRAFTS_MAX: usize = 100;

// ----- parameters -----

/// Where the person is typing.
// The names are those of the other tools' parameters.
#[allow(clippy::struct_field_names)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct TypingArgs {
    /// The channel: its id or name (`~town-square`, `town-square` or `Town Square`).
    pub channel_id: String,
    /// The team, by id or name, when the channel name is in several teams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
    /// The thread (a post id or permalink) when typing a reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_id: Option<String>,
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

/// A draft to save.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct SaveDraftArgs {
    /// The channel: its id or name (`~town-square`, `town-square` or `Town Square`).
    pub channel_id: String,
    /// The team, by id or name, when the channel name is in several teams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
    /// The thread (a post id or permalink) for a reply draft.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_id: Option<String>,
    /// The draft's text (Markdown).
    pub message: String,
}

/// The place of a draft.
// The names are those of the other tools' parameters.
#[allow(clippy::struct_field_names)]
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct DraftPlaceArgs {
    /// The channel: its id or name (`~town-square`, `town-square` or `Town Square`).
    pub channel_id: String,
    /// The team, by id or name, when the channel name is in several teams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
    /// The thread (a post id or permalink) for a reply draft.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_id: Option<String>,
}

/// A page of drafts.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct ListDraftsArgs {
    /// The team, by id or name; all your teams when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
    /// Most drafts in this page (default 20, at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// The next_cursor of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// What to check.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct DiagnoseArgs {
    /// Also ask the person a harmless test question, to see that questions reach them (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask_test_question: Option<bool>,
}

// ----- output -----

/// `DoneOut` is what a small change answers.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DoneOut {
    /// The post or channel acted on.
    pub id: String,
    /// What is now true, in a few words (`typing`, `following`, `not following`, `saved`, `not saved`).
    pub state: String,
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

/// `DraftOut` is one draft.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DraftOut {
    /// The channel's id.
    pub channel_id: String,
    /// The channel, as shown (`~town-square`, or who a conversation is with).
    pub channel: String,
    /// The thread it replies in, or empty.
    pub root_id: String,
    /// The text.
    pub message: String,
    /// When it last changed (ms since the epoch).
    pub update_at: i64,
    /// When it last changed (ISO 8601, UTC).
    pub updated: String,
}

/// `SaveDraftOut` is a saved draft.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SaveDraftOut {
    /// The draft as stored.
    pub draft: DraftOut,
    /// `saved`, or `unchanged` when the same draft was there already.
    pub outcome: String,
}

/// `DraftsOut` is a page of drafts.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DraftsOut {
    /// The drafts, newest first.
    pub drafts: Vec<DraftOut>,
    /// Pass as `cursor` for the next page; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `DeletedDraftOut` is a deleted draft.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DeletedDraftOut {
    /// The draft as it was.
    pub deleted: DraftOut,
}

/// `CheckOut` is one line of `diagnose`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CheckOut {
    /// `ok`, `note`, `warn` or `fail`.
    pub level: String,
    /// What was checked and found.
    pub what: String,
    /// What to do, when something is wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// `DiagnoseOut` is the whole check.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DiagnoseOut {
    /// Whether nothing failed.
    pub ok: bool,
    /// Every check, in order.
    pub checks: Vec<CheckOut>,
}

// ----- the tools -----

/// `typing`: Show that you are typing.
pub(crate) struct Typing;

impl Tool<MattermostServer> for Typing {
    type Args = TypingArgs;
    type Out = DoneOut;
    const NAME: &'static str = "typing";
    const TITLE: &'static str = "Show that you are typing";
    const DESCRIPTION: &'static str = "Shows \"is typing…\" in a channel (or a thread) for a few seconds. It changes nothing lasting, so porter does not ask the person.";
    const HINTS: Hints = Hints::write(false, true);

    async fn call(&self, server: &MattermostServer, args: TypingArgs, _call: Call) -> Outcome {
        Ok(server.typing_impl(args).await?.into())
    }
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

/// `save_post`: Save a post.
pub(crate) struct SavePost;

impl Tool<MattermostServer> for SavePost {
    type Args = SavePostArgs;
    type Out = DoneOut;
    const NAME: &'static str = "save_post";
    const TITLE: &'static str = "Save a post";
    const DESCRIPTION: &'static str = "Saves a post to your saved posts (or removes it with saved=false). It changes only your own state, so porter does not ask the person.";
    const HINTS: Hints = Hints::write(false, true);

    async fn call(&self, server: &MattermostServer, args: SavePostArgs, _call: Call) -> Outcome {
        Ok(server.save_post_impl(args).await?.into())
    }
}

/// `set_post_reminder`: Remind me of a post.
pub(crate) struct SetPostReminder;

impl Tool<MattermostServer> for SetPostReminder {
    type Args = PostReminderArgs;
    type Out = ReminderOut;
    const NAME: &'static str = "set_post_reminder";
    const TITLE: &'static str = "Remind me of a post";
    const DESCRIPTION: &'static str = "Has Mattermost remind you of a post at a time (ISO 8601; without an offset the time is read in your Mattermost time zone). It changes only your own state, so porter does not ask the person.";
    const HINTS: Hints = Hints::write(false, true);

    async fn call(
        &self,
        server: &MattermostServer,
        args: PostReminderArgs,
        _call: Call,
    ) -> Outcome {
        Ok(server.set_post_reminder_impl(args).await?.into())
    }
}

/// `save_draft`: Save a draft.
pub(crate) struct SaveDraft;

impl Tool<MattermostServer> for SaveDraft {
    type Args = SaveDraftArgs;
    type Out = SaveDraftOut;
    const NAME: &'static str = "save_draft";
    const TITLE: &'static str = "Save a draft";
    const DESCRIPTION: &'static str = "Saves an unsent message as your draft in a channel (or thread), where you can finish and send it yourself. It never replaces a different draft: if one is there, it is shown and nothing changes. Only you see drafts, so porter does not ask the person.";
    const HINTS: Hints = Hints::write(false, true);

    async fn call(&self, server: &MattermostServer, args: SaveDraftArgs, _call: Call) -> Outcome {
        Ok(server.save_draft_impl(args).await?.into())
    }
}

/// `list_drafts`: My drafts.
pub(crate) struct ListDrafts;

impl Tool<MattermostServer> for ListDrafts {
    type Args = ListDraftsArgs;
    type Out = DraftsOut;
    const NAME: &'static str = "list_drafts";
    const TITLE: &'static str = "My drafts";
    const DESCRIPTION: &'static str = "Your unsent drafts, newest first, in one team or all (with your direct and group messages).";
    const HINTS: Hints = Hints::READ;

    async fn call(&self, server: &MattermostServer, args: ListDraftsArgs, _call: Call) -> Outcome {
        Ok(server.list_drafts_impl(args).await?.into())
    }
}

/// `delete_draft`: Delete a draft.
pub(crate) struct DeleteDraft;

impl Tool<MattermostServer> for DeleteDraft {
    type Args = DraftPlaceArgs;
    type Out = DeletedDraftOut;
    const NAME: &'static str = "delete_draft";
    const TITLE: &'static str = "Delete a draft";
    const DESCRIPTION: &'static str =
        "Deletes your draft in a channel (or thread); its text is gone for good.";
    const HINTS: Hints = Hints::write(true, true);

    async fn call(&self, server: &MattermostServer, args: DraftPlaceArgs, call: Call) -> Outcome {
        let Call {
            context,
            state,
            answers,
            ..
        } = call;

        server
            .delete_draft_impl(args, state, answers.as_ref(), &context)
            .await
    }
}

/// `diagnose`: Diagnose the connection.
pub(crate) struct Diagnose;

impl Tool<MattermostServer> for Diagnose {
    type Args = DiagnoseArgs;
    type Out = DiagnoseOut;
    const NAME: &'static str = "diagnose";
    const TITLE: &'static str = "Diagnose the connection";
    const DESCRIPTION: &'static str = "Checks the Mattermost address, the token, the server's version, and whether this MCP client can show porter's questions (optionally by asking a harmless test question), and says what to fix.";
    const HINTS: Hints = Hints::READ;

    async fn call(&self, server: &MattermostServer, args: DiagnoseArgs, call: Call) -> Outcome {
        Ok(server.diagnose_impl(args, &call.context).await?.into())
    }
}

// ----- how they work -----

/// What the sealed request state of `delete_draft` carries from the
/// question to the retry.
#[derive(Debug, Serialize, Deserialize)]
struct AskedDraft {
    digest: String,
    fingerprint: String,
    time_ms: u64,
}

/// A draft's fingerprint: where it is and its exact text, so a draft
/// edited after the question is not deleted.
fn draft_fingerprint(draft: &Draft) -> String {
    let bound = serde_json::json!({
        "channel_id": draft.channel_id,
        "root_id": draft.root_id,
        "message": draft.message,
    });
    porter_paths::sha256_hex(canonical_json(&bound).as_bytes())
}

/// A channel as named in messages.
fn channel_label(channel: &Channel) -> String {
    match channel.kind {
        ChannelType::Direct | ChannelType::Group => {
            format!("the conversation {}", channel.display_name)
        }
        _ => format!("~{}", channel.name),
    }
}

/// Quotes someone's own draft text for a message, cut to a readable length.
fn quoted(text: &str) -> String {
    const SHOWN_CHARS: usize = 500;
    let mut shown: String = text.chars().take(SHOWN_CHARS).collect();
    if text.chars().count() > SHOWN_CHARS {
        shown.push('…');
    }
    format!("«{shown}»")
}

/// `NOTHING_DELETED` is what `delete_draft` says did not happen when the
/// answer is not a yes.
const NOTHING_DELETED: &str = "nothing was deleted";

/// The `delete_draft` question's form, whose box names its own action.
fn delete_draft_form(
    title: &str,
    text: String,
) -> Result<rmcp::model::ElicitRequestParams, ToolError> {
    form_with(
        title,
        text,
        "Yes, delete this draft",
        "Tick to delete the draft shown above for good; leave unticked or decline to keep it.",
    )
}

impl MattermostServer {
    /// The account's id (asked once).
    async fn my_id(&self) -> Result<String, ToolError> {
        Ok(self.me().await?.id)
    }

    /// The root post id of a post's thread, and the post's channel.
    async fn thread_of(&self, wanted: &str) -> Result<(String, String), ToolError> {
        let id = Self::post_id(wanted)?;
        let post = self.shared.client.post(&id).await?;
        let root = if post.root_id.is_empty() {
            post.id
        } else {
            post.root_id
        };
        Ok((root, post.channel_id))
    }

    /// The team to use for a channel: its own, or (direct and group
    /// channels belong to none) the account's first team.
    async fn team_for(&self, channel: &Channel) -> Result<String, ToolError> {
        if !channel.team_id.is_empty() {
            return Ok(channel.team_id.clone());
        }
        self.my_teams()
            .await?
            .first()
            .map(|t| t.id.clone())
            .ok_or_else(|| {
                ToolError::Tool(
                    "you belong to no team, and Mattermost files this under a team".to_owned(),
                )
            })
    }

    /// The channel and thread a draft place names.
    async fn draft_place(
        &self,
        channel_id: &str,
        team_id: Option<&str>,
        root_id: Option<&str>,
    ) -> Result<(Channel, String), ToolError> {
        let (channel, _) = self.resolve_channel(channel_id, team_id).await?;
        let mut root = String::new();
        if let Some(wanted) = root_id.filter(|r| !r.trim().is_empty()) {
            let (thread, in_channel) = self.thread_of(wanted).await?;
            if in_channel != channel.id {
                return Err(ToolError::Tool(format!(
                    "post {thread} is in another channel than {channel_id}; pass that post's channel as channel_id, or leave root_id out"
                )));
            }
            root = thread;
        }
        Ok((channel, root))
    }

    /// The account's draft in a channel and thread, if there is one.
    async fn find_draft(
        &self,
        channel: &Channel,
        root_id: &str,
    ) -> Result<Option<Draft>, ToolError> {
        let team = self.team_for(channel).await?;
        let drafts = self.shared.client.drafts(&team).await?;
        Ok(drafts
            .into_iter()
            .find(|d| d.channel_id == channel.id && d.root_id == root_id))
    }

    /// A draft as the tools show it.
    fn draft_out(draft: &Draft, channel: &str) -> DraftOut {
        DraftOut {
            channel_id: draft.channel_id.clone(),
            channel: channel.to_owned(),
            root_id: draft.root_id.clone(),
            message: draft.message.clone(),
            update_at: draft.update_at,
            updated: iso_utc(draft.update_at),
        }
    }

    async fn typing_impl(&self, args: TypingArgs) -> Result<CallToolResult, ToolError> {
        let (channel, root) = self
            .draft_place(
                &args.channel_id,
                args.team_id.as_deref(),
                args.root_id.as_deref(),
            )
            .await?;
        self.shared.client.typing(&channel.id, &root).await?;
        let place = if root.is_empty() {
            channel_label(&channel)
        } else {
            format!("the thread of post {root} in {}", channel_label(&channel))
        };
        done(
            format!("Shown as typing in {place} for a few seconds."),
            &DoneOut {
                id: channel.id,
                state: "typing".to_owned(),
            },
        )
    }

    async fn follow_thread_impl(
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

    async fn save_post_impl(&self, args: SavePostArgs) -> Result<CallToolResult, ToolError> {
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

    async fn set_post_reminder_impl(
        &self,
        args: PostReminderArgs,
    ) -> Result<CallToolResult, ToolError> {
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

    async fn save_draft_impl(&self, args: SaveDraftArgs) -> Result<CallToolResult, ToolError> {
        if args.message.trim().is_empty() {
            return Err(ToolError::Tool(
                "the message is empty; pass the draft's text".to_owned(),
            ));
        }
        let (channel, root) = self
            .draft_place(
                &args.channel_id,
                args.team_id.as_deref(),
                args.root_id.as_deref(),
            )
            .await?;
        let label = channel_label(&channel);
        if let Some(existing) = self.find_draft(&channel, &root).await? {
            if existing.message == args.message {
                let draft = Self::draft_out(&existing, &label);
                return done(
                    format!("That draft is already saved in {label}; nothing changed."),
                    &SaveDraftOut {
                        draft,
                        outcome: "unchanged".to_owned(),
                    },
                );
            }
            return Err(ToolError::Tool(format!(
                "there is already a different draft in {label}{}, last changed {}: {}\n\
                 porter never replaces a draft, so nothing changed. Tell the person; if they want it gone, delete_draft deletes it (asking them first), then save again.",
                if root.is_empty() {
                    String::new()
                } else {
                    format!(" (thread {root})")
                },
                iso_utc(existing.update_at),
                quoted(&existing.message)
            )));
        }
        let me = self.my_id().await?;
        let draft = Draft {
            user_id: me,
            channel_id: channel.id.clone(),
            root_id: root,
            message: args.message,
            props: Value::Object(serde_json::Map::new()),
            ..Draft::default()
        };
        let stored = self.shared.client.save_draft(&draft).await?;
        let out = Self::draft_out(&stored, &label);
        done(
            format!(
                "Saved as your draft in {label}; the person can finish and send it in Mattermost."
            ),
            &SaveDraftOut {
                draft: out,
                outcome: "saved".to_owned(),
            },
        )
    }

    async fn list_drafts_impl(&self, args: ListDraftsArgs) -> Result<CallToolResult, ToolError> {
        let paging: Paging<usize> = self.paging(
            "list_drafts",
            &args,
            args.limit,
            args.cursor.as_deref(),
            DRAFTS_PAGE,
            DRAFTS_MAX,
        )?;
        let teams: Vec<Team> = match args.team_id.as_deref().filter(|t| !t.trim().is_empty()) {
            Some(team) => vec![self.resolve_team(team).await?],
            None => self.my_teams().await?,
        };
        let mut all: Vec<Draft> = Vec::new();
        for team in &teams {
            for draft in self.shared.client.drafts(&team.id).await? {
                // Direct and group drafts come back with every team.
                if !all
                    .iter()
                    .any(|d| d.channel_id == draft.channel_id && d.root_id == draft.root_id)
                {
                    all.push(draft);
                }
            }
        }
        all.sort_by_key(|d| std::cmp::Reverse(d.update_at));
        let (page, next) = self.slice("list_drafts", &paging, &all);
        let mut drafts = Vec::with_capacity(page.len());
        let mut text = if all.is_empty() {
            "You have no drafts.\n".to_owned()
        } else {
            String::new()
        };
        for draft in &page {
            let label = match self.shared.client.channel(&draft.channel_id).await {
                Ok(channel) => channel_label(&self.named_channel(channel).await),
                Err(_) => draft.channel_id.clone(),
            };
            let out = Self::draft_out(draft, &label);
            let thread = if out.root_id.is_empty() {
                String::new()
            } else {
                format!(" (thread {})", out.root_id)
            };
            let _ = writeln!(
                text,
                "- {}{thread}, {}: {}",
                out.channel,
                out.updated,
                quoted(&out.message)
            );
            drafts.push(out);
        }
        if next.is_some() {
            text.push_str(
                "More drafts follow: pass next_cursor as cursor (with the same other arguments).\n",
            );
        }
        done(
            text,
            &DraftsOut {
                drafts,
                next_cursor: next,
            },
        )
    }

    async fn delete_draft_impl(
        &self,
        args: DraftPlaceArgs,
        state: Option<String>,
        answers: Option<&rmcp::model::InputResponses>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ToolError> {
        const TOOL: &str = "delete_draft";
        let ask = self.shared.options.ask_before_writes;
        if ask && !can_elicit(context) {
            return Err(ToolError::Rpc(missing_elicitation(TOOL)));
        }
        let modern = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let input = serde_json::to_value(&args).unwrap_or(Value::Null);
        let digest = input_digest(TOOL, &input);
        // On a retry with the person's answer, the answer comes first: a
        // "no" reads nothing.
        let mut asked: Option<AskedDraft> = None;
        if ask && modern && state.is_some() {
            let bound = ask_binding(TOOL, &digest);
            let opened = self
                .shared
                .asks
                .open_json_with::<AskedDraft>(state.as_deref().unwrap_or_default(), &bound)
                .map_err(|_| {
                    ToolError::Tool(
                        "this answer belongs to another question (the call's arguments differ from those asked about, or the server restarted); nothing was deleted. Call delete_draft again to ask the person afresh.".to_owned(),
                    )
                })?;
            match answer_of(answers, TOOL, NOTHING_DELETED, opened.time_ms, self)? {
                Answer::Yes => asked = Some(opened),
                Answer::No(sentence) => return Err(ToolError::Tool(sentence)),
            }
        }
        let (channel, root) = self
            .draft_place(
                &args.channel_id,
                args.team_id.as_deref(),
                args.root_id.as_deref(),
            )
            .await?;
        let label = channel_label(&channel);
        let place = if root.is_empty() {
            label.clone()
        } else {
            format!("{label}, thread {root}")
        };
        let draft = self.find_draft(&channel, &root).await?.ok_or_else(|| {
            ToolError::Tool(format!(
                "you have no draft in {place}; list_drafts shows your drafts. Nothing was deleted."
            ))
        })?;
        let fingerprint = draft_fingerprint(&draft);
        let changed = || {
            ToolError::Tool(format!(
                "the draft in {place} changed after the person was asked about it; nothing was deleted. Call delete_draft again to ask about it as it is now."
            ))
        };
        if let Some(asked) = &asked
            && (asked.digest != digest || asked.fingerprint != fingerprint)
        {
            return Err(changed());
        }
        if ask && asked.is_none() {
            let title = format!("Delete your draft in {place}");
            let text = format!(
                "{title}?\nThe draft (last changed {}) is deleted for good:\n\n{}",
                iso_utc(draft.update_at),
                draft.message
            );
            if modern {
                let sealed = AskedDraft {
                    digest: digest.clone(),
                    fingerprint: fingerprint.clone(),
                    time_ms: now_ms(),
                };
                let question = delete_draft_form(&title, text)?;
                return self.input_required_with(TOOL, &digest, &sealed, question);
            }
            let question = delete_draft_form(&title, text)?;
            match self
                .ask_now_with(TOOL, question, NOTHING_DELETED, context)
                .await
            {
                Answer::Yes => {}
                Answer::No(sentence) => return Err(ToolError::Tool(sentence)),
            }
            // The question took time: read the draft again just before
            // deleting it.
            let now = self.find_draft(&channel, &root).await?;
            if now.as_ref().map(draft_fingerprint) != Some(fingerprint) {
                return Err(changed());
            }
        }
        self.shared
            .client
            .delete_draft(&channel.id, &draft.root_id)
            .await?;
        let out = Self::draft_out(&draft, &label);
        let result = done(
            format!("Deleted your draft in {place}: {}", quoted(&draft.message)),
            &DeletedDraftOut { deleted: out },
        )?;
        Ok(CallToolResponse::from(result))
    }

    async fn diagnose_impl(
        &self,
        args: DiagnoseArgs,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ToolError> {
        let mut report = Report::default();
        let client = &self.shared.client;
        let options = &self.shared.options;
        report.push(Level::Ok, format!("MM_URL is {}", client.base_url()), None);
        server_checks(client, &mut report).await;
        self.check_questions(&mut report, &args, context).await;
        if options.transport == Transport::Stdio {
            check_download_dir(&mut report, &options.download_dir);
        }
        report.push(
            Level::Note,
            match (options.allow_writes, options.ask_before_writes) {
                (false, _) => "the server only reads (the operator sets MM_MCP_ALLOW_WRITES=true to allow changes)".to_owned(),
                (true, true) => "writes are allowed and those others see ask the person first".to_owned(),
                (true, false) if options.force_human_in_the_loop => "writes are allowed; porter does not ask, and asking tools are marked for Claude Code to show each call to the person".to_owned(),
                (true, false) => "writes are allowed and do NOT ask the person first (MM_MCP_ASK_BEFORE_WRITES=false): the client's approval is the only check".to_owned(),
            },
            None,
        );
        let checks: Vec<CheckOut> = report
            .checks
            .iter()
            .map(|c| CheckOut {
                level: match c.level {
                    Level::Ok => "ok",
                    Level::Note => "note",
                    Level::Warn => "warn",
                    Level::Config | Level::Failure => "fail",
                }
                .to_owned(),
                what: c.what.clone(),
                fix: c.fix.clone(),
            })
            .collect();
        let ok = report.exit_code() == 0;
        let mut text = report.to_string();
        text.push_str(if ok {
            "Nothing failed.\n"
        } else {
            "Something failed: tell the person the fix above.\n"
        });
        done(text, &DiagnoseOut { ok, checks })
    }

    /// Whether this client can show porter's questions, and (when asked
    /// for and possible) whether a harmless test question reaches the
    /// person.
    async fn check_questions(
        &self,
        report: &mut Report,
        args: &DiagnoseArgs,
        context: &RequestContext<RoleServer>,
    ) {
        let options = &self.shared.options;
        let needed = options.allow_writes && options.ask_before_writes;
        if !can_elicit(context) {
            let (level, fix) = if needed {
                (
                    Level::Config,
                    Some("use an MCP client that supports elicitation (form), or have the operator set MM_MCP_ASK_BEFORE_WRITES=false to leave approval to the client".to_owned()),
                )
            } else {
                (Level::Note, None)
            };
            report.push(
                level,
                "this MCP client cannot show porter's questions (it declared no form elicitation)",
                fix,
            );
            return;
        }
        report.push(
            Level::Ok,
            "this MCP client declared that it can show porter's questions (form elicitation)",
            None,
        );
        if args.ask_test_question != Some(true) {
            return;
        }
        let modern = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        if modern {
            report.push(
                Level::Note,
                "on protocol 2026-07-28 questions travel with the tool's answer, so no test question was sent; a write tool's question shows whether they arrive",
                None,
            );
            return;
        }
        let Ok(question) = form_with(
            "porter: a test question",
            "porter diagnose is checking that its questions reach you. Nothing will change whatever you answer; tick the box and accept to confirm you see this.".to_owned(),
            "Yes, I see this question",
            "Tick to confirm that porter's questions reach you; nothing changes whatever you answer.",
        ) else {
            return;
        };
        let answer = context
            .peer
            .create_elicitation_with_timeout(question, Some(std::time::Duration::from_secs(120)))
            .await;
        match answer {
            Ok(result) => {
                let (level, what) = match result.action {
                    ElicitationAction::Accept => (
                        Level::Ok,
                        "the test question reached the person and they accepted it",
                    ),
                    ElicitationAction::Decline => (
                        Level::Ok,
                        "the test question reached the person (they declined it, which is fine)",
                    ),
                    _ => (
                        Level::Warn,
                        "the test question was closed without an answer; the person may not have seen it",
                    ),
                };
                report.push(level, what, None);
            }
            Err(error) => report.push(
                Level::Failure,
                format!("the test question did not reach the person: {error}"),
                Some("check that the MCP client shows elicitation forms; otherwise have the operator set MM_MCP_ASK_BEFORE_WRITES=false".to_owned()),
            ),
        }
    }
}

/// Reads an ISO 8601 time: with an offset or `Z` as given, without one in
/// `zone` (an IANA name; UTC when the person set none).
fn reminder_time(text: &str, zone: Option<&str>) -> Result<jiff::ZonedDateTime, ToolError> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_drafts_fingerprint_changes_with_its_text_only() {
        let draft = Draft {
            channel_id: "c".into(),
            message: "hello".into(),
            update_at: 1,
            ..Draft::default()
        };
        let later = Draft {
            update_at: 2,
            ..draft.clone()
        };
        let edited = Draft {
            message: "hello!".into(),
            ..draft.clone()
        };
        assert_eq!(draft_fingerprint(&draft), draft_fingerprint(&later));
        assert_ne!(draft_fingerprint(&draft), draft_fingerprint(&edited));
    }
}
