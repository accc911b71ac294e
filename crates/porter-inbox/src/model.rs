//! The inbox's vocabulary: runs and their owners, the limits, the records
//! of kept files and events, what a capture brings and what becomes of it,
//! and the errors; with the small rules that go with them (a client's name
//! made one clean line, times in Unix milliseconds).

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

/// `FILE_MAX_BYTES` is the default most one kept file may hold (64 MiB).
pub const FILE_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// `INBOX_MAX_BYTES` is the default most one run's inbox tree may hold (1 GiB).
pub const INBOX_MAX_BYTES: u64 = 1024 * 1024 * 1024;
/// `INBOX_TTL` is how long a run's inbox outlives the run by default (24 h).
pub const INBOX_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// `RunId` names one run (one client session): a UUIDv7.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(pub uuid::Uuid);

impl RunId {
    /// A new id, ordered by time.
    #[must_use]
    pub fn new() -> Self {
        Self(uuid::Uuid::now_v7())
    }
}

impl Default for RunId {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Display for RunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::str::FromStr for RunId {
    type Err = uuid::Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse().map(Self)
    }
}

/// `Owner` is who a run belongs to: the API key's name and tenant (HTTP), or
/// the local user (stdio: key `local`, tenant `local`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    /// The API key's name (`local` for stdio).
    pub key_name: String,
    /// The key's tenant (`local` for stdio).
    pub tenant: String,
}

/// `Limits` bound what an inbox keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most one kept file may hold; a larger one is not kept.
    pub file_max_bytes: u64,
    /// The most one run's inbox tree may hold, counting captures in flight.
    pub inbox_max_bytes: u64,
    /// How long after a run ends its inbox is purged.
    pub inbox_ttl: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            file_max_bytes: FILE_MAX_BYTES,
            inbox_max_bytes: INBOX_MAX_BYTES,
            inbox_ttl: INBOX_TTL,
        }
    }
}

/// `Origin` is where a kept file came from; it shows as `from <origin>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// `mcp:<server>/<tool>`
    Mcp { server: String, tool: String },
    /// `http:<host>`
    Http { host: String },
    /// `webfetch:<host>`
    WebFetch { host: String },
    /// `file:download`
    FileDownload,
    /// `file:extract`: Markdown that `File extract` made from another file.
    Extract,
}

/// `RunInfo` is one run's record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunInfo {
    /// The run's id.
    pub id: RunId,
    /// Who the run belongs to.
    pub owner: Owner,
    /// Unix milliseconds.
    pub started_at: i64,
    /// Unix milliseconds, once the run has ended.
    pub ended_at: Option<i64>,
    /// Whether the run's inbox has been purged (its records stay).
    pub purged: bool,
    /// The MCP client that opened the run, as it named itself at
    /// `initialize` (its `title`, else its `name`), cleaned to one short
    /// line; none for a run without a session or a client that gave none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
}

/// The most characters of a client's name a run keeps.
pub const CLIENT_NAME_CHARS: usize = 80;

/// A client's self-given name as a run keeps it: control and format
/// characters (bidi overrides among them) dropped, whitespace runs made one
/// space, trimmed, and cut to [`CLIENT_NAME_CHARS`]; none when nothing is
/// left.
#[must_use]
pub fn clean_client_name(name: &str) -> Option<String> {
    let mut out = String::new();
    let mut space = false;
    for c in name.chars() {
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if c.is_control() || is_format_char(c) {
            continue;
        }
        if out.chars().count() >= CLIENT_NAME_CHARS {
            break;
        }
        if space {
            out.push(' ');
            space = false;
        }
        out.push(c);
    }
    (!out.is_empty()).then_some(out)
}

/// Unicode's invisible format characters a name could hide behind: bidi
/// embeddings, overrides and isolates, zero-width joiners and marks.
fn is_format_char(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

/// `FileRecord` is one kept file's record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    /// The run whose inbox holds the file.
    pub run: RunId,
    /// Relative to the inbox root, `/`-separated (`documents/report.pdf`).
    pub path: String,
    /// Bytes.
    pub size: u64,
    /// The declared type's essence, else the sniffed one.
    pub media_type: String,
    /// Lower-case hex.
    pub sha256: String,
    /// The origin's display form (`mcp:files/get_attachment`).
    pub origin: String,
    /// The call that produced it (tool name and arguments, as JSON text).
    pub call: String,
    /// Unix milliseconds.
    pub created_at: i64,
}

/// `Incoming` is what is known of a file about to be kept, besides its bytes.
#[derive(Debug, Clone)]
pub struct Incoming {
    /// A name from the result itself (a resource URI's last segment, a
    /// Content-Disposition filename), if any.
    pub name: Option<String>,
    /// The name to fall back on: the call's `fileName`/`filename`/`name`/
    /// `path` argument, else the tool's name.
    pub fallback_name: String,
    /// A folder under the inbox root (`web/example.org`), if any.
    pub dir: Option<String>,
    /// The media type the source declared, if any.
    pub declared_type: Option<String>,
    /// Where the file comes from, for the stub and the record.
    pub origin: Origin,
    /// The call, as JSON text, for the record.
    pub call: String,
}

/// `Outcome` is what became of a file offered to the inbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The file is in the inbox under the record's path.
    Kept(FileRecord),
    /// The file was not kept; nothing of it is left on disk.
    NotKept {
        /// Why, as the stub says it (`over the 64 MiB limit for one file`).
        why: String,
        /// Its media type, as far as it was seen.
        media_type: String,
        /// Its size, as far as it was seen (at least the bytes offered).
        size: u64,
        /// The origin's display form.
        origin: String,
    },
}

/// `NewEvent` is an event not stored yet: a store numbers it when it
/// stores it, alone or in one step with the change it announces.
#[derive(Debug, Clone, Copy)]
pub struct NewEvent<'a> {
    /// `file_captured`, `run_started`, `run_ended`, …
    pub kind: &'a str,
    /// What happened, as JSON.
    pub data: &'a serde_json::Value,
    /// Unix milliseconds.
    pub at: i64,
}

impl NewEvent<'_> {
    /// The event as stored in `run` under `seq`.
    #[must_use]
    pub fn numbered(&self, run: RunId, seq: u64) -> Event {
        Event {
            seq,
            run,
            kind: self.kind.to_owned(),
            data: self.data.clone(),
            at: self.at,
        }
    }
}

/// `Event` is one entry of a run's event stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// 1, 2, 3, … within the run, without gaps.
    pub seq: u64,
    /// The run the event belongs to.
    pub run: RunId,
    /// `file_captured`, `run_started`, `run_ended`, …
    pub kind: String,
    /// What happened, as JSON (for `file_captured`: `ref`, `path`,
    /// `media_type`, `size`, `sha256`, `origin`, `call`).
    pub data: serde_json::Value,
    /// Unix milliseconds.
    pub at: i64,
}

/// `InboxError` is a failure of the store itself (disk, database), never a
/// file that was not kept (that is an [`Outcome::NotKept`]).
#[derive(Debug, thiserror::Error)]
pub enum InboxError {
    /// There is no such run (or the caller may not know of it).
    #[error("no run {0}")]
    NoRun(RunId),
    /// The run's inbox has no such file; list it to see what it holds.
    #[error("no file {path:?} in the inbox of run {run}")]
    NoFile {
        /// The run asked about.
        run: RunId,
        /// The path asked for, as given.
        path: String,
    },
    /// The disk failed; the message names the path.
    #[error("inbox storage failed: {0}")]
    Io(#[from] std::io::Error),
    /// The database failed; the message says what was being done.
    #[error("inbox records failed: {0}")]
    Records(String),
    /// The records database is not answering (down, out of reach, or its
    /// connection was cut): the same request may well succeed in a few
    /// seconds. The message says what was being done and where.
    #[error("the inbox's records database is not answering: {0}")]
    Unavailable(String),
}

impl InboxError {
    /// What went wrong, in a few words fit for a model or a client (no
    /// paths, no database address): the whole error goes to the log.
    #[must_use]
    pub fn reason(&self) -> &'static str {
        match self {
            Self::NoRun(_) => "its run is not recorded",
            Self::NoFile { .. } => "the inbox has no such file",
            Self::Io(_) => "the inbox's storage failed",
            Self::Records(_) => {
                "the inbox's records database failed or is not answering; try again in a moment"
            }
            Self::Unavailable(_) => {
                "the inbox's records database is not answering; try again in a few seconds"
            }
        }
    }
}

/// `Notice` says that a process sharing the records (this one or
/// another) stored event `seq` of `run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Notice {
    /// The run the event belongs to.
    pub run: RunId,
    /// Its number in the run.
    pub seq: u64,
}

/// Lower-case hex of a digest.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// Now, in Unix milliseconds.
pub(crate) fn now_ms() -> i64 {
    unix_ms(SystemTime::now())
}

/// A time in Unix milliseconds (times before 1970 count as 0).
pub(crate) fn unix_ms(time: SystemTime) -> i64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod client_name_tests {
    use super::{CLIENT_NAME_CHARS, clean_client_name};

    #[test]
    fn a_client_name_is_one_clean_short_line() {
        assert_eq!(
            clean_client_name("  Claude\n\tDesktop  ").as_deref(),
            Some("Claude Desktop")
        );
        assert_eq!(
            clean_client_name("evil\u{202E}txt.exe\u{1b}[31m").as_deref(),
            Some("eviltxt.exe[31m")
        );
        assert_eq!(clean_client_name("\u{200B} \u{7}"), None);
        let long = clean_client_name(&"é".repeat(500)).expect("a name");
        assert_eq!(long.chars().count(), CLIENT_NAME_CHARS);
    }
}
