//! Records in PostgreSQL, for gateways that share one database.
//!
//! The driver is `tokio-postgres`, pooled by `deadpool-postgres`. The
//! [`Records`] trait is synchronous and the gateway calls it both from
//! blocking threads and from its runtime's own threads, so the store runs
//! every query on a small runtime of its own and waits for the answer on a
//! plain channel: that never starts or blocks on a runtime from inside
//! another (which would panic), whoever the caller is.
//!
//! The schema is versioned (`porter_schema`) and migrated at open inside one
//! transaction that first takes a PostgreSQL advisory lock, so replicas
//! starting together migrate once, one after the other. Event numbers come
//! from one counter row per run, bumped under its row lock in the same
//! statement that stores the event: 1, 2, 3, … without gaps or repeats
//! across connections and replicas.
//!
//! Replicas share two more things through the database:
//!
//! - The tree cap ([`SharedBudget`]): each capture in flight holds one row
//!   of `porter_reservations`, set under the run's row lock (`SELECT … FOR
//!   UPDATE` on `porter_runs`) after summing the run's files and every other
//!   live reservation in one statement; a kept file's record is stored and
//!   its reservation dropped in one transaction. A reservation carries a
//!   lease ([`RESERVATION_LEASE`]) that each write of the capture renews, so
//!   a replica killed mid-capture holds its bytes at most that long: a
//!   lapsed row counts for nothing and the next reservation on the run
//!   deletes it.
//! - Live events: the statement that stores an event also sends
//!   `NOTIFY porter_events, '<run> <seq>'`, which PostgreSQL delivers at
//!   commit, in commit order, to every replica's listening connection
//!   ([`PostgresRecords::follow`]); a replica reads the event itself back by
//!   its number. A listener that loses its connection reconnects and then
//!   announces the last event of every run with events stored since it was
//!   cut off (less a minute, for clocks that differ), so nothing stored
//!   meanwhile is missed. LISTEN/NOTIFY rather than polling: an event
//!   reaches the other replicas within milliseconds, and an idle gateway
//!   sends no queries.

use std::collections::HashSet;
use std::future::Future;
use std::str::FromStr as _;
use std::sync::mpsc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::row::{
    self, EVENT_COLUMNS, FILE_COLUMNS, RUN_COLUMNS, StoredRow, event_from, file_from, run_from,
    run_id, unsigned,
};
use super::{Records, as_i64};
use crate::jobs::{Job, JobLock};
use crate::model::Notice;
use crate::sessions::{SessionRecords, SharedClaim, StoredSession};
use crate::store::SharedBudget;

mod documents;
use crate::model::{Event, FileRecord, InboxError, NewEvent, RunId, RunInfo};

/// The advisory lock key migrations run under ("porter" in ASCII).
const MIGRATION_LOCK: i64 = 0x706f_7274_6572;

/// The advisory lock key a singleton job runs under: next to the
/// migrations' one.
fn job_lock(job: Job) -> i64 {
    match job {
        Job::Purge => MIGRATION_LOCK + 1,
        Job::Sweep => MIGRATION_LOCK + 2,
    }
}

/// How much of a document's Markdown is indexed, in characters. A
/// `tsvector` holds at most 1 MiB; text of short distinct words costs about
/// two bytes of it per character, so this much always fits. The rest of a
/// longer document is kept and read back whole, but not searched.
pub(super) const INDEXED_CHARS: i32 = 400_000;

/// The schema step that adds the documents (see `MIGRATIONS`).
pub(super) const DOCUMENTS_MIGRATION: &str = "
CREATE TABLE porter_documents (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    tenant TEXT NOT NULL,
    key_name TEXT NOT NULL,
    run TEXT NOT NULL,
    title TEXT NOT NULL,
    markdown TEXT NOT NULL,
    source_path TEXT NOT NULL,
    source_sha256 TEXT NOT NULL,
    origin TEXT NOT NULL,
    call TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    search tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple'::regconfig, title), 'A')
        || setweight(to_tsvector('simple'::regconfig, left(markdown, 400000)), 'B')
    ) STORED
);
CREATE INDEX porter_documents_by_tenant ON porter_documents (tenant, created_at);
CREATE INDEX porter_documents_search ON porter_documents USING GIN (search);
";

/// The schema, one step per version: step `i` takes the database from
/// version `i` to `i + 1`. Steps are only ever appended.
const MIGRATIONS: &[&str] = &[
    "
CREATE TABLE porter_runs (
    id TEXT PRIMARY KEY,
    key_name TEXT NOT NULL,
    tenant TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    ended_at BIGINT,
    purged BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX porter_runs_ended ON porter_runs (ended_at) WHERE NOT purged;
CREATE TABLE porter_files (
    run TEXT NOT NULL,
    path TEXT NOT NULL,
    size BIGINT NOT NULL,
    media_type TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    origin TEXT NOT NULL,
    call TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (run, path)
);
CREATE TABLE porter_event_seqs (
    run TEXT PRIMARY KEY,
    last BIGINT NOT NULL
);
CREATE TABLE porter_events (
    run TEXT NOT NULL,
    seq BIGINT NOT NULL,
    kind TEXT NOT NULL,
    data TEXT NOT NULL,
    at BIGINT NOT NULL,
    PRIMARY KEY (run, seq)
);
",
    "
ALTER TABLE porter_runs ADD COLUMN client TEXT;
",
    DOCUMENTS_MIGRATION,
    "
CREATE TABLE porter_reservations (
    ticket TEXT PRIMARY KEY,
    run TEXT NOT NULL,
    bytes BIGINT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX porter_reservations_run ON porter_reservations (run);
CREATE TABLE porter_sessions (
    id TEXT PRIMARY KEY,
    run TEXT,
    state TEXT,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE porter_shared_runs (
    slot TEXT PRIMARY KEY,
    run TEXT,
    last_used BIGINT NOT NULL
);
",
    // A capture claims the name it is about to write under in its
    // reservation, so two replicas never write the same name (a bucket
    // without conditional writes would let the second replace the first).
    "
ALTER TABLE porter_reservations ADD COLUMN path TEXT;
CREATE UNIQUE INDEX porter_reservations_path ON porter_reservations (run, path)
    WHERE path IS NOT NULL;
",
];

/// How long a capture's reservation holds its bytes without being renewed
/// (every write of the capture renews it).
pub const RESERVATION_LEASE: Duration = Duration::from_secs(10 * 60);

/// The channel stored events are announced on.
const EVENTS_CHANNEL: &str = "porter_events";

/// How far before a listener lost its connection it looks for events it
/// may have missed: event times come from the replicas' clocks.
const MISSED_EVENTS_SLACK_MS: i64 = 60_000;

/// How long a listener waits before connecting again.
const LISTEN_RETRY: Duration = Duration::from_secs(1);

/// The schema version this build writes and reads.
#[allow(
    clippy::cast_possible_wrap,
    reason = "a handful of steps, never near i64::MAX"
)]
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// How long one call may take, waiting for a connection included, before it
/// fails with a message instead of hanging.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// `PostgresRecords` is the [`Records`] store on PostgreSQL.
pub struct PostgresRecords {
    /// `Some` until dropped; shut down in the background on drop, since a
    /// runtime may not be dropped (blocking) on another runtime's thread.
    runtime: Option<tokio::runtime::Runtime>,
    pool: Pool,
    /// The connection settings, for the listening connection.
    config: tokio_postgres::Config,
    /// Where the database is, with no password, for messages.
    shown: String,
}

impl std::fmt::Debug for PostgresRecords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresRecords")
            .field("database", &self.shown)
            .finish_non_exhaustive()
    }
}

impl Drop for PostgresRecords {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// `url` with its password (if any) replaced by `***`: what messages show.
#[must_use]
pub fn redacted_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "(a connection string that is not a postgres:// URL)".to_owned();
    };
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    let authority = match authority.rsplit_once('@') {
        Some((user_info, host)) => match user_info.split_once(':') {
            Some((user, _password)) => format!("{user}:***@{host}"),
            None => format!("{user_info}@{host}"),
        },
        None => authority.to_owned(),
    };
    // A password may also come as a query parameter.
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let query: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) if key.eq_ignore_ascii_case("password") => {
                        format!("{key}=***")
                    }
                    _ => pair.to_owned(),
                })
                .collect();
            format!("{path}?{}", query.join("&"))
        }
        None => tail.to_owned(),
    };
    format!("{scheme}://{authority}{tail}")
}

impl PostgresRecords {
    /// Connects to the database at `url` (`postgres://user:password@host:port/db`)
    /// and brings its schema to [`SCHEMA_VERSION`] under an advisory lock.
    /// Messages show the URL without its password.
    pub fn open(url: &str) -> Result<Self, InboxError> {
        Self::open_migrated(url)
    }

    /// Connects (a pool, no query yet) without touching the schema.
    fn connect_only(url: &str) -> Result<Self, InboxError> {
        let shown = redacted_url(url);
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(InboxError::Records(format!(
                "the records database URL {shown} is not a postgres:// URL; write postgres://user:password@host:5432/database"
            )));
        }
        // The driver's parse errors do not echo the URL, but say nothing of
        // a password either way; the message names the redacted URL.
        let config = tokio_postgres::Config::from_str(url).map_err(|e| {
            InboxError::Records(format!(
                "the records database URL {shown} cannot be read ({e}); write postgres://user:password@host:5432/database"
            ))
        })?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("porter-postgres")
            .enable_all()
            .build()
            .map_err(|e| {
                InboxError::Records(format!("could not start the database runtime: {e}"))
            })?;
        let manager = Manager::from_config(
            config.clone(),
            tokio_postgres::NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(16)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(CALL_TIMEOUT))
            .create_timeout(Some(CALL_TIMEOUT))
            .build()
            .map_err(|e| {
                InboxError::Records(format!("could not set up the connection pool: {e}"))
            })?;
        Ok(Self {
            runtime: Some(runtime),
            pool,
            config,
            shown,
        })
    }

    /// Connects to the database at `url` and brings its schema to
    /// [`SCHEMA_VERSION`] under an advisory lock.
    fn open_migrated(url: &str) -> Result<Self, InboxError> {
        let records = Self::connect_only(url)?;
        records.call("bring the schema up to date", |pool| async move {
            let mut client = connect(&pool).await?;
            migrate(&mut client).await
        })?;
        Ok(records)
    }

    /// The schema version the database at `url` holds, without changing
    /// anything (`None`: porter never ran against it). A connection that
    /// fails is an error that says what to check.
    pub fn schema_version_at(url: &str) -> Result<Option<i64>, InboxError> {
        let records = Self::connect_only(url)?;
        records.call("read the schema version", |pool| async move {
            let client = connect(&pool).await?;
            let exists: bool = client
                .query_one("SELECT to_regclass('porter_schema') IS NOT NULL", &[])
                .await?
                .get(0);
            if !exists {
                return Ok(None);
            }
            let version: i64 = client
                .query_one("SELECT version FROM porter_schema", &[])
                .await?
                .get(0);
            Ok(Some(version))
        })
    }

    /// Runs `work` on the store's runtime and waits for its answer, at most
    /// [`CALL_TIMEOUT`]. `work` gets the pool.
    fn call<T, F, Fut>(&self, what: &'static str, work: F) -> Result<T, InboxError>
    where
        T: Send + 'static,
        F: FnOnce(Pool) -> Fut,
        Fut: Future<Output = Result<T, Failure>> + Send + 'static,
    {
        let Some(runtime) = &self.runtime else {
            return Err(InboxError::Records(format!(
                "could not {what}: the records store is closed"
            )));
        };
        let (sender, receiver) = mpsc::sync_channel(1);
        let future = work(self.pool.clone());
        let shown = self.shown.clone();
        runtime.spawn(async move {
            let answer = match tokio::time::timeout(CALL_TIMEOUT, future).await {
                Ok(answer) => answer.map_err(|failure| failure.message(what, &shown)),
                Err(_) => Err(InboxError::Unavailable(format!(
                    "could not {what}: the database at {shown} did not answer within {}s; check that it is up and reachable",
                    CALL_TIMEOUT.as_secs()
                ))),
            };
            // The caller waits on the other end; if it is gone, no one asks.
            let _ = sender.send(answer);
        });
        receiver.recv().map_err(|_| {
            InboxError::Records(format!("could not {what}: the database task stopped"))
        })?
    }
}

/// What went wrong inside a call, turned into a message by [`PostgresRecords::call`].
#[derive(Debug)]
pub(crate) enum Failure {
    /// No connection could be had.
    Connect(String),
    /// A statement failed.
    Query(tokio_postgres::Error),
    /// The database holds something this build cannot read.
    Data(String),
}

impl Failure {
    fn message(self, what: &str, shown: &str) -> InboxError {
        match self {
            Self::Connect(e) => InboxError::Unavailable(format!(
                "could not {what}: no connection to the database at {shown} ({e}); check that it is up, reachable and that the URL's user and password are right"
            )),
            Self::Query(e) if connection_lost(&e) => InboxError::Unavailable(format!(
                "could not {what}: the connection to the database at {shown} was lost ({}); check that it is up and reachable",
                describe(&e)
            )),
            Self::Query(e) => InboxError::Records(format!("could not {what}: {}", describe(&e))),
            Self::Data(e) => InboxError::Records(format!("could not {what}: {e}")),
        }
    }
}

impl From<tokio_postgres::Error> for Failure {
    fn from(e: tokio_postgres::Error) -> Self {
        Self::Query(e)
    }
}

/// Whether a driver error means the database went away rather than that
/// the statement failed: the connection closed, or the server said it is
/// shutting down, starting, or cut the connection (SQLSTATE class 08,
/// 57P01–57P03).
fn connection_lost(e: &tokio_postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    match e.code() {
        Some(code) => {
            let code = code.code();
            code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03")
        }
        // No server answer at all: the socket failed.
        None => e.as_db_error().is_none(),
    }
}

/// A driver error with the server's own message when there is one.
fn describe(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{} ({})", db.message(), db.code().code());
    }
    // The driver's own text is short ("error connecting to server"); the
    // cause (connection refused, timed out, …) is in its sources.
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

async fn connect(pool: &Pool) -> Result<Object, Failure> {
    pool.get().await.map_err(|e| {
        let text = match &e {
            deadpool_postgres::PoolError::Backend(backend) => describe(backend),
            other => other.to_string(),
        };
        Failure::Connect(text)
    })
}

/// Brings the schema to [`SCHEMA_VERSION`] in one transaction under the
/// advisory lock, so two replicas starting together never race.
async fn migrate(client: &mut Object) -> Result<(), Failure> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS porter_schema (
             id BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (id),
             version BIGINT NOT NULL
         );
         INSERT INTO porter_schema (id, version) VALUES (TRUE, 0) ON CONFLICT (id) DO NOTHING;",
    )
    .await?;
    let version: i64 = tx
        .query_one("SELECT version FROM porter_schema", &[])
        .await?
        .get(0);
    if version > SCHEMA_VERSION {
        return Err(Failure::Data(format!(
            "the database's schema is version {version}, newer than this porter knows ({SCHEMA_VERSION}); run a newer porter against it"
        )));
    }
    let from = usize::try_from(version).unwrap_or(0);
    for (step, sql) in MIGRATIONS.iter().enumerate().skip(from) {
        tx.batch_execute(sql).await?;
        let reached = i64::try_from(step + 1).unwrap_or(i64::MAX);
        tx.execute("UPDATE porter_schema SET version = $1", &[&reached])
            .await?;
        tracing::info!(version = reached, "migrated the records schema");
    }
    tx.commit().await?;
    Ok(())
}

fn parse_run(text: &str) -> Result<RunId, Failure> {
    row::parse_run(text).map_err(Failure::Data)
}

impl StoredRow for Row {
    type Error = Failure;

    fn text(&self, column: usize) -> Result<String, Failure> {
        Ok(self.try_get(column)?)
    }

    fn text_or_null(&self, column: usize) -> Result<Option<String>, Failure> {
        Ok(self.try_get(column)?)
    }

    fn integer(&self, column: usize) -> Result<i64, Failure> {
        Ok(self.try_get(column)?)
    }

    fn integer_or_null(&self, column: usize) -> Result<Option<i64>, Failure> {
        Ok(self.try_get(column)?)
    }

    fn flag(&self, column: usize) -> Result<bool, Failure> {
        Ok(self.try_get(column)?)
    }

    fn unreadable(&self, _column: usize, problem: String) -> Failure {
        Failure::Data(problem)
    }
}

/// Statements prepared once per pooled connection and reused: PostgreSQL
/// parses and plans each statement once, and every later use is one round
/// trip instead of two (a plain `query` with text prepares an unnamed
/// statement every time). The pool recycles connections without `DISCARD`,
/// so the prepared statements live as long as their connection.
trait Cached: deadpool_postgres::GenericClient {
    async fn cached_query(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, tokio_postgres::Error> {
        let statement = self.prepare_cached(sql).await?;
        self.query(&statement, params).await
    }

    async fn cached_one(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Row, tokio_postgres::Error> {
        let statement = self.prepare_cached(sql).await?;
        self.query_one(&statement, params).await
    }

    async fn cached_opt(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, tokio_postgres::Error> {
        let statement = self.prepare_cached(sql).await?;
        self.query_opt(&statement, params).await
    }

    async fn cached_execute(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, tokio_postgres::Error> {
        let statement = self.prepare_cached(sql).await?;
        self.execute(&statement, params).await
    }
}

impl<C: deadpool_postgres::GenericClient> Cached for C {}

/// The end of a statement that stores an event of the run `$1` and gives
/// its number: `run_rows` yields the run's row for the counter (the event
/// is stored only if it does), and the event's kind, data and time are the
/// parameters from `$kind` on.
///
/// The counter row's lock is held until the event is stored, so numbers
/// are handed out in order, once each, and a failed statement rolls its
/// number back with it. The notice goes out at commit, so a listener never
/// hears of an event it cannot read yet.
fn storing_event(run_rows: &str, kind: usize) -> String {
    let (data, at) = (kind + 1, kind + 2);
    format!(
        "next AS (
             INSERT INTO porter_event_seqs AS s (run, last) {run_rows}
             ON CONFLICT (run) DO UPDATE SET last = s.last + 1
             RETURNING last
         ),
         stored AS (
             INSERT INTO porter_events (run, seq, kind, data, at)
             SELECT $1, last, ${kind}, ${data}, ${at} FROM next
             RETURNING seq
         )
         SELECT seq, pg_notify('porter_events', $1 || ' ' || seq) FROM stored"
    )
}

/// What a statement stores of `announce`, owned so that it can move into
/// the pool's task: its kind, its data as JSON text, and its time.
fn owned_event(announce: &NewEvent) -> (String, String, i64) {
    (
        announce.kind.to_owned(),
        announce.data.to_string(),
        announce.at,
    )
}

/// Stores an event under `run`'s next number, in one statement, and gives
/// that number.
async fn insert_event_row(
    client: &impl Cached,
    run: RunId,
    kind: &str,
    data: &str,
    at: i64,
) -> Result<u64, Failure> {
    let row = client
        .cached_one(
            &format!("WITH {}", storing_event("VALUES ($1, 1)", 2)),
            &[&run.to_string(), &kind, &data, &at],
        )
        .await?;
    unsigned(&row, 0, "event number")
}

impl PostgresRecords {
    /// Records `file`, drops the reservation `ticket` (if any) and stores
    /// `announce`, in one statement: one round trip, all or nothing.
    fn insert_announced_file(
        &self,
        file: &FileRecord,
        ticket: Option<uuid::Uuid>,
        announce: &NewEvent,
    ) -> Result<Event, InboxError> {
        let (file, ticket) = (file.clone(), ticket.map(|t| t.to_string()));
        let (kind, text, at) = owned_event(announce);
        let run = file.run;
        let seq = self.call("record a file", move |pool| async move {
            // Every data-modifying part of a WITH runs once, whether the
            // rest reads it or not; the event's number is taken only once
            // the file's row is in.
            let row = connect(&pool)
                .await?
                .cached_one(
                    &format!(
                        "WITH file AS (
                             INSERT INTO porter_files ({FILE_COLUMNS})
                             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                             RETURNING run
                         ),
                         freed AS (
                             DELETE FROM porter_reservations WHERE ticket = $9
                         ),
                         {}",
                        storing_event("SELECT run, 1 FROM file", 10)
                    ),
                    &[
                        &file.run.to_string(),
                        &file.path,
                        &as_i64(file.size),
                        &file.media_type,
                        &file.sha256,
                        &file.origin,
                        &file.call,
                        &file.created_at,
                        &ticket,
                        &kind,
                        &text,
                        &at,
                    ],
                )
                .await?;
            unsigned(&row, 0, "event number")
        })?;
        Ok(announce.numbered(run, seq))
    }
}

impl Records for PostgresRecords {
    fn budget(&self) -> Option<&dyn SharedBudget> {
        Some(self)
    }

    fn follow(&self) -> Result<Option<mpsc::Receiver<Notice>>, InboxError> {
        let Some(runtime) = &self.runtime else {
            return Err(InboxError::Records(
                "could not follow events: the records store is closed".to_owned(),
            ));
        };
        let (sender, receiver) = mpsc::channel();
        runtime.spawn(listen(self.config.clone(), self.shown.clone(), sender));
        Ok(Some(receiver))
    }

    fn sessions(&self) -> Option<&dyn SessionRecords> {
        Some(self)
    }

    fn lock_job(&self, job: Job) -> Result<Option<JobLock>, InboxError> {
        let key = job_lock(job);
        let held = self.call("take a job's lock", move |pool| async move {
            let client = connect(&pool).await?;
            let got: bool = client
                .query_one("SELECT pg_try_advisory_lock($1)", &[&key])
                .await?
                .try_get(0)?;
            // The lock lives with the session: the connection leaves the
            // pool, and closing it (on drop, or when this process dies)
            // gives the lock back.
            Ok(got.then(|| Object::take(client)))
        })?;
        Ok(held.map(|client| JobLock::holding(Box::new(client))))
    }

    fn insert_run(&self, run: &RunInfo, announce: &NewEvent) -> Result<Event, InboxError> {
        let run = run.clone();
        let id = run.id;
        let (kind, text, at) = owned_event(announce);
        let seq = self.call("record a run", move |pool| async move {
            // The run's row and its event in one statement: the event is
            // numbered only once the row is in, and both or neither stay.
            let row = connect(&pool)
                .await?
                .cached_one(
                    &format!(
                        "WITH run AS (
                             INSERT INTO porter_runs (id, key_name, tenant, started_at, ended_at, purged, client)
                             VALUES ($1, $2, $3, $4, $5, $6, $7)
                             RETURNING id
                         ),
                         {}",
                        storing_event("SELECT id, 1 FROM run", 8)
                    ),
                    &[
                        &run.id.to_string(),
                        &run.owner.key_name,
                        &run.owner.tenant,
                        &run.started_at,
                        &run.ended_at,
                        &run.purged,
                        &run.client,
                        &kind,
                        &text,
                        &at,
                    ],
                )
                .await?;
            unsigned(&row, 0, "event number")
        })?;
        Ok(announce.numbered(id, seq))
    }

    fn end_run(&self, run: RunId, announce: &NewEvent) -> Result<Option<Event>, InboxError> {
        let (kind, text, at) = owned_event(announce);
        let seq = self.call("end a run", move |pool| async move {
            // Ending and its event in one statement; a run already ended
            // (or none) changes no row, so no event is numbered.
            let row = connect(&pool)
                .await?
                .cached_opt(
                    &format!(
                        "WITH ended AS (
                             UPDATE porter_runs SET ended_at = $4 WHERE id = $1 AND ended_at IS NULL
                             RETURNING id
                         ),
                         {}",
                        storing_event("SELECT id, 1 FROM ended", 2)
                    ),
                    &[&run.to_string(), &kind, &text, &at],
                )
                .await?;
            row.map(|row| unsigned(&row, 0, "event number")).transpose()
        })?;
        Ok(seq.map(|seq| announce.numbered(run, seq)))
    }

    fn run(&self, run: RunId) -> Result<Option<RunInfo>, InboxError> {
        self.call("look a run up", move |pool| async move {
            let row = connect(&pool)
                .await?
                .cached_opt(
                    &format!("SELECT {RUN_COLUMNS} FROM porter_runs WHERE id = $1"),
                    &[&run.to_string()],
                )
                .await?;
            row.as_ref().map(run_from).transpose()
        })
    }

    fn runs(&self) -> Result<Vec<RunInfo>, InboxError> {
        self.call("list runs", |pool| async move {
            connect(&pool)
                .await?
                .cached_query(
                    &format!("SELECT {RUN_COLUMNS} FROM porter_runs ORDER BY started_at, id"),
                    &[],
                )
                .await?
                .iter()
                .map(run_from)
                .collect()
        })
    }

    fn ended_by(&self, cutoff: i64) -> Result<Vec<RunId>, InboxError> {
        self.call("list ended runs", move |pool| async move {
            connect(&pool)
                .await?
                .cached_query(
                    "SELECT id FROM porter_runs
                     WHERE NOT purged AND ended_at IS NOT NULL AND ended_at <= $1
                     ORDER BY ended_at",
                    &[&cutoff],
                )
                .await?
                .iter()
                .map(|row| run_id(row, 0))
                .collect()
        })
    }

    fn mark_purged(&self, run: RunId, announce: &NewEvent) -> Result<Event, InboxError> {
        let (kind, text, at) = owned_event(announce);
        let seq = self.call("purge a run", move |pool| async move {
            let mut client = connect(&pool).await?;
            let id = run.to_string();
            let tx = client.transaction().await?;
            tx.cached_execute("DELETE FROM porter_files WHERE run = $1", &[&id])
                .await?;
            tx.cached_execute("DELETE FROM porter_reservations WHERE run = $1", &[&id])
                .await?;
            tx.cached_execute("UPDATE porter_runs SET purged = TRUE WHERE id = $1", &[&id])
                .await?;
            let seq = insert_event_row(&tx, run, &kind, &text, at).await?;
            tx.commit().await?;
            Ok(seq)
        })?;
        Ok(announce.numbered(run, seq))
    }

    fn insert_file(&self, file: &FileRecord, announce: &NewEvent) -> Result<Event, InboxError> {
        self.insert_announced_file(file, None, announce)
    }

    fn file(&self, run: RunId, path: &str) -> Result<Option<FileRecord>, InboxError> {
        let path = path.to_owned();
        self.call("look a file up", move |pool| async move {
            let row = connect(&pool)
                .await?
                .cached_opt(
                    &format!(
                        "SELECT {FILE_COLUMNS} FROM porter_files WHERE run = $1 AND path = $2"
                    ),
                    &[&run.to_string(), &path],
                )
                .await?;
            row.as_ref().map(file_from).transpose()
        })
    }

    fn files(&self, run: RunId) -> Result<Vec<FileRecord>, InboxError> {
        self.call("list files", move |pool| async move {
            connect(&pool)
                .await?
                .cached_query(
                    &format!(
                        "SELECT {FILE_COLUMNS} FROM porter_files WHERE run = $1 ORDER BY path COLLATE \"C\""
                    ),
                    &[&run.to_string()],
                )
                .await?
                .iter()
                .map(file_from)
                .collect()
        })
    }

    fn names_taken(&self, run: RunId, prefix: &str) -> Result<HashSet<String>, InboxError> {
        let prefix = prefix.to_owned();
        self.call("list the names taken in a run", move |pool| async move {
            let rows = connect(&pool)
                .await?
                .cached_query(
                    "SELECT path FROM porter_files WHERE run = $1 AND starts_with(path, $2)
                     UNION SELECT path FROM porter_reservations
                     WHERE run = $1 AND starts_with(path, $2) AND expires_at > now()",
                    &[&run.to_string(), &prefix],
                )
                .await?;
            rows.iter()
                .map(|row| Ok(row.try_get::<_, String>(0)?))
                .collect()
        })
    }

    fn remove_files(
        &self,
        run: RunId,
        paths: &[String],
        announce: &NewEvent,
    ) -> Result<Option<Event>, InboxError> {
        let paths = paths.to_vec();
        let (kind, text, at) = owned_event(announce);
        let seq = self.call("remove file records", move |pool| async move {
            // The records and the event in one statement: the event is
            // stored only when a record went (or none was asked for).
            let row = connect(&pool)
                .await?
                .cached_opt(
                    &format!(
                        "WITH removed AS (
                             DELETE FROM porter_files WHERE run = $1 AND path = ANY($5)
                             RETURNING run
                         ),
                         announced AS (
                             SELECT $1 AS run WHERE EXISTS (SELECT 1 FROM removed)
                                 OR cardinality($5::text[]) = 0
                         ),
                         {}",
                        storing_event("SELECT run, 1 FROM announced", 2)
                    ),
                    &[&run.to_string(), &kind, &text, &at, &paths],
                )
                .await?;
            row.map(|row| unsigned(&row, 0, "event number")).transpose()
        })?;
        Ok(seq.map(|seq| announce.numbered(run, seq)))
    }

    fn inbox_bytes(&self, run: RunId) -> Result<u64, InboxError> {
        self.call("sum a run's files", move |pool| async move {
            let row = connect(&pool)
                .await?
                .cached_one(
                    "SELECT COALESCE(SUM(size), 0)::BIGINT FROM porter_files WHERE run = $1",
                    &[&run.to_string()],
                )
                .await?;
            unsigned(&row, 0, "size")
        })
    }

    fn append_event(
        &self,
        run: RunId,
        kind: &str,
        data: &serde_json::Value,
        at: i64,
    ) -> Result<Event, InboxError> {
        let (stored_kind, text) = (kind.to_owned(), data.to_string());
        let seq = self.call("record an event", move |pool| async move {
            insert_event_row(&connect(&pool).await?, run, &stored_kind, &text, at).await
        })?;
        Ok(NewEvent { kind, data, at }.numbered(run, seq))
    }

    fn events(&self, run: RunId, from_seq: u64) -> Result<Vec<Event>, InboxError> {
        self.call("list events", move |pool| async move {
            connect(&pool)
                .await?
                .cached_query(
                    &format!(
                        "SELECT {EVENT_COLUMNS} FROM porter_events
                         WHERE run = $1 AND seq >= $2 ORDER BY seq"
                    ),
                    &[&run.to_string(), &as_i64(from_seq)],
                )
                .await?
                .iter()
                .map(event_from)
                .collect()
        })
    }
}

/// A lease in seconds, as PostgreSQL's `make_interval` takes it.
fn lease_secs() -> f64 {
    #[allow(clippy::cast_precision_loss, reason = "minutes, far from 2^52")]
    let secs = RESERVATION_LEASE.as_secs() as f64;
    secs
}

impl SharedBudget for PostgresRecords {
    fn reserve(
        &self,
        run: RunId,
        ticket: uuid::Uuid,
        total: u64,
        cap: u64,
    ) -> Result<bool, InboxError> {
        self.call("reserve room in a run's inbox", move |pool| async move {
            let mut client = connect(&pool).await?;
            let (id, ticket) = (run.to_string(), ticket.to_string());
            let tx = client.transaction().await?;
            // Every reservation on the run waits here for the one before it.
            let found = tx
                .cached_opt("SELECT 1 FROM porter_runs WHERE id = $1 FOR UPDATE", &[&id])
                .await?;
            if found.is_none() {
                return Err(Failure::Data(format!(
                    "there is no run {id} in the records"
                )));
            }
            tx.cached_execute(
                "DELETE FROM porter_reservations WHERE run = $1 AND expires_at <= now()",
                &[&id],
            )
            .await?;
            // One statement, so one snapshot: a file committed meanwhile is
            // counted once, as its record or as its reservation.
            let row = tx
                .cached_one(
                    "SELECT (SELECT COALESCE(SUM(size), 0) FROM porter_files WHERE run = $1)::BIGINT
                          + (SELECT COALESCE(SUM(bytes), 0) FROM porter_reservations
                             WHERE run = $1 AND ticket <> $2 AND expires_at > now())::BIGINT",
                    &[&id, &ticket],
                )
                .await?;
            let used = unsigned(&row, 0, "size")?;
            if used.checked_add(total).is_none_or(|after| after > cap) {
                return Ok(false);
            }
            tx.cached_execute(
                "INSERT INTO porter_reservations (ticket, run, bytes, expires_at)
                 VALUES ($1, $2, $3, now() + make_interval(secs => $4))
                 ON CONFLICT (ticket) DO UPDATE
                 SET bytes = EXCLUDED.bytes, expires_at = EXCLUDED.expires_at",
                &[&ticket, &id, &as_i64(total), &lease_secs()],
            )
            .await?;
            tx.commit().await?;
            Ok(true)
        })
    }

    fn release(&self, ticket: uuid::Uuid) -> Result<(), InboxError> {
        self.call("give back a reservation", move |pool| async move {
            connect(&pool)
                .await?
                .cached_execute(
                    "DELETE FROM porter_reservations WHERE ticket = $1",
                    &[&ticket.to_string()],
                )
                .await?;
            Ok(())
        })
    }

    fn insert_reserved_file(
        &self,
        file: &FileRecord,
        ticket: uuid::Uuid,
        announce: &NewEvent,
    ) -> Result<Event, InboxError> {
        self.insert_announced_file(file, Some(ticket), announce)
    }

    fn claim_name(&self, run: RunId, ticket: uuid::Uuid, path: &str) -> Result<bool, InboxError> {
        let path = path.to_owned();
        self.call("claim a name in a run's inbox", move |pool| async move {
            let mut client = connect(&pool).await?;
            let (id, ticket) = (run.to_string(), ticket.to_string());
            let tx = client.transaction().await?;
            // A claim whose capture died with its replica lapses with its
            // reservation.
            tx.cached_execute(
                "DELETE FROM porter_reservations
                 WHERE run = $1 AND path = $2 AND expires_at <= now()",
                &[&id, &path],
            )
            .await?;
            // Waits for a capture that holds the name now to end; then the
            // name is this capture's, or another live capture holds it.
            let claimed = tx
                .cached_execute(
                    "INSERT INTO porter_reservations (ticket, run, bytes, expires_at, path)
                     VALUES ($1, $2, 0, now() + make_interval(secs => $4), $3)
                     ON CONFLICT (ticket) DO UPDATE
                     SET path = EXCLUDED.path, expires_at = EXCLUDED.expires_at",
                    &[&ticket, &id, &path, &lease_secs()],
                )
                .await;
            match claimed {
                Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION) => {
                    return Ok(false);
                }
                other => other?,
            };
            // Asked only now, so a capture that held the name and recorded
            // its file while this one waited is seen.
            let recorded = tx
                .cached_opt(
                    "SELECT 1 FROM porter_files WHERE run = $1 AND path = $2",
                    &[&id, &path],
                )
                .await?;
            if recorded.is_some() {
                return Ok(false);
            }
            tx.commit().await?;
            Ok(true)
        })
    }

    fn used(&self, run: RunId) -> Result<u64, InboxError> {
        self.call(
            "sum a run's files and reservations",
            move |pool| async move {
                let row = connect(&pool)
                .await?
                .cached_one(
                    "SELECT (SELECT COALESCE(SUM(size), 0) FROM porter_files WHERE run = $1)::BIGINT
                          + (SELECT COALESCE(SUM(bytes), 0) FROM porter_reservations
                             WHERE run = $1 AND expires_at > now())::BIGINT",
                    &[&run.to_string()],
                )
                .await?;
                unsigned(&row, 0, "size")
            },
        )
    }
}

impl SessionRecords for PostgresRecords {
    fn put_session_state(&self, id: &str, state: &str) -> Result<(), InboxError> {
        let (id, state) = (id.to_owned(), state.to_owned());
        self.call("store a session", move |pool| async move {
            connect(&pool)
                .await?
                .cached_execute(
                    "INSERT INTO porter_sessions (id, state) VALUES ($1, $2)
                     ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state",
                    &[&id, &state],
                )
                .await?;
            Ok(())
        })
    }

    fn link_session(&self, id: &str, run: RunId) -> Result<(), InboxError> {
        let id = id.to_owned();
        self.call("link a session to its run", move |pool| async move {
            connect(&pool)
                .await?
                .cached_execute(
                    "INSERT INTO porter_sessions (id, run) VALUES ($1, $2)
                     ON CONFLICT (id) DO UPDATE SET run = EXCLUDED.run",
                    &[&id, &run.to_string()],
                )
                .await?;
            Ok(())
        })
    }

    fn session(&self, id: &str) -> Result<Option<StoredSession>, InboxError> {
        let id = id.to_owned();
        self.call("look a session up", move |pool| async move {
            let row = connect(&pool)
                .await?
                .cached_opt(
                    "SELECT run, state FROM porter_sessions WHERE id = $1",
                    &[&id],
                )
                .await?;
            let Some(row) = row else {
                return Ok(None);
            };
            let run = row
                .try_get::<_, Option<&str>>(0)?
                .map(parse_run)
                .transpose()?;
            Ok(Some(StoredSession {
                run,
                state: row.try_get(1)?,
            }))
        })
    }

    fn drop_session(&self, id: &str) -> Result<(), InboxError> {
        let id = id.to_owned();
        self.call("forget a session", move |pool| async move {
            connect(&pool)
                .await?
                .cached_execute("DELETE FROM porter_sessions WHERE id = $1", &[&id])
                .await?;
            Ok(())
        })
    }

    fn claim_shared_run(
        &self,
        slot: &str,
        candidate: &RunInfo,
        now: i64,
        idle_ms: i64,
        announce: &NewEvent,
    ) -> Result<SharedClaim, InboxError> {
        let (slot, candidate) = (slot.to_owned(), candidate.clone());
        let (kind, text, at) = owned_event(announce);
        let claim = self.call("find the shared run", move |pool| async move {
            let mut client = connect(&pool).await?;
            let tx = client.transaction().await?;
            tx.cached_execute(
                "INSERT INTO porter_shared_runs (slot, run, last_used) VALUES ($1, NULL, 0)
                 ON CONFLICT (slot) DO NOTHING",
                &[&slot],
            )
            .await?;
            // Every claim of the slot waits here for the one before it.
            let row = tx
                .cached_one(
                    "SELECT run, last_used FROM porter_shared_runs WHERE slot = $1 FOR UPDATE",
                    &[&slot],
                )
                .await?;
            let (current, last_used): (Option<String>, i64) = (row.try_get(0)?, row.try_get(1)?);
            if let Some(current) = &current
                && last_used > now.saturating_sub(idle_ms)
            {
                let found = tx
                    .cached_opt(
                        &format!(
                            "SELECT {RUN_COLUMNS} FROM porter_runs WHERE id = $1 AND ended_at IS NULL"
                        ),
                        &[current],
                    )
                    .await?;
                if let Some(found) = found {
                    tx.cached_execute(
                        "UPDATE porter_shared_runs SET last_used = GREATEST(last_used, $2) WHERE slot = $1",
                        &[&slot, &now],
                    )
                    .await?;
                    tx.commit().await?;
                    return Ok((run_from(&found)?, None, None));
                }
            }
            tx.cached_execute(
                "INSERT INTO porter_runs (id, key_name, tenant, started_at, ended_at, purged, client)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
                &[
                    &candidate.id.to_string(),
                    &candidate.owner.key_name,
                    &candidate.owner.tenant,
                    &candidate.started_at,
                    &candidate.ended_at,
                    &candidate.purged,
                    &candidate.client,
                ],
            )
            .await?;
            tx.cached_execute(
                "UPDATE porter_shared_runs SET run = $2, last_used = $3 WHERE slot = $1",
                &[&slot, &candidate.id.to_string(), &now],
            )
            .await?;
            let seq = insert_event_row(&tx, candidate.id, &kind, &text, at).await?;
            tx.commit().await?;
            let replaced = current.as_deref().map(parse_run).transpose()?;
            Ok((candidate, Some(seq), replaced))
        })?;
        let (run, seq, replaced) = claim;
        Ok(SharedClaim {
            started: seq.map(|seq| announce.numbered(run.id, seq)),
            run,
            replaced,
        })
    }

    fn take_idle_shared_runs(&self, cutoff: i64) -> Result<Vec<RunId>, InboxError> {
        self.call("end idle shared runs", move |pool| async move {
            connect(&pool)
                .await?
                .cached_query(
                    "DELETE FROM porter_shared_runs WHERE run IS NOT NULL AND last_used <= $1
                     RETURNING run",
                    &[&cutoff],
                )
                .await?
                .iter()
                .map(|row| run_id(row, 0))
                .collect()
        })
    }
}

/// Listens for stored events on a connection of its own and hands each
/// notice to `sender`, connecting again whenever the connection is lost,
/// until no one takes the notices any more.
async fn listen(config: tokio_postgres::Config, shown: String, sender: mpsc::Sender<Notice>) {
    // Since when events may have been stored unheard (set while down).
    let mut cut_off_at: Option<i64> = None;
    let mut down = false;
    loop {
        let (was_up, why) = match listen_once(&config, cut_off_at, &sender).await {
            Listened::NoOneListens => return,
            Listened::Ended { was_up, why } => (was_up, why),
        };
        if was_up {
            if down {
                tracing::info!(database = %shown, "the live event connection to the records database is back");
            }
            down = false;
            cut_off_at = Some(crate::model::now_ms());
        } else {
            // Still down: everything since it was first cut off may be unheard.
            cut_off_at.get_or_insert_with(crate::model::now_ms);
        }
        if !down {
            tracing::warn!(database = %shown, error = %why, "the live event connection to the records database is down; connecting again every second");
            down = true;
        }
        tokio::time::sleep(LISTEN_RETRY).await;
    }
}

/// How one listening connection ended.
enum Listened {
    /// The receiving side is gone: stop.
    NoOneListens,
    /// The connection failed or ended; `was_up` when it listened first.
    Ended { was_up: bool, why: String },
}

async fn listen_once(
    config: &tokio_postgres::Config,
    cut_off_at: Option<i64>,
    sender: &mpsc::Sender<Notice>,
) -> Listened {
    let (client, mut connection) = match config.connect(tokio_postgres::NoTls).await {
        Ok(connected) => connected,
        Err(e) => {
            return Listened::Ended {
                was_up: false,
                why: describe(&e),
            };
        }
    };
    let (notes, mut payloads) = tokio::sync::mpsc::unbounded_channel::<String>();
    let driver = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(tokio_postgres::AsyncMessage::Notification(note))) => {
                    if notes.send(note.payload().to_owned()).is_err() {
                        return String::new();
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return describe(&e),
                None => return "the server closed the connection".to_owned(),
            }
        }
    });
    if let Err(e) = client
        .batch_execute(&format!("LISTEN {EVENTS_CHANNEL}"))
        .await
    {
        driver.abort();
        return Listened::Ended {
            was_up: false,
            why: describe(&e),
        };
    }
    if let Some(cut_off_at) = cut_off_at {
        // Announce the last event of every run that stored any while this
        // listener was away; the hub reads what it has not sent yet.
        let since = cut_off_at.saturating_sub(MISSED_EVENTS_SLACK_MS);
        match client
            .query(
                "SELECT run, MAX(seq) FROM porter_events WHERE at >= $1 GROUP BY run",
                &[&since],
            )
            .await
        {
            Ok(rows) => {
                for row in rows {
                    let notice = row
                        .try_get::<_, &str>(0)
                        .ok()
                        .and_then(|run| run.parse().ok())
                        .zip(
                            row.try_get::<_, i64>(1)
                                .ok()
                                .and_then(|s| u64::try_from(s).ok()),
                        );
                    if let Some((run, seq)) = notice
                        && sender
                            .send(Notice {
                                run: RunId(run),
                                seq,
                            })
                            .is_err()
                    {
                        driver.abort();
                        return Listened::NoOneListens;
                    }
                }
            }
            Err(e) => {
                driver.abort();
                return Listened::Ended {
                    was_up: false,
                    why: describe(&e),
                };
            }
        }
    }
    while let Some(payload) = payloads.recv().await {
        let Some(notice) = parse_notice(&payload) else {
            tracing::warn!(payload = %payload, "an event notice that is not `<run> <seq>` was ignored");
            continue;
        };
        if sender.send(notice).is_err() {
            driver.abort();
            return Listened::NoOneListens;
        }
    }
    let why = driver.await.unwrap_or_else(|e| e.to_string());
    drop(client);
    Listened::Ended { was_up: true, why }
}

/// A notice's payload, `<run> <seq>`.
fn parse_notice(payload: &str) -> Option<Notice> {
    let (run, seq) = payload.split_once(' ')?;
    Some(Notice {
        run: run.parse().ok()?,
        seq: seq.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::redacted_url;

    #[test]
    fn a_shown_url_never_holds_the_password() {
        for (url, shown) in [
            (
                "postgres://porter:s3cret@db:5432/p",
                "postgres://porter:***@db:5432/p",
            ),
            (
                "postgresql://porter:s3:cr@et@db/p?sslmode=disable",
                "postgresql://porter:***@db/p?sslmode=disable",
            ),
            (
                "postgres://porter@db/p?password=s3cret&application_name=x",
                "postgres://porter@db/p?password=***&application_name=x",
            ),
            ("postgres://db/p", "postgres://db/p"),
        ] {
            assert_eq!(redacted_url(url), shown);
        }
        assert!(!redacted_url("host=db password=s3cret").contains("s3cret"));
    }
}
