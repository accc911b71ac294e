//! Tables as government statistical reports and papers set them, each
//! genre drawn here from a description (columns and how their cells align,
//! header rows with cells over groups of columns, rules across, wrapped
//! cells, indented row labels, dot leaders, notes under the table), and
//! read back: the test asserts the exact grid porter gives (rows, columns,
//! spans, every cell's text) and that nothing else on the page became a
//! table. No genre here was taken from a benchmark page.

use porter_fileview::{Markdown, Options};

use super::structure::{Line, Rule, extract, page};

/// Where a column's cells sit within it.
#[derive(Clone, Copy)]
enum Align {
    Left,
    Right,
    /// On the decimal point, which lies this many characters left of the
    /// column's right side (numbers without one end there).
    Decimal(usize),
}

/// A column: its left and right sides (points from the page's left).
#[derive(Clone, Copy)]
struct Column {
    x0: f32,
    x1: f32,
    align: Align,
}

/// A header cell: its text, over columns `first..=last`.
struct Head<'a> {
    text: &'a str,
    first: usize,
    last: usize,
}

fn head(text: &str, first: usize, last: usize) -> Head<'_> {
    Head { text, first, last }
}

/// A row of the table's body: its cells (a line break inside a cell is a
/// wrapped line; leading spaces indent a row label five points each), set
/// bold or not, with a rule across above it or not.
struct Row<'a> {
    cells: Vec<&'a str>,
    bold: bool,
    rule_above: bool,
}

fn row<'a>(cells: &[&'a str]) -> Row<'a> {
    Row {
        cells: cells.to_vec(),
        bold: false,
        rule_above: false,
    }
}

/// A table as drawn: columns, header rows (each a list of cells over
/// columns; a cell over several gets a short rule under it), body rows,
/// and which rules across are drawn: above the header, under it, under
/// the last row (booktabs draws all three and no others).
struct Sheet<'a> {
    columns: Vec<Column>,
    header: Vec<Vec<Head<'a>>>,
    rows: Vec<Row<'a>>,
    rules: bool,
    /// Dot leaders from the first column's text to its right side.
    leaders: bool,
}

/// A table as reports set it most often: one header line, a head over
/// each column, and the three rules of booktabs.
fn sheet<'a>(columns: Vec<Column>, heads: &[&'a str], rows: &[&[&'a str]]) -> Sheet<'a> {
    Sheet {
        columns,
        header: vec![
            heads
                .iter()
                .enumerate()
                .map(|(c, text)| head(text, c, c))
                .collect(),
        ],
        rows: rows.iter().map(|cells| row(cells)).collect(),
        rules: true,
        leaders: false,
    }
}

/// Text placed on the page: x, baseline y, size, bold, text.
type Placed = (f32, f32, f32, bool, String);

/// `SIZE` is the tables' type size; every glyph is half of it wide.
const SIZE: f32 = 9.0;

fn width(text: &str, size: f32) -> f32 {
    #[allow(clippy::cast_precision_loss)]
    let n = text.chars().count() as f32;
    0.5 * size * n
}

impl Sheet<'_> {
    /// Draws the table with its first baseline at `top`; returns the text,
    /// the rules and the baseline under its last line.
    fn draw(&self, top: f32, text: &mut Vec<Placed>, rules: &mut Vec<Rule>) -> f32 {
        let left = self.columns[0].x0;
        let right = self.columns[self.columns.len() - 1].x1;
        let mut y = top;
        if self.rules {
            rules.push((left, y + 11.0, right, y + 11.0));
        }
        for line in &self.header {
            for cell in line {
                let (x0, x1) = (self.columns[cell.first].x0, self.columns[cell.last].x1);
                let x = if cell.first == 0 {
                    x0
                } else {
                    f32::midpoint(x0, x1) - width(cell.text, SIZE) / 2.0
                };
                text.push((x, y, SIZE, true, cell.text.to_owned()));
                if cell.last > cell.first {
                    rules.push((x0 + 2.0, y - 3.0, x1 - 2.0, y - 3.0));
                }
            }
            y -= 12.0;
        }
        if self.rules && !self.header.is_empty() {
            rules.push((left, y + 8.0, right, y + 8.0));
            y -= 3.0;
        }
        for r in &self.rows {
            if r.rule_above {
                rules.push((left, y + 9.0, right, y + 9.0));
                y -= 2.0;
            }
            let mut lines = 1usize;
            for (c, (column, cell)) in self.columns.iter().zip(&r.cells).enumerate() {
                let indent = cell.chars().take_while(|c| *c == ' ').count();
                for (k, piece) in cell.trim_start().split('\n').enumerate() {
                    lines = lines.max(k + 1);
                    #[allow(clippy::cast_precision_loss)]
                    let line_y = y - 10.0 * k as f32;
                    let x = match column.align {
                        #[allow(clippy::cast_precision_loss)]
                        Align::Left => column.x0 + 5.0 * indent as f32,
                        Align::Right => column.x1 - width(piece, SIZE),
                        Align::Decimal(after) => {
                            let point = column.x1 - width(&"0".repeat(after), SIZE);
                            let whole = piece.find('.').unwrap_or(piece.len());
                            point - width(&piece[..whole], SIZE)
                        }
                    };
                    let mut piece = piece.to_owned();
                    if self.leaders && c == 0 && k == 0 {
                        while x + width(&piece, SIZE) + 2.0 * width(" .", SIZE) < column.x1 {
                            piece.push_str(" .");
                        }
                    }
                    if !piece.is_empty() {
                        text.push((x, line_y, SIZE, r.bold, piece));
                    }
                }
            }
            #[allow(clippy::cast_precision_loss)]
            {
                y -= 12.0 + 10.0 * (lines - 1) as f32;
            }
        }
        if self.rules {
            rules.push((left, y + 8.0, right, y + 8.0));
        }
        y - 6.0
    }
}

/// Lines of running text at 10 points from `y` down, 12 points apart,
/// from `x`.
fn prose(x: f32, y: f32, lines: &[&str], text: &mut Vec<Placed>) -> f32 {
    let mut y = y;
    for line in lines {
        text.push((x, y, 10.0, false, (*line).to_owned()));
        y -= 12.0;
    }
    y
}

/// The page's Markdown, read as porter reads a PDF by default: with the
/// table model where the build has it.
fn read(text: &[Placed], rules: &[Rule]) -> Markdown {
    let lines: Vec<Line<'_>> = text
        .iter()
        .map(|(x, y, size, bold, t)| {
            assert!(
                !t.contains(['(', ')', '\\']),
                "the page writer does not escape {t:?}"
            );
            Line {
                x: *x,
                y: *y,
                runs: vec![(*size, *bold, t.as_str())],
            }
        })
        .collect();
    #[allow(unused_mut)]
    let mut options = Options::default();
    #[cfg(feature = "tables")]
    {
        options.models_dir = Some(porter_test::models_dir());
    }
    extract(&page(&lines, rules), &options)
}

/// Every table in `markdown`, as rows of cells: a cell's text, prefixed
/// `<n>` when it spans n columns and `<n,m>` when it also spans m rows.
/// Both forms porter writes are read: pipe tables and HTML tables.
fn grids(markdown: &str) -> Vec<Vec<Vec<String>>> {
    let mut out: Vec<Vec<Vec<String>>> = Vec::new();
    let mut open = false;
    for line in markdown.lines() {
        let line = line.trim();
        if line == "<table>" {
            out.push(Vec::new());
            open = true;
        } else if line == "</table>" {
            open = false;
        } else if open && line.starts_with("<tr>") {
            let cells = line
                .trim_start_matches("<tr>")
                .trim_end_matches("</tr>")
                .split("</td>")
                .filter(|c| c.starts_with("<td"))
                .map(|c| {
                    let (attributes, text) = c[3..].split_once('>').expect("a <td> closes");
                    let number = |name: &str| {
                        attributes
                            .split_once(&format!("{name}=\""))
                            .and_then(|(_, rest)| rest.split('"').next())
                            .map_or(1, |n| n.parse::<usize>().expect("a span is a number"))
                    };
                    let text = text
                        .replace("<br>", " ")
                        .replace("&lt;", "<")
                        .replace("&gt;", ">")
                        .replace("&quot;", "\"")
                        .replace("&amp;", "&");
                    match (number("colspan"), number("rowspan")) {
                        (1, 1) => text,
                        (c, 1) => format!("<{c}>{text}"),
                        (c, r) => format!("<{c},{r}>{text}"),
                    }
                })
                .collect();
            if let Some(table) = out.last_mut() {
                table.push(cells);
            }
        } else if line.starts_with('|') && line.ends_with('|') && line.len() > 1 {
            let inner = &line[1..line.len() - 1];
            if inner
                .split('|')
                .all(|c| c.trim().chars().all(|ch| ch == '-' || ch == ':'))
            {
                continue;
            }
            let cells: Vec<String> = inner.split('|').map(|c| c.trim().to_owned()).collect();
            if !open {
                out.push(Vec::new());
                open = true;
            }
            if let Some(table) = out.last_mut() {
                table.push(cells);
            }
        } else if !line.starts_with('|') && !line.starts_with("<t") && open && out.last().is_some()
        {
            open = false;
        }
    }
    out
}

/// Asserts that the page's tables are exactly `expected`, each given row
/// by row with its cells as [`grids`] writes them.
fn assert_tables(md: &Markdown, expected: &[&[&[&str]]]) {
    let expected: Vec<Vec<Vec<String>>> = expected
        .iter()
        .map(|t| {
            t.iter()
                .map(|r| r.iter().map(|c| (*c).to_owned()).collect())
                .collect()
        })
        .collect();
    assert_eq!(grids(&md.text), expected, "in:\n{}", md.text);
}

/// The grid `sheet` draws, as [`grids`] writes it: its header rows (a
/// head over several columns spanning them), then its rows, each cell's
/// lines joined and its indent left out.
fn drawn(sheet: &Sheet<'_>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for line in &sheet.header {
        let mut cells = Vec::new();
        let mut column = 0;
        for cell in line {
            while column < cell.first {
                cells.push(String::new());
                column += 1;
            }
            let span = cell.last - cell.first + 1;
            cells.push(if span > 1 {
                format!("<{span}>{}", cell.text)
            } else {
                cell.text.to_owned()
            });
            column = cell.last + 1;
        }
        while column < sheet.columns.len() {
            cells.push(String::new());
            column += 1;
        }
        out.push(cells);
    }
    for r in &sheet.rows {
        out.push(
            r.cells
                .iter()
                .map(|c| c.trim().replace('\n', " "))
                .collect(),
        );
    }
    out
}

/// Asserts that the page's tables are exactly the grids `sheets` draw.
fn assert_drawn(md: &Markdown, sheets: &[&Sheet<'_>]) {
    let expected: Vec<Vec<Vec<String>>> = sheets.iter().map(|s| drawn(s)).collect();
    assert_eq!(grids(&md.text), expected, "in:\n{}", md.text);
}

/// Columns from `x`: a stub of `stub` points, then `n` columns of values
/// `each` points wide with `gap` between, aligned as `align`.
fn columns(x: f32, stub: f32, n: usize, each: f32, gap: f32, align: Align) -> Vec<Column> {
    let mut out = vec![Column {
        x0: x,
        x1: x + stub,
        align: Align::Left,
    }];
    let mut at = x + stub + gap;
    for _ in 0..n {
        out.push(Column {
            x0: at,
            x1: at + each,
            align,
        });
        at += each + gap;
    }
    out
}

fn text_before(text: &mut Vec<Placed>) -> f32 {
    text.push((
        72.0,
        700.0,
        11.0,
        true,
        "Table 3. Persons by Region, 2022".to_owned(),
    ));
    680.0
}

/// Running text under a table, set to the full measure of the page's text
/// block (72 to about 530 points), as reports set it.
fn text_after(y: f32, text: &mut Vec<Placed>) {
    prose(
        72.0,
        y - 14.0,
        &[
            "The regions are those of the statistical office, and the counts in the table above are all",
            "rounded to the nearest ten; the text of the report goes on here, set to the full measure.",
        ],
        text,
    );
}

/// A report's page with `sheet` on it: the table's title above it, and
/// running text under it; read back.
fn report_page(sheet: &Sheet<'_>) -> Markdown {
    let (mut text, mut rules) = (Vec::new(), Vec::new());
    let y = text_before(&mut text);
    let y = sheet.draw(y, &mut text, &mut rules);
    text_after(y, &mut text);
    read(&text, &rules)
}

#[test]
fn a_booktabs_table_with_three_rules_and_numbers_set_right_is_read_cell_by_cell() {
    let sheet = sheet(
        columns(72.0, 120.0, 3, 60.0, 15.0, Align::Right),
        &["Region", "Persons", "Area", "Density"],
        &[
            &["Northland", "12,450", "310", "40.2"],
            &["Eastmarch", "8,120", "95", "85.5"],
            &["Southvale", "143,900", "1,020", "141.1"],
            &["Westfold", "6,030", "12", "502.5"],
            &["Midlands", "77,310", "640", "120.8"],
        ],
    );
    assert_drawn(&report_page(&sheet), &[&sheet]);
}

#[test]
fn header_cells_over_groups_of_columns_are_kept_as_spans() {
    let sheet = Sheet {
        columns: columns(72.0, 110.0, 4, 55.0, 12.0, Align::Right),
        header: vec![
            vec![head("2019", 1, 2), head("2020", 3, 4)],
            vec![
                head("State", 0, 0),
                head("Men", 1, 1),
                head("Women", 2, 2),
                head("Men", 3, 3),
                head("Women", 4, 4),
            ],
        ],
        rows: vec![
            row(&["Alder", "1,204", "1,310", "1,190", "1,322"]),
            row(&["Birch", "845", "902", "851", "899"]),
            row(&["Cedar", "2,310", "2,405", "2,298", "2,417"]),
            row(&["Dogwood", "97", "110", "101", "108"]),
        ],
        rules: true,
        leaders: false,
    };
    let md = report_page(&sheet);
    // The table model reads the stub's head as spanning both header rows,
    // as such tables are annotated; the rules alone put it on the lower.
    #[cfg(feature = "tables")]
    let head: [&[&str]; 2] = [
        &["<1,2>State", "<2>2019", "<2>2020"],
        &["Men", "Women", "Men", "Women"],
    ];
    #[cfg(not(feature = "tables"))]
    let head: [&[&str]; 2] = [
        &["", "<2>2019", "<2>2020"],
        &["State", "Men", "Women", "Men", "Women"],
    ];
    assert_tables(
        &md,
        &[&[
            head[0],
            head[1],
            &["Alder", "1,204", "1,310", "1,190", "1,322"],
            &["Birch", "845", "902", "851", "899"],
            &["Cedar", "2,310", "2,405", "2,298", "2,417"],
            &["Dogwood", "97", "110", "101", "108"],
        ]],
    );
}

#[test]
#[ignore = "open: the PDF library cuts \"Under 18 years\" into two cells, so the header rows are not joined, and the totals row under its rule is left out"]
fn indented_row_labels_a_totals_row_and_notes_under_the_table() {
    let mut total = row(&["Total", "1,480", "100.0"]);
    total.bold = true;
    total.rule_above = true;
    let sheet = Sheet {
        columns: columns(72.0, 150.0, 2, 60.0, 15.0, Align::Right),
        header: vec![vec![
            head("Age", 0, 0),
            head("Number", 1, 1),
            head("Percent", 2, 2),
        ]],
        rows: vec![
            row(&["Under 18 years", "320", "21.6"]),
            row(&["  Under 5 years", "90", "6.1"]),
            row(&["  5 to 17 years", "230", "15.5"]),
            row(&["18 to 64 years", "910", "61.5"]),
            row(&["65 years and over", "250", "16.9"]),
            total,
        ],
        rules: true,
        leaders: false,
    };
    let (mut text, mut rules) = (Vec::new(), Vec::new());
    let y = text_before(&mut text);
    let y = sheet.draw(y, &mut text, &mut rules);
    let y = prose(
        72.0,
        y - 4.0,
        &["Note: Figures may not add to totals because of rounding."],
        &mut text,
    );
    prose(
        72.0,
        y,
        &["Source: Office of Statistics, survey of households."],
        &mut text,
    );
    let md = read(&text, &rules);
    assert_drawn(&md, &[&sheet]);
    assert!(
        md.text
            .contains("Note: Figures may not add to totals because of rounding."),
        "{}",
        md.text
    );
}

#[test]
#[ignore = "open: a cell's second line that starts with a capital is read as a new row"]
fn cells_wrapped_over_two_or_three_lines_stay_one_cell() {
    let mut agencies = columns(72.0, 130.0, 2, 120.0, 15.0, Align::Left);
    agencies[2].align = Align::Right;
    let sheet = sheet(
        agencies,
        &["Agency", "Programme", "Outlays"],
        &[
            &[
                "Department of\nHealth and Human\nServices",
                "Medicare and\nMedicaid",
                "1,204",
            ],
            &["Department of\nEducation", "Student aid", "97"],
            &["Treasury", "Interest on the\npublic debt", "562"],
            &[
                "Department of\nDefense",
                "Operations and\nmaintenance",
                "310",
            ],
        ],
    );
    assert_drawn(&report_page(&sheet), &[&sheet]);
}

#[test]
fn numbers_on_the_decimal_point_and_empty_cells_keep_their_columns() {
    let sheet = sheet(
        columns(72.0, 110.0, 3, 60.0, 15.0, Align::Decimal(2)),
        &["Item", "2021", "2022", "Change"],
        &[
            &["Food", "103.5", "110.25", "6.5"],
            &["Housing", "1,212.8", "", "-2.75"],
            &["Transport", "98", "99.1", ""],
            &["Energy", "", "143.75", "12.05"],
            &["Clothing", "87.25", "88.5", "1.4"],
        ],
    );
    assert_drawn(&report_page(&sheet), &[&sheet]);
}

#[test]
fn dot_leaders_after_row_labels_are_not_cell_text() {
    let mut sheet = sheet(
        columns(72.0, 170.0, 2, 60.0, 10.0, Align::Right),
        &["Industry", "Firms", "Workers"],
        &[
            &["Agriculture", "1,020", "8,410"],
            &["Mining", "87", "2,305"],
            &["Construction", "3,402", "19,880"],
            &["Manufacturing", "2,218", "40,112"],
            &["Retail trade", "5,930", "31,007"],
        ],
    );
    sheet.leaders = true;
    assert_drawn(&report_page(&sheet), &[&sheet]);
}

#[test]
fn a_table_with_no_rules_at_all_is_read_from_its_columns() {
    let mut sheet = sheet(
        columns(72.0, 120.0, 3, 60.0, 18.0, Align::Right),
        &["County", "Farms", "Acres", "Workers"],
        &[
            &["Ashford", "412", "90,210", "1,140"],
            &["Brampton", "388", "71,005", "930"],
            &["Colbury", "1,020", "240,880", "3,312"],
            &["Dunmore", "97", "15,400", "205"],
            &["Elstow", "250", "60,015", "702"],
        ],
    );
    sheet.rules = false;
    assert_drawn(&report_page(&sheet), &[&sheet]);
}

#[test]
#[ignore = "open: the second table loses its header row (the PDF library cuts \"North loop\" into two cells, so its columns are not the text's)"]
fn two_tables_one_after_the_other_stay_two_tables() {
    let first = sheet(
        columns(72.0, 120.0, 2, 60.0, 15.0, Align::Right),
        &["Port", "Ships", "Tonnes"],
        &[
            &["Harwick", "310", "12,400"],
            &["Lowmouth", "92", "3,050"],
            &["Saltby", "1,205", "88,730"],
        ],
    );
    let second = sheet(
        columns(72.0, 120.0, 3, 60.0, 15.0, Align::Right),
        &["Route", "Trips", "Hours", "Crew"],
        &[
            &["North loop", "48", "610", "12"],
            &["Coast line", "130", "1,402", "30"],
            &["Island run", "22", "260", "6"],
        ],
    );
    let (mut text, mut rules) = (Vec::new(), Vec::new());
    let y = text_before(&mut text);
    let y = first.draw(y, &mut text, &mut rules);
    text.push((
        72.0,
        y - 16.0,
        11.0,
        true,
        "Table 4. Routes Served, 2022".to_owned(),
    ));
    let y = second.draw(y - 36.0, &mut text, &mut rules);
    text_after(y, &mut text);
    assert_drawn(&read(&text, &rules), &[&first, &second]);
}

#[test]
#[ignore = "open: the gutter here (3 points, narrower than a word space of this face) is not cut, so the other column's lines beside the table are read as a fourth column; with a 13-point gutter it is read right"]
fn a_table_in_one_column_of_a_two_column_page_is_read_with_its_own_columns() {
    let sheet = sheet(
        columns(72.0, 90.0, 2, 55.0, 12.0, Align::Right),
        &["Method", "Recall", "Time"],
        &[
            &["Baseline", "0.71", "1.20"],
            &["Grid search", "0.78", "9.45"],
            &["Ours", "0.83", "0.95"],
        ],
    );
    let (mut text, mut rules) = (Vec::new(), Vec::new());
    // Justified, as papers set their columns: each line reaches the
    // column's right side, as the table does.
    let left = [
        "We compare three methods on the same data set,",
        "each of them run five times with other seeds, and",
        "the table below gives the means of their runs.",
    ];
    let right = [
        "The right column of the page holds",
        "running text that goes on beside the",
        "table, as two-column papers set it,",
        "line after line, down to the foot of",
        "the column with nothing aligned to",
        "the table's rows or its columns at",
        "all, and it ends here in a sentence.",
        "A second paragraph follows it on",
        "and ends with a full stop as well.",
        "The last line of the right column.",
    ];
    let y = prose(72.0, 700.0, &left, &mut text);
    text.push((72.0, y - 4.0, 9.0, true, "Table 1. Results".to_owned()));
    let y = sheet.draw(y - 22.0, &mut text, &mut rules);
    prose(
        72.0,
        y - 12.0,
        &[
            "Ours is the fastest of the three methods and it",
            "finds the most, as the table above shows here.",
        ],
        &mut text,
    );
    prose(320.0, 700.0, &right, &mut text);
    assert_drawn(&read(&text, &rules), &[&sheet]);
}

#[test]
fn section_rows_with_indented_labels_and_subtotals_are_one_table_without_rules() {
    // As census tables set their stub: a row label alone over the rows
    // of its section, those indented under it, a bold subtotal indented
    // further, a bold total, and no rule anywhere. The columns of values
    // are close: "80.3" and "32.0" lie nearer than a section number
    // ("8.3 Results") lies to its title.
    let mut total = row(&["Total", "77.4", "89.2", "91.5"]);
    total.bold = true;
    let mut first = row(&["    Subtotal", "11.2", "25.7", "85.5"]);
    first.bold = true;
    let mut second = row(&["    Subtotal", "66.0", "64.6", "66.1"]);
    second.bold = true;
    let mut sheet = sheet(
        columns(72.0, 110.0, 3, 34.0, 10.0, Align::Right),
        &["Characteristic", "Total", "Rate", "Mean"],
        &[],
    );
    sheet.rows = vec![
        row(&["Income", "", "", ""]),
        row(&["  Under $25,000", "80.3", "32.0", "15.4"]),
        row(&["  $25,000 to $49,999", "83.4", "72.0", "28.0"]),
        row(&["  $50,000 or more", "77.4", "22.1", "14.0"]),
        first,
        row(&["Region", "", "", ""]),
        row(&["  Northeast", "12.4", "39.7", "73.2"]),
        row(&["  Midwest", "57.8", "74.6", "58.3"]),
        row(&["  South", "58.7", "3.7", "60.7"]),
        second,
        total,
    ];
    sheet.rules = false;
    assert_drawn(&report_page(&sheet), &[&sheet]);
}
