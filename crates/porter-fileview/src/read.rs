//! Reading a file in this process: what its bytes are, and the reader for
//! that kind (text, a document, a sheet, a PDF, an image, media, an
//! archive), or else a description. The [`crate::worker`] runs this in a
//! confined child process where one is installed.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::bounds::{Cancel, Extracted, Failure};
use crate::content::{Block, Kind, Record, Shown, View};
use crate::describe::{
    self, count, described, essence, human_size, is_text_media_type, shown_name, type_note,
};
use crate::input::{FileInput, ViewError};
use crate::markdown::out::Markdown;
use crate::options::Options;
use crate::prepared::{Paged, Prep, Prepared, push_type_note};
use crate::sniff::{self, Encoding, Sniffed};
use crate::{archive, markdown, nesting, ocr, office, picture, speech, text};

/// A file whose reader died, described by what its bytes are and why.
pub(crate) fn described_failure(input: &FileInput<'_>, reason: &str) -> View {
    let file = File::of(input);
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
    let file = File::of(input);
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
/// type and type note a [`view`](crate::view) of it would carry.
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

/// Tells what a file is from its bytes and name, the way [`view`](crate::view) decides
/// it, without extracting anything: callers that only need the type (the
/// question before a post with files names each file's type and any
/// disagreement with its name) get the same answer a view would give, from
/// one set of rules.
#[must_use]
pub fn sniff_type(bytes: &[u8], name: &str) -> TypeFound {
    let file = File::of(&FileInput::new(bytes, name));
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

impl<'a> File<'a> {
    /// The file `input` names, its name made safe to print and blank
    /// declared types and links dropped.
    fn of(input: &FileInput<'a>) -> Self {
        Self {
            bytes: input.bytes,
            name: shown_name(input.name),
            size: input.bytes.len() as u64,
            declared: input.declared_type.filter(|d| !d.trim().is_empty()),
            link: input.link.filter(|l| !l.trim().is_empty()),
            name_type: name_type(input.name),
        }
    }
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
            return show_media(file, sniffed, mime, what, options, cancel);
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
    let fits = file.bytes.len() <= options.media_bytes;
    let attached = |mut prepared: Prepared, attach: bool| {
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
            // Its Markdown is what a model can use; the PDF itself follows
            // only when the caller asked for it.
            let attach = options.attach_pdf && fits;
            if options.attach_pdf {
                document.notes.push(if attach {
                    "The PDF itself is attached as well.".to_owned()
                } else {
                    format!(
                        "The PDF itself is not attached: it is larger than the {} returned as a file.",
                        human_size(options.media_bytes as u64)
                    )
                });
            }
            Ok(attached(
                file.paged_markdown(Kind::Pdf, MIME, &what, document),
                attach,
            ))
        }
        Err(Failure::Cancelled) => Err(ViewError::Cancelled),
        Err(Failure::Unreadable(reason)) if fits => {
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
            Ok(attached(
                Prepared::whole(View {
                    content: vec![Block::text(text)],
                    structured: record,
                }),
                true,
            ))
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
    match picture::picture(
        file.bytes,
        format,
        &file.name,
        options,
        cancel,
        options.ocr && cfg!(feature = "ocr"),
    ) {
        Ok(mut picture) => {
            let block = Block::image(&picture.bytes, &picture.record.mime_type);
            let looked = picture.looked.take();
            let (read, ocr_notes) = image_text(file.bytes, format, looked, options, cancel)?;
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

/// The text in an image file's pixels, read by OCR, and the notes on it;
/// `looked` is the picture as shown, in grey and looked at for lines of
/// text, when the view has it.
fn image_text(
    bytes: &[u8],
    format: picture::Format,
    looked: Option<crate::ocr::lines::Looked>,
    options: &Options,
    cancel: &Cancel,
) -> Result<(Option<Markdown>, Vec<String>), ViewError> {
    match ocr::picture_text(bytes, format, looked, options, cancel) {
        Ok(read) => Ok(read),
        Err(Failure::Cancelled) => Err(ViewError::Cancelled),
        Err(Failure::Unreadable(reason)) => Ok((None, vec![reason])),
    }
}

/// Audio and video: the speech in it transcribed into numbered lines with
/// `[mm:ss]` marks where a speech model is installed, and the file itself
/// after the text when it is small enough to return; else described as
/// before, with a note on why its speech is not there.
fn show_media(
    file: &File<'_>,
    sniffed: &Sniffed,
    mime: &str,
    what: &str,
    options: &Options,
    cancel: &Cancel,
) -> Result<Prepared, ViewError> {
    let audio = matches!(sniffed, Sniffed::Audio { .. });
    let kind = if audio { Kind::Audio } else { Kind::Video };
    let small = file.bytes.len() <= options.media_bytes;
    let outcome =
        (mime != "audio/midi").then(|| speech::hear(file.bytes, &file.name, options, cancel));
    let note = match outcome {
        Some(Ok(speech::Outcome::Heard(heard))) => {
            let mut notes = heard.notes;
            notes.push(if small {
                format!(
                    "The recording itself follows the text, as {}.",
                    if audio { "audio" } else { "an embedded video file" }
                )
            } else {
                format!(
                    "The recording itself is not attached: it is larger than the {} returned as a file.",
                    human_size(options.media_bytes as u64)
                )
            });
            let what = format!(
                "{what}, its speech transcribed ({} long)",
                speech::clock(heard.seconds)
            );
            let mut prepared = file.paged(
                kind,
                mime,
                &what,
                Extracted {
                    text: heard.lines,
                    notes,
                },
            );
            if let Prep::Paged(paged) = &mut prepared.0
                && small
            {
                paged.after.push(media_block(file, mime, audio));
                paged.record.shown = if audio { Shown::Audio } else { Shown::Resource };
            }
            return Ok(prepared);
        }
        Some(Err(Failure::Cancelled)) => return Err(ViewError::Cancelled),
        Some(Ok(speech::Outcome::NotTranscribed(note))) => Some(note),
        Some(Err(Failure::Unreadable(reason))) => {
            Some(format!("Its speech could not be transcribed: {reason}."))
        }
        None => None,
    };
    let mut view = if small {
        let how = if audio {
            "It is attached as audio; a client that cannot play audio has only this description."
        } else {
            "It is attached as an embedded video file; a client that cannot play video has only this description."
        };
        let record = file.record(
            kind,
            mime,
            if audio { Shown::Audio } else { Shown::Resource },
        );
        let mut text = format!(
            "{}: {what} ({mime}), {}. {how}",
            file.name,
            human_size(file.size)
        );
        describe::push_link(&mut text, file.link);
        push_type_note(&mut text, &record);
        View {
            content: vec![Block::text(text), media_block(file, mime, audio)],
            structured: record,
        }
    } else {
        let reason = format!(
            "it is larger than the {} returned as {}",
            human_size(options.media_bytes as u64),
            if audio { "audio" } else { "a video file" }
        );
        file.described(kind, mime, what, &reason)
    };
    if let Some(note) = note {
        if let Some(Block::Text { text }) = view.content.first_mut() {
            text.push(' ');
            text.push_str(&note);
        }
        view.structured.notes.push(note);
    }
    Ok(Prepared::whole(view))
}

/// The recording itself as a block: audio, or a video as an embedded file.
fn media_block(file: &File<'_>, mime: &str, audio: bool) -> Block {
    if audio {
        Block::audio(file.bytes, mime)
    } else {
        Block::resource(file.resource_uri(), file.bytes, mime)
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
