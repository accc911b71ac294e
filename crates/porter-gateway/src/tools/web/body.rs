//! Receiving a response body: judged text or binary, text held in memory up
//! to a cap, everything else streamed chunk by chunk into the inbox.

use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use porter_fileview::Kind;
use porter_inbox::{Inbox, Incoming, Origin, Outcome, RunId};
use porter_mcp::ToolError;
use porter_net::NetError;
use porter_net::reqwest::Response;
use porter_net::reqwest::header::{CONTENT_TYPE, HeaderMap};

use crate::context::CallContext;

/// `JUDGE_BYTES` is how much of a body with no usable Content-Type is read
/// before it is judged text or binary: enough for every signature the file
/// view knows and for a fair look at text.
const JUDGE_BYTES: usize = 8 * 1024;

/// `PROGRESS_STEP_BYTES` is how often a streamed body reports progress.
const PROGRESS_STEP_BYTES: u64 = 1024 * 1024;

/// `Keeping` is what a kept body is recorded with, besides its bytes.
pub(crate) struct Keeping {
    /// The inbox the body goes to.
    pub inbox: Arc<Inbox>,
    /// The run whose inbox it is.
    pub run: RunId,
    /// Where it came from (`http:<host>`, `webfetch:<host>`).
    pub origin: Origin,
    /// A folder under the inbox root (`web/<host>`), if any.
    pub dir: Option<String>,
    /// The call, as redacted JSON text, for the record.
    pub call: String,
    /// The name to fall back on when neither Content-Disposition nor the
    /// URL's path gives one.
    pub fallback_name: String,
}

/// `Received` is what became of a body.
pub(crate) enum Received {
    /// A text body, whole, decoded.
    Text(String),
    /// A body offered to the inbox (kept, or not kept and gone).
    Kept {
        /// The inbox's answer, whose stub goes to the model.
        outcome: Outcome,
        /// Set when the body was text, kept only because it was longer
        /// than the cap the caller gave.
        long_text: bool,
    },
}

/// How a body is to be taken.
#[derive(Clone, Copy)]
pub(crate) struct Take {
    /// The most text held and returned; a longer text body is kept.
    pub text_max: usize,
    /// Keep the body whatever it is (WebFetch assets).
    pub always_keep: bool,
    /// The policy's timeout, for the message when a read stalls.
    pub timeout: Duration,
}

/// Reads `response`'s body as `take` says: text is returned whole (up to
/// `take.text_max`), anything else (or longer text) is streamed into the
/// inbox and answered with the inbox's outcome. A body too large for the
/// inbox is not read further, and nothing of it is left behind. The error
/// is a sentence for the model (not yet redacted).
pub(crate) async fn receive(
    response: Response,
    keeping: Keeping,
    take: Take,
    cx: &CallContext,
) -> Result<Received, ToolError> {
    let url = response.url().clone();
    let declared = header_text(response.headers(), CONTENT_TYPE.as_str());
    let name = porter_net::offered_file_name(response.headers(), &url);
    let name_hint = name
        .clone()
        .unwrap_or_else(|| keeping.fallback_name.clone());
    let length = response.content_length();
    let mut judged = if take.always_keep {
        Some(false)
    } else {
        declared_is_text(declared.as_deref())
    };
    let mut held: Vec<u8> = Vec::new();
    let mut keeper: Option<Keeper> = None;
    let mut long_text = false;
    let mut written: u64 = 0;
    let mut reported: u64 = 0;
    if judged == Some(false) {
        keeper = Some(
            start_keeper(
                &keeping,
                name.as_ref(),
                declared.as_deref(),
                length,
                Vec::new(),
            )
            .await?,
        );
    }
    let mut stream = response.bytes_stream();
    loop {
        if keeper.as_ref().is_some_and(Keeper::is_refused) {
            break;
        }
        let next = cx.unless_cancelled(stream.next()).await?;
        let Some(chunk) = next else { break };
        let chunk = chunk.map_err(|error| NetError::reading(&url, error, take.timeout))?;
        if let Some(keeper) = keeper.as_mut() {
            keeper.write(&chunk);
            written += chunk.len() as u64;
            if written - reported >= PROGRESS_STEP_BYTES {
                reported = written;
                report(cx, written, length).await;
            }
            continue;
        }
        held.extend_from_slice(&chunk);
        if judged.is_none() && held.len() >= JUDGE_BYTES {
            judged = Some(sniffed_is_text(&held, &name_hint));
        }
        let too_long = held.len() > take.text_max;
        if judged == Some(false) || too_long {
            long_text = too_long && judged != Some(false);
            let held = std::mem::take(&mut held);
            written = held.len() as u64;
            keeper = Some(
                start_keeper(&keeping, name.as_ref(), declared.as_deref(), length, held).await?,
            );
        }
    }
    let keeper = match keeper {
        Some(keeper) => keeper,
        None if judged.unwrap_or_else(|| sniffed_is_text(&held, &name_hint)) => {
            return Ok(Received::Text(decode(&held, declared.as_deref())));
        }
        None => start_keeper(&keeping, name.as_ref(), declared.as_deref(), length, held).await?,
    };
    let outcome = keeper.finish(&keeping).await?;
    Ok(Received::Kept { outcome, long_text })
}

async fn report(cx: &CallContext, done: u64, total: Option<u64>) {
    if let Some(progress) = &cx.progress {
        progress
            .report(
                done as f64,
                total.map(|t| t as f64),
                Some(format!("{} received", porter_fileview::human_size(done))),
            )
            .await;
    }
}

/// A `Keeper` that remembers whether the inbox refused the file, so the
/// copy loop can stop fetching bytes that will not be kept.
struct Keeper {
    inner: porter_inbox::Keeper,
    refused: bool,
}

impl Keeper {
    fn is_refused(&self) -> bool {
        self.refused
    }

    /// Writes a chunk; a refusal (over a cap) or a disk failure stops the
    /// copy, and `finish` then says which.
    fn write(&mut self, chunk: &[u8]) {
        if self.refused {
            return;
        }
        if self.inner.write_all(chunk).is_err() {
            self.refused = true;
        }
    }

    /// Names, records and announces the file (on a blocking thread: it
    /// touches the disk and the database), or says why it was not kept.
    async fn finish(self, keeping: &Keeping) -> Result<Outcome, ToolError> {
        let run = keeping.run;
        let joined = tokio::task::spawn_blocking(move || self.inner.finish()).await;
        inbox_work(
            joined,
            run,
            "a response body could not be kept",
            "the inbox could not store the response body; try again",
        )
    }
}

/// Starts a file in the inbox for a body with the bytes already `held`,
/// then announces its Content-Length, so that a body over a cap is refused
/// before the rest is read (and its stub still names the type its first
/// bytes show).
async fn start_keeper(
    keeping: &Keeping,
    name: Option<&String>,
    declared: Option<&str>,
    length: Option<u64>,
    held: Vec<u8>,
) -> Result<Keeper, ToolError> {
    let incoming = Incoming {
        name: name.cloned(),
        fallback_name: keeping.fallback_name.clone(),
        dir: keeping.dir.clone(),
        declared_type: declared.map(str::to_owned),
        origin: keeping.origin.clone(),
        call: keeping.call.clone(),
    };
    let inbox = Arc::clone(&keeping.inbox);
    let run = keeping.run;
    let started = tokio::task::spawn_blocking(move || {
        let mut keeper = inbox.keeper(run, incoming)?;
        let refused = keeper.write_all(&held).is_err()
            || length.is_some_and(|length| keeper.expect_size(length).is_err());
        Ok::<_, porter_inbox::InboxError>(Keeper {
            inner: keeper,
            refused,
        })
    })
    .await;
    inbox_work(
        started,
        run,
        "the inbox could not take a response body",
        "the inbox could not take the response body; try again",
    )
}

/// What inbox work for `run` done on a blocking thread came to, or the
/// error the model reads: `refused` where the inbox failed (logged as
/// `logged`), or that keeping the body stopped where the work did not end.
fn inbox_work<T>(
    joined: Result<Result<T, porter_inbox::InboxError>, tokio::task::JoinError>,
    run: RunId,
    logged: &str,
    refused: &'static str,
) -> Result<T, ToolError> {
    match joined {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error @ porter_inbox::InboxError::Unavailable(_))) => {
            tracing::warn!(%run, %error, "{logged}");
            Err(ToolError::tool(error.reason()))
        }
        Ok(Err(error)) => {
            tracing::error!(%run, %error, "{logged}");
            Err(ToolError::tool(refused))
        }
        Err(error) => {
            tracing::error!(%run, %error, "keeping a response body stopped unexpectedly");
            Err(ToolError::tool(
                "keeping the response body stopped unexpectedly; try again",
            ))
        }
    }
}

/// One header's value as text, if it is there and is text.
pub(crate) fn header_text(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
}

/// The essence of a declared media type (`text/html`), lower case, if any.
pub(crate) fn essence(declared: Option<&str>) -> Option<String> {
    let essence = declared?.split(';').next()?.trim().to_ascii_lowercase();
    (!essence.is_empty()).then_some(essence)
}

/// What the Content-Type says: `Some(true)` text, `Some(false)` a file,
/// `None` nothing usable (absent, `application/octet-stream`, junk), so
/// the bytes decide.
fn declared_is_text(declared: Option<&str>) -> Option<bool> {
    let essence = porter_inbox::media::declared_essence(declared)?;
    Some(is_textual(&essence))
}

/// Whether a media type is one a model reads as text: the file view's
/// list, except that images are files even when their format is text (SVG).
pub(crate) fn is_textual(essence: &str) -> bool {
    !essence.starts_with("image/") && porter_fileview::is_text_media_type(essence)
}

/// Judges a body with no usable Content-Type by its first bytes (`head`),
/// then by the name's extension: text when the file view reads the bytes
/// as text; a file when it recognises a format; for bytes it cannot place,
/// text only when they are empty and the name says text (they are binary
/// data otherwise).
fn sniffed_is_text(head: &[u8], name: &str) -> bool {
    if head.is_empty() {
        return mime_guess::from_path(name)
            .first()
            .is_none_or(|mime| is_textual(mime.essence_str()));
    }
    let found = porter_fileview::sniff_type(whole_chars(head), name);
    found.kind == Kind::Text
}

/// The head of a body without a UTF-8 character cut at its end.
fn whole_chars(bytes: &[u8]) -> &[u8] {
    match std::str::from_utf8(bytes) {
        Err(error) if error.error_len().is_none() => &bytes[..error.valid_up_to()],
        _ => bytes,
    }
}

/// Decodes a text body by its declared charset (a byte order mark wins),
/// UTF-8 when none is declared; undecodable bytes become U+FFFD.
pub(crate) fn decode(bytes: &[u8], declared: Option<&str>) -> String {
    let encoding = declared
        .and_then(|declared| {
            declared.split(';').skip(1).find_map(|param| {
                let (key, value) = param.split_once('=')?;
                key.trim()
                    .eq_ignore_ascii_case("charset")
                    .then(|| value.trim().trim_matches('"').to_owned())
            })
        })
        .and_then(|label| encoding_rs::Encoding::for_label(label.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    encoding.decode(bytes).0.into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] =
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";

    #[test]
    fn the_content_type_decides_when_it_says_something() {
        let cases = [
            (Some("text/html; charset=utf-8"), Some(true)),
            (Some("application/json"), Some(true)),
            (Some("application/vnd.api+json"), Some(true)),
            (Some("application/pdf"), Some(false)),
            (Some("image/png"), Some(false)),
            (Some("image/svg+xml"), Some(false)),
            (Some("application/octet-stream"), None),
            (None, None),
            (Some("nonsense"), None),
        ];
        for (declared, expected) in cases {
            assert_eq!(declared_is_text(declared), expected, "{declared:?}");
        }
    }

    #[test]
    fn without_a_usable_type_the_bytes_decide_then_the_extension() {
        assert!(sniffed_is_text(b"just some words\n", "notes.bin"));
        assert!(!sniffed_is_text(PNG, "picture"));
        assert!(!sniffed_is_text(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "x"));
        assert!(!sniffed_is_text(b"\x00\x01\x02\x03binary", "x.txt"));
        assert!(sniffed_is_text(b"", "empty.txt"));
        assert!(!sniffed_is_text(b"", "empty.pdf"));
        let mut cut = "é".repeat(10).into_bytes();
        cut.pop();
        assert!(sniffed_is_text(&cut, "x"));
    }

    #[test]
    fn text_is_decoded_by_its_declared_charset() {
        assert_eq!(
            decode(b"caf\xe9", Some("text/plain; charset=ISO-8859-1")),
            "café"
        );
        assert_eq!(decode("café".as_bytes(), Some("text/plain")), "café");
        assert_eq!(decode(b"\xff", None), "\u{FFFD}");
    }
}
