//! What lets any process sharing the records resume a client session that
//! another one opened (gateway replicas behind a load balancer without
//! sticky sessions): the session's run, and the state the client set up
//! the session with (opaque text here; the gateway knows what it means).

use crate::model::{Event, InboxError, NewEvent, RunId, RunInfo};

/// `StoredSession` is one session as the records keep it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSession {
    /// The run the session opened, once it is linked.
    pub run: Option<RunId>,
    /// The session's state, once it is stored.
    pub state: Option<String>,
}

/// `SharedClaim` is what claiming a shared run found.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedClaim {
    /// The slot's run: the one in use, or the candidate, now recorded.
    pub run: RunInfo,
    /// The candidate's `run_started`, stored with it, when `run` is the
    /// candidate (a new run); `None` when the slot's run was in use.
    pub started: Option<Event>,
    /// The idle run the candidate replaced (to end), if any.
    pub replaced: Option<RunId>,
}

/// `SessionRecords` keeps sessions by their id. Each method is one atomic
/// step; storing the state and linking the run may come in either order.
pub trait SessionRecords: Send + Sync {
    /// Stores (or replaces) the state of session `id`.
    fn put_session_state(&self, id: &str, state: &str) -> Result<(), InboxError>;
    /// Links session `id` to the run it opened.
    fn link_session(&self, id: &str, run: RunId) -> Result<(), InboxError>;
    /// One session, if it is kept.
    fn session(&self, id: &str) -> Result<Option<StoredSession>, InboxError>;
    /// Forgets a session (it ended); a missing one is not an error.
    fn drop_session(&self, id: &str) -> Result<(), InboxError>;
    /// The run of `slot` (the requests without a session of one key and
    /// client): the one it holds if used within `idle_ms` before `now`
    /// (marked used now), else `candidate`, recorded as a run and as the
    /// slot's with `announce` (its `run_started`) as its first event, all in
    /// one step, so every process gets the same run and every run recorded
    /// is announced.
    fn claim_shared_run(
        &self,
        slot: &str,
        candidate: &RunInfo,
        now: i64,
        idle_ms: i64,
        announce: &NewEvent,
    ) -> Result<SharedClaim, InboxError>;
    /// Frees the slots whose runs were last used at or before `cutoff` and
    /// answers those runs (for the caller to end), each to one caller only.
    fn take_idle_shared_runs(&self, cutoff: i64) -> Result<Vec<RunId>, InboxError>;
}
