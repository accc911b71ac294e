//! The `File` tool. SKELETON: signature agreed; the ops are being written by
//! helper "filetool" (issue 5 brief).

use std::collections::BTreeMap;
use std::sync::Arc;

use porter_inbox::{Inbox, RunInfo};
use rmcp::model::{CallToolResult, Tool};

use crate::access::Caller;
use crate::config::Volume;

/// `Files` runs File operations on runs' inboxes and the configured volumes.
pub struct Files {
    _inbox: Arc<Inbox>,
    _volumes: BTreeMap<String, Volume>,
}

impl Files {
    #[must_use]
    pub fn new(inbox: Arc<Inbox>, volumes: BTreeMap<String, Volume>) -> Self {
        Self {
            _inbox: inbox,
            _volumes: volumes,
        }
    }

    /// The `File` tool's definition (name `File`, op-discriminated input schema).
    #[must_use]
    pub fn tool() -> Tool {
        todo!()
    }

    /// Runs one operation (`arguments` is the tool call's arguments object)
    /// on `run` for `caller`. Every failure the model or operator should read
    /// is a `CallToolResult` with `is_error`.
    pub async fn call(
        &self,
        _caller: &Caller,
        _run: &RunInfo,
        _arguments: serde_json::Value,
    ) -> CallToolResult {
        todo!()
    }
}
