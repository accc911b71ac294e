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

use std::future::Future;
use std::str::FromStr as _;
use std::sync::mpsc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod};
use tokio_postgres::Row;

use super::Records;

mod documents;
use crate::{Event, FileRecord, InboxError, Owner, RunId, RunInfo};

/// The advisory lock key migrations run under ("porter" in ASCII).
const MIGRATION_LOCK: i64 = 0x706f_7274_6572;

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
    documents::MIGRATION,
];

/// The schema version this build writes and reads.
#[allow(
    clippy::cast_possible_wrap,
    reason = "a handful of steps, never near i64::MAX"
)]
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// How long one call may take, waiting for a connection included, before it
/// fails with a message instead of hanging.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

const RUN_COLUMNS: &str = "id, key_name, tenant, started_at, ended_at, purged, client";
const FILE_COLUMNS: &str = "run, path, size, media_type, sha256, origin, call, created_at";

/// `PostgresRecords` is the [`Records`] store on PostgreSQL.
pub struct PostgresRecords {
    /// `Some` until dropped; shut down in the background on drop, since a
    /// runtime may not be dropped (blocking) on another runtime's thread.
    runtime: Option<tokio::runtime::Runtime>,
    pool: Pool,
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
            config,
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
                Err(_) => Err(InboxError::Records(format!(
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
enum Failure {
    /// No connection could be had.
    Connect(String),
    /// A statement failed.
    Query(tokio_postgres::Error),
    /// The database holds something this build cannot read.
    Data(String),
}

impl Failure {
    fn message(self, what: &str, shown: &str) -> InboxError {
        InboxError::Records(match self {
            Self::Connect(e) => format!(
                "could not {what}: no connection to the database at {shown} ({e}); check that it is up, reachable and that the URL's user and password are right"
            ),
            Self::Query(e) => format!("could not {what}: {}", describe(&e)),
            Self::Data(e) => format!("could not {what}: {e}"),
        })
    }
}

impl From<tokio_postgres::Error> for Failure {
    fn from(e: tokio_postgres::Error) -> Self {
        Self::Query(e)
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
    text.parse()
        .map_err(|e| Failure::Data(format!("a stored run id {text:?} is not a UUID: {e}")))
}

fn as_u64(n: i64, what: &str) -> Result<u64, Failure> {
    u64::try_from(n).map_err(|_| Failure::Data(format!("a stored {what} is negative: {n}")))
}

/// Sizes and seqs are stored as signed BIGINTs; none comes near `i64::MAX`.
fn as_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn run_from(row: &Row) -> Result<RunInfo, Failure> {
    Ok(RunInfo {
        id: parse_run(row.try_get(0)?)?,
        owner: Owner {
            key_name: row.try_get(1)?,
            tenant: row.try_get(2)?,
        },
        started_at: row.try_get(3)?,
        ended_at: row.try_get(4)?,
        purged: row.try_get(5)?,
        client: row.try_get(6)?,
    })
}

fn file_from(row: &Row) -> Result<FileRecord, Failure> {
    Ok(FileRecord {
        run: parse_run(row.try_get(0)?)?,
        path: row.try_get(1)?,
        size: as_u64(row.try_get(2)?, "size")?,
        media_type: row.try_get(3)?,
        sha256: row.try_get(4)?,
        origin: row.try_get(5)?,
        call: row.try_get(6)?,
        created_at: row.try_get(7)?,
    })
}

fn event_from(row: &Row) -> Result<Event, Failure> {
    let data: &str = row.try_get(3)?;
    Ok(Event {
        run: parse_run(row.try_get(0)?)?,
        seq: as_u64(row.try_get(1)?, "event number")?,
        kind: row.try_get(2)?,
        data: serde_json::from_str(data)
            .map_err(|e| Failure::Data(format!("a stored event's data is not JSON: {e}")))?,
        at: row.try_get(4)?,
    })
}

impl Records for PostgresRecords {
    fn insert_run(&self, run: &RunInfo) -> Result<(), InboxError> {
        let run = run.clone();
        self.call("record a run", |pool| async move {
            connect(&pool)
                .await?
                .execute(
                    "INSERT INTO porter_runs (id, key_name, tenant, started_at, ended_at, purged, client)
                     VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    &[
                        &run.id.to_string(),
                        &run.owner.key_name,
                        &run.owner.tenant,
                        &run.started_at,
                        &run.ended_at,
                        &run.purged,
                        &run.client,
                    ],
                )
                .await?;
            Ok(())
        })
    }

    fn end_run(&self, run: RunId, at: i64) -> Result<bool, InboxError> {
        self.call("end a run", move |pool| async move {
            let client = connect(&pool).await?;
            let id = run.to_string();
            client
                .execute(
                    "UPDATE porter_runs SET ended_at = $2 WHERE id = $1 AND ended_at IS NULL",
                    &[&id, &at],
                )
                .await?;
            let found = client
                .query_opt("SELECT 1 FROM porter_runs WHERE id = $1", &[&id])
                .await?;
            Ok(found.is_some())
        })
    }

    fn run(&self, run: RunId) -> Result<Option<RunInfo>, InboxError> {
        self.call("look a run up", move |pool| async move {
            let row = connect(&pool)
                .await?
                .query_opt(
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
                .query(
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
                .query(
                    "SELECT id FROM porter_runs
                     WHERE NOT purged AND ended_at IS NOT NULL AND ended_at <= $1
                     ORDER BY ended_at",
                    &[&cutoff],
                )
                .await?
                .iter()
                .map(|row| parse_run(row.try_get(0)?))
                .collect()
        })
    }

    fn mark_purged(&self, run: RunId) -> Result<(), InboxError> {
        self.call("purge a run", move |pool| async move {
            let mut client = connect(&pool).await?;
            let id = run.to_string();
            let tx = client.transaction().await?;
            tx.execute("DELETE FROM porter_files WHERE run = $1", &[&id])
                .await?;
            tx.execute("UPDATE porter_runs SET purged = TRUE WHERE id = $1", &[&id])
                .await?;
            tx.commit().await?;
            Ok(())
        })
    }

    fn insert_file(&self, file: &FileRecord) -> Result<(), InboxError> {
        let file = file.clone();
        self.call("record a file", |pool| async move {
            connect(&pool)
                .await?
                .execute(
                    &format!(
                        "INSERT INTO porter_files ({FILE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
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
                    ],
                )
                .await?;
            Ok(())
        })
    }

    fn file(&self, run: RunId, path: &str) -> Result<Option<FileRecord>, InboxError> {
        let path = path.to_owned();
        self.call("look a file up", move |pool| async move {
            let row = connect(&pool)
                .await?
                .query_opt(
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
                .query(
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

    fn remove_file(&self, run: RunId, path: &str) -> Result<bool, InboxError> {
        let path = path.to_owned();
        self.call("remove a file record", move |pool| async move {
            let removed = connect(&pool)
                .await?
                .execute(
                    "DELETE FROM porter_files WHERE run = $1 AND path = $2",
                    &[&run.to_string(), &path],
                )
                .await?;
            Ok(removed > 0)
        })
    }

    fn inbox_bytes(&self, run: RunId) -> Result<u64, InboxError> {
        self.call("sum a run's files", move |pool| async move {
            let row = connect(&pool)
                .await?
                .query_one(
                    "SELECT COALESCE(SUM(size), 0)::BIGINT FROM porter_files WHERE run = $1",
                    &[&run.to_string()],
                )
                .await?;
            as_u64(row.try_get(0)?, "size")
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
            // One statement: the counter row's lock is held until the event
            // is stored, so numbers are handed out in order, once each, and a
            // failed insert rolls its number back with it.
            let row = connect(&pool)
                .await?
                .query_one(
                    "WITH next AS (
                         INSERT INTO porter_event_seqs AS s (run, last) VALUES ($1, 1)
                         ON CONFLICT (run) DO UPDATE SET last = s.last + 1
                         RETURNING last
                     )
                     INSERT INTO porter_events (run, seq, kind, data, at)
                     SELECT $1, last, $2, $3, $4 FROM next
                     RETURNING seq",
                    &[&run.to_string(), &stored_kind, &text, &at],
                )
                .await?;
            as_u64(row.try_get(0)?, "event number")
        })?;
        Ok(Event {
            seq,
            run,
            kind: kind.to_owned(),
            data: data.clone(),
            at,
        })
    }

    fn events(&self, run: RunId, from_seq: u64) -> Result<Vec<Event>, InboxError> {
        self.call("list events", move |pool| async move {
            connect(&pool)
                .await?
                .query(
                    "SELECT run, seq, kind, data, at FROM porter_events
                     WHERE run = $1 AND seq >= $2 ORDER BY seq",
                    &[&run.to_string(), &as_i64(from_seq)],
                )
                .await?
                .iter()
                .map(event_from)
                .collect()
        })
    }
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
