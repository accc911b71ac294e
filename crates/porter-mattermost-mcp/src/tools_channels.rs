//! Teams, channels and people: `get_team_info`, `list_team_channels`,
//! `list_archived_channels`, `get_channel_stats`, `get_status` (read);
//! `join_channel`, `leave_channel`, `create_channel`,
//! `add_channel_members`, `set_status` (ask first); `mark_channel_read`
//! (the person's own state, never asks).
//!
//! The asking tools share [`MattermostServer::confirmed`]: it looks the
//! change up (a [`Plan`]: the question and a fingerprint of what the change
//! acts on), asks with the same form and protocol rules as `create_post`,
//! and looks again just before acting; a fingerprint that moved refuses.

use std::fmt::Write as _;

use rmcp::model::{CallToolResponse, CallToolResult, ProtocolVersion};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::output::ChannelOut;
use crate::render::iso_utc;
use crate::write::{
    Answer, CONFIRM, ask_binding, can_elicit, form_with, input_digest, judge, now_ms,
};
use porter_mcp::tool::{Call, Hints, Outcome, Tool, ToolError, done};

use crate::{MattermostServer, missing_elicitation};
use porter_mattermost::{
    Channel, ChannelType, CustomStatus, Error, NewChannel, Status, Team, User,
};

/// `MAX_ADD_MEMBERS` is the most people `add_channel_members` adds at once,
/// so the question can name every one.
pub(crate) const MAX_ADD_MEMBERS: usize = 20;
/// `MAX_STATUS_NAMES` is the most people `get_status` looks up at once.
pub(crate) const MAX_STATUS_NAMES: usize = 100;

/// One channel.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct OneChannelArgs {
    /// The channel: its id or name (`~town-square`, `town-square` or `Town Square`).
    pub channel_id: String,
    /// The team, by id or name, when the channel name is in several teams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
}

/// A new channel.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct CreateChannelArgs {
    /// The URL name: 2 to 64 of lowercase letters, digits, `-` and `_` (`release-2026`).
    pub name: String,
    /// The shown name (`Release 2026`); the URL name when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// The team, by id or name; leave out when you are in one team.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
    /// True for a private channel (only members see it); public by default.
    #[serde(default)]
    pub private: bool,
    /// Its purpose line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purpose: Option<String>,
    /// Its header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
}

/// People to add to a channel.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct AddMembersArgs {
    /// The channel: its id or name.
    pub channel_id: String,
    /// The team, by id or name, when the channel name is in several teams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
    /// Who to add: 1 to 20 usernames (with or without `@`).
    pub usernames: Vec<String>,
}

/// People whose presence to read.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct GetStatusArgs {
    /// Usernames (with or without `@`), 1 to 100; leave out for yourself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub usernames: Vec<String>,
}

/// A change of one's own status.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct SetStatusArgs {
    /// `online`, `away`, `dnd` (do not disturb) or `offline`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// With `dnd`: when do-not-disturb ends, as RFC 3339 with an offset (`2026-12-01T17:00:00Z`); leave out for no end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dnd_until: Option<String>,
    /// A custom status text (at most 100 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_text: Option<String>,
    /// The custom status emoji, by name (`palm_tree` or `:palm_tree:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_emoji: Option<String>,
    /// When the custom status ends, as RFC 3339 with an offset; leave out to keep it until cleared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_until: Option<String>,
    /// True to clear the custom status.
    #[serde(default)]
    pub clear_custom: bool,
}

/// `ChannelStatsOut` are a channel's counts.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ChannelStatsOut {
    /// The channel.
    pub channel: ChannelOut,
    /// Members with active accounts.
    pub member_count: i64,
    /// Of those, guests.
    pub guest_count: i64,
    /// Pinned posts.
    pub pinned_post_count: i64,
    /// Files posted in it.
    pub file_count: i64,
}

/// `StatusOut` is one person's presence.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StatusOut {
    /// Their username.
    pub username: String,
    /// Their id.
    pub user_id: String,
    /// `online`, `away`, `dnd` or `offline`.
    pub status: String,
    /// Whether they set it by hand.
    pub manual: bool,
    /// When do-not-disturb ends (UTC), if it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dnd_until: Option<String>,
    /// Their custom status text, as they wrote it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_text: Option<String>,
    /// Their custom status emoji.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_emoji: Option<String>,
    /// When the custom status ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_until: Option<String>,
}

/// `StatusesOut` are presences.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StatusesOut {
    /// One per person found.
    pub statuses: Vec<StatusOut>,
    /// Names that match no account.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    pub not_found: Vec<String>,
}

/// `ChangedOut` is what an asking or own-state tool did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ChangedOut {
    /// What changed, in words.
    pub done: String,
    /// The channel it changed, when one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel: Option<ChannelOut>,
    /// The people it added, when any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    pub added: Vec<String>,
    /// The status as it is now, when it changed one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<StatusOut>,
}

/// A change looked up: the question, and the fingerprint of what it acts
/// on, which must be the same just before acting.
pub(crate) struct Plan {
    title: String,
    question: String,
    fingerprint: String,
    act: Act,
}

/// What an asking call is about, as it arrived.
pub(crate) enum Look<'a> {
    Join(&'a OneChannelArgs),
    Leave(&'a OneChannelArgs),
    Create(&'a CreateChannelArgs),
    Add(&'a AddMembersArgs),
    Status(&'a StatusWanted),
}

/// The change to make once the person agreed.
pub(crate) enum Act {
    Join(Membership),
    Leave(Membership),
    Create(Creation),
    Add(Addition),
    Status(StatusChange),
}

/// What the sealed request state carries to the retry.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Sealed {
    digest: String,
    fingerprint: String,
    time_ms: u64,
}

/// The outcome of asking: act on the plan, or answer now.
pub(crate) enum Gate {
    Go(Box<Plan>),
    Answer(CallToolResponse),
}

/// `NOTHING_DONE` is what these tools say did not happen when the answer
/// is not a yes.
pub(crate) const NOTHING_DONE: &str = "nothing was changed";

pub(crate) fn tool_result(outcome: Result<CallToolResult, ToolError>) -> Outcome {
    Ok(outcome?.into())
}

/// `get_channel_stats`: Count a channel.
pub(crate) struct GetChannelStats;

impl Tool<MattermostServer> for GetChannelStats {
    type Args = OneChannelArgs;
    type Out = ChannelStatsOut;
    const NAME: &'static str = "get_channel_stats";
    const TITLE: &'static str = "Count a channel";
    const DESCRIPTION: &'static str = "Counts a channel's members, guests, pinned posts and files.";
    const HINTS: Hints = Hints::READ;

    async fn call(&self, server: &MattermostServer, args: OneChannelArgs, _call: Call) -> Outcome {
        Ok(server.get_channel_stats_impl(args).await?.into())
    }
}

/// `get_status`: Get people's status.
pub(crate) struct GetStatus;

impl Tool<MattermostServer> for GetStatus {
    type Args = GetStatusArgs;
    type Out = StatusesOut;
    const NAME: &'static str = "get_status";
    const TITLE: &'static str = "Get people's status";
    const DESCRIPTION: &'static str = "Shows whether people are online, away, do-not-disturb (and until when) or offline, with their custom status; up to 100 usernames at once.";
    const HINTS: Hints = Hints::READ;

    async fn call(&self, server: &MattermostServer, args: GetStatusArgs, _call: Call) -> Outcome {
        Ok(server.get_status_impl(args).await?.into())
    }
}

/// `mark_channel_read`: Mark a channel read.
pub(crate) struct MarkChannelRead;

impl Tool<MattermostServer> for MarkChannelRead {
    type Args = OneChannelArgs;
    type Out = ChangedOut;
    const NAME: &'static str = "mark_channel_read";
    const TITLE: &'static str = "Mark a channel read";
    const DESCRIPTION: &'static str = "Marks a channel you are in as read, for you only (others see no change), so it stops counting as unread. It changes only your own state, so porter does not ask the person.";
    const HINTS: Hints = Hints::write(false, true);

    async fn call(&self, server: &MattermostServer, args: OneChannelArgs, _call: Call) -> Outcome {
        Ok(server.mark_channel_read_impl(args).await?.into())
    }
}

/// `join_channel`: Join a channel.
pub(crate) struct JoinChannel;

impl Tool<MattermostServer> for JoinChannel {
    type Args = OneChannelArgs;
    type Out = ChangedOut;
    const NAME: &'static str = "join_channel";
    const TITLE: &'static str = "Join a channel";
    const DESCRIPTION: &'static str =
        "Joins a public channel of one of your teams; its members see that you joined.";
    const HINTS: Hints = Hints::write(false, true);

    async fn call(&self, server: &MattermostServer, args: OneChannelArgs, call: Call) -> Outcome {
        let Call {
            context,
            state,
            answers,
            ..
        } = call;

        let input = serde_json::to_value(&args).unwrap_or(Value::Null);
        let look = Look::Join(&args);
        match server
            .confirmed("join_channel", &input, state, answers, &context, &look)
            .await
        {
            Ok(Gate::Go(plan)) => tool_result(server.make_change(plan.act).await),
            Ok(Gate::Answer(response)) => Ok(response),
            Err(failure) => Err(failure),
        }
    }
}

/// `leave_channel`: Leave a channel.
pub(crate) struct LeaveChannel;

impl Tool<MattermostServer> for LeaveChannel {
    type Args = OneChannelArgs;
    type Out = ChangedOut;
    const NAME: &'static str = "leave_channel";
    const TITLE: &'static str = "Leave a channel";
    const DESCRIPTION: &'static str = "Leaves a channel you are in (not a team's Town Square); its members see that you left, and you can rejoin a private one only when a member adds you.";
    const HINTS: Hints = Hints::write(true, true);

    async fn call(&self, server: &MattermostServer, args: OneChannelArgs, call: Call) -> Outcome {
        let Call {
            context,
            state,
            answers,
            ..
        } = call;

        let input = serde_json::to_value(&args).unwrap_or(Value::Null);
        let look = Look::Leave(&args);
        match server
            .confirmed("leave_channel", &input, state, answers, &context, &look)
            .await
        {
            Ok(Gate::Go(plan)) => tool_result(server.make_change(plan.act).await),
            Ok(Gate::Answer(response)) => Ok(response),
            Err(failure) => Err(failure),
        }
    }
}

/// `create_channel`: Create a channel.
pub(crate) struct CreateChannel;

impl Tool<MattermostServer> for CreateChannel {
    type Args = CreateChannelArgs;
    type Out = ChangedOut;
    const NAME: &'static str = "create_channel";
    const TITLE: &'static str = "Create a channel";
    const DESCRIPTION: &'static str = "Creates a public (or, with private, a private) channel in one of your teams, with you as its first member.";
    const HINTS: Hints = Hints::write(false, false);

    async fn call(
        &self,
        server: &MattermostServer,
        args: CreateChannelArgs,
        call: Call,
    ) -> Outcome {
        let Call {
            context,
            state,
            answers,
            ..
        } = call;

        let input = serde_json::to_value(&args).unwrap_or(Value::Null);
        let look = Look::Create(&args);
        match server
            .confirmed("create_channel", &input, state, answers, &context, &look)
            .await
        {
            Ok(Gate::Go(plan)) => tool_result(server.make_change(plan.act).await),
            Ok(Gate::Answer(response)) => Ok(response),
            Err(failure) => Err(failure),
        }
    }
}

/// `add_channel_members`: Add people to a channel.
pub(crate) struct AddChannelMembers;

impl Tool<MattermostServer> for AddChannelMembers {
    type Args = AddMembersArgs;
    type Out = ChangedOut;
    const NAME: &'static str = "add_channel_members";
    const TITLE: &'static str = "Add people to a channel";
    const DESCRIPTION: &'static str = "Adds 1 to 20 people (by username) to a channel you are in; the question names every one, and those already in it are left as they are.";
    const HINTS: Hints = Hints::write(false, true);

    async fn call(&self, server: &MattermostServer, args: AddMembersArgs, call: Call) -> Outcome {
        let Call {
            context,
            state,
            answers,
            ..
        } = call;

        let input = serde_json::to_value(&args).unwrap_or(Value::Null);
        if args.usernames.is_empty() || args.usernames.len() > MAX_ADD_MEMBERS {
            return Err(ToolError::Tool(format!(
                "add_channel_members adds 1 to {MAX_ADD_MEMBERS} people at once and {} were named; split the list. Nothing was changed.",
                args.usernames.len()
            )));
        }
        let look = Look::Add(&args);
        match server
            .confirmed(
                "add_channel_members",
                &input,
                state,
                answers,
                &context,
                &look,
            )
            .await
        {
            Ok(Gate::Go(plan)) => tool_result(server.make_change(plan.act).await),
            Ok(Gate::Answer(response)) => Ok(response),
            Err(failure) => Err(failure),
        }
    }
}

/// `set_status`: Set your status.
pub(crate) struct SetStatus;

impl Tool<MattermostServer> for SetStatus {
    type Args = SetStatusArgs;
    type Out = ChangedOut;
    const NAME: &'static str = "set_status";
    const TITLE: &'static str = "Set your status";
    const DESCRIPTION: &'static str = "Sets your status (online, away, dnd with an optional end, offline) and/or your custom status (text, emoji, optional end), or clears the custom status; others see it next to your name.";
    const HINTS: Hints = Hints::write(false, true);

    async fn call(&self, server: &MattermostServer, args: SetStatusArgs, call: Call) -> Outcome {
        let Call {
            context,
            state,
            answers,
            ..
        } = call;

        let input = serde_json::to_value(&args).unwrap_or(Value::Null);
        let wanted = match status_change(&args) {
            Ok(wanted) => wanted,
            Err(failure) => return Err(failure),
        };
        let look = Look::Status(&wanted);
        match server
            .confirmed("set_status", &input, state, answers, &context, &look)
            .await
        {
            Ok(Gate::Go(plan)) => tool_result(server.make_change(plan.act).await),
            Ok(Gate::Answer(response)) => Ok(response),
            Err(failure) => Err(failure),
        }
    }
}

// ----- asking -----

impl MattermostServer {
    /// Asks the person about the change `look` finds (unless asking is
    /// left to the client), bound to the call's input and the change's
    /// fingerprint; looks again just before answering `Go`.
    pub(crate) async fn confirmed(
        &self,
        tool: &'static str,
        input: &Value,
        state: Option<String>,
        answers: Option<rmcp::model::InputResponses>,
        context: &RequestContext<RoleServer>,
        look: &Look<'_>,
    ) -> Result<Gate, ToolError> {
        let ask = self.shared.options.ask_before_writes;
        if ask && !can_elicit(context) {
            return Err(ToolError::Rpc(missing_elicitation(tool)));
        }
        if !ask {
            return Ok(Gate::Go(Box::new(self.plan(look).await?)));
        }
        let modern = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let digest = input_digest(tool, input);
        let bound = ask_binding(tool, &digest);
        if modern && let Some(state) = state.as_deref() {
            let sealed: Sealed = self
                .shared
                .asks
                .open_json_with(state, &bound)
                .map_err(|_| {
                    ToolError::Tool(format!(
                        "this answer belongs to another question (the call's arguments differ, or the server restarted); nothing was changed. Call {tool} again to ask the person afresh."
                    ))
                })?;
            let Some(raw) = answers.as_ref().and_then(|a| a.get(CONFIRM)) else {
                return Err(ToolError::Tool(format!(
                    "the call came back without the person's answer; nothing was changed. Call {tool} again to ask them."
                )));
            };
            let result = serde_json::from_value(raw.clone()).map_err(|e| {
                ToolError::Rpc(ErrorData::invalid_params(
                    format!("inputResponses.{CONFIRM} is not an elicitation result: {e}"),
                    None,
                ))
            })?;
            if let Answer::No(sentence) = judge(
                &result,
                tool,
                NOTHING_DONE,
                sealed.time_ms,
                self.shared.options.ask_timeout,
            ) {
                return Err(ToolError::Tool(sentence));
            }
            let plan = self.plan(look).await?;
            return still_as_asked(tool, &sealed.fingerprint, plan)
                .map(|plan| Gate::Go(Box::new(plan)));
        }
        let plan = self.plan(look).await?;
        let (label, about) = box_words(look);
        let form = form_with(&plan.title, plan.question.clone(), label, about)?;
        if modern {
            let sealed = Sealed {
                digest: digest.clone(),
                fingerprint: plan.fingerprint.clone(),
                time_ms: now_ms(),
            };
            return self
                .input_required_with(tool, &digest, &sealed, form)
                .map(Gate::Answer);
        }
        let answer = self.ask_now_with(tool, form, NOTHING_DONE, context).await;
        if let Answer::No(sentence) = answer {
            return Err(ToolError::Tool(sentence));
        }
        let again = self.plan(look).await?;
        still_as_asked(tool, &plan.fingerprint, again).map(|plan| Gate::Go(Box::new(plan)))
    }
}

/// The plan looked up again, if it still acts on what the person saw.
pub(crate) fn still_as_asked(tool: &str, asked: &str, plan: Plan) -> Result<Plan, ToolError> {
    if plan.fingerprint == asked {
        Ok(plan)
    } else {
        Err(ToolError::Tool(format!(
            "what {tool} would change is no longer what the person was asked about (it changed in Mattermost meanwhile); nothing was changed. Call {tool} again to ask about it as it is now."
        )))
    }
}

/// The label and description of the question's box, naming the tool's
/// own action.
pub(crate) fn box_words(look: &Look<'_>) -> (&'static str, &'static str) {
    match look {
        Look::Join(_) => (
            "Yes, join this channel",
            "Tick to join the channel named above; leave unticked or decline to stay out of it.",
        ),
        Look::Leave(_) => (
            "Yes, leave this channel",
            "Tick to leave the channel named above; leave unticked or decline to stay in it.",
        ),
        Look::Create(_) => (
            "Yes, create this channel",
            "Tick to create the channel shown above; leave unticked or decline to create nothing.",
        ),
        Look::Add(_) => (
            "Yes, add these people",
            "Tick to add exactly the people listed above; leave unticked or decline to add no one.",
        ),
        Look::Status(_) => (
            "Yes, set this status",
            "Tick to set your status as shown above; leave unticked or decline to keep it as it is.",
        ),
    }
}

// ----- the plans and acts -----

/// Joining or leaving: who, where.
pub(crate) struct Membership {
    channel: Channel,
    me: String,
}

/// A channel to create.
pub(crate) struct Creation {
    channel: NewChannel,
}

/// People to add.
pub(crate) struct Addition {
    channel: Channel,
    people: Vec<User>,
}

/// A status change as asked, before it is looked up.
#[derive(Debug, Clone, Default)]
pub(crate) struct StatusWanted {
    status: Option<String>,
    dnd_end_s: i64,
    custom: Option<CustomStatus>,
    clear_custom: bool,
}

/// A status change looked up.
pub(crate) struct StatusChange {
    me: User,
    wanted: StatusWanted,
}

/// A channel's label in questions: `~name (Shown, team t, public)`.
pub(crate) fn place_label(channel: &Channel, team: Option<&Team>) -> String {
    let kind = match channel.kind {
        ChannelType::Private => "private",
        _ => "public",
    };
    match team {
        Some(team) => format!(
            "~{} ({}, team {}, {kind})",
            channel.name, channel.display_name, team.name
        ),
        None => format!("~{} ({}, {kind})", channel.name, channel.display_name),
    }
}

impl MattermostServer {
    /// Looks a change up, without changing anything.
    pub(crate) async fn plan(&self, look: &Look<'_>) -> Result<Plan, ToolError> {
        match look {
            Look::Join(args) => self.membership_plan(args, true).await,
            Look::Leave(args) => self.membership_plan(args, false).await,
            Look::Create(args) => self.create_plan(args).await,
            Look::Add(args) => self.add_plan(args).await,
            Look::Status(wanted) => self.status_plan(wanted).await,
        }
    }
    /// Makes a change the person agreed to.
    pub(crate) async fn make_change(&self, act: Act) -> Result<CallToolResult, ToolError> {
        match act {
            Act::Join(m) => self.join_act(m).await,
            Act::Leave(m) => self.leave_act(m).await,
            Act::Create(c) => self.create_act(c).await,
            Act::Add(a) => self.add_act(a).await,
            Act::Status(s) => self.status_act(s).await,
        }
    }
    pub(crate) async fn membership_plan(
        &self,
        args: &OneChannelArgs,
        join: bool,
    ) -> Result<Plan, ToolError> {
        let verb = if join { "join" } else { "leave" };
        let (channel, team) = self
            .resolve_channel(&args.channel_id, args.team_id.as_deref())
            .await?;
        if matches!(channel.kind, ChannelType::Direct | ChannelType::Group) {
            return Err(ToolError::Tool(format!(
                "{} is a direct or group conversation, which one cannot {verb}. Nothing was changed.",
                channel.display_name
            )));
        }
        if channel.delete_at != 0 {
            return Err(ToolError::Tool(format!(
                "~{} is archived, so no one can {verb} it. Nothing was changed.",
                channel.name
            )));
        }
        if !join && channel.name == "town-square" {
            return Err(ToolError::Tool(
                "no one can leave a team's Town Square (everyone in the team is in it). Nothing was changed.".to_owned(),
            ));
        }
        let me = self.me().await?;
        let member = self
            .shared
            .client
            .channel_member(&channel.id, &me.id)
            .await?
            .is_some();
        if member == join {
            let state = if join { "already in" } else { "not in" };
            return Err(ToolError::Tool(format!(
                "you are {state} ~{}; nothing was changed.",
                channel.name
            )));
        }
        let stats = self.shared.client.channel_stats(&channel.id).await?;
        let label = place_label(&channel, team.as_ref());
        let (title, mut question) = if join {
            (
                format!("Join ~{}", channel.name),
                format!(
                    "@{} joins {label}. Its {} members see that you joined, and you will get its posts.",
                    me.username, stats.member_count
                ),
            )
        } else {
            (
                format!("Leave ~{}", channel.name),
                format!(
                    "@{} leaves {label}. Its {} members see that you left.",
                    me.username, stats.member_count
                ),
            )
        };
        if !join && channel.kind == ChannelType::Private {
            question.push_str(" It is private: you can come back only if a member adds you again.");
        }
        Ok(Plan {
            title,
            question,
            fingerprint: format!("{verb}|{}|{}|member={member}", channel.id, me.id),
            act: if join {
                Act::Join(Membership { channel, me: me.id })
            } else {
                Act::Leave(Membership { channel, me: me.id })
            },
        })
    }
    pub(crate) async fn join_act(&self, m: Membership) -> Result<CallToolResult, ToolError> {
        self.shared
            .client
            .add_channel_members(&m.channel.id, &[&m.me])
            .await?;
        let text = format!("You joined ~{}.", m.channel.name);
        done(
            text.clone(),
            &ChangedOut {
                done: text,
                channel: Some(ChannelOut::from(&m.channel)),
                added: Vec::new(),
                status: None,
            },
        )
    }
    pub(crate) async fn leave_act(&self, m: Membership) -> Result<CallToolResult, ToolError> {
        self.shared
            .client
            .remove_channel_member(&m.channel.id, &m.me)
            .await?;
        let text = format!("You left ~{}.", m.channel.name);
        done(
            text.clone(),
            &ChangedOut {
                done: text,
                channel: Some(ChannelOut::from(&m.channel)),
                added: Vec::new(),
                status: None,
            },
        )
    }
    /// The team a call names, or the account's only team.
    pub(crate) async fn one_team(&self, team: Option<&str>) -> Result<Team, ToolError> {
        if let Some(team) = team.filter(|t| !t.trim().is_empty()) {
            return self.resolve_team(team).await;
        }
        let mut teams = self.shared.client.my_teams().await?;
        if teams.len() == 1 {
            return Ok(teams.remove(0));
        }
        let names: Vec<String> = teams.iter().map(|t| t.name.clone()).collect();
        Err(ToolError::Tool(format!(
            "you are in {} teams ({}); pass one as team_id",
            teams.len(),
            names.join(", ")
        )))
    }
    pub(crate) async fn create_plan(&self, args: &CreateChannelArgs) -> Result<Plan, ToolError> {
        let name = args.name.trim().trim_start_matches('~');
        if !valid_channel_name(name) {
            return Err(ToolError::Tool(format!(
                "{name:?} cannot be a channel's URL name: use 2 to 64 lowercase letters, digits, '-' and '_', starting and ending with a letter or digit (for example {:?}). Nothing was created.",
                suggest_name(name)
            )));
        }
        let display = args
            .display_name
            .as_deref()
            .map_or(name, str::trim)
            .to_owned();
        if display.is_empty() || display.chars().count() > 64 {
            return Err(ToolError::Tool(
                "display_name must be 1 to 64 characters. Nothing was created.".to_owned(),
            ));
        }
        let team = self.one_team(args.team_id.as_deref()).await?;
        match self.shared.client.channel_by_name(&team.id, name).await {
            Ok(found) => {
                let archived = if found.delete_at == 0 {
                    ""
                } else {
                    " (archived)"
                };
                return Err(ToolError::Tool(format!(
                    "team {} already has a channel named ~{name}{archived}; pick another name, or join_channel to join it. Nothing was created.",
                    team.name
                )));
            }
            Err(Error::NotFound { .. } | Error::Forbidden { .. }) => {}
            Err(other) => return Err(other.into()),
        }
        let me = self.me().await?;
        let kind = if args.private { "private" } else { "public" };
        let mut question = format!(
            "@{} creates the {kind} channel ~{name} \"{display}\" in team {}, as its first member.",
            me.username, team.name
        );
        let purpose = args.purpose.clone().unwrap_or_default();
        let header = args.header.clone().unwrap_or_default();
        if !purpose.is_empty() {
            let _ = write!(question, "\nPurpose: {purpose}");
        }
        if !header.is_empty() {
            let _ = write!(question, "\nHeader: {header}");
        }
        if !args.private {
            question.push_str("\nEveryone in the team can see and join it.");
        }
        Ok(Plan {
            title: format!("Create ~{name} in team {}", team.name),
            question,
            fingerprint: format!("create|{}|{name}|free", team.id),
            act: Act::Create(Creation {
                channel: NewChannel {
                    team_id: team.id,
                    name: name.to_owned(),
                    display_name: display,
                    kind: if args.private { "P" } else { "O" }.to_owned(),
                    purpose,
                    header,
                },
            }),
        })
    }
    pub(crate) async fn create_act(&self, c: Creation) -> Result<CallToolResult, ToolError> {
        let channel = self.shared.client.create_channel(&c.channel).await?;
        let text = format!("Created ~{} ({}).", channel.name, channel.id);
        done(
            text.clone(),
            &ChangedOut {
                done: text,
                channel: Some(ChannelOut::from(&channel)),
                added: Vec::new(),
                status: None,
            },
        )
    }
    pub(crate) async fn add_plan(&self, args: &AddMembersArgs) -> Result<Plan, ToolError> {
        let (channel, team) = self
            .resolve_channel(&args.channel_id, args.team_id.as_deref())
            .await?;
        if matches!(channel.kind, ChannelType::Direct | ChannelType::Group) {
            return Err(ToolError::Tool(
                "people cannot be added to a direct or group conversation; use group_message to write to a new group. Nothing was changed.".to_owned(),
            ));
        }
        if channel.delete_at != 0 {
            return Err(ToolError::Tool(format!(
                "~{} is archived; no one can be added. Nothing was changed.",
                channel.name
            )));
        }
        let mut people: Vec<User> = Vec::new();
        let mut already: Vec<String> = Vec::new();
        for name in &args.usernames {
            let name = name.trim().trim_start_matches('@');
            if name.is_empty()
                || people.iter().any(|u| u.username.eq_ignore_ascii_case(name))
                || already.iter().any(|u| u.eq_ignore_ascii_case(name))
            {
                continue;
            }
            let user = match self.shared.client.user_by_username(name).await {
                Ok(user) => user,
                Err(Error::NotFound { .. }) => {
                    return Err(ToolError::Tool(format!(
                        "there is no account named @{name}; search_users finds accounts by part of a name. Nothing was changed."
                    )));
                }
                Err(other) => return Err(other.into()),
            };
            if !user.is_active() {
                return Err(ToolError::Tool(format!(
                    "@{} is deactivated and cannot be added. Nothing was changed.",
                    user.username
                )));
            }
            if self
                .shared
                .client
                .channel_member(&channel.id, &user.id)
                .await?
                .is_some()
            {
                already.push(user.username);
            } else {
                people.push(user);
            }
        }
        if people.is_empty() {
            return Err(ToolError::Tool(format!(
                "everyone named is already in ~{}; nothing was changed.",
                channel.name
            )));
        }
        let me = self.me().await?;
        let mut question = format!(
            "@{} adds {} {} to {}:",
            me.username,
            people.len(),
            if people.len() == 1 {
                "person"
            } else {
                "people"
            },
            place_label(&channel, team.as_ref())
        );
        for user in &people {
            let full = user.full_name();
            if full.is_empty() {
                let _ = write!(question, "\n- @{}", user.username);
            } else {
                let _ = write!(question, "\n- @{} ({full})", user.username);
            }
        }
        if !already.is_empty() {
            let names: Vec<String> = already.iter().map(|u| format!("@{u}")).collect();
            let _ = write!(
                question,
                "\nAlready members, left as they are: {}.",
                names.join(", ")
            );
        }
        question.push_str("\nThey will see the channel's posts, and its members see them added.");
        let mut ids: Vec<&str> = people.iter().map(|u| u.id.as_str()).collect();
        ids.sort_unstable();
        Ok(Plan {
            title: format!("Add people to ~{}", channel.name),
            question,
            fingerprint: format!("add|{}|{}", channel.id, ids.join(",")),
            act: Act::Add(Addition { channel, people }),
        })
    }
    pub(crate) async fn add_act(&self, a: Addition) -> Result<CallToolResult, ToolError> {
        let ids: Vec<&str> = a.people.iter().map(|u| u.id.as_str()).collect();
        self.shared
            .client
            .add_channel_members(&a.channel.id, &ids)
            .await?;
        let added: Vec<String> = a.people.iter().map(|u| u.username.clone()).collect();
        let names: Vec<String> = added.iter().map(|u| format!("@{u}")).collect();
        let text = format!("Added {} to ~{}.", names.join(", "), a.channel.name);
        done(
            text.clone(),
            &ChangedOut {
                done: text,
                channel: Some(ChannelOut::from(&a.channel)),
                added,
                status: None,
            },
        )
    }
    pub(crate) async fn status_plan(&self, wanted: &StatusWanted) -> Result<Plan, ToolError> {
        let me = self.me().await?;
        let now = self.shared.client.status(&me.id).await?;
        let custom = self
            .shared
            .client
            .custom_statuses(&[&me.id])
            .await?
            .into_iter()
            .next()
            .map(|(_, c)| c);
        let mut question = format!(
            "@{} changes what others see next to their name:",
            me.username
        );
        if let Some(status) = &wanted.status {
            let until = if status == "dnd" && wanted.dnd_end_s > 0 {
                format!(" until {}", iso_utc(wanted.dnd_end_s * 1000))
            } else {
                String::new()
            };
            let _ = write!(question, "\n- status: {} → {status}{until}", now.status);
        }
        if wanted.clear_custom {
            let _ = write!(
                question,
                "\n- custom status: {} → (none)",
                custom_words(custom.as_ref())
            );
        } else if let Some(next) = &wanted.custom {
            let _ = write!(
                question,
                "\n- custom status: {} → {}",
                custom_words(custom.as_ref()),
                custom_words(Some(next))
            );
        }
        let fingerprint = format!(
            "status|{}|{}|{}|{}",
            me.id,
            now.status,
            now.dnd_end_time,
            serde_json::to_string(&custom).unwrap_or_default()
        );
        Ok(Plan {
            title: "Set your status".to_owned(),
            question,
            fingerprint,
            act: Act::Status(StatusChange {
                me,
                wanted: wanted.clone(),
            }),
        })
    }
    pub(crate) async fn status_act(&self, s: StatusChange) -> Result<CallToolResult, ToolError> {
        let client = &self.shared.client;
        let mut parts = Vec::new();
        if let Some(status) = &s.wanted.status {
            client
                .set_status(&Status {
                    user_id: s.me.id.clone(),
                    status: status.clone(),
                    dnd_end_time: s.wanted.dnd_end_s,
                    ..Status::default()
                })
                .await?;
            parts.push(format!("status {status}"));
        }
        if s.wanted.clear_custom {
            client.clear_custom_status().await?;
            parts.push("custom status cleared".to_owned());
        } else if let Some(custom) = &s.wanted.custom {
            client.set_custom_status(custom).await?;
            parts.push(format!("custom status {}", custom_words(Some(custom))));
        }
        let now = self.statuses_of(vec![s.me]).await?.into_iter().next();
        let text = format!("Set {}.", parts.join(", "));
        done(
            text.clone(),
            &ChangedOut {
                done: text,
                channel: None,
                added: Vec::new(),
                status: now,
            },
        )
    }
}

pub(crate) fn custom_words(custom: Option<&CustomStatus>) -> String {
    match custom {
        None => "(none)".to_owned(),
        Some(c) => {
            let mut words = String::new();
            if !c.emoji.is_empty() {
                let _ = write!(words, ":{}: ", c.emoji);
            }
            let _ = write!(words, "\"{}\"", c.text);
            if !c.expires_at.is_empty() {
                let _ = write!(words, " until {}", c.expires_at);
            }
            words
        }
    }
}

/// Checks a `set_status` call before anything is read: a known status, an
/// end only with dnd, times with an offset, something to change.
pub(crate) fn status_change(args: &SetStatusArgs) -> Result<StatusWanted, ToolError> {
    let mut wanted = StatusWanted::default();
    if let Some(status) = args
        .status
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let status = status.to_ascii_lowercase();
        if !["online", "away", "dnd", "offline"].contains(&status.as_str()) {
            return Err(ToolError::Tool(format!(
                "status {status:?} is not one of online, away, dnd, offline. Nothing was changed."
            )));
        }
        wanted.status = Some(status);
    }
    if let Some(until) = args.dnd_until.as_deref().filter(|s| !s.trim().is_empty()) {
        if wanted.status.as_deref() != Some("dnd") {
            return Err(ToolError::Tool(
                "dnd_until goes with status \"dnd\"; pass both. Nothing was changed.".to_owned(),
            ));
        }
        wanted.dnd_end_s = rfc3339_ms(until).ok_or_else(|| bad_time("dnd_until", until))? / 1000;
    }
    let text = args.custom_text.as_deref().unwrap_or_default().trim();
    let emoji = args
        .custom_emoji
        .as_deref()
        .unwrap_or_default()
        .trim()
        .trim_matches(':');
    if args.clear_custom {
        if !text.is_empty() || !emoji.is_empty() {
            return Err(ToolError::Tool(
                "clear_custom removes the custom status; leave custom_text and custom_emoji out with it. Nothing was changed.".to_owned(),
            ));
        }
        wanted.clear_custom = true;
    } else if !text.is_empty() || !emoji.is_empty() {
        if text.chars().count() > 100 {
            return Err(ToolError::Tool(
                "custom_text is at most 100 characters. Nothing was changed.".to_owned(),
            ));
        }
        let mut custom = CustomStatus {
            emoji: emoji.to_owned(),
            text: text.to_owned(),
            ..CustomStatus::default()
        };
        if let Some(until) = args
            .custom_until
            .as_deref()
            .filter(|s| !s.trim().is_empty())
        {
            let ms = rfc3339_ms(until).ok_or_else(|| bad_time("custom_until", until))?;
            "date_and_time".clone_into(&mut custom.duration);
            custom.expires_at = iso_utc(ms);
        }
        wanted.custom = Some(custom);
    }
    if wanted.status.is_none() && wanted.custom.is_none() && !wanted.clear_custom {
        return Err(ToolError::Tool(
            "set_status needs something to change: status, custom_text/custom_emoji, or clear_custom. Nothing was changed.".to_owned(),
        ));
    }
    Ok(wanted)
}

pub(crate) fn bad_time(field: &str, value: &str) -> ToolError {
    ToolError::Tool(format!(
        "{field} {value:?} is not an RFC 3339 time with an offset; write it like 2026-12-01T17:00:00Z or 2026-12-01T18:00:00+01:00. Nothing was changed."
    ))
}

/// Reads `YYYY-MM-DDTHH:MM[:SS[.fff]](Z|±HH:MM)` as ms since the epoch.
pub(crate) fn rfc3339_ms(text: &str) -> Option<i64> {
    let text = text.trim();
    let (date, rest) = text.split_once(['T', 't', ' '])?;
    let mut d = date.split('-');
    let year: i64 = d.next()?.parse().ok()?;
    let month: i64 = d.next()?.parse().ok()?;
    let day: i64 = d.next()?.parse().ok()?;
    if d.next().is_some() || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let (clock, offset_s) = if let Some(clock) = rest.strip_suffix(['Z', 'z']) {
        (clock, 0)
    } else {
        let at = rest.rfind(['+', '-'])?;
        let (clock, offset) = rest.split_at(at);
        let sign = if offset.starts_with('-') { -1 } else { 1 };
        let (h, m) = offset[1..].split_once(':')?;
        let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
        (clock, sign * (h * 3600 + m * 60))
    };
    let mut c = clock.split(':');
    let hour: i64 = c.next()?.parse().ok()?;
    let minute: i64 = c.next()?.parse().ok()?;
    let second: f64 = c.next().map_or(Some(0.0), |s| s.parse().ok())?;
    if c.next().is_some() || hour > 23 || minute > 59 || !(0.0..61.0).contains(&second) {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let seconds = days * 86_400 + hour * 3600 + minute * 60 - offset_s;
    #[allow(clippy::cast_possible_truncation)]
    Some(seconds * 1000 + (second * 1000.0) as i64)
}

/// Tells whether a URL name keeps Mattermost's rules (2 to 64 of
/// `a-z 0-9 - _`, a letter or digit at each end, no `__`).
pub(crate) fn valid_channel_name(name: &str) -> bool {
    let ends = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    (2..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        && ends(name.chars().next())
        && ends(name.chars().last())
        && !name.contains("__")
}

/// A name that keeps the rules, made from one that does not.
pub(crate) fn suggest_name(name: &str) -> String {
    let mut out = String::new();
    for c in name.to_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_matches('-').to_owned();
    if out.len() < 2 {
        "my-channel".to_owned()
    } else {
        out.chars().take(64).collect()
    }
}

// ----- the read tools -----

impl MattermostServer {
    pub(crate) async fn get_channel_stats_impl(
        &self,
        args: OneChannelArgs,
    ) -> Result<CallToolResult, ToolError> {
        let (channel, _) = self
            .resolve_channel(&args.channel_id, args.team_id.as_deref())
            .await?;
        let stats = self.shared.client.channel_stats(&channel.id).await?;
        let out = ChannelStatsOut {
            channel: ChannelOut::from(&channel),
            member_count: stats.member_count,
            guest_count: stats.guest_count,
            pinned_post_count: stats.pinnedpost_count,
            file_count: stats.files_count,
        };
        let text = format!(
            "~{}: {} members ({} guests), {} pinned posts, {} files.",
            channel.name, out.member_count, out.guest_count, out.pinned_post_count, out.file_count
        );
        done(text, &out)
    }
    pub(crate) async fn get_status_impl(
        &self,
        args: GetStatusArgs,
    ) -> Result<CallToolResult, ToolError> {
        if args.usernames.len() > MAX_STATUS_NAMES {
            return Err(ToolError::Tool(format!(
                "get_status looks up at most {MAX_STATUS_NAMES} people at once and {} were named; split the list",
                args.usernames.len()
            )));
        }
        let (users, not_found) = if args.usernames.is_empty() {
            (vec![self.me().await?], Vec::new())
        } else {
            let names: Vec<String> = args
                .usernames
                .iter()
                .map(|n| n.trim().trim_start_matches('@').to_owned())
                .filter(|n| !n.is_empty())
                .collect();
            let users = self.shared.client.users_by_usernames(&names).await?;
            let missing: Vec<String> = names
                .iter()
                .filter(|n| !users.iter().any(|u| u.username.eq_ignore_ascii_case(n)))
                .cloned()
                .collect();
            (users, missing)
        };
        let statuses = if users.is_empty() {
            Vec::new()
        } else {
            self.statuses_of(users).await?
        };
        let mut text = String::new();
        for s in &statuses {
            let _ = write!(text, "@{}: {}", s.username, s.status);
            if let Some(until) = &s.dnd_until {
                let _ = write!(text, " until {until}");
            }
            if s.custom_text.is_some() || s.custom_emoji.is_some() {
                let _ = write!(
                    text,
                    "; custom status (their text): {}{}",
                    s.custom_emoji
                        .as_ref()
                        .map(|e| format!(":{e}: "))
                        .unwrap_or_default(),
                    s.custom_text.clone().unwrap_or_default()
                );
            }
            text.push('\n');
        }
        if !not_found.is_empty() {
            let _ = writeln!(text, "No account named: {}", not_found.join(", "));
        }
        done(
            text,
            &StatusesOut {
                statuses,
                not_found,
            },
        )
    }
    /// The presences of these accounts, with their custom statuses.
    pub(crate) async fn statuses_of(&self, users: Vec<User>) -> Result<Vec<StatusOut>, ToolError> {
        let ids: Vec<&str> = users.iter().map(|u| u.id.as_str()).collect();
        let statuses = self.shared.client.statuses(&ids).await?;
        let customs = self.shared.client.custom_statuses(&ids).await?;
        Ok(users
            .iter()
            .map(|user| {
                let status = statuses
                    .iter()
                    .find(|s| s.user_id == user.id)
                    .cloned()
                    .unwrap_or_default();
                let custom = customs
                    .iter()
                    .find(|(id, _)| *id == user.id)
                    .map(|(_, c)| c);
                StatusOut {
                    username: user.username.clone(),
                    user_id: user.id.clone(),
                    status: if status.status.is_empty() {
                        "offline".to_owned()
                    } else {
                        status.status.clone()
                    },
                    manual: status.manual,
                    dnd_until: (status.status == "dnd" && status.dnd_end_time > 0)
                        .then(|| iso_utc(status.dnd_end_time * 1000)),
                    custom_text: custom.map(|c| c.text.clone()).filter(|t| !t.is_empty()),
                    custom_emoji: custom.map(|c| c.emoji.clone()).filter(|e| !e.is_empty()),
                    custom_until: custom
                        .map(|c| c.expires_at.clone())
                        .filter(|e| !e.is_empty() && !e.starts_with("0001")),
                }
            })
            .collect())
    }
    pub(crate) async fn mark_channel_read_impl(
        &self,
        args: OneChannelArgs,
    ) -> Result<CallToolResult, ToolError> {
        let (channel, _) = self
            .resolve_channel(&args.channel_id, args.team_id.as_deref())
            .await?;
        let me = self.me().await?;
        if self
            .shared
            .client
            .channel_member(&channel.id, &me.id)
            .await?
            .is_none()
        {
            return Err(ToolError::Tool(format!(
                "you are not in ~{}, so it has nothing unread for you; nothing was changed.",
                channel.name
            )));
        }
        self.shared.client.view_channel(&channel.id).await?;
        let text = format!("Marked ~{} as read (for you only).", channel.name);
        done(
            text.clone(),
            &ChangedOut {
                done: text,
                channel: Some(ChannelOut::from(&channel)),
                added: Vec::new(),
                status: None,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_times_with_an_offset_are_read_and_others_refused() {
        assert_eq!(rfc3339_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            rfc3339_ms("2026-12-01T18:00:00+01:00"),
            rfc3339_ms("2026-12-01T17:00:00Z")
        );
        assert_eq!(rfc3339_ms("2026-03-02T09:00Z"), Some(1_772_442_000_000));
        for bad in ["2026-12-01T17:00:00", "tomorrow", "2026-13-01T00:00Z", ""] {
            assert_eq!(rfc3339_ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_status_change_needs_something_to_change_and_dnd_for_an_end() {
        assert!(status_change(&SetStatusArgs::default()).is_err());
        let away_until = SetStatusArgs {
            status: Some("away".into()),
            dnd_until: Some("2026-12-01T17:00:00Z".into()),
            ..SetStatusArgs::default()
        };
        assert!(status_change(&away_until).is_err());
        let dnd = SetStatusArgs {
            status: Some("DND".into()),
            dnd_until: Some("2026-12-01T17:00:00Z".into()),
            ..SetStatusArgs::default()
        };
        let wanted = status_change(&dnd).unwrap();
        assert_eq!(wanted.status.as_deref(), Some("dnd"));
        assert_eq!(wanted.dnd_end_s, 1_796_144_400);
        let custom = SetStatusArgs {
            custom_emoji: Some(":palm_tree:".into()),
            custom_text: Some("On holiday".into()),
            ..SetStatusArgs::default()
        };
        let wanted = status_change(&custom).unwrap();
        assert_eq!(wanted.custom.unwrap().emoji, "palm_tree");
    }

    #[test]
    fn bad_channel_names_are_refused_with_a_usable_suggestion() {
        for bad in ["Release Plans", "a", "-x-", "x__y"] {
            assert!(!valid_channel_name(bad), "{bad}");
            assert!(valid_channel_name(&suggest_name(bad)), "{bad}");
        }
        assert_eq!(suggest_name("Release Plans"), "release-plans");
        assert!(valid_channel_name("release-2026"));
    }
}
