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
    last_sent: HashMap<RunId, u64>,
}

impl Default for Hub {
    fn default() -> Self {
        Self {
            channels: Mutex::new(Channels::default()),
            all: broadcast::channel(ALL_CHANNEL_EVENTS).0,
        }
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
        let mut runs = self.lock();
        let event = records.append_event(run, kind, data, at)?;
        append_line(transcript, &event)?;
        tracing::info!(
            run = %event.run,
            seq = event.seq,
            kind = %event.kind,
            data = %crate::shown::for_log(&event.data),
            "inbox event"
        );
        self.send_after_gap(records, &mut runs, &event);
        Ok(event)
    }

    /// Sends on the events a [`Notice`] announces: every event of the run
    /// after the last one sent, read from the records. One already sent
    /// (this process stored it) is not sent again.
    pub(crate) fn deliver(&self, records: &dyn Records, notice: Notice) {
        let mut channels = self.lock();
        let last = channels.last_sent.get(&notice.run).copied();
        if last.is_some_and(|last| last >= notice.seq) {
            return;
        }
        let watched = channels
            .runs
            .get(&notice.run)
            .is_some_and(|sender| sender.receiver_count() > 0);
        if !watched && self.all.receiver_count() == 0 {
            // No one here follows it: nothing to read. A subscriber that
            // comes later reads its backlog from the records.
            channels.last_sent.insert(notice.run, notice.seq);
            return;
        }
        // A run not seen before starts at the announced event.
        let from = last.map_or(notice.seq, |last| last + 1);
        match records.events(notice.run, from) {
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
        if let Some(&last) = channels.last_sent.get(&event.run)
            && last + 1 < event.seq
        {
            match records.events(event.run, last + 1) {
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

    /// Sends one event to the run's and the all-runs subscribers, unless it
    /// was sent already.
    fn send(&self, channels: &mut Channels, event: &Event) {
        let last = channels.last_sent.entry(event.run).or_insert(0);
        if *last >= event.seq {
            return;
        }
        *last = event.seq;
        if let Some(sender) = channels.runs.get(&event.run) {
            if sender.receiver_count() == 0 {
                channels.runs.remove(&event.run);
            } else {
                let _ = sender.send(event.clone());
            }
        }
        // No receiver is not a failure: the event is stored either way.
        let _ = self.all.send(event.clone());
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
        let receiver = channels
            .runs
            .entry(run)
            .or_insert_with(|| broadcast::channel(RUN_CHANNEL_EVENTS).0)
            .subscribe();
        let backlog = records.events(run, from_seq)?;
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
