//! Two inboxes on one PostgreSQL database and one data dir stand for two
//! gateway replicas: the tree cap holds across them, a reservation left by
//! a crashed one does not hold bytes forever, and each sees the other's
//! events live.

use std::io::Read as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use porter_inbox::{Blobs as _, Inbox, Limits, Outcome, RunId};
use porter_test::postgres;

use super::{
    FILE_BYTES_SMALL, HookedBlobs, incoming, kept, open_on, outcomes_of, owner, small_limits,
};

/// Two replicas' inboxes on a fresh database, or `None` when PostgreSQL is
/// skipped.
fn two_replicas(dir: &std::path::Path, limits: Limits) -> Option<(Inbox, Inbox, String)> {
    let pg = postgres::instance()?;
    let url = pg.fresh_database();
    let a = open_on(dir, limits, Some(&url));
    let b = open_on(dir, limits, Some(&url));
    Some((a, b, url))
}

#[test]
fn captures_racing_from_two_replicas_keep_exactly_what_fits() {
    const CAPTURES: usize = 50;
    const ROOM_FOR: usize = 7;
    let dir = tempfile::tempdir().expect("temp dir");
    let limits = Limits {
        inbox_max_bytes: 5 + ROOM_FOR as u64 * FILE_BYTES_SMALL,
        ..small_limits()
    };
    let Some((a, b, _)) = two_replicas(dir.path(), limits) else {
        return;
    };
    let run = a.start_run(owner()).expect("a run starts").id;
    kept(
        b.keep_bytes(run, incoming(Some("first.bin")), b"12345")
            .expect("keep"),
    );

    let barrier = Arc::new(Barrier::new(CAPTURES));
    let handles: Vec<_> = (0..CAPTURES)
        .map(|i| {
            let inbox = if i % 2 == 0 { a.clone() } else { b.clone() };
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                #[allow(clippy::cast_possible_truncation)]
                let bytes = vec![i as u8; FILE_BYTES_SMALL as usize];
                barrier.wait();
                inbox
                    .keep_bytes(run, incoming(Some(&format!("race-{i}.bin"))), &bytes)
                    .expect("keep")
            })
        })
        .collect();
    let (outcomes, kept_count) = outcomes_of(handles);
    let recorded: u64 = a.files(run).expect("files").iter().map(|f| f.size).sum();
    assert_eq!(kept_count, ROOM_FOR, "{outcomes:?}");
    assert_eq!(recorded, limits.inbox_max_bytes);
    for inbox in [&a, &b] {
        assert_eq!(inbox.inbox_bytes(run).expect("usage"), recorded);
    }
    for outcome in &outcomes {
        if let Outcome::NotKept { why, .. } = outcome {
            assert!(why.contains("limit for this run's inbox"), "{why}");
        }
    }
}

#[test]
fn a_streamed_capture_holds_its_bytes_on_every_replica_until_it_ends() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().expect("temp dir");
    let limits = Limits {
        inbox_max_bytes: 3 * FILE_BYTES_SMALL,
        ..small_limits()
    };
    let Some((a, b, _)) = two_replicas(dir.path(), limits) else {
        return;
    };
    let run = a.start_run(owner()).expect("a run starts").id;
    let mut keeper = a.keeper(run, incoming(Some("slow.bin"))).expect("keeper");
    keeper
        .write_all(&vec![1u8; 2 * FILE_BYTES_SMALL as usize])
        .expect("write");
    assert_eq!(b.inbox_bytes(run).expect("usage"), 2 * FILE_BYTES_SMALL);
    let too_much = vec![2u8; 2 * FILE_BYTES_SMALL as usize];
    assert!(matches!(
        b.keep_bytes(run, incoming(Some("b.bin")), &too_much)
            .expect("keep"),
        Outcome::NotKept { .. }
    ));
    drop(keeper);
    // Given back on the other replica as soon as the capture is dropped.
    kept(
        b.keep_bytes(run, incoming(Some("b.bin")), &too_much)
            .expect("keep"),
    );
    assert_eq!(a.inbox_bytes(run).expect("usage"), 2 * FILE_BYTES_SMALL);
}

#[test]
fn a_reservation_left_by_a_crashed_replica_expires() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().expect("temp dir");
    let limits = Limits {
        inbox_max_bytes: 3 * FILE_BYTES_SMALL,
        ..small_limits()
    };
    let Some((a, b, url)) = two_replicas(dir.path(), limits) else {
        return;
    };
    let run = a.start_run(owner()).expect("a run starts").id;
    let mut keeper = a.keeper(run, incoming(Some("lost.bin"))).expect("keeper");
    keeper
        .write_all(&vec![1u8; 2 * FILE_BYTES_SMALL as usize])
        .expect("write");
    // The replica dies mid-capture: nothing gives the reservation back.
    std::mem::forget(keeper);
    drop(a);
    let wanted = vec![2u8; 2 * FILE_BYTES_SMALL as usize];
    assert!(matches!(
        b.keep_bytes(run, incoming(Some("b.bin")), &wanted)
            .expect("keep"),
        Outcome::NotKept { .. }
    ));
    let held = postgres::psql(
        &url,
        "SELECT count(*) FROM porter_reservations WHERE expires_at > now()",
    );
    assert_eq!(held, "1");
    // Its lease runs out (as if the time had passed) and the bytes are free.
    let _ = postgres::psql(
        &url,
        "UPDATE porter_reservations SET expires_at = now() - interval '1 second'",
    );
    kept(
        b.keep_bytes(run, incoming(Some("b.bin")), &wanted)
            .expect("keep"),
    );
    assert_eq!(b.inbox_bytes(run).expect("usage"), 2 * FILE_BYTES_SMALL);
}

/// Waits up to `within` for the next event on `receiver`.
fn next_event(
    receiver: &mut tokio::sync::broadcast::Receiver<porter_inbox::Event>,
    within: Duration,
) -> Option<porter_inbox::Event> {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        match receiver.try_recv() {
            Ok(event) => return Some(event),
            Err(tokio::sync::broadcast::error::TryRecvError::Empty) => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => panic!("the channel failed: {e}"),
        }
    }
    None
}

#[test]
fn a_capture_on_one_replica_reaches_the_other_replicas_live_streams_within_a_second() {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some((a, b, _)) = two_replicas(dir.path(), small_limits()) else {
        return;
    };
    let run: RunId = a.start_run(owner()).expect("a run starts").id;
    let (backlog, mut live_b) = b.subscribe(run, 1).expect("subscribe on b");
    assert_eq!(backlog.iter().map(|e| e.seq).collect::<Vec<_>>(), [1]);
    let mut all_b = b.subscribe_all();

    let started = Instant::now();
    let record = kept(
        a.keep_bytes(run, incoming(Some("photo.png")), super::PNG)
            .expect("keep"),
    );
    let seen = next_event(&mut live_b, Duration::from_secs(1))
        .expect("B's run stream sees A's capture within a second");
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!((seen.seq, seen.kind.as_str()), (2, "file_captured"));
    assert_eq!(seen.data["path"], record.path);
    let seen_all =
        next_event(&mut all_b, Duration::from_secs(1)).expect("B's all-runs stream sees it too");
    assert_eq!((seen_all.run, seen_all.seq), (run, 2));

    // Events from both replicas interleave, each once, in order.
    for i in 0..10 {
        let inbox = if i % 2 == 0 { &a } else { &b };
        inbox
            .record_event(run, "note", serde_json::json!({"i": i}))
            .expect("event");
    }
    let mut seqs = Vec::new();
    while let Some(event) = next_event(&mut live_b, Duration::from_secs(1)) {
        seqs.push(event.seq);
        if seqs.len() == 10 {
            break;
        }
    }
    assert_eq!(seqs, (3..=12).collect::<Vec<u64>>());
    assert!(
        next_event(&mut live_b, Duration::from_millis(300)).is_none(),
        "no repeats"
    );
}

#[test]
fn one_replica_at_a_time_purges_expired_inboxes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let limits = Limits {
        inbox_ttl: Duration::ZERO,
        ..small_limits()
    };
    let Some((a, b, _)) = two_replicas(dir.path(), limits) else {
        return;
    };
    let run = a.start_run(owner()).expect("a run starts").id;
    kept(
        a.keep_bytes(run, incoming(Some("photo.png")), super::PNG)
            .expect("keep"),
    );
    a.end_run(run).expect("the run ends");
    let later = std::time::SystemTime::now() + Duration::from_secs(1);

    // While A holds the purge, B finds it taken and purges nothing.
    let on_b = a
        .alone(porter_inbox::Job::Purge, || b.purge_expired(later))
        .expect("the lock is asked for")
        .expect("A gets the purge first");
    assert_eq!(on_b.expect("B's purge answers"), []);
    assert!(b.run(run).expect("the run").is_some_and(|r| !r.purged));

    // Once A lets go (its connection closes), B purges.
    let deadline = Instant::now() + Duration::from_secs(5);
    let purged = loop {
        let purged = b.purge_expired(later).expect("B's purge answers");
        if !purged.is_empty() || Instant::now() > deadline {
            break purged;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(purged, [run]);
    assert!(a.run(run).expect("the run").is_some_and(|r| r.purged));
    assert_eq!(a.purge_expired(later).expect("nothing left"), []);
}

#[test]
fn requests_without_a_session_share_one_run_across_replicas_until_it_idles() {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some((a, b, _)) = two_replicas(dir.path(), small_limits()) else {
        return;
    };
    let idle = Duration::from_secs(60);
    let claims: Vec<_> = (0..6)
        .map(|i| {
            let inbox = if i % 2 == 0 { &a } else { &b };
            inbox
                .claim_shared_run(owner(), Some("agent"), idle)
                .expect("a claim")
                .expect("shared records share runs")
        })
        .collect();
    assert!(
        claims.iter().all(|run| run.id == claims[0].id),
        "{claims:?}"
    );
    assert_eq!(claims[0].client.as_deref(), Some("agent"));
    // Another client name is another slot.
    let other = b
        .claim_shared_run(owner(), Some("other"), idle)
        .expect("a claim")
        .expect("a run");
    assert_ne!(other.id, claims[0].id);
    // Idle: the next claim starts a new run and ends the old one, once.
    let fresh = b
        .claim_shared_run(owner(), Some("agent"), Duration::ZERO)
        .expect("a claim")
        .expect("a run");
    assert_ne!(fresh.id, claims[0].id);
    assert!(
        a.run(claims[0].id)
            .expect("run")
            .is_some_and(|r| r.ended_at.is_some())
    );
    let ended = a
        .end_idle_shared_runs(Duration::ZERO)
        .expect("idle runs end");
    assert_eq!(ended.len(), 2, "{ended:?}");
    assert!(
        b.end_idle_shared_runs(Duration::ZERO)
            .expect("none left")
            .is_empty()
    );
    assert!(
        b.run(fresh.id)
            .expect("run")
            .is_some_and(|r| r.ended_at.is_some())
    );
}

/// A shared run's record and its `run_started` are stored in one step.
/// Before, records failing between the two left a run every replica
/// would use that no live page or follower ever heard of.
#[test]
fn a_shared_run_whose_start_cannot_be_announced_is_not_claimed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some((a, b, url)) = two_replicas(dir.path(), small_limits()) else {
        return;
    };
    let idle = Duration::from_secs(60);
    super::refuse_events(dir.path(), Some(&url), true);
    let refused = a.claim_shared_run(owner(), Some("agent"), idle);
    assert!(refused.is_err(), "claimed unannounced: {refused:?}");
    assert_eq!(
        b.runs().expect("runs"),
        [],
        "a run was left without its event"
    );

    super::refuse_events(dir.path(), Some(&url), false);
    let run = b
        .claim_shared_run(owner(), Some("agent"), idle)
        .expect("a claim")
        .expect("a run");
    assert_eq!(
        a.claim_shared_run(owner(), Some("agent"), idle)
            .expect("a claim")
            .map(|found| found.id),
        Some(run.id)
    );
    let kinds: Vec<String> = a
        .events(run.id, 1)
        .expect("events")
        .into_iter()
        .map(|event| event.kind)
        .collect();
    assert_eq!(kinds, ["run_started"]);
}

/// A bucket without conditional writes, as two replicas see it: a commit
/// looks the name up, then writes, and the two steps are not one. Every
/// first commit waits (up to a few seconds) until the other replica's first
/// commit has looked its name up too, so both look before either writes:
/// the interleaving that lost a file on Garage now and then.
fn look_then_write(dir: &std::path::Path, looked: Arc<AtomicUsize>) -> Arc<HookedBlobs> {
    HookedBlobs::new(
        dir,
        false,
        Arc::new(move |staged, blobs, run, path| {
            let taken = blobs.open(run, path).is_ok();
            if looked.fetch_add(1, Ordering::SeqCst) < 2 {
                let deadline = Instant::now() + Duration::from_secs(5);
                while looked.load(Ordering::SeqCst) < 2 && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
            if taken {
                return Ok(false);
            }
            // The write that comes second replaces the first and reports
            // success, as a plain PUT does.
            let _ = staged.commit(path)?;
            Ok(true)
        }),
    )
}

#[test]
fn two_replicas_never_commit_the_same_name_on_a_bucket_without_conditional_writes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let Some(pg) = postgres::instance() else {
        return;
    };
    let url = pg.fresh_database();
    let looked = Arc::new(AtomicUsize::new(0));
    let replica = || {
        let blobs = look_then_write(dir.path(), Arc::clone(&looked));
        Inbox::open_with_blobs(dir.path(), blobs, Some(&url), small_limits())
            .expect("the inbox opens on PostgreSQL")
    };
    let (a, b) = (replica(), replica());
    let run = a.start_run(owner()).expect("a run starts").id;
    let handles: Vec<_> = [(a.clone(), b'a'), (b.clone(), b'b')]
        .into_iter()
        .map(|(inbox, byte)| {
            std::thread::spawn(move || {
                let bytes = vec![byte; FILE_BYTES_SMALL as usize];
                let outcome = inbox.keep_bytes(run, incoming(Some("same.bin")), &bytes);
                (byte, outcome)
            })
        })
        .collect();
    let mut paths = Vec::new();
    for handle in handles {
        let (byte, outcome) = handle.join().expect("no thread panics");
        let record = kept(outcome.expect("both captures are kept"));
        let mut read = Vec::new();
        a.open_file(run, &record.path)
            .expect("the file opens")
            .1
            .read_to_end(&mut read)
            .expect("read");
        assert_eq!(
            read,
            vec![byte; FILE_BYTES_SMALL as usize],
            "{} holds another capture's bytes",
            record.path
        );
        paths.push(record.path);
    }
    paths.sort();
    assert_eq!(paths, ["same-2.bin", "same.bin"]);
    assert_eq!(b.files(run).expect("files").len(), 2);
}
