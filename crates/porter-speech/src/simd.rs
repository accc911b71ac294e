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

/// A matrix of float16 values held two to a `u32` (the even column in the
/// low half), each row padded to an even length.
///
/// Why: the decoder's products read every weight once per token, and
/// widening a row into an `f32` buffer before the dot products (half's
/// slice conversion, eight values per call) was a sixth of all CPU time.
/// Read as `u32` lanes, two float16 values are widened in registers with
/// integer and float operations any vector unit has (no F16C, no
/// `unsafe`), once for all the beams' rows, and never written back.
pub(crate) struct HalfRows {
    pairs: Vec<u32>,
    rows: usize,
    cols: usize,
}

impl HalfRows {
    /// Packs `values` (`rows` × `cols`, row-major).
    pub fn new(values: &[half::f16], rows: usize, cols: usize) -> Self {
        let per_row = cols.div_ceil(2);
        let mut pairs = Vec::with_capacity(rows * per_row);
        for row in values.chunks(cols.max(1)).take(rows) {
            for pair in row.chunks(2) {
                let low = pair.first().map_or(0, |v| u32::from(v.to_bits()));
                let high = pair.get(1).map_or(0, |v| u32::from(v.to_bits()));
                pairs.push(low | (high << 16));
            }
        }
        pairs.resize(rows * per_row, 0);
        Self { pairs, rows, cols }
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The `u32`s of one row.
    fn per_row(&self) -> usize {
        self.cols.div_ceil(2)
    }

    /// Row `i` widened to `f32` (empty past the last row).
    pub fn row(&self, i: usize) -> Vec<f32> {
        let per_row = self.per_row();
        let Some(pairs) = self.pairs.get(i * per_row..(i + 1) * per_row) else {
            return Vec::new();
        };
        let mut wide: Vec<f32> = pairs.iter().flat_map(|p| unpair(*p)).collect();
        wide.truncate(self.cols);
        wide
    }

    /// The whole matrix widened to `f32`, row-major.
    pub fn widened(&self) -> Vec<f32> {
        (0..self.rows).flat_map(|i| self.row(i)).collect()
    }

    /// `out[i · rows + j] = a[i] · (row j)` for the rows `a` (each `cols`
    /// long), the rows split among `threads`.
    pub fn products(&self, a: &[&[f32]], threads: usize, out: &mut [f32]) {
        let per_row = self.per_row().max(1);
        // Each row of `a` split into its even and odd columns, to meet the
        // pairs' low and high halves.
        let split: Vec<(Vec<f32>, Vec<f32>)> = a
            .iter()
            .map(|row| {
                let mut even = vec![0.0f32; per_row];
                let mut odd = vec![0.0f32; per_row];
                for (k, v) in row.iter().take(self.cols).enumerate() {
                    if k % 2 == 0 {
                        even[k / 2] = *v;
                    } else {
                        odd[k / 2] = *v;
                    }
                }
                (even, odd)
            })
            .collect();
        let chunk = self.rows.div_ceil(threads.max(1)).max(1);
        let parts: Vec<&[u32]> = self.pairs.chunks(chunk * per_row).collect();
        let mut results: Vec<Vec<f32>> = vec![Vec::new(); parts.len()];
        std::thread::scope(|scope| {
            let mut results = results.iter_mut();
            let own = parts.first().zip(results.next());
            for (part, result) in parts.iter().skip(1).zip(results) {
                let split = &split;
                scope.spawn(move || *result = part_products(split, part, per_row));
            }
            if let Some((part, result)) = own {
                *result = part_products(&split, part, per_row);
            }
        });
        let mut column = 0;
        for part in results {
            let count = part.len() / a.len().max(1);
            for (i, values) in part.chunks_exact(count.max(1)).enumerate() {
                if let Some(target) = out.get_mut(i * self.rows + column..) {
                    for (t, v) in target.iter_mut().zip(values) {
                        *t = *v;
                    }
                }
            }
            column += count;
        }
    }
}

/// The two float16 values of a pair, low first, in `f32`.
fn unpair(pair: u32) -> [f32; 2] {
    // The truncations keep the halves, as meant.
    #[allow(clippy::cast_possible_truncation)]
    let (low, high) = (pair as u16, (pair >> 16) as u16);
    [
        half::f16::from_bits(low).to_f32(),
        half::f16::from_bits(high).to_f32(),
    ]
}

/// The products of the rows (split into even and odd columns) with the
/// rows of pairs `b`, row-major (`split.len()` × `b`'s rows).
fn part_products(split: &[(Vec<f32>, Vec<f32>)], b: &[u32], per_row: usize) -> Vec<f32> {
    let outputs = b.len() / per_row.max(1);
    let mut out = vec![0.0f32; split.len() * outputs];
    pulp::Arch::new().dispatch(HalfRowProducts {
        split,
        b,
        per_row,
        out: &mut out,
    });
    out
}

struct HalfRowProducts<'a> {
    split: &'a [(Vec<f32>, Vec<f32>)],
    b: &'a [u32],
    per_row: usize,
    out: &'a mut [f32],
}

/// Rows of `a` taken together against each weight row: the widening of
/// a pair is shared by all of them, and each has two accumulators (even
/// and odd columns) held in registers.
const GROUP: usize = 4;

impl WithSimd for HalfRowProducts<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Self {
            split,
            b,
            per_row,
            out,
        } = self;
        let outputs = b.len() / per_row.max(1);
        // Groups of near-equal size (five beams: three and two).
        let groups = split.len().div_ceil(GROUP).max(1);
        let size = split.len().div_ceil(groups).max(1);
        for (g, rows) in split.chunks(size).enumerate() {
            let out = &mut out[g * size * outputs..];
            match rows {
                [a] => group_products::<S, 1>(simd, [a], b, per_row, out),
                [a, b2] => group_products::<S, 2>(simd, [a, b2], b, per_row, out),
                [a, b2, c] => group_products::<S, 3>(simd, [a, b2, c], b, per_row, out),
                [a, b2, c, d] => group_products::<S, 4>(simd, [a, b2, c, d], b, per_row, out),
                _ => {}
            }
        }
    }
}

/// `out[r · outputs + j]` = row `r` of `rows` · weight row `j` of `b`.
#[inline(always)]
fn group_products<S: Simd, const R: usize>(
    simd: S,
    rows: [&(Vec<f32>, Vec<f32>); R],
    b: &[u32],
    per_row: usize,
    out: &mut [f32],
) {
    let outputs = b.len() / per_row.max(1);
    let evens = rows.map(|r| S::as_simd_f32s(&r.0[..per_row.min(r.0.len())]));
    let odds = rows.map(|r| S::as_simd_f32s(&r.1[..per_row.min(r.1.len())]));
    for (j, b_row) in b.chunks_exact(per_row.max(1)).enumerate() {
        let (b_vectors, b_tail) = S::as_simd_u32s(b_row);
        let mut even_sums = [simd.splat_f32s(0.0); R];
        let mut odd_sums = [simd.splat_f32s(0.0); R];
        for (k, pair) in b_vectors.iter().enumerate() {
            let (low, high) = widen_pairs(simd, *pair);
            for r in 0..R {
                if let (Some(e), Some(o)) = (evens[r].0.get(k), odds[r].0.get(k)) {
                    even_sums[r] = simd.mul_add_e_f32s(*e, low, even_sums[r]);
                    odd_sums[r] = simd.mul_add_e_f32s(*o, high, odd_sums[r]);
                }
            }
        }
        for r in 0..R {
            let mut sum = simd.reduce_sum_f32s(simd.add_f32s(even_sums[r], odd_sums[r]));
            for ((pair, e), o) in b_tail.iter().zip(evens[r].1).zip(odds[r].1) {
                let [low, high] = unpair(*pair);
                sum += e * low + o * high;
            }
            if let Some(cell) = out.get_mut(r * outputs + j) {
                *cell = sum;
            }
        }
    }
}

/// The low and the high float16 of each lane's pair, in `f32`.
#[inline(always)]
fn widen_pairs<S: Simd>(simd: S, pairs: S::u32s) -> (S::f32s, S::f32s) {
    let low = simd.wrapping_dyn_shl_u32s(pairs, simd.splat_u32s(16));
    let high = simd.and_u32s(pairs, simd.splat_u32s(0xffff_0000));
    (widen_top(simd, low), widen_top(simd, high))
}

/// A float16 held in the top 16 bits of each lane (the rest zero) as
/// `f32`, exactly, for every value: the exponent is rebased from 15 to
/// 127; infinities and NaNs keep the top exponent; subnormals are made
/// normal by adding 2^-14 in the bits and taking it away in arithmetic,
/// which never puts a subnormal `f32` through the multiplier (slow on
/// some CPUs).
#[inline(always)]
fn widen_top<S: Simd>(simd: S, top: S::u32s) -> S::f32s {
    let splat = |v: u32| simd.splat_u32s(v);
    let sign = simd.and_u32s(top, splat(0x8000_0000));
    // Exponent and mantissa where an f32 has them.
    let magnitude = simd.wrapping_dyn_shr_u32s(simd.and_u32s(top, splat(0x7fff_0000)), splat(3));
    let exponent = simd.and_u32s(magnitude, splat(0x0f80_0000));
    let rebased = simd.add_u32s(magnitude, splat(112 << 23));
    let special = simd.equal_u32s(exponent, splat(0x0f80_0000));
    let rebased = simd.select_u32s(special, simd.add_u32s(rebased, splat(112 << 23)), rebased);
    let subnormal = simd.equal_u32s(exponent, splat(0));
    let renormal = simd.sub_f32s(
        simd.transmute_f32s_u32s(simd.add_u32s(rebased, splat(1 << 23))),
        simd.splat_f32s(f32::from_bits(113 << 23)),
    );
    let bits = simd.select_u32s(subnormal, simd.transmute_u32s_f32s(renormal), rebased);
    simd.transmute_f32s_u32s(simd.or_u32s(bits, sign))
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

    /// Widens every pair in `pairs` with the vector code, lows then highs.
    struct WidenAll<'a>(&'a [u32]);

    impl WithSimd for WidenAll<'_> {
        type Output = (Vec<f32>, Vec<f32>);

        #[inline(always)]
        fn with_simd<S: Simd>(self, simd: S) -> (Vec<f32>, Vec<f32>) {
            let (vectors, _) = S::as_simd_u32s(self.0);
            let lanes = std::mem::size_of::<S::f32s>() / 4;
            let mut lows = vec![0.0f32; vectors.len() * lanes];
            let mut highs = vec![0.0f32; vectors.len() * lanes];
            let (low_out, _) = S::as_mut_simd_f32s(&mut lows);
            let (high_out, _) = S::as_mut_simd_f32s(&mut highs);
            for ((pair, low), high) in vectors.iter().zip(low_out).zip(high_out) {
                (*low, *high) = widen_pairs(simd, *pair);
            }
            (lows, highs)
        }
    }

    #[test]
    fn every_float16_widens_in_vectors_to_the_value_half_gives() {
        // Each value once as the low half and once as the high half.
        let pairs: Vec<u32> = (0..=u16::MAX)
            .map(|v| u32::from(v) | (u32::from(v.reverse_bits()) << 16))
            .collect();
        let (lows, highs) = pulp::Arch::new().dispatch(WidenAll(&pairs));
        assert!(lows.len() >= 65_536 - 16, "only {} widened", lows.len());
        for (i, (low, high)) in lows.iter().zip(&highs).enumerate() {
            let v = u16::try_from(i).expect("a u16");
            for (bits, got) in [(v, low), (v.reverse_bits(), high)] {
                let want = half::f16::from_bits(bits).to_f32();
                assert!(
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                    "{bits:#06x}: {got} ({:#x}) instead of {want}",
                    got.to_bits()
                );
            }
        }
    }

    #[test]
    fn float16_products_are_the_dot_products_of_the_file_s_values() {
        for width in [1, 2, 7, 16, 33, 515] {
            for beams in 1..=8 {
                let outputs = 11;
                let b: Vec<half::f16> = crate::kernels::tests::noise(width * outputs, 3)
                    .iter()
                    .map(|v| half::f16::from_f32(v * 2.0))
                    .collect();
                let matrix = HalfRows::new(&b, outputs, width);
                let a: Vec<Vec<f32>> = (0..beams)
                    .map(|i| crate::kernels::tests::noise(width, i as u64 + 20))
                    .collect();
                let rows: Vec<&[f32]> = a.iter().map(Vec::as_slice).collect();
                for threads in [1, 2, 3] {
                    let mut out = vec![f32::NAN; beams * outputs];
                    matrix.products(&rows, threads, &mut out);
                    for i in 0..beams {
                        for j in 0..outputs {
                            let expected: f64 = a[i]
                                .iter()
                                .zip(&b[j * width..(j + 1) * width])
                                .map(|(x, y)| f64::from(*x) * f64::from(y.to_f32()))
                                .sum();
                            let got = f64::from(out[i * outputs + j]);
                            assert!(
                                (got - expected).abs() < 1e-4 * (1.0 + expected.abs()),
                                "width {width}, {beams} rows, {threads} threads, ({i}, {j}): {got} vs {expected}"
                            );
                        }
                    }
                }
                assert_eq!(matrix.row(outputs - 1).len(), width);
                assert_eq!(
                    matrix.widened(),
                    b.iter().map(|v| v.to_f32()).collect::<Vec<_>>()
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
