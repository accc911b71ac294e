//! `outgoing` turns the files a post asks to carry into checked,
//! fingerprinted attachments, writes the question the person is asked about
//! them, and checks them again just before upload.
//!
//! A file is `{path}` (only when the server runs on the person's own
//! machine) or `{name, content}`, text the model wrote. [`prepare`] applies
//! every refusal rule before anything is read or anyone is asked, in this
//! order: a path over HTTP; too many files; for every file the rules that
//! need no disk (a path to another machine or a device, `/proc`, `/sys`,
//! `/dev`, a relative path, `~user`, a control or invisible character, a
//! file where credentials live; a written file's name, size and text); then
//! links are resolved and the real paths checked again (the same rules, a
//! regular file, the size); then each file is read, refused if it holds a
//! private key or the server's token, and hashed. [`question`] is what the
//! person sees; [`reread`] reads every file again on accept and answers
//! exactly the bytes it compared with what the person was shown.
//!
//! It deliberately holds no MCP types and does no I/O with Mattermost: the
//! server ([`crate::MattermostServer`]) asks, uploads and posts. The path and content
//! rules themselves live in `porter-paths`; the type of each file comes from
//! `porter-fileview`, so a post's question and a file view agree.
//!
//! ```
//! use porter_mattermost_mcp::outgoing::{prepare, question, FileRequest, Outgoing, OutgoingLimits};
//!
//! let files = [FileRequest::Written { name: "notes.md".into(), content: "# Minutes\n".into() }];
//! let post = Outgoing {
//!     requests: &files,
//!     local: false,
//!     home: std::path::Path::new("/home/you"),
//!     token: "a-token-of-26-characters-x",
//!     destination: "channel:abc",
//!     limits: OutgoingLimits::default(),
//! };
//! let prepared = prepare(&post)?;
//! let text = question("Post in ~town-square", "@you posts in ~town-square", &prepared, "Minutes attached.");
//! assert!(text.contains("notes.md: 10 bytes, text/markdown, written for this post"));
//! # Ok::<(), porter_mattermost_mcp::outgoing::Refusal>(())
//! ```

pub mod checks;
mod rules;
mod written;

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};

use porter_fileview::human_size;
use porter_paths::{
    Contents, PathError, expand_path, fingerprint, holds_secret, is_credential_path, ordinary_path,
    read_local, safe_name, sha256_hex, shown,
};
use serde::{Deserialize, Serialize};

use rules::Stage;
pub use rules::{
    MAX_FILES, MAX_PATH_BYTES, MAX_WRITTEN_BYTES, OutgoingLimits, Refusal, RefusalKind,
};

/// `FileRequest` is one file a post asks to carry, as the model gave it:
/// `{"path": "~/report.pdf"}` or `{"name": "notes.md", "content": "…"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum FileRequest {
    /// A file on the person's disk, read only by a local (stdio) server.
    Path {
        /// Absolute, or starting with `~/`.
        path: String,
    },
    /// Text the model wrote for this post.
    Written {
        /// The file's name, made safe before upload.
        name: String,
        /// The file's text (never base64 of a binary file).
        content: String,
    },
}

/// `Source` is where a file's bytes come from, as the question names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Read from this real path (links resolved).
    RealPath(PathBuf),
    /// Written by the model for this post.
    Written,
}

impl fmt::Display for Source {
    /// "read from /home/you/report.pdf" or "written for this post".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::RealPath(path) => write!(f, "read from {}", path.display()),
            Self::Written => f.write_str("written for this post"),
        }
    }
}

/// `PreparedFile` is one checked file: what the question shows of it and
/// the hash its bytes must still have when it is uploaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreparedFile {
    /// The name it is uploaded under: made safe, and numbered when another
    /// file of the post has the same name.
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its media type, by its bytes.
    pub mime_type: String,
    /// Set when the name's type disagrees with the bytes.
    pub type_note: Option<String>,
    /// Where its bytes come from.
    pub source: Source,
    /// The SHA-256 of its bytes, 64 hex digits.
    pub sha256: String,
}

/// `Prepared` is a post's files after every check, and the fingerprint the
/// person's answer is bound to. It serializes, so a server that answers
/// with a sealed request state can carry it to the retry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prepared {
    /// The files, in the order given (a file listed twice appears once).
    pub files: Vec<PreparedFile>,
    /// A SHA-256 over the destination and each file's name, source and
    /// hash.
    pub fingerprint: String,
}

/// The sentence's end for a refused credential or secret, which must not
/// invite the model to find another way to the same file.
const NEVER_SENT: &str = "porter never sends these; do not look for another way to attach it, and if the person wants it shared, they can attach it in Mattermost themselves.";

/// `Outgoing` is a post's files and what they are checked against, given
/// alike to both passes over them ([`prepare`], then [`reread`]).
#[derive(Debug, Clone)]
pub struct Outgoing<'a> {
    /// The files, as the call named them.
    pub requests: &'a [FileRequest],
    /// Whether the server runs on the person's machine (stdio): only then
    /// are paths read.
    pub local: bool,
    /// What `~` expands to.
    pub home: &'a Path,
    /// The server's own token, refused in any file.
    pub token: &'a str,
    /// Where the post goes (a channel id, or the users of a direct
    /// message), bound into the fingerprint.
    pub destination: &'a str,
    /// The limits on the files.
    pub limits: OutgoingLimits,
}

/// Checks a post's files by every refusal rule and reads and hashes each,
/// without keeping the bytes: the result is what the person is asked
/// about.
pub fn prepare(post: &Outgoing<'_>) -> Result<Prepared, Refusal> {
    let files = gather(post, Stage::Prepare)?;
    let files: Vec<PreparedFile> = files.into_iter().map(|(file, _)| file).collect();
    let fingerprint = fingerprint_of(&files, post.destination);
    Ok(Prepared { files, fingerprint })
}

/// Reads every file again after the person accepted, applying every rule
/// again, and compares each with what the question showed: a file changed,
/// gone, grown past its limit or turned into something refused, another
/// destination, or another list of files, and nothing is returned. Answers
/// each prepared file with exactly the bytes that were compared, to be
/// uploaded as they are. `post` is what [`prepare`] was given.
pub fn reread(
    prepared: &Prepared,
    post: &Outgoing<'_>,
) -> Result<Vec<(PreparedFile, Vec<u8>)>, Refusal> {
    let files = gather(post, Stage::Reread)?;
    if files.len() != prepared.files.len() {
        return Err(Refusal::new(
            RefusalKind::Changed,
            None,
            "The files are not the ones the person was asked about; call again to ask about them as they are now.",
            Stage::Reread,
        ));
    }
    let mut checked = Vec::with_capacity(files.len());
    for ((now, bytes), asked) in files.into_iter().zip(&prepared.files) {
        if now != *asked {
            return Err(Refusal::new(
                RefusalKind::Changed,
                Some(asked.name.clone()),
                format!(
                    "{} ({}) changed after the person was asked: its bytes are not those the question showed; call again to ask about the file as it is now.",
                    asked.name, asked.source
                ),
                Stage::Reread,
            ));
        }
        checked.push((now, bytes.unwrap_or_default()));
    }
    let files: Vec<PreparedFile> = checked.iter().map(|(file, _)| file.clone()).collect();
    if fingerprint_of(&files, post.destination) != prepared.fingerprint {
        return Err(Refusal::new(
            RefusalKind::Changed,
            None,
            "The post's destination is not the one the person was asked about; call again to ask about it.",
            Stage::Reread,
        ));
    }
    Ok(checked)
}

/// The text the person is asked: the action, who posts where, every file
/// (name, size, type with any mismatch note, and where it comes from), then
/// the message, quoted line by line so that it cannot pass for part of the
/// list above it.
#[must_use]
pub fn question(action_title: &str, who_where: &str, prepared: &Prepared, message: &str) -> String {
    use std::fmt::Write as _;
    let mut text = format!("{action_title}\n\n{who_where}\n\n");
    match prepared.files.len() {
        0 => text.push_str("It carries no files.\n"),
        1 => text.push_str("It carries 1 file:\n"),
        n => {
            let _ = writeln!(text, "It carries {n} files:");
        }
    }
    for file in &prepared.files {
        let _ = writeln!(
            text,
            "- {}: {}, {}, {}",
            shown(&file.name),
            human_size(file.size),
            file.mime_type,
            file.source
        );
        if let Some(note) = &file.type_note {
            let _ = writeln!(text, "  Its type: {note}");
        }
    }
    if message.is_empty() {
        text.push_str("\nThe post has no message text.");
    } else {
        text.push_str("\nThe message:\n");
        let quoted: Vec<String> = message.lines().map(|line| format!("> {line}")).collect();
        text.push_str(&quoted.join("\n"));
    }
    text
}

fn fingerprint_of(files: &[PreparedFile], destination: &str) -> String {
    let sources: Vec<String> = files
        .iter()
        .map(|file| match &file.source {
            Source::RealPath(path) => format!("path:{}", path.display()),
            Source::Written => "written".to_owned(),
        })
        .collect();
    let mut parts: Vec<&[u8]> = vec![destination.as_bytes()];
    for (file, source) in files.iter().zip(&sources) {
        parts.extend([
            file.name.as_bytes(),
            source.as_bytes(),
            file.sha256.as_bytes(),
        ]);
    }
    fingerprint(&parts)
}

/// A file that passed the checks that need no reading.
enum Pending<'a> {
    Path {
        raw: &'a str,
        name: String,
        real: PathBuf,
    },
    Written {
        name: String,
        content: &'a str,
    },
}

/// A checked file, with its bytes when they are kept (on a re-read).
type Gathered = (PreparedFile, Option<Vec<u8>>);

/// Every rule, in order, then each file read and hashed. The bytes are kept
/// only for a re-read.
fn gather(post: &Outgoing<'_>, stage: Stage) -> Result<Vec<Gathered>, Refusal> {
    let Outgoing {
        requests,
        local,
        home,
        token,
        ref limits,
        ..
    } = *post;
    if !local
        && let Some(raw) = requests.iter().find_map(|r| match r {
            FileRequest::Path { path } => Some(path),
            FileRequest::Written { .. } => None,
        })
    {
        return Err(Refusal::new(
            RefusalKind::PathNotLocal,
            Some(shown(raw)),
            format!(
                "{} was not attached: a file is attached from a path only when porter runs on the person's own computer (over stdio), and this server is reached over HTTP, so it cannot read their disk. Write the text as {{name, content}}, or ask the person to attach the file in Mattermost themselves.",
                shown(raw)
            ),
            stage,
        ));
    }
    if requests.len() > limits.max_files {
        return Err(Refusal::new(
            RefusalKind::TooManyFiles,
            None,
            format!(
                "The post lists {} files, and a post carries at most {}; send the rest in another post, or put them in one archive.",
                requests.len(),
                limits.max_files
            ),
            stage,
        ));
    }
    let mut checked = Vec::with_capacity(requests.len());
    for request in requests {
        checked.push(check_syntax(request, home, limits, stage)?);
    }
    let mut pending = Vec::with_capacity(checked.len());
    for item in checked {
        pending.push(match item {
            Checked::Path { raw, expanded } => resolve(raw, &expanded, home, limits, stage)?,
            Checked::Written { name, content } => Pending::Written {
                name: safe_name(name),
                content,
            },
        });
    }
    let pending = without_repeats(pending);
    let mut names_used = HashSet::new();
    let mut files = Vec::with_capacity(pending.len());
    for item in pending {
        let (name, source, bytes, shown_as) = match item {
            Pending::Path { raw, name, real } => {
                let bytes = match read_local(&real, limits.max_path_bytes)
                    .map_err(|e| Refusal::from_path_error(&e, raw, stage))?
                {
                    Contents::Bytes(bytes) => bytes,
                    Contents::TooLarge { size } => {
                        return Err(too_large(raw, size, limits.max_path_bytes, stage));
                    }
                };
                (name, Source::RealPath(real), bytes, shown(raw))
            }
            Pending::Written { name, content } => {
                let shown_as = name.clone();
                (name, Source::Written, content.as_bytes().to_vec(), shown_as)
            }
        };
        if let Some(secret) = holds_secret(&bytes, token) {
            return Err(Refusal::new(
                RefusalKind::Secret,
                Some(shown_as.clone()),
                format!("{shown_as} ({source}) holds {secret}, and {NEVER_SENT}"),
                stage,
            ));
        }
        let name = unique_name(&name, &mut names_used);
        let found = porter_fileview::sniff_type(&bytes, &name);
        let file = PreparedFile {
            size: bytes.len() as u64,
            mime_type: found.mime_type,
            type_note: found.type_note,
            sha256: sha256_hex(&bytes),
            name,
            source,
        };
        let kept = (stage == Stage::Reread).then_some(bytes);
        files.push((file, kept));
    }
    Ok(files)
}

/// A file that passed the rules that need no disk.
enum Checked<'a> {
    Path { raw: &'a str, expanded: PathBuf },
    Written { name: &'a str, content: &'a str },
}

/// The rules that need no disk: a path's syntax and whether it names a
/// file where credentials live; a written file's name, size and text.
fn check_syntax<'a>(
    request: &'a FileRequest,
    home: &Path,
    limits: &OutgoingLimits,
    stage: Stage,
) -> Result<Checked<'a>, Refusal> {
    match request {
        FileRequest::Path { path } => {
            let expanded =
                expand_path(path, home).map_err(|e| Refusal::from_path_error(&e, path, stage))?;
            if let Some(why) = is_credential_path(&expanded) {
                return Err(credential(path, why, stage));
            }
            Ok(Checked::Path {
                raw: path,
                expanded,
            })
        }
        FileRequest::Written { name, content } => {
            written::check(name, content, limits, stage)?;
            Ok(Checked::Written { name, content })
        }
    }
}

/// Links resolved, the real path checked again, and the size known, all
/// before the file is opened.
fn resolve<'a>(
    raw: &'a str,
    expanded: &Path,
    home: &Path,
    limits: &OutgoingLimits,
    stage: Stage,
) -> Result<Pending<'a>, Refusal> {
    let real = ordinary_path(raw, home).map_err(|e| Refusal::from_path_error(&e, raw, stage))?;
    if let Some(why) = is_credential_path(&real) {
        return Err(credential(&real.to_string_lossy(), why, stage));
    }
    let size = fs_size(&real).map_err(|e| Refusal::from_path_error(&e, raw, stage))?;
    if size > limits.max_path_bytes {
        return Err(too_large(raw, size, limits.max_path_bytes, stage));
    }
    let name = expanded
        .file_name()
        .map_or_else(|| "file".to_owned(), |n| safe_name(&n.to_string_lossy()));
    Ok(Pending::Path { raw, name, real })
}

fn fs_size(real: &Path) -> Result<u64, PathError> {
    std::fs::metadata(real)
        .map(|m| m.len())
        .map_err(|source| PathError::Io {
            path: real.to_owned(),
            source,
        })
}

fn credential(path: &str, why: &str, stage: Stage) -> Refusal {
    Refusal::new(
        RefusalKind::Credential,
        Some(shown(path)),
        format!("{} is {why}, and {NEVER_SENT}", shown(path)),
        stage,
    )
}

fn too_large(raw: &str, size: u64, cap: u64, stage: Stage) -> Refusal {
    Refusal::new(
        RefusalKind::TooLarge,
        Some(shown(raw)),
        format!(
            "{} is {}, more than the {} a file attached from a path may be; the person can share it in Mattermost themselves, or attach a smaller file.",
            shown(raw),
            human_size(size),
            human_size(cap)
        ),
        stage,
    )
}

/// The same file listed twice (one real path, or one written name and
/// text) is attached once.
fn without_repeats(pending: Vec<Pending<'_>>) -> Vec<Pending<'_>> {
    let mut seen_paths = HashSet::new();
    let mut seen_written = HashSet::new();
    pending
        .into_iter()
        .filter(|item| match item {
            Pending::Path { real, .. } => seen_paths.insert(real.clone()),
            Pending::Written { name, content } => seen_written.insert((name.clone(), *content)),
        })
        .collect()
}

/// `name`, or "name (2).ext", "name (3).ext", … when another file of the
/// post has it (names compared without case, as many systems store them).
fn unique_name(name: &str, taken: &mut HashSet<String>) -> String {
    if taken.insert(name.to_lowercase()) {
        return name.to_owned();
    }
    let (stem, ext) = match name.rfind('.') {
        Some(at) if at > 0 => name.split_at(at),
        _ => (name, ""),
    };
    // At most MAX_FILES names are taken, so a free number is found within
    // as many tries.
    (2..=taken.len() + 1)
        .map(|n| format!("{stem} ({n}){ext}"))
        .find(|candidate| taken.insert(candidate.to_lowercase()))
        .unwrap_or_else(|| name.to_owned())
}

#[cfg(test)]
mod tests;
