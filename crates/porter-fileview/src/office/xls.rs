//! Legacy Excel workbooks (XLS, BIFF8): cell values, read by our own
//! bounded reader.
//!
//! calamine reads XLS too, but it sizes allocations from what the file
//! declares (a sheet's DIMENSIONS record, cell positions, repeated shared
//! strings) and rebuilds formula text in ways a crafted record can make
//! take hours; none of that can be capped from outside. Only values are
//! needed here, so this reader walks the records itself: it takes the
//! workbook stream out of the compound file (see [`super::cfb`]), reads the
//! shared strings, number formats and sheet list, then streams each sheet's
//! cell records into the same lines as other workbooks. Nothing is sized
//! from a declared count, and no sheet's records are walked twice.

use calamine::{ExcelDateTime, ExcelDateTimeType, SheetType, SheetVisible};

use super::cells::{Grid, SheetSink, clean, date_time_text, number_text};
use super::cfb;
use crate::bounds::{Cancel, Failure};
use crate::options::Options;

/// Record type: Begins a substream (globals, a sheet, an embedded chart).
const BOF: u16 = 0x0809;
/// Record type: Ends a substream.
const EOF: u16 = 0x000A;
/// Record type: Carries on the data of the record before it.
const CONTINUE: u16 = 0x003C;
/// Record type: Says the workbook is encrypted.
const FILEPASS: u16 = 0x002F;
/// Record type: Says whether dates count from 1904.
const DATEMODE: u16 = 0x0022;
/// Record type: A number format code and its id.
const FORMAT: u16 = 0x041E;
/// Record type: A cell format, naming its number format.
const XF: u16 = 0x00E0;
/// Record type: A sheet's name, kind, visibility and place in the stream.
const BOUNDSHEET: u16 = 0x0085;
/// Record type: The shared strings.
const SST: u16 = 0x00FC;
/// Record type: A cell holding a double.
const NUMBER: u16 = 0x0203;
/// Record type: A cell holding a packed number.
const RK: u16 = 0x027E;
/// Record type: Several adjacent cells holding packed numbers.
const MULRK: u16 = 0x00BD;
/// Record type: A cell holding its own string.
const LABEL: u16 = 0x0204;
/// Record type: A cell holding its own formatted string.
const RSTRING: u16 = 0x00D6;
/// Record type: A cell holding a shared string.
const LABELSST: u16 = 0x00FD;
/// Record type: A cell holding a boolean or an error.
const BOOLERR: u16 = 0x0205;
/// Record type: A formula cell with its cached value.
const FORMULA: u16 = 0x0006;
/// Record type: The cached string value of the formula cell before it.
const STRING: u16 = 0x0207;
/// The BOF version of BIFF8 (Excel 97 to 2003).
const BIFF8: u16 = 0x0600;

/// Reads the XLS workbook in `bytes` into `out`, sheet by sheet.
pub(crate) fn read_into(
    bytes: &[u8],
    options: &Options,
    cancel: &Cancel,
    out: &mut dyn SheetSink,
) -> Result<(), Failure> {
    let Some((name, stream)) = cfb::stream(bytes, &["Workbook", "Book"])? else {
        return Err(Failure::unreadable("it holds no Excel workbook stream"));
    };
    if name.eq_ignore_ascii_case("Book") {
        return Err(Failure::unreadable(
            "it is an Excel 5.0/95 workbook, an older format that is not read",
        ));
    }
    let book = read_globals(&stream, options, cancel)?;
    let mut walked: u64 = 0;
    let walk_budget = (stream.len() as u64).saturating_mul(2);
    let mut seen_offsets: Vec<usize> = Vec::new();
    for sheet in &book.sheets {
        cancel.check()?;
        if out.is_full() {
            break;
        }
        out.sheet(&sheet.name, sheet.kind, sheet.visible);
        if matches!(sheet.kind, SheetType::ChartSheet | SheetType::Vba) {
            out.end_sheet(true);
            continue;
        }
        if seen_offsets.contains(&sheet.offset) {
            out.remark("(The file points this sheet at the cells of an earlier one.)");
            out.end_sheet(true);
            continue;
        }
        seen_offsets.push(sheet.offset);
        let mut grid = Grid::new(&mut *out, options.office_text_bytes);
        walked = read_sheet(
            &stream,
            sheet.offset,
            &book,
            &mut grid,
            cancel,
            walked,
            walk_budget,
        )?;
        grid.finish(cancel)?;
    }
    Ok(())
}

/// A sheet as the workbook lists it.
struct SheetEntry {
    name: String,
    offset: usize,
    kind: SheetType,
    visible: SheetVisible,
}

/// What the workbook globals say that cells need.
struct Book {
    sheets: Vec<SheetEntry>,
    strings: Vec<String>,
    /// For each XF (cell format) record, how its numbers read.
    formats: Vec<NumberKind>,
    date_1904: bool,
}

/// How a number in a cell is meant to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NumberKind {
    Plain,
    Date,
    Duration,
}

/// One record: its type, its data, and the data of the CONTINUE records
/// after it.
struct Record<'s> {
    kind: u16,
    data: &'s [u8],
    continued: Vec<&'s [u8]>,
}

/// Walks records from `at`, joining each with the CONTINUE records after
/// it. A record running past the stream ends the walk with a reason.
struct Records<'s> {
    stream: &'s [u8],
    at: usize,
}

impl<'s> Iterator for Records<'s> {
    type Item = Result<(usize, Record<'s>), Failure>;

    fn next(&mut self) -> Option<Self::Item> {
        let stream = self.stream;
        let header = |at: usize| -> Option<(u16, usize)> {
            let bytes = stream.get(at..at + 4)?;
            Some((
                u16::from_le_bytes([bytes[0], bytes[1]]),
                usize::from(u16::from_le_bytes([bytes[2], bytes[3]])),
            ))
        };
        if self.at >= self.stream.len() {
            return None;
        }
        let start = self.at;
        let Some((kind, length)) = header(start) else {
            return Some(Err(truncated()));
        };
        let Some(data) = self.stream.get(start + 4..start + 4 + length) else {
            return Some(Err(truncated()));
        };
        self.at = start + 4 + length;
        let mut continued = Vec::new();
        while let Some((CONTINUE, length)) = header(self.at) {
            let Some(more) = self.stream.get(self.at + 4..self.at + 4 + length) else {
                return Some(Err(truncated()));
            };
            continued.push(more);
            self.at += 4 + length;
        }
        Some(Ok((
            start,
            Record {
                kind,
                data,
                continued,
            },
        )))
    }
}

/// The reason for a record that runs past the end of the stream.
fn truncated() -> Failure {
    Failure::unreadable("its workbook stream ends in the middle of a record")
}

/// The little-endian `u16` at `at`, if the record is long enough.
fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    bytes
        .get(at..at + 2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
}

/// The little-endian `u32` at `at`, if the record is long enough.
fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    bytes
        .get(at..at + 4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Reads the workbook globals: the first substream, up to its EOF.
fn read_globals(stream: &[u8], options: &Options, cancel: &Cancel) -> Result<Book, Failure> {
    let mut book = Book {
        sheets: Vec::new(),
        strings: Vec::new(),
        formats: Vec::new(),
        date_1904: false,
    };
    let mut custom_formats: Vec<(u16, NumberKind)> = Vec::new();
    let mut xf_formats: Vec<u16> = Vec::new();
    let mut first = true;
    for (count, item) in (Records { stream, at: 0 }).enumerate() {
        if count % 4096 == 0 {
            cancel.check()?;
        }
        let (_, record) = item?;
        if first {
            first = false;
            let version = u16_at(record.data, 0).unwrap_or(0);
            if record.kind != BOF {
                return Err(Failure::unreadable(
                    "its workbook stream does not begin with a BOF record",
                ));
            }
            if version != BIFF8 {
                return Err(Failure::unreadable(
                    "it is an Excel workbook older than Excel 97 (not BIFF8), a format that is not read",
                ));
            }
            continue;
        }
        match record.kind {
            FILEPASS => {
                return Err(Failure::unreadable("it is encrypted with a password"));
            }
            DATEMODE => book.date_1904 = u16_at(record.data, 0) == Some(1),
            FORMAT => {
                if let Some(code) = u16_at(record.data, 0) {
                    let mut pieces = Pieces::new(&record);
                    pieces.skip(2);
                    if let Some(text) = pieces.unicode_string(false) {
                        custom_formats.push((code, format_kind(&text)));
                    }
                }
            }
            XF => xf_formats.push(u16_at(record.data, 2).unwrap_or(0)),
            BOUNDSHEET => {
                let (Some(offset), Some(&state), Some(&kind)) = (
                    u32_at(record.data, 0),
                    record.data.get(4),
                    record.data.get(5),
                ) else {
                    continue;
                };
                let mut pieces = Pieces::new(&record);
                pieces.skip(6);
                let name = pieces.unicode_string(true).unwrap_or_default();
                book.sheets.push(SheetEntry {
                    name,
                    offset: offset as usize,
                    kind: match kind {
                        1 => SheetType::MacroSheet,
                        2 => SheetType::ChartSheet,
                        6 => SheetType::Vba,
                        _ => SheetType::WorkSheet,
                    },
                    visible: match state & 3 {
                        0 => SheetVisible::Visible,
                        1 => SheetVisible::Hidden,
                        _ => SheetVisible::VeryHidden,
                    },
                });
            }
            SST => book.strings = read_strings(&record, options.office_text_bytes),
            EOF => break,
            _ => {}
        }
    }
    book.formats = xf_formats
        .into_iter()
        .map(|code| {
            custom_formats
                .iter()
                .rev()
                .find(|(custom, _)| *custom == code)
                .map_or_else(|| builtin_kind(code), |(_, kind)| *kind)
        })
        .collect();
    Ok(book)
}

/// The shared strings of an SST record. Strings stop being kept once they
/// add up to `limit` bytes (the text could not show more); later ones read
/// as empty.
fn read_strings(record: &Record<'_>, limit: usize) -> Vec<String> {
    let mut pieces = Pieces::new(record);
    pieces.skip(8);
    let mut strings = Vec::new();
    let mut kept = 0usize;
    while !pieces.is_done() {
        let Some(text) = pieces.rich_string() else {
            break;
        };
        if kept <= limit {
            kept += text.len();
            strings.push(text);
        } else {
            strings.push(String::new());
        }
    }
    strings
}

/// A record's data and its continuations, read as one run of bytes, except
/// that string characters crossing into a continuation start with a fresh
/// flags byte there (as BIFF8 stores them).
struct Pieces<'s> {
    parts: Vec<&'s [u8]>,
    part: usize,
    at: usize,
}

impl<'s> Pieces<'s> {
    /// The pieces of `record`: its data, then its continuations.
    fn new(record: &Record<'s>) -> Self {
        let mut parts = vec![record.data];
        parts.extend(record.continued.iter().copied());
        Self {
            parts,
            part: 0,
            at: 0,
        }
    }

    /// Whether every piece has been read.
    fn is_done(&mut self) -> bool {
        self.settle();
        self.part >= self.parts.len()
    }

    /// Moves past exhausted parts.
    fn settle(&mut self) {
        while self.part < self.parts.len() && self.at >= self.parts[self.part].len() {
            self.part += 1;
            self.at = 0;
        }
    }

    /// The next byte, crossing into the next piece as needed.
    fn byte(&mut self) -> Option<u8> {
        self.settle();
        let byte = *self.parts.get(self.part)?.get(self.at)?;
        self.at += 1;
        Some(byte)
    }

    /// The next little-endian `u16`.
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes([self.byte()?, self.byte()?]))
    }

    /// The next little-endian `u32`.
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes([
            self.byte()?,
            self.byte()?,
            self.byte()?,
            self.byte()?,
        ]))
    }

    /// Passes over `count` bytes (or what is left).
    fn skip(&mut self, mut count: usize) {
        while count > 0 {
            self.settle();
            let Some(part) = self.parts.get(self.part) else {
                return;
            };
            let step = count.min(part.len() - self.at);
            self.at += step;
            count -= step;
        }
    }

    /// `count` characters, one or two bytes each as `wide` says; where the
    /// characters cross into a continuation, a flags byte there says anew.
    fn characters(&mut self, count: usize, mut wide: bool) -> Option<String> {
        let mut units: Vec<u16> = Vec::with_capacity(count.min(4096));
        for _ in 0..count {
            if self.at >= self.parts.get(self.part)?.len() {
                self.part += 1;
                self.at = 0;
                wide = self.byte()? & 1 != 0;
            }
            units.push(if wide {
                self.u16()?
            } else {
                u16::from(self.byte()?)
            });
        }
        Some(String::from_utf16_lossy(&units))
    }

    /// An `XLUnicodeString` (16-bit count) or, when `short`, a
    /// `ShortXLUnicodeString` (8-bit count).
    fn unicode_string(&mut self, short: bool) -> Option<String> {
        let count = if short {
            usize::from(self.byte()?)
        } else {
            usize::from(self.u16()?)
        };
        let flags = self.byte()?;
        self.characters(count, flags & 1 != 0)
    }

    /// An `XLUnicodeRichExtendedString`, as the SST holds them: runs and
    /// phonetic data after the characters are read past.
    fn rich_string(&mut self) -> Option<String> {
        let count = usize::from(self.u16()?);
        let flags = self.byte()?;
        let runs = if flags & 0x08 != 0 {
            usize::from(self.u16()?)
        } else {
            0
        };
        let extra = if flags & 0x04 != 0 {
            self.u32()? as usize
        } else {
            0
        };
        let text = self.characters(count, flags & 1 != 0)?;
        self.skip(runs * 4);
        self.skip(extra);
        Some(text)
    }
}

/// The row and column a cell record's data begins with.
fn cell_position(data: &[u8]) -> Option<(u32, u32)> {
    Some((u32::from(u16_at(data, 0)?), u32::from(u16_at(data, 2)?)))
}

/// How the number of a cell whose format index sits at `at` is shown.
fn number_kind(book: &Book, data: &[u8], at: usize) -> NumberKind {
    u16_at(data, at)
        .and_then(|xf| book.formats.get(usize::from(xf)).copied())
        .unwrap_or(NumberKind::Plain)
}

/// Adds the numbers of a MULRK record (a row of cells in one record).
fn add_mulrk(
    data: &[u8],
    book: &Book,
    grid: &mut Grid<'_>,
    cancel: &Cancel,
) -> Result<(), Failure> {
    let Some((row, first)) = cell_position(data) else {
        return Ok(());
    };
    let count = data.len().saturating_sub(6) / 6;
    for index in 0..count {
        let at = 4 + index * 6;
        let (Some(_), Some(rk)) = (u16_at(data, at), u32_at(data, at + 2)) else {
            break;
        };
        let column = first.saturating_add(index as u32);
        grid.add(
            row,
            column,
            number_cell(rk_value(rk), number_kind(book, data, at), book.date_1904),
            cancel,
        )?;
    }
    Ok(())
}

/// The cached value of a FORMULA record. A string result comes in the
/// STRING record that follows: its place is left in `pending`.
fn formula_cell(
    data: &[u8],
    book: &Book,
    pending: &mut Option<(u32, u32)>,
) -> Option<(u32, u32, String)> {
    let (row, column) = cell_position(data)?;
    let value = data.get(6..14)?;
    if value[6] == 0xFF && value[7] == 0xFF {
        match value[0] {
            0 => {
                *pending = Some((row, column));
                None
            }
            1 => Some((
                row,
                column,
                if value[2] == 0 { "FALSE" } else { "TRUE" }.to_owned(),
            )),
            2 => Some((row, column, error_text(value[2]).to_owned())),
            _ => None,
        }
    } else {
        let number = f64::from_le_bytes(value.try_into().ok()?);
        Some((
            row,
            column,
            number_cell(number, number_kind(book, data, 4), book.date_1904),
        ))
    }
}

/// Streams the cells of the sheet substream at `offset` into `grid`. The
/// bytes walked add to `walked`, which may not pass `budget`.
fn read_sheet(
    stream: &[u8],
    offset: usize,
    book: &Book,
    grid: &mut Grid<'_>,
    cancel: &Cancel,
    mut walked: u64,
    budget: u64,
) -> Result<u64, Failure> {
    if offset >= stream.len() {
        return Err(Failure::unreadable(
            "a sheet's place in its workbook stream lies past its end",
        ));
    }
    let mut depth = 0usize;
    let mut pending_formula: Option<(u32, u32)> = None;
    for (count, item) in (Records { stream, at: offset }).enumerate() {
        if count % 4096 == 0 {
            cancel.check()?;
        }
        let (_, record) = item?;
        walked += 4 + record.data.len() as u64;
        if walked > budget {
            return Err(Failure::unreadable(
                "its sheets overlap one another in the workbook stream",
            ));
        }
        if count == 0 {
            if record.kind != BOF {
                return Err(Failure::unreadable(
                    "a sheet's place in its workbook stream holds no sheet",
                ));
            }
            continue;
        }
        if depth > 0 {
            match record.kind {
                BOF => depth += 1,
                EOF => depth -= 1,
                _ => {}
            }
            continue;
        }
        if grid.is_full() {
            break;
        }
        let data = record.data;
        let position = || cell_position(data);
        let format_of = |at: usize| number_kind(book, data, at);
        let cell: Option<(u32, u32, String)> = match record.kind {
            BOF => {
                depth = 1;
                None
            }
            EOF => break,
            NUMBER => position().and_then(|(row, column)| {
                let bits = data.get(6..14)?;
                let value = f64::from_le_bytes(bits.try_into().ok()?);
                Some((
                    row,
                    column,
                    number_cell(value, format_of(4), book.date_1904),
                ))
            }),
            RK => position().and_then(|(row, column)| {
                let value = rk_value(u32_at(data, 6)?);
                Some((
                    row,
                    column,
                    number_cell(value, format_of(4), book.date_1904),
                ))
            }),
            MULRK => {
                add_mulrk(data, book, grid, cancel)?;
                None
            }
            LABEL | RSTRING => position().and_then(|(row, column)| {
                let mut pieces = Pieces::new(&record);
                pieces.skip(6);
                Some((row, column, clean(&pieces.unicode_string(false)?)))
            }),
            LABELSST => position().and_then(|(row, column)| {
                let index = u32_at(data, 6)? as usize;
                Some((row, column, clean(book.strings.get(index)?)))
            }),
            BOOLERR => position().and_then(|(row, column)| {
                let value = *data.get(6)?;
                let text = if data.get(7) == Some(&1) {
                    error_text(value).to_owned()
                } else if value == 0 {
                    "FALSE".to_owned()
                } else {
                    "TRUE".to_owned()
                };
                Some((row, column, text))
            }),
            FORMULA => formula_cell(data, book, &mut pending_formula),
            STRING => pending_formula.take().and_then(|(row, column)| {
                let mut pieces = Pieces::new(&record);
                Some((row, column, clean(&pieces.unicode_string(false)?)))
            }),
            _ => None,
        };
        if let Some((row, column, text)) = cell {
            grid.add(row, column, text, cancel)?;
        }
    }
    Ok(walked)
}

/// The number an RK value packs: a 30-bit integer or the high bits of a
/// double, either possibly scaled by 100.
fn rk_value(rk: u32) -> f64 {
    let value = if rk & 2 != 0 {
        f64::from(rk.cast_signed() >> 2)
    } else {
        f64::from_bits(u64::from(rk & 0xFFFF_FFFC) << 32)
    };
    if rk & 1 != 0 { value / 100.0 } else { value }
}

/// A number cell as text, as a date, time or duration when its format says.
fn number_cell(value: f64, kind: NumberKind, date_1904: bool) -> String {
    match kind {
        NumberKind::Plain => number_text(value),
        NumberKind::Date => date_time_text(&ExcelDateTime::new(
            value,
            ExcelDateTimeType::DateTime,
            date_1904,
        )),
        NumberKind::Duration => date_time_text(&ExcelDateTime::new(
            value,
            ExcelDateTimeType::TimeDelta,
            date_1904,
        )),
    }
}

/// An Excel error code as Excel shows it.
fn error_text(code: u8) -> &'static str {
    match code {
        0x00 => "#NULL!",
        0x07 => "#DIV/0!",
        0x0F => "#VALUE!",
        0x17 => "#REF!",
        0x1D => "#NAME?",
        0x24 => "#NUM!",
        0x2A => "#N/A",
        0x2B => "#GETTING_DATA",
        _ => "#ERROR!",
    }
}

/// How the built-in number format `code` reads numbers.
fn builtin_kind(code: u16) -> NumberKind {
    match code {
        14..=22 | 27..=36 | 45 | 47 | 50..=58 => NumberKind::Date,
        46 => NumberKind::Duration,
        _ => NumberKind::Plain,
    }
}

/// How a custom number format reads numbers: a date or time when its first
/// section has date or time letters outside quotes, escapes and brackets; a
/// duration when it has elapsed-time brackets such as `[h]`.
fn format_kind(code: &str) -> NumberKind {
    let mut chars = code.chars();
    let mut date = false;
    while let Some(c) = chars.next() {
        match c {
            ';' => break,
            '"' => {
                for inner in chars.by_ref() {
                    if inner == '"' {
                        break;
                    }
                }
            }
            '\\' | '_' | '*' => {
                chars.next();
            }
            '[' => {
                let mut inside = String::new();
                for inner in chars.by_ref() {
                    if inner == ']' {
                        break;
                    }
                    inside.push(inner.to_ascii_lowercase());
                }
                if !inside.is_empty() && inside.chars().all(|c| matches!(c, 'h' | 'm' | 's')) {
                    return NumberKind::Duration;
                }
            }
            'y' | 'Y' | 'd' | 'D' | 'h' | 'H' | 's' | 'S' | 'm' | 'M' => date = true,
            _ => {}
        }
    }
    if date {
        NumberKind::Date
    } else {
        NumberKind::Plain
    }
}

// Fixtures are literal XML and bytes put together with `format!`, which
// reads more plainly here than a chain of `write!` calls.
#[allow(clippy::format_collect, clippy::format_push_string)]
#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::Extracted;
    use crate::office::WorkbookFormat;
    use crate::office::cfb::tests::compound_of;
    use crate::office::workbook::extract;

    /// The cell values of the XLS workbook in `bytes`, read as the view
    /// reads them.
    fn read(bytes: &[u8]) -> Result<Extracted, Failure> {
        extract(
            bytes,
            WorkbookFormat::Xls,
            &Options::default(),
            &Cancel::new(),
        )
    }

    fn record(kind: u16, data: &[u8]) -> Vec<u8> {
        let mut out = kind.to_le_bytes().to_vec();
        out.extend((data.len() as u16).to_le_bytes());
        out.extend(data);
        out
    }

    fn bof(kind: u16) -> Vec<u8> {
        let mut data = BIFF8.to_le_bytes().to_vec();
        data.extend(kind.to_le_bytes());
        data.extend([0u8; 12]);
        record(BOF, &data)
    }

    /// An 8-bit `XLUnicodeString` body: count, flags 0, characters.
    fn narrow(text: &str) -> Vec<u8> {
        let mut out = (text.len() as u16).to_le_bytes().to_vec();
        out.push(0);
        out.extend(text.bytes());
        out
    }

    fn cell_head(row: u16, column: u16, xf: u16) -> Vec<u8> {
        [row.to_le_bytes(), column.to_le_bytes(), xf.to_le_bytes()].concat()
    }

    fn number(row: u16, column: u16, xf: u16, value: f64) -> Vec<u8> {
        let mut data = cell_head(row, column, xf);
        data.extend(value.to_le_bytes());
        record(NUMBER, &data)
    }

    /// A test sheet: name, state (0 visible, 1 hidden, 2 very hidden), kind
    /// (0 worksheet, 2 chart) and its cell records.
    struct TestSheet {
        name: &'static str,
        state: u8,
        kind: u8,
        cells: Vec<u8>,
    }

    /// A BIFF8 workbook stream: globals with formats (XF 0 general, 1 date,
    /// 2 custom date and time, 3 elapsed hours), shared strings split by a
    /// CONTINUE record, the sheet list, then each sheet.
    fn workbook_stream(sheets: &[TestSheet], date_1904: bool) -> Vec<u8> {
        let mut globals = bof(0x0005);
        if date_1904 {
            globals.extend(record(DATEMODE, &1u16.to_le_bytes()));
        }
        let mut format = 164u16.to_le_bytes().to_vec();
        format.extend(narrow("yyyy\\-mm\\-dd hh:mm"));
        globals.extend(record(FORMAT, &format));
        for code in [0u16, 14, 164, 46] {
            let mut xf = vec![0u8; 20];
            xf[2..4].copy_from_slice(&code.to_le_bytes());
            globals.extend(record(XF, &xf));
        }
        // Shared strings: "alpha", then "beta" whose characters continue,
        // wide, in a CONTINUE record.
        let mut sst = 2u32.to_le_bytes().to_vec();
        sst.extend(2u32.to_le_bytes());
        sst.extend(narrow("alpha"));
        sst.extend(4u16.to_le_bytes());
        sst.push(0);
        sst.extend(b"be");
        globals.extend(record(SST, &sst));
        let mut rest = vec![1u8];
        rest.extend("ta".encode_utf16().flat_map(u16::to_le_bytes));
        globals.extend(record(CONTINUE, &rest));

        let sheet_list_len: usize = sheets.iter().map(|s| 4 + 8 + s.name.len()).sum();
        let eof_len = 4;
        let mut offset = globals.len() + sheet_list_len + eof_len;
        let mut bodies = Vec::new();
        for sheet in sheets {
            let mut data = (offset as u32).to_le_bytes().to_vec();
            data.extend([sheet.state, sheet.kind, sheet.name.len() as u8, 0]);
            data.extend(sheet.name.bytes());
            globals.extend(record(BOUNDSHEET, &data));
            let mut body = bof(0x0010);
            body.extend(&sheet.cells);
            body.extend(record(EOF, &[]));
            offset += body.len();
            bodies.extend(body);
        }
        globals.extend(record(EOF, &[]));
        globals.extend(bodies);
        globals
    }

    fn text_of(stream: &[u8]) -> String {
        read(&compound_of("Workbook", stream))
            .expect("the test workbook is readable")
            .text
    }

    #[test]
    fn an_xls_reads_its_sheets_values_strings_and_formulas() {
        let mut cells = Vec::new();
        // A huge declared dimension is never an allocation.
        cells.extend(record(0x0200, &[0xFF; 14]));
        cells.extend(record(
            LABELSST,
            &[cell_head(0, 0, 0), 0u32.to_le_bytes().to_vec()].concat(),
        ));
        cells.extend(record(
            LABELSST,
            &[cell_head(0, 2, 0), 1u32.to_le_bytes().to_vec()].concat(),
        ));
        cells.extend(number(1, 0, 0, 0.1 + 0.2));
        // RK: the integer 7; MULRK: 1.25 (as a double's high bits) and 3.
        cells.extend(record(
            RK,
            &[cell_head(1, 1, 0), ((7u32 << 2) | 2).to_le_bytes().to_vec()].concat(),
        ));
        let high = (1.25f64.to_bits() >> 32) as u32;
        let mut mulrk = [1u16.to_le_bytes(), 2u16.to_le_bytes()].concat();
        mulrk.extend(0u16.to_le_bytes());
        mulrk.extend(high.to_le_bytes());
        mulrk.extend(0u16.to_le_bytes());
        mulrk.extend(((3u32 << 2) | 2).to_le_bytes());
        mulrk.extend(3u16.to_le_bytes());
        cells.extend(record(MULRK, &mulrk));
        let mut label = cell_head(2, 0, 0);
        label.extend(narrow("tab\there"));
        cells.extend(record(LABEL, &label));
        cells.extend(record(BOOLERR, &[cell_head(2, 1, 0), vec![1, 0]].concat()));
        cells.extend(record(
            BOOLERR,
            &[cell_head(2, 2, 0), vec![0x07, 1]].concat(),
        ));
        let mut formula = cell_head(2, 3, 0);
        formula.extend(42.0f64.to_le_bytes());
        formula.extend([0u8; 6]);
        cells.extend(record(FORMULA, &formula));
        let mut text_formula = cell_head(2, 4, 0);
        text_formula.extend([0, 0, 0, 0, 0, 0, 0xFF, 0xFF]);
        text_formula.extend([0u8; 6]);
        cells.extend(record(FORMULA, &text_formula));
        cells.extend(record(STRING, &narrow("made")));
        // An embedded chart's records are not cells of the sheet.
        cells.extend(bof(0x0020));
        cells.extend(number(3, 0, 0, 99.0));
        cells.extend(record(EOF, &[]));
        cells.extend(number(9, 0, 0, 10.0));

        let stream = workbook_stream(
            &[
                TestSheet {
                    name: "Data",
                    state: 0,
                    kind: 0,
                    cells,
                },
                TestSheet {
                    name: "Hidden",
                    state: 1,
                    kind: 0,
                    cells: number(0, 0, 0, 1.0),
                },
                TestSheet {
                    name: "Chart",
                    state: 0,
                    kind: 2,
                    cells: Vec::new(),
                },
            ],
            false,
        );
        assert_eq!(
            text_of(&stream),
            "Sheet: Data\nalpha\t\tbeta\n0.3\t7\t1.25\t3\ntab here\tTRUE\t#DIV/0!\t42\tmade\n(6 empty rows)\n10\n\nSheet: Hidden (hidden)\n1\n\nSheet: Chart (chart sheet, no cells)"
        );
    }

    #[test]
    fn xls_dates_read_the_same_in_the_1900_and_1904_systems() {
        let cells = |base: f64| {
            [
                number(0, 0, 1, base),
                number(0, 1, 2, base + 0.5),
                number(0, 2, 3, 1.5),
                number(0, 3, 1, 0.25),
            ]
            .concat()
        };
        let expected = "Sheet: S\n2023-03-15\t2023-03-15 12:00:00\t36:00:00\t06:00:00";
        let in_1900 = workbook_stream(
            &[TestSheet {
                name: "S",
                state: 0,
                kind: 0,
                cells: cells(45_000.0),
            }],
            false,
        );
        assert_eq!(text_of(&in_1900), expected);
        let in_1904 = workbook_stream(
            &[TestSheet {
                name: "S",
                state: 0,
                kind: 0,
                cells: cells(43_538.0),
            }],
            true,
        );
        assert_eq!(text_of(&in_1904), expected);
    }

    #[test]
    fn damaged_or_foreign_xls_files_are_refused_with_a_reason() {
        let sheet = || TestSheet {
            name: "S",
            state: 0,
            kind: 0,
            cells: number(0, 0, 0, 1.0),
        };
        let good = workbook_stream(&[sheet()], false);

        let mut past_end = good.clone();
        // The BOUNDSHEET's offset is the first field after its header.
        let at = past_end
            .windows(2)
            .position(|w| w == BOUNDSHEET.to_le_bytes())
            .expect("the stream lists its sheet")
            + 4;
        past_end[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());

        let mut encrypted = bof(0x0005);
        encrypted.extend(record(FILEPASS, &[1, 0]));
        encrypted.extend(record(EOF, &[]));

        let mut old = record(BOF, &[0x00, 0x05, 0x05, 0x00]);
        old.extend(record(EOF, &[]));

        let truncated = good[..good.len() - 3].to_vec();

        for (stream, expected) in [
            (
                past_end,
                "a sheet's place in its workbook stream lies past its end",
            ),
            (encrypted, "it is encrypted with a password"),
            (
                old,
                "it is an Excel workbook older than Excel 97 (not BIFF8), a format that is not read",
            ),
            (
                truncated,
                "its workbook stream ends in the middle of a record",
            ),
        ] {
            assert_eq!(
                read(&compound_of("Workbook", &stream)),
                Err(Failure::Unreadable(expected.to_owned()))
            );
        }
        assert_eq!(
            read(&compound_of("Other", &good)),
            Err(Failure::unreadable("it holds no Excel workbook stream"))
        );
    }

    #[test]
    fn custom_formats_are_told_apart_by_their_letters() {
        for (code, kind) in [
            ("yyyy-mm-dd", NumberKind::Date),
            ("h:mm AM/PM", NumberKind::Date),
            ("[h]:mm:ss", NumberKind::Duration),
            ("[Red]0.00", NumberKind::Plain),
            ("#,##0 \"days\"", NumberKind::Plain),
            ("0.00E+00", NumberKind::Plain),
            ("General", NumberKind::Plain),
            ("0;[Red]-0;\"d\"", NumberKind::Plain),
            ("[$-409]d-mmm-yy", NumberKind::Date),
        ] {
            assert_eq!(format_kind(code), kind, "{code}");
        }
    }
}
