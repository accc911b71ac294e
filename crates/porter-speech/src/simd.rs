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

/// As [`row_products`], with `b` in float16: each row is widened into a
/// buffer as it is read.
pub(crate) fn half_row_products(a: &[&[f32]], b: &[half::f16], width: usize, out: &mut [f32]) {
    pulp::Arch::new().dispatch(HalfRowProducts { a, b, width, out });
}

struct HalfRowProducts<'a> {
    a: &'a [&'a [f32]],
    b: &'a [half::f16],
    width: usize,
    out: &'a mut [f32],
}

impl WithSimd for HalfRowProducts<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        use half::slice::HalfFloatSliceExt;
        let Self { a, b, width, out } = self;
        let outputs = b.len() / width.max(1);
        let mut wide = vec![0.0f32; width];
        for (j, b_row) in b.chunks_exact(width.max(1)).enumerate() {
            b_row.convert_to_f32_slice(&mut wide);
            for (i, a_row) in a.iter().enumerate() {
                if let Some(cell) = out.get_mut(i * outputs + j) {
                    *cell = dot(simd, a_row, &wide);
                }
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
