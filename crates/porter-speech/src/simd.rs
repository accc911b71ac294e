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
