//! `download` and `upload`: the `File` tool's network ops.
//!
//! Both need the `HTTP` grant and run only for the run's own model (an
//! outside caller is refused), go through the one policy-checked client,
//! register the URL's query values with the run's redactor before anything
//! is sent, refuse credential-looking headers, and ask the operator's hooks
//! first. A download streams into the inbox (a [`porter_inbox::Keeper`]) or
//! into a temp file in a volume that is renamed in at the end: the body is
//! never held whole, a file over the cap or a cancelled call leaves nothing
//! behind. An upload is one PUT/POST streaming the file, or a Microsoft
//! Graph upload session sent in 320 KiB-aligned chunks.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt as _;
use porter_inbox::{Incoming, Origin, Outcome, RunInfo, media, names};
use porter_mcp::ToolError;
use porter_net::reqwest::header::{
    CONTENT_LENGTH, CONTENT_RANGE, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, LOCATION,
};
use porter_net::reqwest::{Method, Response, StatusCode};
use porter_net::{Net, NetError, RedirectRule, RequestOptions, check_url, display_url};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use url::Url;

use super::args::{FileArgs, Op, UploadMethod};
use super::disk;
use super::grants::Need;
use super::local::{Answer, Shared, answer};
use super::reference::{Place, Reference};
use crate::access::Caller;
use crate::config::Grant;
use crate::context::CallContext;
use crate::hooks::Hooks;

/// `PROGRESS_BYTES` is how many bytes pass between two progress
/// notifications at most, and [`PROGRESS_EVERY`] how much time.
pub const PROGRESS_BYTES: u64 = 1024 * 1024;
/// `PROGRESS_EVERY` is the longest time between two progress notifications
/// while bytes keep moving.
pub const PROGRESS_EVERY: Duration = Duration::from_millis(250);
/// `GRAPH_ALIGN_BYTES` is the unit Microsoft Graph wants every chunk but
/// the last to be a multiple of (320 KiB).
pub const GRAPH_ALIGN_BYTES: u64 = 320 * 1024;
/// `GRAPH_CHUNK_BYTES` is the size of one Graph chunk (10 × 320 KiB, within
/// Graph's recommended 5–10 MiB): few enough requests, little memory.
pub const GRAPH_CHUNK_BYTES: u64 = 10 * GRAPH_ALIGN_BYTES;
/// `GRAPH_RETRIES` is how many times in a row a failed chunk is retried
/// (after asking the session where to resume) before the upload gives up.
pub const GRAPH_RETRIES: u32 = 3;
/// `WRITE_BATCH_BYTES` is how much of a download is gathered before one
/// write to disk, so that small network reads do not become small writes.
const WRITE_BATCH_BYTES: usize = 256 * 1024;
/// `DIRECT_WRITE_BYTES` is the size from which a received chunk is written
/// as it is rather than gathered into a batch.
const DIRECT_WRITE_BYTES: usize = 64 * 1024;
/// `CHANNEL_CHUNKS` is how many received chunks may wait for the disk.
const CHANNEL_CHUNKS: usize = 4;
/// `READ_CHUNK_BYTES` is how much of a file is read at a time for a PUT/POST
/// body.
const READ_CHUNK_BYTES: usize = 256 * 1024;
/// `ANSWER_SHOWN_CHARS` is the most of a server's answer shown after an
/// upload or a failed request.
const ANSWER_SHOWN_CHARS: usize = 600;
/// `FALLBACK_NAME` names a download that neither its headers nor its URL name.
const FALLBACK_NAME: &str = "download";

/// `Network` is what the File tool needs to reach the network: the
/// policy-checked client and the operator's hooks.
pub(crate) struct Network {
    pub net: Net,
    pub hooks: Hooks,
}

/// Whether `arguments` ask for a network op (so that what is wrong with them
/// is said in the words of download and upload).
pub(crate) fn is_network_op(arguments: &Value) -> bool {
    matches!(
        arguments.get("op").and_then(Value::as_str),
        Some("download" | "upload")
    )
}

/// Runs `download` or `upload`. Every text in the answer is redacted with
/// the run's redactor.
pub(crate) async fn call(
    shared: &Shared,
    network: Option<&Network>,
    caller: &Caller,
    run: &RunInfo,
    args: FileArgs,
    cx: &CallContext,
) -> CallToolResult {
    let answer = run_op(shared, network, caller, run, args, cx).await;
    let result = answer.unwrap_or_else(super::local::failed);
    redacted(result, cx)
}

async fn run_op(
    shared: &Shared,
    network: Option<&Network>,
    caller: &Caller,
    run: &RunInfo,
    args: FileArgs,
    cx: &CallContext,
) -> Answer {
    let op = if args.op == Op::Download {
        "download"
    } else {
        "upload"
    };
    let grants = match caller {
        Caller::Key { .. } => {
            return Err(ToolError::tool(format!(
                "{op} reaches the network and is open only to the run's own model, not from outside"
            )));
        }
        Caller::Model { grants, .. } => grants,
    };
    if !grants.contains(&Grant::Http) {
        return Err(ToolError::tool(format!(
            "{op} needs the HTTP grant, which your profile does not give; ask the operator to add HTTP to it"
        )));
    }
    let Some(network) = network else {
        return Err(ToolError::tool(format!(
            "{op} is not available: this gateway has no network client"
        )));
    };
    let Some(url_text) = args.url.as_deref() else {
        return Err(ToolError::tool(format!(
            "{op} needs url, the http or https address to {}",
            if op == "download" {
                "fetch"
            } else {
                "send the file to"
            }
        )));
    };
    let url = check_url(url_text.trim())?;
    cx.redactor.register(&url);
    let headers = request_headers(args.headers.as_ref(), op)?;
    let transfer = Transfer {
        shared,
        network,
        caller,
        run,
        cx,
        url,
        headers,
    };
    match args.op {
        Op::Download => transfer.download(&args).await,
        _ => transfer.upload(&args).await,
    }
}

/// The model's headers as a `HeaderMap`; credentials and malformed headers
/// are refused by name (a value is never repeated).
fn request_headers(
    given: Option<&BTreeMap<String, String>>,
    op: &str,
) -> Result<HeaderMap, ToolError> {
    let mut headers = HeaderMap::new();
    for (name, value) in given.into_iter().flatten() {
        if porter_net::is_credential_header(name) {
            return Err(ToolError::tool(format!(
                "the header {name:?} looks like a credential, and {op} does not send credentials from the conversation; use a pre-authenticated URL, or ask the operator to configure access"
            )));
        }
        let header = HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| ToolError::tool(format!("{name:?} is not a valid header name")))?;
        let value = HeaderValue::from_str(value).map_err(|_| {
            ToolError::tool(format!(
                "the value of header {name:?} is not a valid header value"
            ))
        })?;
        headers.insert(header, value);
    }
    Ok(headers)
}

/// One download or upload in flight: who asks, for which run, to where.
struct Transfer<'a> {
    shared: &'a Shared,
    network: &'a Network,
    caller: &'a Caller,
    run: &'a RunInfo,
    cx: &'a CallContext,
    url: Url,
    headers: HeaderMap,
}

/// Where a download goes.
enum Target {
    /// The inbox, under an optional folder and name.
    Inbox {
        dir: Option<String>,
        name: Option<String>,
    },
    /// A volume path; `folder` when the file keeps its own name in it.
    Volume { reference: Reference, folder: bool },
}

impl Transfer<'_> {
    fn shown(&self) -> String {
        display_url(&self.url)
    }

    async fn report(&self, done: u64, total: Option<u64>, verb: &str) {
        if let Some(progress) = &self.cx.progress {
            let message = match total {
                Some(total) => format!(
                    "{verb} {} of {}",
                    porter_fileview::human_size(done),
                    porter_fileview::human_size(total)
                ),
                None => format!("{verb} {}", porter_fileview::human_size(done)),
            };
            progress
                .report(done as f64, total.map(|t| t as f64), Some(message))
                .await;
        }
    }

    // ------------------------------------------------------------------
    // download

    async fn download(&self, args: &FileArgs) -> Answer {
        let target = self.download_target(args.to.as_deref())?;
        let to_shown = args.to.as_deref().map_or_else(
            || "volume:inbox:".to_owned(),
            |to| match &target {
                Target::Volume { reference, .. } => reference.shown(),
                Target::Inbox { .. } => Reference::parse(to).map(|r| r.shown()).unwrap_or_default(),
            },
        );
        let shown = self.shown();
        self.network
            .hooks
            .judge(&json!({"op": "download", "url": shown, "to": to_shown}))
            .await
            .map_err(ToolError::tool)?;
        let options = RequestOptions {
            headers: self.headers.clone(),
            body: None,
            redirect: RedirectRule::SameHost,
            deadline: None,
        };
        let sent = self.network.net.request(Method::GET, &self.url, options);
        let response = tokio::select! {
            () = self.cx.cancel.cancelled() => return Err(cancelled_download()),
            response = sent => response.map_err(|e| ToolError::tool(format!("{e}; nothing was downloaded")))?,
        };
        let status = response.status();
        if !status.is_success() {
            return Err(ToolError::tool(format!(
                "{shown} answered {}; nothing was downloaded{}",
                status_line(status),
                answer_excerpt(response).await
            )));
        }
        let offered = porter_net::offered_file_name(response.headers(), response.url());
        let declared = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let length = response.content_length();
        let call = json!({
            "tool": "File",
            "arguments": {
                "op": "download",
                "url": shown,
                "to": args.to,
                "headers": self.headers.keys().map(HeaderName::as_str).collect::<Vec<_>>(),
            },
        })
        .to_string();
        let call = self.cx.redactor.redact(&call);
        match target {
            Target::Inbox { dir, name } => {
                let incoming = Incoming {
                    name: name.or(offered),
                    fallback_name: FALLBACK_NAME.to_owned(),
                    dir,
                    declared_type: declared,
                    origin: Origin::FileDownload,
                    call,
                };
                self.download_to_inbox(response, incoming, length).await
            }
            Target::Volume { reference, folder } => {
                let media_type = media::declared_essence(declared.as_deref())
                    .unwrap_or_else(|| "application/octet-stream".to_owned());
                let reference = if folder {
                    reference.join(&names::file_name(
                        offered.as_deref(),
                        FALLBACK_NAME,
                        &media_type,
                    ))
                } else {
                    reference
                };
                self.download_to_volume(response, reference, declared, length, args.overwrite)
                    .await
            }
        }
    }

    /// Where `to` says the download goes, after checking the grants for it.
    fn download_target(&self, to: Option<&str>) -> Result<Target, ToolError> {
        let Some(to) = to else {
            self.shared.allow(
                self.caller,
                self.run,
                &Reference::new(Place::Inbox, ""),
                Need::Change,
            )?;
            return Ok(Target::Inbox {
                dir: None,
                name: None,
            });
        };
        let reference = Reference::parse(to)?;
        let folder = reference.rel.is_empty() || to.trim_end().ends_with('/');
        match &reference.place {
            Place::Inbox => {
                self.shared
                    .allow(self.caller, self.run, &reference, Need::Change)?;
                let (dir, name) = if folder {
                    (Some(reference.rel.clone()).filter(|d| !d.is_empty()), None)
                } else {
                    match reference.rel.rsplit_once('/') {
                        Some((dir, name)) => (Some(dir.to_owned()), Some(name.to_owned())),
                        None => (None, Some(reference.rel.clone())),
                    }
                };
                Ok(Target::Inbox { dir, name })
            }
            Place::Volume(_) => {
                self.shared
                    .allow(self.caller, self.run, &reference, Need::Keep)?;
                let root = self
                    .shared
                    .root(self.run, &reference)?
                    .ok_or_else(|| super::local::missing(&reference))?;
                let folder = folder || root.metadata(reference.fs_path()).is_ok_and(|m| m.is_dir());
                Ok(Target::Volume { reference, folder })
            }
        }
    }

    async fn download_to_inbox(
        &self,
        response: Response,
        incoming: Incoming,
        length: Option<u64>,
    ) -> Answer {
        let mut keeper = self
            .shared
            .inbox
            .keeper(self.run.id, incoming)
            .map_err(|e| super::local::store_fault(self.run, &e))?;
        if let Some(length) = length
            && keeper.expect_size(length).is_err()
        {
            return Err(self.not_kept(keeper.finish()));
        }
        let (keeper, streamed) = self.stream(response, keeper, length).await?;
        match streamed {
            Streamed::Done(Ok(())) => {}
            Streamed::Done(Err(error)) if is_refusal(&error) => {
                return Err(self.not_kept(keeper.finish()));
            }
            Streamed::Done(Err(error)) => {
                drop(keeper);
                tracing::error!(run = %self.run.id, %error, "a download could not be written to the inbox");
                return Err(ToolError::tool(
                    "the inbox could not store the download; nothing was kept; tell the operator if it keeps failing",
                ));
            }
            Streamed::Cancelled => return Err(cancelled_download()),
            Streamed::Failed(error) => {
                return Err(ToolError::tool(format!(
                    "{error}; the download stopped and nothing was kept"
                )));
            }
        }
        match keeper.finish() {
            Ok(outcome @ Outcome::Kept(_)) => {
                let Outcome::Kept(record) = &outcome else {
                    unreachable!("matched as kept")
                };
                Ok(answer(
                    outcome.stub(),
                    json!({
                        "ref": porter_inbox::inbox_ref(&record.path),
                        "path": format!("volume:inbox:{}", record.path),
                        "media_type": record.media_type,
                        "size": record.size,
                        "sha256": record.sha256,
                        "url": self.shown(),
                    }),
                ))
            }
            other => Err(self.not_kept(other)),
        }
    }

    /// The answer for a download the inbox did not keep: its stub, and that
    /// nothing is left.
    fn not_kept(&self, outcome: Result<Outcome, porter_inbox::InboxError>) -> ToolError {
        ToolError::tool(match outcome {
            Ok(outcome) => format!(
                "{} — {} was not downloaded, and nothing of it was left behind",
                outcome.stub(),
                self.shown()
            ),
            Err(error @ porter_inbox::InboxError::Unavailable(_)) => {
                tracing::warn!(run = %self.run.id, %error, "a download could not be kept");
                format!("{}; nothing was kept", error.reason())
            }
            Err(error) => {
                tracing::error!(run = %self.run.id, %error, "a download could not be kept");
                "the inbox could not store the download; nothing was kept".to_owned()
            }
        })
    }

    async fn download_to_volume(
        &self,
        response: Response,
        reference: Reference,
        declared: Option<String>,
        length: Option<u64>,
        overwrite: bool,
    ) -> Answer {
        let cap = self.shared.inbox.limits().file_max_bytes;
        if let Some(length) = length
            && length > cap
        {
            return Err(ToolError::tool(format!(
                "{} announces {}, over the {} limit for one file; nothing was downloaded",
                self.shown(),
                porter_fileview::human_size(length),
                porter_fileview::human_size(cap)
            )));
        }
        let root = self
            .shared
            .root(self.run, &reference)?
            .ok_or_else(|| super::local::missing(&reference))?;
        let file = VolumeFile::create(&root, &reference, overwrite, cap)?;
        let (file, streamed) = self.stream(response, file, length).await?;
        match streamed {
            Streamed::Done(Ok(())) => {}
            Streamed::Done(Err(error)) if error.kind() == io::ErrorKind::FileTooLarge => {
                return Err(ToolError::tool(format!(
                    "{} sent more than the {} limit for one file; the download stopped and nothing was left behind",
                    self.shown(),
                    porter_fileview::human_size(cap)
                )));
            }
            Streamed::Done(Err(error)) => return Err(super::local::io_fault(&reference, &error)),
            Streamed::Cancelled => return Err(cancelled_download()),
            Streamed::Failed(error) => {
                return Err(ToolError::tool(format!(
                    "{error}; the download stopped and nothing was kept"
                )));
            }
        }
        let saved = tokio::task::spawn_blocking(move || file.commit(declared.as_deref()))
            .await
            .map_err(|_| ToolError::tool("the download stopped unexpectedly; nothing was kept"))?;
        let saved = saved.map_err(|error| match error.kind() {
            io::ErrorKind::AlreadyExists => ToolError::tool(format!(
                "{} already exists; pass overwrite: true to replace it, or download to another path",
                reference.shown()
            )),
            _ => super::local::io_fault(&reference, &error),
        })?;
        Ok(answer(
            format!(
                "downloaded {} to {} · {} · {} · sha256:{}",
                self.shown(),
                reference.shown(),
                saved.media_type,
                porter_fileview::human_size(saved.size),
                saved.sha256
            ),
            json!({
                "path": reference.shown(),
                "media_type": saved.media_type,
                "size": saved.size,
                "sha256": saved.sha256,
                "url": self.shown(),
            }),
        ))
    }

    /// Streams the body of `response` into `sink` on the blocking pool,
    /// reporting progress, until the body ends, the sink refuses, reading
    /// fails or the call is cancelled. The sink comes back for the caller
    /// to finish (or drop, which removes what it wrote).
    async fn stream<W: Write + Send + 'static>(
        &self,
        response: Response,
        sink: W,
        total: Option<u64>,
    ) -> Result<(W, Streamed), ToolError> {
        let (sender, receiver) = tokio::sync::mpsc::channel::<Bytes>(CHANNEL_CHUNKS);
        let writer = tokio::task::spawn_blocking(move || write_all_chunks(sink, receiver));
        let mut body = response.bytes_stream();
        let mut done = 0u64;
        let mut reported = (0u64, Instant::now());
        let outcome = loop {
            let next = tokio::select! {
                () = self.cx.cancel.cancelled() => break Streamed::Cancelled,
                next = body.next() => next,
            };
            let chunk = match next {
                None => break Streamed::Done(Ok(())),
                Some(Err(error)) => {
                    let timeout = self.network.net.policy().timeout;
                    break Streamed::Failed(NetError::reading(&self.url, error, timeout));
                }
                Some(Ok(chunk)) => chunk,
            };
            done += chunk.len() as u64;
            if sender.send(chunk).await.is_err() {
                // The writer stopped: it says why below.
                break Streamed::Done(Ok(()));
            }
            if done - reported.0 >= PROGRESS_BYTES || reported.1.elapsed() >= PROGRESS_EVERY {
                self.report(done, total, "downloaded").await;
                reported = (done, Instant::now());
            }
        };
        drop(sender);
        drop(body);
        let Ok((sink, written)) = writer.await else {
            // The writer panicked; its sink (and so the partial file) is gone.
            return Err(ToolError::tool(
                "the download stopped unexpectedly; nothing was kept",
            ));
        };
        let outcome = match outcome {
            Streamed::Done(_) => Streamed::Done(written),
            other => other,
        };
        if matches!(outcome, Streamed::Done(Ok(()))) && done != reported.0 {
            self.report(done, total, "downloaded").await;
        }
        Ok((sink, outcome))
    }

    // ------------------------------------------------------------------
    // upload

    async fn upload(&self, args: &FileArgs) -> Answer {
        let Some(method) = args.method else {
            return Err(ToolError::tool(
                "upload needs method: put or post (one request), or graph (a Microsoft Graph upload session's uploadUrl)",
            ));
        };
        let Some(from_text) = args.from.as_deref() else {
            return Err(ToolError::tool(
                "upload needs from, the file to send: volume:inbox:<path> or volume:<name>:<path>",
            ));
        };
        let from = self
            .shared
            .resolve(self.caller, self.run, from_text, Need::Look)?;
        if from.name().is_none() {
            return Err(ToolError::tool(
                "upload sends one file; name a file in from, not a folder",
            ));
        }
        let media_type = self.shared.record(self.run, &from)?.map(|r| r.media_type);
        let root = self.shared.existing_root(self.run, &from)?;
        let links = self.shared.links(&from);
        let opened = {
            let from = from.clone();
            tokio::task::spawn_blocking(move || open_and_hash(&root, from.fs_path(), links))
                .await
                .map_err(|_| ToolError::tool("the upload stopped unexpectedly; nothing was sent"))?
        };
        let (file, size, sha256) = opened.map_err(|e| super::local::io_fault(&from, &e))?;
        let method_word = match method {
            UploadMethod::Put => "put",
            UploadMethod::Post => "post",
            UploadMethod::Graph => "graph",
        };
        self.network
            .hooks
            .judge(&json!({
                "op": "upload",
                "from": from.shown(),
                "size": size,
                "sha256": sha256,
                "url": self.shown(),
                "method": method_word,
            }))
            .await
            .map_err(ToolError::tool)?;
        let file = Arc::new(file);
        let (status, excerpt) = match method {
            UploadMethod::Put | UploadMethod::Post => {
                let method = if method == UploadMethod::Put {
                    Method::PUT
                } else {
                    Method::POST
                };
                self.send_whole(method, &file, size, media_type.as_deref())
                    .await?
            }
            UploadMethod::Graph => self.send_graph(&file, size).await?,
        };
        let text = format!(
            "uploaded {} ({}, sha256:{}) to {} with {}: {}{excerpt}",
            from.shown(),
            porter_fileview::human_size(size),
            sha256,
            self.shown(),
            method_word,
            status_line(status)
        );
        Ok(answer(
            text,
            json!({
                "from": from.shown(),
                "size": size,
                "sha256": sha256,
                "url": self.shown(),
                "method": method_word,
                "status": status.as_u16(),
            }),
        ))
    }

    /// One PUT or POST whose body streams the file; redirects are reported,
    /// never followed.
    async fn send_whole(
        &self,
        method: Method,
        file: &Arc<std::fs::File>,
        size: u64,
        media_type: Option<&str>,
    ) -> Result<(StatusCode, String), ToolError> {
        let sent = Arc::new(AtomicU64::new(0));
        let body = file_body(file, size, Arc::clone(&sent))
            .map_err(|e| ToolError::tool(format!("the file could not be read: {e}")))?;
        let mut headers = self.headers.clone();
        headers.insert(CONTENT_LENGTH, HeaderValue::from(size));
        if !headers.contains_key(CONTENT_TYPE) {
            let media_type = media_type.unwrap_or("application/octet-stream");
            if let Ok(value) = HeaderValue::from_str(media_type) {
                headers.insert(CONTENT_TYPE, value);
            }
        }
        let options = RequestOptions {
            headers,
            body: Some(body),
            redirect: RedirectRule::None,
            deadline: None,
        };
        let request = self.network.net.request(method, &self.url, options);
        tokio::pin!(request);
        let mut ticker = tokio::time::interval(PROGRESS_EVERY);
        let mut reported = 0;
        let response = loop {
            tokio::select! {
                () = self.cx.cancel.cancelled() => {
                    return Err(ToolError::tool("the upload was cancelled; the server may have received part of the file"));
                }
                response = &mut request => break response,
                _ = ticker.tick() => {
                    let done = sent.load(Ordering::Relaxed);
                    if done != reported {
                        self.report(done, Some(size), "uploaded").await;
                        reported = done;
                    }
                }
            }
        };
        let response =
            response.map_err(|e| ToolError::tool(format!("{e}; the upload did not complete")))?;
        let status = response.status();
        if sent.load(Ordering::Relaxed) != reported {
            self.report(size, Some(size), "uploaded").await;
        }
        if status.is_redirection() {
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|l| self.url.join(l).ok())
                .map(|l| format!(" to {}", display_url(&l)))
                .unwrap_or_default();
            return Err(ToolError::tool(format!(
                "{} answered {} (a redirect{location}); uploads never follow redirects, so the file was not delivered there. Upload to the final URL instead",
                self.shown(),
                status_line(status)
            )));
        }
        let excerpt = answer_excerpt(response).await;
        if !status.is_success() {
            return Err(ToolError::tool(format!(
                "{} answered {}; the upload was not accepted{excerpt}",
                self.shown(),
                status_line(status)
            )));
        }
        Ok((status, excerpt))
    }

    /// Microsoft Graph's resumable upload: PUT chunks of
    /// [`GRAPH_CHUNK_BYTES`] with `Content-Range`, resuming where the
    /// session's `nextExpectedRanges` say, until it answers 200 or 201.
    async fn send_graph(
        &self,
        file: &Arc<std::fs::File>,
        size: u64,
    ) -> Result<(StatusCode, String), ToolError> {
        if size == 0 {
            return Err(ToolError::tool(
                "a Graph upload session takes no empty file; upload at least one byte, or use put",
            ));
        }
        let shown = self.shown();
        let mut offset = 0u64;
        let mut failures = 0u32;
        loop {
            if self.cx.cancel.is_cancelled() {
                return Err(ToolError::tool(format!(
                    "the upload was cancelled after {} of {}; the upload session can resume it",
                    porter_fileview::human_size(offset),
                    porter_fileview::human_size(size)
                )));
            }
            let end = (offset + GRAPH_CHUNK_BYTES).min(size);
            let chunk = read_range(file, offset, end)
                .await
                .map_err(|e| ToolError::tool(format!("the file could not be read: {e}")))?;
            let mut headers = self.headers.clone();
            headers.insert(CONTENT_LENGTH, HeaderValue::from(end - offset));
            let range = format!("bytes {offset}-{}/{size}", end - 1);
            headers.insert(CONTENT_RANGE, HeaderValue::from_str(&range)?);
            let options = RequestOptions {
                headers,
                body: Some(chunk.into()),
                redirect: RedirectRule::None,
                deadline: None,
            };
            let sent = self.network.net.request(Method::PUT, &self.url, options);
            let response = tokio::select! {
                () = self.cx.cancel.cancelled() => continue,
                response = sent => response,
            };
            let fault = match response {
                Ok(response)
                    if matches!(response.status(), StatusCode::OK | StatusCode::CREATED) =>
                {
                    let status = response.status();
                    self.report(size, Some(size), "uploaded").await;
                    return Ok((status, answer_excerpt(response).await));
                }
                Ok(response) if response.status() == StatusCode::ACCEPTED => {
                    let ranges = next_expected(response).await;
                    offset = ranges.unwrap_or(end).min(size);
                    failures = 0;
                    self.report(offset, Some(size), "uploaded").await;
                    continue;
                }
                Ok(response) if response.status() == StatusCode::NOT_FOUND => {
                    return Err(ToolError::tool(format!(
                        "{shown} answered 404 Not Found: the upload session is gone (it expired or was cancelled); create a new one"
                    )));
                }
                Ok(response) => format!(
                    "{shown} answered {}{}",
                    status_line(response.status()),
                    answer_excerpt(response).await
                ),
                Err(error) if error.refusal().is_some() => return Err(error.into()),
                Err(error) => error.to_string(),
            };
            failures += 1;
            if failures > GRAPH_RETRIES {
                return Err(ToolError::tool(format!(
                    "the chunk at byte {offset} failed {failures} times, the last time: {fault}; the upload session holds what was sent before"
                )));
            }
            tracing::info!(url = %self.cx.redactor.redact(&shown), offset, failures, fault = %self.cx.redactor.redact(&fault), "a Graph chunk failed; asking the session where to resume");
            tokio::time::sleep(Duration::from_millis(200 * u64::from(failures))).await;
            if let Some(resume) = self.graph_status().await {
                offset = resume.min(size);
            }
        }
    }

    /// Where the Graph session wants the next byte, from a GET on its URL.
    async fn graph_status(&self) -> Option<u64> {
        let options = RequestOptions {
            headers: HeaderMap::new(),
            body: None,
            redirect: RedirectRule::None,
            deadline: Some(self.network.net.policy().timeout),
        };
        let response = self
            .network
            .net
            .request(Method::GET, &self.url, options)
            .await
            .ok()?;
        if !response.status().is_success() {
            return None;
        }
        next_expected(response).await
    }
}

/// How streaming a body ended.
enum Streamed {
    /// The body ended, or the sink stopped taking it; the sink's verdict.
    Done(io::Result<()>),
    /// The call was cancelled.
    Cancelled,
    /// Reading the body failed.
    Failed(NetError),
}

fn cancelled_download() -> ToolError {
    ToolError::tool("the download was cancelled; nothing was kept")
}

/// Whether a sink's error is the inbox refusing a file over a cap (rather
/// than the disk failing).
fn is_refusal(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::FileTooLarge
            | io::ErrorKind::QuotaExceeded
            | io::ErrorKind::PermissionDenied
    )
}

/// Writes every chunk from `receiver` into `sink` in batches of
/// [`WRITE_BATCH_BYTES`]; stops at the first error (dropping the receiver,
/// which stops the reader). Runs on the blocking pool.
fn write_all_chunks<W: Write>(
    mut sink: W,
    mut receiver: tokio::sync::mpsc::Receiver<Bytes>,
) -> (W, io::Result<()>) {
    let mut batch = Vec::with_capacity(WRITE_BATCH_BYTES);
    while let Some(chunk) = receiver.blocking_recv() {
        if chunk.len() >= DIRECT_WRITE_BYTES {
            // Big enough to write as it is: copying it into the batch would
            // only cost memory bandwidth.
            if !batch.is_empty() {
                if let Err(error) = sink.write_all(&batch) {
                    return (sink, Err(error));
                }
                batch.clear();
            }
            if let Err(error) = sink.write_all(&chunk) {
                return (sink, Err(error));
            }
            continue;
        }
        batch.extend_from_slice(&chunk);
        if batch.len() >= WRITE_BATCH_BYTES {
            if let Err(error) = sink.write_all(&batch) {
                return (sink, Err(error));
            }
            batch.clear();
        }
    }
    let written = if batch.is_empty() {
        Ok(())
    } else {
        sink.write_all(&batch)
    };
    (sink, written)
}

/// What a download into a volume became.
struct Saved {
    size: u64,
    sha256: String,
    media_type: String,
}

/// `VolumeFile` is a download being written into a volume: a temp file in
/// the target's folder, renamed in by [`VolumeFile::commit`]. Dropped
/// without a commit, it removes the temp file.
struct VolumeFile {
    parent: cap_std::fs::Dir,
    temp: String,
    name: String,
    file: Option<cap_std::fs::File>,
    overwrite: bool,
    cap: u64,
    size: u64,
    hasher: Sha256,
    head: Vec<u8>,
}

impl VolumeFile {
    fn create(
        root: &cap_std::fs::Dir,
        reference: &Reference,
        overwrite: bool,
        cap: u64,
    ) -> Result<Self, ToolError> {
        let fault = |error: io::Error| super::local::io_fault(reference, &error);
        let (parent_rel, name) = match reference.rel.rsplit_once('/') {
            Some((parent, name)) => (parent, name),
            None => (".", reference.rel.as_str()),
        };
        if parent_rel != "."
            && let Err(error) = root.create_dir_all(parent_rel)
        {
            // A symlink leading out reads as "exists" here; opening it says
            // what is really wrong.
            return Err(fault(root.open_dir(parent_rel).err().unwrap_or(error)));
        }
        let parent = root.open_dir(parent_rel).map_err(fault)?;
        match parent.symlink_metadata(name) {
            Ok(existing) if existing.is_dir() => {
                return Err(ToolError::tool(format!(
                    "{} is a folder; name a file inside it, or end to with / to keep the file's own name",
                    reference.shown()
                )));
            }
            Ok(_) if !overwrite => {
                return Err(ToolError::tool(format!(
                    "{} already exists; pass overwrite: true to replace it, or download to another path",
                    reference.shown()
                )));
            }
            Ok(_) => {}
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(fault(error)),
        }
        let temp = format!(".porter-download-{}.tmp", uuid::Uuid::now_v7());
        let mut options = cap_std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        let file = parent.open_with(&temp, &options).map_err(fault)?;
        Ok(Self {
            parent,
            temp,
            name: name.to_owned(),
            file: Some(file),
            overwrite,
            cap,
            size: 0,
            hasher: Sha256::new(),
            head: Vec::new(),
        })
    }

    /// Syncs the file and renames it to its name (never over an existing
    /// file unless `overwrite`).
    fn commit(mut self, declared: Option<&str>) -> io::Result<Saved> {
        let file = self
            .file
            .take()
            .ok_or_else(|| io::Error::other("the download's file is gone"))?;
        file.sync_all()?;
        drop(file);
        let placed = if self.overwrite {
            self.parent.rename(&self.temp, &self.parent, &self.name)
        } else {
            let linked = self.parent.hard_link(&self.temp, &self.parent, &self.name);
            let _ = self.parent.remove_file(&self.temp);
            linked
        };
        placed?;
        // Renamed or removed: nothing is left for `drop` to clean up.
        self.temp.clear();
        let hasher = std::mem::take(&mut self.hasher);
        Ok(Saved {
            size: self.size,
            sha256: disk::hex(&hasher.finalize()),
            media_type: media::media_type(declared, &self.head, &self.name),
        })
    }
}

impl Write for VolumeFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.size.saturating_add(buf.len() as u64) > self.cap {
            self.file = None;
            return Err(io::Error::new(
                io::ErrorKind::FileTooLarge,
                "over the limit for one file",
            ));
        }
        let file = self
            .file
            .as_mut()
            .ok_or_else(|| io::Error::other("the download's file is closed"))?;
        file.write_all(buf)?;
        self.size += buf.len() as u64;
        self.hasher.update(buf);
        if self.head.len() < media::SNIFF_BYTES {
            let take = (media::SNIFF_BYTES - self.head.len()).min(buf.len());
            self.head.extend_from_slice(&buf[..take]);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().map_or(Ok(()), Write::flush)
    }
}

impl Drop for VolumeFile {
    fn drop(&mut self) {
        self.file = None;
        if !self.temp.is_empty() {
            let _ = self.parent.remove_file(&self.temp);
        }
    }
}

/// Opens the file `rel` beneath `root` and hashes it: the file, its size
/// and its SHA-256, which is what the hook sees and the answer names.
fn open_and_hash(
    root: &cap_std::fs::Dir,
    rel: &str,
    links: disk::Links,
) -> io::Result<(std::fs::File, u64, String)> {
    let (file, _) = disk::open_file(root, rel, links)?;
    let mut file = file.into_std();
    let (size, sha256) = disk::read_hashed(&mut file, |_| Ok(()), |error| error)?;
    Ok((file, size, sha256))
}

/// Bytes `start..end` of `file`, read on the blocking pool.
async fn read_range(file: &Arc<std::fs::File>, start: u64, end: u64) -> io::Result<Vec<u8>> {
    let file = Arc::clone(file);
    tokio::task::spawn_blocking(move || {
        use std::os::unix::fs::FileExt as _;
        let mut chunk = vec![0u8; (end - start) as usize];
        file.read_exact_at(&mut chunk, start)?;
        Ok(chunk)
    })
    .await
    .map_err(io::Error::other)?
}

/// A request body that streams the first `size` bytes of `file`, counting
/// what has been handed to the connection in `sent`.
fn file_body(
    file: &Arc<std::fs::File>,
    size: u64,
    sent: Arc<AtomicU64>,
) -> io::Result<porter_net::reqwest::Body> {
    let file = file.try_clone()?;
    let stream = futures_util::stream::try_unfold(
        (Arc::new(file), 0u64),
        move |(file, offset)| async move {
            if offset >= size {
                return Ok(None);
            }
            let end = (offset + READ_CHUNK_BYTES as u64).min(size);
            let chunk = read_range(&file, offset, end).await?;
            Ok::<_, io::Error>(Some((Bytes::from(chunk), (file, end))))
        },
    )
    .inspect(move |chunk| {
        if let Ok(chunk) = chunk {
            sent.fetch_add(chunk.len() as u64, Ordering::Relaxed);
        }
    });
    Ok(porter_net::reqwest::Body::wrap_stream(stream))
}

/// The start of the first of the `nextExpectedRanges` a Graph session
/// answers (`["26-"]`, `["0-25", "77-"]`).
async fn next_expected(response: Response) -> Option<u64> {
    first_expected(&response.bytes().await.ok()?)
}

/// The start of the first range in a Graph session's JSON answer.
fn first_expected(body: &[u8]) -> Option<u64> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let first = value
        .get("nextExpectedRanges")?
        .as_array()?
        .first()?
        .as_str()?;
    first.split('-').next()?.trim().parse().ok()
}

/// `"404 Not Found"`.
fn status_line(status: StatusCode) -> String {
    match status.canonical_reason() {
        Some(reason) => format!("{} {reason}", status.as_u16()),
        None => status.as_u16().to_string(),
    }
}

/// The start of a server's textual answer, as `: …` to append to a
/// sentence, or nothing for an empty or binary one.
async fn answer_excerpt(response: Response) -> String {
    let is_text = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_none_or(|t| t.starts_with("text/") || t.contains("json") || t.contains("xml"));
    if !is_text {
        return String::new();
    }
    let mut response = response;
    let mut body = Vec::new();
    while body.len() < ANSWER_SHOWN_CHARS * 4 {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            _ => break,
        }
    }
    let text = String::from_utf8_lossy(&body);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return String::new();
    }
    match text.char_indices().nth(ANSWER_SHOWN_CHARS) {
        Some((at, _)) => format!(": {}…", &text[..at]),
        None => format!(": {text}"),
    }
}

/// `result` with the run's secrets masked in every text and every string
/// of its structured content.
fn redacted(mut result: CallToolResult, cx: &CallContext) -> CallToolResult {
    for block in &mut result.content {
        if let ContentBlock::Text(text) = block {
            text.text = cx.redactor.redact(&text.text);
        }
    }
    if let Some(structured) = result.structured_content.as_mut() {
        redact_value(structured, cx);
    }
    result
}

fn redact_value(value: &mut Value, cx: &CallContext) {
    match value {
        Value::String(text) => *text = cx.redactor.redact(text),
        Value::Array(items) => items.iter_mut().for_each(|v| redact_value(v, cx)),
        Value::Object(map) => map.values_mut().for_each(|v| redact_value(v, cx)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_headers_are_refused_by_name_without_their_value() {
        let given = BTreeMap::from([("X-Api-Key".to_owned(), "sekrit-value".to_owned())]);
        let refused = request_headers(Some(&given), "download")
            .expect_err("refused")
            .to_string();
        assert!(
            refused.contains("\"X-Api-Key\" looks like a credential"),
            "{refused}"
        );
        assert!(!refused.contains("sekrit"), "{refused}");
        let given = BTreeMap::from([("Accept".to_owned(), "application/pdf".to_owned())]);
        let map = request_headers(Some(&given), "download").expect("allowed");
        assert_eq!(map["accept"], "application/pdf");
    }

    #[test]
    fn the_next_range_is_the_start_of_the_first_one() {
        let parse = |body: &str| first_expected(body.as_bytes());
        assert_eq!(
            parse(r#"{"nextExpectedRanges": ["3276800-"]}"#),
            Some(3_276_800)
        );
        assert_eq!(parse(r#"{"nextExpectedRanges": ["0-25", "77-"]}"#), Some(0));
        assert_eq!(parse(r#"{"nextExpectedRanges": []}"#), None);
    }

    #[test]
    fn batches_reach_the_sink_whole_and_in_order() {
        let (sender, receiver) = tokio::sync::mpsc::channel(4);
        let writer = std::thread::spawn(move || write_all_chunks(Vec::new(), receiver));
        let mut expected = Vec::new();
        for i in 0..40u8 {
            // Small chunks are batched, big ones written as they are.
            let chunk = vec![i; if i % 3 == 0 { 70_000 } else { 17_000 }];
            expected.extend_from_slice(&chunk);
            sender.blocking_send(Bytes::from(chunk)).expect("sent");
        }
        drop(sender);
        let (sink, written) = writer.join().expect("the writer ran");
        written.expect("written");
        assert_eq!(sink, expected);
    }

    #[test]
    fn a_volume_download_over_the_cap_or_dropped_leaves_no_file() {
        let temp = tempfile::tempdir().expect("a temp dir");
        let root = disk::open_root(temp.path()).expect("a root");
        let reference = Reference::parse("volume:v:sub/a.bin").expect("a reference");
        let mut file = VolumeFile::create(&root, &reference, false, 10).expect("created");
        file.write_all(b"12345").expect("fits");
        assert_eq!(
            file.write_all(b"678901").expect_err("over").kind(),
            io::ErrorKind::FileTooLarge
        );
        drop(file);
        assert_eq!(
            std::fs::read_dir(temp.path().join("sub"))
                .expect("ls")
                .count(),
            0
        );

        let mut file = VolumeFile::create(&root, &reference, false, 10).expect("created");
        file.write_all(b"hello\n").expect("fits");
        let saved = file.commit(Some("text/plain")).expect("committed");
        assert_eq!(saved.size, 6);
        assert_eq!(
            saved.sha256,
            "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
        );
        assert_eq!(
            std::fs::read(temp.path().join("sub/a.bin")).expect("there"),
            b"hello\n"
        );
        let again = VolumeFile::create(&root, &reference, false, 10).err();
        assert!(again.is_some_and(|e| e.to_string().contains("already exists")));
        assert_eq!(
            std::fs::read_dir(temp.path().join("sub"))
                .expect("ls")
                .count(),
            1
        );
    }
}
