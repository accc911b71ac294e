//! The network's inner loops, written so that the compiler turns them into
//! vector instructions on any x86-64 or ARM CPU (no `unsafe`, no run-time
//! feature checks): an `exp` without a library call, the GELU built on
//! it, and maxima and sums in eight lanes. The decoder's dot products are
//! in `simd`, in the CPU's own widest vectors.
//!
//! Why these: the profile of a 10 s clip had a quarter of the CPU time in
//! libm's `expf` (the encoder's softmax over 1,500 × 1,500 scores per head,
//! and GELU in `f64`) and in one-element-at-a-time dot products. (The
//! output projection held in 8 bits, 20 MB read per token instead of 80,
//! took another 10% of CPU off, and changed the words of 6 of 23 bench
//! clips, raising WER from 0.202 to 0.206: left out.)

/// Below this, `exp` is 0 (`e^-86.9` is near the smallest normal `f32`).
pub(crate) const EXP_LOWEST: f32 = -86.9;
/// Above this, `exp` would overflow; it is held there.
pub(crate) const EXP_HIGHEST: f32 = 88.7;

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

/// Lanes of the running maxima and sums.
const LANES: usize = 8;

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

/// The largest magnitude (0 for none, NaN ignored), in lanes.
#[inline]
pub(crate) fn largest_magnitude(values: &[f32]) -> f32 {
    let mut lanes = [0.0f32; LANES];
    let chunks = values.chunks_exact(LANES);
    let tail = chunks
        .remainder()
        .iter()
        .fold(0.0f32, |m, v| m.max(v.abs()));
    for x in chunks {
        for i in 0..LANES {
            lanes[i] = lanes[i].max(x[i].abs());
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

/// The indices of the `k` largest values (all of them if there are no
/// more), in no particular order; of equal values at the cut, the first.
pub(crate) fn largest_indices(values: &[f32], k: usize) -> Vec<usize> {
    if k >= values.len() {
        return (0..values.len()).collect();
    }
    if k == 0 {
        return Vec::new();
    }
    let mut order = values.to_vec();
    let (_, cut, _) = order.select_nth_unstable_by(values.len() - k, f32::total_cmp);
    let cut = *cut;
    let mut above: Vec<usize> = (0..values.len())
        .filter(|i| values[*i].total_cmp(&cut).is_gt())
        .collect();
    above.extend(
        (0..values.len())
            .filter(|i| values[*i].total_cmp(&cut).is_eq())
            .take(k - above.len()),
    );
    above
}

/// `v = e^(v·scale − shift)` for every value, in place.
#[inline]
pub(crate) fn exp_in_place(values: &mut [f32], scale: f32, shift: f32) {
    for v in values {
        *v = exp(*v * scale - shift);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn largest_indices_are_those_of_the_k_largest_values() {
        let values = noise(1000, 3);
        for k in [0, 1, 5, 64, 999, 1000, 2000] {
            let mut got = largest_indices(&values, k);
            got.sort_unstable();
            let mut order: Vec<usize> = (0..values.len()).collect();
            order.sort_by(|a, b| values[*b].total_cmp(&values[*a]));
            let mut expected = order[..k.min(values.len())].to_vec();
            expected.sort_unstable();
            assert_eq!(got, expected, "k = {k}");
        }
        // Ties at the cut: the first of them.
        assert_eq!(largest_indices(&[1.0, 2.0, 2.0, 2.0, 0.0], 2).len(), 2);
        let mut tied = largest_indices(&[1.0, 3.0, 2.0, 2.0, 2.0], 3);
        tied.sort_unstable();
        assert_eq!(tied, vec![1, 2, 3]);
    }

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
}
