//! `GET /v1/runs/{run_id}/inbox/{path}`: one recorded file of a run's inbox,
//! streamed as an attachment that a browser will neither run nor sniff, from
//! the local disk or from object storage alike; one `Range` of it on request
//! (`206 Partial Content`).

use std::fmt::Write as _;
use std::io::{Read, Seek as _, SeekFrom};
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::rejection::PathRejection;
use axum::extract::{Extension, Path, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use porter_inbox::store::LocalReader;
use porter_inbox::{BlobReader, FileRecord, Inbox, InboxError, RunId};
use sha2::{Digest as _, Sha256};

use super::error::ApiError;
use super::state::{ApiState, blocking, readable_run};
use crate::access::KeyInfo;

/// `SANDBOX_CSP` keeps a file that a browser opens anyway (typed in the
/// address bar, or a type we misjudged) from running anything or loading
/// anything: a unique origin, no scripts, no subresources.
pub(crate) const SANDBOX_CSP: &str = "sandbox; default-src 'none'";

/// `X-Porter-Sha256`: the file's SHA-256, sent only while the bytes on disk
/// still hash to the record's.
const SHA256_HEADER: HeaderName = HeaderName::from_static("x-porter-sha256");

/// `X-Porter-Producer`: where the file came from (`mcp:files/get_attachment`),
/// under the same condition.
const PRODUCER_HEADER: HeaderName = HeaderName::from_static("x-porter-producer");

/// The media types a file is served under when it was recorded as one of
/// them: types a browser shows or hands to a viewer but never runs. Anything
/// else (HTML, SVG, XML, JavaScript, the unknown) goes out as
/// `application/octet-stream`.
const SAFE_TYPES: [&str; 36] = [
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/bmp",
    "image/tiff",
    "image/avif",
    "image/heic",
    "image/heif",
    "image/x-icon",
    "image/vnd.microsoft.icon",
    "application/pdf",
    "application/zip",
    "application/gzip",
    "application/x-tar",
    "application/x-bzip2",
    "application/x-xz",
    "application/zstd",
    "application/x-7z-compressed",
    "application/vnd.rar",
    "application/msword",
    "application/vnd.ms-excel",
    "application/vnd.ms-powerpoint",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "application/vnd.oasis.opendocument.text",
    "application/vnd.oasis.opendocument.spreadsheet",
    "application/vnd.oasis.opendocument.presentation",
    "application/rtf",
    "application/json",
    "text/plain",
    "text/csv",
    "text/markdown",
    "text/tab-separated-values",
    "application/octet-stream",
];

/// The `Content-Type` a file recorded as `media_type` is served under: the
/// recorded type (its essence, lower-cased, without parameters) when a
/// browser cannot run it, else `application/octet-stream`.
pub(crate) fn served_type(media_type: &str) -> &'static str {
    let essence = media_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    if let Some(safe) = SAFE_TYPES.iter().find(|safe| **safe == essence) {
        return safe;
    }
    // Any sound or film: a browser plays them, never runs them. The subtype
    // must be a plain token so the header stays one well-formed value.
    for (prefix, known) in [("audio/", AUDIO_TYPES), ("video/", VIDEO_TYPES)] {
        if essence.starts_with(prefix)
            && let Some(found) = known.iter().find(|t| **t == essence)
        {
            return found;
        }
    }
    "application/octet-stream"
}

/// The audio types served as themselves.
const AUDIO_TYPES: &[&str] = &[
    "audio/mpeg",
    "audio/mp4",
    "audio/aac",
    "audio/ogg",
    "audio/opus",
    "audio/wav",
    "audio/x-wav",
    "audio/wave",
    "audio/webm",
    "audio/flac",
    "audio/x-flac",
    "audio/midi",
    "audio/x-m4a",
    "audio/amr",
];

/// The video types served as themselves.
const VIDEO_TYPES: &[&str] = &[
    "video/mp4",
    "video/webm",
    "video/ogg",
    "video/quicktime",
    "video/x-msvideo",
    "video/x-matroska",
    "video/mpeg",
    "video/3gpp",
];

/// `Content-Disposition: attachment` naming the file twice: an ASCII
/// fallback for old clients and the exact name percent-encoded (RFC 6266,
/// RFC 8187).
pub(crate) fn disposition(name: &str) -> String {
    let fallback: String = porter_paths::ascii_name(name)
        .chars()
        .map(|c| match c {
            '"' | '\\' | '%' => '_',
            c if c.is_ascii_graphic() || c == ' ' => c,
            _ => '_',
        })
        .collect();
    format!(
        "attachment; filename=\"{fallback}\"; filename*=UTF-8''{}",
        percent_encode(name)
    )
}

/// Percent-encodes everything but RFC 8187's `attr-char`.
fn percent_encode(text: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"!#$&+-.^_`|~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0x0f)]));
        }
    }
    out
}

/// Whether a requested path could name a recorded file at all: relative,
/// `/`-separated, with no empty, `.` or `..` segment, no backslash and no
/// NUL. The record lookup is the real gate; this only keeps odd paths away
/// from it.
pub(super) fn plausible_path(path: &str) -> bool {
    !path.is_empty()
        && !path.contains(['\\', '\0'])
        && path
            .split('/')
            .all(|segment| !segment.is_empty() && segment != "." && segment != "..")
}

/// A recorded file, opened, with what we learnt by reading it once.
pub(super) struct Opened {
    pub(super) record: FileRecord,
    pub(super) reader: Box<dyn BlobReader>,
    /// The bytes read while hashing; the most that will be sent.
    pub(super) len: u64,
    /// Whether those bytes hash to the record's SHA-256.
    matches_record: bool,
}

/// Opens the recorded file `path` of `run`'s inbox (on the local disk:
/// beneath the inbox root, never through a symbolic link, never outside the
/// root; else from the blob store) and hashes it.
pub(super) fn open_recorded(inbox: &Inbox, run: RunId, path: &str) -> Result<Opened, ApiError> {
    let record = inbox.file(run, path)?.ok_or(ApiError::NoFile)?;
    let mut reader = if inbox.blobs_on_local_disk() {
        open_local(inbox, run, &record, path)?
    } else {
        match inbox.open_file(run, &record.path) {
            Ok((_, reader)) => reader,
            Err(InboxError::NoFile { .. }) => {
                tracing::warn!(run = %run, path, "a recorded inbox file is missing from the blob store; not served");
                return Err(ApiError::NoFile);
            }
            Err(err) => return Err(err.into()),
        }
    };
    let (len, digest) = hash(&mut reader).map_err(ApiError::internal)?;
    let matches_record = len == record.size && digest.eq_ignore_ascii_case(&record.sha256);
    reader
        .seek(SeekFrom::Start(0))
        .map_err(ApiError::internal)?;
    Ok(Opened {
        record,
        reader,
        len,
        matches_record,
    })
}

/// Opens a recorded file beneath the local inbox root.
fn open_local(
    inbox: &Inbox,
    run: RunId,
    record: &FileRecord,
    path: &str,
) -> Result<Box<dyn BlobReader>, ApiError> {
    let root = inbox.inbox_dir(run);
    let dir = cap_std::fs::Dir::open_ambient_dir(&root, cap_std::ambient_authority())
        .map_err(|err| not_served(&root, path, &err))?;
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true).follow(FollowSymlinks::No);
    let file = dir
        .open_with(&record.path, &options)
        .map_err(|err| not_served(&root, path, &err))?
        .into_std();
    let metadata = file
        .metadata()
        .map_err(|err| not_served(&root, path, &err))?;
    if !metadata.is_file() {
        tracing::warn!(run = %run, path, "a recorded inbox path is not a regular file; not served");
        return Err(ApiError::NoFile);
    }
    Ok(Box::new(LocalReader::new(file, metadata.len())))
}

/// A recorded file that cannot be opened beneath the inbox root (gone, a
/// symbolic link, a path that would leave the root) is not served.
fn not_served(root: &std::path::Path, path: &str, err: &std::io::Error) -> ApiError {
    tracing::warn!(root = %root.display(), path, error = %err, "a recorded inbox file cannot be opened; not served");
    ApiError::NoFile
}

/// The length and SHA-256 (lower-case hex) of everything `file` holds.
fn hash(file: &mut dyn Read) -> std::io::Result<(u64, String)> {
    let mut hasher = Sha256::new();
    let mut buffer = vec![0_u8; 256 * 1024];
    let mut len = 0_u64;
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
        len += read as u64;
    }
    Ok((len, hex(&hasher.finalize())))
}

/// `bytes` in lower-case hex.
pub(super) fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        })
}

/// `GET /v1/runs/{run_id}/inbox/{path}`.
pub(super) async fn inbox_file(
    State(state): State<Arc<ApiState>>,
    Extension(key): Extension<KeyInfo>,
    request_headers: HeaderMap,
    params: Result<Path<(String, String)>, PathRejection>,
) -> Result<Response, ApiError> {
    let Path((run_id, path)) = params.map_err(|_| ApiError::NoRun)?;
    let run = readable_run(&state, &key, &run_id).await?;
    // A conditional range is never honoured: no validator is sent to match.
    let range = request_headers
        .get(header::RANGE)
        .filter(|_| !request_headers.contains_key(header::IF_RANGE))
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    serve_range(&state, run.id, path, range.as_deref()).await
}

/// The recorded file `path` of `run`'s inbox as an attachment (the run's
/// readability already checked).
pub(super) async fn serve_recorded(
    state: &ApiState,
    run: RunId,
    path: String,
) -> Result<Response, ApiError> {
    serve_range(state, run, path, None).await
}

/// What a `Range` header asks of a file of `len` bytes.
#[derive(Debug, PartialEq, Eq)]
enum Wanted {
    /// The whole file: no header, or one this does not serve as a range
    /// (several ranges, another unit, a malformed one), which RFC 9110
    /// lets a server ignore.
    All,
    /// Bytes `start..=end`.
    Part { start: u64, end: u64 },
    /// A range that starts past the end: `416`.
    Unsatisfiable,
}

/// Reads a `Range` header (`bytes=0-99`, `bytes=100-`, `bytes=-100`).
fn wanted(range: Option<&str>, len: u64) -> Wanted {
    let Some(spec) = range.and_then(|r| r.trim().strip_prefix("bytes=")) else {
        return Wanted::All;
    };
    if spec.contains(',') {
        return Wanted::All;
    }
    let Some((first, last)) = spec.trim().split_once('-') else {
        return Wanted::All;
    };
    let number = |text: &str| -> Option<u64> {
        (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.parse().ok())
            .flatten()
    };
    let (first, last) = (first.trim(), last.trim());
    if first.is_empty() {
        // A suffix: the last `n` bytes.
        return match number(last) {
            None => Wanted::All,
            Some(0) => Wanted::Unsatisfiable,
            Some(_) if len == 0 => Wanted::Unsatisfiable,
            Some(n) => Wanted::Part {
                start: len.saturating_sub(n),
                end: len - 1,
            },
        };
    }
    let Some(start) = number(first) else {
        return Wanted::All;
    };
    let end = if last.is_empty() {
        None
    } else {
        match number(last) {
            Some(end) => Some(end),
            None => return Wanted::All,
        }
    };
    if end.is_some_and(|end| end < start) {
        return Wanted::All;
    }
    if start >= len {
        return Wanted::Unsatisfiable;
    }
    Wanted::Part {
        start,
        end: end.map_or(len - 1, |end| end.min(len - 1)),
    }
}

/// The recorded file `path` of `run`'s inbox, or the part of it `range`
/// asks for, as an attachment.
async fn serve_range(
    state: &ApiState,
    run: RunId,
    path: String,
    range: Option<&str>,
) -> Result<Response, ApiError> {
    if !plausible_path(&path) {
        return Err(ApiError::NoFile);
    }
    let opened = blocking(&state.inbox, move |inbox| open_recorded(inbox, run, &path)).await?;

    let name = opened
        .record
        .path
        .rsplit('/')
        .next()
        .unwrap_or(&opened.record.path);
    let mut headers = attachment_headers(served_type(&opened.record.media_type), name)
        .map_err(ApiError::internal)?;
    headers.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    if opened.matches_record {
        if let Ok(value) = HeaderValue::from_str(&opened.record.sha256) {
            headers.insert(SHA256_HEADER, value);
        }
        match HeaderValue::from_str(&opened.record.origin) {
            Ok(value) => {
                headers.insert(PRODUCER_HEADER, value);
            }
            Err(_) => {
                tracing::warn!(origin = %opened.record.origin, "an origin that is no header value is not sent");
            }
        }
    } else {
        tracing::warn!(
            run = %opened.record.run,
            path = %opened.record.path,
            "an inbox file no longer matches its record; served without its SHA-256 and producer"
        );
    }

    let (status, start, count) = match wanted(range, opened.len) {
        Wanted::All => (StatusCode::OK, 0, opened.len),
        Wanted::Part { start, end } => {
            let value = format!("bytes {start}-{end}/{}", opened.len);
            headers.insert(
                header::CONTENT_RANGE,
                HeaderValue::from_str(&value).map_err(ApiError::internal)?,
            );
            (StatusCode::PARTIAL_CONTENT, start, end - start + 1)
        }
        Wanted::Unsatisfiable => {
            let value = format!("bytes */{}", opened.len);
            headers.insert(
                header::CONTENT_RANGE,
                HeaderValue::from_str(&value).map_err(ApiError::internal)?,
            );
            headers.insert(header::CONTENT_LENGTH, HeaderValue::from(0_u64));
            return Ok((StatusCode::RANGE_NOT_SATISFIABLE, headers).into_response());
        }
    };
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(count));
    // At most the bytes hashed are sent, so Content-Length stays true even if
    // the file grows meanwhile; if it shrinks, the body ends early and the
    // client sees a short read rather than other bytes.
    let body = streamed(opened.reader, start, count);
    Ok((status, headers, body).into_response())
}

/// How many bytes of a file are handed to the connection at a time.
const CHUNK: usize = 256 * 1024;

/// `count` bytes of `reader` from `start`, read on a blocking thread and
/// handed over a chunk at a time (at most a few chunks in memory).
fn streamed(mut reader: Box<dyn BlobReader>, start: u64, count: u64) -> Body {
    let (sender, receiver) = tokio::sync::mpsc::channel::<std::io::Result<Bytes>>(4);
    tokio::task::spawn_blocking(move || {
        if let Err(err) = reader.seek(SeekFrom::Start(start)) {
            let _ = sender.blocking_send(Err(err));
            return;
        }
        let mut left = count;
        while left > 0 {
            let want = usize::try_from(left).map_or(CHUNK, |left| left.min(CHUNK));
            let mut chunk = vec![0_u8; want];
            match reader.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    chunk.truncate(n);
                    left -= n as u64;
                    if sender.blocking_send(Ok(Bytes::from(chunk))).is_err() {
                        return;
                    }
                }
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(err) => {
                    let _ = sender.blocking_send(Err(err));
                    return;
                }
            }
        }
    });
    let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|chunk| (chunk, receiver))
    });
    Body::from_stream(stream)
}

/// The headers every file the API hands out carries: its type, a download
/// under `name` (never shown inline), no sniffing, the sandbox CSP in case
/// a browser renders it anyway, and no caching.
pub(super) fn attachment_headers(
    media_type: &'static str,
    name: &str,
) -> Result<HeaderMap, axum::http::header::InvalidHeaderValue> {
    let mut headers = HeaderMap::new();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
    headers.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_str(&disposition(name))?,
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(SANDBOX_CSP),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// What the download writes, the fetch tools read back: the exact
        /// name, whatever it holds.
        #[test]
        fn a_disposition_reads_back_as_the_name_it_was_made_for(name in any::<String>()) {
            // A blank name is no name to the reader.
            prop_assume!(!name.trim().is_empty());
            let header = disposition(&name);
            prop_assert!(header.is_ascii(), "{header}");
            prop_assert_eq!(porter_net::disposition_file_name(&header), Some(name));
        }
    }

    #[test]
    fn types_a_browser_could_run_go_out_as_octet_stream() {
        let cases = [
            ("image/png", "image/png"),
            ("IMAGE/PNG; charset=binary", "image/png"),
            ("application/pdf", "application/pdf"),
            ("text/plain; charset=utf-8", "text/plain"),
            ("audio/mpeg", "audio/mpeg"),
            ("video/mp4", "video/mp4"),
            ("text/html", "application/octet-stream"),
            ("image/svg+xml", "application/octet-stream"),
            ("application/xhtml+xml", "application/octet-stream"),
            ("text/xml", "application/octet-stream"),
            ("application/xml", "application/octet-stream"),
            ("text/javascript", "application/octet-stream"),
            ("application/javascript", "application/octet-stream"),
            ("application/x-shockwave-flash", "application/octet-stream"),
            (
                "audio/x-evil\r\nSet-Cookie: a=b",
                "application/octet-stream",
            ),
            ("", "application/octet-stream"),
        ];
        for (recorded, served) in cases {
            assert_eq!(served_type(recorded), served, "{recorded:?}");
        }
    }

    #[test]
    fn the_disposition_is_an_attachment_with_an_ascii_and_an_exact_name() {
        assert_eq!(
            disposition("report.pdf"),
            "attachment; filename=\"report.pdf\"; filename*=UTF-8''report.pdf"
        );
        assert_eq!(
            disposition("Résumé 2026.pdf"),
            "attachment; filename=\"Resume 2026.pdf\"; filename*=UTF-8''R%C3%A9sum%C3%A9%202026.pdf"
        );
        let hostile = disposition("a\"b;c\r\n.txt");
        assert!(HeaderValue::from_str(&hostile).is_ok(), "{hostile}");
        assert!(hostile.starts_with("attachment; filename=\""), "{hostile}");
        assert!(!hostile.contains("a\"b"), "{hostile}");
    }

    #[test]
    fn only_relative_paths_without_dot_segments_are_looked_up() {
        for good in ["a.png", "web/example.org/a.png", "..a", "a..b"] {
            assert!(plausible_path(good), "{good}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a/./b",
            "a//b",
            "a\\..\\b",
            "a\0",
            ".",
        ] {
            assert!(!plausible_path(bad), "{bad:?}");
        }
    }

    #[test]
    fn one_byte_range_is_served_and_anything_else_is_the_whole_file() {
        let part = |start, end| Wanted::Part { start, end };
        let cases = [
            (None, Wanted::All),
            (Some("bytes=0-99"), part(0, 99)),
            (Some("bytes=100-"), part(100, 999)),
            (Some("bytes=-100"), part(900, 999)),
            (Some("bytes=-5000"), part(0, 999)),
            (Some("bytes=990-5000"), part(990, 999)),
            (Some(" bytes=5-5 "), part(5, 5)),
            (Some("bytes=1000-"), Wanted::Unsatisfiable),
            (Some("bytes=-0"), Wanted::Unsatisfiable),
            (Some("bytes=0-1,5-6"), Wanted::All),
            (Some("bytes=9-3"), Wanted::All),
            (Some("bytes=a-b"), Wanted::All),
            (Some("bytes=+1-2"), Wanted::All),
            (Some("items=0-1"), Wanted::All),
            (Some("bytes=-"), Wanted::All),
        ];
        for (header, expected) in cases {
            assert_eq!(wanted(header, 1000), expected, "{header:?}");
        }
        assert_eq!(wanted(Some("bytes=0-"), 0), Wanted::Unsatisfiable);
    }

    #[test]
    fn the_hash_is_the_sha256_of_every_byte() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("abc");
        std::fs::write(&path, b"abc").expect("written");
        let mut file = std::fs::File::open(&path).expect("opened");
        assert_eq!(
            hash(&mut file).expect("hashed"),
            (
                3,
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad".to_owned()
            )
        );
    }
}
