//! The MCP side of the server: building it with the tools its options
//! list, and answering MCP's requests (listing and calling tools, reading
//! resources, completion, logging level).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use porter_mattermost::{Client, Token};
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    DiscoverResult, Implementation, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ResultType, ServerCapabilities, ServerConfig,
};
// Logging is deprecated by SEP-2577, but clients up to 2025-11-25 still
// call logging/setLevel (the conformance suite checks it), so it is kept.
#[allow(deprecated)]
use rmcp::model::{LoggingLevel, SetLevelRequestParams};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};

use crate::cache::FileCache;
use crate::cursor::{self, Cursors};
use crate::options::{Options, REQUIRES_USER_INTERACTION};
use crate::registry::registry;
use crate::server::{MattermostServer, Shared, lock};

impl MattermostServer {
    /// `new` serves Mattermost through `client` with `options`. `token` is
    /// the client's own token, which no outgoing file may contain.
    #[must_use]
    #[allow(deprecated)]
    pub fn new(client: Client, token: Token, options: Options) -> MattermostServer {
        let mut tools = registry();
        tools.retain(|entry| entry.kind.listed(&options));
        for entry in tools.entries_mut() {
            let Some(note) = entry.kind.approval_note(options.ask_before_writes) else {
                continue;
            };
            let about = entry.info.description.clone().unwrap_or_default();
            entry.info.description = Some(Cow::Owned(format!("{about}{note}")));
            if options.force_human_in_the_loop && !options.ask_before_writes {
                let meta = entry
                    .info
                    .meta
                    .get_or_insert_with(rmcp::model::MetaObject::new);
                meta.0.insert(
                    REQUIRES_USER_INTERACTION.to_owned(),
                    serde_json::Value::Bool(true),
                );
            }
        }
        MattermostServer {
            shared: Arc::new(Shared {
                cache: Mutex::new(FileCache::new(options.file_cache_bytes)),
                client,
                options,
                cursors: Cursors::new(),
                asks: cursor::codec(cursor::random_key()),
                me: Mutex::new(None),
                users: Mutex::new(HashMap::new()),
                saved: porter_paths::SavedFiles::new(),
                token,
                log_level: Mutex::new(LoggingLevel::Info),
            }),
            tools: Arc::new(tools),
        }
    }
}

#[allow(deprecated)]
impl ServerHandler for MattermostServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_logging()
                .enable_completions()
                .enable_resources()
                .enable_tools()
                .build(),
        )
        .with_server_info(
            Implementation::new("porter-mattermost", env!("CARGO_PKG_VERSION"))
                .with_title("porter: Mattermost"),
        )
        .with_instructions(self.instructions())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let (ttl_ms, cache_scope) = list_hints(&context);
        Ok(ListToolsResult {
            result_type: Some(ResultType::COMPLETE),
            tools: self.tools.list(),
            meta: None,
            next_cursor: None,
            ttl_ms,
            cache_scope,
        })
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.tools.get(name).map(|entry| entry.info.clone())
    }

    /// A call to a tool this server does not list is answered as a tool
    /// error naming the tools, so the model can correct itself, rather
    /// than as a JSON-RPC error it may never see.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let mut response = self.tools.call(self, request, context).await?;
        if let CallToolResponse::Complete(result) = &mut response {
            self.link_files(result);
        }
        Ok(response)
    }

    /// No file is listed: there are too many, and they are reached through
    /// the posts that carry them, the links in tool answers, search_files
    /// and completion of the template's `file_id`.
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let mut result = ListResourcesResult::with_all_items(Vec::new());
        (result.ttl_ms, result.cache_scope) = list_hints(&context);
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let mut result = ListResourceTemplatesResult::with_all_items(self.resource_templates());
        (result.ttl_ms, result.cache_scope) = list_hints(&context);
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let mut result = self.read_resource_impl(&request.uri, &context).await?;
        if cache_hints(&context) {
            result.ttl_ms = Some(0);
            result.cache_scope = Some(CacheScope::Private);
        }
        Ok(result.into())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.complete_impl(&request).await
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(SUPPORTED_VERSIONS)
    }

    /// `server/discover` (2026-07-28) names the revisions served, the
    /// capabilities and the instructions, as `initialize` does. A client
    /// that then speaks 2026-07-28 is asked before writes through
    /// input-required results instead of `elicitation/create`.
    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        Ok(DiscoverResult::from_server_info(
            SUPPORTED_VERSIONS.to_vec(),
            self.get_info(),
        ))
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        *lock(&self.shared.log_level) = request.level;
        Ok(())
    }
}

/// Whether an answer carries cache hints: from 2026-07-28 on.
fn cache_hints(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28)
}

/// A listing's cache hints (fresh for no time, the same for everyone), on
/// revisions that have them.
fn list_hints(context: &RequestContext<RoleServer>) -> (Option<u64>, Option<CacheScope>) {
    let hints = cache_hints(context);
    (hints.then_some(0), hints.then_some(CacheScope::Public))
}

/// `SUPPORTED_VERSIONS` are the MCP revisions served: elicitation during
/// the call up to 2025-11-25, input-required results on 2026-07-28.
pub const SUPPORTED_VERSIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V_2025_03_26,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2026_07_28,
];

/// `serve_stdio` serves on standard input and output until the client
/// closes them.
pub async fn serve_stdio(server: MattermostServer) -> std::io::Result<()> {
    let running = match server.serve(rmcp::transport::io::stdio()).await {
        Ok(running) => running,
        // The client went away before it said hello: nothing to serve.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => return Err(std::io::Error::other(error)),
    };
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}
