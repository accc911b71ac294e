//! Attached files as MCP resources.
//!
//! A file is `mattermost://<host>/files/<file_id>`: not its https URL,
//! which a client would fetch without the credential. `resources/read`
//! answers what `read_file` shows (the same download, cache and file view),
//! but whole: a document's text as one text piece, an image upright and
//! scaled, small media as themselves, each at most
//! [`Options::resource_bytes`](crate::Options::resource_bytes). A file
//! that does not fit is refused with a message naming `read_file` (windows)
//! and `save_file` (a copy). `completion/complete` offers file ids for
//! what the person typed, searched as Mattermost's file search; and every
//! tool answer that names files carries a `resource_link` to each.

use std::collections::HashSet;

use base64::Engine as _;
use porter_fileview::{Block, Shown, View, WindowRequest};
use porter_mattermost::{Error, FileInfo};
use porter_mcp::tool::ToolError;
use rmcp::model::{
    CallToolResult, CompleteRequestParams, CompleteResult, CompletionInfo, ContentBlock,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;

use crate::names::looks_like_id;
use crate::server::MattermostServer;
use crate::tools::files::{Prepared, view_failure};

/// `FILE_ID` is the template's one variable.
pub const FILE_ID: &str = "file_id";

/// `COMPLETIONS` is the most values one completion answer holds (MCP's
/// limit).
pub const COMPLETIONS: usize = CompletionInfo::MAX_VALUES;

/// The media type of a document's Markdown.
const MARKDOWN: &str = "text/markdown";

impl MattermostServer {
    /// The host part of the server's address (`host` or `host:port`), which
    /// every resource URI of this server names.
    pub(crate) fn resource_host(&self) -> String {
        host_of(self.shared.client.base_url()).to_owned()
    }

    /// `file_template` is the URI template of a file:
    /// `mattermost://<host>/files/{file_id}`.
    #[must_use]
    pub fn file_template(&self) -> String {
        format!("mattermost://{}/files/{{{FILE_ID}}}", self.resource_host())
    }

    /// `file_uri` is the resource URI of the file `file_id`.
    #[must_use]
    pub fn file_uri(&self, file_id: &str) -> String {
        format!("mattermost://{}/files/{file_id}", self.resource_host())
    }

    /// The resource templates: files.
    pub(crate) fn resource_templates(&self) -> Vec<ResourceTemplate> {
        vec![
            ResourceTemplate::new(self.file_template(), "file")
                .with_title("A file attached in Mattermost")
                .with_description(
                    "A file attached to a post, by its id (as posts and search_files list it): a document as its Markdown, \
                     an image upright and scaled, small audio, video and PDFs as themselves. A file that does not fit in one \
                     piece is refused; read_file shows it in windows and save_file keeps a copy.",
                ),
        ]
    }

    /// The file id a resource URI names, or why it names none here.
    fn file_id_of<'u>(&self, uri: &'u str) -> Result<&'u str, ErrorData> {
        let host = self.resource_host();
        let Some(rest) = uri.strip_prefix("mattermost://") else {
            return Err(ErrorData::invalid_params(
                format!(
                    "{uri:?} is not a resource of this server; its files are {}",
                    self.file_template()
                ),
                None,
            ));
        };
        let (named, path) = rest.split_once('/').unwrap_or((rest, ""));
        if !named.eq_ignore_ascii_case(&host) {
            return Err(ErrorData::invalid_params(
                format!(
                    "{uri:?} names the Mattermost server {named:?}, but this server reads {host:?} only; its files are {}",
                    self.file_template()
                ),
                None,
            ));
        }
        let Some(file_id) = path.strip_prefix("files/") else {
            return Err(ErrorData::invalid_params(
                format!("{uri:?} names no file; a file is {}", self.file_template()),
                None,
            ));
        };
        if !looks_like_id(file_id) {
            return Err(ErrorData::invalid_params(
                format!(
                    "{file_id:?} is not a file id (26 lower-case letters and digits, as posts and search_files list it); a file is {}",
                    self.file_template()
                ),
                None,
            ));
        }
        Ok(file_id)
    }

    /// `resources/read` of a file: what `read_file` shows, whole.
    pub(crate) async fn read_resource_impl(
        &self,
        uri: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<ReadResourceResult, ErrorData> {
        let file_id = self.file_id_of(uri)?;
        let info = self
            .shared
            .client
            .file_info(file_id)
            .await
            .map_err(|error| api_error(uri, &error))?;
        let link = self.file_link(&info);
        let uri = self.file_uri(&info.id);
        let limit = self.shared.options.resource_bytes;
        let prepared = match self
            .prepared_file(&info, &link, context)
            .await
            .map_err(tool_error)?
        {
            Prepared::Ready(prepared) => prepared,
            Prepared::TooLarge(size) => {
                return Err(too_large(
                    &info,
                    &format!(
                        "it is {}, more than porter reads",
                        porter_fileview::human_size(size)
                    ),
                    limit,
                ));
            }
        };
        let contents = whole(&prepared, &info, &uri, &self.shared.options.view, limit)?;
        Ok(ReadResourceResult::new(contents))
    }

    /// `completion/complete` for a file's id: what was typed, searched as
    /// Mattermost's file search does (each word narrows; the last word is
    /// taken as the start of a word, since it is still being typed), newest
    /// first, at most [`COMPLETIONS`] ids, with `hasMore` when there were
    /// more or Mattermost's search stopped at its cap (so more may exist).
    pub(crate) async fn complete_impl(
        &self,
        request: &CompleteRequestParams,
    ) -> Result<CompleteResult, ErrorData> {
        let Some(template) = request.r#ref.as_resource_uri() else {
            return Err(ErrorData::invalid_params(
                format!(
                    "this server has no prompts; it completes the {FILE_ID} of {}",
                    self.file_template()
                ),
                None,
            ));
        };
        if template != self.file_template() {
            return Err(ErrorData::invalid_params(
                format!(
                    "{template:?} is not a template of this server; it completes the {FILE_ID} of {}",
                    self.file_template()
                ),
                None,
            ));
        }
        if request.argument.name != FILE_ID {
            return Err(ErrorData::invalid_params(
                format!(
                    "{} has no variable {:?}; it has {FILE_ID}",
                    self.file_template(),
                    request.argument.name
                ),
                None,
            ));
        }
        let Some(typed) = as_typed(&request.argument.value) else {
            return Ok(CompleteResult::new(CompletionInfo::default()));
        };
        let teams = self.teams_for(None).await.map_err(tool_error)?;
        let found = self
            .search_files_in(&teams, &typed, COMPLETIONS + 1)
            .await
            .map_err(tool_error)?;
        // More than fit, or Mattermost stopped at its cap: more may exist.
        let has_more = found.files.len() > COMPLETIONS || found.capped;
        let values: Vec<String> = found
            .files
            .into_iter()
            .take(COMPLETIONS)
            .map(|file| file.id)
            .collect();
        let completion = CompletionInfo::with_pagination(values, None, has_more)
            .map_err(|e| ErrorData::internal_error(e, None))?;
        Ok(CompleteResult::new(completion))
    }

    /// Adds to a tool's result a `resource_link` block for each file its
    /// structured answer names (every `files` list, at any depth), once
    /// each, in the order named, after the blocks already there.
    pub(crate) fn link_files(&self, result: &mut CallToolResult) {
        if result.is_error == Some(true) {
            return;
        }
        let Some(value) = &result.structured_content else {
            return;
        };
        let mut files = Vec::new();
        named_files(value, &mut files);
        let mut seen = HashSet::new();
        for file in files {
            if !seen.insert(file.id.clone()) {
                continue;
            }
            let mut link = Resource::new(self.file_uri(&file.id), file.name);
            if !file.mime_type.is_empty() {
                link = link.with_mime_type(file.mime_type);
            }
            if let Some(size) = file.size {
                link = link.with_size(size);
            }
            result.content.push(ContentBlock::resource_link(link));
        }
    }
}

/// The host (and port) of a base URL: what stands between `://` and the
/// next `/`.
fn host_of(base_url: &str) -> &str {
    let rest = base_url
        .split_once("://")
        .map_or(base_url, |(_, rest)| rest);
    let end = rest.find('/').unwrap_or(rest.len());
    let authority = &rest[..end];
    // A user name in the URL is never part of the address shown.
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host)
}

/// What the person typed as Mattermost search terms, the last word as a
/// prefix (`repo` finds `report.docx`); `None` when nothing was typed.
fn as_typed(value: &str) -> Option<String> {
    let typed = value.trim();
    if typed.is_empty() {
        return None;
    }
    let last_done = typed.ends_with('*') || typed.ends_with('"') || value.ends_with(' ');
    Some(if last_done {
        typed.to_owned()
    } else {
        format!("{typed}*")
    })
}

/// A file a structured answer names.
struct Named {
    id: String,
    name: String,
    mime_type: String,
    size: Option<u64>,
}

/// Collects the files of every `files` list in `value`, depth first. In
/// an object a thread's `root` comes first and its `replies` next, as the
/// answer's text shows them; the other keys follow in their order.
fn named_files(value: &Value, out: &mut Vec<Named>) {
    match value {
        Value::Array(items) => {
            for item in items {
                named_files(item, out);
            }
        }
        Value::Object(map) => {
            if let Some(Value::Array(files)) = map.get("files") {
                for file in files {
                    if let Some(named) = named_file(file) {
                        out.push(named);
                    }
                }
            }
            let first = ["root", "replies"];
            for key in first {
                if let Some(inner) = map.get(key) {
                    named_files(inner, out);
                }
            }
            for (key, inner) in map {
                if key != "files" && !first.contains(&key.as_str()) {
                    named_files(inner, out);
                }
            }
        }
        _ => {}
    }
}

/// One entry of a `files` list: an object with at least an `id` and a
/// `name`.
fn named_file(value: &Value) -> Option<Named> {
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let id = text("id")?;
    if !looks_like_id(&id) {
        return None;
    }
    Some(Named {
        name: text("name").unwrap_or_else(|| id.clone()),
        id,
        mime_type: text("mime_type").unwrap_or_default(),
        size: value.get("size").and_then(Value::as_u64),
    })
}

/// The whole of a prepared file as resource contents, or the refusal when
/// it does not fit in `limit` bytes a piece.
fn whole(
    prepared: &porter_fileview::Prepared,
    info: &FileInfo,
    uri: &str,
    options: &porter_fileview::Options,
    limit: usize,
) -> Result<Vec<ResourceContents>, ErrorData> {
    // Windows as large as a piece may be, read one after another until the
    // text ends or passes the limit; each is the numbered lines read_file
    // shows, taken back to the plain text.
    let mut wide = options.clone();
    wide.max_window_lines = u64::MAX;
    wide.window_bytes = limit.saturating_add(64);
    let mut text = String::new();
    let mut start = 1;
    let last = loop {
        let request = WindowRequest {
            start_line: Some(start),
            line_count: Some(u64::MAX),
        };
        let view = prepared
            .view(&request, &wide)
            .map_err(|e| tool_error(view_failure(&e)))?;
        let Some(window) = view.structured.window else {
            // Not paged: the view is the same whatever the window.
            return blobs(&view, info, uri, limit);
        };
        if let Some(Block::Text { text: block }) = view.content.first() {
            let lines = window.end_line + 1 - window.start_line;
            push_unnumbered(&mut text, block, lines);
        }
        if text.len() > limit {
            return Err(too_large(
                info,
                &format!(
                    "its text is more than {}",
                    porter_fileview::human_size(limit as u64)
                ),
                limit,
            ));
        }
        match window.next_start_line {
            Some(next) if next > start => start = next,
            _ => break view,
        }
    };
    let record = &last.structured;
    let mime = match record.kind {
        porter_fileview::Kind::Text => record.mime_type.clone(),
        porter_fileview::Kind::Archive => "text/plain".to_owned(),
        _ => MARKDOWN.to_owned(),
    };
    let mut contents = vec![ResourceContents::text(text, uri).with_mime_type(mime)];
    // What follows the text (a PDF's own bytes) follows it here too.
    let after = View {
        content: last.content.into_iter().skip(1).collect(),
        structured: last.structured,
    };
    contents.extend(blob_pieces(&after, info, uri, limit)?);
    Ok(contents)
}

/// Appends the last `lines` lines of a window's text block (`%6d\t` and
/// the line) to `text` without their numbers.
fn push_unnumbered(text: &mut String, block: &str, lines: u64) {
    let lines = usize::try_from(lines).unwrap_or(usize::MAX);
    let body = block.strip_suffix('\n').unwrap_or(block);
    let all: Vec<&str> = body.split('\n').collect();
    let from = all.len().saturating_sub(lines);
    for line in &all[from..] {
        let plain = line.split_once('\t').map_or(*line, |(_, rest)| rest);
        text.push_str(plain);
        text.push('\n');
    }
}

/// A view that is not paged text: its image, audio or media bytes as blobs;
/// a file only described is refused with the reason.
fn blobs(
    view: &View,
    info: &FileInfo,
    uri: &str,
    limit: usize,
) -> Result<Vec<ResourceContents>, ErrorData> {
    let record = &view.structured;
    if record.shown == Shown::Described {
        let reason = record
            .reason
            .clone()
            .unwrap_or_else(|| "porter can only describe it".to_owned());
        return Err(too_large(info, &reason, limit));
    }
    let pieces = blob_pieces(view, info, uri, limit)?;
    if pieces.is_empty() {
        // Text alone (no bytes to give): as text.
        let text: String = view
            .content
            .iter()
            .filter_map(|b| match b {
                Block::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        return Ok(vec![
            ResourceContents::text(text, uri).with_mime_type("text/plain"),
        ]);
    }
    Ok(pieces)
}

/// The image, audio and embedded blocks of a view as blob contents, each
/// at most `limit` bytes.
fn blob_pieces(
    view: &View,
    info: &FileInfo,
    uri: &str,
    limit: usize,
) -> Result<Vec<ResourceContents>, ErrorData> {
    let mut out = Vec::new();
    for block in &view.content {
        let (data, mime) = match block {
            Block::Text { .. } => continue,
            Block::Image { data, mime_type } | Block::Audio { data, mime_type } => {
                (data, mime_type)
            }
            Block::Resource { resource } => (&resource.blob, &resource.mime_type),
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_or(data.len(), |b| b.len());
        if bytes > limit {
            return Err(too_large(
                info,
                &format!("it is {}", porter_fileview::human_size(bytes as u64)),
                limit,
            ));
        }
        out.push(ResourceContents::blob(data.clone(), uri).with_mime_type(mime.clone()));
    }
    Ok(out)
}

/// The refusal of a file that cannot be one resource piece.
fn too_large(info: &FileInfo, why: &str, limit: usize) -> ErrorData {
    ErrorData::invalid_request(
        format!(
            "{} cannot be read whole as a resource ({why}; one piece holds at most {}). \
             Call read_file with file_id {} to read it in windows, or save_file to keep a copy.",
            info.name,
            porter_fileview::human_size(limit as u64),
            info.id
        ),
        None,
    )
}

/// A failure of the Mattermost API as a JSON-RPC error: a file that is not
/// there (or not visible to the account) is "resource not found".
fn api_error(uri: &str, error: &Error) -> ErrorData {
    match error {
        Error::NotFound { .. } | Error::Forbidden { .. } => {
            ErrorData::resource_not_found(format!("{uri}: {error}"), None)
        }
        other => ErrorData::internal_error(format!("{uri}: {other}"), None),
    }
}

/// A tool's sentence as a JSON-RPC error.
fn tool_error(error: ToolError) -> ErrorData {
    match error {
        ToolError::Rpc(data) => data,
        ToolError::Tool(text) => ErrorData::internal_error(text, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_is_what_stands_between_the_scheme_and_the_path() {
        assert_eq!(host_of("http://127.0.0.1:8065"), "127.0.0.1:8065");
        assert_eq!(host_of("https://chat.example.com/mm"), "chat.example.com");
        assert_eq!(host_of("https://me@chat.example.com"), "chat.example.com");
    }

    #[test]
    fn the_last_typed_word_is_a_prefix_unless_it_is_finished() {
        assert_eq!(as_typed("  "), None);
        assert_eq!(as_typed("repo").as_deref(), Some("repo*"));
        assert_eq!(as_typed("meeting no").as_deref(), Some("meeting no*"));
        assert_eq!(as_typed("meeting ").as_deref(), Some("meeting"));
        assert_eq!(
            as_typed("\"kickoff notes\"").as_deref(),
            Some("\"kickoff notes\"")
        );
    }

    #[test]
    fn numbered_lines_are_taken_back_to_their_text() {
        let mut text = String::new();
        push_unnumbered(
            &mut text,
            "notes.md: 3 lines.\n     1\t# Title\n     2\t\n     3\ta\tb\n",
            3,
        );
        assert_eq!(text, "# Title\n\na\tb\n");
    }

    /// The whole of a text file of `lines` lines of ten bytes each, read
    /// with a limit of `limit` bytes.
    fn whole_text(lines: usize, limit: usize) -> Result<Vec<ResourceContents>, ErrorData> {
        let text = "abcdefghi\n".repeat(lines);
        let options = porter_fileview::Options::default();
        let input = porter_fileview::FileInput::new(text.as_bytes(), "notes.txt");
        let prepared = porter_fileview::prepare(&input, &options, &porter_fileview::Cancel::new())
            .expect("a text file prepares");
        let info = FileInfo {
            id: "f".repeat(26),
            name: "notes.txt".to_owned(),
            ..FileInfo::default()
        };
        whole(&prepared, &info, "mattermost://h/files/x", &options, limit)
    }

    #[test]
    fn a_text_exactly_at_the_limit_is_one_piece_and_a_byte_more_is_refused() {
        // 5000 lines of 10 bytes: 50,000 bytes, over several windows of
        // numbered lines each cut at the limit.
        let at = whole_text(5000, 50_000).expect("exactly at the limit");
        let [ResourceContents::TextResourceContents { text, .. }] = at.as_slice() else {
            panic!("one text piece: {at:?}");
        };
        assert_eq!(text.len(), 50_000);
        assert_eq!(text, &"abcdefghi\n".repeat(5000));
        let past = whole_text(5000, 49_999).expect_err("one byte past the limit");
        assert!(past.message.contains("read_file") && past.message.contains("save_file"));
        assert!(past.message.contains("notes.txt"), "{}", past.message);
    }

    #[test]
    fn files_are_found_in_every_list_once_in_the_order_a_thread_shows_them() {
        let id = |c: char| c.to_string().repeat(26);
        let file = |c: char| serde_json::json!({"id": id(c), "name": format!("{c}.txt"), "size": 3, "mime_type": "text/plain"});
        let value = serde_json::json!({
            "post": {"files": [file('b')]},
            "replies": [{"files": [file('b')]}, {"files": [file('c')]}],
            "root": {"files": [file('a')]},
        });
        let mut out = Vec::new();
        named_files(&value, &mut out);
        let names: Vec<String> = out.iter().map(|n| n.name.clone()).collect();
        assert_eq!(names, ["a.txt", "b.txt", "c.txt", "b.txt"]);
    }
}
