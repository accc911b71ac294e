//! Word documents (DOCX): the main part's paragraphs and tables as lines.
//!
//! Each paragraph is a line; a break inside a run starts a new one. A table
//! row is a line whose cells are joined by tabs; a table inside a cell is
//! flattened into that cell's text. Deleted text and field instructions are
//! skipped. Text boxes come after the line of the paragraph that holds them,
//! and of the alternatives in `mc:AlternateContent` only one is read, so a
//! text box is never shown twice.

use std::io::BufRead;

use super::package::Package;
use super::text::TextOut;
use super::xml::{Node, Xml, attribute, local, named, push_bounded, push_cell_text};
use crate::bounds::{Cancel, Extracted, Failure};
use crate::options::Options;

/// The note every Word text carries.
const DOCX_NOTE: &str = "This is the document's text only: formatting, pictures, headers, footers and footnotes are not included.";

/// The main part of a package whose relationships do not name one.
const DEFAULT_MAIN: &str = "word/document.xml";

/// `MAX_GRID_SPAN` is the most columns one merged cell is counted as, so a
/// crafted span cannot turn one cell into millions of tabs (Word allows 63).
const MAX_GRID_SPAN: usize = 64;

/// Extracts the text of the Word document in `bytes`.
pub(crate) fn extract(
    bytes: &[u8],
    options: &Options,
    cancel: &Cancel,
) -> Result<Extracted, Failure> {
    let mut package = Package::open_checked(bytes, options)?;
    let main = package
        .main_part()?
        .unwrap_or_else(|| DEFAULT_MAIN.to_owned());
    let mut out = TextOut::new(options.office_text_bytes);
    let limit = options.office_text_bytes.saturating_add(1);
    let found = package.read(&main, |xml| read_document(xml, &mut out, limit, cancel))?;
    if found.is_none() {
        return Err(Failure::unreadable(format!(
            "its main part {main} is missing"
        )));
    }
    Ok(out.finish(DOCX_NOTE))
}

/// One open element, as far as the text cares.
enum Frame {
    /// An element with no part in the text's shape.
    Other,
    /// A paragraph and the text gathered for it so far.
    Paragraph(String),
    /// A run: tabs, breaks and text count only inside one.
    Run,
    /// A `w:t` (or math `m:t`), whose character data is text.
    Text,
    /// A table row and its cells so far.
    Row(Vec<String>),
    /// A table cell, its text, and how many grid columns it spans.
    Cell { text: String, span: usize },
    /// Cell properties, where a grid span is declared.
    CellProperties,
    /// A text box: its lines, and lines of boxes inside it still to place.
    TextBox {
        lines: Vec<String>,
        pending: Vec<String>,
    },
    /// An `mc:AlternateContent`; `taken` once one alternative was read.
    Alternate { taken: bool },
}

/// Where a finished paragraph or row goes.
enum Place {
    /// A line of the text itself.
    Body,
    /// The cell frame at this index.
    Cell(usize),
    /// The text box frame at this index.
    TextBox(usize),
}

/// Reads a `w:document` part into `out`, keeping in-progress text within
/// `limit` bytes.
pub(crate) fn read_document<R: BufRead>(
    xml: &mut Xml<R>,
    out: &mut TextOut,
    limit: usize,
    cancel: &Cancel,
) -> Result<(), Failure> {
    let part = xml.part().to_owned();
    let mut doc = Document {
        frames: Vec::new(),
        paragraphs: Vec::new(),
        rows: Vec::new(),
        cells: Vec::new(),
        places: Vec::new(),
        runs: 0,
        pending: Vec::new(),
        limit,
    };
    loop {
        if out.is_full() {
            return Ok(());
        }
        match xml.next()? {
            Node::Start(start) => {
                let name = local(&start).to_owned();
                if let Some(Frame::Alternate { taken }) = doc.frames.last_mut()
                    && (name == "Choice" || name == "Fallback")
                {
                    if *taken {
                        xml.skip()?;
                        continue;
                    }
                    *taken = true;
                    doc.push(Frame::Other);
                    continue;
                }
                match name.as_str() {
                    "del" | "moveFrom" | "delText" | "instrText" | "delInstrText" => xml.skip()?,
                    "p" => doc.push(Frame::Paragraph(String::new())),
                    "r" => doc.push(Frame::Run),
                    "t" if doc.runs > 0 => doc.push(Frame::Text),
                    "tab" | "ptab" if doc.runs > 0 => {
                        doc.append("\t");
                        doc.push(Frame::Other);
                    }
                    "br" | "cr" if doc.runs > 0 => {
                        doc.append("\n");
                        doc.push(Frame::Other);
                    }
                    "noBreakHyphen" if doc.runs > 0 => {
                        doc.append("-");
                        doc.push(Frame::Other);
                    }
                    "tr" => doc.push(Frame::Row(Vec::new())),
                    "tc" => doc.push(Frame::Cell {
                        text: String::new(),
                        span: 1,
                    }),
                    "tcPr" => doc.push(Frame::CellProperties),
                    "gridSpan" if matches!(doc.frames.last(), Some(Frame::CellProperties)) => {
                        let value = attribute(&start, &part, |k| named(k, "val"))?;
                        let span = value
                            .and_then(|v| v.trim().parse::<usize>().ok())
                            .unwrap_or(1)
                            .clamp(1, MAX_GRID_SPAN);
                        if let Some(&at) = doc.cells.last()
                            && let Frame::Cell {
                                span: cell_span, ..
                            } = &mut doc.frames[at]
                        {
                            *cell_span = span;
                        }
                        doc.push(Frame::Other);
                    }
                    "txbxContent" => doc.push(Frame::TextBox {
                        lines: Vec::new(),
                        pending: Vec::new(),
                    }),
                    "AlternateContent" => doc.push(Frame::Alternate { taken: false }),
                    _ => doc.push(Frame::Other),
                }
            }
            Node::Text(text) => {
                if matches!(doc.frames.last(), Some(Frame::Text)) {
                    doc.append(&text);
                }
            }
            Node::End => {
                let Some(frame) = doc.pop() else { continue };
                match frame {
                    Frame::Paragraph(text) => {
                        cancel.check()?;
                        doc.place_paragraph(text, out);
                    }
                    Frame::Row(cells) => {
                        cancel.check()?;
                        doc.place_row(&cells, out);
                    }
                    Frame::Cell { text, span } => {
                        if let Some(&at) = doc.rows.last()
                            && let Frame::Row(cells) = &mut doc.frames[at]
                        {
                            cells.push(text);
                            cells.extend(std::iter::repeat_n(String::new(), span - 1));
                        }
                    }
                    Frame::TextBox { mut lines, pending } => {
                        lines.extend(pending);
                        doc.place_text_box(lines);
                    }
                    Frame::Other
                    | Frame::Run
                    | Frame::Text
                    | Frame::CellProperties
                    | Frame::Alternate { .. } => {}
                }
            }
            Node::Other => {}
            Node::Eof => {
                for line in doc.pending.drain(..) {
                    out.line(&line);
                }
                return Ok(());
            }
        }
    }
}

/// The state of a document being read: the open elements, and indexes into
/// them for the innermost paragraph, row, cell and text box.
struct Document {
    frames: Vec<Frame>,
    paragraphs: Vec<usize>,
    rows: Vec<usize>,
    cells: Vec<usize>,
    places: Vec<usize>,
    runs: usize,
    /// Text box lines waiting for the body line they follow.
    pending: Vec<String>,
    limit: usize,
}

impl Document {
    /// Opens `frame`, noting where the innermost paragraph, row, cell or
    /// text box now is.
    fn push(&mut self, frame: Frame) {
        let at = self.frames.len();
        match &frame {
            Frame::Paragraph(_) => self.paragraphs.push(at),
            Frame::Row(_) => self.rows.push(at),
            Frame::Cell { .. } => {
                self.cells.push(at);
                self.places.push(at);
            }
            Frame::TextBox { .. } => self.places.push(at),
            Frame::Run => self.runs += 1,
            _ => {}
        }
        self.frames.push(frame);
    }

    /// Closes the innermost frame.
    fn pop(&mut self) -> Option<Frame> {
        let frame = self.frames.pop()?;
        match &frame {
            Frame::Paragraph(_) => {
                self.paragraphs.pop();
            }
            Frame::Row(_) => {
                self.rows.pop();
            }
            Frame::Cell { .. } => {
                self.cells.pop();
                self.places.pop();
            }
            Frame::TextBox { .. } => {
                self.places.pop();
            }
            Frame::Run => self.runs = self.runs.saturating_sub(1),
            _ => {}
        }
        Some(frame)
    }

    /// Appends to the innermost open paragraph.
    fn append(&mut self, text: &str) {
        if let Some(&at) = self.paragraphs.last()
            && let Frame::Paragraph(paragraph) = &mut self.frames[at]
        {
            push_bounded(paragraph, text, self.limit);
        }
    }

    /// Where a paragraph or row ending now belongs.
    fn place(&self) -> Place {
        match self.places.last() {
            Some(&at) if matches!(self.frames[at], Frame::Cell { .. }) => Place::Cell(at),
            Some(&at) => Place::TextBox(at),
            None => Place::Body,
        }
    }

    /// Puts a finished paragraph where it belongs: a body line (followed by
    /// any text boxes it held), a cell's text, or a text box line.
    fn place_paragraph(&mut self, text: String, out: &mut TextOut) {
        match self.place() {
            Place::Body => {
                out.push(&text);
                out.end_line();
                for line in self.pending.drain(..) {
                    out.line(&line);
                }
            }
            Place::Cell(at) => self.add_to_cell(at, &text),
            Place::TextBox(at) => {
                if let Frame::TextBox { lines, pending } = &mut self.frames[at] {
                    lines.push(text);
                    lines.append(pending);
                }
            }
        }
    }

    /// Puts a finished table row where it belongs: a tab-joined line, or,
    /// for a nested table, flattened into the cell around it.
    fn place_row(&mut self, cells: &[String], out: &mut TextOut) {
        match self.place() {
            Place::Body => {
                let line: Vec<&str> = cells.iter().map(String::as_str).collect();
                out.line(&line.join("\t"));
                for line in self.pending.drain(..) {
                    out.line(&line);
                }
            }
            Place::Cell(at) => {
                let flat: Vec<&str> = cells
                    .iter()
                    .map(String::as_str)
                    .filter(|cell| !cell.is_empty())
                    .collect();
                self.add_to_cell(at, &flat.join(" "));
            }
            Place::TextBox(at) => {
                if let Frame::TextBox { lines, pending } = &mut self.frames[at] {
                    lines.push(cells.join("\t"));
                    lines.append(pending);
                }
            }
        }
    }

    /// Hands a finished text box's lines to the text box around it, or to
    /// the body, to follow the next line placed there.
    fn place_text_box(&mut self, lines: Vec<String>) {
        let outer = self
            .places
            .iter()
            .rev()
            .copied()
            .find(|&at| matches!(self.frames[at], Frame::TextBox { .. }));
        match outer {
            Some(at) => {
                if let Frame::TextBox { pending, .. } = &mut self.frames[at] {
                    pending.extend(lines);
                }
            }
            None => self.pending.extend(lines),
        }
    }

    /// Adds a paragraph's text to a cell, on the cell's one line: breaks and
    /// tabs become spaces so the row keeps its columns.
    fn add_to_cell(&mut self, at: usize, text: &str) {
        if text.is_empty() {
            return;
        }
        let limit = self.limit;
        if let Frame::Cell { text: cell, .. } = &mut self.frames[at] {
            push_cell_text(cell, text, limit);
        }
    }
}

#[cfg(test)]
// Fixtures are literal XML and bytes put together with `format!`, which
// reads more plainly here than a chain of `write!` calls.
#[allow(clippy::format_collect, clippy::format_push_string)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::office::tests::{content_types, root_rels, zip_of};

    const WORD: &str =
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml";

    fn docx_with_document(document: &str) -> Vec<u8> {
        zip_of(&[
            (
                "[Content_Types].xml",
                &content_types("word/document.xml", WORD),
            ),
            ("_rels/.rels", &root_rels("word/document.xml")),
            ("word/document.xml", document),
        ])
    }

    fn docx_of(body: &str) -> Vec<u8> {
        docx_with_document(&format!(
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" xmlns:v="urn:schemas-microsoft-com:vml"><w:body>{body}</w:body></w:document>"#
        ))
    }

    fn text_of(body: &str) -> String {
        extract(&docx_of(body), &Options::default(), &Cancel::new())
            .expect("the test document is readable")
            .text
    }

    fn reason_for(bytes: &[u8], options: &Options) -> String {
        match extract(bytes, options, &Cancel::new()) {
            Err(Failure::Unreadable(reason)) => reason,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    fn paragraph(text: &str) -> String {
        format!("<w:p><w:r><w:t>{text}</w:t></w:r></w:p>")
    }

    #[test]
    fn paragraphs_runs_tabs_and_breaks_become_lines() {
        let cases = [
            ("one paragraph per line", format!("{}{}", paragraph("A"), paragraph("B")), "A\nB"),
            (
                "runs join, tabs and breaks inside runs are kept",
                r#"<w:p><w:r><w:t>Hello</w:t></w:r><w:r><w:tab/><w:t xml:space="preserve"> world</w:t><w:br/><w:t>next</w:t><w:cr/><w:t>last</w:t></w:r></w:p>"#.to_owned(),
                "Hello\t world\nnext\nlast",
            ),
            (
                "tab stops in paragraph properties are no tabs",
                r#"<w:p><w:pPr><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs></w:pPr><w:r><w:t>A</w:t></w:r></w:p>"#.to_owned(),
                "A",
            ),
            (
                "an empty paragraph is an empty line",
                format!("{}<w:p/>{}", paragraph("A"), paragraph("B")),
                "A\n\nB",
            ),
            (
                "hyperlinks, insertions and content controls keep their text",
                r#"<w:p><w:hyperlink><w:r><w:t>link</w:t></w:r></w:hyperlink><w:ins><w:r><w:t xml:space="preserve"> added</w:t></w:r></w:ins><w:sdt><w:sdtContent><w:r><w:t xml:space="preserve"> field</w:t></w:r></w:sdtContent></w:sdt></w:p>"#.to_owned(),
                "link added field",
            ),
            (
                "predefined entities and character references decode",
                paragraph("&lt;a&gt; &amp; &#65;&#x42; &quot;q&apos;"),
                "<a> & AB \"q'",
            ),
        ];
        for (what, body, expected) in cases {
            assert_eq!(text_of(&body), expected, "{what}");
        }
    }

    #[test]
    fn deleted_text_and_field_instructions_are_skipped() {
        let body = r#"<w:p><w:r><w:t>keep</w:t></w:r><w:del><w:r><w:delText>gone</w:delText></w:r></w:del><w:moveFrom><w:r><w:t>moved</w:t></w:r></w:moveFrom><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> PAGE </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t xml:space="preserve"> 7</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>"#;
        assert_eq!(text_of(body), "keep 7");
    }

    #[test]
    fn table_rows_are_tab_joined_and_nested_tables_flattened() {
        let cell = |text: &str| format!("<w:tc>{}</w:tc>", paragraph(text));
        let nested = format!(
            "<w:tc><w:tbl><w:tr>{}{}</w:tr><w:tr>{}</w:tr></w:tbl></w:tc>",
            cell("x"),
            cell("y"),
            cell("z")
        );
        let body = format!(
            "{}<w:tbl><w:tblGrid/><w:tr>{}{}</w:tr><w:tr>{}<w:tc>{}{}</w:tc></w:tr><w:tr><w:tc><w:tcPr><w:gridSpan w:val=\"2\"/></w:tcPr>{}</w:tc>{}</w:tr></w:tbl>{}",
            paragraph("before"),
            cell("a"),
            cell("b"),
            nested,
            paragraph("two"),
            paragraph("paragraphs"),
            paragraph("wide"),
            cell("c"),
            paragraph("after")
        );
        assert_eq!(
            text_of(&body),
            "before\na\tb\nx y z\ttwo paragraphs\nwide\t\tc\nafter"
        );
    }

    #[test]
    fn a_text_box_follows_its_paragraph_and_is_read_once() {
        let text_box = format!(
            "<w:txbxContent>{}{}</w:txbxContent>",
            paragraph("box 1"),
            paragraph("box 2")
        );
        let body = format!(
            r#"<w:p><w:r><w:t>before</w:t></w:r><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wps:txbx>{text_box}</wps:txbx></w:drawing></mc:Choice><mc:Fallback><w:pict><v:textbox>{text_box}</v:textbox></w:pict></mc:Fallback></mc:AlternateContent></w:r><w:r><w:t xml:space="preserve"> after</w:t></w:r></w:p>{}"#,
            paragraph("next")
        );
        assert_eq!(text_of(&body), "before after\nbox 1\nbox 2\nnext");
    }

    #[test]
    fn nesting_is_accepted_up_to_the_depth_limit_and_refused_past_it() {
        // w:document, w:body, w:p, w:r, w:t are 5 levels.
        let nested = |levels: usize| {
            let fill = levels - 5;
            format!(
                "{}{}{}",
                "<x>".repeat(fill),
                paragraph("deep"),
                "</x>".repeat(fill)
            )
        };
        for (limit, levels, ok) in [
            (1000, 1000, true),
            (1000, 1001, false),
            (8, 8, true),
            (8, 9, false),
        ] {
            let options = Options {
                xml_depth: limit,
                ..Options::default()
            };
            let result = extract(&docx_of(&nested(levels)), &options, &Cancel::new());
            if ok {
                assert_eq!(
                    result.expect("within the limit").text,
                    "deep",
                    "{levels} of {limit}"
                );
            } else {
                assert_eq!(
                    result,
                    Err(Failure::Unreadable(format!(
                        "its XML is nested deeper than {limit} levels"
                    ))),
                    "{levels} of {limit}"
                );
            }
        }
    }

    #[test]
    fn billion_laughs_is_refused_at_once_without_expanding() {
        let mut entities = String::from(r#"<!ENTITY lol "lol">"#);
        for level in 1..10 {
            let previous = if level == 1 {
                "lol".to_owned()
            } else {
                format!("lol{}", level - 1)
            };
            entities.push_str(&format!(
                "<!ENTITY lol{level} \"{}\">",
                format!("&{previous};").repeat(10)
            ));
        }
        let document = format!(
            r#"<?xml version="1.0"?><!DOCTYPE w:document [{entities}]><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>"#
        );
        let started = Instant::now();
        let reason = reason_for(&docx_with_document(&document), &Options::default());
        assert!(started.elapsed() < Duration::from_secs(1));
        assert!(reason.contains("DOCTYPE"), "{reason}");

        let undefined = reason_for(&docx_of(&paragraph("&lol9;")), &Options::default());
        assert!(undefined.contains("&lol9;"), "{undefined}");
    }

    #[test]
    fn the_text_is_cut_exactly_at_its_cap_with_a_note() {
        let body = format!("{}{}", paragraph("abc"), paragraph("def"));
        let whole = extract(
            &docx_of(&body),
            &Options {
                office_text_bytes: 7,
                ..Options::default()
            },
            &Cancel::new(),
        )
        .expect("readable");
        assert_eq!(whole.text, "abc\ndef");
        assert_eq!(whole.notes, vec![DOCX_NOTE.to_owned()]);

        let cut = extract(
            &docx_of(&body),
            &Options {
                office_text_bytes: 6,
                ..Options::default()
            },
            &Cancel::new(),
        )
        .expect("readable");
        assert_eq!(cut.text, "abc\nde");
        assert_eq!(
            cut.notes,
            vec![
                DOCX_NOTE.to_owned(),
                "The text was cut at 6 bytes; later parts are not shown.".to_owned()
            ]
        );
    }

    #[test]
    fn decompressed_xml_past_its_cap_is_refused() {
        let body = paragraph(&"x".repeat(20_000));
        let options = Options {
            office_xml_bytes: 10_000,
            ..Options::default()
        };
        assert_eq!(
            reason_for(&docx_of(&body), &options),
            "its XML comes to more than 9.8 KiB when decompressed"
        );
        assert!(extract(&docx_of(&body), &Options::default(), &Cancel::new()).is_ok());
    }

    #[test]
    fn broken_or_missing_parts_are_refused_with_a_reason() {
        let cases = [
            (
                docx_with_document("<w:document><w:body><w:p></w:body></w:document>"),
                "its part word/document.xml is broken XML",
            ),
            (
                docx_with_document("<w:document><w:body><w:p>"),
                "its part word/document.xml is broken XML",
            ),
            (
                zip_of(&[("_rels/.rels", &root_rels("word/document.xml"))]),
                "its main part word/document.xml is missing",
            ),
        ];
        for (bytes, start) in cases {
            let reason = reason_for(&bytes, &Options::default());
            assert!(reason.starts_with(start), "{reason}");
        }
    }

    #[test]
    fn a_raised_cancel_flag_stops_the_read() {
        let cancel = Cancel::new();
        cancel.cancel();
        assert_eq!(
            extract(&docx_of(&paragraph("a")), &Options::default(), &cancel),
            Err(Failure::Cancelled)
        );
    }

    #[test]
    fn a_zip_bomb_part_ends_in_a_reason_quickly() {
        let filler = " ".repeat(8 * 1024 * 1024);
        let bytes = docx_of(&paragraph(&filler));
        assert!(bytes.len() < 64 * 1024, "the part compresses well");
        let options = Options {
            office_xml_bytes: 1024 * 1024,
            ..Options::default()
        };
        let started = Instant::now();
        assert_eq!(
            reason_for(&bytes, &options),
            "its XML comes to more than 1 MiB when decompressed"
        );
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn zip_entries_sharing_their_data_are_refused() {
        use std::io::{Cursor, Write};
        use zip::write::SimpleFileOptions;

        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, content) in [
            (
                "[Content_Types].xml",
                content_types("word/document.xml", WORD),
            ),
            ("_rels/.rels", root_rels("word/document.xml")),
            (
                "word/document.xml",
                format!(
                    "<w:document><w:body>{}</w:body></w:document>",
                    paragraph("x")
                ),
            ),
        ] {
            writer
                .start_file(name, SimpleFileOptions::default())
                .expect("a fresh zip takes a new entry");
            writer
                .write_all(content.as_bytes())
                .expect("writing to memory cannot fail");
        }
        for copy in 0..3 {
            writer
                .shallow_copy_file("word/document.xml", &format!("word/copy{copy}.xml"))
                .expect("the entry to copy exists");
        }
        let bytes = writer
            .finish()
            .expect("finishing an in-memory zip cannot fail")
            .into_inner();
        assert_eq!(
            reason_for(&bytes, &Options::default()),
            "its zip entries overlap one another, as in a zip bomb"
        );
    }
}
