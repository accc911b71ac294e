//! Where a page's glyphs are drawn, to find the word breaks that the PDF
//! library's joining of glyphs into spans lost.

/// One drawn glyph: its character, where its origin is and how far it
/// moves the pen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Glyph {
    c: char,
    x: f32,
    y: f32,
    advance: f32,
}

/// The glyphs of one page, upright and not blank, in rows a point tall
/// (by their origin's y, PDF space) sorted by x, to find those of a span.
/// `steps` bounds the page's look-ups, so spans drawn over each other by
/// the thousand cost no more than a few passes over the page.
#[derive(Default)]
pub(super) struct Glyphs {
    rows: std::collections::HashMap<i64, Vec<Glyph>>,
    steps: std::cell::Cell<usize>,
}

/// `MAX_SPAN_GLYPHS` is the most glyphs one span is compared with.
const MAX_SPAN_GLYPHS: usize = 4096;

/// `PASSES` is how many times over the page's glyphs (and rows) the
/// look-ups of all its spans may go before the rest are left as they are.
const PASSES: usize = 8;

impl Glyphs {
    /// The page's first `most` glyphs as the library reads them one by
    /// one; none when it cannot (then no span gains a space).
    pub(super) fn of_page(
        document: &pdf_oxide::document::PdfDocument,
        index: usize,
        most: usize,
    ) -> Self {
        let Ok(chars) = document.extract_chars(index) else {
            return Self::default();
        };
        Self::from_glyphs(
            chars
                .into_iter()
                .take(most)
                .filter(|c| c.rotation_degrees == 0.0)
                .map(|c| Glyph {
                    c: c.char,
                    x: c.origin_x,
                    y: c.origin_y,
                    advance: c.advance_width,
                }),
        )
    }

    fn from_glyphs(glyphs: impl IntoIterator<Item = Glyph>) -> Self {
        let mut rows: std::collections::HashMap<i64, Vec<Glyph>> = std::collections::HashMap::new();
        let mut count = 0usize;
        for g in glyphs {
            if g.c.is_whitespace() || !(g.x.is_finite() && g.y.is_finite() && g.advance.is_finite())
            {
                continue;
            }
            #[allow(clippy::cast_possible_truncation)]
            rows.entry(g.y.floor() as i64).or_default().push(g);
            count += 1;
        }
        for row in rows.values_mut() {
            row.sort_by(|a, b| a.x.total_cmp(&b.x));
        }
        let steps = std::cell::Cell::new(PASSES * (count + rows.len()) + 1024);
        Self { rows, steps }
    }

    /// The glyphs whose origin lies in a box (PDF space: `y` its bottom),
    /// left to right; at most [`MAX_SPAN_GLYPHS`]; none once the page's
    /// look-ups are spent.
    pub(super) fn within(&self, x: f32, y: f32, width: f32, height: f32) -> Vec<Glyph> {
        const SLACK: f32 = 0.5;
        let mut out = Vec::new();
        if !(x.is_finite() && y.is_finite() && width.is_finite() && height.is_finite())
            || height > 1000.0
        {
            return out;
        }
        let (left, right) = (x - SLACK, x + width + SLACK);
        #[allow(clippy::cast_possible_truncation)]
        let (low, high) = (
            (y - SLACK).floor() as i64,
            (y + height + SLACK).floor() as i64,
        );
        let mut steps = self.steps.get();
        for key in low..=high {
            steps = steps.saturating_sub(1);
            let Some(row) = self.rows.get(&key) else {
                continue;
            };
            let start = row.partition_point(|g| g.x < left);
            for g in &row[start..] {
                if g.x > right || out.len() >= MAX_SPAN_GLYPHS || steps == 0 {
                    break;
                }
                steps -= 1;
                if g.y >= y - SLACK && g.y <= y + height + SLACK {
                    out.push(*g);
                }
            }
        }
        self.steps.set(steps);
        if steps == 0 {
            out.clear();
        }
        out.sort_by(|a, b| a.x.total_cmp(&b.x));
        out
    }
}

/// `WORD_GAP` is the gap between two drawn glyphs, as a share of the text
/// size, past which they are two words. A word space is a quarter to a
/// third of the size; kerning and the letter spacing of justified text
/// stay under a tenth.
const WORD_GAP: f32 = 0.15;

/// A span's text with a space where two of its characters are drawn a word
/// apart and none was drawn between them. A PDF may place each word on its
/// own and draw no space, and the library's joining of such words into one
/// span leaves some together ("in1983", "theUnited"). `drawn` is the span's
/// glyphs left to right; `None` when they are not the span's characters one
/// for one (a replacement text, a ligature, text drawn twice for bold) or
/// nothing is to be added.
pub(super) fn spaced_by_gaps(text: &str, drawn: &[Glyph], size: f32) -> Option<String> {
    if !one_for_one(text, drawn, size) {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut added = false;
    let mut next = 0;
    let mut blank_before = true;
    for c in text.chars() {
        if c.is_whitespace() {
            blank_before = true;
            out.push(c);
            continue;
        }
        if next > 0 && !blank_before {
            let (before, this) = (drawn[next - 1], drawn[next]);
            if this.x - (before.x + before.advance) > WORD_GAP * size {
                out.push(' ');
                added = true;
            }
        }
        out.push(c);
        next += 1;
        blank_before = false;
    }
    added.then_some(out)
}

/// Whether `drawn` can be measured against `text`: a positive size, two
/// glyphs or more, and the glyphs the span's characters (spaces aside) one
/// for one.
fn one_for_one(text: &str, drawn: &[Glyph], size: f32) -> bool {
    size.partial_cmp(&0.0) == Some(std::cmp::Ordering::Greater)
        && drawn.len() >= 2
        && text
            .chars()
            .filter(|c| !c.is_whitespace())
            .eq(drawn.iter().map(|g| g.c))
}

/// `GUTTER_GAP` is the gap between two drawn glyphs, as a share of the
/// text size, at which a span is two pieces: wider than any word space of
/// justified text, as narrow as the gutter between two columns can be. The
/// layout joins no two pieces lying further apart than this into a line.
const GUTTER_GAP: f32 = 0.6;

/// A span's text in parts, each with where it starts and ends on x.
pub(super) type Parts = Vec<(String, f32, f32)>;

/// A span's text cut where two of its glyphs lie a column gutter apart,
/// with each part's extent on x: the library joins the lines of two
/// columns set close together into one span ("... MSMEs were lockdown from
/// March ..."), which the layout could not take apart again. Whether a cut
/// is a gutter the caller judges from the page's other lines ([`at_gutter`]).
/// `None` when there is no such gap, or the glyphs are not the span's
/// characters one for one.
pub(super) fn split_at_gutters(text: &str, drawn: &[Glyph], size: f32) -> Option<Parts> {
    if !one_for_one(text, drawn, size) {
        return None;
    }
    let mut parts: Parts = Vec::new();
    let mut current = String::new();
    let mut start = drawn[0].x;
    let mut next = 0;
    for c in text.chars() {
        if c.is_whitespace() {
            current.push(c);
            continue;
        }
        if next > 0 {
            let (before, this) = (drawn[next - 1], drawn[next]);
            if this.x - (before.x + before.advance) >= GUTTER_GAP * size {
                parts.push((
                    std::mem::take(&mut current),
                    start,
                    before.x + before.advance,
                ));
                start = this.x;
            }
        }
        current.push(c);
        next += 1;
    }
    if parts.is_empty() {
        return None;
    }
    let last = drawn[drawn.len() - 1];
    parts.push((current, start, last.x + last.advance));
    Some(parts)
}

/// `EDGE` is how far apart, in points, the ends of two lines of one
/// justified column may lie.
const EDGE: f32 = 2.0;

/// `EDGE_LINES` is how many of the page's lines (the cut one's parts
/// among them) must end where a cut's left part ends, and start where its
/// right part starts.
const EDGE_LINES: usize = 3;

/// Whether a gap from `left_end` to `right_start` on x is a gutter between
/// two columns of justified text: lines of running text on the page
/// (`extents`, each one's start and end on x) end where the left part
/// ends, and others start where the right part starts. A label and its
/// value, or a table's cells, set wide apart on one line are short, or end
/// and start anywhere, and are left joined, as the PDF joined them.
pub(super) fn at_gutter(left_end: f32, right_start: f32, extents: &[(f32, f32)]) -> bool {
    let ending = extents
        .iter()
        .filter(|e| (e.1 - left_end).abs() <= EDGE)
        .count();
    let starting = extents
        .iter()
        .filter(|e| (e.0 - right_start).abs() <= EDGE)
        .count();
    ending >= EDGE_LINES && starting >= EDGE_LINES
}

#[cfg(test)]
mod tests {
    use super::{Glyph, Glyphs, at_gutter, spaced_by_gaps, split_at_gutters};

    /// The glyphs of a text set on one baseline in a face whose every glyph
    /// is 5 points wide, with `gaps` added after the character at an index
    /// (counting drawn characters only).
    fn drawn(text: &str, gaps: &[(usize, f32)]) -> Vec<Glyph> {
        let mut x = 100.0;
        let mut out = Vec::new();
        for (i, c) in text.chars().filter(|c| !c.is_whitespace()).enumerate() {
            out.push(Glyph {
                c,
                x,
                y: 700.0,
                advance: 5.0,
            });
            x += 5.0 + gaps.iter().find(|g| g.0 == i).map_or(0.0, |g| g.1);
        }
        out
    }

    #[test]
    fn words_drawn_apart_with_no_space_between_get_one() {
        // "in" then "1983," placed a third of the 9-point size after it.
        let glyphs = drawn("in1983,was", &[(1, 3.0), (6, 2.8)]);
        assert_eq!(
            spaced_by_gaps("in1983,was", &glyphs, 9.0).as_deref(),
            Some("in 1983, was")
        );
        // A space the span has is kept as it is, and no second one added.
        let glyphs = drawn("the United", &[(2, 3.0)]);
        assert_eq!(spaced_by_gaps("the United", &glyphs, 9.0), None);
    }

    #[test]
    fn kerning_and_tight_letter_spacing_join_no_words() {
        let glyphs = drawn("Wave", &[(0, -0.6), (1, 0.5), (2, 0.9)]);
        assert_eq!(spaced_by_gaps("Wave", &glyphs, 10.0), None);
        // Glyphs that are not the span's characters one for one (a
        // ligature, a replacement text, bold drawn twice) change nothing.
        assert_eq!(
            spaced_by_gaps("office", &drawn("oce", &[(0, 4.0)]), 10.0),
            None
        );
        let twice = drawn("aabb", &[(1, 4.0)]);
        assert_eq!(spaced_by_gaps("ab", &twice, 10.0), None);
        assert_eq!(spaced_by_gaps("ab", &drawn("ab", &[(0, 4.0)]), 0.0), None);
    }

    #[test]
    fn a_span_reads_only_the_glyphs_inside_its_box() {
        let mut glyphs = drawn("in1983", &[(1, 3.0)]);
        // The line below, and a word further along the same line.
        glyphs.extend(
            drawn("below", &[])
                .into_iter()
                .map(|g| Glyph { y: 688.0, ..g }),
        );
        glyphs.push(Glyph {
            c: 'x',
            x: 400.0,
            y: 700.0,
            advance: 5.0,
        });
        let page = Glyphs::from_glyphs(glyphs);
        let found = page.within(99.5, 698.0, 33.0, 9.0);
        assert_eq!(found.iter().map(|g| g.c).collect::<String>(), "in1983");
        assert_eq!(
            spaced_by_gaps("in1983", &found, 9.0).as_deref(),
            Some("in 1983")
        );
    }

    #[test]
    fn spans_drawn_over_each_other_spend_the_page_look_ups_and_then_read_none() {
        let page = Glyphs::from_glyphs(drawn("in1983", &[(1, 3.0)]));
        let mut found = 0;
        for _ in 0..1000 {
            found += page.within(99.5, 698.0, 33.0, 9.0).len();
        }
        // Each look-up visits the six glyphs and the rows of its box; the
        // page allows eight passes over them and a thousand more steps.
        assert!(found > 6, "{found}");
        assert!(found < 6 * 200, "{found}");
        assert!(page.within(99.5, 698.0, 33.0, 9.0).is_empty());
    }

    #[test]
    fn a_span_over_two_columns_is_cut_at_the_gutter_and_nowhere_else() {
        // "asked" ending the left column's line, a 7-point gutter at 9.5
        // points, then "lockdown" starting the right one's; word spaces of
        // justified text (4 points) stay inside a piece.
        let glyphs = drawn(
            "MSMEswereaskedlockdownfromMarch",
            &[(4, 4.0), (8, 4.0), (13, 7.0), (21, 4.0), (25, 4.0)],
        );
        let parts =
            split_at_gutters("MSMEs were asked lockdown from March", &glyphs, 9.5).expect("a cut");
        let texts: Vec<&str> = parts.iter().map(|p| p.0.trim()).collect();
        assert_eq!(texts, ["MSMEs were asked", "lockdown from March"]);
        assert!((parts[0].2 - 178.0).abs() < 0.01, "{parts:?}");
        assert!((parts[1].1 - 185.0).abs() < 0.01, "{parts:?}");
        let glyphs = drawn("MSMEswere", &[(4, 4.0)]);
        assert_eq!(split_at_gutters("MSMEs were", &glyphs, 9.5), None);
    }

    #[test]
    fn a_cut_is_a_gutter_only_where_lines_of_both_columns_end_and_start() {
        // Three lines of a left column end at 292 (within two points), and
        // three of a right one start at 299.
        let columns = [
            (72.0, 292.0),
            (72.0, 291.0),
            (72.0, 292.5),
            (299.0, 509.0),
            (299.0, 480.0),
            (299.5, 504.0),
        ];
        assert!(at_gutter(292.0, 299.0, &columns));
        // A label and its value set wide apart, the other lines not
        // ending or starting there.
        assert!(!at_gutter(150.0, 170.0, &columns));
        // Two lines only on the left: a paragraph's last line is no column.
        assert!(!at_gutter(292.0, 299.0, &columns[1..]));
    }
}
