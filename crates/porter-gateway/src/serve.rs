//! Serving the gateway: over stdio (one run, the local user) or over
//! streamable HTTP (one run per MCP session, owned by its API key), with the
//! admin MCP endpoint and the run API on the same listener.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::serve::ListenerExt as _;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::SessionStore;
use rmcp::transport::streamable_http_server::tower::{
    StreamableHttpServerConfig, StreamableHttpService,
};
use tokio_util::sync::CancellationToken;

use porter_inbox::RunId;
use porter_mcp::sessions::{
    KeptSessions, SessionTimes, end_idle_sessions, keep_sessions, track_sessions,
};

use crate::Gateway;
use crate::admin::AdminServer;
use crate::session::Session;

/// `PURGE_EVERY` is how often idle shared runs are ended and expired runs'
/// inboxes purged.
pub const PURGE_EVERY: Duration = Duration::from_secs(60);

use porter_mcp::http::close_after_unread_body;
use porter_mcp::http::ended_session;
pub use porter_mcp::http::{LOOPBACK_HOSTS, MCP_BODY_MAX_BYTES, declared_body_limit};

/// Serves one run over stdin/stdout until the client closes it.
pub async fn stdio(gateway: Arc<Gateway>) -> anyhow::Result<()> {
    let purge = purge_in_background(gateway.clone());
    let session = Session::local(gateway)?;
    let service = Box::pin(session.serve(rmcp::transport::stdio())).await?;
    service.waiting().await?;
    purge.abort();
    Ok(())
}

/// `HttpOptions` are the HTTP listener's settings.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    /// Host names to accept besides loopback (the name this gateway is
    /// reached by when it is deployed behind one).
    pub allow_hosts: Vec<String>,
    /// Cancelled when the server shuts down.
    pub shutdown: CancellationToken,
    /// How long an MCP session lives without requests.
    pub sessions: SessionTimes,
}

/// The whole HTTP application: `/mcp` (the gateway), `/admin/mcp` (the
/// `file` tool), and `extra` (the run API and the web page).
pub fn http_app(gateway: &Arc<Gateway>, options: &HttpOptions, extra: Router) -> Router {
    let mut hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| (*h).to_owned()).collect();
    hosts.extend(options.allow_hosts.iter().cloned());
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_cancellation_token(options.shutdown.clone())
        .with_max_request_body_bytes(usize::try_from(MCP_BODY_MAX_BYTES).unwrap_or(usize::MAX));
    // Every process keeps the sessions it serves in memory, so that one
    // parked after a quiet spell (with nothing in flight here) resumes.
    // Replicas sharing the records keep sessions there too, so that any of
    // them can resume a session another opened.
    let mut mcp_config = config.clone();
    let kept = kept_sessions(gateway, options.sessions);
    let manager = Arc::new(options.sessions.manager());
    let weak = Arc::downgrade(gateway);
    let end_run: crate::replicas::EndRun = Box::new(move |run| {
        if let Some(gateway) = weak.upgrade() {
            gateway.end_session_run(run);
        }
    });
    mcp_config.session_store = Some(
        match crate::replicas::SharedSessions::new(&gateway.inbox, Arc::clone(&kept), end_run) {
            Some(shared) => Arc::new(shared) as Arc<dyn SessionStore>,
            None => Arc::clone(&kept) as Arc<dyn SessionStore>,
        },
    );
    end_idle_sessions(
        Arc::clone(&kept),
        Arc::clone(&manager),
        options.shutdown.clone(),
    );
    let for_sessions = gateway.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(Session::remote(for_sessions.clone())),
        manager,
        mcp_config,
    );
    let for_admin = gateway.clone();
    let mut admin_config = config;
    let (admin_manager, admin_kept) = keep_sessions(options.sessions, &mut admin_config);
    let admin = StreamableHttpService::new(
        move || Ok(AdminServer::new(for_admin.clone())),
        admin_manager,
        admin_config,
    );
    let mcp_routes = Router::new()
        .nest_service("/mcp", mcp)
        .layer(middleware::from_fn_with_state(
            crate::replicas::SessionLinker::new(gateway.inbox.clone(), kept),
            crate::replicas::link_sessions,
        ))
        .layer(middleware::from_fn(ended_session));
    let admin_routes =
        Router::new()
            .nest_service("/admin/mcp", admin)
            .layer(middleware::from_fn_with_state(
                admin_kept,
                track_sessions::<()>,
            ));
    Router::new()
        .merge(guarded(mcp_routes, gateway, false))
        .merge(guarded(admin_routes, gateway, true))
        .merge(extra)
        .layer(middleware::from_fn(close_after_unread_body))
}

/// The gateway's kept HTTP sessions (made on first use): each session's
/// run ends when the session ends.
fn kept_sessions(gateway: &Arc<Gateway>, times: SessionTimes) -> Arc<KeptSessions<RunId>> {
    let weak = Arc::downgrade(gateway);
    Arc::clone(gateway.kept_sessions.get_or_init(|| {
        KeptSessions::new(
            times,
            Box::new(move |_, run| {
                if let (Some(gateway), Some(run)) = (weak.upgrade(), run) {
                    gateway.end_session_run(run);
                }
            }),
        )
    }))
}

/// `SHUTDOWN_GRACE` is how long the server waits, once told to stop, for
/// the requests in flight to finish before it stops anyway. Event streams
/// (SSE and gRPC) never finish by themselves, so without it one open stream
/// would keep the server from stopping.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// Serves HTTP on `listener` until `stop` completes, then for at most
/// [`SHUTDOWN_GRACE`] while the requests in flight finish.
pub async fn http(
    gateway: Arc<Gateway>,
    listener: tokio::net::TcpListener,
    options: HttpOptions,
    extra: Router,
    stop: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let purge = purge_in_background(gateway.clone());
    let shutdown = options.shutdown.clone();
    let app = http_app(&gateway, &options, extra);
    let served = axum::serve(listener.tap_io(porter_mcp::http::send_at_once), app)
        .with_graceful_shutdown(async move {
            stop.await;
            shutdown.cancel();
        });
    let stopping = options.shutdown.clone();
    let served = tokio::select! {
        served = served.into_future() => served,
        () = async move {
            stopping.cancelled().await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        } => {
            tracing::info!(grace = ?SHUTDOWN_GRACE, "stopping with requests still open (event streams)");
            Ok(())
        }
    };
    purge.abort();
    // The sessions still kept end with the server, and their runs with them.
    if let Some(kept) = gateway.kept_sessions.get() {
        kept.end_all();
    }
    served
}

/// Purges expired runs now and every [`PURGE_EVERY`].
fn purge_in_background(gateway: Arc<Gateway>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            gateway.end_idle_shared_runs();
            let inbox = gateway.inbox.clone();
            let purged = tokio::task::spawn_blocking(move || {
                inbox.purge_expired(std::time::SystemTime::now())
            })
            .await;
            match purged {
                Ok(Ok(runs)) if !runs.is_empty() => {
                    tracing::info!(count = runs.len(), "expired runs purged");
                }
                Ok(Err(error)) => tracing::warn!(%error, "purging expired runs failed"),
                _ => {}
            }
            tokio::time::sleep(PURGE_EVERY).await;
        }
    })
}

/// `routes` behind what stands in front of each MCP endpoint: the API key
/// checked (`admin`: as for the admin endpoint), then a body longer than
/// [`MCP_BODY_MAX_BYTES`] refused by its declared length.
fn guarded(routes: Router, gateway: &Arc<Gateway>, admin: bool) -> Router {
    routes
        .layer(middleware::from_fn_with_state(
            (gateway.clone(), admin),
            authenticate,
        ))
        .layer(middleware::from_fn_with_state(
            MCP_BODY_MAX_BYTES,
            declared_body_limit,
        ))
}

/// Puts the request's API key into its extensions (rmcp hands them to the
/// session as `http::request::Parts`). With keys configured, a request
/// without a valid one is refused; with none, `/mcp` serves the local user
/// and the admin endpoint is closed.
async fn authenticate(
    State((gateway, admin)): State<(Arc<Gateway>, bool)>,
    mut request: Request,
    next: Next,
) -> Response {
    if gateway.keys.is_empty() && !admin {
        return next.run(request).await;
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if let Some(key) = gateway.keys.from_authorization(presented).cloned() {
        request.extensions_mut().insert(key);
        next.run(request).await
    } else {
        porter_mcp::http::unauthorized(
            "this endpoint needs Authorization: Bearer <key>, with a key from the gateway's api_keys\n",
        )
    }
}
