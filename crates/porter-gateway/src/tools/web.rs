//! The `HTTP` and `WebFetch` tools: the model's way onto the web, with every
//! request under the operator's network policy (`porter-net`) and every
//! binary body kept in the run's inbox instead of the model's context.
//!
//! A response is judged by its Content-Type, then by a sniff of its first
//! bytes, then by the URL's extension (`body`). Text comes back as text
//! (text labelled `application/octet-stream` included); anything else is
//! streamed chunk by chunk into the inbox and answered with its stub.
//! `HTTP` answers the status line, the headers (credentials masked), a
//! blank line and the body or the stub. `WebFetch` turns HTML into Markdown
//! (the file view's HTML reader), and with `assets: true` also keeps the page's images and its
//! links to images, PDFs and Office files under `web/<host>/` in the inbox,
//! pointing the Markdown's links at them (`webfetch::assets`).
//!
//! Every URL's query values are registered with the run's redactor before
//! the request is sent, and every text these tools produce (answers,
//! errors, the `call` recorded with a kept file, log lines) passes through
//! it; URLs are shown only in their display form (query as `?…`).

pub(crate) mod body;

use std::sync::Arc;

use porter_inbox::Inbox;
use porter_mcp::ToolError;
use rmcp::model::{CallToolResult, ContentBlock};

use crate::access::Caller;
use crate::config::Grant;
use crate::context::CallContext;
use crate::tools::offered::Offered;

/// `HTTP_TOOL` is the name the `HTTP` tool is listed under.
pub const HTTP_TOOL: &str = "HTTP";
/// `WEBFETCH_TOOL` is the name the `WebFetch` tool is listed under.
pub const WEBFETCH_TOOL: &str = "WebFetch";

/// `TEXT_MAX_BYTES` is the most text either tool returns in its answer
/// (256 KiB): a longer text body is kept as a file instead, and a longer
/// Markdown page is cut (and kept whole as a file), so that one page cannot
/// flood the context.
pub const TEXT_MAX_BYTES: usize = 256 * 1024;

/// `HTML_MAX_BYTES` is the largest HTML page `WebFetch` converts to
/// Markdown (4 MiB, held in memory while converting); a larger page is kept
/// as a file.
pub const HTML_MAX_BYTES: usize = 4 * 1024 * 1024;

/// `MAX_ASSETS` is the most files `WebFetch {assets: true}` fetches for one
/// page; the rest stay absolute links and are listed as not fetched.
pub const MAX_ASSETS: usize = 20;

/// `Web` serves the `HTTP` and `WebFetch` tools over the gateway's one
/// policy-checked client and its inbox.
pub struct Web {
    pub(super) net: porter_net::Net,
    pub(super) inbox: Arc<Inbox>,
}

impl Web {
    /// The tools over `net` (the gateway's client, already holding the
    /// operator's policy) and `inbox` (where binary bodies go).
    #[must_use]
    pub fn new(net: porter_net::Net, inbox: Arc<Inbox>) -> Web {
        Web { net, inbox }
    }
}

/// `OFFERED` is to whom `HTTP` and `WebFetch` are listed: the callers
/// [`need_http_grant`] lets through.
pub(crate) const OFFERED: Offered = Offered::AnyOf(&[Grant::Http]);

/// Whether `caller` may use the web tool `tool`: both need the `HTTP`
/// grant.
pub(super) fn need_http_grant(tool: &str, caller: &Caller) -> Result<(), ToolError> {
    let grants = match caller {
        Caller::Model { grants, .. } | Caller::Key { grants, .. } => grants,
    };
    if OFFERED.to(grants) {
        return Ok(());
    }
    Err(ToolError::tool(format!(
        "{tool} needs the HTTP grant, which this run's profile does not have; \
         an operator can add HTTP to the profile's grants"
    )))
}

/// A successful answer of one text block, redacted.
pub(super) fn text_result(cx: &CallContext, text: &str) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(cx.redactor.redact(text))])
}

#[cfg(test)]
mod tests {
    use porter_mcp::tool::describe;

    use super::*;
    use crate::context::Turn;
    use crate::tools::http::Http;
    use crate::tools::webfetch::WebFetch;

    #[test]
    fn only_a_caller_with_the_http_grant_may_use_the_web_tools() {
        let with = Caller::Model {
            grants: vec![Grant::File, Grant::Http],
            volumes: Vec::new(),
        };
        let without = Caller::Model {
            grants: vec![Grant::File],
            volumes: Vec::new(),
        };
        assert!(need_http_grant(HTTP_TOOL, &with).is_ok());
        let refused = need_http_grant(WEBFETCH_TOOL, &without).expect_err("no HTTP grant");
        assert!(
            refused
                .to_string()
                .starts_with("WebFetch needs the HTTP grant"),
            "{refused}"
        );
    }

    #[test]
    fn both_tools_are_listed_with_object_schemas() {
        let tools = [describe::<Turn, Http>(), describe::<Turn, WebFetch>()];
        let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
        assert_eq!(names, [HTTP_TOOL, WEBFETCH_TOOL]);
        for tool in &tools {
            assert_eq!(
                tool.input_schema.get("type").and_then(|t| t.as_str()),
                Some("object")
            );
            assert!(tool.input_schema["properties"].get("url").is_some());
            assert_eq!(tool.output_schema, None);
        }
    }
}
