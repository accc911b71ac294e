//! Scaling of 8-bit pixels (grey, RGB, RGBA) with a Lanczos3 filter.
//!
//! Both passes run the same loop: each output row is a weighted sum of a
//! few input rows, element by element, which the compiler turns into
//! vector instructions on any x86-64 or AArch64 CPU. The vertical pass runs
//! on the image as it is. The horizontal pass runs on bands of sixteen rows
//! turned on their side (a band's columns become short rows, small enough
//! to stay in the cache), and the result is turned back into the output.
//! One loop serves every channel count and both directions, where a
//! resizer library carries a hand-written variant for each pixel type,
//! direction and instruction set.

/// `BAND_ROWS` is how many rows the horizontal pass turns on their side at a
/// time.
const BAND_ROWS: usize = 16;

/// `LOBES` is the Lanczos window's half-width, in input pixels when
/// enlarging and in output pixels when shrinking.
const LOBES: f64 = 3.0;

/// The inputs and their weights for each output position along one axis.
struct Taps {
    /// The first input position each output position reads.
    first: Vec<usize>,
    /// How many inputs each output position reads.
    count: Vec<usize>,
    /// The weights in fixed point (one is 2^[`FRACTION_BITS`]), `count[i]`
    /// of them for output `i`, one after another.
    weights: Vec<i16>,
    /// Where output `i`'s weights start in `weights`.
    start: Vec<usize>,
}

fn sinc(x: f64) -> f64 {
    if x == 0.0 {
        1.0
    } else {
        let x = x * std::f64::consts::PI;
        x.sin() / x
    }
}

fn lanczos3(x: f64) -> f64 {
    if x.abs() < LOBES {
        sinc(x) * sinc(x / LOBES)
    } else {
        0.0
    }
}

impl Taps {
    /// The taps that take `from` positions to `to` (both at least 1): each
    /// output position's centre mapped into the input, the filter widened
    /// by the scale when shrinking, the weights summing to one.
    fn new(from: usize, to: usize) -> Self {
        let scale = from as f64 / to as f64;
        let widen = scale.max(1.0);
        let support = LOBES * widen;
        let mut taps = Self {
            first: Vec::with_capacity(to),
            count: Vec::with_capacity(to),
            weights: Vec::new(),
            start: Vec::with_capacity(to),
        };
        let mut raw = Vec::new();
        for i in 0..to {
            let centre = (i as f64 + 0.5) * scale;
            let low = ((centre - support).floor().max(0.0) as usize).min(from - 1);
            let high = ((centre + support).ceil() as usize).clamp(low + 1, from);
            raw.clear();
            raw.extend((low..high).map(|j| lanczos3((j as f64 + 0.5 - centre) / widen)));
            // Inputs at either end with no weight are not read at all. (The
            // input nearest an output's centre always has weight: the
            // filter is near 1 there.)
            let lead = raw.iter().take_while(|w| **w == 0.0).count();
            let trail = raw.iter().rev().take_while(|w| **w == 0.0).count();
            let (first, kept) = if lead == raw.len() {
                (low, &[1.0][..])
            } else {
                (low + lead, &raw[lead..raw.len() - trail])
            };
            let sum: f64 = kept.iter().sum();
            let sum = if sum.abs() < 1e-9 { 1.0 } else { sum };
            taps.first.push(first);
            taps.count.push(kept.len());
            taps.start.push(taps.weights.len());
            // Rounded to fixed point, the largest weight takes up the
            // rounding so that the weights still sum to exactly one: a flat
            // colour stays exactly that colour.
            let one = 1i32 << FRACTION_BITS;
            let fixed: Vec<i32> = kept
                .iter()
                .map(|w| (w / sum * f64::from(one)).round() as i32)
                .collect();
            let largest = (0..fixed.len()).max_by_key(|&k| fixed[k]).unwrap_or(0);
            let error = one - fixed.iter().sum::<i32>();
            taps.weights.extend(fixed.iter().enumerate().map(|(k, &w)| {
                let w = if k == largest { w + error } else { w };
                w.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16
            }));
        }
        taps
    }

    fn of(&self, i: usize) -> (usize, &[i16]) {
        let start = self.start[i];
        (self.first[i], &self.weights[start..start + self.count[i]])
    }
}

/// `LANES` is how many elements of a row [`blend_rows`] sums at once: its
/// running sums then stay in registers while it goes through the rows.
const LANES: usize = 16;

/// `FRACTION_BITS` is the fixed-point precision of the weights: one is
/// 2¹⁴, so a weight fits in 16 bits (the filter's lobes stay within ±1.2)
/// and the products of bytes and weights add up in 32 bits.
const FRACTION_BITS: u32 = 14;

/// Writes into `out` (one row of `out.len()` elements) the weighted sum of
/// `weights.len()` rows of `rows` starting at row `first`, each row
/// `out.len()` elements long, rounded and clamped to bytes. Integer
/// arithmetic throughout: bytes and 16-bit weights multiply in one vector
/// instruction on any x86-64 CPU, and the rounding and clamping too.
fn blend_rows(rows: &[u8], first: usize, weights: &[i16], out: &mut [u8]) {
    let len = out.len();
    let rows = &rows[first * len..(first + weights.len()) * len];
    let whole = len - len % LANES;
    let (body, tail) = out.split_at_mut(whole);
    for (chunk, out) in body.chunks_exact_mut(LANES).enumerate() {
        let at = chunk * LANES;
        let mut sums = [HALF; LANES];
        for (row, &weight) in rows.chunks_exact(len).zip(weights) {
            let values: &[u8; LANES] = row[at..at + LANES].try_into().unwrap_or(&[0; LANES]);
            for (sum, &value) in sums.iter_mut().zip(values) {
                *sum += i32::from(weight) * i32::from(value);
            }
        }
        for (byte, sum) in out.iter_mut().zip(sums) {
            *byte = to_byte(sum);
        }
    }
    for (i, byte) in tail.iter_mut().enumerate() {
        let at = whole + i;
        let sum: i32 = rows
            .chunks_exact(len)
            .zip(weights)
            .map(|(row, &weight)| i32::from(weight) * i32::from(row[at]))
            .sum();
        *byte = to_byte(sum + HALF);
    }
}

/// `HALF` is one half in the weights' fixed point, added so that the shift
/// in [`to_byte`] rounds.
const HALF: i32 = 1 << (FRACTION_BITS - 1);

/// A fixed-point sum (rounding half already added) as a byte, clamped.
fn to_byte(sum: i32) -> u8 {
    (sum >> FRACTION_BITS).clamp(0, 255) as u8
}

/// `pixels` (`width` × `height`, `C` bytes each) scaled to `to_width` ×
/// `to_height`.
fn resize_channels<const C: usize>(
    pixels: &[u8],
    (width, height): (usize, usize),
    (to_width, to_height): (usize, usize),
) -> Vec<u8> {
    let row_len = width * C;
    // Vertical pass: `height` rows to `to_height`.
    let tall = if to_height == height {
        pixels.to_vec()
    } else {
        let taps = Taps::new(height, to_height);
        let mut tall = vec![0u8; row_len * to_height];
        in_parts(&mut tall, row_len, |first_row, part| {
            for (y, out) in part.chunks_exact_mut(row_len).enumerate() {
                let (first, weights) = taps.of(first_row + y);
                blend_rows(pixels, first, weights, out);
            }
        });
        tall
    };
    if to_width == width {
        return tall;
    }
    // Horizontal pass, a band of rows at a time: the band turned so that
    // its columns are rows, blended as above, and turned back.
    let taps = Taps::new(width, to_width);
    let mut out = vec![0u8; to_width * to_height * C];
    let out_row_len = to_width * C;
    in_parts(&mut out, BAND_ROWS * out_row_len, |first_band, part| {
        let mut turned = vec![0u8; width * BAND_ROWS * C];
        let mut blended = vec![0u8; to_width * BAND_ROWS * C];
        for (b, band_out) in part.chunks_mut(BAND_ROWS * out_row_len).enumerate() {
            let band = (first_band + b) * BAND_ROWS;
            let rows = band_out.len() / out_row_len;
            let column_len = rows * C;
            for r in 0..rows {
                let row = &tall[(band + r) * row_len..(band + r + 1) * row_len];
                for (x, pixel) in row.chunks_exact(C).enumerate() {
                    let at = x * column_len + r * C;
                    turned[at..at + C].copy_from_slice(pixel);
                }
            }
            let turned = &turned[..width * column_len];
            for (x, column) in blended[..to_width * column_len]
                .chunks_exact_mut(column_len)
                .enumerate()
            {
                let (first, weights) = taps.of(x);
                blend_rows(turned, first, weights, column);
            }
            for (r, row) in band_out.chunks_exact_mut(out_row_len).enumerate() {
                for (x, pixel) in row.chunks_exact_mut(C).enumerate() {
                    let at = x * column_len + r * C;
                    pixel.copy_from_slice(&blended[at..at + C]);
                }
            }
        }
    });
    out
}

/// `MAX_THREADS` is the most threads one scaling runs on.
const MAX_THREADS: usize = 4;

/// `MIN_PART_BYTES` is the least output a thread is started for: below it,
/// starting one costs about what it saves.
const MIN_PART_BYTES: usize = 1 << 19;

/// Runs `work` over `out` cut into whole `unit`s, in contiguous parts
/// shared out between the calling thread and as many more as the machine
/// has cores (at most [`MAX_THREADS`] in all), each part given with the
/// index of its first unit. A thread that cannot be started leaves its
/// share to the others; a small output is done on the calling thread.
fn in_parts(out: &mut [u8], unit: usize, work: impl Fn(usize, &mut [u8]) + Sync) {
    let unit = unit.max(1);
    let units = out.len().div_ceil(unit);
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(MAX_THREADS)
        .min(out.len() / MIN_PART_BYTES)
        .min(units)
        .max(1);
    if threads == 1 {
        work(0, out);
        return;
    }
    // Twice as many parts as threads, so that a thread that started late
    // or runs on a busy core does not hold the others up.
    let per_part = units.div_ceil(threads * 2);
    let parts: Vec<(usize, &mut [u8])> = out
        .chunks_mut(per_part * unit)
        .enumerate()
        .map(|(i, part)| (i * per_part, part))
        .collect();
    let queue = std::sync::Mutex::new(parts);
    let next = || queue.lock().map_or(None, |mut parts| parts.pop());
    let drain = || {
        while let Some((first, part)) = next() {
            work(first, part);
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..threads {
            // A thread that cannot be started leaves its parts in the queue.
            let _ = std::thread::Builder::new()
                .name("pixels-resize".to_owned())
                .spawn_scoped(scope, drain);
        }
        drain();
    });
}

/// `pixels` (`width` × `height`, `channels` bytes each: 1 grey, 3 RGB, 4
/// RGBA) scaled to `to_width` × `to_height` with a Lanczos3 filter. RGBA is
/// filtered premultiplied, so that a transparent pixel's colour does not
/// bleed into its neighbours. `None` for another channel count, a zero
/// size, or a buffer of the wrong length.
#[must_use]
pub fn resize(
    pixels: &[u8],
    (width, height): (u32, u32),
    channels: usize,
    (to_width, to_height): (u32, u32),
) -> Option<Vec<u8>> {
    let from = (width as usize, height as usize);
    let to = (to_width as usize, to_height as usize);
    if from.0 == 0 || from.1 == 0 || to.0 == 0 || to.1 == 0 {
        return None;
    }
    if pixels.len() != from.0.checked_mul(from.1)?.checked_mul(channels)? {
        return None;
    }
    match channels {
        1 => Some(resize_channels::<1>(pixels, from, to)),
        3 => Some(resize_channels::<3>(pixels, from, to)),
        4 => {
            let mut premultiplied = pixels.to_vec();
            for pixel in premultiplied.chunks_exact_mut(4) {
                let alpha = u32::from(pixel[3]);
                for value in &mut pixel[..3] {
                    *value = ((u32::from(*value) * alpha + 127) / 255) as u8;
                }
            }
            let mut out = resize_channels::<4>(&premultiplied, from, to);
            for pixel in out.chunks_exact_mut(4) {
                let alpha = u32::from(pixel[3]);
                for value in &mut pixel[..3] {
                    // Fully transparent pixels keep no colour.
                    *value = (u32::from(*value) * 255 + alpha / 2)
                        .checked_div(alpha)
                        .map_or(0, |v| v.min(255) as u8);
                }
            }
            Some(out)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_weights_of_every_output_sum_to_one_and_stay_inside_the_input() {
        for (from, to) in [
            (1, 1),
            (1, 7),
            (7, 1),
            (3000, 2048),
            (2048, 3000),
            (10, 3),
            (5, 5),
        ] {
            let taps = Taps::new(from, to);
            for i in 0..to {
                let (first, weights) = taps.of(i);
                assert!(
                    !weights.is_empty() && first + weights.len() <= from,
                    "{from}->{to} at {i}"
                );
                let sum: i32 = weights.iter().map(|&w| i32::from(w)).sum();
                assert_eq!(sum, 1 << FRACTION_BITS, "{from}->{to} at {i}");
            }
        }
    }

    #[test]
    fn every_unit_is_worked_once_with_its_own_index_whatever_the_threads() {
        // Large enough for several threads, with a short last unit.
        let unit = 3000;
        let mut out = vec![0u8; 5 * (1 << 20) + 17];
        in_parts(&mut out, unit, |first, part| {
            for (i, piece) in part.chunks_mut(unit).enumerate() {
                for byte in piece.iter_mut() {
                    *byte = byte.wrapping_add(((first + i) % 251) as u8 + 1);
                }
            }
        });
        for (i, piece) in out.chunks(unit).enumerate() {
            assert!(piece.iter().all(|&b| b == (i % 251) as u8 + 1), "unit {i}");
        }
    }

    #[test]
    fn a_flat_colour_stays_that_colour_at_any_size() {
        for &(channels, colour) in &[
            (1, &[77u8][..]),
            (3, &[10, 200, 99]),
            (4, &[250, 5, 128, 255]),
        ] {
            let pixels: Vec<u8> = colour
                .iter()
                .copied()
                .cycle()
                .take(37 * 23 * channels)
                .collect();
            for to in [(1, 1), (12, 7), (37, 23), (80, 50), (5, 60)] {
                let out = resize(&pixels, (37, 23), channels, to).expect("scaled");
                assert_eq!(out.len(), to.0 as usize * to.1 as usize * channels);
                assert!(
                    out.chunks_exact(channels).all(|p| p == colour),
                    "{channels} channels to {to:?}"
                );
            }
        }
    }

    #[test]
    fn halving_a_checkerboard_of_two_pixel_squares_gives_its_two_greys_back() {
        // Squares two pixels wide, halved: each output pixel covers one
        // square, and a sharp filter keeps most of its contrast.
        let (w, h) = (64usize, 64usize);
        let pixels: Vec<u8> = (0..w * h)
            .map(|i| {
                if ((i % w) / 2 + (i / w) / 2) % 2 == 0 {
                    40
                } else {
                    220
                }
            })
            .collect();
        let out = resize(&pixels, (64, 64), 1, (32, 32)).expect("scaled");
        let inner: Vec<u8> = (4..28)
            .flat_map(|y| (4..28).map(move |x| (x, y)))
            .map(|(x, y)| out[y * 32 + x])
            .collect();
        assert!(inner.iter().all(|&v| !(90..=170).contains(&v)), "{inner:?}");
    }

    #[test]
    fn a_transparent_pixel_lends_no_colour_to_its_opaque_neighbours() {
        // Opaque red beside fully transparent green: scaled down, every
        // pixel with some opacity is still red.
        let (w, h) = (40usize, 10usize);
        let mut pixels = Vec::with_capacity(w * h * 4);
        for _ in 0..h {
            for x in 0..w {
                pixels.extend_from_slice(if x < w / 2 {
                    &[255, 0, 0, 255]
                } else {
                    &[0, 255, 0, 0]
                });
            }
        }
        let out = resize(&pixels, (40, 10), 4, (13, 4)).expect("scaled");
        for p in out.chunks_exact(4).filter(|p| p[3] > 8) {
            assert!(p[1] < 8 && p[0] > 240, "{p:?}");
        }
    }

    #[test]
    fn bad_sizes_and_channel_counts_are_refused() {
        assert!(resize(&[0; 12], (2, 2), 3, (0, 1)).is_none());
        assert!(resize(&[0; 11], (2, 2), 3, (1, 1)).is_none());
        assert!(resize(&[0; 8], (2, 2), 2, (1, 1)).is_none());
        assert!(resize(&[], (0, 2), 1, (1, 1)).is_none());
    }
}
