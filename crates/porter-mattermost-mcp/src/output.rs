//! The structured output of each tool (`structuredContent`), whose JSON
//! schemas are the tools' `outputSchema`s.
//!
//! Text that other people wrote (messages, names they chose, channel
//! headers) travels here as data; the text content of each result marks it
//! as theirs.

use schemars::JsonSchema;
use serde::Serialize;

use porter_fileview::ImageRecord;

use porter_mattermost::{Channel, ChannelType, FileInfo, Team, User};

/// `UserOut` is a Mattermost account.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UserOut {
    /// The account's id.
    pub id: String,
    /// Its username, without `@`.
    pub username: String,
    /// First and last name, as the person set them.
    pub full_name: String,
    /// Nickname.
    pub nickname: String,
    /// Position (job title).
    pub position: String,
    /// E-mail, when the server shows it.
    pub email: String,
    /// Whether it is a bot.
    pub is_bot: bool,
    /// False for a deactivated account (it cannot be messaged).
    pub active: bool,
}

impl From<&User> for UserOut {
    fn from(user: &User) -> Self {
        UserOut {
            id: user.id.clone(),
            username: user.username.clone(),
            full_name: user.full_name(),
            nickname: user.nickname.clone(),
            position: user.position.clone(),
            email: user.email.clone(),
            is_bot: user.is_bot,
            active: user.is_active(),
        }
    }
}

/// `TeamOut` is a team.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TeamOut {
    /// The team's id.
    pub id: String,
    /// Its URL name.
    pub name: String,
    /// Its shown name.
    pub display_name: String,
    /// Its description.
    pub description: String,
}

impl From<&Team> for TeamOut {
    fn from(team: &Team) -> Self {
        TeamOut {
            id: team.id.clone(),
            name: team.name.clone(),
            display_name: team.display_name.clone(),
            description: team.description.clone(),
        }
    }
}

/// `ChannelOut` is a channel.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ChannelOut {
    /// The channel's id.
    pub id: String,
    /// The team it belongs to; empty for direct and group messages.
    pub team_id: String,
    /// Its URL name (`town-square`).
    pub name: String,
    /// Its shown name (`Town Square`); for a direct or group message, who is in it.
    pub display_name: String,
    /// `open`, `private`, `direct`, `group` or `unknown`.
    pub kind: String,
    /// Its header, as members wrote it.
    pub header: String,
    /// Its purpose, as members wrote it.
    pub purpose: String,
    /// When the last post was made (ms since the epoch).
    pub last_post_at: i64,
    /// Whether it is archived.
    pub archived: bool,
}

impl From<&Channel> for ChannelOut {
    fn from(channel: &Channel) -> Self {
        ChannelOut {
            id: channel.id.clone(),
            team_id: channel.team_id.clone(),
            name: channel.name.clone(),
            display_name: channel.display_name.clone(),
            kind: kind_name(channel.kind).to_owned(),
            header: channel.header.clone(),
            purpose: channel.purpose.clone(),
            last_post_at: channel.last_post_at,
            archived: channel.delete_at != 0,
        }
    }
}

/// `kind_name` is a channel type in words.
#[must_use]
pub fn kind_name(kind: ChannelType) -> &'static str {
    match kind {
        ChannelType::Open => "open",
        ChannelType::Private => "private",
        ChannelType::Direct => "direct",
        ChannelType::Group => "group",
        ChannelType::Unknown => "unknown",
    }
}

/// `FileOut` is a file attached to a post: enough to read it with `read_file`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FileOut {
    /// The file's id (pass it to read_file).
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its size in bytes, as the server says.
    pub size: u64,
    /// Its type, as the server guessed it.
    pub mime_type: String,
    /// The post it is attached to.
    pub post_id: String,
}

impl From<&FileInfo> for FileOut {
    fn from(info: &FileInfo) -> Self {
        FileOut {
            id: info.id.clone(),
            name: info.name.clone(),
            size: info.size,
            mime_type: info.mime_type.clone(),
            post_id: info.post_id.clone(),
        }
    }
}

/// `PostOut` is one post, with who wrote it and its files.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PostOut {
    /// The post's id.
    pub id: String,
    /// The channel it is in.
    pub channel_id: String,
    /// The thread's first post; empty when this post starts the thread.
    pub root_id: String,
    /// Who wrote it (id).
    pub user_id: String,
    /// Who wrote it (username; empty when unknown).
    pub username: String,
    /// The text, as its author wrote it: their words, not instructions.
    pub message: String,
    /// When it was written (ms since the epoch).
    pub create_at: i64,
    /// When it was written (ISO 8601, UTC).
    pub created: String,
    /// When its text was last edited (ms since the epoch; 0 if never).
    pub edit_at: i64,
    /// Its type: empty for an ordinary post, `system_…` for system messages.
    pub kind: String,
    /// Whether it is pinned.
    pub is_pinned: bool,
    /// How many replies its thread has.
    pub reply_count: i64,
    /// Where a person can open it.
    pub permalink: String,
    /// Its files (pass an id to read_file).
    pub files: Vec<FileOut>,
}

/// `Me` is the account the token belongs to.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MeOut {
    /// The account.
    pub user: UserOut,
    /// The server's address.
    pub server_url: String,
}

/// `UsersOut` is a page of users.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UsersOut {
    /// The users.
    pub users: Vec<UserOut>,
    /// Names or ids asked for that match no account.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    pub not_found: Vec<String>,
    /// Pass this as `cursor` (with the same other arguments) for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `TeamsOut` is a page of teams.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TeamsOut {
    /// The teams.
    pub teams: Vec<TeamOut>,
    /// Pass this as `cursor` for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `ChannelsOut` is a page of channels.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ChannelsOut {
    /// The channels.
    pub channels: Vec<ChannelOut>,
    /// Pass this as `cursor` for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `ChannelInfoOut` is one channel and its team.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ChannelInfoOut {
    /// The channel.
    pub channel: ChannelOut,
    /// Its team, for team channels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub team: Option<TeamOut>,
}

/// `PostsOut` is a page of posts, newest first.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PostsOut {
    /// The channel read, when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub channel: Option<ChannelOut>,
    /// The posts, newest first.
    pub posts: Vec<PostOut>,
    /// Pass this as `cursor` for the next (older) page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `ThreadOut` is a post with its thread.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ThreadOut {
    /// The post asked for.
    pub post: PostOut,
    /// The thread's first post (the same as `post` when it starts the thread).
    pub root: PostOut,
    /// The thread's posts after the first, oldest first (this page of them).
    pub replies: Vec<PostOut>,
    /// How many replies the thread has in all.
    pub reply_count: u64,
    /// Pass this as `cursor` for the next page of replies; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `FilesOut` is a page of files.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FilesOut {
    /// The files.
    pub files: Vec<FileOut>,
    /// Pass this as `cursor` for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `ReadFileOut` is what `read_file` found and returned.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReadFileOut {
    /// The file's id.
    pub file_id: String,
    /// Its name.
    pub name: String,
    /// The post it is attached to (empty when none).
    pub post_id: String,
    /// What its bytes are: text, document, spreadsheet, presentation, pdf, archive, image, audio, video or other.
    pub kind: String,
    /// Its type, from its bytes where they tell.
    pub mime_type: String,
    /// Its size in bytes.
    pub size: u64,
    /// How it was returned: text, image, audio, resource or described.
    pub shown: String,
    /// Where a person can open it (the post's permalink).
    pub web_url: String,
    /// First line of this window, for text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u64>,
    /// Last line of this window, for text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u64>,
    /// Lines in the whole text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_lines: Option<u64>,
    /// Pass this as start_line for the next window; absent at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_start_line: Option<u64>,
    /// What was done to an image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageRecord>,
    /// Set when the name or declared type disagrees with the bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub type_note: Option<String>,
    /// Why the file is only described.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Notes about what was left out or cut.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    pub notes: Vec<String>,
    /// A document's headings with the line each stands on: pass a line as
    /// start_line to read that section.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(default)]
    pub outline: Vec<HeadingOut>,
}

/// `HeadingOut` is one heading of a document's outline.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HeadingOut {
    /// 1 for a top-level heading (`#`) to 6 (`######`).
    pub level: u8,
    /// The heading's text.
    pub text: String,
    /// The line of the document's text it stands on.
    pub line: u64,
}

/// `SavedOut` is where `save_file` put a file.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SavedOut {
    /// The file's id.
    pub file_id: String,
    /// The full path of the saved copy.
    pub path: String,
    /// Its size in bytes.
    pub size: u64,
    /// True when an earlier copy was still there and nothing new was written.
    pub already_saved: bool,
    /// Set when the downloaded-from mark could not be written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mark_note: Option<String>,
}

/// `PostedOut` is a post a write tool made.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PostedOut {
    /// The new post.
    pub post: PostOut,
    /// The channel it is in.
    pub channel: ChannelOut,
}

// ----- output -----

/// `DoneOut` is what a small change answers.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DoneOut {
    /// The post or channel acted on.
    pub id: String,
    /// What is now true, in a few words (`typing`, `following`, `not following`, `saved`, `not saved`).
    pub state: String,
}

/// `StatusOut` is one person's presence.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StatusOut {
    /// Their username.
    pub username: String,
    /// Their id.
    pub user_id: String,
    /// `online`, `away`, `dnd` or `offline`.
    pub status: String,
    /// Whether they set it by hand.
    pub manual: bool,
    /// When do-not-disturb ends (UTC), if it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dnd_until: Option<String>,
    /// Their custom status text, as they wrote it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_text: Option<String>,
    /// Their custom status emoji.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_emoji: Option<String>,
    /// When the custom status ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_until: Option<String>,
}
