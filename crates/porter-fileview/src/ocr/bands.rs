//! One page read by two engines at once: a page tall enough is cut in two
//! across a blank band of rows near its middle (between paragraphs or
//! lines, never through a line's ink), each half is read by an engine of
//! its own on its own core, and the two readings are joined back into one,
//! the lower half's boxes moved down by where it was cut.
//!
//! Tesseract reads one page on one core (its OpenMP threads did not make a
//! page faster here), so on a machine with two cores this about halves the
//! time of a dense page. Porter orders lines by their boxes, so where a
//! half's blocks end does not change the reading order.

use super::gray::Gray;

/// A page shorter than this many inches is read whole: two engines would
/// cost more in starting up than they save.
const MIN_INCHES: f32 = 2.0;

/// A row is blank when at most one in this many of its pixels is dark
/// (dust and scanner noise are allowed; a row through letters is not).
const DARK_PER_BLANK_ROW: u32 = 500;

/// Darker than this (of 255) is ink.
const INK: u8 = 128;

/// Where `page` (at `ppi`) may be cut into two halves read apart: the
/// middle of the blank band of rows, at least a twenty-fifth of an inch
/// tall, whose middle is nearest the page's, within its middle two fifths;
/// none when there is no such band or the page is short.
pub(crate) fn cut_row(page: &Gray, ppi: u32) -> Option<u32> {
    let ppi = ppi.max(1) as f32;
    if (page.height as f32) < MIN_INCHES * ppi || page.width == 0 {
        return None;
    }
    let width = page.width as usize;
    let allowed = page.width / DARK_PER_BLANK_ROW + 1;
    let min_band = (ppi / 25.0).ceil().max(4.0) as u32;
    let (low, high) = (page.height * 3 / 10, page.height * 7 / 10);
    let middle = page.height / 2;
    let mut best: Option<u32> = None;
    let mut band_start = None;
    for row in 0..=page.height {
        let blank = row < page.height && {
            let start = row as usize * width;
            let pixels = &page.pixels[start..start + width];
            pixels.iter().filter(|&&p| p < INK).count() as u32 <= allowed
        };
        match (blank, band_start) {
            (true, None) => band_start = Some(row),
            (false, Some(start)) => {
                band_start = None;
                let center = start + (row - start) / 2;
                if row - start >= min_band
                    && (low..=high).contains(&center)
                    && best.is_none_or(|b| center.abs_diff(middle) < b.abs_diff(middle))
                {
                    best = Some(center);
                }
            }
            _ => {}
        }
    }
    best
}

/// The rows above `cut` and those from `cut` down, as two pages.
pub(crate) fn split(page: &Gray, cut: u32) -> (Gray, Gray) {
    let at = cut as usize * page.width as usize;
    let top = Gray {
        width: page.width,
        height: cut,
        pixels: page.pixels[..at].to_vec(),
    };
    let bottom = Gray {
        width: page.width,
        height: page.height - cut,
        pixels: page.pixels[at..].to_vec(),
    };
    (top, bottom)
}

/// Tesseract's TSV of the top half and of the bottom half (cut at row
/// `cut`) as one page's: the bottom half's rows moved down by `cut`, its
/// blocks numbered on after the top's, its page row dropped.
pub(crate) fn join_tsv(top: &str, bottom: &str, cut: u32) -> String {
    let blocks = top
        .lines()
        .filter_map(|row| row.split('\t').nth(2)?.trim().parse::<u32>().ok())
        .max()
        .unwrap_or(0);
    let mut out = String::with_capacity(top.len() + bottom.len());
    for row in top.lines() {
        out.push_str(row);
        out.push('\n');
    }
    for row in bottom.lines() {
        let mut fields: Vec<String> = row.split('\t').map(str::to_owned).collect();
        // The header, the page's own row and anything odd are left out.
        if fields.len() < 12 || fields[0].trim() == "1" {
            continue;
        }
        let (Ok(block), Ok(y)) = (
            fields[2].trim().parse::<u32>(),
            fields[7].trim().parse::<u32>(),
        ) else {
            continue;
        };
        fields[2] = (block + blocks).to_string();
        fields[7] = (y + cut).to_string();
        out.push_str(&fields.join("\t"));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A white page `height` rows tall with ink on every row listed.
    fn page(width: u32, height: u32, inked: impl Fn(u32) -> bool) -> Gray {
        let mut pixels = vec![255u8; (width * height) as usize];
        for row in 0..height {
            if inked(row) {
                // Letters: every third pixel dark across the row.
                for x in (0..width).step_by(3) {
                    pixels[(row * width + x) as usize] = 0;
                }
            }
        }
        Gray {
            width,
            height,
            pixels,
        }
    }

    #[test]
    fn a_page_is_cut_in_the_blank_band_nearest_its_middle() {
        // 300 ppi, 4 inches: lines 40 rows tall with 10-row gaps, and a
        // 30-row gap between two paragraphs at rows 700–730.
        let lines = |row: u32| !(700..730).contains(&row) && row % 50 < 40;
        let sheet = page(600, 1200, lines);
        let cut = cut_row(&sheet, 300).expect("a cut");
        assert!((700..730).contains(&cut), "{cut}");
        // Noise is not ink: a few dark pixels in the gap do not close it.
        let mut dusty = sheet.clone();
        dusty.pixels[(710 * 600 + 5) as usize] = 0;
        assert_eq!(cut_row(&dusty, 300), Some(cut));
    }

    #[test]
    fn a_page_without_a_band_or_too_short_is_read_whole() {
        // Gaps of 3 rows are inside a line (between its ink), not between
        // paragraphs.
        let dense = page(600, 1200, |row| row % 40 > 2);
        assert_eq!(cut_row(&dense, 300), None);
        // Blank only near the top and bottom.
        let edges = page(600, 1200, |row| (100..1100).contains(&row));
        assert_eq!(cut_row(&edges, 300), None);
        // An inch and a half: too short to be worth two engines.
        let short = page(600, 450, |row| row != 225);
        assert_eq!(cut_row(&short, 300), None);
    }

    #[test]
    fn the_halves_are_the_rows_above_and_below_the_cut() {
        let sheet = page(4, 6, |row| row >= 3);
        let (top, bottom) = split(&sheet, 3);
        assert_eq!((top.height, bottom.height), (3, 3));
        assert!(top.pixels.iter().all(|&p| p == 255));
        assert_eq!(&bottom.pixels[..4], &[0, 255, 255, 0]);
    }

    #[test]
    fn the_bottom_halfs_rows_move_down_and_its_blocks_number_on() {
        let header = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext";
        let top = format!(
            "{header}\n1\t1\t0\t0\t0\t0\t0\t0\t600\t500\t-1\t\n5\t1\t1\t1\t1\t1\t10\t20\t50\t30\t96.5\tHarbour\n5\t1\t2\t1\t1\t1\t10\t300\t50\t30\t91\tboard"
        );
        let bottom = format!(
            "{header}\n1\t1\t0\t0\t0\t0\t0\t0\t600\t700\t-1\t\n5\t1\t1\t1\t1\t1\t12\t40\t60\t30\t88\tminutes"
        );
        let joined = join_tsv(&top, &bottom, 500);
        let words = super::super::parse_tsv(&joined);
        let seen: Vec<(&str, u32, f32)> = words
            .iter()
            .map(|w| (w.text.as_str(), w.block, w.y0))
            .collect();
        assert_eq!(
            seen,
            [
                ("Harbour", 1, 20.0),
                ("board", 2, 300.0),
                ("minutes", 3, 540.0)
            ]
        );
        assert_eq!(joined.lines().filter(|l| l.starts_with("1\t")).count(), 1);
    }
}
