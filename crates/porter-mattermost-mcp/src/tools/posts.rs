//! The tools that read posts: `read_channel`, `search_posts`.

use std::collections::HashSet;

use porter_mattermost::{ChannelPosts, Post, Search, Team};
use porter_mcp::tool::{Call, Hints, Outcome, Tool, ToolError, done};
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::MattermostServer;
use crate::output::{ChannelOut, PostsOut};
use crate::paging::{SEARCH_DEPTH, SEARCH_FETCH, SearchArgs, more_line};
use crate::render::{channel_line, post_text};

pub(crate) const POSTS_PAGE: usize = 30;

pub(crate) const POSTS_MAX: usize = 200;

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

impl MattermostServer {
    pub(crate) async fn read_channel_impl(
        &self,
        args: ReadChannelArgs,
    ) -> Result<CallToolResult, ToolError> {
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

    pub(crate) async fn search_posts_impl(
        &self,
        args: SearchArgs,
    ) -> Result<CallToolResult, ToolError> {
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
}
