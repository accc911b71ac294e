//! The event streams: one run's events, backlog then live
//! (`GET /v1/runs/{id}/events?from_seq=N`), and every readable run's live
//! events for the web page (`GET /v1/events`), as Server-Sent Events here
//! and as gRPC streams in [`super::grpc`], both from [`run_stream`] and
//! [`all_stream`].
//!
//! Each SSE event is named by the event's kind (`file_captured`, …), carries
//! its `seq` as the id (so a client can resume with `from_seq`), and the whole
//! event as JSON data.

use std::collections::{HashSet, VecDeque};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Extension, Path, Query, State};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::{Stream, StreamExt as _, stream};
use porter_inbox::{Event, Inbox, RunId};
use serde::Deserialize;
use tokio::sync::{broadcast, mpsc};

use super::error::ApiError;
use super::state::{ApiState, blocking, readable_run};
use crate::access::{KeyInfo, can_read};

/// `RUN_DISCOVERY_INTERVAL` is how often `GET /v1/events` looks for runs
/// started since it last looked, so that a page open before a run began
/// still sees its captures.
const RUN_DISCOVERY_INTERVAL: Duration = Duration::from_secs(1);

/// `ALL_EVENTS_BUFFER` is how many events wait for a slow page before the
/// forwarders wait for it.
const ALL_EVENTS_BUFFER: usize = 256;

/// The query of `GET /v1/runs/{id}/events`.
#[derive(Debug, Deserialize)]
pub(super) struct EventsQuery {
    /// The first seq to send; earlier events are skipped. Default: 1 (the
    /// whole backlog).
    from_seq: Option<u64>,
}

/// Inbox events as the Server-Sent Events a route answers, kept alive;
/// an event that cannot be written is left out.
fn as_sse(
    events: impl Stream<Item = Event> + Send + 'static,
) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    let events = events.filter_map(|event| async move { sse_event(&event).map(Ok) });
    Sse::new(events).keep_alive(KeepAlive::default())
}

/// One inbox event as an SSE event; `None` (logged) if it cannot be written.
fn sse_event(event: &Event) -> Option<SseEvent> {
    // An SSE event name may not hold a line break; kinds are ours, but a bad
    // one must not take the stream down.
    let name = if event.kind.is_empty() || event.kind.contains(['\n', '\r']) {
        "event"
    } else {
        event.kind.as_str()
    };
    // A capture's call is sent with its long arguments cut, as the listing
    // sends it (the transcript keeps it whole).
    let cut = with_call_elided(event);
    let event = cut.as_ref().unwrap_or(event);
    match SseEvent::default()
        .event(name)
        .id(event.seq.to_string())
        .json_data(event)
    {
        Ok(sse) => Some(sse),
        Err(err) => {
            tracing::warn!(run = %event.run, seq = event.seq, error = %err, "an event could not be sent");
            None
        }
    }
}

/// `event` as the streams show it: its data's `call` cut as in
/// `GET /v1/runs` (the transcript keeps it whole).
pub(super) fn shown(event: Event) -> Event {
    with_call_elided(&event).unwrap_or(event)
}

/// `event` with its data's `call` cut as in `GET /v1/runs`, if that changes it.
fn with_call_elided(event: &Event) -> Option<Event> {
    let call = event.data.get("call")?.as_str()?;
    let cut = super::runs::elide_call(call);
    if cut == call {
        return None;
    }
    let mut shown = event.clone();
    shown.data["call"] = serde_json::Value::String(cut);
    Some(shown)
}

/// `GET /v1/runs/{run_id}/events?from_seq=N`.
pub(super) async fn run_events(
    State(state): State<Arc<ApiState>>,
    Extension(key): Extension<KeyInfo>,
    run_id: Result<Path<String>, PathRejection>,
    query: Result<Query<EventsQuery>, QueryRejection>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    let Path(run_id) = run_id.map_err(|_| ApiError::NoRun)?;
    let run = readable_run(&state, &key, &run_id).await?;
    let Query(query) = query.map_err(|err| {
        ApiError::BadRequest(format!(
            "`from_seq` must be a whole number (the first event seq to send): {err}"
        ))
    })?;
    let from_seq = query.from_seq.unwrap_or(1);
    Ok(as_sse(run_stream(&state.inbox, run.id, from_seq).await?))
}

/// `run`'s events from `from_seq` on (0 counts as 1), each once and in seq
/// order: those stored first, then each new one, stored by this process or
/// by another sharing the records. The caller has checked that the key may
/// read `run`.
pub(super) async fn run_stream(
    inbox: &Arc<Inbox>,
    run: RunId,
    from_seq: u64,
) -> Result<impl Stream<Item = Event> + Send + use<>, ApiError> {
    let from_seq = from_seq.max(1);
    let (backlog, receiver) =
        blocking(inbox, move |inbox| Ok(inbox.subscribe(run, from_seq)?)).await?;
    let follower = Follower {
        inbox: Arc::clone(inbox),
        run,
        next_seq: from_seq,
        backlog: backlog.into(),
        receiver,
    };
    Ok(stream::unfold(follower, |mut follower| async move {
        let event = follower.next().await?;
        Some((event, follower))
    }))
}

/// `Follower` hands out one run's events in seq order, each once: the
/// backlog first, then live ones, skipping any seq already handed out (the
/// inbox subscribes before it reads the backlog, so the two overlap).
struct Follower {
    inbox: Arc<Inbox>,
    run: RunId,
    next_seq: u64,
    backlog: VecDeque<Event>,
    receiver: broadcast::Receiver<Event>,
}

impl Follower {
    /// The next event, or `None` when the run's channel closes or the
    /// inbox cannot be read again after falling behind.
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.backlog.pop_front() {
                if event.run == self.run && event.seq >= self.next_seq {
                    self.next_seq = event.seq + 1;
                    return Some(event);
                }
                continue;
            }
            match self.receiver.recv().await {
                Ok(event) => self.backlog.push_back(event),
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    // Fell behind the channel: read what was missed from the
                    // records rather than leave a gap.
                    tracing::debug!(run = %self.run, missed, "an event stream fell behind; reading the backlog again");
                    let (run, from) = (self.run, self.next_seq);
                    let again =
                        blocking(&self.inbox, move |inbox| Ok(inbox.subscribe(run, from)?)).await;
                    match again {
                        Ok((backlog, receiver)) => {
                            self.backlog = backlog.into();
                            self.receiver = receiver;
                        }
                        Err(err) => {
                            tracing::warn!(run = %self.run, error = %err, "an event stream ends: its backlog cannot be read");
                            return None;
                        }
                    }
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

/// `GET /v1/events`: the live events of every run the caller may read,
/// including runs that start after the stream opened (their events from the
/// first one). Runs that were already going when it opened send only what
/// happens from then on; the page lists what came before with `GET /v1/runs`.
pub(super) async fn all_events(
    State(state): State<Arc<ApiState>>,
    Extension(key): Extension<KeyInfo>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    Ok(as_sse(all_stream(&state.inbox, key, 0).await?))
}

/// The events of every unfinished run `key` may read: of the runs going
/// now, those from `from_seq` on (0: only those that happen from now on),
/// and of every run that starts later, all of them. Runs are looked for
/// again every [`RUN_DISCOVERY_INTERVAL`] until the stream is dropped.
pub(super) async fn all_stream(
    inbox: &Arc<Inbox>,
    key: KeyInfo,
    from_seq: u64,
) -> Result<impl Stream<Item = Event> + Send + use<>, ApiError> {
    let (sender, receiver) = mpsc::channel(ALL_EVENTS_BUFFER);
    // Subscribe to the runs already going before answering, so that nothing
    // they emit after the answer is lost.
    let mut watched = HashSet::new();
    watch_new_runs(inbox, &key, &mut watched, &sender, Some(from_seq)).await?;
    tokio::spawn(discover_runs(Arc::clone(inbox), key, watched, sender));
    Ok(stream::unfold(receiver, |mut receiver| async move {
        let event = receiver.recv().await?;
        Some((event, receiver))
    }))
}

/// Looks for new readable runs until the stream's reader goes away.
async fn discover_runs(
    inbox: Arc<Inbox>,
    key: KeyInfo,
    mut watched: HashSet<RunId>,
    sender: mpsc::Sender<Event>,
) {
    loop {
        tokio::select! {
            () = sender.closed() => return,
            () = tokio::time::sleep(RUN_DISCOVERY_INTERVAL) => {}
        }
        if let Err(err) = watch_new_runs(&inbox, &key, &mut watched, &sender, None).await {
            tracing::warn!(error = %err, "looking for new runs failed; trying again");
        }
    }
}

/// Starts a forwarder for every readable, unfinished run not yet in
/// `watched`, and adds it there. A run found at the start (`initial` is the
/// stream's `from_seq`) forwards its events from that seq on, or with 0 only
/// later ones; a run found later (`None`) forwards all of its events.
async fn watch_new_runs(
    inbox: &Arc<Inbox>,
    key: &KeyInfo,
    watched: &mut HashSet<RunId>,
    sender: &mpsc::Sender<Event>,
    initial: Option<u64>,
) -> Result<(), ApiError> {
    let known = watched.clone();
    let reader = key.clone();
    let fresh = blocking(inbox, move |inbox| {
        let mut fresh = Vec::new();
        for run in inbox.runs()? {
            if known.contains(&run.id)
                || run.ended_at.is_some()
                || run.purged
                || !can_read(&reader, &run.owner)
            {
                continue;
            }
            let (backlog, receiver) = inbox.subscribe(run.id, 1)?;
            fresh.push((run.id, backlog, receiver));
        }
        Ok(fresh)
    })
    .await?;
    for (run, backlog, receiver) in fresh {
        let (next_seq, backlog) = match initial {
            Some(0) => (
                backlog.last().map_or(1, |event| event.seq + 1),
                VecDeque::new(),
            ),
            Some(from_seq) => (from_seq, backlog.into()),
            None => (1, backlog.into()),
        };
        let follower = Follower {
            inbox: Arc::clone(inbox),
            run,
            next_seq,
            backlog,
            receiver,
        };
        tokio::spawn(forward(follower, sender.clone()));
        watched.insert(run);
    }
    Ok(())
}

/// Sends one run's events on to the page's stream until either ends.
async fn forward(mut follower: Follower, sender: mpsc::Sender<Event>) {
    loop {
        let event = tokio::select! {
            () = sender.closed() => return,
            event = follower.next() => event,
        };
        let Some(event) = event else { return };
        if sender.send(event).await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: &str, seq: u64) -> Event {
        Event {
            seq,
            run: RunId::new(),
            kind: kind.to_owned(),
            data: serde_json::json!({"path": "a.png"}),
            at: 0,
        }
    }

    #[test]
    fn an_event_kind_with_a_line_break_does_not_break_the_stream() {
        // An SSE event panics on a name with a line break; the kind is
        // replaced instead.
        assert!(sse_event(&event("file_captured", 3)).is_some());
        assert!(sse_event(&event("evil\nkind", 4)).is_some());
        assert!(sse_event(&event("", 5)).is_some());
    }

    #[tokio::test]
    async fn a_follower_skips_seqs_it_already_handed_out() {
        let run = RunId::new();
        let (sender, receiver) = broadcast::channel(8);
        let at = |seq| Event {
            run,
            ..event("file_captured", seq)
        };
        let mut follower = Follower {
            inbox: Arc::new(never_opened_inbox()),
            run,
            next_seq: 2,
            backlog: vec![at(1), at(2), at(3)].into(),
            receiver,
        };
        for seq in [3, 4] {
            sender.send(at(seq)).expect("a receiver listens");
        }
        drop(sender);
        let mut seen = Vec::new();
        while let Some(event) = follower.next().await {
            seen.push(event.seq);
        }
        assert_eq!(seen, [2, 3, 4]);
    }

    /// The follower above never reaches the inbox (no lag), so any inbox
    /// value will do; this one is opened in a temp dir that outlives it.
    fn never_opened_inbox() -> Inbox {
        let dir = tempfile::tempdir().expect("a temp dir").keep();
        Inbox::open(&dir, porter_inbox::Limits::default()).expect("an inbox opens")
    }
}
