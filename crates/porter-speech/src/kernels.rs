//! The network's inner loops, written so that the compiler turns them into
//! vector instructions on any x86-64 or ARM CPU (no `unsafe`, no run-time
//! feature checks): an `exp` without a library call, the GELU built on
//! it, a dot product in eight lanes, and the output projection kept in
//! 8-bit integers.
//!
//! Why these: the profile of a 10 s clip had a quarter of the CPU time in
//! libm's `expf` (the encoder's softmax over 1,500 × 1,500 scores per head,
//! and GELU in `f64`) and in one-element-at-a-time dot products, and the
//! decoder spent a third of each token reading the 80 MB `f32` output
//! projection (51,864 × 384) from memory. Stored in `i8` with a scale per
//! row it is 20 MB, read four times faster; its logits differ from the
//! `f32` ones by far less than the gap between the tokens greedy decoding
//! chooses between (a bound the tests check).

// Array views are cheap handles (a pointer, shape and strides), passed by
// value as ndarray's own functions take them.
#![allow(clippy::needless_pass_by_value)]

use ndarray::ArrayView2;

/// Below this, `exp` is 0 (`e^-86.9` is near the smallest normal `f32`).
const EXP_LOWEST: f32 = -86.9;
/// Above this, `exp` would overflow; it is held there.
const EXP_HIGHEST: f32 = 88.7;

/// `e^x` to within about 2 units in the last place, in straight-line
/// arithmetic: `x = n·ln 2 + r` with `|r| ≤ ln 2 / 2`, a degree-6
/// polynomial for `e^r` (Cephes' coefficients), and `2^n` made as the
/// bits of a float.
#[inline]
pub(crate) fn exp(value: f32) -> f32 {
    // Rounding to the nearest integer by adding and taking away 1.5·2^23,
    // which vectorises where `round` is a library call.
    const ROUNDER: f32 = 12_582_912.0;
    const LN2_HIGH: f32 = 0.693_359_4;
    const LN2_LOW: f32 = -2.121_944_4e-4;
    const TWO_23: f32 = 8_388_608.0;
    let clamped = value.clamp(EXP_LOWEST, EXP_HIGHEST);
    let whole = (clamped * std::f32::consts::LOG2_E + ROUNDER) - ROUNDER;
    let rest = clamped - whole * LN2_HIGH - whole * LN2_LOW;
    let mut poly = 1.987_569_1e-4_f32;
    poly = poly * rest + 1.398_199_9e-3;
    poly = poly * rest + 8.333_452e-3;
    poly = poly * rest + 4.166_579_6e-2;
    poly = poly * rest + 1.666_666_5e-1;
    poly = poly * rest + 0.5;
    let e_rest = poly * rest * rest + rest + 1.0;
    // 2^whole as 2·2^(whole-1): whole is within [-125, 128] here, so the
    // exponent field whole - 1 + 127 is within [1, 254], a normal float.
    // The field is read from the bits of 2^23 + field, not with `as i32`,
    // whose saturation keeps the loop from vectorising.
    let field = (whole + 126.0).clamp(1.0, 254.0);
    let half_power = f32::from_bits(((field + TWO_23).to_bits() - TWO_23.to_bits()) << 23);
    let result = e_rest * 2.0 * half_power;
    if value < EXP_LOWEST { 0.0 } else { result }
}

/// The Gaussian error linear unit, `x·Φ(x)`, with erf to within 1.5e-7
/// (Abramowitz and Stegun 7.1.26).
#[inline]
pub(crate) fn gelu(x: f32) -> f32 {
    let z = x * std::f32::consts::FRAC_1_SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z.abs());
    let poly = t
        * (0.254_829_6
            + t * (-0.284_496_74 + t * (1.421_413_7 + t * (-1.453_152 + t * 1.061_405_4))));
    let erf = (1.0 - poly * exp(-z * z)).copysign(z);
    0.5 * x * (1.0 + erf)
}

/// Lanes of the dot products: eight independent sums, which the compiler
/// keeps in vector registers.
const LANES: usize = 8;

/// `a · b` over their common length.
#[inline]
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; LANES];
    let a_chunks = a.chunks_exact(LANES);
    let b_chunks = b.chunks_exact(LANES);
    let tail: f32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for i in 0..LANES {
            lanes[i] += x[i] * y[i];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// The largest value (`-inf` for none), in lanes: one running maximum
/// would keep the loop to one value at a time.
#[inline]
pub(crate) fn largest(values: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let chunks = values.chunks_exact(LANES);
    let tail = chunks
        .remainder()
        .iter()
        .copied()
        .fold(f32::NEG_INFINITY, f32::max);
    for x in chunks {
        for i in 0..LANES {
            lanes[i] = lanes[i].max(x[i]);
        }
    }
    lanes.iter().copied().fold(tail, f32::max)
}

/// The sum of the values, in lanes (a single running sum cannot be
/// vectorised: it fixes the order of the additions).
#[inline]
pub(crate) fn sum(values: &[f32]) -> f32 {
    let mut lanes = [0.0f32; LANES];
    let chunks = values.chunks_exact(LANES);
    let tail: f32 = chunks.remainder().iter().sum();
    for x in chunks {
        for i in 0..LANES {
            lanes[i] += x[i];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// `v = e^(v·scale − shift)` for every value, in place.
#[inline]
pub(crate) fn exp_in_place(values: &mut [f32], scale: f32, shift: f32) {
    for v in values {
        *v = exp(*v * scale - shift);
    }
}

/// `target += weight · source`, elementwise.
#[inline]
pub(crate) fn add_scaled(target: &mut [f32], weight: f32, source: &[f32]) {
    for (t, s) in target.iter_mut().zip(source) {
        *t += weight * s;
    }
}

/// Lanes of the integer dot products: sixteen 8-bit weights against
/// sixteen 16-bit values, which the compiler turns into multiply-add
/// instructions on pairs (`pmaddwd` on x86-64).
const INTEGER_LANES: usize = 16;

/// `a · b` in integers, `a` in 8 bits and `b` in 16, summed in 32.
#[inline]
fn dot_i8_i16(a: &[i8], b: &[i16]) -> i32 {
    let mut lanes = [0i32; INTEGER_LANES];
    let a_chunks = a.chunks_exact(INTEGER_LANES);
    let b_chunks = b.chunks_exact(INTEGER_LANES);
    let tail: i32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for i in 0..INTEGER_LANES {
            lanes[i] += i32::from(x[i]) * i32::from(y[i]);
        }
    }
    lanes.iter().sum::<i32>() + tail
}

/// A matrix in 8-bit integers, each row with its own scale (its largest
/// magnitude over 127), for products with one vector at a time.
pub(crate) struct Quantised {
    columns: usize,
    values: Vec<i8>,
    scales: Vec<f32>,
}

impl Quantised {
    pub fn new(matrix: ArrayView2<'_, f32>) -> Self {
        let (rows, columns) = matrix.dim();
        let mut values = Vec::with_capacity(rows * columns);
        let mut scales = Vec::with_capacity(rows);
        for row in matrix.rows() {
            let largest = row.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            let scale = if largest > 0.0 { largest / 127.0 } else { 1.0 };
            let inverse = 1.0 / scale;
            // Rounded half away from zero; `as` cuts toward zero and holds
            // the result within -128..=127.
            values.extend(row.iter().map(|v| {
                let steps = v * inverse;
                (steps + 0.5f32.copysign(steps)) as i8
            }));
            scales.push(scale);
        }
        Self {
            columns,
            values,
            scales,
        }
    }

    pub fn rows(&self) -> usize {
        self.scales.len()
    }

    /// `out[r] = row r · x`, the rows shared among `threads`. `x` is
    /// taken in 16-bit steps of its largest magnitude (an error some
    /// 30,000 times smaller than the weights' own), so that each product
    /// is integer multiply-adds; the steps are small enough that no sum
    /// of a row can pass `i32`'s range.
    pub fn times(&self, x: &[f32], out: &mut [f32], threads: usize) {
        let columns = self.columns.max(1);
        let largest = x.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        let top = (i32::MAX as usize / (127 * columns)).min(i16::MAX as usize) as f32;
        let step = if largest > 0.0 { largest / top } else { 1.0 };
        let inverse = 1.0 / step;
        let x: Vec<i16> = x
            .iter()
            .map(|v| {
                let steps = v * inverse;
                (steps + 0.5f32.copysign(steps)) as i16
            })
            .collect();
        let chunk = self.rows().div_ceil(threads.max(1)).max(1);
        let part = |(rows, (scales, out)): (usize, (&[f32], &mut [f32]))| {
            let values = &self.values[rows * chunk * columns..];
            for ((o, scale), row) in out.iter_mut().zip(scales).zip(values.chunks_exact(columns)) {
                *o = scale * step * dot_i8_i16(row, &x) as f32;
            }
        };
        let parts = self
            .scales
            .chunks(chunk)
            .zip(out.chunks_mut(chunk))
            .enumerate();
        if threads <= 1 {
            parts.for_each(part);
            return;
        }
        std::thread::scope(|scope| {
            let part = &part;
            for item in parts {
                scope.spawn(move || part(item));
            }
        });
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use ndarray::Array2;

    #[test]
    fn exp_agrees_with_the_library_over_the_whole_range() {
        let mut x = -90.0f32;
        while x < 88.5 {
            let (ours, theirs) = (exp(x), x.exp());
            let error = (ours - theirs).abs() / theirs.max(f32::MIN_POSITIVE);
            assert!(
                error < 1e-6 || (x < EXP_LOWEST && ours == 0.0),
                "exp({x}) = {ours}, not {theirs}"
            );
            x += 0.0137;
        }
        assert_eq!(exp(f32::NEG_INFINITY).to_bits(), 0.0f32.to_bits());
        assert_eq!(exp(0.0).to_bits(), 1.0f32.to_bits());
        assert!(exp(f32::NAN).is_nan());
    }

    #[test]
    fn gelu_matches_its_known_values() {
        for (x, y) in [
            (0.0, 0.0),
            (1.0, 0.841_344_7),
            (-1.0, -0.158_655_3),
            (3.0, 2.995_950_2),
            (-4.0, -1.267e-4),
        ] {
            assert!((gelu(x) - y).abs() < 2e-6, "gelu({x}) = {}", gelu(x));
        }
    }

    /// Deterministic values in [-1, 1) (a linear congruential generator).
    pub(crate) fn noise(n: usize, seed: u64) -> Vec<f32> {
        let mut state = seed;
        (0..n)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            })
            .collect()
    }

    #[test]
    fn dot_products_agree_with_the_plain_sum_at_every_length() {
        for len in [0, 1, 7, 8, 9, 64, 383, 384] {
            let (a, b) = (noise(len, 1), noise(len, 2));
            let plain: f64 = a
                .iter()
                .zip(&b)
                .map(|(x, y)| f64::from(*x) * f64::from(*y))
                .sum();
            assert!(
                (f64::from(dot(&a, &b)) - plain).abs() < 1e-4,
                "length {len}"
            );
        }
    }

    #[test]
    fn the_quantised_product_is_close_to_the_exact_one_and_keeps_the_largest() {
        // 301 rows (not a multiple of the threads' share), 384 columns.
        let (rows, columns) = (301, 384);
        let mut matrix =
            Array2::from_shape_vec((rows, columns), noise(rows * columns, 3)).expect("the shape");
        // Rows of very different sizes, as an embedding's are.
        for (r, mut row) in matrix.rows_mut().into_iter().enumerate() {
            row *= 0.01 + (r % 7) as f32;
        }
        matrix.row_mut(0).fill(0.0);
        let x = noise(columns, 4);
        let exact: Vec<f32> = matrix
            .rows()
            .into_iter()
            .map(|r| dot(r.as_slice().expect("a row"), &x))
            .collect();
        let quantised = Quantised::new(matrix.view());
        for threads in [1, 2, 3] {
            let mut out = vec![f32::NAN; rows];
            quantised.times(&x, &mut out, threads);
            for (r, (q, e)) in out.iter().zip(&exact).enumerate() {
                // Each weight is off by at most half its step (largest /
                // 254), each value of x by half of its own (largest / 65534).
                let row_largest = matrix.row(r).iter().fold(0.0f32, |m, v| m.max(v.abs()));
                let x_largest = x.iter().fold(0.0f32, |m, v| m.max(v.abs()));
                let bound = row_largest / 254.0 * x.iter().map(|v| v.abs()).sum::<f32>()
                    + row_largest * x_largest / 65_534.0 * columns as f32;
                assert!(
                    (q - e).abs() <= bound + 1e-5,
                    "row {r} with {threads} threads: {q} vs {e}"
                );
            }
            assert_eq!(out[0].to_bits(), 0.0f32.to_bits());
        }
    }
}
