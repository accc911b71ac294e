//! Documents into Markdown: the structure a person, a model or a search
//! index needs (headings, list items, tables, links, slides, sheets, pages).
//!
//! One reader a format (Word, `PowerPoint`, the workbook walk, the PDF
//! layout analysis, HTML); each produces the [`crate::document`] model,
//! which is rendered here. `porter extract`
//! writes this Markdown, and the file view shows the same Markdown in
//! numbered windows with the [`outline`] of its headings, so every limit of
//! [`Options`] holds for both; the Markdown itself is cut at
//! `office_text_bytes`, with a note saying so.

pub(crate) mod docx;
pub(crate) mod html;
pub(crate) mod out;
pub(crate) mod pptx;
pub(crate) mod sheets;
pub(crate) mod tables;

use std::panic::{AssertUnwindSafe, catch_unwind};

pub use self::out::Markdown;
use self::out::{MdOut, unescape};
#[cfg(test)]
use self::out::{escape_line, table};
use crate::bounds::{Cancel, Failure};
use crate::content::Heading;
use crate::describe::{human_size, shown_name};
use crate::input::{FileInput, ViewError};
use crate::office::{self, WorkbookFormat, ZipKind};
use crate::options::Options;
use crate::sniff::{self, Sniffed};
use crate::{document, pdf, text};

/// [`crate::to_markdown`] in this process.
pub(crate) fn to_markdown_here(
    input: &FileInput<'_>,
    options: &Options,
    cancel: &Cancel,
) -> Result<Markdown, ViewError> {
    let name = shown_name(input.name);
    let size = input.bytes.len() as u64;
    if size > options.max_file_bytes {
        return Err(ViewError::Unreadable {
            name,
            reason: format!(
                "it is larger than the {} that is read of any file",
                human_size(options.max_file_bytes)
            ),
        });
    }
    if cancel.is_cancelled() {
        return Err(ViewError::Cancelled);
    }
    let sniffed = sniff::sniff(input.bytes);
    // As in the view: a panic in a young third-party parser becomes an
    // error about this file, never a crashed server.
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        convert(input, &sniffed, options, cancel)
    }))
    .unwrap_or_else(|_| Err(Failure::unreadable("its reader failed on it unexpectedly")));
    match outcome {
        Ok(Converted::Done(markdown)) => Ok(markdown),
        Ok(Converted::NotSupported(what)) => Err(ViewError::NotExtractable { name, what }),
        Err(Failure::Cancelled) => Err(ViewError::Cancelled),
        Err(Failure::Unreadable(reason)) => Err(ViewError::Unreadable { name, reason }),
    }
}

/// What [`convert`] made of a file.
enum Converted {
    Done(Markdown),
    /// A kind of file extract has no reader for, and what it is.
    NotSupported(String),
}

fn convert(
    input: &FileInput<'_>,
    sniffed: &Sniffed,
    options: &Options,
    cancel: &Cancel,
) -> Result<Converted, Failure> {
    let markdown = match sniffed {
        Sniffed::Text(encoding) => {
            let decoded = text::decode(input.bytes, *encoding);
            if is_html(input, &decoded) {
                html::convert(&decoded, options)?
            } else {
                plain(&decoded, options)
            }
        }
        Sniffed::Pdf => {
            crate::nesting::check_pdf(input.bytes, crate::nesting::PDF_DEPTH)?;
            pdf_markdown(input.bytes, options, cancel)?
        }
        Sniffed::Zip => match office::zip_kind(input.bytes, options) {
            ZipKind::Docx => docx::convert(input.bytes, options, cancel)?,
            ZipKind::Pptx => pptx::convert(input.bytes, options, cancel)?,
            ZipKind::Xlsx => sheets::convert(input.bytes, WorkbookFormat::Xlsx, options, cancel)?,
            ZipKind::Ods => sheets::convert(input.bytes, WorkbookFormat::Ods, options, cancel)?,
            ZipKind::Plain => return Ok(Converted::NotSupported("a zip archive".to_owned())),
        },
        Sniffed::Ole => match sheets::convert(input.bytes, WorkbookFormat::Xls, options, cancel) {
            Ok(markdown) => markdown,
            Err(Failure::Cancelled) => return Err(Failure::Cancelled),
            Err(Failure::Unreadable(_)) => {
                return Ok(Converted::NotSupported(
                    "a legacy binary Office file other than an Excel workbook".to_owned(),
                ));
            }
        },
        Sniffed::Image(format) => return image_text(input.bytes, *format, options, cancel),
        Sniffed::OtherImage { .. } => {
            return Ok(Converted::NotSupported("an image".to_owned()));
        }
        Sniffed::Audio { what, mime } | Sniffed::Video { what, mime } => {
            if *mime == "audio/midi" {
                return Ok(Converted::NotSupported(with_article(what)));
            }
            return match crate::speech::hear(input.bytes, input.name, options, cancel)? {
                crate::speech::Outcome::Heard(heard) => Ok(Converted::Done(
                    crate::speech::markdown(&shown_name(input.name), heard),
                )),
                crate::speech::Outcome::NotTranscribed(note) => Ok(Converted::NotSupported(
                    format!("{} ({})", with_article(what), note.trim_end_matches('.')),
                )),
            };
        }
        Sniffed::Tar(_) => return Ok(Converted::NotSupported("a tar archive".to_owned())),
        Sniffed::Compressed(_) => {
            return Ok(Converted::NotSupported("a compressed file".to_owned()));
        }
        Sniffed::Other { what, .. } => return Ok(Converted::NotSupported(with_article(what))),
    };
    Ok(Converted::Done(markdown))
}

/// An image file's text, read by OCR: its Markdown with the notes on
/// it. An image OCR found no text in (or could not read) is not extracted,
/// and the error says why.
fn image_text(
    bytes: &[u8],
    format: crate::picture::Format,
    options: &Options,
    cancel: &Cancel,
) -> Result<Converted, Failure> {
    let (read, notes) = crate::ocr::picture_text(bytes, format, None, options, cancel)?;
    match read {
        Some(mut markdown) => {
            markdown.notes.extend(notes);
            Ok(Converted::Done(markdown))
        }
        None if notes.is_empty() => Ok(Converted::NotSupported("an image".to_owned())),
        None => Ok(Converted::NotSupported(format!(
            "an image ({})",
            notes.join(" ").trim_end_matches('.')
        ))),
    }
}

/// `what` with "a"/"an" in front, unless it has one already.
fn with_article(what: &str) -> String {
    let lower = what.to_ascii_lowercase();
    if lower.starts_with("a ") || lower.starts_with("an ") || lower.ends_with(" data") {
        what.to_owned()
    } else if lower.starts_with(['a', 'e', 'i', 'o', 'u']) {
        format!("an {what}")
    } else {
        format!("a {what}")
    }
}

/// Whether text is an HTML page: by its name or declared type, or by how
/// it begins.
fn is_html(input: &FileInput<'_>, text: &str) -> bool {
    is_html_page(input.name, input.declared_type, text)
}

/// [`is_html`] from the file's name, declared type and text.
pub(crate) fn is_html_page(name: &str, declared_type: Option<&str>, text: &str) -> bool {
    let extension = std::path::Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if matches!(extension.as_deref(), Some("html" | "htm" | "xhtml")) {
        return true;
    }
    if declared_type.is_some_and(|t| t.to_ascii_lowercase().contains("html")) {
        return true;
    }
    begins_like_html(text)
}

/// Whether text begins as an HTML page does (`<!doctype html` or `<html`,
/// after a byte-order mark and white space, in any case).
#[must_use]
pub fn begins_like_html(text: &str) -> bool {
    let start: String = text
        .trim_start_matches('\u{feff}')
        .trim_start()
        .chars()
        .take(15)
        .collect::<String>()
        .to_ascii_lowercase();
    start.starts_with("<!doctype html") || start.starts_with("<html")
}

/// Plain text and Markdown are their own Markdown; a Markdown file's first
/// `# ` line is its title.
fn plain(text: &str, options: &Options) -> Markdown {
    let mut out = MdOut::new(options.office_text_bytes);
    out.raw(text.trim_start_matches('\u{feff}'));
    let title = text
        .lines()
        .find_map(|line| line.strip_prefix("# "))
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty());
    out.finish(title, Vec::new())
}

/// A PDF's pages in order, each after a `<!-- page N of M -->` marker, as
/// the layout analysis reads them (headings, paragraphs, lists, tables in
/// reading order); a page with no text layer says so where its text would
/// be.
fn pdf_markdown(bytes: &[u8], options: &Options, cancel: &Cancel) -> Result<Markdown, Failure> {
    pdf_document(bytes, options, cancel).map(|(markdown, _)| markdown)
}

/// [`pdf_markdown`], with the PDF's page count when it has a page.
pub(crate) fn pdf_document(
    bytes: &[u8],
    options: &Options,
    cancel: &Cancel,
) -> Result<(Markdown, Option<usize>), Failure> {
    let (blocks, notes) = pdf::blocks(bytes, options, cancel)?;
    let pages = blocks.iter().find_map(|block| match block {
        document::Block::Page { total, .. } => Some(*total),
        _ => None,
    });
    let mut out = MdOut::new(options.office_text_bytes);
    document::write_markdown(&blocks, &mut out);
    Ok((out.finish(None, notes), pages))
}

/// `MAX_OUTLINE` is the most headings an outline lists: it travels with
/// every window, so a document of thousands of headings must not make each
/// window's record large.
pub(crate) const MAX_OUTLINE: usize = 300;

/// `MAX_OUTLINE_TEXT` is the most characters of a heading's text an
/// outline keeps.
const MAX_OUTLINE_TEXT: usize = 160;

/// The outline of Markdown text: its ATX headings (`#` to `######` at the
/// start of a line, outside fenced code) in order, with the line each
/// stands on, at most [`MAX_OUTLINE`] of them; and a sentence saying so
/// when there were more. The readers escape a `#` that starts a line of
/// body text, so every heading line here is a heading of the document.
pub(crate) fn outline(markdown: &str) -> (Vec<Heading>, Option<String>) {
    let mut headings = Vec::new();
    let mut found = 0usize;
    let mut fence: Option<(char, usize)> = None;
    for (index, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start_matches(' ');
        if line.len() - trimmed.len() > 3 {
            continue;
        }
        if let Some(marker) = trimmed.chars().next().filter(|c| matches!(c, '`' | '~')) {
            let run = trimmed.chars().take_while(|&c| c == marker).count();
            if run >= 3 {
                match fence {
                    None => fence = Some((marker, run)),
                    Some((open, length)) if open == marker && run >= length => fence = None,
                    Some(_) => {}
                }
                continue;
            }
        }
        if fence.is_some() {
            continue;
        }
        let Some((level, text)) = atx_heading(trimmed) else {
            continue;
        };
        found += 1;
        if headings.len() < MAX_OUTLINE {
            headings.push(Heading {
                level,
                text,
                line: index as u64 + 1,
            });
        }
    }
    let note = (found > MAX_OUTLINE).then(|| {
        format!(
            "The outline lists the first {} of its {} headings.",
            crate::describe::count(MAX_OUTLINE as u64),
            crate::describe::count(found as u64)
        )
    });
    (headings, note)
}

/// A line's heading level and plain text, when it is an ATX heading with
/// some text.
fn atx_heading(line: &str) -> Option<(u8, String)> {
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let rest = &line[hashes..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let mut rest = rest.trim();
    // A closing run of `#`s after a space is not part of the text.
    let without_closing = rest.trim_end_matches('#');
    if without_closing.is_empty() || without_closing.ends_with([' ', '\t']) {
        rest = without_closing.trim_end();
    }
    let text: String = unescape(&link_texts(rest))
        .chars()
        .take(MAX_OUTLINE_TEXT)
        .collect();
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    // `hashes` is at most 6.
    Some((u8::try_from(hashes).unwrap_or(6), text.to_owned()))
}

/// Inline Markdown with each link `[text](url)` as its text alone.
fn link_texts(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut rest = markdown;
    while let Some(open) = unescaped(rest, '[') {
        let inner = &rest[open + 1..];
        let Some(close) = unescaped(inner, ']').filter(|&at| inner[at + 1..].starts_with('('))
        else {
            break;
        };
        let Some(end) = inner[close + 2..].find(')') else {
            break;
        };
        out.push_str(&rest[..open]);
        out.push_str(&inner[..close]);
        rest = &inner[close + 2 + end + 1..];
    }
    out.push_str(rest);
    out
}

/// Where `wanted` first stands in `text` without a backslash escaping it.
fn unescaped(text: &str, wanted: char) -> Option<usize> {
    let mut escaped = false;
    for (at, c) in text.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == wanted {
            return Some(at);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::to_markdown;

    #[test]
    fn a_page_without_a_type_is_recognised_by_its_start() {
        assert!(begins_like_html("\u{FEFF}  <!DOCTYPE html><html>"));
        assert!(begins_like_html("<html lang=en>"));
        assert!(!begins_like_html("plain words <html>"));
    }

    #[test]
    fn a_table_has_its_first_row_as_header_and_escapes_pipes_and_breaks() {
        let rows = vec![
            vec!["Name".to_owned(), "Note".to_owned()],
            vec!["a|b".to_owned(), "one\ntwo".to_owned()],
            vec!["short".to_owned()],
            vec![String::new(), String::new()],
        ];
        assert_eq!(
            table(&rows),
            "| Name | Note |\n| --- | --- |\n| a\\|b | one<br>two |\n| short |  |\n"
        );
        assert_eq!(table(&[]), "");
    }

    #[test]
    fn a_line_that_would_become_markdown_structure_is_escaped() {
        let cases = [
            ("# not a heading", "\\# not a heading"),
            ("- not an item", "\\- not an item"),
            ("1. not ordered", "1\\. not ordered"),
            ("> no quote", "\\> no quote"),
            ("a *starred* word_here", "a \\*starred\\* word\\_here"),
            ("1999 was a year", "1999 was a year"),
            ("plain", "plain"),
        ];
        for (line, expected) in cases {
            assert_eq!(escape_line(line), expected, "{line}");
        }
    }

    #[test]
    fn the_outline_is_the_heading_lines_outside_code_with_escapes_undone() {
        let markdown = "# One\n\ntext\n\\# escaped\n\n~~~\n# in code\n~~~\n    # indented code\n\
                        ## Two \\*starred\\* ##\n###### Six\n####### seven\n#nospace\n## C#\n\
                        # See [the site](https://example.com/a) \\[not\\](a link)\n";
        let (outline, note) = outline(markdown);
        let found: Vec<(u8, &str, u64)> = outline
            .iter()
            .map(|h| (h.level, h.text.as_str(), h.line))
            .collect();
        assert_eq!(
            found,
            vec![
                (1, "One", 1),
                (2, "Two *starred*", 10),
                (6, "Six", 11),
                (2, "C#", 14),
                (1, "See the site [not](a link)", 15)
            ]
        );
        assert_eq!(note, None);
    }

    #[test]
    fn the_outline_lists_at_most_its_cap_and_says_how_many_there_were() {
        let markdown = (0..MAX_OUTLINE + 5)
            .map(|n| format!("## Part {n}\n\n"))
            .collect::<Vec<_>>()
            .concat();
        let (outline, note) = outline(&markdown);
        assert_eq!(outline.len(), MAX_OUTLINE);
        assert_eq!(outline[MAX_OUTLINE - 1].line, 2 * MAX_OUTLINE as u64 - 1);
        assert_eq!(
            note.as_deref(),
            Some("The outline lists the first 300 of its 305 headings.")
        );
    }

    #[test]
    fn list_items_sit_together_and_blocks_are_apart() {
        let mut out = MdOut::new(1000);
        out.block("# Title");
        out.item("- one");
        out.item("- two");
        out.block("after");
        let markdown = out.finish(None, Vec::new());
        assert_eq!(markdown.text, "# Title\n\n- one\n- two\n\nafter\n");
    }

    #[test]
    fn the_markdown_is_cut_at_its_cap_with_a_note() {
        let mut out = MdOut::new(10);
        out.block("0123456789abcdef");
        assert!(out.is_full());
        let markdown = out.finish(None, Vec::new());
        assert_eq!(markdown.text, "0123456789\n");
        assert!(
            markdown.notes[0].contains("cut at 10 bytes"),
            "{markdown:?}"
        );
    }

    #[test]
    fn plain_text_and_markdown_pass_through_with_a_markdown_title() {
        let input = FileInput::new(b"intro\n# The Title\n\n- a\n", "notes.md");
        let markdown =
            to_markdown(&input, &Options::default(), &Cancel::new()).expect("text converts");
        assert_eq!(markdown.text, "intro\n# The Title\n\n- a\n");
        assert_eq!(markdown.title.as_deref(), Some("The Title"));
    }

    #[test]
    fn an_unsupported_file_says_what_extract_reads() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        let error = to_markdown(
            &FileInput::new(png, "x.png"),
            &Options::default(),
            &Cancel::new(),
        )
        .expect_err("an image has no Markdown");
        let message = error.to_string();
        assert!(
            matches!(error, ViewError::NotExtractable { .. }),
            "{error:?}"
        );
        for kind in [
            "DOCX",
            "XLSX",
            "PPTX",
            "HTML",
            "PDF",
            "plain text",
            "Markdown",
        ] {
            assert!(message.contains(kind), "{message}");
        }
    }

    #[test]
    fn a_cancelled_extract_stops_before_reading() {
        let cancel = Cancel::new();
        cancel.cancel();
        let result = to_markdown(
            &FileInput::new(b"text", "a.txt"),
            &Options::default(),
            &cancel,
        );
        assert_eq!(result, Err(ViewError::Cancelled));
    }
}
