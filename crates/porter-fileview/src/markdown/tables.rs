//! The tables a Word or PowerPoint walk is inside, and the table block
//! each becomes.

use super::out::CELL_COST_BYTES;
use crate::document;

/// `OpenTables` are the tables a Word or PowerPoint walk is inside,
/// innermost last, each built as its rows and cells open: rows of cell
/// texts.
#[derive(Debug, Default)]
pub(crate) struct OpenTables(Vec<Vec<Vec<String>>>);

/// `TablePart` is the part of a table an element opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TablePart {
    Table,
    Row,
    Cell,
}

impl OpenTables {
    /// Opens the part of a table that the element named `local` stands for
    /// (`tbl`, `tr` and `tc`, the same local names in WordprocessingML and
    /// DrawingML), a cell adding its cost to `used`; `None` for any other
    /// element.
    pub(crate) fn start(&mut self, local: &str, used: &mut usize) -> Option<TablePart> {
        match local {
            "tbl" => {
                self.open();
                Some(TablePart::Table)
            }
            "tr" => {
                self.row();
                Some(TablePart::Row)
            }
            "tc" => {
                *used += CELL_COST_BYTES;
                self.empty_cells(1);
                Some(TablePart::Cell)
            }
            _ => None,
        }
    }

    /// A table opens inside the others.
    fn open(&mut self) {
        self.0.push(Vec::new());
    }

    /// A row opens in the innermost table.
    fn row(&mut self) {
        if let Some(table) = self.0.last_mut() {
            table.push(Vec::new());
        }
    }

    /// `count` empty cells join the innermost row.
    pub(crate) fn empty_cells(&mut self, count: usize) {
        if let Some(row) = self.0.last_mut().and_then(|table| table.last_mut()) {
            row.extend(std::iter::repeat_n(String::new(), count));
        }
    }

    /// The text of the innermost table's last cell, where its text goes.
    pub(crate) fn last_cell(&mut self) -> Option<&mut String> {
        self.0.last_mut()?.last_mut()?.last_mut()
    }

    /// The innermost table closes: its rows.
    pub(crate) fn close(&mut self) -> Option<Vec<Vec<String>>> {
        self.0.pop()
    }
}

/// A table block of the cell texts `rows`, each cell one column and row.
pub(crate) fn table_block(rows: Vec<Vec<String>>) -> document::Block {
    let rows = rows
        .into_iter()
        .map(|row| row.into_iter().map(document::Cell::new).collect())
        .collect();
    document::Block::Table(document::Table { rows })
}
