//! What tools share to find things by the names people use: teams and
//! channels by id or lenient name (with the closest names when nothing
//! fits), users remembered for the life of the server, posts by id or
//! permalink, and posts as the model reads them.

use std::collections::BTreeMap;

use porter_mattermost::{Channel, ChannelType, Error, Post, Team, User};
use porter_mcp::tool::ToolError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::names::{Candidate, Match, find, looks_like_id, post_id_of};
use crate::output::{FileOut, PostOut};
use crate::paging::each_once;
use crate::render::iso_utc;
use crate::server::{MattermostServer, lock};

/// A channel as the tools name it: by id or name, with the team when
/// the name is in several; flattened into a tool's arguments.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct ChannelRef {
    /// The channel: its id or name (`~town-square`, `town-square` or `Town Square`).
    pub channel_id: String,
    /// The team, by id or name, when the channel name is in several teams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
}

pub(crate) fn labels(found: &[Candidate], sigil: &str) -> String {
    found
        .iter()
        .map(|c| c.label(sigil))
        .collect::<Vec<_>>()
        .join("; ")
}

pub(crate) fn closest_note(near: &[Candidate], sigil: &str) -> String {
    if near.is_empty() {
        String::new()
    } else {
        format!("; the closest names are {}", labels(near, sigil))
    }
}

pub(crate) fn team_names(teams: &[Team]) -> BTreeMap<String, String> {
    teams
        .iter()
        .map(|t| (t.id.clone(), t.name.clone()))
        .collect()
}

impl MattermostServer {
    /// A user by id, remembered for the life of the server.
    pub(crate) async fn user_by_id(&self, user_id: &str) -> Option<User> {
        if let Some(user) = lock(&self.shared.users).get(user_id) {
            return Some(user.clone());
        }
        let user = self.shared.client.user(user_id).await.ok()?;
        lock(&self.shared.users).insert(user.id.clone(), user.clone());
        Some(user)
    }

    /// The teams the account belongs to.
    pub(crate) async fn my_teams(&self) -> Result<Vec<Team>, ToolError> {
        Ok(self.shared.client.my_teams().await?)
    }

    /// A team by id or (lenient) name among the account's teams.
    pub(crate) async fn resolve_team(&self, wanted: &str) -> Result<Team, ToolError> {
        let teams = self.my_teams().await?;
        let candidates: Vec<Candidate> = teams
            .iter()
            .map(|t| Candidate {
                id: t.id.clone(),
                name: t.name.clone(),
                display_name: t.display_name.clone(),
                place: String::new(),
            })
            .collect();
        match find(wanted, &candidates) {
            Match::One(c) => Ok(teams.into_iter().find(|t| t.id == c.id).unwrap_or_default()),
            Match::Ambiguous(found) => Err(ToolError::Tool(format!(
                "the team name {wanted:?} fits several of your teams: {}; pass the team's id as team_id",
                labels(&found, "")
            ))),
            Match::Unknown(near) => {
                let bare = wanted.trim().trim_start_matches('~');
                if !bare.is_empty()
                    && let Ok(team) = self.shared.client.team_by_name(bare).await
                {
                    return Ok(team);
                }
                Err(ToolError::Tool(format!(
                    "you belong to no team named {wanted:?}{}; get_user_teams lists your teams",
                    closest_note(&near, "")
                )))
            }
        }
    }

    /// The teams a call is about: one named team, or all of the account's.
    pub(crate) async fn teams_for(&self, team: Option<&str>) -> Result<Vec<Team>, ToolError> {
        match team.filter(|t| !t.trim().is_empty()) {
            Some(team) => Ok(vec![self.resolve_team(team).await?]),
            None => self.my_teams().await,
        }
    }

    /// The account's channels in `teams`, each once (direct and group
    /// channels show up under every team).
    pub(crate) async fn my_channels(
        &self,
        teams: &[Team],
    ) -> Result<Vec<(Channel, Option<Team>)>, ToolError> {
        each_once(
            teams,
            |(channel, _): &(Channel, Option<Team>)| channel.id.clone(),
            |team| async move {
                let channels = self.shared.client.my_channels(&team.id).await?;
                Ok(channels
                    .into_iter()
                    .map(|channel| {
                        let team = (!channel.team_id.is_empty()).then(|| team.clone());
                        (channel, team)
                    })
                    .collect())
            },
        )
        .await
    }

    /// Fills in the shown name of direct and group channels (Mattermost
    /// leaves it empty or as ids): who is in them.
    pub(crate) async fn named_channel(&self, mut channel: Channel) -> Channel {
        if channel.kind == ChannelType::Direct {
            let me = self.me().await.ok().map(|u| u.id).unwrap_or_default();
            let ids: Vec<String> = channel.name.split("__").map(str::to_owned).collect();
            let other = ids
                .iter()
                .find(|id| **id != me)
                .or_else(|| ids.first())
                .cloned()
                .unwrap_or_default();
            let name = match self.user_by_id(&other).await {
                Some(user) if user.id == me => format!("@{} (yourself)", user.username),
                Some(user) => format!("@{}", user.username),
                None => other,
            };
            channel.display_name = format!("with {name}");
        } else if channel.kind == ChannelType::Group && channel.display_name.is_empty() {
            channel.display_name = channel.name.clone();
        }
        channel
    }

    /// The channel a call's [`ChannelRef`] names.
    pub(crate) async fn channel_at(
        &self,
        at: &ChannelRef,
    ) -> Result<(Channel, Option<Team>), ToolError> {
        self.resolve_channel(&at.channel_id, at.team_id.as_deref())
            .await
    }

    /// A channel by id or (lenient) name, within `team` or all teams.
    pub(crate) async fn resolve_channel(
        &self,
        wanted: &str,
        team: Option<&str>,
    ) -> Result<(Channel, Option<Team>), ToolError> {
        let wanted = wanted.trim();
        if wanted.is_empty() {
            return Err(ToolError::Tool(
                "channel_id is empty; pass a channel's id or name (get_user_channels lists yours)"
                    .to_owned(),
            ));
        }
        if looks_like_id(wanted) {
            match self.shared.client.channel(wanted).await {
                Ok(channel) => {
                    let team = if channel.team_id.is_empty() {
                        None
                    } else {
                        self.my_teams()
                            .await
                            .ok()
                            .and_then(|teams| teams.into_iter().find(|t| t.id == channel.team_id))
                    };
                    return Ok((self.named_channel(channel).await, team));
                }
                Err(Error::NotFound { .. }) => {}
                Err(other) => return Err(other.into()),
            }
        }
        let teams = self.teams_for(team).await?;
        let channels = self.my_channels(&teams).await?;
        let candidates: Vec<Candidate> = channels
            .iter()
            .filter(|(c, _)| matches!(c.kind, ChannelType::Open | ChannelType::Private))
            .map(|(c, t)| Candidate {
                id: c.id.clone(),
                name: c.name.clone(),
                display_name: c.display_name.clone(),
                place: t
                    .as_ref()
                    .map(|t| format!("team {}", t.name))
                    .unwrap_or_default(),
            })
            .collect();
        match find(wanted, &candidates) {
            Match::One(c) => {
                let (channel, team) = channels
                    .into_iter()
                    .find(|(ch, _)| ch.id == c.id)
                    .unwrap_or_default();
                Ok((self.named_channel(channel).await, team))
            }
            Match::Ambiguous(found) => Err(ToolError::Tool(format!(
                "the channel name {wanted:?} fits several channels: {}; pass the channel's id as channel_id, or the team as team_id",
                labels(&found, "~")
            ))),
            Match::Unknown(near) => {
                // A public channel the account has not joined is not in its
                // list; ask each team for it by its URL name.
                let bare = wanted.trim_start_matches('~');
                for team in &teams {
                    if let Ok(channel) = self.shared.client.channel_by_name(&team.id, bare).await {
                        return Ok((channel, Some(team.clone())));
                    }
                }
                let scope = match team {
                    Some(team) => format!(" in team {team:?}"),
                    None => String::new(),
                };
                Err(ToolError::Tool(format!(
                    "no channel named {wanted:?} among your channels{scope}{}; search_channels finds channels by part of their name",
                    closest_note(&near, "~")
                )))
            }
        }
    }

    /// A post id from an id or permalink.
    pub(crate) fn post_id(wanted: &str) -> Result<String, ToolError> {
        post_id_of(wanted).ok_or_else(|| {
            ToolError::Tool(format!(
                "{wanted:?} is neither a post id (26 letters and digits) nor a permalink (…/_redirect/pl/<id> or …/<team>/pl/<id>); pass one of those as post_id"
            ))
        })
    }

    /// The posts as the tools show them: author names and files filled in.
    pub(crate) async fn posts_out(&self, posts: Vec<Post>) -> Vec<PostOut> {
        let mut out = Vec::with_capacity(posts.len());
        for post in posts {
            out.push(self.post_out(post).await);
        }
        out
    }

    /// One post as the tools show it.
    pub(crate) async fn post_out(&self, post: Post) -> PostOut {
        let username = self
            .user_by_id(&post.user_id)
            .await
            .map(|u| u.username)
            .unwrap_or_default();
        let mut files: Vec<FileOut> = post.metadata.files.iter().map(FileOut::from).collect();
        if files.is_empty()
            && !post.file_ids.is_empty()
            && let Ok(infos) = self.shared.client.post_file_infos(&post.id).await
        {
            files = infos.iter().map(FileOut::from).collect();
        }
        for file in &mut files {
            if file.post_id.is_empty() {
                file.post_id.clone_from(&post.id);
            }
        }
        PostOut {
            permalink: self.shared.client.permalink(&post.id),
            created: iso_utc(post.create_at),
            id: post.id,
            channel_id: post.channel_id,
            root_id: post.root_id,
            user_id: post.user_id,
            username,
            message: post.message,
            create_at: post.create_at,
            edit_at: post.edit_at,
            kind: post.kind,
            is_pinned: post.is_pinned,
            reply_count: post.reply_count,
            files,
        }
    }
}
