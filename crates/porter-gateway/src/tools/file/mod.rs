//! The `File` tool: `stat`, `ls`, `read`, `keep`, `rm` and `clear` on a
//! run's inbox and the configured volumes.
//!
//! Every path is parsed (`reference`), checked against the caller's grants
//! (`grants`) and then opened beneath its root with cap-std (`disk`), so
//! neither `..`, an absolute path nor a planted symlink reaches a file outside
//! the root. Failures the model should read come back as tool errors that
//! say what was wrong and what to do next. `extract` and `import` turn
//! documents into Markdown (`extract`); `download` and `upload` reach the
//! network (`transfer`).

mod args;
mod disk;
mod extract;
pub(crate) mod grants;
mod local;
pub(crate) mod reference;
mod transfer;

use std::collections::BTreeMap;
use std::sync::Arc;

use porter_fileview::Options;
use porter_inbox::{Inbox, RunInfo};
use porter_mcp::tool::{Hints, NoOut, ToolError};
use rmcp::model::CallToolResult;
use serde_json::Value;

use crate::access::Caller;
use crate::config::Volume;
use crate::context::{CallContext, Turn};
use crate::hooks::Hooks;
pub(crate) use args::FileArgs;
use args::{DESCRIPTION, Op};
use local::{Shared, failed};

/// `Files` runs File operations on runs' inboxes and the configured volumes.
pub struct Files {
    shared: Arc<Shared>,
    /// The client and hooks for download and upload; without them those
    /// ops are answered as not available.
    network: Option<transfer::Network>,
}

impl Files {
    /// The tool over `inbox` and the configured `volumes`.
    #[must_use]
    pub fn new(inbox: Arc<Inbox>, volumes: BTreeMap<String, Volume>) -> Self {
        Self {
            shared: Arc::new(Shared {
                inbox,
                volumes,
                view: Options::default(),
            }),
            network: None,
        }
    }

    /// The tool with `download` and `upload` on: every request goes through
    /// `net` (the operator's network policy) after `hooks` allowed it.
    #[must_use]
    pub fn with_network(mut self, net: porter_net::Net, hooks: Hooks) -> Self {
        self.network = Some(transfer::Network { net, hooks });
        self
    }

    /// Runs one operation (`arguments` is the tool call's arguments object)
    /// on `run` for `caller`. Every failure the model or operator should read
    /// is a `CallToolResult` with `is_error`.
    pub async fn call(
        &self,
        caller: &Caller,
        run: &RunInfo,
        arguments: serde_json::Value,
    ) -> CallToolResult {
        match parse(arguments) {
            Ok(args) => self.run(caller, run, args, &CallContext::default()).await,
            Err(error) => failed(error),
        }
    }

    /// Runs one operation like [`Files::call`], its arguments read, with
    /// what the tool call carries besides them: the run's redactor (every
    /// text of a download or upload is masked with it), where progress
    /// goes, and the cancellation of the call.
    async fn run(
        &self,
        caller: &Caller,
        run: &RunInfo,
        args: FileArgs,
        cx: &CallContext,
    ) -> CallToolResult {
        if matches!(args.op, Op::Download | Op::Upload) {
            return transfer::call(&self.shared, self.network.as_ref(), caller, run, args, cx)
                .await;
        }
        let shared = Arc::clone(&self.shared);
        let caller = caller.clone();
        let run = run.clone();
        // The file system and the records are blocking; a 64 MiB copy or
        // hash must not hold an async worker.
        let joined = tokio::task::spawn_blocking(move || shared.call(&caller, &run, &args)).await;
        let answer = joined.unwrap_or_else(|error| {
            tracing::error!(%error, "a File operation stopped unexpectedly");
            Err(ToolError::tool(
                "the File operation stopped unexpectedly; try it again",
            ))
        });
        answer.unwrap_or_else(failed)
    }
}

/// `FILE_TOOL` is the name the `File` tool is listed under.
pub const FILE_TOOL: &str = "File";

/// `OFFERED` is to whom `File` is listed: a caller with the inbox (`File`)
/// or a volume to look into or keep into (`Read`, `Write`); each op checks
/// the root it touches (see `grants`).
pub(crate) const OFFERED: crate::tools::offered::Offered =
    crate::tools::offered::Offered::AnyOf(&[
        crate::config::Grant::File,
        crate::config::Grant::Read,
        crate::config::Grant::Write,
    ]);

porter_mcp::tool! {
    /// `File` is the `File` tool: one op on the run's inbox or a volume, each
    /// path checked against the caller's grants as it is resolved.
    pub(crate) File { pub(crate) files: Arc<Files> } for Turn {
        name: FILE_TOOL, title: "Files kept out of the context", hints: Hints::open_world(true, false),
        args: FileArgs, out: NoOut,
        description: DESCRIPTION,
        parse: |arguments| parse(Value::Object(arguments.unwrap_or_default())),
        call: |turn, args, _call| Ok(files.run(&turn.caller, &turn.run, args, &turn.cx).await.into()),
    }
}

/// The File arguments, or what was wrong with them and what to pass instead
/// (in the words of the op asked for, where it is download or upload).
fn parse(arguments: Value) -> Result<FileArgs, ToolError> {
    if !arguments.is_object() {
        return Err(ToolError::tool(
            r#"File takes an object with an op, e.g. {"op": "ls"}"#,
        ));
    }
    let network = transfer::is_network_op(&arguments);
    serde_json::from_value(arguments).map_err(|error| {
        ToolError::tool(if network {
            format!(
                "the File arguments are not valid: {error}; download takes url, to?, headers?; upload takes from, url, method (put, post or graph), headers?"
            )
        } else {
            format!(
                "the File arguments are not valid: {error}; pass op (stat, ls, read, keep, rm, clear, extract, import, download or upload) and the fields that op takes"
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_tool_has_an_object_schema_with_the_ten_ops() {
        let tool = porter_mcp::tool::describe::<Turn, File>();
        assert_eq!(tool.name, "File");
        let schema = tool.schema_as_json_value();
        assert_eq!(schema["type"], "object");
        let text = schema.to_string();
        for op in [
            "stat", "ls", "read", "keep", "rm", "clear", "extract", "import", "download", "upload",
        ] {
            assert!(
                text.contains(&format!("\"{op}\"")),
                "{op} missing from {text}"
            );
        }
        for field in [
            "path",
            "to",
            "overwrite",
            "start_line",
            "line_count",
            "url",
            "from",
            "method",
            "headers",
        ] {
            assert!(schema["properties"][field].is_object(), "{field} missing");
        }
        assert_eq!(schema["required"], json!(["op"]));
        assert!(
            tool.description
                .is_some_and(|d| d.contains("volume:inbox:"))
        );
    }
}
