//! The admin MCP endpoint: one tool, `file {run_id, op, …}`, the same File
//! operations as the HTTP API offers on any run the caller may reach.

use std::sync::Arc;

use porter_inbox::{RunId, RunInfo};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::Gateway;
use crate::access::{KeyInfo, can_change, can_read};

/// `ADMIN_FILE_TOOL` is the admin endpoint's only tool.
pub const ADMIN_FILE_TOOL: &str = "file";

/// `Refusal` is why an outside caller may not run an operation on a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No such run, or one the caller may not read: the same answer, so a
    /// caller learns nothing of runs that are not theirs.
    NoRun,
    /// The caller may read the run but not do this to it.
    NotAllowed(String),
}

impl Refusal {
    /// The sentence a caller reads.
    #[must_use]
    pub fn message(&self, run_id: &str) -> String {
        match self {
            Self::NoRun => {
                format!("no run {run_id:?} was found; list the runs you may read with GET /v1/runs")
            }
            Self::NotAllowed(why) => why.clone(),
        }
    }
}

/// Checks that `key` may run File operation `op` on the run named `run_id`
/// from outside the run, and returns the run. `stat`, `ls`, `read` and
/// `import` are open to any reader of the run; `extract`, `rm`, `clear` and
/// `keep` to its owner, an admin or a tenant operator of its tenant;
/// `download` and `upload` to nobody from outside.
pub fn outside_run(
    gateway: &Gateway,
    key: &KeyInfo,
    run_id: &str,
    op: &str,
) -> Result<RunInfo, Refusal> {
    let id: RunId = run_id.parse().map_err(|_| Refusal::NoRun)?;
    let run = match gateway.inbox.run(id) {
        Ok(Some(run)) => run,
        Ok(None) => return Err(Refusal::NoRun),
        Err(error) => {
            tracing::error!(%error, "run lookup failed");
            return Err(Refusal::NoRun);
        }
    };
    if !can_read(key, &run.owner) {
        return Err(Refusal::NoRun);
    }
    match op {
        "stat" | "ls" | "read" | "import" => Ok(run),
        "extract" | "rm" | "clear" | "keep" => {
            if can_change(key, &run.owner) {
                Ok(run)
            } else {
                Err(Refusal::NotAllowed(format!(
                    "{op} changes the run's files, which only its owner, an admin or a tenant \
                     operator of its tenant may do"
                )))
            }
        }
        "download" | "upload" => Err(Refusal::NotAllowed(format!(
            "{op} reaches the network and is open only to the run's own model, not from outside"
        ))),
        other => Err(Refusal::NotAllowed(format!(
            "there is no File operation {other:?}; use stat, ls, read, keep, rm, clear, extract or import"
        ))),
    }
}

/// `AdminServer` is the MCP server of the admin endpoint.
pub struct AdminServer {
    gateway: Arc<Gateway>,
}

impl AdminServer {
    #[must_use]
    pub fn new(gateway: Arc<Gateway>) -> Self {
        Self { gateway }
    }

    /// The `file` tool: the File tool's input with a `run_id` besides.
    #[must_use]
    pub fn tool() -> Tool {
        let mut tool = Tool::new(
            ADMIN_FILE_TOOL,
            "Runs a File operation (stat, ls, read, keep, rm, clear, extract, import) on the inbox of the run \
             named by run_id, as the API key of this session.",
            porter_mcp::schema::schema_for::<crate::tools::file::FileArgs>(),
        )
        .with_title(<crate::tools::file::File as porter_mcp::Tool<crate::context::Turn>>::TITLE);
        let mut schema = (*tool.input_schema).clone();
        if let Some(serde_json::Value::Object(properties)) = schema.get_mut("properties") {
            properties.insert(
                "run_id".to_owned(),
                serde_json::json!({"type": "string", "description": "The run's id (a UUID), from GET /v1/runs."}),
            );
        } else {
            schema.insert(
                "properties".to_owned(),
                serde_json::json!({"run_id": {"type": "string", "description": "The run's id (a UUID)."}}),
            );
        }
        let required = schema
            .entry("required")
            .or_insert_with(|| serde_json::Value::Array(Vec::new()));
        if let serde_json::Value::Array(list) = required {
            list.push(serde_json::Value::String("run_id".to_owned()));
        }
        tool.input_schema = Arc::new(schema);
        tool
    }
}

impl ServerHandler for AdminServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new("porter-gateway-admin", env!("CARGO_PKG_VERSION"))
                .with_title("porter gateway (admin)"),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![Self::tool()]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != ADMIN_FILE_TOOL {
            return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                "this endpoint has one tool, {ADMIN_FILE_TOOL:?}; {:?} is not it",
                request.name
            ))])
            .into());
        }
        let Some(key) = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<KeyInfo>())
            .cloned()
        else {
            return Err(ErrorData::invalid_request(
                "the admin endpoint needs an API key (Authorization: Bearer <key>)",
                None,
            ));
        };
        let mut arguments = request.arguments.unwrap_or_default();
        let Some(serde_json::Value::String(run_id)) = arguments.remove("run_id") else {
            return Ok(CallToolResult::error(vec![ContentBlock::text(
                "run_id is missing: name the run (a UUID from GET /v1/runs)",
            )])
            .into());
        };
        let op = arguments
            .get("op")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("")
            .to_owned();
        let run = match outside_run(&self.gateway, &key, &run_id, &op) {
            Ok(run) => run,
            Err(refusal) => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(
                    refusal.message(&run_id),
                )])
                .into());
            }
        };
        let arguments = serde_json::Value::Object(arguments);
        Ok(self
            .gateway
            .files
            .call(&key.caller(), &run, arguments)
            .await
            .into())
    }
}
