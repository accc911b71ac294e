//! The read tools (and `save_file`), declared with rmcp's tool macros.
//!
//! Each tool declares a title and all four annotations, takes its
//! parameters as a typed struct (whose doc comments become the input
//! schema), and answers text for the model plus structured output described
//! by its output schema.

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;

use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::names::{Candidate, Match, find, looks_like_id, name_key, post_id_of};
use crate::output::{
    ChannelInfoOut, ChannelOut, ChannelsOut, FileOut, FilesOut, MeOut, PostOut, PostsOut,
    ReadFileOut, SavedOut, TeamOut, TeamsOut, ThreadOut, UserOut, UsersOut,
};
use crate::render::{channel_line, file_line, iso_utc, post_text, team_line, user_line};
use porter_mcp::tool::{Call, Hints, NoArgs, Outcome, Tool, ToolError, done};

use crate::{MattermostServer, lock};
use porter_mattermost::{
    Channel, ChannelPosts, ChannelType, Error, FileInfo, Post, Search, Team, User, UserSearch,
};

/// Default and largest page sizes.
const USERS_PAGE: usize = 20;
const USERS_MAX: usize = 100;
const LIST_PAGE: usize = 50;
const LIST_MAX: usize = 200;
const POSTS_PAGE: usize = 30;
const POSTS_MAX: usize = 200;
const SEARCH_PAGE: usize = 20;
const SEARCH_MAX: usize = 100;
/// Mattermost answers at most this many results per search page.
const SEARCH_FETCH: usize = 100;
/// The most results a search looks through, so a deep cursor stays cheap.
const SEARCH_DEPTH: usize = 1000;

// ----- parameters -----

/// Users by username or id.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct GetUsersArgs {
    /// Usernames, with or without `@`.
    #[serde(default)]
    pub usernames: Vec<String>,
    /// User ids.
    #[serde(default)]
    pub user_ids: Vec<String>,
    /// Most users in this page (default 20, at most 100).
    #[serde(default)]
    pub limit: Option<u32>,
    /// The next_cursor of the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// A user search.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct SearchUsersArgs {
    /// What to look for in usernames, names, nicknames and e-mail.
    pub term: String,
    /// Most users in this page (default 20, at most 100).
    #[serde(default)]
    pub limit: Option<u32>,
    /// The next_cursor of the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}

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

/// A page of a channel's posts.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct ReadChannelArgs {
    /// The channel: its id or name (`~town-square`, `town-square` or `Town Square`).
    pub channel_id: String,
    /// The team, by id or name, when the channel name is in several teams.
    #[serde(default)]
    pub team_id: Option<String>,
    /// Most posts in this page, newest first (default 30, at most 200).
    #[serde(default)]
    pub limit: Option<u32>,
    /// The next_cursor of the previous page (older posts).
    #[serde(default)]
    pub cursor: Option<String>,
}

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

/// A post or file search.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// Mattermost search terms: words, "exact phrases", from:alice, in:town-square, before:/after:/on: YYYY-MM-DD.
    pub terms: String,
    /// The team, by id or name; all your teams when left out.
    #[serde(default)]
    pub team_id: Option<String>,
    /// Most results in this page (default 20, at most 100).
    #[serde(default)]
    pub limit: Option<u32>,
    /// The next_cursor of the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// A file to read.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct ReadFileArgs {
    /// The file's id, as listed with its post.
    pub file_id: String,
    /// For text: the first line to show, from 1 (default 1).
    #[serde(default)]
    pub start_line: Option<u64>,
    /// For text: how many lines to show (default 500, at most 2000).
    #[serde(default)]
    pub line_count: Option<u64>,
}

/// A file to save.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct SaveFileArgs {
    /// The file's id, as listed with its post.
    pub file_id: String,
}

// ----- the tools -----

/// `get_me`: Who am I.
pub(crate) struct GetMe;

impl Tool<MattermostServer> for GetMe {
    type Args = NoArgs;
    type Out = MeOut;
    const NAME: &'static str = "get_me";
    const TITLE: &'static str = "Who am I";
    const DESCRIPTION: &'static str = "The Mattermost account porter acts as: username, name, id.";
    const HINTS: Hints = Hints::READ;

    async fn call(&self, server: &MattermostServer, _args: NoArgs, _call: Call) -> Outcome {
        Ok(server.get_me_impl().await?.into())
    }
}

/// `get_users`: Get users.
pub(crate) struct GetUsers;

impl Tool<MattermostServer> for GetUsers {
    type Args = GetUsersArgs;
    type Out = UsersOut;
    const NAME: &'static str = "get_users";
    const TITLE: &'static str = "Get users";
    const DESCRIPTION: &'static str =
        "Looks accounts up by username or id: names, position, whether deactivated.";
    const HINTS: Hints = Hints::READ;

    async fn call(&self, server: &MattermostServer, args: GetUsersArgs, _call: Call) -> Outcome {
        Ok(server.get_users_impl(args).await?.into())
    }
}

/// `search_users`: Search users.
pub(crate) struct SearchUsers;

impl Tool<MattermostServer> for SearchUsers {
    type Args = SearchUsersArgs;
    type Out = UsersOut;
    const NAME: &'static str = "search_users";
    const TITLE: &'static str = "Search users";
    const DESCRIPTION: &'static str =
        "Finds accounts whose username, name, nickname or e-mail match a term.";
    const HINTS: Hints = Hints::READ;

    async fn call(&self, server: &MattermostServer, args: SearchUsersArgs, _call: Call) -> Outcome {
        Ok(server.search_users_impl(args).await?.into())
    }
}

/// `get_user_teams`: My teams.
pub(crate) struct GetUserTeams;

impl Tool<MattermostServer> for GetUserTeams {
    type Args = PageArgs;
    type Out = TeamsOut;
    const NAME: &'static str = "get_user_teams";
    const TITLE: &'static str = "My teams";
    const DESCRIPTION: &'static str = "The teams you belong to.";
    const HINTS: Hints = Hints::READ;

    async fn call(&self, server: &MattermostServer, args: PageArgs, _call: Call) -> Outcome {
        Ok(server.get_user_teams_impl(args).await?.into())
    }
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

/// `read_channel`: Read a channel.
pub(crate) struct ReadChannel;

impl Tool<MattermostServer> for ReadChannel {
    type Args = ReadChannelArgs;
    type Out = PostsOut;
    const NAME: &'static str = "read_channel";
    const TITLE: &'static str = "Read a channel";
    const DESCRIPTION: &'static str = "A channel's posts, newest first, each with its author, time, permalink and files. Page back with next_cursor.";
    const HINTS: Hints = Hints::READ;

    async fn call(&self, server: &MattermostServer, args: ReadChannelArgs, _call: Call) -> Outcome {
        Ok(server.read_channel_impl(args).await?.into())
    }
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

/// `search_posts`: Search posts.
pub(crate) struct SearchPosts;

impl Tool<MattermostServer> for SearchPosts {
    type Args = SearchArgs;
    type Out = PostsOut;
    const NAME: &'static str = "search_posts";
    const TITLE: &'static str = "Search posts";
    const DESCRIPTION: &'static str = "Searches posts with Mattermost's search syntax (words, \"phrases\", from:, in:, before:, after:, on:), newest first.";
    const HINTS: Hints = Hints::READ;

    async fn call(&self, server: &MattermostServer, args: SearchArgs, _call: Call) -> Outcome {
        Ok(server.search_posts_impl(args).await?.into())
    }
}

/// `search_files`: Search files.
pub(crate) struct SearchFiles;

impl Tool<MattermostServer> for SearchFiles {
    type Args = SearchArgs;
    type Out = FilesOut;
    const NAME: &'static str = "search_files";
    const TITLE: &'static str = "Search files";
    const DESCRIPTION: &'static str = "Searches attached files by name (and content where the server indexes it); pass a result's id to read_file.";
    const HINTS: Hints = Hints::READ;

    async fn call(&self, server: &MattermostServer, args: SearchArgs, _call: Call) -> Outcome {
        Ok(server.search_files_impl(args).await?.into())
    }
}

/// `read_file`: Read an attached file.
pub(crate) struct ReadFile;

impl Tool<MattermostServer> for ReadFile {
    type Args = ReadFileArgs;
    type Out = ReadFileOut;
    const NAME: &'static str = "read_file";
    const TITLE: &'static str = "Read an attached file";
    const DESCRIPTION: &'static str = "Shows an attached file as content: text and the text of Word, Excel, PowerPoint and PDF files in windows of numbered lines (pass next_start_line as start_line for the next window), archives listed, images upright and scaled, small audio and video as themselves, anything else described with a link for the person. Files over 64 MiB are described without being downloaded.";
    const HINTS: Hints = Hints::READ;

    async fn call(&self, server: &MattermostServer, args: ReadFileArgs, call: Call) -> Outcome {
        Ok(server.read_file_impl(args, &call.context).await?.into())
    }
}

/// `save_file`: Save an attached file.
pub(crate) struct SaveFile;

impl Tool<MattermostServer> for SaveFile {
    type Args = SaveFileArgs;
    type Out = SavedOut;
    const NAME: &'static str = "save_file";
    const TITLE: &'static str = "Save an attached file";
    const DESCRIPTION: &'static str = "Saves an attached file into the person's download directory under its own name (made safe), never over an existing file: a name already taken gets \" (2)\" and so on. Saving the same file again answers the earlier copy. Use it when the person asks for a copy on their machine.";
    const HINTS: Hints = Hints::write(false, true);

    async fn call(&self, server: &MattermostServer, args: SaveFileArgs, _call: Call) -> Outcome {
        Ok(server.save_file_impl(args).await?.into())
    }
}

// ----- paging -----

/// `Paging` is one call's page: its arguments (to bind the next cursor to),
/// the position it starts at, and its size.
pub(crate) struct Paging<P> {
    pub args: Value,
    pub position: P,
    pub limit: usize,
}

impl MattermostServer {
    /// Reads `limit` and `cursor` for `tool`: a cursor must have been made
    /// for the same tool and other arguments.
    pub(crate) fn paging<A: Serialize, P: DeserializeOwned + Default>(
        &self,
        tool: &str,
        args: &A,
        limit: Option<u32>,
        cursor: Option<&str>,
        default: usize,
        max: usize,
    ) -> Result<Paging<P>, ToolError> {
        let args = serde_json::to_value(args).unwrap_or(Value::Null);
        let limit = match limit {
            Some(0) => {
                return Err(ToolError::Tool(
                    "limit counts from 1; pass 1 or more, or leave it out".to_owned(),
                ));
            }
            Some(n) => (n as usize).min(max),
            None => default,
        };
        let position = match cursor.filter(|c| !c.trim().is_empty()) {
            Some(cursor) => self.shared.cursors.open(tool, &args, cursor)?,
            None => P::default(),
        };
        Ok(Paging {
            args,
            position,
            limit,
        })
    }

    /// A cursor for the page after this one.
    pub(crate) fn next_cursor<P: Serialize>(
        &self,
        tool: &str,
        args: &Value,
        position: &P,
    ) -> String {
        self.shared.cursors.seal(tool, args, position)
    }

    /// The page of `items` at `offset`, and the cursor after it.
    pub(crate) fn slice<T: Clone>(
        &self,
        tool: &str,
        paging: &Paging<usize>,
        items: &[T],
    ) -> (Vec<T>, Option<String>) {
        let start = paging.position.min(items.len());
        let end = (start + paging.limit).min(items.len());
        let next = (end < items.len()).then(|| self.next_cursor(tool, &paging.args, &end));
        (items[start..end].to_vec(), next)
    }
}

pub(crate) fn more_line(text: &mut String, next: Option<&String>, what: &str) {
    if next.is_some() {
        let _ = writeln!(
            text,
            "More {what} follow: pass next_cursor as cursor (with the same other arguments)."
        );
    } else {
        let _ = writeln!(text, "That is the last page.");
    }
}

// ----- lookups -----

impl MattermostServer {
    /// A user by id, remembered for the life of the server.
    async fn user_by_id(&self, user_id: &str) -> Option<User> {
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
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for team in teams {
            for channel in self.shared.client.my_channels(&team.id).await? {
                if seen.insert(channel.id.clone()) {
                    let team = (!channel.team_id.is_empty()).then(|| team.clone());
                    out.push((channel, team));
                }
            }
        }
        Ok(out)
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

fn labels(found: &[Candidate], sigil: &str) -> String {
    found
        .iter()
        .map(|c| c.label(sigil))
        .collect::<Vec<_>>()
        .join("; ")
}

fn closest_note(near: &[Candidate], sigil: &str) -> String {
    if near.is_empty() {
        String::new()
    } else {
        format!("; the closest names are {}", labels(near, sigil))
    }
}

fn team_names(teams: &[Team]) -> BTreeMap<String, String> {
    teams
        .iter()
        .map(|t| (t.id.clone(), t.name.clone()))
        .collect()
}

// ----- the tools' bodies -----

impl MattermostServer {
    async fn get_me_impl(&self) -> Result<CallToolResult, ToolError> {
        let me = self.shared.client.me().await?;
        self.set_me(me.clone());
        let out = MeOut {
            user: UserOut::from(&me),
            server_url: self.shared.client.base_url().to_owned(),
        };
        let text = format!("You are {} on {}.\n", user_line(&out.user), out.server_url);
        done(text, &out)
    }

    async fn get_users_impl(&self, args: GetUsersArgs) -> Result<CallToolResult, ToolError> {
        let paging = self.paging::<_, usize>(
            "get_users",
            &args,
            args.limit,
            args.cursor.as_deref(),
            USERS_PAGE,
            USERS_MAX,
        )?;
        if args.usernames.is_empty() && args.user_ids.is_empty() {
            return Err(ToolError::Tool(
                "pass usernames or user_ids (search_users finds accounts by part of a name)"
                    .to_owned(),
            ));
        }
        let names: Vec<String> = args
            .usernames
            .iter()
            .map(|n| n.trim().trim_start_matches('@').to_owned())
            .filter(|n| !n.is_empty())
            .collect();
        let mut users = Vec::new();
        let mut not_found = Vec::new();
        if !names.is_empty() {
            let found = self.shared.client.users_by_usernames(&names).await?;
            for name in &names {
                match found.iter().find(|u| u.username.eq_ignore_ascii_case(name)) {
                    Some(user) => users.push(user.clone()),
                    None => not_found.push(format!("@{name}")),
                }
            }
        }
        for id in &args.user_ids {
            match self.shared.client.user(id.trim()).await {
                Ok(user) => users.push(user),
                Err(Error::NotFound { .. } | Error::BadRequest { .. }) => {
                    not_found.push(id.clone());
                }
                Err(other) => return Err(other.into()),
            }
        }
        let all: Vec<UserOut> = users.iter().map(UserOut::from).collect();
        let (page, next) = self.slice("get_users", &paging, &all);
        let mut text = String::new();
        for user in &page {
            let _ = writeln!(text, "{}", user_line(user));
        }
        if !not_found.is_empty() {
            let _ = writeln!(
                text,
                "No account for {}; search_users finds accounts by part of a name.",
                not_found.join(", ")
            );
        }
        more_line(&mut text, next.as_ref(), "users");
        done(
            text,
            &UsersOut {
                users: page,
                not_found,
                next_cursor: next,
            },
        )
    }

    async fn search_users_impl(&self, args: SearchUsersArgs) -> Result<CallToolResult, ToolError> {
        let paging = self.paging::<_, usize>(
            "search_users",
            &args,
            args.limit,
            args.cursor.as_deref(),
            USERS_PAGE,
            USERS_MAX,
        )?;
        let term = args.term.trim().trim_start_matches('@');
        if term.is_empty() {
            return Err(ToolError::Tool(
                "term is empty; pass part of a name".to_owned(),
            ));
        }
        let mut search = UserSearch::new(term);
        search.allow_inactive = true;
        search.limit = ((paging.position + paging.limit + 1).min(1000)) as u32;
        let users = self.shared.client.search_users(&search).await?;
        let all: Vec<UserOut> = users.iter().map(UserOut::from).collect();
        let (page, next) = self.slice("search_users", &paging, &all);
        let mut text = if page.is_empty() {
            format!("No account matches {term:?}.\n")
        } else {
            String::new()
        };
        for user in &page {
            let _ = writeln!(text, "{}", user_line(user));
        }
        more_line(&mut text, next.as_ref(), "users");
        done(
            text,
            &UsersOut {
                users: page,
                not_found: Vec::new(),
                next_cursor: next,
            },
        )
    }

    async fn get_user_teams_impl(&self, args: PageArgs) -> Result<CallToolResult, ToolError> {
        let paging = self.paging::<_, usize>(
            "get_user_teams",
            &args,
            args.limit,
            args.cursor.as_deref(),
            LIST_PAGE,
            LIST_MAX,
        )?;
        let mut teams = self.my_teams().await?;
        teams.sort_by(|a, b| a.name.cmp(&b.name));
        let all: Vec<TeamOut> = teams.iter().map(TeamOut::from).collect();
        let (page, next) = self.slice("get_user_teams", &paging, &all);
        let mut text = if all.is_empty() {
            "You belong to no team.\n".to_owned()
        } else {
            String::new()
        };
        for team in &page {
            let _ = writeln!(text, "{}", team_line(team));
        }
        more_line(&mut text, next.as_ref(), "teams");
        done(
            text,
            &TeamsOut {
                teams: page,
                next_cursor: next,
            },
        )
    }

    async fn get_user_channels_impl(
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

    async fn channels_page(
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

    async fn get_channel_info_impl(&self, args: ChannelArgs) -> Result<CallToolResult, ToolError> {
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

    async fn search_channels_impl(
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

    async fn read_channel_impl(&self, args: ReadChannelArgs) -> Result<CallToolResult, ToolError> {
        let paging = self.paging::<_, String>(
            "read_channel",
            &args,
            args.limit,
            args.cursor.as_deref(),
            POSTS_PAGE,
            POSTS_MAX,
        )?;
        let (channel, team) = self
            .resolve_channel(&args.channel_id, args.team_id.as_deref())
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
                .map(|oldest| self.next_cursor("read_channel", &paging.args, &oldest.id))
        } else {
            None
        };
        let posts = self.posts_out(posts).await;
        let channel_out = ChannelOut::from(&channel);
        let mut text = format!(
            "{} — {} posts, newest first{}:\n\n",
            channel_line(&channel_out, team.as_ref().map(|t| t.name.as_str())),
            posts.len(),
            if paging.position.is_empty() {
                ""
            } else {
                ", older than the previous page"
            }
        );
        for post in &posts {
            text.push_str(&post_text(post));
            text.push('\n');
        }
        more_line(&mut text, next.as_ref(), "older posts");
        done(
            text,
            &PostsOut {
                channel: Some(channel_out),
                posts,
                next_cursor: next,
            },
        )
    }

    async fn read_post_impl(&self, args: ReadPostArgs) -> Result<CallToolResult, ToolError> {
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

    /// Results `[0, end)` of a search in one team, fetched page by page.
    pub(crate) async fn search_team_posts(
        &self,
        team: &Team,
        terms: &str,
        end: usize,
    ) -> Result<Vec<Post>, ToolError> {
        let mut out = Vec::new();
        let mut page = 0u32;
        while out.len() < end {
            let mut search = Search::new(terms);
            search.page = page;
            search.per_page = SEARCH_FETCH as u32;
            let list = self.shared.client.search_posts(&team.id, &search).await?;
            let got = list.order.len();
            out.extend(list.into_ordered());
            if got < SEARCH_FETCH {
                break;
            }
            page += 1;
        }
        Ok(out)
    }

    async fn search_team_files(
        &self,
        team: &Team,
        terms: &str,
        end: usize,
    ) -> Result<Vec<FileInfo>, ToolError> {
        let mut out = Vec::new();
        let mut page = 0u32;
        while out.len() < end {
            let mut search = Search::new(terms);
            search.page = page;
            search.per_page = SEARCH_FETCH as u32;
            let list = self.shared.client.search_files(&team.id, &search).await?;
            let got = list.order.len();
            out.extend(list.into_ordered());
            if got < SEARCH_FETCH {
                break;
            }
            page += 1;
        }
        Ok(out)
    }

    fn search_paging(&self, tool: &str, args: &SearchArgs) -> Result<Paging<usize>, ToolError> {
        let paging = self.paging::<_, usize>(
            tool,
            args,
            args.limit,
            args.cursor.as_deref(),
            SEARCH_PAGE,
            SEARCH_MAX,
        )?;
        if args.terms.trim().is_empty() {
            return Err(ToolError::Tool(
                "terms is empty; pass words to search for".to_owned(),
            ));
        }
        if paging.position >= SEARCH_DEPTH {
            return Err(ToolError::Tool(format!(
                "porter looks through the first {SEARCH_DEPTH} results only; narrow the search (from:, in:, after:) instead of paging further"
            )));
        }
        Ok(paging)
    }

    async fn search_posts_impl(&self, args: SearchArgs) -> Result<CallToolResult, ToolError> {
        let paging = self.search_paging("search_posts", &args)?;
        let teams = self.teams_for(args.team_id.as_deref()).await?;
        let end = (paging.position + paging.limit + 1).min(SEARCH_DEPTH);
        let mut found = Vec::new();
        let mut seen = HashSet::new();
        for team in &teams {
            for post in self.search_team_posts(team, &args.terms, end).await? {
                if seen.insert(post.id.clone()) {
                    found.push(post);
                }
            }
        }
        found.sort_by(|a, b| b.create_at.cmp(&a.create_at).then_with(|| a.id.cmp(&b.id)));
        let (page, next) = self.slice("search_posts", &paging, &found);
        let posts = self.posts_out(page).await;
        let mut text = if found.is_empty() {
            format!("No post matches {:?}.\n", args.terms)
        } else {
            format!("Posts matching {:?}, newest first:\n\n", args.terms)
        };
        for post in &posts {
            text.push_str(&post_text(post));
            text.push('\n');
        }
        more_line(&mut text, next.as_ref(), "results");
        done(
            text,
            &PostsOut {
                channel: None,
                posts,
                next_cursor: next,
            },
        )
    }

    async fn search_files_impl(&self, args: SearchArgs) -> Result<CallToolResult, ToolError> {
        let paging = self.search_paging("search_files", &args)?;
        let teams = self.teams_for(args.team_id.as_deref()).await?;
        let end = (paging.position + paging.limit + 1).min(SEARCH_DEPTH);
        let mut found = Vec::new();
        let mut seen = HashSet::new();
        for team in &teams {
            for file in self.search_team_files(team, &args.terms, end).await? {
                if seen.insert(file.id.clone()) {
                    found.push(file);
                }
            }
        }
        found.sort_by(|a, b| b.create_at.cmp(&a.create_at).then_with(|| a.id.cmp(&b.id)));
        let all: Vec<FileOut> = found.iter().map(FileOut::from).collect();
        let (page, next) = self.slice("search_files", &paging, &all);
        let mut text = if all.is_empty() {
            format!("No file matches {:?}.\n", args.terms)
        } else {
            format!(
                "Files matching {:?} (names as their uploaders gave them):\n",
                args.terms
            )
        };
        for file in &page {
            let _ = writeln!(text, "{}", file_line(file));
        }
        more_line(&mut text, next.as_ref(), "results");
        done(
            text,
            &FilesOut {
                files: page,
                next_cursor: next,
            },
        )
    }
}

fn kind_order(kind: ChannelType) -> u8 {
    match kind {
        ChannelType::Open => 0,
        ChannelType::Private => 1,
        ChannelType::Group => 2,
        ChannelType::Direct => 3,
        ChannelType::Unknown => 4,
    }
}
