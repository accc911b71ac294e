//! A workbook's cells as text, and how one sheet's cells become rows: what
//! every workbook reader (XLSX and ODS through calamine, XLS through our own
//! reader) shares, depending on no reader.

use calamine::{Data, DataRef, SheetType, SheetVisible};

use crate::bounds::{Cancel, Failure};

/// `SheetSink` is where a workbook reader puts what it finds: each sheet's
/// heading, a remark about a sheet, and its rows of cells. The Markdown
/// reader gathers them into tables (the view and extract both show those);
/// the workbook tests write them as tab-joined lines.
pub(crate) trait SheetSink {
    /// A new sheet begins.
    fn sheet(&mut self, name: &str, kind: SheetType, visible: SheetVisible);
    /// A sentence about the current sheet instead of its cells.
    fn remark(&mut self, text: &str);
    /// One row with values: `gap` empty rows came before it (counted from
    /// the sheet's first row for the first one), and `cells` are its
    /// non-empty cells as (column from 0, text), sorted by column.
    fn row(&mut self, gap: u32, cells: &[(u32, String)]);
    /// The current sheet is over; `wrote` says whether it had any row.
    fn end_sheet(&mut self, wrote: bool);
    /// Whether nothing more will be taken at all.
    fn is_full(&self) -> bool;
    /// Whether nothing more will be taken of the current sheet.
    fn sheet_full(&self) -> bool {
        self.is_full()
    }
}

/// A sheet's heading line: its name, and what kind of sheet it is when it
/// is not a plain visible worksheet.
pub(crate) fn heading(name: &str, kind: SheetType, visible: SheetVisible) -> String {
    let mut marks = Vec::new();
    match visible {
        SheetVisible::Visible => {}
        SheetVisible::Hidden => marks.push("hidden"),
        SheetVisible::VeryHidden => marks.push("very hidden"),
    }
    match kind {
        SheetType::ChartSheet => marks.push("chart sheet, no cells"),
        SheetType::DialogSheet => marks.push("dialog sheet"),
        SheetType::MacroSheet => marks.push("macro sheet"),
        SheetType::Vba => marks.push("VBA module"),
        SheetType::WorkSheet => {}
    }
    let name = clean(name);
    if marks.is_empty() {
        format!("Sheet: {name}")
    } else {
        format!("Sheet: {name} ({})", marks.join(", "))
    }
}

/// `Grid` gathers one sheet's cells into rows and hands each row to a
/// [`SheetSink`] with the count of empty rows before it.
pub(crate) struct Grid<'o> {
    out: &'o mut dyn SheetSink,
    row: Option<u32>,
    cells: Vec<(u32, String)>,
    row_bytes: usize,
    last_row: Option<u32>,
    limit: usize,
    wrote: bool,
}

impl<'o> Grid<'o> {
    /// A grid writing into `out`, holding at most `limit` bytes of one row.
    pub(crate) fn new(out: &'o mut dyn SheetSink, limit: usize) -> Self {
        Self {
            out,
            row: None,
            cells: Vec::new(),
            row_bytes: 0,
            last_row: None,
            limit,
            wrote: false,
        }
    }

    /// Adds the cell at (`row`, `column`), counted from 0; empty text is no
    /// cell. Cells come row by row.
    pub(crate) fn add(
        &mut self,
        row: u32,
        column: u32,
        text: String,
        cancel: &Cancel,
    ) -> Result<(), Failure> {
        if text.is_empty() {
            return Ok(());
        }
        if self.row != Some(row) {
            self.flush(cancel)?;
            self.row = Some(row);
        }
        if self.row_bytes <= self.limit {
            self.row_bytes += text.len() + 1;
            self.cells.push((column, text));
        }
        Ok(())
    }

    /// Whether the sheet takes no more rows, so reading further cells is
    /// pointless.
    pub(crate) fn is_full(&self) -> bool {
        self.out.sheet_full()
    }

    /// Writes the last row and ends the sheet.
    pub(crate) fn finish(mut self, cancel: &Cancel) -> Result<(), Failure> {
        self.flush(cancel)?;
        self.out.end_sheet(self.wrote);
        Ok(())
    }

    /// Hands on the row gathered so far, with the empty rows before it.
    fn flush(&mut self, cancel: &Cancel) -> Result<(), Failure> {
        let Some(row) = self.row else { return Ok(()) };
        if self.cells.is_empty() {
            return Ok(());
        }
        cancel.check()?;
        let gap = match self.last_row {
            Some(last) if row > last => row - last - 1,
            Some(_) => 0,
            None => row,
        };
        self.cells.sort_by_key(|(column, _)| *column);
        self.out.row(gap, &self.cells);
        self.wrote = true;
        self.last_row = Some(row);
        self.cells.clear();
        self.row_bytes = 0;
        Ok(())
    }
}

/// A cell value from calamine's XLSX stream as text.
pub(crate) fn value_ref_text(value: &DataRef<'_>) -> String {
    match value {
        DataRef::Int(number) => number.to_string(),
        DataRef::Float(number) => number_text(*number),
        DataRef::String(text) => clean(text),
        DataRef::SharedString(text) => clean(text),
        DataRef::Bool(true) => "TRUE".to_owned(),
        DataRef::Bool(false) => "FALSE".to_owned(),
        DataRef::DateTime(moment) => date_time_text(moment),
        DataRef::DateTimeIso(text) => iso_date_text(text),
        DataRef::DurationIso(text) => iso_duration_text(text),
        DataRef::Error(error) => error.to_string(),
        DataRef::Empty => String::new(),
    }
}

/// A cell value from a calamine range as text.
pub(crate) fn value_text(value: &Data) -> String {
    match value {
        Data::Int(number) => number.to_string(),
        Data::Float(number) => number_text(*number),
        Data::String(text) => clean(text),
        Data::Bool(true) => "TRUE".to_owned(),
        Data::Bool(false) => "FALSE".to_owned(),
        Data::DateTime(moment) => date_time_text(moment),
        Data::DateTimeIso(text) => iso_date_text(text),
        Data::DurationIso(text) => iso_duration_text(text),
        Data::Error(error) => error.to_string(),
        Data::Empty => String::new(),
    }
}

/// Cell text on one line: tabs and line breaks would break the row's
/// columns, so they become spaces.
pub(crate) fn clean(text: &str) -> String {
    text.chars()
        .map(|c| {
            if matches!(c, '\t' | '\n' | '\r') {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// A number as a spreadsheet shows it in General format: at most 15
/// significant digits (so float noise such as 0.30000000000000004 goes),
/// no trailing zeros, scientific notation only when very large or small.
pub(crate) fn number_text(value: f64) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    if value == 0.0 {
        return "0".to_owned();
    }
    let magnitude = value.abs();
    if !(1e-9..1e15).contains(&magnitude) {
        let text = format!("{value:.14e}");
        let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
        let mantissa = trim_zeros(mantissa);
        let exponent: i32 = exponent.parse().unwrap_or(0);
        let sign = if exponent < 0 { '-' } else { '+' };
        return format!("{mantissa}E{sign}{:02}", exponent.abs());
    }
    let digits_before = magnitude.log10().floor() as i32 + 1;
    let decimals = (15 - digits_before).clamp(0, 24) as usize;
    let text = format!("{value:.decimals$}");
    let text = trim_zeros(&text);
    if text == "-0" { "0".to_owned() } else { text }
}

/// A decimal without trailing zeros after its point (nor a bare point).
fn trim_zeros(text: &str) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text.to_owned()
    }
}

/// A date or time cell: `YYYY-MM-DD`, `YYYY-MM-DD HH:MM:SS`, `HH:MM:SS`
/// for a time of day (a value under one day), or hours, minutes and seconds
/// for a duration. The 1900 and 1904 systems are calamine's to tell.
pub(crate) fn date_time_text(moment: &calamine::ExcelDateTime) -> String {
    let value = moment.as_f64();
    if moment.is_duration() {
        return duration_text(value * 86_400.0);
    }
    if !(0.0..2_958_466.0).contains(&value) {
        return number_text(value);
    }
    let (year, month, day, hour, minute, second, _) = moment.to_ymd_hms_milli();
    if value < 1.0 {
        return format!("{hour:02}:{minute:02}:{second:02}");
    }
    if hour == 0 && minute == 0 && second == 0 {
        format!("{year:04}-{month:02}-{day:02}")
    } else {
        format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}")
    }
}

/// A span of `seconds` as `H:MM:SS`, hours not wrapping at a day.
fn duration_text(seconds: f64) -> String {
    if !seconds.is_finite() || seconds.abs() >= 1e15 {
        return number_text(seconds / 86_400.0);
    }
    let total = seconds.round() as i64;
    let sign = if total < 0 { "-" } else { "" };
    let total = total.unsigned_abs();
    format!(
        "{sign}{}:{:02}:{:02}",
        total / 3600,
        total / 60 % 60,
        total % 60
    )
}

/// An ODS date value (`2024-03-01` or `2024-03-01T12:30:00.5`) in the same
/// shape as other dates.
fn iso_date_text(text: &str) -> String {
    let text = clean(text);
    let Some((date, time)) = text.split_once('T') else {
        return text;
    };
    let time = time.split(['.', 'Z', '+']).next().unwrap_or(time);
    if time == "00:00:00" || time.is_empty() {
        date.to_owned()
    } else {
        format!("{date} {time}")
    }
}

/// An ODS duration (`PT12H30M00S`, `P1DT2H`) as `H:MM:SS`.
fn iso_duration_text(text: &str) -> String {
    let parse = || -> Option<f64> {
        let (negative, rest) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let rest = rest.strip_prefix('P')?;
        let mut seconds = 0.0;
        let mut number = String::new();
        for c in rest.chars() {
            match c {
                '0'..='9' | '.' => number.push(c),
                'T' => {}
                'D' | 'H' | 'M' | 'S' => {
                    let value: f64 = number.parse().ok()?;
                    number.clear();
                    seconds += value
                        * match c {
                            'D' => 86_400.0,
                            'H' => 3_600.0,
                            'M' => 60.0,
                            _ => 1.0,
                        };
                }
                _ => return None,
            }
        }
        Some(if negative { -seconds } else { seconds })
    };
    match parse() {
        Some(seconds) => duration_text(seconds),
        None => clean(text),
    }
}
