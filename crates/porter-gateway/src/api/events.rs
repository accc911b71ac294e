//! The event streams: one run's events, backlog then live
//! (`GET /v1/runs/{id}/events?from_seq=N`), and every readable run's live
//! events for the web page (`GET /v1/events`), as Server-Sent Events here
//! and as gRPC streams in [`super::grpc`], both from [`run_stream`] and
//! [`all_stream`].
//!
//! Each SSE event is named by the event's kind (`file_captured`, …), carries
//! its `seq` as the id (so a client can resume with `from_seq`), and the whole
//! event as JSON data.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Extension, Path, Query, State};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::{Stream, StreamExt as _, stream};
use porter_inbox::{Event, Inbox, RunId};
use serde::Deserialize;
use tokio::sync::broadcast;

use super::error::ApiError;
use super::state::{ApiState, blocking, readable_run};
use crate::access::{KeyInfo, can_read};

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

/// `GET /v1/events`: every event of every run the caller may read, from
/// the moment the stream opens: each run that starts meanwhile from its
/// first event, however soon it ends. Runs that were already going when it
/// opened send what happens from then on; the page lists what came before
/// with `GET /v1/runs`.
pub(super) async fn all_events(
    State(state): State<Arc<ApiState>>,
    Extension(key): Extension<KeyInfo>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    Ok(as_sse(all_stream(&state.inbox, key, 0).await?))
}

/// Every event `key` may read, as the inbox hands them out, in the order
/// it does (each run's in seq order, once each): those of the runs going
/// now from `from_seq` on (0: only what happens from now on), then every
/// event of every run as it is stored, here or by a replica sharing the
/// records. The stream follows the inbox's one channel of all events
/// rather than looking for runs, so a run that starts and ends between two
/// looks is not missed; a reader that falls behind the channel reads what
/// it missed back from the records.
pub(super) async fn all_stream(
    inbox: &Arc<Inbox>,
    key: KeyInfo,
    from_seq: u64,
) -> Result<impl Stream<Item = Event> + Send + use<>, ApiError> {
    // Subscribe before reading anything, so that nothing stored after the
    // answer is lost; what both the channel and a backlog hold is handed
    // out once (see `AllFollower::fresh`).
    let receiver = inbox.subscribe_all();
    let opened_at = now_ms();
    let reader = key.clone();
    let going = blocking(inbox, move |inbox| {
        let mut going = Vec::new();
        for run in inbox.runs()? {
            if run.ended_at.is_some() || run.purged || !can_read(&reader, &run.owner) {
                continue;
            }
            let backlog = if from_seq == 0 {
                Vec::new()
            } else {
                inbox.events(run.id, from_seq)?
            };
            going.push((run, backlog));
        }
        Ok(going)
    })
    .await?;
    let mut follower = AllFollower {
        inbox: Arc::clone(inbox),
        key,
        opened_at,
        receiver,
        readable: HashMap::new(),
        last_seq: HashMap::new(),
        queue: VecDeque::new(),
    };
    for (run, backlog) in going {
        follower.readable.insert(run.id, true);
        follower.queue.extend(backlog);
    }
    Ok(stream::unfold(follower, |mut follower| async move {
        let event = follower.next().await?;
        Some((event, follower))
    }))
}

/// Now, in Unix milliseconds (as event times are).
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
        })
}

/// `AllFollower` hands out every event its key may read, from the inbox's
/// channel of all events, each once and each run's in seq order.
struct AllFollower {
    inbox: Arc<Inbox>,
    key: KeyInfo,
    /// When the stream opened (Unix ms): a reader that fell behind takes
    /// back from the records what was stored since, of runs it had not yet
    /// heard of.
    opened_at: i64,
    receiver: broadcast::Receiver<Event>,
    /// Whether the key may read each run heard of (looked up once).
    readable: HashMap<RunId, bool>,
    /// The last seq handed out of each run.
    last_seq: HashMap<RunId, u64>,
    /// Events read back from the records, to hand out first.
    queue: VecDeque<Event>,
}

impl AllFollower {
    /// The next event to hand out, or `None` when the inbox's channel
    /// closes or the records cannot be read.
    async fn next(&mut self) -> Option<Event> {
        loop {
            let event = match self.queue.pop_front() {
                Some(event) => event,
                None => match self.receiver.recv().await {
                    Ok(event) => event,
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::debug!(
                            missed,
                            "the all-runs event stream fell behind; reading what it missed"
                        );
                        if let Err(err) = self.catch_up().await {
                            tracing::warn!(error = %err, "an event stream ends: what it missed cannot be read");
                            return None;
                        }
                        continue;
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
            };
            if self.fresh(&event) && self.may_read(event.run).await? {
                self.last_seq.insert(event.run, event.seq);
                return Some(event);
            }
        }
    }

    /// Whether `event` comes after the last one handed out of its run.
    fn fresh(&self, event: &Event) -> bool {
        self.last_seq
            .get(&event.run)
            .is_none_or(|&last| event.seq > last)
    }

    /// Whether the key may read `run`, looked up the first time; `None`
    /// when the records cannot be read.
    async fn may_read(&mut self, run: RunId) -> Option<bool> {
        if let Some(&known) = self.readable.get(&run) {
            return Some(known);
        }
        let found = blocking(&self.inbox, move |inbox| Ok(inbox.run(run)?)).await;
        let readable = match found {
            Ok(found) => found.is_some_and(|info| can_read(&self.key, &info.owner)),
            Err(err) => {
                tracing::warn!(run = %run, error = %err, "an event's run could not be looked up; the stream ends");
                return None;
            }
        };
        self.readable.insert(run, readable);
        Some(readable)
    }

    /// After falling behind the channel: every readable run with events
    /// stored since the stream opened gives back, from the records, those
    /// after the last one handed out (a run not heard of yet, those stored
    /// since the stream opened), in seq order.
    async fn catch_up(&mut self) -> Result<(), ApiError> {
        let key = self.key.clone();
        let last_seq = self.last_seq.clone();
        let opened_at = self.opened_at;
        let missed = blocking(&self.inbox, move |inbox| {
            let mut missed = Vec::new();
            for run in inbox.runs()? {
                if run.ended_at.is_some_and(|ended| ended < opened_at)
                    || !can_read(&key, &run.owner)
                {
                    continue;
                }
                let from = last_seq.get(&run.id).map_or(1, |last| last + 1);
                let events = inbox.events(run.id, from)?;
                let heard = last_seq.contains_key(&run.id);
                missed.extend(events.into_iter().filter(|e| heard || e.at >= opened_at));
            }
            Ok(missed)
        })
        .await?;
        self.queue.extend(missed);
        Ok(())
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
