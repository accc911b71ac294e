//! The `File` tool's input: one flat object whose `op` says what to do.
//!
//! A flat object (rather than a `oneOf` per op) because MCP clients expect
//! an input schema of `type: object` with plain properties, and models fill
//! those in most reliably; each field's description says which ops use it.

use schemars::JsonSchema;
use serde::Deserialize;

/// `Op` is one File operation of this version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Op {
    /// Type, size, sha256 and origin of a file.
    Stat,
    /// The entries of a folder.
    Ls,
    /// The content of a file.
    Read,
    /// Copy an inbox file into a durable volume.
    Keep,
    /// Delete an inbox file.
    Rm,
    /// Delete every file in the inbox.
    Clear,
    /// Turn a document into a Markdown file next to it in the inbox.
    Extract,
    /// Turn a document into Markdown and add it to the searchable Documents.
    Import,
    /// Fetch a URL into the inbox or a volume.
    Download,
    /// Send a file to a URL.
    Upload,
}

/// `UploadMethod` is how an upload is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum UploadMethod {
    /// One PUT request carrying the whole file.
    #[serde(alias = "PUT", alias = "Put")]
    Put,
    /// One POST request carrying the whole file.
    #[serde(alias = "POST", alias = "Post")]
    Post,
    /// Microsoft Graph's resumable upload session: `url` is its uploadUrl.
    #[serde(alias = "GRAPH", alias = "Graph")]
    Graph,
}

/// `FileArgs` is the `File` tool's arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileArgs {
    /// What to do: `stat`, `ls`, `read`, `keep`, `rm`, `clear`, `extract`,
    /// `import`, `download` or `upload`.
    pub op: Op,
    /// The file or folder: `volume:inbox:<path>` or just `<path>` for this
    /// run's inbox, `volume:<name>:<path>` for a volume. Needed by stat,
    /// read, keep (the inbox file to copy) and rm; ls lists the inbox root
    /// without it.
    #[serde(default)]
    pub path: Option<String>,
    /// keep: where to copy the file, `volume:<name>:<path>`; download: where
    /// to save it (default: the inbox). A path ending in `/` keeps the
    /// file's own name.
    #[serde(default)]
    pub to: Option<String>,
    /// keep and download into a volume: replace a file that already exists
    /// at `to` (default false).
    #[serde(default)]
    pub overwrite: bool,
    /// download and upload: the http or https URL.
    #[serde(default)]
    pub url: Option<String>,
    /// upload only: the file to send, `volume:inbox:<path>` or
    /// `volume:<name>:<path>`.
    #[serde(default)]
    pub from: Option<String>,
    /// upload only: `put` or `post` (one request), or `graph` (a Microsoft
    /// Graph upload session; `url` is its uploadUrl).
    #[serde(default)]
    pub method: Option<UploadMethod>,
    /// download and upload: extra request headers (name to value);
    /// credentials (Authorization, Cookie, *-Token, *-Key, …) are refused.
    #[serde(default)]
    pub headers: Option<std::collections::BTreeMap<String, String>>,
    /// read only: the first line of the text window, from 1 (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub start_line: Option<u64>,
    /// read only: how many lines to show (default 500, at most 2000).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub line_count: Option<u64>,
    /// import only: the document's title (default: the document's own
    /// title, else the file's name).
    #[serde(default)]
    pub title: Option<String>,
}

/// The tool's description: what it is for, how paths are written, and what
/// each op does, so that a model can act on it without another lookup.
pub(crate) const DESCRIPTION: &str = "\
Works with files that were kept out of your context. When a tool result carried a file \
(an image, a PDF, a download), you got a one-line stub instead of its bytes, e.g. \
[file: volume:inbox:documents/report.pdf · application/pdf · 2.8 KiB · sha256:16d5… · from mcp:files/get_attachment]. \
This tool looks at and manages those files.\n\
Paths: volume:inbox:<path> (or just <path>) is this run's inbox; volume:<name>:<path> is a durable volume \
(`ls` with no path names the volumes you may use).\n\
Ops:\n\
- stat {path}: type, size, sha256, and for inbox files where they came from.\n\
- ls {path?}: the entries of a folder (default: the inbox root).\n\
- read {path, start_line?, line_count?}: the content: text in numbered line windows (continue at the \
next start_line it names), images, PDF, Office and HTML documents as windows of their Markdown (the \
result's outline gives each heading's line).\n\
- keep {path, to, overwrite?}: copy an inbox file into a volume, e.g. to: volume:reports:2026/report.pdf; \
never over an existing file unless overwrite is true.\n\
- rm {path}: delete one inbox file.\n\
- clear: delete every file in the inbox.\n\
- extract {path}: turn a DOCX, XLSX, PPTX, HTML, PDF or text file into Markdown, written next to it in the \
inbox as <name>.md; answers its reference and the first lines.\n\
- import {path, title?}: turn such a file into Markdown and add it to the searchable Documents (the \
Documents tool searches and reads them); answers the document's id.\n\
- download {url, to?, headers?}: fetch a URL into the inbox (you get its stub) or, with to, into a volume; \
redirects are followed only within the same host.\n\
- upload {from, url, method, headers?}: send a file; method put or post (one request, redirects not followed) \
or graph (url is a Microsoft Graph upload session's uploadUrl). Credential headers are refused; use \
pre-authenticated URLs.";
