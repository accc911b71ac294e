//! A PDF's text, page by page, with a marker line before each page.

use crate::bounds::{Cancel, Extracted, Failure};
use crate::describe::{count, human_size};
use crate::options::Options;

/// Takes the text of each page (up to `options.pdf_pages` pages and
/// `options.office_text_bytes` of text), with a `[Page N of M]` line before
/// each page and a note on pages that have no text layer (scans).
#[cfg(feature = "pdf")]
pub(crate) fn text(
    bytes: &[u8],
    options: &Options,
    cancel: &Cancel,
) -> Result<(Extracted, usize), Failure> {
    use std::fmt::Write as _;

    let document = pdf_oxide::document::PdfDocument::from_bytes(bytes.to_vec())
        .map_err(|e| Failure::unreadable(format!("its structure could not be read ({e})")))?;
    if document.is_encrypted() && !document.is_authenticated() {
        return Err(Failure::unreadable("it is encrypted with a password"));
    }
    let pages = document
        .page_count()
        .map_err(|e| Failure::unreadable(format!("its page tree could not be read ({e})")))?;
    let mut out = Extracted::default();
    let mut scans = Vec::new();
    let shown = pages.min(options.pdf_pages);
    for index in 0..shown {
        cancel.check()?;
        let number = index + 1;
        let page_text = match document.extract_text(index) {
            Ok(text) => text,
            Err(e) => {
                let _ = writeln!(
                    out.text,
                    "[Page {number} of {pages}: its text could not be read ({e})]"
                );
                continue;
            }
        };
        let page_text = page_text.trim_matches(|c: char| c.is_whitespace());
        if page_text.is_empty() {
            let _ = writeln!(
                out.text,
                "[Page {number} of {pages}: no text layer; it may be a scan]"
            );
            scans.push(number);
            continue;
        }
        let _ = writeln!(out.text, "[Page {number} of {pages}]");
        if out.text.len() + page_text.len() > options.office_text_bytes {
            out.notes.push(format!(
                "The text was cut at {}: page {number} and those after it are not shown.",
                human_size(options.office_text_bytes as u64)
            ));
            break;
        }
        out.text.push_str(page_text);
        out.text.push('\n');
    }
    if shown < pages {
        out.notes.push(format!(
            "Only the first {} of its {} pages are read.",
            count(shown as u64),
            count(pages as u64)
        ));
    }
    if !scans.is_empty() && scans.len() == shown {
        out.notes.push(
            "No page has a text layer: it is probably scanned, and its text cannot be read."
                .to_owned(),
        );
    }
    Ok((out, pages))
}

/// Without the `pdf` feature, a PDF's text is not read.
#[cfg(not(feature = "pdf"))]
pub(crate) fn text(
    _bytes: &[u8],
    _options: &Options,
    _cancel: &Cancel,
) -> Result<(Extracted, usize), Failure> {
    Err(Failure::unreadable(
        "this build of porter has no PDF text reader",
    ))
}
