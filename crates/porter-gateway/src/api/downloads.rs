//! Download links for the web page: `POST /v1/runs/{run_id}/downloads`
//! (with the key) hands out a one-use link, valid for a minute, to one
//! inbox file (`{"path": "a.png"}`) or to all of them as a zip (`{}`);
//! `GET /downloads/{token}` (no key: the token is the permission) streams it.
//!
//! A browser downloads a plain link itself, streaming it to disk with its
//! own progress, but cannot add an `Authorization` header to it; the key
//! must not go into a URL (history, logs), so the page trades it for a
//! token that is spent on first use.

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::rejection::PathRejection;
use axum::extract::{Extension, Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use porter_inbox::RunId;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::mpsc;

use super::download::{attachment_headers, hex, open_recorded, plausible_path, serve_recorded};
use super::error::ApiError;
use super::state::{ApiState, blocking, readable_run};
use crate::access::KeyInfo;

/// How long a download link works if it is not used.
const TICKET_TTL: Duration = Duration::from_secs(60);

/// How many unspent links may wait at once; the oldest go first.
const MAX_TICKETS: usize = 1024;

/// How many bytes of a zip are handed to the connection at a time.
const ZIP_CHUNK: usize = 64 * 1024;

/// What one link downloads.
#[derive(Debug, Clone)]
struct Ticket {
    run: RunId,
    /// One file; none: the whole inbox as a zip.
    path: Option<String>,
    key: KeyInfo,
    expires: Instant,
}

/// `Tickets` are the unspent download links.
#[derive(Debug, Default)]
pub(super) struct Tickets {
    pending: Mutex<HashMap<String, Ticket>>,
}

impl Tickets {
    fn issue(&self, ticket: Ticket) -> Result<String, ApiError> {
        let mut bytes = [0_u8; 32];
        getrandom::fill(&mut bytes).map_err(ApiError::internal)?;
        let token = hex(&bytes);
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        pending.retain(|_, waiting| waiting.expires > now);
        if pending.len() >= MAX_TICKETS
            && let Some(oldest) = pending
                .iter()
                .min_by_key(|(_, waiting)| waiting.expires)
                .map(|(token, _)| token.clone())
        {
            pending.remove(&oldest);
        }
        pending.insert(token.clone(), ticket);
        Ok(token)
    }

    /// The ticket of `token`, spent: a second use finds nothing.
    fn spend(&self, token: &str) -> Option<Ticket> {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        let ticket = pending.remove(token)?;
        (ticket.expires > Instant::now()).then_some(ticket)
    }
}

/// The body of `POST /v1/runs/{run_id}/downloads`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkRequest {
    /// The file's path in the inbox (`a.png`, or its `volume:inbox:a.png`
    /// reference); none: every file, as a zip.
    path: Option<String>,
}

/// `POST /v1/runs/{run_id}/downloads`: a one-use link to a file or to all.
pub(super) async fn link(
    State(state): State<Arc<ApiState>>,
    Extension(key): Extension<KeyInfo>,
    Extension(tickets): Extension<Arc<Tickets>>,
    run_id: Result<Path<String>, PathRejection>,
    body: Bytes,
) -> Result<Json<serde_json::Value>, ApiError> {
    let Path(run_id) = run_id.map_err(|_| ApiError::NoRun)?;
    let run = readable_run(&state, &key, &run_id).await?;
    let request: LinkRequest = if body.iter().all(u8::is_ascii_whitespace) {
        LinkRequest::default()
    } else {
        serde_json::from_slice(&body).map_err(|err| {
            ApiError::BadRequest(format!(
                "The body must be {{\"path\": \"<a file of the run's inbox>\"}} for one file, or {{}} \
                 for all of them as a zip: {err}"
            ))
        })?
    };
    let path = request.path.map(|path| {
        path.strip_prefix("volume:inbox:")
            .unwrap_or(&path)
            .to_owned()
    });
    if let Some(path) = &path {
        if !plausible_path(path) {
            return Err(ApiError::NoFile);
        }
        let (id, wanted) = (run.id, path.clone());
        blocking(&state.inbox, move |inbox| {
            inbox.file(id, &wanted)?.map(|_| ()).ok_or(ApiError::NoFile)
        })
        .await?;
    }
    let token = tickets.issue(Ticket {
        run: run.id,
        path,
        key,
        expires: Instant::now() + TICKET_TTL,
    })?;
    Ok(Json(json!({
        "url": format!("/downloads/{token}"),
        "expires_in_s": TICKET_TTL.as_secs(),
    })))
}

/// `GET /downloads/{token}`: the file or the zip a link was made for, once.
pub(super) async fn fetch(
    State(state): State<Arc<ApiState>>,
    Extension(tickets): Extension<Arc<Tickets>>,
    token: Result<Path<String>, PathRejection>,
) -> Result<Response, ApiError> {
    let ticket = token.ok().and_then(|Path(token)| tickets.spend(&token));
    let Some(ticket) = ticket else {
        return Ok(spent());
    };
    // The key may have lost the run meanwhile (a config reload).
    let run = readable_run(&state, &ticket.key, &ticket.run.to_string()).await?;
    match ticket.path {
        Some(path) => serve_recorded(&state, run.id, path).await,
        None => Ok(zip_response(&state, run.id)),
    }
}

/// The answer to a link that was used, has expired or never was.
fn spent() -> Response {
    let mut response = (
        StatusCode::NOT_FOUND,
        Json(json!({
            "error": "no_link",
            "message": "This download link was already used or has expired (links work once, for a \
                        minute). Download again from the page, or ask POST /v1/runs/<id>/downloads \
                        for a new link.",
        })),
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Every file of `run`'s inbox as one zip (stored, not compressed: most
/// captures are compressed already), written while it is sent.
fn zip_response(state: &ApiState, run: RunId) -> Response {
    let (sender, receiver) = mpsc::channel::<io::Result<Bytes>>(4);
    let inbox = Arc::clone(&state.inbox);
    tokio::task::spawn_blocking(move || {
        let mut out = ChannelWriter {
            sender: sender.clone(),
            buffer: Vec::with_capacity(ZIP_CHUNK),
        };
        if let Err(err) = write_zip(&inbox, run, &mut out) {
            tracing::warn!(run = %run, error = %err, "the inbox zip could not be finished");
            // The client sees a broken download rather than a short zip.
            let _ = sender.blocking_send(Err(err));
        }
    });
    let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|chunk| (chunk, receiver))
    });
    let short = run.to_string();
    let name = format!("porter-run-{}.zip", short.get(..8).unwrap_or(&short));
    match attachment_headers("application/zip", &name) {
        Ok(headers) => (headers, Body::from_stream(stream)).into_response(),
        Err(err) => ApiError::internal(err).into_response(),
    }
}

/// Writes the zip of `run`'s recorded files to `out`, each under its inbox
/// path, opened beneath the inbox root as a download is.
fn write_zip(inbox: &porter_inbox::Inbox, run: RunId, out: &mut ChannelWriter) -> io::Result<()> {
    let records = inbox.files(run).map_err(io::Error::other)?;
    let mut zip = zip::ZipWriter::new_stream(&mut *out);
    for record in records {
        let opened = match open_recorded(inbox, run, &record.path) {
            Ok(opened) => opened,
            Err(err) => {
                tracing::warn!(run = %run, path = %record.path, error = %err, "left out of the zip");
                continue;
            }
        };
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored)
            .large_file(opened.len >= u64::from(u32::MAX));
        zip.start_file(opened.record.path.as_str(), options)
            .map_err(io::Error::other)?;
        io::copy(&mut io::Read::take(opened.reader, opened.len), &mut zip)?;
    }
    zip.finish().map_err(io::Error::other)?;
    out.flush()
}

/// A writer that hands its bytes, in chunks, to a response body.
struct ChannelWriter {
    sender: mpsc::Sender<io::Result<Bytes>>,
    buffer: Vec<u8>,
}

impl ChannelWriter {
    fn send_buffer(&mut self) -> io::Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(
            &mut self.buffer,
            Vec::with_capacity(ZIP_CHUNK),
        ));
        self.sender
            .blocking_send(Ok(chunk))
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the client went away"))
    }
}

impl Write for ChannelWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buffer.extend_from_slice(data);
        if self.buffer.len() >= ZIP_CHUNK {
            self.send_buffer()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send_buffer()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Role;

    fn ticket(expires: Instant) -> Ticket {
        Ticket {
            run: RunId::new(),
            path: Some("a.png".to_owned()),
            key: KeyInfo {
                name: "reader".to_owned(),
                tenant: "acme".to_owned(),
                secret: "s".to_owned(),
                role: Role::User,
                grants: Vec::new(),
                volumes: Vec::new(),
            },
            expires,
        }
    }

    #[test]
    fn a_link_works_once() {
        let tickets = Tickets::default();
        let token = tickets
            .issue(ticket(Instant::now() + TICKET_TTL))
            .expect("issued");
        assert_eq!(token.len(), 64);
        assert!(tickets.spend(&token).is_some());
        assert!(tickets.spend(&token).is_none());
        assert!(tickets.spend("not-a-token").is_none());
    }

    #[test]
    fn an_expired_link_works_never() {
        let tickets = Tickets::default();
        let token = tickets.issue(ticket(Instant::now())).expect("issued");
        std::thread::sleep(Duration::from_millis(5));
        assert!(tickets.spend(&token).is_none());
    }
}
