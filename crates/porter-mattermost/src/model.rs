//! Mattermost's API v4 objects, typed.
//!
//! Every type tolerates fields it does not know (servers add fields with
//! every release) and fields that are missing or `null` (older servers leave
//! some out), so a newer or older Mattermost still decodes. Only the fields
//! porter uses are named; the rest are skipped.

use std::collections::HashMap;

use bytes::Bytes;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// `nullable` reads a field that the server may send as `null`, as its
/// default, because Mattermost sends `null` for empty lists and objects in
/// some versions.
pub(crate) fn nullable<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// `User` is a Mattermost account.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct User {
    /// The account's id.
    #[serde(deserialize_with = "nullable")]
    pub id: String,
    /// Its login name, without `@`.
    #[serde(deserialize_with = "nullable")]
    pub username: String,
    /// Its e-mail address (empty when the server hides it).
    #[serde(deserialize_with = "nullable")]
    pub email: String,
    /// Its nickname.
    #[serde(deserialize_with = "nullable")]
    pub nickname: String,
    /// Its first name.
    #[serde(deserialize_with = "nullable")]
    pub first_name: String,
    /// Its last name.
    #[serde(deserialize_with = "nullable")]
    pub last_name: String,
    /// Its position (job title).
    #[serde(deserialize_with = "nullable")]
    pub position: String,
    /// Its roles, space separated (`system_user system_admin`).
    #[serde(deserialize_with = "nullable")]
    pub roles: String,
    /// Its locale (`en`).
    #[serde(deserialize_with = "nullable")]
    pub locale: String,
    /// Whether it is a bot account.
    pub is_bot: bool,
    /// When it was created (milliseconds since the epoch).
    pub create_at: i64,
    /// When it was last changed.
    pub update_at: i64,
    /// When it was deactivated; 0 while active.
    pub delete_at: i64,
}

impl User {
    /// `is_active` is false for a deactivated account, which can still be
    /// looked up but not messaged.
    #[must_use]
    pub fn is_active(&self) -> bool {
        self.delete_at == 0
    }

    /// `full_name` is "First Last", or empty when neither is set.
    #[must_use]
    pub fn full_name(&self) -> String {
        format!("{} {}", self.first_name, self.last_name)
            .trim()
            .to_owned()
    }
}

/// `Team` is a Mattermost team, the space channels live in.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Team {
    /// The team's id.
    #[serde(deserialize_with = "nullable")]
    pub id: String,
    /// Its URL name (`porter`).
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    /// Its shown name (`Porter`).
    #[serde(deserialize_with = "nullable")]
    pub display_name: String,
    /// Its description.
    #[serde(deserialize_with = "nullable")]
    pub description: String,
    /// `O` for open, `I` for invite only.
    #[serde(rename = "type", deserialize_with = "nullable")]
    pub kind: String,
    /// When it was created.
    pub create_at: i64,
    /// When it was last changed.
    pub update_at: i64,
    /// When it was deleted; 0 while it exists.
    pub delete_at: i64,
}

/// `ChannelType` is what kind of channel it is, which decides who may read it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ChannelType {
    /// A public channel anyone in the team can join (`O`).
    #[serde(rename = "O")]
    Open,
    /// A private channel, members only (`P`).
    #[serde(rename = "P")]
    Private,
    /// A direct message between two people (`D`).
    #[serde(rename = "D")]
    Direct,
    /// A group message among three to eight people (`G`).
    #[serde(rename = "G")]
    Group,
    /// A kind this client does not know (or none was sent).
    #[default]
    #[serde(other)]
    Unknown,
}

/// `Channel` is a Mattermost channel of any kind.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Channel {
    /// The channel's id.
    #[serde(deserialize_with = "nullable")]
    pub id: String,
    /// The team it belongs to; empty for direct and group channels.
    #[serde(deserialize_with = "nullable")]
    pub team_id: String,
    /// Its kind.
    #[serde(rename = "type", deserialize_with = "nullable")]
    pub kind: ChannelType,
    /// Its URL name (`town-square`; for a DM `<id>__<id>`).
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    /// Its shown name (`Town Square`; empty for DMs).
    #[serde(deserialize_with = "nullable")]
    pub display_name: String,
    /// Its header.
    #[serde(deserialize_with = "nullable")]
    pub header: String,
    /// Its purpose.
    #[serde(deserialize_with = "nullable")]
    pub purpose: String,
    /// Who created it.
    #[serde(deserialize_with = "nullable")]
    pub creator_id: String,
    /// When the last post was made.
    pub last_post_at: i64,
    /// How many posts it holds.
    pub total_msg_count: i64,
    /// When it was created.
    pub create_at: i64,
    /// When it was last changed.
    pub update_at: i64,
    /// When it was archived; 0 while active.
    pub delete_at: i64,
}

/// `FileInfo` describes an attached file: what the server says about it.
/// Its `size` is only what the server claims; downloads check the bytes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FileInfo {
    /// The file's id.
    #[serde(deserialize_with = "nullable")]
    pub id: String,
    /// Who uploaded it.
    #[serde(deserialize_with = "nullable")]
    pub user_id: String,
    /// The post it is attached to; empty until a post claims it.
    #[serde(deserialize_with = "nullable")]
    pub post_id: String,
    /// The channel it was uploaded to.
    #[serde(deserialize_with = "nullable")]
    pub channel_id: String,
    /// Its name as uploaded.
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    /// Its extension, lower case, without the dot.
    #[serde(deserialize_with = "nullable")]
    pub extension: String,
    /// Its size in bytes, as the server claims.
    pub size: u64,
    /// Its type, as the server guessed it.
    #[serde(deserialize_with = "nullable")]
    pub mime_type: String,
    /// Image width in pixels, 0 for other files.
    pub width: u32,
    /// Image height in pixels, 0 for other files.
    pub height: u32,
    /// Whether the server made a preview image.
    pub has_preview_image: bool,
    /// When it was uploaded.
    pub create_at: i64,
    /// When it was last changed.
    pub update_at: i64,
    /// When it was deleted; 0 while it exists.
    pub delete_at: i64,
}

/// `PostMetadata` is what the server adds to a post when sending it: here,
/// the infos of its files, so listing a channel does not cost a request per
/// post.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PostMetadata {
    /// The post's files.
    #[serde(deserialize_with = "nullable")]
    pub files: Vec<FileInfo>,
}

/// `Post` is one message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Post {
    /// The post's id.
    #[serde(deserialize_with = "nullable")]
    pub id: String,
    /// The channel it is in.
    #[serde(deserialize_with = "nullable")]
    pub channel_id: String,
    /// Who wrote it.
    #[serde(deserialize_with = "nullable")]
    pub user_id: String,
    /// The thread's first post, or empty when this post starts a thread.
    #[serde(deserialize_with = "nullable")]
    pub root_id: String,
    /// Its text (Markdown).
    #[serde(deserialize_with = "nullable")]
    pub message: String,
    /// Its type: empty for an ordinary post, `system_…` for system messages.
    #[serde(rename = "type", deserialize_with = "nullable")]
    pub kind: String,
    /// Its properties (`ai_generated_by`, attachments, …).
    #[serde(deserialize_with = "nullable")]
    pub props: Map<String, Value>,
    /// The ids of its files.
    #[serde(deserialize_with = "nullable")]
    pub file_ids: Vec<String>,
    /// What the server added, including the file infos.
    #[serde(deserialize_with = "nullable")]
    pub metadata: PostMetadata,
    /// Whether it is pinned to the channel.
    pub is_pinned: bool,
    /// How many replies its thread has.
    pub reply_count: i64,
    /// When it was created (milliseconds since the epoch).
    pub create_at: i64,
    /// When it was last changed (edits, reactions, replies).
    pub update_at: i64,
    /// When its text was last edited; 0 if never.
    pub edit_at: i64,
    /// When it was deleted; 0 while it exists.
    pub delete_at: i64,
}

impl Post {
    /// `thread_root` is the id of the first post of the thread this post is
    /// in: its `root_id`, or its own id when it starts the thread.
    #[must_use]
    pub fn thread_root(&self) -> &str {
        if self.root_id.is_empty() {
            &self.id
        } else {
            &self.root_id
        }
    }
}

/// `PostList` is a page of posts as Mattermost sends it: the posts by id in
/// a map, and their order (newest first) apart.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PostList {
    /// Post ids, newest first.
    #[serde(deserialize_with = "nullable")]
    pub order: Vec<String>,
    /// The posts by id; for a thread or search it may hold posts not in `order`.
    #[serde(deserialize_with = "nullable")]
    pub posts: HashMap<String, Post>,
    /// The post just newer than this page's newest (pass it as `after`,
    /// or this page's newest id, to read on toward the present); empty when
    /// this page reaches the newest post.
    #[serde(deserialize_with = "nullable")]
    pub next_post_id: String,
    /// The post just older than this page's oldest (pass this page's oldest
    /// id as `before` to read further back); empty when this page reaches
    /// the channel's first post.
    #[serde(deserialize_with = "nullable")]
    pub prev_post_id: String,
    /// Whether more pages follow, when the server says.
    pub has_next: Option<bool>,
}

impl PostList {
    /// `iter` walks the posts in `order` (newest first), skipping ids the
    /// map lacks, because a server may list a post it then leaves out.
    pub fn iter(&self) -> impl Iterator<Item = &Post> {
        self.order.iter().filter_map(|id| self.posts.get(id))
    }

    /// `into_ordered` takes the posts out in `order`.
    #[must_use]
    pub fn into_ordered(mut self) -> Vec<Post> {
        self.order
            .iter()
            .filter_map(|id| self.posts.remove(id))
            .collect()
    }

    /// `len` is how many posts `order` lists.
    #[must_use]
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// `is_empty` is true for an empty page.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
}

/// `FileInfoList` is a page of file search results, shaped like [`PostList`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FileInfoList {
    /// File ids, newest first.
    #[serde(deserialize_with = "nullable")]
    pub order: Vec<String>,
    /// The infos by id.
    #[serde(deserialize_with = "nullable")]
    pub file_infos: HashMap<String, FileInfo>,
    /// The next page's marker; empty at the end.
    #[serde(deserialize_with = "nullable")]
    pub next_file_info_id: String,
    /// The previous page's marker; empty at the start.
    #[serde(deserialize_with = "nullable")]
    pub prev_file_info_id: String,
}

impl FileInfoList {
    /// `iter` walks the infos in `order`, skipping ids the map lacks.
    pub fn iter(&self) -> impl Iterator<Item = &FileInfo> {
        self.order.iter().filter_map(|id| self.file_infos.get(id))
    }

    /// `into_ordered` takes the infos out in `order`.
    #[must_use]
    pub fn into_ordered(mut self) -> Vec<FileInfo> {
        self.order
            .iter()
            .filter_map(|id| self.file_infos.remove(id))
            .collect()
    }
}

/// `ChannelPosts` selects a page of a channel's posts. Mattermost pages by
/// `page`/`per_page` (newest first), or returns posts changed `since` a
/// time, or those `before`/`after` a post id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChannelPosts {
    /// Page number, from 0.
    pub page: Option<u32>,
    /// Posts per page; Mattermost caps it at 200 and defaults to 60.
    pub per_page: Option<u32>,
    /// Only posts created or changed after this time (ms since the epoch).
    pub since: Option<i64>,
    /// Only posts older than this post.
    pub before: Option<String>,
    /// Only posts newer than this post.
    pub after: Option<String>,
}

impl ChannelPosts {
    /// `page` asks for one page of `per_page` posts.
    #[must_use]
    pub fn page(page: u32, per_page: u32) -> ChannelPosts {
        ChannelPosts {
            page: Some(page),
            per_page: Some(per_page),
            ..ChannelPosts::default()
        }
    }

    pub(crate) fn query(&self) -> Vec<(&'static str, String)> {
        let mut query = Vec::new();
        if let Some(page) = self.page {
            query.push(("page", page.to_string()));
        }
        if let Some(per_page) = self.per_page {
            query.push(("per_page", per_page.to_string()));
        }
        if let Some(since) = self.since {
            query.push(("since", since.to_string()));
        }
        if let Some(before) = &self.before {
            query.push(("before", before.clone()));
        }
        if let Some(after) = &self.after {
            query.push(("after", after.clone()));
        }
        query
    }
}

/// `NewPost` is a post to create.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NewPost {
    /// The channel to post in.
    pub channel_id: String,
    /// The text.
    pub message: String,
    /// The thread to reply in; empty for a new thread.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub root_id: String,
    /// Files uploaded beforehand with [`crate::Client::upload_files`] to
    /// the same channel.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub file_ids: Vec<String>,
    /// Properties such as `ai_generated_by`.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub props: Map<String, Value>,
}

impl NewPost {
    /// `new` is a plain message to a channel.
    #[must_use]
    pub fn new(channel_id: impl Into<String>, message: impl Into<String>) -> NewPost {
        NewPost {
            channel_id: channel_id.into(),
            message: message.into(),
            ..NewPost::default()
        }
    }
}

/// `UserSearch` is a user search: a term matched against usernames, names,
/// nicknames and e-mail, optionally within a team or channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserSearch {
    /// What to look for.
    pub term: String,
    /// Only users in this team.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team_id: Option<String>,
    /// Only users in this channel.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_channel_id: Option<String>,
    /// Include deactivated users.
    pub allow_inactive: bool,
    /// At most this many (Mattermost allows up to 1000; default 100).
    pub limit: u32,
}

impl UserSearch {
    /// `new` searches all active users, up to 100.
    #[must_use]
    pub fn new(term: impl Into<String>) -> UserSearch {
        UserSearch {
            term: term.into(),
            team_id: None,
            in_channel_id: None,
            allow_inactive: false,
            limit: 100,
        }
    }
}

/// `Search` is a post or file search within a team, in Mattermost's search
/// syntax (`from:alice in:town-square before:2026-01-01 "exact words"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Search {
    /// The search terms.
    pub terms: String,
    /// Match any term rather than all of them.
    pub is_or_search: bool,
    /// Page number, from 0.
    pub page: u32,
    /// Results per page.
    pub per_page: u32,
    /// The searcher's offset from UTC in seconds, for `on:`/`before:`/`after:`.
    pub time_zone_offset: i32,
    /// Include archived channels.
    pub include_deleted_channels: bool,
}

impl Search {
    /// `new` is the first page of 60 results matching all terms, in UTC.
    #[must_use]
    pub fn new(terms: impl Into<String>) -> Search {
        Search {
            terms: terms.into(),
            is_or_search: false,
            page: 0,
            per_page: 60,
            time_zone_offset: 0,
            include_deleted_channels: false,
        }
    }
}

/// `UploadFile` is one file to upload: its name, type and bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadFile {
    /// The name it will carry in Mattermost.
    pub name: String,
    /// Its MIME type; empty sends `application/octet-stream`.
    pub content_type: String,
    /// Its bytes, exactly as they will be stored.
    pub bytes: Bytes,
}

impl UploadFile {
    /// `new` is a file to upload.
    #[must_use]
    pub fn new(
        name: impl Into<String>,
        content_type: impl Into<String>,
        bytes: impl Into<Bytes>,
    ) -> UploadFile {
        UploadFile {
            name: name.into(),
            content_type: content_type.into(),
            bytes: bytes.into(),
        }
    }
}

/// `Upload` is the server's answer to an upload.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub(crate) struct Upload {
    #[serde(deserialize_with = "nullable")]
    pub file_infos: Vec<FileInfo>,
    #[serde(deserialize_with = "nullable")]
    pub client_ids: Vec<String>,
}

/// `Download` is a downloaded file: its bytes and what the server said they
/// are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Download {
    /// The bytes, never more than the cap asked for.
    pub bytes: Bytes,
    /// The `Content-Type` the server sent, if any.
    pub content_type: Option<String>,
    /// The file name from `Content-Disposition`, if any.
    pub file_name: Option<String>,
}

/// `ClientConfig` is the part of the server's client configuration porter
/// uses, read from `config/client?format=old`, where every value is a string.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientConfig {
    /// The server's version (`Version`, such as `10.5.0`).
    pub version: String,
    /// The longest post in characters (`MaxPostSize`), when the server says.
    pub max_post_size: Option<u64>,
    /// The largest file in bytes (`MaxFileSize`), when the server says.
    pub max_file_size: Option<u64>,
    /// The site's public URL (`SiteURL`), when set.
    pub site_url: Option<String>,
    /// Every value as sent.
    pub all: HashMap<String, String>,
}

impl ClientConfig {
    /// `from_map` reads the configuration from the old format's map. Values
    /// that are not strings are kept in their JSON text, because a few
    /// servers send numbers and booleans.
    #[must_use]
    pub fn from_map(map: Map<String, Value>) -> ClientConfig {
        let all: HashMap<String, String> = map
            .into_iter()
            .map(|(key, value)| {
                let value = match value {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                (key, value)
            })
            .collect();
        let number = |key: &str| all.get(key).and_then(|v| v.trim().parse::<u64>().ok());
        let text = |key: &str| all.get(key).filter(|v| !v.is_empty()).cloned();
        ClientConfig {
            version: text("Version").unwrap_or_default(),
            max_post_size: number("MaxPostSize"),
            max_file_size: number("MaxFileSize"),
            site_url: text("SiteURL"),
            all,
        }
    }
}

/// `Ping` is the server's health answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Ping {
    /// `OK` when the server is healthy.
    #[serde(deserialize_with = "nullable")]
    pub status: String,
    /// The answer's `X-Version-Id` header (`10.6.0.13685270376.<hash>.true`:
    /// the version, the build, the configuration's hash, licensed), which
    /// every Mattermost answer carries.
    #[serde(skip)]
    pub version_id: Option<String>,
}

/// `Version` is a Mattermost release, `major.minor.patch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// The major release (`10` in 10.11.2).
    pub major: u32,
    /// The minor release (`11` in 10.11.2).
    pub minor: u32,
    /// The patch release (`2` in 10.11.2).
    pub patch: u32,
}

/// `OLDEST_SUPPORTED_VERSION` is the oldest Mattermost release porter
/// supports: 9.3, the first that adds several people to a channel in one
/// request (`user_ids`, which `add_channel_members` sends). Older servers
/// answer that with 400; `doctor` warns below it.
pub const OLDEST_SUPPORTED_VERSION: Version = Version {
    major: 9,
    minor: 3,
    patch: 0,
};

impl Version {
    /// `parse` reads the release from the start of a version text: `10.5.0`
    /// (`config/client`'s `Version`) or `10.6.0.13685270376.<hash>.true`
    /// (`X-Version-Id`). A missing patch counts as 0; anything else that is
    /// not a number is `None`.
    #[must_use]
    pub fn parse(text: &str) -> Option<Version> {
        let mut parts = text.trim().split('.');
        let mut number = || parts.next().and_then(|p| p.parse::<u32>().ok());
        let major = number()?;
        let minor = number()?;
        let patch = number().unwrap_or(0);
        Some(Version {
            major,
            minor,
            patch,
        })
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_post_with_unknown_and_null_fields_still_decodes() {
        let post: Post = serde_json::from_str(
            r#"{"id":"p1","channel_id":"c1","user_id":"u1","message":"hi","props":null,
                "file_ids":null,"metadata":{"files":[{"id":"f1","name":"a.txt","size":3,"mime_type":"text/plain","new_field":true}],"embeds":[]},
                "brand_new":{"x":1},"type":"","create_at":5}"#,
        )
        .unwrap();
        assert_eq!(post.id, "p1");
        assert!(post.props.is_empty());
        assert!(post.file_ids.is_empty());
        assert_eq!(post.metadata.files[0].name, "a.txt");
        assert_eq!(post.metadata.files[0].size, 3);
        assert_eq!(post.create_at, 5);
    }

    #[test]
    fn a_version_is_read_from_the_config_and_from_the_version_header() {
        let cases = [
            ("10.5.0", Some((10, 5, 0))),
            (
                "10.6.0.13685270376.215f100adf6ccda09afcaaa84ac4bfbd.true",
                Some((10, 6, 0)),
            ),
            ("9.2", Some((9, 2, 0))),
            (" 9.11.3 ", Some((9, 11, 3))),
            ("9", None),
            ("", None),
            ("dev.build", None),
        ];
        for (text, expected) in cases {
            let got = Version::parse(text).map(|v| (v.major, v.minor, v.patch));
            assert_eq!(got, expected, "{text:?}");
        }
        let old = Version::parse("9.2.9").unwrap();
        let new = Version::parse("9.10.0").unwrap();
        assert!(old < OLDEST_SUPPORTED_VERSION && OLDEST_SUPPORTED_VERSION < new);
        assert_eq!(OLDEST_SUPPORTED_VERSION.to_string(), "9.3.0");
    }

    #[test]
    fn a_post_list_walks_in_its_order_and_skips_missing_posts() {
        let list: PostList = serde_json::from_str(
            r#"{"order":["b","gone","a"],"posts":{"a":{"id":"a"},"b":{"id":"b"}},"next_post_id":"","prev_post_id":"x"}"#,
        )
        .unwrap();
        let ids: Vec<&str> = list.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, ["b", "a"]);
        assert_eq!(list.prev_post_id, "x");
        let owned: Vec<String> = list.into_ordered().into_iter().map(|p| p.id).collect();
        assert_eq!(owned, ["b", "a"]);
    }

    #[test]
    fn channel_types_decode_from_their_letters() {
        for (letter, kind) in [
            ("O", ChannelType::Open),
            ("P", ChannelType::Private),
            ("D", ChannelType::Direct),
            ("G", ChannelType::Group),
            ("Z", ChannelType::Unknown),
        ] {
            let channel: Channel =
                serde_json::from_str(&format!(r#"{{"id":"c","type":"{letter}"}}"#)).unwrap();
            assert_eq!(channel.kind, kind, "{letter}");
        }
    }

    #[test]
    fn the_old_client_config_is_read_from_its_strings() {
        let map: Map<String, Value> = serde_json::from_str(
            r#"{"Version":"10.5.0","MaxPostSize":"16383","MaxFileSize":"104857600","SiteURL":"","BuildNumber":"1","EnableX":true}"#,
        )
        .unwrap();
        let config = ClientConfig::from_map(map);
        assert_eq!(config.version, "10.5.0");
        assert_eq!(config.max_post_size, Some(16383));
        assert_eq!(config.max_file_size, Some(104_857_600));
        assert_eq!(config.site_url, None);
        assert_eq!(config.all["EnableX"], "true");
    }

    #[test]
    fn a_garbled_post_size_is_treated_as_unknown() {
        let map: Map<String, Value> =
            serde_json::from_str(r#"{"Version":"9","MaxPostSize":"lots"}"#).unwrap();
        assert_eq!(ClientConfig::from_map(map).max_post_size, None);
    }

    #[test]
    fn channel_posts_send_only_what_was_set() {
        let query = ChannelPosts {
            before: Some("p9".into()),
            ..ChannelPosts::page(2, 30)
        }
        .query();
        assert_eq!(
            query,
            [
                ("page", "2".to_owned()),
                ("per_page", "30".to_owned()),
                ("before", "p9".to_owned())
            ]
        );
    }

    #[test]
    fn a_new_post_leaves_out_empty_optional_fields() {
        let body = serde_json::to_value(NewPost::new("c1", "hello")).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"channel_id":"c1","message":"hello"})
        );
    }
}
