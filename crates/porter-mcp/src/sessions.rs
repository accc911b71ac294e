//! MCP sessions over streamable HTTP that outlive a quiet spell.
//!
//! rmcp holds each session's machinery (its task, channels and buffers) in
//! memory, and on its own drops it after a spell without messages (its
//! keep-alive, five minutes by default), even while a call is still being
//! answered. Neither the Python nor the TypeScript SDK client starts a new
//! session when its next request then answers 404: the call fails with
//! "Session terminated" and the client is stuck. A person who reads for
//! five minutes between two tool calls would lose the session.
//!
//! [`KeptSessions`] keeps what each client said at `initialize` and, through
//! [`track_sessions`] in front of the endpoint, which sessions have a request
//! in flight (a call still being answered; an open event stream, which only
//! waits, does not count). A session
//! with nothing in flight for [`SessionTimes::park_after`] is parked: rmcp
//! frees its machinery. Its next request finds it in the store, rmcp
//! rebuilds it and replays the handshake, and the request goes on as if the
//! session had never been parked. A request never meets a session being
//! parked: parking and the start of a request exclude each other. A session
//! is ended (forgotten, and its owner told) when its client ends it
//! (`DELETE`), when it has had nothing in flight for
//! [`SessionTimes::end_after`], or when the process stops.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use rmcp::model::InitializeRequestParams;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    SessionManager as _, SessionState, SessionStore, SessionStoreError,
};
use rmcp::transport::streamable_http_server::tower::StreamableHttpServerConfig;
use tokio_util::sync::CancellationToken;

/// The header that carries an MCP session's id.
pub const SESSION_HEADER: &str = "mcp-session-id";

/// `SessionTimes` says how long an HTTP session lives without requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionTimes {
    /// After this long without a request, a session's machinery is freed
    /// (parked); its next request rebuilds it.
    pub park_after: Duration,
    /// After this long without a request, a session is ended: its next
    /// request is answered 404, and whatever it held (a gateway run) ends.
    pub end_after: Duration,
}

impl SessionTimes {
    /// rmcp's own keep-alive: a quiet session parks when it would have ended.
    pub const DEFAULT_PARK_AFTER: Duration = Duration::from_secs(5 * 60);
    /// A day: a client left open overnight finds its session in the morning.
    pub const DEFAULT_END_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

    /// rmcp's session manager. Sessions are parked by
    /// [`end_idle_sessions`], which knows what is in flight; rmcp's own
    /// keep-alive, which does not, is only a backstop at [`Self::end_after`].
    #[must_use]
    pub fn manager(&self) -> LocalSessionManager {
        Self::manager_dropping_after(self.end_after.max(self.park_after))
    }

    fn manager_dropping_after(quiet: Duration) -> LocalSessionManager {
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = Some(quiet);
        manager
    }
}

impl Default for SessionTimes {
    fn default() -> Self {
        Self {
            park_after: Self::DEFAULT_PARK_AFTER,
            end_after: Self::DEFAULT_END_AFTER,
        }
    }
}

/// Told, once, of every session that ends: its id and its tag.
pub type OnEnd<T> = Box<dyn Fn(&str, Option<T>) + Send + Sync>;

/// `KeptSessions` keeps every open session's `initialize` parameters, and a
/// tag of the server's (the gateway keeps the session's run), for rmcp to
/// rebuild a parked session from.
pub struct KeptSessions<T> {
    kept: Mutex<HashMap<String, Kept<T>>>,
    /// Held (shared) while a request of a kept session starts, and
    /// (exclusive) while sessions are parked: a request either started
    /// before its session was picked, which keeps it from being picked, or
    /// waits until the session is parked and then rebuilds it.
    gate: tokio::sync::RwLock<()>,
    times: SessionTimes,
    most: usize,
    on_end: OnEnd<T>,
    /// Sessions ended to make room, for the sweeper to close in rmcp.
    evicted: Mutex<Vec<String>>,
}

struct Kept<T> {
    /// What its client said at `initialize`; `None` for a session another
    /// process opened and keeps, until rmcp has loaded it here.
    params: Option<InitializeRequestParams>,
    tag: Option<T>,
    /// When its last request started or ended.
    used: Instant,
    /// Its requests in flight (calls still being answered).
    busy: u32,
    /// Whether its machinery was freed since its last request.
    parked: bool,
}

impl<T: Clone + PartialEq + Send + 'static> KeptSessions<T> {
    /// How many sessions are kept at most: past it, opening one ends the
    /// one unused the longest (a few hundred bytes each).
    pub const MOST: usize = 100_000;

    /// Keeps sessions for `times`, telling `on_end` of each that ends.
    #[must_use]
    pub fn new(times: SessionTimes, on_end: OnEnd<T>) -> Arc<Self> {
        Self::with_most(times, Self::MOST, on_end)
    }

    /// [`Self::new`] keeping at most `most` sessions.
    #[must_use]
    pub fn with_most(times: SessionTimes, most: usize, on_end: OnEnd<T>) -> Arc<Self> {
        Arc::new(Self {
            kept: Mutex::new(HashMap::new()),
            gate: tokio::sync::RwLock::new(()),
            times,
            most: most.max(1),
            on_end,
            evicted: Mutex::new(Vec::new()),
        })
    }

    /// How long sessions live without requests.
    #[must_use]
    pub fn times(&self) -> SessionTimes {
        self.times
    }

    fn kept(&self) -> MutexGuard<'_, HashMap<String, Kept<T>>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Notes the start of a request of session `id`, once no parking is
    /// under way; the session counts it in flight until the answer is
    /// dropped (nothing for a session not kept).
    pub async fn begin(self: &Arc<Self>, id: &str) -> InFlight<T> {
        self.begin_or_note(id, false).await
    }

    /// [`Self::begin`] for a session known to exist elsewhere (another
    /// replica opened it, and the records shared between replicas keep
    /// it): one not kept here yet is noted, with its request in flight, so
    /// that it is not parked under that request once rmcp has loaded it.
    pub async fn begin_known(self: &Arc<Self>, id: &str) -> InFlight<T> {
        self.begin_or_note(id, true).await
    }

    async fn begin_or_note(self: &Arc<Self>, id: &str, note: bool) -> InFlight<T> {
        let _gate = self.gate.read().await;
        if note && !self.kept().contains_key(id) {
            self.insert(id, None);
        }
        let known = self.kept().get_mut(id).map(|kept| {
            kept.used = Instant::now();
            kept.busy = kept.busy.saturating_add(1);
            kept.parked = false;
        });
        InFlight {
            kept: Arc::clone(self),
            id: known.map(|()| id.to_owned()),
        }
    }

    /// Notes the opening of session `id`'s event stream (`GET`), once no
    /// parking is under way. An open stream does not keep its session from
    /// being parked: it only waits for what the server may send, and the
    /// client opens it again when it closes.
    pub async fn listen(&self, id: &str) {
        let _gate = self.gate.read().await;
        if let Some(kept) = self.kept().get_mut(id) {
            kept.used = Instant::now();
            kept.parked = false;
        }
    }

    fn end_request(&self, id: &str) {
        if let Some(kept) = self.kept().get_mut(id) {
            kept.used = Instant::now();
            kept.busy = kept.busy.saturating_sub(1);
        }
    }

    /// Parks the sessions with nothing in flight since `now - park_after`
    /// (rmcp frees their machinery; each is rebuilt by its next request).
    pub async fn park_idle(&self, manager: &LocalSessionManager, now: Instant) -> usize {
        let Some(cutoff) = now.checked_sub(self.times.park_after) else {
            return 0;
        };
        let _gate = self.gate.write().await;
        let quiet: Vec<String> = self
            .kept()
            .iter_mut()
            .filter(|(_, k)| k.busy == 0 && !k.parked && k.used <= cutoff)
            .map(|(id, k)| {
                k.parked = true;
                id.clone()
            })
            .collect();
        for id in &quiet {
            let _ = manager.close_session(&Arc::from(id.as_str())).await;
        }
        quiet.len()
    }

    /// Tags session `id` with `tag`; `false` when it is not kept.
    pub fn tag(&self, id: &str, tag: T) -> bool {
        self.kept()
            .get_mut(id)
            .map(|kept| kept.tag = Some(tag))
            .is_some()
    }

    /// Session `id`'s tag, if it is kept and tagged.
    #[must_use]
    pub fn tag_of(&self, id: &str) -> Option<T> {
        self.kept().get(id).and_then(|kept| kept.tag.clone())
    }

    /// Whether a kept session carries `tag`.
    #[must_use]
    pub fn holds(&self, tag: &T) -> bool {
        self.kept()
            .values()
            .any(|kept| kept.tag.as_ref() == Some(tag))
    }

    /// How many sessions are kept.
    #[must_use]
    pub fn len(&self) -> usize {
        self.kept().len()
    }

    /// Whether no session is kept.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.kept().is_empty()
    }

    fn ended(&self, ended: Vec<(String, Option<T>)>) -> Vec<String> {
        ended
            .into_iter()
            .map(|(id, tag)| {
                (self.on_end)(&id, tag);
                id
            })
            .collect()
    }

    /// Ends the sessions with nothing in flight since `now - end_after`,
    /// and answers their ids (for rmcp to close any it still holds).
    pub fn end_idle(&self, now: Instant) -> Vec<String> {
        let Some(cutoff) = now.checked_sub(self.times.end_after) else {
            return Vec::new();
        };
        let ended: Vec<(String, Option<T>)> = {
            let mut kept = self.kept();
            let idle: Vec<String> = kept
                .iter()
                .filter(|(_, k)| k.busy == 0 && k.used <= cutoff)
                .map(|(id, _)| id.clone())
                .collect();
            idle.into_iter()
                .filter_map(|id| kept.remove(&id).map(|k| (id, k.tag)))
                .collect()
        };
        self.ended(ended)
    }

    /// Ends every session (the process is stopping).
    pub fn end_all(&self) {
        let ended: Vec<(String, Option<T>)> = self
            .kept()
            .drain()
            .map(|(id, kept)| (id, kept.tag))
            .collect();
        self.ended(ended);
    }

    /// Keeps session `id`, opened (or loaded here) with `params`; a session
    /// kept already keeps its tag and its requests in flight.
    pub fn keep(&self, id: &str, params: InitializeRequestParams) {
        self.insert(id, Some(params));
    }

    fn insert(&self, id: &str, params: Option<InitializeRequestParams>) {
        let evicted = {
            let mut kept = self.kept();
            let evicted = if kept.len() >= self.most && !kept.contains_key(id) {
                let oldest = kept
                    .iter()
                    .min_by_key(|(_, k)| k.used)
                    .map(|(id, _)| id.clone());
                oldest.and_then(|old| kept.remove(&old).map(|k| (old, k.tag)))
            } else {
                None
            };
            let (tag, busy, before) = kept
                .remove(id)
                .map_or((None, 0, None), |k| (k.tag, k.busy, k.params));
            kept.insert(
                id.to_owned(),
                Kept {
                    params: params.or(before),
                    tag,
                    used: Instant::now(),
                    busy,
                    parked: false,
                },
            );
            evicted
        };
        let closing = self.ended(evicted.into_iter().collect());
        self.evicted
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(closing);
    }

    /// The sessions ended to make room since last asked (rmcp may still
    /// hold them).
    fn take_evicted(&self) -> Vec<String> {
        std::mem::take(&mut *self.evicted.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Ends session `id` (its client ended it), telling the owner.
    pub fn forget(&self, id: &str) {
        let ended = self.kept().remove(id).map(|k| (id.to_owned(), k.tag));
        self.ended(ended.into_iter().collect());
    }

    fn params(&self, id: &str) -> Option<InitializeRequestParams> {
        let mut kept = self.kept();
        let found = kept.get_mut(id)?;
        found.used = Instant::now();
        found.params.clone()
    }
}

/// `InFlight` is one request of a kept session, counted until dropped.
pub struct InFlight<T: Clone + PartialEq + Send + 'static> {
    kept: Arc<KeptSessions<T>>,
    /// The session, when it is kept.
    id: Option<String>,
}

impl<T: Clone + PartialEq + Send + 'static> Drop for InFlight<T> {
    fn drop(&mut self) {
        if let Some(id) = &self.id {
            self.kept.end_request(id);
        }
    }
}

#[async_trait::async_trait]
impl<T: Clone + PartialEq + Send + Sync + 'static> SessionStore for KeptSessions<T> {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        Ok(self.params(session_id).map(SessionState::new))
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        self.keep(session_id, state.initialize_params.clone());
        Ok(())
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        self.forget(session_id);
        Ok(())
    }
}

/// Parks `kept`'s quiet sessions and ends its idle ones (closing any rmcp
/// still holds) every so often until `stop` is cancelled; then ends them
/// all.
pub fn end_idle_sessions<T: Clone + PartialEq + Send + Sync + 'static>(
    kept: Arc<KeptSessions<T>>,
    manager: Arc<LocalSessionManager>,
    stop: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    // A quarter of the time to park, so that a session parks at most a
    // quarter late; at least a second, at most a minute.
    let every =
        (kept.times().park_after / 4).clamp(Duration::from_secs(1), Duration::from_secs(60));
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = stop.cancelled() => break,
                () = tokio::time::sleep(every) => {}
            }
            let now = Instant::now();
            let mut ended = kept.take_evicted();
            ended.extend(kept.end_idle(now));
            let count = ended.len();
            for id in ended {
                let _ = manager.close_session(&Arc::from(id.as_str())).await;
            }
            // Said once rmcp has let them go too (the tests wait for it).
            if count > 0 {
                tracing::debug!(sessions = count, "sessions ended: idle or evicted");
            }
            let parked = kept.park_idle(&manager, now).await;
            if parked > 0 {
                tracing::debug!(sessions = parked, "sessions parked after a quiet spell");
            }
        }
        kept.end_all();
    })
}

/// For an endpoint whose sessions hold nothing to end when they end: rmcp's
/// session manager (parking after `times.park_after`), with `config`'s
/// session store set to the kept sessions, which are ended when idle until
/// `config`'s cancellation token is cancelled. Put [`track_sessions`] with
/// the kept sessions in front of the endpoint.
pub fn keep_sessions(
    times: SessionTimes,
    config: &mut StreamableHttpServerConfig,
) -> (Arc<LocalSessionManager>, Arc<KeptSessions<()>>) {
    let kept: Arc<KeptSessions<()>> = KeptSessions::new(times, Box::new(|_, _| {}));
    config.session_store = Some(Arc::clone(&kept) as Arc<dyn SessionStore>);
    let manager = Arc::new(times.manager());
    end_idle_sessions(
        Arc::clone(&kept),
        Arc::clone(&manager),
        config.cancellation_token.clone(),
    );
    (manager, kept)
}

/// Counts every request that names a session in `kept` (but the event
/// stream a client keeps open) in flight until its answer has been sent or
/// dropped (the middleware in front of an MCP endpoint whose sessions
/// `kept` holds).
pub async fn track_sessions<T: Clone + PartialEq + Send + Sync + 'static>(
    State(kept): State<Arc<KeptSessions<T>>>,
    request: Request,
    next: Next,
) -> Response {
    track(&kept, request, next).await
}

/// [`track_sessions`] for a caller that has the kept sessions at hand.
pub async fn track<T: Clone + PartialEq + Send + Sync + 'static>(
    kept: &Arc<KeptSessions<T>>,
    request: Request,
    next: Next,
) -> Response {
    track_or_note(kept, request, next, false).await
}

/// [`track`] for a request whose session is known to exist elsewhere (see
/// [`KeptSessions::begin_known`]).
pub async fn track_known<T: Clone + PartialEq + Send + Sync + 'static>(
    kept: &Arc<KeptSessions<T>>,
    request: Request,
    next: Next,
) -> Response {
    track_or_note(kept, request, next, true).await
}

async fn track_or_note<T: Clone + PartialEq + Send + Sync + 'static>(
    kept: &Arc<KeptSessions<T>>,
    request: Request,
    next: Next,
    note: bool,
) -> Response {
    let Some(id) = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
    else {
        return next.run(request).await;
    };
    if request.method() == axum::http::Method::GET {
        kept.listen(&id).await;
        return next.run(request).await;
    }
    let in_flight = kept.begin_or_note(&id, note).await;
    let response = next.run(request).await;
    let (parts, body) = response.into_parts();
    Response::from_parts(
        parts,
        axum::body::Body::new(Answering {
            inner: body,
            _in_flight: in_flight,
        }),
    )
}

/// An answer body that keeps its request counted in flight until it is
/// sent to its end or dropped (a client gone).
struct Answering<T: Clone + PartialEq + Send + 'static> {
    inner: axum::body::Body,
    _in_flight: InFlight<T>,
}

impl<T: Clone + PartialEq + Send + 'static> http_body::Body for Answering<T> {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(end_after: Duration) -> SessionTimes {
        SessionTimes {
            park_after: Duration::from_millis(10),
            end_after,
        }
    }

    /// Each ended session's id and tag, in order.
    type EndedLog = Arc<Mutex<Vec<(String, Option<u32>)>>>;

    fn ended_log() -> (EndedLog, OnEnd<u32>) {
        let log = Arc::new(Mutex::new(Vec::new()));
        let writer = Arc::clone(&log);
        let on_end: OnEnd<u32> = Box::new(move |id, tag| {
            writer.lock().unwrap().push((id.to_owned(), tag));
        });
        (log, on_end)
    }

    /// Kept sessions parked after 10 s and ended after 60 s, the log of
    /// those ended, and rmcp's manager for them.
    fn parking_in_10s_ending_in_60s() -> (EndedLog, Arc<KeptSessions<u32>>, LocalSessionManager) {
        let (log, on_end) = ended_log();
        let times = SessionTimes {
            park_after: Duration::from_secs(10),
            end_after: Duration::from_secs(60),
        };
        (log, KeptSessions::new(times, on_end), times.manager())
    }

    fn params(name: &str) -> SessionState {
        let mut params = InitializeRequestParams::default();
        params.client_info.name = name.to_owned();
        SessionState::new(params)
    }

    #[tokio::test]
    async fn a_kept_session_is_loaded_with_its_parameters_until_it_is_deleted() {
        let (log, on_end) = ended_log();
        let kept = KeptSessions::new(times(Duration::from_secs(60)), on_end);
        kept.store("s1", &params("alpha")).await.unwrap();
        assert!(kept.tag("s1", 7));
        assert!(!kept.tag("unknown", 8));
        let loaded = kept.load("s1").await.unwrap().expect("kept");
        assert_eq!(loaded.initialize_params.client_info.name, "alpha");
        assert_eq!(kept.tag_of("s1"), Some(7));
        assert!(kept.holds(&7));
        assert!(kept.load("unknown").await.unwrap().is_none());

        kept.delete("s1").await.unwrap();
        assert!(kept.load("s1").await.unwrap().is_none());
        assert!(!kept.holds(&7));
        assert_eq!(*log.lock().unwrap(), vec![("s1".to_owned(), Some(7))]);
        // Deleting again tells no one twice.
        kept.delete("s1").await.unwrap();
        assert_eq!(log.lock().unwrap().len(), 1);
    }

    #[tokio::test]
    async fn only_sessions_without_a_request_for_end_after_are_ended() {
        let (log, on_end) = ended_log();
        let life = Duration::from_secs(60);
        let kept = KeptSessions::new(times(life), on_end);
        kept.store("quiet", &params("q")).await.unwrap();
        kept.store("busy", &params("b")).await.unwrap();
        kept.tag("quiet", 1);
        let start = Instant::now();
        assert!(kept.end_idle(start + life / 2).is_empty());

        // `busy` is used half way; `quiet` is not.
        kept.kept().get_mut("busy").unwrap().used = start + life / 2;
        let ended = kept.end_idle(start + life + Duration::from_secs(1));
        assert_eq!(ended, vec!["quiet".to_owned()]);
        assert_eq!(*log.lock().unwrap(), vec![("quiet".to_owned(), Some(1))]);
        assert!(kept.load("quiet").await.unwrap().is_none());
        assert!(kept.load("busy").await.unwrap().is_some());

        kept.end_all();
        assert!(kept.is_empty());
        assert_eq!(log.lock().unwrap().len(), 2);
    }

    #[tokio::test]
    async fn a_session_with_a_request_in_flight_is_neither_parked_nor_ended() {
        let (log, kept, manager) = parking_in_10s_ending_in_60s();
        kept.store("answering", &params("a")).await.unwrap();
        kept.store("quiet", &params("q")).await.unwrap();
        let in_flight = kept.begin("answering").await;
        let later = Instant::now() + Duration::from_secs(61);
        assert_eq!(kept.park_idle(&manager, later).await, 1);
        assert!(kept.kept()["quiet"].parked);
        assert!(!kept.kept()["answering"].parked);
        // Parked once; not picked again until a request comes.
        assert_eq!(kept.park_idle(&manager, later).await, 0);
        assert_eq!(kept.end_idle(later), vec!["quiet".to_owned()]);
        assert_eq!(log.lock().unwrap().len(), 1);

        // The answer is sent: the session is quiet from now on.
        drop(in_flight);
        assert_eq!(kept.kept()["answering"].busy, 0);
        assert_eq!(kept.park_idle(&manager, Instant::now()).await, 0);
        let much_later = Instant::now() + Duration::from_secs(11);
        assert_eq!(kept.park_idle(&manager, much_later).await, 1);
        // A request of a parked session counts it live again.
        let again = kept.begin("answering").await;
        assert!(!kept.kept()["answering"].parked);
        drop(again);
        // A request of a session not kept counts nothing.
        drop(kept.begin("unknown").await);
        assert_eq!(kept.len(), 1);
    }

    #[tokio::test]
    async fn a_session_opened_elsewhere_is_noted_with_its_request_and_not_parked_under_it() {
        let (log, kept, manager) = parking_in_10s_ending_in_60s();
        // Another replica opened it: its first request here is counted
        // before rmcp loads the session from the shared records.
        let in_flight = kept.begin_known("elsewhere").await;
        assert!(kept.load("elsewhere").await.unwrap().is_none());
        kept.keep("elsewhere", params("e").initialize_params);
        let later = Instant::now() + Duration::from_secs(61);
        assert_eq!(kept.park_idle(&manager, later).await, 0);
        assert!(kept.end_idle(later).is_empty());
        let loaded = kept.load("elsewhere").await.unwrap().expect("kept");
        assert_eq!(loaded.initialize_params.client_info.name, "e");
        drop(in_flight);
        assert_eq!(
            kept.park_idle(&manager, Instant::now() + Duration::from_secs(11))
                .await,
            1
        );
        // Not opened here, so untagged: ending it here ends no run.
        kept.forget("elsewhere");
        assert_eq!(*log.lock().unwrap(), vec![("elsewhere".to_owned(), None)]);
    }

    #[tokio::test]
    async fn past_the_most_kept_the_session_unused_longest_is_ended() {
        let (log, on_end) = ended_log();
        let kept = KeptSessions::with_most(times(Duration::from_secs(60)), 2, on_end);
        kept.store("a", &params("a")).await.unwrap();
        kept.store("b", &params("b")).await.unwrap();
        kept.tag("a", 1);
        // `a` is used after `b`, so `b` is the one to go.
        kept.kept().get_mut("a").unwrap().used = Instant::now() + Duration::from_secs(1);
        kept.store("c", &params("c")).await.unwrap();
        assert_eq!(kept.len(), 2);
        assert_eq!(*log.lock().unwrap(), vec![("b".to_owned(), None)]);
        // rmcp may still hold it: the sweeper is told to close it, once.
        assert_eq!(kept.take_evicted(), vec!["b".to_owned()]);
        assert!(kept.take_evicted().is_empty());
        // Storing a kept session again keeps its tag and ends no other.
        kept.store("a", &params("a2")).await.unwrap();
        assert_eq!(kept.tag_of("a"), Some(1));
        assert_eq!(log.lock().unwrap().len(), 1);
    }
}
