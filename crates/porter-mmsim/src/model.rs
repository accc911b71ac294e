//! The objects the emulator keeps, serialized with Mattermost's field names.
//!
//! Each struct here serializes exactly as the Mattermost server encodes the
//! same object (`model.User`, `model.Team`, …): the same keys, the same
//! `null`s where the server has nil pointers, the same omitted empty fields.
//! Client4's TypeScript types describe these shapes, so a client that reads
//! a real server reads these too.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `ID_ALPHABET` is Mattermost's base32 alphabet for ids: lowercase, with the
/// look-alike characters (`0`, `l`, `v`) left out.
const ID_ALPHABET: &[u8; 32] = b"ybndrfg8ejkmcpqxot1uwisza345h769";

/// `ID_LEN` is the length of every Mattermost id: 16 bytes in base32.
pub(crate) const ID_LEN: usize = 26;

/// Encodes 16 bytes as a 26-character Mattermost id (base32, no padding).
pub(crate) fn encode_id(bytes: [u8; 16]) -> String {
    let mut out = String::with_capacity(ID_LEN);
    let mut buffer: u32 = 0;
    let mut bits = 0u32;
    for byte in bytes {
        buffer = (buffer << 8) | u32::from(byte);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(char::from(ID_ALPHABET[((buffer >> bits) & 31) as usize]));
        }
    }
    if bits > 0 {
        out.push(char::from(
            ID_ALPHABET[((buffer << (5 - bits)) & 31) as usize],
        ));
    }
    out
}

/// Tells whether `id` has the shape of a Mattermost id, as the server checks
/// before it looks anything up (`model.IsValidId`).
pub(crate) fn is_valid_id(id: &str) -> bool {
    id.len() == ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// `Ids` hands out new ids: predictable ones while a seed is loaded (so the
/// demo's ids are the same on every run), random ones afterwards (so objects
/// made through the API look like a real server's).
#[derive(Debug)]
pub(crate) struct Ids {
    counter: u64,
    random: bool,
}

impl Ids {
    /// Starts in the predictable mode used while a seed is loaded.
    pub(crate) fn new() -> Ids {
        Ids {
            counter: 0x5eed_0f90_47e7,
            random: false,
        }
    }

    /// Switches to random ids once the seed is in.
    pub(crate) fn go_random(&mut self) {
        self.random = true;
    }

    /// Returns a fresh id.
    pub(crate) fn next(&mut self) -> String {
        if self.random {
            return Ids::random_id();
        }
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&splitmix(&mut self.counter).to_be_bytes());
        bytes[8..].copy_from_slice(&splitmix(&mut self.counter).to_be_bytes());
        encode_id(bytes)
    }

    /// Returns an id from 16 random bytes (request ids, objects made through
    /// the API). Should the system's randomness fail, the clock is mixed in
    /// instead: these ids need to be unique, not secret.
    pub(crate) fn random_id() -> String {
        let mut bytes = [0u8; 16];
        if getrandom::fill(&mut bytes).is_err() {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            let mut state = nanos as u64;
            bytes[..8].copy_from_slice(&splitmix(&mut state).to_be_bytes());
            bytes[8..].copy_from_slice(&splitmix(&mut state).to_be_bytes());
        }
        encode_id(bytes)
    }

    /// Returns `n` predictable pseudo-random bytes, for demo content.
    pub(crate) fn bytes(seed: u64, n: usize) -> Vec<u8> {
        let mut state = seed;
        let mut out = Vec::with_capacity(n + 8);
        while out.len() < n {
            out.extend_from_slice(&splitmix(&mut state).to_le_bytes());
        }
        out.truncate(n);
        out
    }
}

/// One step of SplitMix64, a small, well-mixed generator.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Milliseconds since the epoch now, the unit of every Mattermost time.
pub(crate) fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Parses `YYYY-MM-DD` (exactly that form) into its parts, checking that
/// the day exists.
pub(crate) fn parse_date(text: &str) -> Option<(i64, u32, u32)> {
    let mut parts = text.split('-');
    let year: i16 = parts.next()?.parse().ok()?;
    let month: i8 = parts.next()?.parse().ok()?;
    let day: i8 = parts.next()?.parse().ok()?;
    if parts.next().is_some() {
        return None;
    }
    let date = jiff::civil::Date::new(year, month, day).ok()?;
    Some((
        i64::from(date.year()),
        u32::try_from(date.month()).ok()?,
        u32::try_from(date.day()).ok()?,
    ))
}

/// Milliseconds since the epoch at the start of the day `date` (as
/// [`parse_date`] gives it) in a zone `offset_seconds` east of UTC.
pub(crate) fn start_of_day_ms(date: (i64, u32, u32), offset_seconds: i64) -> i64 {
    let (Ok(year), Ok(month), Ok(day)) = (
        i16::try_from(date.0),
        i8::try_from(date.1),
        i8::try_from(date.2),
    ) else {
        return 0;
    };
    let midnight_utc = jiff::civil::Date::new(year, month, day)
        .and_then(|day| {
            day.to_datetime(jiff::civil::Time::midnight())
                .to_zoned_datetime(jiff::tz::TimeZone::UTC)
        })
        .map_or(0, |at| at.timestamp().as_millisecond());
    midnight_utc - offset_seconds * 1000
}

/// Parses an RFC 3339 time (`2026-03-02T09:00:00Z`, optional fraction, `Z`
/// or an offset) into milliseconds since the epoch.
pub(crate) fn parse_rfc3339_millis(text: &str) -> Option<i64> {
    let at: jiff::Timestamp = text.parse().ok()?;
    Some(at.as_millisecond())
}

/// The MIME type Mattermost records for a file, decided by its extension
/// alone (the server uses `mime.TypeByExtension` and ignores what the
/// uploader declared). Unknown extensions get an empty type, as there.
pub(crate) fn mime_for_extension(extension: &str) -> &'static str {
    match extension {
        "txt" | "text" | "log" => "text/plain",
        "md" | "markdown" => "text/markdown",
        "csv" => "text/csv",
        "tsv" => "text/tab-separated-values",
        "json" => "application/json",
        "xml" => "text/xml; charset=utf-8",
        "html" | "htm" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "pdf" => "application/pdf",
        "doc" => "application/msword",
        "docx" => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xls" => "application/vnd.ms-excel",
        "xlsx" => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "ppt" => "application/vnd.ms-powerpoint",
        "pptx" => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt" => "application/vnd.oasis.opendocument.text",
        "ods" => "application/vnd.oasis.opendocument.spreadsheet",
        "odp" => "application/vnd.oasis.opendocument.presentation",
        "zip" => "application/zip",
        "gz" | "tgz" => "application/gzip",
        "tar" => "application/x-tar",
        "bz2" => "application/x-bzip2",
        "xz" => "application/x-xz",
        "7z" => "application/x-7z-compressed",
        "jpg" | "jpeg" => "image/jpeg",
        "png" => "image/png",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "bmp" => "image/bmp",
        "tif" | "tiff" => "image/tiff",
        "svg" => "image/svg+xml",
        "wav" => "audio/wav",
        "mp3" => "audio/mpeg",
        "ogg" => "audio/ogg",
        "mp4" => "video/mp4",
        "bin" | "exe" | "dll" | "so" => "application/octet-stream",
        _ => "",
    }
}

/// The extension Mattermost records for a file name: the part after the last
/// dot, lowercased, or empty.
pub(crate) fn extension_of(name: &str) -> String {
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
        _ => String::new(),
    }
}

/// Escapes text for HTML or XML, in element content and in attribute
/// values alike.
pub(crate) fn escape_markup(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `User` is `model.User` as the API returns it (password and auth data
/// never leave the server, so they are not kept).
#[derive(Clone, Debug, Serialize)]
pub(crate) struct User {
    pub id: String,
    pub create_at: i64,
    pub update_at: i64,
    pub delete_at: i64,
    pub username: String,
    pub auth_service: String,
    pub email: String,
    pub email_verified: bool,
    pub nickname: String,
    pub first_name: String,
    pub last_name: String,
    pub position: String,
    pub roles: String,
    pub notify_props: Value,
    pub last_password_update: i64,
    pub locale: String,
    pub timezone: Value,
    pub disable_welcome_email: bool,
    /// Free-form props; `customStatus` holds the custom status as a JSON
    /// string, as the server keeps it.
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub props: serde_json::Map<String, Value>,
}

impl User {
    /// The words a user search matches against: username, names, nickname.
    pub(crate) fn search_fields(&self) -> [&str; 4] {
        [
            &self.username,
            &self.first_name,
            &self.last_name,
            &self.nickname,
        ]
    }

    /// Tells whether the user was deactivated.
    pub(crate) fn is_deleted(&self) -> bool {
        self.delete_at != 0
    }
}

/// `Team` is `model.Team`.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Team {
    pub id: String,
    pub create_at: i64,
    pub update_at: i64,
    pub delete_at: i64,
    pub display_name: String,
    pub name: String,
    pub description: String,
    pub email: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub company_name: String,
    pub allowed_domains: String,
    pub invite_id: String,
    pub allow_open_invite: bool,
    pub last_team_icon_update: i64,
    pub scheme_id: Option<String>,
    pub group_constrained: Option<bool>,
    pub policy_id: Option<String>,
    pub cloud_limits_archived: bool,
}

/// `Channel` is `model.Channel`. `kind` is `O` (public), `P` (private), `D`
/// (direct message) or `G` (group message).
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Channel {
    pub id: String,
    pub create_at: i64,
    pub update_at: i64,
    pub delete_at: i64,
    pub team_id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub display_name: String,
    pub name: String,
    pub header: String,
    pub purpose: String,
    pub last_post_at: i64,
    pub total_msg_count: i64,
    pub extra_update_at: i64,
    pub creator_id: String,
    pub scheme_id: Option<String>,
    pub props: Option<Value>,
    pub group_constrained: Option<bool>,
    pub shared: Option<bool>,
    pub total_msg_count_root: i64,
    pub policy_id: Option<String>,
    pub last_root_post_at: i64,
}

impl Channel {
    /// Tells whether this is a direct or group message channel, which
    /// belongs to no team.
    pub(crate) fn is_direct_or_group(&self) -> bool {
        self.kind == "D" || self.kind == "G"
    }
}

/// `ChannelMember` is `model.ChannelMember`: one person in one channel.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ChannelMember {
    pub channel_id: String,
    pub user_id: String,
    pub roles: String,
    pub last_viewed_at: i64,
    pub msg_count: i64,
    pub mention_count: i64,
    pub mention_count_root: i64,
    pub urgent_mention_count: i64,
    pub msg_count_root: i64,
    pub notify_props: Value,
    pub last_update_at: i64,
    pub scheme_guest: bool,
    pub scheme_user: bool,
    pub scheme_admin: bool,
    pub explicit_roles: String,
}

/// `FileInfo` is `model.FileInfo`: what the server knows about an uploaded
/// file. `post_id`, `width`, `height` and `has_preview_image` are left out
/// when empty, as the server does.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct FileInfo {
    pub id: String,
    pub user_id: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub post_id: String,
    pub channel_id: String,
    pub create_at: i64,
    pub update_at: i64,
    pub delete_at: i64,
    pub name: String,
    pub extension: String,
    pub size: u64,
    pub mime_type: String,
    #[serde(skip_serializing_if = "is_zero")]
    pub width: u32,
    #[serde(skip_serializing_if = "is_zero")]
    pub height: u32,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub has_preview_image: bool,
    pub mini_preview: Option<String>,
    pub archived: bool,
}

/// Serde helper: true for a zero dimension, which the server omits.
// Serde hands `skip_serializing_if` a reference; the signature is fixed.
#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(value: &u32) -> bool {
    *value == 0
}

/// `StoredPost` is a post as kept; the fields the server computes when it
/// answers (`reply_count`, `metadata`, …) are added by [`State::post_json`].
///
/// [`State::post_json`]: crate::state::State::post_json
#[derive(Clone, Debug, Serialize)]
pub(crate) struct StoredPost {
    pub id: String,
    pub create_at: i64,
    pub update_at: i64,
    pub edit_at: i64,
    pub delete_at: i64,
    pub is_pinned: bool,
    pub user_id: String,
    pub channel_id: String,
    pub root_id: String,
    pub original_id: String,
    pub message: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub props: Value,
    pub hashtags: String,
    pub pending_post_id: String,
    pub file_ids: Vec<String>,
}

/// `Reaction` is `model.Reaction`: one person's emoji on one post.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Reaction {
    pub user_id: String,
    pub post_id: String,
    pub emoji_name: String,
    pub create_at: i64,
    pub update_at: i64,
    pub delete_at: i64,
    pub remote_id: String,
    pub channel_id: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_26_characters_of_the_mattermost_alphabet() {
        let mut ids = Ids::new();
        let first = ids.next();
        assert_eq!(first.len(), 26);
        assert!(is_valid_id(&first));
        assert!(first.bytes().all(|b| ID_ALPHABET.contains(&b)));
        ids.go_random();
        let random = ids.next();
        assert!(is_valid_id(&random));
        assert_ne!(first, random);
    }

    #[test]
    fn seeded_ids_are_the_same_on_every_run() {
        let a: Vec<String> = (0..3)
            .map({
                let mut ids = Ids::new();
                move |_| ids.next()
            })
            .collect();
        let b: Vec<String> = (0..3)
            .map({
                let mut ids = Ids::new();
                move |_| ids.next()
            })
            .collect();
        assert_eq!(a, b);
    }

    #[test]
    fn zero_bytes_encode_as_the_first_letter_of_the_alphabet() {
        assert_eq!(encode_id([0; 16]), "y".repeat(26));
    }

    #[test]
    fn rfc3339_times_become_epoch_millis() {
        let cases = [
            ("1970-01-01T00:00:00Z", Some(0)),
            ("2026-03-02T09:00:00Z", Some(1_772_442_000_000)),
            ("2026-03-02T10:00:00+01:00", Some(1_772_442_000_000)),
            ("2026-03-02T09:00:00.250Z", Some(1_772_442_000_250)),
            ("2026-02-30T09:00:00Z", None),
            ("yesterday", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_rfc3339_millis(text), want, "{text}");
        }
    }

    #[test]
    fn the_mime_type_comes_from_the_extension() {
        assert_eq!(
            mime_for_extension(&extension_of("Report.DOCX")),
            mime_for_extension("docx")
        );
        assert_eq!(extension_of("archive.tar.gz"), "gz");
        assert_eq!(extension_of(".hidden"), "");
        assert_eq!(mime_for_extension("nope"), "");
    }
}

/// `Status` is `model.Status`: someone's presence as others see it.
// `status` is Mattermost's own field name.
#[allow(clippy::struct_field_names)]
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct Status {
    pub user_id: String,
    /// `online`, `away`, `dnd` or `offline`.
    pub status: String,
    /// Whether the person set it themself (it then does not change with activity).
    pub manual: bool,
    pub last_activity_at: i64,
    /// When do-not-disturb ends (seconds since the epoch); 0 for never.
    #[serde(default)]
    pub dnd_end_time: i64,
}
