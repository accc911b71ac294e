//! `porter-fileview` turns a file's bytes into what a model can use: text in
//! windows of numbered lines, Word, PowerPoint, Excel, PDF and HTML
//! documents as windows of their Markdown with an outline of their
//! headings, archive listings, images turned upright and scaled to fit,
//! small audio and video as themselves, and a one-sentence description of
//! everything else.
//!
//! It decides what a file is from its bytes; the name and the declared type
//! are hints, and when they disagree with the bytes the result says both.
//! Every reader is bounded by an [`Options`] limit (bytes read, XML depth,
//! decompressed size, pixels decoded, entries listed), so no crafted file can
//! make a view slow or large, and every failure ends in a description with
//! its reason rather than an error.
//!
//! It deliberately does not fetch, write or run anything: callers hand it the
//! bytes they fetched and put the blocks into their own tool results. A link
//! in a result is only ever for a person ("a person can open it at …"); a
//! result never sends the model to a command or a path instead of content.
//!
//! ```
//! use porter_fileview::{view, Cancel, FileInput, Options, WindowRequest};
//!
//! let input = FileInput::new(b"first\nsecond\n", "notes.txt");
//! let shown = view(&input, &WindowRequest::default(), &Options::default(), &Cancel::new())?;
//! let json = serde_json::to_value(&shown.content)?;
//! assert_eq!(json[0]["type"], "text");
//! assert!(json[0]["text"].as_str().unwrap().contains("     2\tsecond"));
//! assert_eq!(shown.structured.window.unwrap().total_lines, 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod archive;
mod bounds;
mod content;
mod describe;
mod document;
mod markdown;
mod nesting;
mod ocr;
mod office;
mod options;
mod pdf;
mod picture;
mod sniff;
mod text;
pub mod worker;

use std::panic::{AssertUnwindSafe, catch_unwind};

pub use bounds::Cancel;
pub use content::{
    Block, Heading, ImageRecord, Kind, Record, ResourceBlob, Shown, View, WindowRecord,
};
pub use describe::{count, human_size, is_text_media_type};
pub use markdown::{Markdown, begins_like_html};
pub use options::*;
pub use text::WindowRequest;

use bounds::{Extracted, Failure};
use describe::{described, essence, shown_name, type_note};
use sniff::{Encoding, Sniffed};

/// `FileInput` is one file to view: its bytes, and what its source says of
/// it.
#[derive(Debug, Clone, Copy)]
pub struct FileInput<'a> {
    /// The whole file (at most [`Options::max_file_bytes`]; a caller with a
    /// bigger file calls [`describe_too_large`] instead of reading it).
    pub bytes: &'a [u8],
    /// The file's name, shown in every result and used as a type hint.
    pub name: &'a str,
    /// The media type its source declared, which may be absent or wrong.
    pub declared_type: Option<&'a str>,
    /// Where a person can open the file, added to descriptions.
    pub link: Option<&'a str>,
}

impl<'a> FileInput<'a> {
    /// A file with a name and nothing declared.
    #[must_use]
    pub fn new(bytes: &'a [u8], name: &'a str) -> Self {
        Self {
            bytes,
            name,
            declared_type: None,
            link: None,
        }
    }
}

/// `ViewError` is a request the view cannot answer. Everything about the
/// file itself (broken, hostile, unknown) is answered with a description
/// instead; these are about the window asked for, or a cancelled request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ViewError {
    /// The window starts past the last line.
    #[error(
        "{name} has {total_lines} lines, so start_line={start_line} is past its end; pass a start_line from 1 to {}",
        (*total_lines).max(1)
    )]
    PastEnd {
        /// The file's name as shown.
        name: String,
        /// The line asked for.
        start_line: u64,
        /// Lines in the file's text.
        total_lines: u64,
    },
    /// `start_line` or `line_count` was 0.
    #[error("{field} counts from 1, so 0 asks for nothing; pass 1 or more")]
    BadWindow {
        /// The field that was 0.
        field: &'static str,
    },
    /// The caller raised the [`Cancel`] flag.
    #[error("the request was cancelled before the file was shown")]
    Cancelled,
    /// [`to_markdown`] has no reader for this kind of file.
    #[error(
        "{name} is {what}, which cannot be turned into Markdown; extract reads DOCX, XLSX/XLS/ODS, PPTX, HTML, PDF, plain text, Markdown and the text in images (OCR)"
    )]
    NotExtractable {
        /// The file's name as shown.
        name: String,
        /// What the file is, with its article ("an image").
        what: String,
    },
    /// [`to_markdown`] reads this kind of file, but not this file.
    #[error("{name} cannot be turned into Markdown because {reason}")]
    Unreadable {
        /// The file's name as shown.
        name: String,
        /// Why, completing "because …".
        reason: String,
    },
}

/// Shows one file: the content blocks a model sees and the record a
/// program reads. Errors only for a window past the end, a zero in the
/// window, or cancellation; any file at all gets a view. The same as
/// [`prepare`] followed by [`Prepared::view`].
pub fn view(
    input: &FileInput<'_>,
    window: &WindowRequest,
    options: &Options,
    cancel: &Cancel,
) -> Result<View, ViewError> {
    prepare(input, options, cancel)?.view(window, options)
}

/// Reads a file once into what every window of it is cut from: the decoded,
/// extracted or listed text with a line index, or the finished view of a
/// file that has no windows (an image, audio, a description). A caller that
/// pages through a large file keeps the `Prepared` and asks it for each
/// window, which then costs only the window itself.
///
/// Where a [`worker`] is installed the reading happens in a confined child
/// process, and a file that kills its reader (memory, CPU time, a crash) is
/// described with that reason.
pub fn prepare(
    input: &FileInput<'_>,
    options: &Options,
    cancel: &Cancel,
) -> Result<Prepared, ViewError> {
    worker::prepare(input, options, cancel).answer(
        || prepare_here(input, options, cancel),
        |reason| Ok(Prepared::whole(described_failure(input, &reason))),
    )
}

/// Turns a document into Markdown: DOCX, XLSX/XLS/ODS, PPTX, HTML, PDF,
/// plain text and Markdown. The type is decided by the file's bytes, as for
/// [`crate::view`]. Any other kind of file, or a file of these kinds that
/// cannot be read, is an error saying which and why, since a Markdown file
/// of a description would only mislead whoever searches it later.
///
/// Where a [`crate::worker`] is installed the reading happens in a confined
/// child process, and a file that kills its reader is an
/// [`ViewError::Unreadable`] that says why.
pub fn to_markdown(
    input: &FileInput<'_>,
    options: &Options,
    cancel: &Cancel,
) -> Result<Markdown, ViewError> {
    worker::to_markdown(input, options, cancel).answer(
        || markdown::to_markdown_here(input, options, cancel),
        |reason| {
            Err(ViewError::Unreadable {
                name: shown_name(input.name),
                reason,
            })
        },
    )
}

/// A file whose reader died, described by what its bytes are and why.
fn described_failure(input: &FileInput<'_>, reason: &str) -> View {
    let file = File {
        bytes: input.bytes,
        name: shown_name(input.name),
        size: input.bytes.len() as u64,
        declared: input.declared_type.filter(|d| !d.trim().is_empty()),
        link: input.link.filter(|l| !l.trim().is_empty()),
        name_type: name_type(input.name),
    };
    let (kind, mime, what) = identity(&file, &sniff::sniff(input.bytes));
    file.described(kind, &mime, &what, reason)
}

/// [`prepare`] in this process.
pub(crate) fn prepare_here(
    input: &FileInput<'_>,
    options: &Options,
    cancel: &Cancel,
) -> Result<Prepared, ViewError> {
    let size = input.bytes.len() as u64;
    if size > options.max_file_bytes {
        return Ok(Prepared::whole(describe_too_large(
            input.name,
            size,
            input.declared_type,
            input.link,
            options,
        )));
    }
    if cancel.is_cancelled() {
        return Err(ViewError::Cancelled);
    }
    let file = File {
        bytes: input.bytes,
        name: shown_name(input.name),
        size,
        declared: input.declared_type.filter(|d| !d.trim().is_empty()),
        link: input.link.filter(|l| !l.trim().is_empty()),
        name_type: name_type(input.name),
    };
    let sniffed = sniff::sniff(input.bytes);
    // The readers below lean on young third-party parsers (pdf_oxide,
    // calamine, the image decoders); a panic in one becomes a description
    // rather than taking the server down.
    if let Ok(result) = catch_unwind(AssertUnwindSafe(|| show(&file, &sniffed, options, cancel))) {
        result
    } else {
        let (kind, mime, what) = identity(&file, &sniffed);
        Ok(Prepared::whole(file.described(
            kind,
            &mime,
            &what,
            "its reader failed on it unexpectedly",
        )))
    }
}

/// `Prepared` is a file read once, ready to answer any window of it; see
/// [`prepare`].
#[derive(Debug, Clone)]
pub struct Prepared(Prep);

#[derive(Debug, Clone)]
enum Prep {
    /// A file without windows: the same view whatever the window.
    Whole(Box<View>),
    /// Text to cut windows from.
    Paged(Box<Paged>),
}

/// Text to cut windows from, and everything each window's answer repeats.
/// It crosses a worker's pipe as it is, but for its line index.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Paged {
    /// The record every window starts from (no window yet, the reader's
    /// notes).
    record: Record,
    /// What the header calls the text ("Word document, as Markdown").
    what: String,
    text: String,
    /// Where the lines of `text` start: never sent, rebuilt from `text`
    /// where a worker's answer is read.
    #[serde(skip)]
    index: text::LineIndex,
    /// The reader's notes, said in every header.
    notes: Vec<String>,
    /// The one line said when there is no text at all.
    empty: String,
    /// Blocks after the text (a PDF's own bytes).
    after: Vec<Block>,
}

impl Prepared {
    fn whole(view: View) -> Self {
        Self(Prep::Whole(Box::new(view)))
    }

    /// The view of one window: for paged text the header and numbered
    /// lines asked for, for anything else the whole view.
    pub fn view(&self, request: &WindowRequest, options: &Options) -> Result<View, ViewError> {
        let paged = match &self.0 {
            Prep::Whole(view) => return Ok(View::clone(view)),
            Prep::Paged(paged) => paged,
        };
        let window = text::window(&paged.text, &paged.index, request, options).map_err(
            |error| match error {
                text::WindowError::PastEnd {
                    start_line,
                    total_lines,
                } => ViewError::PastEnd {
                    name: paged.record.name.clone(),
                    start_line,
                    total_lines,
                },
                text::WindowError::Zero(field) => ViewError::BadWindow { field },
            },
        )?;
        let mut record = paged.record.clone();
        let mut block = if window.total_lines == 0 {
            paged.empty.clone()
        } else {
            text::header(&record.name, &paged.what, &window)
        };
        for note in &paged.notes {
            block.push(' ');
            block.push_str(note);
        }
        push_type_note(&mut block, &record);
        // A document longer than one window names where its sections start,
        // for a model that sees only the text.
        let whole = window.start_line <= 1 && window.next_start_line().is_none();
        if !whole && !record.outline.is_empty() {
            block.push(' ');
            block.push_str(&sections(&record.outline));
        }
        if !window.numbered.is_empty() {
            block.push('\n');
            block.push_str(&window.numbered);
        }
        record.window = Some(WindowRecord {
            start_line: window.start_line,
            end_line: window.end_line,
            total_lines: window.total_lines,
            next_start_line: window.next_start_line(),
        });
        record.notes = window
            .notes
            .into_iter()
            .chain(paged.notes.iter().cloned())
            .collect();
        let mut content = vec![Block::text(block)];
        content.extend(paged.after.iter().cloned());
        Ok(View {
            content,
            structured: record,
        })
    }

    /// About how much memory this holds, for callers that keep several
    /// within a byte budget.
    #[must_use]
    pub fn held_bytes(&self) -> u64 {
        let blocks = |blocks: &[Block]| -> u64 {
            blocks
                .iter()
                .map(|b| match b {
                    Block::Text { text } => text.len() as u64,
                    Block::Image { data, .. } | Block::Audio { data, .. } => data.len() as u64,
                    Block::Resource { resource } => resource.blob.len() as u64,
                })
                .sum()
        };
        match &self.0 {
            Prep::Whole(view) => blocks(&view.content),
            Prep::Paged(paged) => {
                let outline: u64 = paged
                    .record
                    .outline
                    .iter()
                    .map(|h| h.text.len() as u64 + 32)
                    .sum();
                paged.text.len() as u64 + paged.index.held_bytes() + blocks(&paged.after) + outline
            }
        }
    }

    /// Adds a block after every window's text (a PDF's own bytes), and says
    /// so in the record.
    fn attach(&mut self, block: Block) {
        match &mut self.0 {
            Prep::Whole(view) => {
                view.content.push(block);
                view.structured.shown = Shown::Resource;
            }
            Prep::Paged(paged) => {
                paged.after.push(block);
                paged.record.shown = Shown::Resource;
            }
        }
    }
}

/// `HEADER_SECTIONS` is the most headings a window's header names.
const HEADER_SECTIONS: usize = 20;

/// The sentence naming the lines a document's sections start at: its
/// headings of the top levels it has, the first [`HEADER_SECTIONS`] of them.
fn sections(outline: &[Heading]) -> String {
    use std::fmt::Write as _;

    let top = outline.iter().map(|h| h.level).min().unwrap_or(1);
    // The top two levels, unless they alone are too many to name.
    let levels = if outline.iter().filter(|h| h.level <= top + 1).count() <= HEADER_SECTIONS {
        top + 1
    } else {
        top
    };
    let chosen: Vec<&Heading> = outline.iter().filter(|h| h.level <= levels).collect();
    let mut out = String::from("Sections start at:");
    for (index, heading) in chosen.iter().take(HEADER_SECTIONS).enumerate() {
        let text: String = heading.text.chars().take(60).collect();
        let _ = write!(
            out,
            "{} line {} ({text})",
            if index == 0 { "" } else { ";" },
            heading.line
        );
    }
    if chosen.len() > HEADER_SECTIONS {
        let _ = write!(out, "; {} more", chosen.len() - HEADER_SECTIONS);
    }
    out.push_str(". Pass a line as start_line to read that section.");
    out
}

/// Describes a file too big to read, from its name, size and declared type
/// alone, without reading any of it.
#[must_use]
pub fn describe_too_large(
    name: &str,
    size: u64,
    declared_type: Option<&str>,
    link: Option<&str>,
    options: &Options,
) -> View {
    let mime = declared_type
        .filter(|d| !d.trim().is_empty())
        .map(essence)
        .or_else(|| name_type(name))
        .unwrap_or_else(|| "application/octet-stream".to_owned());
    let kind = kind_of_mime(&mime);
    let what = what_of_kind(kind);
    let reason = format!(
        "it is larger than the {} that is read of any file",
        human_size(options.max_file_bytes)
    );
    let name = shown_name(name);
    let text = described(&name, what, &mime, size, &reason, link);
    View {
        content: vec![Block::text(text)],
        structured: Record {
            name,
            kind,
            mime_type: mime,
            size_bytes: size,
            shown: Shown::Described,
            type_note: None,
            encoding: None,
            window: None,
            image: None,
            reason: Some(reason),
            link: link.map(str::to_owned),
            notes: Vec::new(),
            outline: Vec::new(),
        },
    }
}

/// `TypeFound` is what [`sniff_type`] tells of a file: the same kind, media
/// type and type note a [`view`] of it would carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeFound {
    /// What the file is, by its bytes.
    pub kind: Kind,
    /// Its media type, by its bytes (the name only picks which text type).
    pub mime_type: String,
    /// A short description ("text", "Word document", "PNG image").
    pub what: String,
    /// Set when the name's type disagrees with the bytes, e.g.
    /// "application/pdf by its name, but its bytes are text/plain."
    pub type_note: Option<String>,
}

/// Tells what a file is from its bytes and name, the way [`view`] decides
/// it, without extracting anything: callers that only need the type (the
/// question before a post with files names each file's type and any
/// disagreement with its name) get the same answer a view would give, from
/// one set of rules.
#[must_use]
pub fn sniff_type(bytes: &[u8], name: &str) -> TypeFound {
    let file = File {
        bytes,
        name: shown_name(name),
        size: bytes.len() as u64,
        declared: None,
        link: None,
        name_type: name_type(name),
    };
    let sniffed = sniff::sniff(bytes);
    let (kind, mime, what) = if sniffed == Sniffed::Zip {
        let zip_kind = catch_unwind(|| office::zip_kind(bytes, &Options::default()))
            .unwrap_or(office::ZipKind::Plain);
        let (kind, mime, what) = zip_identity(zip_kind);
        (kind, mime.to_owned(), what.to_owned())
    } else {
        identity(&file, &sniffed)
    };
    TypeFound {
        kind,
        type_note: type_note(file.name_type.as_deref(), None, &mime),
        mime_type: mime,
        what,
    }
}

/// The media type a name's extension suggests.
fn name_type(name: &str) -> Option<String> {
    mime_guess::from_path(name)
        .first()
        .map(|m| m.essence_str().to_owned())
}

/// The file being shown, with its name made safe to print.
struct File<'a> {
    bytes: &'a [u8],
    name: String,
    size: u64,
    declared: Option<&'a str>,
    link: Option<&'a str>,
    /// The type the name's extension suggests.
    name_type: Option<String>,
}

impl File<'_> {
    fn record(&self, kind: Kind, mime: &str, shown: Shown) -> Record {
        Record {
            name: self.name.clone(),
            kind,
            mime_type: mime.to_owned(),
            size_bytes: self.size,
            shown,
            type_note: type_note(self.name_type.as_deref(), self.declared, mime),
            encoding: None,
            window: None,
            image: None,
            reason: None,
            link: self.link.map(str::to_owned),
            notes: Vec::new(),
            outline: Vec::new(),
        }
    }

    /// A view that only describes the file, with the reason.
    fn described(&self, kind: Kind, mime: &str, what: &str, reason: &str) -> View {
        let mut record = self.record(kind, mime, Shown::Described);
        let mut text = described(&self.name, what, mime, self.size, reason, self.link);
        push_type_note(&mut text, &record);
        record.reason = Some(reason.to_owned());
        View {
            content: vec![Block::text(text)],
            structured: record,
        }
    }

    /// Text (decoded, extracted or listed) ready to be cut into windows,
    /// each with a header that names the file, what it is and how to page.
    fn paged(&self, kind: Kind, mime: &str, what: &str, extracted: Extracted) -> Prepared {
        let record = self.record(kind, mime, Shown::Text);
        let index = text::LineIndex::new(&extracted.text);
        Prepared(Prep::Paged(Box::new(Paged {
            empty: format!(
                "{}: {what}, {}; it has no text.",
                self.name,
                human_size(self.size)
            ),
            record,
            what: what.to_owned(),
            text: extracted.text,
            index,
            notes: extracted.notes,
            after: Vec::new(),
        })))
    }

    /// A document read into its Markdown, ready to be cut into windows of
    /// numbered Markdown lines, with its outline in the record.
    fn paged_markdown(&self, kind: Kind, mime: &str, what: &str, document: Markdown) -> Prepared {
        self.paged_outlined(kind, mime, &format!("{what}, as Markdown"), document)
    }

    /// An image whose pixels hold text: the text read by OCR in numbered
    /// windows ("text read from the image (OCR)"), the image itself after
    /// every window.
    fn paged_picture_text(
        &self,
        mime: &str,
        what: &str,
        picture: picture::Picture,
        mut read: Markdown,
        mut ocr_notes: Vec<String>,
        image: Block,
    ) -> Prepared {
        ocr_notes.append(&mut read.notes);
        read.notes = ocr_notes;
        let mut prepared = self.paged_outlined(
            Kind::Image,
            mime,
            &format!("{what}, text read from the image (OCR)"),
            read,
        );
        if let Prep::Paged(paged) = &mut prepared.0 {
            paged
                .notes
                .push(format!("The image follows the text: {}", picture.note));
            paged.record.shown = Shown::Image;
            paged.record.image = Some(picture.record);
            paged.after.push(image);
        }
        prepared
    }

    /// Markdown text as [`File::paged`] pages it, described as `what`,
    /// with its outline in the record (and a note after the document's own
    /// when the outline was cut).
    fn paged_outlined(&self, kind: Kind, mime: &str, what: &str, document: Markdown) -> Prepared {
        let (outline, note) = markdown::outline(&document.text);
        let mut notes = document.notes;
        notes.extend(note);
        let mut prepared = self.paged(
            kind,
            mime,
            what,
            Extracted {
                text: document.text,
                notes,
            },
        );
        if let Prep::Paged(paged) = &mut prepared.0 {
            paged.record.outline = outline;
        }
        prepared
    }

    /// The URI an embedded resource carries: the caller's link, or a
    /// `file:` URI of the bare name.
    fn resource_uri(&self) -> String {
        self.link.map_or_else(
            || {
                let encoded: String = self
                    .name
                    .bytes()
                    .map(|b| {
                        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                            (b as char).to_string()
                        } else {
                            format!("%{b:02X}")
                        }
                    })
                    .collect();
                format!("file:///{encoded}")
            },
            str::to_owned,
        )
    }
}

fn push_type_note(text: &mut String, record: &Record) {
    if let Some(note) = &record.type_note {
        text.push_str(" Its type: ");
        text.push_str(note);
    }
}

/// Shows the file by what its bytes are.
fn show(
    file: &File<'_>,
    sniffed: &Sniffed,
    options: &Options,
    cancel: &Cancel,
) -> Result<Prepared, ViewError> {
    let ((kind, mime, what), outcome) = match sniffed {
        Sniffed::Text(encoding) => return Ok(show_text(file, *encoding, options)),
        Sniffed::Pdf => match nesting::check_pdf(file.bytes, nesting::PDF_DEPTH) {
            Ok(()) => return show_pdf(file, options, cancel),
            Err(failure) => (identity(file, sniffed), Err(failure)),
        },
        Sniffed::Image(format) => return show_image(file, *format, options, cancel),
        Sniffed::Audio { mime, what } | Sniffed::Video { mime, what } => {
            return Ok(Prepared::whole(show_media(
                file, sniffed, mime, what, options,
            )));
        }
        Sniffed::Zip => return show_zip(file, options, cancel),
        Sniffed::Tar(compression) => (
            identity(file, sniffed),
            archive::list_tar(file.bytes, *compression, options, cancel),
        ),
        Sniffed::Ole => {
            let outcome =
                markdown::sheets::convert(file.bytes, office::WorkbookFormat::Xls, options, cancel);
            match outcome {
                Ok(markdown) => {
                    return Ok(file.paged_markdown(
                        Kind::Spreadsheet,
                        "application/vnd.ms-excel",
                        "legacy Excel workbook",
                        markdown,
                    ));
                }
                Err(failure) => (identity(file, sniffed), Err(failure)),
            }
        }
        Sniffed::Compressed(_) | Sniffed::OtherImage { .. } | Sniffed::Other { .. } => (
            identity(file, sniffed),
            Err(Failure::unreadable(no_reader_reason(sniffed))),
        ),
    };
    match outcome {
        // Only a listing reaches here: every document returned above.
        Ok(listed) => Ok(file.paged(kind, &mime, &format!("{what}, listed"), listed)),
        Err(Failure::Cancelled) => Err(ViewError::Cancelled),
        Err(Failure::Unreadable(reason)) => {
            Ok(Prepared::whole(file.described(kind, &mime, &what, &reason)))
        }
    }
}

fn show_text(file: &File<'_>, encoding: Encoding, options: &Options) -> Prepared {
    let decoded = text::decode(file.bytes, encoding);
    let mime = text_mime(file);
    // A page is shown as its Markdown; one too big to parse into a tree
    // within the text cap, or that its HTML reader refuses (nested too
    // deep), as the text it is, saying why.
    let mut source_note = None;
    if markdown::is_html_page(&file.name, file.declared, &decoded) {
        let outcome = if decoded.len() > options.office_text_bytes {
            Err(Failure::unreadable(format!(
                "it is larger than the {} a page is read into Markdown from",
                human_size(options.office_text_bytes as u64)
            )))
        } else {
            markdown::html::convert(&decoded, options)
        };
        match outcome {
            Ok(mut page) => {
                // The page's `<title>` is not in its Markdown; the header
                // says it.
                if let Some(title) = page.title.as_deref().map(str::trim)
                    && !title.is_empty()
                    && !page.text.contains(title)
                {
                    let title: String = title.chars().take(200).collect();
                    page.notes.insert(0, format!("Its title is \"{title}\"."));
                }
                let mut prepared = file.paged_markdown(Kind::Text, "text/html", "HTML page", page);
                if let Prep::Paged(paged) = &mut prepared.0 {
                    paged.record.encoding = Some(text::encoding_label(encoding).to_owned());
                }
                return prepared;
            }
            Err(Failure::Unreadable(reason)) => {
                source_note = Some(format!(
                    "It is shown as its HTML source, not as Markdown, because {reason}."
                ));
            }
            // The HTML reader takes no cancel flag.
            Err(Failure::Cancelled) => {}
        }
    }
    let markdown_file = mime == "text/markdown";
    let extracted = Extracted {
        text: decoded.into_owned(),
        notes: source_note.into_iter().collect(),
    };
    let mut prepared = file.paged(
        Kind::Text,
        &mime,
        text::encoding_phrase(encoding),
        extracted,
    );
    if let Prep::Paged(paged) = &mut prepared.0 {
        paged.record.encoding = Some(text::encoding_label(encoding).to_owned());
        if file.size == 0 {
            paged.empty = format!("{}: an empty file (0 bytes).", file.name);
        }
        if markdown_file {
            let (outline, note) = markdown::outline(&paged.text);
            paged.record.outline = outline;
            paged.notes.extend(note);
        }
    }
    prepared
}

/// An HTML page as Markdown, read by the file view's HTML reader into the
/// document model and written by its Markdown renderer (headings, lists,
/// pipe tables, code blocks, quotes, emphasis, links and images), with
/// every limit of `options` (nesting depth, the Markdown's size). Each
/// link's and image's target as the page writes it is passed to `links`,
/// which returns the target to show instead (resolved against the page's
/// URL, or pointed at a kept copy) or `None` to keep it; inline `data:`
/// URLs are cut to `data:…` before that.
///
/// # Errors
///
/// A sentence saying why the page was not read (nested deeper than
/// `options.xml_depth`).
pub fn html_to_markdown(
    html: &str,
    links: &(dyn Fn(&str) -> Option<String> + Sync),
    options: &Options,
) -> Result<Markdown, String> {
    markdown::html::convert_with(html, options, links).map_err(Failure::into_reason)
}

/// Checks, by its tags alone and before any parser runs, that an HTML
/// page nests its elements no deeper than `options.xml_depth`: the look
/// [`html_to_markdown`] takes first. A caller that parses HTML itself takes
/// it too, since an HTML5 parser's cost grows with the depth.
///
/// # Errors
///
/// A sentence saying why the page is refused.
pub fn html_nesting_within(html: &str, options: &Options) -> Result<(), String> {
    markdown::html::check_nesting(html, options.xml_depth).map_err(Failure::into_reason)
}

/// The media type of text: the name's or the declaration's when it is a
/// text type (text/csv, application/json…), else text/plain.
fn text_mime(file: &File<'_>) -> String {
    file.name_type
        .iter()
        .map(String::as_str)
        .chain(file.declared.map(essence).as_deref())
        .find(|m| is_text_media_type(m))
        .map_or_else(|| "text/plain".to_owned(), essence)
}

/// A zip is an Office package when its own parts say so, read into its
/// Markdown by the one reader of its format; else an archive, listed.
fn show_zip(file: &File<'_>, options: &Options, cancel: &Cancel) -> Result<Prepared, ViewError> {
    use office::{WorkbookFormat, ZipKind};
    let zip_kind = office::zip_kind(file.bytes, options);
    let (kind, mime, what) = zip_identity(zip_kind);
    let outcome = match zip_kind {
        ZipKind::Docx => markdown::docx::convert(file.bytes, options, cancel),
        ZipKind::Pptx => markdown::pptx::convert(file.bytes, options, cancel),
        ZipKind::Xlsx => {
            markdown::sheets::convert(file.bytes, WorkbookFormat::Xlsx, options, cancel)
        }
        ZipKind::Ods => markdown::sheets::convert(file.bytes, WorkbookFormat::Ods, options, cancel),
        ZipKind::Plain => {
            return match archive::list_zip(file.bytes, options, cancel) {
                Ok(listed) => Ok(file.paged(kind, mime, &format!("{what}, listed"), listed)),
                Err(Failure::Cancelled) => Err(ViewError::Cancelled),
                Err(Failure::Unreadable(reason)) => {
                    Ok(Prepared::whole(file.described(kind, mime, what, &reason)))
                }
            };
        }
    };
    match outcome {
        Ok(markdown) => Ok(file.paged_markdown(kind, mime, what, markdown)),
        Err(Failure::Cancelled) => Err(ViewError::Cancelled),
        Err(Failure::Unreadable(reason)) => {
            Ok(Prepared::whole(file.described(kind, mime, what, &reason)))
        }
    }
}

/// Kind, media type and a short description of each kind of zip.
fn zip_identity(zip_kind: office::ZipKind) -> (Kind, &'static str, &'static str) {
    use office::ZipKind;
    match zip_kind {
        ZipKind::Docx => (
            Kind::Document,
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            "Word document",
        ),
        ZipKind::Pptx => (
            Kind::Presentation,
            "application/vnd.openxmlformats-officedocument.presentationml.presentation",
            "PowerPoint presentation",
        ),
        ZipKind::Xlsx => (
            Kind::Spreadsheet,
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            "Excel workbook",
        ),
        ZipKind::Ods => (
            Kind::Spreadsheet,
            "application/vnd.oasis.opendocument.spreadsheet",
            "OpenDocument spreadsheet",
        ),
        ZipKind::Plain => (Kind::Archive, "application/zip", "zip archive"),
    }
}

fn show_pdf(file: &File<'_>, options: &Options, cancel: &Cancel) -> Result<Prepared, ViewError> {
    const MIME: &str = "application/pdf";
    let attach = file.bytes.len() <= options.media_bytes;
    let attached = |mut prepared: Prepared| {
        if attach {
            prepared.attach(Block::resource(file.resource_uri(), file.bytes, MIME));
        }
        prepared
    };
    match markdown::pdf_document(file.bytes, options, cancel) {
        Ok((mut document, pages)) => {
            let what = match pages {
                Some(1) => "PDF of 1 page".to_owned(),
                Some(n) => format!("PDF of {} pages", count(n as u64)),
                None => "PDF".to_owned(),
            };
            document.notes.push(if attach {
                "The PDF itself is attached as well.".to_owned()
            } else {
                format!(
                    "The PDF itself is not attached: it is larger than the {} returned as a file.",
                    human_size(options.media_bytes as u64)
                )
            });
            Ok(attached(file.paged_markdown(
                Kind::Pdf,
                MIME,
                &what,
                document,
            )))
        }
        Err(Failure::Cancelled) => Err(ViewError::Cancelled),
        Err(Failure::Unreadable(reason)) if attach => {
            let mut text = format!(
                "{}: PDF ({MIME}), {}. Its text could not be read because {reason}; the PDF itself is attached, \
                 and a client that cannot show PDFs has only this description.",
                file.name,
                human_size(file.size)
            );
            describe::push_link(&mut text, file.link);
            let mut record = file.record(Kind::Pdf, MIME, Shown::Resource);
            push_type_note(&mut text, &record);
            record.reason = Some(reason);
            Ok(attached(Prepared::whole(View {
                content: vec![Block::text(text)],
                structured: record,
            })))
        }
        Err(Failure::Unreadable(reason)) => Ok(Prepared::whole(file.described(
            Kind::Pdf,
            MIME,
            "PDF",
            &reason,
        ))),
    }
}

fn show_image(
    file: &File<'_>,
    format: picture::Format,
    options: &Options,
    cancel: &Cancel,
) -> Result<Prepared, ViewError> {
    let (mime, what) = image_identity(format);
    match picture::picture(file.bytes, format, &file.name, options, cancel) {
        Ok(picture) => {
            let block = Block::image(&picture.bytes, &picture.record.mime_type);
            let (read, ocr_notes) = image_text(file.bytes, mime, options, cancel)?;
            if let Some(read) = read {
                return Ok(file.paged_picture_text(mime, what, picture, read, ocr_notes, block));
            }
            let mut record = file.record(Kind::Image, mime, Shown::Image);
            let mut text = picture.note;
            for note in &ocr_notes {
                text.push(' ');
                text.push_str(note);
            }
            push_type_note(&mut text, &record);
            record.image = Some(picture.record);
            record.notes = ocr_notes;
            Ok(Prepared::whole(View {
                content: vec![Block::text(text), block],
                structured: record,
            }))
        }
        Err(Failure::Cancelled) => Err(ViewError::Cancelled),
        Err(Failure::Unreadable(reason)) => Ok(Prepared::whole(file.described(
            Kind::Image,
            mime,
            what,
            &reason,
        ))),
    }
}

/// The text in an image file's pixels, read by OCR, and the notes on it.
fn image_text(
    bytes: &[u8],
    mime: &str,
    options: &Options,
    cancel: &Cancel,
) -> Result<(Option<Markdown>, Vec<String>), ViewError> {
    let Some(format) = image::ImageFormat::from_mime_type(mime) else {
        return Ok((None, Vec::new()));
    };
    match ocr::picture_text(bytes, format, options, cancel) {
        Ok(read) => Ok(read),
        Err(Failure::Cancelled) => Err(ViewError::Cancelled),
        Err(Failure::Unreadable(reason)) => Ok((None, vec![reason])),
    }
}

fn show_media(
    file: &File<'_>,
    sniffed: &Sniffed,
    mime: &str,
    what: &str,
    options: &Options,
) -> View {
    let audio = matches!(sniffed, Sniffed::Audio { .. });
    let kind = if audio { Kind::Audio } else { Kind::Video };
    if file.bytes.len() > options.media_bytes {
        let reason = format!(
            "it is larger than the {} returned as {}",
            human_size(options.media_bytes as u64),
            if audio { "audio" } else { "a video file" }
        );
        return file.described(kind, mime, what, &reason);
    }
    let (shown, block, how) = if audio {
        (
            Shown::Audio,
            Block::audio(file.bytes, mime),
            "It is attached as audio; a client that cannot play audio has only this description.",
        )
    } else {
        (
            Shown::Resource,
            Block::resource(file.resource_uri(), file.bytes, mime),
            "It is attached as an embedded video file; a client that cannot play video has only this description.",
        )
    };
    let record = file.record(kind, mime, shown);
    let mut text = format!(
        "{}: {what} ({mime}), {}. {how}",
        file.name,
        human_size(file.size)
    );
    describe::push_link(&mut text, file.link);
    push_type_note(&mut text, &record);
    View {
        content: vec![Block::text(text), block],
        structured: record,
    }
}

/// Kind, media type and a short description of what the bytes are.
fn identity(file: &File<'_>, sniffed: &Sniffed) -> (Kind, String, String) {
    let (kind, mime, what): (Kind, &str, String) = match sniffed {
        Sniffed::Text(_) => return (Kind::Text, text_mime(file), "text".to_owned()),
        Sniffed::Pdf => (Kind::Pdf, "application/pdf", "PDF".to_owned()),
        Sniffed::Image(format) => {
            let (mime, what) = image_identity(*format);
            (Kind::Image, mime, what.to_owned())
        }
        Sniffed::OtherImage { mime, what } => (Kind::Image, mime, (*what).to_owned()),
        Sniffed::Zip => (Kind::Archive, "application/zip", "zip archive".to_owned()),
        Sniffed::Tar(compression) => {
            let (mime, what) = tar_identity(*compression);
            (Kind::Archive, mime, what.to_owned())
        }
        Sniffed::Compressed(compression) => {
            let (mime, what) = compressed_identity(*compression);
            (Kind::Other, mime, what.to_owned())
        }
        Sniffed::Ole => return ole_identity(file),
        Sniffed::Audio { mime, what } => (Kind::Audio, mime, (*what).to_owned()),
        Sniffed::Video { mime, what } => (Kind::Video, mime, (*what).to_owned()),
        Sniffed::Other { mime, what } => (Kind::Other, mime.as_str(), what.clone()),
    };
    (kind, mime.to_owned(), what)
}

/// Legacy binary Office files are told apart by their name, since only the
/// spreadsheet kind is read.
fn ole_identity(file: &File<'_>) -> (Kind, String, String) {
    let (kind, mime, what) = match file.name_type.as_deref() {
        Some("application/msword") => {
            (Kind::Document, "application/msword", "legacy Word document")
        }
        Some("application/vnd.ms-powerpoint") => (
            Kind::Presentation,
            "application/vnd.ms-powerpoint",
            "legacy PowerPoint presentation",
        ),
        Some("application/vnd.ms-excel") => (
            Kind::Spreadsheet,
            "application/vnd.ms-excel",
            "legacy Excel workbook",
        ),
        Some("application/vnd.ms-outlook") => {
            (Kind::Other, "application/vnd.ms-outlook", "Outlook message")
        }
        _ => (
            Kind::Other,
            "application/x-ole-storage",
            "OLE compound document",
        ),
    };
    (kind, mime.to_owned(), what.to_owned())
}

fn image_identity(format: picture::Format) -> (&'static str, &'static str) {
    match format {
        picture::Format::Png => ("image/png", "PNG image"),
        picture::Format::Jpeg => ("image/jpeg", "JPEG image"),
        picture::Format::Gif => ("image/gif", "GIF image"),
        picture::Format::Webp => ("image/webp", "WebP image"),
        picture::Format::Bmp => ("image/bmp", "BMP image"),
        picture::Format::Tiff => ("image/tiff", "TIFF image"),
    }
}

fn tar_identity(compression: archive::Compression) -> (&'static str, &'static str) {
    use archive::Compression as C;
    match compression {
        C::None => ("application/x-tar", "tar archive"),
        C::Gzip => (
            "application/x-compressed-tar",
            "gzip-compressed tar archive",
        ),
        C::Bzip2 => (
            "application/x-bzip-compressed-tar",
            "bzip2-compressed tar archive",
        ),
        C::Xz => (
            "application/x-xz-compressed-tar",
            "xz-compressed tar archive",
        ),
        C::Zstd => (
            "application/x-zstd-compressed-tar",
            "zstd-compressed tar archive",
        ),
    }
}

fn compressed_identity(compression: archive::Compression) -> (&'static str, &'static str) {
    use archive::Compression as C;
    match compression {
        C::None => ("application/octet-stream", "binary data"),
        C::Gzip => ("application/gzip", "gzip-compressed file"),
        C::Bzip2 => ("application/x-bzip2", "bzip2-compressed file"),
        C::Xz => ("application/x-xz", "xz-compressed file"),
        C::Zstd => ("application/zstd", "zstd-compressed file"),
    }
}

/// Why a file the view has no reader for is only described.
fn no_reader_reason(sniffed: &Sniffed) -> String {
    match sniffed {
        Sniffed::Compressed(_) => {
            "it is a single compressed file, not an archive, and porter lists archives but does not decompress files"
                .to_owned()
        }
        Sniffed::OtherImage { what, .. } => format!("porter cannot decode a {what}"),
        Sniffed::Other { what, .. } if what == "an empty file" => "it is empty".to_owned(),
        Sniffed::Other { what, .. } => format!("its bytes are not text, and porter has no reader for {what}"),
        _ => "porter has no reader for it".to_owned(),
    }
}

fn kind_of_mime(mime: &str) -> Kind {
    let mime = essence(mime);
    match mime.split('/').next().unwrap_or_default() {
        "image" => Kind::Image,
        "audio" => Kind::Audio,
        "video" => Kind::Video,
        "text" => Kind::Text,
        _ if mime == "application/pdf" => Kind::Pdf,
        _ if mime.contains("wordprocessing") || mime == "application/msword" => Kind::Document,
        _ if mime.contains("spreadsheet") || mime.contains("excel") => Kind::Spreadsheet,
        _ if mime.contains("presentation") || mime.contains("powerpoint") => Kind::Presentation,
        _ if mime.contains("zip") || mime.contains("tar") => Kind::Archive,
        _ if is_text_media_type(&mime) => Kind::Text,
        _ => Kind::Other,
    }
}

fn what_of_kind(kind: Kind) -> &'static str {
    match kind {
        Kind::Text => "text",
        Kind::Document => "document",
        Kind::Spreadsheet => "spreadsheet",
        Kind::Presentation => "presentation",
        Kind::Pdf => "PDF",
        Kind::Archive => "archive",
        Kind::Image => "image",
        Kind::Audio => "audio",
        Kind::Video => "video",
        Kind::Other => "file",
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    fn show(bytes: &[u8], name: &str, options: &Options) -> View {
        show_input(&FileInput::new(bytes, name), options)
    }

    fn show_input(input: &FileInput, options: &Options) -> View {
        view(input, &WindowRequest::default(), options, &Cancel::new())
            .expect("every file gets a view")
    }

    fn first_text(view: &View) -> &str {
        match &view.content[0] {
            Block::Text { text } => text,
            other => panic!("the first block is text, not {other:?}"),
        }
    }

    /// A WAV header followed by `len - 12` bytes of silence.
    fn wav(len: usize) -> Vec<u8> {
        let mut bytes = b"RIFF\0\0\0\0WAVE".to_vec();
        bytes.resize(len, 0);
        bytes
    }

    #[test]
    fn the_file_cap_is_held_at_its_edge() {
        let options = Options {
            max_file_bytes: 10,
            ..Options::default()
        };
        assert_eq!(
            show(b"123456789\n", "ten.txt", &options).structured.shown,
            Shown::Text
        );
        let over = show(b"123456789\n!", "eleven.txt", &options);
        assert_eq!(over.structured.shown, Shown::Described);
        assert!(first_text(&over).contains("larger than the 10 bytes that is read of any file"));
    }

    #[test]
    fn audio_video_and_pdf_travel_as_themselves_up_to_the_media_limit_and_no_further() {
        let options = Options {
            media_bytes: 64,
            ..Options::default()
        };
        let mut mp4 = b"\0\0\0\x18ftypisom".to_vec();
        mp4.resize(64, 0);
        let pdf = b"%PDF-1.4\nnot really a pdf\n".to_vec();
        let cases: [(&str, Vec<u8>, Shown, &str); 3] = [
            ("a.wav", wav(64), Shown::Audio, "audio"),
            ("a.mp4", mp4.clone(), Shown::Resource, "resource"),
            ("a.pdf", pdf.clone(), Shown::Resource, "resource"),
        ];
        for (name, bytes, shown, block) in cases {
            let at_limit = show(&bytes, name, &options);
            assert_eq!(at_limit.structured.shown, shown, "{name}");
            assert_eq!(
                at_limit.content.last().map(Block::kind),
                Some(block),
                "{name}"
            );
            let mut bigger = bytes;
            bigger.resize(65, 0);
            let over = show(&bigger, name, &options);
            assert_eq!(over.structured.shown, Shown::Described, "{name}");
            assert_eq!(over.content.len(), 1, "{name}");
        }
    }

    #[test]
    fn a_small_video_is_an_embedded_resource_named_by_the_link() {
        let mut mp4 = b"\0\0\0\x18ftypisom".to_vec();
        mp4.resize(100, 0);
        let input = FileInput {
            link: Some("https://chat.example.invalid/pl/1"),
            ..FileInput::new(&mp4, "clip.mp4")
        };
        let shown = show_input(&input, &Options::default());
        let json = serde_json::to_value(&shown.content).expect("blocks serialize");
        assert_eq!(json[1]["type"], "resource");
        assert_eq!(json[1]["resource"]["mimeType"], "video/mp4");
        assert_eq!(
            json[1]["resource"]["uri"],
            "https://chat.example.invalid/pl/1"
        );
        assert!(
            first_text(&shown)
                .contains("a client that cannot play video has only this description")
        );
    }

    #[test]
    fn a_prepared_file_answers_every_window_as_a_fresh_view_would() {
        let text = text::numbered_lines("line ", 1200);
        let input = FileInput::new(text.as_bytes(), "log.txt");
        let options = Options::default();
        let prepared = prepare(&input, &options, &Cancel::new()).expect("text prepares");
        for start_line in [None, Some(501), Some(1200)] {
            let request = WindowRequest {
                start_line,
                line_count: None,
            };
            let fresh = view(&input, &request, &options, &Cancel::new()).expect("a view");
            assert_eq!(
                prepared.view(&request, &options),
                Ok(fresh),
                "{start_line:?}"
            );
        }
        let past = WindowRequest {
            start_line: Some(1201),
            line_count: None,
        };
        assert!(matches!(
            prepared.view(&past, &options),
            Err(ViewError::PastEnd {
                total_lines: 1200,
                ..
            })
        ));
        assert!(prepared.held_bytes() >= text.len() as u64);
    }

    #[test]
    fn an_empty_file_is_said_in_one_line() {
        let shown = show(b"", "empty.txt", &Options::default());
        assert_eq!(first_text(&shown), "empty.txt: an empty file (0 bytes).");
        assert_eq!(shown.structured.window.map(|w| w.total_lines), Some(0));
    }

    #[test]
    fn the_declared_type_is_checked_against_the_bytes() {
        let input = FileInput {
            declared_type: Some("image/png"),
            ..FileInput::new(b"plain words\n", "words")
        };
        let shown = show_input(&input, &Options::default());
        assert_eq!(
            shown.structured.type_note.as_deref(),
            Some("image/png as declared, but its bytes are text/plain.")
        );
        assert!(first_text(&shown).contains("Its type: image/png as declared"));
    }

    #[test]
    fn a_cancelled_request_stops_before_anything_is_read() {
        let cancel = Cancel::new();
        cancel.cancel();
        let result = view(
            &FileInput::new(b"text\n", "a.txt"),
            &WindowRequest::default(),
            &Options::default(),
            &cancel,
        );
        assert_eq!(result, Err(ViewError::Cancelled));
    }

    #[test]
    fn unknown_binary_data_is_described_with_the_link_for_a_person() {
        let input = FileInput {
            link: Some("https://chat.example.invalid/pl/9"),
            ..FileInput::new(&[0x00, 0x9D, 0x01, 0x02], "blob.bin")
        };
        let shown = show_input(&input, &Options::default());
        assert_eq!(
            first_text(&shown),
            "blob.bin: binary data (application/octet-stream), 4 bytes. It is not shown because its \
             bytes are not text, and porter has no reader for binary data. A person can open it at \
             https://chat.example.invalid/pl/9."
        );
    }

    fn docx_bytes() -> Vec<u8> {
        docx_with_body("<w:p><w:r><w:t>hi</w:t></w:r></w:p>")
    }

    /// A Word document whose body is `body` (WordprocessingML).
    fn docx_with_body(body: &str) -> Vec<u8> {
        let document = format!(
            r#"<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{body}</w:body></w:document>"#
        );
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let parts = [
            (
                "[Content_Types].xml",
                r#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>"#,
            ),
            (
                "_rels/.rels",
                r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>"#,
            ),
            ("word/document.xml", document.as_str()),
        ];
        for (name, text) in parts {
            zip.start_file(name, zip::write::SimpleFileOptions::default())
                .expect("a zip entry");
            zip.write_all(text.as_bytes()).expect("zip bytes");
        }
        zip.finish().expect("a zip").into_inner()
    }

    #[test]
    fn sniff_type_names_the_type_by_bytes_and_notes_a_disagreeing_name() {
        let docx = docx_bytes();
        let cases: [(&[u8], &str, &str, Option<&str>); 5] = [
            (b"# Notes\n", "notes.md", "text/markdown", None),
            (b"plain words\n", "notes", "text/plain", None),
            (
                b"plain words\n",
                "report.pdf",
                "text/plain",
                Some("application/pdf by its name, but its bytes are text/plain."),
            ),
            (
                &docx,
                "letter.docx",
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                None,
            ),
            (
                &docx,
                "letter.txt",
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                Some(
                    "text/plain by its name, but its bytes are application/vnd.openxmlformats-officedocument.wordprocessingml.document.",
                ),
            ),
        ];
        for (bytes, name, mime, note) in cases {
            let found = sniff_type(bytes, name);
            assert_eq!(found.mime_type, mime, "{name}");
            assert_eq!(found.type_note.as_deref(), note, "{name}");
        }
        assert_eq!(sniff_type(&docx, "letter.docx").kind, Kind::Document);
    }

    /// The numbered lines of a window's text, by their numbers.
    fn numbered(view: &View) -> Vec<(u64, String)> {
        first_text(view)
            .lines()
            .filter_map(|line| {
                let (number, text) = line.split_once('\t')?;
                Some((number.trim().parse().ok()?, text.to_owned()))
            })
            .collect()
    }

    #[test]
    fn a_document_is_shown_as_numbered_markdown_and_its_outline_points_at_its_heading_lines() {
        let paragraph = |text: &str| format!("<w:p><w:r><w:t>{text}</w:t></w:r></w:p>");
        let heading = |level: u8, text: &str| {
            format!(
                "<w:p><w:pPr><w:outlineLvl w:val=\"{}\"/></w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>",
                level - 1
            )
        };
        let cell = |text: &str| format!("<w:tc>{}</w:tc>", paragraph(text));
        let body = [
            heading(1, "Quarterly results"),
            paragraph("Sales rose."),
            paragraph("# not a heading"),
            format!(
                "<w:tbl><w:tr>{}{}</w:tr><w:tr>{}{}</w:tr></w:tbl>",
                cell("Fruit"),
                cell("Count"),
                cell("Apple"),
                cell("3")
            ),
            heading(2, "Details &amp; *notes*"),
            paragraph("The end."),
        ]
        .concat();
        let bytes = docx_with_body(&body);
        let shown = show(&bytes, "report.docx", &Options::default());
        assert_eq!(shown.structured.shown, Shown::Text);
        assert!(
            first_text(&shown).starts_with("report.docx: Word document, as Markdown,"),
            "{}",
            first_text(&shown)
        );
        let lines = numbered(&shown);
        let line = |n: u64| {
            lines.iter().find(|(number, _)| *number == n).map_or_else(
                || panic!("no line {n} in {lines:#?}"),
                |(_, text)| text.as_str(),
            )
        };
        assert!(
            lines.iter().any(|(_, text)| text == "| Fruit | Count |"),
            "the table is a pipe table: {lines:#?}"
        );
        assert!(lines.iter().any(|(_, text)| text == "| Apple | 3 |"));
        assert!(lines.iter().any(|(_, text)| text == "\\# not a heading"));

        let outline: Vec<(u8, &str)> = shown
            .structured
            .outline
            .iter()
            .map(|h| (h.level, h.text.as_str()))
            .collect();
        assert_eq!(
            outline,
            vec![(1, "Quarterly results"), (2, "Details & *notes*")]
        );
        for heading in &shown.structured.outline {
            assert!(
                line(heading.line).starts_with(&format!("{} ", "#".repeat(heading.level.into()))),
                "line {} is {:?}, not the heading {:?}",
                heading.line,
                line(heading.line),
                heading.text
            );
        }
        assert_eq!(
            line(shown.structured.outline[0].line),
            "# Quarterly results"
        );

        // A window asked for at a heading's line starts with the heading,
        // and carries the same outline.
        let details = &shown.structured.outline[1];
        let later = view(
            &FileInput::new(&bytes, "report.docx"),
            &WindowRequest {
                start_line: Some(details.line),
                line_count: Some(3),
            },
            &Options::default(),
            &Cancel::new(),
        )
        .expect("a window");
        let later_lines = numbered(&later);
        assert_eq!(
            later_lines.first(),
            Some(&(details.line, "## Details & \\*notes\\*".to_owned()))
        );
        assert_eq!(later.structured.outline, shown.structured.outline);
        // Only a document longer than its window names its sections in the
        // header, for a model that sees the text alone.
        assert!(!first_text(&shown).contains("Sections start at"));
        let header = first_text(&later).lines().next().unwrap_or_default();
        assert!(
            header.contains(&format!(
                "Sections start at: line {} (Quarterly results); line {} (Details & *notes*). Pass a line as start_line to read that section.",
                shown.structured.outline[0].line, details.line
            )),
            "{header}"
        );

        let json = serde_json::to_value(&shown.structured).expect("a record serializes");
        assert_eq!(json["outline"][0]["level"], 1);
        assert_eq!(json["outline"][0]["line"], shown.structured.outline[0].line);
        assert_eq!(json["outline"][1]["text"], "Details & *notes*");
    }

    #[test]
    fn plain_text_has_no_outline_but_a_markdown_file_has_one() {
        let text = show(b"# not markdown\nwords\n", "notes.txt", &Options::default());
        assert!(text.structured.outline.is_empty());
        let json = serde_json::to_value(&text.structured).expect("a record serializes");
        assert!(json.get("outline").is_none(), "{json}");

        let markdown = show(
            b"# Title\n\n```\n# a comment in code\n```\n\n## Part two\n",
            "notes.md",
            &Options::default(),
        );
        let outline: Vec<(u8, &str, u64)> = markdown
            .structured
            .outline
            .iter()
            .map(|h| (h.level, h.text.as_str(), h.line))
            .collect();
        assert_eq!(outline, vec![(1, "Title", 1), (2, "Part two", 7)]);
    }

    #[test]
    fn an_html_page_is_shown_as_markdown_unless_too_big_or_too_deep_then_as_its_source_saying_why()
    {
        let page =
            b"<html><head><title>Menu</title></head><body><h1>Lunch</h1><p>Soup</p></body></html>";
        let shown = show(page, "menu.html", &Options::default());
        let text = first_text(&shown);
        assert!(text.contains("HTML page, as Markdown"), "{text}");
        assert!(text.contains("Its title is \"Menu\"."), "{text}");
        assert!(text.contains("     1\t# Lunch"), "{text}");
        assert_eq!(shown.structured.outline.len(), 1);

        let small = Options {
            office_text_bytes: 40,
            ..Options::default()
        };
        let big = show(page, "menu.html", &small);
        let text = first_text(&big);
        assert!(
            text.contains(
                "It is shown as its HTML source, not as Markdown, because it is larger than the 40 bytes a page is read into Markdown from."
            ),
            "{text}"
        );
        assert!(text.contains("<h1>Lunch</h1>"), "{text}");
        assert!(big.structured.outline.is_empty());

        let shallow = Options {
            xml_depth: 3,
            ..Options::default()
        };
        let deep = show(
            b"<html><body><div><div><div><div><p>x</p></div></div></div></div></body></html>",
            "deep.html",
            &shallow,
        );
        let text = first_text(&deep);
        assert!(
            text.contains("because its HTML is nested deeper than 3 levels"),
            "{text}"
        );
        assert!(text.contains("<div><div>"), "{text}");
    }

    #[test]
    fn a_header_names_the_top_two_levels_of_sections_or_only_the_top_when_they_are_many() {
        let heading = |level: u8, text: &str, line: u64| Heading {
            level,
            text: text.to_owned(),
            line,
        };
        let few = [
            heading(2, "Intro", 1),
            heading(3, "Aim", 5),
            heading(4, "Detail", 9),
            heading(2, "End", 20),
        ];
        assert_eq!(
            sections(&few),
            "Sections start at: line 1 (Intro); line 5 (Aim); line 20 (End). Pass a line as start_line to read that section."
        );
        let mut many = vec![heading(1, "Book", 1)];
        many.extend((0..25).map(|n| heading(2, "Chapter", 10 + n)));
        assert_eq!(
            sections(&many),
            "Sections start at: line 1 (Book). Pass a line as start_line to read that section."
        );
        let tops: Vec<Heading> = (0..25).map(|n| heading(1, "Part", 1 + n)).collect();
        assert!(
            sections(&tops).ends_with(
                "line 20 (Part); 5 more. Pass a line as start_line to read that section."
            )
        );
    }
}
