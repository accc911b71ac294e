//! Inverse DCTs that give a block's 8x8, 4x4, 2x2 or 1x1 samples straight
//! from its coefficients.
//!
//! A reduced block is the 8x8 block's continuous cosine sum sampled at the
//! centres of its 2x2, 4x4 or 8x8 pixel groups, which needs only the lowest
//! 4, 2 or 1 frequencies in each direction. Every size keeps the same
//! normalisation, so a flat block gives the same grey at each scale.
//!
//! The transforms run in `f32`: a hostile file can give coefficients that
//! would overflow a fixed-point transform, and a float only saturates when
//! converted back to a sample. The normalising constants of each transform
//! are folded into the dequantisation table (`factor`).

use std::f32::consts::{FRAC_1_SQRT_2, PI};

/// Zigzag index to natural (row-major) index of the 8x8 block.
pub(crate) const ZIGZAG: [u8; 64] = [
    0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20,
    13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59,
    52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
];

/// Natural (row-major) index to zigzag index: blocks are decoded in zigzag
/// order, and each transform reads the coefficients it needs through this
/// table (constant indices once its loops are unrolled).
const NATURAL_TO_ZIGZAG: [u8; 64] = {
    let mut table = [0u8; 64];
    let mut k = 0;
    while k < 64 {
        table[ZIGZAG[k] as usize] = k as u8;
        k += 1;
    }
    table
};

/// The dequantised coefficient at natural index `n` of a block held in
/// zigzag order.
#[inline]
fn at(block: &[i32; 64], quant: &[f32; 64], n: usize) -> f32 {
    block[usize::from(NATURAL_TO_ZIGZAG[n]) & 63] as f32 * quant[n]
}

/// What the quantiser of the coefficient at natural index `natural` is
/// multiplied by for the transform that gives `size` x `size` samples, so
/// that each transform can work on plain sums; 0 for the frequencies a
/// reduced transform ignores.
pub(crate) fn factor(size: usize, natural: usize) -> f32 {
    let (u, v) = (natural % 8, natural / 8);
    match size {
        8 => aan_scale(u) * aan_scale(v) / 8.0,
        4 if u < 4 && v < 4 => four_point_scale(u) * four_point_scale(v),
        2 if u < 2 && v < 2 => 1.0 / 8.0,
        1 if natural == 0 => 1.0 / 8.0,
        _ => 0.0,
    }
}

/// The AAN transform's input scale of frequency `k`: sqrt(2) cos(k pi/16),
/// and 1 for the DC.
fn aan_scale(k: usize) -> f32 {
    if k == 0 {
        1.0
    } else {
        std::f32::consts::SQRT_2 * (k as f32 * PI / 16.0).cos()
    }
}

/// The four-point transform's input scale of frequency `k`: the DCT's
/// C(k)/2, times cos(pi/4) for k = 2 whose cosines are all +-cos(pi/4)
/// (which makes it equal to the DC's C(0)/2).
fn four_point_scale(k: usize) -> f32 {
    match k {
        0 | 2 => FRAC_1_SQRT_2 / 2.0,
        _ => 0.5,
    }
}

/// A sample from a transform's output: level-shifted, clamped and rounded.
/// Adding 1.5 x 2^23 to a value in 0..=255 leaves it, rounded to the
/// nearest integer, in the low bits of the float's mantissa, which is
/// cheaper than a saturating conversion. The level shift is a 1024th over
/// 128 so that halves round up rather than to even, as in other decoders.
#[inline]
fn sample(value: f32) -> u8 {
    const SHIFT: f32 = 128.0 + 1.0 / 1024.0;
    const ROUNDER: f32 = 12_582_912.0;
    ((value + SHIFT).clamp(0.0, 255.0) + ROUNDER).to_bits() as u8
}

/// Fills a `size` x `size` block with the one sample a DC-only block has.
#[inline]
pub(crate) fn fill(dc: f32, size: usize, out: &mut [u8], stride: usize) {
    let value = sample(dc);
    for row in out.chunks_mut(stride).take(size) {
        if let Some(row) = row.get_mut(..size) {
            row.fill(value);
        }
    }
}

/// Writes the 2x2 samples of a block.
#[inline]
pub(crate) fn two(block: &[i32; 64], quant: &[f32; 64], out: &mut [u8], stride: usize) {
    let (a, b, c, d) = (
        at(block, quant, 0),
        at(block, quant, 1),
        at(block, quant, 8),
        at(block, quant, 9),
    );
    let top = [a + b + c + d, a - b + c - d];
    let bottom = [a + b - c - d, a - b - c + d];
    for (row, values) in out.chunks_mut(stride).zip([top, bottom]) {
        for (pixel, value) in row.iter_mut().zip(values) {
            *pixel = sample(value);
        }
    }
}

/// The four-point transform of four rows at once, lane by lane: `x[u]`
/// holds frequency `u` of each row (inputs already scaled by
/// `four_point_scale`), the result's `[j]` sample `j` of each row.
#[inline]
fn four_lanes(x: [[f32; 4]; 4]) -> [[f32; 4]; 4] {
    const C1: f32 = 0.923_879_5; // cos(pi/8)
    const C3: f32 = 0.382_683_43; // cos(3 pi/8)
    let mut out = [[0.0f32; 4]; 4];
    for i in 0..4 {
        let even0 = x[0][i] + x[2][i];
        let even1 = x[0][i] - x[2][i];
        let odd0 = C1 * x[1][i] + C3 * x[3][i];
        let odd1 = C3 * x[1][i] - C1 * x[3][i];
        out[0][i] = even0 + odd0;
        out[1][i] = even1 + odd1;
        out[2][i] = even1 - odd1;
        out[3][i] = even0 - odd0;
    }
    out
}

/// A 4x4 matrix with rows and columns swapped.
#[inline]
fn transpose(m: [[f32; 4]; 4]) -> [[f32; 4]; 4] {
    std::array::from_fn(|i| std::array::from_fn(|j| m[j][i]))
}

/// Writes the 4x4 samples of a block.
#[inline]
pub(crate) fn four(block: &[i32; 64], quant: &[f32; 64], out: &mut [u8], stride: usize) {
    // Gathered as [u][v] (lanes are v), across first, giving [x][v];
    // transposed to [v][x] (lanes are x), then down, giving [y][x]: rows.
    let gathered: [[f32; 4]; 4] =
        std::array::from_fn(|u| std::array::from_fn(|v| at(block, quant, v * 8 + u)));
    let samples = four_lanes(transpose(four_lanes(gathered)));
    let Some(region) = out.get_mut(..3 * stride + 4) else {
        return;
    };
    for (y, values) in samples.into_iter().enumerate() {
        let start = y * stride;
        for (pixel, value) in region[start..start + 4].iter_mut().zip(values) {
            *pixel = sample(value);
        }
    }
}

/// The one-dimensional eight-point AAN transform (Arai, Agui and Nakajima's
/// factorisation: five multiplications) of inputs scaled by `aan_scale`.
#[inline]
#[allow(clippy::similar_names, reason = "the butterfly's terms are numbered")]
fn eight_1d(x: [f32; 8]) -> [f32; 8] {
    // Even frequencies.
    let s04 = x[0] + x[4];
    let d04 = x[0] - x[4];
    let s26 = x[2] + x[6];
    let d26 = (x[2] - x[6]) * std::f32::consts::SQRT_2 - s26;
    let e0 = s04 + s26;
    let e3 = s04 - s26;
    let e1 = d04 + d26;
    let e2 = d04 - d26;
    // Odd frequencies.
    let s53 = x[5] + x[3];
    let d53 = x[5] - x[3];
    let s17 = x[1] + x[7];
    let d17 = x[1] - x[7];
    let o7 = s17 + s53;
    let o11 = (s17 - s53) * std::f32::consts::SQRT_2;
    let rot = (d53 + d17) * 1.847_759; // 2 cos(pi/8)
    let o10 = rot - d17 * 1.082_392_2; // 2 (cos(pi/8) - cos(3 pi/8))
    let o12 = rot - d53 * 2.613_126; // 2 (cos(pi/8) + cos(3 pi/8))
    let o6 = o12 - o7;
    let o5 = o11 - o6;
    let o4 = o10 - o5;
    [
        e0 + o7,
        e1 + o6,
        e2 + o5,
        e3 + o4,
        e3 - o4,
        e2 - o5,
        e1 - o6,
        e0 - o7,
    ]
}

/// Writes the 8x8 samples of a block.
#[inline]
pub(crate) fn eight(block: &[i32; 64], quant: &[f32; 64], out: &mut [u8], stride: usize) {
    // Gathered as [u][v] (lanes are v), across first, giving [x][v];
    // transposed to [v][x] (lanes are x), then down, giving [y][x]: rows.
    let gathered: [[f32; 8]; 8] =
        std::array::from_fn(|u| std::array::from_fn(|v| at(block, quant, v * 8 + u)));
    let across = eight_lanes(&gathered);
    let turned: [[f32; 8]; 8] = std::array::from_fn(|v| std::array::from_fn(|x| across[x][v]));
    let samples = eight_lanes(&turned);
    let Some(region) = out.get_mut(..7 * stride + 8) else {
        return;
    };
    for (y, values) in samples.into_iter().enumerate() {
        let start = y * stride;
        for (pixel, value) in region[start..start + 8].iter_mut().zip(values) {
            *pixel = sample(value);
        }
    }
}

/// The eight-point transform of eight lanes at once: `x[u]` holds
/// frequency `u` of each lane, the result's `[j]` sample `j` of each.
#[inline]
fn eight_lanes(x: &[[f32; 8]; 8]) -> [[f32; 8]; 8] {
    let mut out = [[0.0f32; 8]; 8];
    for lane in 0..8 {
        let result = eight_1d(std::array::from_fn(|u| x[u][lane]));
        for (row, value) in out.iter_mut().zip(result) {
            row[lane] = value;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The block's samples at `size` x `size` by the defining cosine sums,
    /// in f64, from plain dequantised coefficients.
    fn reference(coefficients: &[i32; 64], size: usize) -> Vec<u8> {
        let c = |k: usize| if k == 0 { 1.0 / 2f64.sqrt() } else { 1.0 };
        let n = size as f64;
        let mut out = Vec::new();
        for y in 0..size {
            for x in 0..size {
                let mut sum = 0.0;
                for v in 0..size {
                    for u in 0..size {
                        sum += c(u)
                            * c(v)
                            * f64::from(coefficients[v * 8 + u])
                            * ((2 * x + 1) as f64 * u as f64 * std::f64::consts::PI / (2.0 * n))
                                .cos()
                            * ((2 * y + 1) as f64 * v as f64 * std::f64::consts::PI / (2.0 * n))
                                .cos();
                    }
                }
                out.push((sum / 4.0 + 128.5).clamp(0.0, 255.0) as u8);
            }
        }
        out
    }

    fn run(natural: &[i32; 64], size: usize) -> Vec<u8> {
        let quant: [f32; 64] = std::array::from_fn(|n| factor(size, n));
        let coefficients: &[i32; 64] = &std::array::from_fn(|k| natural[usize::from(ZIGZAG[k])]);
        let mut out = vec![0u8; size * size];
        match size {
            8 => eight(coefficients, &quant, &mut out, 8),
            4 => four(coefficients, &quant, &mut out, 4),
            2 => two(coefficients, &quant, &mut out, 2),
            _ => fill(coefficients[0] as f32 * quant[0], 1, &mut out, 1),
        }
        out
    }

    #[test]
    fn each_transform_matches_the_cosine_sums() {
        let mut seed = 7u32;
        for _ in 0..200 {
            let coefficients: [i32; 64] = std::array::from_fn(|n| {
                seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                let spread = if n == 0 {
                    1600.0
                } else {
                    300.0 / (1 + n % 8 + n / 8) as f32
                };
                (((seed >> 8) as f32 / 16_777_216.0 - 0.5) * spread) as i32
            });
            for size in [8, 4, 2, 1] {
                let ours = run(&coefficients, size);
                let theirs = reference(&coefficients, size);
                for (a, b) in ours.iter().zip(&theirs) {
                    assert!(a.abs_diff(*b) <= 1, "size {size}: {ours:?} vs {theirs:?}");
                }
            }
        }
    }

    #[test]
    fn a_flat_block_is_the_same_grey_at_every_size() {
        let mut block = [0i32; 64];
        block[0] = 8 * 50;
        for size in [8, 4, 2, 1] {
            assert!(run(&block, size).iter().all(|&s| s == 178), "size {size}");
        }
    }
}
