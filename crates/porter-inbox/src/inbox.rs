//! `Inbox`, the facade every tool uses: opening the stores, keeping files
//! under the budget with unique names, the runs' records and events, and
//! the purge of expired runs.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use sha2::{Digest as _, Sha256};

use crate::documents::{Documents, SqliteDocuments};
use crate::jobs::Job;
use crate::model::{
    Event, FileRecord, InboxError, Incoming, Limits, NewEvent, Notice, Outcome, Owner, RunId,
    RunInfo, clean_client_name, now_ms, unix_ms,
};
use crate::sessions::SessionRecords;
use crate::store::{
    BlobReader, Blobs, LocalBlobs, PostgresRecords, Records, SqliteRecords, Staged,
};
use crate::stub::inbox_ref;
use crate::{events, limits, media, names, store};

/// `Inbox` is the facade every tool uses. It is cheap to clone (one `Arc`);
/// clones share the stores, the byte budget and the event channels.
#[derive(Clone)]
pub struct Inbox {
    shared: Arc<Shared>,
}

/// What every clone of an [`Inbox`] and every [`Keeper`](crate::Keeper) shares.
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

    /// Opens the inbox with its files in `blobs` (say [`S3Blobs`](crate::S3Blobs)) and its
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
        // The run's record and its `run_started` are stored in one step:
        // a run is never recorded unannounced.
        let data = run_started(&info);
        let announce = NewEvent {
            kind: "run_started",
            data: &data,
            at: now_ms(),
        };
        let records = self.shared.records.as_ref();
        self.shared
            .hub
            .record_with(records, &self.transcript_path(info.id), || {
                records.insert_run(&info, &announce)
            })?;
        Ok(info)
    }

    /// Ends a run and records `run_ended`, in one step; its inbox lives on
    /// for [`Limits::inbox_ttl`]. Ending an ended run changes nothing.
    pub fn end_run(&self, run: RunId) -> Result<(), InboxError> {
        let info = self.existing_run(run)?;
        if info.ended_at.is_some() {
            return Ok(());
        }
        let data = serde_json::json!({});
        let announce = NewEvent {
            kind: "run_ended",
            data: &data,
            at: now_ms(),
        };
        let records = self.shared.records.as_ref();
        self.shared
            .hub
            .record_with(records, &self.transcript_path(run), || {
                records.end_run(run, &announce)
            })?;
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
        let sha256 = crate::model::hex(&Sha256::digest(bytes));
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

    /// Where a new file of `run` is written: its staged blob, or (inner
    /// `Err`) why nothing is kept for the run, whose inbox is gone. See
    /// [`Inbox::keeper`].
    pub(crate) fn staging(
        &self,
        run: RunId,
    ) -> Result<Result<Box<dyn Staged>, String>, InboxError> {
        let info = self.existing_run(run)?;
        if info.purged {
            return Ok(Err(purged_why()));
        }
        Ok(Ok(self.shared.blobs.stage(run)?))
    }

    /// Names a staged file (trying `-2`, `-3`, … on a clash), records it and
    /// emits `file_captured`. The bytes are already reserved, by `ticket`:
    /// the file's record holds them once it is stored.
    // One step of a capture, which has all of these at hand.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn commit(
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
        let data = serde_json::json!({
            "ref": inbox_ref(&record.path),
            "path": record.path,
            "media_type": record.media_type,
            "size": record.size,
            "sha256": record.sha256,
            "origin": record.origin,
            "call": record.call,
        });
        let announce = NewEvent {
            kind: "file_captured",
            data: &data,
            at: now_ms(),
        };
        // The file's record and its `file_captured` are stored in one step:
        // a file is never kept unannounced, nor announced and not kept.
        let records = self.shared.records.as_ref();
        if let Err(e) = self
            .shared
            .hub
            .record_with(records, &self.transcript_path(run), || {
                limits::Budget::record_file(records, &record, ticket, &announce)
            })
        {
            let _ = self.shared.blobs.remove(run, &record.path);
            return Err(e);
        }
        Ok(record)
    }

    /// Adds `bytes` to what `ticket` holds in the run's inbox budget;
    /// `false` when they do not fit.
    pub(crate) fn reserve(
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
    pub(crate) fn release(&self, run: RunId, ticket: &mut limits::Ticket) {
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
    /// `file_removed`. The bytes go first, so the name stays taken until
    /// they are gone (a capture under the same name cannot lose its bytes to
    /// this removal); the record and its event then go in one step.
    pub fn remove(&self, run: RunId, path: &str) -> Result<(), InboxError> {
        let record = self.file(run, path)?.ok_or_else(|| InboxError::NoFile {
            run,
            path: path.to_owned(),
        })?;
        self.remove_bytes(&record)?;
        let data = serde_json::json!({"ref": inbox_ref(&record.path), "path": record.path});
        self.remove_records(run, std::slice::from_ref(&record), "file_removed", &data)?;
        Ok(())
    }

    /// Removes every kept file of a run, answers how many, and records
    /// `inbox_cleared`: the bytes of each first, then every record and the
    /// event in one step.
    pub fn clear(&self, run: RunId) -> Result<usize, InboxError> {
        let files = self.files(run)?;
        for record in &files {
            self.remove_bytes(record)?;
        }
        let data = serde_json::json!({"files": files.len()});
        self.remove_records(run, &files, "inbox_cleared", &data)?;
        Ok(files.len())
    }

    fn remove_bytes(&self, record: &FileRecord) -> Result<(), InboxError> {
        self.shared.blobs.remove(record.run, &record.path)?;
        self.drop_local_copy(record.run, &record.path)
    }

    /// Drops `files`' records and stores the event `kind` that announces it,
    /// in one step, then frees their bytes in the run's budget.
    fn remove_records(
        &self,
        run: RunId,
        files: &[FileRecord],
        kind: &str,
        data: &serde_json::Value,
    ) -> Result<(), InboxError> {
        let paths: Vec<String> = files.iter().map(|file| file.path.clone()).collect();
        let records = self.shared.records.as_ref();
        let announce = NewEvent {
            kind,
            data,
            at: now_ms(),
        };
        let removed = self
            .shared
            .hub
            .record_with(records, &self.transcript_path(run), || {
                records.remove_files(run, &paths, &announce)
            })?;
        if removed.is_some() {
            let bytes = files.iter().map(|file| file.size).sum();
            self.shared.budget.freed(records, run, bytes);
        }
        Ok(())
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

    /// A run's stored events with `seq >= from_seq`, in order (for a reader
    /// that follows [`Inbox::subscribe_all`] and must read back what it
    /// missed).
    pub fn events(&self, run: RunId, from_seq: u64) -> Result<Vec<Event>, InboxError> {
        self.shared.records.events(run, from_seq)
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
            let records = self.shared.records.as_ref();
            let data = serde_json::json!({});
            let announce = NewEvent {
                kind: "inbox_purged",
                data: &data,
                at: now_ms(),
            };
            self.shared
                .hub
                .record_with(records, &self.transcript_path(run), || {
                    records.mark_purged(run, &announce)
                })?;
            self.shared.budget.forget(run);
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
        let data = run_started(&candidate);
        let announce = NewEvent {
            kind: "run_started",
            data: &data,
            at: now,
        };
        let records = self.shared.records.as_ref();
        let claim =
            self.shared
                .hub
                .record_with(records, &self.transcript_path(candidate.id), || {
                    sessions.claim_shared_run(&slot, &candidate, now, idle_ms, &announce)
                })?;
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

/// What `run_started` says of a run.
fn run_started(info: &RunInfo) -> serde_json::Value {
    serde_json::json!({
        "key_name": info.owner.key_name,
        "tenant": info.owner.tenant,
        "client": info.client,
    })
}
