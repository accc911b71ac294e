//! One client session of the gateway: a run. It lists the gateway's own
//! tools and every upstream tool, proxies upstream calls and hands each
//! result to the capture before the client sees it.

#![expect(
    deprecated,
    reason = "logging and resources/subscribe are deprecated by SEP-2577 but are part of the \
              protocol revisions the gateway serves"
)]

use std::sync::{Arc, OnceLock};

use porter_capture::{Found, Keep, Policy, Staging};
use porter_inbox::{Incoming, Origin, Owner, RunInfo};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities,
    CompleteRequestParams, CompleteResult, ContentBlock, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, Implementation, InitializeRequestParams, InitializeResult, JsonObject,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Reference, ServerCapabilities, ServerConfig, SetLevelRequestParams,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::Gateway;
use crate::access::{Caller, KeyInfo};
use crate::config::{BinaryResults, Grant, Images};
use crate::upstream::{
    Answers, ClientLink, RelayCapture, Relayed, UpstreamError, Upstreams, resource_uri,
    split_resource_uri, split_tool_name,
};

/// `SHARED_RUN_IDLE` is how long a key's shared run (the run of requests
/// that come without a session) stays open without calls.
pub const SHARED_RUN_IDLE: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// `Session` is the MCP server one client talks to; its run starts when the
/// client initializes (or, over stdio, when the process starts) and ends
/// when the session is dropped.
pub struct Session {
    gateway: Arc<Gateway>,
    run: OnceLock<(RunInfo, Caller)>,
    /// Whether this session started its run (and so ends it when dropped).
    owns_run: std::sync::atomic::AtomicBool,
    /// Whether this session resumed a session parked after a quiet spell or
    /// opened on another replica: it has the run's upstream connections of
    /// its own but leaves ending the run to whoever started it (the kept
    /// sessions, or the replica that opened it).
    resumed: std::sync::atomic::AtomicBool,
    /// The upstream connections of this session's own (a session with a
    /// run of its own), started on first use and closed with the session.
    own_upstreams: OnceLock<Arc<Upstreams>>,
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
            resumed: std::sync::atomic::AtomicBool::new(false),
            own_upstreams: OnceLock::new(),
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
            resumed: std::sync::atomic::AtomicBool::new(false),
            own_upstreams: OnceLock::new(),
        }
    }

    /// The upstream connections this session's requests go to. A session
    /// with a run of its own has connections of its own: the upstreams are
    /// told what its client can be asked (sampling, elicitation), and what
    /// they ask and tell reaches this client and no other. A request
    /// without a session uses the gateway's shared connections, on which
    /// upstreams cannot ask anything.
    fn upstreams(&self, context: &RequestContext<RoleServer>) -> Arc<Upstreams> {
        let Some((run, _)) = self.run.get().filter(|_| {
            self.owns_run.load(std::sync::atomic::Ordering::Relaxed)
                || self.resumed.load(std::sync::atomic::Ordering::Relaxed)
        }) else {
            return self.gateway.upstreams.clone();
        };
        self.own_upstreams
            .get_or_init(|| {
                let link = ClientLink {
                    peer: context.peer.clone(),
                    capabilities: askable(context),
                    redactor: self.gateway.redactor(run.id),
                    capture: relay_capture(&self.gateway, run.id),
                };
                Arc::new(Upstreams::for_client(
                    &self.gateway.config.mcp_servers,
                    link,
                    is_modern(context),
                ))
            })
            .clone()
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
        let (owner, caller) = self.owner_and_caller(context);
        let failed = |e: porter_inbox::InboxError| {
            tracing::error!(error = %e, "a run could not be started");
            ErrorData::internal_error(
                format!(
                    "the gateway could not start a run for this session: {}",
                    e.reason()
                ),
                None,
            )
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
        let resuming = context
            .extensions
            .get::<rmcp::transport::streamable_http_server::session::SessionRestoreMarker>(
        );
        let run = if let Some(marker) = resuming {
            let run = self.resumed_run(marker.id.as_ref(), &owner)?;
            self.resumed
                .store(true, std::sync::atomic::Ordering::Relaxed);
            tracing::info!(run = %run.id, owner = %run.owner.key_name, "a session resumed (parked after a quiet spell, or opened on another replica)");
            run
        } else if opens_session {
            let run = self
                .gateway
                .inbox
                .start_client_run(owner, client.as_deref())
                .map_err(failed)?;
            self.owns_run
                .store(true, std::sync::atomic::Ordering::Relaxed);
            if let Some(slot) = context
                .extensions
                .get::<axum::http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<crate::replicas::RunSlot>())
            {
                slot.fill(run.id);
            }
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

    /// Who a request comes from: the owner its run gets and what its model
    /// may do. The API key that authenticated it, or the local user.
    fn owner_and_caller(&self, context: &RequestContext<RoleServer>) -> (Owner, Caller) {
        match context
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
        }
    }

    /// The run of a session that another replica opened, for `owner`: the
    /// same answer as for a session that never was when the records do not
    /// link one to it or it belongs to someone else.
    fn resumed_run(&self, session: &str, owner: &Owner) -> Result<RunInfo, ErrorData> {
        let unknown = || {
            ErrorData::invalid_request(
                "this session is not known to the gateway; start a new one",
                None,
            )
        };
        let inbox = &self.gateway.inbox;
        let run = self
            .gateway
            .run_of_session(session)
            .and_then(|run| run.map(|id| inbox.run(id)).transpose())
            .map_err(|error| {
                tracing::error!(%error, "a session could not be resumed");
                ErrorData::internal_error(
                    "the gateway could not read this session's run from its records; try again",
                    None,
                )
            })?
            .flatten()
            .ok_or_else(unknown)?;
        if run.owner != *owner {
            tracing::warn!(run = %run.id, "a session was presented with another owner's key; refused");
            return Err(unknown());
        }
        Ok(run)
    }

    async fn call_upstream(
        &self,
        run: &RunInfo,
        server: &str,
        tool: &str,
        arguments: Option<JsonObject>,
        answers: Answers,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let upstreams = self.upstreams(context);
        let Some(config) = upstreams.config(server) else {
            return CallToolResult::error(vec![ContentBlock::text(format!(
                "no upstream server is named {server:?}; list the tools again to see which exist"
            ))])
            .into();
        };
        let policy = policy_of(config);
        let (value, arguments) = match upstreams
            .call(server, tool, arguments, answers, context)
            .await
        {
            Ok(answered) => answered,
            Err(UpstreamError::Cancelled) => {
                return CallToolResult::error(vec![ContentBlock::text("the call was cancelled")])
                    .into();
            }
            Err(error @ UpstreamError::Refused { .. }) => {
                return CallToolResult::error(vec![ContentBlock::text(
                    self.gateway.redactor(run.id).redact(&error.to_string()),
                )])
                .into();
            }
            Err(error) => {
                return CallToolResult::error(vec![ContentBlock::text(format!(
                    "{error}. The gateway starts the server again on the next call; if it keeps \
                     failing, check the server's command or URL in the gateway's config."
                ))])
                .into();
            }
        };
        let value = self.keep_input_request_files(run, server, value).await;
        if let Some(input_required) = input_required(&value) {
            // The upstream asks the person first (2026-07-28): its questions
            // and sealed state go to the client as they are, and come back
            // with the client's next call of this tool.
            return input_required;
        }
        if !porter_capture::may_change(&value) {
            // Nothing in it to keep (almost every call): forwarded as it
            // came, without the capture's walk or a thread for it.
            return typed_result(server, tool, value);
        }
        let call = serde_json::json!({
            "tool": format!("mcp__{server}__{tool}"),
            "arguments": arguments.as_ref().unwrap_or(&JsonObject::new()),
        })
        .to_string();
        let keeper = InboxKeep::mcp(
            &self.gateway.inbox,
            run.id,
            server,
            tool,
            call,
            fallback_name(arguments.as_ref(), tool),
        );
        let output_schema = if value.get("structuredContent").is_some() {
            upstreams.output_schema(server, tool).await
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
                )])
                .into();
            }
        };
        typed_result(server, tool, value)
    }
}

/// An upstream's result, captured or left as it was, as the client gets it.
fn typed_result(server: &str, tool: &str, value: serde_json::Value) -> CallToolResponse {
    match serde_json::from_value::<CallToolResult>(value) {
        Ok(result) => completed(result).into(),
        Err(error) => unreadable_result(server, tool, &error).into(),
    }
}

/// How the files in what an upstream sends a session's client outside a
/// result are kept in `run`'s inbox: a sampling request's messages as a
/// prompt's (under the server's policy); a question or a log message as
/// structured content with long base64 captured too (neither is meant to
/// carry a file, so one found in them is kept like any other).
fn relay_capture(gateway: &Gateway, run: porter_inbox::RunId) -> RelayCapture {
    let inbox = gateway.inbox.clone();
    let servers = gateway.config.mcp_servers.clone();
    Arc::new(move |server, what, value| {
        let fallback_name = match what {
            Relayed::Sampling => "sampling",
            Relayed::Question => "question",
            Relayed::Log => "log",
        };
        let keeper = InboxKeep::mcp(
            &inbox,
            run,
            server,
            what.method(),
            serde_json::json!({ "method": what.method() }).to_string(),
            fallback_name.to_owned(),
        );
        match what {
            Relayed::Sampling => {
                let policy = servers.get(server).map(policy_of).unwrap_or_default();
                capture_messages(value, policy, &keeper);
            }
            Relayed::Log | Relayed::Question => {
                let policy = Policy {
                    capture_base64: true,
                    images_view: false,
                };
                porter_capture::capture_result(value, policy, None, &keeper);
            }
        }
    })
}

impl Session {
    /// An upstream's answer, with the files in the requests of an "input
    /// required" answer (2026-07-28: its sampling requests and questions,
    /// which the client answers) kept in the run's inbox and replaced by
    /// their stubs, as when they are relayed during a call. Any other answer
    /// is returned as it is.
    async fn keep_input_request_files(
        &self,
        run: &RunInfo,
        server: &str,
        value: serde_json::Value,
    ) -> serde_json::Value {
        if value.get("resultType").and_then(serde_json::Value::as_str) != Some("input_required") {
            return value;
        }
        let capture = relay_capture(&self.gateway, run.id);
        let server = server.to_owned();
        let kept = tokio::task::spawn_blocking(move || {
            let mut value = value;
            if let Some(requests) = value
                .get_mut("inputRequests")
                .and_then(serde_json::Value::as_object_mut)
            {
                for request in requests.values_mut() {
                    let what = match request.get("method").and_then(serde_json::Value::as_str) {
                        Some("sampling/createMessage") => Relayed::Sampling,
                        Some("elicitation/create") => Relayed::Question,
                        _ => continue,
                    };
                    if let Some(params) = request.get_mut("params") {
                        capture(&server, what, params);
                    }
                }
            }
            value
        })
        .await;
        kept.unwrap_or_else(|error| {
            tracing::error!(%error, "the files of an input-required answer were not kept");
            // Nothing of it is passed on: an error result in its place.
            serde_json::json!({
                "isError": true,
                "content": [{
                    "type": "text",
                    "text": "the gateway failed while keeping the files of the upstream's \
                             questions; they are withheld so that no bytes reach you. Try again."
                }]
            })
        })
    }
}

/// `Asked` is a request besides a tool call whose answer an upstream's
/// files may be in: its method (which the kept files name as their
/// origin) and the words of what the client reads when its answer is
/// withheld.
struct Asked {
    /// The client's method.
    method: &'static str,
    /// What the client asked for.
    noun: &'static str,
    /// What of the answer the gateway keeps.
    kept: &'static str,
    /// What the client may do when keeping it failed.
    again: &'static str,
}

/// `READ_RESOURCE` is `resources/read`.
const READ_RESOURCE: Asked = Asked {
    method: "resources/read",
    noun: "resource",
    kept: "this resource",
    again: "Read it again.",
};

/// `GET_PROMPT` is `prompts/get`.
const GET_PROMPT: Asked = Asked {
    method: "prompts/get",
    noun: "prompt",
    kept: "this prompt's files",
    again: "Get it again.",
};

impl Session {
    /// What the client gets for `server`'s answer `value` to `asked`: an
    /// "input required" answer as it is (the files of its questions kept),
    /// else the result with its files kept by `capture` (on a blocking
    /// thread, through `keeper`) and read as `R`. A result that cannot be
    /// kept or read is withheld, and the client told why.
    async fn pass_on<R, Response>(
        &self,
        run: &RunInfo,
        server: &str,
        asked: &Asked,
        keeper: InboxKeep,
        value: serde_json::Value,
        capture: impl FnOnce(&mut serde_json::Value, &InboxKeep) + Send + 'static,
    ) -> Result<Response, ErrorData>
    where
        R: serde::de::DeserializeOwned + Typed + Into<Response>,
        Response: From<rmcp::model::InputRequiredResult>,
    {
        let value = self.keep_input_request_files(run, server, value).await;
        if let Some(input_required) = input_required_result(&value) {
            return Ok(Response::from(input_required));
        }
        let captured = tokio::task::spawn_blocking(move || {
            let mut value = value;
            capture(&mut value, &keeper);
            value
        })
        .await
        .map_err(|error| {
            tracing::error!(%error, server, "the capture of a {} failed", asked.noun);
            ErrorData::internal_error(
                format!(
                    "the gateway failed while keeping {}; it is withheld so that no bytes reach \
                     you. {}",
                    asked.kept, asked.again
                ),
                None,
            )
        })?;
        let result = serde_json::from_value::<R>(captured).map_err(|error| {
            let reason = crate::upstream::bounded_reason(&error.to_string());
            ErrorData::internal_error(
                format!(
                    "the upstream server {server:?} answered with a {} the gateway could not \
                     read ({reason}); it is withheld.",
                    asked.noun
                ),
                None,
            )
        })?;
        Ok(completed(result).into())
    }
}

/// `Typed` is an upstream's result that may say what type of result it
/// is (complete, or input required).
trait Typed {
    /// Where it says so.
    fn result_type(&mut self) -> &mut Option<rmcp::model::ResultType>;
}

impl Typed for CallToolResult {
    fn result_type(&mut self) -> &mut Option<rmcp::model::ResultType> {
        &mut self.result_type
    }
}

impl Typed for ReadResourceResult {
    fn result_type(&mut self) -> &mut Option<rmcp::model::ResultType> {
        &mut self.result_type
    }
}

impl Typed for GetPromptResult {
    fn result_type(&mut self) -> &mut Option<rmcp::model::ResultType> {
        &mut self.result_type
    }
}

/// An upstream's result, said to be complete where it says nothing. A
/// legacy upstream sends no resultType; this gateway's client may speak a
/// protocol that needs it (rmcp strips it for legacy peers).
fn completed<R: Typed>(mut result: R) -> R {
    result
        .result_type()
        .get_or_insert(rmcp::model::ResultType::COMPLETE);
    result
}

/// What is captured of a server's results, as its config says.
fn policy_of(config: &crate::config::McpServer) -> Policy {
    Policy {
        capture_base64: config.binary_results == BinaryResults::Capture,
        images_view: config.images == Images::View,
    }
}

/// Calls the gateway's own tool `entry` for `turn`. A failure is answered
/// as an error result whose sentence passes through the run's redactor (no
/// tool can show a secret the run has met, a URL's query values, in its
/// error), and logged.
async fn own_tool(
    entry: &porter_mcp::tool::Entry<crate::context::Turn, crate::tools::offered::Offered>,
    turn: &crate::context::Turn,
    arguments: Option<JsonObject>,
    call: porter_mcp::Call,
) -> Result<CallToolResponse, ErrorData> {
    match entry.run(turn, arguments, call).await {
        Ok(response) => Ok(response),
        Err(porter_mcp::ToolError::Tool(text)) => {
            let text = turn.cx.redactor.redact(&text);
            let tool = &entry.info.name;
            let shown = crate::upstream::bounded_reason(&porter_net::hide_url_secrets(&text));
            tracing::info!(%tool, run = %turn.run.id, error = %shown, "a tool call failed");
            Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into())
        }
        Err(porter_mcp::ToolError::Rpc(error)) => Err(error),
    }
}

/// An upstream's "input required" answer (2026-07-28), to be passed on as
/// it is.
fn input_required(value: &serde_json::Value) -> Option<CallToolResponse> {
    input_required_result(value).map(CallToolResponse::from)
}

/// An upstream's "input required" answer to any request.
fn input_required_result(value: &serde_json::Value) -> Option<rmcp::model::InputRequiredResult> {
    if value.get("resultType").and_then(serde_json::Value::as_str) != Some("input_required") {
        return None;
    }
    serde_json::from_value(value.clone()).ok()
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
        // A session parked after a quiet spell is dropped here too: its run
        // goes on while the session is kept, and ends with it.
        if let Some((run, _)) = self.run.get()
            && self.owns_run.load(std::sync::atomic::Ordering::Relaxed)
            && !self.gateway.session_keeps_run(run.id)
        {
            self.gateway.end_session_run(run.id);
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

impl InboxKeep {
    /// Keeps in `run`'s inbox the files of what `server` sent for `tool`
    /// (a tool's name, or a method); `call` is the call as the inbox
    /// records it.
    fn mcp(
        inbox: &Arc<porter_inbox::Inbox>,
        run: porter_inbox::RunId,
        server: &str,
        tool: &str,
        call: String,
        fallback_name: String,
    ) -> Self {
        Self {
            inbox: Arc::clone(inbox),
            run,
            origin: Origin::Mcp {
                server: server.to_owned(),
                tool: tool.to_owned(),
            },
            call,
            fallback_name,
        }
    }
}

impl InboxKeep {
    /// What a file found in a result comes in as.
    fn incoming(&self, name: Option<&str>, declared_type: Option<&str>) -> Incoming {
        Incoming {
            name: name.map(str::to_owned),
            fallback_name: self.fallback_name.clone(),
            dir: None,
            declared_type: declared_type.map(str::to_owned),
            origin: self.origin.clone(),
            call: self.call.clone(),
        }
    }

    /// The stub of what became of a found file.
    fn stub(
        &self,
        found: &Found<'_>,
        outcome: Result<porter_inbox::Outcome, porter_inbox::InboxError>,
    ) -> String {
        match outcome {
            Ok(outcome) => outcome.stub(),
            Err(error) => {
                tracing::error!(run = %self.run, %error, "a file could not be kept");
                porter_inbox::Outcome::NotKept {
                    why: format!("the inbox could not store it: {}", error.reason()),
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

impl Keep for InboxKeep {
    fn keep(&self, found: Found<'_>) -> String {
        let incoming = self.incoming(found.name, found.declared_type);
        let outcome = self.inbox.keep_bytes(self.run, incoming, found.bytes);
        self.stub(&found, outcome)
    }

    /// A long file is written to the inbox as it is decoded (see
    /// [`porter_inbox::Inbox::decoded_keeper`]); when the inbox cannot
    /// start one, the file is handed over whole and `keep` says why.
    fn stage(&self, size: u64) -> Option<Box<dyn Staging + '_>> {
        match self
            .inbox
            .decoded_keeper(self.run, self.incoming(None, None), size)
        {
            Ok(keeper) => Some(Box::new(InboxStaging { keep: self, keeper })),
            Err(error) => {
                tracing::debug!(run = %self.run, %error, "no staged file for a long capture");
                None
            }
        }
    }
}

/// `InboxStaging` is a file written into the inbox while it is decoded.
struct InboxStaging<'k> {
    keep: &'k InboxKeep,
    keeper: porter_inbox::Keeper,
}

impl Staging for InboxStaging<'_> {
    fn write(&mut self, block: &[u8]) -> std::io::Result<()> {
        std::io::Write::write_all(&mut self.keeper, block)
    }

    fn keep(self: Box<Self>, found: Found<'_>, sha256: &[u8; 32]) -> String {
        let outcome =
            self.keeper
                .finish_decoded(found.name, found.declared_type, found.bytes, sha256);
        self.keep.stub(&found, outcome)
    }
}

impl Session {
    /// What the gateway says of itself: its capabilities, and instructions
    /// that name the own tools a caller holding `grants` is offered (all of
    /// them when the caller is not known yet).
    fn server_config(&self, grants: Option<&[Grant]>) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        let offered = |name: &str| {
            self.gateway
                .tools
                .get(name)
                .is_some_and(|entry| grants.is_none_or(|grants| entry.kind.to(grants)))
        };
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("porter-gateway", env!("CARGO_PKG_VERSION"))
                    .with_title("porter gateway"),
            )
            .with_instructions(instructions(&offered))
    }
}

/// The gateway's instructions, naming only the own tools `offered` says
/// the caller is offered.
fn instructions(offered: &dyn Fn(&str) -> bool) -> String {
    let mut text = String::from(
        "Tools named mcp__<server>__<tool> are other MCP servers' tools, called through \
         this gateway. Files their results carry are kept in this run's inbox and shown \
         as one line: [file: volume:inbox:<path> · type · size · sha256 · from origin].",
    );
    if offered(crate::tools::file::FILE_TOOL) {
        text.push_str(
            " Use the File tool with that reference to look at a file (op read), its details \
             (op stat), the inbox's list (op ls), or to keep a copy in a volume (op keep). \
             File extract turns a document into Markdown beside it; File import adds it to the \
             searchable Documents.",
        );
    }
    if offered(crate::tools::web::HTTP_TOOL) {
        text.push_str(
            " HTTP makes one request and WebFetch reads a page as Markdown; a binary body they \
             fetch lands in the inbox the same way.",
        );
    }
    if offered(crate::tools::git::GIT_TOOL) {
        text.push_str(" Git works on repositories in volumes.");
    }
    text.push_str(
        " The upstream servers' prompts are named mcp__<server>__<prompt> and their resources \
         mcp://<server>/<uri>; a resource that is a file (or a long text) is kept in the inbox \
         the same way.",
    );
    text
}

/// The grants of a caller.
fn grants_of(caller: &Caller) -> &[Grant] {
    match caller {
        Caller::Model { grants, .. } | Caller::Key { grants, .. } => grants,
    }
}

impl ServerHandler for Session {
    fn get_info(&self) -> ServerConfig {
        let grants = self.run.get().map(|(_, caller)| grants_of(caller).to_vec());
        self.server_config(grants.as_deref())
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::DiscoverResult, ErrorData> {
        // A request without a session (2026-07-28) asks first: the
        // instructions name the tools its key is offered.
        let (_, caller) = self.owner_and_caller(&context);
        Ok(rmcp::model::DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.server_config(Some(grants_of(&caller))),
        ))
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
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // The caller's own tools: what its grants allow it to call, and
        // nothing it would be refused. Grants are fixed for a key (and for
        // the local user) while the gateway runs, so this part of the list
        // never changes under a session.
        let caller = match self.run.get() {
            Some((_, caller)) => caller.clone(),
            None => self.owner_and_caller(&context).1,
        };
        let grants = grants_of(&caller);
        let mut tools: Vec<rmcp::model::Tool> = self
            .gateway
            .tools
            .entries()
            .filter(|entry| entry.kind.to(grants))
            .map(|entry| entry.info.clone())
            .collect();
        // Every own tool's name stays reserved, offered or not, so that no
        // upstream tool is listed under it.
        let own: Vec<String> = self
            .gateway
            .tools
            .names()
            .into_iter()
            .map(str::to_owned)
            .collect();
        tools.extend(self.upstreams(&context).tools(&own).await);
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.upstreams(&context).set_level(request.level).await;
        Ok(())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources = self.upstreams(&context).resources().await;
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let templates = self.upstreams(&context).resource_templates().await;
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let upstreams = self.upstreams(&context);
        let (server, uri) = resource_of(&upstreams, &request.uri).await?;
        let (server, uri) = (server.as_str(), uri.as_str());
        let (run, _) = self.run(&context, false)?;
        let answers = Answers {
            input_responses: request.input_responses.clone(),
            request_state: request.request_state.clone(),
        };
        let value = upstreams
            .read_resource(server, uri, answers, &context)
            .await
            .map_err(|error| self.upstream_failed(run, &error))?;
        let call = serde_json::json!({"method": READ_RESOURCE.method, "uri": request.uri});
        let fallback_name = uri.rsplit('/').next().unwrap_or(uri);
        let keeper = InboxKeep::mcp(
            &self.gateway.inbox,
            run.id,
            server,
            READ_RESOURCE.method,
            call.to_string(),
            fallback_name.to_owned(),
        );
        // The contents' URIs as the client named the resource: the
        // gateway's, or a bare_names server's own.
        let namespace = split_resource_uri(&request.uri).map(|_| server.to_owned());
        let capture = move |value: &mut serde_json::Value, keeper: &InboxKeep| {
            capture_contents(value, namespace.as_deref(), keeper);
        };
        self.pass_on::<ReadResourceResult, _>(run, server, &READ_RESOURCE, keeper, value, capture)
            .await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscription(&request.uri, true, &context).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscription(&request.uri, false, &context).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompts = self.upstreams(&context).prompts().await;
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let upstreams = self.upstreams(&context);
        let (server, prompt) = prompt_of(&upstreams, &request.name).await?;
        let (server, prompt) = (server.as_str(), prompt.as_str());
        let (run, _) = self.run(&context, false)?;
        let answers = Answers {
            input_responses: request.input_responses.clone(),
            request_state: request.request_state.clone(),
        };
        let value = upstreams
            .get_prompt(server, prompt, request.arguments.clone(), answers, &context)
            .await
            .map_err(|error| self.upstream_failed(run, &error))?;
        let call = serde_json::json!({"method": GET_PROMPT.method, "name": request.name});
        let keeper = InboxKeep::mcp(
            &self.gateway.inbox,
            run.id,
            server,
            GET_PROMPT.method,
            call.to_string(),
            prompt.to_owned(),
        );
        let policy = upstreams.config(server).map(policy_of).unwrap_or_default();
        let capture = move |value: &mut serde_json::Value, keeper: &InboxKeep| {
            capture_messages(value, policy, keeper);
        };
        self.pass_on::<GetPromptResult, _>(run, server, &GET_PROMPT, keeper, value, capture)
            .await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let mut request = request;
        let upstreams = self.upstreams(&context);
        let server = match &mut request.r#ref {
            Reference::Prompt(prompt) => {
                let (server, name) = prompt_of(&upstreams, &prompt.name).await?;
                prompt.name = name;
                server
            }
            Reference::Resource(template) => {
                let (server, uri) = resource_of(&upstreams, &template.uri).await?;
                template.uri = uri;
                server
            }
            _ => {
                return Err(ErrorData::invalid_params(
                    "completion/complete names neither a prompt nor a resource template",
                    None,
                ));
            }
        };
        let result = upstreams.complete(&server, request, &context).await;
        match result {
            Ok(result) => Ok(result),
            Err(error) => {
                let redactor = self
                    .run
                    .get()
                    .map(|(run, _)| self.gateway.redactor(run.id))
                    .unwrap_or_default();
                Err(failed_request(&redactor, &error))
            }
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let (run, caller) = self.run(&context, false)?;
        let name = request.name.as_ref();
        if let Some(entry) = self.gateway.tools.get(name) {
            let turn = crate::context::Turn {
                run: run.clone(),
                caller: caller.clone(),
                cx: self.call_context(&context, run),
            };
            let call = porter_mcp::Call {
                context,
                state: request.request_state,
                answers: request.input_responses,
            };
            return own_tool(entry, &turn, request.arguments, call).await;
        }
        let upstream_tool = match split_tool_name(name) {
            Some((server, tool)) => Some((server.to_owned(), tool)),
            None => self
                .upstreams(&context)
                .bare_tool(name)
                .await
                .map(|server| (server, name)),
        };
        if let Some((server, tool)) = upstream_tool {
            let answers = Answers {
                input_responses: request.input_responses,
                request_state: request.request_state,
            };
            return Ok(self
                .call_upstream(run, &server, tool, request.arguments, answers, &context)
                .await);
        }
        Ok(CallToolResult::error(vec![ContentBlock::text(format!(
            "this gateway has no tool named {name:?}; its tools are File, Documents, HTTP, WebFetch, Git and \
             mcp__<server>__<tool> for each upstream server's tools (list the tools to see them)"
        ))])
        .into())
    }
}

impl Session {
    /// Subscribes to (or unsubscribes from) an upstream resource's updates.
    async fn subscription(
        &self,
        uri: &str,
        on: bool,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let upstreams = self.upstreams(context);
        let (server, inner) = resource_of(&upstreams, uri).await?;
        let (run, _) = self.run(context, false)?;
        upstreams
            .subscribe(&server, &inner, on, context)
            .await
            .map_err(|error| self.upstream_failed(run, &error))
    }

    /// The error a client gets for a request an upstream did not answer.
    fn upstream_failed(&self, run: &RunInfo, error: &UpstreamError) -> ErrorData {
        failed_request(&self.gateway.redactor(run.id), error)
    }
}

/// What the client gets when an upstream did not answer a request (not a
/// tool call): the upstream's own error as it gave it, or why the gateway
/// got none; the run's secrets masked.
fn failed_request(redactor: &porter_net::Redactor, error: &UpstreamError) -> ErrorData {
    match error {
        UpstreamError::Refused { error, .. } => {
            let mut error = error.clone();
            error.message = redactor
                .redact(&crate::upstream::bounded_reason(&error.message))
                .into();
            error.data = None;
            error
        }
        UpstreamError::NoServer(_) => ErrorData::invalid_params(
            format!("{error}; list the resources or prompts again to see which exist"),
            None,
        ),
        UpstreamError::Cancelled => ErrorData::internal_error("the request was cancelled", None),
        other => ErrorData::internal_error(
            format!(
                "{}. The gateway starts the server again on the next request; if it keeps \
                 failing, check the server's command or URL in the gateway's config.",
                redactor.redact(&other.to_string())
            ),
            None,
        ),
    }
}

/// Splits a gateway resource URI into the server and the upstream's URI
/// (a `bare_names` server's own URI is its own), or says what a resource
/// URI of this gateway looks like.
async fn resource_of(upstreams: &Upstreams, uri: &str) -> Result<(String, String), ErrorData> {
    if let Some((server, inner)) = split_resource_uri(uri) {
        return Ok((server.to_owned(), inner.to_owned()));
    }
    if let Some(server) = upstreams.bare_resource(uri).await {
        return Ok((server, uri.to_owned()));
    }
    Err(ErrorData::resource_not_found(
        format!(
            "this gateway has no resource {uri:?}; its resources are the upstream servers' \
             resources, named mcp://<server>/<the server's own URI> (list the resources to see \
             them)"
        ),
        None,
    ))
}

/// Splits a gateway prompt name into the server and the upstream's name (a
/// `bare_names` server's prompt goes by its own name), or says how the
/// gateway's prompts are named.
async fn prompt_of(upstreams: &Upstreams, name: &str) -> Result<(String, String), ErrorData> {
    if let Some((server, prompt)) = split_tool_name(name) {
        return Ok((server.to_owned(), prompt.to_owned()));
    }
    if let Some(server) = upstreams.bare_prompt(name).await {
        return Ok((server, name.to_owned()));
    }
    Err(ErrorData::invalid_params(
        format!(
            "this gateway has no prompt named {name:?}; its prompts are the upstream servers' \
             prompts, named mcp__<server>__<prompt> (list the prompts to see them)"
        ),
        None,
    ))
}

/// `RESOURCE_TEXT_INLINE_BYTES` is the longest text resource that reaches
/// the client as it is; a longer one is kept in the inbox like a blob.
pub const RESOURCE_TEXT_INLINE_BYTES: usize = 32 * 1024;

/// What the client may be asked during a call, as it declared it: sampling
/// and elicitation, and nothing for a client on 2026-07-28 (which cannot be
/// asked during a call).
fn askable(context: &RequestContext<RoleServer>) -> ClientCapabilities {
    let mut askable = ClientCapabilities::default();
    if is_modern(context) {
        return askable;
    }
    if let Some(declared) = context.client_capabilities() {
        askable.sampling = declared.sampling;
        askable.elicitation = declared.elicitation;
    }
    askable
}

/// Whether the request comes from a client on 2026-07-28 or later.
fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// Rewrites the JSON of an upstream's `resources/read` result in place:
/// each content's URI becomes the gateway's (`server`'s namespace; `None`
/// keeps a `bare_names` server's own URIs), and a blob, or a text longer
/// than [`RESOURCE_TEXT_INLINE_BYTES`], is kept by `keeper` and replaced by
/// a text content holding its stub.
fn capture_contents(value: &mut serde_json::Value, server: Option<&str>, keeper: &InboxKeep) {
    let Some(contents) = value
        .get_mut("contents")
        .and_then(serde_json::Value::as_array_mut)
    else {
        return;
    };
    for content in contents.iter_mut() {
        let Some(members) = content.as_object_mut() else {
            continue;
        };
        let uri = members
            .get("uri")
            .and_then(serde_json::Value::as_str)
            .map(|uri| server.map_or_else(|| uri.to_owned(), |server| resource_uri(server, uri)));
        let is_file = members.contains_key("blob")
            || members
                .get("text")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|text| text.len() > RESOURCE_TEXT_INLINE_BYTES);
        if is_file {
            let mut block =
                serde_json::json!({"content": [{"type": "resource", "resource": members.clone()}]});
            porter_capture::capture_result(&mut block, Policy::default(), None, keeper);
            let stub = block["content"][0]["text"]
                .as_str()
                .unwrap_or("[file not kept: the gateway could not read it]")
                .to_owned();
            members.clear();
            members.insert("text".to_owned(), serde_json::Value::String(stub));
            members.insert(
                "mimeType".to_owned(),
                serde_json::Value::String("text/plain".to_owned()),
            );
        }
        if let Some(uri) = uri {
            members.insert("uri".to_owned(), serde_json::Value::String(uri));
        }
    }
}

/// Rewrites the JSON of an upstream's `prompts/get` result in place: every
/// file in its messages (an image, audio or embedded resource) is kept by
/// `keeper` and replaced by a text block holding its stub, under the
/// server's `policy` as for its tool results (`images: view` adds a
/// message with the image's scaled copy).
fn capture_messages(value: &mut serde_json::Value, policy: Policy, keeper: &InboxKeep) {
    let Some(messages) = value
        .get_mut("messages")
        .and_then(serde_json::Value::as_array_mut)
    else {
        return;
    };
    let mut captured = Vec::with_capacity(messages.len());
    for mut message in messages.drain(..) {
        let Some(content) = message.get_mut("content").map(std::mem::take) else {
            captured.push(message);
            continue;
        };
        if let serde_json::Value::Array(blocks) = content {
            // A sampling message may hold a list of blocks: captured in place.
            let mut wrapped = serde_json::json!({ "content": blocks });
            porter_capture::capture_result(&mut wrapped, policy, None, keeper);
            if let (Some(members), Some(blocks)) =
                (message.as_object_mut(), wrapped.get_mut("content"))
            {
                members.insert("content".to_owned(), std::mem::take(blocks));
            }
            captured.push(message);
            continue;
        }
        let mut wrapped = serde_json::json!({"content": [content]});
        porter_capture::capture_result(&mut wrapped, policy, None, keeper);
        let blocks = match wrapped.get_mut("content").map(std::mem::take) {
            Some(serde_json::Value::Array(blocks)) => blocks,
            _ => Vec::new(),
        };
        // A block may become more than one (a stub and an image's view):
        // each goes in a message of its own, from the same role.
        for block in blocks {
            let mut one = message.clone();
            if let Some(members) = one.as_object_mut() {
                members.insert("content".to_owned(), block);
            }
            captured.push(one);
        }
    }
    *messages = captured;
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

    /// Ends the run of a session that ended: dropped with it, or (for a
    /// kept HTTP session) when its client ended it, when it went unused for
    /// its whole life, or when the gateway stops.
    pub(crate) fn end_session_run(&self, run: porter_inbox::RunId) {
        if let Err(error) = self.inbox.end_run(run) {
            tracing::warn!(run = %run, %error, "the end of a run was not recorded");
        }
        self.forget_redactor(run);
    }

    /// Whether a kept HTTP session (open or parked) holds `run`, and so
    /// ends it when it ends.
    fn session_keeps_run(&self, run: porter_inbox::RunId) -> bool {
        self.kept_sessions
            .get()
            .is_some_and(|kept| kept.holds(&run))
    }

    /// The run `session` was linked to when it opened: in this process's
    /// kept sessions, or in the records shared between replicas.
    pub fn run_of_session(
        &self,
        session: &str,
    ) -> Result<Option<porter_inbox::RunId>, porter_inbox::InboxError> {
        if self.inbox.sessions().is_none()
            && let Some(kept) = self.kept_sessions.get()
        {
            return Ok(kept.tag_of(session));
        }
        crate::replicas::run_of_session(&self.inbox, session)
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
        // Replicas sharing the records share the slot too, so that a client
        // without a session has one run whichever replica it reaches.
        if let Some(run) = self
            .inbox
            .claim_shared_run(owner.clone(), client, SHARED_RUN_IDLE)?
        {
            return Ok(run);
        }
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
        match self.inbox.end_idle_shared_runs(SHARED_RUN_IDLE) {
            Ok(ended) => {
                for run in ended {
                    self.forget_redactor(run);
                }
            }
            Err(error) => tracing::warn!(%error, "idle shared runs could not be ended"),
        }
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
