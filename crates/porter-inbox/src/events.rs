//! Where a run's events go: the records (numbered), the run's transcript
//! file, the log, and the live channels of the run and of all runs.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::broadcast;

use crate::store::Records;
use crate::{Event, InboxError, RunId};

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
    runs: Mutex<HashMap<RunId, broadcast::Sender<Event>>>,
    all: broadcast::Sender<Event>,
}

impl Default for Hub {
    fn default() -> Self {
        Self {
            runs: Mutex::new(HashMap::new()),
            all: broadcast::channel(ALL_CHANNEL_EVENTS).0,
        }
    }
}

impl Hub {
    fn lock(&self) -> MutexGuard<'_, HashMap<RunId, broadcast::Sender<Event>>> {
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
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
            data = %event.data,
            "inbox event"
        );
        if let Some(sender) = runs.get(&run) {
            if sender.receiver_count() == 0 {
                runs.remove(&run);
            } else {
                let _ = sender.send(event.clone());
            }
        }
        // No receiver is not a failure: the event is stored either way.
        let _ = self.all.send(event.clone());
        Ok(event)
    }

    /// The stored events of `run` from `from_seq` on, and a receiver for the
    /// ones after them.
    pub(crate) fn subscribe(
        &self,
        records: &dyn Records,
        run: RunId,
        from_seq: u64,
    ) -> Result<(Vec<Event>, broadcast::Receiver<Event>), InboxError> {
        let mut runs = self.lock();
        let receiver = runs
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
