//! The upstream MCP servers: one client connection per configured server,
//! started on first use and started again when it has died. Calls are
//! proxied with the client's cancellation and progress passed through, and
//! their results come back as the raw JSON the upstream sent, so that block
//! types rmcp does not know still reach the capture (which names them).

#![expect(
    deprecated,
    reason = "sampling, logging and resources/subscribe are deprecated by SEP-2577 but are part \
              of the protocol revisions the gateway relays"
)]

use std::collections::{BTreeMap, HashMap};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientCapabilities,
    ClientConfig, ClientRequest, ClientResult, CompleteRequest, CompleteRequestParams,
    CompleteResult, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, GetPromptRequest,
    GetPromptRequestParams, Implementation, JsonObject, LoggingLevel, LoggingMessageNotification,
    LoggingMessageNotificationParam, ProgressNotification, ProgressNotificationParam,
    ProgressToken, Prompt, PromptListChangedNotification, ReadResourceRequest,
    ReadResourceRequestParams, Resource, ResourceListChangedNotification, ResourceTemplate,
    ResourceUpdatedNotification, ResourceUpdatedNotificationParam, ServerNotification,
    ServerRequest, ServerResult, SetLevelRequest, SetLevelRequestParams, SubscribeRequest,
    SubscribeRequestParams, Tool, ToolListChangedNotification, UnsubscribeRequest,
    UnsubscribeRequestParams,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, PeerRequestOptions, RequestContext,
    RunningService,
};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::{ClientHandler, ErrorData, Peer, RoleClient, RoleServer};
use tokio::process::{Child, Command};

use crate::config::McpServer;

mod in_order;
use in_order::{InOrder, Sequencer, Ticket, turn};

/// `MAX_UPSTREAM_MESSAGE_BYTES` is the longest message an upstream may send:
/// a 64 MiB file as base64 inside JSON is about 86 MiB, and rmcp's default
/// (16 MiB) would drop such a line.
pub const MAX_UPSTREAM_MESSAGE_BYTES: usize = 128 * 1024 * 1024;

/// `TOOL_PREFIX` starts every upstream tool's (and prompt's) name as the
/// gateway lists it.
pub const TOOL_PREFIX: &str = "mcp__";

/// `RESOURCE_SCHEME` starts every upstream resource's URI as the gateway
/// lists it: `mcp://<server>/<the upstream's own URI>`.
pub const RESOURCE_SCHEME: &str = "mcp://";

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
    /// The upstream answered with an error of its own.
    #[error("the upstream server {server:?} refused the request: {}", bounded_reason(&error.message))]
    Refused { server: String, error: ErrorData },
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

/// `ClientLink` is the client session a set of upstream connections of its
/// own serves: what the upstreams ask (sampling, elicitation) goes to it,
/// and what they tell (log messages, resource updates, changed lists) is
/// passed on to it.
#[derive(Clone)]
pub struct ClientLink {
    /// The client session.
    pub peer: Peer<RoleServer>,
    /// What the client can be asked, as it declared it (`sampling`,
    /// `elicitation`); declared to the upstreams as the gateway's own. Empty
    /// for a client that cannot be asked during a call (2026-07-28).
    pub capabilities: ClientCapabilities,
    /// The run's redactor: masks its secrets in the log messages passed on.
    pub redactor: porter_net::Redactor,
    /// Keeps the files in what an upstream sends this client outside a
    /// result (a sampling request's messages, a log message) in the run's
    /// inbox, each replaced by its stub: `(server, what, its JSON)`.
    pub capture: RelayCapture,
}

/// Keeps the files in `(server, what, its JSON)` and puts their stubs in
/// their place.
pub type RelayCapture = Arc<dyn Fn(&str, Relayed, &mut serde_json::Value) + Send + Sync>;

/// `Relayed` is what an upstream sends its client outside a result that
/// may carry files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relayed {
    /// A `sampling/createMessage` request's parameters.
    Sampling,
    /// An `elicitation/create` request's parameters.
    Question,
    /// A `notifications/message` (log message)'s parameters.
    Log,
}

impl Relayed {
    /// The MCP method it is.
    #[must_use]
    pub fn method(self) -> &'static str {
        match self {
            Relayed::Sampling => "sampling/createMessage",
            Relayed::Question => "elicitation/create",
            Relayed::Log => "notifications/message",
        }
    }
}

/// `Relay` is the gateway's client side towards one upstream: it passes the
/// upstream's progress notifications on to the client whose call they are
/// for and, on a connection of one client session's own, the upstream's
/// questions, sampling requests, log messages and resource updates to that
/// session.
#[derive(Clone)]
struct Relay {
    server: String,
    /// Whether the server's resources go by their own URIs (`bare_names`).
    bare: bool,
    routes: ProgressRoutes,
    link: Option<ClientLink>,
    /// The connection's tool list, forgotten when the upstream says it
    /// changed.
    tools: ToolCache,
}

/// One upstream's tools under their gateway names, once listed.
type ToolCache = Arc<tokio::sync::Mutex<Option<Vec<Tool>>>>;

/// An error the client answered to a request relayed from an upstream, or
/// why it could not be relayed, as the upstream gets it.
fn relayed_error(error: rmcp::service::ServiceError, what: &str) -> ErrorData {
    match error {
        rmcp::service::ServiceError::McpError(error) => error,
        other => ErrorData::internal_error(
            format!("the gateway could not pass the {what} on to its client: {other}"),
            None,
        ),
    }
}

/// What the upstream gets when its client answered a relayed request with
/// a result of another kind.
fn not_an_answer(what: &str) -> ErrorData {
    ErrorData::internal_error(
        format!("the gateway's client answered the {what} with a result of another kind"),
        None,
    )
}

impl Relay {
    /// `item` with the files in it kept in the run's inbox and replaced by
    /// their stubs (off the async threads: decoding and keeping files is
    /// blocking work).
    async fn captured<T>(&self, link: &ClientLink, what: Relayed, item: T) -> Result<T, String>
    where
        T: serde::Serialize + serde::de::DeserializeOwned + Send + 'static,
    {
        let capture = link.capture.clone();
        let server = self.server.clone();
        tokio::task::spawn_blocking(move || {
            let mut value = serde_json::to_value(&item).map_err(|e| e.to_string())?;
            capture(&server, what, &mut value);
            serde_json::from_value(value).map_err(|e| bounded_reason(&e.to_string()))
        })
        .await
        .map_err(|e| e.to_string())?
    }

    /// Puts an upstream's request (a question, a sampling request) to the
    /// client session and waits for its answer. When the upstream cancels
    /// its request first (`notifications/cancelled`), the client is told
    /// the relayed request is cancelled too, and the wait ends.
    async fn ask_client(
        &self,
        link: &ClientLink,
        request: ServerRequest,
        context: &RequestContext<RoleClient>,
        what: &str,
    ) -> Result<ClientResult, ErrorData> {
        let handle = link
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| relayed_error(e, what))?;
        let id = handle.id.clone();
        tokio::select! {
            answer = handle.await_response() => answer.map_err(|e| relayed_error(e, what)),
            () = context.ct.cancelled() => {
                tracing::info!(server = %self.server, "the upstream cancelled its {what}; the client is told");
                let cancel = CancelledNotificationParam::new(
                    Some(id),
                    Some(format!("the upstream server {:?} cancelled its {what}", self.server)),
                );
                if let Err(error) = link.peer.notify_cancelled(cancel).await {
                    tracing::debug!(%error, "the client went away before a cancellation");
                }
                Err(ErrorData::internal_error(format!("the {what} was cancelled"), None))
            }
        }
    }
}

/// An upstream's log message on a shared connection, which serves no one
/// session: written to the gateway's own log at its level, named by server,
/// every URL's query hidden (and its values masked elsewhere in it).
fn log_shared(server: &str, params: LoggingMessageNotificationParam) {
    let params = relayed_log(server, params, &porter_net::Redactor::new());
    let logger = params.logger.unwrap_or_default();
    let data = match params.data {
        serde_json::Value::String(text) => text,
        other => other.to_string(),
    };
    let data = bounded_reason(&data);
    match params.level {
        LoggingLevel::Debug => tracing::debug!(logger, "upstream log: {data}"),
        LoggingLevel::Info | LoggingLevel::Notice => tracing::info!(logger, "upstream log: {data}"),
        LoggingLevel::Warning => tracing::warn!(logger, "upstream log: {data}"),
        _ => tracing::error!(logger, "upstream log: {data}"),
    }
}

impl ClientHandler for Relay {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        mut context: NotificationContext<RoleClient>,
    ) {
        let ticket = Ticket::take(&mut context.extensions);
        turn(ticket.as_ref()).await;
        let route = self
            .routes
            .lock()
            .ok()
            .and_then(|routes| routes.get(&params.progress_token).cloned());
        if let Some((peer, token)) = route {
            let mut params = params;
            params.progress_token = token;
            let notification = ProgressNotification::new(params).into();
            tell(&peer, notification, "progress notification").await;
        }
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let Some(link) = self
            .link
            .as_ref()
            .filter(|link| link.capabilities.sampling.is_some())
        else {
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                "sampling/createMessage is not available: the gateway's client did not say it \
                 can sample, so the gateway did not either",
                None,
            ));
        };
        tracing::info!(server = %self.server, "an upstream's sampling request relayed to the client");
        let params = self
            .captured(link, Relayed::Sampling, params)
            .await
            .map_err(|reason| {
                tracing::error!(server = %self.server, %reason, "the files of a sampling request were not kept");
                ErrorData::internal_error(
                    "the gateway could not keep the files of this sampling request in its inbox, \
                     so it did not pass the request on",
                    None,
                )
            })?;
        let request = ServerRequest::CreateMessageRequest(CreateMessageRequest::new(params));
        match self
            .ask_client(link, request, &context, "sampling request")
            .await?
        {
            ClientResult::CreateMessageResult(result) => Ok(*result),
            _ => Err(not_an_answer("sampling request")),
        }
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let Some(link) = self
            .link
            .as_ref()
            .filter(|link| link.capabilities.elicitation.is_some())
        else {
            // The gateway did not say it could ask: an upstream that asks
            // anyway gets the answer of a person who said no.
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        tracing::info!(server = %self.server, "an upstream's question relayed to the client");
        let request = self
            .captured(link, Relayed::Question, request)
            .await
            .map_err(|reason| {
                tracing::error!(server = %self.server, %reason, "the files of a question were not kept");
                ErrorData::internal_error(
                    "the gateway could not keep the files of this question in its inbox, so it \
                     did not pass the question on",
                    None,
                )
            })?;
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(request));
        match self.ask_client(link, request, &context, "question").await? {
            ClientResult::ElicitResult(result) => Ok(result),
            _ => Err(not_an_answer("question")),
        }
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        mut context: NotificationContext<RoleClient>,
    ) {
        let ticket = Ticket::take(&mut context.extensions);
        let Some(link) = &self.link else {
            // A shared connection serves no one session: the message goes to
            // the gateway's own log, named by server, URL queries hidden.
            turn(ticket.as_ref()).await;
            log_shared(&self.server, params);
            return;
        };
        // Files are kept while earlier messages are still on their way; the
        // message itself waits for its turn.
        let params = match self.captured(link, Relayed::Log, params).await {
            Ok(params) => params,
            Err(reason) => {
                tracing::warn!(server = %self.server, %reason, "a log message whose files were not kept is not passed on");
                return;
            }
        };
        let params = relayed_log(&self.server, params, &link.redactor);
        turn(ticket.as_ref()).await;
        let notification = LoggingMessageNotification::new(params).into();
        tell(&link.peer, notification, "log message").await;
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        mut context: NotificationContext<RoleClient>,
    ) {
        let ticket = Ticket::take(&mut context.extensions);
        turn(ticket.as_ref()).await;
        let Some(link) = &self.link else {
            tracing::debug!(server = %self.server, "a resource update on a shared connection (no session to tell)");
            return;
        };
        let mut params = params;
        if !self.bare {
            params.uri = resource_uri(&self.server, &params.uri);
        }
        let notification = ResourceUpdatedNotification::new(params).into();
        tell(&link.peer, notification, "resource update").await;
    }

    async fn on_tool_list_changed(&self, mut context: NotificationContext<RoleClient>) {
        let ticket = Ticket::take(&mut context.extensions);
        turn(ticket.as_ref()).await;
        *self.tools.lock().await = None;
        if self.link.is_none() {
            tracing::info!(server = %self.server, "the upstream's tools changed; they are listed again on the next request");
        }
        if let Some(link) = &self.link {
            let notification = ToolListChangedNotification::default().into();
            tell(&link.peer, notification, "tool list change").await;
        }
    }

    async fn on_prompt_list_changed(&self, mut context: NotificationContext<RoleClient>) {
        let ticket = Ticket::take(&mut context.extensions);
        turn(ticket.as_ref()).await;
        if let Some(link) = &self.link {
            let notification = PromptListChangedNotification::default().into();
            tell(&link.peer, notification, "prompt list change").await;
        }
    }

    async fn on_resource_list_changed(&self, mut context: NotificationContext<RoleClient>) {
        let ticket = Ticket::take(&mut context.extensions);
        turn(ticket.as_ref()).await;
        if let Some(link) = &self.link {
            let notification = ResourceListChangedNotification::default().into();
            tell(&link.peer, notification, "resource list change").await;
        }
    }

    fn get_info(&self) -> ClientConfig {
        let capabilities = self
            .link
            .as_ref()
            .map(|link| link.capabilities.clone())
            .unwrap_or_default();
        ClientConfig::new(
            capabilities,
            Implementation::new("porter-gateway", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// Sends `notification` to a session's client. A client that went away
/// is no error: it is logged, `what` naming the notification.
async fn tell(peer: &Peer<RoleServer>, notification: ServerNotification, what: &str) {
    if let Err(error) = peer.send_notification(notification).await {
        tracing::debug!(%error, "the client went away before a {what}");
    }
}

/// An upstream's log message as the client gets it: its logger prefixed
/// with the server's name, every URL in it shown without its query (whose
/// values the run's redactor then masks wherever they turn up again), and
/// the run's known secrets masked.
fn relayed_log(
    server: &str,
    mut params: LoggingMessageNotificationParam,
    redactor: &porter_net::Redactor,
) -> LoggingMessageNotificationParam {
    params.logger = Some(match params.logger.take() {
        Some(logger) if !logger.is_empty() => format!("{server}/{logger}"),
        _ => server.to_owned(),
    });
    // First every URL's secrets are learnt, then everything is masked, so a
    // secret seen in one field is masked in every other as well.
    register_urls(&params.data, redactor);
    redact_value(&mut params.data, redactor);
    if let Some(logger) = &mut params.logger {
        *logger = redactor.redact(&porter_net::hide_url_secrets(logger));
    }
    params
}

/// Records the query values of every URL in `value`'s strings.
fn register_urls(value: &serde_json::Value, redactor: &porter_net::Redactor) {
    match value {
        serde_json::Value::String(text) => {
            for (_, url) in porter_net::urls_in(text) {
                redactor.register(&url);
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                register_urls(item, redactor);
            }
        }
        serde_json::Value::Object(members) => {
            for member in members.values() {
                register_urls(member, redactor);
            }
        }
        _ => {}
    }
}

/// Shows every URL in `value`'s strings without its query, and masks the
/// run's known secrets.
fn redact_value(value: &mut serde_json::Value, redactor: &porter_net::Redactor) {
    match value {
        serde_json::Value::String(text) => {
            *text = redactor.redact(&porter_net::hide_url_secrets(text));
        }
        serde_json::Value::Array(items) => {
            for item in items {
                redact_value(item, redactor);
            }
        }
        serde_json::Value::Object(members) => {
            for member in members.values_mut() {
                redact_value(member, redactor);
            }
        }
        _ => {}
    }
}

/// One live connection to an upstream.
struct Connection {
    service: RunningService<RoleClient, Relay>,
    /// The order of the upstream's notifications (see [`in_order`]).
    sequencer: Arc<Sequencer>,
    /// The child process of a stdio upstream, killed when the connection is
    /// dropped.
    _child: Option<Child>,
}

impl Connection {
    /// Whether the upstream said, when it was started, that it offers `what`.
    fn offers(&self, what: Offer) -> bool {
        let Some(info) = self.service.peer().peer_info() else {
            return false;
        };
        let capabilities = &info.capabilities;
        match what {
            Offer::Resources => capabilities.resources.is_some(),
            Offer::Prompts => capabilities.prompts.is_some(),
            Offer::Logging => capabilities.logging.is_some(),
        }
    }
}

/// What an upstream may or may not offer besides tools.
#[derive(Debug, Clone, Copy)]
enum Offer {
    Resources,
    Prompts,
    Logging,
}

/// One configured upstream server.
struct Upstream {
    name: String,
    config: McpServer,
    connection: tokio::sync::Mutex<Option<Arc<Connection>>>,
    tools: ToolCache,
}

/// `Upstreams` is one connection to every configured upstream server: the
/// gateway's shared set (for requests without a session of their own) or
/// one client session's own set, which carries what the upstreams ask and
/// tell to that session.
pub struct Upstreams {
    servers: BTreeMap<String, Upstream>,
    wiring: Wiring,
    /// The names of `bare_names` servers' items listed without the
    /// namespace, as last listed.
    bare: Mutex<BareNames>,
}

/// `BareNames` are the items of the servers configured with `bare_names`
/// that a set listed under their own names, each with its server.
#[derive(Default)]
struct BareNames {
    tools: HashMap<String, String>,
    prompts: HashMap<String, String>,
    resources: HashMap<String, String>,
    /// `(template, server)`.
    templates: Vec<(String, String)>,
    /// The gateway's own tool names, never given to an upstream's tool.
    reserved: Vec<String>,
}

/// `Listed` is a kind of item upstreams list besides tools: resources,
/// resource templates and prompts. It says how the kind is listed, how its
/// items are named in a server's namespace and where its bare names are
/// remembered.
trait Listed: Sized + Send {
    /// What a server offers when it lists this kind.
    const OFFER: Offer;
    /// What every namespaced name of this kind starts with.
    const NAMESPACE: &'static str;

    /// Every item of this kind that `peer` lists.
    fn list(
        peer: Peer<RoleClient>,
    ) -> impl Future<Output = Result<Vec<Self>, rmcp::service::ServiceError>> + Send;

    /// What the item is listed by: its name, or its URI.
    fn key(&self) -> &str;

    /// Lists the item by `key` instead.
    fn set_key(&mut self, key: String);

    /// The key `key` of `server`'s item as the gateway lists it.
    fn namespaced(server: &str, key: &str) -> String;

    /// Keeps `bare`, the names of this kind listed bare, with their servers.
    fn remember(names: &mut BareNames, bare: HashMap<String, String>);
}

impl Listed for Resource {
    const OFFER: Offer = Offer::Resources;
    const NAMESPACE: &'static str = RESOURCE_SCHEME;

    async fn list(peer: Peer<RoleClient>) -> Result<Vec<Self>, rmcp::service::ServiceError> {
        peer.list_all_resources().await
    }

    fn key(&self) -> &str {
        &self.uri
    }

    fn set_key(&mut self, key: String) {
        self.uri = key;
    }

    fn namespaced(server: &str, key: &str) -> String {
        resource_uri(server, key)
    }

    fn remember(names: &mut BareNames, bare: HashMap<String, String>) {
        names.resources = bare;
    }
}

impl Listed for ResourceTemplate {
    const OFFER: Offer = Offer::Resources;
    const NAMESPACE: &'static str = RESOURCE_SCHEME;

    async fn list(peer: Peer<RoleClient>) -> Result<Vec<Self>, rmcp::service::ServiceError> {
        peer.list_all_resource_templates().await
    }

    fn key(&self) -> &str {
        &self.uri_template
    }

    fn set_key(&mut self, key: String) {
        self.uri_template = key;
    }

    fn namespaced(server: &str, key: &str) -> String {
        resource_uri(server, key)
    }

    fn remember(names: &mut BareNames, bare: HashMap<String, String>) {
        names.templates = bare.into_iter().collect();
    }
}

impl Listed for Prompt {
    const OFFER: Offer = Offer::Prompts;
    const NAMESPACE: &'static str = TOOL_PREFIX;

    async fn list(peer: Peer<RoleClient>) -> Result<Vec<Self>, rmcp::service::ServiceError> {
        peer.list_all_prompts().await
    }

    fn key(&self) -> &str {
        &self.name
    }

    fn set_key(&mut self, key: String) {
        self.name = key;
    }

    fn namespaced(server: &str, key: &str) -> String {
        format!("{TOOL_PREFIX}{server}__{key}")
    }

    fn remember(names: &mut BareNames, bare: HashMap<String, String>) {
        names.prompts = bare;
    }
}

/// Of `(server, name)` pairs of `bare_names` servers, the names that may be
/// listed bare, with their server: offered by one such server only, not
/// `reserved`, and not starting like a namespaced name (`namespace`).
fn unclashed<'a>(
    named: impl Iterator<Item = (&'a str, &'a str)>,
    reserved: &[String],
    namespace: &str,
) -> HashMap<String, String> {
    let mut seen: HashMap<&str, Option<&str>> = HashMap::new();
    for (server, name) in named {
        seen.entry(name)
            .and_modify(|owner| *owner = None)
            .or_insert(Some(server));
    }
    seen.into_iter()
        .filter_map(|(name, owner)| Some((name, owner?)))
        .filter(|(name, _)| {
            !name.starts_with(namespace) && !reserved.iter().any(|taken| taken == name)
        })
        .map(|(name, server)| (name.to_owned(), server.to_owned()))
        .collect()
}

/// Whether `uri` is one that the URI template `template` (RFC 6570, the
/// simple form: literal text and `{expressions}`) can expand to: the
/// literal parts in order, each expression standing for at least one
/// character.
fn template_matches(template: &str, uri: &str) -> bool {
    let mut parts = template.split('{');
    let Some(mut rest) = uri.strip_prefix(parts.next().unwrap_or_default()) else {
        return false;
    };
    let mut parts = parts.peekable();
    while let Some(part) = parts.next() {
        let Some((_, literal)) = part.split_once('}') else {
            return false;
        };
        let Some(first) = rest.chars().next() else {
            return false;
        };
        let after = &rest[first.len_utf8()..];
        if literal.is_empty() {
            if parts.peek().is_none() {
                return true;
            }
            rest = after;
            continue;
        }
        if parts.peek().is_none() {
            return after.ends_with(literal);
        }
        let Some(at) = after.find(literal) else {
            return false;
        };
        rest = &after[at + literal.len()..];
    }
    rest.is_empty()
}

/// How a set's connections are made and where what comes on them goes.
struct Wiring {
    routes: ProgressRoutes,
    link: Option<ClientLink>,
    /// Whether the connections are offered the 2026-07-28 protocol first
    /// (for a client on it: an upstream that needs to ask then answers
    /// "input required", which the gateway passes on), falling back to the
    /// initialize handshake for an upstream that does not speak it.
    modern: bool,
}

impl Upstreams {
    /// The shared set, for requests without a session (clients on
    /// 2026-07-28): nothing is started here, each server starts on its first
    /// use, offered 2026-07-28 first; upstream questions during a call are
    /// declined and sampling refused.
    #[must_use]
    pub fn new(servers: &BTreeMap<String, McpServer>) -> Self {
        Self::with(servers, None, true)
    }

    /// The set of one client session: the upstreams are told the client's
    /// sampling and elicitation capabilities as the gateway's own, and what
    /// they ask or tell goes to that session. `modern`: the client speaks
    /// 2026-07-28, so the upstreams are offered it first.
    #[must_use]
    pub fn for_client(
        servers: &BTreeMap<String, McpServer>,
        link: ClientLink,
        modern: bool,
    ) -> Self {
        Self::with(servers, Some(link), modern)
    }

    fn with(servers: &BTreeMap<String, McpServer>, link: Option<ClientLink>, modern: bool) -> Self {
        let servers = servers
            .iter()
            .map(|(name, config)| {
                (
                    name.clone(),
                    Upstream {
                        name: name.clone(),
                        config: config.clone(),
                        connection: tokio::sync::Mutex::new(None),
                        tools: ToolCache::default(),
                    },
                )
            })
            .collect();
        Self {
            servers,
            wiring: Wiring {
                routes: Arc::default(),
                link,
                modern,
            },
            bare: Mutex::default(),
        }
    }

    fn bare_names(&self) -> std::sync::MutexGuard<'_, BareNames> {
        self.bare
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts (or connects to) every server of `servers` with the
    /// initialize handshake and lists its tools, each within `timeout`, all
    /// at once: for each server by name, how many tools it listed, or why
    /// it could not. Every process started here is stopped before this
    /// answers. For `porter gateway doctor`.
    pub async fn probe(
        servers: &BTreeMap<String, McpServer>,
        timeout: std::time::Duration,
    ) -> Vec<(String, Result<usize, String>)> {
        let set = Self::with(servers, None, false);
        let probes = set.servers.values().map(|upstream| async {
            let listed = tokio::time::timeout(timeout, upstream.tools(&set.wiring)).await;
            let outcome = match listed {
                Ok(Ok(tools)) => Ok(tools.len()),
                Ok(Err(error)) => Err(error.to_string()),
                Err(_) => Err(format!(
                    "the upstream server {:?} did not start and list its tools within {} s",
                    upstream.name,
                    timeout.as_secs()
                )),
            };
            (upstream.name.clone(), outcome)
        });
        futures_util::future::join_all(probes).await
    }

    /// Whether a server of this set goes by bare names.
    fn any_bare(&self) -> bool {
        self.servers.values().any(|u| u.config.bare_names)
    }

    /// Whether `server` goes by bare names.
    #[must_use]
    pub fn is_bare(&self, server: &str) -> bool {
        self.servers
            .get(server)
            .is_some_and(|u| u.config.bare_names)
    }

    /// The configuration of server `name`.
    #[must_use]
    pub fn config(&self, name: &str) -> Option<&McpServer> {
        self.servers.get(name).map(|u| &u.config)
    }

    fn upstream(&self, server: &str) -> Result<&Upstream, UpstreamError> {
        self.servers
            .get(server)
            .ok_or_else(|| UpstreamError::NoServer(server.to_owned()))
    }

    async fn connection(&self, upstream: &Upstream) -> Result<Arc<Connection>, UpstreamError> {
        upstream.connection(&self.wiring).await
    }

    /// Every upstream tool, named `mcp__<server>__<tool>`, or by its own
    /// name for a `bare_names` server where that name clashes with none of
    /// `reserved` (the gateway's own tools) and no other such server's. A
    /// server that cannot be reached is logged and left out, so one broken
    /// upstream does not hide the others.
    pub async fn tools(&self, reserved: &[String]) -> Vec<Tool> {
        let lists = futures_util::future::join_all(self.servers.values().map(|upstream| async move {
            let tools = match upstream.tools(&self.wiring).await {
                Ok(tools) => tools,
                Err(error) => {
                    tracing::warn!(server = %upstream.name, %error, "upstream tools not listed");
                    Vec::new()
                }
            };
            (upstream, tools)
        }))
        .await;
        if !self.any_bare() {
            return lists.into_iter().flat_map(|(_, tools)| tools).collect();
        }
        let own = |upstream: &Upstream, tool: &Tool| {
            tool.name
                .strip_prefix(&format!("{TOOL_PREFIX}{}__", upstream.name))
                .map(str::to_owned)
        };
        let named: Vec<(String, String)> = lists
            .iter()
            .filter(|(upstream, _)| upstream.config.bare_names)
            .flat_map(|(upstream, tools)| {
                tools
                    .iter()
                    .filter_map(|tool| Some((upstream.name.clone(), own(upstream, tool)?)))
            })
            .collect();
        let bare = unclashed(
            named
                .iter()
                .map(|(server, name)| (server.as_str(), name.as_str())),
            reserved,
            TOOL_PREFIX,
        );
        let mut listed = Vec::new();
        for (upstream, tools) in lists {
            for mut tool in tools {
                if upstream.config.bare_names
                    && let Some(name) = own(upstream, &tool)
                    && bare.get(&name) == Some(&upstream.name)
                {
                    tool.name = name.into();
                }
                listed.push(tool);
            }
        }
        let mut remembered = self.bare_names();
        remembered.tools = bare;
        remembered.reserved = reserved.to_vec();
        listed
    }

    /// The server whose tool goes by the bare name `name` (a `bare_names`
    /// server's), listing the tools first if this set has not yet.
    pub async fn bare_tool(&self, name: &str) -> Option<String> {
        if !self.any_bare() {
            return None;
        }
        if let Some(server) = self.bare_names().tools.get(name) {
            return Some(server.clone());
        }
        let reserved = self.bare_names().reserved.clone();
        self.tools(&reserved).await;
        self.bare_names().tools.get(name).cloned()
    }

    /// The server whose prompt goes by the bare name `name`, listing the
    /// prompts first if this set has not yet.
    pub async fn bare_prompt(&self, name: &str) -> Option<String> {
        if !self.any_bare() {
            return None;
        }
        if let Some(server) = self.bare_names().prompts.get(name) {
            return Some(server.clone());
        }
        self.prompts().await;
        self.bare_names().prompts.get(name).cloned()
    }

    /// The server a bare resource URI (or resource template) belongs to:
    /// the `bare_names` server that listed it, or whose template matches
    /// it, or the only `bare_names` server there is.
    pub async fn bare_resource(&self, uri: &str) -> Option<String> {
        let bare: Vec<&str> = self
            .servers
            .values()
            .filter(|u| u.config.bare_names)
            .map(|u| u.name.as_str())
            .collect();
        if bare.is_empty() || uri.starts_with(RESOURCE_SCHEME) {
            return None;
        }
        let known = |names: &BareNames| {
            names.resources.get(uri).cloned().or_else(|| {
                names
                    .templates
                    .iter()
                    .find(|(template, _)| template == uri || template_matches(template, uri))
                    .map(|(_, server)| server.clone())
            })
        };
        if let Some(server) = known(&self.bare_names()) {
            return Some(server);
        }
        self.resources().await;
        self.resource_templates().await;
        if let Some(server) = known(&self.bare_names()) {
            return Some(server);
        }
        match bare.as_slice() {
            [only] => Some((*only).to_owned()),
            _ => None,
        }
    }

    /// Every upstream item of kind `T`: each renamed as `rename` says, and
    /// its bare names remembered. A server that cannot be reached or fails
    /// the list is logged and left out.
    async fn listed<T: Listed>(&self) -> Vec<T> {
        let lists = futures_util::future::join_all(self.servers.values().map(|upstream| async move {
            let connection = match self.connection(upstream).await {
                Ok(connection) => connection,
                Err(error) => {
                    tracing::warn!(server = %upstream.name, %error, offer = ?T::OFFER, "upstream not listed");
                    return Vec::new();
                }
            };
            if !connection.offers(T::OFFER) {
                return Vec::new();
            }
            match T::list(connection.service.peer().clone()).await {
                Ok(items) => items
                    .into_iter()
                    .map(|item| (upstream.name.clone(), item))
                    .collect(),
                Err(error) => {
                    tracing::warn!(server = %upstream.name, error = %bounded_reason(&error.to_string()), offer = ?T::OFFER, "upstream list failed");
                    Vec::new()
                }
            }
        }))
        .await;
        let (items, bare) = self.rename(lists.into_iter().flatten().collect());
        T::remember(&mut self.bare_names(), bare);
        items
    }

    /// Renames each listed item: its own name where it may go bare (a
    /// `bare_names` server's, clashing with no other), else the namespaced
    /// one; returns the items and the bare names with their servers.
    fn rename<T: Listed>(&self, items: Vec<(String, T)>) -> (Vec<T>, HashMap<String, String>) {
        let bare = unclashed(
            items
                .iter()
                .filter(|(server, _)| self.is_bare(server))
                .map(|(server, item)| (server.as_str(), item.key())),
            &[],
            T::NAMESPACE,
        );
        let renamed = items
            .into_iter()
            .map(|(server, mut item)| {
                let own = item.key().to_owned();
                if bare.get(&own) != Some(&server) {
                    item.set_key(T::namespaced(&server, &own));
                }
                item
            })
            .collect();
        (renamed, bare)
    }

    /// Every upstream resource, its URI as `mcp://<server>/<uri>` (or its
    /// own, for a `bare_names` server where it clashes with none).
    pub async fn resources(&self) -> Vec<Resource> {
        self.listed().await
    }

    /// Every upstream resource template, its URI template as
    /// `mcp://<server>/<template>` (or its own, as for resources).
    pub async fn resource_templates(&self) -> Vec<ResourceTemplate> {
        self.listed().await
    }

    /// Every upstream prompt, named `mcp__<server>__<prompt>` (or by its
    /// own name, as for tools).
    pub async fn prompts(&self) -> Vec<Prompt> {
        self.listed().await
    }

    /// Passes the client's log level on to every upstream that offers
    /// logging (starting those not started yet, so that their messages
    /// come at that level from the start). An upstream that fails it is
    /// logged and left as it was.
    pub async fn set_level(&self, level: LoggingLevel) {
        futures_util::future::join_all(self.servers.values().map(|upstream| async move {
            let connection = match self.connection(upstream).await {
                Ok(connection) => connection,
                Err(error) => {
                    tracing::warn!(server = %upstream.name, %error, "log level not passed on");
                    return;
                }
            };
            if !connection.offers(Offer::Logging) {
                return;
            }
            let request = ClientRequest::SetLevelRequest(SetLevelRequest::new(
                SetLevelRequestParams::new(level),
            ));
            if let Err(error) = connection.service.peer().send_request(request).await {
                tracing::warn!(server = %upstream.name, error = %bounded_reason(&error.to_string()), "the upstream refused the log level");
            }
        }))
        .await;
    }

    /// The `outputSchema` tool `tool` of `server` declared, if it declared
    /// one: what its results must still fit once their files are stubs.
    /// Lists the server's tools if this connection has not yet.
    pub async fn output_schema(&self, server: &str, tool: &str) -> Option<Arc<JsonObject>> {
        let upstream = self.servers.get(server)?;
        let tools = match upstream.tools(&self.wiring).await {
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
    /// `answers` are a 2026-07-28 client's answers to the questions of an
    /// earlier "input required" result and the state that came with it,
    /// passed on as they are.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<JsonObject>,
        answers: Answers,
        context: &RequestContext<RoleServer>,
    ) -> Result<(serde_json::Value, Option<JsonObject>), UpstreamError> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = arguments;
        params.input_responses = answers.input_responses;
        params.request_state = answers.request_state;
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let answer = self.send(server, &request, context).await?;
        // The arguments come back to the caller, which needs them only when
        // the result holds a file (to record the call beside it): no copy
        // is made for the calls that hold none.
        let arguments = match request {
            ClientRequest::CallToolRequest(request) => request.params.arguments,
            _ => None,
        };
        Ok((raw_json(server, answer)?, arguments))
    }

    /// Reads the resource `uri` (the upstream's own URI) of `server`; the
    /// result's JSON as the upstream sent it.
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        answers: Answers,
        context: &RequestContext<RoleServer>,
    ) -> Result<serde_json::Value, UpstreamError> {
        let mut params = ReadResourceRequestParams::new(uri);
        params.input_responses = answers.input_responses;
        params.request_state = answers.request_state;
        let request = ClientRequest::ReadResourceRequest(ReadResourceRequest::new(params));
        let answer = self.send(server, &request, context).await?;
        raw_json(server, answer)
    }

    /// Gets the prompt `name` (the upstream's own name) of `server`; the
    /// result's JSON as the upstream sent it.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: Option<JsonObject>,
        answers: Answers,
        context: &RequestContext<RoleServer>,
    ) -> Result<serde_json::Value, UpstreamError> {
        let mut params = GetPromptRequestParams::new(name);
        params.arguments = arguments;
        params.input_responses = answers.input_responses;
        params.request_state = answers.request_state;
        let request = ClientRequest::GetPromptRequest(GetPromptRequest::new(params));
        let answer = self.send(server, &request, context).await?;
        raw_json(server, answer)
    }

    /// Asks `server` to complete an argument; `params` already name the
    /// upstream's own prompt or resource template.
    pub async fn complete(
        &self,
        server: &str,
        params: CompleteRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CompleteResult, UpstreamError> {
        let request = ClientRequest::CompleteRequest(CompleteRequest::new(params));
        match self.send(server, &request, context).await? {
            ServerResult::CompleteResult(result) => Ok(result),
            other => Err(unexpected(server, &other)),
        }
    }

    /// Subscribes to (or, with `on` false, unsubscribes from) updates of
    /// the resource `uri` (the upstream's own URI) of `server`.
    pub async fn subscribe(
        &self,
        server: &str,
        uri: &str,
        on: bool,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), UpstreamError> {
        let request = if on {
            ClientRequest::SubscribeRequest(SubscribeRequest::new(SubscribeRequestParams::new(uri)))
        } else {
            ClientRequest::UnsubscribeRequest(UnsubscribeRequest::new(
                UnsubscribeRequestParams::new(uri),
            ))
        };
        self.send(server, &request, context).await.map(|_| ())
    }

    /// Sends `request` to `server` and waits for its answer. The client's
    /// cancellation (`context.ct`) cancels the upstream request; the
    /// client's progress token receives the upstream's progress. An error
    /// the upstream answered comes back as [`UpstreamError::Refused`].
    async fn send(
        &self,
        server: &str,
        request: &ClientRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<ServerResult, UpstreamError> {
        let upstream = self.upstream(server)?;
        // A request that could not even be sent (the upstream died since the
        // last call) is sent once more on a fresh connection: it never
        // reached the old one, so nothing runs twice.
        let mut attempt = 0;
        let (connection, peer, handle) = loop {
            let connection = self.connection(upstream).await?;
            let peer = connection.service.peer().clone();
            let mut options = PeerRequestOptions::no_options();
            options.meta = forwarded_capabilities(context);
            match peer
                .send_request_with_option(request.clone(), options)
                .await
            {
                Ok(handle) => break (connection, peer, handle),
                Err(error) if attempt == 0 => {
                    tracing::warn!(server, %error, "upstream gone before the request was sent; starting it again");
                    upstream.forget(&connection).await;
                    attempt += 1;
                }
                Err(error) => return Err(upstream.failed(&error)),
            }
        };
        let id = handle.id.clone();
        let client_token = context.meta.get_progress_token();
        if let Some(token) = &client_token
            && let Ok(mut routes) = self.wiring.routes.lock()
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
        // Every notification the upstream sent before its answer (progress,
        // log messages) reaches the client before the answer does.
        connection
            .sequencer
            .settled(connection.sequencer.mark())
            .await;
        if client_token.is_some()
            && let Ok(mut routes) = self.wiring.routes.lock()
        {
            routes.remove(&upstream_token);
        }
        let Some(answer) = outcome else {
            let cancel = CancelledNotificationParam::new(
                Some(id),
                Some("the client cancelled the request".to_owned()),
            );
            if let Err(error) = peer.notify_cancelled(cancel).await {
                tracing::debug!(%error, server, "upstream gone before the cancellation");
            }
            return Err(UpstreamError::Cancelled);
        };
        match answer {
            Ok(answer) => Ok(answer),
            Err(rmcp::service::ServiceError::McpError(error)) => Err(UpstreamError::Refused {
                server: server.to_owned(),
                error,
            }),
            Err(error) => {
                if matches!(
                    error,
                    rmcp::service::ServiceError::TransportClosed
                        | rmcp::service::ServiceError::TransportSend(_)
                ) {
                    upstream.forget(&connection).await;
                }
                Err(upstream.failed(&error))
            }
        }
    }
}

/// For a request of a 2026-07-28 client (which declares what it can do on
/// each request): the metadata that declares to the upstream what this
/// client can be asked — its sampling and elicitation capabilities — so
/// that an upstream that needs to ask answers "input required", which the
/// gateway passes on; and the log level the client opted in to for the
/// request, if any. `None` for a client that negotiated a session: its
/// connection declared that once.
fn forwarded_capabilities(
    context: &RequestContext<RoleServer>,
) -> Option<rmcp::model::RequestMetaObject> {
    let modern = context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= rmcp::model::ProtocolVersion::V_2026_07_28.as_str());
    if !modern {
        return None;
    }
    let declared = context.client_capabilities().unwrap_or_default();
    let mut askable = ClientCapabilities::default();
    askable.sampling = declared.sampling;
    askable.elicitation = declared.elicitation;
    let mut meta = rmcp::model::RequestMetaObject::default();
    meta.set_client_capabilities(askable);
    // A client that opted in to log messages for this request has the
    // upstream send them (on 2026-07-28 a server sends none otherwise).
    if let Some(level) = context.meta.log_level() {
        meta.set_log_level(level);
    }
    Some(meta)
}

/// `Answers` are what a 2026-07-28 client sends again with a request that
/// was answered "input required": its answers and the server's state.
#[derive(Debug, Clone, Default)]
pub struct Answers {
    pub input_responses: Option<rmcp::model::InputResponses>,
    pub request_state: Option<String>,
}

/// The JSON of an upstream's answer as it sent it (rmcp keeps what it does
/// not know as a custom result).
fn raw_json(server: &str, answer: ServerResult) -> Result<serde_json::Value, UpstreamError> {
    let value = match answer {
        ServerResult::CustomResult(custom) => Ok(custom.0),
        ServerResult::CallToolResult(result) => serde_json::to_value(result),
        ServerResult::ReadResourceResult(result) => serde_json::to_value(result),
        ServerResult::GetPromptResult(result) => serde_json::to_value(result),
        other => serde_json::to_value(other),
    };
    value.map_err(|e| UpstreamError::Call {
        server: server.to_owned(),
        reason: format!("its answer could not be read: {e}"),
    })
}

fn unexpected(server: &str, answer: &ServerResult) -> UpstreamError {
    let kind = serde_json::to_value(answer)
        .ok()
        .and_then(|value| {
            value
                .as_object()
                .map(|members| members.keys().cloned().collect::<Vec<_>>().join(", "))
        })
        .unwrap_or_default();
    UpstreamError::Call {
        server: server.to_owned(),
        reason: format!("it answered with a result of another kind (fields: {kind})"),
    }
}

impl Upstream {
    /// The live connection, started (again) when there is none or it died.
    async fn connection(&self, wiring: &Wiring) -> Result<Arc<Connection>, UpstreamError> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref() {
            if !connection.service.is_closed() {
                return Ok(connection.clone());
            }
            tracing::warn!(server = %self.name, "upstream connection closed; starting it again");
            *self.tools.lock().await = None;
        }
        let connection = Arc::new(self.connect(wiring).await?);
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

    /// Starts the server and connects: offered 2026-07-28 first when the
    /// wiring is modern, and started again with the initialize handshake
    /// if that fails.
    async fn connect(&self, wiring: &Wiring) -> Result<Connection, UpstreamError> {
        if wiring.modern {
            let lifecycle = ClientLifecycleMode::Auto {
                preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
                legacy_version: None,
            };
            match self.start(wiring, lifecycle).await {
                Ok(connection) => return Ok(connection),
                Err(error) => {
                    tracing::warn!(server = %self.name, %error, "the upstream did not start on 2026-07-28; starting it again with the initialize handshake");
                }
            }
        }
        self.start(wiring, ClientLifecycleMode::Initialize).await
    }

    async fn start(
        &self,
        wiring: &Wiring,
        lifecycle: ClientLifecycleMode,
    ) -> Result<Connection, UpstreamError> {
        let relay = Relay {
            server: self.name.clone(),
            bare: self.config.bare_names,
            routes: wiring.routes.clone(),
            link: wiring.link.clone(),
            tools: self.tools.clone(),
        };
        let sequencer = Arc::new(Sequencer::default());
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
            let transport = InOrder::new(transport, sequencer.clone());
            let service = relay
                .serve_with_lifecycle(transport, lifecycle)
                .await
                .map_err(|e| start_error(format!("the MCP handshake failed: {e}")))?;
            Ok(Connection {
                service,
                sequencer,
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
            let transport = InOrder::new(
                StreamableHttpClientTransport::from_config(config),
                sequencer.clone(),
            );
            let service = relay
                .serve_with_lifecycle(transport, lifecycle)
                .await
                .map_err(|e| start_error(format!("the MCP handshake with {url} failed: {e}")))?;
            Ok(Connection {
                service,
                sequencer,
                _child: None,
            })
        } else {
            Err(start_error("it has neither a command nor a url".to_owned()))
        }
    }

    /// The server's tools under their gateway names, listed once per
    /// connection.
    async fn tools(&self, wiring: &Wiring) -> Result<Vec<Tool>, UpstreamError> {
        let connection = self.connection(wiring).await?;
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

/// The gateway's URI of resource `uri` of `server`: `mcp://<server>/<uri>`.
#[must_use]
pub fn resource_uri(server: &str, uri: &str) -> String {
    format!("{RESOURCE_SCHEME}{server}/{uri}")
}

/// Splits a gateway resource URI `mcp://<server>/<uri>` into the server
/// and the upstream's own URI.
#[must_use]
pub fn split_resource_uri(uri: &str) -> Option<(&str, &str)> {
    let rest = uri.strip_prefix(RESOURCE_SCHEME)?;
    let (server, inner) = rest.split_once('/')?;
    (!server.is_empty() && !inner.is_empty()).then_some((server, inner))
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
    fn a_gateway_resource_uri_splits_into_server_and_the_upstreams_uri() {
        let uri = resource_uri("everything", "demo://resource/static/document/a.md");
        assert_eq!(uri, "mcp://everything/demo://resource/static/document/a.md");
        assert_eq!(
            split_resource_uri(&uri),
            Some(("everything", "demo://resource/static/document/a.md"))
        );
        assert_eq!(
            split_resource_uri("mcp://files/file:///tmp/x"),
            Some(("files", "file:///tmp/x"))
        );
        for refused in [
            "mcp:///x",
            "mcp://files/",
            "mcp://files",
            "demo://x",
            "file:///x",
        ] {
            assert_eq!(split_resource_uri(refused), None, "{refused}");
        }
    }

    #[test]
    fn a_uri_matches_a_template_whose_literal_parts_it_has_in_order() {
        let template = "test://template/{id}/data";
        assert!(template_matches(template, "test://template/123/data"));
        assert!(template_matches(template, "test://template/a-b/data"));
        assert!(!template_matches(template, "test://template//data"));
        assert!(!template_matches(template, "test://template/123/other"));
        assert!(!template_matches(template, "test://other/123/data"));
        assert!(template_matches("file:///{path}", "file:///srv/a/b.txt"));
        assert!(!template_matches("file:///{path}", "file:///"));
        assert!(template_matches("x://{a}{b}", "x://ab"));
        assert!(template_matches("plain://one", "plain://one"));
        assert!(!template_matches("plain://one", "plain://one/two"));
    }

    #[test]
    fn a_bare_name_two_servers_offer_or_the_gateway_has_stays_namespaced() {
        let named = [
            ("a", "search"),
            ("a", "File"),
            ("a", "only_a"),
            ("b", "search"),
            ("b", "only_b"),
            ("b", "mcp__x__y"),
        ];
        let bare = unclashed(named.into_iter(), &["File".to_owned()], TOOL_PREFIX);
        let mut found: Vec<_> = bare.iter().map(|(n, s)| (n.as_str(), s.as_str())).collect();
        found.sort_unstable();
        assert_eq!(found, [("only_a", "a"), ("only_b", "b")]);
    }

    #[test]
    fn a_relayed_log_names_its_server_and_hides_url_queries_everywhere() {
        let redactor = porter_net::Redactor::new();
        let mut params = LoggingMessageNotificationParam::new(
            LoggingLevel::Warning,
            serde_json::json!({
                "message": "GET https://api.example.org/v1?key=abcd1234secret&page=2 failed.",
                "again": ["the key abcd1234secret was refused"],
                "plain": "see https://example.org/docs for help",
            }),
        );
        params.logger = Some("http".to_owned());
        let relayed = relayed_log("fetch", params, &redactor);
        assert_eq!(relayed.logger.as_deref(), Some("fetch/http"));
        let text = relayed.data.to_string();
        assert!(!text.contains("abcd1234secret"), "{text}");
        assert_eq!(
            relayed.data["message"],
            "GET https://api.example.org/v1?… failed."
        );
        assert_eq!(relayed.data["again"][0], "the key … was refused");
        assert_eq!(
            relayed.data["plain"],
            "see https://example.org/docs for help"
        );
        let unnamed = relayed_log(
            "fetch",
            LoggingMessageNotificationParam::new(LoggingLevel::Info, serde_json::json!(3)),
            &redactor,
        );
        assert_eq!(unnamed.logger.as_deref(), Some("fetch"));
        assert_eq!(unnamed.data, serde_json::json!(3));
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
