//! The two stores behind the inbox, as traits, so that a deployment that
//! outgrows one machine can put blobs in S3-compatible object storage and
//! records in PostgreSQL without the tools noticing.
//!
//! The local ones ([`LocalBlobs`], [`SqliteRecords`]) are what
//! [`Inbox::open`](crate::inbox::Inbox::open) uses.

mod local;
mod postgres;
pub(crate) mod row;
mod s3;
mod sqlite;

use std::io::{Read, Seek, Write};

pub use local::{LocalBlobs, LocalReader};
pub(crate) use local::{at, local_files};
pub use postgres::{PostgresRecords, SCHEMA_VERSION as POSTGRES_SCHEMA_VERSION, redacted_url};
pub use s3::{NameGuard, PART_SIZE as S3_PART_SIZE, S3Blobs, S3Settings};
pub use sqlite::SqliteRecords;
pub(crate) use sqlite::{failed, open_wal};

/// `SharedBudget` is a per-run byte budget that every process sharing a
/// records store holds together.
///
/// Each capture holds one reservation, named by its ticket, whose size
/// grows as the capture is written. A reservation lapses when it is not
/// renewed for a while (a replica killed mid-capture never gives its bytes
/// back): the store says how long in its own docs.
pub trait SharedBudget: Send + Sync {
    /// Sets the reservation `ticket` of `run` to `total` bytes (creating
    /// it, renewing its lease) if the run's files plus every other live
    /// reservation plus `total` stay within `cap`; `Ok(false)`, changing
    /// nothing, when they would not.
    fn reserve(
        &self,
        run: RunId,
        ticket: uuid::Uuid,
        total: u64,
        cap: u64,
    ) -> Result<bool, InboxError>;
    /// Drops a reservation; a missing one is not an error.
    fn release(&self, ticket: uuid::Uuid) -> Result<(), InboxError>;
    /// Records a kept file, drops the reservation that held its bytes and
    /// stores the event that announces the file, in one step: no one ever
    /// counts the bytes twice or not at all, and the file is never recorded
    /// without its event (see [`Records::insert_file`]).
    fn insert_reserved_file(
        &self,
        file: &FileRecord,
        ticket: uuid::Uuid,
        announce: &NewEvent,
    ) -> Result<Event, InboxError>;
    /// Claims `path` in `run` for the capture `ticket` (in place of any
    /// name it claimed before), so that no other process writes under it
    /// meanwhile: `Ok(false)` when a recorded file or another live capture
    /// has it. The claim ends with the reservation: when the file is
    /// recorded, released or its lease lapses.
    fn claim_name(&self, run: RunId, ticket: uuid::Uuid, path: &str) -> Result<bool, InboxError>;
    /// The bytes a run's files and live reservations hold together.
    fn used(&self, run: RunId) -> Result<u64, InboxError>;
}

/// A count or size as the databases store it (a signed 64-bit integer),
/// saturating: no size porter keeps comes near `i64::MAX`.
pub(crate) fn as_i64(n: impl TryInto<i64>) -> i64 {
    n.try_into().unwrap_or(i64::MAX)
}

use crate::model::{Event, FileRecord, InboxError, NewEvent, RunId, RunInfo};

/// `Blobs` holds the bytes of kept files, per run, under relative
/// `/`-separated paths that [`crate::names::is_inbox_path`] accepts.
///
/// Bytes are first written to a staged object that no reader can see and
/// then committed under their final path in one step that never replaces an
/// existing object, so a crash mid-write never leaves a half file under a
/// real name and two captures can never overwrite each other.
pub trait Blobs: Send + Sync {
    /// Starts a new object for `run`: a writer to a temporary object.
    fn stage(&self, run: RunId) -> Result<Box<dyn Staged>, InboxError>;
    /// Opens a committed object for reading: a reader that knows its size
    /// and can seek, so a caller can stream any range of it. A store that
    /// does not keep files on the local disk fetches ranges as they are
    /// read, never the whole object at once.
    fn open(&self, run: RunId, path: &str) -> Result<Box<dyn BlobReader>, InboxError>;
    /// Removes one committed object; a missing one is not an error.
    fn remove(&self, run: RunId, path: &str) -> Result<(), InboxError>;
    /// Removes everything the run holds, committed or staged.
    fn purge(&self, run: RunId) -> Result<(), InboxError>;
    /// Removes staged objects that a process which is gone left behind
    /// (killed mid-write); answers how many.
    fn remove_stale(&self) -> Result<usize, InboxError>;
    /// Whether committed objects are files under the data dir's
    /// `runs/<run>/inbox/` (so tools may read them there directly).
    fn on_local_disk(&self) -> bool;
}

/// `BlobReader` reads one committed object: its bytes, from any offset.
pub trait BlobReader: Read + Seek + Send {
    /// The object's size in bytes.
    fn size(&self) -> u64;
}

/// `Staged` is an object being written. Dropping it without a successful
/// [`Staged::commit`] removes it.
pub trait Staged: Write + Send {
    /// Gives the object its final `path`, never over an existing one:
    /// `Ok(false)` when the path is taken (the caller tries the next name),
    /// `Ok(true)` once committed (the staged object is then gone).
    fn commit(&mut self, path: &str) -> Result<bool, InboxError>;

    /// [`Staged::commit`] of a `path` the caller has claimed in records
    /// shared by every process that writes this store
    /// ([`crate::store::SharedBudget::claim_name`]): no other writer holds it at the
    /// same time, so a store may skip its own check that the name is free.
    /// An object found there anyway has no record (its capture died between
    /// its write and its record) and is replaced.
    fn commit_claimed(&mut self, path: &str) -> Result<bool, InboxError> {
        self.commit(path)
    }
}

/// `Records` holds runs, kept files and events.
///
/// Every method is one atomic step; [`Records::append_event`] numbers each
/// run's events 1, 2, 3, … without gaps or repeats even when called from
/// many threads.
pub trait Records: Send + Sync {
    /// Records a new run and stores the event that announces it
    /// (`run_started`), in one step: both or neither.
    fn insert_run(&self, run: &RunInfo, announce: &NewEvent) -> Result<Event, InboxError>;
    /// Marks a run ended at `announce.at` (Unix ms) and stores `announce`
    /// (`run_ended`), in one step: both or neither. `None` (and nothing
    /// stored) when the run has ended already or there is no such run.
    fn end_run(&self, run: RunId, announce: &NewEvent) -> Result<Option<Event>, InboxError>;
    /// One run.
    fn run(&self, run: RunId) -> Result<Option<RunInfo>, InboxError>;
    /// Every run, oldest first.
    fn runs(&self) -> Result<Vec<RunInfo>, InboxError>;
    /// Runs not yet purged that ended at or before `cutoff` (Unix ms).
    fn ended_by(&self, cutoff: i64) -> Result<Vec<RunId>, InboxError>;
    /// Drops a run's file records, marks it purged (the run stays) and
    /// stores the event that announces it, in one step.
    fn mark_purged(&self, run: RunId, announce: &NewEvent) -> Result<Event, InboxError>;
    /// Records a kept file and stores the event that announces it, in one
    /// step: both are stored or neither is, so every recorded file has its
    /// event and no event names a file that is not recorded.
    fn insert_file(&self, file: &FileRecord, announce: &NewEvent) -> Result<Event, InboxError>;
    /// One kept file by its exact path.
    fn file(&self, run: RunId, path: &str) -> Result<Option<FileRecord>, InboxError>;
    /// A run's kept files, by path.
    fn files(&self, run: RunId) -> Result<Vec<FileRecord>, InboxError>;
    /// The paths of a run's recorded files (and, where several processes
    /// share the records, of its captures' live name claims) that start
    /// with `prefix`: the names a new file should not try.
    fn names_taken(
        &self,
        run: RunId,
        prefix: &str,
    ) -> Result<std::collections::HashSet<String>, InboxError> {
        Ok(self
            .files(run)?
            .into_iter()
            .map(|file| file.path)
            .filter(|path| path.starts_with(prefix))
            .collect())
    }
    /// Drops the records of `paths` in `run` and stores the event that
    /// announces it, in one step. When none of them was recorded nothing is
    /// stored and `None` comes back, unless `paths` is empty: a run whose
    /// inbox held nothing is still announced cleared.
    fn remove_files(
        &self,
        run: RunId,
        paths: &[String],
        announce: &NewEvent,
    ) -> Result<Option<Event>, InboxError>;
    /// The bytes a run's recorded files hold together.
    fn inbox_bytes(&self, run: RunId) -> Result<u64, InboxError>;
    /// Stores an event under the run's next sequence number.
    fn append_event(
        &self,
        run: RunId,
        kind: &str,
        data: &serde_json::Value,
        at: i64,
    ) -> Result<Event, InboxError>;
    /// A run's events with `seq >= from_seq`, in order.
    fn events(&self, run: RunId, from_seq: u64) -> Result<Vec<Event>, InboxError>;
    /// The byte budget that every process sharing these records holds
    /// together; `None` (the default) when the records are this process's
    /// alone and the inbox counts in memory.
    fn budget(&self) -> Option<&dyn crate::store::SharedBudget> {
        None
    }
    /// Starts following the events that any process sharing these records
    /// stores, as they commit; `None` (the default) when no other process
    /// can store any.
    fn follow(
        &self,
    ) -> Result<Option<std::sync::mpsc::Receiver<crate::model::Notice>>, InboxError> {
        Ok(None)
    }
    /// Takes the right to run `job` now, which one process sharing these
    /// records holds at a time: `None` while another holds it. Granted
    /// always (the default) when the records are this process's alone.
    fn lock_job(&self, job: crate::jobs::Job) -> Result<Option<crate::jobs::JobLock>, InboxError> {
        let _ = job;
        Ok(Some(crate::jobs::JobLock::default()))
    }
    /// Where client sessions are kept so that any process sharing these
    /// records can resume them; `None` (the default) when no other process
    /// can be asked to.
    fn sessions(&self) -> Option<&dyn crate::sessions::SessionRecords> {
        None
    }
}
