//! Reading order on pages drawn for each rule: a paper's full-width title
//! and abstract over two columns, a footnote under its column, a sidebar
//! beside the text.

use std::fmt::Write as _;

use porter_fileview::Options;

use super::assert_lines_in_order;
use super::structure::{Line, Rule, extract, page, page_with_raw};

/// Lines of running text at `size` points from `y` down, `size` + 2
/// points apart, starting at `x`.
fn lines_at<'a>(x: f32, y: f32, size: f32, texts: &[&'a str], out: &mut Vec<Line<'a>>) {
    for (i, text) in texts.iter().enumerate() {
        #[allow(clippy::cast_precision_loss)]
        let y = y - (size + 2.0) * i as f32;
        out.push(Line {
            x,
            y,
            runs: vec![(size, false, *text)],
        });
    }
}

/// A column's running text: eight lines of at most 44 characters (220
/// points at 10 points), ending in a full stop.
const LEFT: [&str; 8] = [
    "The left column opens the paper's body with",
    "lines of running text that wrap at the width",
    "of the column, as every line of a paper in",
    "two columns does, so that the reader goes on",
    "down this column to its foot before turning",
    "to the top of the column on the right side,",
    "and this line is the last line but one of it",
    "and this is where the left column stops.",
];

const RIGHT: [&str; 8] = [
    "The right column follows on from the left one",
    "and its lines are set the same way, at the",
    "same size and leading, so that nothing but",
    "their place on the page tells the two apart",
    "and a reader takes all of the left column",
    "first and only then the lines of this one,",
    "down to the foot of the page where they end,",
    "and this is where the right column stops.",
];

#[test]
fn a_papers_title_and_abstract_come_first_then_each_column_then_the_footnote_under_them() {
    let mut lines = vec![Line {
        x: 150.0,
        y: 720.0,
        runs: vec![(16.0, true, "Reading Two Columns")],
    }];
    lines_at(
        72.0,
        690.0,
        10.0,
        &[
            "Abstract. This abstract runs over the whole width of the page, above both columns,",
            "and is read before either of them, as the title above it is read before it.",
        ],
        &mut lines,
    );
    lines_at(72.0, 640.0, 10.0, &LEFT, &mut lines);
    lines_at(320.0, 640.0, 10.0, &RIGHT, &mut lines);
    // A footnote under the left column, set smaller below a short rule,
    // lower than both columns end: it is read after the page's body.
    lines_at(
        72.0,
        500.0,
        8.0,
        &["1 A footnote to the left column's text."],
        &mut lines,
    );
    let rules: Vec<Rule> = vec![(72.0, 512.0, 150.0, 512.0)];
    let md = extract(&page(&lines, &rules), &Options::default());
    assert_lines_in_order(
        &md.text,
        &[
            "# Reading Two Columns",
            "Abstract. This abstract runs over the whole width of the page, above both columns, \
             and is read before either of them, as the title above it is read before it.",
            &LEFT.join(" ").replace('\'', "’"),
            &RIGHT.join(" "),
            "1 A footnote to the left column’s text.",
        ],
    );
}

#[test]
fn a_sidebar_beside_the_text_is_read_after_it_whole() {
    let mut lines = Vec::new();
    let main: [&str; 6] = [
        "The main text of the page runs down its left two",
        "thirds in lines that wrap at the width of its own",
        "measure, while a box of other matter stands beside",
        "it on the right, and the reader goes on down here",
        "to the end of this text before reading the box, so",
        "that this sentence is not cut by the box's lines.",
    ];
    lines_at(72.0, 700.0, 10.0, &main, &mut lines);
    lines.push(Line {
        x: 400.0,
        y: 690.0,
        runs: vec![(10.0, true, "In Brief")],
    });
    lines_at(
        400.0,
        674.0,
        9.0,
        &[
            "A sidebar of short lines",
            "that sum up the page for",
            "a reader in a hurry.",
        ],
        &mut lines,
    );
    let md = extract(&page(&lines, &[]), &Options::default());
    assert_lines_in_order(
        &md.text,
        &[
            &main.join(" ").replace('\'', "’"),
            "# In Brief",
            "A sidebar of short lines that sum up the page for a reader in a hurry.",
        ],
    );
}

#[test]
fn text_turned_up_the_pages_margin_leaves_the_columns_apart() {
    // A line set turned a quarter up the left margin over the height of
    // the columns, as an archive stamps its identifier down a paper's
    // first page: the columns are still read one after the other, and the
    // turned line after them.
    let mut lines = Vec::new();
    lines_at(72.0, 640.0, 10.0, &LEFT, &mut lines);
    lines_at(320.0, 640.0, 10.0, &RIGHT, &mut lines);
    let stamp = "BT /F1 20 Tf 0 1 -1 0 40 300 Tm (archive:2601.00001 [cs.DL] 7 Dec 2026) Tj ET\n";
    let md = extract(&page_with_raw(&lines, stamp), &Options::default());
    assert_lines_in_order(
        &md.text,
        &[&LEFT.join(" ").replace('\'', "’"), &RIGHT.join(" ")],
    );
    assert!(md.text.contains("archive:2601.00001"), "{}", md.text);
}

/// Two columns of justified text whose lines all end on the same x, by the
/// word spacing each line is set with (every glyph 5 points wide at 10):
/// the left column from x 72 to 292, a 7-point gutter, the right from 299.
/// Rows in `joined` are drawn as one text object running over the gutter,
/// as some producers draw a row of two columns; the others line by line.
fn justified_columns(left: &[&str], right: &[&str], joined: &[usize]) -> String {
    let mut raw = String::new();
    for (row, (l, r)) in left.iter().zip(right).enumerate() {
        #[allow(clippy::cast_precision_loss)]
        let (y, chars, spaces) = (
            640.0 - 12.0 * row as f32,
            l.chars().count() as f32,
            l.matches(' ').count().max(1) as f32,
        );
        // The word spacing that makes the left line 220 points wide.
        let spacing = (220.0 - 5.0 * chars) / spaces;
        if joined.contains(&row) {
            // Tw applies to the right line's spaces too; its start is
            // what matters: 7 points after the left line's end.
            writeln!(
                raw,
                "BT /F1 10 Tf {spacing:.3} Tw 72 {y} Td [({l}) -700 ({r})] TJ ET"
            )
            .expect("a String takes text");
        } else {
            writeln!(
                raw,
                "BT /F1 10 Tf {spacing:.3} Tw 72 {y} Td ({l}) Tj ET\n\
                 BT /F1 10 Tf 0 Tw 299 {y} Td ({r}) Tj ET"
            )
            .expect("a String takes text");
        }
    }
    raw
}

#[test]
fn rows_of_two_justified_columns_drawn_as_one_line_are_parted_at_the_gutter() {
    let left = [
        "The left column of this page is set",
        "justified so that each of its lines ends at",
        "the same place on the right side, as the",
        "lines of a book are set, and the lines of",
        "the right column begin just a little way",
        "after them across the narrow gutter between",
        "the two of them, so that it ends here.",
    ];
    let right = [
        "The right column is drawn in the same text",
        "objects as the left one on some rows, so",
        "that a reader of the file sees long lines",
        "running over the whole page there, though",
        "a reader of the page sees two columns and",
        "reads all of the left one first and then",
        "this one, down to where it ends as well.",
    ];
    let md = extract(
        &page_with_raw(&[], &justified_columns(&left, &right, &[1, 4])),
        &Options::default(),
    );
    assert_lines_in_order(&md.text, &[&left.join(" "), &right.join(" ")]);
}
