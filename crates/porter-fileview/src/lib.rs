//! `porter-fileview` turns a file's bytes into what a model can use: text in
//! windows of numbered lines, Word, PowerPoint, Excel, PDF and HTML
//! documents as windows of their Markdown with an outline of their
//! headings, archive listings, images turned upright and scaled to fit,
//! recordings as their speech transcribed with `[mm:ss]` marks (the
//! `speech` feature, where the program has said where the model is; see
//! [`speech`]), small audio and video as themselves, and a one-sentence
//! description of everything else.
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
pub mod engines;
mod input;
mod markdown;
mod models;
mod nesting;
mod ocr;
mod office;
mod options;
mod pdf;
mod picture;
mod prepared;
mod read;
mod sniff;
pub mod speech;
mod text;
pub mod worker;

pub use bounds::{Cancel, ProgressFn};
pub use content::{
    Block, Heading, ImageRecord, Kind, Record, ResourceBlob, Shown, View, WindowRecord,
};
pub use describe::{count, human_size, is_text_media_type};
pub use input::{FileInput, ViewError};
pub use markdown::{Markdown, begins_like_html};
pub use models::{install_models, models_dir};
pub use options::*;
pub use prepared::Prepared;
pub use read::{TypeFound, describe_too_large, html_nesting_within, html_to_markdown, sniff_type};
pub use text::WindowRequest;

use describe::shown_name;
use read::{described_failure, prepare_here};

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
}
