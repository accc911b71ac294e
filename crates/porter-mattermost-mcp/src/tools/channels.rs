//! The tools that read channels: `get_user_channels`, `get_channel_info`,
//! `search_channels`.

use std::fmt::Write as _;

use porter_mattermost::{Channel, ChannelType, Team};
use porter_mcp::tool::{Call, Hints, Outcome, Tool, ToolError, done};
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::MattermostServer;
use crate::lookup::team_names;
use crate::names::name_key;
use crate::output::{ChannelInfoOut, ChannelOut, ChannelsOut, TeamOut};
use crate::paging::{LIST_MAX, LIST_PAGE, Paging, more_line};
use crate::render::channel_line;

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

/// `get_user_channels`: My channels.
pub(crate) struct GetUserChannels;

impl Tool<MattermostServer> for GetUserChannels {
    type Args = UserChannelsArgs;
    type Out = ChannelsOut;
    const NAME: &'static str = "get_user_channels";
    const TITLE: &'static str = "My channels";
    const DESCRIPTION: &'static str = "The channels you are a member of (public, private, direct and group messages), in one team or all.";
    const HINTS: Hints = Hints::READ;

    async fn call(
        &self,
        server: &MattermostServer,
        args: UserChannelsArgs,
        _call: Call,
    ) -> Outcome {
        Ok(server.get_user_channels_impl(args).await?.into())
    }
}

/// `get_channel_info`: Channel info.
pub(crate) struct GetChannelInfo;

impl Tool<MattermostServer> for GetChannelInfo {
    type Args = ChannelArgs;
    type Out = ChannelInfoOut;
    const NAME: &'static str = "get_channel_info";
    const TITLE: &'static str = "Channel info";
    const DESCRIPTION: &'static str = "One channel: its names, kind, team, header and purpose.";
    const HINTS: Hints = Hints::READ;

    async fn call(&self, server: &MattermostServer, args: ChannelArgs, _call: Call) -> Outcome {
        Ok(server.get_channel_info_impl(args).await?.into())
    }
}

/// `search_channels`: Search channels.
pub(crate) struct SearchChannels;

impl Tool<MattermostServer> for SearchChannels {
    type Args = SearchChannelsArgs;
    type Out = ChannelsOut;
    const NAME: &'static str = "search_channels";
    const TITLE: &'static str = "Search channels";
    const DESCRIPTION: &'static str =
        "Finds your channels whose name or shown name contains a term (or is close to it).";
    const HINTS: Hints = Hints::READ;

    async fn call(
        &self,
        server: &MattermostServer,
        args: SearchChannelsArgs,
        _call: Call,
    ) -> Outcome {
        Ok(server.search_channels_impl(args).await?.into())
    }
}

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
    pub(crate) async fn get_user_channels_impl(
        &self,
        args: UserChannelsArgs,
    ) -> Result<CallToolResult, ToolError> {
        let paging = self.paging::<_, usize>(
            "get_user_channels",
            &args,
            args.limit,
            args.cursor.as_deref(),
            LIST_PAGE,
            LIST_MAX,
        )?;
        let teams = self.teams_for(args.team_id.as_deref()).await?;
        let mut channels = self.my_channels(&teams).await?;
        channels.sort_by(|(a, _), (b, _)| {
            kind_order(a.kind)
                .cmp(&kind_order(b.kind))
                .then_with(|| a.name.cmp(&b.name))
        });
        self.channels_page(
            "get_user_channels",
            &paging,
            channels,
            &teams,
            "You are in no channel.",
        )
        .await
    }

    pub(crate) async fn channels_page(
        &self,
        tool: &str,
        paging: &Paging<usize>,
        channels: Vec<(Channel, Option<Team>)>,
        teams: &[Team],
        none: &str,
    ) -> Result<CallToolResult, ToolError> {
        let (page, next) = self.slice(tool, paging, &channels);
        let names = team_names(teams);
        let mut text = if channels.is_empty() {
            format!("{none}\n")
        } else {
            String::new()
        };
        let mut out = Vec::with_capacity(page.len());
        for (channel, _) in page {
            let channel = ChannelOut::from(&self.named_channel(channel).await);
            let _ = writeln!(
                text,
                "{}",
                channel_line(&channel, names.get(&channel.team_id).map(String::as_str))
            );
            out.push(channel);
        }
        more_line(&mut text, next.as_ref(), "channels");
        done(
            text,
            &ChannelsOut {
                channels: out,
                next_cursor: next,
            },
        )
    }

    pub(crate) async fn get_channel_info_impl(
        &self,
        args: ChannelArgs,
    ) -> Result<CallToolResult, ToolError> {
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

    pub(crate) async fn search_channels_impl(
        &self,
        args: SearchChannelsArgs,
    ) -> Result<CallToolResult, ToolError> {
        let paging = self.paging::<_, usize>(
            "search_channels",
            &args,
            args.limit,
            args.cursor.as_deref(),
            LIST_PAGE,
            LIST_MAX,
        )?;
        let key = name_key(&args.term);
        if key.is_empty() {
            return Err(ToolError::Tool(
                "term is empty; pass part of a channel's name".to_owned(),
            ));
        }
        let teams = self.teams_for(args.team_id.as_deref()).await?;
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
                let d =
                    crate::names::distance(&key, &name).min(crate::names::distance(&key, &shown));
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
        self.channels_page("search_channels", &paging, channels, &teams, &none)
            .await
    }
}
