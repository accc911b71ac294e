//! PDFs written for each rule of the layout analysis (headings, tables),
//! read back as Markdown: each page is drawn here, in Helvetica, with the
//! structure the rule is about and nothing a benchmark page happens to
//! hold.

use std::fmt::Write as _;

use porter_fileview::{Cancel, FileInput, Markdown, Options, to_markdown};
use porter_mmsim::pdf_with_xref;

use super::assert_lines_in_order;

/// A line of text: where it starts (points from the bottom left), and its
/// runs, each in a size and face (bold or not), drawn one after the other.
pub(super) struct Line<'a> {
    pub(super) x: f32,
    pub(super) y: f32,
    pub(super) runs: Vec<(f32, bool, &'a str)>,
}

/// A straight line drawn on the page: from (x0, y0) to (x1, y1), stroked.
pub(super) type Rule = (f32, f32, f32, f32);

/// A one-page Letter PDF of `lines` and of straight `rules` (x0, y0, x1,
/// y1, stroked), in Helvetica and Helvetica-Bold whose every glyph is half
/// its size wide.
pub(super) fn page(lines: &[Line<'_>], rules: &[Rule]) -> Vec<u8> {
    page_in(lines, rules, ["Helvetica", "Helvetica-Bold"])
}

/// A one-page Letter PDF as [`page`] draws it, its runs in `faces`: the
/// first for runs not marked bold, the second for those marked (each
/// glyph half its size wide, whatever the face).
pub(super) fn page_in(lines: &[Line<'_>], rules: &[Rule], faces: [&str; 2]) -> Vec<u8> {
    pages_in(&[(lines, rules)], faces)
}

/// A Letter PDF of one page per entry of `pages` (its lines and rules),
/// drawn as [`page_in`] draws one.
pub(super) fn pages_in(pages: &[(&[Line<'_>], &[Rule])], faces: [&str; 2]) -> Vec<u8> {
    let contents: Vec<String> = pages
        .iter()
        .map(|(lines, rules)| content(lines, rules))
        .collect();
    pdf_of(&contents, faces)
}

/// A one-page Letter PDF as [`page`] draws it, with `raw` content
/// operators drawn after its lines (text set turned, say).
pub(super) fn page_with_raw(lines: &[Line<'_>], raw: &str) -> Vec<u8> {
    pdf_of(
        &[content(lines, &[]) + raw],
        ["Helvetica", "Helvetica-Bold"],
    )
}

/// A Letter PDF of one page per content stream, in `faces` as F1 and F2.
fn pdf_of(contents: &[String], faces: [&str; 2]) -> Vec<u8> {
    let widths = vec!["500"; 95].join(" ");
    let font = |name: &str| {
        format!(
            "<< /Type /Font /Subtype /Type1 /BaseFont /{name} /FirstChar 32 /LastChar 126 \
             /Widths [{widths}] >>"
        )
    };
    // The catalog, the page tree and the two faces, then each page and
    // its content.
    let kids: Vec<String> = (0..contents.len())
        .map(|i| format!("{} 0 R", 5 + 2 * i))
        .collect();
    let mut objects = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {} >>",
            kids.join(" "),
            contents.len()
        ),
        font(faces[0]),
        font(faces[1]),
    ];
    for (i, content) in contents.iter().enumerate() {
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
             /Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents {} 0 R >>",
            6 + 2 * i
        ));
        objects.push(format!(
            "<< /Length {} >>\nstream\n{content}\nendstream",
            content.len()
        ));
    }
    let objects: Vec<Vec<u8>> = objects.into_iter().map(String::into_bytes).collect();
    pdf_with_xref(&objects, None)
}

/// A page's content stream: its lines' runs, then its rules stroked.
fn content(lines: &[Line<'_>], rules: &[Rule]) -> String {
    let mut content = String::new();
    for line in lines {
        write!(content, "BT {} {} Td ", line.x, line.y).expect("a String takes text");
        for (size, bold, text) in &line.runs {
            let font = if *bold { "F2" } else { "F1" };
            write!(content, "/{font} {size} Tf ({text}) Tj ").expect("a String takes text");
        }
        content.push_str("ET\n");
    }
    for (x0, y0, x1, y1) in rules {
        writeln!(content, "0.8 w {x0} {y0} m {x1} {y1} l S").expect("a String takes text");
    }
    content
}

pub(super) fn extract(pdf: &[u8], options: &Options) -> Markdown {
    to_markdown(&FileInput::new(pdf, "page.pdf"), options, &Cancel::new()).expect("the PDF is read")
}

/// Lines of running text at 10 points from `y` down, 12 points apart.
fn body<'a>(texts: &'a [&'a str], y: f32, out: &mut Vec<Line<'a>>) {
    for (i, text) in texts.iter().enumerate() {
        #[allow(clippy::cast_precision_loss)]
        let y = y - 12.0 * i as f32;
        out.push(Line {
            x: 72.0,
            y,
            runs: vec![(10.0, false, *text)],
        });
    }
}

#[test]
fn section_titles_in_small_capitals_under_a_papers_title_are_headings_below_it() {
    let mut lines = vec![Line {
        x: 72.0,
        y: 690.0,
        runs: vec![(18.0, true, "Reading Tables From Pixels")],
    }];
    body(
        &[
            "Abstract text of the paper runs over two lines here, set in the",
            "ordinary size of the body, and it ends with a full stop.",
        ],
        660.0,
        &mut lines,
    );
    // Small capitals: each word's initial at 10 points, the rest at 8.
    lines.push(Line {
        x: 72.0,
        y: 620.0,
        runs: vec![(10.0, false, "I. I"), (8.0, false, "NTRODUCTION")],
    });
    body(
        &[
            "The first section's text runs on over a few lines in the body",
            "size, as the text of any section of a paper does, and it stops.",
        ],
        600.0,
        &mut lines,
    );
    lines.push(Line {
        x: 72.0,
        y: 560.0,
        runs: vec![
            (10.0, false, "II. R"),
            (8.0, false, "ELATED "),
            (10.0, false, "W"),
            (8.0, false, "ORK"),
        ],
    });
    body(
        &[
            "Work that came before is described here in a paragraph of two",
            "lines of body text, which ends as a sentence should end.",
        ],
        540.0,
        &mut lines,
    );
    lines.push(Line {
        x: 72.0,
        y: 500.0,
        runs: vec![(10.0, false, "R"), (8.0, false, "EFERENCES")],
    });
    body(
        &["[1] A. Writer, A book about tables, 2020."],
        480.0,
        &mut lines,
    );
    let md = extract(&page(&lines, &[]), &Options::default());
    assert_lines_in_order(
        &md.text,
        &[
            "# Reading Tables From Pixels",
            "## I. INTRODUCTION",
            "## II. RELATED WORK",
            "## REFERENCES",
        ],
    );
}

#[test]
fn numbered_headings_take_their_level_from_the_depth_of_their_numbers() {
    let mut lines = Vec::new();
    // Below the page's header band (its top 8 %), where running heads are.
    let mut y = 700.0;
    for heading in [
        "1. Scope of the Rules",
        "1.1 Terms Used Here",
        "1.1.1 Words and Their Parts",
        "2. Duties",
    ] {
        lines.push(Line {
            x: 72.0,
            y,
            runs: vec![(11.0, true, heading)],
        });
        body(
            &[
                "A paragraph of running text follows every heading here, set in",
                "the body's size, and it ends as a sentence does.",
            ],
            y - 20.0,
            &mut lines,
        );
        y -= 60.0;
    }
    let md = extract(&page(&lines, &[]), &Options::default());
    assert_lines_in_order(
        &md.text,
        &[
            "# 1. Scope of the Rules",
            "## 1.1 Terms Used Here",
            "### 1.1.1 Words and Their Parts",
            "# 2. Duties",
        ],
    );
}

/// A ruled table at the page's top left: `rows` of cell texts, 100 points
/// a column and 20 a row; every rule drawn but the vertical ones listed in
/// `open` (row, column: the rule on that cell's right side), and no
/// vertical one at all unless `verticals`.
fn ruled<'a>(
    rows: &'a [&'a [&'a str]],
    open: &[(usize, usize)],
    verticals: bool,
) -> (Vec<Line<'a>>, Vec<Rule>) {
    let (left, top, w, h) = (72.0f32, 600.0f32, 100.0f32, 20.0f32);
    let columns = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    let mut lines = Vec::new();
    let mut rules = Vec::new();
    #[allow(clippy::cast_precision_loss)]
    for (r, row) in rows.iter().enumerate() {
        let y = top - h * (r as f32 + 1.0);
        for (c, text) in row.iter().enumerate() {
            if !text.is_empty() {
                lines.push(Line {
                    x: left + w * c as f32 + 5.0,
                    y: y + 6.0,
                    runs: vec![(9.0, r == 0, *text)],
                });
            }
        }
        for c in (0..=columns).filter(|_| verticals) {
            if c > 0 && c < columns && open.contains(&(r, c - 1)) {
                continue;
            }
            let x = left + w * c as f32;
            rules.push((x, y, x, y + h));
        }
    }
    #[allow(clippy::cast_precision_loss)]
    for r in 0..=rows.len() {
        let y = top - h * r as f32;
        rules.push((left, y, left + w * columns as f32, y));
    }
    (lines, rules)
}

#[test]
fn a_header_cell_over_two_columns_is_kept_as_a_span_in_an_html_table() {
    let rows: [&[&str]; 3] = [
        &["Region", "Votes cast", ""],
        &["North", "1200", "58%"],
        &["South", "900", "42%"],
    ];
    let (mut lines, rules) = ruled(&rows, &[(0, 1)], true);
    body(
        &["A sentence of running text sits under the table on this page."],
        500.0,
        &mut lines,
    );
    let md = extract(&page(&lines, &rules), &Options::default());
    assert_lines_in_order(
        &md.text,
        &[
            "<table>",
            "<tr><td>Region</td><td colspan=\"2\">Votes cast</td></tr>",
            "<tr><td>North</td><td>1200</td><td>58%</td></tr>",
            "<tr><td>South</td><td>900</td><td>42%</td></tr>",
            "</table>",
        ],
    );
}

// The table model is part of the build only with the `tables` feature.
#[cfg(feature = "tables")]
#[test]
fn the_table_model_reads_a_table_ruled_across_only_and_fills_its_cells_with_the_pages_words() {
    let rows: [&[&str]; 4] = [
        &["Mineral", "Hardness", "Colour"],
        &["Talc", "1", "White"],
        &["Quartz", "7", "Clear"],
        &["Topaz", "8", "Yellow"],
    ];
    // Rules across only, as papers set tables: no grid draws the columns,
    // so the model is asked for them.
    let (mut lines, rules) = ruled(&rows, &[], false);
    body(
        &["A sentence of running text sits under the table on this page."],
        480.0,
        &mut lines,
    );
    let options = Options {
        models_dir: Some(porter_test::models_dir()),
        ..Options::default()
    };
    let md = extract(&page(&lines, &rules), &options);
    assert_lines_in_order(
        &md.text,
        &[
            "| Mineral | Hardness | Colour |",
            "| --- | --- | --- |",
            "| Talc | 1 | White |",
            "| Quartz | 7 | Clear |",
            "| Topaz | 8 | Yellow |",
        ],
    );
    assert!(
        md.notes
            .iter()
            .any(|n| n == "Tables read by the table model: 1 of 1."),
        "{:?}",
        md.notes
    );
}

// The table model is part of the build only with the `tables` feature.
#[cfg(feature = "tables")]
#[test]
fn without_the_model_installed_tables_are_read_by_the_rules_and_a_note_says_so() {
    let rows: [&[&str]; 3] = [&["Name", "Count"], &["Apples", "3"], &["Pears", "4"]];
    let (lines, rules) = ruled(&rows, &[], false);
    let empty = tempfile::tempdir().expect("a temp dir");
    let options = Options {
        models_dir: Some(empty.path().to_owned()),
        ..Options::default()
    };
    let md = extract(&page(&lines, &rules), &options);
    assert_lines_in_order(
        &md.text,
        &[
            "| Name | Count |",
            "| --- | --- |",
            "| Apples | 3 |",
            "| Pears | 4 |",
        ],
    );
    let note = md
        .notes
        .iter()
        .find(|n| n.starts_with("The table model is not in use"))
        .unwrap_or_else(|| panic!("{:?}", md.notes));
    assert!(
        note.contains("scripts/models.sh") && note.contains("layout rules"),
        "{note}"
    );
}
