//! What the emulator starts with: users, teams, channels, posts and files,
//! from a YAML or JSON fixture or the built-in demo.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// `Seed` is everything the emulator holds when it starts. It is plain data
/// (build one in code, or load a fixture with [`Seed::from_path`]) and is
/// checked only when a [`Sim`](crate::Sim) is made from it, so one error
/// message can name the fixture's mistake.
///
/// Names, not ids, tie the parts together (ids are made when the seed is
/// loaded): a channel lists its members by username, a post names its
/// channel. Unknown keys are refused so a typo in a fixture is not silently
/// ignored.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Seed {
    /// Server settings the API reports and enforces.
    pub config: SeedConfig,
    /// The people; the first is the one a demo prints a token for.
    pub users: Vec<SeedUser>,
    /// The teams and who is in them.
    pub teams: Vec<SeedTeam>,
    /// Public and private channels of the teams.
    pub channels: Vec<SeedChannel>,
    /// Direct message channels, each by its two usernames.
    pub direct_channels: Vec<Vec<String>>,
    /// Group message channels, each by its 3–8 usernames.
    pub group_channels: Vec<Vec<String>>,
    /// Posts in order; a reply names its root by the root's `key`.
    pub posts: Vec<SeedPost>,
    /// OAuth 2.0 apps an administrator registered.
    pub oauth_apps: Vec<SeedOAuthApp>,
}

/// `SeedOAuthApp` is an OAuth 2.0 app: a confidential one has a secret,
/// a public one none (and must use PKCE; it gets no refresh tokens).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SeedOAuthApp {
    /// The app's id, which clients send as `client_id`.
    pub client_id: String,
    /// The secret of a confidential app; absent for a public one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The name the consent page shows.
    #[serde(default)]
    pub name: String,
    /// The redirect URIs, matched exactly.
    pub callback_urls: Vec<String>,
}

/// `SeedConfig` holds the server settings that clients read from
/// `config/client` and that the API enforces.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SeedConfig {
    /// The longest message a post may carry, in characters (Mattermost's
    /// default is 16383).
    pub max_post_size: u64,
    /// The largest file an upload may carry, in bytes (Mattermost's default
    /// is 100 MiB); bigger files are refused with 413.
    pub max_file_size: u64,
    /// The server version reported in `config/client` and `X-Version-Id`.
    pub version: String,
    /// The name shown for the site.
    pub site_name: String,
    /// The public URL; when empty the emulator reports the address it was
    /// started on (or the request's `Host`).
    pub site_url: String,
    /// Whether the server has post reminders
    /// (`POST /users/{user_id}/posts/{post_id}/reminder`); without them
    /// the route answers the server's 404 for a path it does not serve, as
    /// a server built without the feature does.
    pub post_reminders: bool,
    /// How long an OAuth access token lasts, in seconds.
    pub oauth_access_token_seconds: u64,
    /// Whether OAuth dynamic client registration is enabled
    /// (`POST /api/v4/oauth/apps/register`, listed in the metadata).
    pub oauth_registration: bool,
    /// Whether file search pages (`page`, `per_page`), as it does with
    /// Elasticsearch. Without it (`false`) the search answers as the
    /// database search does: the newest [`FILE_SEARCH_DATABASE_MAX`] files
    /// at most, whatever page is asked for.
    pub file_search_pages: bool,
}

/// `FILE_SEARCH_DATABASE_MAX` is the most files Mattermost's database file
/// search answers (it ignores `page` and `per_page`, which only
/// Elasticsearch honours).
pub const FILE_SEARCH_DATABASE_MAX: usize = 100;

/// `DEFAULT_MAX_FILE_BYTES` is Mattermost's default `MaxFileSize`: 100 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 100 * 1024 * 1024;

/// `DEFAULT_OAUTH_ACCESS_SECONDS` is how long an OAuth access token lasts
/// unless the seed says otherwise (30 days).
pub const DEFAULT_OAUTH_ACCESS_SECONDS: u64 = 30 * 24 * 60 * 60;

/// `DEFAULT_MAX_POST_CHARS` is Mattermost's default `MaxPostSize`.
pub const DEFAULT_MAX_POST_CHARS: u64 = 16_383;

impl Default for SeedConfig {
    fn default() -> Self {
        SeedConfig {
            max_post_size: DEFAULT_MAX_POST_CHARS,
            max_file_size: DEFAULT_MAX_FILE_BYTES,
            version: "10.11.0".to_owned(),
            site_name: "Mattermost".to_owned(),
            site_url: String::new(),
            post_reminders: true,
            oauth_access_token_seconds: DEFAULT_OAUTH_ACCESS_SECONDS,
            oauth_registration: false,
            file_search_pages: true,
        }
    }
}

/// `SeedUser` is one person. Tokens are personal access tokens that
/// authenticate as this user; a deactivated user's tokens are refused as
/// a real server revokes their sessions.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SeedUser {
    /// The login name, unique, lowercase.
    pub username: String,
    /// One token, for fixtures that need just one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// More tokens for the same user.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tokens: Vec<String>,
    /// Given name.
    #[serde(default)]
    pub first_name: String,
    /// Family name.
    #[serde(default)]
    pub last_name: String,
    /// Nickname.
    #[serde(default)]
    pub nickname: String,
    /// Email; `<username>@example.com` when absent.
    #[serde(default)]
    pub email: String,
    /// Job title.
    #[serde(default)]
    pub position: String,
    /// Whether the account is deactivated.
    #[serde(default)]
    pub deleted: bool,
    /// Roles; `system_user` when absent.
    #[serde(default)]
    pub roles: String,
    /// The password `POST /users/login` takes; without one the account
    /// signs in only with a token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
    /// The MFA code `POST /users/login` requires besides the password (a
    /// fixed code: the emulator keeps no authenticator clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mfa_code: Option<String>,
    /// The person's time zone (IANA, such as `Europe/Berlin`), set as
    /// their manual time zone; the automatic one (empty) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
}

/// `SeedTeam` is one team and its members by username.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SeedTeam {
    /// The URL name (`porter`).
    pub name: String,
    /// The shown name (`Porter`).
    pub display_name: String,
    /// Usernames of the members.
    #[serde(default)]
    pub members: Vec<String>,
    /// A description.
    #[serde(default)]
    pub description: String,
}

/// `SeedChannel` is a public (`O`) or private (`P`) channel of a team; the
/// default is public.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SeedChannel {
    /// The team's name.
    pub team: String,
    /// The URL name (`town-square`).
    pub name: String,
    /// The shown name (`Town Square`).
    pub display_name: String,
    /// `O` for public, `P` for private.
    #[serde(rename = "type", default = "public_type")]
    pub kind: String,
    /// Usernames of the members; each must be in the team.
    #[serde(default)]
    pub members: Vec<String>,
    /// The channel's purpose line.
    #[serde(default)]
    pub purpose: String,
    /// The channel's header.
    #[serde(default)]
    pub header: String,
    /// Whether the channel is archived (kept, read-only, out of the lists).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub archived: bool,
}

/// Serde default for a channel's type: public.
fn public_type() -> String {
    "O".to_owned()
}

impl Default for SeedChannel {
    fn default() -> Self {
        SeedChannel {
            team: String::new(),
            name: String::new(),
            display_name: String::new(),
            kind: public_type(),
            members: Vec::new(),
            purpose: String::new(),
            header: String::new(),
            archived: false,
        }
    }
}

/// `SeedPost` is one post. `channel` is a channel's name (`town-square`),
/// `team/name` when the name is in several teams, or `@alice,bob` for the
/// direct or group channel of exactly those people.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SeedPost {
    /// A name for this post that replies use as their `root`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Where it is posted (see above).
    pub channel: String,
    /// Who posted it, by username.
    pub user: String,
    /// The text.
    #[serde(default)]
    pub message: String,
    /// The `key` of the thread's root post, for a reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// When it was posted; one minute after the previous post when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_at: Option<SeedTime>,
    /// Files attached to it (at most 10, as on a server).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<SeedFile>,
    /// Post props (`{"ai_generated_by": …}` and such).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub props: Option<serde_json::Value>,
}

/// `SeedTime` is a time given either as milliseconds since the epoch or as
/// an RFC 3339 string (`2026-03-02T09:00:00Z`), whichever reads better in
/// the fixture.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum SeedTime {
    /// Milliseconds since the epoch.
    Millis(i64),
    /// An RFC 3339 time.
    Text(String),
}

impl SeedTime {
    /// The time in milliseconds, or `None` for a malformed string.
    #[must_use]
    pub fn millis(&self) -> Option<i64> {
        match self {
            SeedTime::Millis(ms) => Some(*ms),
            SeedTime::Text(text) => crate::model::parse_rfc3339_millis(text),
        }
    }
}

/// `SeedFile` is one attached file: its name and exactly one source of
/// bytes: `text`, `base64`, a `path` (relative to the fixture file), or a
/// `generate`d demo file.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SeedFile {
    /// The file name shown in Mattermost; its extension decides the type.
    pub name: String,
    /// UTF-8 text content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Binary content in standard base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base64: Option<String>,
    /// A file to read; relative paths are taken from the fixture's folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// One of the files the emulator can make itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generate: Option<DemoFile>,
}

/// `DemoFile` names a file the emulator generates on start, each a real,
/// valid file of its kind that the file view handles.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum DemoFile {
    /// A multi-line UTF-8 text file.
    Text,
    /// A Word document.
    Docx,
    /// An Excel workbook.
    Xlsx,
    /// A PowerPoint deck.
    Pptx,
    /// A zip archive with a few entries.
    Zip,
    /// A gzip-compressed tar archive.
    TarGz,
    /// A photo stored sideways with EXIF orientation 6.
    SidewaysJpeg,
    /// A 3000×2000 PNG that a viewer must scale.
    BigPng,
    /// A one-second tone.
    Wav,
    /// A one-page PDF with real text.
    Pdf,
    /// Bytes that are no known format.
    Binary,
}

/// `SeedError` says why a seed could not be loaded or used.
#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    /// The fixture file could not be read.
    #[error("could not read the seed file {path}: {source}")]
    Read {
        /// The fixture.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The fixture is not valid YAML/JSON for a seed.
    #[error("the seed file {path} is not a valid seed: {message}")]
    Parse {
        /// The fixture.
        path: PathBuf,
        /// The parser's explanation, with the line where it has one.
        message: String,
    },
    /// The seed refers to something it does not define, or breaks a rule
    /// of the server (a duplicate name, a post too long, …).
    #[error("the seed is inconsistent: {0}")]
    Invalid(String),
    /// A seeded file could not be read or made.
    #[error("the seeded file {name} could not be loaded: {reason}")]
    File {
        /// The file's name in the seed.
        name: String,
        /// Why.
        reason: String,
    },
}

impl Seed {
    /// Loads a seed from a YAML or JSON fixture (JSON when the name ends in
    /// `.json`, YAML otherwise). Relative file paths inside it are resolved
    /// against the fixture's folder here, so the seed works from any
    /// working directory.
    pub fn from_path(path: &Path) -> Result<Seed, SeedError> {
        let text = std::fs::read_to_string(path).map_err(|source| SeedError::Read {
            path: path.to_owned(),
            source,
        })?;
        let is_json = path
            .extension()
            .is_some_and(|ext| ext.eq_ignore_ascii_case("json"));
        let mut seed: Seed = if is_json {
            serde_json::from_str(&text).map_err(|err| SeedError::Parse {
                path: path.to_owned(),
                message: err.to_string(),
            })?
        } else {
            yaml_serde::from_str(&text).map_err(|err| SeedError::Parse {
                path: path.to_owned(),
                message: err.to_string(),
            })?
        };
        let base = path.parent().unwrap_or(Path::new("."));
        for post in &mut seed.posts {
            for file in &mut post.files {
                if let Some(relative) = file.path.as_mut().filter(|p| p.is_relative()) {
                    *relative = base.join(&*relative);
                }
            }
        }
        Ok(seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_yaml_fixture_loads_with_paths_taken_from_its_folder() {
        let dir = tempfile::tempdir().expect("a temporary folder is available in tests");
        std::fs::write(dir.path().join("hello.txt"), "hi").expect("the temp folder is writable");
        let fixture = dir.path().join("seed.yaml");
        std::fs::write(
            &fixture,
            "users:\n  - username: ann\n    token: t1\nposts:\n  - channel: x\n    user: ann\n    files:\n      - name: hello.txt\n        path: hello.txt\n",
        )
        .expect("the temp folder is writable");
        let seed = Seed::from_path(&fixture).expect("the fixture is valid");
        assert_eq!(seed.users[0].token.as_deref(), Some("t1"));
        assert_eq!(
            seed.posts[0].files[0].path.as_deref(),
            Some(dir.path().join("hello.txt").as_path())
        );
        assert_eq!(seed.config, SeedConfig::default());
    }

    #[test]
    fn an_unknown_key_in_a_fixture_is_refused_with_the_file_named() {
        let dir = tempfile::tempdir().expect("a temporary folder is available in tests");
        let fixture = dir.path().join("seed.json");
        std::fs::write(&fixture, r#"{"users": [], "usres": []}"#).expect("writable");
        let err = Seed::from_path(&fixture).expect_err("the typo is refused");
        assert!(matches!(err, SeedError::Parse { .. }));
        assert!(err.to_string().contains("usres"), "{err}");
    }

    #[test]
    fn seed_times_take_millis_or_rfc3339() {
        assert_eq!(SeedTime::Millis(5).millis(), Some(5));
        assert_eq!(
            SeedTime::Text("2026-03-02T09:00:00Z".into()).millis(),
            Some(1_772_442_000_000)
        );
        assert_eq!(SeedTime::Text("soon".into()).millis(), None);
    }
}
