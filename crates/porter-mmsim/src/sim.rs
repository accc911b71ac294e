//! The emulated server itself: its state behind a lock, and the record of
//! the requests it received.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::Serialize;

use crate::seed::{Seed, SeedError};
use crate::state;

/// `Sim` is one emulated Mattermost server. It is cheap to clone (clones
/// share the same server), so a test keeps one clone to inspect
/// ([`Sim::requests`], [`Sim::snapshot`]) while another serves.
#[derive(Clone)]
pub struct Sim {
    inner: Arc<Inner>,
}

/// The shared parts of a [`Sim`].
struct Inner {
    state: Mutex<state::State>,
    requests: Mutex<Vec<RecordedRequest>>,
}

/// `RecordedRequest` is one request the emulator received, in order of
/// arrival, whatever its outcome (404s and 401s included).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RecordedRequest {
    /// The HTTP method, uppercase (`GET`).
    pub method: String,
    /// The path, without the query (`/api/v4/users/me`).
    pub path: String,
    /// The raw query string without `?`, if any.
    pub query: Option<String>,
    /// The `User-Agent` the client sent, if any.
    pub user_agent: Option<String>,
}

/// Locks a mutex, going on with the data if a panicking thread poisoned
/// it: the emulator's state stays usable for the test that inspects it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Sim {
    /// Builds a server from a seed, checking the seed on the way: an
    /// unknown name, a duplicate, or a post that breaks the server's rules
    /// is a [`SeedError`] that says which.
    pub fn new(seed: &Seed) -> Result<Sim, SeedError> {
        let state = state::State::from_seed(seed)?;
        Ok(Sim {
            inner: Arc::new(Inner {
                state: Mutex::new(state),
                requests: Mutex::new(Vec::new()),
            }),
        })
    }

    /// Every request received so far, oldest first.
    #[must_use]
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.inner.requests).clone()
    }

    /// Forgets the requests recorded so far, so a test can look at only
    /// what follows.
    pub fn clear_requests(&self) {
        lock(&self.inner.requests).clear();
    }

    /// The whole server state as JSON (users, teams, channels, members,
    /// posts, file infos with a hash of their bytes; tokens left out), to
    /// compare before and after an operation.
    #[must_use]
    pub fn snapshot(&self) -> serde_json::Value {
        self.lock().snapshot()
    }

    /// The first token the seed gave a user, by username, for tests and
    /// the demo's start-up message.
    #[must_use]
    pub fn token_for(&self, username: &str) -> Option<String> {
        let state = self.lock();
        let user = state.user_by_name(username)?;
        state.first_tokens.get(&user.id).cloned()
    }

    /// The id of a user, by username, so tests can build requests.
    #[must_use]
    pub fn user_id(&self, username: &str) -> Option<String> {
        self.lock().user_by_name(username).map(|u| u.id.clone())
    }

    /// Locks the server state.
    pub(crate) fn lock(&self) -> MutexGuard<'_, state::State> {
        lock(&self.inner.state)
    }

    /// Appends a request to the record.
    pub(crate) fn record(&self, request: RecordedRequest) {
        lock(&self.inner.requests).push(request);
    }
}
