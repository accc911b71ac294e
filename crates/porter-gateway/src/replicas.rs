//! What lets several gateway replicas behind one load balancer (no sticky
//! sessions) serve one MCP session: the session's `initialize` parameters
//! and its run kept in the shared records, so that a replica that gets a
//! request of a session it did not open resumes it (rmcp replays the
//! handshake) on the same run instead of answering 404.
//!
//! Neither the Python nor the TypeScript MCP SDK client opens a new session
//! when a request answers 404 for its session (measured against a server
//! that does so): Python's hands the caller the 404's error, TypeScript's
//! throws a `StreamableHTTPError` (404), and neither sends `initialize`
//! again. So the session has to be resumable, not merely refused cleanly.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use porter_inbox::{Inbox, Owner, RunId};
use porter_mcp::sessions::{KeptSessions, SESSION_HEADER};

use crate::access::KeyInfo;
use rmcp::model::InitializeRequestParams;
use rmcp::transport::streamable_http_server::session::{
    SessionState, SessionStore, SessionStoreError,
};

/// The header a client resumes an SSE stream with.
const LAST_EVENT_ID_HEADER: &str = "last-event-id";

/// The answer to a client resuming a request's answer stream (see
/// [`resumes_a_request_stream`]).
const REQUEST_STREAM_NOT_RESUMED: &str = "Not Found: a request's answer stream is not resumed \
    across replicas; the request failed, send it again";

/// Whether `request` resumes the answer stream of one request (a `GET` whose
/// `Last-Event-ID` is rmcp's `<index>/<request>`), which replicas refuse.
///
/// That stream lives only in the replica that took the request, and each
/// replica numbers a session's requests on its own: behind a balancer the
/// resume lands on any replica, which either has no such stream (rmcp then
/// answers an empty `200`, and the Python SDK client reconnects every second
/// for ever, its call never answered, as when a replica dies mid-call) or
/// has a stream of its own under the same number, whose answer would be
/// replayed to the wrong call. Refused, the client gives up on that call
/// with an error (Python after two tries) and the session goes on. The
/// session's own stream (`Last-Event-ID` without a `/`) resumes as before.
fn resumes_a_request_stream(request: &Request) -> bool {
    request.method() == axum::http::Method::GET
        && request
            .headers()
            .get(LAST_EVENT_ID_HEADER)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|id| id.contains('/'))
}

/// `RunSlot` is where the session an `initialize` request opens leaves its
/// run, for [`link_sessions`] to record under the session's id once the
/// answer names it.
#[derive(Debug, Clone, Default)]
pub struct RunSlot(Arc<OnceLock<RunId>>);

impl RunSlot {
    /// Leaves the run of the session being opened.
    pub fn fill(&self, run: RunId) {
        let _ = self.0.set(run);
    }
}

/// The state of [`link_sessions`]: the inbox, and the owner of each
/// session's run as far as this replica has looked it up.
///
/// A session's run never changes once linked, nor does a run's owner, so
/// one look per session and replica is enough; every later request of the
/// session is checked without a round trip to the records.
pub struct SessionLinker {
    inbox: Arc<Inbox>,
    owners: Mutex<HashMap<String, Owner>>,
    /// The sessions this process serves (all of them, when the records are
    /// not shared): which have a request in flight, and the run of each it
    /// opened.
    kept: Arc<KeptSessions<RunId>>,
}

/// How many sessions' owners a replica remembers before it starts again.
const OWNERS_KEPT: usize = 4096;

impl SessionLinker {
    /// Links sessions in the shared records of `inbox` (where there are
    /// some) and in `kept`.
    #[must_use]
    pub fn new(inbox: Arc<Inbox>, kept: Arc<KeptSessions<RunId>>) -> Arc<Self> {
        Arc::new(Self {
            inbox,
            owners: Mutex::new(HashMap::new()),
            kept,
        })
    }

    fn owners(&self) -> std::sync::MutexGuard<'_, HashMap<String, Owner>> {
        self.owners
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The owner of `session`'s run; `None` while the records link no run
    /// to it (or cannot be read: the request then goes on to rmcp, which
    /// answers for a session it cannot resume).
    async fn owner_of(&self, session: &str) -> Option<Owner> {
        if let Some(owner) = self.owners().get(session) {
            return Some(owner.clone());
        }
        let (inbox, id) = (Arc::clone(&self.inbox), session.to_owned());
        let owner = tokio::task::spawn_blocking(move || {
            run_of_session(&inbox, &id)
                .ok()
                .flatten()
                .and_then(|run| inbox.run(run).ok().flatten())
                .map(|run| run.owner)
        })
        .await
        .ok()
        .flatten()?;
        let mut owners = self.owners();
        if owners.len() >= OWNERS_KEPT {
            owners.clear();
        }
        owners.insert(session.to_owned(), owner.clone());
        Some(owner)
    }
}

/// Records, for a request that opens a session, which run the session got,
/// under the id the answer gives it: in this process's kept sessions, and
/// in the shared records where there are some. Each later request of a
/// session kept here or in the shared records is counted in flight, so
/// that no replica parks a session under a call it is answering.
///
/// With shared records, a request that names a session whose run belongs
/// to another owner than its key's gets the answer of a session that never
/// was (so a session id learnt elsewhere neither joins nor reveals another's
/// run), before any replica tries to resume it. A kept session is checked
/// the same way when it is resumed (`Session::resumed_run`).
pub async fn link_sessions(
    State(sessions): State<Arc<SessionLinker>>,
    request: Request,
    next: Next,
) -> Response {
    let inbox = Arc::clone(&sessions.inbox);
    if inbox.sessions().is_none() {
        return link_kept(&sessions.kept, request, next).await;
    }
    if let Some(session) = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
    {
        let known = sessions.owner_of(&session).await;
        let owner = request.extensions().get::<KeyInfo>().map(KeyInfo::owner);
        if let (Some(owner), Some(known)) = (&owner, &known)
            && known != owner
        {
            return (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response();
        }
        if resumes_a_request_stream(&request) {
            return (StatusCode::NOT_FOUND, REQUEST_STREAM_NOT_RESUMED).into_response();
        }
        if known.is_none() {
            return next.run(request).await;
        }
        return porter_mcp::sessions::track_known(&sessions.kept, request, next).await;
    }
    let (response, opened) = open_session(request, next).await;
    if let Some((session, run)) = opened {
        if !sessions.kept.tag(&session, run) {
            tracing::warn!(%run, "a session's run was not linked here; its run ends only with its client");
        }
        let linked = tokio::task::spawn_blocking(move || match inbox.sessions() {
            Some(sessions) => sessions.link_session(&session, run),
            None => Ok(()),
        })
        .await;
        match linked {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                tracing::warn!(%run, %error, "a session's run was not recorded; another replica cannot resume it");
            }
            Err(error) => tracing::warn!(%run, %error, "recording a session's run failed"),
        }
    }
    response
}

/// [`link_sessions`] for this process's own sessions: a request of a kept
/// session is counted in flight (which keeps the session from being parked
/// or ended under it), and the session a request opens is linked to the run
/// it got.
async fn link_kept(kept: &Arc<KeptSessions<RunId>>, request: Request, next: Next) -> Response {
    if request.headers().contains_key(SESSION_HEADER) {
        return porter_mcp::sessions::track(kept, request, next).await;
    }
    let (response, opened) = open_session(request, next).await;
    if let Some((session, run)) = opened
        && !kept.tag(&session, run)
    {
        tracing::warn!(%run, "a session's run was not linked; the session ends when it is next parked");
    }
    response
}

/// Runs a request that names no session, and answers with the session it
/// opened and the run that session got, when it opened one.
async fn open_session(mut request: Request, next: Next) -> (Response, Option<(String, RunId)>) {
    let slot = RunSlot::default();
    request.extensions_mut().insert(slot.clone());
    let response = next.run(request).await;
    let session = response
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let opened = session.zip(slot.0.get().copied());
    (response, opened)
}

/// Ends a session's run (its client ended the session).
pub type EndRun = Box<dyn Fn(RunId) + Send + Sync>;

/// `SharedSessions` is rmcp's session store on the shared records, with
/// this replica's own note of each session it serves (for parking: see
/// [`KeptSessions`]).
pub struct SharedSessions {
    inbox: Arc<Inbox>,
    local: Arc<KeptSessions<RunId>>,
    end_run: EndRun,
}

impl SharedSessions {
    /// The store, when the inbox's records are shared (else `None`: one
    /// process keeps its sessions in memory, in `local` alone); `end_run`
    /// ends the run of a session whose client ends it here.
    #[must_use]
    pub fn new(
        inbox: &Arc<Inbox>,
        local: Arc<KeptSessions<RunId>>,
        end_run: EndRun,
    ) -> Option<Self> {
        inbox.sessions()?;
        Some(Self {
            inbox: Arc::clone(inbox),
            local,
            end_run,
        })
    }

    async fn with<T: Send + 'static>(
        &self,
        work: impl FnOnce(&dyn porter_inbox::SessionRecords) -> Result<T, porter_inbox::InboxError>
        + Send
        + 'static,
    ) -> Result<T, SessionStoreError> {
        let inbox = Arc::clone(&self.inbox);
        tokio::task::spawn_blocking(move || match inbox.sessions() {
            Some(sessions) => work(sessions).map_err(SessionStoreError::from),
            None => Err("the records are not shared".into()),
        })
        .await
        .map_err(SessionStoreError::from)?
    }
}

/// The run a resumed session belongs to, if the records link one.
pub fn run_of_session(
    inbox: &Inbox,
    session: &str,
) -> Result<Option<RunId>, porter_inbox::InboxError> {
    match inbox.sessions() {
        Some(sessions) => Ok(sessions.session(session)?.and_then(|stored| stored.run)),
        None => Ok(None),
    }
}

#[async_trait::async_trait]
impl SessionStore for SharedSessions {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let id = session_id.to_owned();
        let stored = self.with(move |sessions| sessions.session(&id)).await?;
        // A session is resumable once its state and its run are both kept.
        let Some(stored) = stored.filter(|s| s.run.is_some()) else {
            return Ok(None);
        };
        let Some(state) = stored.state else {
            return Ok(None);
        };
        let params: InitializeRequestParams = serde_json::from_str(&state)?;
        self.local.keep(session_id, params.clone());
        Ok(Some(SessionState::new(params)))
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let id = session_id.to_owned();
        let text = serde_json::to_string(&state.initialize_params)?;
        self.with(move |sessions| sessions.put_session_state(&id, &text))
            .await?;
        self.local.keep(session_id, state.initialize_params.clone());
        Ok(())
    }

    /// The client ended the session (on this replica, whichever opened it):
    /// its record goes, and its run ends.
    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        let id = session_id.to_owned();
        let run = self
            .with(move |sessions| {
                let run = sessions.session(&id)?.and_then(|stored| stored.run);
                sessions.drop_session(&id)?;
                Ok(run)
            })
            .await?;
        self.local.forget(session_id);
        if let Some(run) = run {
            (self.end_run)(run);
        }
        Ok(())
    }
}
