//! The client's calls for channels and presence: the account's channels,
//! one by id or name, direct and group channels, a team's public and
//! archived channels, channel stats and members, creating a channel,
//! marking one read, and status and custom status.

use reqwest::Method;
use serde::{Deserialize, Serialize};

use crate::client::{Ask, Client};
use crate::error::{Error, Target, Thing};
use crate::model::{Channel, Team};

/// `ChannelStats` are a channel's counts, as Mattermost reports them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ChannelStats {
    /// The channel.
    pub channel_id: String,
    /// Its members with active accounts.
    pub member_count: i64,
    /// Of those, guests.
    pub guest_count: i64,
    /// Its pinned posts.
    pub pinnedpost_count: i64,
    /// Its files (when asked for).
    pub files_count: i64,
}

/// `ChannelMember` is one person's membership of a channel.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ChannelMember {
    /// The channel.
    pub channel_id: String,
    /// The person.
    pub user_id: String,
    /// Their roles in it (`channel_user channel_admin`).
    pub roles: String,
    /// When they last read it (ms since the epoch).
    pub last_viewed_at: i64,
    /// How many of its posts they have seen.
    pub msg_count: i64,
    /// Mentions of them not yet read.
    pub mention_count: i64,
}

/// `NewChannel` is a channel to create in a team.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NewChannel {
    /// The team.
    pub team_id: String,
    /// The URL name (2–64 of `a-z 0-9 - _`).
    pub name: String,
    /// The shown name.
    pub display_name: String,
    /// `O` public or `P` private.
    #[serde(rename = "type")]
    pub kind: String,
    /// Its purpose line.
    pub purpose: String,
    /// Its header.
    pub header: String,
}

/// `Status` is someone's presence.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Status {
    /// Whose it is.
    pub user_id: String,
    /// `online`, `away`, `dnd` or `offline`.
    pub status: String,
    /// Whether they set it by hand.
    pub manual: bool,
    /// When they were last active (ms since the epoch).
    pub last_activity_at: i64,
    /// When do-not-disturb ends (seconds since the epoch); 0 for never.
    pub dnd_end_time: i64,
}

/// `CustomStatus` is the line (and emoji) someone shows next to their name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CustomStatus {
    /// The emoji's name, without colons.
    pub emoji: String,
    /// The text (at most 100 characters).
    pub text: String,
    /// `""`, `thirty_minutes`, `one_hour`, `four_hours`, `today`,
    /// `this_week` or `date_and_time`.
    pub duration: String,
    /// When it ends (RFC 3339), for `date_and_time`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub expires_at: String,
}

/// A user as far as their props go: where the custom status lives.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct UserProps {
    id: String,
    props: serde_json::Map<String, serde_json::Value>,
}

impl Client {
    /// `team` looks a team up by id.
    pub async fn team(&self, team_id: &str) -> Result<Team, Error> {
        let ask = Ask::new("read", Target::id(Thing::Team, team_id));
        self.get(&["teams", team_id], &[], &ask).await
    }

    /// `team_channels` is one page of a team's public, unarchived channels.
    pub async fn team_channels(
        &self,
        team_id: &str,
        page: u32,
        per_page: u32,
    ) -> Result<Vec<Channel>, Error> {
        let ask = Ask::new(
            "list the public channels of",
            Target::id(Thing::Team, team_id),
        );
        self.get_page(&["teams", team_id, "channels"], page, per_page, &ask)
            .await
    }

    /// `archived_channels` is one page of a team's archived channels the
    /// account may see.
    pub async fn archived_channels(
        &self,
        team_id: &str,
        page: u32,
        per_page: u32,
    ) -> Result<Vec<Channel>, Error> {
        let ask = Ask::new(
            "list the archived channels of",
            Target::id(Thing::Team, team_id),
        );
        self.get_page(
            &["teams", team_id, "channels", "deleted"],
            page,
            per_page,
            &ask,
        )
        .await
    }

    /// `channel_stats` are a channel's member, pinned post and file counts.
    /// Mattermost counts files unless asked not to (`exclude_files_count`),
    /// so no parameter is sent.
    pub async fn channel_stats(&self, channel_id: &str) -> Result<ChannelStats, Error> {
        let ask = Ask::new("count", Target::id(Thing::Channel, channel_id));
        self.get(&["channels", channel_id, "stats"], &[], &ask)
            .await
    }

    /// `channel_members` is one page of a channel's memberships.
    pub async fn channel_members(
        &self,
        channel_id: &str,
        page: u32,
        per_page: u32,
    ) -> Result<Vec<ChannelMember>, Error> {
        let ask = Ask::new(
            "list the members of",
            Target::id(Thing::Channel, channel_id),
        );
        self.get_page(&["channels", channel_id, "members"], page, per_page, &ask)
            .await
    }

    /// `channel_member` is one person's membership, or `None` when they
    /// are not in the channel.
    pub async fn channel_member(
        &self,
        channel_id: &str,
        user_id: &str,
    ) -> Result<Option<ChannelMember>, Error> {
        let ask = Ask::new(
            "read the membership of",
            Target::id(Thing::Channel, channel_id),
        );
        match self
            .get(&["channels", channel_id, "members", user_id], &[], &ask)
            .await
        {
            Ok(member) => Ok(Some(member)),
            Err(Error::NotFound { .. }) => Ok(None),
            Err(other) => Err(other),
        }
    }

    /// `add_channel_members` adds people to a channel (the account itself
    /// to join one) and answers their memberships. One person goes as
    /// `user_id`, which every Mattermost takes (and answers with one
    /// membership); several go as `user_ids`, which Mattermost takes from
    /// 9.3 on (and answers with a list).
    pub async fn add_channel_members(
        &self,
        channel_id: &str,
        user_ids: &[impl AsRef<str>],
    ) -> Result<Vec<ChannelMember>, Error> {
        let ids: Vec<&str> = user_ids.iter().map(AsRef::as_ref).collect();
        let ask = Ask::new("add members to", Target::id(Thing::Channel, channel_id));
        let segments = ["channels", channel_id, "members"];
        if let [one] = ids.as_slice() {
            let body = serde_json::json!({ "channel_id": channel_id, "user_id": one });
            let member: ChannelMember = self.post_json(&segments, &body, &ask).await?;
            return Ok(vec![member]);
        }
        let body = serde_json::json!({ "channel_id": channel_id, "user_ids": ids });
        self.post_json(&segments, &body, &ask).await
    }

    /// `remove_channel_member` takes someone (the account itself to leave)
    /// out of a channel.
    pub async fn remove_channel_member(
        &self,
        channel_id: &str,
        user_id: &str,
    ) -> Result<(), Error> {
        let ask = Ask::new(
            "remove a member from",
            Target::id(Thing::Channel, channel_id),
        );
        let _: serde_json::Value = self
            .send_json(
                Method::DELETE,
                &["channels", channel_id, "members", user_id],
                None::<&()>,
                &ask,
            )
            .await?;
        Ok(())
    }

    /// `create_channel` makes a public or private channel in a team.
    pub async fn create_channel(&self, channel: &NewChannel) -> Result<Channel, Error> {
        let ask = Ask::new("create", Target::name(Thing::Channel, &channel.name));
        self.post_json(&["channels"], channel, &ask).await
    }

    /// `view_channel` marks a channel read for the account.
    pub async fn view_channel(&self, channel_id: &str) -> Result<(), Error> {
        let ask = Ask::new("mark as read", Target::id(Thing::Channel, channel_id));
        let body = serde_json::json!({ "channel_id": channel_id, "prev_channel_id": "" });
        let _: serde_json::Value = self
            .post_json(&["channels", "members", "me", "view"], &body, &ask)
            .await?;
        Ok(())
    }

    /// `statuses` are the presences of these accounts.
    pub async fn statuses(&self, user_ids: &[impl AsRef<str>]) -> Result<Vec<Status>, Error> {
        let ids: Vec<&str> = user_ids.iter().map(AsRef::as_ref).collect();
        let ask = Ask::new("read the status of", Target::several(Thing::User, &ids));
        self.post_json(&["users", "status", "ids"], &ids, &ask)
            .await
    }

    /// `status` is one account's presence.
    pub async fn status(&self, user_id: &str) -> Result<Status, Error> {
        let ask = Ask::new("read the status of", Target::id(Thing::User, user_id));
        self.get(&["users", user_id, "status"], &[], &ask).await
    }

    /// `set_status` sets the account's own presence (`dnd_end_time` in
    /// seconds since the epoch, for `dnd`).
    pub async fn set_status(&self, status: &Status) -> Result<Status, Error> {
        let ask = Ask::new("set the status of", Target::own(Thing::User));
        self.send_json(
            Method::PUT,
            &["users", &status.user_id, "status"],
            Some(status),
            &ask,
        )
        .await
    }

    /// `set_custom_status` sets the account's custom status.
    pub async fn set_custom_status(&self, status: &CustomStatus) -> Result<(), Error> {
        let ask = Ask::new("set the custom status of", Target::own(Thing::User));
        let _: serde_json::Value = self
            .send_json(
                Method::PUT,
                &["users", "me", "status", "custom"],
                Some(status),
                &ask,
            )
            .await?;
        Ok(())
    }

    /// `clear_custom_status` removes the account's custom status.
    pub async fn clear_custom_status(&self) -> Result<(), Error> {
        let ask = Ask::new("clear the custom status of", Target::own(Thing::User));
        let _: serde_json::Value = self
            .send_json(
                Method::DELETE,
                &["users", "me", "status", "custom"],
                None::<&()>,
                &ask,
            )
            .await?;
        Ok(())
    }

    /// `custom_statuses` are the custom statuses of these accounts, read
    /// from their `props.customStatus`; accounts without one are left out.
    pub async fn custom_statuses(
        &self,
        user_ids: &[impl AsRef<str>],
    ) -> Result<Vec<(String, CustomStatus)>, Error> {
        let ids: Vec<&str> = user_ids.iter().map(AsRef::as_ref).collect();
        let ask = Ask::new("read", Target::several(Thing::User, &ids));
        let users: Vec<UserProps> = self.post_json(&["users", "ids"], &ids, &ask).await?;
        Ok(users
            .into_iter()
            .filter_map(|u| {
                let raw = u.props.get("customStatus")?.as_str()?;
                let status: CustomStatus = serde_json::from_str(raw).ok()?;
                (!status.text.is_empty() || !status.emoji.is_empty()).then_some((u.id, status))
            })
            .collect())
    }
}

impl Client {
    /// `my_channels` are the channels of a team the account is a member of,
    /// including its direct and group channels.
    pub async fn my_channels(&self, team_id: &str) -> Result<Vec<Channel>, Error> {
        let ask = Ask::new("list the channels of", Target::id(Thing::Team, team_id));
        self.get(&["users", "me", "teams", team_id, "channels"], &[], &ask)
            .await
    }

    /// `channel_by_name` looks a channel up by its URL name within a team.
    pub async fn channel_by_name(&self, team_id: &str, name: &str) -> Result<Channel, Error> {
        let target = Target::name(Thing::Channel, name).within(format!("in team {team_id:?}"));
        let ask = Ask::new("read", target);
        self.get(&["teams", team_id, "channels", "name", name], &[], &ask)
            .await
    }

    /// `channel` looks a channel up by id.
    pub async fn channel(&self, channel_id: &str) -> Result<Channel, Error> {
        let ask = Ask::new("read", Target::id(Thing::Channel, channel_id));
        self.get(&["channels", channel_id], &[], &ask).await
    }

    /// `direct_channel` opens (or finds) the direct channel between two
    /// users; `user_id` is usually the account's own id. Both ids may be the
    /// same for notes to oneself.
    pub async fn direct_channel(
        &self,
        user_id: &str,
        other_user_id: &str,
    ) -> Result<Channel, Error> {
        let ids = [user_id, other_user_id];
        let target = Target::several(Thing::User, &ids);
        let ask = Ask::new("open a direct channel with", target);
        self.post_json(&["channels", "direct"], &ids, &ask).await
    }

    /// `group_channel` opens (or finds) the group channel of these users
    /// (three to eight, the account included).
    pub async fn group_channel(&self, user_ids: &[impl AsRef<str>]) -> Result<Channel, Error> {
        let ids: Vec<&str> = user_ids.iter().map(AsRef::as_ref).collect();
        let ask = Ask::new(
            "open a group channel with",
            Target::several(Thing::User, &ids),
        );
        self.post_json(&["channels", "group"], &ids, &ask).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_channel_is_sent_with_mattermosts_field_names() {
        let channel = NewChannel {
            team_id: "t".into(),
            name: "release".into(),
            display_name: "Release".into(),
            kind: "P".into(),
            ..NewChannel::default()
        };
        let value = serde_json::to_value(&channel).unwrap();
        assert_eq!(value["type"], "P");
        assert_eq!(value["display_name"], "Release");
        assert!(value.get("kind").is_none());
    }

    #[test]
    fn a_custom_status_without_an_end_leaves_expires_at_out() {
        let status = CustomStatus {
            emoji: "palm_tree".into(),
            text: "Away".into(),
            ..CustomStatus::default()
        };
        let value = serde_json::to_value(&status).unwrap();
        assert!(value.get("expires_at").is_none());
        assert_eq!(value["duration"], "");
    }
}
