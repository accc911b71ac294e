//! The tools about channels: `get_user_channels`, `get_channel_info`,
//! `search_channels`, `get_channel_stats` (read); `join_channel`,
//! `leave_channel`, `create_channel`, `add_channel_members` (ask first);
//! `mark_channel_read` (the person's own state, never asks).
//!
//! The asking tools share [`MattermostServer::ask_then_change`]: it looks
//! the change up (a [`Plan`]: the question and a fingerprint of what the
//! change acts on), asks with the same form and protocol rules as
//! `create_post` ([`MattermostServer::ask_first`]), and looks again just
//! before acting; a fingerprint that moved refuses.

use std::fmt::Write as _;

use porter_mattermost::Channel;
use porter_mattermost::ChannelType;
use porter_mattermost::CustomStatus;
use porter_mattermost::Error;
use porter_mattermost::NewChannel;
use porter_mattermost::Team;
use porter_mattermost::User;
use porter_mcp::tool::Hints;
use porter_mcp::tool::ToolError;
use porter_mcp::tool::done;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

use crate::ask::AskedChange;
use crate::ask::Looked;
use crate::ask::Question;
use crate::lookup::ChannelRef;
use crate::lookup::team_names;
use crate::names::name_key;
use crate::names::username;
use crate::output::ChannelInfoOut;
use crate::output::ChannelOut;
use crate::output::ChannelsOut;
use crate::output::StatusOut;
use crate::output::TeamOut;
use crate::paging::LIST;
use crate::paging::Paging;
use crate::paging::page_text;
use crate::paging::paged;
use crate::render::channel_line;
use crate::server::MattermostServer;
use crate::tools::Reply;

/// `MAX_ADD_MEMBERS` is the most people `add_channel_members` adds at once,
/// so the question can name every one.
pub(crate) const MAX_ADD_MEMBERS: usize = 20;

/// One channel.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct OneChannelArgs {
    // The channel, by id or name (and team).
    #[serde(flatten)]
    pub channel: ChannelRef,
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

/// What a change to `channel` did (adding `added`), as text and
/// `ChangedOut`.
pub(crate) fn channel_changed(text: String, channel: &Channel, added: Vec<String>) -> Reply {
    done(
        text.clone(),
        &ChangedOut {
            done: text,
            channel: Some(ChannelOut::from(channel)),
            added,
            status: None,
        },
    )
}

/// A change looked up: the question, and the fingerprint of what it acts
/// on, which must be the same just before acting.
pub(crate) struct Plan {
    pub(crate) title: String,
    pub(crate) question: String,
    pub(crate) fingerprint: String,
    pub(crate) act: Act,
}

/// What an asking call is about, as it arrived.
pub(crate) enum Look {
    Join(OneChannelArgs),
    Leave(OneChannelArgs),
    Create(CreateChannelArgs),
    Add(AddMembersArgs),
    Status(StatusWanted),
}

/// The change to make once the person agreed.
pub(crate) enum Act {
    Membership(Membership),
    Create(Creation),
    Add(Addition),
    Status(StatusChange),
}

impl Looked for Plan {
    fn fingerprint(&self) -> &str {
        &self.fingerprint
    }
}

method_tools! {
    /// `get_channel_stats`: Count a channel.
    GetChannelStats = get_channel_stats_impl(args) {
        name: "get_channel_stats", title: "Count a channel", hints: Hints::READ, args: OneChannelArgs, out: ChannelStatsOut,
        description: "Counts a channel's members, guests, pinned posts and files.",
    }
    /// `mark_channel_read`: Mark a channel read.
    MarkChannelRead = mark_channel_read_impl(args) {
        name: "mark_channel_read", title: "Mark a channel read", hints: Hints::write(false, true), args: OneChannelArgs, out: ChangedOut,
        description: "Marks a channel you are in as read, for you only (others see no change), so it stops counting as unread. It changes only your own state, so porter does not ask the person.",
    }
    /// `get_user_channels`: My channels.
    GetUserChannels = get_user_channels_impl(args) {
        name: "get_user_channels", title: "My channels", hints: Hints::READ, args: UserChannelsArgs, out: ChannelsOut,
        description: "The channels you are a member of (public, private, direct and group messages), in one team or all.",
    }
    /// `get_channel_info`: Channel info.
    GetChannelInfo = get_channel_info_impl(args) {
        name: "get_channel_info", title: "Channel info", hints: Hints::READ, args: ChannelArgs, out: ChannelInfoOut,
        description: "One channel: its names, kind, team, header and purpose.",
    }
    /// `search_channels`: Search channels.
    SearchChannels = search_channels_impl(args) {
        name: "search_channels", title: "Search channels", hints: Hints::READ, args: SearchChannelsArgs, out: ChannelsOut,
        description: "Finds your channels whose name or shown name contains a term (or is close to it).",
    }
}

method_tools! {
    /// `join_channel`: Join a channel.
    JoinChannel = ask_then_change(tool, args, call, Look::Join) {
        name: "join_channel", title: "Join a channel", hints: Hints::write(false, true), args: OneChannelArgs, out: ChangedOut,
        description: "Joins a public channel of one of your teams; its members see that you joined.",
    }
    /// `leave_channel`: Leave a channel.
    LeaveChannel = ask_then_change(tool, args, call, Look::Leave) {
        name: "leave_channel", title: "Leave a channel", hints: Hints::write(true, true), args: OneChannelArgs, out: ChangedOut,
        description: "Leaves a channel you are in (not a team's Town Square); its members see that you left, and you can rejoin a private one only when a member adds you.",
    }
    /// `create_channel`: Create a channel.
    CreateChannel = ask_then_change(tool, args, call, Look::Create) {
        name: "create_channel", title: "Create a channel", hints: Hints::write(false, false), args: CreateChannelArgs, out: ChangedOut,
        description: "Creates a public (or, with private, a private) channel in one of your teams, with you as its first member.",
    }
}

porter_mcp::tool! {
    /// `add_channel_members`: Add people to a channel.
    pub(crate) AddChannelMembers for MattermostServer {
        name: "add_channel_members", title: "Add people to a channel", hints: Hints::write(false, true), args: AddMembersArgs, out: ChangedOut,
        description: "Adds 1 to 20 people (by username) to a channel you are in; the question names every one, and those already in it are left as they are.",
        call: |server, args, call| {
            if args.usernames.is_empty() || args.usernames.len() > MAX_ADD_MEMBERS {
                return Err(ToolError::Tool(format!(
                    "add_channel_members adds 1 to {MAX_ADD_MEMBERS} people at once and {} were named; split the list. Nothing was changed.",
                    args.usernames.len()
                )));
            }
            server
                .ask_then_change(Self::NAME, args, call, Look::Add)
                .await
        },
    }
}

// ----- asking -----

impl AskedChange for Look {
    type Found = Plan;

    async fn look(&self, server: &MattermostServer) -> Result<Plan, ToolError> {
        server.plan(self).await
    }

    fn question(&self, plan: &Plan) -> Question {
        let (label, about) = box_words(self);
        Question {
            title: plan.title.clone(),
            text: plan.question.clone(),
            label,
            about,
        }
    }

    fn changed(&self, tool: &str, _: &Self::Found) -> ToolError {
        ToolError::Tool(format!(
            "what {tool} would change is no longer what the person was asked about (it changed in Mattermost meanwhile); nothing was changed. Call {tool} again to ask about it as it is now."
        ))
    }

    async fn make(&self, server: &MattermostServer, plan: Plan) -> Reply {
        server.make_change(plan.act).await
    }
}

/// The label and description of the question's box, naming the tool's
/// own action.
pub(crate) fn box_words(look: &Look) -> (&'static str, &'static str) {
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

/// Joining (`join`) or leaving: who, where.
pub(crate) struct Membership {
    channel: Channel,
    me: String,
    join: bool,
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
    pub(crate) status: Option<String>,
    pub(crate) dnd_end_s: i64,
    pub(crate) custom: Option<CustomStatus>,
    pub(crate) clear_custom: bool,
}

/// A status change looked up.
pub(crate) struct StatusChange {
    pub(crate) me: User,
    pub(crate) wanted: StatusWanted,
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
    pub(crate) async fn plan(&self, look: &Look) -> Result<Plan, ToolError> {
        match look {
            Look::Join(args) => self.membership_plan(args, true).await,
            Look::Leave(args) => self.membership_plan(args, false).await,
            Look::Create(args) => self.create_plan(args).await,
            Look::Add(args) => self.add_plan(args).await,
            Look::Status(wanted) => self.status_plan(wanted).await,
        }
    }

    /// Makes a change the person agreed to.
    pub(crate) async fn make_change(&self, act: Act) -> Reply {
        match act {
            Act::Membership(m) => self.membership_act(m).await,
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
        let (channel, team) = self.channel_at(&args.channel).await?;
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
            act: Act::Membership(Membership {
                channel,
                me: me.id,
                join,
            }),
        })
    }

    pub(crate) async fn membership_act(&self, m: Membership) -> Reply {
        let client = &self.shared.client;
        let text = if m.join {
            client.add_channel_members(&m.channel.id, &[&m.me]).await?;
            format!("You joined ~{}.", m.channel.name)
        } else {
            client.remove_channel_member(&m.channel.id, &m.me).await?;
            format!("You left ~{}.", m.channel.name)
        };
        channel_changed(text, &m.channel, Vec::new())
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

    pub(crate) async fn create_act(&self, c: Creation) -> Reply {
        let channel = self.shared.client.create_channel(&c.channel).await?;
        let text = format!("Created ~{} ({}).", channel.name, channel.id);
        channel_changed(text, &channel, Vec::new())
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
            let name = username(name);
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

    pub(crate) async fn add_act(&self, a: Addition) -> Reply {
        let ids: Vec<&str> = a.people.iter().map(|u| u.id.as_str()).collect();
        self.shared
            .client
            .add_channel_members(&a.channel.id, &ids)
            .await?;
        let added: Vec<String> = a.people.iter().map(|u| u.username.clone()).collect();
        let names: Vec<String> = added.iter().map(|u| format!("@{u}")).collect();
        let text = format!("Added {} to ~{}.", names.join(", "), a.channel.name);
        channel_changed(text, &a.channel, added)
    }
}

/// Reads an RFC 3339 time with its offset (`YYYY-MM-DDTHH:MM[:SS[.fff]]`
/// then `Z` or `±HH:MM`) as ms since the epoch; none without an offset.
pub(crate) fn rfc3339_ms(text: &str) -> Option<i64> {
    let at: jiff::Timestamp = text.trim().parse().ok()?;
    Some(at.as_millisecond())
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
    pub(crate) async fn get_channel_stats_impl(&self, args: OneChannelArgs) -> Reply {
        let (channel, _) = self.channel_at(&args.channel).await?;
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

    pub(crate) async fn mark_channel_read_impl(&self, args: OneChannelArgs) -> Reply {
        let (channel, _) = self.channel_at(&args.channel).await?;
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
        channel_changed(text, &channel, Vec::new())
    }
}

/// Channels of one team or all teams.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct UserChannelsArgs {
    /// The team, by id or name; all your teams when left out.
    #[serde(default)]
    pub team_id: Option<String>,
    /// Most channels in this page (default 50, at most 200).
    #[serde(default)]
    pub limit: Option<u32>,
    /// The next_cursor of the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// One channel.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct ChannelArgs {
    /// The channel: its id or name (`~town-square`, `town-square` or `Town Square`).
    pub channel_id: String,
    /// The team, by id or name, when the channel name is in several teams.
    #[serde(default)]
    pub team_id: Option<String>,
}

/// A channel search.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct SearchChannelsArgs {
    /// Part of the channel's name or shown name.
    pub term: String,
    // The team and the page, as `get_user_channels` takes them.
    #[serde(flatten)]
    pub page: UserChannelsArgs,
}

paged!(UserChannelsArgs);
paged!(page: SearchChannelsArgs);

pub(crate) fn kind_order(kind: ChannelType) -> u8 {
    match kind {
        ChannelType::Open => 0,
        ChannelType::Private => 1,
        ChannelType::Group => 2,
        ChannelType::Direct => 3,
        ChannelType::Unknown => 4,
    }
}

impl MattermostServer {
    pub(crate) async fn get_user_channels_impl(&self, args: UserChannelsArgs) -> Reply {
        let paging = self.paging::<_, usize>("get_user_channels", &args, LIST)?;
        let teams = self.teams_for(args.team_id.as_deref()).await?;
        let mut channels = self.my_channels(&teams).await?;
        channels.sort_by(|(a, _), (b, _)| {
            kind_order(a.kind)
                .cmp(&kind_order(b.kind))
                .then_with(|| a.name.cmp(&b.name))
        });
        self.channels_page(&paging, channels, &teams, "You are in no channel.")
            .await
    }

    pub(crate) async fn channels_page(
        &self,
        paging: &Paging<usize>,
        channels: Vec<(Channel, Option<Team>)>,
        teams: &[Team],
        none: &str,
    ) -> Reply {
        let (page, next) = self.slice(paging, &channels);
        let names = team_names(teams);
        let opening = if channels.is_empty() {
            format!("{none}\n")
        } else {
            String::new()
        };
        let mut out = Vec::with_capacity(page.len());
        for (channel, _) in page {
            out.push(ChannelOut::from(&self.named_channel(channel).await));
        }
        let lines = (out.iter())
            .map(|channel| channel_line(channel, names.get(&channel.team_id).map(String::as_str)));
        let text = page_text(opening, lines, next.as_ref(), "channels");
        done(
            text,
            &ChannelsOut {
                channels: out,
                next_cursor: next,
            },
        )
    }

    pub(crate) async fn get_channel_info_impl(&self, args: ChannelArgs) -> Reply {
        let (channel, team) = self
            .resolve_channel(&args.channel_id, args.team_id.as_deref())
            .await?;
        let out = ChannelInfoOut {
            channel: ChannelOut::from(&channel),
            team: team.as_ref().map(TeamOut::from),
        };
        let mut text = channel_line(&out.channel, team.as_ref().map(|t| t.name.as_str()));
        text.push('\n');
        done(text, &out)
    }

    pub(crate) async fn search_channels_impl(&self, args: SearchChannelsArgs) -> Reply {
        let paging = self.paging::<_, usize>("search_channels", &args, LIST)?;
        let key = name_key(&args.term);
        if key.is_empty() {
            return Err(ToolError::Tool(
                "term is empty; pass part of a channel's name".to_owned(),
            ));
        }
        let teams = self.teams_for(args.page.team_id.as_deref()).await?;
        let mut scored: Vec<(usize, (Channel, Option<Team>))> = Vec::new();
        for (channel, team) in self.my_channels(&teams).await? {
            let channel = self.named_channel(channel).await;
            let name = name_key(&channel.name);
            let shown = name_key(&channel.display_name);
            let score = if name == key || shown == key {
                0
            } else if name.contains(&key) || shown.contains(&key) {
                1
            } else {
                let d = porter_mcp::suggest::distance(&key, &name)
                    .min(porter_mcp::suggest::distance(&key, &shown));
                if d <= (key.chars().count() / 3).max(1) {
                    2 + d
                } else {
                    continue;
                }
            };
            scored.push((score, (channel, team)));
        }
        scored.sort_by(|(a, (ca, _)), (b, (cb, _))| a.cmp(b).then_with(|| ca.name.cmp(&cb.name)));
        let channels: Vec<(Channel, Option<Team>)> = scored.into_iter().map(|(_, c)| c).collect();
        let none = format!(
            "None of your channels is named like {:?}; get_user_channels lists them all.",
            args.term
        );
        self.channels_page(&paging, channels, &teams, &none).await
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
    fn bad_channel_names_are_refused_with_a_usable_suggestion() {
        for bad in ["Release Plans", "a", "-x-", "x__y"] {
            assert!(!valid_channel_name(bad), "{bad}");
            assert!(valid_channel_name(&suggest_name(bad)), "{bad}");
        }
        assert_eq!(suggest_name("Release Plans"), "release-plans");
        assert!(valid_channel_name("release-2026"));
    }
}
