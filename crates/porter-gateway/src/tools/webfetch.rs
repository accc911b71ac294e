//! The `WebFetch` tool: a page as Markdown, other text as it is, a file as
//! its stub alone; with `assets: true`, the page's images and linked files
//! kept in the inbox under `web/<host>/` and its links pointed at them.

mod assets;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use porter_inbox::{FileRecord, Incoming, Origin, Outcome, RunInfo, inbox_ref};
use porter_mcp::tool::{Hints, NoOut, ToolError, parse_args_naming};
use porter_net::reqwest::Method;
use porter_net::reqwest::header::CONTENT_TYPE;
use porter_net::{RequestOptions, check_url, display_url};
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use url::Url;

use self::assets::{file_links, key, markdown};
use super::web::body::{Keeping, Received, Take, essence, header_text, receive};
use super::web::{
    HTML_MAX_BYTES, MAX_ASSETS, TEXT_MAX_BYTES, WEBFETCH_TOOL, Web, need_http_grant, text_result,
};
use crate::context::{CallContext, Turn};

/// `WebFetchArgs` is the `WebFetch` tool's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WebFetchArgs {
    /// The absolute http or https URL of the page. Percent-encode spaces
    /// and quotes.
    pub url: String,
    /// Also keep the page's images and its links to images, PDFs and
    /// Office files in the inbox (at most 20), with the page's links
    /// pointing at them (default false).
    #[serde(default)]
    pub assets: bool,
}

const DESCRIPTION: &str = "\
Fetches a web page (GET) and answers with its content: HTML as Markdown, other text as it is. \
A file (PDF, image, Office document, archive) is not put in your context: it is kept in this run's inbox \
and you get one line in its place, e.g. \
[file: volume:inbox:report.pdf · application/pdf · 2.8 KiB · sha256:16d5… · from webfetch:example.org]; \
use the File tool with that reference to read or keep it. \
With assets: true the page's images and its links to images, PDFs and Office files (at most 20) are kept \
in the inbox too, under web/<host>/, and the Markdown links point at them (volume:inbox:web/<host>/<name>); \
files that could not be fetched keep their web address and are listed at the end with the reason. \
Only hosts the operator allows are reached; redirects are followed (at most 5, never from https to http). \
For other methods, request headers or a body use the HTTP tool.";

porter_mcp::tool! {
    /// `WebFetch` is the `WebFetch` tool; it needs the `HTTP` grant.
    pub(crate) WebFetch { pub(crate) web: Arc<Web> } for Turn {
        // It keeps what it fetches in the inbox, and reaches the open web.
        name: WEBFETCH_TOOL, title: "Fetch a web page", hints: Hints::open_world(false, false),
        args: WebFetchArgs, out: NoOut,
        description: DESCRIPTION,
        parse: |arguments| parse_args_naming(
            Value::Object(arguments.unwrap_or_default()),
            WEBFETCH_TOOL,
            r#"call it like {"url": "https://example.org/", "assets": false}"#,
        ),
        check: |turn, _call| need_http_grant(WEBFETCH_TOOL, &turn.caller),
        call: |turn, args, _call| Ok(call(web, &turn.run, args, &turn.cx).await?.into()),
    }
}

/// Runs one `WebFetch` call.
async fn call(
    web: &Web,
    run: &RunInfo,
    args: WebFetchArgs,
    cx: &CallContext,
) -> Result<CallToolResult, ToolError> {
    let url = check_url(args.url.trim())?;
    cx.redactor.register(&url);
    let call = cx.redactor.redact(
        &serde_json::json!({
            "tool": WEBFETCH_TOOL,
            "arguments": {"url": display_url(&url), "assets": args.assets},
        })
        .to_string(),
    );
    tracing::info!(run = %run.id, url = %cx.redactor.redact(&display_url(&url)), assets = args.assets, "WebFetch");
    let response = cx
        .unless_cancelled(
            web.net
                .request(Method::GET, &url, RequestOptions::default()),
        )
        .await??;
    let status = response.status();
    let page = response.url().clone();
    let host = page.host_str().unwrap_or_default().to_owned();
    let declared = essence(header_text(response.headers(), CONTENT_TYPE.as_str()).as_deref());
    let declared_html = declared
        .as_deref()
        .is_some_and(|t| t == "text/html" || t == "application/xhtml+xml");
    let keeping = Keeping {
        inbox: web.inbox.clone(),
        run: run.id,
        origin: Origin::WebFetch { host },
        dir: None,
        call: call.clone(),
        fallback_name: WEBFETCH_TOOL.to_owned(),
    };
    let take = Take {
        text_max: if declared_html {
            HTML_MAX_BYTES
        } else {
            TEXT_MAX_BYTES
        },
        always_keep: false,
        timeout: web.net.policy().timeout,
    };
    let content = match receive(response, keeping, take, cx).await? {
        Received::Kept { outcome, long_text } => {
            let mut content = outcome.stub();
            if long_text && matches!(outcome, Outcome::Kept(_)) {
                let _ = write!(
                    content,
                    "\n(the page is longer than this tool returns, so it was kept as a file; read it in windows with the File tool)"
                );
            }
            content
        }
        Received::Text(text)
            if declared_html
                || (declared.is_none() && porter_fileview::begins_like_html(&text)) =>
        {
            let fetched = Fetched {
                page: &page,
                run,
                call: &call,
            };
            page_markdown(web, &fetched, text, args.assets, cx).await?
        }
        Received::Text(text) => text,
    };
    if !status.is_success() {
        return Err(ToolError::tool(format!(
            "GET {} answered {status}:\n\n{content}",
            display_url(&page)
        )));
    }
    Ok(text_result(cx, &content))
}

/// What every file fetched for one page shares.
struct Fetched<'a> {
    /// The page's URL after redirects, which its links are relative to.
    page: &'a Url,
    run: &'a RunInfo,
    /// The WebFetch call, redacted, recorded with every kept file.
    call: &'a str,
}

/// The page as Markdown; with `assets`, its files fetched first and its
/// links pointed at them, a list of the files kept and of those not
/// fetched (and why) at the end.
async fn page_markdown(
    web: &Web,
    fetched: &Fetched<'_>,
    html: String,
    assets: bool,
    cx: &CallContext,
) -> Result<String, ToolError> {
    let mut kept_refs = HashMap::new();
    let mut kept_stubs = Vec::new();
    let mut skipped = Vec::new();
    if assets {
        let links = blocking({
            let html = html.clone();
            let page = fetched.page.clone();
            move || file_links(&html, &page)
        })
        .await?;
        for (index, link) in links.into_iter().enumerate() {
            if index >= MAX_ASSETS {
                skipped.push((
                    display_url(&link),
                    format!("only the first {MAX_ASSETS} files of a page are fetched"),
                ));
                continue;
            }
            match fetch_file(web, fetched, &link, cx).await {
                Ok(record) => {
                    kept_refs.insert(key(&link), inbox_ref(&record.path));
                    kept_stubs.push(Outcome::Kept(record).stub());
                }
                Err(reason) => skipped.push((display_url(&link), reason.to_string())),
            }
        }
    }
    let page = fetched.page.clone();
    let mut content = blocking(move || markdown(&html, &page, &kept_refs)).await?;
    if content.len() > TEXT_MAX_BYTES {
        content = keep_long_markdown(web, fetched, content).await?;
    }
    if !kept_stubs.is_empty() {
        content.push_str("\n\nFiles of this page kept in the inbox:\n");
        content.push_str(&kept_stubs.join("\n"));
    }
    if !skipped.is_empty() {
        content.push_str("\n\n");
        let lines: Vec<String> = skipped
            .iter()
            .map(|(url, reason)| format!("not fetched: {url} — {reason}"))
            .collect();
        content.push_str(&lines.join("\n"));
    }
    Ok(content)
}

/// Fetches one of a page's files into `web/<host>/` in the inbox,
/// whatever its type; the error is the reason it was not fetched.
async fn fetch_file(
    web: &Web,
    fetched: &Fetched<'_>,
    url: &Url,
    cx: &CallContext,
) -> Result<FileRecord, ToolError> {
    cx.redactor.register(url);
    let response = cx
        .unless_cancelled(web.net.request(Method::GET, url, RequestOptions::default()))
        .await?
        .map_err(|error| ToolError::tool(cx.redactor.redact(&error.to_string())))?;
    let status = response.status();
    if !status.is_success() {
        return Err(ToolError::tool(format!("the server answered {status}")));
    }
    let host = response.url().host_str().unwrap_or_default().to_owned();
    let keeping = Keeping {
        inbox: web.inbox.clone(),
        run: fetched.run.id,
        origin: Origin::WebFetch { host: host.clone() },
        dir: Some(format!("web/{host}")),
        call: fetched.call.to_owned(),
        fallback_name: "file".to_owned(),
    };
    let take = Take {
        text_max: 0,
        always_keep: true,
        timeout: web.net.policy().timeout,
    };
    match receive(response, keeping, take, cx).await {
        Ok(Received::Kept {
            outcome: Outcome::Kept(record),
            ..
        }) => Ok(record),
        Ok(Received::Kept {
            outcome: Outcome::NotKept { why, .. },
            ..
        }) => Err(ToolError::tool(format!("not kept: {why}"))),
        Ok(Received::Text(_)) => Err(ToolError::tool("the body was not kept")),
        Err(error) => Err(ToolError::tool(cx.redactor.redact(&error.to_string()))),
    }
}

/// Keeps a Markdown page longer than [`TEXT_MAX_BYTES`] whole in the
/// inbox and answers its stub and its first [`TEXT_MAX_BYTES`].
async fn keep_long_markdown(
    web: &Web,
    fetched: &Fetched<'_>,
    content: String,
) -> Result<String, ToolError> {
    let stem = porter_net::url_file_name(fetched.page).map_or_else(
        || fetched.page.host_str().unwrap_or("page").to_owned(),
        |name| porter_inbox::names::split_extension(&name).0.to_owned(),
    );
    let incoming = Incoming {
        name: Some(format!("{stem}.md")),
        fallback_name: "page.md".to_owned(),
        dir: None,
        declared_type: Some("text/markdown".to_owned()),
        origin: Origin::WebFetch {
            host: fetched.page.host_str().unwrap_or_default().to_owned(),
        },
        call: fetched.call.to_owned(),
    };
    let inbox = web.inbox.clone();
    let run = fetched.run.id;
    let (outcome, content) = blocking(move || {
        let outcome = inbox.keep_bytes(run, incoming, content.as_bytes());
        (outcome, content)
    })
    .await?;
    let stub = match outcome {
        Ok(outcome) => outcome.stub(),
        Err(error) => {
            tracing::error!(%run, %error, "a long page could not be kept");
            "(the whole page could not be kept in the inbox)".to_owned()
        }
    };
    let mut cut = TEXT_MAX_BYTES;
    while !content.is_char_boundary(cut) {
        cut -= 1;
    }
    Ok(format!(
        "{stub}\n(the page's Markdown is longer than {}; the whole of it is in the file above, its beginning follows)\n\n{}",
        porter_fileview::human_size(TEXT_MAX_BYTES as u64),
        &content[..cut]
    ))
}

/// Runs CPU-bound work (parsing, converting a page) off the async workers.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work).await.map_err(|error| {
        tracing::error!(%error, "converting a page stopped unexpectedly");
        ToolError::tool("converting the page stopped unexpectedly; try again")
    })
}
