//! Tables read by the learned table model: where the layout rules found a
//! table, its region is drawn and the model says its rows, columns, spans
//! and where each cell is; each cell is then filled with the PDF's own
//! words that lie in it (no OCR: a page's text layer is exact). A page
//! with no table found by the rules never draws anything nor runs the
//! model, so it costs nothing more.
//!
//! The model's table replaces the rules' only when it holds together: at
//! least two rows and two columns, and nearly every word of the region in
//! one of its cells. Otherwise the rules' table stays.

use std::sync::Arc;
use std::time::{Duration, Instant};

use porter_vision::{Budget, CellGuess, Picture, TableGuess, TableModel};

use super::engine;
use super::layout::{Piece, Region, drop_leaders};
use super::raster::{Canvas, Drawn};
use crate::bounds::Cancel;
use crate::document::{Block, Cell, Table};
use crate::options::Options;

/// `SIDE_PX` is the longer side a table's region is drawn at: the model's
/// own input size, so that nothing is drawn only to be scaled away.
const SIDE_PX: usize = 488;

/// `PAD_PT` is how far around the rules' region the picture reaches, so
/// that a table's outer rules and the edges of its text are in it.
const PAD_PT: f32 = 4.0;

/// `MIN_PLACED` is the share of the region's words the model's cells must
/// hold for its table to be used.
const MIN_PLACED: f32 = 0.9;

/// The document drawn for the model: not opened yet, open, or not
/// drawable by hayro.
enum Drawing {
    NotYet,
    Open(Canvas),
    Failed,
}

/// The table model's work over one file: the model and the drawn document,
/// each taken on first need, and what happened, for the notes.
pub(crate) struct Learned<'a> {
    bytes: &'a [u8],
    options: &'a Options,
    model: Option<Result<Arc<TableModel>, String>>,
    canvas: Drawing,
    deadline: Option<Instant>,
    read: usize,
    kept: usize,
    left: usize,
}

impl<'a> Learned<'a> {
    pub(crate) fn new(bytes: &'a [u8], options: &'a Options) -> Self {
        Self {
            bytes,
            options,
            model: None,
            canvas: Drawing::NotYet,
            deadline: None,
            read: 0,
            kept: 0,
            left: 0,
        }
    }

    /// Whether a model may be used at all (it is not known to be missing
    /// or broken), so the page's words are worth keeping for it.
    pub(crate) fn wanted(&self) -> bool {
        !matches!(self.model, Some(Err(_))) && !matches!(self.canvas, Drawing::Failed)
    }

    /// Reads again, with the model, each table of page `index` whose
    /// region the layout found (`regions`, one for each of `blocks`),
    /// filling the cells with `pieces`, the page's words.
    pub(crate) fn restructure(
        &mut self,
        index: usize,
        blocks: &mut [Block],
        regions: &[Option<Region>],
        pieces: &[Piece],
        cancel: &Cancel,
    ) {
        for (block, region) in blocks.iter_mut().zip(regions) {
            let (Block::Table(table), Some(region)) = (block, region) else {
                continue;
            };
            let Some(model) = self.model() else { return };
            if self.read + self.kept >= self.options.table_model_tables
                || self.deadline.is_some_and(|d| Instant::now() >= d)
            {
                self.left += 1;
                continue;
            }
            let deadline = *self.deadline.get_or_insert_with(|| {
                Instant::now() + Duration::from_secs(self.options.table_model_seconds)
            });
            let padded = [
                region[0] - PAD_PT,
                region[1] - PAD_PT,
                region[2] + PAD_PT,
                region[3] + PAD_PT,
            ];
            if matches!(self.canvas, Drawing::NotYet) {
                self.canvas = Canvas::open(self.bytes).map_or(Drawing::Failed, Drawing::Open);
            }
            let Drawing::Open(canvas) = &self.canvas else {
                return;
            };
            let Some(drawn) = canvas.draw(index, padded, SIDE_PX) else {
                self.kept += 1;
                continue;
            };
            let budget = Budget {
                deadline: Some(deadline),
                cancel: Some(cancel.flag()),
                ..Budget::default()
            };
            let picture = Picture {
                width: drawn.width,
                height: drawn.height,
                grey: &drawn.grey,
            };
            let Ok(guess) = model.read(&picture, &budget) else {
                self.kept += 1;
                continue;
            };
            match filled(&guess, &drawn, padded, pieces) {
                Some(read) => {
                    *table = read;
                    self.read += 1;
                }
                None => self.kept += 1,
            }
        }
    }

    /// The model, looked up on the first table; `None` when it cannot be
    /// used (the notes say why) or when this worker was started without it
    /// (the file is then read again in one that has it).
    fn model(&mut self) -> Option<Arc<TableModel>> {
        if self.model.is_none() {
            self.model = Some(engine::table_model(self.options)?);
        }
        self.model.as_ref()?.as_ref().ok().cloned()
    }

    /// What the notes say: which tables the model read, and why it was
    /// not used where it was not.
    pub(crate) fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if let Some(Err(reason)) = &self.model {
            notes.push(format!(
                "The table model is not in use ({reason}); tables were read by porter's layout rules."
            ));
        }
        if matches!(self.canvas, Drawing::Failed) {
            notes.push(
                "The table model could not draw this PDF's pages; tables were read by porter's layout rules."
                    .to_owned(),
            );
        }
        if self.read > 0 || self.kept > 0 {
            notes.push(format!(
                "Tables read by the table model: {} of {}{}.",
                self.read,
                self.read + self.kept,
                if self.kept > 0 {
                    " (the others by porter's layout rules, where the model's cells did not hold the table's words)"
                } else {
                    ""
                }
            ));
        }
        if self.left > 0 {
            notes.push(format!(
                "{} tables were read by porter's layout rules alone: past the table model's {} tables or {} s for one file.",
                self.left, self.options.table_model_tables, self.options.table_model_seconds
            ));
        }
        notes
    }
}

/// A word of the page: its text and box (layout points).
struct Word<'p> {
    text: &'p str,
    x0: f32,
    y0: f32,
    x1: f32,
    y1: f32,
}

/// The words of `pieces` whose middles lie in `region`, each piece's width
/// shared among its words by their length (a piece is set in one font, so
/// its characters are about as wide as one another).
fn words_in(pieces: &[Piece], region: Region) -> Vec<Word<'_>> {
    let mut out = Vec::new();
    for p in pieces {
        let (cx, cy) = (f32::midpoint(p.x0, p.x1), f32::midpoint(p.y0, p.y1));
        if cx < region[0] || cx > region[2] || cy < region[1] || cy > region[3] {
            continue;
        }
        let total = p.text.chars().count().max(1) as f32;
        let each = (p.x1 - p.x0) / total;
        let mut at = 0usize;
        for word in p.text.split(' ') {
            let n = word.chars().count();
            if !word.trim().is_empty() {
                out.push(Word {
                    text: word.trim(),
                    x0: p.x0 + at as f32 * each,
                    y0: p.y0,
                    x1: p.x0 + (at + n) as f32 * each,
                    y1: p.y1,
                });
            }
            at += n + 1;
        }
    }
    out
}

/// The model's table with its cells filled by the words in `region`, or
/// `None` when it does not hold them (see the module's doc).
fn filled(guess: &TableGuess, drawn: &Drawn, region: Region, pieces: &[Piece]) -> Option<Table> {
    if guess.rows < 2 || guess.columns < 2 || guess.cells.is_empty() {
        return None;
    }
    let boxes: Vec<Region> = guess.cells.iter().map(|c| cell_box(c, drawn)).collect();
    let words = words_in(pieces, region);
    let mut texts: Vec<Vec<&Word<'_>>> = vec![Vec::new(); boxes.len()];
    let mut placed = 0usize;
    for word in &words {
        if let Some(i) = nearest(&boxes, word) {
            texts[i].push(word);
            placed += 1;
        }
    }
    if (placed as f32) < MIN_PLACED * words.len() as f32 {
        return None;
    }
    let mut rows: Vec<Vec<Cell>> = vec![Vec::new(); guess.rows];
    // Each column's cells of dots alone, and its cells with other text.
    let mut dotted: Vec<(usize, usize)> = vec![(0, 0); guess.columns];
    for (cell, mut words) in guess.cells.iter().zip(texts) {
        words.sort_by(|a, b| {
            let same_line = (a.y0 - b.y0).abs() < 0.5 * (a.y1 - a.y0).min(b.y1 - b.y0);
            if same_line {
                a.x0.total_cmp(&b.x0)
            } else {
                a.y0.total_cmp(&b.y0)
            }
        });
        let mut text = words.iter().map(|w| w.text).collect::<Vec<_>>().join(" ");
        drop_leaders(&mut text);
        if cell.col_span == 1
            && let Some((dots, other)) = dotted.get_mut(cell.column)
        {
            if dots_alone(&text) {
                *dots += 1;
            } else if !text.is_empty() {
                *other += 1;
            }
        }
        if let Some(row) = rows.get_mut(cell.row) {
            row.push(Cell {
                text,
                col_span: cell.col_span,
                row_span: cell.row_span,
            });
        }
    }
    // A column of dots alone, row after row, is a row label's dot leaders
    // read as a column of their own: the model's columns are not the
    // table's, and the rules' reading stays.
    if dotted.iter().any(|(dots, other)| *dots >= 2 && *other == 0) {
        return None;
    }
    Some(Table { rows })
}

/// Whether a cell's text is dots alone (leaders, or "not available").
fn dots_alone(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c == '.' || c == '\u{2026}' || c.is_whitespace())
}

/// A cell's box in layout points.
fn cell_box(cell: &CellGuess, drawn: &Drawn) -> Region {
    let (ax, ay) = drawn.layout_point(cell.x0, cell.y0);
    let (bx, by) = drawn.layout_point(cell.x1, cell.y1);
    [ax.min(bx), ay.min(by), ax.max(bx), ay.max(by)]
}

/// The cell a word goes in: the one its middle lies in (the smallest, where
/// boxes overlap), else the nearest by how far its middle lies outside,
/// up and down counting double (rows are closer together than columns),
/// within twice the word's height.
fn nearest(boxes: &[Region], word: &Word<'_>) -> Option<usize> {
    let (cx, cy) = (
        f32::midpoint(word.x0, word.x1),
        f32::midpoint(word.y0, word.y1),
    );
    let reach = 2.0 * (word.y1 - word.y0).max(1.0);
    let mut best: Option<(usize, f32, f32)> = None;
    for (i, b) in boxes.iter().enumerate() {
        let dx = (b[0] - cx).max(cx - b[2]).max(0.0);
        let dy = (b[1] - cy).max(cy - b[3]).max(0.0);
        let distance = dx + 2.0 * dy;
        let area = (b[2] - b[0]) * (b[3] - b[1]);
        if distance > reach {
            continue;
        }
        let better = best.is_none_or(|(_, d, a)| {
            distance < d || ((distance - d).abs() <= f32::EPSILON && area < a)
        });
        if better {
            best = Some((i, distance, area));
        }
    }
    best.map(|(i, _, _)| i)
}
