//! The decoder's products in the CPU's widest vectors, chosen at run time.
//!
//! Why: each decoding step multiplies a few rows (one per beam) by every
//! weight matrix of the decoder and by the vocabulary (26 million weights
//! for Whisper base), and attends over the 1,500 audio frames in each
//! layer. The compiler, targeting any x86-64, writes these loops in 4-lane
//! SSE2 without fused multiply-add; pulp runs the same safe code compiled
//! for AVX2 and FMA where the CPU has them (and NEON on ARM), chosen once
//! per call, which roughly halves their time on this machine.

// The kernels are inlined into pulp's dispatch on purpose: only code
// inlined there is compiled for the CPU features it found, and a call out
// of it would run the baseline instructions again.
#![allow(clippy::inline_always)]

use std::borrow::Cow;

use pulp::{Simd, WithSimd};

/// `out[i · outputs + j] = a[i] · (row j of b)`, for the rows `a` (each
/// `width` long) and the `outputs` rows of `b` (contiguous, `width` wide).
pub(crate) fn row_products(a: &[&[f32]], b: &[f32], width: usize, out: &mut [f32]) {
    pulp::Arch::new().dispatch(RowProducts { a, b, width, out });
}

struct RowProducts<'a> {
    a: &'a [&'a [f32]],
    b: &'a [f32],
    width: usize,
    out: &'a mut [f32],
}

impl WithSimd for RowProducts<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Self { a, b, width, out } = self;
        let outputs = b.len() / width.max(1);
        for (j, b_row) in b.chunks_exact(width.max(1)).enumerate() {
            // The weight row is read from memory once for all the rows.
            for (i, a_row) in a.iter().enumerate() {
                if let Some(cell) = out.get_mut(i * outputs + j) {
                    *cell = dot(simd, a_row, b_row);
                }
            }
        }
    }
}

/// A matrix of float16 values as the model file has them, of which a
/// row at a time is read (a token's embedding).
pub(crate) struct HalfRows {
    values: Vec<half::f16>,
    rows: usize,
    cols: usize,
}

impl HalfRows {
    /// Holds `values` (`rows` × `cols`, row-major).
    pub fn new(values: Vec<half::f16>, rows: usize, cols: usize) -> Self {
        Self { values, rows, cols }
    }

    /// Row `i` widened to `f32` (empty past the last row).
    pub fn row(&self, i: usize) -> Vec<f32> {
        use half::slice::HalfFloatSliceExt;
        let Some(row) = self.values.get(i * self.cols..(i + 1) * self.cols) else {
            return Vec::new();
        };
        let mut wide = vec![0.0f32; self.cols];
        row.convert_to_f32_slice(&mut wide);
        wide
    }
}

/// Each row of `a` (`cols` long) as `phases` rows: phase `p` holds
/// columns `p, p + phases, …`, each padded with zeros to the same length.
fn split_columns(a: &[&[f32]], cols: usize, phases: usize) -> Vec<Vec<Vec<f32>>> {
    let per_row = cols.div_ceil(phases);
    a.iter()
        .map(|row| {
            let mut split = vec![vec![0.0f32; per_row]; phases];
            for (k, v) in row.iter().take(cols).enumerate() {
                split[k % phases][k / phases] = *v;
            }
            split
        })
        .collect()
}

/// Runs `part_products` over `threads` parts of the packed rows `units`
/// (`per_row` units a row, `rows` rows) and places each part's products
/// (row-major, `a_rows` × its rows) in `out` (`a_rows` × `rows`).
fn in_parts(
    units: &[u32],
    (per_row, rows, a_rows): (usize, usize, usize),
    threads: usize,
    out: &mut [f32],
    part_products: &(dyn Fn(usize, &[u32]) -> Vec<f32> + Sync),
) {
    let chunk = rows.div_ceil(threads.max(1)).max(1);
    let parts: Vec<&[u32]> = units.chunks(chunk * per_row.max(1)).collect();
    let mut results: Vec<Vec<f32>> = vec![Vec::new(); parts.len()];
    std::thread::scope(|scope| {
        let (own, others) = results.split_at_mut(1.min(parts.len()));
        let own = parts.first().zip(own.first_mut());
        for (n, (part, result)) in parts.iter().skip(1).zip(others).enumerate() {
            scope.spawn(move || *result = part_products((n + 1) * chunk, part));
        }
        if let Some((part, result)) = own {
            *result = part_products(0, part);
        }
    });
    let mut column = 0;
    for part in results {
        let count = part.len() / a_rows.max(1);
        for (i, values) in part.chunks_exact(count.max(1)).enumerate() {
            if let Some(target) = out.get_mut(i * rows + column..) {
                for (t, v) in target.iter_mut().zip(values) {
                    *t = *v;
                }
            }
        }
        column += count;
    }
}

/// A matrix held in 8 bits: each row's values as multiples of its own
/// step (the largest magnitude / 127), four to a `u32` (the first column
/// in the low byte), each row padded to a multiple of four.
///
/// Why: a decoding step reads every decoder weight and the whole
/// vocabulary (47 million weights for Whisper base), and the profile
/// showed that step waiting on memory: a byte a weight instead of two
/// halves the reading. Rounding each weight to its row's 255 levels is
/// what CTranslate2's int8 does to the same weights (faster-whisper's
/// int8); the rows they meet stay `f32` here.
pub(crate) struct ByteRows {
    quads: Vec<u32>,
    steps: Vec<f32>,
    rows: usize,
    cols: usize,
}

impl ByteRows {
    /// Rounds `values` (`rows` × `cols`, row-major) to each row's levels.
    pub fn new(values: &[f32], rows: usize, cols: usize) -> Self {
        Self::from_rows(values.chunks(cols.max(1)).map(Cow::Borrowed), rows, cols)
    }

    /// As [`ByteRows::new`], from float16 values, widened a row at a time.
    pub fn from_half(values: &HalfRows) -> Self {
        Self::from_rows(
            (0..values.rows).map(|i| Cow::Owned(values.row(i))),
            values.rows,
            values.cols,
        )
    }

    fn from_rows<'a>(
        source: impl Iterator<Item = Cow<'a, [f32]>>,
        rows: usize,
        cols: usize,
    ) -> Self {
        // Adding and taking away 1.5 · 2^23 rounds to the nearest whole
        // number (ties to even) where `round` is a library call.
        const ROUNDER: f32 = 12_582_912.0;
        let per_row = cols.div_ceil(4);
        let mut quads = Vec::with_capacity(rows * per_row);
        let mut steps = Vec::with_capacity(rows);
        let mut levels = vec![0u8; per_row * 4];
        for row in source.take(rows) {
            let largest = crate::kernels::largest_magnitude(&row);
            let step = if largest.is_finite() && largest > 0.0 {
                largest / 127.0
            } else {
                0.0
            };
            steps.push(step);
            let inverse = if step > 0.0 { 1.0 / step } else { 0.0 };
            levels.fill(0);
            for (level, v) in levels.iter_mut().zip(row.iter()) {
                let whole = ((v * inverse).clamp(-127.0, 127.0) + ROUNDER) - ROUNDER;
                // A whole number within ±127: the casts are exact.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                {
                    *level = (whole as i8) as u8;
                }
            }
            quads.extend(
                levels
                    .chunks_exact(4)
                    .map(|four| u32::from_le_bytes([four[0], four[1], four[2], four[3]])),
            );
        }
        quads.resize(rows * per_row, 0);
        steps.resize(rows, 0.0);
        Self {
            quads,
            steps,
            rows,
            cols,
        }
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Row `i` as the values it stands for (empty past the last row).
    pub fn row(&self, i: usize) -> Vec<f32> {
        let per_row = self.cols.div_ceil(4);
        let (Some(quads), Some(step)) = (
            self.quads.get(i * per_row..(i + 1) * per_row),
            self.steps.get(i),
        ) else {
            return Vec::new();
        };
        let mut wide: Vec<f32> = quads
            .iter()
            .flat_map(|q| q.to_le_bytes())
            .map(|b| f32::from(b.cast_signed()) * step)
            .collect();
        wide.truncate(self.cols);
        wide
    }

    /// The whole matrix as the values it stands for, row-major.
    pub fn widened(&self) -> Vec<f32> {
        (0..self.rows).flat_map(|i| self.row(i)).collect()
    }

    /// `out[i · rows + j] = a[i] · (row j)` for the rows `a` (each `cols`
    /// long), the rows split among `threads`.
    pub fn products(&self, a: &[&[f32]], threads: usize, out: &mut [f32]) {
        let per_row = self.cols.div_ceil(4).max(1);
        let split = split_columns(a, self.cols, 4);
        let quads = &self.quads;
        let steps = &self.steps;
        in_parts(
            quads,
            (per_row, self.rows, a.len()),
            threads,
            out,
            &|first, part| {
                let mut out = vec![0.0f32; split.len() * (part.len() / per_row)];
                pulp::Arch::new().dispatch(ByteRowProducts {
                    split: &split,
                    b: part,
                    steps: steps.get(first..).unwrap_or_default(),
                    per_row,
                    out: &mut out,
                });
                out
            },
        );
    }
}

/// Rows of `a` taken together against each weight row: the widening of
/// a row's bytes is shared by all of them, and each has two accumulators
/// held in registers.
const GROUP: usize = 4;

struct ByteRowProducts<'a> {
    split: &'a [Vec<Vec<f32>>],
    b: &'a [u32],
    steps: &'a [f32],
    per_row: usize,
    out: &'a mut [f32],
}

impl WithSimd for ByteRowProducts<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Self {
            split,
            b,
            steps,
            per_row,
            out,
        } = self;
        let outputs = b.len() / per_row.max(1);
        let groups = split.len().div_ceil(GROUP).max(1);
        let size = split.len().div_ceil(groups).max(1);
        for (g, rows) in split.chunks(size).enumerate() {
            let out = &mut out[g * size * outputs..];
            let part = (b, steps, per_row);
            match rows {
                [a] => byte_group::<S, 1>(simd, [a], part, out),
                [a, b2] => byte_group::<S, 2>(simd, [a, b2], part, out),
                [a, b2, c] => byte_group::<S, 3>(simd, [a, b2, c], part, out),
                [a, b2, c, d] => byte_group::<S, 4>(simd, [a, b2, c, d], part, out),
                _ => {}
            }
        }
    }
}

/// `out[r · outputs + j]` = row `r` of `rows` (split in four phases) ·
/// byte row `j` of `b`, times that row's step.
#[inline(always)]
fn byte_group<S: Simd, const R: usize>(
    simd: S,
    rows: [&Vec<Vec<f32>>; R],
    (b, steps, per_row): (&[u32], &[f32], usize),
    out: &mut [f32],
) {
    let outputs = b.len() / per_row.max(1);
    let phases = rows.map(|r| {
        [0, 1, 2, 3]
            .map(|p| S::as_simd_f32s(r.get(p).map_or(&[][..], |v| &v[..per_row.min(v.len())])))
    });
    // 2^23 + 128: a byte b (its sign bit flipped) put under the exponent
    // of 2^23 reads as 2^23 + b + 128.
    let offset = simd.splat_f32s(8_388_736.0);
    let exponent = simd.splat_u32s(0x4b00_0000);
    let low_byte = simd.splat_u32s(0xff);
    let flip = simd.splat_u32s(0x8080_8080);
    for (j, b_row) in b.chunks_exact(per_row.max(1)).enumerate() {
        let (b_vectors, b_tail) = S::as_simd_u32s(b_row);
        let mut sums = [[simd.splat_f32s(0.0); 2]; R];
        for (k, quad) in b_vectors.iter().enumerate() {
            let flipped = simd.xor_u32s(*quad, flip);
            let byte = |shift: u32| {
                let moved = simd.wrapping_dyn_shr_u32s(flipped, simd.splat_u32s(shift));
                let bits = simd.or_u32s(simd.and_u32s(moved, low_byte), exponent);
                simd.sub_f32s(simd.transmute_f32s_u32s(bits), offset)
            };
            let values = [byte(0), byte(8), byte(16), byte(24)];
            for r in 0..R {
                for (p, value) in values.iter().enumerate() {
                    if let Some(a) = phases[r][p].0.get(k) {
                        sums[r][p % 2] = simd.mul_add_e_f32s(*a, *value, sums[r][p % 2]);
                    }
                }
            }
        }
        let step = steps.get(j).copied().unwrap_or(0.0);
        for r in 0..R {
            let mut sum = simd.reduce_sum_f32s(simd.add_f32s(sums[r][0], sums[r][1]));
            for (k, quad) in b_tail.iter().enumerate() {
                for (p, byte) in quad.to_le_bytes().iter().enumerate() {
                    if let Some(a) = phases[r][p].1.get(k) {
                        sum += a * f32::from(byte.cast_signed());
                    }
                }
            }
            if let Some(cell) = out.get_mut(r * outputs + j) {
                *cell = sum * step;
            }
        }
    }
}

/// Attention of a few query rows over `count` keys and values, head by
/// head (`heads` equal slices of each row): `visible[i]` keys are seen by
/// query `i`. Each key and value row is read once for all queries and
/// heads. Returns the rows × width result.
pub(crate) struct FewQueries<'a> {
    pub queries: &'a [&'a [f32]],
    pub keys: &'a dyn Fn(usize) -> std::borrow::Cow<'a, [f32]>,
    pub values: &'a dyn Fn(usize) -> std::borrow::Cow<'a, [f32]>,
    pub count: usize,
    pub visible: &'a [usize],
    pub heads: usize,
    pub softmax: &'a dyn Fn(&mut [f32], usize, f32),
}

impl FewQueries<'_> {
    pub fn run(self) -> Vec<Vec<f32>> {
        pulp::Arch::new().dispatch(self)
    }
}

impl WithSimd for FewQueries<'_> {
    type Output = Vec<Vec<f32>>;

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> Vec<Vec<f32>> {
        let rows = self.queries.len();
        let width = self.queries.first().map_or(0, |q| q.len());
        let heads = self.heads.max(1);
        let head = width / heads;
        let count = self.count;
        let scale = 1.0 / (head.max(1) as f32).sqrt();
        // Scores of query i, head h at [(i · heads + h) · count ..][..count].
        let mut scores = vec![0.0f32; rows * heads * count];
        for j in 0..count {
            let key = (self.keys)(j);
            for (i, query) in self.queries.iter().enumerate() {
                if j >= self.visible[i] {
                    continue;
                }
                for h in 0..heads {
                    let cols = h * head..(h + 1) * head;
                    scores[(i * heads + h) * count + j] =
                        dot(simd, &query[cols.clone()], &key[cols]);
                }
            }
        }
        for (n, row) in scores.chunks_exact_mut(count.max(1)).enumerate() {
            (self.softmax)(row, self.visible[n / heads], scale);
        }
        let mut out = vec![vec![0.0f32; width]; rows];
        for j in 0..count {
            let value = (self.values)(j);
            for (i, acc) in out.iter_mut().enumerate() {
                if j >= self.visible[i] {
                    continue;
                }
                for h in 0..heads {
                    let cols = h * head..(h + 1) * head;
                    let weight = scores[(i * heads + h) * count + j];
                    add_scaled(simd, &mut acc[cols.clone()], weight, &value[cols]);
                }
            }
        }
        out
    }
}

/// Softmax of `values · scale` in place (the encoder's attention scores,
/// 1,500 × 1,500 per head and layer), with [`crate::kernels::exp`]'s
/// arithmetic in vectors.
pub(crate) fn softmax(values: &mut [f32], scale: f32) {
    pulp::Arch::new().dispatch(Softmax { values, scale });
}

struct Softmax<'a> {
    values: &'a mut [f32],
    scale: f32,
}

impl WithSimd for Softmax<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Self { values, scale } = self;
        let top = crate::kernels::largest(values) * scale;
        if top == f32::NEG_INFINITY || values.is_empty() {
            return;
        }
        let (vectors, tail) = S::as_mut_simd_f32s(values);
        let scales = simd.splat_f32s(scale);
        let shift = simd.splat_f32s(-top);
        let mut sums = simd.splat_f32s(0.0);
        for v in vectors.iter_mut() {
            *v = exp(simd, simd.mul_add_e_f32s(*v, scales, shift));
            sums = simd.add_f32s(sums, *v);
        }
        let mut sum = simd.reduce_sum_f32s(sums);
        for v in tail.iter_mut() {
            *v = crate::kernels::exp(*v * scale - top);
            sum += *v;
        }
        if sum > 0.0 {
            let inverse = simd.splat_f32s(1.0 / sum);
            for v in vectors.iter_mut() {
                *v = simd.mul_f32s(*v, inverse);
            }
            for v in tail.iter_mut() {
                *v /= sum;
            }
        }
    }
}

/// `e^x` lane by lane, as [`crate::kernels::exp`] computes it.
#[inline(always)]
fn exp<S: Simd>(simd: S, value: S::f32s) -> S::f32s {
    use crate::kernels::{EXP_HIGHEST, EXP_LOWEST};
    let splat = |v: f32| simd.splat_f32s(v);
    let clamped = simd.max_f32s(simd.min_f32s(value, splat(EXP_HIGHEST)), splat(EXP_LOWEST));
    let rounder = splat(12_582_912.0);
    let whole = simd.sub_f32s(
        simd.mul_add_e_f32s(clamped, splat(std::f32::consts::LOG2_E), rounder),
        rounder,
    );
    let rest = simd.sub_f32s(
        simd.sub_f32s(clamped, simd.mul_f32s(whole, splat(0.693_359_4))),
        simd.mul_f32s(whole, splat(-2.121_944_4e-4)),
    );
    let mut poly = splat(1.987_569_1e-4);
    for c in [
        1.398_199_9e-3,
        8.333_452e-3,
        4.166_579_6e-2,
        1.666_666_5e-1,
        0.5,
    ] {
        poly = simd.mul_add_e_f32s(poly, rest, splat(c));
    }
    let e_rest = simd.add_f32s(
        simd.mul_add_e_f32s(simd.mul_f32s(poly, rest), rest, rest),
        splat(1.0),
    );
    let two_23 = splat(8_388_608.0);
    let field = simd.max_f32s(
        simd.min_f32s(simd.add_f32s(whole, splat(126.0)), splat(254.0)),
        splat(1.0),
    );
    let bits = simd.sub_u32s(
        simd.transmute_u32s_f32s(simd.add_f32s(field, two_23)),
        simd.transmute_u32s_f32s(two_23),
    );
    let half_power =
        simd.transmute_f32s_u32s(simd.wrapping_dyn_shl_u32s(bits, simd.splat_u32s(23)));
    let result = simd.mul_f32s(simd.mul_f32s(e_rest, splat(2.0)), half_power);
    simd.select_f32s(
        simd.less_than_f32s(value, splat(EXP_LOWEST)),
        splat(0.0),
        result,
    )
}

/// `a · b` over their common length, in two vector accumulators.
#[inline(always)]
fn dot<S: Simd>(simd: S, a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a_vectors, a_tail) = S::as_simd_f32s(&a[..n]);
    let (b_vectors, b_tail) = S::as_simd_f32s(&b[..n]);
    let mut even = simd.splat_f32s(0.0);
    let mut odd = simd.splat_f32s(0.0);
    let a_pairs = a_vectors.chunks_exact(2);
    let b_pairs = b_vectors.chunks_exact(2);
    let (a_left, b_left) = (a_pairs.remainder(), b_pairs.remainder());
    for (x, y) in a_pairs.zip(b_pairs) {
        even = simd.mul_add_e_f32s(x[0], y[0], even);
        odd = simd.mul_add_e_f32s(x[1], y[1], odd);
    }
    for (x, y) in a_left.iter().zip(b_left) {
        even = simd.mul_add_e_f32s(*x, *y, even);
    }
    let mut sum = simd.reduce_sum_f32s(simd.add_f32s(even, odd));
    for (x, y) in a_tail.iter().zip(b_tail) {
        sum += x * y;
    }
    sum
}

/// `target += weight · source`, elementwise.
#[inline(always)]
fn add_scaled<S: Simd>(simd: S, target: &mut [f32], weight: f32, source: &[f32]) {
    let n = target.len().min(source.len());
    let (t_vectors, t_tail) = S::as_mut_simd_f32s(&mut target[..n]);
    let (s_vectors, s_tail) = S::as_simd_f32s(&source[..n]);
    let w = simd.splat_f32s(weight);
    for (t, s) in t_vectors.iter_mut().zip(s_vectors) {
        *t = simd.mul_add_e_f32s(w, *s, *t);
    }
    for (t, s) in t_tail.iter_mut().zip(s_tail) {
        *t += weight * s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softmax_in_vectors_is_the_softmax_of_the_scaled_values() {
        for len in [1, 7, 8, 9, 64, 1500] {
            let mut values: Vec<f32> = crate::kernels::tests::noise(len, 4)
                .iter()
                .map(|v| v * 40.0)
                .collect();
            values[0] = -200.0;
            let plain: Vec<f64> = {
                let scaled: Vec<f64> = values.iter().map(|v| f64::from(*v) * 0.125).collect();
                let top = scaled.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let total: f64 = scaled.iter().map(|v| (v - top).exp()).sum();
                scaled.iter().map(|v| (v - top).exp() / total).collect()
            };
            softmax(&mut values, 0.125);
            for (i, (got, want)) in values.iter().zip(&plain).enumerate() {
                assert!(
                    (f64::from(*got) - want).abs() < 1e-6 * (1.0 + want),
                    "length {len}, value {i}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn byte_rows_keep_each_weight_within_half_a_step_and_multiply_as_they_read() {
        for width in [1, 3, 4, 5, 31, 64, 515] {
            let outputs = 13;
            let mut b: Vec<f32> = crate::kernels::tests::noise(width * outputs, 5)
                .iter()
                .map(|v| v * 3.0)
                .collect();
            // A row of zeros, and a row with one value far larger.
            b[..width].fill(0.0);
            if let Some(v) = b.get_mut(width) {
                *v = 250.0;
            }
            let matrix = ByteRows::new(&b, outputs, width);
            let widened = matrix.widened();
            assert_eq!(widened.len(), b.len());
            for (j, (row, kept)) in b.chunks(width).zip(widened.chunks(width)).enumerate() {
                let largest = row.iter().fold(0.0f32, |m, v| m.max(v.abs()));
                for (v, k) in row.iter().zip(kept) {
                    assert!(
                        (v - k).abs() <= largest / 254.0 * 1.0001,
                        "width {width}, row {j}: {v} kept as {k}"
                    );
                }
            }
            for beams in 1..=8 {
                let a: Vec<Vec<f32>> = (0..beams)
                    .map(|i| crate::kernels::tests::noise(width, i as u64 + 40))
                    .collect();
                let rows: Vec<&[f32]> = a.iter().map(Vec::as_slice).collect();
                for threads in [1, 2, 3] {
                    let mut out = vec![f32::NAN; beams * outputs];
                    matrix.products(&rows, threads, &mut out);
                    for i in 0..beams {
                        for j in 0..outputs {
                            let expected: f64 = a[i]
                                .iter()
                                .zip(&widened[j * width..(j + 1) * width])
                                .map(|(x, y)| f64::from(*x) * f64::from(*y))
                                .sum();
                            let got = f64::from(out[i * outputs + j]);
                            assert!(
                                (got - expected).abs() < 1e-4 * (1.0 + expected.abs()),
                                "width {width}, {beams} rows, {threads} threads, ({i}, {j}): {got} vs {expected}"
                            );
                        }
                    }
                }
            }
        }
    }

    fn as_slices(rows: &[Vec<f32>]) -> Vec<&[f32]> {
        rows.iter().map(Vec::as_slice).collect()
    }

    #[test]
    fn few_queries_attend_each_head_over_the_keys_they_see() {
        // Head widths of whole vectors, with a tail, and of fewer values
        // than a vector; more vectors in a head than are held at once.
        for (heads, head) in [(2, 8), (3, 64), (2, 5), (1, 3), (2, 100)] {
            let width = heads * head;
            let count = 37;
            let make = |n: usize, seed: u64| -> Vec<Vec<f32>> {
                (0..n)
                    .map(|i| crate::kernels::tests::noise(width, seed + i as u64))
                    .collect()
            };
            let (queries, keys, values) = (make(3, 1), make(count, 100), make(count, 300));
            let visible = [count, 1, 20];
            let key = |j: usize| std::borrow::Cow::Borrowed(keys[j].as_slice());
            let value = |j: usize| std::borrow::Cow::Borrowed(values[j].as_slice());
            let got = FewQueries {
                queries: &as_slices(&queries),
                keys: &key,
                values: &value,
                count,
                visible: &visible,
                heads,
                softmax: &|row: &mut [f32], seen: usize, scale: f32| {
                    let (seen, hidden) = row.split_at_mut(seen);
                    softmax(seen, scale);
                    hidden.fill(0.0);
                },
            }
            .run();
            let scale = 1.0 / (head as f64).sqrt();
            for (i, query) in queries.iter().enumerate() {
                for h in 0..heads {
                    let cols = h * head..(h + 1) * head;
                    let scores: Vec<f64> = keys[..visible[i]]
                        .iter()
                        .map(|key| {
                            cols.clone()
                                .map(|c| f64::from(query[c]) * f64::from(key[c]))
                                .sum::<f64>()
                                * scale
                        })
                        .collect();
                    let top = scores.iter().copied().fold(f64::MIN, f64::max);
                    let total: f64 = scores.iter().map(|s| (s - top).exp()).sum();
                    for c in cols.clone() {
                        let expected: f64 = scores
                            .iter()
                            .zip(&values)
                            .map(|(s, value)| (s - top).exp() / total * f64::from(value[c]))
                            .sum();
                        let got = f64::from(got[i][c]);
                        assert!(
                            (got - expected).abs() < 1e-5,
                            "{heads} heads of {head}, query {i}, column {c}: {got} vs {expected}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn row_products_are_dot_products_of_every_pair_of_rows_of_any_width() {
        for width in [1, 7, 8, 16, 33, 64, 515] {
            let a: Vec<Vec<f32>> = (0..3)
                .map(|i| crate::kernels::tests::noise(width, i + 1))
                .collect();
            let b = crate::kernels::tests::noise(width * 5, 9);
            let rows: Vec<&[f32]> = a.iter().map(Vec::as_slice).collect();
            let mut out = vec![0.0; 3 * 5];
            row_products(&rows, &b, width, &mut out);
            for i in 0..3 {
                for j in 0..5 {
                    let expected: f64 = a[i]
                        .iter()
                        .zip(&b[j * width..(j + 1) * width])
                        .map(|(x, y)| f64::from(*x) * f64::from(*y))
                        .sum();
                    let got = f64::from(out[i * 5 + j]);
                    assert!(
                        (got - expected).abs() < 1e-4,
                        "width {width}: {got} vs {expected}"
                    );
                }
            }
        }
    }
}
