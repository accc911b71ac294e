//! A PDF page whose text layer is missing or unreadable, read by OCR from
//! the pictures drawn on it (a scan is one picture the size of the page, or
//! a few strips of it). Each picture is read on its own, its lines placed
//! where the page draws it, and the page's lines go through the layout
//! analysis together. Vector drawings are not rendered: a page whose text
//! is drawn as paths, or in a font whose codes map to nothing, with no
//! picture on it, cannot be read this way, and its place says so.

use crate::bounds::{Cancel, Failure};
use crate::ocr::{Read, Session};
use crate::options::Options;

use super::layout;

/// `MAX_PICTURES` is the most pictures of one page read by OCR, the largest
/// first.
const MAX_PICTURES: usize = 8;

/// What OCR made of a page.
pub(super) enum Scan {
    /// The page laid out (blocks in reading order, with what is in its
    /// header and footer bands and which are headings, as for a page with
    /// a text layer) and the text's length.
    Read(layout::PageLayout, usize),
    /// Not read; the reason completes "…, and its text cannot be read (…)".
    Left(String),
}

/// Reads page `index` (numbered `number`) by OCR.
pub(super) fn page(
    document: &pdf_oxide::document::PdfDocument,
    index: usize,
    number: usize,
    session: &mut Session<'_>,
    options: &Options,
    cancel: &Cancel,
) -> Result<Scan, Failure> {
    if let Some(Read::Skipped(reason)) = session.admit(number) {
        return Ok(Scan::Left(reason));
    }
    let Ok(handles) = document.page_image_handles(index) else {
        return Ok(Scan::Left(session_skip(
            session,
            number,
            "its pictures could not be listed",
        )));
    };
    // Pictures large enough to hold text: a tenth of an inch either way.
    let mut pictures: Vec<_> = handles
        .into_iter()
        .filter(|h| {
            h.width >= 16
                && h.height >= 16
                && h.bbox.width.abs() >= 7.2
                && h.bbox.height.abs() >= 7.2
        })
        .collect();
    if pictures.is_empty() {
        return Ok(Scan::Left(session_skip(
            session,
            number,
            "the page has no picture to read by OCR",
        )));
    }
    pictures.sort_by(|a, b| {
        let area = |h: &pdf_oxide::extractors::images::PdfImageHandle<'_>| {
            (h.bbox.width * h.bbox.height).abs()
        };
        area(b).total_cmp(&area(a))
    });
    pictures.truncate(MAX_PICTURES);
    let mut pieces = Vec::new();
    let mut length = 0usize;
    let mut left = None;
    let mut found = false;
    for handle in &pictures {
        cancel.check()?;
        let pixels = u64::from(handle.width) * u64::from(handle.height);
        if pixels > options.image_decode_pixels
            || pixels.saturating_mul(4) > options.ocr_pixel_bytes.saturating_mul(8)
        {
            left = Some(format!(
                "its picture of {}×{} pixels is past what porter decodes for OCR",
                handle.width, handle.height
            ));
            continue;
        }
        let clock = std::time::Instant::now();
        let Ok(image) = handle.decode() else {
            left = Some("its picture could not be decoded".to_owned());
            continue;
        };
        let Ok(picture) = image.to_dynamic_image() else {
            left = Some("its picture could not be decoded".to_owned());
            continue;
        };
        drop(image);
        let gray = picture.to_luma8();
        drop(picture);
        session.decoded(clock.elapsed());
        let b = handle.bbox;
        let (bw, bh) = (b.width.abs(), b.height.abs());
        // Pixels per inch as drawn: the picture's pixels over its width in
        // inches (on the axis its pixels run along when drawn turned).
        let sideways = (handle.rotation_degrees.rem_euclid(180.0) - 90.0).abs() < 1.0;
        let across = if sideways { bh } else { bw };
        let ppi = handle.width as f32 / (across / 72.0);
        match session.read(number, gray, Some(ppi), cancel)? {
            Read::Text(text) => {
                found = true;
                let (left_x, top) = (b.x.min(b.x + b.width), -(b.y.max(b.y + b.height)));
                let sx = bw / text.width.max(1.0);
                let sy = bh / text.height.max(1.0);
                for line in &text.lines {
                    length += line.text.len() + 1;
                    pieces.extend(line.pieces(|x| left_x + x * sx, |y| top + y * sy));
                }
            }
            Read::NoText => {}
            Read::Skipped(reason) => {
                left = Some(reason);
                break;
            }
        }
    }
    if found {
        let extent = document
            .get_page_media_box(index)
            .ok()
            .map(|(_, low, _, high)| (-low.max(high), -low.min(high)));
        let laid = layout::page_layout(pieces, Vec::new(), &[], extent);
        return Ok(Scan::Read(laid, length));
    }
    Ok(Scan::Left(
        left.unwrap_or_else(|| "OCR found no text on it".to_owned()),
    ))
}

fn session_skip(session: &mut Session<'_>, number: usize, reason: &str) -> String {
    let _ = session.skip(number, reason);
    reason.to_owned()
}
