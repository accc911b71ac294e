//! The `Records` stores' behaviour, run against every backend: SQLite (a
//! file) and PostgreSQL (a real server the harness starts; skipped only with
//! `PORTER_SKIP_POSTGRES=1`). Then what only PostgreSQL has to show: gapless
//! event numbers across connections and store instances, migrations racing
//! at start, and messages that never show the URL's password.

use std::sync::{Arc, Barrier};

use porter_inbox::store::POSTGRES_SCHEMA_VERSION;
use porter_inbox::{
    Documents, FileRecord, NewEvent, PostgresRecords, Records, RunId, RunInfo, SqliteDocuments,
    SqliteRecords,
};
use porter_test::postgres::{self, PASSWORD};

use super::owner;

/// A place a store lives (a SQLite file, a PostgreSQL database) that can be
/// opened more than once.
pub(super) enum Place {
    Sqlite(tempfile::TempDir),
    Postgres(String),
}

impl Place {
    pub(super) fn documents(&self) -> Arc<dyn Documents> {
        match self {
            Self::Sqlite(dir) => Arc::new(
                SqliteDocuments::open(&dir.path().join("r.sqlite3")).expect("SQLite opens"),
            ),
            Self::Postgres(url) => Arc::new(PostgresRecords::open(url).expect("PostgreSQL opens")),
        }
    }

    fn open(&self) -> Arc<dyn Records> {
        match self {
            Self::Sqlite(dir) => {
                Arc::new(SqliteRecords::open(&dir.path().join("r.sqlite3")).expect("SQLite opens"))
            }
            Self::Postgres(url) => Arc::new(PostgresRecords::open(url).expect("PostgreSQL opens")),
        }
    }
}

/// A fresh place per backend, named for the failure messages.
pub(super) fn places() -> Vec<(&'static str, Place)> {
    let mut places = vec![(
        "sqlite",
        Place::Sqlite(tempfile::tempdir().expect("temp dir")),
    )];
    if let Some(pg) = postgres::instance() {
        places.push(("postgres", Place::Postgres(pg.fresh_database())));
    }
    places
}

fn file(run: RunId, path: &str, size: u64) -> FileRecord {
    FileRecord {
        run,
        path: path.into(),
        size,
        media_type: "text/plain".into(),
        sha256: "ab".repeat(32),
        origin: "mcp:files/get".into(),
        call: "{}".into(),
        created_at: 7,
    }
}

#[test]
fn events_are_numbered_per_run_from_one() {
    for (backend, place) in places() {
        let records = place.open();
        let (a, b) = (RunId::new(), RunId::new());
        let data = serde_json::json!({"x": 1, "name": "ü"});
        let seqs: Vec<u64> = [a, a, b, a]
            .into_iter()
            .map(|run| {
                records
                    .append_event(run, "k", &data, 5)
                    .expect("append")
                    .seq
            })
            .collect();
        assert_eq!(seqs, [1, 2, 1, 3], "{backend}");
        let from_two = records.events(a, 2).expect("events");
        assert_eq!(
            from_two.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [2, 3],
            "{backend}"
        );
        assert_eq!(from_two[0].data, data, "{backend}");
        assert_eq!(from_two[0].run, a, "{backend}");
        assert_eq!(from_two[0].kind, "k", "{backend}");
        assert_eq!(records.events(b, 0).expect("events").len(), 1, "{backend}");
    }
}

#[test]
fn a_run_survives_reopening_and_ends_once() {
    for (backend, place) in places() {
        let run = RunInfo {
            id: RunId::new(),
            owner: owner(),
            started_at: 10,
            ended_at: None,
            purged: false,
            client: None,
        };
        let started = insert_run(place.open().as_ref(), &run);
        assert_eq!(
            (started.seq, started.kind.as_str()),
            (1, "run_started"),
            "{backend}"
        );
        let records = place.open();
        let data = serde_json::json!({});
        let ending = |at| NewEvent {
            kind: "run_ended",
            data: &data,
            at,
        };
        let ended = records.end_run(run.id, &ending(20)).expect("end");
        assert_eq!(ended.map(|e| (e.seq, e.at)), Some((2, 20)), "{backend}");
        assert_eq!(
            records.end_run(run.id, &ending(30)).expect("end again"),
            None,
            "{backend}"
        );
        assert_eq!(
            records.end_run(RunId::new(), &ending(30)).expect("no run"),
            None,
            "{backend}"
        );
        let kinds: Vec<String> = records
            .events(run.id, 0)
            .expect("events")
            .into_iter()
            .map(|e| e.kind)
            .collect();
        assert_eq!(
            kinds,
            ["run_started", "run_ended"],
            "{backend}: one event each"
        );
        let found = records.run(run.id).expect("run").expect("exists");
        assert_eq!(found.ended_at, Some(20), "{backend}");
        assert_eq!(found.owner, owner(), "{backend}");
        assert_eq!(records.ended_by(19).expect("ended"), [], "{backend}");
        assert_eq!(records.ended_by(20).expect("ended"), [run.id], "{backend}");
        assert_eq!(records.runs().expect("runs"), [found], "{backend}");
        assert!(
            records.run(RunId::new()).expect("run").is_none(),
            "{backend}"
        );
    }
}

#[test]
fn a_runs_client_name_is_kept_and_read_back() {
    for (backend, place) in places() {
        let named = RunInfo {
            id: RunId::new(),
            owner: owner(),
            started_at: 10,
            ended_at: None,
            purged: false,
            client: Some("Claude Desktop".into()),
        };
        let unnamed = RunInfo {
            id: RunId::new(),
            client: None,
            ..named.clone()
        };
        let records = place.open();
        insert_run(records.as_ref(), &named);
        insert_run(records.as_ref(), &unnamed);
        let reopened = place.open();
        assert_eq!(
            reopened.run(named.id).expect("run"),
            Some(named.clone()),
            "{backend}"
        );
        assert_eq!(
            reopened.run(unnamed.id).expect("run"),
            Some(unnamed.clone()),
            "{backend}"
        );
    }
}

/// A database written before runs had a client name opens, keeps its runs
/// and takes new ones with a name.
#[test]
fn a_sqlite_database_from_before_client_names_is_upgraded_in_place() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("old.sqlite3");
    let old = rusqlite::Connection::open(&path).expect("sqlite");
    old.execute_batch(
        "CREATE TABLE runs (id TEXT PRIMARY KEY, key_name TEXT NOT NULL, tenant TEXT NOT NULL,
             started_at INTEGER NOT NULL, ended_at INTEGER, purged INTEGER NOT NULL DEFAULT 0);",
    )
    .expect("old schema");
    let old_run = RunId::new();
    old.execute(
        "INSERT INTO runs VALUES (?1, 'alice', 'acme', 5, NULL, 0)",
        [old_run.to_string()],
    )
    .expect("old run");
    drop(old);

    let records = SqliteRecords::open(&path).expect("the old database opens");
    let found = records.run(old_run).expect("run").expect("kept");
    assert_eq!(found.client, None);
    assert_eq!(found.started_at, 5);
    let new = RunInfo {
        id: RunId::new(),
        owner: owner(),
        started_at: 6,
        ended_at: None,
        purged: false,
        client: Some("mcp-inspector".into()),
    };
    insert_run(&records, &new);
    drop(records);
    let again = SqliteRecords::open(&path).expect("opens twice");
    assert_eq!(again.run(new.id).expect("run"), Some(new));
}

#[test]
fn file_records_are_kept_listed_summed_and_purged() {
    for (backend, place) in places() {
        let records = place.open();
        let run = RunInfo {
            id: RunId::new(),
            owner: owner(),
            started_at: 1,
            ended_at: Some(2),
            purged: false,
            client: None,
        };
        insert_run(records.as_ref(), &run);
        let other = RunId::new();
        for record in [
            file(run.id, "b.txt", 10),
            file(run.id, "B.txt", 5),
            file(run.id, "a/c.txt", 100),
            file(other, "b.txt", 1000),
        ] {
            let data = serde_json::json!({ "path": record.path });
            let announce = NewEvent {
                kind: "file_captured",
                data: &data,
                at: 3,
            };
            let event = records
                .insert_file(&record, &announce)
                .expect("insert file");
            assert_eq!(
                (event.run, event.kind.as_str(), &event.data),
                (record.run, "file_captured", &data),
                "{backend}"
            );
        }
        let data = serde_json::json!({ "path": "b.txt" });
        let announce = NewEvent {
            kind: "file_captured",
            data: &data,
            at: 4,
        };
        assert!(
            records
                .insert_file(&file(run.id, "b.txt", 1), &announce)
                .is_err(),
            "{backend}: a second record under one path is refused"
        );
        let announced: Vec<(u64, serde_json::Value)> = records
            .events(run.id, 2) // 1 is the run's run_started
            .expect("events")
            .into_iter()
            .map(|event| (event.seq, event.data))
            .collect();
        assert_eq!(
            announced,
            [
                (2, serde_json::json!({ "path": "b.txt" })),
                (3, serde_json::json!({ "path": "B.txt" })),
                (4, serde_json::json!({ "path": "a/c.txt" })),
            ],
            "{backend}: each record stored its event with it, and the refused one none"
        );
        let paths: Vec<String> = records
            .files(run.id)
            .expect("files")
            .into_iter()
            .map(|f| f.path)
            .collect();
        assert_eq!(
            paths,
            ["B.txt", "a/c.txt", "b.txt"],
            "{backend}: byte order"
        );
        assert_eq!(
            records.file(run.id, "a/c.txt").expect("file"),
            Some(file(run.id, "a/c.txt", 100)),
            "{backend}"
        );
        assert_eq!(
            records.file(run.id, "A/c.txt").expect("file"),
            None,
            "{backend}"
        );
        assert_eq!(
            records.inbox_bytes(run.id).expect("bytes"),
            115,
            "{backend}"
        );
        removed_and_purged_with_their_events(records.as_ref(), run.id, backend);
        assert_eq!(
            records.inbox_bytes(other).expect("bytes"),
            1000,
            "{backend}"
        );
    }
}

/// Removes `B.txt` of `run` (115 bytes, ended at 2) and purges the run,
/// checking that each stored its event with it.
fn removed_and_purged_with_their_events(records: &dyn Records, run: RunId, backend: &str) {
    let data = serde_json::json!({ "path": "B.txt" });
    let removal = NewEvent {
        kind: "file_removed",
        data: &data,
        at: 5,
    };
    let removed = records
        .remove_files(run, &["B.txt".to_owned()], &removal)
        .expect("remove");
    assert_eq!(
        removed.map(|event| (event.seq, event.kind)),
        Some((5, "file_removed".to_owned())),
        "{backend}: the removal stored its event with it"
    );
    assert_eq!(
        records
            .remove_files(run, &["B.txt".to_owned()], &removal)
            .expect("remove"),
        None,
        "{backend}: a record already gone announces nothing"
    );
    assert_eq!(records.inbox_bytes(run).expect("bytes"), 110, "{backend}");
    assert_eq!(records.ended_by(2).expect("ended"), [run], "{backend}");
    let data = serde_json::json!({});
    let purge = NewEvent {
        kind: "inbox_purged",
        data: &data,
        at: 6,
    };
    let purged = records.mark_purged(run, &purge).expect("purge");
    assert_eq!(
        (purged.seq, purged.kind.as_str()),
        (6, "inbox_purged"),
        "{backend}"
    );
    assert_eq!(records.files(run).expect("files"), [], "{backend}");
    assert_eq!(records.inbox_bytes(run).expect("bytes"), 0, "{backend}");
    assert!(
        records.run(run).expect("run").expect("stays").purged,
        "{backend}"
    );
    assert_eq!(records.ended_by(2).expect("ended"), [], "{backend}");
}

#[test]
fn events_from_many_threads_and_two_stores_are_numbered_without_gaps() {
    const THREADS: usize = 16;
    const EACH: usize = 25;
    for (backend, place) in places() {
        // Two store instances on one place: two replicas' pools.
        let stores = [place.open(), place.open()];
        let run = RunId::new();
        let barrier = Arc::new(Barrier::new(THREADS));
        let handles: Vec<_> = (0..THREADS)
            .map(|i| {
                let records = stores[i % 2].clone();
                let barrier = barrier.clone();
                std::thread::spawn(move || {
                    barrier.wait();
                    (0..EACH)
                        .map(|j| {
                            records
                                .append_event(run, "k", &serde_json::json!({"t": i, "j": j}), 1)
                                .expect("append")
                                .seq
                        })
                        .collect::<Vec<u64>>()
                })
            })
            .collect();
        let mut seqs: Vec<u64> = handles
            .into_iter()
            .flat_map(|h| h.join().expect("a thread"))
            .collect();
        seqs.sort_unstable();
        let total = u64::try_from(THREADS * EACH).expect("fits");
        assert_eq!(seqs, (1..=total).collect::<Vec<_>>(), "{backend}");
        let listed: Vec<u64> = stores[1]
            .events(run, 1)
            .expect("events")
            .iter()
            .map(|e| e.seq)
            .collect();
        assert_eq!(listed, (1..=total).collect::<Vec<_>>(), "{backend}");
    }
}

#[test]
fn replicas_starting_together_migrate_once() {
    const REPLICAS: usize = 12;
    const ROUNDS: usize = 6;
    let Some(pg) = postgres::instance() else {
        return;
    };
    let mut url = String::new();
    // Several rounds on fresh databases, so the openers really overlap.
    for _ in 0..ROUNDS {
        url = pg.fresh_database();
        let barrier = Arc::new(Barrier::new(REPLICAS));
        let handles: Vec<_> = (0..REPLICAS)
            .map(|_| {
                let (url, barrier) = (url.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    PostgresRecords::open(&url).map(|_| ())
                })
            })
            .collect();
        for handle in handles {
            handle
                .join()
                .expect("a replica thread")
                .expect("every replica opens");
        }
        assert_eq!(
            postgres::psql(&url, "SELECT version FROM porter_schema"),
            POSTGRES_SCHEMA_VERSION.to_string()
        );
    }
    // Opening again changes nothing and keeps rows.
    let records = PostgresRecords::open(&url).expect("reopens");
    records
        .append_event(RunId::new(), "k", &serde_json::json!(null), 1)
        .expect("append");
    assert!(PostgresRecords::open(&url).is_ok());
    assert_eq!(
        postgres::psql(&url, "SELECT count(*) FROM porter_events"),
        "1"
    );
}

#[test]
fn a_newer_schema_is_refused_with_what_to_do() {
    let Some(pg) = postgres::instance() else {
        return;
    };
    let url = pg.fresh_database();
    drop(PostgresRecords::open(&url).expect("opens"));
    let _ = postgres::psql(&url, "UPDATE porter_schema SET version = 99");
    let error = PostgresRecords::open(&url)
        .expect_err("refused")
        .to_string();
    assert!(error.contains("version 99"), "{error}");
    assert!(error.contains("newer porter"), "{error}");
}

#[test]
fn connection_failures_say_what_to_check_and_never_show_the_password() {
    let Some(pg) = postgres::instance() else {
        return;
    };
    let wrong = format!(
        "postgres://{}:{PASSWORD}-wrong@127.0.0.1:{}/postgres",
        postgres::USER,
        pg.port()
    );
    let error = PostgresRecords::open(&wrong)
        .expect_err("wrong password")
        .to_string();
    assert!(!error.contains(PASSWORD), "{error}");
    assert!(error.contains("postgres://porter:***@127.0.0.1"), "{error}");
    assert!(error.contains("password"), "{error}");

    // Nothing listens on this port.
    let port = porter_test::free_port();
    let down = format!("postgres://porter:{PASSWORD}@127.0.0.1:{port}/postgres");
    let started = std::time::Instant::now();
    let error = PostgresRecords::open(&down)
        .expect_err("nothing there")
        .to_string();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(15),
        "{error}"
    );
    assert!(!error.contains(PASSWORD), "{error}");
    assert!(error.contains("check that it is up"), "{error}");
    assert!(error.contains("refused"), "the cause is named: {error}");

    let error = PostgresRecords::open(&format!("mysql://u:{PASSWORD}@h/d"))
        .expect_err("not postgres")
        .to_string();
    assert!(!error.contains(PASSWORD), "{error}");
    assert!(
        error.contains("postgres://user:password@host:5432/database"),
        "{error}"
    );
}

/// Records `run` with a `run_started` as `Inbox` stores it, and gives the
/// stored event.
fn insert_run(records: &dyn Records, run: &RunInfo) -> porter_inbox::Event {
    let data = serde_json::json!({"key_name": run.owner.key_name});
    let announce = NewEvent {
        kind: "run_started",
        data: &data,
        at: run.started_at,
    };
    records
        .insert_run(run, &announce)
        .expect("a run is recorded")
}
