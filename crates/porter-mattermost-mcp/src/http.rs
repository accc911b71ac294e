//! Streamable HTTP: the MCP endpoint at `/mcp` in an axum router.
//!
//! Only loopback `Host` names and browser `Origin`s are accepted unless the
//! operator lists more, so a web page cannot reach the server through DNS
//! rebinding. With a bearer token set, every request must carry it.

use axum::Router;
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::serve::ListenerExt as _;
use rmcp::transport::streamable_http_server::tower::{
    StreamableHttpServerConfig, StreamableHttpService,
};
use tokio_util::sync::CancellationToken;

use crate::server::MattermostServer;
use porter_mattermost::Token;
use porter_mcp::sessions::{SessionTimes, keep_sessions, track_sessions};

pub use porter_mcp::http::LOOPBACK_HOSTS;
use porter_mcp::http::{
    MCP_BODY_MAX_BYTES, allowed_hosts, allowed_origins, bearer_token, guard, same_digest,
    secret_digest, unauthorized,
};

/// `HttpOptions` are the HTTP transport's protections. The default accepts
/// loopback names only and asks for no token.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    /// The bearer token every request must carry, when set.
    pub bearer: Option<Token>,
    /// More `Host` names (or `host:port`) to accept besides loopback, for a
    /// server reached by another name. Each also becomes an allowed browser
    /// origin.
    pub extra_hosts: Vec<String>,
    /// Cancelled to close every session (and SSE stream) at shutdown.
    pub shutdown: CancellationToken,
    /// How long an MCP session lives without requests.
    pub sessions: SessionTimes,
}

/// `http_app` is the router serving MCP at `/mcp`.
pub fn http_app(server: MattermostServer, options: &HttpOptions) -> Router {
    let hosts = allowed_hosts(&options.extra_hosts);
    let origins = allowed_origins(&hosts);
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_cancellation_token(options.shutdown.clone())
        .with_max_request_body_bytes(usize::try_from(MCP_BODY_MAX_BYTES).unwrap_or(usize::MAX));
    // Sessions are kept past rmcp's keep-alive, so that one parked after a
    // quiet spell resumes (a session holds nothing of its own to end).
    let mut config = config;
    let (manager, kept) = keep_sessions(options.sessions, &mut config);
    let service = StreamableHttpService::new(move || Ok(server.clone()), manager, config);
    let bearer = options.bearer.as_ref().map(|t| secret_digest(t.expose()));
    guard(
        Router::new()
            .nest_service("/mcp", service)
            .layer(middleware::from_fn_with_state(kept, track_sessions::<()>))
            .layer(middleware::from_fn_with_state(bearer, require_bearer)),
    )
}

/// `serve_http` serves [`http_app`] on `listener` until `stop` completes,
/// then closes every session and waits for open requests to finish.
pub async fn serve_http(
    server: MattermostServer,
    listener: tokio::net::TcpListener,
    options: HttpOptions,
    stop: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let shutdown = options.shutdown.clone();
    let app = http_app(server, &options);
    axum::serve(listener.tap_io(porter_mcp::http::send_at_once), app)
        .with_graceful_shutdown(async move {
            stop.await;
            shutdown.cancel();
        })
        .await
}

/// Refuses a request without the operator's bearer token, comparing
/// digests so the time taken says nothing about the token.
async fn require_bearer(
    State(expected): State<Option<[u8; 32]>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(expected) = expected else {
        return next.run(request).await;
    };
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if bearer_token(given).is_some_and(|token| same_digest(&secret_digest(token), &expected)) {
        next.run(request).await
    } else {
        unauthorized("this MCP server needs Authorization: Bearer <PORTER_MCP_HTTP_TOKEN>\n")
    }
}
