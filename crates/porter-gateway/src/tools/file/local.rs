//! The File operations that stay on this machine (`stat`, `ls`, `read`,
//! `keep`, `rm`, `clear`; `extract` and `import` in [`super::extract`]):
//! what they share (the inbox, the volumes, the view's options) and how
//! their answers and failures are worded. `download` and `upload` build on
//! the same in [`super::transfer`].

use std::collections::BTreeMap;
use std::io;
use std::sync::Arc;

use porter_fileview::{Block, Cancel, FileInput, Options, WindowRequest};
use porter_inbox::{FileRecord, Inbox, InboxError, RunInfo};
use porter_mcp::rfc3339_utc as rfc3339;
use porter_mcp::tool::ToolError;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::args::{FileArgs, Op};
use super::disk::{self, Contents, CopyFault, EntryKind};
use super::grants::{self, Need};
use super::reference::{Place, Reference};
use crate::access::{Caller, may_act};
use crate::config::Volume;

/// `LS_ENTRIES` is the most entries one `ls` shows, so that a huge folder
/// cannot flood the context.
pub(crate) const LS_ENTRIES: usize = 1000;
/// `HASH_MAX_BYTES` is the largest volume file whose sha256 `stat` computes
/// (64 MiB, the file cap): bigger ones show their size only.
pub(crate) const HASH_MAX_BYTES: u64 = porter_inbox::FILE_MAX_BYTES;

pub(super) struct Shared {
    pub(super) inbox: Arc<Inbox>,
    pub(super) volumes: BTreeMap<String, Volume>,
    pub(super) view: Options,
}

/// A failure the caller reads: one sentence naming the next step.
pub(super) type Answer = Result<CallToolResult, ToolError>;

impl Shared {
    pub(super) fn call(&self, caller: &Caller, run: &RunInfo, args: &FileArgs) -> Answer {
        let changes = matches!(args.op, Op::Keep | Op::Rm | Op::Clear | Op::Extract);
        if let Caller::Key {
            name, tenant, role, ..
        } = caller
        {
            // The API layer checks can_read/can_change before calling; this
            // is the same rule again, so a missed check there is not a hole.
            if !may_act(name, tenant, *role, &run.owner) {
                return Err(ToolError::tool(if changes {
                    format!("you may not change run {}", run.id)
                } else {
                    format!("no run {}", run.id)
                }));
            }
        }
        match args.op {
            Op::Stat => self.stat(caller, run, required(args.path.as_deref(), "stat")?),
            Op::Ls => self.ls(caller, run, args.path.as_deref()),
            Op::Read => self.read(
                caller,
                run,
                required(args.path.as_deref(), "read")?,
                WindowRequest {
                    start_line: args.start_line,
                    line_count: args.line_count,
                },
            ),
            Op::Keep => self.keep(
                caller,
                run,
                required(args.path.as_deref(), "keep")?,
                args.to.as_deref().ok_or_else(|| ToolError::tool(
                    "keep needs `to`, the volume path to copy the file to, e.g. volume:reports:report.pdf",
                ))?,
                args.overwrite,
            ),
            Op::Rm => self.rm(caller, run, required(args.path.as_deref(), "rm")?),
            Op::Clear => {
                if args.path.is_some() {
                    return Err(
                        ToolError::tool("clear empties the whole inbox and takes no path; to delete one file use rm {path}"),
                    );
                }
                self.clear(caller, run)
            }
            Op::Extract => self.extract(caller, run, required(args.path.as_deref(), "extract")?),
            Op::Import => self.import(
                caller,
                run,
                required(args.path.as_deref(), "import")?,
                args.title.as_deref(),
            ),
            Op::Download | Op::Upload => Err(
                ToolError::tool("download and upload run through the gateway's network client, which this call did not reach; try the call again"),
            ),
        }
    }

    /// Parses `text` and checks that `caller` may `need` its root.
    pub(super) fn resolve(
        &self,
        caller: &Caller,
        run: &RunInfo,
        text: &str,
        need: Need,
    ) -> Result<Reference, ToolError> {
        let (reference, _) = grants::resolve(caller, &run.owner, &self.volumes, text, need)?;
        purged(run, &reference)?;
        Ok(reference)
    }

    pub(super) fn allow(
        &self,
        caller: &Caller,
        run: &RunInfo,
        reference: &Reference,
        need: Need,
    ) -> Result<(), ToolError> {
        grants::check(caller, &run.owner, &self.volumes, &reference.place, need)?;
        purged(run, reference)
    }

    /// The root directory of `reference`'s volume; `None` for an inbox that
    /// has no files yet.
    pub(super) fn root(
        &self,
        run: &RunInfo,
        reference: &Reference,
    ) -> Result<Option<cap_std::fs::Dir>, ToolError> {
        match &reference.place {
            // With blobs in object storage, the inbox folder holds local
            // copies of the recorded files this reference reaches.
            Place::Inbox => match self
                .inbox
                .localize(run.id, &reference.rel)
                .map_err(|e| io::Error::other(store_fault(run, &e).to_string()))
                .and_then(|()| disk::open_root(&self.inbox.inbox_dir(run.id)))
            {
                Ok(dir) => Ok(Some(dir)),
                Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
                Err(error) => Err(ToolError::tool(format!(
                    "the inbox could not be opened: {error}"
                ))),
            },
            Place::Volume(name) => {
                let volume = self
                    .volumes
                    .get(name)
                    .ok_or_else(|| ToolError::tool(format!("there is no volume {name:?}")))?;
                disk::open_root(&volume.path).map(Some).map_err(|error| {
                    tracing::warn!(volume = %name, path = %volume.path.display(), %error, "a volume's folder cannot be opened");
                    ToolError::tool(format!("volume {name} cannot be opened on this machine ({error}); tell the operator"))
                })
            }
        }
    }

    /// Whether a hard-linked file may be read beneath `reference`'s root:
    /// only in a volume that sets `allow_hard_links: true`.
    pub(super) fn links(&self, reference: &Reference) -> disk::Links {
        match &reference.place {
            Place::Volume(name) if self.volumes.get(name).is_some_and(|v| v.allow_hard_links) => {
                disk::Links::Many
            }
            _ => disk::Links::One,
        }
    }

    /// The root of `reference`, or the "does not exist" answer for an inbox
    /// that has no files yet.
    pub(super) fn existing_root(
        &self,
        run: &RunInfo,
        reference: &Reference,
    ) -> Result<cap_std::fs::Dir, ToolError> {
        self.root(run, reference)?.ok_or_else(|| missing(reference))
    }

    pub(super) fn record(
        &self,
        run: &RunInfo,
        reference: &Reference,
    ) -> Result<Option<FileRecord>, ToolError> {
        if reference.place != Place::Inbox || reference.rel.is_empty() {
            return Ok(None);
        }
        self.inbox
            .file(run.id, &reference.rel)
            .map_err(|e| store_fault(run, &e))
    }

    pub(super) fn stat(&self, caller: &Caller, run: &RunInfo, path: &str) -> Answer {
        let reference = self.resolve(caller, run, path, Need::Look)?;
        let shown = reference.shown();
        if let Some(record) = self.record(run, &reference)? {
            let text = format!(
                "{shown} · file · {} · {} ({} bytes) · sha256:{} · from {} · kept {} · call {}",
                record.media_type,
                porter_fileview::human_size(record.size),
                record.size,
                record.sha256,
                record.origin,
                rfc3339(record.created_at),
                clipped(&record.call, 300),
            );
            return Ok(answer(
                text,
                json!({
                    "path": shown,
                    "kind": "file",
                    "size": record.size,
                    "media_type": record.media_type,
                    "sha256": record.sha256,
                    "origin": record.origin,
                    "call": record.call,
                    "created_at": rfc3339(record.created_at),
                }),
            ));
        }
        let Some(root) = self.root(run, &reference)? else {
            if reference.rel.is_empty() {
                return Ok(answer(
                    format!("{shown} · folder · empty"),
                    json!({"path": shown, "kind": "dir", "entries": 0}),
                ));
            }
            return Err(missing(&reference));
        };
        let metadata = root
            .metadata(reference.fs_path())
            .map_err(|e| io_fault(&reference, &e))?;
        if metadata.is_dir() {
            let entries = disk::list(&root, reference.fs_path())
                .map_err(|e| io_fault(&reference, &e))?
                .len();
            return Ok(answer(
                format!("{shown} · folder · {entries} entries"),
                json!({"path": shown, "kind": "dir", "entries": entries}),
            ));
        }
        let name = reference.name().unwrap_or_default();
        match disk::read_capped(
            &root,
            reference.fs_path(),
            HASH_MAX_BYTES,
            self.links(&reference),
        )
        .map_err(|e| io_fault(&reference, &e))?
        {
            Contents::Bytes(bytes) => {
                let sha256 = disk::hex(&Sha256::digest(&bytes));
                let found = porter_fileview::sniff_type(&bytes, name);
                let size = bytes.len() as u64;
                let mut text = format!(
                    "{shown} · file · {} · {} ({size} bytes) · sha256:{sha256}",
                    found.mime_type,
                    porter_fileview::human_size(size),
                );
                if let Some(note) = &found.type_note {
                    text.push_str(" · ");
                    text.push_str(note);
                }
                Ok(answer(
                    text,
                    json!({
                        "path": shown,
                        "kind": "file",
                        "size": size,
                        "media_type": found.mime_type,
                        "sha256": sha256,
                        "type_note": found.type_note,
                    }),
                ))
            }
            Contents::TooLarge(size) => Ok(answer(
                format!(
                    "{shown} · file · {} ({size} bytes) · not hashed: larger than {}",
                    porter_fileview::human_size(size),
                    porter_fileview::human_size(HASH_MAX_BYTES)
                ),
                json!({"path": shown, "kind": "file", "size": size}),
            )),
        }
    }

    pub(super) fn ls(&self, caller: &Caller, run: &RunInfo, path: Option<&str>) -> Answer {
        let reference = self.resolve(caller, run, path.unwrap_or(""), Need::Look)?;
        let shown = reference.shown();
        let entries = match self.root(run, &reference)? {
            Some(root) => {
                let metadata = root
                    .metadata(reference.fs_path())
                    .map_err(|e| io_fault(&reference, &e))?;
                if !metadata.is_dir() {
                    return Err(ToolError::tool(format!(
                        "{shown} is a file; use stat or read on it"
                    )));
                }
                disk::list(&root, reference.fs_path()).map_err(|e| io_fault(&reference, &e))?
            }
            None if reference.rel.is_empty() => Vec::new(),
            None => return Err(missing(&reference)),
        };
        let records: BTreeMap<String, FileRecord> = if reference.place == Place::Inbox {
            self.inbox
                .files(run.id)
                .map_err(|e| store_fault(run, &e))?
                .into_iter()
                .map(|r| (r.path.clone(), r))
                .collect()
        } else {
            BTreeMap::new()
        };
        let total = entries.len();
        let mut lines = vec![match total {
            0 => format!("{shown} is empty"),
            1 => format!("{shown} holds 1 entry"),
            n => format!("{shown} holds {n} entries"),
        }];
        let mut listed = Vec::new();
        for entry in entries.iter().take(LS_ENTRIES) {
            let child = reference.join(&entry.name);
            let record = records.get(&child.rel);
            let mut line = child.shown();
            match entry.kind {
                EntryKind::Dir => line.push_str("/ · folder"),
                EntryKind::File => {
                    if let Some(record) = record {
                        line.push_str(" · ");
                        line.push_str(&record.media_type);
                    }
                    if let Some(size) = entry.size {
                        line.push_str(" · ");
                        line.push_str(&porter_fileview::human_size(size));
                    }
                    if let Some(record) = record {
                        line.push_str(" · from ");
                        line.push_str(&record.origin);
                    }
                }
                EntryKind::Link => line.push_str(" · symlink"),
                EntryKind::Other => line.push_str(" · not a file or folder"),
            }
            lines.push(line);
            listed.push(json!({
                "path": child.shown(),
                "name": entry.name,
                "kind": entry.kind.word(),
                "size": entry.size,
                "media_type": record.map(|r| r.media_type.clone()),
                "origin": record.map(|r| r.origin.clone()),
            }));
        }
        if total > LS_ENTRIES {
            lines.push(format!(
                "… and {} more not shown; ls a subfolder to narrow it",
                total - LS_ENTRIES
            ));
        }
        if reference.place == Place::Inbox && reference.rel.is_empty() {
            let usable = grants::usable(caller, &run.owner, &self.volumes, Need::Look);
            lines.push(format!("Volumes you may use: {}", usable.join(", ")));
        }
        Ok(answer(
            lines.join("\n"),
            json!({"path": shown, "total": total, "entries": listed}),
        ))
    }

    pub(super) fn read(
        &self,
        caller: &Caller,
        run: &RunInfo,
        path: &str,
        window: WindowRequest,
    ) -> Answer {
        let reference = self.resolve(caller, run, path, Need::Look)?;
        let shown = reference.shown();
        let Some(name) = reference.name() else {
            return Err(ToolError::tool(format!(
                "{shown} is a folder; ls it, then read a file in it"
            )));
        };
        let declared = self.record(run, &reference)?.map(|r| r.media_type);
        let root = self.existing_root(run, &reference)?;
        let contents = disk::read_capped(
            &root,
            reference.fs_path(),
            self.view.max_file_bytes,
            self.links(&reference),
        )
        .map_err(|e| io_fault(&reference, &e))?;
        let view = match contents {
            Contents::TooLarge(size) => porter_fileview::describe_too_large(
                name,
                size,
                declared.as_deref(),
                None,
                &self.view,
            ),
            Contents::Bytes(bytes) => {
                let input = FileInput {
                    bytes: &bytes,
                    name,
                    declared_type: declared.as_deref(),
                    link: None,
                };
                porter_fileview::view(&input, &window, &self.view, &Cancel::new())?
            }
        };
        let content = blocks(&view.content)?;
        let mut structured = serde_json::to_value(&view.structured).map_err(|e| {
            ToolError::tool(format!("the view of {shown} could not be written: {e}"))
        })?;
        if let Some(object) = structured.as_object_mut() {
            object.insert("path".to_owned(), Value::String(shown));
        }
        let mut result = CallToolResult::success(content);
        result.structured_content = Some(structured);
        Ok(result)
    }

    pub(super) fn keep(
        &self,
        caller: &Caller,
        run: &RunInfo,
        path: &str,
        to: &str,
        overwrite: bool,
    ) -> Answer {
        let from = Reference::parse(path)?;
        if from.place != Place::Inbox {
            return Err(ToolError::tool(format!(
                "keep copies a file out of the inbox, and {} is not in the inbox; name an inbox file such as volume:inbox:report.pdf",
                from.shown()
            )));
        }
        let Some(name) = from.name() else {
            return Err(ToolError::tool(
                "keep needs a file in the inbox as path, not the inbox itself",
            ));
        };
        self.allow(caller, run, &from, Need::Change)?;
        let mut target = self.resolve(caller, run, to, Need::Keep)?;
        let from_root = self.existing_root(run, &from)?;
        let to_root = self.root(run, &target)?.ok_or_else(|| missing(&target))?;
        let names_folder = target.rel.is_empty()
            || to.trim_end().ends_with('/')
            || to_root.metadata(target.fs_path()).is_ok_and(|m| m.is_dir());
        if names_folder {
            target = target.join(name);
        }
        let copied = disk::copy_into(
            &from_root,
            from.fs_path(),
            &to_root,
            target.fs_path(),
            overwrite,
        )
        .map_err(|fault| match fault {
            CopyFault::Exists => ToolError::tool(format!(
                "{} already exists; pass overwrite: true to replace it, or keep to another path",
                target.shown()
            )),
            CopyFault::TargetIsDir => ToolError::tool(format!(
                "{} is a folder; name a file inside it, e.g. {}",
                target.shown(),
                target.join(name).shown()
            )),
            CopyFault::Source(error) => io_fault(&from, &error),
            CopyFault::Target(error) => io_fault(&target, &error),
        })?;
        let media_type = self
            .record(run, &from)?
            .map_or_else(|| "application/octet-stream".to_owned(), |r| r.media_type);
        let text = format!(
            "kept {} as {} · {media_type} · {} · sha256:{}",
            from.shown(),
            target.shown(),
            porter_fileview::human_size(copied.size),
            copied.sha256
        );
        Ok(answer(
            text,
            json!({
                "from": from.shown(),
                "path": target.shown(),
                "media_type": media_type,
                "size": copied.size,
                "sha256": copied.sha256,
            }),
        ))
    }

    pub(super) fn rm(&self, caller: &Caller, run: &RunInfo, path: &str) -> Answer {
        let reference = self.resolve(caller, run, path, Need::Change)?;
        if reference.rel.is_empty() {
            return Err(ToolError::tool(
                "rm deletes one file; to empty the whole inbox use clear",
            ));
        }
        // The store removes by path; a folder on the way swapped for a
        // symlink must not take the removal outside the inbox.
        if let Some(root) = self.root(run, &reference)?
            && let Err(error) = root.symlink_metadata(reference.fs_path())
            && disk::is_escape(&error)
        {
            return Err(io_fault(&reference, &error));
        }
        match self.inbox.remove(run.id, &reference.rel) {
            Ok(()) => Ok(answer(
                format!("removed {}", reference.shown()),
                json!({"removed": reference.shown()}),
            )),
            Err(InboxError::NoFile { .. }) => Err(missing(&reference)),
            Err(error) => Err(store_fault(run, &error)),
        }
    }

    pub(super) fn clear(&self, caller: &Caller, run: &RunInfo) -> Answer {
        self.allow(caller, run, &Reference::new(Place::Inbox, ""), Need::Change)?;
        let removed = self.inbox.clear(run.id).map_err(|e| store_fault(run, &e))?;
        let text = match removed {
            1 => "cleared the inbox: 1 file removed".to_owned(),
            n => format!("cleared the inbox: {n} files removed"),
        };
        Ok(answer(text, json!({"removed": removed})))
    }
}

/// Refuses the inbox of a run that was purged.
pub(super) fn purged(run: &RunInfo, reference: &Reference) -> Result<(), ToolError> {
    if reference.place == Place::Inbox && run.purged {
        return Err(ToolError::tool(format!(
            "the inbox of run {} was purged after the run ended; its files are gone",
            run.id
        )));
    }
    Ok(())
}

/// `path`, or the sentence saying that `op` needs one.
pub(super) fn required<'a>(path: Option<&'a str>, op: &str) -> Result<&'a str, ToolError> {
    path.ok_or_else(|| {
        ToolError::tool(format!(
            "{op} needs a path: volume:inbox:<path> (or just <path>) or volume:<name>:<path>"
        ))
    })
}

/// A failure as the answer the caller reads (every failure of a File
/// operation is a sentence).
pub(super) fn failed(error: ToolError) -> CallToolResult {
    let text = match error {
        ToolError::Tool(text) => text,
        rpc @ ToolError::Rpc(_) => rpc.to_string(),
    };
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// A successful answer: one text block and the same facts as structured
/// content.
pub(super) fn answer(text: String, structured: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    result
}

pub(super) fn missing(reference: &Reference) -> ToolError {
    let folder = match reference.rel.rsplit_once('/') {
        Some((parent, _)) => Reference::new(reference.place.clone(), parent),
        None => Reference::new(reference.place.clone(), ""),
    };
    ToolError::tool(format!(
        "{} does not exist; ls {} to see what is there",
        reference.shown(),
        folder.shown()
    ))
}

/// A file system error on `reference` as a sentence for the caller.
pub(super) fn io_fault(reference: &Reference, error: &io::Error) -> ToolError {
    let shown = reference.shown();
    if disk::is_escape(error) {
        return ToolError::tool(format!(
            "{shown} leads outside volume {} (through a symlink or ..), so it is refused; name a file inside the volume",
            reference.volume()
        ));
    }
    if let Some(names) = disk::hard_linked(error) {
        return ToolError::tool(format!(
            "{shown} is refused: it is a hard link (the file has {names} names), and its other name may be a file outside every volume; \
             an operator who means volume {} to hold hard links can set allow_hard_links: true on it",
            reference.volume()
        ));
    }
    ToolError::tool(match error.kind() {
        io::ErrorKind::NotFound => return missing(reference),
        io::ErrorKind::IsADirectory => format!("{shown} is a folder; ls it to see its files"),
        io::ErrorKind::NotADirectory => {
            format!("a part of {shown} is a file, not a folder; ls its parent to see what is there")
        }
        io::ErrorKind::PermissionDenied => {
            format!("{shown} cannot be opened: this machine denies access to it")
        }
        _ => format!("{shown} could not be used: {error}"),
    })
}

/// A failure of the inbox store as a sentence; the detail is logged.
pub(super) fn store_fault(run: &RunInfo, error: &InboxError) -> ToolError {
    ToolError::tool(match error {
        InboxError::NoRun(id) => format!("no run {id}"),
        InboxError::NoFile { path, .. } => {
            format!("volume:inbox:{path} does not exist; ls volume:inbox: to see what is there")
        }
        unavailable @ InboxError::Unavailable(_) => {
            tracing::warn!(run = %run.id, error = %unavailable, "the inbox store is not answering");
            unavailable.reason().to_owned()
        }
        other => {
            tracing::error!(run = %run.id, error = %other, "the inbox store failed");
            "the inbox store failed; try again, and tell the operator if it keeps failing"
                .to_owned()
        }
    })
}

/// The file view's blocks as rmcp content ([`porter_mcp::content::content`]),
/// a failure to carry one as the sentence the caller reads.
pub(super) fn blocks(blocks: &[Block]) -> Result<Vec<ContentBlock>, ToolError> {
    porter_mcp::content::content(blocks)
}

/// At most `chars` characters of `text`, with `…` when cut.
pub(super) fn clipped(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_show_as_rfc3339_utc() {
        let cases: &[(i64, &str)] = &[
            (0, "1970-01-01T00:00:00Z"),
            (951_782_400_000, "2000-02-29T00:00:00Z"),
            (1_700_000_000_123, "2023-11-14T22:13:20Z"),
            (-1000, "1969-12-31T23:59:59Z"),
        ];
        for (ms, shown) in cases {
            assert_eq!(rfc3339(*ms), *shown, "{ms}");
        }
    }

    #[test]
    fn long_calls_are_clipped_on_a_character_boundary() {
        assert_eq!(clipped("abc", 5), "abc");
        assert_eq!(clipped("äöüß", 2), "äö…");
    }
}
