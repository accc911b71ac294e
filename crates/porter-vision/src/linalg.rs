//! The arithmetic that costs: convolution (as matrix products over
//! matrixmultiply's kernels through ndarray, or directly for one channel a
//! group) and matrix products.

// Matrix and convolution code names its sizes as the formulas do (`m`,
// `k`, `n`; `c`, `h`, `w`).
#![allow(clippy::many_single_char_names)]

use ndarray::{ArrayView2, ArrayViewMut2};

use crate::tensor::{Tensor, elements};

/// A convolution's geometry, from its node's attributes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConvShape {
    pub group: usize,
    pub strides: [usize; 2],
    /// Top, left, bottom, right.
    pub pads: [usize; 4],
    pub dilations: [usize; 2],
}

/// `c = a · b` for row-major `a` (`m`×`k`) and `b` (`k`×`n`), into `c`.
/// A product by one row or one column (every matrix product of a decoding
/// pass) is done here, reading each operand once: matrixmultiply would
/// first copy the whole weight matrix into its packed layout.
fn gemm(a: &[f32], b: &[f32], c: &mut [f32], m: usize, k: usize, n: usize) -> Result<(), String> {
    if a.len() != m * k || b.len() != k * n || c.len() != m * n {
        return Err("a matrix product of mismatched sizes".to_owned());
    }
    if m == 1 && n > 0 {
        c.fill(0.0);
        for (x, row) in a.iter().zip(b.chunks_exact(n)) {
            for (out, y) in c.iter_mut().zip(row) {
                *out += x * y;
            }
        }
        return Ok(());
    }
    if n == 1 && k > 0 {
        for (out, row) in c.iter_mut().zip(a.chunks_exact(k)) {
            *out = dot(row, b);
        }
        return Ok(());
    }
    let shape_error = |e: ndarray::ShapeError| format!("a matrix product: {e}");
    let a = ArrayView2::from_shape((m, k), a).map_err(shape_error)?;
    let b = ArrayView2::from_shape((k, n), b).map_err(shape_error)?;
    let mut c = ArrayViewMut2::from_shape((m, n), c).map_err(shape_error)?;
    ndarray::linalg::general_mat_mul(1.0, &a, &b, 0.0, &mut c);
    Ok(())
}

/// `Σ a_i b_i` in eight running sums, so it is summed in vector lanes.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let (a8, b8) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = a8
        .remainder()
        .iter()
        .zip(b8.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in a8.zip(b8) {
        for i in 0..8 {
            lanes[i] += x[i] * y[i];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// One output dimension of a convolution.
fn out_size(
    input: usize,
    kernel: usize,
    stride: usize,
    dilation: usize,
    pads: usize,
) -> Option<usize> {
    let reach = dilation
        .checked_mul(kernel.checked_sub(1)?)?
        .checked_add(1)?;
    let padded = input.checked_add(pads)?;
    Some(padded.checked_sub(reach)? / stride.max(1) + 1)
}

/// A 2-D convolution of `x` (`[n, c, h, w]`) by `weight` (`[m, c/group,
/// kh, kw]`), plus `bias` (`[m]`) when given.
pub(crate) fn conv(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    geometry: &ConvShape,
) -> Result<Tensor, String> {
    let (&[n, c, h, w], &[m, cg, kh, kw]) = (&x.shape[..], &weight.shape[..]) else {
        return Err("Conv takes a 4-D picture and 4-D weights".to_owned());
    };
    let ConvShape {
        group,
        strides,
        pads,
        dilations,
    } = *geometry;
    if group == 0
        || c != cg * group
        || m % group != 0
        || strides.contains(&0)
        || dilations.contains(&0)
    {
        return Err(format!(
            "Conv of {c} channels by weights {:?} in {group} groups",
            weight.shape
        ));
    }
    let oh = out_size(h, kh, strides[0], dilations[0], pads[0] + pads[2])
        .ok_or("Conv larger than its input")?;
    let ow = out_size(w, kw, strides[1], dilations[1], pads[1] + pads[3])
        .ok_or("Conv larger than its input")?;
    let shape = vec![n, m, oh, ow];
    let mut out = vec![0f32; elements(&shape)?];
    let (xs, ws) = (x.as_f32("Conv")?, weight.as_f32("Conv")?);
    let plane = oh * ow;
    let pointwise = kh == 1 && kw == 1 && strides == [1, 1] && pads == [0; 4] && group == 1;
    for b in 0..n {
        let input = &xs[b * c * h * w..(b + 1) * c * h * w];
        let output = &mut out[b * m * plane..(b + 1) * m * plane];
        if pointwise {
            gemm(ws, input, output, m, c, plane)?;
        } else if cg == 1 && m == group {
            depthwise(input, ws, output, [h, w, oh, ow, kh, kw], geometry);
        } else {
            let (mg, k) = (m / group, cg * kh * kw);
            let mut columns = vec![0f32; elements(&[k, plane])?];
            for g in 0..group {
                let channels = &input[g * cg * h * w..(g + 1) * cg * h * w];
                im2col(channels, &mut columns, [cg, h, w, oh, ow, kh, kw], geometry);
                gemm(
                    &ws[g * mg * k..(g + 1) * mg * k],
                    &columns,
                    &mut output[g * mg * plane..(g + 1) * mg * plane],
                    mg,
                    k,
                    plane,
                )?;
            }
        }
    }
    if let Some(bias) = bias {
        let bias = bias.as_f32("Conv's bias")?;
        if bias.len() != m {
            return Err("Conv's bias does not match its outputs".to_owned());
        }
        for (channel, values) in out.chunks_exact_mut(plane.max(1)).enumerate() {
            let add = bias[channel % m];
            for v in values.iter_mut() {
                *v += add;
            }
        }
    }
    Tensor::floats(shape, out)
}

/// The output positions `lo..hi` along one axis whose input position
/// `o * stride + offset - pad` falls inside `0..size`.
fn inside(size: usize, out: usize, stride: usize, offset: usize, pad: usize) -> (usize, usize) {
    // o * stride + offset >= pad  and  o * stride + offset < size + pad.
    let lo = pad.saturating_sub(offset).div_ceil(stride);
    let hi = if size + pad > offset {
        (size + pad - offset).div_ceil(stride)
    } else {
        0
    };
    (lo.min(out), hi.min(out).max(lo.min(out)))
}

/// A convolution of one channel a group: each channel by its own kernel,
/// one output row at a time (every tap of the kernel added into it while
/// it is in cache), the inner loop over contiguous output.
fn depthwise(input: &[f32], weights: &[f32], output: &mut [f32], dims: [usize; 6], g: &ConvShape) {
    let [h, w, oh, ow, kh, kw] = dims;
    let ([sy, sx], [dy, dx]) = (g.strides, g.dilations);
    let (top, left) = (g.pads[0], g.pads[1]);
    // For each column of the kernel: the output columns it reaches and the
    // input column of the first.
    let columns: Vec<(usize, usize, usize)> = (0..kw)
        .map(|kx| {
            let (lo, hi) = inside(w, ow, sx, kx * dx, left);
            (lo, hi, (lo * sx + kx * dx).saturating_sub(left))
        })
        .collect();
    let y_ranges: Vec<(usize, usize)> = (0..kh).map(|ky| inside(h, oh, sy, ky * dy, top)).collect();
    for ((plane_in, kernel), plane_out) in input
        .chunks_exact(h * w)
        .zip(weights.chunks_exact(kh * kw))
        .zip(output.chunks_exact_mut(oh * ow))
    {
        for (oy, row_out) in plane_out.chunks_exact_mut(ow).enumerate() {
            for (ky, (y_lo, y_hi)) in y_ranges.iter().enumerate() {
                if oy < *y_lo || oy >= *y_hi {
                    continue;
                }
                let iy = oy * sy + ky * dy - top;
                let row_in = &plane_in[iy * w..(iy + 1) * w];
                for (&(x_lo, x_hi, first), weight) in
                    columns.iter().zip(&kernel[ky * kw..(ky + 1) * kw])
                {
                    if x_lo >= x_hi {
                        continue;
                    }
                    let out = &mut row_out[x_lo..x_hi];
                    if sx == 1 {
                        let source = &row_in[first..first + (x_hi - x_lo)];
                        for (o, i) in out.iter_mut().zip(source) {
                            *o += weight * i;
                        }
                    } else {
                        for (o, i) in out.iter_mut().zip(row_in[first..].iter().step_by(sx)) {
                            *o += weight * i;
                        }
                    }
                }
            }
        }
    }
}

/// The patches a kernel sees, one row per (channel, ky, kx) and one column
/// per output position, zero where the kernel reaches into the padding.
fn im2col(input: &[f32], columns: &mut [f32], dims: [usize; 7], g: &ConvShape) {
    let [c, h, w, oh, ow, kh, kw] = dims;
    let ([sy, sx], [dy, dx]) = (g.strides, g.dilations);
    let (top, left) = (g.pads[0], g.pads[1]);
    columns.fill(0.0);
    for channel in 0..c {
        let plane_in = &input[channel * h * w..(channel + 1) * h * w];
        for ky in 0..kh {
            let (y_lo, y_hi) = inside(h, oh, sy, ky * dy, top);
            for kx in 0..kw {
                let row = (channel * kh + ky) * kw + kx;
                let target = &mut columns[row * oh * ow..(row + 1) * oh * ow];
                let (x_lo, x_hi) = inside(w, ow, sx, kx * dx, left);
                if x_lo >= x_hi {
                    continue;
                }
                for oy in y_lo..y_hi {
                    let iy = oy * sy + ky * dy - top;
                    let row_in = &plane_in[iy * w..(iy + 1) * w];
                    let first = x_lo * sx + kx * dx - left;
                    let out = &mut target[oy * ow + x_lo..oy * ow + x_hi];
                    for (o, i) in out.iter_mut().zip(row_in[first..].iter().step_by(sx)) {
                        *o = *i;
                    }
                }
            }
        }
    }
}

/// numpy's `matmul` of two float values: the last two axes multiplied,
/// the others broadcast; a 1-D operand is a row (left) or a column (right).
pub(crate) fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor, String> {
    let (av, bv) = (a.as_f32("MatMul")?, b.as_f32("MatMul")?);
    let mut ashape = a.shape.clone();
    let mut bshape = b.shape.clone();
    let (row, column) = (ashape.len() == 1, bshape.len() == 1);
    if row {
        ashape.insert(0, 1);
    }
    if column {
        bshape.push(1);
    }
    if ashape.len() < 2 || bshape.len() < 2 {
        return Err("MatMul of a scalar".to_owned());
    }
    let (m, k) = (ashape[ashape.len() - 2], ashape[ashape.len() - 1]);
    let (k2, n) = (bshape[bshape.len() - 2], bshape[bshape.len() - 1]);
    if k != k2 {
        return Err(format!("MatMul of shapes {:?} and {:?}", a.shape, b.shape));
    }
    let batch_a = &ashape[..ashape.len() - 2];
    let batch_b = &bshape[..bshape.len() - 2];
    let batch = crate::tensor::broadcast(batch_a, batch_b)?;
    let ia = crate::tensor::broadcast_indices(batch_a, &batch);
    let ib = crate::tensor::broadcast_indices(batch_b, &batch);
    let mut shape = batch.clone();
    shape.extend([m, n]);
    let mut out = vec![0f32; elements(&shape)?];
    for (i, (x, y)) in ia.iter().zip(&ib).enumerate() {
        gemm(
            &av[x * m * k..(x + 1) * m * k],
            &bv[y * k * n..(y + 1) * k * n],
            &mut out[i * m * n..(i + 1) * m * n],
            m,
            k,
            n,
        )?;
    }
    if row {
        shape.remove(shape.len() - 2);
    }
    if column {
        shape.pop();
    }
    Tensor::floats(shape, out)
}
