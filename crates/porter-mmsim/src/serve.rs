//! Serving the emulator: its routes as an axum router, and a server
//! started on a loopback port.

use axum::serve::ListenerExt as _;
use std::net::SocketAddr;

use crate::api;
use crate::sim::Sim;

impl Sim {
    /// The whole API as an axum router, for `oneshot` tests or to mount in
    /// another server. Its routes are `/api/v4/...`, `/_redirect/pl/{id}`
    /// and the permalink landing page `/{team}/pl/{id}`.
    pub fn app(&self) -> axum::Router {
        api::router(self)
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
        let serve =
            axum::serve(listener.tap_io(send_at_once), app).with_graceful_shutdown(async move {
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

/// Sets an accepted connection to send small writes at once (TCP_NODELAY),
/// as Mattermost's own server does: an answer written in pieces would
/// otherwise wait for the client's late acknowledgement of each, ~40 ms.
fn send_at_once(connection: &mut tokio::net::TcpStream) {
    if let Err(error) = connection.set_nodelay(true) {
        tracing::debug!(%error, "TCP_NODELAY could not be set on a connection");
    }
}
