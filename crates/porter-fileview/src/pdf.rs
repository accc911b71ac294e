//! A PDF's text, page by page, with a marker line before each page.

use crate::bounds::{Cancel, Extracted, Failure};
#[cfg(feature = "pdf")]
use crate::describe::{count, human_size};
use crate::options::Options;

/// The text of one PDF page, as [`pages`] found it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(not(feature = "pdf"), allow(dead_code))]
pub(crate) enum PageText {
    /// The page's text, trimmed.
    Text(String),
    /// The page has no text at all: likely a scan.
    NoTextLayer,
    /// The page's text could not be read, with the reader's error.
    Unreadable(String),
}

/// `Pages` is what [`pages`] reads of a PDF: its page count, the pages read
/// in order, and notes on what was left out.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pages {
    /// How many pages the PDF has.
    pub total: usize,
    /// The pages read, from the first.
    pub read: Vec<PageText>,
    /// The page whose text passed the text cap, when one did.
    pub cut_at: Option<usize>,
    /// Whole sentences on what was left out.
    pub notes: Vec<String>,
}

/// Takes the text of each page, page by page, up to `options.pdf_pages`
/// pages and `options.office_text_bytes` of text.
#[cfg(feature = "pdf")]
pub(crate) fn pages(bytes: &[u8], options: &Options, cancel: &Cancel) -> Result<Pages, Failure> {
    let document = pdf_oxide::document::PdfDocument::from_bytes(bytes.to_vec())
        .map_err(|e| Failure::unreadable(format!("its structure could not be read ({e})")))?;
    if document.is_encrypted() && !document.is_authenticated() {
        return Err(Failure::unreadable("it is encrypted with a password"));
    }
    let total = document
        .page_count()
        .map_err(|e| Failure::unreadable(format!("its page tree could not be read ({e})")))?;
    let mut out = Pages {
        total,
        ..Pages::default()
    };
    let mut used = 0usize;
    let shown = total.min(options.pdf_pages);
    for index in 0..shown {
        cancel.check()?;
        let number = index + 1;
        let page = match document.extract_text(index) {
            Ok(text) => {
                let text = text.trim_matches(|c: char| c.is_whitespace());
                if text.is_empty() {
                    PageText::NoTextLayer
                } else if used + text.len() > options.office_text_bytes {
                    out.notes.push(format!(
                        "The text was cut at {}: page {number} and those after it are not shown.",
                        human_size(options.office_text_bytes as u64)
                    ));
                    out.cut_at = Some(number);
                    break;
                } else {
                    used += text.len();
                    PageText::Text(text.to_owned())
                }
            }
            Err(e) => PageText::Unreadable(e.to_string()),
        };
        out.read.push(page);
    }
    if shown < total {
        out.notes.push(format!(
            "Only the first {} of its {} pages are read.",
            count(shown as u64),
            count(total as u64)
        ));
    }
    if shown > 0 && out.cut_at.is_none() && out.read.iter().all(|p| *p == PageText::NoTextLayer) {
        out.notes.push(
            "No page has a text layer: it is probably scanned, and its text cannot be read."
                .to_owned(),
        );
    }
    Ok(out)
}

/// Takes the text of each page (up to `options.pdf_pages` pages and
/// `options.office_text_bytes` of text), with a `[Page N of M]` line before
/// each page and a note on pages that have no text layer (scans).
pub(crate) fn text(
    bytes: &[u8],
    options: &Options,
    cancel: &Cancel,
) -> Result<(Extracted, usize), Failure> {
    use std::fmt::Write as _;

    let pages = pages(bytes, options, cancel)?;
    let total = pages.total;
    let mut out = Extracted::default();
    for (index, page) in pages.read.iter().enumerate() {
        let number = index + 1;
        let _ = match page {
            PageText::Text(text) => writeln!(out.text, "[Page {number} of {total}]\n{text}"),
            PageText::NoTextLayer => writeln!(
                out.text,
                "[Page {number} of {total}: no text layer; it may be a scan]"
            ),
            PageText::Unreadable(e) => writeln!(
                out.text,
                "[Page {number} of {total}: its text could not be read ({e})]"
            ),
        };
    }
    if let Some(number) = pages.cut_at {
        let _ = writeln!(out.text, "[Page {number} of {total}]");
    }
    out.notes = pages.notes;
    Ok((out, total))
}

/// Without the `pdf` feature, a PDF's text is not read.
#[cfg(not(feature = "pdf"))]
pub(crate) fn pages(_bytes: &[u8], _options: &Options, _cancel: &Cancel) -> Result<Pages, Failure> {
    Err(Failure::unreadable(
        "this build of porter has no PDF text reader",
    ))
}
