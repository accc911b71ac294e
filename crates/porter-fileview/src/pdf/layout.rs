//! Layout analysis of one PDF page without a learned model: from pieces of
//! text with their boxes, fonts and sizes (and tables found from ruling
//! lines) to [`Block`]s in reading order.
//!
//! 1. Pieces on one baseline that nearly touch become line fragments; a wide
//!    gap (a column gutter, a table's column) starts a new fragment.
//! 2. Reading order by recursive XY-cut: a region splits at vertical gaps
//!    that run its whole height (columns, read left to right) when it has
//!    any, else at its widest horizontal gaps (read top to bottom). A table
//!    is one item in this order. The depth is bounded. The lines right
//!    above a table that lie over its columns (set apart by a rule or more
//!    space, so cut off from it) are its header rows, with the heads over
//!    groups of columns as spans; dot leaders are no part of a cell.
//! 3. Lines in that order join into paragraphs while they follow on (close
//!    below, overlapping, same size and weight); a bullet or a number starts
//!    a list item; a hyphen at a line's end before a lower-case word joins.
//! 4. A short block set larger than the page's body text, or bold where the
//!    body is not, or numbered like a section ("3.", "9.5.", "Chapter 2")
//!    and set apart, is a heading; levels follow the size rank.
//!
//! Coordinates are points with y growing downwards (top of the page 0).

use crate::document::{Block, Cell, Table};

/// One piece of text as the PDF placed it.
#[derive(Debug, Clone)]
pub(crate) struct Piece {
    pub text: String,
    pub x0: f32,
    pub y0: f32,
    pub x1: f32,
    pub y1: f32,
    /// Font size in points.
    pub size: f32,
    pub bold: bool,
    /// Whether its font is a small-capitals face (by its name): its
    /// lower-case letters show as smaller capitals, so a section title set
    /// in it ("Introduction") reads as capitals on the page.
    pub small_caps: bool,
    /// Whether it is set in an italic or oblique face.
    pub italic: bool,
}

/// A table found on the page, with the region it covers.
#[derive(Debug, Clone)]
pub(crate) struct PlacedTable {
    pub x0: f32,
    pub y0: f32,
    pub x1: f32,
    pub y1: f32,
    pub table: Table,
}

/// A ruling line: horizontal or vertical, as drawn (a stroked line, a thin
/// filled rectangle, or a side of a stroked rectangle).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rule {
    pub x0: f32,
    pub y0: f32,
    pub x1: f32,
    pub y1: f32,
}

/// `MAX_RULES` is the most ruling lines one page's table search looks at
/// (the search compares every pair).
pub(crate) const MAX_RULES: usize = 2000;

/// `MAX_OPEN` is how many of the latest line fragments a piece may join:
/// pieces come sorted by position, so its line is among them, and a page of
/// many pieces side by side costs no more than this per piece.
const MAX_OPEN: usize = 256;

/// The narrowest column gutter the XY-cut splits a region at, in body text
/// sizes: a gap this wide down the whole region (a word space is about a
/// quarter of the size and never lines up down a region).
const GUTTER: f32 = 0.4;

/// How deep the XY-cut recursion goes; deeper regions are read by position.
const MAX_DEPTH: usize = 48;

#[derive(Debug, Clone, Copy)]
struct BoxF {
    x0: f32,
    y0: f32,
    x1: f32,
    y1: f32,
}

impl BoxF {
    fn height(&self) -> f32 {
        self.y1 - self.y0
    }
    fn union(&mut self, other: &BoxF) {
        self.x0 = self.x0.min(other.x0);
        self.y0 = self.y0.min(other.y0);
        self.x1 = self.x1.max(other.x1);
        self.y1 = self.y1.max(other.y1);
    }
}

/// A line fragment: pieces on one baseline, close together.
#[derive(Debug, Clone)]
struct Fragment {
    text: String,
    bbox: BoxF,
    /// The largest font size in it, and how many of its characters are bold
    /// out of how many.
    size: f32,
    /// The smallest font size in it: small capitals set a line's initials
    /// larger than the rest.
    min_size: f32,
    bold_chars: usize,
    /// How many of its characters are set in a small-capitals face, and
    /// how many in an italic one.
    small_caps_chars: usize,
    italic_chars: usize,
    chars: usize,
    /// Whether its last piece ended in a space (the PDF's own word break).
    spaced: bool,
    /// Its pieces as the PDF drew them: where each starts and ends on x,
    /// and its text (a table's header drawn cell by cell is split again
    /// along the columns found below it).
    parts: Vec<(f32, f32, String)>,
}

/// What the XY-cut orders: a fragment, a table, or a chart's text.
#[derive(Debug, Clone)]
enum Item {
    Text(Fragment),
    Table(Table, BoxF),
    Figure(String, BoxF),
}

impl Item {
    fn bbox(&self) -> BoxF {
        match self {
            Item::Text(f) => f.bbox,
            Item::Table(_, b) | Item::Figure(_, b) => *b,
        }
    }
}

/// The blocks of one page, in reading order. `page` is the page's extent
/// from top to bottom (y growing downwards), when known.
#[cfg(test)]
pub(crate) fn page_blocks(
    pieces: Vec<Piece>,
    tables: Vec<PlacedTable>,
    rules: &[Rule],
    page: Option<(f32, f32)>,
) -> Vec<Block> {
    page_layout(pieces, tables, rules, page).blocks
}

/// A table's region on the page: left, top, right, bottom (y downwards).
pub(crate) type Region = [f32; 4];

/// One page laid out: its blocks and what each needs of the document's
/// later passes, one entry per block (OCR's pages take the blocks only).
#[cfg_attr(not(feature = "pdf"), allow(dead_code))]
pub(crate) struct PageLayout {
    /// The page's blocks in reading order.
    pub blocks: Vec<Block>,
    /// Whether each lies wholly in the page's header or footer band (a
    /// running header, footer or page number, when it repeats across pages).
    pub marginal: Vec<bool>,
    /// The region each table covers, for the table model to read again.
    pub regions: Vec<Option<Region>>,
    /// The size each heading is set in, for its level among all the
    /// document's headings ([`document_levels`]).
    pub heading_sizes: Vec<Option<f32>>,
    /// For a paragraph in the header or footer band that would be a
    /// heading anywhere else on the page (a section's title at the top of
    /// a page with a narrow top margin), its level and size: a document of
    /// several pages takes it as a heading when it does not repeat from
    /// page to page as a running head does.
    pub band_headings: Vec<Option<(u8, f32)>>,
}

/// The blocks of one page, in reading order, with what each needs of the
/// document's later passes ([`PageLayout`]). `page` is the page's extent
/// from top to bottom (y growing downwards), when known.
pub(crate) fn page_layout(
    pieces: Vec<Piece>,
    tables: Vec<PlacedTable>,
    rules: &[Rule],
    page: Option<(f32, f32)>,
) -> PageLayout {
    let body = body_size(&pieces);
    // Grids of ruling lines first; the library's tables where there is none.
    let mut grids = ruled_tables(rules, &pieces, &[]);
    let others: Vec<PlacedTable> = tables
        .into_iter()
        .filter(|t| {
            !grids
                .iter()
                .any(|g| t.x0 < g.x1 && g.x0 < t.x1 && t.y0 < g.y1 && g.y0 < t.y1)
        })
        .collect();
    grids.extend(others);
    let tables = grids;
    let page = page
        .filter(|(top, bottom)| bottom > top)
        .unwrap_or_else(|| {
            let top = pieces.iter().map(|p| p.y0).fold(f32::INFINITY, f32::min);
            let bottom = pieces
                .iter()
                .map(|p| p.y1)
                .fold(f32::NEG_INFINITY, f32::max);
            (top, bottom)
        });
    let (inside, outside): (Vec<Piece>, Vec<Piece>) = pieces.into_iter().partition(|p| {
        let (cx, cy) = (f32::midpoint(p.x0, p.x1), f32::midpoint(p.y0, p.y1));
        tables
            .iter()
            .any(|t| cx >= t.x0 && cx <= t.x1 && cy >= t.y0 && cy <= t.y1)
    });
    let columns: Vec<(BoxF, Vec<(f32, f32)>)> = tables
        .iter()
        .map(|t| {
            let bbox = BoxF {
                x0: t.x0,
                y0: t.y0,
                x1: t.x1,
                y1: t.y1,
            };
            (bbox, text_columns(&inside, &bbox, &t.table, body))
        })
        .collect();
    drop(inside);
    let mut items: Vec<Item> = fragments(outside, body)
        .into_iter()
        .map(Item::Text)
        .collect();
    for t in tables {
        let bbox = BoxF {
            x0: t.x0,
            y0: t.y0,
            x1: t.x1,
            y1: t.y1,
        };
        items.push(Item::Table(t.table, bbox));
    }
    let mut ordered = Vec::with_capacity(items.len());
    xy_cut(items, body, 0, &mut ordered);
    // The lines right above a table found before the XY-cut (by its rules,
    // or by the library) that lie over its columns are its header rows.
    let mut headed = Vec::with_capacity(ordered.len());
    for item in ordered {
        match item {
            Item::Table(mut table, mut bbox) => {
                // The very box it was placed with (copied, never computed).
                let bits = |b: &BoxF| [b.x0, b.y0, b.x1, b.y1].map(f32::to_bits);
                let known = columns.iter().find(|(b, _)| bits(b) == bits(&bbox));
                if let Some((_, known)) = known
                    && !known.is_empty()
                {
                    header_bands(&mut headed, &mut table, &mut bbox, known);
                }
                headed.push(Item::Table(table, bbox));
            }
            other => headed.push(other),
        }
    }
    let mut laid = blocks(headed, body, page);
    for block in &mut laid.blocks {
        if let Block::Table(table) = block {
            for cell in table.rows.iter_mut().flatten() {
                drop_leaders(&mut cell.text);
            }
        }
    }
    laid
}

/// The columns of a table found before the XY-cut, from the text inside
/// its region (`bbox`): the pieces' extents on x, joined where they
/// overlap or lie closer than a word space; none unless they make as many
/// columns as the table has.
fn text_columns(pieces: &[Piece], bbox: &BoxF, table: &Table, body: f32) -> Vec<(f32, f32)> {
    let mut spans: Vec<(f32, f32)> = pieces
        .iter()
        .filter(|p| {
            let (cx, cy) = (f32::midpoint(p.x0, p.x1), f32::midpoint(p.y0, p.y1));
            cx >= bbox.x0 && cx <= bbox.x1 && cy >= bbox.y0 && cy <= bbox.y1
        })
        .map(|p| (p.x0, p.x1))
        .collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut columns: Vec<(f32, f32)> = Vec::new();
    for (x0, x1) in spans {
        match columns.last_mut() {
            Some(last) if x0 - last.1 < 0.6 * body => last.1 = last.1.max(x1),
            _ => columns.push((x0, x1)),
        }
    }
    let count = table
        .rows
        .iter()
        .map(|r| r.iter().map(|c| c.col_span).sum::<usize>())
        .max()
        .unwrap_or(0);
    if columns.len() == count {
        columns
    } else {
        Vec::new()
    }
}

/// Positions closer than this (points) are one ruling position.
const SNAP: f32 = 2.0;

/// Tables drawn as grids of ruling lines: lines that touch one another form
/// a grid; its distinct horizontal and vertical positions are the row and
/// column boundaries, and the text in each cell is that cell's. A grid that
/// overlaps a table already found, has fewer than two rows or columns, or
/// holds text in fewer than two cells (a box around text, a form) is left.
fn ruled_tables(rules: &[Rule], pieces: &[Piece], found: &[PlacedTable]) -> Vec<PlacedTable> {
    let rules = &rules[..rules.len().min(MAX_RULES)];
    let mut out = Vec::new();
    for members in touching_groups(rules) {
        let mut ys: Vec<f32> = Vec::new();
        let mut xs: Vec<f32> = Vec::new();
        for &i in &members {
            let r = &rules[i];
            if r.y1 - r.y0 <= SNAP {
                ys.push(f32::midpoint(r.y0, r.y1));
            } else {
                xs.push(f32::midpoint(r.x0, r.x1));
            }
        }
        let ys = snapped(ys);
        let xs = snapped(xs);
        if ys.len() < 3 || xs.len() < 3 {
            continue;
        }
        let (x0, x1, y0, y1) = (xs[0], xs[xs.len() - 1], ys[0], ys[ys.len() - 1]);
        let overlaps = found
            .iter()
            .any(|t| t.x0 < x1 && x0 < t.x1 && t.y0 < y1 && y0 < t.y1);
        if overlaps {
            continue;
        }
        let (rows, columns) = (ys.len() - 1, xs.len() - 1);
        let mut cells: Vec<Vec<Vec<Piece>>> = vec![vec![Vec::new(); columns]; rows];
        for p in pieces {
            let (cx, cy) = (f32::midpoint(p.x0, p.x1), f32::midpoint(p.y0, p.y1));
            if cx < x0 || cx > x1 || cy < y0 || cy > y1 {
                continue;
            }
            let r = ys.iter().filter(|y| **y < cy).count().clamp(1, rows) - 1;
            let c = xs.iter().filter(|x| **x < cx).count().clamp(1, columns) - 1;
            cells[r][c].push(p.clone());
        }
        let filled = cells.iter().flatten().filter(|c| !c.is_empty()).count();
        if filled < 2 {
            continue;
        }
        // Rows of text in several columns of one ruled row: the rows are not
        // ruled one by one, so the grid does not give them; leave it to the
        // other table readers.
        let merged_rows = cells
            .iter()
            .any(|row| row.iter().filter(|cell| text_rows(cell) >= 4).count() >= 3);
        if merged_rows {
            continue;
        }
        let body = body_size(pieces);
        let lines: Vec<&Rule> = members.iter().map(|&i| &rules[i]).collect();
        let table_rows = spanned_cells(&lines, &ys, &xs, cells, body);
        let rows = table_rows;
        out.push(PlacedTable {
            x0,
            y0,
            x1,
            y1,
            table: Table { rows },
        });
    }
    out
}

/// The rules that touch one another (within [`SNAP`]), as groups of
/// indexes: a union-find over every pair.
fn touching_groups(rules: &[Rule]) -> Vec<Vec<usize>> {
    let n = rules.len();
    // Union-find over touching lines.
    let mut parent: Vec<usize> = (0..n).collect();
    for i in 0..n {
        for j in (i + 1)..n {
            let (a, b) = (&rules[i], &rules[j]);
            let touch = a.x0 <= b.x1 + SNAP
                && b.x0 <= a.x1 + SNAP
                && a.y0 <= b.y1 + SNAP
                && b.y0 <= a.y1 + SNAP;
            if touch {
                let (ri, rj) = (root(&mut parent, i), root(&mut parent, j));
                if ri != rj {
                    parent[ri] = rj;
                }
            }
        }
    }
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    for i in 0..n {
        let r = root(&mut parent, i);
        match groups.iter_mut().find(|(k, _)| *k == r) {
            Some((_, members)) => members.push(i),
            None => groups.push((r, vec![i])),
        }
    }
    groups.into_iter().map(|(_, members)| members).collect()
}

/// The cells of a ruled grid with rows at `ys` and columns at `xs`, each
/// with the text of the pieces inside it (`cells`, by row and column).
fn spanned_cells(
    lines: &[&Rule],
    ys: &[f32],
    xs: &[f32],
    mut cells: Vec<Vec<Vec<Piece>>>,
    body: f32,
) -> Vec<Vec<Cell>> {
    let (rows, columns) = (ys.len() - 1, xs.len() - 1);
    // A cell whose right side has no rule drawn spans into the next
    // column; one whose lower side has none spans into the row below
    // when that row has no text of its own there.
    let ruled_v = |x: f32, y: f32| {
        lines.iter().any(|l| {
            l.y1 - l.y0 > SNAP
                && (f32::midpoint(l.x0, l.x1) - x).abs() <= SNAP
                && l.y0 <= y
                && y <= l.y1
        })
    };
    let ruled_h = |y: f32, x: f32| {
        lines.iter().any(|l| {
            l.y1 - l.y0 <= SNAP
                && (f32::midpoint(l.y0, l.y1) - y).abs() <= SNAP
                && l.x0 <= x
                && x <= l.x1
        })
    };
    let mut covered = vec![vec![false; columns]; rows];
    let mut table_rows: Vec<Vec<Cell>> = Vec::with_capacity(rows);
    for r in 0..rows {
        let mut row = Vec::new();
        for c in 0..columns {
            if covered[r][c] {
                continue;
            }
            let middle_y = f32::midpoint(ys[r], ys[r + 1]);
            let middle_x = f32::midpoint(xs[c], xs[c + 1]);
            let mut col_span = 1;
            while c + col_span < columns
                && !covered[r][c + col_span]
                && !ruled_v(xs[c + col_span], middle_y)
            {
                col_span += 1;
            }
            let mut row_span = 1;
            while r + row_span < rows
                && !ruled_h(ys[r + row_span], middle_x)
                && (c..c + col_span).all(|k| cells[r + row_span][k].is_empty())
            {
                row_span += 1;
            }
            let mut inside: Vec<Piece> = Vec::new();
            for line in covered.iter_mut().skip(r).take(row_span) {
                for place in line.iter_mut().skip(c).take(col_span) {
                    *place = true;
                }
            }
            for cell in cells.iter_mut().skip(r).take(row_span) {
                for place in cell.iter_mut().skip(c).take(col_span) {
                    inside.append(place);
                }
            }
            let mut text = String::new();
            for f in fragments(inside, body) {
                join_line(&mut text, &f.text);
            }
            row.push(Cell {
                text,
                col_span,
                row_span,
            });
        }
        table_rows.push(row);
    }
    table_rows
}

/// How many rows of text some pieces make: their middles, top to bottom,
/// with a new row wherever one lies more than half a size below the last.
fn text_rows(pieces: &[Piece]) -> usize {
    let mut middles: Vec<(f32, f32)> = pieces
        .iter()
        .map(|p| (f32::midpoint(p.y0, p.y1), p.size))
        .collect();
    middles.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut rows = 0usize;
    let mut last = f32::NEG_INFINITY;
    for (middle, size) in middles {
        if middle - last > 0.5 * size {
            rows += 1;
            last = middle;
        }
    }
    rows
}

/// The representative of `i` in a union-find forest.
fn root(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

/// Positions sorted, with those closer than [`SNAP`] taken as one.
fn snapped(mut values: Vec<f32>) -> Vec<f32> {
    values.sort_by(f32::total_cmp);
    let mut out: Vec<f32> = Vec::new();
    for v in values {
        if out.last().is_none_or(|last| v - last > SNAP) {
            out.push(v);
        }
    }
    out
}

/// The page's body text size: the size most characters are set in.
fn body_size(pieces: &[Piece]) -> f32 {
    let mut counts: std::collections::BTreeMap<i32, usize> = std::collections::BTreeMap::new();
    for p in pieces {
        #[allow(clippy::cast_possible_truncation)]
        let key = (p.size * 2.0).round() as i32;
        let n = p.text.chars().filter(|c| !c.is_whitespace()).count();
        *counts.entry(key).or_default() += n;
    }
    counts
        .iter()
        .max_by_key(|(k, c)| (**c, std::cmp::Reverse(**k)))
        .map_or(10.0, |(k, _)| {
            #[allow(clippy::cast_precision_loss)]
            let size = *k as f32 / 2.0;
            size
        })
        .max(1.0)
}

/// Whether a text is a list bullet on its own: a bullet symbol or dash, or
/// one glyph a symbol font maps to a control or private-use code (as the
/// bullets of Symbol and Wingdings fonts often are).
fn is_bullet(text: &str) -> bool {
    let t = text.trim();
    let mut chars = t.chars();
    if let (Some(c), None) = (t.chars().next(), t.chars().nth(1))
        && (c.is_control() || ('\u{e000}'..='\u{f8ff}').contains(&c))
    {
        return true;
    }
    matches!(
        (chars.next(), chars.next()),
        (
            Some(
                '•' | '◦'
                    | '▪'
                    | '▫'
                    | '●'
                    | '○'
                    | '■'
                    | '□'
                    | '◆'
                    | '◇'
                    | '➢'
                    | '➤'
                    | '►'
                    | '▶'
                    | '‣'
                    | '⁃'
                    | '∙'
                    | '·'
                    | '✓'
                    | '✔'
                    | '-'
                    | '–'
                    | '*'
                    | '\u{f0b7}'
                    | '\u{f0a7}'
                    | '\u{f0d8}'
                    | '\u{f0fc}'
            ),
            None
        )
    )
}

/// Narrows a piece's box by the spaces it starts or ends with (a PDF often
/// draws a word's space with it), at its average character width, so that
/// gaps between boxes are the gaps between their words: a space as wide
/// as an average character, at most a third of the size.
fn trim_spaces(p: &mut Piece) {
    let chars = p.text.chars().count();
    let leading = p.text.chars().take_while(|c| c.is_whitespace()).count();
    let trailing = p
        .text
        .chars()
        .rev()
        .take_while(|c| c.is_whitespace())
        .count();
    if chars == 0 || leading + trailing == 0 || leading + trailing >= chars {
        return;
    }
    // A space is about a quarter to a third of the text size wide.
    #[allow(clippy::cast_precision_loss)]
    let each = ((p.x1 - p.x0) / chars as f32).min(0.3 * p.size);
    #[allow(clippy::cast_precision_loss)]
    {
        p.x0 += each * leading as f32;
        p.x1 -= each * trailing as f32;
    }
}

/// Groups pieces into line fragments.
fn fragments(mut pieces: Vec<Piece>, body: f32) -> Vec<Fragment> {
    pieces.retain(|p| !p.text.trim().is_empty() && p.x1 >= p.x0 && p.y1 >= p.y0);
    for p in &mut pieces {
        trim_spaces(p);
    }
    pieces.sort_by(|a, b| {
        let ca = f32::midpoint(a.y0, a.y1);
        let cb = f32::midpoint(b.y0, b.y1);
        ca.total_cmp(&cb).then(a.x0.total_cmp(&b.x0))
    });
    let mut out: Vec<Fragment> = Vec::new();
    // Fragments still open to more pieces: those whose line is near.
    let mut open: Vec<usize> = Vec::new();
    for p in pieces {
        let pb = BoxF {
            x0: p.x0,
            y0: p.y0,
            x1: p.x1,
            y1: p.y1,
        };
        let pc = f32::midpoint(p.y0, p.y1);
        open.retain(|&i| out[i].bbox.y1 + out[i].size >= p.y0);
        let mut best: Option<(usize, f32)> = None;
        for &i in &open {
            let f = &out[i];
            let overlap = f.bbox.y1.min(pb.y1) - f.bbox.y0.max(pb.y0);
            let smaller = f.bbox.height().min(pb.height()).max(0.1);
            if overlap < 0.5 * smaller {
                continue;
            }
            let gap = pb.x0 - f.bbox.x1;
            let size = f.size.max(p.size);
            // A bullet or item number reaches further to its text, but not
            // to a figure: "24.5" and "99.8", or "(12)" and "40", side by
            // side are two values of a table's row, and joined they would
            // make one wide cell across two columns.
            let marks = is_bullet(&f.text) || is_marker(&f.text) || is_number(&f.text);
            let reach = if marks && !opens_with_figure(&p.text) {
                3.0 * size
            } else {
                // Less than a column gutter, which can be as narrow as
                // two thirds of the text size; more than a word space.
                f.size.min(p.size).max(body * 0.5) * 0.6
            };
            if gap > reach || gap < -0.6 * size || pc < f.bbox.y0 - size {
                continue;
            }
            let score = gap.abs();
            if best.is_none_or(|(_, s)| score < s) {
                best = Some((i, score));
            }
        }
        let n = p.text.chars().filter(|c| !c.is_whitespace()).count();
        let bold = if p.bold { n } else { 0 };
        let small_caps = if p.small_caps { n } else { 0 };
        let italic = if p.italic { n } else { 0 };
        if let Some((i, _)) = best {
            let f = &mut out[i];
            let gap = pb.x0 - f.bbox.x1;
            let space = gap > 0.1 * p.size.min(f.size)
                || f.spaced
                || p.text.starts_with(char::is_whitespace);
            if space && !f.text.ends_with(' ') {
                f.text.push(' ');
            }
            f.text.push_str(p.text.trim());
            f.bbox.union(&pb);
            f.size = f.size.max(p.size);
            f.min_size = f.min_size.min(p.size);
            f.chars += n;
            f.bold_chars += bold;
            f.small_caps_chars += small_caps;
            f.italic_chars += italic;
            f.spaced = p.text.ends_with(char::is_whitespace);
            f.parts.push((pb.x0, pb.x1, p.text.trim().to_owned()));
        } else {
            out.push(Fragment {
                text: p.text.trim().to_owned(),
                bbox: pb,
                size: p.size,
                min_size: p.size,
                bold_chars: bold,
                small_caps_chars: small_caps,
                italic_chars: italic,
                chars: n,
                spaced: p.text.ends_with(char::is_whitespace),
                parts: vec![(pb.x0, pb.x1, p.text.trim().to_owned())],
            });
            open.push(out.len() - 1);
            if open.len() > MAX_OPEN {
                open.drain(..open.len() - MAX_OPEN);
            }
        }
    }
    // Words collapse to single spaces.
    for f in &mut out {
        if f.text.contains("  ") {
            f.text = f.text.split_whitespace().collect::<Vec<_>>().join(" ");
        }
    }
    out
}

/// Whether a text is an ordered-list marker on its own: "1.", "12)", "a)",
/// "(iv)", "A.".
fn is_marker(text: &str) -> bool {
    let t = text.trim();
    let inner = t
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .or_else(|| t.strip_suffix('.'))
        .or_else(|| t.strip_suffix(')'));
    inner.is_some_and(|s| {
        !s.is_empty()
            && (s.len() <= 3 && s.chars().all(|c| c.is_ascii_digit())
                || s.len() == 1 && s.chars().all(|c| c.is_ascii_alphabetic())
                || s.len() <= 4 && s.chars().all(|c| matches!(c, 'i' | 'v' | 'x')))
    })
}

/// Whether a text starts as a figure does: a digit, after a currency
/// sign, an opening parenthesis, a sign or a decimal point, if any ("12",
/// "$4", "(1,204)", "-3.5", ".75").
fn opens_with_figure(text: &str) -> bool {
    text.trim_start()
        .trim_start_matches(['$', '£', '€', '(', '-', '+', '−', '–', '.'])
        .starts_with(|c: char| c.is_ascii_digit())
}

/// Whether a text is a section number on its own: "1.3", "4.2.", "12".
fn is_number(text: &str) -> bool {
    let t = text.trim();
    t.len() <= 9 && section_number(t)
}

/// Whether a word is a section number: digits and dots ("3.", "9.5.",
/// "1.3"), each part at most two digits, optionally after one capital and a
/// dot ("B.3", "A.1.2").
fn section_number(word: &str) -> bool {
    let rest = match word.as_bytes() {
        [first, b'.', second, ..] if first.is_ascii_uppercase() && second.is_ascii_digit() => {
            &word[2..]
        }
        _ => word,
    };
    rest.starts_with(|c: char| c.is_ascii_digit())
        && rest.chars().all(|c| c.is_ascii_digit() || c == '.')
        && rest
            .split('.')
            .filter(|s| !s.is_empty())
            .all(|s| s.len() <= 2)
}

/// A table read from aligned text, the region it covers, and its columns'
/// extents on x, left to right.
type Aligned = (Table, BoxF, Vec<(f32, f32)>);

/// A table read from text aligned in columns: `groups` are the columns an
/// x-cut found; when the rows line up across them and they are not columns
/// of running text, the table with its region. A row whose first column is
/// empty and that sits right under the row before continues that row's
/// cells (multi-line cells).
fn aligned_table(groups: &[Vec<Item>], body: f32) -> Option<Aligned> {
    let mut region: Option<BoxF> = None;
    let mut spans: Vec<(f32, f32)> = Vec::with_capacity(groups.len());
    let mut prose = 0usize;
    let mut cells: Vec<(usize, &Fragment)> = Vec::new();
    for (column, group) in groups.iter().enumerate() {
        let mut x = (f32::INFINITY, f32::NEG_INFINITY);
        for item in group {
            let Item::Text(f) = item else { return None };
            x = (x.0.min(f.bbox.x0), x.1.max(f.bbox.x1));
            cells.push((column, f));
            match region.as_mut() {
                Some(r) => r.union(&f.bbox),
                None => region = Some(f.bbox),
            }
        }
        spans.push(x);
    }
    let region = region?;
    let width = (region.x1 - region.x0).max(1.0);
    for (group, (x0, x1)) in groups.iter().zip(&spans) {
        let column = (x1 - x0).max(1.0);
        let wide = group
            .iter()
            .filter(|i| {
                let b = i.bbox();
                b.x1 - b.x0 >= 0.75 * column
            })
            .count();
        let words: usize = group
            .iter()
            .map(|i| match i {
                Item::Text(f) => f.text.split_whitespace().count(),
                Item::Table(..) | Item::Figure(..) => 0,
            })
            .sum();
        let n = group.len();
        if n >= 3 && column >= 0.25 * width && (wide * 10 >= n * 6 || words >= 6 * n)
            || wrapped_run(group, column) >= 3
        {
            prose += 1;
        }
    }
    if prose >= 2 || (groups.len() == 2 && prose == 1) {
        return None;
    }
    // Rows: fragments whose vertical extents overlap.
    cells.sort_by(|a, b| a.1.bbox.y0.total_cmp(&b.1.bbox.y0));
    let mut bands: Vec<(BoxF, Vec<(usize, &Fragment)>)> = Vec::new();
    for (column, f) in cells {
        let joins = bands
            .last()
            .is_some_and(|(b, _)| f.bbox.y0 < b.y1 - 0.3 * f.bbox.height().min(b.height()));
        if joins && let Some((b, members)) = bands.last_mut() {
            b.union(&f.bbox);
            members.push((column, f));
        } else {
            bands.push((f.bbox, vec![(column, f)]));
        }
    }
    let shared = bands
        .iter()
        .filter(|(_, m)| {
            let first = m[0].0;
            m.iter().any(|(c, _)| *c != first)
        })
        .count();
    if bands.len() < 2 || shared < 2 || shared * 2 < bands.len() {
        return None;
    }
    let columns = groups.len();
    let mut rows: Vec<(BoxF, Vec<String>)> = Vec::new();
    for (bbox, mut members) in bands {
        members.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.bbox.x0.total_cmp(&b.1.bbox.x0)));
        let mut texts = vec![String::new(); columns];
        for (c, f) in members {
            if !texts[c].is_empty() {
                texts[c].push(' ');
            }
            texts[c].push_str(&f.text);
        }
        let continues = rows.last().is_some_and(|(last, previous)| {
            texts[0].is_empty() && !previous[0].is_empty() && bbox.y0 - last.y1 < 0.6 * body
        });
        if continues && let Some((last, previous)) = rows.last_mut() {
            for (cell, more) in previous.iter_mut().zip(texts) {
                if !more.is_empty() {
                    join_line(cell, &more);
                }
            }
            last.union(&bbox);
        } else {
            rows.push((bbox, texts));
        }
    }
    // Text aligned in columns but mostly empty is a chart's labels (an axis,
    // values over bars) or scattered notes, not a table.
    let filled = rows
        .iter()
        .flat_map(|(_, texts)| texts)
        .filter(|t| !t.is_empty())
        .count();
    if filled * 2 < rows.len() * columns {
        return None;
    }
    let table = Table {
        rows: rows
            .into_iter()
            .map(|(_, texts)| {
                texts
                    .into_iter()
                    .map(|text| Cell {
                        text,
                        col_span: 1,
                        row_span: 1,
                    })
                    .collect()
            })
            .collect(),
    };
    Some((table, region, spans))
}

/// The text of a chart, when `groups` (columns an x-cut found, that were
/// no table) hold one: short labels only, and numbers that step evenly in
/// even steps down a column or along a row (an axis: "0 10 20 30"). The
/// text is read row by row.
fn chart_text(groups: &[Vec<Item>]) -> Option<(String, BoxF)> {
    let mut fragments: Vec<&Fragment> = Vec::new();
    for group in groups {
        for item in group {
            let Item::Text(f) = item else { return None };
            if f.text.split_whitespace().count() > 8 {
                return None;
            }
            fragments.push(f);
            if fragments.len() > MAX_CHART_LABELS {
                return None;
            }
        }
    }
    let numbers: Vec<(&Fragment, f64)> = fragments
        .iter()
        .filter_map(|f| axis_number(&f.text).map(|v| (*f, v)))
        .collect();
    let down = groups.iter().any(|group| {
        let ticks: Vec<(f32, f64)> = group
            .iter()
            .filter_map(|i| match i {
                Item::Text(f) => {
                    axis_number(&f.text).map(|v| (f32::midpoint(f.bbox.y0, f.bbox.y1), v))
                }
                _ => None,
            })
            .collect();
        even_steps(ticks)
    });
    let along = numbers.iter().any(|(f, _)| {
        let middle = f32::midpoint(f.bbox.y0, f.bbox.y1);
        let ticks: Vec<(f32, f64)> = numbers
            .iter()
            .filter(|(g, _)| (f32::midpoint(g.bbox.y0, g.bbox.y1) - middle).abs() < 0.5 * f.size)
            .map(|(g, v)| (f32::midpoint(g.bbox.x0, g.bbox.x1), *v))
            .collect();
        even_steps(ticks)
    });
    if !down && !along {
        return None;
    }
    let items: Vec<Item> = groups.iter().flatten().cloned().collect();
    let mut bbox = items.first()?.bbox();
    let mut text = String::new();
    for item in by_rows(items) {
        bbox.union(&item.bbox());
        if let Item::Text(f) = item {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(&f.text);
        }
    }
    Some((text, bbox))
}

/// `MAX_CHART_LABELS` is the most pieces of text a chart is looked for in
/// (each of its numbers is compared with the others on its row).
const MAX_CHART_LABELS: usize = 1000;

/// A label that is one number, as a chart's axis writes it ("40", "1,000",
/// "20%", "$5", "-10").
fn axis_number(text: &str) -> Option<f64> {
    let t = text.trim();
    let t = t.strip_suffix('%').unwrap_or(t);
    let t = t.strip_prefix(['$', '€', '£']).unwrap_or(t);
    if t.is_empty() || t.len() > 12 || !t.chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    t.replace(',', "").parse::<f64>().ok()
}

/// Whether at least four numbers, in order of their positions, step by one
/// value at even distances: an axis's ticks.
fn even_steps(mut ticks: Vec<(f32, f64)>) -> bool {
    if ticks.len() < 4 {
        return false;
    }
    ticks.sort_by(|a, b| a.0.total_cmp(&b.0));
    let step = ticks[1].1 - ticks[0].1;
    let distance = ticks[1].0 - ticks[0].0;
    if step == 0.0 || distance <= 0.0 {
        return false;
    }
    ticks.windows(2).all(|w| {
        let (d, v) = (w[1].0 - w[0].0, w[1].1 - w[0].1);
        (v - step).abs() <= step.abs() * 1e-6 && (d - distance).abs() <= 0.2 * distance
    })
}

/// The longest run of lines in a column that wrap like running text: each
/// but the last as wide as the column, the next close below it.
fn wrapped_run(group: &[Item], column: f32) -> usize {
    let mut boxes: Vec<(BoxF, f32, usize)> = group
        .iter()
        .filter_map(|i| match i {
            Item::Text(f) => Some((f.bbox, f.size, f.text.split_whitespace().count())),
            Item::Table(..) | Item::Figure(..) => None,
        })
        .collect();
    boxes.sort_by(|a, b| a.0.y0.total_cmp(&b.0.y0));
    let (mut best, mut run) = (1usize, 1usize);
    for pair in boxes.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let close = b.0.y0 - a.0.y1 < 0.8 * a.1.max(b.1) && b.0.y0 > a.0.y0;
        // A line of running text has several words; a column of values
        // ("24 ml", "12 ml") is as wide as itself on every line too.
        if close && a.0.x1 - a.0.x0 >= 0.7 * column && a.2 >= 3 {
            run += 1;
            best = best.max(run);
        } else {
            run = 1;
        }
    }
    best
}

/// Items read by position: rows top to bottom (an item whose middle lies
/// within the row's first item joins that row), each row left to right.
fn by_rows(mut items: Vec<Item>) -> Vec<Item> {
    items.sort_by(|a, b| {
        let (a, b) = (a.bbox(), b.bbox());
        f32::midpoint(a.y0, a.y1).total_cmp(&f32::midpoint(b.y0, b.y1))
    });
    let mut out = Vec::with_capacity(items.len());
    let mut row: Vec<Item> = Vec::new();
    let mut band = (f32::NEG_INFINITY, f32::NEG_INFINITY);
    for item in items {
        let b = item.bbox();
        let middle = f32::midpoint(b.y0, b.y1);
        if middle > band.1 || middle < band.0 {
            row.sort_by(|a, b| a.bbox().x0.total_cmp(&b.bbox().x0));
            out.append(&mut row);
            band = (b.y0, b.y1);
        }
        row.push(item);
    }
    row.sort_by(|a, b| a.bbox().x0.total_cmp(&b.bbox().x0));
    out.append(&mut row);
    out
}

/// Orders `items` by recursive XY-cut into `out`.
fn xy_cut(mut items: Vec<Item>, body: f32, depth: usize, out: &mut Vec<Item>) {
    if items.len() <= 1 || depth >= MAX_DEPTH {
        out.extend(by_rows(items));
        return;
    }
    // Columns: gaps in the projection on x as wide as the body text size.
    items.sort_by(|a, b| a.bbox().x0.total_cmp(&b.bbox().x0));
    let mut groups: Vec<Vec<Item>> = Vec::new();
    let mut reach = f32::NEG_INFINITY;
    for item in items {
        let b = item.bbox();
        if groups.is_empty() || b.x0 - reach >= GUTTER * body {
            groups.push(Vec::new());
        }
        reach = reach.max(b.x1);
        if let Some(last) = groups.last_mut() {
            last.push(item);
        }
    }
    // A gutter has lines on both sides: a gap with one piece of text beside
    // it (a wide space after a full stop, over one line) is no column.
    if groups.len() > 1 && groups.iter().all(|g| g.len() >= 2) {
        read_columns(groups, body, depth, out);
        return;
    }
    let mut items: Vec<Item> = groups.into_iter().flatten().collect();
    // Rows: the widest gaps in the projection on y.
    items.sort_by(|a, b| a.bbox().y0.total_cmp(&b.bbox().y0));
    let mut gaps: Vec<(usize, f32)> = Vec::new();
    let mut bottom = f32::NEG_INFINITY;
    for (i, item) in items.iter().enumerate() {
        let b = item.bbox();
        if i > 0 && b.y0 > bottom {
            gaps.push((i, b.y0 - bottom));
        }
        bottom = bottom.max(b.y1);
    }
    let widest = gaps.iter().map(|g| g.1).fold(0.0f32, f32::max);
    if gaps.is_empty() || widest <= 0.0 {
        // No gap across: lines that touch (tight leading), read row by row.
        out.extend(by_rows(items));
        return;
    }
    let cuts: Vec<usize> = gaps
        .iter()
        .filter(|g| g.1 >= widest * 0.8)
        .map(|g| g.0)
        .collect();
    let mut rest = items;
    let mut taken = 0usize;
    let mut parts: Vec<Vec<Item>> = Vec::with_capacity(cuts.len() + 1);
    for cut in cuts {
        let tail = rest.split_off(cut - taken);
        taken = cut;
        parts.push(rest);
        rest = tail;
    }
    parts.push(rest);
    // Rows cut apart here may be the rows of a table without rules: a run
    // of at least three one-line parts split in columns is tried as one.
    let kinds: Vec<RowKind> = parts.iter().map(|p| row_kind(p, body)).collect();
    let mut parts: Vec<Option<Vec<Item>>> = parts.into_iter().map(Some).collect();
    let mut i = 0;
    while i < parts.len() {
        if kinds[i] == RowKind::Split {
            let mut end = i;
            let mut j = i;
            while j < parts.len() && kinds[j] != RowKind::Other {
                if kinds[j] == RowKind::Split {
                    end = j;
                }
                j += 1;
            }
            let rows = kinds[i..=end]
                .iter()
                .filter(|k| **k == RowKind::Split)
                .count();
            if rows >= 3 {
                let run: Vec<Item> = parts[i..=end]
                    .iter_mut()
                    .filter_map(Option::take)
                    .flatten()
                    .collect();
                let groups = x_groups(run.clone(), body);
                if groups.len() > 1
                    && let Some((mut table, mut bbox, columns)) = aligned_table(&groups, body)
                {
                    // The line right above, drawn piece by piece along the
                    // same columns, is the table's header row.
                    let header = match out.last() {
                        Some(Item::Text(f)) if i > 0 && kinds[i - 1] == RowKind::Single => {
                            header_row(f, &columns, bbox)
                        }
                        _ => None,
                    };
                    if let Some(cells) = header {
                        if let Some(Item::Text(f)) = out.pop() {
                            bbox.union(&f.bbox);
                        }
                        table.rows.insert(0, cells);
                    } else {
                        header_bands(out, &mut table, &mut bbox, &columns);
                    }
                    out.push(Item::Table(table, bbox));
                } else if let Some((text, bbox)) = chart_text(&groups) {
                    out.push(Item::Figure(text, bbox));
                } else {
                    xy_cut(run, body, depth + 1, out);
                }
                i = end + 1;
                continue;
            }
        }
        if let Some(part) = parts[i].take() {
            xy_cut(part, body, depth + 1, out);
        }
        i += 1;
    }
}

/// Reads a region the XY-cut split in columns (`groups`, left to right):
/// its title set apart first, then the columns as one table or chart when
/// they are one, else each column in turn.
fn read_columns(mut groups: Vec<Vec<Item>>, body: f32, depth: usize, out: &mut Vec<Item>) {
    if let Some((g, i)) = set_apart_top(&groups) {
        let top = groups[g].remove(i);
        xy_cut(vec![top], body, depth + 1, out);
        xy_cut(groups.into_iter().flatten().collect(), body, depth + 1, out);
        return;
    }
    if let Some((mut table, mut bbox, columns)) = aligned_table(&groups, body) {
        header_bands(out, &mut table, &mut bbox, &columns);
        out.push(Item::Table(table, bbox));
        return;
    }
    if let Some((text, bbox)) = chart_text(&groups) {
        out.push(Item::Figure(text, bbox));
        return;
    }
    for group in groups {
        xy_cut(group, body, depth + 1, out);
    }
}

/// The item at the top of a region cut in columns (group, index), when it
/// stands alone on its line and lies further above the rest than any two
/// lines of the rest lie apart, by half as much again: a table's title or
/// a heading over columns, read before them and never one of their rows.
fn set_apart_top(groups: &[Vec<Item>]) -> Option<(usize, usize)> {
    let (g, i, top) = groups
        .iter()
        .enumerate()
        .flat_map(|(g, group)| {
            group
                .iter()
                .enumerate()
                .map(move |(i, item)| (g, i, item.bbox()))
        })
        .min_by(|a, b| a.2.y0.total_cmp(&b.2.y0))?;
    let mut rest: Vec<BoxF> = groups
        .iter()
        .enumerate()
        .flat_map(|(h, group)| {
            group
                .iter()
                .enumerate()
                .filter(move |(j, _)| (h, *j) != (g, i))
                .map(|(_, item)| item.bbox())
        })
        .collect();
    if rest.len() < 3 {
        return None;
    }
    rest.sort_by(|a, b| a.y0.total_cmp(&b.y0));
    let below = rest[0].y0 - top.y1;
    let mut widest = 0.0f32;
    let mut bottom = rest[0].y1;
    for b in &rest[1..] {
        widest = widest.max(b.y0 - bottom);
        bottom = bottom.max(b.y1);
    }
    (below > 0.0 && below > 1.5 * widest.max(0.0)).then_some((g, i))
}

/// The cells of a line drawn piece by piece over a table's columns, when
/// it sits right above the table and every piece starts in one column and
/// ends before the next, at least two columns and half of them getting
/// text.
fn header_row(line: &Fragment, columns: &[(f32, f32)], table: BoxF) -> Option<Vec<Cell>> {
    let size = line.size;
    if line.parts.len() < 2 || table.y0 - line.bbox.y1 > 1.5 * size || line.bbox.y1 > table.y0 {
        return None;
    }
    let tolerance = 0.5 * size;
    let mut texts = vec![String::new(); columns.len()];
    for (x0, x1, text) in &line.parts {
        // The column it starts in, by the columns' left sides; it must not
        // reach into the next one.
        let column = columns.iter().rposition(|(c0, _)| *x0 >= c0 - tolerance)?;
        if let Some((next, _)) = columns.get(column + 1)
            && *x1 > next + tolerance
        {
            return None;
        }
        join_line(&mut texts[column], text);
    }
    let filled = texts.iter().filter(|t| !t.is_empty()).count();
    if filled < 2 || filled * 2 < columns.len() {
        return None;
    }
    Some(
        texts
            .into_iter()
            .map(|text| Cell {
                text,
                col_span: 1,
                row_span: 1,
            })
            .collect(),
    )
}

/// `MAX_HEADER_ROWS` is how many lines above a table [`header_bands`]
/// takes as its header rows.
const MAX_HEADER_ROWS: usize = 3;

/// Takes the lines right above a table, read just before it into `out`,
/// as its header rows, bottom up: a line whose pieces lie over the
/// table's `columns`, at least two of them, covering half the columns or
/// more, each no further above than one and a half times its size. Which
/// columns a piece heads is [`header_cells`]' rule; pieces over one column
/// join. Header rows are often set apart by a rule or more
/// space, so the XY-cut reads them as lines of their own.
fn header_bands(out: &mut Vec<Item>, table: &mut Table, bbox: &mut BoxF, columns: &[(f32, f32)]) {
    let mut anchors: Vec<f32> = columns
        .iter()
        .map(|(x0, x1)| f32::midpoint(*x0, *x1))
        .collect();
    for _ in 0..MAX_HEADER_ROWS {
        // The last line read: the trailing fragments on one baseline.
        let mut band: Vec<&Fragment> = Vec::new();
        for item in out.iter().rev() {
            let Item::Text(f) = item else { break };
            let on_line = band.first().is_none_or(|first| {
                let middle = f32::midpoint(f.bbox.y0, f.bbox.y1);
                middle >= first.bbox.y0 && middle <= first.bbox.y1
            });
            if !on_line {
                break;
            }
            band.push(f);
        }
        let Some(size) = band.iter().map(|f| f.size).reduce(f32::max) else {
            return;
        };

        let bottom = band
            .iter()
            .map(|f| f.bbox.y1)
            .fold(f32::NEG_INFINITY, f32::max);
        let (left, right) = band
            .iter()
            .fold((f32::INFINITY, f32::NEG_INFINITY), |a, f| {
                (a.0.min(f.bbox.x0), a.1.max(f.bbox.x1))
            });
        if bottom > bbox.y0 + 0.3 * size
            || bbox.y0 - bottom > 1.5 * size
            || left < bbox.x0 - size
            || right > bbox.x1 + size
        {
            return;
        }
        let pieces: Vec<&(f32, f32, String)> = band.iter().flat_map(|f| &f.parts).collect();
        let Some((cells, above)) = header_cells(&pieces, &anchors) else {
            return;
        };
        anchors = above;
        let n = band.len();
        for _ in 0..n {
            if let Some(item) = out.pop() {
                bbox.union(&item.bbox());
            }
        }
        table.rows.insert(0, cells);
    }
}

/// The cells of a header line over columns whose middles are `anchors`
/// (see [`header_bands`]), with the anchors for the line above it (each
/// column's own header's middle, where it has one of its own), or `None`
/// when it is no header line of them. A piece goes to the column whose
/// anchor is nearest its middle (a header centred over numbers set right
/// lies left of them); it spans two columns when its middle lies about
/// half way between their anchors ("2019" over "Men" and "Women"), and
/// all those whose anchors it covers, when two or more.
fn header_cells(pieces: &[&(f32, f32, String)], anchors: &[f32]) -> Option<(Vec<Cell>, Vec<f32>)> {
    let last = anchors.len().checked_sub(1)?;
    // Each piece's first and last column, and its middle.
    let mut placed: Vec<(usize, usize, String, f32)> = Vec::new();
    for (x0, x1, text) in pieces {
        if text.trim().is_empty() {
            continue;
        }
        let middle = f32::midpoint(*x0, *x1);
        let over: Vec<usize> = (0..=last)
            .filter(|&c| anchors[c] >= *x0 && anchors[c] <= *x1)
            .collect();
        let after = anchors.iter().position(|a| middle < *a).unwrap_or(last + 1);
        let (first, end) = if over.len() >= 2 {
            (over[0], over[over.len() - 1])
        } else if after == 0 {
            (0, 0)
        } else if after > last {
            (last, last)
        } else {
            let (lo, hi) = (anchors[after - 1], anchors[after]);
            let (left, right) = (middle - lo, hi - middle);
            if (left - right).abs() <= 0.25 * (hi - lo) {
                (after - 1, after)
            } else if left < right {
                (after - 1, after - 1)
            } else {
                (after, after)
            }
        };
        placed.push((first, end, (*text).clone(), middle));
    }
    placed.sort_by_key(|p| p.0);
    // Pieces over the same columns are one cell.
    let mut cells: Vec<(usize, usize, String, f32)> = Vec::new();
    for (first, end, text, middle) in placed {
        match cells.last_mut() {
            Some(cell) if first <= cell.1 => {
                cell.1 = cell.1.max(end);
                join_line(&mut cell.2, &text);
            }
            _ => cells.push((first, end, text, middle)),
        }
    }
    let covered: usize = cells.iter().map(|c| c.1 - c.0 + 1).sum();
    if cells.len() < 2 || covered * 2 < anchors.len() {
        return None;
    }
    let mut above = anchors.to_vec();
    let mut row = Vec::with_capacity(anchors.len());
    let mut column = 0;
    for (first, end, text, middle) in cells {
        while column < first {
            row.push(Cell::new(String::new()));
            column += 1;
        }
        if first == end {
            above[first] = middle;
        }
        row.push(Cell {
            text,
            col_span: end - first + 1,
            row_span: 1,
        });
        column = end + 1;
    }
    while column <= last {
        row.push(Cell::new(String::new()));
        column += 1;
    }
    Some((row, above))
}

/// What a part cut off by rows is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowKind {
    /// One line of text split in columns.
    Split,
    /// One piece of text.
    Single,
    /// Anything else.
    Other,
}

/// What a part cut off by rows is.
fn row_kind(part: &[Item], body: f32) -> RowKind {
    if part.iter().any(|i| !matches!(i, Item::Text(..))) {
        return RowKind::Other;
    }
    let Some(first) = part.first().map(Item::bbox) else {
        return RowKind::Other;
    };
    let one_line = part.iter().all(|i| {
        let middle = f32::midpoint(i.bbox().y0, i.bbox().y1);
        middle >= first.y0 && middle <= first.y1
    });
    if !one_line {
        return RowKind::Other;
    }
    if part.len() == 1 {
        return RowKind::Single;
    }
    if x_groups(part.to_vec(), body).len() > 1 {
        RowKind::Split
    } else {
        RowKind::Other
    }
}

/// Items split at the gaps in their projection on x as wide as two thirds
/// of the body text size, left to right.
fn x_groups(mut items: Vec<Item>, body: f32) -> Vec<Vec<Item>> {
    items.sort_by(|a, b| a.bbox().x0.total_cmp(&b.bbox().x0));
    let mut groups: Vec<Vec<Item>> = Vec::new();
    let mut reach = f32::NEG_INFINITY;
    for item in items {
        let b = item.bbox();
        if groups.is_empty() || b.x0 - reach >= 0.6 * body {
            groups.push(Vec::new());
        }
        reach = reach.max(b.x1);
        if let Some(last) = groups.last_mut() {
            last.push(item);
        }
    }
    groups
}

/// How a list item is marked.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Marker {
    /// A bullet, dash or other symbol.
    Bullet,
    /// A number or letter, as written ("3.", "b)").
    Ordered(String),
}

/// A paragraph being gathered.
struct Gathering {
    text: String,
    bbox: BoxF,
    last: BoxF,
    size: f32,
    bold_chars: usize,
    chars: usize,
    lines: usize,
    item: Option<Marker>,
    /// Where its first line starts on x (a list item's indent).
    start: f32,
    /// Whether it lies in the header or footer band of the page.
    marginal: bool,
    /// Whether its first line is set in small capitals: capitals only, in
    /// two sizes (the larger for the initials), or in a small-capitals face.
    small_caps: bool,
    /// How many of its characters are italic.
    italic_chars: usize,
}

/// A block that is not gathered text (a table, a chart's text), with the
/// region a table covers.
type Own = (Block, Option<Region>);

/// Gathers ordered items: lines that follow one another into one text,
/// a table or a chart's text as a block of its own.
fn gather(items: Vec<Item>) -> Vec<Result<Gathering, Own>> {
    let line_bold = line_boldness(&items);
    // Gathered text, or a block of its own (a table, a chart's text).
    let mut out: Vec<Result<Gathering, Own>> = Vec::new();
    let mut current: Option<Gathering> = None;
    for (item, line_bold) in items.into_iter().zip(line_bold) {
        let fragment = match item {
            Item::Table(t, bbox) => {
                if let Some(g) = current.take() {
                    out.push(Ok(g));
                }
                out.push(Err((
                    Block::Table(t),
                    Some([bbox.x0, bbox.y0, bbox.x1, bbox.y1]),
                )));
                continue;
            }
            Item::Figure(text, _) => {
                if let Some(g) = current.take() {
                    out.push(Ok(g));
                }
                out.push(Err((Block::Figure(text), None)));
                continue;
            }
            Item::Text(f) => f,
        };
        let (marker, _) = split_marker(&fragment.text);
        let text = fragment.text;
        let bold = line_bold;
        // Capitals in two sizes (the larger for the initials), or most of
        // the line in a small-capitals face.
        let small_caps = fragment.size >= 1.12 * fragment.min_size && all_caps(&text)
            || fragment.small_caps_chars * 2 > fragment.chars;
        // A number starting a line that a full line of running text wraps
        // onto ("... (Torres 201" / "6) attributes ...") is no list item.
        let marker = match marker {
            Some(Marker::Ordered(_))
                if current.as_ref().is_some_and(|g| {
                    g.item.is_none() && wraps_onto(g, &fragment.bbox, fragment.size)
                }) =>
            {
                None
            }
            other => other,
        };
        if let Some(g) = current.as_mut()
            && (marker.is_none() || further_along(g, &fragment.bbox, fragment.size))
            && follows(g, &fragment.bbox, fragment.size, bold)
            && (further_along(g, &fragment.bbox, fragment.size)
                || g.small_caps == small_caps
                    && !title_over(
                        g,
                        &text,
                        small_caps,
                        wholly(fragment.italic_chars, fragment.chars),
                    ))
        {
            join_line(&mut g.text, &text);
            g.bbox.union(&fragment.bbox);
            if fragment.bbox.y0 < g.last.y1 - 0.5 * fragment.size.min(g.size) {
                // Further along the same line.
                g.last.union(&fragment.bbox);
            } else {
                g.last = fragment.bbox;
                g.lines += 1;
            }
            g.chars += fragment.chars;
            g.bold_chars += fragment.bold_chars;
            g.italic_chars += fragment.italic_chars;
            continue;
        }
        if let Some(g) = current.take() {
            out.push(Ok(g));
        }
        current = Some(Gathering {
            text,
            bbox: fragment.bbox,
            last: fragment.bbox,
            size: fragment.size,
            bold_chars: fragment.bold_chars,
            italic_chars: fragment.italic_chars,
            chars: fragment.chars,
            lines: 1,
            item: marker,
            start: fragment.bbox.x0,
            marginal: false,
            small_caps,
        });
    }
    if let Some(g) = current.take() {
        out.push(Ok(g));
    }
    out
}

/// Which gathered texts are headings, and the heading sizes, largest
/// first (a heading's level is its size's place among them).
fn headings(out: &[Result<Gathering, Own>], body: f32) -> (Vec<bool>, Vec<bool>, Vec<f32>) {
    // Whether the page's body text is set bold: then bold sets nothing apart.
    let (bold_chars, chars) = out
        .iter()
        .flatten()
        .filter(|g| (g.size - body).abs() < 0.5)
        .fold((0usize, 0usize), |(b, c), g| {
            (b + g.bold_chars, c + g.chars)
        });
    let body_bold = bold_chars * 2 > chars;
    let italic_chars: usize = out
        .iter()
        .flatten()
        .filter(|g| (g.size - body).abs() < 0.5)
        .map(|g| g.italic_chars)
        .sum();
    // Whether most of the page's text is in capitals: then capitals set
    // nothing apart either.
    let (caps, blocks) = out.iter().flatten().fold((0usize, 0usize), |(c, n), g| {
        (c + usize::from(all_caps(&g.text)), n + 1)
    });
    let page = Page {
        body,
        bold: body_bold,
        italic: italic_chars * 2 > chars,
        caps: caps * 2 > blocks,
    };
    // Heading sizes, largest first, for the levels.
    let mut sizes: Vec<f32> = Vec::new();
    let mut heading = Vec::with_capacity(out.len());
    let mut in_band = Vec::with_capacity(out.len());
    for entry in out {
        let would = match entry {
            Ok(g) => is_heading(g, &page),
            Err(_) => false,
        };
        let marginal = entry.as_ref().is_ok_and(|g| g.marginal);
        let is = would && !marginal;
        in_band.push(would && marginal);
        if is && let Ok(g) = entry {
            let s = (g.size * 2.0).round() / 2.0;
            if !sizes.iter().any(|x| (x - s).abs() < 0.25) {
                sizes.push(s);
            }
        }
        heading.push(is);
    }
    sizes.sort_by(|a, b| b.total_cmp(a));
    (heading, in_band, sizes)
}

/// Joins ordered items into blocks.
fn blocks(items: Vec<Item>, body: f32, page: (f32, f32)) -> PageLayout {
    // The running header and footer bands: a block wholly inside them is a
    // header, footer or page number, never a heading.
    let margin = (page.1 - page.0) * 0.08;
    let marginal = |b: &BoxF| b.y1 <= page.0 + margin || b.y0 >= page.1 - margin;
    let mut out = gather(items);
    for g in out.iter_mut().flatten() {
        g.marginal = marginal(&g.bbox);
    }
    let (heading, in_band, sizes) = headings(&out, body);
    let mut blocks = Vec::with_capacity(out.len());
    let mut margins = Vec::with_capacity(out.len());
    let mut heading_sizes = Vec::with_capacity(out.len());
    let mut band_headings = Vec::with_capacity(out.len());
    // The last heading's box, size and index, to join a heading set over
    // two lines that the paragraph joining kept apart.
    let mut previous: Option<(BoxF, f32, usize)> = None;
    // The indents of the list items open around here, outermost first: an
    // item further in than the last opens a level below it.
    let mut indents: Vec<f32> = Vec::new();
    let mut regions: Vec<(usize, Region)> = Vec::new();
    let numbered_from = numbered_rank(&out, &heading, &sizes);
    for ((entry, is), band) in out.into_iter().zip(heading).zip(in_band) {
        // Every block pushed below has its entry here, as in `margins`.
        band_headings.push(match &entry {
            Ok(g) if band => Some((
                heading_level(&g.text, g.size, &sizes, numbered_from),
                g.size,
            )),
            _ => None,
        });
        match entry {
            Err((block, region)) => {
                if let Some(region) = region {
                    regions.push((blocks.len(), region));
                }
                blocks.push(block);
                margins.push(false);
                heading_sizes.push(None);
            }
            Ok(g) if is => {
                let level = heading_level(&g.text, g.size, &sizes, numbered_from);
                let continues = previous.is_some_and(|(b, size, index)| {
                    index + 1 == blocks.len()
                        && (size - g.size).abs() < 0.25
                        && g.bbox.y0 >= b.y0
                        && g.bbox.y0 - b.y1 < g.size
                        && g.bbox.x0 < b.x1
                        && b.x0 < g.bbox.x1
                });
                if continues && let Some(Block::Heading { text, .. }) = blocks.last_mut() {
                    join_line(text, &g.text);
                    band_headings.pop();
                } else {
                    blocks.push(Block::Heading {
                        level,
                        text: g.text,
                    });
                    margins.push(false);
                    heading_sizes.push(Some(g.size));
                }
                previous = Some((g.bbox, g.size, blocks.len() - 1));
            }
            Ok(g) => {
                if let Some(marker) = g.item {
                    blocks.push(Block::ListItem {
                        level: list_level(&mut indents, g.start, g.size),
                        marker: match marker {
                            Marker::Bullet => None,
                            Marker::Ordered(m) => Some(m),
                        },
                        text: split_marker(&g.text).1,
                    });
                    margins.push(g.marginal);
                    heading_sizes.push(None);
                } else {
                    // Text further in than the last item is a paragraph
                    // inside it; any other ends the list.
                    if indents
                        .last()
                        .is_none_or(|last| g.start <= last + 0.5 * g.size)
                    {
                        indents.clear();
                    }
                    blocks.push(Block::Paragraph(g.text));
                    margins.push(g.marginal);
                    heading_sizes.push(None);
                }
            }
        }
    }
    let mut placed = vec![None; blocks.len()];
    for (at, region) in regions {
        placed[at] = Some(region);
    }
    debug_assert_eq!(band_headings.len(), blocks.len());
    PageLayout {
        blocks,
        marginal: margins,
        regions: placed,
        heading_sizes,
        band_headings,
    }
}

/// Levels the headings of a whole document as one outline, as each page's
/// layout levels its own: `headings` are the places in `blocks` of the
/// headings the layout found and the sizes they are set in. A page sees
/// only its own headings, so a paper's title on page 1 puts "1 Introduction"
/// a level below it there while "2 Method" on page 2, under no title, would
/// come out at the title's level; over the whole document the sizes rank
/// the same everywhere, and numbered sections sit at their numbering's
/// depth under whatever is set larger than all of them.
#[cfg_attr(not(feature = "pdf"), allow(dead_code))]
pub(crate) fn document_levels(blocks: &mut [Block], headings: &[(usize, f32)]) {
    let mut sizes: Vec<f32> = Vec::new();
    for &(_, size) in headings {
        let s = (size * 2.0).round() / 2.0;
        if !sizes.iter().any(|x| (x - s).abs() < 0.25) {
            sizes.push(s);
        }
    }
    sizes.sort_by(|a, b| b.total_cmp(a));
    let numbered_from = headings
        .iter()
        .filter_map(|&(at, size)| match blocks.get(at) {
            Some(Block::Heading { text, .. }) if numbered(text) => Some(size_rank(size, &sizes)),
            _ => None,
        })
        .min();
    for &(at, size) in headings {
        if let Some(Block::Heading { level, text }) = blocks.get_mut(at) {
            *level = heading_level(text, size, &sizes, numbered_from);
        }
    }
}

/// The rank (0 the largest) among the page's heading sizes of its largest
/// numbered heading: numbered headings take their level from their
/// numbering's depth below the headings set larger than them (a paper's
/// title over "I. INTRODUCTION" and "A. Data").
fn numbered_rank(out: &[Result<Gathering, Own>], heading: &[bool], sizes: &[f32]) -> Option<usize> {
    out.iter()
        .zip(heading)
        .filter_map(|(entry, is)| match entry {
            Ok(g) if *is && numbered(&g.text) => Some(size_rank(g.size, sizes)),
            _ => None,
        })
        .min()
}

/// Where a size falls among the page's heading sizes, largest first.
fn size_rank(size: f32, sizes: &[f32]) -> usize {
    let s = (size * 2.0).round() / 2.0;
    sizes.iter().position(|x| (x - s).abs() < 0.25).unwrap_or(0)
}

/// A heading's level, 1 to 6: from its numbering's depth under the
/// headings set larger than the page's numbered ones, else from its
/// size's rank.
fn heading_level(text: &str, size: f32, sizes: &[f32], numbered_from: Option<usize>) -> u8 {
    let level = match (numbering_depth(text), numbered_from) {
        (Some(depth), Some(from)) => from + depth,
        _ => size_rank(size, sizes) + 1,
    };
    #[allow(clippy::cast_possible_truncation)]
    let level = level.clamp(1, 6) as u8;
    level
}

/// `MAX_LIST_LEVEL` is the deepest list level an item gets.
const MAX_LIST_LEVEL: usize = 5;

/// The level of a list item that starts at `x`, from the indents of the
/// items open before it (updated): the level of an open item it lines up
/// with, or one below the last when it lies further in.
fn list_level(indents: &mut Vec<f32>, x: f32, size: f32) -> u8 {
    let tolerance = 0.5 * size.max(1.0);
    while indents.last().is_some_and(|last| x < last - tolerance) {
        indents.pop();
    }
    match indents.last() {
        Some(last) if x <= last + tolerance => {}
        _ if indents.len() <= MAX_LIST_LEVEL => indents.push(x),
        _ => {}
    }
    #[allow(clippy::cast_possible_truncation)]
    let level = indents.len().saturating_sub(1).min(MAX_LIST_LEVEL) as u8;
    level
}

/// A line's list marker, when it starts with one, and the text after it.
fn split_marker(text: &str) -> (Option<Marker>, String) {
    let trimmed = text.trim();
    let Some((first, rest)) = trimmed.split_once(' ') else {
        return (None, trimmed.to_owned());
    };
    if is_bullet(first) {
        return (Some(Marker::Bullet), rest.trim().to_owned());
    }
    // A leading bullet glued to its word: "•Devising".
    if let Some(c) = first.chars().next()
        && c != '-'
        && c != '*'
        && is_bullet(&c.to_string())
        && first.len() > c.len_utf8()
    {
        return (
            Some(Marker::Bullet),
            trimmed[c.len_utf8()..].trim().to_owned(),
        );
    }
    if is_marker(first) && !rest.is_empty() {
        // "3. RESULTS" may be a section heading: the heading test sees the
        // whole text, marker and all.
        return (
            Some(Marker::Ordered(first.to_owned())),
            rest.trim().to_owned(),
        );
    }
    (None, trimmed.to_owned())
}

/// For each ordered item, whether the line it starts is wholly bold: the
/// fragment with those after it further along the same line. A bold
/// run-in heading ("Ablation on the data.") is a fragment of its own when
/// a wide space parts it from its paragraph's first words, and alone it
/// would read as bold text following on from a bold heading above it.
fn line_boldness(items: &[Item]) -> Vec<bool> {
    let mut out = vec![false; items.len()];
    // From the end: each fragment's totals with those of the run after it.
    let mut after: Option<(BoxF, f32, usize, usize)> = None;
    for (i, item) in items.iter().enumerate().rev() {
        let Item::Text(f) = item else {
            after = None;
            continue;
        };
        let (mut bold, mut chars) = (f.bold_chars, f.chars);
        if let Some((next, size, b, c)) = after {
            let larger = f.size.max(size);
            let same_line = (f32::midpoint(next.y0, next.y1) - f32::midpoint(f.bbox.y0, f.bbox.y1))
                .abs()
                < 0.3 * larger
                && next.x0 >= f.bbox.x1 - 0.1 * larger
                && next.x0 - f.bbox.x1 < 1.5 * larger;
            if same_line {
                bold += b;
                chars += c;
            }
        }
        out[i] = wholly(bold, chars);
        after = Some((f.bbox, f.size, bold, chars));
    }
    out
}

/// Whether text is wholly set some way (bold, italic) when `part` of its
/// `chars` are: nine in ten of them. A heading set in bold is wholly bold;
/// a paragraph that starts with a bold run-in heading ("Methods. We
/// measured ...") is not, though its first line may be mostly bold.
fn wholly(part: usize, chars: usize) -> bool {
    part > 0 && part * 10 >= chars * 9
}

/// Whether a line (its box, size and boldness) continues the paragraph
/// being gathered: close below it, overlapping it, set the same way (both
/// wholly bold, or neither: a bold heading is not continued by the run-in
/// heading under it, nor is that run-in's paragraph cut after its first
/// line).
fn follows(g: &Gathering, bbox: &BoxF, size: f32, bold: bool) -> bool {
    let larger = g.size.max(size);
    let gap = bbox.y0 - g.last.y1;
    let overlap = g.bbox.x1.min(bbox.x1) - g.bbox.x0.max(bbox.x0);
    let same_size = (g.size - size).abs() <= 0.15 * g.size.min(size).max(1.0);
    let g_bold = wholly(g.bold_chars, g.chars);
    if further_along(g, bbox, size) && same_size {
        return true;
    }
    gap > -0.5 * larger && gap < 0.9 * larger && overlap > 0.0 && same_size && g_bold == bold
}

/// Whether the paragraph being gathered is a title over the line `text`
/// (in small capitals or not, italic or not) that is set otherwise: one
/// short line of capitals or small capitals ("ABSTRACT", "I. INTRODUCTION")
/// over a line that is not, or a numbered line in italics ("A. Data Sets",
/// "2.1. Sampling") over an upright one, is set apart from the running
/// text under it by its letters alone, however close that text follows.
fn title_over(g: &Gathering, text: &str, small_caps: bool, italic: bool) -> bool {
    if g.lines != 1 {
        return false;
    }
    let words = g.text.split_whitespace().count();
    let in_caps =
        (g.small_caps || all_caps(&g.text) && words <= 6) && !small_caps && !all_caps(text);
    let in_italics = wholly(g.italic_chars, g.chars)
        && !italic
        && numbered(&g.text)
        && words <= 12
        && !g.text.trim_end().ends_with(['.', ',', ';']);
    in_caps || in_italics
}

/// Whether a fragment lies further along the last line of the paragraph
/// being gathered: justified text spaces its words wider than a line's
/// fragments reach, and the XY-cut found no column gutter between them.
fn further_along(g: &Gathering, bbox: &BoxF, size: f32) -> bool {
    let larger = g.size.max(size);
    let last = &g.last;
    (f32::midpoint(bbox.y0, bbox.y1) - f32::midpoint(last.y0, last.y1)).abs() < 0.3 * larger
        && bbox.x0 >= last.x1 - 0.1 * larger
        && bbox.x0 - last.x1 < 1.5 * larger
}

/// Whether the paragraph being gathered runs on onto a line at `bbox`: its
/// last of two or more lines fills its width and ends mid-sentence, and
/// the line, set the same size, starts at its left side.
fn wraps_onto(g: &Gathering, bbox: &BoxF, size: f32) -> bool {
    let width = (g.bbox.x1 - g.bbox.x0).max(1.0);
    g.lines >= 2
        && (g.size - size).abs() <= 0.15 * g.size.min(size).max(1.0)
        && g.last.x1 - g.bbox.x0 >= 0.85 * width
        && g.last.x1 - g.last.x0 >= 0.5 * width
        && (bbox.x0 - g.bbox.x0).abs() < g.size
        && !g.text.trim_end().ends_with(['.', ':', ';', '!', '?'])
}

/// Appends a line to a paragraph, joining a word hyphenated at the line's
/// end ("infor-" + "mation").
fn join_line(text: &mut String, line: &str) {
    let hyphenated = text.ends_with('-')
        && text
            .chars()
            .rev()
            .nth(1)
            .is_some_and(|c| c.is_alphabetic() && c.is_lowercase())
        && line.chars().next().is_some_and(char::is_lowercase);
    if hyphenated {
        text.pop();
    } else if !text.is_empty() {
        text.push(' ');
    }
    text.push_str(line);
}

/// Drops the dot leaders at the end of a table cell's text ("Mining . . .
/// . . ." or "Mining........"): they lead the eye to the next column and
/// are no part of the cell. A run counts as leaders from three dots with
/// spaces between them, or four without (an ellipsis has three); a cell
/// of dots alone is left as it is. Dots standing alone before a cell's
/// text are a leader's last dots read into the cell after it.
pub(crate) fn drop_leaders(text: &mut String) {
    let kept = text.trim_end_matches(|c: char| c == '.' || c == '\u{2026}' || c.is_whitespace());
    if kept.trim().is_empty() {
        // A cell of dots alone says "not available": it is the cell's text.
        return;
    }
    // The last dots of a row label's leaders, read into the next cell.
    let mut words = kept.split(' ').peekable();
    let mut stray = 0usize;
    while words.next_if(|w| *w == ".").is_some() {
        stray += 2;
    }
    if stray > 0 && words.peek().is_some() {
        *text = text[stray..].to_owned();
        return drop_leaders(text);
    }
    let run = &text[kept.len()..];
    let dots = run
        .chars()
        .map(|c| {
            if c == '\u{2026}' {
                3
            } else {
                usize::from(c == '.')
            }
        })
        .sum::<usize>();
    let spaced = run.trim().contains(' ');
    if dots >= 4 || (spaced && dots >= 3) {
        let end = kept.trim_end().len();
        text.truncate(end);
    }
}

/// Whether a text starts with section numbering: "3.", "9.5.", "3.1",
/// "Chapter 2", "Section IV", "Annex B", "§ 4", a roman numeral ("IV.")
/// or a capital letter ("A.") with its full stop, then a title.
fn numbered(text: &str) -> bool {
    numbering_depth(text).is_some()
}

/// How deep a heading's numbering goes: 1 for "3.", "IV.", "Chapter 2",
/// "Annex B"; 2 for "3.1" and "A.1" (and for "A." under roman numerals,
/// as papers number them); 3 for "3.1.2"; `None` when it has none.
fn numbering_depth(text: &str) -> Option<usize> {
    let mut words = text.split_whitespace();
    let first = words.next()?;
    let titled = words.next().is_some();
    let lower = first.to_lowercase();
    if matches!(
        lower.trim_end_matches([':', '.']),
        "chapter" | "section" | "part" | "appendix" | "annex" | "article" | "§"
    ) {
        return Some(1);
    }
    if !titled {
        return None;
    }
    if section_number(first) {
        return Some(first.split('.').filter(|p| !p.is_empty()).count().max(1));
    }
    let label = first.strip_suffix('.')?;
    if !label.is_empty()
        && label.len() <= 5
        && label.chars().all(|c| matches!(c, 'I' | 'V' | 'X' | 'L'))
    {
        return Some(1);
    }
    (label.len() == 1 && label.chars().all(|c| c.is_ascii_uppercase())).then_some(2)
}

/// Whether a text's letters are all capitals (at least four of them).
fn all_caps(text: &str) -> bool {
    let mut letters = text.chars().filter(|c| c.is_alphabetic()).peekable();
    letters.peek().is_some()
        && text.chars().filter(|c| c.is_alphabetic()).count() >= 4
        && letters.all(char::is_uppercase)
}

/// Whether a text is the caption of a figure or table ("Table 2:",
/// "Figure 3.1.1", "Source: ...") rather than a heading.
fn is_caption(text: &str) -> bool {
    let mut words = text.split_whitespace();
    let first = words
        .next()
        .unwrap_or("")
        .trim_end_matches([':', '.'])
        .to_lowercase();
    let second = words.next().unwrap_or("");
    let labelled = matches!(
        first.as_str(),
        "table"
            | "figure"
            | "fig"
            | "chart"
            | "diagram"
            | "graph"
            | "exhibit"
            | "map"
            | "box"
            | "algorithm"
            | "listing"
    ) && (text.contains(':') || second.starts_with(|c: char| c.is_ascii_digit()));
    labelled
        || matches!(first.as_str(), "source" | "sources" | "note" | "notes") && text.contains(':')
}

/// Whether a gathered block reads as a heading.
/// What a page's running text is set in, that a heading stands apart from.
struct Page {
    /// The size most of its characters are set in.
    body: f32,
    /// Whether most of its body text is bold, or italic.
    bold: bool,
    italic: bool,
    /// Whether most of its blocks are in capitals.
    caps: bool,
}

fn is_heading(g: &Gathering, page: &Page) -> bool {
    let (body, body_bold) = (page.body, page.bold);
    let text = g.text.trim();
    let letters = text.chars().filter(|c| c.is_alphabetic()).count();
    if g.lines > 3 || text.len() > 160 || text.is_empty() {
        return false;
    }
    if g.item.is_some() && !numbered(text) {
        return false;
    }
    if is_caption(text) || text.contains("....") || text.contains(" . . .") {
        return false;
    }
    let larger = g.size >= body * 1.15;
    let bold = wholly(g.bold_chars, g.chars) && !body_bold;
    // A colon may end a heading ("Procedure:"); a full stop or comma not.
    let ends_like_sentence =
        text.ends_with(['.', ',', ';']) || text.len() > 60 && text.ends_with(':');
    // A heading starts with a capital or a number, not mid-sentence.
    if text
        .chars()
        .find(|c| c.is_alphabetic())
        .is_some_and(char::is_lowercase)
        && !numbered(text)
        && !g.small_caps
    {
        return false;
    }
    if letters == 0 {
        // Only a number: a chapter number set large stands as a heading.
        return g.size >= body * 1.6 && text.len() <= 4;
    }
    if larger && !ends_like_sentence {
        return true;
    }
    if bold && !ends_like_sentence && text.len() <= 120 {
        return true;
    }
    let caps = letters >= 4 && all_caps(text);
    let words = text.split_whitespace().count();
    // Small capitals on one line ("I. INTRODUCTION", "REFERENCES" as
    // papers set them) are a section's title at the body's size; so is a
    // short line of capitals on its own, at least as large as the body,
    // on a page not set in capitals throughout.
    if g.lines == 1 && !ends_like_sentence {
        if g.small_caps && words <= 12 && g.size >= 0.95 * body {
            return true;
        }
        // A numbered title in italics at the body's size ("A. Data Sets",
        // "2.1. Sampling"), as papers set their lower sections.
        if wholly(g.italic_chars, g.chars)
            && !page.italic
            && numbered(text)
            && words <= 12
            && g.size >= 0.95 * body
        {
            return true;
        }
        if caps && !page.caps && words <= 6 && g.size >= 0.95 * body && !text.contains(',') {
            return true;
        }
    }
    numbered(text) && (caps || bold || larger) && !ends_like_sentence
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(text: &str, x0: f32, y0: f32, size: f32, bold: bool) -> Piece {
        #[allow(clippy::cast_precision_loss)]
        let width = text.chars().count() as f32 * size * 0.5;
        // Below the header band of an A4 page (842 points high).
        let y0 = y0 + 100.0;
        Piece {
            text: text.to_owned(),
            x0,
            y0,
            x1: x0 + width,
            y1: y0 + size,
            size,
            bold,
            small_caps: false,
            italic: false,
        }
    }

    /// A piece of running text, set in the page's ordinary 10 points.
    fn body(text: &str, x0: f32, y0: f32) -> Piece {
        piece(text, x0, y0, 10.0, false)
    }

    /// The blocks of an A4 page (842 points high) of `pieces` and `rules`.
    fn a4_blocks(pieces: Vec<Piece>, rules: &[Rule]) -> Vec<Block> {
        page_blocks(pieces, Vec::new(), rules, Some((0.0, 842.0)))
    }

    #[test]
    fn two_columns_are_read_one_after_the_other_under_a_wide_title() {
        let mut pieces = vec![piece(
            "A title over the whole width of the page here",
            50.0,
            40.0,
            16.0,
            true,
        )];
        for row in 0..5u8 {
            let y = 80.0 + f32::from(row) * 12.0;
            pieces.push(body(&format!("left line {row} of text"), 50.0, y));
            pieces.push(body(&format!("right line {row} of text"), 300.0, y));
        }
        let blocks = a4_blocks(pieces, &[]);
        assert_eq!(
            blocks,
            vec![
                Block::Heading {
                    level: 1,
                    text: "A title over the whole width of the page here".to_owned()
                },
                Block::Paragraph(
                    "left line 0 of text left line 1 of text left line 2 of text \
                     left line 3 of text left line 4 of text"
                        .to_owned()
                ),
                Block::Paragraph(
                    "right line 0 of text right line 1 of text right line 2 of text \
                     right line 3 of text right line 4 of text"
                        .to_owned()
                ),
            ]
        );
    }

    #[test]
    fn bullets_numbers_and_hyphens_make_items_sections_and_words() {
        let pieces = vec![
            piece("3.", 50.0, 40.0, 10.0, true),
            piece("RECOLLECTION OF INITIATIVES", 62.0, 40.0, 10.0, true),
            body("Body text that runs on and is infor-", 50.0, 60.0),
            body("mation about things.", 50.0, 72.0),
            body("•", 50.0, 90.0),
            body("Devising new ways", 60.0, 90.0),
        ];
        let blocks = a4_blocks(pieces, &[]);
        assert_eq!(
            blocks,
            vec![
                Block::Heading {
                    level: 1,
                    text: "3. RECOLLECTION OF INITIATIVES".to_owned()
                },
                Block::Paragraph(
                    "Body text that runs on and is information about things.".to_owned()
                ),
                Block::ListItem {
                    level: 0,
                    marker: None,
                    text: "Devising new ways".to_owned()
                },
            ]
        );
    }

    #[test]
    fn a_grid_of_rules_is_a_table_and_a_missing_rule_makes_a_span() {
        // Columns at x 50, 150, 250, 350; rows at y 200, 220, 240 (before
        // the helper's shift of 100). The header row has no rule between
        // its second and third columns.
        let h = |y: f32| Rule {
            x0: 50.0,
            y0: y + 100.0,
            x1: 350.0,
            y1: y + 100.0,
        };
        let v = |x: f32, from: f32| Rule {
            x0: x,
            y0: from + 100.0,
            x1: x,
            y1: 340.0,
        };
        let rules = vec![
            h(200.0),
            h(220.0),
            h(240.0),
            v(50.0, 200.0),
            v(150.0, 200.0),
            v(250.0, 220.0),
            v(350.0, 200.0),
        ];
        let pieces = vec![
            body("Before", 50.0, 150.0),
            body("Name", 55.0, 205.0),
            body("Result", 155.0, 205.0),
            body("Ada", 55.0, 225.0),
            body("12", 155.0, 225.0),
            body("34", 255.0, 225.0),
        ];
        let blocks = a4_blocks(pieces, &rules);
        let wide = Cell {
            text: "Result".to_owned(),
            col_span: 2,
            row_span: 1,
        };
        assert_eq!(
            blocks,
            vec![
                Block::Paragraph("Before".to_owned()),
                Block::Table(Table {
                    rows: vec![
                        vec![Cell::new("Name"), wide],
                        vec![Cell::new("Ada"), Cell::new("12"), Cell::new("34")],
                    ]
                }),
            ]
        );
    }

    #[test]
    fn a_lettered_section_number_and_a_heading_over_two_lines_stay_one_heading() {
        let pieces = vec![
            piece("B.3", 50.0, 40.0, 14.0, true),
            piece("Prompt Engineering", 90.0, 40.0, 14.0, true),
            body("Body text set in the ordinary size.", 50.0, 70.0),
            piece("9.5. Adapting to the New", 50.0, 100.0, 14.0, true),
            piece("Business Models", 50.0, 117.0, 14.0, false),
            body("More body text in the ordinary size.", 50.0, 140.0),
        ];
        let headings: Vec<String> = a4_blocks(pieces, &[])
            .into_iter()
            .filter_map(|b| match b {
                Block::Heading { text, .. } => Some(text),
                _ => None,
            })
            .collect();
        assert_eq!(
            headings,
            [
                "B.3 Prompt Engineering",
                "9.5. Adapting to the New Business Models"
            ]
        );
    }

    #[test]
    fn rows_far_apart_in_aligned_columns_are_one_table_without_rules() {
        let mut pieces = vec![body(
            "A paragraph of running text over the table, set across the page width.",
            50.0,
            40.0,
        )];
        for (row, (name, value)) in [
            ("Mineral", "Value"),
            ("kaolinite", "10"),
            ("illite", "30"),
            ("vermiculite", "150"),
        ]
        .into_iter()
        .enumerate()
        {
            #[allow(clippy::cast_precision_loss)]
            let y = 80.0 + row as f32 * 30.0;
            pieces.push(body(name, 50.0, y));
            pieces.push(body(value, 250.0, y));
        }
        let blocks = a4_blocks(pieces, &[]);
        assert_eq!(blocks.len(), 2, "{blocks:?}");
        assert_eq!(
            blocks[1],
            Block::Table(Table {
                rows: vec![
                    vec![Cell::new("Mineral"), Cell::new("Value")],
                    vec![Cell::new("kaolinite"), Cell::new("10")],
                    vec![Cell::new("illite"), Cell::new("30")],
                    vec![Cell::new("vermiculite"), Cell::new("150")],
                ]
            })
        );
    }

    /// A piece with its own extent on x (a PDF draws a table's header row
    /// cell by cell, each piece reaching to the next).
    fn spanning(text: &str, x0: f32, x1: f32, y0: f32, size: f32, bold: bool) -> Piece {
        Piece {
            text: text.to_owned(),
            x0,
            y0: y0 + 100.0,
            x1,
            y1: y0 + 100.0 + size,
            size,
            bold,
            small_caps: false,
            italic: false,
        }
    }

    #[test]
    fn short_values_in_close_rows_under_a_header_drawn_cell_by_cell_are_a_table() {
        let mut pieces = vec![piece(
            "A paragraph of running text over the table, set across the page width.",
            50.0,
            20.0,
            12.0,
            false,
        )];
        // The header's cells touch: one line fragment, split again along
        // the columns below it.
        for (text, x0, x1) in [
            ("Tube ", 50.0, 150.0),
            ("DI Water ", 150.0, 250.0),
            ("Glucose Solution ", 250.0, 350.0),
            ("Yeast ", 350.0, 390.0),
        ] {
            pieces.push(spanning(text, x0, x1, 60.0, 12.0, true));
        }
        let rows = [
            ["2", "24 ml", "0 ml", "4 ml"],
            ["3", "12 ml", "12 ml", "4 ml"],
            ["4", "4 ml", "12 ml", "12 ml"],
        ];
        for (r, row) in rows.iter().enumerate() {
            #[allow(clippy::cast_precision_loss)]
            let y = 76.8 + r as f32 * 16.8;
            for (c, text) in row.iter().enumerate() {
                #[allow(clippy::cast_precision_loss)]
                let x = 50.0 + c as f32 * 100.0;
                pieces.push(piece(text, x, y, 12.0, false));
            }
        }
        let blocks = a4_blocks(pieces, &[]);
        let row = |cells: [&str; 4]| cells.iter().map(|t| Cell::new(*t)).collect::<Vec<_>>();
        let mut expected = vec![row(["Tube", "DI Water", "Glucose Solution", "Yeast"])];
        expected.extend(rows.iter().map(|r| row(*r)));
        assert_eq!(blocks.len(), 2, "{blocks:?}");
        assert_eq!(blocks[1], Block::Table(Table { rows: expected }));
    }

    #[test]
    fn words_of_a_justified_line_spaced_wide_stay_in_their_paragraph() {
        let mut pieces = vec![piece(
            "other infrared telescopes have operated with much",
            56.0,
            40.0,
            9.0,
            false,
        )];
        // Word spaces of 8 points at 9-point text: wider than a line
        // fragment reaches.
        let mut x = 56.0;
        for word in ["better", "sensitivity", "and", "resolution", "due", "to"] {
            let p = piece(word, x, 54.0, 9.0, false);
            x = p.x1 + 8.0;
            pieces.push(p);
        }
        pieces.push(piece(
            "improvements in infrared detectors of the time.",
            56.0,
            68.0,
            9.0,
            false,
        ));
        let blocks = a4_blocks(pieces, &[]);
        assert_eq!(
            blocks,
            vec![Block::Paragraph(
                "other infrared telescopes have operated with much better sensitivity \
                 and resolution due to improvements in infrared detectors of the time."
                    .to_owned()
            )]
        );
    }

    #[test]
    fn a_chart_axis_and_a_few_values_over_bars_are_not_a_table() {
        let mut pieces = Vec::new();
        for (row, tick) in ["80", "70", "60", "50", "40", "30", "20", "10", "0"]
            .iter()
            .enumerate()
        {
            #[allow(clippy::cast_precision_loss)]
            let y = 40.0 + row as f32 * 15.0;
            pieces.push(piece(tick, 50.0, y, 9.0, false));
            // A value over a bar here and there.
            if let Some(value) = [
                Some("76"),
                None,
                Some("56"),
                Some("47"),
                None,
                None,
                Some("16"),
                Some("9"),
                None,
            ][row]
            {
                #[allow(clippy::cast_precision_loss)]
                let x = 100.0 + row as f32 * 40.0;
                pieces.push(piece(value, x, y, 9.0, false));
            }
        }
        let blocks = a4_blocks(pieces, &[]);
        assert!(
            !blocks.iter().any(|b| matches!(b, Block::Table(_))),
            "{blocks:?}"
        );
        let text: Vec<String> = blocks
            .iter()
            .filter_map(|b| match b {
                Block::Paragraph(t) | Block::Figure(t) => Some(t.clone()),
                _ => None,
            })
            .collect();
        assert!(text.join(" ").contains("76"), "{blocks:?}");
    }

    #[test]
    fn items_indented_under_an_item_are_a_nested_list() {
        let mut pieces = Vec::new();
        for (row, (x, bullet, text)) in [
            (50.0, "•", "Outer item one"),
            (70.0, "◦", "Inner item a"),
            (70.0, "◦", "Inner item b"),
            (90.0, "-", "Deepest item"),
            (50.0, "•", "Outer item two"),
        ]
        .into_iter()
        .enumerate()
        {
            #[allow(clippy::cast_precision_loss)]
            let y = 40.0 + row as f32 * 14.0;
            pieces.push(body(bullet, x, y));
            pieces.push(body(text, x + 12.0, y));
        }
        pieces.push(body("A paragraph after the list.", 50.0, 120.0));
        let levels: Vec<(u8, String)> = a4_blocks(pieces, &[])
            .into_iter()
            .filter_map(|b| match b {
                Block::ListItem { level, text, .. } => Some((level, text)),
                _ => None,
            })
            .collect();
        let expected: Vec<(u8, String)> = [
            (0, "Outer item one"),
            (1, "Inner item a"),
            (1, "Inner item b"),
            (2, "Deepest item"),
            (0, "Outer item two"),
        ]
        .into_iter()
        .map(|(l, t)| (l, t.to_owned()))
        .collect();
        assert_eq!(levels, expected);
    }

    #[test]
    fn a_number_that_running_text_wraps_onto_is_no_list_item() {
        let pieces = vec![
            body(
                "Women took part in formal politics and even tried to",
                50.0,
                40.0,
            ),
            body("form a party backing the candidacy (Torres 201", 50.0, 52.0),
            body("6) attributes this to the student movement.", 50.0, 64.0),
            body("Steps:", 50.0, 90.0),
            body("1.", 50.0, 102.0),
            body("Record the question.", 62.0, 102.0),
            body("2.", 50.0, 114.0),
            body("Record a hypothesis", 62.0, 114.0),
            body("3.", 50.0, 126.0),
            body("Predict the results", 62.0, 126.0),
        ];
        let blocks = a4_blocks(pieces, &[]);
        assert_eq!(
            blocks[0],
            Block::Paragraph(
                "Women took part in formal politics and even tried to form a party backing \
                 the candidacy (Torres 201 6) attributes this to the student movement."
                    .to_owned()
            ),
            "{blocks:?}"
        );
        let items = blocks
            .iter()
            .filter(|b| matches!(b, Block::ListItem { level: 0, .. }))
            .count();
        assert_eq!(items, 3, "{blocks:?}");
    }

    #[test]
    fn a_narrow_gutter_between_lines_drawn_with_their_spaces_splits_the_columns() {
        // Each line's box takes in the space it ends with; past it, the
        // gutter is under half the text size.
        let left = [
            "In all survey phases, several firms in the ",
            "sector reported changing their business. In ",
            "July 2020, many tourism firms said that they ",
            "changed their business model, in October. ",
        ];
        let right = [
            "Compared to previous survey round results, in ",
            "January 2021, tourism firms had increasingly ",
            "shifted towards adapting to social distancing ",
            "to operate, as nearly a quarter mentioned. ",
        ];
        let mut pieces = Vec::new();
        for (row, (l, r)) in left.iter().zip(right).enumerate() {
            #[allow(clippy::cast_precision_loss)]
            let y = 40.0 + row as f32 * 12.0;
            pieces.push(spanning(l, 94.5, 324.7, y, 9.5, false));
            pieces.push(spanning(r, 329.1, 562.6, y, 9.5, false));
        }
        let blocks = a4_blocks(pieces, &[]);
        let join = |lines: &[&str]| lines.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" ");
        assert_eq!(
            blocks,
            vec![
                Block::Paragraph(join(&left)),
                Block::Paragraph(join(&right)),
            ]
        );
    }

    #[test]
    fn a_wide_space_after_a_full_stop_over_one_line_is_no_column() {
        let pieces = vec![
            body("In several applications p is", 90.0, 40.0),
            // A sentence space of seven points, then the rest of the line.
            body("known. In that case it", 237.0, 40.0),
            body("for accuracy.", 90.0, 52.0),
        ];
        let blocks = a4_blocks(pieces, &[]);
        assert_eq!(
            blocks,
            vec![Block::Paragraph(
                "In several applications p is known. In that case it for accuracy.".to_owned()
            )]
        );
    }

    #[test]
    fn a_chart_with_an_axis_is_one_figure_of_its_labels_row_by_row() {
        let mut pieces = vec![piece(
            "The uploads grew from one year to the next, as the chart shows.",
            50.0,
            10.0,
            9.0,
            false,
        )];
        for (row, tick) in ["60", "40", "20", "0"].iter().enumerate() {
            #[allow(clippy::cast_precision_loss)]
            let y = 40.0 + row as f32 * 20.0;
            pieces.push(piece(tick, 50.0, y, 9.0, false));
        }
        pieces.push(piece("56", 120.0, 48.0, 9.0, false));
        pieces.push(piece("21", 200.0, 88.0, 9.0, false));
        pieces.push(piece("Events", 100.0, 110.0, 9.0, false));
        pieces.push(piece("Videos", 190.0, 110.0, 9.0, false));
        let blocks = a4_blocks(pieces, &[]);
        assert_eq!(
            blocks.get(1),
            Some(&Block::Figure("60 56 40 20 21 0 Events Videos".to_owned())),
            "{blocks:?}"
        );
    }

    #[test]
    fn on_a_page_set_bold_throughout_a_short_bold_line_is_no_heading() {
        let pieces = vec![
            piece("Note that the exact error equals", 90.0, 40.0, 10.0, true),
            piece("M - Q(h) = -0.0342", 200.0, 62.0, 10.0, true),
            piece(
                "In this example the error estimate is very reliable, and the",
                90.0,
                84.0,
                10.0,
                true,
            ),
            piece(
                "estimate can be added to the approximation to improve it.",
                90.0,
                96.0,
                10.0,
                true,
            ),
        ];
        let blocks = a4_blocks(pieces, &[]);
        assert!(
            !blocks.iter().any(|b| matches!(b, Block::Heading { .. })),
            "{blocks:?}"
        );
    }

    #[test]
    fn dot_leaders_are_dropped_from_cells_but_dots_standing_for_a_value_stay() {
        let cases = [
            ("Mining . . . . . . . .", "Mining"),
            ("Mining........", "Mining"),
            (". . 2,218", "2,218"),
            ("Other...", "Other..."),
            (". . .", ". . ."),
            ("1.5", "1.5"),
            ("Total", "Total"),
        ];
        for (cell, kept) in cases {
            let mut text = cell.to_owned();
            drop_leaders(&mut text);
            assert_eq!(text, kept, "from {cell:?}");
        }
    }
}
