//! The inbox through its public API: keeping files, records, events,
//! limits under concurrency, crash safety, purging and reading back.

use std::io::{BufRead as _, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::time::{Duration, SystemTime};

use porter_inbox::{Inbox, InboxError, Incoming, Limits, Origin, Outcome, Owner, RunId};
use sha2::{Digest as _, Sha256};

mod documents;
mod records;
mod replicas;
mod s3;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
/// The size of the small files the racing tests keep.
const FILE_BYTES_SMALL: u64 = 4 * KIB;

const PNG: &[u8] =
    b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";

fn small_limits() -> Limits {
    Limits {
        file_max_bytes: MIB,
        inbox_max_bytes: 10 * MIB,
        inbox_ttl: Duration::from_secs(3600),
    }
}

fn owner() -> Owner {
    Owner {
        key_name: "local".into(),
        tenant: "local".into(),
    }
}

fn incoming(name: Option<&str>) -> Incoming {
    Incoming {
        name: name.map(str::to_owned),
        fallback_name: "get_attachment".into(),
        dir: None,
        declared_type: None,
        origin: Origin::Mcp {
            server: "files".into(),
            tool: "get_attachment".into(),
        },
        call: r#"{"tool":"get_attachment","arguments":{"id":"7"}}"#.into(),
    }
}

fn opened(dir: &Path, limits: Limits) -> (Inbox, RunId) {
    opened_on(dir, limits, None)
}

/// Opens an inbox under `dir` with its records in SQLite (`db` is `None`)
/// or in the PostgreSQL database `db`.
fn open_on(dir: &Path, limits: Limits, db: Option<&str>) -> Inbox {
    match db {
        None => Inbox::open(dir, limits).expect("the inbox opens"),
        Some(url) => {
            Inbox::open_on_postgres(dir, url, limits).expect("the inbox opens on PostgreSQL")
        }
    }
}

fn opened_on(dir: &Path, limits: Limits, db: Option<&str>) -> (Inbox, RunId) {
    let inbox = open_on(dir, limits, db);
    let run = inbox.start_run(owner()).expect("a run starts").id;
    (inbox, run)
}

/// Runs `test` with the records in SQLite, then in a fresh PostgreSQL
/// database (unless `PORTER_SKIP_POSTGRES=1`).
fn every_backend(test: fn(Option<&str>)) {
    test(None);
    if let Some(pg) = porter_test::postgres::instance() {
        test(Some(&pg.fresh_database()));
    }
}

fn kept(outcome: Outcome) -> porter_inbox::FileRecord {
    match outcome {
        Outcome::Kept(record) => record,
        not @ Outcome::NotKept { .. } => panic!("expected the file to be kept: {}", not.stub()),
    }
}

/// Every regular file under `dir`, with its size.
fn files_under(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries {
        let entry = entry.expect("a dir entry");
        let kind = entry.file_type().expect("a file type");
        if kind.is_dir() {
            found.extend(files_under(&entry.path()));
        } else {
            found.push((entry.path(), entry.metadata().expect("metadata").len()));
        }
    }
    found
}

fn sha256_hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    Sha256::digest(bytes)
        .iter()
        .fold(String::new(), |mut out, b| {
            let _ = write!(out, "{b:02x}");
            out
        })
}

#[test]
fn a_kept_file_is_on_disk_recorded_and_announced_everywhere() {
    every_backend(a_kept_file_is_on_disk_recorded_and_announced_everywhere_on);
}

fn a_kept_file_is_on_disk_recorded_and_announced_everywhere_on(db: Option<&str>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (inbox, run) = opened_on(dir.path(), small_limits(), db);
    let (_, mut live) = inbox.subscribe(run, u64::MAX).expect("subscribe");
    let mut all = inbox.subscribe_all();

    let record = kept(
        inbox
            .keep_bytes(run, incoming(Some("../../photo")), PNG)
            .expect("keep"),
    );

    assert_eq!(record.path, "photo.png");
    assert_eq!(record.media_type, "image/png");
    assert_eq!(record.size, PNG.len() as u64);
    assert_eq!(record.sha256, sha256_hex(PNG));
    assert_eq!(record.origin, "mcp:files/get_attachment");
    let on_disk = inbox.inbox_dir(run).join("photo.png");
    assert_eq!(std::fs::read(&on_disk).expect("the file is there"), PNG);
    assert_eq!(
        inbox.files(run).expect("files"),
        std::slice::from_ref(&record)
    );
    assert_eq!(
        inbox.file(run, "photo.png").expect("file"),
        Some(record.clone())
    );
    assert_eq!(
        Outcome::Kept(record.clone()).stub(),
        format!(
            "[file: volume:inbox:photo.png · image/png · 33 bytes · sha256:{}… · from mcp:files/get_attachment]",
            &record.sha256[..12]
        )
    );

    let (backlog, _) = inbox.subscribe(run, 1).expect("subscribe");
    let kinds: Vec<(u64, &str)> = backlog.iter().map(|e| (e.seq, e.kind.as_str())).collect();
    assert_eq!(kinds, [(1, "run_started"), (2, "file_captured")]);
    let expected = serde_json::json!({
        "ref": "volume:inbox:photo.png",
        "path": "photo.png",
        "media_type": "image/png",
        "size": PNG.len(),
        "sha256": record.sha256,
        "origin": "mcp:files/get_attachment",
        "call": record.call,
    });
    assert_eq!(backlog[1].data, expected);
    assert_eq!(live.try_recv().expect("sent live"), backlog[1]);
    assert_eq!(all.try_recv().expect("sent to all runs"), backlog[1]);

    let transcript = std::fs::read_to_string(inbox.transcript_path(run)).expect("transcript");
    let lines: Vec<porter_inbox::Event> = transcript
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON event per line"))
        .collect();
    assert_eq!(lines, backlog);
}

/// Makes the records refuse (or accept again) every new event, as a
/// database does that goes away between two statements: a trigger that
/// fails each insert into the events table.
fn refuse_events(dir: &Path, db: Option<&str>, refuse: bool) {
    match db {
        None => {
            let sql = if refuse {
                "CREATE TRIGGER refuse_events BEFORE INSERT ON events
                 BEGIN SELECT RAISE(ABORT, 'events refused by the test'); END;"
            } else {
                "DROP TRIGGER refuse_events;"
            };
            rusqlite::Connection::open(dir.join("porter.sqlite3"))
                .expect("the inbox's SQLite file opens")
                .execute_batch(sql)
                .expect("the trigger changes");
        }
        Some(url) => {
            let sql = if refuse {
                "CREATE OR REPLACE FUNCTION refuse_events() RETURNS trigger LANGUAGE plpgsql
                 AS $$ BEGIN RAISE EXCEPTION 'events refused by the test'; END $$;
                 CREATE TRIGGER refuse_events BEFORE INSERT ON porter_events
                 FOR EACH ROW EXECUTE FUNCTION refuse_events();"
            } else {
                "DROP TRIGGER refuse_events ON porter_events;"
            };
            let _ = porter_test::postgres::psql(url, sql);
        }
    }
}

#[test]
fn a_file_whose_announcement_cannot_be_stored_is_not_kept() {
    every_backend(a_file_whose_announcement_cannot_be_stored_is_not_kept_on);
}

/// A file and its `file_captured` are stored in one step. The records
/// failing between the two (PostgreSQL stopped under load did it) once
/// left a file recorded that no event announced.
fn a_file_whose_announcement_cannot_be_stored_is_not_kept_on(db: Option<&str>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (inbox, run) = opened_on(dir.path(), small_limits(), db);
    refuse_events(dir.path(), db, true);

    let refused = inbox.keep_bytes(run, incoming(Some("photo.png")), PNG);
    assert!(
        !matches!(refused, Ok(Outcome::Kept(_))),
        "{db:?}: kept without its event: {refused:?}"
    );
    assert_eq!(inbox.files(run).expect("files"), [], "{db:?}");
    assert_eq!(inbox.inbox_bytes(run).expect("usage"), 0, "{db:?}");
    let left: Vec<_> = files_under(&inbox.inbox_dir(run));
    assert_eq!(left, [], "{db:?}: the bytes were not left behind");

    refuse_events(dir.path(), db, false);
    let record = kept(
        inbox
            .keep_bytes(run, incoming(Some("photo.png")), PNG)
            .expect("keep"),
    );
    assert_eq!(record.path, "photo.png", "{db:?}: the name is free again");
    let announced: Vec<String> = inbox
        .events(run, 1)
        .expect("events")
        .into_iter()
        .filter(|event| event.kind == "file_captured")
        .map(|event| event.data["path"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(announced, ["photo.png"], "{db:?}");
}

#[test]
fn a_run_whose_start_or_end_cannot_be_announced_is_not_started_or_ended() {
    every_backend(a_run_whose_start_or_end_cannot_be_announced_is_not_started_or_ended_on);
}

/// A run's record and its `run_started` (and its end and `run_ended`) are
/// stored in one step, like a file and its `file_captured`: a run no event
/// announced is one no live page or follower ever hears of, and an end
/// stored without `run_ended` leaves them showing a finished run as going.
fn a_run_whose_start_or_end_cannot_be_announced_is_not_started_or_ended_on(db: Option<&str>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (inbox, run) = opened_on(dir.path(), small_limits(), db);
    refuse_events(dir.path(), db, true);

    let refused = inbox.start_run(owner());
    assert!(refused.is_err(), "{db:?}: started unannounced: {refused:?}");
    let runs: Vec<RunId> = inbox.runs().expect("runs").iter().map(|r| r.id).collect();
    assert_eq!(
        runs,
        [run],
        "{db:?}: a run was left recorded without its event"
    );

    let refused = inbox.end_run(run);
    assert!(refused.is_err(), "{db:?}: ended unannounced: {refused:?}");
    let info = inbox.run(run).expect("run").expect("the run is there");
    assert_eq!(
        info.ended_at, None,
        "{db:?}: the end was stored without its event"
    );

    refuse_events(dir.path(), db, false);
    let second = inbox.start_run(owner()).expect("a run starts").id;
    inbox.end_run(run).expect("the run ends");
    inbox.end_run(run).expect("ending it again changes nothing");
    let kinds = |id: RunId| -> Vec<String> {
        inbox
            .events(id, 1)
            .expect("events")
            .into_iter()
            .map(|event| event.kind)
            .collect()
    };
    assert_eq!(kinds(run), ["run_started", "run_ended"], "{db:?}");
    assert_eq!(kinds(second), ["run_started"], "{db:?}");
    let ended = inbox.run(run).expect("run").expect("the run is there");
    assert!(ended.ended_at.is_some(), "{db:?}");
}

#[test]
fn a_removal_a_clear_or_a_purge_that_cannot_be_announced_leaves_the_records_as_they_were() {
    every_backend(
        a_removal_a_clear_or_a_purge_that_cannot_be_announced_leaves_the_records_as_they_were_on,
    );
}

/// A file record's removal and its `file_removed` (a run's records cleared
/// and `inbox_cleared`, a run marked purged and `inbox_purged`) are stored
/// in one step, as a capture and its `file_captured` are. Before, records
/// failing between the two left files gone that no event announced: a
/// live page or a follower kept showing them.
fn a_removal_a_clear_or_a_purge_that_cannot_be_announced_leaves_the_records_as_they_were_on(
    db: Option<&str>,
) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (inbox, run) = opened_on(dir.path(), small_limits(), db);
    for name in ["a.png", "b.png"] {
        kept(
            inbox
                .keep_bytes(run, incoming(Some(name)), PNG)
                .expect("keep"),
        );
    }
    let paths = |inbox: &Inbox| -> Vec<String> {
        inbox
            .files(run)
            .expect("files")
            .into_iter()
            .map(|file| file.path)
            .collect()
    };
    refuse_events(dir.path(), db, true);

    let refused = inbox.remove(run, "a.png");
    assert!(refused.is_err(), "{db:?}: removed unannounced: {refused:?}");
    assert_eq!(paths(&inbox), ["a.png", "b.png"], "{db:?}: removal");
    let refused = inbox.clear(run);
    assert!(refused.is_err(), "{db:?}: cleared unannounced: {refused:?}");
    assert_eq!(paths(&inbox), ["a.png", "b.png"], "{db:?}: clearing");
    refuse_events(dir.path(), db, false);
    inbox.end_run(run).expect("the run ends");
    refuse_events(dir.path(), db, true);
    let later = SystemTime::now() + Duration::from_secs(3601);
    assert!(
        inbox.purge_expired(later).is_err(),
        "{db:?}: purged unannounced"
    );
    let info = inbox.run(run).expect("run").expect("the run is there");
    assert!(!info.purged, "{db:?}: marked purged without its event");
    assert_eq!(paths(&inbox), ["a.png", "b.png"], "{db:?}: purging");

    refuse_events(dir.path(), db, false);
    inbox
        .remove(run, "a.png")
        .expect("the removal goes through");
    assert_eq!(paths(&inbox), ["b.png"], "{db:?}");
    assert_eq!(
        inbox.clear(run).expect("the clearing goes through"),
        1,
        "{db:?}"
    );
    assert_eq!(paths(&inbox), Vec::<String>::new(), "{db:?}");
    assert_eq!(
        inbox.purge_expired(later).expect("the purge goes through"),
        [run]
    );
    let events = inbox.events(run, 1).expect("events");
    let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "run_started",
            "file_captured",
            "file_captured",
            "run_ended",
            "file_removed",
            "inbox_cleared",
            "inbox_purged"
        ],
        "{db:?}"
    );
    assert_eq!(events[4].data["path"], "a.png", "{db:?}");
    assert_eq!(events[5].data["files"], 1, "{db:?}");
}

#[cfg(unix)]
#[test]
fn inbox_folders_and_files_are_private_to_the_user() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().expect("temp dir");
    let (inbox, run) = opened(dir.path(), small_limits());
    let mut offered = incoming(Some("a.png"));
    offered.dir = Some("web/example.org".into());
    let record = kept(inbox.keep_bytes(run, offered, PNG).expect("keep"));
    assert_eq!(record.path, "web/example.org/a.png");
    let mode = |p: &Path| std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
    let root = inbox.inbox_dir(run);
    for folder in [root.clone(), root.join("web"), root.join("web/example.org")] {
        assert_eq!(mode(&folder), 0o700, "{}", folder.display());
    }
    assert_eq!(mode(&root.join(&record.path)), 0o600);
}

#[test]
fn the_same_name_twice_is_numbered_and_never_overwritten() {
    every_backend(the_same_name_twice_is_numbered_and_never_overwritten_on);
}

fn the_same_name_twice_is_numbered_and_never_overwritten_on(db: Option<&str>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (inbox, run) = opened_on(dir.path(), small_limits(), db);
    let paths: Vec<String> = [&b"one"[..], b"two", b"three"]
        .into_iter()
        .map(|bytes| {
            kept(
                inbox
                    .keep_bytes(run, incoming(Some("report.txt")), bytes)
                    .expect("keep"),
            )
            .path
        })
        .collect();
    assert_eq!(paths, ["report.txt", "report-2.txt", "report-3.txt"]);
    let root = inbox.inbox_dir(run);
    assert_eq!(
        std::fs::read(root.join("report.txt")).expect("first"),
        b"one"
    );
    assert_eq!(
        std::fs::read(root.join("report-3.txt")).expect("third"),
        b"three"
    );
}

/// What a [`HookedBlobs`] commit does instead: given the staged object, the
/// blobs under it, the run and the path, it answers as `Staged::commit`.
type CommitHook = dyn Fn(
        &mut dyn porter_inbox::Staged,
        &porter_inbox::LocalBlobs,
        RunId,
        &str,
    ) -> Result<bool, InboxError>
    + Send
    + Sync;

/// Local blobs whose commits go through a test's hook: a stand-in for a
/// store that behaves otherwise (counts, races, overwrites).
struct HookedBlobs {
    inner: porter_inbox::LocalBlobs,
    commit: Arc<CommitHook>,
    on_local_disk: bool,
}

impl HookedBlobs {
    fn new(dir: &Path, on_local_disk: bool, commit: Arc<CommitHook>) -> Arc<Self> {
        Arc::new(Self {
            inner: porter_inbox::LocalBlobs::new(dir),
            commit,
            on_local_disk,
        })
    }
}

struct HookedStaged {
    inner: Box<dyn porter_inbox::Staged>,
    blobs: porter_inbox::LocalBlobs,
    run: RunId,
    commit: Arc<CommitHook>,
}

impl porter_inbox::Blobs for HookedBlobs {
    fn stage(&self, run: RunId) -> Result<Box<dyn porter_inbox::Staged>, InboxError> {
        Ok(Box::new(HookedStaged {
            inner: self.inner.stage(run)?,
            blobs: self.inner.clone(),
            run,
            commit: Arc::clone(&self.commit),
        }))
    }
    fn open(
        &self,
        run: RunId,
        path: &str,
    ) -> Result<Box<dyn porter_inbox::BlobReader>, InboxError> {
        self.inner.open(run, path)
    }
    fn remove(&self, run: RunId, path: &str) -> Result<(), InboxError> {
        self.inner.remove(run, path)
    }
    fn purge(&self, run: RunId) -> Result<(), InboxError> {
        self.inner.purge(run)
    }
    fn remove_stale(&self) -> Result<usize, InboxError> {
        self.inner.remove_stale()
    }
    fn on_local_disk(&self) -> bool {
        self.on_local_disk
    }
}

impl std::io::Write for HookedStaged {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.inner.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

impl porter_inbox::Staged for HookedStaged {
    fn commit(&mut self, path: &str) -> Result<bool, InboxError> {
        (self.commit)(self.inner.as_mut(), &self.blobs, self.run, path)
    }
}

#[test]
fn a_name_kept_many_times_is_numbered_without_trying_each_taken_name() {
    every_backend(a_name_kept_many_times_is_numbered_without_trying_each_taken_name_on);
}

fn a_name_kept_many_times_is_numbered_without_trying_each_taken_name_on(db: Option<&str>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let tried = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = Arc::clone(&tried);
    let blobs = HookedBlobs::new(
        dir.path(),
        true,
        Arc::new(move |staged, _blobs, _run, path| {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            staged.commit(path)
        }),
    );
    let inbox = Inbox::open_with_blobs(dir.path(), blobs, db, small_limits()).expect("opens");
    let run = inbox.start_run(owner()).expect("a run").id;
    for n in 1..=40_u32 {
        let path = kept(
            inbox
                .keep_bytes(run, incoming(Some("image.png")), &n.to_le_bytes())
                .expect("keep"),
        )
        .path;
        let want = if n == 1 {
            "image.png".to_owned()
        } else {
            format!("image-{n}.png")
        };
        assert_eq!(path, want);
    }
    // One commit each: the names already taken were known, not tried.
    assert_eq!(tried.load(std::sync::atomic::Ordering::SeqCst), 40);
    // A name freed in the middle is taken again first.
    inbox.remove(run, "image-7.png").expect("remove");
    let path = kept(
        inbox
            .keep_bytes(run, incoming(Some("image.png")), b"again")
            .expect("keep"),
    )
    .path;
    assert_eq!(path, "image-7.png");
}

#[test]
fn a_subscriber_gets_the_backlog_from_its_seq_then_live_events_once() {
    every_backend(a_subscriber_gets_the_backlog_from_its_seq_then_live_events_once_on);
}

fn a_subscriber_gets_the_backlog_from_its_seq_then_live_events_once_on(db: Option<&str>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (inbox, run) = opened_on(dir.path(), small_limits(), db);
    inbox
        .record_event(run, "tool_called", serde_json::json!({"tool": "File"}))
        .expect("event");
    let (backlog, mut live) = inbox.subscribe(run, 2).expect("subscribe");
    assert_eq!(backlog.len(), 1);
    assert_eq!(
        (backlog[0].seq, backlog[0].kind.as_str()),
        (2, "tool_called")
    );

    let sent = inbox
        .record_event(run, "tool_answered", serde_json::json!({}))
        .expect("event");
    assert_eq!(sent.seq, 3);
    assert_eq!(live.try_recv().expect("live"), sent);
    assert!(live.try_recv().is_err(), "nothing is sent twice");

    let other = inbox.start_run(owner()).expect("another run").id;
    inbox
        .record_event(other, "tool_called", serde_json::json!({}))
        .expect("event");
    assert!(
        live.try_recv().is_err(),
        "another run's events stay on its channel"
    );
}

#[test]
fn a_file_over_the_file_cap_is_not_kept_and_leaves_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (inbox, run) = opened(dir.path(), small_limits());
    let big = vec![0x42u8; (MIB + 1) as usize];
    let outcome = inbox
        .keep_bytes(run, incoming(Some("big.bin")), &big)
        .expect("keep");
    assert_eq!(
        outcome.stub(),
        "[file not kept: over the 1 MiB limit for one file · text/plain · 1 MiB · from mcp:files/get_attachment]"
    );

    let mut keeper = inbox
        .keeper(run, incoming(Some("stream.bin")))
        .expect("keeper");
    let chunk = vec![0u8; 64 * KIB as usize];
    let mut refused = None;
    for _ in 0..20 {
        if let Err(e) = keeper.write_all(&chunk) {
            refused = Some(e);
            break;
        }
    }
    let refused = refused.expect("a write past the cap fails");
    assert_eq!(refused.kind(), std::io::ErrorKind::FileTooLarge);
    match keeper.finish().expect("finish") {
        Outcome::NotKept { why, size, .. } => {
            assert_eq!(why, "over the 1 MiB limit for one file");
            assert!(size > MIB, "{size}");
        }
        Outcome::Kept(r) => panic!("kept {r:?}"),
    }
    let left: Vec<_> = files_under(dir.path().join("runs").as_path())
        .into_iter()
        .filter(|(p, _)| !p.ends_with("transcript.jsonl"))
        .collect();
    assert_eq!(left, []);
    assert_eq!(inbox.files(run).expect("files"), []);
    assert_eq!(inbox.inbox_bytes(run).expect("usage"), 0);
}

#[test]
fn a_streamed_file_is_named_typed_and_hashed_like_one_kept_whole() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (inbox, run) = opened(dir.path(), small_limits());
    let text = "line of text\n".repeat(10_000);
    let mut offered = incoming(None);
    offered.fallback_name = "notes".into();
    offered.dir = Some("web/example.org".into());
    offered.origin = Origin::WebFetch {
        host: "example.org".into(),
    };
    let mut keeper = inbox.keeper(run, offered).expect("keeper");
    keeper.expect_size(text.len() as u64).expect("fits");
    for chunk in text.as_bytes().chunks(7_000) {
        keeper.write_all(chunk).expect("write");
    }
    let record = kept(keeper.finish().expect("finish"));
    assert_eq!(record.path, "web/example.org/notes.txt");
    assert_eq!(record.media_type, "text/plain");
    assert_eq!(record.sha256, sha256_hex(text.as_bytes()));
    assert_eq!(record.origin, "webfetch:example.org");
    let (_, mut file) = inbox.open_file(run, &record.path).expect("opens");
    let mut back = String::new();
    file.read_to_string(&mut back).expect("reads");
    assert_eq!(back, text);
}

#[test]
fn a_large_file_streamed_in_uneven_chunks_has_the_sha256_of_its_bytes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let limits = Limits {
        file_max_bytes: 16 * MIB,
        inbox_max_bytes: 32 * MIB,
        ..small_limits()
    };
    let (inbox, run) = opened(dir.path(), limits);
    // Chunks that do not divide the file evenly, over several MiB.
    let bytes: Vec<u8> = (0..6 * MIB as usize + 12_345)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let mut keeper = inbox
        .keeper(run, incoming(Some("big.bin")))
        .expect("keeper");
    for chunk in bytes.chunks(262_147) {
        keeper.write_all(chunk).expect("write");
    }
    let record = kept(keeper.finish().expect("finish"));
    assert_eq!(record.size, bytes.len() as u64);
    assert_eq!(record.sha256, sha256_hex(&bytes));
}

#[test]
fn a_keeper_told_an_oversized_length_refuses_before_any_byte() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (inbox, run) = opened(dir.path(), small_limits());
    let mut keeper = inbox
        .keeper(run, incoming(Some("film.mp4")))
        .expect("keeper");
    let error = keeper.expect_size(5 * MIB).expect_err("over the cap");
    assert_eq!(error.kind(), std::io::ErrorKind::FileTooLarge);
    assert!(keeper.write_all(b"x").is_err(), "later writes fail too");
    let outcome = keeper.finish().expect("finish");
    assert!(
        outcome
            .stub()
            .starts_with("[file not kept: over the 1 MiB limit for one file · ")
            && outcome.stub().contains(" · 5 MiB · "),
        "{}",
        outcome.stub()
    );
}

#[test]
fn a_dropped_keeper_leaves_nothing_and_gives_its_bytes_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (inbox, run) = opened(dir.path(), small_limits());
    let mut keeper = inbox
        .keeper(run, incoming(Some("half.bin")))
        .expect("keeper");
    keeper.write_all(&[1u8; 4096]).expect("write");
    assert_eq!(inbox.inbox_bytes(run).expect("usage"), 4096);
    drop(keeper);
    assert_eq!(inbox.inbox_bytes(run).expect("usage"), 0);
    let left: Vec<_> = files_under(&dir.path().join("runs"))
        .into_iter()
        .filter(|(p, _)| !p.ends_with("transcript.jsonl"))
        .collect();
    assert_eq!(left, []);
}

/// What is left under the runs' folders but their transcripts.
fn left_behind(dir: &Path) -> Vec<(PathBuf, u64)> {
    files_under(&dir.join("runs"))
        .into_iter()
        .filter(|(p, _)| !p.ends_with("transcript.jsonl"))
        .collect()
}

#[test]
fn a_file_written_as_it_is_decoded_is_recorded_as_if_kept_whole() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (inbox, run) = opened(dir.path(), small_limits());
    let mut bytes = PNG.to_vec();
    bytes.extend((0..200_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8));
    let whole = kept(
        inbox
            .keep_bytes(run, incoming(Some("photo.png")), &bytes)
            .expect("keep"),
    );
    let mut keeper = inbox
        .decoded_keeper(run, incoming(None), bytes.len() as u64)
        .expect("keeper");
    for block in bytes.chunks(65_536) {
        keeper.write_all(block).expect("write");
    }
    let sha256: [u8; 32] = Sha256::digest(&bytes).into();
    let decoded = kept(
        keeper
            .finish_decoded(Some("photo.png"), None, &bytes, &sha256)
            .expect("finish"),
    );
    assert_eq!(whole.path, "photo.png");
    assert_eq!(decoded.path, "photo-2.png");
    assert_eq!(decoded.media_type, whole.media_type);
    assert_eq!(decoded.size, whole.size);
    assert_eq!(decoded.sha256, whole.sha256);
    assert_eq!(decoded.sha256, sha256_hex(&bytes));
    let (_, mut file) = inbox.open_file(run, &decoded.path).expect("opens");
    let mut back = Vec::new();
    file.read_to_end(&mut back).expect("reads");
    assert!(back == bytes, "the bytes on disk are the file's");
    assert_eq!(
        inbox.inbox_bytes(run).expect("usage"),
        2 * bytes.len() as u64
    );
}

#[test]
fn a_decoded_file_over_a_cap_is_refused_before_any_byte_and_leaves_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (inbox, run) = opened(dir.path(), small_limits());
    let bytes = vec![7u8; (MIB + 1) as usize];
    let mut keeper = inbox
        .decoded_keeper(run, incoming(Some("big.bin")), bytes.len() as u64)
        .expect("keeper");
    let refused = keeper.write_all(&bytes[..4096]).expect_err("refused");
    assert_eq!(refused.kind(), std::io::ErrorKind::FileTooLarge);
    assert_eq!(left_behind(dir.path()), []);
    let sha256: [u8; 32] = Sha256::digest(&bytes).into();
    let outcome = keeper
        .finish_decoded(Some("big.bin"), None, &bytes, &sha256)
        .expect("finish");
    assert_eq!(
        outcome.stub(),
        "[file not kept: over the 1 MiB limit for one file · text/plain · 1 MiB · \
         from mcp:files/get_attachment]"
    );
    assert_eq!(inbox.files(run).expect("files"), []);
    assert_eq!(inbox.inbox_bytes(run).expect("usage"), 0);
}

#[test]
fn a_decoded_keeper_abandoned_or_given_other_bytes_leaves_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (inbox, run) = opened(dir.path(), small_limits());
    let bytes = vec![9u8; 300_000];
    let mut keeper = inbox
        .decoded_keeper(run, incoming(Some("half.bin")), bytes.len() as u64)
        .expect("keeper");
    keeper.write_all(&bytes[..100_000]).expect("write");
    assert_eq!(inbox.inbox_bytes(run).expect("usage"), bytes.len() as u64);
    drop(keeper);
    assert_eq!(left_behind(dir.path()), []);
    assert_eq!(inbox.inbox_bytes(run).expect("usage"), 0);

    let mut keeper = inbox
        .decoded_keeper(run, incoming(Some("short.bin")), bytes.len() as u64)
        .expect("keeper");
    keeper.write_all(&bytes[..100_000]).expect("write");
    let sha256: [u8; 32] = Sha256::digest(&bytes).into();
    let error = keeper
        .finish_decoded(Some("short.bin"), None, &bytes, &sha256)
        .expect_err("a file not written whole is not kept");
    assert!(error.to_string().contains("wrote 100000 bytes"), "{error}");
    assert_eq!(left_behind(dir.path()), []);
    assert_eq!(inbox.files(run).expect("files"), []);
    assert_eq!(inbox.inbox_bytes(run).expect("usage"), 0);
}

#[test]
fn racing_streamed_and_whole_captures_never_pass_the_inbox_cap() {
    const THREADS: usize = 100;
    const FILE_BYTES: u64 = 4 * KIB;
    const ROOM_FOR: u64 = 10;
    let dir = tempfile::tempdir().expect("temp dir");
    let limits = small_limits();
    let (inbox, run) = opened(dir.path(), limits);
    // Fill the inbox up to the last ten files' worth, in files under the cap.
    let mut to_fill = limits.inbox_max_bytes - ROOM_FOR * FILE_BYTES;
    while to_fill > 0 {
        let n = to_fill.min(limits.file_max_bytes);
        kept(
            inbox
                .keep_bytes(run, incoming(Some("fill.bin")), &vec![7u8; n as usize])
                .expect("fill"),
        );
        to_fill -= n;
    }

    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|i| {
            let (inbox, barrier) = (inbox.clone(), Arc::clone(&barrier));
            std::thread::spawn(move || {
                let bytes = vec![i as u8; FILE_BYTES as usize];
                let offered = incoming(Some(&format!("race-{i}.bin")));
                barrier.wait();
                if i % 2 == 0 {
                    inbox.keep_bytes(run, offered, &bytes).expect("keep")
                } else {
                    let mut keeper = inbox.keeper(run, offered).expect("keeper");
                    for chunk in bytes.chunks(1000) {
                        if keeper.write_all(chunk).is_err() {
                            break;
                        }
                    }
                    keeper.finish().expect("finish")
                }
            })
        })
        .collect();
    let (outcomes, kept_count) = outcomes_of(handles);
    let recorded: u64 = inbox
        .files(run)
        .expect("files")
        .iter()
        .map(|f| f.size)
        .sum();
    let on_disk: u64 = files_under(&inbox.inbox_dir(run))
        .iter()
        .map(|(_, n)| n)
        .sum();
    let temps = files_under(
        &dir.path()
            .join("runs")
            .join(run.to_string())
            .join(".staging"),
    );
    // Streamed captures reserve as they write, so a refused one may have
    // held a few bytes that another then could not use; keep_bytes-only
    // would fill exactly. Either way the cap is never passed.
    assert!(recorded <= limits.inbox_max_bytes, "recorded {recorded}");
    assert_eq!(recorded, on_disk);
    assert_eq!(temps, []);
    assert!(
        (1..=ROOM_FOR as usize).contains(&kept_count),
        "{kept_count} kept"
    );
    assert_eq!(inbox.inbox_bytes(run).expect("usage"), recorded);
    for outcome in &outcomes {
        if let Outcome::NotKept { why, .. } = outcome {
            assert!(
                why.starts_with("over the 10 MiB limit for this run's inbox"),
                "{why}"
            );
        }
    }
}

#[test]
fn racing_whole_files_keep_exactly_the_ones_that_fit() {
    every_backend(racing_whole_files_keep_exactly_the_ones_that_fit_on);
}

fn racing_whole_files_keep_exactly_the_ones_that_fit_on(db: Option<&str>) {
    const THREADS: usize = 100;
    const FILE_BYTES: u64 = 4 * KIB;
    const ROOM_FOR: usize = 10;
    let dir = tempfile::tempdir().expect("temp dir");
    let limits = Limits {
        inbox_max_bytes: ROOM_FOR as u64 * FILE_BYTES + 5,
        ..small_limits()
    };
    let (inbox, run) = opened_on(dir.path(), limits, db);
    kept(
        inbox
            .keep_bytes(run, incoming(Some("first.bin")), b"12345")
            .expect("keep"),
    );
    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|i| {
            let (inbox, barrier) = (inbox.clone(), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                inbox
                    .keep_bytes(
                        run,
                        incoming(Some("same.bin")),
                        &vec![i as u8; FILE_BYTES as usize],
                    )
                    .expect("keep")
            })
        })
        .collect();
    let kept_count = handles
        .into_iter()
        .map(|h| h.join().expect("no thread panics"))
        .filter(|o| matches!(o, Outcome::Kept(_)))
        .count();
    assert_eq!(kept_count, ROOM_FOR);
    let on_disk: u64 = files_under(&inbox.inbox_dir(run))
        .iter()
        .map(|(_, n)| n)
        .sum();
    assert_eq!(on_disk, limits.inbox_max_bytes);
    let mut names: Vec<String> = inbox
        .files(run)
        .expect("files")
        .into_iter()
        .map(|f| f.path)
        .collect();
    names.sort();
    names.dedup();
    assert_eq!(
        names.len(),
        ROOM_FOR + 1,
        "every kept file has its own name"
    );
}

#[test]
fn removing_and_clearing_give_bytes_back_even_across_a_reopen() {
    every_backend(removing_and_clearing_give_bytes_back_even_across_a_reopen_on);
}

fn removing_and_clearing_give_bytes_back_even_across_a_reopen_on(db: Option<&str>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let limits = Limits {
        inbox_max_bytes: 10 * KIB,
        ..small_limits()
    };
    let six = vec![6u8; 6 * KIB as usize];
    let (inbox, run) = opened_on(dir.path(), limits, db);
    let first = kept(
        inbox
            .keep_bytes(run, incoming(Some("a.bin")), &six)
            .expect("keep"),
    );
    drop(inbox);

    let inbox = open_on(dir.path(), limits, db);
    let refused = inbox
        .keep_bytes(run, incoming(Some("b.bin")), &six)
        .expect("keep");
    assert!(
        matches!(refused, Outcome::NotKept { .. }),
        "the reopened inbox counts what it holds"
    );
    inbox.remove(run, &first.path).expect("remove");
    assert!(!inbox.inbox_dir(run).join(&first.path).exists());
    assert_eq!(inbox.file(run, &first.path).expect("file"), None);
    kept(
        inbox
            .keep_bytes(run, incoming(Some("b.bin")), &six)
            .expect("keep"),
    );

    assert_eq!(inbox.clear(run).expect("clear"), 1);
    assert_eq!(inbox.files(run).expect("files"), []);
    kept(
        inbox
            .keep_bytes(run, incoming(Some("c.bin")), &vec![1u8; 10 * KIB as usize])
            .expect("keep"),
    );
    assert!(matches!(
        inbox.remove(run, "a.bin"),
        Err(InboxError::NoFile { .. })
    ));
}

#[test]
fn an_inbox_is_purged_only_after_the_ttl_and_the_run_stays() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (inbox, run) = opened(dir.path(), small_limits());
    let live_run = inbox.start_run(owner()).expect("another run").id;
    kept(
        inbox
            .keep_bytes(live_run, incoming(Some("stays.png")), PNG)
            .expect("keep"),
    );
    let record = kept(
        inbox
            .keep_bytes(run, incoming(Some("x.png")), PNG)
            .expect("keep"),
    );
    inbox.end_run(run).expect("end");
    let now = SystemTime::now();

    assert_eq!(
        inbox
            .purge_expired(now + Duration::from_secs(60))
            .expect("purge"),
        []
    );
    assert!(inbox.inbox_dir(run).join(&record.path).exists());

    let purged = inbox
        .purge_expired(now + Duration::from_secs(3601))
        .expect("purge");
    assert_eq!(purged, [run]);
    assert!(!inbox.inbox_dir(run).exists());
    assert_eq!(inbox.files(run).expect("files"), []);
    let info = inbox.run(run).expect("run").expect("the run row stays");
    assert!(info.purged && info.ended_at.is_some());
    assert_eq!(
        inbox.files(live_run).expect("files").len(),
        1,
        "a live run is untouched"
    );
    let after = inbox
        .keep_bytes(run, incoming(Some("late.png")), PNG)
        .expect("keep");
    assert!(
        after
            .stub()
            .starts_with("[file not kept: this run's inbox has been purged · image/png")
    );
    assert_eq!(
        inbox
            .purge_expired(now + Duration::from_secs(7200))
            .expect("purge"),
        []
    );
    let (events, _) = inbox.subscribe(run, 1).expect("events");
    let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["run_started", "file_captured", "run_ended", "inbox_purged"]
    );
}

#[test]
fn open_file_refuses_anything_but_a_recorded_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (inbox, run) = opened(dir.path(), small_limits());
    kept(
        inbox
            .keep_bytes(run, incoming(Some("real.png")), PNG)
            .expect("keep"),
    );
    std::fs::write(inbox.inbox_dir(run).join("planted.txt"), "not recorded").expect("plant");
    std::fs::write(dir.path().join("x"), "outside").expect("plant");
    for path in [
        "../x",
        "../../x",
        "/etc/passwd",
        "planted.txt",
        "nope.png",
        "",
        "./real.png",
        "real.png/",
    ] {
        assert!(
            matches!(inbox.open_file(run, path), Err(InboxError::NoFile { .. })),
            "{path:?} was opened"
        );
    }
    let (record, mut file) = inbox.open_file(run, "real.png").expect("opens");
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).expect("reads");
    assert_eq!((record.path.as_str(), bytes.as_slice()), ("real.png", PNG));
}

#[test]
fn an_unknown_run_is_refused_everywhere() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (inbox, _) = opened(dir.path(), small_limits());
    let nobody = RunId::new();
    assert!(matches!(
        inbox.keep_bytes(nobody, incoming(None), PNG),
        Err(InboxError::NoRun(_))
    ));
    assert!(matches!(
        inbox.keeper(nobody, incoming(None)),
        Err(InboxError::NoRun(_))
    ));
    assert!(matches!(inbox.files(nobody), Err(InboxError::NoRun(_))));
    assert!(matches!(
        inbox.subscribe(nobody, 0),
        Err(InboxError::NoRun(_))
    ));
    assert!(matches!(inbox.end_run(nobody), Err(InboxError::NoRun(_))));
    assert_eq!(inbox.run(nobody).expect("lookup"), None);
}

/// Starts this test binary again as the writer of a crash test: only
/// `test`, with `env` set (which makes the test write instead of check).
/// Answers the child and the run it names on the stdout line that starts
/// with `says`.
fn start_writer(
    test: &str,
    env: (&str, &std::ffi::OsStr),
    says: &str,
) -> (std::process::Child, RunId) {
    let mut child = std::process::Command::new(std::env::current_exe().expect("own binary"))
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(env.0, env.1)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the slow writer starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let run = std::io::BufReader::new(stdout)
        .lines()
        .map(|l| l.expect("a line"))
        .find_map(|l| l.split_once(says).map(|(_, id)| id.trim().to_owned()))
        .expect("the writer says which run")
        .parse()
        .expect("a run id");
    (child, run)
}

/// Joins racing captures: their outcomes, and how many of them were kept.
fn outcomes_of(handles: Vec<std::thread::JoinHandle<Outcome>>) -> (Vec<Outcome>, usize) {
    let outcomes: Vec<Outcome> = handles
        .into_iter()
        .map(|h| h.join().expect("no thread panics"))
        .collect();
    let kept = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Kept(_)))
        .count();
    (outcomes, kept)
}

/// The env var that turns this test binary into a slow writer for the
/// crash test; it holds the data dir.
const SLOW_WRITER: &str = "PORTER_INBOX_TEST_SLOW_WRITER";

#[cfg(unix)]
#[test]
fn a_capture_killed_mid_write_leaves_no_file_and_no_temp() {
    if let Ok(data_dir) = std::env::var(SLOW_WRITER) {
        slow_writer(Path::new(&data_dir));
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut child, run) = start_writer(
        "a_capture_killed_mid_write_leaves_no_file_and_no_temp",
        (SLOW_WRITER, dir.path().as_os_str()),
        "WRITING ",
    );
    let staging = dir
        .path()
        .join("runs")
        .join(run.to_string())
        .join(".staging");
    let started = std::time::Instant::now();
    while files_under(&staging).iter().map(|(_, n)| n).sum::<u64>() < 8 * KIB {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the writer never wrote"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    assert_eq!(
        files_under(&staging).len(),
        1,
        "the half-written temp is there before reopening"
    );

    let inbox = Inbox::open(dir.path(), small_limits()).expect("reopens");
    assert_eq!(files_under(&staging), [], "the stale temp is gone");
    assert_eq!(
        files_under(&inbox.inbox_dir(run)),
        [],
        "nothing under a real name"
    );
    assert_eq!(inbox.files(run).expect("files"), []);
}

/// The child side of the crash test: streams into a keeper, slowly, until
/// killed.
fn slow_writer(data_dir: &Path) {
    let (inbox, run) = opened(data_dir, small_limits());
    let mut keeper = inbox
        .keeper(run, incoming(Some("slow.bin")))
        .expect("keeper");
    println!("WRITING {run}");
    std::io::stdout().flush().expect("flush");
    for _ in 0..1000 {
        keeper.write_all(&[9u8; 1024]).expect("write");
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("the slow writer was not killed");
}
