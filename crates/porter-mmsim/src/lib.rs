//! An in-memory Mattermost API v4 server for porter's tests and demo.
//!
//! No Mattermost can be installed where porter is built and tested, so this
//! crate plays one, closely enough that Mattermost's own JavaScript client
//! (`@mattermost/client`, Client4) works against it unchanged: the same
//! routes and query parameters, the same JSON shapes, the same status codes
//! and error bodies (`{"id", "message", "detailed_error", "request_id",
//! "status_code"}`), `Content-Type: application/json` exactly, `Bearer`
//! tokens in any case, membership checks on channels, the upload field
//! rules, `per_page` capped at 200, `Content-Disposition` on downloads.
//!
//! It is also Mattermost's OAuth 2.0 provider, as the server's web routes
//! are: `/oauth/authorize` behind a login page and a consent page,
//! `/oauth/access_token` with the code and refresh grants (PKCE S256,
//! redirect URIs matched exactly, single-use codes, refresh tokens for
//! confidential apps only), access tokens that expire after the seed's
//! `oauth_access_token_seconds`, and dynamic client registration when the
//! seed enables it; `POST /__sim/oauth/expire` ends every OAuth token at once.
//!
//! It records every request (method, path, query, `User-Agent`), so a test can assert
//! what a tool did and did not call, and it starts from a [`Seed`]: a
//! YAML/JSON fixture or the built-in [`Seed::demo`], whose posts carry real
//! files of every kind porter's file view handles.
//!
//! It deliberately does not: persist anything, speak WebSocket, implement
//! the hundreds of endpoints porter does not use (those answer the server's
//! JSON 404), or enforce roles beyond membership (every user is a plain
//! `system_user`).
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use porter_mmsim::{Seed, Sim, start};
//! let sim = Sim::new(&Seed::demo()).expect("the demo seed is valid");
//! let running = start(sim.clone(), "127.0.0.1:0".parse().expect("an address")).await?;
//! println!("Mattermost at {} (token {:?})", running.url, sim.token_for("alice"));
//! // … drive a client against running.url …
//! assert!(sim.requests().iter().all(|r| r.method == "GET"));
//! running.shutdown().await;
//! # Ok(())
//! # }
//! ```

mod api;
mod demo;
mod error;
mod model;
mod seed;
mod state;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::Serialize;

pub use demo::files::pdf_with_xref;
pub use seed::{
    DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_POST_CHARS, DEFAULT_OAUTH_ACCESS_SECONDS, DemoFile, Seed,
    SeedChannel, SeedConfig, SeedError, SeedFile, SeedOAuthApp, SeedPost, SeedTeam, SeedTime,
    SeedUser,
};

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

    /// The whole API as an axum router, for `oneshot` tests or to mount in
    /// another server. Its routes are `/api/v4/...`, `/_redirect/pl/{id}`
    /// and the permalink landing page `/{team}/pl/{id}`.
    pub fn app(&self) -> axum::Router {
        api::router(self)
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
    fn lock(&self) -> MutexGuard<'_, state::State> {
        lock(&self.inner.state)
    }

    /// Appends a request to the record.
    fn record(&self, request: RecordedRequest) {
        lock(&self.inner.requests).push(request);
    }
}

/// `Running` is a started server. Dropping it stops the server; call
/// [`Running::shutdown`] to wait until it has stopped.
pub struct Running {
    /// The server's base URL, `http://127.0.0.1:PORT` (Client4's `setUrl`).
    pub url: String,
    /// The address it listens on.
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Running {
    /// Stops the server and waits until it has closed its connections.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Binds `addr` (port 0 picks a free port), serves the simulator there on
/// the current tokio runtime, and returns at once. Unless the seed set a
/// `site_url`, the bound URL becomes the server's `SiteURL`.
pub async fn start(sim: Sim, addr: SocketAddr) -> std::io::Result<Running> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let url = format!("http://{addr}");
    {
        let mut state = sim.lock();
        if state.site_url.is_empty() {
            state.site_url.clone_from(&url);
        }
    }
    let app = sim.app();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
            let _ = stopped.await;
        });
        if let Err(err) = serve.await {
            tracing::error!(%err, "the Mattermost emulator stopped with an error");
        }
    });
    Ok(Running {
        url,
        addr,
        stop: Some(stop),
        task: Some(task),
    })
}
