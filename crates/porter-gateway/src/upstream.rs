//! The upstream MCP servers: one client connection per configured server,
//! started on first use and started again when it has died. Calls are
//! proxied with the client's cancellation and progress passed through, and
//! their results come back as the raw JSON the upstream sent, so that block
//! types rmcp does not know still reach the capture (which names them).

use std::collections::{BTreeMap, HashMap};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientConfig,
    ClientRequest, Implementation, JsonObject, ProgressNotificationParam, ProgressToken,
    ServerResult, Tool,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestContext, RunningService};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{ClientHandler, Peer, RoleClient, RoleServer, ServiceExt};
use tokio::process::{Child, Command};

use crate::config::McpServer;

/// `MAX_UPSTREAM_MESSAGE_BYTES` is the longest message an upstream may send:
/// a 64 MiB file as base64 inside JSON is about 86 MiB, and rmcp's default
/// (16 MiB) would drop such a line.
pub const MAX_UPSTREAM_MESSAGE_BYTES: usize = 128 * 1024 * 1024;

/// `PROGRESS_SETTLE` is how long a call with a progress token waits after
/// the upstream's answer for the relay to pass on the last notifications.
const PROGRESS_SETTLE: std::time::Duration = std::time::Duration::from_millis(25);

/// `TOOL_PREFIX` starts every upstream tool's name as the gateway lists it.
pub const TOOL_PREFIX: &str = "mcp__";

/// `UpstreamError` is a call that did not reach an answer from the upstream.
#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    #[error("no upstream server is named {0:?}")]
    NoServer(String),
    #[error("the upstream server {server:?} could not be started: {reason}")]
    Start { server: String, reason: String },
    #[error("the upstream server {server:?} failed the call: {reason}")]
    Call { server: String, reason: String },
    #[error("the call was cancelled")]
    Cancelled,
}

/// `REASON_CHARS` is the most of an upstream's own error text the gateway
/// passes on or logs: an error message, or serde's account of a result it
/// cannot read, may quote a whole string of the result, a file's base64
/// among them.
const REASON_CHARS: usize = 400;

/// An upstream-given reason cut to [`REASON_CHARS`], marked with `…` where
/// it was cut.
pub(crate) fn bounded_reason(reason: &str) -> String {
    match reason.char_indices().nth(REASON_CHARS) {
        Some((at, _)) => format!("{}…", &reason[..at]),
        None => reason.to_owned(),
    }
}

/// Where progress from an upstream goes: the client that asked, under the
/// token it chose.
type ProgressRoutes = Arc<Mutex<HashMap<ProgressToken, (Peer<RoleServer>, ProgressToken)>>>;

/// `Relay` is the gateway's client side towards one upstream: it passes the
/// upstream's progress notifications on to the client whose call they are for.
#[derive(Clone)]
struct Relay {
    routes: ProgressRoutes,
}

impl ClientHandler for Relay {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let route = self
            .routes
            .lock()
            .ok()
            .and_then(|routes| routes.get(&params.progress_token).cloned());
        if let Some((peer, token)) = route {
            let mut params = params;
            params.progress_token = token;
            if let Err(error) = peer.notify_progress(params).await {
                tracing::debug!(%error, "the client went away before a progress notification");
            }
        }
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            rmcp::model::ClientCapabilities::default(),
            Implementation::new("porter-gateway", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// One live connection to an upstream.
struct Connection {
    service: RunningService<RoleClient, Relay>,
    /// The child process of a stdio upstream, killed when the connection is
    /// dropped.
    _child: Option<Child>,
}

/// One configured upstream server.
struct Upstream {
    name: String,
    config: McpServer,
    connection: tokio::sync::Mutex<Option<Arc<Connection>>>,
    tools: tokio::sync::Mutex<Option<Vec<Tool>>>,
}

/// `Upstreams` is every configured upstream server.
pub struct Upstreams {
    servers: BTreeMap<String, Upstream>,
    routes: ProgressRoutes,
}

impl Upstreams {
    /// Nothing is started here: each server starts on its first use.
    #[must_use]
    pub fn new(servers: &BTreeMap<String, McpServer>) -> Self {
        let servers = servers
            .iter()
            .map(|(name, config)| {
                (
                    name.clone(),
                    Upstream {
                        name: name.clone(),
                        config: config.clone(),
                        connection: tokio::sync::Mutex::new(None),
                        tools: tokio::sync::Mutex::new(None),
                    },
                )
            })
            .collect();
        Self {
            servers,
            routes: Arc::default(),
        }
    }

    /// The configuration of server `name`.
    #[must_use]
    pub fn config(&self, name: &str) -> Option<&McpServer> {
        self.servers.get(name).map(|u| &u.config)
    }

    /// Every upstream tool, named `mcp__<server>__<tool>`. A server that
    /// cannot be reached is logged and left out, so one broken upstream does
    /// not hide the others.
    pub async fn tools(&self) -> Vec<Tool> {
        let lists = futures_util::future::join_all(self.servers.values().map(|upstream| async {
            match upstream.tools(&self.routes).await {
                Ok(tools) => tools,
                Err(error) => {
                    tracing::warn!(server = %upstream.name, %error, "upstream tools not listed");
                    Vec::new()
                }
            }
        }))
        .await;
        lists.into_iter().flatten().collect()
    }

    /// The `outputSchema` tool `tool` of `server` declared, if it declared
    /// one: what its results must still fit once their files are stubs.
    /// Lists the server's tools if this connection has not yet.
    pub async fn output_schema(&self, server: &str, tool: &str) -> Option<Arc<JsonObject>> {
        let upstream = self.servers.get(server)?;
        let tools = match upstream.tools(&self.routes).await {
            Ok(tools) => tools,
            Err(error) => {
                tracing::warn!(server, %error, "upstream tools not listed for the output schema");
                return None;
            }
        };
        let name = format!("{TOOL_PREFIX}{server}__{tool}");
        tools
            .into_iter()
            .find(|listed| listed.name == name)
            .and_then(|listed| listed.output_schema)
    }

    /// Calls `tool` on `server` and returns the result's JSON as the upstream
    /// sent it. The client's cancellation (`context.ct`) cancels the upstream
    /// call; the client's progress token receives the upstream's progress.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<JsonObject>,
        context: &RequestContext<RoleServer>,
    ) -> Result<serde_json::Value, UpstreamError> {
        let upstream = self
            .servers
            .get(server)
            .ok_or_else(|| UpstreamError::NoServer(server.to_owned()))?;
        // A request that could not even be sent (the upstream died since the
        // last call) is sent once more on a fresh connection: it never
        // reached the old one, so nothing runs twice.
        let mut attempt = 0;
        let (connection, peer, handle) = loop {
            let connection = upstream.connection(&self.routes).await?;
            let peer = connection.service.peer().clone();
            let mut params = CallToolRequestParams::new(tool.to_owned());
            params.arguments = arguments.clone();
            let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
            match peer
                .send_request_with_option(request, PeerRequestOptions::no_options())
                .await
            {
                Ok(handle) => break (connection, peer, handle),
                Err(error) if attempt == 0 => {
                    tracing::warn!(server, %error, "upstream gone before the call was sent; starting it again");
                    upstream.forget(&connection).await;
                    attempt += 1;
                }
                Err(error) => return Err(upstream.failed(&error)),
            }
        };
        let id = handle.id.clone();
        let client_token = context.meta.get_progress_token();
        if let Some(token) = &client_token
            && let Ok(mut routes) = self.routes.lock()
        {
            routes.insert(
                handle.progress_token.clone(),
                (context.peer.clone(), token.clone()),
            );
        }
        let upstream_token = handle.progress_token.clone();
        let outcome = tokio::select! {
            answer = handle.await_response() => Some(answer),
            () = context.ct.cancelled() => None,
        };
        if client_token.is_some() {
            // rmcp hands each upstream notification to the relay on a task of
            // its own, so the last progress the upstream sent before its
            // answer may not have been passed on yet: give it a moment, so the
            // client sees every step before the result.
            tokio::time::sleep(PROGRESS_SETTLE).await;
            if let Ok(mut routes) = self.routes.lock() {
                routes.remove(&upstream_token);
            }
        }
        let Some(answer) = outcome else {
            let cancel = CancelledNotificationParam::new(
                Some(id),
                Some("the client cancelled the call".to_owned()),
            );
            if let Err(error) = peer.notify_cancelled(cancel).await {
                tracing::debug!(%error, server, "upstream gone before the cancellation");
            }
            return Err(UpstreamError::Cancelled);
        };
        let answer = match answer {
            Ok(answer) => answer,
            Err(error) => {
                if matches!(
                    error,
                    rmcp::service::ServiceError::TransportClosed
                        | rmcp::service::ServiceError::TransportSend(_)
                ) {
                    upstream.forget(&connection).await;
                }
                return Err(upstream.failed(&error));
            }
        };
        let value = match answer {
            ServerResult::CallToolResult(result) => serde_json::to_value(result),
            ServerResult::CustomResult(custom) => Ok(custom.0),
            other => serde_json::to_value(other),
        };
        value.map_err(|e| UpstreamError::Call {
            server: server.to_owned(),
            reason: format!("its answer could not be read: {e}"),
        })
    }
}

impl Upstream {
    /// The live connection, started (again) when there is none or it died.
    async fn connection(&self, routes: &ProgressRoutes) -> Result<Arc<Connection>, UpstreamError> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref() {
            if !connection.service.is_closed() {
                return Ok(connection.clone());
            }
            tracing::warn!(server = %self.name, "upstream connection closed; starting it again");
            *self.tools.lock().await = None;
        }
        let connection = Arc::new(self.connect(routes).await?);
        *slot = Some(connection.clone());
        Ok(connection)
    }

    /// Drops `connection` if it is still the current one, so that the next
    /// call starts the server again.
    async fn forget(&self, connection: &Arc<Connection>) {
        let mut slot = self.connection.lock().await;
        if slot
            .as_ref()
            .is_some_and(|current| Arc::ptr_eq(current, connection))
        {
            *slot = None;
            *self.tools.lock().await = None;
        }
    }

    async fn connect(&self, routes: &ProgressRoutes) -> Result<Connection, UpstreamError> {
        let relay = Relay {
            routes: routes.clone(),
        };
        let start_error = |reason: String| UpstreamError::Start {
            server: self.name.clone(),
            reason,
        };
        if let Some(program) = &self.config.command {
            let mut command = Command::new(program);
            command
                .args(&self.config.args)
                .envs(&self.config.env)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .kill_on_drop(true);
            let mut child = command
                .spawn()
                .map_err(|e| start_error(format!("running {program:?} failed: {e}")))?;
            let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                return Err(start_error(
                    "its standard input and output were not piped".to_owned(),
                ));
            };
            let transport = AsyncRwTransport::<RoleClient, _, _>::new(stdout, stdin)
                .with_max_line_length(MAX_UPSTREAM_MESSAGE_BYTES);
            let service = relay
                .serve(transport)
                .await
                .map_err(|e| start_error(format!("the MCP handshake failed: {e}")))?;
            Ok(Connection {
                service,
                _child: Some(child),
            })
        } else if let Some(url) = &self.config.url {
            use rmcp::transport::StreamableHttpClientTransport;
            use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
            let mut config = StreamableHttpClientTransportConfig::with_uri(url.clone());
            config.max_sse_event_size = MAX_UPSTREAM_MESSAGE_BYTES;
            config.max_json_response_size = MAX_UPSTREAM_MESSAGE_BYTES;
            let mut headers = HashMap::new();
            for (name, value) in &self.config.headers {
                let name = axum::http::HeaderName::from_bytes(name.as_bytes())
                    .map_err(|_| start_error(format!("the header name {name:?} is not valid")))?;
                let value = axum::http::HeaderValue::from_str(value)
                    .map_err(|_| start_error(format!("the value of header {name} is not valid")))?;
                headers.insert(name, value);
            }
            config = config.custom_headers(headers);
            let transport = StreamableHttpClientTransport::from_config(config);
            let service = relay
                .serve(transport)
                .await
                .map_err(|e| start_error(format!("the MCP handshake with {url} failed: {e}")))?;
            Ok(Connection {
                service,
                _child: None,
            })
        } else {
            Err(start_error("it has neither a command nor a url".to_owned()))
        }
    }

    /// The server's tools under their gateway names, listed once per
    /// connection.
    async fn tools(&self, routes: &ProgressRoutes) -> Result<Vec<Tool>, UpstreamError> {
        let connection = self.connection(routes).await?;
        let mut cached = self.tools.lock().await;
        if let Some(tools) = cached.as_ref() {
            return Ok(tools.clone());
        }
        let listed = connection
            .service
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| self.failed(&e))?;
        let tools: Vec<Tool> = listed
            .into_iter()
            .map(|mut tool| {
                tool.name = format!("{TOOL_PREFIX}{}__{}", self.name, tool.name).into();
                tool
            })
            .collect();
        *cached = Some(tools.clone());
        Ok(tools)
    }

    fn failed(&self, error: &rmcp::service::ServiceError) -> UpstreamError {
        UpstreamError::Call {
            server: self.name.clone(),
            reason: bounded_reason(&error.to_string()),
        }
    }
}

/// Splits a gateway tool name `mcp__<server>__<tool>` into server and tool.
#[must_use]
pub fn split_tool_name(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix(TOOL_PREFIX)?;
    let (server, tool) = rest.split_once("__")?;
    (!server.is_empty() && !tool.is_empty()).then_some((server, tool))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gateway_tool_name_splits_into_server_and_tool() {
        let cases = [
            (
                "mcp__everything__get-tiny-image",
                Some(("everything", "get-tiny-image")),
            ),
            ("mcp__files__get__nested", Some(("files", "get__nested"))),
            ("mcp____tool", None),
            ("mcp__server__", None),
            ("File", None),
            ("mcp__noseparator", None),
        ];
        for (name, expected) in cases {
            assert_eq!(split_tool_name(name), expected, "{name}");
        }
    }

    #[test]
    fn an_upstream_reason_is_cut_to_its_limit_on_a_character_boundary() {
        let long = "é".repeat(REASON_CHARS + 1);
        let cut = bounded_reason(&long);
        assert_eq!(cut.chars().count(), REASON_CHARS + 1);
        assert!(cut.ends_with("é…"));
        let exact = "x".repeat(REASON_CHARS);
        assert_eq!(bounded_reason(&exact), exact);
    }
}
