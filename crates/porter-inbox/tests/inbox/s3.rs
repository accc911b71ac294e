//! The inbox with its bytes in S3-compatible storage: a real Garage node
//! (see `porter_test::garage`), records in SQLite (or, for two replicas,
//! in PostgreSQL).

use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use object_store::aws::AmazonS3Builder;
use object_store::{ObjectStore as _, ObjectStoreExt as _};
use porter_inbox::store::{NameGuard, S3_PART_SIZE};
use porter_inbox::{Inbox, InboxError, Limits, RunId, S3Blobs, S3Settings};
use porter_net::Secret;

use super::{KIB, MIB, incoming, kept, owner, sha256_hex, small_limits, start_writer};

fn settings(garage: &porter_test::garage::Garage, bucket: &str, prefix: &str) -> S3Settings {
    S3Settings {
        endpoint: garage.endpoint(),
        bucket: bucket.to_owned(),
        region: porter_test::garage::REGION.to_owned(),
        prefix: prefix.to_owned(),
        access_key_id: garage.access_key_id().to_owned(),
        secret_access_key: Secret::new(garage.secret_access_key()),
        path_style: true,
    }
}

/// The job a child test process gets: its data dir and the bucket, on
/// the parent's node (the child must not start a node of its own).
fn job_for(dir: &Path, settings: &S3Settings) -> String {
    [
        dir.display().to_string(),
        settings.endpoint.clone(),
        settings.bucket.clone(),
        settings.prefix.clone(),
        settings.access_key_id.clone(),
        settings.secret_access_key.expose().to_owned(),
    ]
    .join("\n")
}

/// The child's side of [`job_for`].
fn from_job(job: &str) -> (std::path::PathBuf, S3Settings) {
    let parts: Vec<&str> = job.split('\n').collect();
    let [dir, endpoint, bucket, prefix, key_id, secret] = parts[..] else {
        panic!("odd job {job:?}");
    };
    (
        std::path::PathBuf::from(dir),
        S3Settings {
            endpoint: endpoint.to_owned(),
            bucket: bucket.to_owned(),
            region: porter_test::garage::REGION.to_owned(),
            prefix: prefix.to_owned(),
            access_key_id: key_id.to_owned(),
            secret_access_key: Secret::new(secret),
            path_style: true,
        },
    )
}

/// A bucket of its own on the shared node, or `None` when S3 tests are
/// skipped.
fn bucket(prefix: &str) -> Option<S3Settings> {
    let garage = porter_test::garage::instance()?;
    Some(settings(garage, &garage.fresh_bucket(), prefix))
}

fn s3_inbox(dir: &Path, settings: &S3Settings, limits: Limits) -> Inbox {
    let blobs = Arc::new(S3Blobs::open(settings).expect("the bucket opens"));
    Inbox::open_with_blobs(dir, blobs, None, limits).expect("the inbox opens on S3")
}

/// A client of the bucket of the test's own, not the store under test.
fn bucket_client(settings: &S3Settings) -> object_store::aws::AmazonS3 {
    let _ = rustls::crypto::ring::default_provider().install_default();
    AmazonS3Builder::new()
        .with_endpoint(&settings.endpoint)
        .with_allow_http(true)
        .with_bucket_name(&settings.bucket)
        .with_region(&settings.region)
        .with_access_key_id(&settings.access_key_id)
        .with_secret_access_key(settings.secret_access_key.expose())
        .build()
        .expect("a client")
}

/// Every key in the bucket with its size, by key: read with a client of
/// its own, not through the store under test.
fn bucket_keys(settings: &S3Settings) -> Vec<(String, u64)> {
    let store = bucket_client(settings);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let mut listed = store.list(None);
        let mut keys = Vec::new();
        while let Some(object) = listed.next().await {
            let object = object.expect("a listed object");
            keys.push((object.location.to_string(), object.size));
        }
        keys.sort();
        keys
    })
}

fn bucket_bytes(settings: &S3Settings, key: &str) -> Vec<u8> {
    let store = bucket_client(settings);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        store
            .get(&object_store::path::Path::from(key))
            .await
            .expect("the object")
            .bytes()
            .await
            .expect("its bytes")
            .to_vec()
    })
}

/// The bytes of a large test file, made as they are needed.
fn pattern(at: usize) -> u8 {
    #[allow(clippy::cast_possible_truncation, reason = "a byte pattern")]
    let byte = (at.wrapping_mul(2_654_435_761) >> 13) as u8;
    byte
}

#[test]
fn a_kept_file_lands_in_the_bucket_under_its_name_and_reads_back() {
    let Some(settings) = bucket("gw/one") else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let inbox = s3_inbox(dir.path(), &settings, small_limits());
    let run = inbox.start_run(owner()).expect("a run").id;
    let bytes = b"%PDF-1.7 a small report".repeat(100);
    let record = kept(
        inbox
            .keep_bytes(run, incoming(Some("report.pdf")), &bytes)
            .expect("keep"),
    );
    assert_eq!(record.path, "report.pdf");
    let key = format!("gw/one/runs/{run}/inbox/report.pdf");
    assert_eq!(bucket_keys(&settings), [(key.clone(), bytes.len() as u64)]);
    assert_eq!(sha256_hex(&bucket_bytes(&settings, &key)), record.sha256);

    let (_, mut reader) = inbox.open_file(run, "report.pdf").expect("opens");
    assert_eq!(reader.size(), bytes.len() as u64);
    let mut back = Vec::new();
    reader.read_to_end(&mut back).expect("reads");
    assert_eq!(back, bytes);
    assert!(
        !dir.path()
            .join("runs")
            .join(run.to_string())
            .join("inbox")
            .exists(),
        "nothing of the file on the local disk"
    );
}

#[test]
fn the_same_name_twice_is_numbered_and_never_overwritten_in_the_bucket() {
    let Some(settings) = bucket("") else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let blobs = Arc::new(S3Blobs::open(&settings).expect("opens"));
    // Garage 2.x ignores If-None-Match on writes; the probe must see that.
    assert_eq!(blobs.name_guard(), NameGuard::ClaimedInProcess);
    let inbox = Inbox::open_with_blobs(dir.path(), blobs, None, small_limits()).expect("opens");
    let run = inbox.start_run(owner()).expect("a run").id;
    captures_of_one_name_keep_their_own_bytes(&[inbox], run, &settings);
}

#[test]
fn the_same_name_from_two_replicas_is_numbered_and_never_overwritten_in_the_bucket() {
    let Some(settings) = bucket("") else {
        return;
    };
    let Some(pg) = porter_test::postgres::instance() else {
        return;
    };
    let url = pg.fresh_database();
    let dir = tempfile::tempdir().expect("temp dir");
    // Two gateways: each its own S3 client and claims, one database.
    let replica = || {
        let blobs = Arc::new(S3Blobs::open(&settings).expect("opens"));
        Inbox::open_with_blobs(dir.path(), blobs, Some(&url), small_limits()).expect("opens")
    };
    let replicas = [replica(), replica()];
    let run = replicas[0].start_run(owner()).expect("a run").id;
    captures_of_one_name_keep_their_own_bytes(&replicas, run, &settings);
}

/// Sixteen captures all named `same.txt`, at once, spread over `inboxes`:
/// every one is kept under a name of its own, and the bucket holds each
/// one's bytes under it.
fn captures_of_one_name_keep_their_own_bytes(inboxes: &[Inbox], run: RunId, settings: &S3Settings) {
    const CAPTURES: u8 = 16;
    let barrier = Arc::new(std::sync::Barrier::new(usize::from(CAPTURES)));
    let threads: Vec<_> = (0..CAPTURES)
        .map(|n| {
            let inbox = inboxes[usize::from(n) % inboxes.len()].clone();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                inbox.keep_bytes(run, incoming(Some("same.txt")), &[b'a' + n; 100])
            })
        })
        .collect();
    let mut records: Vec<_> = threads
        .into_iter()
        .map(|t| kept(t.join().expect("a thread").expect("every capture is kept")))
        .collect();
    records.sort_by(|a, b| a.path.cmp(&b.path));
    let mut paths: Vec<_> = records.iter().map(|r| r.path.clone()).collect();
    paths.dedup();
    assert_eq!(paths.len(), usize::from(CAPTURES), "{paths:?}");
    for record in &records {
        let key = format!("runs/{run}/inbox/{}", record.path);
        assert_eq!(
            sha256_hex(&bucket_bytes(settings, &key)),
            record.sha256,
            "{key} holds the bytes its record says"
        );
    }
}

/// The env var that turns this test binary into the 40 MiB capture of the
/// memory test (a process of its own, so no other test's allocations count);
/// it holds a [`job_for`].
const BIG_S3_WRITER: &str = "PORTER_INBOX_TEST_BIG_S3_WRITER";

const BIG_SIZE: usize = 40 * 1024 * 1024 + 4321;

fn big_limits() -> Limits {
    Limits {
        file_max_bytes: 64 * MIB,
        inbox_max_bytes: 128 * MIB,
        ..small_limits()
    }
}

#[test]
fn a_large_capture_goes_up_in_parts_without_holding_the_file_and_reads_back_by_range() {
    if let Ok(job) = std::env::var(BIG_S3_WRITER) {
        let (dir, settings) = from_job(&job);
        big_s3_writer(&dir, &settings);
        return;
    }
    let Some(garage) = porter_test::garage::instance() else {
        return;
    };
    let settings = settings(garage, &garage.fresh_bucket(), "big");
    let dir = tempfile::tempdir().expect("temp dir");
    let output = std::process::Command::new(std::env::current_exe().expect("own binary"))
        .args([
            "--exact",
            "s3::a_large_capture_goes_up_in_parts_without_holding_the_file_and_reads_back_by_range",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(BIG_S3_WRITER, job_for(dir.path(), &settings))
        .output()
        .expect("the writer runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the writer failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.split_once("CAPTURED ").map(|(_, report)| report))
        .unwrap_or_else(|| panic!("the writer did not report: {stdout}"));
    let fields: Vec<&str> = line.split_whitespace().collect();
    let [run, grew_kib, sha] = fields[..] else {
        panic!("odd report {line:?}");
    };
    let run: RunId = run.parse().expect("a run id");
    let grew_kib: u64 = grew_kib.parse().expect("KiB");
    let mut hasher = sha2::Sha256::default();
    for start in (0..BIG_SIZE).step_by(MIB as usize) {
        let end = BIG_SIZE.min(start + MIB as usize);
        sha2::Digest::update(&mut hasher, (start..end).map(pattern).collect::<Vec<_>>());
    }
    let expected = sha2::Digest::finalize(hasher)
        .iter()
        .fold(String::new(), |mut hex, b| {
            use std::fmt::Write as _;
            let _ = write!(hex, "{b:02x}");
            hex
        });
    assert_eq!(sha, expected, "the record's sha256 is the bytes'");
    // One part buffered and one in flight, plus the client's own buffers;
    // never the 40 MiB file.
    let part_kib = (S3_PART_SIZE / 1024) as u64;
    assert!(
        grew_kib < 3 * part_kib,
        "the peak memory grew by {grew_kib} KiB for a 40 MiB capture (parts of {part_kib} KiB)"
    );
    let keys = bucket_keys(&settings);
    assert_eq!(
        keys,
        [(format!("big/runs/{run}/inbox/big.bin"), BIG_SIZE as u64)],
        "only the file, under its name: no staged object or marker left"
    );
    assert_eq!(sha256_hex(&bucket_bytes(&settings, &keys[0].0)), expected);

    let inbox = s3_inbox(dir.path(), &settings, big_limits());
    let (_, mut reader) = inbox.open_file(run, "big.bin").expect("opens");
    assert_eq!(reader.size(), BIG_SIZE as u64);
    let from = 17 * MIB as usize + 5;
    reader.seek(SeekFrom::Start(from as u64)).expect("seeks");
    let mut window = vec![0_u8; 9 * MIB as usize];
    reader.read_exact(&mut window).expect("reads a window");
    assert!(
        window
            .iter()
            .enumerate()
            .all(|(i, b)| *b == pattern(from + i)),
        "the window holds the bytes at its offset"
    );
    reader.seek(SeekFrom::End(-10)).expect("seeks from the end");
    let mut tail = Vec::new();
    reader.read_to_end(&mut tail).expect("reads the tail");
    assert_eq!(
        tail,
        (BIG_SIZE - 10..BIG_SIZE).map(pattern).collect::<Vec<_>>()
    );
}

/// The child side of the memory test: streams 40 MiB into a keeper in
/// 256 KiB chunks made on the fly, and reports the run, how much its peak
/// memory grew (KiB) and the record's sha256.
fn big_s3_writer(dir: &Path, settings: &S3Settings) {
    let inbox = s3_inbox(dir, settings, big_limits());
    let run = inbox.start_run(owner()).expect("a run").id;
    let mut chunk = vec![0_u8; 256 * 1024 + 3];
    reset_peak_memory();
    let before = peak_memory_kib();
    let mut keeper = inbox
        .keeper(run, incoming(Some("big.bin")))
        .expect("keeper");
    let mut at = 0;
    while at < BIG_SIZE {
        let n = chunk.len().min(BIG_SIZE - at);
        for (i, byte) in chunk[..n].iter_mut().enumerate() {
            *byte = pattern(at + i);
        }
        keeper.write_all(&chunk[..n]).expect("write");
        at += n;
    }
    let record = kept(keeper.finish().expect("finish"));
    let grew = peak_memory_kib().saturating_sub(before);
    assert_eq!(record.size, BIG_SIZE as u64);
    println!("CAPTURED {run} {grew} {}", record.sha256);
}

#[test]
fn a_dropped_large_capture_leaves_nothing_in_the_bucket() {
    let Some(settings) = bucket("") else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let limits = Limits {
        file_max_bytes: 64 * MIB,
        inbox_max_bytes: 128 * MIB,
        ..small_limits()
    };
    let inbox = s3_inbox(dir.path(), &settings, limits);
    let run = inbox.start_run(owner()).expect("a run").id;
    let mut keeper = inbox
        .keeper(run, incoming(Some("half.bin")))
        .expect("keeper");
    keeper
        .write_all(&vec![7_u8; S3_PART_SIZE + 1000])
        .expect("a part and more");
    assert!(
        bucket_keys(&settings)
            .iter()
            .any(|(key, _)| key.starts_with("staging/") && key.ends_with(".upload")),
        "an upload is in progress, with its marker: {:?}",
        bucket_keys(&settings)
    );
    drop(keeper);
    assert_eq!(bucket_keys(&settings), []);
    assert_eq!(inbox.inbox_bytes(run).expect("usage"), 0);
}

#[test]
fn removing_clearing_and_purging_empty_the_runs_prefix() {
    let Some(settings) = bucket("p") else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let limits = Limits {
        inbox_ttl: Duration::ZERO,
        ..small_limits()
    };
    let inbox = s3_inbox(dir.path(), &settings, limits);
    let run = inbox.start_run(owner()).expect("a run").id;
    let other = inbox.start_run(owner()).expect("another run").id;
    for name in ["a.txt", "b.txt", "c.txt"] {
        kept(
            inbox
                .keep_bytes(run, incoming(Some(name)), b"some text")
                .expect("keep"),
        );
    }
    kept(
        inbox
            .keep_bytes(other, incoming(Some("keep.txt")), b"stays")
            .expect("keep"),
    );
    inbox.remove(run, "a.txt").expect("removes");
    let keys: Vec<String> = bucket_keys(&settings).into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        [
            format!("p/runs/{other}/inbox/keep.txt"),
            format!("p/runs/{run}/inbox/b.txt"),
            format!("p/runs/{run}/inbox/c.txt"),
        ]
        .into_iter()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
    );
    inbox.end_run(run).expect("ends");
    let purged = inbox
        .purge_expired(std::time::SystemTime::now() + Duration::from_secs(1))
        .expect("purges");
    assert_eq!(purged, [run]);
    let keys: Vec<String> = bucket_keys(&settings).into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys, [format!("p/runs/{other}/inbox/keep.txt")]);
}

#[test]
fn the_file_tools_local_copies_follow_the_records() {
    let Some(settings) = bucket("") else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let inbox = s3_inbox(dir.path(), &settings, small_limits());
    let run = inbox.start_run(owner()).expect("a run").id;
    let mut docs = incoming(Some("a.txt"));
    docs.dir = Some("docs".into());
    kept(inbox.keep_bytes(run, docs, b"alpha").expect("keep"));
    kept(
        inbox
            .keep_bytes(run, incoming(Some("b.txt")), b"beta")
            .expect("keep"),
    );
    let root = inbox.inbox_dir(run);
    inbox.localize(run, "docs").expect("localizes a folder");
    assert_eq!(
        std::fs::read(root.join("docs/a.txt")).expect("copied"),
        b"alpha"
    );
    assert!(!root.join("b.txt").exists(), "only what was asked for");
    inbox.localize(run, "").expect("localizes the inbox");
    assert_eq!(std::fs::read(root.join("b.txt")).expect("copied"), b"beta");
    // A copy of a file that another gateway removed goes at the next look.
    std::fs::write(root.join("gone.txt"), b"stale").expect("planted");
    inbox.remove(run, "b.txt").expect("removes");
    assert!(!root.join("b.txt").exists(), "its copy went with it");
    inbox.localize(run, "").expect("localizes again");
    assert!(
        !root.join("gone.txt").exists(),
        "an unrecorded copy is dropped"
    );
}

#[test]
fn a_wrong_key_or_a_missing_bucket_is_refused_at_open_without_the_secret() {
    let Some(garage) = porter_test::garage::instance() else {
        return;
    };
    let good = settings(garage, &garage.fresh_bucket(), "");
    let wrong_secret = S3Settings {
        secret_access_key: Secret::new("0".repeat(64)),
        ..good.clone()
    };
    let error = S3Blobs::open(&wrong_secret).expect_err("a wrong secret is refused");
    let text = error.to_string();
    assert!(text.contains(&good.bucket), "{text}");
    assert!(text.contains("access key"), "{text}");
    assert!(!text.contains(&"0".repeat(64)), "{text}");
    let missing = S3Settings {
        bucket: "no-such-bucket-here".to_owned(),
        ..good.clone()
    };
    let text = S3Blobs::open(&missing)
        .expect_err("a missing bucket is refused")
        .to_string();
    assert!(text.contains("no-such-bucket-here"), "{text}");
    assert!(text.contains("bucket"), "{text}");
    assert!(!text.contains(good.secret_access_key.expose()), "{text}");
    let shown = format!("{good:?}");
    assert!(!shown.contains(good.secret_access_key.expose()), "{shown}");
}

#[test]
fn an_unrecorded_or_odd_path_does_not_open() {
    let Some(settings) = bucket("") else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let inbox = s3_inbox(dir.path(), &settings, small_limits());
    let run = inbox.start_run(owner()).expect("a run").id;
    for path in ["missing.txt", "../x", "/etc/passwd", ""] {
        assert!(
            matches!(inbox.open_file(run, path), Err(InboxError::NoFile { .. })),
            "{path:?}"
        );
    }
}

/// The env var that turns this test binary into a slow S3 writer for the
/// crash test; it holds a [`job_for`].
const SLOW_S3_WRITER: &str = "PORTER_INBOX_TEST_SLOW_S3_WRITER";

#[test]
fn a_capture_killed_mid_upload_leaves_no_object_and_its_upload_is_aborted_at_the_next_open() {
    if let Ok(job) = std::env::var(SLOW_S3_WRITER) {
        let (dir, settings) = from_job(&job);
        slow_s3_writer(&dir, &settings);
        return;
    }
    let Some(garage) = porter_test::garage::instance() else {
        return;
    };
    let settings = settings(garage, &garage.fresh_bucket(), "");
    let dir = tempfile::tempdir().expect("temp dir");
    let job = job_for(dir.path(), &settings);
    let (mut child, run) = start_writer(
        "s3::a_capture_killed_mid_upload_leaves_no_object_and_its_upload_is_aborted_at_the_next_open",
        (SLOW_S3_WRITER, job.as_ref()),
        "UPLOADING ",
    );
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    let left = bucket_keys(&settings);
    assert!(
        left.iter().all(|(key, _)| key.starts_with("staging/")) && !left.is_empty(),
        "only the upload's marker is there before reopening: {left:?}"
    );

    // Garage's own count of open uploads (its counters settle
    // asynchronously, hence the waits).
    let open_uploads = || {
        garage
            .cli(&["bucket", "info", &settings.bucket])
            .lines()
            .find_map(|l| {
                l.strip_prefix("Unfinished uploads:")
                    .and_then(|rest| rest.split_whitespace().next())
                    .and_then(|n| n.parse::<u64>().ok())
            })
            .unwrap_or(0)
    };
    let settle = |want: &dyn Fn(u64) -> bool, what: &str| {
        let started = std::time::Instant::now();
        loop {
            let open = open_uploads();
            if want(open) {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "{what}: Garage counts {open} open multipart uploads"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    settle(&|open| open == 1, "the killed writer's upload is open");

    let inbox = s3_inbox(dir.path(), &settings, small_limits());
    assert_eq!(
        bucket_keys(&settings),
        [],
        "the marker and its upload are gone"
    );
    assert_eq!(inbox.files(run).expect("files"), []);
    settle(&|open| open == 0, "the next open aborted the upload");
}

/// The child side of the crash test: a part uploaded, then waits to be
/// killed.
fn slow_s3_writer(dir: &Path, settings: &S3Settings) {
    let limits = Limits {
        file_max_bytes: 64 * MIB,
        inbox_max_bytes: 128 * MIB,
        ..small_limits()
    };
    let inbox = s3_inbox(dir, settings, limits);
    let run = inbox.start_run(owner()).expect("a run").id;
    let mut keeper = inbox
        .keeper(run, incoming(Some("slow.bin")))
        .expect("keeper");
    keeper
        .write_all(&vec![3_u8; S3_PART_SIZE + 64 * KIB as usize])
        .expect("a part");
    println!("UPLOADING {run}");
    std::io::stdout().flush().expect("flush");
    std::thread::sleep(Duration::from_secs(60));
    panic!("the slow writer was not killed");
}

/// Resets this process's peak resident memory (`VmHWM`) to its current.
fn reset_peak_memory() {
    std::fs::write("/proc/self/clear_refs", "5").expect("the peak memory resets");
}

/// This process's peak resident memory, KiB.
fn peak_memory_kib() -> u64 {
    porter_test::peak_rss_bytes().expect("VmHWM") / 1024
}
