//! Whether a picture holds lines of text, decided on a small copy before any
//! OCR engine is started: a holiday photo, a drawing without labels or a
//! texture costs tens of milliseconds here instead of a full OCR pass.
//!
//! Print has a shape that little else has: marks of about one height, set
//! side by side a little apart, their feet on one line, their widths varied
//! (an `i` beside an `m`), several such rows. The picture's ink is found
//! against its neighbourhood (darker or lighter than the mean around it,
//! so dark text on light paper and light text on a dark screen alike), its
//! connected marks measured, each mark linked to its nearest neighbour
//! along a row, and the chains judged as lines by those traits. The same is
//! done with rows running up or down, for a page lying on its side.
//!
//! It errs towards text: a picture it takes for text only costs the OCR
//! pass it would have had anyway, and OCR then finds nothing; a page it
//! missed would lose its text. Every step is linear in the pixels, and the
//! marks it keeps are capped.

use image::GrayImage;

/// What was found: the lines of text, how tall their characters are, and
/// which way they run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Found {
    /// Lines that look like print.
    pub lines: usize,
    /// The characters in them.
    pub marks: usize,
    /// The median height of those characters, in the picture's pixels.
    pub height: f32,
    /// Whether the lines run up or down the picture (it lies on its side).
    pub sideways: bool,
}

/// A picture's grey copy, looked at for lines of text.
pub(crate) struct Looked {
    /// The picture as shown, in grey.
    pub grey: GrayImage,
    /// The lines of text in it, when it has enough to be worth OCR.
    pub found: Option<Found>,
}

/// Looks at `grey` for lines of text.
pub(crate) fn look(grey: GrayImage) -> Looked {
    let found = text_lines(&grey);
    Looked { grey, found }
}

/// `MIN_HEIGHT_PX` is the least height of a mark that can be a character:
/// below it no OCR could read it anyway.
const MIN_HEIGHT_PX: u32 = 4;
/// `MAX_MARKS` caps the marks measured, so that a picture of pure noise
/// costs no more than a page of print.
const MAX_MARKS: usize = 80_000;
/// `MAX_PIXELS` is the most pixels looked at; a larger picture is looked
/// at scaled down to it.
const MAX_PIXELS: u64 = 2048 * 2048;
/// `MIN_MARKS` is the fewest characters, in all, that make a picture worth
/// OCR; `MEAN_LINE` the fewest its lines must have on average.
const MIN_MARKS: usize = 24;
const MEAN_LINE: usize = 8;
/// `LONGEST_LINE` is the fewest characters the longest line must have: a
/// few words, which chance strings out of a texture or noise rarely make.
const LONGEST_LINE: usize = 14;
/// `MIN_CHAIN` is the fewest characters a line must have: a word or two.
const MIN_CHAIN: usize = 6;

/// Lines of text in `gray`, when it has enough of them to be worth OCR:
/// lines of six characters or more standing in a block (or one long line),
/// of eight or more on average, the longest of [`LONGEST_LINE`] or more,
/// [`MIN_MARKS`] characters between them.
pub(crate) fn text_lines(gray: &GrayImage) -> Option<Found> {
    let (width, height) = gray.dimensions();
    if width < 16 || height < 16 {
        return None;
    }
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        // Looked at no larger than that (the sums of the mean stay in 32
        // bits), the height found given back at the picture's own scale.
        let scale = (MAX_PIXELS as f64 / (f64::from(width) * f64::from(height))).sqrt();
        let smaller = image::imageops::resize(
            gray,
            ((f64::from(width) * scale) as u32).max(1),
            ((f64::from(height) * scale) as u32).max(1),
            image::imageops::FilterType::Triangle,
        );
        return text_lines(&smaller).map(|found| Found {
            height: found.height / scale as f32,
            ..found
        });
    }
    let (dark, light) = ink(gray);
    let mut marks = Vec::new();
    components(&dark, width, height, &mut marks);
    drop(dark);
    components(&light, width, height, &mut marks);
    let limit_h = (height / 4).max(MIN_HEIGHT_PX);
    let limit_w = (width / 2).max(MIN_HEIGHT_PX);
    let upright: Vec<Mark> = marks
        .iter()
        .copied()
        .filter(|m| m.like_a_character(limit_h, limit_w))
        .collect();
    let turned: Vec<Mark> = marks
        .iter()
        .map(Mark::transposed)
        .filter(|m| m.like_a_character(limit_w, limit_h))
        .collect();
    let across = judge(&upright);
    let down = judge(&turned);
    let (best, sideways) = if down.marks > across.marks * 2 {
        (down, true)
    } else {
        (across, false)
    };
    // Enough print to be worth reading, in lines of a word or three on
    // average at least (textures strung into chains make short ones).
    let enough = best.marks >= MIN_MARKS
        && best.marks >= best.lines * MEAN_LINE
        && best.longest >= LONGEST_LINE;
    enough.then_some(Found {
        lines: best.lines,
        marks: best.marks,
        height: best.height,
        sideways,
    })
}

/// What the lines of one direction add up to.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    lines: usize,
    marks: usize,
    /// The characters of its longest line.
    longest: usize,
    height: f32,
}

/// The lines among `marks` (rows running left to right).
fn judge(marks: &[Mark]) -> Tally {
    let mut sets = Sets::new(marks.len());
    link_rows(marks, &mut sets);
    let mut chains: std::collections::HashMap<usize, Vec<usize>> = std::collections::HashMap::new();
    for i in 0..marks.len() {
        chains.entry(sets.root(i)).or_default().push(i);
    }
    let centres = Centres::new(marks);
    let mut lines = Vec::new();
    for members in chains.values() {
        if members.len() < MIN_CHAIN {
            continue;
        }
        let chain: Vec<Mark> = members.iter().map(|&i| marks[i]).collect();
        if let Some(line) = as_a_line(&chain)
            && centres.below(&line, members) * 4 <= members.len()
        {
            lines.push((line, chain));
        }
    }
    // Print comes in blocks: a line counts when another stands above or
    // below it, about a line apart, of its size and overlapping it along
    // the row; a single line only when it is long (a caption, a banner).
    let mut tally = Tally::default();
    let mut heights = Vec::new();
    for (i, (line, chain)) in lines.iter().enumerate() {
        let stacked = lines
            .iter()
            .enumerate()
            .any(|(j, (other, _))| i != j && line.stacked_with(other));
        if stacked || chain.len() >= LONE_LINE {
            tally.lines += 1;
            tally.marks += chain.len();
            tally.longest = tally.longest.max(chain.len());
            heights.extend(chain.iter().map(|m| m.height() as f32));
        }
    }
    if !heights.is_empty() {
        tally.height = median(&mut heights);
    }
    tally
}

/// Where the marks' middles are, in a grid of [`GRID_PX`] cells.
struct Centres<'a> {
    marks: &'a [Mark],
    grid: std::collections::HashMap<(u32, u32), Vec<usize>>,
}

impl<'a> Centres<'a> {
    fn new(marks: &'a [Mark]) -> Self {
        let mut grid: std::collections::HashMap<(u32, u32), Vec<usize>> =
            std::collections::HashMap::new();
        for (i, m) in marks.iter().enumerate() {
            let (x, y) = m.centre();
            grid.entry((x / GRID_PX, y / GRID_PX)).or_default().push(i);
        }
        Self { marks, grid }
    }

    /// How many marks other than `members` have their middle just under
    /// `line`, in the band from a sixth to three quarters of its height
    /// below its foot line. Under a line of print is the space between it
    /// and the next line (its own descenders are marks of its own, their
    /// middles above the foot line); in a texture or in noise, that band is
    /// as full of marks as any other.
    fn below(&self, line: &Line, members: &[usize]) -> usize {
        let top = line.foot + line.height / 6.0;
        let bottom = line.foot + line.height * 0.75;
        // The foot line slopes by at most a fifth: the band is searched
        // that much wider.
        let slack = (line.x1 - line.x0) * 0.1;
        let (y0, y1) = ((top - slack).max(0.0) as u32, (bottom + slack) as u32);
        let (x0, x1) = (line.x0.max(0.0) as u32, line.x1 as u32);
        let mut count = 0;
        for cy in y0 / GRID_PX..=y1 / GRID_PX {
            for cx in x0 / GRID_PX..=x1 / GRID_PX {
                let Some(list) = self.grid.get(&(cx, cy)) else {
                    continue;
                };
                for &i in list {
                    let (x, y) = self.marks[i].centre();
                    let (x, y) = (x as f32, y as f32);
                    let foot = line.foot + line.slope * (x - line.middle());
                    let (top, bottom) = (foot + line.height / 6.0, foot + line.height * 0.75);
                    if x >= line.x0
                        && x <= line.x1
                        && y >= top
                        && y <= bottom
                        && !members.contains(&i)
                    {
                        count += 1;
                    }
                }
            }
        }
        count
    }
}

/// `LONE_LINE` is the fewest characters a line with no other beside it must
/// have to count.
const LONE_LINE: usize = 24;

/// A chain of marks that reads as a line of print.
#[derive(Debug, Clone, Copy)]
struct Line {
    x0: f32,
    x1: f32,
    /// Where its foot line is, at its middle.
    foot: f32,
    /// How far the foot line falls for each pixel along the row.
    slope: f32,
    /// The median height of its characters.
    height: f32,
}

impl Line {
    fn middle(&self) -> f32 {
        f32::midpoint(self.x0, self.x1)
    }

    /// Whether `other` stands above or below this line as the next line of
    /// a paragraph does: between one and four heights away, neither over
    /// half again the other's size, overlapping along the row by a third of
    /// the shorter.
    fn stacked_with(&self, other: &Self) -> bool {
        let h = self.height.max(other.height);
        let apart = (self.foot - other.foot).abs();
        let alike = self.height.max(other.height) <= 1.5 * self.height.min(other.height);
        let overlap = self.x1.min(other.x1) - self.x0.max(other.x0);
        let shorter = (self.x1 - self.x0).min(other.x1 - other.x0);
        alike && (h..=4.0 * h).contains(&apart) && overlap >= shorter / 3.0
    }
}

/// Links each mark to its nearest neighbour to the right on the same row:
/// a gap of at most about a word space, the two overlapping by half the
/// smaller's height, neither over twice the other's height.
fn link_rows(marks: &[Mark], sets: &mut Sets) {
    // A grid of cells, each listing the marks whose left edge and middle
    // fall in it, so that each mark looks only at marks within its reach.
    let cell = |v: u32| v / GRID_PX;
    let mut grid: std::collections::HashMap<(u32, u32), Vec<usize>> =
        std::collections::HashMap::new();
    for (i, m) in marks.iter().enumerate() {
        grid.entry((cell(m.x0), cell(m.y0.midpoint(m.y1))))
            .or_default()
            .push(i);
    }
    for (i, a) in marks.iter().enumerate() {
        let reach = a.x1 + (a.height() * 3) / 2 + 1;
        let mut best: Option<(u32, usize)> = None;
        for cy in cell(a.y0.saturating_sub(a.height()))..=cell(a.y1 + a.height()) {
            for cx in cell(a.x0)..=cell(reach) {
                let Some(list) = grid.get(&(cx, cy)) else {
                    continue;
                };
                for &j in list {
                    let b = &marks[j];
                    if j == i || b.x0 <= a.x0 || b.x0 > reach || !beside(a, b) {
                        continue;
                    }
                    let gap = b.x0.saturating_sub(a.x1);
                    if best.is_none_or(|(g, k)| (gap, j) < (g, k)) {
                        best = Some((gap, j));
                    }
                }
            }
        }
        if let Some((_, j)) = best {
            sets.join(i, j);
        }
    }
}

/// `GRID_PX` is the side of a cell of [`link_rows`]' grid.
const GRID_PX: u32 = 16;

/// Whether `b` stands beside `a` on a row: neither over twice the other's
/// height, overlapping by half the smaller's height, and not one above the
/// other (overlapping along the row by over a third of the smaller).
fn beside(a: &Mark, b: &Mark) -> bool {
    let (low, high) = if a.height() < b.height() {
        (a.height(), b.height())
    } else {
        (b.height(), a.height())
    };
    if high > low * 2 {
        return false;
    }
    let overlap = a.y1.min(b.y1).saturating_sub(a.y0.max(b.y0));
    overlap * 2 >= low && b.x0 + low / 3 >= a.x1
}

/// `chain` as a line of print, when it reads as one: heights alike, feet
/// on one straight line (descenders aside), characters filling most of its
/// length, widths varied as letters are (bricks, windows and fence posts
/// are not).
fn as_a_line(chain: &[Mark]) -> Option<Line> {
    let mut heights: Vec<f32> = chain.iter().map(|m| m.height() as f32).collect();
    let h = median(&mut heights);
    let mut spread: Vec<f32> = heights.iter().map(|x| (x - h).abs()).collect();
    if median(&mut spread) > 0.25 * h {
        return None;
    }
    let x0 = chain.iter().map(|m| m.x0).min()? as f32;
    let x1 = chain.iter().map(|m| m.x1).max()? as f32;
    // Letters fill most of a line, word spaces aside; marks strung far
    // apart are not words.
    let inked: f32 = chain.iter().map(|m| m.width() as f32).sum();
    if inked < 0.45 * (x1 - x0) {
        return None;
    }
    // The feet: a straight line fitted through the marks' bottoms, and how
    // far the marks' feet stray from it.
    let n = chain.len() as f32;
    let xs: Vec<f32> = chain.iter().map(|m| (m.x0 + m.x1) as f32 / 2.0).collect();
    let ys: Vec<f32> = chain.iter().map(|m| m.y1 as f32).collect();
    let mx = xs.iter().sum::<f32>() / n;
    let my = ys.iter().sum::<f32>() / n;
    let sxx: f32 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    let sxy: f32 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    // Steeper than about 11 degrees is not a line of print read as rows.
    if slope.abs() > 0.2 {
        return None;
    }
    let mut strays: Vec<f32> = xs
        .iter()
        .zip(&ys)
        .map(|(x, y)| (y - (my + slope * (x - mx))).abs())
        .collect();
    if median(&mut strays) > 0.2 * h {
        return None;
    }
    let widths: Vec<f32> = chain.iter().map(|m| m.width() as f32).collect();
    let mean = widths.iter().sum::<f32>() / n;
    let variance = widths.iter().map(|w| (w - mean) * (w - mean)).sum::<f32>() / n;
    if variance.sqrt() < 0.12 * mean {
        return None;
    }
    Some(Line {
        x0,
        x1,
        foot: my + slope * (f32::midpoint(x0, x1) - mx),
        slope,
        height: h,
    })
}

fn median(values: &mut [f32]) -> f32 {
    if values.is_empty() {
        return 0.0;
    }
    let mid = values.len() / 2;
    values.select_nth_unstable_by(mid, f32::total_cmp);
    values[mid]
}

/// One connected mark: its box (`x1`, `y1` one past its last pixel) and
/// how many pixels it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Mark {
    x0: u32,
    y0: u32,
    x1: u32,
    y1: u32,
    pixels: u32,
}

impl Mark {
    fn width(&self) -> u32 {
        self.x1 - self.x0
    }

    fn height(&self) -> u32 {
        self.y1 - self.y0
    }

    fn centre(&self) -> (u32, u32) {
        (self.x0.midpoint(self.x1), self.y0.midpoint(self.y1))
    }

    fn transposed(&self) -> Self {
        Self {
            x0: self.y0,
            y0: self.x0,
            x1: self.y1,
            y1: self.x1,
            pixels: self.pixels,
        }
    }

    /// Whether its size and shape could be a character (or a few run
    /// together): tall enough to read, not a large part of the picture, no
    /// wider than several characters, neither a speck nor a solid block
    /// (unless narrow, as an `l` or a `1`).
    fn like_a_character(&self, max_height: u32, max_width: u32) -> bool {
        let (w, h) = (self.width(), self.height());
        if h < MIN_HEIGHT_PX || h > max_height || w > max_width || w > h * 6 {
            return false;
        }
        let area = u64::from(w) * u64::from(h);
        let fill = f64::from(self.pixels) / area as f64;
        fill >= 0.08 && (fill <= 0.92 || w * 3 <= h)
    }
}

/// The ink of a picture, each pixel compared with the mean grey around it
/// (about a sixteenth of the shorter side either way, from an integral
/// image: several lines of body text, so that a character's surroundings
/// are mostly paper): dark ink at least 12 % (and 12 grey levels) below
/// it, as print on paper; light ink as far above it, as text on a dark
/// screen or sign.
fn ink(gray: &GrayImage) -> (Vec<bool>, Vec<bool>) {
    let (width, height) = (gray.width() as usize, gray.height() as usize);
    let pixels = gray.as_raw();
    let stride = width + 1;
    let mut sums = vec![0u32; stride * (height + 1)];
    for y in 0..height {
        let mut row = 0u32;
        for x in 0..width {
            row += u32::from(pixels[y * width + x]);
            sums[(y + 1) * stride + x + 1] = sums[y * stride + x + 1] + row;
        }
    }
    let radius = (width.min(height) / 16).clamp(8, 64);
    let mut dark = vec![false; width * height];
    let mut light = vec![false; width * height];
    // The window is clipped at the edges, so its area varies with the
    // pixel; a division per pixel cost more than the rest of this pass. A
    // row's windows have at most 2 × radius + 1 widths, whose reciprocals
    // are taken once for the row.
    let mut reciprocals = vec![0u64; 2 * radius + 2];
    for y in 0..height {
        let (y0, y1) = (y.saturating_sub(radius), (y + radius + 1).min(height));
        for (span, reciprocal) in reciprocals.iter_mut().enumerate().skip(1) {
            *reciprocal = Reciprocal::of(span * (y1 - y0));
        }
        let (top, bottom) = (
            &sums[y0 * stride..=y0 * stride + width],
            &sums[y1 * stride..=y1 * stride + width],
        );
        let row = &pixels[y * width..(y + 1) * width];
        let (dark_row, light_row) = (
            &mut dark[y * width..(y + 1) * width],
            &mut light[y * width..(y + 1) * width],
        );
        for x in 0..width {
            let (x0, x1) = (x.saturating_sub(radius), (x + radius + 1).min(width));
            let sum = bottom[x1] + top[x0] - top[x1] - bottom[x0];
            let mean = Reciprocal::divide(sum, reciprocals[x1 - x0]);
            let p = u32::from(row[x]);
            dark_row[x] = p + (mean * 12 / 100).max(12) < mean;
            light_row[x] = p > mean + ((255 - mean) * 12 / 100).max(12);
        }
    }
    (dark, light)
}

/// Division by a window's area as a multiplication: for an area `d` below
/// 65 660 and a sum of at most 255 × `d` (a window of grey levels),
/// `sum × (⌊2⁴⁰ / d⌋ + 1) >> 40` is exactly `⌊sum / d⌋` (the error term,
/// below `sum × d / 2⁴⁰`, stays under one part in `d`).
struct Reciprocal;

impl Reciprocal {
    const SHIFT: u32 = 40;

    fn of(area: usize) -> u64 {
        (1u64 << Self::SHIFT) / area.max(1) as u64 + 1
    }

    fn divide(sum: u32, reciprocal: u64) -> u32 {
        ((u64::from(sum) * reciprocal) >> Self::SHIFT) as u32
    }
}

/// Adds the connected marks of `ink` (8-connected) to `marks`, at most
/// [`MAX_MARKS`] in all, by labelling its runs row by row.
fn components(ink: &[bool], width: u32, height: u32, marks: &mut Vec<Mark>) {
    let (w, h) = (width as usize, height as usize);
    // Runs of the row above and of this row: (start, end, label).
    let mut above: Vec<(usize, usize, usize)> = Vec::new();
    let mut here: Vec<(usize, usize, usize)> = Vec::new();
    let mut sets = Sets::new(0);
    let mut boxes: Vec<Mark> = Vec::new();
    for y in 0..h {
        here.clear();
        let row = &ink[y * w..(y + 1) * w];
        let mut x = 0;
        let mut first = 0;
        while x < w {
            if !row[x] {
                x += 1;
                continue;
            }
            let start = x;
            while x < w && row[x] {
                x += 1;
            }
            let label = sets.push();
            boxes.push(Mark {
                x0: start as u32,
                y0: y as u32,
                x1: x as u32,
                y1: y as u32 + 1,
                pixels: (x - start) as u32,
            });
            // Touching runs of the row above, diagonals included. Both rows'
            // runs are in order, so a run above that ends before this one
            // starts touches no later run either and is passed for good.
            while above.get(first).is_some_and(|&(_, e, _)| e < start) {
                first += 1;
            }
            for &(_, _, other) in above[first..].iter().take_while(|&&(s, _, _)| s <= x) {
                sets.join(label, other);
            }
            here.push((start, x, label));
        }
        std::mem::swap(&mut above, &mut here);
        if boxes.len() > MAX_MARKS * 8 {
            break;
        }
    }
    // Each mark's box gathered at its root label (a root is the least label
    // of its set, so every run's root is already in `merged`).
    let mut merged: Vec<Option<Mark>> = vec![None; boxes.len()];
    for (label, run) in boxes.iter().enumerate() {
        let slot = &mut merged[sets.root(label)];
        match slot {
            Some(m) => {
                m.x0 = m.x0.min(run.x0);
                m.y0 = m.y0.min(run.y0);
                m.x1 = m.x1.max(run.x1);
                m.y1 = m.y1.max(run.y1);
                m.pixels += run.pixels;
            }
            None => *slot = Some(*run),
        }
    }
    let room = MAX_MARKS.saturating_sub(marks.len());
    let mut found: Vec<Mark> = merged.into_iter().flatten().collect();
    found.sort_unstable_by_key(|m| (m.y0, m.x0));
    marks.extend(found.into_iter().take(room));
}

/// Disjoint sets over indices, with path halving.
struct Sets {
    parent: Vec<usize>,
}

impl Sets {
    fn new(n: usize) -> Self {
        Self {
            parent: (0..n).collect(),
        }
    }

    fn push(&mut self) -> usize {
        self.parent.push(self.parent.len());
        self.parent.len() - 1
    }

    fn root(&mut self, mut i: usize) -> usize {
        while self.parent[i] != i {
            self.parent[i] = self.parent[self.parent[i]];
            i = self.parent[i];
        }
        i
    }

    fn join(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.root(a), self.root(b));
        if ra != rb {
            self.parent[ra.max(rb)] = ra.min(rb);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator, so that every run draws the same.
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self, below: u32) -> u32 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((self.0 >> 33) % u64::from(below)) as u32
        }
    }

    /// A page of `rows` lines of print-like marks `size` pixels tall, in
    /// `ink` on `paper`: letters of varied widths drawn as rings and bars
    /// (some taller, as ascenders), words apart by a space.
    fn page(width: u32, height: u32, rows: u32, size: u32, ink: u8, paper: u8) -> GrayImage {
        rows_of_marks(width, height, rows, size, size * 2, ink, paper)
    }

    /// Rows of print-like marks `size` pixels tall, `pitch` pixels apart.
    fn rows_of_marks(
        width: u32,
        height: u32,
        rows: u32,
        size: u32,
        pitch: u32,
        ink: u8,
        paper: u8,
    ) -> GrayImage {
        let mut image = GrayImage::from_pixel(width, height, image::Luma([paper]));
        let mut random = Lcg(7);
        let stroke = (size / 6).max(1);
        for row in 0..rows {
            let base = size * 2 + row * pitch;
            if base + size > height {
                break;
            }
            let mut x = size;
            while x + size * 2 < width - size {
                let letters = 2 + random.next(6);
                for _ in 0..letters {
                    let w = size / 2 + random.next(size);
                    let tall = random.next(4) == 0;
                    let top = if tall { base - size / 2 } else { base };
                    let bottom = base + size;
                    if x + w >= width {
                        break;
                    }
                    for y in top..bottom {
                        for dx in 0..w {
                            let edge = dx < stroke
                                || dx + stroke >= w
                                || (y - top) < stroke
                                || y + stroke >= bottom;
                            if edge && (random.next(10) > 0 || !tall) {
                                image.put_pixel(x + dx, y, image::Luma([ink]));
                            }
                        }
                    }
                    x += w + stroke + 1;
                }
                x += size;
            }
        }
        image
    }

    fn turned(image: &GrayImage) -> GrayImage {
        image::imageops::rotate90(image)
    }

    #[test]
    fn the_windows_mean_by_multiplication_is_the_quotient_for_every_area_and_sum() {
        // Every window area the ink pass can meet (radius up to 64, clipped
        // at the edges), at the sums where a rounding error would show: each
        // multiple of the area, one below it, and the largest.
        let largest = (2 * 64 + 1) * (2 * 64 + 1);
        for area in 1..=largest {
            let reciprocal = Reciprocal::of(area);
            let area = area as u32;
            for mean in [0, 1, 2, 100, 127, 128, 254, 255] {
                for sum in [
                    mean * area,
                    (mean * area).saturating_sub(1),
                    mean * area + area - 1,
                ] {
                    if sum <= 255 * area {
                        assert_eq!(
                            Reciprocal::divide(sum, reciprocal),
                            sum / area,
                            "{sum} / {area}"
                        );
                    }
                }
            }
        }
    }

    /// The marks of `ink` found by filling each one from a pixel, the
    /// plain way, to check the run labelling against.
    fn filled_marks(ink: &[bool], width: usize, height: usize) -> Vec<Mark> {
        let mut seen = vec![false; ink.len()];
        let mut found = Vec::new();
        for start in 0..ink.len() {
            if !ink[start] || seen[start] {
                continue;
            }
            seen[start] = true;
            let mut stack = vec![start];
            let (mut x0, mut y0, mut x1, mut y1, mut pixels) = (width, height, 0, 0, 0);
            while let Some(i) = stack.pop() {
                let (x, y) = (i % width, i / width);
                (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x + 1), y1.max(y + 1));
                pixels += 1;
                for ny in y.saturating_sub(1)..=(y + 1).min(height - 1) {
                    for nx in x.saturating_sub(1)..=(x + 1).min(width - 1) {
                        let j = ny * width + nx;
                        if ink[j] && !seen[j] {
                            seen[j] = true;
                            stack.push(j);
                        }
                    }
                }
            }
            let c = |v: usize| v as u32;
            found.push(Mark {
                x0: c(x0),
                y0: c(y0),
                x1: c(x1),
                y1: c(y1),
                pixels,
            });
        }
        found
    }

    #[test]
    fn marks_labelled_by_runs_are_the_marks_a_flood_fill_finds() {
        let mut random = Lcg(11);
        for (w, h, density) in [
            (1, 1, 2),
            (7, 5, 2),
            (64, 48, 3),
            (200, 120, 2),
            (301, 77, 5),
        ] {
            let ink: Vec<bool> = (0..w * h).map(|_| random.next(density) == 0).collect();
            let mut labelled = Vec::new();
            components(&ink, w as u32, h as u32, &mut labelled);
            let mut filled = filled_marks(&ink, w, h);
            let key = |m: &Mark| (m.y0, m.x0, m.y1, m.x1, m.pixels);
            labelled.sort_unstable_by_key(key);
            filled.sort_unstable_by_key(key);
            assert_eq!(labelled, filled, "{w}x{h}");
        }
    }

    #[test]
    fn lines_of_print_are_found_with_the_height_of_their_characters() {
        let found = text_lines(&page(1200, 900, 20, 12, 20, 235)).expect("print is found");
        assert!(found.lines >= 10, "{found:?}");
        assert!(!found.sideways);
        assert!((10.0..=20.0).contains(&found.height), "{found:?}");
    }

    #[test]
    fn light_print_on_a_dark_screen_is_found_too() {
        let found = text_lines(&page(1000, 600, 12, 10, 230, 30)).expect("light print is found");
        assert!(found.lines >= 6, "{found:?}");
    }

    #[test]
    fn a_page_lying_on_its_side_is_found_sideways() {
        let found = text_lines(&turned(&page(1200, 900, 20, 12, 20, 235))).expect("found");
        assert!(found.sideways, "{found:?}");
    }

    #[test]
    fn small_print_of_five_pixels_is_still_found() {
        assert!(text_lines(&page(800, 600, 30, 6, 30, 220)).is_some());
    }

    #[test]
    fn only_other_marks_with_their_middle_just_under_a_line_count_as_under_it() {
        let mark = |x0, y0, x1, y1| Mark {
            x0,
            y0,
            x1,
            y1,
            pixels: (x1 - x0) * (y1 - y0) / 2,
        };
        // A line from x 100 to 300 whose characters (20 px) stand on y 200.
        let line = Line {
            x0: 100.0,
            x1: 300.0,
            foot: 200.0,
            slope: 0.0,
            height: 20.0,
        };
        let marks = [
            mark(110, 180, 120, 200), // its own character
            mark(130, 200, 140, 210), // middle at 205: under it
            mark(150, 205, 160, 225), // middle at 215: under it
            mark(170, 185, 180, 201), // middle at 193: above its foot
            mark(190, 216, 200, 236), // middle at 226: the next line
            mark(400, 200, 410, 210), // past its end
        ];
        let centres = Centres::new(&marks);
        assert_eq!(centres.below(&line, &[0]), 2);
        assert_eq!(centres.below(&line, &[0, 1]), 1);
    }

    #[test]
    fn a_wall_of_bricks_is_not_print() {
        let mut wall = GrayImage::from_pixel(1000, 800, image::Luma([120]));
        for row in 0..40u32 {
            let y0 = row * 20;
            let shift = if row % 2 == 0 { 0 } else { 30 };
            for column in 0..17u32 {
                let x0 = column * 60 + shift;
                for y in y0 + 3..(y0 + 17).min(800) {
                    for x in x0 + 3..(x0 + 57).min(1000) {
                        wall.put_pixel(x, y, image::Luma([60]));
                    }
                }
            }
        }
        assert_eq!(text_lines(&wall), None);
    }

    #[test]
    fn noise_a_gradient_and_a_blank_hold_no_print() {
        let mut random = Lcg(3);
        let noise = GrayImage::from_fn(900, 700, |_, _| image::Luma([random.next(256) as u8]));
        assert_eq!(text_lines(&noise), None);
        let gradient = GrayImage::from_fn(900, 700, |x, y| image::Luma([((x + y) / 7) as u8]));
        assert_eq!(text_lines(&gradient), None);
        assert_eq!(
            text_lines(&GrayImage::from_pixel(900, 700, image::Luma([255]))),
            None
        );
        assert_eq!(text_lines(&GrayImage::new(10, 400)), None);
    }

    #[test]
    fn scattered_blobs_of_one_size_are_not_print() {
        // Dots of a polka pattern: alike, but not in rows of varied widths.
        let mut random = Lcg(11);
        let mut image = GrayImage::from_pixel(1000, 800, image::Luma([240]));
        for _ in 0..600 {
            let (cx, cy) = (10 + random.next(980), 10 + random.next(780));
            for y in cy.saturating_sub(5)..(cy + 5).min(800) {
                for x in cx.saturating_sub(5)..(cx + 5).min(1000) {
                    if (x as i64 - cx as i64).pow(2) + (y as i64 - cy as i64).pow(2) <= 25 {
                        image.put_pixel(x, y, image::Luma([30]));
                    }
                }
            }
        }
        assert_eq!(text_lines(&image), None);
    }
}
