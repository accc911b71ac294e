//! A PDF's structure, page by page (headings, paragraphs, lists, tables in
//! reading order), through the layout analysis in [`layout`].

#[cfg(feature = "pdf")]
mod budget;
#[cfg(feature = "tables")]
pub(crate) mod engine;
#[cfg(feature = "pdf")]
mod glyphs;
#[cfg(any(feature = "pdf", feature = "ocr"))]
pub(crate) mod layout;
#[cfg(feature = "tables")]
mod learned;
#[cfg(all(feature = "pdf", not(feature = "tables")))]
#[path = "rules_only.rs"]
mod learned;
#[cfg(feature = "tables")]
mod raster;
#[cfg(feature = "pdf")]
mod scan;

use crate::bounds::{Cancel, Failure};
#[cfg(feature = "pdf")]
use crate::describe::{count, human_size};
#[cfg(feature = "pdf")]
use crate::document::{Block, Cell, Table};
use crate::options::Options;
#[cfg(feature = "pdf")]
use pdf_oxide::extractors::SpanMergingConfig;

/// The document in `bytes` and its page count, or why it cannot be read
/// (its structure, a password, its page tree).
#[cfg(feature = "pdf")]
fn open(bytes: &[u8]) -> Result<(pdf_oxide::document::PdfDocument, usize), Failure> {
    let document = pdf_oxide::document::PdfDocument::from_bytes(bytes.to_vec())
        .map_err(|e| Failure::unreadable(format!("its structure could not be read ({e})")))?;
    if document.is_encrypted() && !document.is_authenticated() {
        return Err(Failure::unreadable("it is encrypted with a password"));
    }
    let total = document
        .page_count()
        .map_err(|e| Failure::unreadable(format!("its page tree could not be read ({e})")))?;
    Ok((document, total))
}

/// `PDF_LAZY_PAGES` is how many pages pdf_oxide looks up one by one
/// before it loads the whole page tree (its threshold is 64 lookups).
#[cfg(feature = "pdf")]
const PDF_LAZY_PAGES: usize = 63;

/// `PDF_PAGE_PIECES` is the most pieces of text one page is analysed with;
/// a page with more is read by position alone past that many.
#[cfg(feature = "pdf")]
const PDF_PAGE_PIECES: usize = 100_000;

/// A PDF as document blocks: per page a [`Block::Page`] marker, then the
/// page's blocks in reading order, or a note for a page with no text layer
/// or whose text could not be read; with notes on what was left out. Up to
/// `options.pdf_pages` pages and `options.office_text_bytes` of text.
#[cfg(feature = "pdf")]
pub(crate) fn blocks(
    bytes: &[u8],
    options: &Options,
    cancel: &Cancel,
) -> Result<(Vec<Block>, Vec<String>), Failure> {
    let (document, total) = open(bytes)?;
    let mut shown = total.min(options.pdf_pages);
    // pdf_oxide loads every page's dictionary (about 4.5 KiB each) once a
    // document has had 64 pages looked up; a page tree past
    // `pdf_page_tree_pages` is read only below that.
    let tree_cut = total > options.pdf_page_tree_pages && shown > PDF_LAZY_PAGES;
    if tree_cut {
        shown = PDF_LAZY_PAGES;
    }
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let mut used = 0usize;
    let mut scanned = Vec::new();
    let mut laid_out = LaidOut::default();
    // Every page to be read is checked against the work limits first. The
    // library's finishing of a page's text (running headers, rotation,
    // drop capitals), which its table finder uses too, reads every page of
    // the document the first time it runs, past the page cap and past these
    // checks (100,000 pages: 600 MiB and a minute). It is used only when
    // the whole document is read and every page is within the limits;
    // otherwise each page's text is taken as its content draws it, and
    // tables are found from the text's alignment alone.
    let (verdicts, document_cut) = check_pages(&document, shown, options, cancel)?;
    shown = verdicts.len();
    let whole = shown == total && verdicts.iter().all(Option::is_none);
    let mut refused = Vec::new();
    let mut session = crate::ocr::Session::new(options);
    let mut learned = learned::Learned::new(bytes, options);
    for (index, verdict) in verdicts.into_iter().enumerate() {
        cancel.check()?;
        let number = index + 1;
        if let Some(reason) = verdict {
            refused.push(number);
            out.push(Block::Page { number, total });
            out.push(Block::Note(format!(
                "Page {number} was not read: {reason}, past what porter reads of one page."
            )));
            continue;
        }
        let pieces = match page_pieces(&document, index, whole) {
            Ok(pieces) => pieces,
            Err(e) => {
                out.push(Block::Page { number, total });
                out.push(Block::Note(format!(
                    "The text of page {number} could not be read: {e}."
                )));
                continue;
            }
        };
        let length: usize = pieces.iter().map(|p| p.text.len()).sum();
        let unreadable = pieces.is_empty()
            || crate::ocr::unreadable_text(
                &pieces.iter().map(|p| p.text.as_str()).collect::<String>(),
            );
        let left = if unreadable {
            match scan::page(&document, index, number, &mut session, options, cancel)? {
                scan::Scan::Read(laid, length) => {
                    // Laid out as any page: its running header and footer,
                    // its headings and its band are the document's too.
                    out.push(Block::Page { number, total });
                    laid_out.append(&mut out, laid, number, true);
                    used += length;
                    continue;
                }
                scan::Scan::Left(reason) => Some(reason),
            }
        } else {
            None
        };
        if let Some(reason) = left.filter(|_| pieces.is_empty()) {
            scanned.push(number);
            out.push(Block::Page { number, total });
            out.push(Block::Note(format!(
                "Page {number} has no text layer: it is probably a scanned image, and its text cannot be read ({reason})."
            )));
            continue;
        }
        if used + length > options.office_text_bytes {
            notes.push(format!(
                "The text was cut at {}: page {number} and those after it are not shown.",
                human_size(options.office_text_bytes as u64)
            ));
            break;
        }
        used += length;
        cancel.check()?;
        // pdf_oxide's table finder orders the page's text through the same
        // document-wide finishing, so it runs only when that may.
        let tables = if whole {
            page_tables(&document, index)
        } else {
            Vec::new()
        };
        out.push(Block::Page { number, total });
        let laid = lay_out(&document, index, pieces, tables, &mut learned, cancel);
        laid_out.append(&mut out, laid, number, false);
    }
    laid_out.finish(&mut out, &mut notes);
    coverage_notes(
        &mut notes,
        document_cut,
        tree_cut,
        shown,
        total,
        &refused,
        options,
    );
    if shown > 0 && scanned.len() == shown {
        notes.push(
            "No page has a text layer: it is probably scanned, and its text cannot be read."
                .to_owned(),
        );
    } else if !scanned.is_empty() {
        notes.push(format!(
            "Pages without a text layer (probably scans) whose text could not be read: {}.",
            crate::ocr::page_ranges(&scanned)
        ));
    }
    notes.extend(session.notes());
    notes.extend(learned.notes());
    Ok((out, notes))
}

/// What the document-wide passes need to know of the pages laid out, by
/// the places of their blocks in the document's blocks.
#[cfg(feature = "pdf")]
#[derive(Default)]
struct LaidOut {
    /// Blocks in a header or footer band, with their pages.
    margins: Vec<(usize, usize)>,
    /// The headings the layout found, with their sizes.
    headings: Vec<(usize, f32)>,
    /// Paragraphs in a header or footer band that would be headings
    /// elsewhere on their page, with their levels and sizes.
    band_headings: Vec<(usize, u8, f32)>,
    /// How many pages.
    pages: usize,
}

#[cfg(feature = "pdf")]
impl LaidOut {
    /// Appends page `number`'s blocks to the document's `out`, noting
    /// those in its bands, its headings and the band's would-be headings.
    /// The sizes of a page `read_by_ocr` are estimates from the boxes of
    /// its lines, a few per cent apart for the same type: a heading's is
    /// taken as that of an earlier heading within [`OCR_SIZE_SPREAD`] of
    /// it, so that the sections of a scanned report come out at one level.
    fn append(
        &mut self,
        out: &mut Vec<Block>,
        laid: layout::PageLayout,
        number: usize,
        read_by_ocr: bool,
    ) {
        self.pages += 1;
        for (((block, marginal), heading), band) in laid
            .blocks
            .into_iter()
            .zip(laid.marginal)
            .zip(laid.heading_sizes)
            .zip(laid.band_headings)
        {
            if marginal {
                self.margins.push((out.len(), number));
                if let Some((level, size)) = band {
                    self.band_headings.push((out.len(), level, size));
                }
            }
            if let Some(size) = heading {
                let size = if read_by_ocr {
                    self.headings
                        .iter()
                        .map(|&(_, earlier)| earlier)
                        .filter(|earlier| {
                            (earlier - size).abs() <= OCR_SIZE_SPREAD * size.max(*earlier)
                        })
                        .min_by(|a, b| (a - size).abs().total_cmp(&(b - size).abs()))
                        .unwrap_or(size)
                } else {
                    size
                };
                self.headings.push((out.len(), size));
            }
            out.push(block);
        }
    }

    /// The document-wide passes over `out`: band paragraphs that are a
    /// section's title made headings, the headings levelled as one outline,
    /// running headers, footers and page numbers set apart (said in
    /// `notes`).
    fn finish(mut self, out: &mut Vec<Block>, notes: &mut Vec<String>) {
        promote_band_headings(
            out,
            &self.margins,
            &self.band_headings,
            self.pages,
            &mut self.headings,
        );
        layout::document_levels(out, &self.headings);
        set_apart_running_lines(out, &self.margins, self.pages, notes);
    }
}

/// `OCR_SIZE_SPREAD` is how far apart (as a share of the larger) two sizes
/// OCR estimated can be and still be taken for one type: the estimates of
/// one type scatter by a few per cent, while the sizes a document sets its
/// heading levels in differ by a tenth or more (12, 14, 18 pt).
#[cfg(feature = "pdf")]
const OCR_SIZE_SPREAD: f32 = 0.06;

/// The pages on which each line of the header and footer bands is, by its
/// [`running_key`] (`keys`, one per entry of `margins`: the places of the
/// blocks in those bands and their pages; a block that is not text has
/// none).
#[cfg(feature = "pdf")]
fn band_lines<'a>(
    margins: &[(usize, usize)],
    keys: &'a [Option<String>],
) -> std::collections::BTreeMap<&'a str, std::collections::BTreeSet<usize>> {
    let mut on_pages: std::collections::BTreeMap<&str, std::collections::BTreeSet<usize>> =
        std::collections::BTreeMap::new();
    debug_assert_eq!(keys.len(), margins.len());
    for (key, &(_, page)) in keys.iter().zip(margins) {
        if let Some(key) = key {
            on_pages.entry(key.as_str()).or_default().insert(page);
        }
    }
    on_pages
}

/// The [`running_key`] of each block in `margins` that is text.
#[cfg(feature = "pdf")]
fn band_keys(blocks: &[Block], margins: &[(usize, usize)]) -> Vec<Option<String>> {
    margins
        .iter()
        .map(|&(at, _)| match &blocks[at] {
            Block::Paragraph(text) | Block::ListItem { text, .. } => Some(running_key(text)),
            _ => None,
        })
        .collect()
}

/// Makes headings of the band's paragraphs that would be headings anywhere
/// else on their page (`band_headings`: place, level, size), in a document
/// of several pages, where the line is on its page alone: a running head
/// or footer repeats from page to page (and a page number is a number),
/// while a section's title set at the very top of a page with a narrow top
/// margin (conference and journal classes set them there) does not. On a
/// page alone nothing tells the two apart, and the band stays text.
#[cfg(feature = "pdf")]
fn promote_band_headings(
    blocks: &mut [Block],
    margins: &[(usize, usize)],
    band_headings: &[(usize, u8, f32)],
    pages: usize,
    headings: &mut Vec<(usize, f32)>,
) {
    if pages < 2 || band_headings.is_empty() {
        return;
    }
    let keys = band_keys(blocks, margins);
    let on_pages = band_lines(margins, &keys);
    let promoted: Vec<(usize, u8, f32)> = band_headings
        .iter()
        .filter(|&&(at, _, _)| {
            let Some(Block::Paragraph(text)) = blocks.get(at) else {
                return false;
            };
            let key = running_key(text);
            !page_number_key(&key) && on_pages.get(key.as_str()).is_none_or(|p| p.len() < 2)
        })
        .copied()
        .collect();
    for (at, level, size) in promoted {
        if let Some(block) = blocks.get_mut(at)
            && let Block::Paragraph(text) = block
        {
            let text = std::mem::take(text);
            *block = Block::Heading { level, text };
            headings.push((at, size));
        }
    }
}

/// Page `index` laid out: the layout analysis of its `pieces` and ruling
/// lines (and the library's `tables`), then, with the `tables` feature, the
/// tables it found read again by the table model where one is in use (a
/// page without a table costs nothing more).
#[cfg(feature = "pdf")]
fn lay_out(
    document: &pdf_oxide::document::PdfDocument,
    index: usize,
    pieces: Vec<layout::Piece>,
    tables: Vec<layout::PlacedTable>,
    learned: &mut learned::Learned<'_>,
    cancel: &Cancel,
) -> layout::PageLayout {
    let rules = page_rules(document, index);
    let extent = page_extent(document, index);
    let words = learned.wanted().then(|| pieces.clone());
    let mut laid = layout::page_layout(pieces, tables, &rules, extent);
    if let Some(words) = words
        && laid.regions.iter().any(Option::is_some)
    {
        learned.restructure(index, &mut laid.blocks, &laid.regions, &words, cancel);
    }
    laid
}

/// Checks pages `0..shown` against the work limits: each page's verdict
/// (why it must not be read), up to the page at which the pages read would
/// pass the document's limit, and that limit's clause when one did.
#[cfg(feature = "pdf")]
fn check_pages(
    document: &pdf_oxide::document::PdfDocument,
    shown: usize,
    options: &Options,
    cancel: &Cancel,
) -> Result<(Vec<Option<String>>, Option<String>), Failure> {
    let mut budget = budget::Budget::new(document, budget::Limits::of(options));
    let mut verdicts = Vec::with_capacity(shown);
    for index in 0..shown {
        cancel.check()?;
        let verdict = budget.over(index);
        if let Some(reason) = budget.document_over() {
            return Ok((verdicts, Some(reason)));
        }
        verdicts.push(verdict);
    }
    Ok((verdicts, None))
}

/// A page's text spans as layout pieces (at most [`PDF_PAGE_PIECES`]), a
/// space drawn on its own joined to the piece before it, and a space put
/// where the page's glyphs show a word break the span lost. The spans are
/// the library's finished ones when the whole document is read (`whole`),
/// else as the content draws them (see [`blocks`]).
#[cfg(feature = "pdf")]
fn page_pieces(
    document: &pdf_oxide::document::PdfDocument,
    index: usize,
    whole: bool,
) -> Result<Vec<layout::Piece>, pdf_oxide::error::Error> {
    let spans = if whole {
        document.extract_spans(index)?
    } else {
        document.extract_spans_with_config(index, SpanMergingConfig::default())?
    };
    let glyphs = glyphs::Glyphs::of_page(document, index, PDF_PAGE_PIECES * 8);
    // Each span with its text in parts: more than one where it runs over
    // what may be a column gutter, each part with its extent on x.
    let mut drawn: Vec<(pdf_oxide::layout::TextSpan, glyphs::Parts)> = Vec::new();
    for s in spans.into_iter().take(PDF_PAGE_PIECES) {
        if s.text.trim().is_empty() {
            // A space the PDF draws on its own is the word break after
            // the piece before it.
            if let Some(last) = drawn.last_mut().and_then(|(_, parts)| parts.last_mut())
                && !last.0.ends_with(' ')
            {
                last.0.push(' ');
            }
            continue;
        }
        let whole_span = |text: String| vec![(text, s.bbox.x, s.bbox.x + s.bbox.width)];
        let parts = if s.rotation_degrees == 0.0 {
            let glyphs = glyphs.within(s.bbox.x, s.bbox.y, s.bbox.width, s.bbox.height);
            let text = glyphs::spaced_by_gaps(&s.text, &glyphs, s.font_size)
                .unwrap_or_else(|| s.text.clone());
            glyphs::split_at_gutters(&text, &glyphs, s.font_size)
                .unwrap_or_else(|| whole_span(text))
        } else {
            whole_span(s.text.clone())
        };
        drawn.push((s, parts));
    }
    // Where the page's lines of running text start and end: each span's,
    // and each part of three words or more of a span cut. A cut stays only
    // where it parts two columns of them; one between two words of a line
    // spaced wide to fill its measure is undone.
    let extents: Vec<(f32, f32)> = drawn
        .iter()
        .flat_map(|(s, parts)| {
            let whole = (s.bbox.x, s.bbox.x + s.bbox.width);
            std::iter::once(whole).chain(
                parts
                    .iter()
                    .filter(|part| parts.len() > 1 && part.0.split_whitespace().nth(2).is_some())
                    .map(|part| (part.1, part.2)),
            )
        })
        .collect();
    let mut pieces: Vec<layout::Piece> = Vec::with_capacity(drawn.len());
    for (s, parts) in drawn {
        let mut kept: glyphs::Parts = Vec::with_capacity(parts.len());
        for part in parts {
            match kept.last_mut() {
                Some(last) if !glyphs::at_gutter(last.2, part.1, &extents) => {
                    last.0.push_str(&part.0);
                    last.2 = part.2;
                }
                _ => kept.push(part),
            }
        }
        let bold = s.font_weight.is_bold() || bold_name(&s.font_name);
        for (text, x0, x1) in kept {
            pieces.push(layout::Piece {
                // PDF space grows upwards; the layout's y grows downwards.
                x0,
                y0: -(s.bbox.y + s.bbox.height),
                x1,
                y1: -s.bbox.y,
                size: s.font_size,
                bold,
                small_caps: small_caps_name(&s.font_name),
                italic: s.is_italic,
                text: without_soft_hyphens(text),
            });
        }
    }
    Ok(pieces)
}

/// `SOFT_HYPHEN` (U+00AD) marks where a word may be broken; a PDF keeps it
/// wherever its producer put it, shown or not.
#[cfg(feature = "pdf")]
const SOFT_HYPHEN: char = '\u{ad}';

/// A piece's text with its soft hyphens gone: inside a word they only mark
/// where it could break; one that ends the piece is where the word did
/// break, shown as a hyphen, which the layout joins with the next line's
/// start as it joins any word hyphenated at a line's end.
#[cfg(feature = "pdf")]
fn without_soft_hyphens(text: String) -> String {
    if !text.contains(SOFT_HYPHEN) {
        return text;
    }
    let trimmed = text.trim_end();
    let broken = trimmed.ends_with(SOFT_HYPHEN);
    let mut clean: String = trimmed.chars().filter(|&c| c != SOFT_HYPHEN).collect();
    if broken {
        clean.push('-');
    }
    clean.push_str(&text[trimmed.len()..]);
    clean
}

/// The page's extent, top to bottom, in the layout's downward y.
#[cfg(feature = "pdf")]
fn page_extent(document: &pdf_oxide::document::PdfDocument, index: usize) -> Option<(f32, f32)> {
    document
        .get_page_media_box(index)
        .ok()
        .map(|(_, low, _, high)| (-low.max(high), -low.min(high)))
}

/// The notes on which pages were read: where reading stopped and why, and
/// the pages past the limits of one page.
#[cfg(feature = "pdf")]
fn coverage_notes(
    notes: &mut Vec<String>,
    document_cut: Option<String>,
    tree_cut: bool,
    shown: usize,
    total: usize,
    refused: &[usize],
    options: &Options,
) {
    if let Some(reason) = document_cut {
        notes.push(format!(
            "Read pages 1–{} of {}: with page {}, the pages' content streams {reason}, past what porter reads of one PDF.",
            count(shown as u64),
            count(total as u64),
            count(shown as u64 + 1),
        ));
    } else if tree_cut {
        notes.push(format!(
            "Read pages 1–{} of {}: a PDF listing more than {} pages is read only that far, as reading further would load its whole page tree.",
            count(shown as u64),
            count(total as u64),
            count(options.pdf_page_tree_pages as u64)
        ));
    } else if shown < total {
        notes.push(format!(
            "Read pages 1–{} of {}: the rest are past the {} pages porter reads of one PDF.",
            count(shown as u64),
            count(total as u64),
            count(options.pdf_pages as u64)
        ));
    }
    if !refused.is_empty() {
        let list: Vec<String> = refused.iter().take(20).map(ToString::to_string).collect();
        let more = if refused.len() > 20 { ", …" } else { "" };
        notes.push(format!(
            "Pages not read because their content is past porter's limits for one page: {}{more}.",
            list.join(", ")
        ));
    }
}

/// A header or footer line as it repeats from page to page: lower case,
/// each run of digits (and each roman numeral) as `#`, spaces collapsed.
#[cfg(feature = "pdf")]
fn running_key(text: &str) -> String {
    let mut key = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !key.is_empty() {
            key.push(' ');
        }
        let lower = word.to_lowercase();
        let roman = !lower.is_empty()
            && lower.chars().all(|c| matches!(c, 'i' | 'v' | 'x'))
            && lower.len() <= 6
            && lower != "i";
        if roman {
            key.push('#');
            continue;
        }
        let mut digits = false;
        for c in lower.chars() {
            if c.is_ascii_digit() {
                if !digits {
                    key.push('#');
                }
                digits = true;
            } else {
                digits = false;
                key.push(c);
            }
        }
    }
    key
}

/// Whether a header or footer line's key is a page number alone ("#",
/// "page #", "# of #", "- # -").
#[cfg(feature = "pdf")]
fn page_number_key(key: &str) -> bool {
    key.contains('#')
        && key
            .replace("page", "")
            .replace("of", "")
            .chars()
            .all(|c| c == '#' || c.is_whitespace() || matches!(c, '-' | '–' | '|' | '/' | '.'))
}

/// Sets apart what repeats in the header and footer bands of a document of
/// several pages: page numbers are left out (the page markers number the
/// pages), and a running header or footer (on at least two pages and half
/// of those laid out, numbers aside) is kept on the first page it is on
/// only. `margins` are the places in `blocks` of the blocks in those bands
/// and their pages; a note says what was set apart.
#[cfg(feature = "pdf")]
fn set_apart_running_lines(
    blocks: &mut Vec<Block>,
    margins: &[(usize, usize)],
    pages: usize,
    notes: &mut Vec<String>,
) {
    use std::collections::{BTreeSet, HashSet};

    if pages < 2 || margins.is_empty() {
        return;
    }
    let keys = band_keys(blocks, margins);
    let on_pages = band_lines(margins, &keys);
    let running = |key: &str| {
        on_pages
            .get(key)
            .is_some_and(|p| p.len() >= 2 && p.len() * 2 >= pages)
    };
    let mut drop: HashSet<usize> = HashSet::new();
    let mut kept: BTreeSet<&str> = BTreeSet::new();
    let mut numbers = false;
    let mut lines = 0usize;
    for (key, &(at, _)) in keys.iter().zip(margins) {
        let Some(key) = key.as_deref() else { continue };
        if !running(key) {
            continue;
        }
        if page_number_key(key) {
            numbers = true;
            drop.insert(at);
        } else if !kept.insert(key) {
            drop.insert(at);
            lines += 1;
        }
    }
    if drop.is_empty() {
        return;
    }
    let mut index = 0usize;
    blocks.retain(|_| {
        let keep = !drop.contains(&index);
        index += 1;
        keep
    });
    if numbers {
        notes.push(
            "The page numbers printed at the pages' edges are left out: the page markers number the pages."
                .to_owned(),
        );
    }
    if lines > 0 {
        notes.push(format!(
            "A header or footer repeated from page to page is shown on the first page it is on only ({} repeats left out).",
            count(lines as u64)
        ));
    }
}

/// Whether a font's name marks it bold ("Arial-BoldMT", "Montserrat-Black",
/// "MyriadPro-Semibold", TeX's "CMBX12"): many PDFs give no weight, only
/// the name.
#[cfg(feature = "pdf")]
fn bold_name(name: &str) -> bool {
    // A subset prefix ("ABCDEF+") is not part of the name.
    let base = name.rsplit('+').next().unwrap_or(name).to_ascii_lowercase();
    ["bold", "black", "heavy", "demi", "semibold"]
        .iter()
        .any(|w| base.contains(w))
        || ["cmbx", "cmb1", "cmssbx", "lmbx", "lmroman10-bold"]
            .iter()
            .any(|p| base.starts_with(p))
}

/// Whether a font's name marks a small-capitals face: "Caps" or
/// "SmallCaps" in it ("LMRomanCaps10-Regular"), "SC" ending its family or
/// its style before any size ("NewTXRomanSC", "MinionPro-RegularSC",
/// "FSBraboSC-Bold"), or TeX's "CMCSC10".
/// Such a face draws lower-case letters as smaller capitals, which the
/// text keeps as lower case.
#[cfg(feature = "pdf")]
fn small_caps_name(name: &str) -> bool {
    let base = name.rsplit('+').next().unwrap_or(name);
    let lower = base.to_ascii_lowercase();
    lower.contains("caps")
        || lower.starts_with("cmcsc")
        || lower.starts_with("lmcsc")
        || base.split(['-', '_', ',']).any(|part| {
            part.trim_end_matches(|c: char| c.is_ascii_digit())
                .ends_with("SC")
        })
}

/// The ruling lines of a page: stroked straight lines, thin rectangles, and
/// the sides of stroked rectangles, axis-aligned, at most
/// [`layout::MAX_RULES`]; none when its drawing cannot be read.
#[cfg(feature = "pdf")]
fn page_rules(document: &pdf_oxide::document::PdfDocument, index: usize) -> Vec<layout::Rule> {
    const THIN: f32 = 2.0;
    let Ok(paths) = document.extract_paths(index) else {
        return Vec::new();
    };
    let mut rules = Vec::new();
    for path in paths {
        if rules.len() >= layout::MAX_RULES {
            break;
        }
        let b = path.bbox;
        // The layout's y grows downwards.
        let (x0, x1, y0, y1) = (b.x, b.x + b.width, -(b.y + b.height), -b.y);
        if !(x0.is_finite() && x1.is_finite() && y0.is_finite() && y1.is_finite()) {
            continue;
        }
        let thin_h = b.height <= THIN && b.width > THIN;
        let thin_v = b.width <= THIN && b.height > THIN;
        if thin_h || thin_v {
            if path.has_stroke() || path.has_fill() {
                rules.push(layout::Rule { x0, y0, x1, y1 });
            }
        } else if path.is_rectangle() && path.has_stroke() {
            rules.push(layout::Rule { x0, y0, x1, y1: y0 });
            rules.push(layout::Rule { x0, y0: y1, x1, y1 });
            rules.push(layout::Rule { x0, y0, x1: x0, y1 });
            rules.push(layout::Rule { x0: x1, y0, x1, y1 });
        }
    }
    rules.truncate(layout::MAX_RULES);
    rules
}

/// The tables pdf_oxide finds on a page from its ruling lines and aligned
/// text, with the regions they cover; none when it finds none or fails.
#[cfg(feature = "pdf")]
fn page_tables(
    document: &pdf_oxide::document::PdfDocument,
    index: usize,
) -> Vec<layout::PlacedTable> {
    let Ok(found) = document.extract_tables(index) else {
        return Vec::new();
    };
    found
        .into_iter()
        .filter_map(|t| {
            let bbox = t.bbox?;
            let rows: Vec<Vec<Cell>> = t
                .rows
                .into_iter()
                .map(|row| {
                    row.cells
                        .into_iter()
                        .map(|c| Cell {
                            text: c.text.split_whitespace().collect::<Vec<_>>().join(" "),
                            col_span: usize::try_from(c.colspan).unwrap_or(1).clamp(1, 1000),
                            row_span: usize::try_from(c.rowspan).unwrap_or(1).clamp(1, 1000),
                        })
                        .collect()
                })
                .collect();
            Some(layout::PlacedTable {
                x0: bbox.x,
                y0: -(bbox.y + bbox.height),
                x1: bbox.x + bbox.width,
                y1: -bbox.y,
                table: Table { rows },
            })
        })
        .collect()
}

/// Without the `pdf` feature, a PDF's structure is not read.
#[cfg(not(feature = "pdf"))]
pub(crate) fn blocks(
    _bytes: &[u8],
    _options: &Options,
    _cancel: &Cancel,
) -> Result<(Vec<crate::document::Block>, Vec<String>), Failure> {
    Err(Failure::unreadable(
        "this build of porter has no PDF text reader",
    ))
}

#[cfg(all(test, feature = "pdf"))]
mod tests {
    use super::{bold_name, small_caps_name, without_soft_hyphens};

    #[test]
    fn soft_hyphens_go_and_one_ending_a_piece_becomes_the_hyphen_of_a_broken_word() {
        let cases = [
            ("sym\u{ad}metric", "symmetric"),
            ("its trans\u{ad}", "its trans-"),
            ("its trans\u{ad} ", "its trans- "),
            ("\u{ad}", "-"),
            ("plain words", "plain words"),
            ("a well-known\u{ad}\u{ad}word", "a well-knownword"),
        ];
        for (text, expected) in cases {
            assert_eq!(without_soft_hyphens(text.to_owned()), expected, "{text:?}");
        }
    }

    #[test]
    fn a_font_name_marks_a_bold_face() {
        for bold in [
            "ABCDEF+Arial-BoldMT",
            "Montserrat-Black",
            "MyriadPro-Semibold",
            "MDLHNA+CMBX12",
            "TimesNewRomanPS-BoldItalicMT",
        ] {
            assert!(bold_name(bold), "{bold}");
        }
        for regular in ["MDLIIJ+CMR10", "Montserrat-Regular", "CMTI10", "Helvetica"] {
            assert!(!bold_name(regular), "{regular}");
        }
    }

    #[test]
    fn a_font_name_marks_a_small_capitals_face() {
        for caps in [
            "ABCDEF+CMCSC10",
            "LMRomanCaps10-Regular",
            "NewTXRomanSC",
            "MinionPro-RegularSC",
            "Garamond-SmallCaps",
            "FSBraboSC-Bold",
        ] {
            assert!(small_caps_name(caps), "{caps}");
        }
        for other in ["MDLIIJ+CMR10", "Tahoma-Disc", "Helvetica", "ABCDSC+Arial"] {
            assert!(!small_caps_name(other), "{other}");
        }
    }
}
