//! Records in an embedded SQLite database (WAL), one connection behind a
//! mutex: the gateway's writes are small and few next to the file I/O.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::row::{
    EVENT_COLUMNS, FILE_COLUMNS, RUN_COLUMNS, StoredRow, event_from, file_from, run_from, run_id,
    unsigned,
};
use super::{Records, as_i64};
use crate::model::{Event, FileRecord, InboxError, NewEvent, RunId, RunInfo};

/// `SqliteRecords` is the local [`Records`] store.
pub struct SqliteRecords {
    db: Mutex<Connection>,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    key_name TEXT NOT NULL,
    tenant TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    ended_at INTEGER,
    purged INTEGER NOT NULL DEFAULT 0,
    client TEXT
);
CREATE TABLE IF NOT EXISTS files (
    run TEXT NOT NULL,
    path TEXT NOT NULL,
    size INTEGER NOT NULL,
    media_type TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    origin TEXT NOT NULL,
    call TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (run, path)
);
CREATE TABLE IF NOT EXISTS events (
    run TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    data TEXT NOT NULL,
    at INTEGER NOT NULL,
    PRIMARY KEY (run, seq)
);
";

impl SqliteRecords {
    /// Opens (creating) the database at `path` in WAL mode.
    pub fn open(path: &Path) -> Result<Self, InboxError> {
        let db = open_wal(path)?;
        db.execute_batch("PRAGMA synchronous = NORMAL;")
            .map_err(failed("set synchronous"))?;
        db.execute_batch(SCHEMA)
            .map_err(failed("create the tables"))?;
        add_missing_columns(&db)?;
        Ok(Self { db: Mutex::new(db) })
    }

    fn db(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave SQLite half-changed
        // (each statement is atomic), so the connection stays usable.
        self.db.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Columns added since the first schema, with their type: a database
/// written by an older porter gains them when it is opened (`CREATE TABLE IF
/// NOT EXISTS` leaves an existing table as it was).
const ADDED_COLUMNS: &[(&str, &str, &str)] = &[("runs", "client", "TEXT")];

fn add_missing_columns(db: &Connection) -> Result<(), InboxError> {
    for (table, column, kind) in ADDED_COLUMNS {
        let present = db
            .prepare(&format!(
                "SELECT 1 FROM pragma_table_info('{table}') WHERE name = ?1"
            ))
            .and_then(|mut query| query.exists([column]))
            .map_err(failed("read the table's columns"))?;
        if !present {
            db.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {kind}"))
                .map_err(failed("add a column to an older database"))?;
        }
    }
    Ok(())
}

/// Opens (creating) the SQLite database at `path` in WAL mode, waiting up
/// to 10 s for another connection's lock: the records and the documents
/// each have a connection to the one file.
pub(crate) fn open_wal(path: &Path) -> Result<Connection, InboxError> {
    let db = Connection::open(path).map_err(failed("open the database"))?;
    db.busy_timeout(Duration::from_secs(10))
        .map_err(failed("set the busy timeout"))?;
    db.query_row("PRAGMA journal_mode = WAL", [], |row| {
        row.get::<_, String>(0)
    })
    .map_err(failed("switch to WAL"))?;
    Ok(db)
}

/// Turns a database error into the crate's, saying what was being done.
pub(crate) fn failed(what: &'static str) -> impl Fn(rusqlite::Error) -> InboxError {
    move |e| InboxError::Records(format!("could not {what}: {e}"))
}

impl StoredRow for Row<'_> {
    type Error = rusqlite::Error;

    fn text(&self, column: usize) -> rusqlite::Result<String> {
        self.get(column)
    }

    fn text_or_null(&self, column: usize) -> rusqlite::Result<Option<String>> {
        self.get(column)
    }

    fn integer(&self, column: usize) -> rusqlite::Result<i64> {
        self.get(column)
    }

    fn integer_or_null(&self, column: usize) -> rusqlite::Result<Option<i64>> {
        self.get(column)
    }

    fn flag(&self, column: usize) -> rusqlite::Result<bool> {
        self.get(column)
    }

    fn unreadable(&self, column: usize, problem: String) -> rusqlite::Error {
        let stored = self
            .get_ref(column)
            .map_or(rusqlite::types::Type::Null, |value| value.data_type());
        rusqlite::Error::FromSqlConversionFailure(column, stored, problem.into())
    }
}

/// Stores `event` under `run`'s next number, on the connection or inside
/// the transaction `db` is, and gives that number.
fn insert_event(db: &Connection, run: RunId, event: &NewEvent) -> Result<u64, InboxError> {
    db.query_row(
        "INSERT INTO events (run, seq, kind, data, at)
         VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE run = ?1), ?2, ?3, ?4)
         RETURNING seq",
        params![
            run.to_string(),
            event.kind,
            event.data.to_string(),
            event.at
        ],
        |row| unsigned(row, 0, "event number"),
    )
    .map_err(failed("record an event"))
}

impl Records for SqliteRecords {
    fn insert_run(&self, run: &RunInfo, announce: &NewEvent) -> Result<Event, InboxError> {
        let mut db = self.db();
        let tx = db.transaction().map_err(failed("record a run"))?;
        tx.execute(
            "INSERT INTO runs (id, key_name, tenant, started_at, ended_at, purged, client)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                run.id.to_string(),
                run.owner.key_name,
                run.owner.tenant,
                run.started_at,
                run.ended_at,
                run.purged,
                run.client
            ],
        )
        .map_err(failed("record a run"))?;
        let seq = insert_event(&tx, run.id, announce)?;
        tx.commit().map_err(failed("record a run"))?;
        Ok(announce.numbered(run.id, seq))
    }

    fn end_run(&self, run: RunId, announce: &NewEvent) -> Result<Option<Event>, InboxError> {
        let mut db = self.db();
        let tx = db.transaction().map_err(failed("end a run"))?;
        let ended = tx
            .execute(
                "UPDATE runs SET ended_at = ?2 WHERE id = ?1 AND ended_at IS NULL",
                params![run.to_string(), announce.at],
            )
            .map_err(failed("end a run"))?;
        if ended == 0 {
            return Ok(None);
        }
        let seq = insert_event(&tx, run, announce)?;
        tx.commit().map_err(failed("end a run"))?;
        Ok(Some(announce.numbered(run, seq)))
    }

    fn run(&self, run: RunId) -> Result<Option<RunInfo>, InboxError> {
        self.db()
            .query_row(
                &format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1"),
                [run.to_string()],
                |row| run_from(row),
            )
            .optional()
            .map_err(failed("look a run up"))
    }

    fn runs(&self) -> Result<Vec<RunInfo>, InboxError> {
        let db = self.db();
        let mut statement = db
            .prepare(&format!(
                "SELECT {RUN_COLUMNS} FROM runs ORDER BY started_at, id"
            ))
            .map_err(failed("list runs"))?;
        statement
            .query_map([], |row| run_from(row))
            .and_then(Iterator::collect)
            .map_err(failed("list runs"))
    }

    fn ended_by(&self, cutoff: i64) -> Result<Vec<RunId>, InboxError> {
        let db = self.db();
        let mut statement = db
            .prepare(
                "SELECT id FROM runs WHERE purged = 0 AND ended_at IS NOT NULL AND ended_at <= ?1
                 ORDER BY ended_at",
            )
            .map_err(failed("list ended runs"))?;
        statement
            .query_map([cutoff], |row| run_id(row, 0))
            .and_then(Iterator::collect)
            .map_err(failed("list ended runs"))
    }

    fn mark_purged(&self, run: RunId, announce: &NewEvent) -> Result<Event, InboxError> {
        let mut db = self.db();
        let tx = db.transaction().map_err(failed("purge a run"))?;
        tx.execute("DELETE FROM files WHERE run = ?1", [run.to_string()])
            .map_err(failed("purge a run's files"))?;
        tx.execute(
            "UPDATE runs SET purged = 1 WHERE id = ?1",
            [run.to_string()],
        )
        .map_err(failed("mark a run purged"))?;
        let seq = insert_event(&tx, run, announce)?;
        tx.commit().map_err(failed("purge a run"))?;
        Ok(announce.numbered(run, seq))
    }

    fn insert_file(&self, file: &FileRecord, announce: &NewEvent) -> Result<Event, InboxError> {
        let mut db = self.db();
        let tx = db.transaction().map_err(failed("record a file"))?;
        tx.execute(
            &format!("INSERT INTO files ({FILE_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"),
            params![
                file.run.to_string(),
                file.path,
                as_i64(file.size),
                file.media_type,
                file.sha256,
                file.origin,
                file.call,
                file.created_at
            ],
        )
        .map_err(failed("record a file"))?;
        let seq = insert_event(&tx, file.run, announce)?;
        tx.commit().map_err(failed("record a file"))?;
        Ok(announce.numbered(file.run, seq))
    }

    fn file(&self, run: RunId, path: &str) -> Result<Option<FileRecord>, InboxError> {
        self.db()
            .query_row(
                &format!("SELECT {FILE_COLUMNS} FROM files WHERE run = ?1 AND path = ?2"),
                params![run.to_string(), path],
                |row| file_from(row),
            )
            .optional()
            .map_err(failed("look a file up"))
    }

    fn files(&self, run: RunId) -> Result<Vec<FileRecord>, InboxError> {
        let db = self.db();
        let mut statement = db
            .prepare(&format!(
                "SELECT {FILE_COLUMNS} FROM files WHERE run = ?1 ORDER BY path"
            ))
            .map_err(failed("list files"))?;
        statement
            .query_map([run.to_string()], |row| file_from(row))
            .and_then(Iterator::collect)
            .map_err(failed("list files"))
    }

    fn names_taken(&self, run: RunId, prefix: &str) -> Result<HashSet<String>, InboxError> {
        let db = self.db();
        let mut statement = db
            .prepare("SELECT path FROM files WHERE run = ?1 AND substr(path, 1, length(?2)) = ?2")
            .map_err(failed("list the names taken in a run"))?;
        statement
            .query_map(params![run.to_string(), prefix], |row| row.get(0))
            .and_then(Iterator::collect)
            .map_err(failed("list the names taken in a run"))
    }

    fn remove_files(
        &self,
        run: RunId,
        paths: &[String],
        announce: &NewEvent,
    ) -> Result<Option<Event>, InboxError> {
        let mut db = self.db();
        let tx = db.transaction().map_err(failed("remove file records"))?;
        let mut removed = 0;
        for path in paths {
            removed += tx
                .execute(
                    "DELETE FROM files WHERE run = ?1 AND path = ?2",
                    params![run.to_string(), path],
                )
                .map_err(failed("remove a file record"))?;
        }
        if removed == 0 && !paths.is_empty() {
            return Ok(None);
        }
        let seq = insert_event(&tx, run, announce)?;
        tx.commit().map_err(failed("remove file records"))?;
        Ok(Some(announce.numbered(run, seq)))
    }

    fn inbox_bytes(&self, run: RunId) -> Result<u64, InboxError> {
        self.db()
            .query_row(
                "SELECT COALESCE(SUM(size), 0) FROM files WHERE run = ?1",
                [run.to_string()],
                |row| unsigned(row, 0, "size"),
            )
            .map_err(failed("sum a run's files"))
    }

    fn append_event(
        &self,
        run: RunId,
        kind: &str,
        data: &serde_json::Value,
        at: i64,
    ) -> Result<Event, InboxError> {
        let announce = NewEvent { kind, data, at };
        let seq = insert_event(&self.db(), run, &announce)?;
        Ok(announce.numbered(run, seq))
    }

    fn events(&self, run: RunId, from_seq: u64) -> Result<Vec<Event>, InboxError> {
        let db = self.db();
        let mut statement = db
            .prepare(&format!(
                "SELECT {EVENT_COLUMNS} FROM events WHERE run = ?1 AND seq >= ?2 ORDER BY seq"
            ))
            .map_err(failed("list events"))?;
        statement
            .query_map(params![run.to_string(), as_i64(from_seq)], |row| {
                event_from(row)
            })
            .and_then(Iterator::collect)
            .map_err(failed("list events"))
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::params;

    use super::SqliteRecords;
    use crate::model::RunId;
    use crate::store::Records as _;

    #[test]
    fn a_damaged_row_is_refused_with_what_is_wrong_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let records = SqliteRecords::open(&dir.path().join("records.db")).unwrap();
        let run = RunId::new();
        records
            .db()
            .execute(
                "INSERT INTO files (run, path, size, media_type, sha256, origin, call, created_at)
                 VALUES (?1, 'a.txt', -1, 'text/plain', '', 'test', 'test', 0)",
                params![run.to_string()],
            )
            .unwrap();
        let error = records.files(run).unwrap_err().to_string();
        assert!(
            error.contains("could not list files")
                && error.contains("a stored size is negative: -1"),
            "{error}"
        );
        records
            .db()
            .execute(
                "INSERT INTO events (run, seq, kind, data, at) VALUES (?1, 1, 'note', '{', 0)",
                params![run.to_string()],
            )
            .unwrap();
        let error = records.events(run, 0).unwrap_err().to_string();
        assert!(
            error.contains("a stored event's data is not JSON"),
            "{error}"
        );
    }
}
