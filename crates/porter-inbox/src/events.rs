//! Where a run's events go: the records (numbered), the run's transcript
//! file, the log, and the live channels of the run and of all runs.
//!
//! When other processes share the records (gateway replicas on one
//! PostgreSQL), the events they store reach this process's channels too:
//! the records announce each stored event as a [`Notice`], and the hub sends
//! every run's events on in seq order, once each, reading any it was not
//! told of (or was told of out of turn) back from the records.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::broadcast;

use crate::model::{Event, InboxError, Notice, RunId};
use crate::store::Records;

/// `RUN_CHANNEL_EVENTS` is how many events a slow subscriber of one run may
/// fall behind before it is told it lagged (and re-subscribes by seq).
const RUN_CHANNEL_EVENTS: usize = 256;
/// `ALL_CHANNEL_EVENTS` is the same for the all-runs channel.
const ALL_CHANNEL_EVENTS: usize = 1024;

/// `Hub` hands out event numbers and channels. One lock covers storing an
/// event and sending it, and also subscribing and reading the backlog, so a
/// subscriber gets every event exactly once: either in the backlog or on
/// the channel.
pub(crate) struct Hub {
    channels: Mutex<Channels>,
    all: broadcast::Sender<Event>,
}

/// What the hub's lock guards.
#[derive(Default)]
struct Channels {
    runs: HashMap<RunId, broadcast::Sender<Event>>,
    /// The last seq sent on per run, so that an event stored here and then
    /// announced by the records is sent once, and one announced out of
    /// turn is sent after those before it.
    last_sent: HashMap<RunId, Sent>,
}

/// The last seq of a run sent on each of the two channels (`None`: none
/// yet). They differ when a subscriber's backlog held events stored by
/// another process whose notice had not come yet: the run's channel counts
/// them as sent (the new subscriber has them; those before it were sent
/// them then), the all-runs channel still waits for their notice.
#[derive(Clone, Copy, Default)]
struct Sent {
    run: Option<u64>,
    all: Option<u64>,
}

impl Channels {
    /// Before a new subscriber of `run` joins, with a backlog up to `upto`:
    /// the run's events up to there that were stored by another process and
    /// not yet announced here go to the run's subscribers already there
    /// (who have not had them), and count as sent on the run's channel, so
    /// that their notice, when it comes, does not send them again to the new
    /// subscriber, which has them in its backlog.
    fn catch_up_run(&mut self, records: &dyn Records, run: RunId, upto: u64) {
        let sent = self.last_sent.entry(run).or_default();
        let last = sent.run.unwrap_or(0);
        if last >= upto {
            return;
        }
        sent.run = Some(upto);
        let Some(sender) = self.runs.get(&run).filter(|s| s.receiver_count() > 0) else {
            return;
        };
        match records.events(run, last + 1) {
            Ok(events) => {
                for event in events.iter().filter(|event| event.seq <= upto) {
                    let _ = sender.send(event.clone());
                }
            }
            Err(error) => {
                tracing::warn!(run = %run, %error, "events stored elsewhere could not be read; live streams may miss them");
            }
        }
    }
}

impl Sent {
    /// Whether `seq` went out on both channels.
    fn covers(self, seq: u64) -> bool {
        self.run.is_some_and(|last| last >= seq) && self.all.is_some_and(|last| last >= seq)
    }

    /// The first seq not yet sent on one of the channels; a channel that
    /// sent none of the run starts at `announced`.
    fn first_unsent(self, announced: u64) -> u64 {
        let next = |last: Option<u64>| last.map_or(announced, |last| last + 1);
        next(self.run).min(next(self.all))
    }
}

impl Default for Hub {
    fn default() -> Self {
        Self {
            channels: Mutex::new(Channels::default()),
            all: broadcast::channel(ALL_CHANNEL_EVENTS).0,
        }
    }
}

/// What a store gives back when it may or may not have stored an event:
/// the event, if one was stored.
pub(crate) trait Announces {
    fn event(&self) -> Option<&Event>;
}

impl Announces for Event {
    fn event(&self) -> Option<&Event> {
        Some(self)
    }
}

impl Announces for Option<Event> {
    fn event(&self) -> Option<&Event> {
        self.as_ref()
    }
}

impl Announces for crate::sessions::SharedClaim {
    fn event(&self) -> Option<&Event> {
        self.started.as_ref()
    }
}

impl Hub {
    fn lock(&self) -> MutexGuard<'_, Channels> {
        self.channels.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stores, writes down, logs and sends one event.
    pub(crate) fn record(
        &self,
        records: &dyn Records,
        transcript: &Path,
        run: RunId,
        kind: &str,
        data: &serde_json::Value,
        at: i64,
    ) -> Result<Event, InboxError> {
        self.record_with(records, transcript, || {
            records.append_event(run, kind, data, at)
        })
    }

    /// Stores one event with `store` (which may store the change it
    /// announces in the same step), then writes it down, logs it and sends
    /// it. Once stored it counts: a transcript that cannot be written is
    /// logged, and the event is still sent. A store that found nothing to
    /// change announces nothing ([`Announces`]).
    pub(crate) fn record_with<T: Announces>(
        &self,
        records: &dyn Records,
        transcript: &Path,
        store: impl FnOnce() -> Result<T, InboxError>,
    ) -> Result<T, InboxError> {
        let mut runs = self.lock();
        let stored = store()?;
        let Some(event) = stored.event() else {
            return Ok(stored);
        };
        if let Err(error) = append_line(transcript, event) {
            tracing::warn!(run = %event.run, seq = event.seq, %error, "an event is stored but not in the run's transcript");
        }
        tracing::info!(
            run = %event.run,
            seq = event.seq,
            kind = %event.kind,
            data = %crate::shown::for_log(&event.data),
            "inbox event"
        );
        self.send_after_gap(records, &mut runs, event);
        Ok(stored)
    }

    /// Sends on the events a [`Notice`] announces: every event of the run
    /// after the last one sent, read from the records. One already sent
    /// (this process stored it) is not sent again.
    pub(crate) fn deliver(&self, records: &dyn Records, notice: Notice) {
        let mut channels = self.lock();
        let sent = channels
            .last_sent
            .get(&notice.run)
            .copied()
            .unwrap_or_default();
        if sent.covers(notice.seq) {
            return;
        }
        let watched = channels
            .runs
            .get(&notice.run)
            .is_some_and(|sender| sender.receiver_count() > 0);
        if !watched && self.all.receiver_count() == 0 {
            // No one here follows it: nothing to read. A subscriber that
            // comes later reads its backlog from the records.
            let sent = channels.last_sent.entry(notice.run).or_default();
            sent.run = sent.run.max(Some(notice.seq));
            sent.all = sent.all.max(Some(notice.seq));
            return;
        }
        // A run not seen before starts at the announced event.
        match records.events(notice.run, sent.first_unsent(notice.seq)) {
            Ok(events) => {
                for event in &events {
                    self.send(&mut channels, event);
                }
            }
            Err(error) => {
                tracing::warn!(run = %notice.run, seq = notice.seq, %error, "an event stored elsewhere could not be read; live streams may miss it");
            }
        }
    }

    /// Sends `event`, first reading back and sending any events of its run
    /// between the last one sent and it (stored by another process, not yet
    /// announced here).
    fn send_after_gap(&self, records: &dyn Records, channels: &mut Channels, event: &Event) {
        if let Some(sent) = channels.last_sent.get(&event.run).copied()
            && (sent.run.is_some() || sent.all.is_some())
            && sent.first_unsent(event.seq) < event.seq
        {
            match records.events(event.run, sent.first_unsent(event.seq)) {
                Ok(between) => {
                    for earlier in between.iter().filter(|e| e.seq < event.seq) {
                        self.send(channels, earlier);
                    }
                }
                Err(error) => {
                    tracing::warn!(run = %event.run, %error, "events stored elsewhere could not be read; live streams may miss them");
                }
            }
        }
        self.send(channels, event);
    }

    /// Sends one event to the run's and the all-runs subscribers, on each
    /// channel unless it was sent there already.
    fn send(&self, channels: &mut Channels, event: &Event) {
        let sent = channels.last_sent.entry(event.run).or_default();
        let unsent = |last: Option<u64>| last.is_none_or(|last| last < event.seq);
        let (to_run, to_all) = (unsent(sent.run), unsent(sent.all));
        sent.run = sent.run.max(Some(event.seq));
        sent.all = sent.all.max(Some(event.seq));
        if to_run && let Some(sender) = channels.runs.get(&event.run) {
            if sender.receiver_count() == 0 {
                channels.runs.remove(&event.run);
            } else {
                let _ = sender.send(event.clone());
            }
        }
        if to_all {
            // No receiver is not a failure: the event is stored either way.
            let _ = self.all.send(event.clone());
        }
    }

    /// The stored events of `run` from `from_seq` on, and a receiver for the
    /// ones after them.
    pub(crate) fn subscribe(
        &self,
        records: &dyn Records,
        run: RunId,
        from_seq: u64,
    ) -> Result<(Vec<Event>, broadcast::Receiver<Event>), InboxError> {
        let mut channels = self.lock();
        let backlog = records.events(run, from_seq)?;
        if let Some(newest) = backlog.last() {
            channels.catch_up_run(records, run, newest.seq);
        }
        let receiver = channels
            .runs
            .entry(run)
            .or_insert_with(|| broadcast::channel(RUN_CHANNEL_EVENTS).0)
            .subscribe();
        Ok((backlog, receiver))
    }

    /// A receiver for every run's events from now on.
    pub(crate) fn subscribe_all(&self) -> broadcast::Receiver<Event> {
        self.all.subscribe()
    }
}

/// Appends one JSON line to a transcript, making its folder (0700) and the
/// file (0600) on first use.
fn append_line(transcript: &Path, event: &Event) -> Result<(), InboxError> {
    if let Some(dir) = transcript.parent() {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir).map_err(crate::store::at(dir))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options
        .open(transcript)
        .map_err(crate::store::at(transcript))?;
    let mut line = serde_json::to_vec(event).map_err(std::io::Error::other)?;
    line.push(b'\n');
    file.write_all(&line)
        .map_err(crate::store::at(transcript))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use tokio::sync::broadcast::error::TryRecvError;

    use super::Hub;
    use crate::model::{Event, Notice, RunId};
    use crate::store::Records as _;
    use crate::store::SqliteRecords;

    fn seqs(events: &[Event]) -> Vec<u64> {
        events.iter().map(|event| event.seq).collect()
    }

    fn drained(receiver: &mut tokio::sync::broadcast::Receiver<Event>) -> Vec<u64> {
        let mut seen = Vec::new();
        loop {
            match receiver.try_recv() {
                Ok(event) => seen.push(event.seq),
                Err(TryRecvError::Empty) => return seen,
                Err(e) => panic!("the channel failed: {e}"),
            }
        }
    }

    /// Another replica stores an event; this one subscribes before the
    /// event's notice arrives, so the event is in the subscriber's backlog.
    /// The late notice must not send it again on the subscriber's channel,
    /// while a subscriber that came before the event gets it once, and the
    /// all-runs channel gets it once.
    #[test]
    fn an_event_in_a_backlog_is_not_sent_again_when_its_notice_comes_late() {
        let dir = tempfile::tempdir().expect("temp dir");
        let records = SqliteRecords::open(&dir.path().join("records.db")).expect("records");
        let hub = Hub::default();
        let run = RunId::new();
        let (before, mut earlier) = hub.subscribe(&records, run, 1).expect("subscribe");
        assert!(before.is_empty());
        let mut all = hub.subscribe_all();

        // Stored by another process: not through this hub.
        let data = serde_json::json!({});
        records
            .append_event(run, "run_started", &data, 0)
            .expect("stored");
        let (backlog, mut later) = hub.subscribe(&records, run, 1).expect("subscribe");
        assert_eq!(seqs(&backlog), [1]);
        hub.deliver(&records, Notice { run, seq: 1 });
        assert_eq!(drained(&mut later), Vec::<u64>::new(), "seq 1 twice");
        assert_eq!(drained(&mut earlier), [1]);
        assert_eq!(drained(&mut all), [1]);

        records.append_event(run, "note", &data, 0).expect("stored");
        hub.deliver(&records, Notice { run, seq: 2 });
        assert_eq!(drained(&mut later), [2]);
        assert_eq!(drained(&mut earlier), [2]);
        assert_eq!(drained(&mut all), [2]);
    }

    /// An event stored in the records counts even when the run's transcript
    /// cannot take it: a file recorded with its `file_captured` must not be
    /// reported as not kept (and have its bytes removed), and the pages
    /// following the run still hear of it.
    #[test]
    fn a_stored_event_is_sent_even_when_the_transcript_cannot_be_written() {
        let dir = tempfile::tempdir().expect("temp dir");
        let records = SqliteRecords::open(&dir.path().join("records.db")).expect("records");
        let hub = Hub::default();
        let run = RunId::new();
        let (_, mut live) = hub.subscribe(&records, run, 1).expect("subscribe");
        // A folder where the transcript file should be: appending fails.
        let transcript = dir.path().join("transcript.jsonl");
        std::fs::create_dir(&transcript).expect("a folder in the way");

        let data = serde_json::json!({"path": "a.png"});
        let event = hub
            .record(&records, &transcript, run, "file_captured", &data, 7)
            .expect("the event is stored, so it is recorded");
        assert_eq!(event.seq, 1);
        assert_eq!(seqs(&records.events(run, 1).expect("events")), [1]);
        assert_eq!(drained(&mut live), [1], "sent to the run's subscribers");
    }
}
