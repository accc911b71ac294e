//! The tools about posts: `read_channel`, `search_posts`, `save_post`,
//! `set_post_reminder`.

use std::collections::HashSet;
use std::str::FromStr as _;

use porter_mattermost::ChannelPosts;
use porter_mattermost::Error;
use porter_mattermost::FLAGGED_POST;
use porter_mattermost::Post;
use porter_mattermost::Preference;
use porter_mattermost::Search;
use porter_mattermost::Team;
use porter_mcp::tool::Call;
use porter_mcp::tool::Hints;
use porter_mcp::tool::Outcome;
use porter_mcp::tool::Tool;
use porter_mcp::tool::ToolError;
use porter_mcp::tool::done;
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;

use crate::MattermostServer;
use crate::output::ChannelOut;
use crate::output::DoneOut;
use crate::output::PostsOut;
use crate::paging::SEARCH_DEPTH;
use crate::paging::SEARCH_FETCH;
use crate::paging::SearchArgs;
use crate::paging::more_line;
use crate::render::channel_line;
use crate::render::post_text;

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
    pub(crate) async fn save_post_impl(
        &self,
        args: SavePostArgs,
    ) -> Result<CallToolResult, ToolError> {
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

    pub(crate) async fn set_post_reminder_impl(
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
}
