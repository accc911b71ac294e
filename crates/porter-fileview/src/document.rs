//! One document model: what a reader finds in a document (headings with
//! their levels, paragraphs, list items, tables with spans, figure text,
//! notes, page markers), kept apart from how it is written out. A reader
//! produces [`Block`]s once; the Markdown renderer here writes them.
//!
//! The PDF reader produces it today; the other readers are meant to move
//! onto it, so it holds nothing PDF-specific.

use crate::markdown::{MdOut, escape_inline, escape_line, table};

/// One block of a document, in reading order.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(not(feature = "pdf"), allow(dead_code))]
pub(crate) enum Block {
    /// A heading; `level` 1 is the top (Markdown `#`), at most 6.
    Heading { level: u8, text: String },
    /// A paragraph of running text, on one line.
    Paragraph(String),
    /// A list item; `level` 0 is the outer list. `marker` is the item's own
    /// number or letter when it is ordered ("3.", "b)"), kept as written.
    ListItem {
        level: u8,
        marker: Option<String>,
        text: String,
    },
    /// A table: rows of cells, the first row shown as the header.
    Table(Table),
    /// The text of a figure or chart (labels, values, captions inside it).
    Figure(String),
    /// A note of the reader's about the document (a page with no text
    /// layer, a part that could not be read).
    Note(String),
    /// The start of a page: its number from 1 and how many there are.
    Page { number: usize, total: usize },
}

/// A table's rows. A cell that spans several columns or rows sits once, at
/// its top-left position; the places it covers hold no cell of their own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Table {
    /// The rows, top to bottom.
    pub rows: Vec<Vec<Cell>>,
}

/// One table cell: its text (line breaks inside a cell kept as `\n`) and
/// how many columns and rows it covers (1 and 1 for an ordinary cell).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cell {
    pub text: String,
    pub col_span: usize,
    pub row_span: usize,
}

impl Cell {
    /// An ordinary cell of one column and one row.
    #[cfg(test)]
    pub(crate) fn new(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            col_span: 1,
            row_span: 1,
        }
    }
}

impl Table {
    /// The table as a grid of texts, every row as wide as the widest: a cell
    /// spanning columns or rows has its text in its first place and empty
    /// text in the places it covers (GFM tables have no spans).
    pub(crate) fn grid(&self) -> Vec<Vec<String>> {
        let mut grid: Vec<Vec<Option<String>>> = Vec::with_capacity(self.rows.len());
        for (r, row) in self.rows.iter().enumerate() {
            if grid.len() <= r {
                grid.push(Vec::new());
            }
            let mut column = 0usize;
            for cell in row {
                // Skip the places an earlier row's cell still covers.
                while grid[r].get(column).is_some_and(Option::is_some) {
                    column += 1;
                }
                let rows = cell.row_span.clamp(1, self.rows.len() - r);
                let columns = cell.col_span.max(1);
                for dr in 0..rows {
                    while grid.len() <= r + dr {
                        grid.push(Vec::new());
                    }
                    let line = &mut grid[r + dr];
                    if line.len() < column + columns {
                        line.resize(column + columns, None);
                    }
                    for dc in 0..columns {
                        line[column + dc] = Some(if dr == 0 && dc == 0 {
                            cell.text.clone()
                        } else {
                            String::new()
                        });
                    }
                }
                column += columns;
            }
        }
        let width = grid.iter().map(Vec::len).max().unwrap_or(0);
        grid.into_iter()
            .map(|row| {
                let mut row: Vec<String> = row.into_iter().map(Option::unwrap_or_default).collect();
                row.resize(width, String::new());
                row
            })
            .collect()
    }
}

/// Writes `blocks` as Markdown into `out`: `#` headings, pipe tables,
/// `-` and numbered list items, figure text as a paragraph, page markers
/// as `<!-- page N of M -->` comments and notes in italics. Text is escaped
/// so a document's words never turn into Markdown structure.
pub(crate) fn write_markdown(blocks: &[Block], out: &mut MdOut) {
    for block in blocks {
        if out.is_full() {
            return;
        }
        match block {
            Block::Heading { level, text } => {
                let hashes = "#".repeat(usize::from((*level).clamp(1, 6)));
                out.block(&format!("{hashes} {}", escape_inline(text.trim())));
            }
            Block::Paragraph(text) | Block::Figure(text) => out.block(&escape_line(text.trim())),
            Block::ListItem {
                level,
                marker,
                text,
            } => {
                let indent = "  ".repeat(usize::from(*level).min(8));
                let marker = marker.as_deref().unwrap_or("-");
                out.item(&format!("{indent}{marker} {}", escape_inline(text.trim())));
            }
            Block::Table(t) => {
                let grid: Vec<Vec<String>> = t
                    .grid()
                    .into_iter()
                    .map(|row| row.iter().map(|c| escape_inline(c)).collect())
                    .collect();
                out.block(&table(&grid));
            }
            Block::Note(text) => out.block(&format!("*({})*", escape_inline(text.trim()))),
            Block::Page { number, total } => {
                out.block(&format!("<!-- page {number} of {total} -->"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(blocks: &[Block]) -> String {
        let mut out = MdOut::new(10_000);
        write_markdown(blocks, &mut out);
        out.finish(None, Vec::new()).text
    }

    #[test]
    fn blocks_render_as_markdown_structure_with_their_text_escaped() {
        let blocks = vec![
            Block::Page {
                number: 1,
                total: 2,
            },
            Block::Heading {
                level: 2,
                text: "3. Results *now*".to_owned(),
            },
            Block::Paragraph("1. not a list".to_owned()),
            Block::ListItem {
                level: 0,
                marker: None,
                text: "first".to_owned(),
            },
            Block::ListItem {
                level: 1,
                marker: Some("2.".to_owned()),
                text: "second".to_owned(),
            },
            Block::Note("Page 2 has no text layer.".to_owned()),
        ];
        assert_eq!(
            render(&blocks),
            "<!-- page 1 of 2 -->\n\n## 3. Results \\*now\\*\n\n1\\. not a list\n\n\
             - first\n  2. second\n\n*(Page 2 has no text layer.)*\n"
        );
    }

    #[test]
    fn spanning_cells_fill_the_places_they_cover_with_empty_cells() {
        let mut wide = Cell::new("Both");
        wide.col_span = 2;
        let mut tall = Cell::new("Tall");
        tall.row_span = 2;
        let t = Table {
            rows: vec![
                vec![Cell::new("Name"), wide],
                vec![tall, Cell::new("a"), Cell::new("b|c")],
                vec![Cell::new("x"), Cell::new("y")],
            ],
        };
        assert_eq!(
            render(&[Block::Table(t)]),
            "| Name | Both |  |\n| --- | --- | --- |\n| Tall | a | b\\|c |\n|  | x | y |\n"
        );
    }
}
