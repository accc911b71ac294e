//! The operators the table model uses, each read from its node once (its
//! attributes checked at load) and run on values.

use std::sync::Arc;

use crate::linalg::{self, ConvShape};
use crate::onnx::Node;
use crate::shape;
use crate::tensor::{Data, Tensor, axis, broadcast, broadcast_indices, elements};

/// An elementwise operator of two values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binary {
    Add,
    Sub,
    Mul,
    Min,
    Equal,
    Less,
    And,
}

/// An elementwise operator of one float value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Unary {
    Relu,
    Sigmoid,
    Tanh,
    HardSigmoid { alpha: f32, beta: f32 },
    HardSwish,
}

/// One node's operator with its attributes.
#[derive(Debug, Clone)]
pub(crate) enum Op {
    Conv(ConvShape),
    BatchNorm {
        epsilon: f32,
    },
    Unary(Unary),
    Binary(Binary),
    Not,
    GlobalAveragePool,
    Softmax {
        axis: i64,
    },
    MatMul,
    Cast {
        to: i64,
    },
    ConstantOfShape {
        value: Tensor,
    },
    Shape,
    Reshape,
    Squeeze,
    Unsqueeze,
    Concat {
        axis: i64,
    },
    Split {
        axis: i64,
    },
    Slice,
    Transpose {
        perm: Option<Vec<i64>>,
    },
    Gather {
        axis: i64,
    },
    Expand,
    Tile,
    Range,
    ScatterElements {
        axis: i64,
    },
    OneHot {
        axis: i64,
    },
    ArgMax {
        axis: i64,
        keep: bool,
        last: bool,
    },
    Reduce {
        max: bool,
        axes: Option<Vec<i64>>,
        keep: bool,
    },
    ResizeNearest,
    Identity,
}

fn pair(values: Option<&[i64]>, default: usize) -> Result<[usize; 2], String> {
    match values {
        None => Ok([default; 2]),
        Some(&[a, b]) => Ok([to_usize(a)?, to_usize(b)?]),
        Some(other) => Err(format!("a 2-D Conv with {other:?}")),
    }
}

fn to_usize(v: i64) -> Result<usize, String> {
    usize::try_from(v).map_err(|_| format!("a size of {v}"))
}

impl Op {
    /// The operator of `node`, or why porter does not run it.
    pub fn of(node: &Node) -> Result<Self, String> {
        let op = match node.op.as_str() {
            "Conv" => {
                if node.text("auto_pad").is_some_and(|p| p != "NOTSET") {
                    return Err("a Conv with auto_pad".to_owned());
                }
                let pads = match node.ints("pads") {
                    None => [0; 4],
                    Some(&[t, l, b, r]) => [to_usize(t)?, to_usize(l)?, to_usize(b)?, to_usize(r)?],
                    Some(other) => return Err(format!("a Conv with pads {other:?}")),
                };
                Self::Conv(ConvShape {
                    group: to_usize(node.int("group", 1))?,
                    strides: pair(node.ints("strides"), 1)?,
                    pads,
                    dilations: pair(node.ints("dilations"), 1)?,
                })
            }
            "BatchNormalization" => Self::BatchNorm {
                epsilon: node.float("epsilon", 1e-5),
            },
            "Relu" => Self::Unary(Unary::Relu),
            "Sigmoid" => Self::Unary(Unary::Sigmoid),
            "Tanh" => Self::Unary(Unary::Tanh),
            "HardSwish" => Self::Unary(Unary::HardSwish),
            "HardSigmoid" => Self::Unary(Unary::HardSigmoid {
                alpha: node.float("alpha", 0.2),
                beta: node.float("beta", 0.5),
            }),
            "Add" => Self::Binary(Binary::Add),
            "Sub" => Self::Binary(Binary::Sub),
            "Mul" => Self::Binary(Binary::Mul),
            "Min" => Self::Binary(Binary::Min),
            "Equal" => Self::Binary(Binary::Equal),
            "Less" => Self::Binary(Binary::Less),
            "And" => Self::Binary(Binary::And),
            "Not" => Self::Not,
            "GlobalAveragePool" => Self::GlobalAveragePool,
            "Softmax" => Self::Softmax {
                axis: node.int("axis", -1),
            },
            "MatMul" => Self::MatMul,
            "Cast" => Self::Cast {
                to: node.int("to", 0),
            },
            "ConstantOfShape" => Self::ConstantOfShape {
                value: node
                    .attribute("value")
                    .and_then(|a| a.tensor.clone())
                    .unwrap_or(Tensor::floats(vec![1], vec![0.0])?),
            },
            "Shape" => Self::Shape,
            "Reshape" => {
                if node.int("allowzero", 0) != 0 {
                    return Err("a Reshape with allowzero".to_owned());
                }
                Self::Reshape
            }
            "Squeeze" => Self::Squeeze,
            "Unsqueeze" => Self::Unsqueeze,
            "Concat" => Self::Concat {
                axis: node.int("axis", 0),
            },
            "Split" => Self::Split {
                axis: node.int("axis", 0),
            },
            "Slice" => Self::Slice,
            "Transpose" => Self::Transpose {
                perm: node.ints("perm").map(<[i64]>::to_vec),
            },
            "Gather" => Self::Gather {
                axis: node.int("axis", 0),
            },
            "Expand" => Self::Expand,
            "Tile" => Self::Tile,
            "Range" => Self::Range,
            "ScatterElements" => {
                if node.text("reduction").is_some_and(|r| r != "none") {
                    return Err("a ScatterElements with a reduction".to_owned());
                }
                Self::ScatterElements {
                    axis: node.int("axis", 0),
                }
            }
            "OneHot" => Self::OneHot {
                axis: node.int("axis", -1),
            },
            "ArgMax" => Self::ArgMax {
                axis: node.int("axis", 0),
                keep: node.int("keepdims", 1) != 0,
                last: node.int("select_last_index", 0) != 0,
            },
            "ReduceMax" | "ReduceMin" => Self::Reduce {
                max: node.op == "ReduceMax",
                axes: node.ints("axes").map(<[i64]>::to_vec),
                keep: node.int("keepdims", 1) != 0,
            },
            "Resize" => {
                let nearest = node.text("mode").unwrap_or("nearest") == "nearest"
                    && node.text("coordinate_transformation_mode") == Some("asymmetric")
                    && node.text("nearest_mode") == Some("floor");
                if !nearest {
                    return Err("a Resize other than nearest, asymmetric, floor".to_owned());
                }
                Self::ResizeNearest
            }
            "Identity" => Self::Identity,
            other => return Err(format!("the operator {other}, which porter does not run")),
        };
        Ok(op)
    }

    /// Whether the operator maps one float value to one of the same shape
    /// (so it may work in place on a value no one else reads).
    pub fn unary(&self) -> Option<Unary> {
        match self {
            Self::Unary(u) => Some(*u),
            _ => None,
        }
    }
}

pub(crate) type Value = Arc<Tensor>;

/// The input at `i`, or an error when it was left out.
fn input<'a>(inputs: &'a [Option<Value>], i: usize, op: &Op) -> Result<&'a Tensor, String> {
    inputs
        .get(i)
        .and_then(Option::as_deref)
        .ok_or_else(|| format!("{op:?} lacks its input {i}"))
}

fn optional(inputs: &[Option<Value>], i: usize) -> Option<&Tensor> {
    inputs.get(i).and_then(Option::as_deref)
}

/// Runs `op` on `inputs`, making `outputs` values.
pub(crate) fn run(
    op: &Op,
    inputs: &[Option<Value>],
    outputs: usize,
) -> Result<Vec<Tensor>, String> {
    let x = |i| input(inputs, i, op);
    let one = |t: Tensor| Ok(vec![t]);
    match op {
        Op::Conv(geometry) => one(linalg::conv(x(0)?, x(1)?, optional(inputs, 2), geometry)?),
        Op::BatchNorm { epsilon } => {
            one(batch_norm(x(0)?, [x(1)?, x(2)?, x(3)?, x(4)?], *epsilon)?)
        }
        Op::Unary(u) => {
            let mut t = x(0)?.clone();
            apply(*u, &mut t)?;
            one(t)
        }
        Op::Binary(b) => one(binary(*b, x(0)?, x(1)?)?),
        Op::Not => match &x(0)?.data {
            Data::Bool(v) => one(Tensor::new(
                x(0)?.shape.clone(),
                Data::Bool(v.iter().map(|b| !b).collect()),
            )?),
            _ => Err("Not takes booleans".to_owned()),
        },
        Op::GlobalAveragePool => one(global_average(x(0)?)?),
        Op::Softmax { axis } => one(softmax(x(0)?, *axis)?),
        Op::MatMul => one(linalg::matmul(x(0)?, x(1)?)?),
        Op::Cast { to } => one(cast(x(0)?, *to)?),
        Op::ConstantOfShape { value } => {
            let dims = shape::dims(x(0)?)?;
            let count = elements(&dims)?;
            let data = match &value.data {
                Data::F32(v) => Data::F32(vec![v.first().copied().unwrap_or(0.0); count]),
                Data::I64(v) => Data::I64(vec![v.first().copied().unwrap_or(0); count]),
                Data::Bool(v) => Data::Bool(vec![v.first().copied().unwrap_or(false); count]),
            };
            one(Tensor::new(dims, data)?)
        }
        Op::Shape => {
            let dims = &x(0)?.shape;
            let values = dims
                .iter()
                .map(|d| i64::try_from(*d).unwrap_or(i64::MAX))
                .collect();
            one(Tensor::ints(vec![dims.len()], values)?)
        }
        Op::Reshape => one(shape::reshape(x(0)?, x(1)?)?),
        Op::Squeeze => one(shape::squeeze(x(0)?, optional(inputs, 1))?),
        Op::Unsqueeze => one(shape::unsqueeze(x(0)?, x(1)?)?),
        Op::Concat { axis } => {
            let parts = (0..inputs.len()).map(x).collect::<Result<Vec<_>, _>>()?;
            one(shape::concat(&parts, *axis)?)
        }
        Op::Split { axis } => shape::split(x(0)?, optional(inputs, 1), *axis, outputs),
        Op::Slice => one(shape::slice(
            x(0)?,
            x(1)?,
            x(2)?,
            optional(inputs, 3),
            optional(inputs, 4),
        )?),
        Op::Transpose { perm } => one(shape::transpose(x(0)?, perm.as_deref())?),
        Op::Gather { axis } => one(shape::gather(x(0)?, x(1)?, *axis)?),
        Op::Expand => {
            let t = x(0)?;
            let target = broadcast(&t.shape, &shape::dims(x(1)?)?)?;
            let indices = broadcast_indices(&t.shape, &target);
            one(Tensor::new(target, t.data.take(&indices))?)
        }
        Op::Tile => one(shape::tile(x(0)?, x(1)?)?),
        Op::Range => one(range(x(0)?, x(1)?, x(2)?)?),
        Op::ScatterElements { axis } => one(shape::scatter(x(0)?, x(1)?, x(2)?, *axis)?),
        Op::OneHot { axis } => one(one_hot(x(0)?, x(1)?, x(2)?, *axis)?),
        Op::ArgMax { axis, keep, last } => one(arg_max(x(0)?, *axis, *keep, *last)?),
        Op::Reduce { max, axes, keep } => one(reduce(x(0)?, *max, axes.as_deref(), *keep)?),
        Op::ResizeNearest => one(shape::resize_nearest(
            x(0)?,
            optional(inputs, 2),
            optional(inputs, 3),
        )?),
        Op::Identity => one(x(0)?.clone()),
    }
}

/// Applies an elementwise float operator in place.
pub(crate) fn apply(op: Unary, t: &mut Tensor) -> Result<(), String> {
    let Data::F32(values) = &mut t.data else {
        return Err(format!("{op:?} takes floats"));
    };
    match op {
        Unary::Relu => values.iter_mut().for_each(|v| *v = v.max(0.0)),
        Unary::Sigmoid => values.iter_mut().for_each(|v| *v = 1.0 / (1.0 + exp(-*v))),
        Unary::Tanh => values.iter_mut().for_each(|v| *v = tanh(*v)),
        Unary::HardSigmoid { alpha, beta } => values
            .iter_mut()
            .for_each(|v| *v = (alpha * *v + beta).clamp(0.0, 1.0)),
        Unary::HardSwish => values
            .iter_mut()
            .for_each(|v| *v *= (*v * (1.0 / 6.0) + 0.5).clamp(0.0, 1.0)),
    }
    Ok(())
}

/// `e^x` to within a few units in the last place, in plain arithmetic
/// the compiler turns into vector instructions (the C library's `expf`
/// and `tanhf` are calls, one value at a time, and were a quarter of a
/// table's time in the decoder's attention): `x = n ln 2 + r` with `|r| <=
/// ln 2 / 2`, `e^r` by its Taylor series to the 7th power (error under
/// 2e-8), times `2^n` built in the exponent bits.
fn exp(x: f32) -> f32 {
    // `1.5 * 2^23`: adding it rounds to an integer, which is then the low
    // bits of the sum's bit pattern (`ROUND_BITS + n`).
    const ROUND: f32 = 12_582_912.0;
    const ROUND_BITS: u32 = 0x4B40_0000;
    const LN2_HIGH: f32 = 0.693_145_75;
    const LN2_LOW: f32 = 1.428_606_8e-6;
    let x = x.clamp(-87.0, 88.0);
    let rounded = x * std::f32::consts::LOG2_E + ROUND;
    let n = rounded - ROUND;
    let r = x - n * LN2_HIGH - n * LN2_LOW;
    let series = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0
                    + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r / 5040.0))))));
    // `2^n`: the exponent field `n + 127`.
    let scale = f32::from_bits(rounded.to_bits().wrapping_sub(ROUND_BITS).wrapping_add(127) << 23);
    series * scale
}

/// `tanh x = 1 - 2 / (e^{2x} + 1)`, within 1e-7 of it (absolute; beyond
/// |x| = 9 it is 1 in single precision).
fn tanh(x: f32) -> f32 {
    let x = x.clamp(-9.0, 9.0);
    1.0 - 2.0 / (exp(2.0 * x) + 1.0)
}

/// Elementwise `f` over two values broadcast together.
fn zip<A: Copy, B: Copy, C>(
    a: (&[usize], &[A]),
    b: (&[usize], &[B]),
    f: impl Fn(A, B) -> C,
) -> Result<(Vec<usize>, Vec<C>), String> {
    if a.0 == b.0 {
        return Ok((
            a.0.to_vec(),
            a.1.iter().zip(b.1).map(|(x, y)| f(*x, *y)).collect(),
        ));
    }
    let shape = broadcast(a.0, b.0)?;
    let total = elements(&shape)?;
    if b.1.len() == 1 && a.1.len() == total {
        let y = b.1[0];
        return Ok((shape, a.1.iter().map(|x| f(*x, y)).collect()));
    }
    // The common broadcasts in a network: a value of the full shape with a
    // row repeated down it (a bias), or with one value per channel.
    if a.1.len() == total {
        if let Some(repeat) = trailing(b.0, &shape) {
            let mut values = Vec::with_capacity(total);
            for chunk in a.1.chunks(repeat) {
                values.extend(chunk.iter().zip(b.1).map(|(x, y)| f(*x, *y)));
            }
            return Ok((shape, values));
        }
        if let Some(inner) = leading(b.0, &shape) {
            let mut values = Vec::with_capacity(total);
            for (chunk, y) in a.1.chunks(inner).zip(b.1) {
                values.extend(chunk.iter().map(|x| f(*x, *y)));
            }
            return Ok((shape, values));
        }
    }
    let (ia, ib) = (
        broadcast_indices(a.0, &shape),
        broadcast_indices(b.0, &shape),
    );
    let values = ia
        .iter()
        .zip(&ib)
        .map(|(i, j)| f(a.1[*i], b.1[*j]))
        .collect();
    Ok((shape, values))
}

/// When `from`, aligned to the right of `out`, is 1s and then `out`'s last
/// axes: how many elements it holds (it repeats every that many).
fn trailing(from: &[usize], out: &[usize]) -> Option<usize> {
    let offset = out.len().checked_sub(from.len())?;
    let first = from.iter().position(|d| *d != 1).unwrap_or(from.len());
    (from[first..] == out[offset + first..]).then(|| from.iter().product::<usize>().max(1))
}

/// When `from`, aligned to the right of `out`, is `out`'s first axes and
/// then 1s: how many output elements share each of its elements.
fn leading(from: &[usize], out: &[usize]) -> Option<usize> {
    let offset = out.len().checked_sub(from.len())?;
    if out[..offset].iter().any(|d| *d != 1) {
        return None;
    }
    let last = from.iter().rposition(|d| *d != 1).map_or(0, |p| p + 1);
    (from[..last] == out[offset..offset + last])
        .then(|| out[offset + last..].iter().product::<usize>().max(1))
}

fn binary(op: Binary, a: &Tensor, b: &Tensor) -> Result<Tensor, String> {
    let (sa, sb) = (&a.shape[..], &b.shape[..]);
    let (shape, data) = match (&a.data, &b.data) {
        (Data::F32(x), Data::F32(y)) => match op {
            Binary::Add => wrap(zip((sa, x), (sb, y), |p, q| p + q)?, Data::F32),
            Binary::Sub => wrap(zip((sa, x), (sb, y), |p, q| p - q)?, Data::F32),
            Binary::Mul => wrap(zip((sa, x), (sb, y), |p, q| p * q)?, Data::F32),
            Binary::Min => wrap(zip((sa, x), (sb, y), f32::min)?, Data::F32),
            // ONNX's Equal of floats is exact equality.
            #[allow(clippy::float_cmp)]
            Binary::Equal => wrap(zip((sa, x), (sb, y), |p, q| p == q)?, Data::Bool),
            Binary::Less => wrap(zip((sa, x), (sb, y), |p, q| p < q)?, Data::Bool),
            Binary::And => return Err("And takes booleans".to_owned()),
        },
        (Data::I64(x), Data::I64(y)) => match op {
            Binary::Add => wrap(zip((sa, x), (sb, y), i64::wrapping_add)?, Data::I64),
            Binary::Sub => wrap(zip((sa, x), (sb, y), i64::wrapping_sub)?, Data::I64),
            Binary::Mul => wrap(zip((sa, x), (sb, y), i64::wrapping_mul)?, Data::I64),
            Binary::Min => wrap(zip((sa, x), (sb, y), i64::min)?, Data::I64),
            Binary::Equal => wrap(zip((sa, x), (sb, y), |p, q| p == q)?, Data::Bool),
            Binary::Less => wrap(zip((sa, x), (sb, y), |p, q| p < q)?, Data::Bool),
            Binary::And => return Err("And takes booleans".to_owned()),
        },
        (Data::Bool(x), Data::Bool(y)) => match op {
            Binary::And => wrap(zip((sa, x), (sb, y), |p, q| p && q)?, Data::Bool),
            Binary::Equal => wrap(zip((sa, x), (sb, y), |p, q| p == q)?, Data::Bool),
            _ => return Err(format!("{op:?} of booleans")),
        },
        _ => return Err(format!("{op:?} of values of two kinds")),
    };
    Tensor::new(shape, data)
}

fn wrap<T>(made: (Vec<usize>, Vec<T>), kind: fn(Vec<T>) -> Data) -> (Vec<usize>, Data) {
    (made.0, kind(made.1))
}

/// `BatchNormalization` in inference: per channel (axis 1), scaled and
/// shifted by the statistics it was trained with.
fn batch_norm(x: &Tensor, params: [&Tensor; 4], epsilon: f32) -> Result<Tensor, String> {
    let (scale, shift) = batch_norm_affine(params, epsilon)?;
    let channels = scale.len();
    if x.shape.get(1) != Some(&channels) {
        return Err("BatchNormalization's statistics do not match its input".to_owned());
    }
    let inner: usize = x.shape[2..].iter().product();
    let mut out = x.as_f32("BatchNormalization")?.to_vec();
    for (i, chunk) in out.chunks_exact_mut(inner.max(1)).enumerate() {
        let (a, b) = (scale[i % channels], shift[i % channels]);
        for v in chunk.iter_mut() {
            *v = *v * a + b;
        }
    }
    Tensor::floats(x.shape.clone(), out)
}

/// The per-channel `y = x * scale + shift` a batch normalisation amounts
/// to, from its `[gamma, beta, mean, variance]`.
pub(crate) fn batch_norm_affine(
    params: [&Tensor; 4],
    epsilon: f32,
) -> Result<(Vec<f32>, Vec<f32>), String> {
    let [gamma, beta, mean, variance] = params.map(|p| p.as_f32("BatchNormalization"));
    let (gamma, beta, mean, variance) = (gamma?, beta?, mean?, variance?);
    let n = gamma.len();
    if beta.len() != n || mean.len() != n || variance.len() != n {
        return Err("BatchNormalization's statistics differ in length".to_owned());
    }
    let scale: Vec<f32> = (0..n)
        .map(|i| gamma[i] / (variance[i] + epsilon).sqrt())
        .collect();
    let shift = (0..n).map(|i| beta[i] - mean[i] * scale[i]).collect();
    Ok((scale, shift))
}

fn global_average(x: &Tensor) -> Result<Tensor, String> {
    if x.shape.len() < 3 {
        return Err("GlobalAveragePool of a value of rank below 3".to_owned());
    }
    let inner: usize = x.shape[2..].iter().product();
    let values = x.as_f32("GlobalAveragePool")?;
    let out = values
        .chunks_exact(inner.max(1))
        .map(|c| c.iter().sum::<f32>() / inner.max(1) as f32)
        .collect();
    let mut shape = x.shape[..2].to_vec();
    shape.extend(std::iter::repeat_n(1, x.shape.len() - 2));
    Tensor::floats(shape, out)
}

fn softmax(x: &Tensor, axis_value: i64) -> Result<Tensor, String> {
    let a = axis(axis_value, x.shape.len())?;
    let (n, inner) = (x.shape[a], x.shape[a + 1..].iter().product::<usize>());
    let mut out = x.as_f32("Softmax")?.to_vec();
    if n == 0 || inner == 0 {
        return Tensor::floats(x.shape.clone(), out);
    }
    for block in out.chunks_exact_mut(n * inner) {
        for j in 0..inner {
            let max = (0..n)
                .map(|i| block[i * inner + j])
                .fold(f32::NEG_INFINITY, f32::max);
            let mut sum = 0f32;
            for i in 0..n {
                let e = exp(block[i * inner + j] - max);
                block[i * inner + j] = e;
                sum += e;
            }
            for i in 0..n {
                block[i * inner + j] /= sum;
            }
        }
    }
    Tensor::floats(x.shape.clone(), out)
}

/// ONNX's element type numbers: float, int32, int64, bool.
fn cast(x: &Tensor, to: i64) -> Result<Tensor, String> {
    #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
    let data = match (&x.data, to) {
        (Data::F32(v), 1) => Data::F32(v.clone()),
        (Data::F32(v), 6) => Data::I64(v.iter().map(|f| i64::from(*f as i32)).collect()),
        (Data::F32(v), 7) => Data::I64(v.iter().map(|f| *f as i64).collect()),
        (Data::F32(v), 9) => Data::Bool(v.iter().map(|f| *f != 0.0).collect()),
        (Data::I64(v), 1) => Data::F32(v.iter().map(|i| *i as f32).collect()),
        (Data::I64(v), 6) => Data::I64(v.iter().map(|i| i64::from(*i as i32)).collect()),
        (Data::I64(v), 7) => Data::I64(v.clone()),
        (Data::I64(v), 9) => Data::Bool(v.iter().map(|i| *i != 0).collect()),
        (Data::Bool(v), 1) => Data::F32(v.iter().map(|b| f32::from(u8::from(*b))).collect()),
        (Data::Bool(v), 6 | 7) => Data::I64(v.iter().map(|b| i64::from(*b)).collect()),
        (Data::Bool(v), 9) => Data::Bool(v.clone()),
        (_, other) => return Err(format!("a Cast to element type {other}")),
    };
    Tensor::new(x.shape.clone(), data)
}

#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]
fn range(start: &Tensor, limit: &Tensor, delta: &Tensor) -> Result<Tensor, String> {
    match (&start.data, &limit.data, &delta.data) {
        (Data::I64(s), Data::I64(l), Data::I64(d)) => {
            let (&[s], &[l], &[d]) = (&s[..], &l[..], &d[..]) else {
                return Err("Range takes scalars".to_owned());
            };
            if d == 0 {
                return Err("Range by a step of 0".to_owned());
            }
            let count = (l.saturating_sub(s) as f64 / d as f64).ceil().max(0.0) as usize;
            elements(&[count])?;
            let values = (0..count)
                .map(|i| s.wrapping_add(d.wrapping_mul(i64::try_from(i).unwrap_or(i64::MAX))))
                .collect();
            Tensor::ints(vec![count], values)
        }
        (Data::F32(s), Data::F32(l), Data::F32(d)) => {
            let (&[s], &[l], &[d]) = (&s[..], &l[..], &d[..]) else {
                return Err("Range takes scalars".to_owned());
            };
            let count = ((l - s) / d).ceil();
            if !count.is_finite() {
                return Err("Range of no finite length".to_owned());
            }
            let count = count.max(0.0) as usize;
            elements(&[count])?;
            Tensor::floats(vec![count], (0..count).map(|i| s + d * i as f32).collect())
        }
        _ => Err("Range of values of two kinds".to_owned()),
    }
}

fn one_hot(
    indices: &Tensor,
    depth: &Tensor,
    values: &Tensor,
    axis_value: i64,
) -> Result<Tensor, String> {
    let rank = indices.shape.len();
    if axis_value != -1 && axis_value != i64::try_from(rank).unwrap_or(-1) {
        return Err("a OneHot on an axis other than the last".to_owned());
    }
    let depth = match &depth.data {
        Data::F32(v) if v.len() == 1 => v[0] as i64,
        _ => depth.scalar_i64("OneHot's depth")?,
    };
    let depth = usize::try_from(depth).map_err(|_| "OneHot of a negative depth")?;
    let Data::F32(pair) = &values.data else {
        return Err("a OneHot of values other than floats".to_owned());
    };
    let &[off, on] = &pair[..] else {
        return Err("a OneHot without its two values".to_owned());
    };
    let mut shape = indices.shape.clone();
    shape.push(depth);
    let mut out = vec![off; elements(&shape)?];
    for (i, index) in indices.as_i64("OneHot")?.iter().enumerate() {
        let depth_i = i64::try_from(depth).unwrap_or(i64::MAX);
        let index = if *index < 0 { index + depth_i } else { *index };
        if let Ok(index) = usize::try_from(index)
            && index < depth
        {
            out[i * depth + index] = on;
        }
    }
    Tensor::floats(shape, out)
}

fn arg_max(x: &Tensor, axis_value: i64, keep: bool, last: bool) -> Result<Tensor, String> {
    let along = axis(axis_value, x.shape.len())?;
    let values = x.as_f32("ArgMax")?;
    let (outer, n, inner) = (
        x.shape[..along].iter().product::<usize>(),
        x.shape[along],
        x.shape[along + 1..].iter().product::<usize>(),
    );
    if n == 0 {
        return Err("ArgMax over an empty axis".to_owned());
    }
    let mut out = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for j in 0..inner {
            let at = |i: usize| values[(o * n + i) * inner + j];
            let mut best = 0usize;
            for i in 1..n {
                if at(i) > at(best) || (last && at(i) >= at(best)) {
                    best = i;
                }
            }
            out.push(i64::try_from(best).unwrap_or(0));
        }
    }
    let mut shape = x.shape.clone();
    if keep {
        shape[along] = 1;
    } else {
        shape.remove(along);
    }
    Tensor::ints(shape, out)
}

fn reduce(x: &Tensor, max: bool, axes: Option<&[i64]>, keep: bool) -> Result<Tensor, String> {
    let rank = x.shape.len();
    let reduced: Vec<usize> = match axes {
        Some(list) if !list.is_empty() => list
            .iter()
            .map(|a| axis(*a, rank))
            .collect::<Result<_, _>>()?,
        _ => (0..rank).collect(),
    };
    let kept: Vec<usize> = (0..rank)
        .map(|i| if reduced.contains(&i) { 1 } else { x.shape[i] })
        .collect();
    // Each input element's place in the output: the output broadcast back.
    let places = broadcast_indices(&kept, &x.shape);
    let count = elements(&kept)?;
    let data = match &x.data {
        Data::F32(v) => {
            let start = if max {
                f32::NEG_INFINITY
            } else {
                f32::INFINITY
            };
            let mut out = vec![start; count];
            for (p, value) in places.iter().zip(v) {
                out[*p] = if max {
                    out[*p].max(*value)
                } else {
                    out[*p].min(*value)
                };
            }
            Data::F32(out)
        }
        Data::I64(v) => {
            let mut out = vec![if max { i64::MIN } else { i64::MAX }; count];
            for (p, value) in places.iter().zip(v) {
                out[*p] = if max {
                    out[*p].max(*value)
                } else {
                    out[*p].min(*value)
                };
            }
            Data::I64(out)
        }
        Data::Bool(_) => return Err("a reduction of booleans".to_owned()),
    };
    let shape = if keep {
        kept
    } else {
        (0..rank)
            .filter(|i| !reduced.contains(i))
            .map(|i| x.shape[i])
            .collect()
    };
    Tensor::new(shape, data)
}
