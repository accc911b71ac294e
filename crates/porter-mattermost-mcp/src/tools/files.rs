//! The tools about attached files: `read_file` (an attachment through the
//! file view), `save_file` (onto the person's disk) and `search_files`.

use std::collections::HashSet;
use std::fmt::Write as _;

use bytes::Bytes;
use porter_fileview::{Cancel, FileInput, View, ViewError, WindowRequest};
use rmcp::ErrorData;
use rmcp::RoleServer;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;

use porter_mattermost::{Error, FileInfo, Search, Team};
use porter_mcp::content::content as blocks;
use porter_mcp::tool::{Hints, ToolError, done};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::options::SAVE_FILE_BYTES;
use crate::output::{FileOut, FilesOut, HeadingOut, ReadFileOut, SavedOut};
use crate::paging::{SEARCH_DEPTH, SEARCH_FETCH, SearchArgs, more_line};
use crate::render::file_line;
use crate::server::{MattermostServer, lock};
use crate::tools::Reply;

impl MattermostServer {
    /// Where a person can open a file: its post's permalink, or the server.
    pub(crate) fn file_link(&self, info: &FileInfo) -> String {
        if info.post_id.is_empty() {
            self.shared.client.base_url().to_owned()
        } else {
            self.shared.client.permalink(&info.post_id)
        }
    }

    /// A file's bytes, downloaded (at most `cap` bytes). `Err(size)` when
    /// the file turns out larger than the cap (then nothing more of it is
    /// read); the size is what was learnt.
    pub(crate) async fn file_bytes(
        &self,
        info: &FileInfo,
        cap: u64,
    ) -> Result<Result<Bytes, u64>, ToolError> {
        if info.size > cap {
            return Ok(Err(info.size));
        }
        match self.shared.client.download(info, cap).await {
            Ok(download) => Ok(Ok(download.bytes)),
            Err(Error::TooLarge { size, received, .. }) => {
                Ok(Err(size.unwrap_or(received).max(cap + 1)))
            }
            Err(other) => Err(other.into()),
        }
    }

    pub(crate) async fn read_file_impl(
        &self,
        args: ReadFileArgs,
        context: &RequestContext<RoleServer>,
    ) -> Reply {
        let file_id = args.file_id.trim();
        if file_id.is_empty() {
            return Err(ToolError::Tool(
                "file_id is empty; pass the id of a file as listed with its post".to_owned(),
            ));
        }
        let info = self.shared.client.file_info(file_id).await?;
        let link = self.file_link(&info);
        let options = &self.shared.options.view;
        let window = WindowRequest {
            start_line: args.start_line,
            line_count: args.line_count,
        };
        let prepared = match self.prepared_file(&info, &link, context).await? {
            Prepared::Ready(prepared) => prepared,
            Prepared::TooLarge(size) => {
                let view = describe_too_large(&info, size, &link, options);
                return view_result(&info, &link, &view);
            }
        };
        let view = prepared
            .view(&window, options)
            .map_err(|error| view_failure(&error))?;
        view_result(&info, &link, &view)
    }

    /// A file read through the file view once, ready for any window: from
    /// the cache when it was read before (no download, no decoding, no
    /// counting of lines again), else downloaded (at most the view's cap)
    /// and prepared off the async threads. The same for `read_file` and
    /// `resources/read`.
    pub(crate) async fn prepared_file(
        &self,
        info: &FileInfo,
        link: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<Prepared, ToolError> {
        let options = &self.shared.options.view;
        let declared = (!info.mime_type.is_empty()).then_some(info.mime_type.as_str());
        if let Some(prepared) = lock(&self.shared.cache).get(&info.id) {
            return Ok(Prepared::Ready(prepared));
        }
        let bytes = match self.file_bytes(info, options.max_file_bytes).await? {
            Err(size) => return Ok(Prepared::TooLarge(size)),
            Ok(bytes) => bytes,
        };
        // A reader that takes long (a recording being transcribed) tells
        // how far it has got; those reports go on to a client that asked for
        // progress, in order, from this task.
        let (reports, mut reported) = tokio::sync::mpsc::unbounded_channel::<Report>();
        let cancel = match context.meta.get_progress_token() {
            Some(_) => {
                Cancel::new().with_progress(std::sync::Arc::new(move |done, total, doing: &str| {
                    let _ = reports.send((done, total, doing.to_owned()));
                }))
            }
            None => Cancel::new(),
        };
        let task = {
            let cancel = cancel.clone();
            let options = options.clone();
            let name = info.name.clone();
            let declared = declared.map(str::to_owned);
            let link = link.to_owned();
            tokio::task::spawn_blocking(move || {
                let input = FileInput {
                    bytes: &bytes,
                    name: &name,
                    declared_type: declared.as_deref(),
                    link: Some(&link),
                };
                porter_fileview::prepare(&input, &options, &cancel)
            })
        };
        let token = context.meta.get_progress_token();
        let forward = |(done, total, doing): Report| {
            let token = token.clone();
            let peer = &context.peer;
            let name = &info.name;
            async move {
                let Some(token) = token else { return };
                let mut params = rmcp::model::ProgressNotificationParam::new(token, done);
                params.total = Some(total);
                params.message = Some(format!("{name}: {doing}"));
                if let Err(error) = peer.notify_progress(params).await {
                    tracing::debug!(%error, "a progress notification was not delivered");
                }
            }
        };
        let Some(outcome) = forwarding(task, &mut reported, context.ct.cancelled(), forward).await
        else {
            cancel.cancel();
            return Err(ToolError::Tool("the request was cancelled".to_owned()));
        };
        let prepared = match outcome {
            Ok(Ok(prepared)) => std::sync::Arc::new(prepared),
            Ok(Err(error)) => return Err(view_failure(&error)),
            Err(join) => {
                tracing::error!(%join, file_id = %info.id, "the file view stopped unexpectedly");
                return Err(ToolError::Tool(format!(
                    "porter could not show {}; a person can open it at {link}",
                    info.name
                )));
            }
        };
        lock(&self.shared.cache).put(&info.id, std::sync::Arc::clone(&prepared));
        Ok(Prepared::Ready(prepared))
    }
}

/// One progress report of a reader: seconds (or units) done, of how many,
/// and what it is doing.
type Report = (f64, f64, String);

/// Waits for `task` (a reader on a blocking thread) while `forward` sends
/// each report it makes, in order. The reports still queued when it ends
/// go out before its result is given back, and no report is cut off half
/// sent. `None` when `cancelled` fires first.
async fn forwarding<T, Sent>(
    mut task: tokio::task::JoinHandle<T>,
    reports: &mut tokio::sync::mpsc::UnboundedReceiver<Report>,
    cancelled: impl Future<Output = ()>,
    forward: impl Fn(Report) -> Sent,
) -> Option<Result<T, tokio::task::JoinError>>
where
    Sent: Future<Output = ()>,
{
    tokio::pin!(cancelled);
    // Each report is sent outside the race, to its end; the race only
    // picks what comes next, a report before the reader's end.
    let joined = loop {
        tokio::select! {
            biased;
            () = &mut cancelled => return None,
            Some(report) = reports.recv() => forward(report).await,
            joined = &mut task => break joined,
        }
    };
    while let Ok(report) = reports.try_recv() {
        forward(report).await;
    }
    Some(joined)
}

/// `Prepared` is a file ready for the view, or the size that kept it from
/// being downloaded.
pub(crate) enum Prepared {
    /// Read and prepared.
    Ready(std::sync::Arc<porter_fileview::Prepared>),
    /// Larger than the view reads: its size, as learnt.
    TooLarge(u64),
}

/// The description of a file too large to download, with its link.
pub(crate) fn describe_too_large(
    info: &FileInfo,
    size: u64,
    link: &str,
    options: &porter_fileview::Options,
) -> View {
    let declared = (!info.mime_type.is_empty()).then_some(info.mime_type.as_str());
    porter_fileview::describe_too_large(&info.name, size, declared, Some(link), options)
}

/// A window the file does not have, or a cancelled view, as a sentence the
/// model reads.
pub(crate) fn view_failure(error: &ViewError) -> ToolError {
    match error {
        ViewError::Cancelled => ToolError::Tool("the request was cancelled".to_owned()),
        other => ToolError::Tool(other.to_string()),
    }
}

/// A view as a tool result: its blocks unchanged, and the structured record.
pub(crate) fn view_result(info: &FileInfo, link: &str, view: &View) -> Reply {
    let content = blocks(&view.content)?;
    let record = &view.structured;
    let window = record.window;
    let out = ReadFileOut {
        file_id: info.id.clone(),
        name: record.name.clone(),
        post_id: info.post_id.clone(),
        kind: enum_name(&record.kind),
        mime_type: record.mime_type.clone(),
        size: record.size_bytes,
        shown: enum_name(&record.shown),
        web_url: link.to_owned(),
        start_line: window.map(|w| w.start_line),
        end_line: window.map(|w| w.end_line),
        total_lines: window.map(|w| w.total_lines),
        next_start_line: window.and_then(|w| w.next_start_line),
        image: record.image.clone(),
        type_note: record.type_note.clone(),
        reason: record.reason.clone(),
        notes: record.notes.clone(),
        outline: record
            .outline
            .iter()
            .map(|h| HeadingOut {
                level: h.level,
                text: h.text.clone(),
                line: h.line,
            })
            .collect(),
    };
    let value = serde_json::to_value(&out).map_err(|e| {
        ToolError::Rpc(ErrorData::internal_error(
            format!("the result could not be written: {e}"),
            None,
        ))
    })?;
    let mut result = CallToolResult::success(content);
    result.structured_content = Some(value);
    Ok(result)
}

/// The snake_case name a unit enum serialises to.
pub(crate) fn enum_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

impl MattermostServer {
    pub(crate) async fn save_file_impl(&self, args: SaveFileArgs) -> Reply {
        let file_id = args.file_id.trim();
        if file_id.is_empty() {
            return Err(ToolError::Tool(
                "file_id is empty; pass the id of a file as listed with its post".to_owned(),
            ));
        }
        let dir = self.shared.options.download_dir.clone();
        let info = self.shared.client.file_info(file_id).await?;
        let link = self.file_link(&info);
        let too_large = |size: u64| {
            ToolError::Tool(format!(
                "{} is {}, more than the {} save_file writes; nothing was saved. A person can download it at {link}",
                info.name,
                porter_fileview::human_size(size),
                porter_fileview::human_size(SAVE_FILE_BYTES)
            ))
        };
        if info.size > SAVE_FILE_BYTES {
            return Err(too_large(info.size));
        }
        let origin = format!("{}/api/v4/files/{}", self.shared.client.base_url(), info.id);
        let earlier = {
            let (dir, name, origin, size) =
                (dir.clone(), info.name.clone(), origin.clone(), info.size);
            let shared = std::sync::Arc::clone(&self.shared);
            tokio::task::spawn_blocking(move || {
                shared.saved.earlier_copy(&dir, &name, &origin, size)
            })
            .await
            .ok()
            .flatten()
        };
        let saved = if let Some(path) = earlier {
            porter_paths::Saved {
                path,
                size: info.size,
                already_saved: true,
                mark_note: None,
            }
        } else {
            let bytes = match self.file_bytes(&info, SAVE_FILE_BYTES).await? {
                Ok(bytes) => bytes,
                Err(size) => return Err(too_large(size)),
            };
            let shared = std::sync::Arc::clone(&self.shared);
            let name = info.name.clone();
            let origin = origin.clone();
            tokio::task::spawn_blocking(move || {
                porter_paths::save_new(&dir, &name, &bytes, &origin, SAVE_FILE_BYTES, &shared.saved)
            })
            .await
            .map_err(|e| ToolError::Tool(format!("saving stopped unexpectedly: {e}")))?
            .map_err(|e| ToolError::Tool(format!("{e}; nothing was saved")))?
        };
        let out = SavedOut {
            file_id: info.id.clone(),
            path: saved.path.display().to_string(),
            size: saved.size,
            already_saved: saved.already_saved,
            mark_note: saved.mark_note.clone(),
        };
        let mut text = if saved.already_saved {
            format!(
                "{} was saved before and is still at {} ({}); nothing new was written.",
                info.name,
                out.path,
                porter_fileview::human_size(out.size)
            )
        } else {
            format!(
                "Saved {} to {} ({}).",
                info.name,
                out.path,
                porter_fileview::human_size(out.size)
            )
        };
        if let Some(note) = &saved.mark_note {
            let _ = write!(text, " It is not marked as downloaded: {note}.");
        }
        text.push('\n');
        done(text, &out)
    }
}

/// A file to read.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct ReadFileArgs {
    /// The file's id, as listed with its post.
    pub file_id: String,
    /// For text: the first line to show, from 1 (default 1).
    #[serde(default)]
    pub start_line: Option<u64>,
    /// For text: how many lines to show (default 500, at most 2000).
    #[serde(default)]
    pub line_count: Option<u64>,
}

/// A file to save.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct SaveFileArgs {
    /// The file's id, as listed with its post.
    pub file_id: String,
}

method_tools! {
    /// `search_files`: Search files.
    SearchFiles = search_files_impl(args) {
        name: "search_files", title: "Search files", hints: Hints::READ, args: SearchArgs, out: FilesOut,
        description: "Searches attached files by name (and content where the server indexes it); pass a result's id to read_file.",
    }
    /// `read_file`: Read an attached file.
    ReadFile = read_file_impl(args, context) {
        name: "read_file", title: "Read an attached file", hints: Hints::READ, args: ReadFileArgs, out: ReadFileOut,
        description: "Shows an attached file as content: text in windows of numbered lines (pass next_start_line as start_line for the next window), Word, Excel, PowerPoint, PDF and HTML documents the same way as their Markdown (# headings, list items, | pipe | tables |, with an outline of the headings and their lines in the structured result), archives listed, images upright and scaled, small audio and video as themselves, anything else described with a link for the person. Files over 64 MiB are described without being downloaded.",
    }
    /// `save_file`: Save an attached file.
    SaveFile = save_file_impl(args) {
        name: "save_file", title: "Save an attached file", hints: Hints::write(false, true), args: SaveFileArgs, out: SavedOut,
        description: "Saves an attached file into the person's download directory under its own name (made safe), never over an existing file: a name already taken gets \" (2)\" and so on. Saving the same file again answers the earlier copy. Use it when the person asks for a copy on their machine.",
    }
}

impl MattermostServer {
    /// Results `[0, end)` of a file search in each of `in_teams`, each
    /// file once, newest first, and whether Mattermost may hold more than
    /// it answered. Without Elasticsearch, Mattermost's file search ignores
    /// `page` and `per_page` and answers its newest 100 files: a team whose
    /// next page brings back only files it answered already has reached
    /// that cap, and more may match.
    pub(crate) async fn search_files_in(
        &self,
        in_teams: &[Team],
        terms: &str,
        end: usize,
    ) -> Result<FilesFound, ToolError> {
        let mut seen = HashSet::new();
        let mut found = Vec::new();
        let mut capped = false;
        for team in in_teams {
            let mut this_team = HashSet::new();
            for page in 0.. {
                let mut search = Search::new(terms);
                search.page = page;
                search.per_page = SEARCH_FETCH as u32;
                let list = self.shared.client.search_files(&team.id, &search).await?;
                let answered = list.order.len();
                let mut new_here = 0;
                for file in list.into_ordered() {
                    if this_team.insert(file.id.clone()) {
                        new_here += 1;
                    }
                    if seen.insert(file.id.clone()) {
                        found.push(file);
                    }
                }
                if answered < SEARCH_FETCH {
                    break;
                }
                if new_here == 0 {
                    capped = true;
                    break;
                }
                if found.len() >= end {
                    break;
                }
            }
        }
        found.sort_by(|a, b| b.create_at.cmp(&a.create_at).then_with(|| a.id.cmp(&b.id)));
        Ok(FilesFound {
            files: found,
            capped,
        })
    }

    pub(crate) async fn search_files_impl(&self, args: SearchArgs) -> Reply {
        let paging = self.search_paging("search_files", &args)?;
        let teams = self.teams_for(args.team_id.as_deref()).await?;
        let end = paging.end(SEARCH_DEPTH);
        let found = self.search_files_in(&teams, &args.terms, end).await?;
        let all: Vec<FileOut> = found.files.iter().map(FileOut::from).collect();
        let (page, next) = self.slice(&paging, &all);
        let opening = if all.is_empty() {
            format!("No file matches {:?}.\n", args.terms)
        } else {
            format!(
                "Files matching {:?} (names as their uploaders gave them):\n",
                args.terms
            )
        };
        let mut text = opening;
        for line in page.iter().map(file_line) {
            text.push_str(&line);
            text.push('\n');
        }
        if found.capped && next.is_none() {
            let _ = writeln!(
                text,
                "Mattermost answers at most {SEARCH_FETCH} files for one search (its database search does not page), \
                 and it answered that many: others may match. Narrow the search (more words, in:, from:, ext:, after:) to find them."
            );
        } else {
            more_line(&mut text, next.as_ref(), "results");
        }
        done(
            text,
            &FilesOut {
                files: page,
                next_cursor: next,
            },
        )
    }
}

/// `FilesFound` is what a file search gathered, and whether Mattermost may
/// hold more matches than it answered.
pub(crate) struct FilesFound {
    /// The files, each once, newest first.
    pub files: Vec<FileInfo>,
    /// Whether a team's search stopped at Mattermost's cap.
    pub capped: bool,
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use super::{Report, forwarding};

    /// A reader that reports quickly and ends at once, and a client that
    /// takes a moment per notification: every report still reaches the
    /// client, in order, before the answer. (The reports queued when the
    /// reader ended were dropped, and the last one, "done", with them.)
    #[tokio::test]
    async fn every_report_of_a_reader_goes_out_before_its_answer() {
        for _ in 0..5 {
            let (reports, mut reported) = tokio::sync::mpsc::unbounded_channel::<Report>();
            let task = tokio::task::spawn_blocking(move || {
                for done in 0..20 {
                    let _ = reports.send((f64::from(done), 19.0, "reading".to_owned()));
                }
                "the answer"
            });
            let sent = Arc::new(Mutex::new(Vec::new()));
            let forward = |report: Report| {
                let sent = Arc::clone(&sent);
                async move {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                    sent.lock().expect("lock").push(report.0);
                }
            };
            let answer = forwarding(task, &mut reported, std::future::pending(), forward).await;
            assert_eq!(answer.map(Result::ok), Some(Some("the answer")));
            let sent = sent.lock().expect("lock").clone();
            let expected: Vec<f64> = (0..20).map(f64::from).collect();
            assert_eq!(sent, expected, "every report, in order");
        }
    }

    #[tokio::test]
    async fn a_cancelled_request_stops_waiting() {
        let (_reports, mut reported) = tokio::sync::mpsc::unbounded_channel::<Report>();
        let task = tokio::task::spawn_blocking(|| std::thread::sleep(Duration::from_millis(1500)));
        let started = std::time::Instant::now();
        let answer = forwarding(task, &mut reported, std::future::ready(()), |_| async {}).await;
        assert!(answer.is_none());
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "it waited for the reader"
        );
    }
}
