//! The client's calls for posts and threads: a channel's posts, one post
//! and its thread, posting, searching, unread counts, followed threads,
//! pinned and saved posts, edits, deletions, pins, reactions.

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::channels::ChannelMember;
use crate::client::{Ask, Client};
use crate::error::{Error, Target, Thing};
use crate::model::{ChannelPosts, NewPost, Post, PostList, Search, User, nullable};

/// `Reaction` is one person's emoji on one post.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Reaction {
    /// Who reacted.
    #[serde(deserialize_with = "nullable")]
    pub user_id: String,
    /// The post.
    #[serde(deserialize_with = "nullable")]
    pub post_id: String,
    /// The emoji's name, without colons (`thumbsup`).
    #[serde(deserialize_with = "nullable")]
    pub emoji_name: String,
    /// When (epoch milliseconds).
    pub create_at: i64,
}

/// `UserThread` is one thread the account follows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct UserThread {
    /// The root post's id.
    #[serde(deserialize_with = "nullable")]
    pub id: String,
    /// How many replies it has.
    pub reply_count: i64,
    /// The newest reply's time (epoch milliseconds).
    pub last_reply_at: i64,
    /// When the account last viewed it.
    pub last_viewed_at: i64,
    /// Who took part (users, perhaps with only their ids).
    #[serde(deserialize_with = "nullable")]
    pub participants: Vec<User>,
    /// The root post.
    #[serde(deserialize_with = "nullable")]
    pub post: Post,
    /// Replies not yet read.
    pub unread_replies: i64,
    /// Mentions of the account not yet read.
    pub unread_mentions: i64,
}

/// `UserThreadList` is a page of followed threads and the totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct UserThreadList {
    /// This page, most recent reply first.
    #[serde(deserialize_with = "nullable")]
    pub threads: Vec<UserThread>,
    /// Threads followed in all.
    pub total: i64,
    /// Threads with unread replies.
    pub total_unread_threads: i64,
    /// Unread mentions in all threads.
    pub total_unread_mentions: i64,
}

/// `PostPatch` changes only the fields it carries; `props` replaces the
/// post's whole map, so pass the old one with the additions.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PostPatch {
    /// The new message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The new props (the whole map).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub props: Option<Map<String, Value>>,
}

/// `StatusOk` is the server's `{"status":"OK"}`.
#[derive(Debug, Deserialize)]
struct StatusOk {}

impl Client {
    /// `my_channel_members` are the account's memberships of a team's
    /// channels (with its direct and group channels): read counts per
    /// channel.
    pub async fn my_channel_members(&self, team_id: &str) -> Result<Vec<ChannelMember>, Error> {
        let ask = Ask::new(
            "read the unread counts of",
            Target::id(Thing::Team, team_id),
        );
        self.get(
            &["users", "me", "teams", team_id, "channels", "members"],
            &[],
            &ask,
        )
        .await
    }

    /// `users_page` is one page of every account, sorted by username.
    pub async fn users_page(&self, page: u32, per_page: u32) -> Result<Vec<User>, Error> {
        let ask = Ask::new("list", Target::several(Thing::User, &["all"]));
        self.get_page(&["users"], page, per_page, &ask).await
    }

    /// `pinned_posts` are a channel's pinned posts.
    pub async fn pinned_posts(&self, channel_id: &str) -> Result<PostList, Error> {
        let ask = Ask::new(
            "read the pinned posts of",
            Target::id(Thing::Channel, channel_id),
        );
        self.get(&["channels", channel_id, "pinned"], &[], &ask)
            .await
    }

    /// `flagged_posts` is one page of the posts the account saved, newest
    /// first.
    pub async fn flagged_posts(&self, page: u32, per_page: u32) -> Result<PostList, Error> {
        let ask = Ask::new("read the saved posts of", Target::own(Thing::User));
        self.get_page(&["users", "me", "posts", "flagged"], page, per_page, &ask)
            .await
    }

    /// `user_threads` is one page of the threads the account follows in a
    /// team, most recent reply first, older than the thread `before`.
    pub async fn user_threads(
        &self,
        team_id: &str,
        before: Option<&str>,
        per_page: u32,
    ) -> Result<UserThreadList, Error> {
        let ask = Ask::new(
            "read the followed threads of",
            Target::id(Thing::Team, team_id),
        );
        let mut query = vec![
            ("per_page", per_page.to_string()),
            ("extended", "false".to_owned()),
        ];
        if let Some(before) = before {
            query.push(("before", before.to_owned()));
        }
        self.get(&["users", "me", "teams", team_id, "threads"], &query, &ask)
            .await
    }

    /// `pin_post` pins a post to its channel; `unpin_post` takes it off.
    pub async fn pin_post(&self, post_id: &str) -> Result<(), Error> {
        let ask = Ask::new("pin", Target::id(Thing::Post, post_id));
        let _: StatusOk = self
            .send_json(Method::POST, &["posts", post_id, "pin"], None::<&()>, &ask)
            .await?;
        Ok(())
    }

    /// `unpin_post` takes a post's pin off.
    pub async fn unpin_post(&self, post_id: &str) -> Result<(), Error> {
        let ask = Ask::new("unpin", Target::id(Thing::Post, post_id));
        let _: StatusOk = self
            .send_json(
                Method::POST,
                &["posts", post_id, "unpin"],
                None::<&()>,
                &ask,
            )
            .await?;
        Ok(())
    }

    /// `patch_post` changes the fields of a post that `patch` carries.
    pub async fn patch_post(&self, post_id: &str, patch: &PostPatch) -> Result<Post, Error> {
        let ask = Ask::new("edit", Target::id(Thing::Post, post_id));
        self.send_json(Method::PUT, &["posts", post_id, "patch"], Some(patch), &ask)
            .await
    }

    /// `delete_post` deletes a post, and a thread's replies with its root.
    pub async fn delete_post(&self, post_id: &str) -> Result<(), Error> {
        let ask = Ask::new("delete", Target::id(Thing::Post, post_id));
        let _: StatusOk = self
            .send_json(Method::DELETE, &["posts", post_id], None::<&()>, &ask)
            .await?;
        Ok(())
    }

    /// `post_reactions` are every reaction on a post.
    pub async fn post_reactions(&self, post_id: &str) -> Result<Vec<Reaction>, Error> {
        let ask = Ask::new("read the reactions on", Target::id(Thing::Post, post_id));
        let list: Option<Vec<Reaction>> = self
            .get(&["posts", post_id, "reactions"], &[], &ask)
            .await?;
        Ok(list.unwrap_or_default())
    }

    /// `add_reaction` adds `user_id`'s (the account's own) emoji to a post.
    pub async fn add_reaction(
        &self,
        user_id: &str,
        post_id: &str,
        emoji_name: &str,
    ) -> Result<Reaction, Error> {
        let ask = Ask::new("react to", Target::id(Thing::Post, post_id));
        let body = serde_json::json!({
            "user_id": user_id,
            "post_id": post_id,
            "emoji_name": emoji_name,
        });
        self.post_json(&["reactions"], &body, &ask).await
    }

    /// `remove_reaction` removes `user_id`'s emoji from a post.
    pub async fn remove_reaction(
        &self,
        user_id: &str,
        post_id: &str,
        emoji_name: &str,
    ) -> Result<(), Error> {
        let ask = Ask::new("remove a reaction from", Target::id(Thing::Post, post_id));
        let _: StatusOk = self
            .send_json(
                Method::DELETE,
                &["users", user_id, "posts", post_id, "reactions", emoji_name],
                None::<&()>,
                &ask,
            )
            .await?;
        Ok(())
    }
}

impl Client {
    /// `channel_posts` is one page of a channel's posts, newest first.
    pub async fn channel_posts(
        &self,
        channel_id: &str,
        page: &ChannelPosts,
    ) -> Result<PostList, Error> {
        let ask = Ask::new("read the posts of", Target::id(Thing::Channel, channel_id));
        self.get(&["channels", channel_id, "posts"], &page.query(), &ask)
            .await
    }

    /// `post` is one post by id.
    pub async fn post(&self, post_id: &str) -> Result<Post, Error> {
        let ask = Ask::new("read", Target::id(Thing::Post, post_id));
        self.get(&["posts", post_id], &[], &ask).await
    }

    /// `post_thread` is a post's whole thread: its root and every reply.
    pub async fn post_thread(&self, post_id: &str) -> Result<PostList, Error> {
        let ask = Ask::new("read the thread of", Target::id(Thing::Post, post_id));
        self.get(&["posts", post_id, "thread"], &[], &ask).await
    }

    /// `create_post` posts a message, with files uploaded beforehand to the
    /// same channel.
    pub async fn create_post(&self, post: &NewPost) -> Result<Post, Error> {
        let ask = Ask::new("post in", Target::id(Thing::Channel, &post.channel_id));
        self.post_json(&["posts"], post, &ask).await
    }

    /// `search_posts` searches a team's posts in Mattermost's search syntax.
    pub async fn search_posts(&self, team_id: &str, search: &Search) -> Result<PostList, Error> {
        let ask = Ask::new("search the posts of", Target::id(Thing::Team, team_id));
        self.post_json(&["teams", team_id, "posts", "search"], search, &ask)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_carries_only_what_changes() {
        let patch = PostPatch {
            message: Some("new".into()),
            props: None,
        };
        assert_eq!(
            serde_json::to_value(&patch).unwrap(),
            serde_json::json!({"message": "new"})
        );
    }

    #[test]
    fn threads_decode_with_null_lists_and_id_only_participants() {
        let list: UserThreadList = serde_json::from_value(serde_json::json!({
            "threads": [{"id": "t", "reply_count": 2, "participants": [{"id": "u"}], "post": {"id": "t", "message": "hi"}, "unread_replies": 1}],
            "total": 1
        }))
        .unwrap();
        assert_eq!(list.threads[0].participants[0].id, "u");
        assert_eq!(list.threads[0].post.message, "hi");
        let empty: UserThreadList =
            serde_json::from_value(serde_json::json!({"threads": null})).unwrap();
        assert!(empty.threads.is_empty());
    }
}
