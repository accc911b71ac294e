//! Workbooks (XLSX, XLS, ODS) as Markdown: each sheet as `## <name>` and a
//! GFM table of its used range.
//!
//! The cells come from the same bounded walk as the view's
//! ([`read_into`]): formulas as their cached values, dates as ISO dates.
//! The table starts at the first row and column holding a value and ends at
//! the last (empty rows inside it are kept, so rows stay where they were);
//! its first row is the header. A sheet is cut at [`SHEET_ROWS`] rows and
//! [`SHEET_COLUMNS`] columns, each with a note.

use calamine::{SheetType, SheetVisible};

use super::out::{CELL_COST_BYTES, Markdown};
use crate::bounds::{Cancel, Failure};
use crate::describe::{count, human_size};
use crate::document::{Block, Cell, Inline, Table, Writer};
use crate::office::WorkbookFormat;
use crate::office::cells::{SheetSink, heading};
use crate::office::workbook::{WORKBOOK_NOTE, read_into};
use crate::options::Options;

/// `SHEET_ROWS` is the most rows of one sheet written as a table: beyond
/// it a Markdown table helps no reader, and a note says how many were left.
pub(crate) const SHEET_ROWS: usize = 10_000;

/// `SHEET_COLUMNS` is the most columns of one sheet's table.
pub(crate) const SHEET_COLUMNS: u32 = 256;

/// Converts the workbook in `bytes`.
pub(crate) fn convert(
    bytes: &[u8],
    format: WorkbookFormat,
    options: &Options,
    cancel: &Cancel,
) -> Result<Markdown, Failure> {
    let mut tables = Tables {
        out: Writer::new(options.office_text_bytes, Inline::Plain),
        budget: options.office_text_bytes,
        used: 0,
        sheet: None,
        notes: vec![WORKBOOK_NOTE.to_owned()],
    };
    read_into(bytes, format, options, cancel, &mut tables)?;
    tables.flush();
    if tables.used > tables.budget {
        tables.notes.push(format!(
            "The workbook was cut at {} of cell text; later cells are not included.",
            human_size(tables.budget as u64)
        ));
    }
    Ok(tables.out.finish(None, tables.notes))
}

/// One sheet being gathered.
struct Sheet {
    name: String,
    /// Rows from the first with a value, each as (column, text) cells.
    rows: Vec<Vec<(u32, String)>>,
    /// Rows left out past [`SHEET_ROWS`].
    rows_left: u64,
    /// Whether a cell lay past [`SHEET_COLUMNS`].
    wide: bool,
}

/// `Tables` is the [`SheetSink`] that turns sheets into document blocks:
/// a heading and a table each, rendered as Markdown as they come.
struct Tables {
    out: Writer,
    budget: usize,
    used: usize,
    sheet: Option<Sheet>,
    notes: Vec<String>,
}

impl Tables {
    /// Writes the sheet gathered so far.
    fn flush(&mut self) {
        let Some(sheet) = self.sheet.take() else {
            return;
        };
        let first_column = sheet
            .rows
            .iter()
            .filter_map(|row| row.first().map(|(c, _)| *c))
            .min()
            .unwrap_or(0);
        let rows: Vec<Vec<Cell>> = sheet
            .rows
            .into_iter()
            .map(|cells| {
                let width = cells.last().map_or(0, |(c, _)| c - first_column + 1);
                let mut row = vec![Cell::new(""); width as usize];
                for (column, text) in cells {
                    row[(column - first_column) as usize] = Cell::new(text);
                }
                row
            })
            .collect();
        self.out.push(&Block::Table(Table { rows }));
        if sheet.rows_left > 0 {
            self.notes.push(format!(
                "Sheet {}: only its first {} rows are included; {} more rows with values are not.",
                sheet.name,
                count(SHEET_ROWS as u64),
                count(sheet.rows_left)
            ));
        }
        if sheet.wide {
            self.notes.push(format!(
                "Sheet {}: only its first {} columns are included.",
                sheet.name,
                count(u64::from(SHEET_COLUMNS))
            ));
        }
    }
}

impl SheetSink for Tables {
    fn sheet(&mut self, name: &str, kind: SheetType, visible: SheetVisible) {
        self.flush();
        let title = heading(name, kind, visible);
        let title = title.strip_prefix("Sheet: ").unwrap_or(&title);
        self.out.push(&Block::Heading {
            level: 2,
            text: title.to_owned(),
        });
        self.sheet = Some(Sheet {
            name: name.to_owned(),
            rows: Vec::new(),
            rows_left: 0,
            wide: false,
        });
    }

    fn remark(&mut self, text: &str) {
        self.out.push(&Block::Paragraph(text.to_owned()));
    }

    fn row(&mut self, gap: u32, cells: &[(u32, String)]) {
        let Some(sheet) = self.sheet.as_mut() else {
            return;
        };
        if self.used > self.budget {
            return;
        }
        // Empty rows before the first row with values are outside the used
        // range; those between rows are kept as empty rows.
        let gap = if sheet.rows.is_empty() {
            0
        } else {
            gap as usize
        };
        let room = SHEET_ROWS.saturating_sub(sheet.rows.len());
        if gap + 1 > room {
            sheet.rows_left += 1;
            return;
        }
        for _ in 0..gap {
            sheet.rows.push(Vec::new());
        }
        self.used += gap * CELL_COST_BYTES;
        let mut row = Vec::with_capacity(cells.len());
        for (column, text) in cells {
            if *column >= SHEET_COLUMNS {
                sheet.wide = true;
                break;
            }
            self.used += text.len();
            row.push((*column, text.clone()));
        }
        // Every column up to the last one is written, empty or not.
        if let Some((last, _)) = row.last() {
            self.used += (*last as usize + 1) * CELL_COST_BYTES;
        }
        sheet.rows.push(row);
    }

    fn end_sheet(&mut self, wrote: bool) {
        if !wrote {
            self.out
                .push(&Block::Note("This sheet has no values.".to_owned()));
        }
    }

    fn is_full(&self) -> bool {
        self.out.is_full() || self.used > self.budget
    }

    fn sheet_full(&self) -> bool {
        // Rows past the cap are still counted for the note, so a sheet is
        // only full when the whole workbook is.
        self.is_full()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sink() -> Tables {
        Tables {
            out: Writer::new(1 << 20, Inline::Plain),
            budget: 1 << 20,
            used: 0,
            sheet: None,
            notes: Vec::new(),
        }
    }

    fn cells(list: &[(u32, &str)]) -> Vec<(u32, String)> {
        list.iter().map(|(c, t)| (*c, (*t).to_owned())).collect()
    }

    #[test]
    fn a_sheet_is_a_table_of_its_used_range_with_inner_empty_rows_kept() {
        let mut tables = sink();
        tables.sheet("Data", SheetType::WorkSheet, SheetVisible::Visible);
        tables.row(2, &cells(&[(1, "Name"), (2, "Amount")]));
        tables.row(0, &cells(&[(1, "Widget"), (2, "42")]));
        tables.row(1, &cells(&[(2, "7")]));
        tables.end_sheet(true);
        tables.sheet("Secret", SheetType::WorkSheet, SheetVisible::Hidden);
        tables.end_sheet(false);
        tables.flush();
        let md = tables.out.finish(None, Vec::new());
        assert_eq!(
            md.text,
            "## Data\n\n| Name | Amount |\n| --- | --- |\n| Widget | 42 |\n|  |  |\n|  | 7 |\n\n## Secret (hidden)\n\n*(This sheet has no values.)*\n"
        );
    }

    #[test]
    fn rows_past_the_cap_are_counted_in_a_note_not_written() {
        let mut tables = sink();
        tables.sheet("Long", SheetType::WorkSheet, SheetVisible::Visible);
        for n in 0..SHEET_ROWS + 5 {
            tables.row(0, &cells(&[(0, &n.to_string())]));
        }
        tables.end_sheet(true);
        tables.flush();
        assert_eq!(
            tables.notes,
            vec![
                "Sheet Long: only its first 10,000 rows are included; 5 more rows with values are not."
            ]
        );
        let md = tables.out.finish(None, Vec::new());
        assert!(md.text.contains("| 9999 |"));
        assert!(!md.text.contains("| 10000 |"));
    }
}
