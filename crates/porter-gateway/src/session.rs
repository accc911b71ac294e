//! One client session of the gateway: a run. It lists the gateway's own
//! tools and every upstream tool, proxies upstream calls and hands each
//! result to the capture before the client sees it.

use std::sync::{Arc, OnceLock};

use porter_capture::{Found, Keep, Policy};
use porter_inbox::{Incoming, Origin, Owner, RunInfo};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeRequestParams, InitializeResult, JsonObject, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::Gateway;
use crate::access::{Caller, KeyInfo};
use crate::config::{BinaryResults, Grant, Images};
use crate::file::Files;
use crate::upstream::{UpstreamError, split_tool_name};

/// `SHARED_RUN_IDLE` is how long a key's shared run (the run of requests
/// that come without a session) stays open without calls.
pub const SHARED_RUN_IDLE: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// `FILE_TOOL` is the name of the gateway's own file tool.
pub const FILE_TOOL: &str = "File";

/// `Session` is the MCP server one client talks to; its run starts when the
/// client initializes (or, over stdio, when the process starts) and ends
/// when the session is dropped.
pub struct Session {
    gateway: Arc<Gateway>,
    run: OnceLock<(RunInfo, Caller)>,
    /// Whether this session started its run (and so ends it when dropped).
    owns_run: std::sync::atomic::AtomicBool,
}

impl Session {
    /// A session of the local user (stdio): the run starts now, owned by
    /// `local`, with the `default` profile's grants if the config has one,
    /// else the inbox only.
    pub fn local(gateway: Arc<Gateway>) -> Result<Self, porter_inbox::InboxError> {
        let owner = Owner {
            key_name: "local".to_owned(),
            tenant: "local".to_owned(),
        };
        let caller = gateway.local_caller();
        let run = gateway.inbox.start_run(owner)?;
        let session = Self {
            gateway,
            run: OnceLock::new(),
            owns_run: std::sync::atomic::AtomicBool::new(false),
        };
        let _ = session.run.set((run, caller));
        session
            .owns_run
            .store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(session)
    }

    /// A session over HTTP; its run starts when the client initializes, owned
    /// by the API key that authenticated the request.
    #[must_use]
    pub fn remote(gateway: Arc<Gateway>) -> Self {
        Self {
            gateway,
            run: OnceLock::new(),
            owns_run: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// What a tool call of this session carries besides its arguments.
    fn call_context(
        &self,
        context: &RequestContext<RoleServer>,
        run: &RunInfo,
    ) -> crate::context::CallContext {
        crate::context::CallContext {
            redactor: self.gateway.redactor(run.id),
            progress: context
                .meta
                .get_progress_token()
                .map(|token| crate::context::Progress::new(context.peer.clone(), token)),
            cancel: context.ct.clone(),
        }
    }

    /// This session's run. A client that opened a session (`initialize`)
    /// gets a run of its own, started then and ended with the session. A
    /// request without a session (the 2026-07-28 protocol has none: each
    /// request is handled on its own) joins its key's shared run, which
    /// ends after [`SHARED_RUN_IDLE`] without calls.
    fn run(
        &self,
        context: &RequestContext<RoleServer>,
        opens_session: bool,
    ) -> Result<&(RunInfo, Caller), ErrorData> {
        if let Some(run) = self.run.get() {
            return Ok(run);
        }
        let (owner, caller) = match context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<KeyInfo>())
        {
            Some(key) => (
                key.owner(),
                Caller::Model {
                    grants: key.grants.clone(),
                    volumes: key.volumes.clone(),
                },
            ),
            None => (
                Owner {
                    key_name: "local".to_owned(),
                    tenant: "local".to_owned(),
                },
                self.gateway.local_caller(),
            ),
        };
        let failed = |e: porter_inbox::InboxError| {
            tracing::error!(error = %e, "a run could not be started");
            ErrorData::internal_error("the gateway could not start a run for this session", None)
        };
        // The client's name, so that a person can tell runs apart ("Claude
        // Desktop · fetch · 14:02"): as it gave it at `initialize`, or as
        // the request's `_meta` gives it when there is no session
        // (2026-07-28; the transport's stand-in peer info is not the client's).
        let client = if opens_session {
            context
                .peer
                .peer_info()
                .map(|info| info.client_info.clone())
        } else {
            context.meta.client_info()
        }
        .map(|named| named.title.unwrap_or(named.name));
        let run = if opens_session {
            let run = self
                .gateway
                .inbox
                .start_client_run(owner, client.as_deref())
                .map_err(failed)?;
            self.owns_run
                .store(true, std::sync::atomic::Ordering::Relaxed);
            tracing::info!(run = %run.id, owner = %run.owner.key_name, "run started");
            run
        } else {
            self.gateway
                .shared_run(owner, client.as_deref())
                .map_err(failed)?
        };
        let _ = self.run.set((run, caller));
        self.run
            .get()
            .ok_or_else(|| ErrorData::internal_error("the run was not recorded", None))
    }

    async fn call_upstream(
        &self,
        run: &RunInfo,
        server: &str,
        tool: &str,
        arguments: Option<JsonObject>,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let Some(config) = self.gateway.upstreams.config(server) else {
            return CallToolResult::error(vec![ContentBlock::text(format!(
                "no upstream server is named {server:?}; list the tools again to see which exist"
            ))]);
        };
        let policy = Policy {
            capture_base64: config.binary_results == BinaryResults::Capture,
            images_view: config.images == Images::View,
        };
        let call = serde_json::json!({
            "tool": format!("mcp__{server}__{tool}"),
            "arguments": arguments.clone().unwrap_or_default(),
        })
        .to_string();
        let fallback_name = fallback_name(arguments.as_ref(), tool);
        let value = match self
            .gateway
            .upstreams
            .call(server, tool, arguments, context)
            .await
        {
            Ok(value) => value,
            Err(UpstreamError::Cancelled) => {
                return CallToolResult::error(vec![ContentBlock::text("the call was cancelled")]);
            }
            Err(error) => {
                return CallToolResult::error(vec![ContentBlock::text(format!(
                    "{error}. The gateway starts the server again on the next call; if it keeps \
                     failing, check the server's command or URL in the gateway's config."
                ))]);
            }
        };
        let keeper = InboxKeep {
            inbox: self.gateway.inbox.clone(),
            run: run.id,
            origin: Origin::Mcp {
                server: server.to_owned(),
                tool: tool.to_owned(),
            },
            call,
            fallback_name,
        };
        let output_schema = if value.get("structuredContent").is_some() {
            self.gateway.upstreams.output_schema(server, tool).await
        } else {
            None
        };
        let captured = tokio::task::spawn_blocking(move || {
            let mut value = value;
            porter_capture::capture_result(&mut value, policy, output_schema.as_deref(), &keeper);
            value
        })
        .await;
        let value = match captured {
            Ok(value) => value,
            Err(error) => {
                tracing::error!(%error, server, tool, "the capture of a result failed");
                return CallToolResult::error(vec![ContentBlock::text(
                    "the gateway failed while keeping this result's files; the result is withheld \
                     so that no bytes reach you. Try the call again.",
                )]);
            }
        };
        let read = serde_json::from_value::<CallToolResult>(value).map(|mut result| {
            // A legacy upstream sends no resultType; this gateway's client may
            // speak a protocol that needs it (rmcp strips it for legacy peers).
            if result.result_type.is_none() {
                result.result_type = Some(rmcp::model::ResultType::COMPLETE);
            }
            result
        });
        read.unwrap_or_else(|error| unreadable_result(server, tool, &error))
    }
}

/// What the client gets for an upstream result that does not fit the MCP
/// schema: the result withheld, and why.
fn unreadable_result(server: &str, tool: &str, error: &serde_json::Error) -> CallToolResult {
    let reason = crate::upstream::bounded_reason(&error.to_string());
    tracing::warn!(error = %reason, server, tool, "an upstream result did not fit the MCP schema");
    CallToolResult::error(vec![ContentBlock::text(format!(
        "the upstream server {server:?} answered with a result the gateway could not read \
         ({reason}); it is withheld."
    ))])
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some((run, _)) = self.run.get()
            && self.owns_run.load(std::sync::atomic::Ordering::Relaxed)
        {
            if let Err(error) = self.gateway.inbox.end_run(run.id) {
                tracing::warn!(run = %run.id, %error, "the end of a run was not recorded");
            }
            self.gateway.forget_redactor(run.id);
        }
    }
}

/// The name a kept file takes when its result gives none: the call's own
/// `fileName`/`filename`/`name`/`path` argument, else the tool's name.
fn fallback_name(arguments: Option<&JsonObject>, tool: &str) -> String {
    arguments
        .and_then(|args| {
            ["fileName", "filename", "name", "path"]
                .iter()
                .find_map(|key| args.get(*key).and_then(serde_json::Value::as_str))
        })
        .filter(|name| !name.trim().is_empty())
        .unwrap_or(tool)
        .to_owned()
}

/// `InboxKeep` keeps the files one upstream result carries in the run's
/// inbox.
struct InboxKeep {
    inbox: Arc<porter_inbox::Inbox>,
    run: porter_inbox::RunId,
    origin: Origin,
    call: String,
    fallback_name: String,
}

impl Keep for InboxKeep {
    fn keep(&self, found: Found<'_>) -> String {
        let incoming = Incoming {
            name: found.name.map(str::to_owned),
            fallback_name: self.fallback_name.clone(),
            dir: None,
            declared_type: found.declared_type.map(str::to_owned),
            origin: self.origin.clone(),
            call: self.call.clone(),
        };
        match self.inbox.keep_bytes(self.run, incoming, found.bytes) {
            Ok(outcome) => outcome.stub(),
            Err(error) => {
                tracing::error!(run = %self.run, %error, "a file could not be kept");
                porter_inbox::Outcome::NotKept {
                    why: "the inbox could not store it".to_owned(),
                    media_type: found
                        .declared_type
                        .unwrap_or("application/octet-stream")
                        .to_owned(),
                    size: found.bytes.len() as u64,
                    origin: self.origin.to_string(),
                }
                .stub()
            }
        }
    }
}

impl ServerHandler for Session {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("porter-gateway", env!("CARGO_PKG_VERSION"))
                    .with_title("porter gateway"),
            )
            .with_instructions(
                "Tools named mcp__<server>__<tool> are other MCP servers' tools, called through \
                 this gateway. Files their results carry are kept in this run's inbox and shown \
                 as one line: [file: volume:inbox:<path> · type · size · sha256 · from origin]. \
                 Use the File tool with that reference to look at a file (op read), its details \
                 (op stat), the inbox's list (op ls), or to keep a copy in a volume (op keep). \
                 HTTP makes one request and WebFetch reads a page as Markdown; a binary body they \
                 fetch lands in the inbox the same way. File extract turns a document into \
                 Markdown beside it; File import adds it to the searchable Documents; Git works \
                 on repositories in volumes.",
            )
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        self.run(&context, true)?;
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = vec![Files::tool(), crate::documents::DocumentsTool::tool()];
        tools.extend(crate::web::Web::tools());
        tools.push(crate::git::GitTool::tool());
        tools.extend(self.gateway.upstreams.tools().await);
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let (run, caller) = self.run(&context, false)?;
        let name = request.name.as_ref();
        if name == FILE_TOOL {
            let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default());
            let cx = self.call_context(&context, run);
            return Ok(self
                .gateway
                .files
                .call_with(caller, run, arguments, &cx)
                .await
                .into());
        }
        if name == crate::documents::DOCUMENTS_TOOL {
            let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default());
            let reader = crate::documents::Reader::of(caller, run);
            return Ok(self.gateway.documents.call(&reader, arguments).await.into());
        }
        if crate::web::Web::handles(name) {
            let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default());
            let cx = self.call_context(&context, run);
            return Ok(self
                .gateway
                .web
                .call(name, caller, run, arguments, &cx)
                .await
                .into());
        }
        if name == crate::git::GIT_TOOL {
            let Caller::Model { grants, .. } = caller else {
                return Ok(CallToolResult::error(vec![ContentBlock::text(
                    "the Git tool is open only to a run's own model",
                )])
                .into());
            };
            if !grants.contains(&Grant::Git) {
                return Ok(CallToolResult::error(vec![ContentBlock::text(
                    "this run may not use Git: its profile has no Git grant; an operator can \
                     add Git to the profile's grants in the gateway's config",
                )])
                .into());
            }
            let remote = self.gateway.config.git_remote_of(&run.owner.key_name);
            let arguments = serde_json::Value::Object(request.arguments.unwrap_or_default());
            return Ok(self
                .gateway
                .git
                .call(caller, &run.owner, &remote, &run.id.to_string(), arguments)
                .await
                .into());
        }
        if let Some((server, tool)) = split_tool_name(name) {
            return Ok(self
                .call_upstream(run, server, tool, request.arguments, &context)
                .await
                .into());
        }
        Ok(CallToolResult::error(vec![ContentBlock::text(format!(
            "this gateway has no tool named {name:?}; its tools are File, Documents, HTTP, WebFetch, Git and \
             mcp__<server>__<tool> for each upstream server's tools (list the tools to see them)"
        ))])
        .into())
    }
}

impl Gateway {
    /// The redactor of `run`: the secrets (URL query values) its calls
    /// have seen, masked in every later text of the run.
    #[must_use]
    pub fn redactor(&self, run: porter_inbox::RunId) -> porter_net::Redactor {
        self.redactors
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(run)
            .or_default()
            .clone()
    }

    /// Forgets the redactor of a run that ended: no call of it comes again.
    fn forget_redactor(&self, run: porter_inbox::RunId) {
        self.redactors
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&run);
    }

    /// The open shared run of `owner` and `client` (requests without a
    /// session: one run per key and client name), started when it has none
    /// or its last one went idle.
    pub fn shared_run(
        &self,
        owner: Owner,
        client: Option<&str>,
    ) -> Result<RunInfo, porter_inbox::InboxError> {
        let now = std::time::Instant::now();
        let mut runs = self
            .shared_runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let slot = (
            owner.key_name.clone(),
            owner.tenant.clone(),
            client.and_then(porter_inbox::clean_client_name),
        );
        if let Some((run, last)) = runs.get_mut(&slot)
            && now.duration_since(*last) < SHARED_RUN_IDLE
        {
            *last = now;
            return Ok(run.clone());
        }
        let run = self.inbox.start_client_run(owner, client)?;
        tracing::info!(run = %run.id, owner = %run.owner.key_name, "shared run started");
        if let Some((old, _)) = runs.insert(slot, (run.clone(), now)) {
            self.inbox.end_run(old.id)?;
        }
        Ok(run)
    }

    /// Ends the shared runs idle for [`SHARED_RUN_IDLE`] or longer.
    pub fn end_idle_shared_runs(&self) {
        let now = std::time::Instant::now();
        let mut runs = self
            .shared_runs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        runs.retain(|_, (run, last)| {
            let idle = now.duration_since(*last) >= SHARED_RUN_IDLE;
            if idle {
                if let Err(error) = self.inbox.end_run(run.id) {
                    tracing::warn!(run = %run.id, %error, "the end of a shared run was not recorded");
                }
                self.forget_redactor(run.id);
            }
            !idle
        });
    }

    /// The grants of the local user (stdio, or HTTP with no keys configured):
    /// the `default` profile's if the config has one, else the inbox and the
    /// web (public hosts only, by the default network policy).
    #[must_use]
    pub fn local_caller(&self) -> Caller {
        match self.config.profiles.get("default") {
            Some(profile) => Caller::Model {
                grants: profile.grants.clone(),
                volumes: profile.volumes.clone(),
            },
            None => Caller::Model {
                grants: vec![Grant::File, Grant::Http],
                volumes: Vec::new(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_a_name_takes_the_calls_name_argument_first() {
        let args: JsonObject = serde_json::from_value(serde_json::json!({
            "path": "/tmp/x/report.pdf", "name": "Q3 report.pdf"
        }))
        .expect("an object");
        assert_eq!(fallback_name(Some(&args), "get_file"), "Q3 report.pdf");
        let args: JsonObject =
            serde_json::from_value(serde_json::json!({ "path": "a/b.txt", "count": 3 }))
                .expect("an object");
        assert_eq!(fallback_name(Some(&args), "get_file"), "a/b.txt");
        let args: JsonObject =
            serde_json::from_value(serde_json::json!({ "name": "  " })).expect("an object");
        assert_eq!(
            fallback_name(Some(&args), "get-tiny-image"),
            "get-tiny-image"
        );
        assert_eq!(fallback_name(None, "echo"), "echo");
    }

    #[test]
    fn a_result_the_gateway_cannot_read_is_withheld_without_quoting_its_strings() {
        // What a file's base64 looks like to the gateway: a long string.
        let encoded = "iVBORw0KGgoAAAANSUhEUgAA".repeat(400);
        let unreadable = serde_json::json!({"content": [], "isError": encoded});
        let error = serde_json::from_value::<CallToolResult>(unreadable)
            .expect_err("isError must be a boolean");
        let result = unreadable_result("files", "read", &error);
        let text = serde_json::to_string(&result).expect("serialises");
        assert!(
            text.len() < 1000,
            "{} characters reach the client",
            text.len()
        );
        assert!(text.contains("could not read"), "{text}");
        assert!(!text.contains(&encoded[..600]));
    }
}
