//! Workbooks (XLSX, ODS, XLS): each sheet's cell values as tab-joined rows.
//!
//! Sheets come in workbook order, each headed by its name (hidden ones and
//! chart sheets say so). A row is a line whose cells sit in their columns
//! (empty cells between are kept as tabs, trailing ones dropped); a run of
//! empty rows is one line saying how many. Formulas show their cached value,
//! dates and times are written `YYYY-MM-DD HH:MM:SS`, numbers without float
//! noise, errors as Excel shows them.
//!
//! calamine reads XLSX and ODS, but holds no limits of its own: it reserves
//! what a file declares and expands repeated ODS cells in memory. So before
//! it is given a package, every entry is decompressed once under the
//! `office_xml_bytes` cap, declared counts are checked against the sizes
//! seen, and for ODS the memory its cells will take is worked out first.
//! XLSX sheets are streamed cell by cell, so a sheet's declared dimension
//! never becomes an allocation.

use std::collections::HashMap;
use std::io::{BufRead, Cursor};
use std::panic::{AssertUnwindSafe, catch_unwind};

#[cfg(test)]
use calamine::SheetVisible;
use calamine::{Ods, Reader, Sheet, SheetType, Xlsx, XlsxError, open_workbook_from_rs};

use super::cells::{Grid, SheetSink, value_ref_text, value_text};
#[cfg(test)]
use super::cells::{heading, number_text};
use super::package::Package;
#[cfg(test)]
use super::text::TextOut;
use super::xml::{Node, Xml, attribute, local, relationship_ids};
use super::{WorkbookFormat, xls};
#[cfg(test)]
use crate::bounds::Extracted;
use crate::bounds::{Cancel, Failure};
use crate::describe::human_size;
use crate::options::Options;

/// The note every workbook text carries.
pub(crate) const WORKBOOK_NOTE: &str =
    "These are the cell values only: formatting, comments, charts and pictures are not included.";

/// `CELL_HEAP_BYTES` is what calamine holds per ODS cell besides its text:
/// the value (32 bytes) and the formula string (24 bytes).
const CELL_HEAP_BYTES: u64 = 56;

/// The most rows and columns calamine expands an ODS sheet to.
const ODS_MAX_ROWS: u64 = 1_048_576;
/// See [`ODS_MAX_ROWS`].
const ODS_MAX_COLUMNS: u64 = 16_384;

/// Extracts the cell values of the workbook in `bytes` as tab-joined
/// lines (the view and extract go through [`read_into`] into Markdown
/// tables; the tests here read the walk this way).
#[cfg(test)]
pub(crate) fn extract(
    bytes: &[u8],
    format: WorkbookFormat,
    options: &Options,
    cancel: &Cancel,
) -> Result<Extracted, Failure> {
    let mut out = TextOut::new(options.office_text_bytes);
    read_into(bytes, format, options, cancel, &mut out)?;
    Ok(out.finish(WORKBOOK_NOTE))
}

/// Reads the workbook in `bytes` into `out`, sheet by sheet: the one walk
/// of a workbook.
pub(crate) fn read_into(
    bytes: &[u8],
    format: WorkbookFormat,
    options: &Options,
    cancel: &Cancel,
    out: &mut dyn SheetSink,
) -> Result<(), Failure> {
    match format {
        WorkbookFormat::Xlsx => xlsx(bytes, options, cancel, out),
        WorkbookFormat::Ods => ods(bytes, options, cancel, out),
        WorkbookFormat::Xls => xls::read_into(bytes, options, cancel, out),
    }
}

#[cfg(test)]
impl SheetSink for TextOut {
    fn sheet(&mut self, name: &str, kind: SheetType, visible: SheetVisible) {
        if !self.is_empty() {
            self.line("");
        }
        self.line(&heading(name, kind, visible));
    }

    fn remark(&mut self, text: &str) {
        self.line(text);
    }

    fn row(&mut self, gap: u32, cells: &[(u32, String)]) {
        if gap == 1 {
            self.line("(1 empty row)");
        } else if gap > 1 {
            self.line(&format!("({gap} empty rows)"));
        }
        let mut line = String::new();
        let mut next: u32 = 0;
        for (index, (column, text)) in cells.iter().enumerate() {
            let tabs = if index == 0 {
                *column
            } else {
                column.saturating_sub(next).saturating_add(1)
            };
            line.extend(std::iter::repeat_n('\t', tabs as usize));
            line.push_str(text);
            next = column.saturating_add(1);
        }
        self.line(&line);
    }

    fn end_sheet(&mut self, wrote: bool) {
        if !wrote {
            self.line("(no values)");
        }
    }

    fn is_full(&self) -> bool {
        TextOut::is_full(self)
    }
}

/// Runs a calamine call, turning a panic inside it into a reason: a damaged
/// file must end in a description, never in a crashed request.
fn guarded<T>(what: &str, call: impl FnOnce() -> T) -> Result<T, Failure> {
    catch_unwind(AssertUnwindSafe(call)).map_err(|_| {
        Failure::unreadable(format!(
            "its {what} is damaged in a way the reader cannot follow"
        ))
    })
}

/// Reads an XLSX package, once it is proven small enough, sheet by sheet
/// through calamine's cell stream.
fn xlsx(
    bytes: &[u8],
    options: &Options,
    cancel: &Cancel,
    out: &mut dyn SheetSink,
) -> Result<(), Failure> {
    let sizes = Package::open_checked(bytes, options)?.measure_all(cancel)?;
    check_xlsx_declarations(bytes, &sizes, options, cancel)?;

    each_sheet(bytes, cancel, out, |book: &mut Xlsx<_>, sheet, out| {
        if sheet.typ == SheetType::ChartSheet {
            out.end_sheet(true);
            return Ok(());
        }
        let mut grid = Grid::new(out, options.office_text_bytes);
        let read = guarded("workbook", || -> Result<(), SheetError> {
            let mut cells = match book.worksheet_cells_reader(&sheet.name) {
                Ok(cells) => cells,
                Err(XlsxError::NotAWorksheet(_)) => return Ok(()),
                Err(error) => return Err(SheetError::Calamine(error.to_string())),
            };
            while let Some(cell) = cells
                .next_cell()
                .map_err(|error| SheetError::Calamine(error.to_string()))?
            {
                let (row, column) = cell.get_position();
                grid.add(row, column, value_ref_text(cell.get_value()), cancel)
                    .map_err(SheetError::Stopped)?;
                if grid.is_full() {
                    break;
                }
            }
            Ok(())
        })?;
        match read {
            Ok(()) => {}
            Err(SheetError::Stopped(failure)) => return Err(failure),
            Err(SheetError::Calamine(error)) => {
                return Err(Failure::unreadable(format!(
                    "its sheet {} cannot be read ({error})",
                    sheet.name
                )));
            }
        }
        grid.finish(cancel)
    })
}

/// Opens the workbook in `bytes` with calamine's reader `R` and hands each
/// of its sheets, in workbook order, to `read`, once `out` has been told a
/// new sheet begins; it stops once `out` takes no more.
fn each_sheet<'b, R>(
    bytes: &'b [u8],
    cancel: &Cancel,
    out: &mut dyn SheetSink,
    mut read: impl FnMut(&mut R, &Sheet, &mut dyn SheetSink) -> Result<(), Failure>,
) -> Result<(), Failure>
where
    R: Reader<Cursor<&'b [u8]>>,
    R::Error: std::fmt::Display,
{
    let opened = guarded("workbook", || {
        open_workbook_from_rs::<R, _>(Cursor::new(bytes))
    })?;
    let mut book = opened
        .map_err(|error| Failure::unreadable(format!("its workbook cannot be read ({error})")))?;
    let sheets = book.sheets_metadata().to_vec();
    for sheet in &sheets {
        cancel.check()?;
        if out.is_full() {
            break;
        }
        out.sheet(&sheet.name, sheet.typ, sheet.visible);
        read(&mut book, sheet, out)?;
    }
    Ok(())
}

/// Why reading one sheet stopped.
enum SheetError {
    Stopped(Failure),
    Calamine(String),
}

/// Checks what an XLSX package declares against what was measured, before
/// calamine trusts it: the shared string count it reserves room for, and
/// the total XML its sheets would have it decompress (a workbook may list
/// one huge sheet part many times).
fn check_xlsx_declarations(
    bytes: &[u8],
    sizes: &[(String, u64)],
    options: &Options,
    cancel: &Cancel,
) -> Result<(), Failure> {
    let size_of = |name: &str| {
        sizes
            .iter()
            .find(|(entry, _)| entry.eq_ignore_ascii_case(name))
            .map(|(_, size)| *size)
    };
    let largest = sizes.iter().map(|(_, size)| *size).max().unwrap_or(0);
    let mut package = Package::open(bytes, options)?;

    for (name, _) in sizes {
        cancel.check()?;
        if !name.to_ascii_lowercase().ends_with("styles.xml") {
            continue;
        }
        let memory = package
            .read(name, |xml| styles_memory(xml, cancel))?
            .unwrap_or(0);
        if memory > options.office_xml_bytes {
            return Err(Failure::unreadable(format!(
                "its cell formats would take more than {} of memory, since each repeats long font names or number formats",
                human_size(options.office_xml_bytes)
            )));
        }
    }

    for (name, size) in sizes {
        cancel.check()?;
        if !name.to_ascii_lowercase().ends_with("sharedstrings.xml") {
            continue;
        }
        let declared = package.read(name, |xml| {
            let part = xml.part().to_owned();
            loop {
                match xml.next()? {
                    Node::Start(start) if local(&start) == "sst" => {
                        return attribute(&start, &part, |k| k == "uniqueCount");
                    }
                    Node::Start(_) | Node::Eof => return Ok(None),
                    _ => {}
                }
            }
        })?;
        let declared: u64 = declared
            .flatten()
            .and_then(|count| count.trim().parse().ok())
            .unwrap_or(0);
        // Every shared string takes at least `<si/>`, five bytes.
        if declared > size / 5 + 1 {
            return Err(Failure::unreadable(format!(
                "its shared strings part declares {declared} strings, far more than it holds"
            )));
        }
    }

    let Some(main) = package.main_part()? else {
        return Ok(());
    };
    let rels = package.relationships(&main)?;
    let sheet_ids = package
        .read(&main, |xml| relationship_ids(xml, "sheet"))?
        .unwrap_or_default();
    let mut total: u64 = 0;
    for id in &sheet_ids {
        let target = rels
            .iter()
            .find(|rel| &rel.id == id)
            .map(|rel| rel.target.as_str());
        let size = target.and_then(size_of).unwrap_or(largest);
        total = total.saturating_add(size);
    }
    if total > options.office_xml_bytes {
        return Err(Failure::unreadable(format!(
            "its sheets would have more than {} of XML read, since they list the same parts again and again",
            human_size(options.office_xml_bytes)
        )));
    }
    Ok(())
}

/// `STYLE_BYTES` is about what calamine holds for one cell format besides
/// the strings it copies into it (font, fill, borders, alignment).
const STYLE_BYTES: u64 = 512;

/// Works out about how many bytes calamine will hold for a styles part: it
/// builds one style per cell format (`cellXfs/xf`), copying into each the
/// font name and number format code it refers to, so a few long strings
/// referred to by many formats multiply.
fn styles_memory<R: BufRead>(xml: &mut Xml<R>, cancel: &Cancel) -> Result<u64, Failure> {
    let part = xml.part().to_owned();
    let mut fonts: Vec<u64> = Vec::new();
    let mut formats: HashMap<String, u64> = HashMap::new();
    let mut in_fonts: Option<usize> = None;
    let mut in_formats: Option<usize> = None;
    let mut in_cell_formats: Option<usize> = None;
    let mut total: u64 = 0;
    loop {
        let depth = xml.depth() + 1;
        match xml.next()? {
            Node::Start(start) => {
                let name = local(&start).to_owned();
                match name.as_str() {
                    "fonts" if in_fonts.is_none() => in_fonts = Some(depth),
                    "font" if in_fonts == Some(depth - 1) => fonts.push(0),
                    "name" if in_fonts.is_some_and(|at| depth == at + 2) => {
                        let value = attribute(&start, &part, |k| k == "val")?;
                        if let Some(last) = fonts.last_mut() {
                            *last = value.map_or(0, |v| v.len() as u64);
                        }
                    }
                    "numFmts" => in_formats = Some(depth),
                    "numFmt" if in_formats.is_some() => {
                        let id = attribute(&start, &part, |k| k == "numFmtId")?;
                        let code = attribute(&start, &part, |k| k == "formatCode")?;
                        if let (Some(id), Some(code)) = (id, code) {
                            formats.insert(id, code.len() as u64);
                        }
                    }
                    "cellXfs" => in_cell_formats = Some(depth),
                    "xf" if in_cell_formats == Some(depth - 1) => {
                        cancel.check()?;
                        let font = attribute(&start, &part, |k| k == "fontId")?
                            .and_then(|id| id.trim().parse::<usize>().ok())
                            .and_then(|id| fonts.get(id).copied())
                            .unwrap_or(0);
                        let format = attribute(&start, &part, |k| k == "numFmtId")?
                            .and_then(|id| formats.get(&id).copied())
                            .unwrap_or(0);
                        total = total
                            .saturating_add(STYLE_BYTES)
                            .saturating_add(font)
                            .saturating_add(format.saturating_mul(2));
                    }
                    _ => {}
                }
            }
            Node::End => {
                let depth = xml.depth();
                for open in [&mut in_fonts, &mut in_formats, &mut in_cell_formats] {
                    if open.is_some_and(|at| depth < at) {
                        *open = None;
                    }
                }
            }
            Node::Eof => return Ok(total),
            Node::Text(_) | Node::Other => {}
        }
    }
}

/// Reads an ODS package, once the memory calamine will take for it is
/// worked out and found within budget.
fn ods(
    bytes: &[u8],
    options: &Options,
    cancel: &Cancel,
    out: &mut dyn SheetSink,
) -> Result<(), Failure> {
    Package::open_checked(bytes, options)?.measure_all(cancel)?;
    let budget = options.office_xml_bytes.saturating_mul(2);
    let mut package = Package::open(bytes, options)?;
    let estimate = package.read("content.xml", |xml| ods_memory(xml, budget, cancel))?;
    let Some(estimate) = estimate else {
        return Err(Failure::unreadable("its main part content.xml is missing"));
    };
    if estimate > budget {
        return Err(Failure::unreadable(format!(
            "its sheets would take more than {} of memory once their repeated cells are expanded",
            human_size(budget)
        )));
    }

    each_sheet(bytes, cancel, out, |book: &mut Ods<_>, sheet, out| {
        let range =
            guarded("workbook", || book.worksheet_range(&sheet.name))?.map_err(|error| {
                Failure::unreadable(format!("its sheet {} cannot be read ({error})", sheet.name))
            })?;
        let (top, left) = range.start().unwrap_or((0, 0));
        let mut grid = Grid::new(out, options.office_text_bytes);
        for (row, column, value) in range.used_cells() {
            let row = top.saturating_add(u32::try_from(row).unwrap_or(u32::MAX));
            let column = left.saturating_add(u32::try_from(column).unwrap_or(u32::MAX));
            grid.add(row, column, value_text(value), cancel)?;
            if grid.is_full() {
                break;
            }
        }
        grid.finish(cancel)
    })
}

/// Works out, from `content.xml`, about how many bytes calamine will hold
/// for an ODS workbook's cells once it has expanded every repeated row and
/// column as it does; counting stops once past `budget`.
fn ods_memory<R: BufRead>(xml: &mut Xml<R>, budget: u64, cancel: &Cancel) -> Result<u64, Failure> {
    let part = xml.part().to_owned();
    let mut total: u64 = 0;
    let mut table: Option<(usize, OdsTable)> = None;
    let mut row: Option<(usize, OdsRow)> = None;
    loop {
        match xml.next()? {
            Node::Start(start) => match start.name().0 {
                "table:table" => {
                    drop(start);
                    table = Some((xml.depth(), OdsTable::default()));
                }
                "table:table-row" => {
                    let repeats = attribute(&start, &part, |k| k == "table:number-rows-repeated")?
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .unwrap_or(1);
                    drop(start);
                    if let Some((_, sheet)) = &mut table {
                        let capped = repeats.min(ODS_MAX_ROWS.saturating_sub(sheet.rows));
                        sheet.rows += capped;
                        row = Some((
                            xml.depth(),
                            OdsRow {
                                repeats: capped,
                                ..OdsRow::default()
                            },
                        ));
                    }
                }
                "table:table-cell" | "table:covered-table-cell" => {
                    let mut filled = false;
                    let mut heap: u64 = 0;
                    let mut repeats: u64 = 1;
                    for attr in start.attributes().with_checks(false) {
                        let attr = attr.map_err(|error| {
                            Failure::unreadable(format!("its part {part} is broken XML ({error})"))
                        })?;
                        match attr.key.0 {
                            "table:number-columns-repeated" => {
                                repeats = attr.value.trim().parse().unwrap_or(1);
                            }
                            "office:value" | "office:boolean-value" => filled = true,
                            "office:string-value"
                            | "office:date-value"
                            | "office:time-value"
                            | "table:formula" => {
                                filled = true;
                                heap = heap.saturating_add(attr.value.len() as u64);
                            }
                            "office:value-type" if attr.value == "string" => filled = true,
                            _ => {}
                        }
                    }
                    drop(start);
                    heap = heap.saturating_add(ods_cell_text_bytes(xml)?);
                    if let Some((_, cells)) = &mut row {
                        cells.add_cell(repeats, filled, heap);
                    }
                }
                _ => {}
            },
            Node::End => {
                let depth = xml.depth();
                if let Some((at, _)) = &row
                    && depth < *at
                    && let Some((_, finished)) = row.take()
                {
                    cancel.check()?;
                    if let Some((_, sheet)) = &mut table {
                        sheet.add_row(&finished);
                    }
                }
                if let Some((at, _)) = &table
                    && depth < *at
                    && let Some((_, finished)) = table.take()
                {
                    total = total.saturating_add(finished.memory());
                    if total > budget {
                        return Ok(total);
                    }
                }
            }
            Node::Eof => return Ok(total),
            Node::Text(_) | Node::Other => {}
        }
    }
}

/// The bytes of text calamine may build from a cell's content (read to the
/// cell's end): character data, one byte per paragraph, tab or line break,
/// and the run of spaces a `text:s` stands for.
fn ods_cell_text_bytes<R: BufRead>(xml: &mut Xml<R>) -> Result<u64, Failure> {
    let part = xml.part().to_owned();
    let level = xml.depth();
    let mut bytes: u64 = 0;
    loop {
        match xml.next()? {
            Node::Start(start) => {
                let extra = match start.name().0 {
                    "text:s" => attribute(&start, &part, |k| k == "text:c")?
                        .and_then(|c| c.trim().parse::<u64>().ok())
                        .unwrap_or(1),
                    _ => 1,
                };
                bytes = bytes.saturating_add(extra);
            }
            Node::Text(text) => bytes = bytes.saturating_add(text.len() as u64),
            Node::End => {
                if xml.depth() < level {
                    return Ok(bytes);
                }
            }
            Node::Eof => return Ok(bytes),
            Node::Other => {}
        }
    }
}

/// One ODS row as calamine will hold it.
#[derive(Default)]
struct OdsRow {
    /// How many times the row repeats (capped as calamine caps it).
    repeats: u64,
    /// Cells calamine pushes for one copy of the row.
    pushed: u64,
    /// Empty cells not yet pushed: calamine adds them only before a filled one.
    pending_empty: u64,
    /// Text bytes of one copy of the row.
    heap: u64,
    /// Whether any cell has a value.
    filled: bool,
}

impl OdsRow {
    /// Adds a cell repeated `repeats` times, as calamine pushes it.
    fn add_cell(&mut self, repeats: u64, filled: bool, heap: u64) {
        let empty = self
            .pending_empty
            .min(ODS_MAX_COLUMNS.saturating_sub(self.pushed));
        self.pushed += empty;
        self.pending_empty = 0;
        let capped = repeats.min(ODS_MAX_COLUMNS.saturating_sub(self.pushed));
        if filled {
            self.pushed += capped;
            self.heap = self.heap.saturating_add(capped.saturating_mul(heap));
            self.filled = true;
        } else {
            self.pending_empty = capped;
        }
    }
}

/// One ODS sheet as calamine will hold it: the cells as read, then the
/// rectangle from the first to the last filled row with every repeat made.
#[derive(Default)]
struct OdsTable {
    rows: u64,
    read_cells: u64,
    read_heap: u64,
    started: bool,
    pending_empty_rows: u64,
    span_rows: u64,
    width: u64,
    grid_heap: u64,
}

impl OdsTable {
    /// Adds a finished row, as calamine keeps and then expands it.
    fn add_row(&mut self, row: &OdsRow) {
        self.read_cells = self.read_cells.saturating_add(row.pushed);
        self.read_heap = self.read_heap.saturating_add(row.heap);
        if row.filled {
            if self.started {
                self.span_rows = self.span_rows.saturating_add(self.pending_empty_rows);
            }
            self.pending_empty_rows = 0;
            self.span_rows = self.span_rows.saturating_add(row.repeats);
            self.grid_heap = self
                .grid_heap
                .saturating_add(row.repeats.saturating_mul(row.heap));
            self.width = self.width.max(row.pushed);
            self.started = true;
        } else if self.started {
            self.pending_empty_rows = self.pending_empty_rows.saturating_add(row.repeats);
        }
    }

    /// Bytes held at the peak: the cells as read (twice, for vector growth)
    /// and the expanded rectangle.
    fn memory(&self) -> u64 {
        let read = self
            .read_cells
            .saturating_mul(CELL_HEAP_BYTES)
            .saturating_add(self.read_heap)
            .saturating_mul(2);
        let grid = self
            .span_rows
            .saturating_mul(self.width)
            .saturating_mul(CELL_HEAP_BYTES)
            .saturating_add(self.grid_heap);
        read.saturating_add(grid)
    }
}

// Fixtures are literal XML and bytes put together with `format!`, which
// reads more plainly here than a chain of `write!` calls.
#[allow(clippy::format_collect, clippy::format_push_string)]
#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::office::tests::zip_of;

    const MAIN_NS: &str = r#"xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships""#;
    const REL: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
    /// Cell formats: 0 general, 1 date (14), 2 date and time (22), 3 time
    /// (21), 4 elapsed hours (46), 5 a custom date format.
    const STYLES: &str = r#"<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><numFmts count="1"><numFmt numFmtId="164" formatCode="dd/mm/yyyy hh:mm"/></numFmts><cellXfs count="6"><xf numFmtId="0"/><xf numFmtId="14" applyNumberFormat="1"/><xf numFmtId="22" applyNumberFormat="1"/><xf numFmtId="21" applyNumberFormat="1"/><xf numFmtId="46" applyNumberFormat="1"/><xf numFmtId="164" applyNumberFormat="1"/></cellXfs></styleSheet>"#;

    /// A sheet in a test workbook: name, `state` attribute, whether it is a
    /// chart sheet, and its `sheetData` rows.
    struct TestSheet<'a> {
        name: &'a str,
        state: &'a str,
        chart: bool,
        rows: &'a str,
    }

    fn sheet<'a>(name: &'a str, rows: &'a str) -> TestSheet<'a> {
        TestSheet {
            name,
            state: "",
            chart: false,
            rows,
        }
    }

    fn xlsx_of(sheets: &[TestSheet<'_>], date_1904: bool, strings: &[&str]) -> Vec<u8> {
        let mut parts: Vec<(String, String)> = vec![
            (
                "_rels/.rels".into(),
                crate::office::tests::root_rels("xl/workbook.xml"),
            ),
            ("xl/styles.xml".into(), STYLES.into()),
        ];
        let mut listed = String::new();
        let mut rels = String::new();
        for (index, sheet) in sheets.iter().enumerate() {
            let number = index + 1;
            let state = if sheet.state.is_empty() {
                String::new()
            } else {
                format!(r#" state="{}""#, sheet.state)
            };
            listed.push_str(&format!(
                r#"<sheet name="{}" sheetId="{number}"{state} r:id="rId{number}"/>"#,
                sheet.name
            ));
            if sheet.chart {
                rels.push_str(&format!(
                    r#"<Relationship Id="rId{number}" Type="{REL}/chartsheet" Target="chartsheets/sheet{number}.xml"/>"#
                ));
                parts.push((
                    format!("xl/chartsheets/sheet{number}.xml"),
                    format!(r"<chartsheet {MAIN_NS}><sheetViews/></chartsheet>"),
                ));
            } else {
                rels.push_str(&format!(
                    r#"<Relationship Id="rId{number}" Type="{REL}/worksheet" Target="worksheets/sheet{number}.xml"/>"#
                ));
                parts.push((
                    format!("xl/worksheets/sheet{number}.xml"),
                    format!(
                        r"<worksheet {MAIN_NS}><sheetData>{}</sheetData></worksheet>",
                        sheet.rows
                    ),
                ));
            }
        }
        let epoch = if date_1904 {
            r#"<workbookPr date1904="1"/>"#
        } else {
            "<workbookPr/>"
        };
        parts.push((
            "xl/workbook.xml".into(),
            format!(r"<workbook {MAIN_NS}>{epoch}<sheets>{listed}</sheets></workbook>"),
        ));
        parts.push((
            "xl/_rels/workbook.xml.rels".into(),
            format!(r#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">{rels}<Relationship Id="rIdS" Type="{REL}/sharedStrings" Target="sharedStrings.xml"/><Relationship Id="rIdT" Type="{REL}/styles" Target="styles.xml"/></Relationships>"#),
        ));
        let shared: String = strings
            .iter()
            .map(|s| format!("<si><t>{s}</t></si>"))
            .collect();
        parts.push((
            "xl/sharedStrings.xml".into(),
            format!(
                r#"<sst {MAIN_NS} count="{0}" uniqueCount="{0}">{shared}</sst>"#,
                strings.len()
            ),
        ));
        zip_of_owned(&parts)
    }

    /// [`zip_of`] for parts whose names and contents are owned strings.
    fn zip_of_owned(parts: &[(String, String)]) -> Vec<u8> {
        let borrowed: Vec<(&str, &str)> = parts
            .iter()
            .map(|(n, c)| (n.as_str(), c.as_str()))
            .collect();
        zip_of(&borrowed)
    }

    /// Why the XLSX package of `parts` is refused under `options`.
    fn xlsx_refusal(parts: &[(String, String)], options: &Options) -> String {
        reason_for(&zip_of_owned(parts), WorkbookFormat::Xlsx, options)
    }

    /// The default options but for a cap of `bytes` on decompressed XML.
    fn xml_capped(bytes: u64) -> Options {
        Options {
            office_xml_bytes: bytes,
            ..Options::default()
        }
    }

    fn read(bytes: &[u8], format: WorkbookFormat) -> Result<Extracted, Failure> {
        extract(bytes, format, &Options::default(), &Cancel::new())
    }

    fn text_of(bytes: &[u8], format: WorkbookFormat) -> String {
        read(bytes, format)
            .expect("the test workbook is readable")
            .text
    }

    fn reason_for(bytes: &[u8], format: WorkbookFormat, options: &Options) -> String {
        match extract(bytes, format, options, &Cancel::new()) {
            Err(Failure::Unreadable(reason)) => reason,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn sheets_come_in_workbook_order_with_hidden_and_chart_sheets_marked() {
        let bytes = xlsx_of(
            &[
                sheet(
                    "Zeta",
                    r#"<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1"><v>1</v></c></row>"#,
                ),
                TestSheet {
                    state: "hidden",
                    ..sheet("Alpha", r#"<row r="1"><c r="A1" t="s"><v>1</v></c></row>"#)
                },
                TestSheet {
                    chart: true,
                    ..sheet("Chart", "")
                },
                TestSheet {
                    state: "veryHidden",
                    ..sheet("Secret", "")
                },
            ],
            false,
            &["first", "second"],
        );
        let extracted = read(&bytes, WorkbookFormat::Xlsx).expect("readable");
        assert_eq!(
            extracted.text,
            "Sheet: Zeta\nfirst\t1\n\nSheet: Alpha (hidden)\nsecond\n\nSheet: Chart (chart sheet, no cells)\n\nSheet: Secret (very hidden)\n(no values)"
        );
        assert_eq!(extracted.notes, vec![WORKBOOK_NOTE.to_owned()]);
    }

    #[test]
    fn cells_keep_their_columns_and_empty_row_runs_are_noted_once() {
        let rows = r#"<row r="1"><c r="A1"><v>1</v></c><c r="C1"><v>3</v></c></row><row r="2"><c r="B2"><v>2</v></c><c r="D2"><v></v></c></row><row r="15"><c r="A15"><v>15</v></c></row><row r="16"><c r="A16"><v>16</v></c></row><row r="18"><c r="A18"><v>18</v></c></row>"#;
        assert_eq!(
            text_of(
                &xlsx_of(&[sheet("S", rows)], false, &[]),
                WorkbookFormat::Xlsx
            ),
            "Sheet: S\n1\t\t3\n\t2\n(12 empty rows)\n15\n16\n(1 empty row)\n18"
        );
    }

    #[test]
    fn formulas_show_their_cached_values_and_numbers_carry_no_float_noise() {
        let rows = r#"<row r="1"><c r="A1"><f>0.1+0.2</f><v>0.30000000000000004</v></c><c r="B1" t="e"><f>1/0</f><v>#DIV/0!</v></c><c r="C1" t="str"><f>"a"&amp;"b"</f><v>ab</v></c><c r="D1" t="b"><v>1</v></c><c r="E1"><v>1.0</v></c><c r="F1"><v>1E+20</v></c><c r="G1"><v>-2.5</v></c><c r="H1" t="inlineStr"><is><t>in	line</t></is></c></row>"#;
        assert_eq!(
            text_of(
                &xlsx_of(&[sheet("S", rows)], false, &[]),
                WorkbookFormat::Xlsx
            ),
            "Sheet: S\n0.3\t#DIV/0!\tab\tTRUE\t1\t1E+20\t-2.5\tin line"
        );
    }

    #[test]
    fn dates_and_times_read_the_same_in_the_1900_and_1904_systems() {
        let cells = |date: u32| {
            format!(
                r#"<row r="1"><c r="A1" s="1"><v>{date}</v></c><c r="B1" s="2"><v>{date}.5</v></c><c r="C1" s="3"><v>0.75</v></c><c r="D1" s="4"><v>1.5</v></c><c r="E1" s="5"><v>{date}.25</v></c></row>"#
            )
        };
        let expected =
            "Sheet: S\n2023-03-15\t2023-03-15 12:00:00\t18:00:00\t36:00:00\t2023-03-15 06:00:00";
        let in_1900 = xlsx_of(&[sheet("S", &cells(45_000))], false, &[]);
        assert_eq!(text_of(&in_1900, WorkbookFormat::Xlsx), expected);
        let in_1904 = xlsx_of(&[sheet("S", &cells(45_000 - 1462))], true, &[]);
        assert_eq!(text_of(&in_1904, WorkbookFormat::Xlsx), expected);
    }

    #[test]
    fn an_absurd_declared_dimension_costs_nothing() {
        let rows = r#"<row r="1"><c r="A1"><v>1</v></c></row><row r="1048576"><c r="XFD1048576"><v>2</v></c></row>"#;
        let mut bytes = xlsx_of(&[sheet("S", rows)], false, &[]);
        // The same package with a sheet-wide dimension declared.
        let declared = format!(
            r#"<worksheet {MAIN_NS}><dimension ref="A1:XFD1048576"/><sheetData>{rows}</sheetData></worksheet>"#
        );
        let parts = [
            (
                "_rels/.rels",
                crate::office::tests::root_rels("xl/workbook.xml"),
            ),
            (
                "xl/workbook.xml",
                format!(
                    r#"<workbook {MAIN_NS}><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>"#
                ),
            ),
            (
                "xl/_rels/workbook.xml.rels",
                format!(
                    r#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{REL}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#
                ),
            ),
            ("xl/worksheets/sheet1.xml", declared),
        ];
        let borrowed: Vec<(&str, &str)> = parts.iter().map(|(n, c)| (*n, c.as_str())).collect();
        bytes.clear();
        bytes.extend(zip_of(&borrowed));
        let started = Instant::now();
        let text = text_of(&bytes, WorkbookFormat::Xlsx);
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(
            text,
            format!(
                "Sheet: S\n1\n(1048574 empty rows)\n{}2",
                "\t".repeat(16_383)
            )
        );
    }

    #[test]
    fn declared_counts_and_repeated_parts_past_what_a_package_holds_are_refused() {
        let mut parts = vec![
            (
                "_rels/.rels".to_owned(),
                crate::office::tests::root_rels("xl/workbook.xml"),
            ),
            (
                "xl/sharedStrings.xml".to_owned(),
                format!(r#"<sst {MAIN_NS} uniqueCount="4000000000"><si><t>x</t></si></sst>"#),
            ),
        ];
        let reason = xlsx_refusal(&parts, &Options::default());
        assert!(reason.contains("declares 4000000000 strings"), "{reason}");

        // One 2 KB sheet part listed 100 times, against a 64 KB cap.
        let listed: String = (0..100)
            .map(|i| format!(r#"<sheet name="S{i}" sheetId="{i}" r:id="rId1"/>"#))
            .collect();
        let rows = format!(
            r#"<row r="1"><c r="A1"><v>1</v></c></row>{}"#,
            " ".repeat(2000)
        );
        parts = vec![
            (
                "_rels/.rels".to_owned(),
                crate::office::tests::root_rels("xl/workbook.xml"),
            ),
            (
                "xl/workbook.xml".to_owned(),
                format!(r"<workbook {MAIN_NS}><sheets>{listed}</sheets></workbook>"),
            ),
            (
                "xl/_rels/workbook.xml.rels".to_owned(),
                format!(
                    r#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{REL}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#
                ),
            ),
            (
                "xl/worksheets/sheet1.xml".to_owned(),
                format!(r"<worksheet {MAIN_NS}><sheetData>{rows}</sheetData></worksheet>"),
            ),
        ];
        let reason = xlsx_refusal(&parts, &xml_capped(64 * 1024));
        assert!(reason.contains("list the same parts"), "{reason}");
    }

    #[test]
    fn cell_formats_that_would_copy_long_strings_many_times_are_refused() {
        let font = format!(r#"<font><name val="{}"/></font>"#, "F".repeat(10_000));
        let formats = r#"<xf numFmtId="0" fontId="0"/>"#.repeat(2000);
        let styles = format!(
            r#"<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><fonts count="1">{font}</fonts><cellXfs count="2000">{formats}</cellXfs></styleSheet>"#
        );
        let parts = [
            (
                "_rels/.rels".to_owned(),
                crate::office::tests::root_rels("xl/workbook.xml"),
            ),
            ("xl/styles.xml".to_owned(), styles),
        ];
        let reason = xlsx_refusal(&parts, &xml_capped(1024 * 1024));
        assert!(
            reason.starts_with("its cell formats would take more than 1 MiB"),
            "{reason}"
        );
    }

    #[test]
    fn a_workbook_past_the_xml_cap_is_refused() {
        let rows: String = (1..=200)
            .map(|r| format!(r#"<row r="{r}"><c r="A{r}"><v>{r}</v></c></row>"#))
            .collect();
        let bytes = xlsx_of(&[sheet("S", &rows)], false, &[]);
        assert_eq!(
            reason_for(&bytes, WorkbookFormat::Xlsx, &xml_capped(4096)),
            "its XML comes to more than 4 KiB when decompressed"
        );
    }

    const ODS_NS: &str = r#"xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0""#;

    fn ods_of(tables: &str) -> Vec<u8> {
        let content = format!(
            r#"<?xml version="1.0" encoding="UTF-8"?><office:document-content {ODS_NS} office:version="1.2"><office:automatic-styles><style:style style:name="ta2" style:family="table"><style:table-properties table:display="false"/></style:style></office:automatic-styles><office:body><office:spreadsheet>{tables}</office:spreadsheet></office:body></office:document-content>"#
        );
        zip_of(&[
            ("mimetype", "application/vnd.oasis.opendocument.spreadsheet"),
            ("content.xml", &content),
            (
                "META-INF/manifest.xml",
                r#"<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.spreadsheet"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>"#,
            ),
        ])
    }

    #[test]
    fn an_ods_reads_its_sheets_values_dates_and_hidden_tables() {
        let first = r#"<table:table table:name="First"><table:table-row><table:table-cell office:value-type="string"><text:p>a<text:s text:c="2"/>b</text:p></table:table-cell><table:table-cell office:value-type="float" office:value="1.5"/><table:table-cell table:number-columns-repeated="2"/><table:table-cell office:value-type="date" office:date-value="2024-03-01T12:30:00"/></table:table-row><table:table-row table:number-rows-repeated="3"><table:table-cell/></table:table-row><table:table-row><table:table-cell office:value-type="time" office:time-value="PT36H00M00S"/><table:table-cell office:value-type="date" office:date-value="2024-03-02"/></table:table-row></table:table>"#;
        let hidden = r#"<table:table table:name="Second" table:style-name="ta2"><table:table-row><table:table-cell office:value-type="boolean" office:boolean-value="true"/></table:table-row></table:table>"#;
        assert_eq!(
            text_of(&ods_of(&format!("{first}{hidden}")), WorkbookFormat::Ods),
            "Sheet: First\na  b\t1.5\t\t\t2024-03-01 12:30:00\n(3 empty rows)\n36:00:00\t2024-03-02\n\nSheet: Second (hidden)\nTRUE"
        );
    }

    #[test]
    fn an_ods_whose_repeats_would_expand_past_memory_is_refused_fast() {
        let cases = [
            r#"<table:table table:name="T"><table:table-row table:number-rows-repeated="1000000"><table:table-cell office:value-type="float" office:value="1" table:number-columns-repeated="1000"/></table:table-row></table:table>"#,
            r#"<table:table table:name="T"><table:table-row><table:table-cell office:value-type="string"><text:p><text:s text:c="4000000000"/></text:p></table:table-cell></table:table-row></table:table>"#,
        ];
        for table in cases {
            let started = Instant::now();
            let reason = reason_for(&ods_of(table), WorkbookFormat::Ods, &Options::default());
            assert!(started.elapsed() < Duration::from_secs(2));
            assert!(
                reason.contains("of memory once their repeated cells are expanded"),
                "{reason}"
            );
        }
    }

    #[test]
    fn numbers_read_as_a_spreadsheet_shows_them() {
        for (value, expected) in [
            (1.0, "1"),
            (0.1, "0.1"),
            (0.1 + 0.2, "0.3"),
            (0.100_000_000_1, "0.1000000001"),
            (-2.5, "-2.5"),
            (123_456_789_012_345.0, "123456789012345"),
            (1e20, "1E+20"),
            (1.5e-12, "1.5E-12"),
            (0.0, "0"),
            (-0.0, "0"),
            (1_234.567_8, "1234.5678"),
        ] {
            assert_eq!(number_text(value), expected, "{value}");
        }
    }
}
