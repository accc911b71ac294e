//! The `HTTP` and `WebFetch` tools: the model's way onto the web, with every
//! request under the operator's network policy (`porter-net`) and every
//! binary body kept in the run's inbox instead of the model's context.
//!
//! A response is judged by its Content-Type, then by a sniff of its first
//! bytes, then by the URL's extension ([`body`]). Text comes back as text
//! (text labelled `application/octet-stream` included); anything else is
//! streamed chunk by chunk into the inbox and answered with its stub.
//! `HTTP` answers the status line, the headers (credentials masked), a
//! blank line and the body or the stub. `WebFetch` turns HTML into Markdown
//! (the file view's HTML reader), and with `assets: true` also keeps the page's images and its
//! links to images, PDFs and Office files under `web/<host>/` in the inbox,
//! pointing the Markdown's links at them ([`assets`]).
//!
//! Every URL's query values are registered with the run's redactor before
//! the request is sent, and every text these tools produce (answers,
//! errors, the `call` recorded with a kept file, log lines) passes through
//! it; URLs are shown only in their display form (query as `?…`).

mod assets;
mod body;
mod http;
mod webfetch;

use std::sync::Arc;

use porter_inbox::{Inbox, RunInfo};
use rmcp::model::{CallToolResult, ContentBlock, Tool};

use crate::access::Caller;
use crate::config::Grant;
use crate::context::CallContext;

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
    net: porter_net::Net,
    inbox: Arc<Inbox>,
}

impl Web {
    /// The tools over `net` (the gateway's client, already holding the
    /// operator's policy) and `inbox` (where binary bodies go).
    #[must_use]
    pub fn new(net: porter_net::Net, inbox: Arc<Inbox>) -> Web {
        Web { net, inbox }
    }

    /// The definitions of `HTTP` and `WebFetch`, to list beside the other
    /// tools.
    #[must_use]
    pub fn tools() -> Vec<Tool> {
        vec![http::tool(), webfetch::tool()]
    }

    /// Whether `name` is one of these tools, so that a session can route a
    /// call here.
    #[must_use]
    pub fn handles(name: &str) -> bool {
        name == HTTP_TOOL || name == WEBFETCH_TOOL
    }

    /// Runs the tool `name` for `caller` in `run`. Both tools need the
    /// `HTTP` grant. Every failure the model should read (a refusal, a
    /// timeout, bad arguments) is a tool error with one redacted sentence.
    pub async fn call(
        &self,
        name: &str,
        caller: &Caller,
        run: &RunInfo,
        arguments: serde_json::Value,
        cx: &CallContext,
    ) -> CallToolResult {
        let answer = if has_http_grant(caller) {
            match name {
                HTTP_TOOL => http::call(self, run, arguments, cx).await,
                WEBFETCH_TOOL => webfetch::call(self, run, arguments, cx).await,
                other => Err(format!(
                    "{other:?} is not a web tool; the web tools are {HTTP_TOOL} and {WEBFETCH_TOOL}"
                )),
            }
        } else {
            Err(format!(
                "{name} needs the HTTP grant, which this run's profile does not have; \
                 an operator can add HTTP to the profile's grants"
            ))
        };
        match answer {
            Ok(result) => result,
            Err(text) => {
                let text = cx.redactor.redact(&text);
                tracing::info!(tool = name, run = %run.id, error = %text, "a web call failed");
                CallToolResult::error(vec![ContentBlock::text(text)])
            }
        }
    }
}

/// Whether the caller's grants include `HTTP`.
fn has_http_grant(caller: &Caller) -> bool {
    let grants = match caller {
        Caller::Model { grants, .. } | Caller::Key { grants, .. } => grants,
    };
    grants.contains(&Grant::Http)
}

/// Parses a tool's arguments, saying which field was wrong and how to call
/// the tool instead.
fn parse_args<T: serde::de::DeserializeOwned>(
    tool: &str,
    arguments: serde_json::Value,
    example: &str,
) -> Result<T, String> {
    serde_json::from_value(arguments).map_err(|error| {
        format!("the {tool} arguments are not valid: {error}; call it like {example}")
    })
}

/// A successful answer of one text block, redacted.
fn text_result(cx: &CallContext, text: &str) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(cx.redactor.redact(text))])
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(has_http_grant(&with));
        assert!(!has_http_grant(&without));
    }

    #[test]
    fn both_tools_are_listed_with_object_schemas_and_routed_here() {
        let tools = Web::tools();
        let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
        assert_eq!(names, [HTTP_TOOL, WEBFETCH_TOOL]);
        for tool in &tools {
            assert_eq!(
                tool.input_schema.get("type").and_then(|t| t.as_str()),
                Some("object")
            );
            assert!(tool.input_schema["properties"].get("url").is_some());
            assert!(Web::handles(tool.name.as_ref()));
        }
        assert!(!Web::handles("File"));
    }
}
