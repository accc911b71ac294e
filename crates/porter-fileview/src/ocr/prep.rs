//! A page made ready for Tesseract: grey, scaled to about 300 pixels per
//! inch (or, when the resolution is unknown, to text of a readable height),
//! within the pixel budget, straightened when it is skewed, and smoothed
//! (a slight blur, before Tesseract's own thresholding) when it has much
//! speckle noise.

use image::GrayImage;
use image::imageops::{self, FilterType};

use super::gray::Gray;

/// The resolution Tesseract reads best at.
pub(crate) const TARGET_PPI: f32 = 300.0;

/// What was done to a page, and the resolution it now has.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Prepared {
    /// New size over old (the same on both axes).
    pub scale: f32,
    /// The skew found and taken out, in degrees (positive: the lines fell
    /// to the right).
    pub skew: f32,
    /// Whether speckle noise was smoothed out.
    pub denoised: bool,
    /// The resolution after scaling, in pixels per inch.
    pub ppi: f32,
}

/// `MAX_SKEW` is the steepest skew looked for, in degrees; a page turned
/// further is left to Tesseract's orientation detection.
const MAX_SKEW: f32 = 6.0;

/// The text height (in pixels, the band of a line where most of its ink
/// is: about its x-height) a page of unknown resolution is scaled towards:
/// about 11 pt text at 300 ppi.
const TEXT_HEIGHT: f32 = 22.0;

/// Makes `image` ready for Tesseract. `ppi` is its resolution when known
/// (a PDF says how large it draws a picture); `pixel_bytes` the budget.
pub(crate) fn prepare(image: GrayImage, ppi: Option<f32>, pixel_bytes: u64) -> (Gray, Prepared) {
    let (width, height) = image.dimensions();
    // The skew first, on a small copy: the text's height is measured along
    // its lines.
    let skew = skew_degrees(&image);
    let mut scale = match ppi {
        Some(ppi) if ppi.is_finite() && ppi > 1.0 => {
            if (200.0..=450.0).contains(&ppi) {
                1.0
            } else {
                TARGET_PPI / ppi
            }
        }
        _ => text_height(&image, skew).map_or(1.0, |h| {
            if (15.0..=45.0).contains(&h) {
                1.0
            } else {
                TEXT_HEIGHT / h
            }
        }),
    };
    scale = scale.clamp(0.25, 4.0);
    let pixels = f64::from(width) * f64::from(height);
    let budget = pixel_bytes as f64;
    if pixels * f64::from(scale) * f64::from(scale) > budget {
        // A hair under, so that rounding the sides cannot pass the budget.
        scale = (budget / pixels).sqrt() as f32 * 0.999;
    }
    let image = if (scale - 1.0).abs() > 0.02 {
        let w = scaled(width, scale);
        let h = scaled(height, scale);
        let filter = if scale < 1.0 {
            FilterType::Triangle
        } else {
            FilterType::CatmullRom
        };
        imageops::resize(&image, w, h, filter)
    } else {
        scale = 1.0;
        image
    };
    let straighten = skew.abs() >= 0.3;
    let image = if straighten {
        rotate(&image, skew)
    } else {
        image
    };
    let noisy = noise(&image) > 0.02;
    let image = if noisy {
        imageops::blur(&image, 1.0)
    } else {
        image
    };
    let ppi = ppi.map_or(TARGET_PPI, |p| p * scale);
    let (width, height) = image.dimensions();
    (
        Gray {
            width,
            height,
            pixels: image.into_raw(),
        },
        Prepared {
            scale,
            skew: if straighten { skew } else { 0.0 },
            denoised: noisy,
            ppi,
        },
    )
}

fn scaled(side: u32, scale: f32) -> u32 {
    let side = (f64::from(side) * f64::from(scale)).round() as u32;
    side.max(1)
}

/// The grey level between ink and paper (Otsu's threshold).
fn threshold(image: &GrayImage) -> u8 {
    let mut histogram = [0u64; 256];
    for p in image.as_raw() {
        histogram[usize::from(*p)] += 1;
    }
    let total: u64 = histogram.iter().sum();
    let sum: f64 = histogram
        .iter()
        .enumerate()
        .map(|(i, &n)| i as f64 * n as f64)
        .sum();
    let (mut below, mut below_sum, mut best, mut at) = (0u64, 0f64, 0f64, 128u8);
    for (i, &n) in histogram.iter().enumerate() {
        below += n;
        if below == 0 {
            continue;
        }
        let above = total - below;
        if above == 0 {
            break;
        }
        below_sum += i as f64 * n as f64;
        let mean_below = below_sum / below as f64;
        let mean_above = (sum - below_sum) / above as f64;
        let between = below as f64 * above as f64 * (mean_below - mean_above).powi(2);
        if between > best {
            best = between;
            at = u8::try_from(i).unwrap_or(128);
        }
    }
    at
}

/// The ink of a page shrunk to at most about 1,000 pixels on its long
/// edge: the dark pixels' places, about 100,000 of them at most, and the
/// factor it was shrunk by.
fn ink(image: &GrayImage) -> (Vec<(f32, f32)>, f32) {
    let (width, height) = image.dimensions();
    let long = width.max(height).max(1);
    let factor = (1000.0 / long as f32).min(1.0);
    let small = if factor < 1.0 {
        imageops::resize(
            image,
            scaled(width, factor),
            scaled(height, factor),
            FilterType::Triangle,
        )
    } else {
        image.clone()
    };
    let cut = threshold(&small);
    let dark = small.as_raw().iter().filter(|&&p| p <= cut).count();
    // Mostly ink is no page of text (a photograph, a dark background).
    let area = small.width() as usize * small.height() as usize;
    if dark * 2 > area {
        return (Vec::new(), factor);
    }
    // At most about 100,000 of them, evenly taken.
    let step = dark / 100_000 + 1;
    let mut points = Vec::with_capacity(dark / step + 1);
    let mut seen = 0usize;
    for (x, y, p) in small.enumerate_pixels() {
        if p.0[0] <= cut {
            if seen.is_multiple_of(step) {
                points.push((x as f32, y as f32));
            }
            seen += 1;
        }
    }
    (points, factor)
}

/// How sharply the ink falls into rows when read along lines of slope
/// `tan(angle)`: the sum of squared row counts.
fn sharpness(points: &[(f32, f32)], angle: f32, rows: &mut Vec<u32>) -> f64 {
    let slope = angle.to_radians().tan();
    rows.clear();
    let mut low = f32::MAX;
    let mut high = f32::MIN;
    for &(x, y) in points {
        let row = y - x * slope;
        low = low.min(row);
        high = high.max(row);
    }
    if points.is_empty() || !low.is_finite() {
        return 0.0;
    }
    let span = (high - low) as usize + 2;
    rows.resize(span, 0);
    for &(x, y) in points {
        let row = (y - x * slope - low) as usize;
        if let Some(count) = rows.get_mut(row) {
            *count += 1;
        }
    }
    rows.iter().map(|&n| f64::from(n) * f64::from(n)).sum()
}

/// The skew of the page's lines of text in degrees (positive when a line
/// runs down to the right), by projection profiles: the angle at which the
/// ink falls most sharply into rows. 0 for a page with too little ink.
pub(crate) fn skew_degrees(image: &GrayImage) -> f32 {
    let (points, _) = ink(image);
    if points.len() < 200 {
        return 0.0;
    }
    let mut rows = Vec::new();
    let best_of = |candidates: &mut dyn Iterator<Item = f32>, rows: &mut Vec<u32>| {
        let mut best = (0.0f32, f64::MIN);
        for angle in candidates {
            let score = sharpness(&points, angle, rows);
            if score > best.1 {
                best = (angle, score);
            }
        }
        best
    };
    let steps = (MAX_SKEW * 2.0) as i32;
    let coarse = best_of(&mut (-steps..=steps).map(|i| i as f32 * 0.5), &mut rows);
    let fine = best_of(&mut (-5..=5).map(|i| coarse.0 + i as f32 * 0.1), &mut rows);
    // No angle stands out: leave the page as it is.
    let level = sharpness(&points, 0.0, &mut rows);
    if fine.1 <= level * 1.02 {
        return 0.0;
    }
    fine.0
}

/// The page straightened when its lines run down at `degrees`: each column
/// moved up or down by where a line crosses it (a vertical shear, which
/// levels the lines and, at the few degrees looked for, leaves letters
/// readable), white where nothing was. Columns are moved in strips of the
/// same whole-pixel shift, row slice by row slice.
pub(crate) fn rotate(image: &GrayImage, degrees: f32) -> GrayImage {
    let (width, height) = image.dimensions();
    let (w, h) = (width as usize, height as usize);
    let slope = degrees.to_radians().tan();
    let centre = w as f32 / 2.0;
    let shift = |x: usize| ((x as f32 - centre) * slope).round() as isize;
    let source = image.as_raw();
    let mut out = vec![255u8; source.len()];
    let mut start = 0;
    while start < w {
        let d = shift(start);
        let mut end = start + 1;
        while end < w && shift(end) == d {
            end += 1;
        }
        for v in 0..h {
            let from = v.cast_signed() + d;
            if from < 0 || from >= h.cast_signed() {
                continue;
            }
            let from = from as usize * w;
            out[v * w + start..v * w + end].copy_from_slice(&source[from + start..from + end]);
        }
        start = end;
    }
    GrayImage::from_raw(width, height, out).unwrap_or_else(|| image.clone())
}

/// The share of pixels (every other one on every eighth row) that stand apart from all
/// their eight neighbours by more than a quarter of the grey range: speckle
/// from a scanner, a camera's noise.
pub(crate) fn noise(image: &GrayImage) -> f32 {
    let (width, height) = image.dimensions();
    if width < 3 || height < 3 {
        return 0.0;
    }
    let w = width as usize;
    let p = image.as_raw();
    let (mut lone, mut seen) = (0u64, 0u64);
    for y in (1..height as usize - 1).step_by(8) {
        for x in (1..w - 1).step_by(2) {
            let c = i16::from(p[y * w + x]);
            let mut apart = true;
            'around: for dy in [y - 1, y, y + 1] {
                for dx in [x - 1, x, x + 1] {
                    if (dy, dx) != (y, x) && (i16::from(p[dy * w + dx]) - c).abs() <= 64 {
                        apart = false;
                        break 'around;
                    }
                }
            }
            seen += 1;
            lone += u64::from(apart);
        }
    }
    if seen == 0 {
        0.0
    } else {
        lone as f32 / seen as f32
    }
}

/// The median height of the page's lines of ink, in pixels, measured
/// along lines running down at `skew` degrees: runs of rows holding more
/// than a sixth of the fullest row's ink (so that speckle between lines is
/// no line). None when there are too few.
pub(crate) fn text_height(image: &GrayImage, skew: f32) -> Option<f32> {
    let (points, factor) = ink(image);
    if points.len() < 100 {
        return None;
    }
    let slope = skew.to_radians().tan();
    let rows = ((image.height() + image.width()) as f32 * factor) as usize + 2;
    let shift = image.width() as f32 * factor * slope.abs();
    let mut counts = vec![0u32; rows];
    for &(x, y) in &points {
        if let Some(c) = counts.get_mut((y - x * slope + shift).max(0.0) as usize) {
            *c += 1;
        }
    }
    let full = counts.iter().copied().max().unwrap_or(0);
    let mut runs = Vec::new();
    let mut run = 0usize;
    for &c in &counts {
        if c * 6 > full {
            run += 1;
        } else if run > 0 {
            runs.push(run);
            run = 0;
        }
    }
    if run > 0 {
        runs.push(run);
    }
    // Runs of a row or two are specks, not lines.
    runs.retain(|&r| r >= 2);
    if runs.len() < 2 {
        return None;
    }
    runs.sort_unstable();
    Some(runs[runs.len() / 2] as f32 / factor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Luma;

    /// A page of dark bars like lines of text, turned by `degrees`.
    fn lines(width: u32, height: u32, degrees: f32) -> GrayImage {
        let mut page = GrayImage::from_pixel(width, height, Luma([255]));
        let mut y = 60;
        while y + 30 < height - 60 {
            for x in 60..width - 60 {
                // Words: ink with gaps.
                if (x / 40) % 5 != 4 {
                    for yy in y..y + 24 {
                        page.put_pixel(x, yy, Luma([20]));
                    }
                }
            }
            y += 60;
        }
        // Turning by -(-degrees) makes level lines run down at `degrees`.
        rotate(&page, -degrees)
    }

    #[test]
    fn the_skew_of_lines_is_found_and_taken_out() {
        for degrees in [-3.0f32, 2.0, 4.5] {
            let page = lines(1200, 900, degrees);
            let found = skew_degrees(&page);
            assert!((found - degrees).abs() <= 0.3, "{degrees}: found {found}");
            let level = rotate(&page, found);
            assert!(skew_degrees(&level).abs() <= 0.3);
        }
        assert!(skew_degrees(&lines(1200, 900, 0.0)).abs() < 0.2);
    }

    #[test]
    fn a_blank_or_dark_page_has_no_skew() {
        for level in [255, 0] {
            let skew = skew_degrees(&GrayImage::from_pixel(500, 500, Luma([level])));
            assert!(skew.abs() < f32::EPSILON, "{level}: {skew}");
        }
    }

    #[test]
    fn speckle_is_measured_and_filtered() {
        let mut page = lines(600, 400, 0.0);
        assert!(noise(&page) < 0.01);
        let mut state = 7u32;
        for y in 0..400 {
            for x in 0..600 {
                state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
                if (state >> 16).is_multiple_of(10) {
                    let p = page.get_pixel_mut(x, y);
                    p.0[0] = 255 - p.0[0];
                }
            }
        }
        assert!(noise(&page) > 0.02, "{}", noise(&page));
        assert!(noise(&imageops::blur(&page, 1.0)) < 0.01);
    }

    #[test]
    fn a_page_is_scaled_to_its_resolution_and_held_to_the_pixel_budget() {
        let page = lines(850, 1100, 0.0);
        // 100 ppi: three times larger.
        let (gray, done) = prepare(page.clone(), Some(100.0), 64 * 1024 * 1024);
        assert!((done.scale - 3.0).abs() < 0.01);
        assert_eq!((gray.width, gray.height), (2550, 3300));
        assert!((done.ppi - 300.0).abs() < 1.0);
        // The same within a budget of 1 MB.
        let (gray, done) = prepare(page.clone(), Some(100.0), 1_000_000);
        assert!(u64::from(gray.width) * u64::from(gray.height) <= 1_000_000);
        assert!(done.scale < 1.2);
        // Text of unknown resolution 24 px tall is read as it is; 8 px
        // tall, scaled up to about 22.
        let (_, done) = prepare(page, None, 64 * 1024 * 1024);
        assert!((done.scale - 1.0).abs() < f32::EPSILON, "{done:?}");
        let small = imageops::resize(&lines(1200, 900, 0.0), 400, 300, FilterType::Triangle);
        let (_, done) = prepare(small, None, 64 * 1024 * 1024);
        assert!((done.scale - 22.0 / 8.0).abs() < 0.5, "{done:?}");
    }
}
