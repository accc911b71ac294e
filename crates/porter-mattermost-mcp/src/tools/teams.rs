//! The tools about teams: `get_user_teams`, `get_team_info`,
//! `list_team_channels`, `list_archived_channels`.

use std::fmt::Write as _;

use porter_mattermost::Channel;
use porter_mcp::tool::{Hints, ToolError, done};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::output::{ChannelOut, TeamOut, TeamsOut};
use crate::paging::{LIST, all_pages, page_text, paged};
use crate::render::{channel_line, team_line};
use crate::server::MattermostServer;
use crate::tools::Reply;

/// A page of a list.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct PageArgs {
    /// Most items in this page (default 50, at most 200).
    #[serde(default)]
    pub limit: Option<u32>,
    /// The next_cursor of the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}

paged!(PageArgs, TeamChannelsArgs);

method_tools! {
    /// `get_user_teams`: My teams.
    GetUserTeams = get_user_teams_impl(args) {
        name: "get_user_teams", title: "My teams", hints: Hints::READ, args: PageArgs, out: TeamsOut,
        description: "The teams you belong to.",
    }
    /// `get_team_info`: Get a team.
    GetTeamInfo = get_team_info_impl(args) {
        name: "get_team_info", title: "Get a team", hints: Hints::READ, args: TeamArgs, out: TeamInfoOut,
        description: "Shows a team: its id, names and description.",
    }
}

impl MattermostServer {
    pub(crate) async fn get_user_teams_impl(&self, args: PageArgs) -> Reply {
        let paging = self.paging::<_, usize>("get_user_teams", &args, LIST)?;
        let mut teams = self.my_teams().await?;
        teams.sort_by(|a, b| a.name.cmp(&b.name));
        let all: Vec<TeamOut> = teams.iter().map(TeamOut::from).collect();
        let (page, next) = self.slice(&paging, &all);
        let none = if all.is_empty() {
            "You belong to no team.\n".to_owned()
        } else {
            String::new()
        };
        let text = page_text(none, page.iter().map(team_line), next.as_ref(), "teams");
        done(
            text,
            &TeamsOut {
                teams: page,
                next_cursor: next,
            },
        )
    }
}

/// `SERVER_PAGE` is how many channels are asked of Mattermost at once.
pub(crate) const SERVER_PAGE: u32 = 200;

/// A team, or the only one.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct TeamArgs {
    /// The team: its id or name; leave out when you are in one team.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
}

/// A page of a team's channels.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct TeamChannelsArgs {
    /// The team: its id or name; leave out for all your teams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
    /// How many channels to return (default 50, at most 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// The next_cursor of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// `TeamInfoOut` is one team.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TeamInfoOut {
    /// The team.
    pub team: TeamOut,
}

/// `ChannelListOut` is a page of channels.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ChannelListOut {
    /// The channels.
    pub channels: Vec<ChannelOut>,
    /// Pass this as `cursor` (with the same other arguments) for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

method_tools! {
    /// `list_team_channels`: List a team's public channels.
    ListTeamChannels = team_channels_impl(args) {
        name: "list_team_channels", title: "List a team's public channels", hints: Hints::READ, args: TeamChannelsArgs, out: ChannelListOut,
        description: "Lists a team's public channels, joined or not (archived ones: list_archived_channels).",
    }
    /// `list_archived_channels`: List a team's archived channels.
    ListArchivedChannels = archived_channels_impl(args) {
        name: "list_archived_channels", title: "List a team's archived channels", hints: Hints::READ, args: TeamChannelsArgs, out: ChannelListOut,
        description: "Lists a team's archived channels (public ones, and private ones you were in).",
    }
}

impl MattermostServer {
    pub(crate) async fn get_team_info_impl(&self, args: TeamArgs) -> Reply {
        let team = self.one_team(args.team_id.as_deref()).await?;
        let team = self.shared.client.team(&team.id).await?;
        let out = TeamOut::from(&team);
        let mut text = format!("Team {} \"{}\" ({})", out.name, out.display_name, out.id);
        if !out.description.is_empty() {
            let _ = write!(
                text,
                "\nDescription (written by the team's admins): {}",
                out.description
            );
        }
        done(text, &TeamInfoOut { team: out })
    }

    pub(crate) async fn team_channels_impl(&self, args: TeamChannelsArgs) -> Reply {
        self.channel_list("list_team_channels", args, false).await
    }

    pub(crate) async fn archived_channels_impl(&self, args: TeamChannelsArgs) -> Reply {
        self.channel_list("list_archived_channels", args, true)
            .await
    }

    pub(crate) async fn channel_list(
        &self,
        tool: &'static str,
        args: TeamChannelsArgs,
        archived: bool,
    ) -> Reply {
        let paging = self.paging::<_, usize>(tool, &args, LIST)?;
        let teams = self.teams_for(args.team_id.as_deref()).await?;
        let client = &self.shared.client;
        let mut all: Vec<(Channel, String)> = Vec::new();
        for team in &teams {
            let found = all_pages(SERVER_PAGE, usize::MAX, |page| async move {
                let found = if archived {
                    client
                        .archived_channels(&team.id, page, SERVER_PAGE)
                        .await?
                } else {
                    client.team_channels(&team.id, page, SERVER_PAGE).await?
                };
                Ok::<_, ToolError>((found.len(), found))
            })
            .await?;
            all.extend(found.into_iter().map(|c| (c, team.name.clone())));
        }
        let (page, next) = self.slice(&paging, &all);
        let what = if archived { "archived" } else { "public" };
        let none = if all.is_empty() {
            format!("No {what} channels.\n")
        } else {
            String::new()
        };
        let channels: Vec<ChannelOut> = page.iter().map(|(c, _)| ChannelOut::from(c)).collect();
        let lines =
            (channels.iter().zip(&page)).map(|(out, (_, team))| channel_line(out, Some(team)));
        let text = page_text(none, lines, next.as_ref(), "channels");
        done(
            text,
            &ChannelListOut {
                channels,
                next_cursor: next,
            },
        )
    }
}
