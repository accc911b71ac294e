//! `File extract` and `File import`: a document (DOCX, XLSX, PPTX, HTML,
//! PDF, text) as Markdown.
//!
//! `extract` writes the Markdown next to the file in the inbox, through the
//! inbox's keeper, so it is recorded like any kept file (origin
//! `file:extract`), and answers its stub line and the first window of it.
//! `import` adds the Markdown to the Document store with where it came from
//! (the source's path and sha256, and the origin and call of the tool that
//! produced it), so the `Documents` tool can search and read it.

use porter_fileview::{Cancel, FileInput, Markdown, WindowRequest};
use porter_inbox::{Document, FileRecord, Incoming, Origin, Outcome, RunInfo};
use porter_mcp::ToolError;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::json;
use sha2::{Digest, Sha256};

use super::disk::{self, Contents};
use super::grants::Need;
use super::local::{Answer, Shared, blocks, io_fault, store_fault};
use super::reference::{Place, Reference};
use crate::access::Caller;

/// `TITLE_MAX_CHARS` is the longest title a document keeps; a longer one
/// given or found is cut.
pub const TITLE_MAX_CHARS: usize = 300;

/// A source file read and turned into Markdown.
struct Extracted {
    reference: Reference,
    /// The source's inbox record (none for a volume file).
    record: Option<FileRecord>,
    sha256: String,
    markdown: Markdown,
}

impl Shared {
    /// Reads `path` (an inbox file, or a volume file the caller may look
    /// into) and turns it into Markdown.
    fn extract_markdown(
        &self,
        caller: &Caller,
        run: &RunInfo,
        path: &str,
        op: &str,
    ) -> Result<Extracted, ToolError> {
        let reference = self.resolve(caller, run, path, Need::Look)?;
        let shown = reference.shown();
        let Some(name) = reference.name() else {
            return Err(ToolError::tool(format!(
                "{op} works on one file, and {shown} is a folder; ls it to pick a file"
            )));
        };
        let record = self.record(run, &reference)?;
        let root = self.existing_root(run, &reference)?;
        let bytes = match disk::read_capped(
            &root,
            reference.fs_path(),
            self.view.max_file_bytes,
            self.links(&reference),
        )
        .map_err(|e| io_fault(&reference, &e))?
        {
            Contents::Bytes(bytes) => bytes,
            Contents::TooLarge(size) => {
                return Err(ToolError::tool(format!(
                    "{shown} is {}, more than the {} a document is read up to; it cannot be {op}ed",
                    porter_fileview::human_size(size),
                    porter_fileview::human_size(self.view.max_file_bytes)
                )));
            }
        };
        let input = FileInput {
            bytes: &bytes,
            name,
            declared_type: record.as_ref().map(|r| r.media_type.as_str()),
            link: None,
        };
        let markdown =
            porter_fileview::to_markdown(&input, &self.view, &Cancel::new()).map_err(|e| {
                ToolError::tool(format!("{shown} could not be turned into Markdown: {e}"))
            })?;
        let sha256 = disk::hex(&Sha256::digest(&bytes));
        Ok(Extracted {
            reference,
            record,
            sha256,
            markdown,
        })
    }

    /// `extract {path}`: writes `<stem>.md` next to the file in the inbox
    /// (in the inbox root for a volume file) and answers its stub and the
    /// first window of it.
    pub(super) fn extract(&self, caller: &Caller, run: &RunInfo, path: &str) -> Answer {
        // The Markdown lands in the inbox, so the inbox must be usable too.
        self.allow(caller, run, &Reference::new(Place::Inbox, ""), Need::Change)?;
        let extracted = self.extract_markdown(caller, run, path, "extract")?;
        let reference = &extracted.reference;
        let name = reference.name().unwrap_or("document");
        let md_name = format!("{}.md", stem(name));
        let dir = match reference.place {
            Place::Inbox => reference
                .rel
                .rsplit_once('/')
                .map(|(parent, _)| parent.to_owned()),
            Place::Volume(_) => None,
        };
        let call = json!({
            "tool": "File",
            "arguments": {"op": "extract", "path": reference.shown()},
        })
        .to_string();
        let incoming = Incoming {
            name: Some(md_name.clone()),
            fallback_name: md_name,
            dir,
            declared_type: Some("text/markdown".to_owned()),
            origin: Origin::Extract,
            call,
        };
        let text = extracted.markdown.text.as_bytes();
        let outcome = self
            .inbox
            .keep_bytes(run.id, incoming, text)
            .map_err(|e| store_fault(run, &e))?;
        let Outcome::Kept(kept) = &outcome else {
            return Err(ToolError::tool(format!(
                "the Markdown of {} was not kept: {}",
                reference.shown(),
                outcome.stub()
            )));
        };
        let input = FileInput {
            bytes: text,
            name: &kept.path,
            declared_type: Some("text/markdown"),
            link: None,
        };
        let view = porter_fileview::view(
            &input,
            &WindowRequest::default(),
            &self.view,
            &Cancel::new(),
        )?;
        let mut content = vec![ContentBlock::text(outcome.stub())];
        for note in &extracted.markdown.notes {
            content.push(ContentBlock::text(format!("Note: {note}")));
        }
        content.extend(blocks(&view.content)?);
        let mut result = CallToolResult::success(content);
        result.structured_content = Some(json!({
            "from": reference.shown(),
            "path": porter_inbox::inbox_ref(&kept.path),
            "media_type": kept.media_type,
            "size": kept.size,
            "sha256": kept.sha256,
            "title": extracted.markdown.title,
            "notes": extracted.markdown.notes,
            "window": view.structured.window,
        }));
        Ok(result)
    }

    /// `import {path, title?}`: adds the file's Markdown to the Document
    /// store and answers the document's id and title.
    pub(super) fn import(
        &self,
        caller: &Caller,
        run: &RunInfo,
        path: &str,
        title: Option<&str>,
    ) -> Answer {
        let Some(documents) = self.inbox.documents() else {
            return Err(ToolError::tool(
                "this gateway keeps no document store, so nothing can be imported; use extract to get the Markdown as a file",
            ));
        };
        let extracted = self.extract_markdown(caller, run, path, "import")?;
        let reference = &extracted.reference;
        let name = reference.name().unwrap_or("document");
        let title = [title, extracted.markdown.title.as_deref()]
            .into_iter()
            .flatten()
            .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
            .find(|t| !t.is_empty())
            .unwrap_or_else(|| name.to_owned());
        let title = super::local::clipped(&title, TITLE_MAX_CHARS);
        let (origin, call) = match (&extracted.record, &reference.place) {
            (Some(record), _) => (record.origin.clone(), record.call.clone()),
            (None, Place::Volume(volume)) => (format!("volume:{volume}"), String::new()),
            (None, Place::Inbox) => ("inbox".to_owned(), String::new()),
        };
        let document = Document {
            id: uuid::Uuid::now_v7().to_string(),
            title,
            markdown: extracted.markdown.text,
            source_path: reference.shown(),
            source_sha256: extracted.sha256,
            origin,
            call,
            run: run.id,
            owner: run.owner.clone(),
            created_at: now_ms(),
        };
        documents.add(&document).map_err(|e| store_fault(run, &e))?;
        let lines = document.markdown.lines().count();
        let mut text = format!(
            "imported {} as document {} · {:?} · {lines} lines of Markdown · sha256:{} · from {}\n\
             Search it with the Documents tool (op search), or read it with Documents get {{id: {:?}}}.",
            document.source_path,
            document.id,
            document.title,
            document.source_sha256,
            document.origin,
            document.id
        );
        for note in &extracted.markdown.notes {
            text.push_str("\nNote: ");
            text.push_str(note);
        }
        Ok(super::local::answer(
            text,
            json!({
                "id": document.id,
                "title": document.title,
                "source_path": document.source_path,
                "source_sha256": document.source_sha256,
                "origin": document.origin,
                "lines": lines,
                "notes": extracted.markdown.notes,
            }),
        ))
    }
}

/// A file's name without its last extension (`report.pdf` → `report`); a
/// name that is all extension (`.env`) stays whole.
fn stem(name: &str) -> &str {
    match name.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem,
        _ => name,
    }
}

/// Now, in Unix milliseconds.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_markdown_file_takes_the_stem_of_the_source() {
        let cases = [
            ("report.pdf", "report"),
            ("archive.tar.gz", "archive.tar"),
            ("README", "README"),
            (".env", ".env"),
            ("notes.md", "notes"),
        ];
        for (name, expected) in cases {
            assert_eq!(stem(name), expected, "{name}");
        }
    }
}
