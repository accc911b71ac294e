//! The `HTTP` tool: one request, answered as status line, headers, blank
//! line and the body (text) or its stub (a file kept in the inbox).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use porter_inbox::{Origin, Outcome, RunInfo};
use porter_mcp::tool::{Hints, NoOut, ToolError, parse_args_naming};
use porter_net::reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use porter_net::reqwest::{Method, Response};
use porter_net::{MASK, RequestOptions, check_url, display_url, is_credential_header};
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::web::body::{Keeping, Received, Take, receive};
use super::web::{HTTP_TOOL, TEXT_MAX_BYTES, Web, need_http_grant, text_result};
use crate::context::{CallContext, Turn};

/// `METHODS` are the methods the tool sends.
const METHODS: [&str; 7] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/// `SET_BY_GATEWAY` are request headers the gateway sets itself: `Host`
/// would name another site than the one the policy checked, and the
/// framing headers follow from the body.
const SET_BY_GATEWAY: [&str; 4] = ["host", "content-length", "transfer-encoding", "connection"];

/// `HttpArgs` is the `HTTP` tool's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HttpArgs {
    /// GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS.
    pub method: String,
    /// The absolute http or https URL. Percent-encode spaces and quotes.
    pub url: String,
    /// Request headers, name to value (e.g. {"Accept": "application/json"}).
    #[serde(default)]
    pub headers: Option<BTreeMap<String, String>>,
    /// The request body, sent as given (set Content-Type in headers).
    #[serde(default)]
    pub body: Option<String>,
}

const DESCRIPTION: &str = "\
Sends one HTTP request and answers with the status line, the response headers, a blank line and the body. \
Text bodies (HTML, JSON, plain text, also text sent as application/octet-stream) come back as text, \
up to 256 KiB. Files (PDF, images, archives, Office documents, longer text) are not put in your context: \
they are kept in this run's inbox and you get one line in their place, e.g. \
[file: volume:inbox:report.pdf · application/pdf · 2.8 KiB · sha256:16d5… · from http:example.org]; \
use the File tool with that reference to read or keep it. \
Only hosts the operator allows are reached; redirects are followed (at most 5, never from https to http). \
Credentials in response headers (Set-Cookie and the like) are shown masked. \
To read a web page as Markdown use WebFetch instead.";

porter_mcp::tool! {
    /// `Http` is the `HTTP` tool; it needs the `HTTP` grant.
    pub(crate) Http { pub(crate) web: Arc<Web> } for Turn {
        // It keeps what it fetches in the inbox, and reaches the open web.
        name: HTTP_TOOL, title: "HTTP request", hints: Hints::open_world(true, false),
        args: HttpArgs, out: NoOut,
        description: DESCRIPTION,
        parse: |arguments| parse_args_naming(
            Value::Object(arguments.unwrap_or_default()),
            HTTP_TOOL,
            r#"call it like {"method": "GET", "url": "https://example.org/data.json"}"#,
        ),
        check: |turn, _call| need_http_grant(HTTP_TOOL, &turn.caller),
        call: |turn, args, _call| Ok(call(web, &turn.run, args, &turn.cx).await?.into()),
    }
}

/// Runs one `HTTP` call.
async fn call(
    web: &Web,
    run: &RunInfo,
    args: HttpArgs,
    cx: &CallContext,
) -> Result<CallToolResult, ToolError> {
    let method = args.method.trim().to_ascii_uppercase();
    if !METHODS.contains(&method.as_str()) {
        return Err(ToolError::tool(format!(
            "method {method:?} is not sent; use one of {}",
            METHODS.join(", ")
        )));
    }
    let method = Method::from_bytes(method.as_bytes())
        .map_err(|_| ToolError::tool(format!("method {method:?} is not a valid HTTP method")))?;
    let url = check_url(args.url.trim())?;
    cx.redactor.register(&url);
    let headers = request_headers(args.headers.as_ref(), cx)?;
    let header_names: Vec<&str> = headers.keys().map(HeaderName::as_str).collect();
    let call = cx.redactor.redact(
        &serde_json::json!({
            "tool": HTTP_TOOL,
            "arguments": {"method": method.as_str(), "url": display_url(&url), "headers": header_names},
        })
        .to_string(),
    );
    tracing::info!(run = %run.id, method = %method, url = %cx.redactor.redact(&display_url(&url)), "HTTP");
    let options = RequestOptions {
        headers,
        body: args.body.map(Into::into),
        ..RequestOptions::default()
    };
    let response = cx
        .unless_cancelled(web.net.request(method.clone(), &url, options))
        .await??;
    let head = status_and_headers(&response);
    let host = response.url().host_str().unwrap_or_default().to_owned();
    let keeping = Keeping {
        inbox: web.inbox.clone(),
        run: run.id,
        origin: Origin::Http { host },
        dir: None,
        call,
        fallback_name: HTTP_TOOL.to_owned(),
    };
    let take = Take {
        text_max: TEXT_MAX_BYTES,
        always_keep: false,
        timeout: web.net.policy().timeout,
    };
    let body = if method == Method::HEAD {
        String::new()
    } else {
        match receive(response, keeping, take, cx).await? {
            Received::Text(text) => text,
            Received::Kept { outcome, long_text } => kept_body(&outcome, long_text),
        }
    };
    Ok(text_result(cx, &format!("{head}\n{body}")))
}

/// The stub, and why a text body became a file.
fn kept_body(outcome: &Outcome, long_text: bool) -> String {
    let mut body = outcome.stub();
    if long_text && matches!(outcome, Outcome::Kept(_)) {
        let _ = write!(
            body,
            "\n(the body is text longer than {}, so it was kept as a file; read it in windows with the File tool)",
            porter_fileview::human_size(TEXT_MAX_BYTES as u64)
        );
    }
    body
}

/// The request headers the model gave, checked. Credential headers are
/// allowed (the model may call an API with a token it was given) but
/// their values are registered as secrets, so an echo is masked.
fn request_headers(
    given: Option<&BTreeMap<String, String>>,
    cx: &CallContext,
) -> Result<HeaderMap, ToolError> {
    let mut headers = HeaderMap::new();
    for (name, value) in given.into_iter().flatten() {
        let header = HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| ToolError::tool(format!("{name:?} is not a valid header name")))?;
        if SET_BY_GATEWAY.contains(&header.as_str()) {
            return Err(ToolError::tool(format!(
                "the {name} header is set by the gateway; leave it out"
            )));
        }
        if is_credential_header(header.as_str()) {
            cx.redactor.register_secret(value.trim());
            if let Some((_, token)) = value.trim().split_once(char::is_whitespace) {
                cx.redactor.register_secret(token.trim());
            }
        }
        let value = HeaderValue::from_str(value)
            .map_err(|_| ToolError::tool(format!("the value of header {name} holds a character a header cannot carry (a line break or a control character)")))?;
        headers.append(header, value);
    }
    Ok(headers)
}

/// `HTTP/1.1 200 OK` and one `name: value` line per header, credentials
/// masked.
fn status_and_headers(response: &Response) -> String {
    let status = response.status();
    let mut head = format!(
        "{:?} {} {}\n",
        response.version(),
        status.as_str(),
        status.canonical_reason().unwrap_or("")
    )
    .replace(" \n", "\n");
    for (name, value) in response.headers() {
        let shown = if is_credential_header(name.as_str()) {
            MASK.to_owned()
        } else {
            String::from_utf8_lossy(value.as_bytes()).into_owned()
        };
        let _ = writeln!(head, "{name}: {shown}");
    }
    head
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_request_headers_are_sent_but_their_values_become_secrets() {
        let cx = CallContext::default();
        let given = BTreeMap::from([
            (
                "Authorization".to_owned(),
                "Bearer tok-0123456789".to_owned(),
            ),
            ("Accept".to_owned(), "application/json".to_owned()),
        ]);
        let headers = request_headers(Some(&given), &cx).expect("valid headers");
        assert_eq!(headers.len(), 2);
        assert_eq!(
            cx.redactor.redact("echo: tok-0123456789 application/json"),
            "echo: … application/json"
        );
    }

    #[test]
    fn headers_the_gateway_sets_or_cannot_send_are_refused() {
        let cx = CallContext::default();
        for (name, value) in [("Host", "internal"), ("Bad Name", "x"), ("X-Ok", "a\nb")] {
            let given = BTreeMap::from([(name.to_owned(), value.to_owned())]);
            assert!(request_headers(Some(&given), &cx).is_err(), "{name}");
        }
    }
}
