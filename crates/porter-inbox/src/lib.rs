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
mod inbox;
mod jobs;
mod keeper;
mod limits;
pub mod media;
mod model;
pub mod names;
mod sessions;
pub mod shown;
pub mod store;
mod stub;

pub use documents::{Document, Documents, SqliteDocuments};
pub use inbox::Inbox;
pub use jobs::{Job, JobLock};
pub use keeper::Keeper;
pub use model::{
    CLIENT_NAME_CHARS, Event, FILE_MAX_BYTES, FileRecord, INBOX_MAX_BYTES, INBOX_TTL, InboxError,
    Incoming, Limits, NewEvent, Notice, Origin, Outcome, Owner, RunId, RunInfo, clean_client_name,
};
pub use sessions::{SessionRecords, SharedClaim, StoredSession};
pub use store::{
    BlobReader, Blobs, LocalBlobs, PostgresRecords, Records, S3Blobs, S3Settings, SharedBudget,
    SqliteRecords, Staged,
};
pub use stub::{HASH_SHOWN_CHARS, inbox_ref};
