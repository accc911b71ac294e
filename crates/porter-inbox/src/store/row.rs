//! Reading records back from either database: [`StoredRow`] is a result
//! row read by column number, and each record has one decoder over it, so
//! SQLite and PostgreSQL cannot come to read a column differently.

use crate::model::{Event, FileRecord, Owner, RunId, RunInfo};

/// `StoredRow` is one result row of a records database, read by column
/// number (the order the `SELECT` named them in).
pub(crate) trait StoredRow {
    /// What the database's driver returns when a column cannot be read.
    type Error;
    /// A `TEXT` column.
    fn text(&self, column: usize) -> Result<String, Self::Error>;
    /// A `TEXT` column that may be `NULL`.
    fn text_or_null(&self, column: usize) -> Result<Option<String>, Self::Error>;
    /// An integer column (SQLite's `INTEGER`, PostgreSQL's `BIGINT`).
    fn integer(&self, column: usize) -> Result<i64, Self::Error>;
    /// An integer column that may be `NULL`.
    fn integer_or_null(&self, column: usize) -> Result<Option<i64>, Self::Error>;
    /// A boolean column (an integer 0 or 1 in SQLite).
    fn flag(&self, column: usize) -> Result<bool, Self::Error>;
    /// The error for a value the column holds that this build cannot read;
    /// `problem` says what is wrong with it.
    fn unreadable(&self, column: usize, problem: String) -> Self::Error;
}

/// A run id stored as text; the problem, in words, when it is not one.
pub(crate) fn parse_run(text: &str) -> Result<RunId, String> {
    text.parse()
        .map_err(|e| format!("a stored run id {text:?} is not a UUID: {e}"))
}

/// A run id from a text column.
pub(crate) fn run_id<R: StoredRow>(row: &R, column: usize) -> Result<RunId, R::Error> {
    parse_run(&row.text(column)?).map_err(|problem| row.unreadable(column, problem))
}

/// An owner from its key's name at `column` and its tenant right after.
pub(crate) fn owner_at<R: StoredRow>(row: &R, column: usize) -> Result<Owner, R::Error> {
    Ok(Owner {
        key_name: row.text(column)?,
        tenant: row.text(column + 1)?,
    })
}

/// A size or sequence number, stored as a signed integer (none comes near
/// `i64::MAX`, and a negative one is damage); `what` names it.
pub(crate) fn unsigned<R: StoredRow>(row: &R, column: usize, what: &str) -> Result<u64, R::Error> {
    let n = row.integer(column)?;
    u64::try_from(n)
        .map_err(|_| row.unreadable(column, format!("a stored {what} is negative: {n}")))
}

/// The columns of a run, in the order [`run_from`] reads them.
pub(crate) const RUN_COLUMNS: &str = "id, key_name, tenant, started_at, ended_at, purged, client";

/// A run from a row of [`RUN_COLUMNS`].
pub(crate) fn run_from<R: StoredRow>(row: &R) -> Result<RunInfo, R::Error> {
    Ok(RunInfo {
        id: run_id(row, 0)?,
        owner: owner_at(row, 1)?,
        started_at: row.integer(3)?,
        ended_at: row.integer_or_null(4)?,
        purged: row.flag(5)?,
        client: row.text_or_null(6)?,
    })
}

/// The columns of a kept file's record, in the order [`file_from`] reads
/// them.
pub(crate) const FILE_COLUMNS: &str =
    "run, path, size, media_type, sha256, origin, call, created_at";

/// A kept file's record from a row of [`FILE_COLUMNS`].
pub(crate) fn file_from<R: StoredRow>(row: &R) -> Result<FileRecord, R::Error> {
    Ok(FileRecord {
        run: run_id(row, 0)?,
        path: row.text(1)?,
        size: unsigned(row, 2, "size")?,
        media_type: row.text(3)?,
        sha256: row.text(4)?,
        origin: row.text(5)?,
        call: row.text(6)?,
        created_at: row.integer(7)?,
    })
}

/// The columns of an event, in the order [`event_from`] reads them.
pub(crate) const EVENT_COLUMNS: &str = "run, seq, kind, data, at";

/// An event from a row of [`EVENT_COLUMNS`]; its data is stored as JSON
/// text.
pub(crate) fn event_from<R: StoredRow>(row: &R) -> Result<Event, R::Error> {
    let data = row.text(3)?;
    Ok(Event {
        run: run_id(row, 0)?,
        seq: unsigned(row, 1, "event number")?,
        kind: row.text(2)?,
        data: serde_json::from_str(&data)
            .map_err(|e| row.unreadable(3, format!("a stored event's data is not JSON: {e}")))?,
        at: row.integer(4)?,
    })
}
