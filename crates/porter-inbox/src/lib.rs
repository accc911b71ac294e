//! `porter-inbox` keeps the files that tools return so that the model never
//! carries their bytes. SKELETON: the public API below is agreed between the
//! gateway's parts; bodies are being written (see the issue 5 brief).

use std::path::{Path, PathBuf};
use std::sync::Arc;
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
    pub key_name: String,
    pub tenant: String,
}

/// `Limits` bound what an inbox keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub file_max_bytes: u64,
    pub inbox_max_bytes: u64,
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
}

/// `RunInfo` is one run's record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunInfo {
    pub id: RunId,
    pub owner: Owner,
    /// Unix milliseconds.
    pub started_at: i64,
    pub ended_at: Option<i64>,
    pub purged: bool,
}

/// `FileRecord` is one kept file's record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    pub run: RunId,
    /// Relative to the inbox root, `/`-separated (`documents/report.pdf`).
    pub path: String,
    pub size: u64,
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
    pub origin: Origin,
    /// The call, as JSON text, for the record.
    pub call: String,
}

/// `Outcome` is what became of a file offered to the inbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Kept(FileRecord),
    NotKept {
        why: String,
        media_type: String,
        size: u64,
        origin: String,
    },
}

impl Outcome {
    /// The one line the model gets in place of the bytes.
    #[must_use]
    pub fn stub(&self) -> String {
        todo!()
    }
}

/// `Event` is one entry of a run's event stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub seq: u64,
    pub run: RunId,
    /// `file_captured`, `run_started`, `run_ended`, …
    pub kind: String,
    pub data: serde_json::Value,
    /// Unix milliseconds.
    pub at: i64,
}

/// `InboxError` is a failure of the store itself (disk, database), never a
/// file that was not kept (that is an [`Outcome::NotKept`]).
#[derive(Debug, thiserror::Error)]
pub enum InboxError {
    #[error("no run {0}")]
    NoRun(RunId),
    #[error("no file {path:?} in the inbox of run {run}")]
    NoFile { run: RunId, path: String },
    #[error("inbox storage failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("inbox records failed: {0}")]
    Records(String),
}

/// `Keeper` streams one file into the inbox (HTTP bodies, downloads).
pub struct Keeper {
    _private: (),
}

impl std::io::Write for Keeper {
    fn write(&mut self, _buf: &[u8]) -> std::io::Result<usize> {
        todo!()
    }
    fn flush(&mut self) -> std::io::Result<()> {
        todo!()
    }
}

impl Keeper {
    /// Ends the file: names it, records it, emits `file_captured`.
    pub fn finish(self) -> Result<Outcome, InboxError> {
        todo!()
    }
}

/// `Inbox` is the facade every tool uses.
pub struct Inbox {
    _private: Arc<()>,
}

impl Inbox {
    /// Opens (creating) the local store under `data_dir`: SQLite records in
    /// `data_dir/porter.sqlite3`, files under `data_dir/runs/<run>/inbox/`.
    pub fn open(_data_dir: &Path, _limits: Limits) -> Result<Self, InboxError> {
        todo!()
    }
    pub fn limits(&self) -> Limits {
        todo!()
    }
    pub fn start_run(&self, _owner: Owner) -> Result<RunInfo, InboxError> {
        todo!()
    }
    pub fn end_run(&self, _run: RunId) -> Result<(), InboxError> {
        todo!()
    }
    pub fn run(&self, _run: RunId) -> Result<Option<RunInfo>, InboxError> {
        todo!()
    }
    pub fn runs(&self) -> Result<Vec<RunInfo>, InboxError> {
        todo!()
    }
    /// Keeps a file whose bytes are all at hand (MCP results).
    pub fn keep_bytes(
        &self,
        _run: RunId,
        _incoming: Incoming,
        _bytes: &[u8],
    ) -> Result<Outcome, InboxError> {
        todo!()
    }
    /// Starts streaming a file into the inbox.
    pub fn keeper(&self, _run: RunId, _incoming: Incoming) -> Result<Keeper, InboxError> {
        todo!()
    }
    pub fn files(&self, _run: RunId) -> Result<Vec<FileRecord>, InboxError> {
        todo!()
    }
    pub fn file(&self, _run: RunId, _path: &str) -> Result<Option<FileRecord>, InboxError> {
        todo!()
    }
    /// The inbox root of a run on the local disk (may not exist yet).
    pub fn inbox_dir(&self, _run: RunId) -> PathBuf {
        todo!()
    }
    pub fn remove(&self, _run: RunId, _path: &str) -> Result<(), InboxError> {
        todo!()
    }
    pub fn clear(&self, _run: RunId) -> Result<usize, InboxError> {
        todo!()
    }
    pub fn record_event(
        &self,
        _run: RunId,
        _kind: &str,
        _data: serde_json::Value,
    ) -> Result<Event, InboxError> {
        todo!()
    }
    pub fn subscribe(
        &self,
        _run: RunId,
        _from_seq: u64,
    ) -> Result<(Vec<Event>, tokio::sync::broadcast::Receiver<Event>), InboxError> {
        todo!()
    }
    pub fn transcript_path(&self, _run: RunId) -> PathBuf {
        todo!()
    }
    pub fn purge_expired(&self, _now: SystemTime) -> Result<Vec<RunId>, InboxError> {
        todo!()
    }
}
