//! `porter-inbox` keeps the files that tools return so that the model never
//! carries their bytes: each file goes to the run's inbox and the model gets
//! a one-line stub in its place.
//!
//! It names files safely (ASCII, `[A-Za-z0-9._-]`, `-2`, `-3`, … on a clash,
//! never overwriting), tells their media type, holds the per-file and
//! per-run caps exactly even under concurrent captures, writes through a
//! staged temp file so a crash never leaves a half file under a real name,
//! records every file and event (SQLite), and streams each run's events
//! live. Bytes and records sit behind the [`Blobs`] and [`Records`] traits.
//!
//! It does not fetch anything, check grants, or decide what in a tool result
//! is a file: the capture layer and the gateway do, and call in here.
//!
//! ```no_run
//! # fn main() -> Result<(), porter_inbox::InboxError> {
//! use porter_inbox::{Inbox, Incoming, Limits, Origin, Owner};
//! let inbox = Inbox::open(std::path::Path::new("/var/lib/porter"), Limits::default())?;
//! let run = inbox.start_run(Owner { key_name: "local".into(), tenant: "local".into() })?;
//! let incoming = Incoming {
//!     name: Some("report.pdf".into()),
//!     fallback_name: "get_attachment".into(),
//!     dir: Some("documents".into()),
//!     declared_type: Some("application/pdf".into()),
//!     origin: Origin::Mcp { server: "files".into(), tool: "get_attachment".into() },
//!     call: r#"{"tool":"get_attachment"}"#.into(),
//! };
//! let outcome = inbox.keep_bytes(run.id, incoming, b"%PDF-1.7 ...")?;
//! println!("{}", outcome.stub()); // [file: volume:inbox:documents/report.pdf · …]
//! # Ok(()) }
//! ```

pub mod documents;
mod events;
mod jobs;
mod keeper;
mod limits;
pub mod media;
pub mod names;
mod sessions;
pub mod store;
mod stub;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

pub use documents::{Document, Documents, SqliteDocuments};
pub use events::Notice;
pub use jobs::{Job, JobLock};
pub use keeper::Keeper;
pub use limits::SharedBudget;
pub use sessions::{SessionRecords, SharedClaim, StoredSession};
pub use store::{
    BlobReader, Blobs, LocalBlobs, PostgresRecords, Records, S3Blobs, S3Settings, SqliteRecords,
    Staged,
};
pub use stub::{HASH_SHOWN_CHARS, inbox_ref};

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

impl Outcome {
    /// The one line the model gets in place of the bytes.
    #[must_use]
    pub fn stub(&self) -> String {
        stub::render(self)
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
        }
    }
}

/// `Inbox` is the facade every tool uses. It is cheap to clone (one `Arc`);
/// clones share the stores, the byte budget and the event channels.
#[derive(Clone)]
pub struct Inbox {
    shared: Arc<Shared>,
}

/// What every clone of an [`Inbox`] and every [`Keeper`] shares.
struct Shared {
    data_dir: PathBuf,
    limits: Limits,
    blobs: Arc<dyn Blobs>,
    records: Arc<dyn Records>,
    budget: limits::Budget,
    hub: events::Hub,
    /// The Document store, when this inbox has one.
    documents: Option<Arc<dyn Documents>>,
}

/// `DB_FILE` is the records database's name under the data dir.
const DB_FILE: &str = "porter.sqlite3";

/// `MAX_NAME_TRIES` bounds the `-2`, `-3`, … search for a free name, so a
/// store that keeps refusing cannot loop forever.
const MAX_NAME_TRIES: u32 = 100_000;

impl Inbox {
    /// Opens (creating) the local store under `data_dir`: SQLite records in
    /// `data_dir/porter.sqlite3`, files under `data_dir/runs/<run>/inbox/`.
    /// Temp files left by a process killed mid-write are removed.
    pub fn open(data_dir: &Path, limits: Limits) -> Result<Self, InboxError> {
        Self::on_local_disk(data_dir, limits, None, || {
            let db = data_dir.join(DB_FILE);
            let records: Arc<dyn Records> = Arc::new(SqliteRecords::open(&db)?);
            let documents: Arc<dyn Documents> = Arc::new(SqliteDocuments::open(&db)?);
            Ok((records, documents))
        })
    }

    /// The inbox with its files under `data_dir` (created private to this
    /// user) and its records and Documents from `stores`.
    fn on_local_disk(
        data_dir: &Path,
        limits: Limits,
        blobs: Option<Arc<dyn Blobs>>,
        stores: impl FnOnce() -> Result<(Arc<dyn Records>, Arc<dyn Documents>), InboxError>,
    ) -> Result<Self, InboxError> {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(data_dir).map_err(store::at(data_dir))?;
        let (records, documents) = stores()?;
        Self::with_all_stores(
            data_dir,
            blobs.unwrap_or_else(|| Arc::new(LocalBlobs::new(data_dir))),
            records,
            Some(documents),
            limits,
        )
    }

    /// Opens the inbox with its records (runs, files, events) and Documents
    /// (searched with PostgreSQL's full-text search) in the PostgreSQL
    /// database at `url`, migrated to the current schema; files stay under
    /// `data_dir` as with [`Inbox::open`]. Messages show `url` without its
    /// password.
    pub fn open_on_postgres(
        data_dir: &Path,
        url: &str,
        limits: Limits,
    ) -> Result<Self, InboxError> {
        Self::on_local_disk(data_dir, limits, None, || {
            let store = Arc::new(PostgresRecords::open(url)?);
            let records: Arc<dyn Records> = store.clone();
            let documents: Arc<dyn Documents> = store;
            Ok((records, documents))
        })
    }

    /// Opens the inbox with its files in `blobs` (say [`S3Blobs`]) and its
    /// records and Documents in the PostgreSQL database at `postgres_url`,
    /// else in the SQLite file under `data_dir`. `data_dir` keeps the
    /// transcripts and, for blobs off the local disk, the copies of files
    /// the `File` tool reads (see [`Inbox::localize`]).
    pub fn open_with_blobs(
        data_dir: &Path,
        blobs: Arc<dyn Blobs>,
        postgres_url: Option<&str>,
        limits: Limits,
    ) -> Result<Self, InboxError> {
        Self::on_local_disk(data_dir, limits, Some(blobs), || {
            if let Some(url) = postgres_url {
                let store = Arc::new(PostgresRecords::open(url)?);
                let records: Arc<dyn Records> = store.clone();
                let documents: Arc<dyn Documents> = store;
                return Ok((records, documents));
            }
            let db = data_dir.join(DB_FILE);
            let records: Arc<dyn Records> = Arc::new(SqliteRecords::open(&db)?);
            let documents: Arc<dyn Documents> = Arc::new(SqliteDocuments::open(&db)?);
            Ok((records, documents))
        })
    }

    /// Opens an inbox over other stores (object storage, another database).
    /// `data_dir` still holds the transcripts. Stale staged objects are
    /// removed.
    pub fn with_stores(
        data_dir: &Path,
        blobs: Arc<dyn Blobs>,
        records: Arc<dyn Records>,
        limits: Limits,
    ) -> Result<Self, InboxError> {
        Self::with_all_stores(data_dir, blobs, records, None, limits)
    }

    /// Opens an inbox over other stores, with a Document store besides
    /// (none: `File import` and the `Documents` tool say there is none).
    pub fn with_all_stores(
        data_dir: &Path,
        blobs: Arc<dyn Blobs>,
        records: Arc<dyn Records>,
        documents: Option<Arc<dyn Documents>>,
        limits: Limits,
    ) -> Result<Self, InboxError> {
        // Replicas sharing the records sweep one at a time; one that finds
        // another sweeping leaves it to that one.
        if let Some(_sweeping) = records.lock_job(Job::Sweep)? {
            let stale = blobs.remove_stale()?;
            if stale > 0 {
                tracing::info!(stale, "removed temp files left by an interrupted capture");
            }
        }
        let notices = records.follow()?;
        let shared = Arc::new(Shared {
            data_dir: data_dir.to_owned(),
            limits,
            blobs,
            records,
            budget: limits::Budget::new(),
            hub: events::Hub::default(),
            documents,
        });
        if let Some(notices) = notices {
            follow_notices(Arc::downgrade(&shared), notices)?;
        }
        Ok(Self { shared })
    }

    /// The Document store (imported documents, searchable), if this inbox
    /// has one: [`Inbox::open`] always makes one.
    #[must_use]
    pub fn documents(&self) -> Option<&dyn Documents> {
        self.shared.documents.as_deref()
    }

    /// The limits this inbox holds files to.
    #[must_use]
    pub fn limits(&self) -> Limits {
        self.shared.limits
    }

    /// Starts a run (a UUIDv7 id) and records `run_started`.
    pub fn start_run(&self, owner: Owner) -> Result<RunInfo, InboxError> {
        self.start_client_run(owner, None)
    }

    /// Starts a run opened by the MCP client that named itself `client`
    /// (cleaned with [`clean_client_name`]) and records `run_started`.
    pub fn start_client_run(
        &self,
        owner: Owner,
        client: Option<&str>,
    ) -> Result<RunInfo, InboxError> {
        let info = RunInfo {
            id: RunId::new(),
            owner,
            started_at: now_ms(),
            ended_at: None,
            purged: false,
            client: client.and_then(clean_client_name),
        };
        self.shared.records.insert_run(&info)?;
        self.announce_run(&info)?;
        Ok(info)
    }

    /// Records `run_started` for a run just recorded.
    fn announce_run(&self, info: &RunInfo) -> Result<(), InboxError> {
        self.record_event(
            info.id,
            "run_started",
            serde_json::json!({
                "key_name": info.owner.key_name,
                "tenant": info.owner.tenant,
                "client": info.client,
            }),
        )?;
        Ok(())
    }

    /// Ends a run and records `run_ended`; its inbox lives on for
    /// [`Limits::inbox_ttl`]. Ending an ended run changes nothing.
    pub fn end_run(&self, run: RunId) -> Result<(), InboxError> {
        let info = self.existing_run(run)?;
        if info.ended_at.is_some() {
            return Ok(());
        }
        self.shared.records.end_run(run, now_ms())?;
        self.record_event(run, "run_ended", serde_json::json!({}))?;
        Ok(())
    }

    /// One run's record.
    pub fn run(&self, run: RunId) -> Result<Option<RunInfo>, InboxError> {
        self.shared.records.run(run)
    }

    /// Every run, oldest first (the caller filters what a key may read).
    pub fn runs(&self) -> Result<Vec<RunInfo>, InboxError> {
        self.shared.records.runs()
    }

    /// Keeps a file whose bytes are all at hand (MCP results): one SHA-256
    /// pass and one write, no copy.
    // The agreed signature takes `Incoming` by value: callers build it for
    // this one call.
    #[allow(clippy::needless_pass_by_value)]
    pub fn keep_bytes(
        &self,
        run: RunId,
        incoming: Incoming,
        bytes: &[u8],
    ) -> Result<Outcome, InboxError> {
        let info = self.existing_run(run)?;
        let name_hint = incoming.name.as_deref().unwrap_or(&incoming.fallback_name);
        let media_type = media::media_type(incoming.declared_type.as_deref(), bytes, name_hint);
        let size = bytes.len() as u64;
        let limits = self.shared.limits;
        let not_kept = |why: String, media_type: String| {
            Ok(Outcome::NotKept {
                why,
                media_type,
                size,
                origin: incoming.origin.to_string(),
            })
        };
        if info.purged {
            return not_kept(purged_why(), media_type);
        }
        if size > limits.file_max_bytes {
            return not_kept(limits::over_file_limit(limits.file_max_bytes), media_type);
        }
        let mut ticket = limits::Ticket::new();
        if !self.reserve(run, &mut ticket, size)? {
            return not_kept(limits::over_inbox_limit(limits.inbox_max_bytes), media_type);
        }
        let kept = self.stage_and_commit(run, &incoming, bytes, media_type, &mut ticket);
        self.release(run, &mut ticket);
        kept.map(Outcome::Kept)
    }

    fn stage_and_commit(
        &self,
        run: RunId,
        incoming: &Incoming,
        bytes: &[u8],
        media_type: String,
        ticket: &mut limits::Ticket,
    ) -> Result<FileRecord, InboxError> {
        let mut staged = self.shared.blobs.stage(run)?;
        staged.write_all(bytes)?;
        let sha256 = keeper::hex(&Sha256::digest(bytes));
        self.commit(
            run,
            staged,
            incoming,
            media_type,
            bytes.len() as u64,
            sha256,
            ticket,
        )
    }

    /// Starts streaming a file into the inbox; see [`Keeper`] for how the
    /// caps are held.
    pub fn keeper(&self, run: RunId, incoming: Incoming) -> Result<Keeper, InboxError> {
        let info = self.existing_run(run)?;
        if info.purged {
            return Ok(Keeper::new(
                self.clone(),
                run,
                incoming,
                None,
                Some(purged_why()),
            ));
        }
        let staged = self.shared.blobs.stage(run)?;
        Ok(Keeper::new(self.clone(), run, incoming, Some(staged), None))
    }

    /// Names a staged file (trying `-2`, `-3`, … on a clash), records it and
    /// emits `file_captured`. The bytes are already reserved, by `ticket`:
    /// the file's record holds them once it is stored.
    // One step of a capture, which has all of these at hand.
    #[allow(clippy::too_many_arguments)]
    fn commit(
        &self,
        run: RunId,
        mut staged: Box<dyn Staged>,
        incoming: &Incoming,
        media_type: String,
        size: u64,
        sha256: String,
        ticket: &mut limits::Ticket,
    ) -> Result<FileRecord, InboxError> {
        let name = names::file_name(
            incoming.name.as_deref(),
            &incoming.fallback_name,
            &media_type,
        );
        let dir = incoming.dir.as_deref().and_then(names::clean_dir);
        let within = |name: String| match &dir {
            Some(dir) => format!("{dir}/{name}"),
            None => name,
        };
        // Every numbered name starts with the name's stem: the ones taken
        // are skipped without a try (a run may hold hundreds of one name).
        let taken = self
            .shared
            .records
            .names_taken(run, &within(names::split_extension(&name).0.to_owned()))?;
        let mut path = None;
        for n in 1..=MAX_NAME_TRIES {
            let candidate = within(names::numbered(&name, n));
            if taken.contains(&candidate) {
                continue;
            }
            let committed = match limits::Budget::claim_name(
                self.shared.records.as_ref(),
                run,
                ticket,
                &candidate,
            )? {
                limits::NameClaim::Taken => continue,
                limits::NameClaim::Claimed => staged.commit_claimed(&candidate)?,
                limits::NameClaim::Unclaimed => staged.commit(&candidate)?,
            };
            if committed {
                path = Some(candidate);
                break;
            }
        }
        let Some(path) = path else {
            return Err(
                std::io::Error::other(format!("no free name like {name:?} in the inbox")).into(),
            );
        };
        let record = FileRecord {
            run,
            path,
            size,
            media_type,
            sha256,
            origin: incoming.origin.to_string(),
            call: incoming.call.clone(),
            created_at: now_ms(),
        };
        if let Err(e) = limits::Budget::record_file(self.shared.records.as_ref(), &record, ticket) {
            let _ = self.shared.blobs.remove(run, &record.path);
            return Err(e);
        }
        let data = serde_json::json!({
            "ref": inbox_ref(&record.path),
            "path": record.path,
            "media_type": record.media_type,
            "size": record.size,
            "sha256": record.sha256,
            "origin": record.origin,
            "call": record.call,
        });
        // The file is kept and recorded; an event that could not be stored
        // does not undo that.
        if let Err(e) = self.record_event(run, "file_captured", data) {
            tracing::warn!(run = %run, path = %record.path, error = %e, "file_captured not recorded");
        }
        Ok(record)
    }

    /// Adds `bytes` to what `ticket` holds in the run's inbox budget;
    /// `false` when they do not fit.
    fn reserve(
        &self,
        run: RunId,
        ticket: &mut limits::Ticket,
        bytes: u64,
    ) -> Result<bool, InboxError> {
        let shared = &self.shared;
        shared.budget.reserve(
            shared.records.as_ref(),
            run,
            ticket,
            bytes,
            shared.limits.inbox_max_bytes,
        )
    }

    /// Gives back what `ticket` still holds (nothing once its file is
    /// recorded).
    fn release(&self, run: RunId, ticket: &mut limits::Ticket) {
        self.shared
            .budget
            .release(self.shared.records.as_ref(), run, ticket);
    }

    /// The bytes a run's inbox holds, counting captures in flight (on every
    /// replica, when the records are shared).
    pub fn inbox_bytes(&self, run: RunId) -> Result<u64, InboxError> {
        self.shared
            .budget
            .current(self.shared.records.as_ref(), run)
    }

    /// A run's kept files, by path.
    pub fn files(&self, run: RunId) -> Result<Vec<FileRecord>, InboxError> {
        self.existing_run(run)?;
        self.shared.records.files(run)
    }

    /// One kept file's record.
    pub fn file(&self, run: RunId, path: &str) -> Result<Option<FileRecord>, InboxError> {
        self.existing_run(run)?;
        if !names::is_inbox_path(path) {
            return Ok(None);
        }
        self.shared.records.file(run, path)
    }

    /// Opens a kept file for reading, with its record. Only a recorded path
    /// opens: `../x`, absolute paths and names the inbox did not make are
    /// [`InboxError::NoFile`] before the disk is touched.
    pub fn open_file(
        &self,
        run: RunId,
        path: &str,
    ) -> Result<(FileRecord, Box<dyn BlobReader>), InboxError> {
        let no_file = || InboxError::NoFile {
            run,
            path: path.to_owned(),
        };
        let record = self.file(run, path)?.ok_or_else(no_file)?;
        let file = self.shared.blobs.open(run, &record.path)?;
        Ok((record, file))
    }

    /// The inbox root of a run on the local disk (may not exist yet). With
    /// blobs off the local disk it holds the copies [`Inbox::localize`]
    /// made.
    #[must_use]
    pub fn inbox_dir(&self, run: RunId) -> PathBuf {
        LocalBlobs::new(&self.shared.data_dir).inbox_dir(run)
    }

    /// Whether the files are on the local disk under [`Inbox::inbox_dir`]
    /// (else in object storage).
    #[must_use]
    pub fn blobs_on_local_disk(&self) -> bool {
        self.shared.blobs.on_local_disk()
    }

    /// Makes [`Inbox::inbox_dir`] hold every recorded file at or under
    /// `rel` (`""`: the whole inbox) as the blob store has it, and nothing
    /// else there, so tools that read the inbox as a folder see what is
    /// recorded. Nothing to do when the files are on the local disk already.
    /// A copy that is there with the recorded size is kept; a missing one
    /// is fetched through a staged file (so a reader never sees half of it).
    pub fn localize(&self, run: RunId, rel: &str) -> Result<(), InboxError> {
        if self.blobs_on_local_disk() {
            return Ok(());
        }
        let rel = rel.trim_matches('/');
        let in_scope = |path: &str| {
            rel.is_empty()
                || path == rel
                || path
                    .strip_prefix(rel)
                    .is_some_and(|rest| rest.starts_with('/'))
        };
        let records: std::collections::BTreeMap<String, FileRecord> = self
            .shared
            .records
            .files(run)?
            .into_iter()
            .filter(|r| in_scope(&r.path))
            .map(|r| (r.path.clone(), r))
            .collect();
        let cache = LocalBlobs::new(&self.shared.data_dir);
        let root = cache.inbox_dir(run);
        let mut present = Vec::new();
        store::local_files(&root, rel, &mut present)?;
        for (path, size) in present {
            if records.get(&path).is_none_or(|r| r.size != size) {
                cache.remove(run, &path)?;
            }
        }
        for record in records.values() {
            let copy = root.join(&record.path);
            if std::fs::symlink_metadata(&copy).is_ok_and(|m| m.is_file() && m.len() == record.size)
            {
                continue;
            }
            let mut reader = self.shared.blobs.open(run, &record.path)?;
            let mut staged = cache.stage(run)?;
            std::io::copy(&mut reader, &mut staged)?;
            // Another call may have made the same copy meanwhile: fine.
            let _ = staged.commit(&record.path)?;
        }
        Ok(())
    }

    /// Drops the local copy of a file whose blob is off the local disk.
    fn drop_local_copy(&self, run: RunId, path: &str) -> Result<(), InboxError> {
        if self.blobs_on_local_disk() {
            return Ok(());
        }
        LocalBlobs::new(&self.shared.data_dir).remove(run, path)
    }

    /// Removes one kept file and its record, freeing its bytes, and records
    /// `file_removed`.
    pub fn remove(&self, run: RunId, path: &str) -> Result<(), InboxError> {
        let record = self.file(run, path)?.ok_or_else(|| InboxError::NoFile {
            run,
            path: path.to_owned(),
        })?;
        self.remove_record(&record)?;
        self.record_event(
            run,
            "file_removed",
            serde_json::json!({"ref": inbox_ref(&record.path), "path": record.path}),
        )?;
        Ok(())
    }

    fn remove_record(&self, record: &FileRecord) -> Result<(), InboxError> {
        self.shared.blobs.remove(record.run, &record.path)?;
        self.drop_local_copy(record.run, &record.path)?;
        if self.shared.records.remove_file(record.run, &record.path)? {
            self.shared
                .budget
                .freed(self.shared.records.as_ref(), record.run, record.size);
        }
        Ok(())
    }

    /// Removes every kept file of a run, answers how many, and records
    /// `inbox_cleared`.
    pub fn clear(&self, run: RunId) -> Result<usize, InboxError> {
        let files = self.files(run)?;
        for record in &files {
            self.remove_record(record)?;
        }
        self.record_event(
            run,
            "inbox_cleared",
            serde_json::json!({"files": files.len()}),
        )?;
        Ok(files.len())
    }

    /// Records an event of any kind: stored under the run's next seq,
    /// appended to the run's transcript, logged, and sent live to the run's
    /// and the all-runs subscribers.
    // The agreed signature takes the data by value, as callers build it
    // inline with `json!`.
    #[allow(clippy::needless_pass_by_value)]
    pub fn record_event(
        &self,
        run: RunId,
        kind: &str,
        data: serde_json::Value,
    ) -> Result<Event, InboxError> {
        self.shared.hub.record(
            self.shared.records.as_ref(),
            &self.transcript_path(run),
            run,
            kind,
            &data,
            now_ms(),
        )
    }

    /// A run's stored events with `seq >= from_seq`, and a receiver for the
    /// ones after them. Subscribing and reading the backlog happen under the
    /// lock that recording takes, so each event arrives exactly once, in
    /// order; a consumer that re-subscribes (say after
    /// `RecvError::Lagged`) should still skip seqs it has already seen.
    pub fn subscribe(
        &self,
        run: RunId,
        from_seq: u64,
    ) -> Result<(Vec<Event>, tokio::sync::broadcast::Receiver<Event>), InboxError> {
        self.existing_run(run)?;
        self.shared
            .hub
            .subscribe(self.shared.records.as_ref(), run, from_seq)
    }

    /// A receiver for every run's events from now on (the web page lists
    /// every readable run live; it filters by owner itself).
    #[must_use]
    pub fn subscribe_all(&self) -> tokio::sync::broadcast::Receiver<Event> {
        self.shared.hub.subscribe_all()
    }

    /// Where a run's transcript (one JSON event per line) is written.
    #[must_use]
    pub fn transcript_path(&self, run: RunId) -> PathBuf {
        LocalBlobs::new(&self.shared.data_dir)
            .run_dir(run)
            .join("transcript.jsonl")
    }

    /// Purges the inbox of every run that ended at least
    /// [`Limits::inbox_ttl`] before `now`: its files and file records go,
    /// the run is marked purged (its row, events and transcript stay), and
    /// `inbox_purged` is recorded. Answers the runs purged: none when
    /// another process sharing the records is purging right now (one at a
    /// time does, under [`Job::Purge`]).
    pub fn purge_expired(&self, now: SystemTime) -> Result<Vec<RunId>, InboxError> {
        let Some(_purging) = self.shared.records.lock_job(Job::Purge)? else {
            tracing::debug!("another replica is purging expired runs");
            return Ok(Vec::new());
        };
        let cutoff = now
            .checked_sub(self.shared.limits.inbox_ttl)
            .map_or(i64::MIN, unix_ms);
        let runs = self.shared.records.ended_by(cutoff)?;
        for &run in &runs {
            self.shared.blobs.purge(run)?;
            if !self.blobs_on_local_disk() {
                LocalBlobs::new(&self.shared.data_dir).purge(run)?;
            }
            self.shared.records.mark_purged(run)?;
            self.shared.budget.forget(run);
            self.record_event(run, "inbox_purged", serde_json::json!({}))?;
        }
        Ok(runs)
    }

    /// Where client sessions are kept for every process sharing the
    /// records to resume; `None` when the records are this process's alone.
    #[must_use]
    pub fn sessions(&self) -> Option<&dyn SessionRecords> {
        self.shared.records.sessions()
    }

    /// The shared run of `owner` and `client` (requests without a session)
    /// as the shared records hold it for every process: the one used within
    /// `idle`, else a new one (recorded, `run_started`), ending the idle one
    /// it replaces. `None` when the records are this process's alone.
    pub fn claim_shared_run(
        &self,
        owner: Owner,
        client: Option<&str>,
        idle: Duration,
    ) -> Result<Option<RunInfo>, InboxError> {
        let Some(sessions) = self.sessions() else {
            return Ok(None);
        };
        let client = client.and_then(clean_client_name);
        let slot = serde_json::json!([owner.key_name, owner.tenant, client]).to_string();
        let now = now_ms();
        let candidate = RunInfo {
            id: RunId::new(),
            owner,
            started_at: now,
            ended_at: None,
            purged: false,
            client,
        };
        let idle_ms = i64::try_from(idle.as_millis()).unwrap_or(i64::MAX);
        let claim = sessions.claim_shared_run(&slot, &candidate, now, idle_ms)?;
        if claim.started {
            self.announce_run(&claim.run)?;
        }
        if let Some(old) = claim.replaced {
            self.end_run(old)?;
        }
        Ok(Some(claim.run))
    }

    /// Ends the shared runs (kept in the shared records) idle for `idle` or
    /// longer and answers them; each is ended by one process only. None
    /// when the records are this process's alone.
    pub fn end_idle_shared_runs(&self, idle: Duration) -> Result<Vec<RunId>, InboxError> {
        let Some(sessions) = self.sessions() else {
            return Ok(Vec::new());
        };
        let cutoff = now_ms().saturating_sub(i64::try_from(idle.as_millis()).unwrap_or(i64::MAX));
        let runs = sessions.take_idle_shared_runs(cutoff)?;
        for &run in &runs {
            self.end_run(run)?;
        }
        Ok(runs)
    }

    /// Runs `work` only if no other process sharing the records is running
    /// `job` (and holds it off until `work` is done); `None` when another
    /// is. Without sharing, `work` always runs.
    pub fn alone<T>(&self, job: Job, work: impl FnOnce() -> T) -> Result<Option<T>, InboxError> {
        let Some(_held) = self.shared.records.lock_job(job)? else {
            return Ok(None);
        };
        Ok(Some(work()))
    }

    /// The run's record, or [`InboxError::NoRun`].
    fn existing_run(&self, run: RunId) -> Result<RunInfo, InboxError> {
        self.shared.records.run(run)?.ok_or(InboxError::NoRun(run))
    }
}

/// Sends on, from a thread of its own, the events that other processes
/// sharing the records store, until the inbox is gone or the records stop
/// announcing.
fn follow_notices(
    shared: std::sync::Weak<Shared>,
    notices: std::sync::mpsc::Receiver<Notice>,
) -> Result<(), InboxError> {
    std::thread::Builder::new()
        .name("porter-events".to_owned())
        .spawn(move || {
            while let Ok(notice) = notices.recv() {
                let Some(shared) = shared.upgrade() else {
                    return;
                };
                shared.hub.deliver(shared.records.as_ref(), notice);
            }
        })
        .map(drop)
        .map_err(|e| {
            InboxError::Io(std::io::Error::other(format!(
                "could not start the event follower: {e}"
            )))
        })
}

/// Why nothing is kept for a run whose inbox is gone.
fn purged_why() -> String {
    "this run's inbox has been purged".to_owned()
}

/// Now, in Unix milliseconds.
fn now_ms() -> i64 {
    unix_ms(SystemTime::now())
}

/// A time in Unix milliseconds (times before 1970 count as 0).
fn unix_ms(time: SystemTime) -> i64 {
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
