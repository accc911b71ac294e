//! The operators that move elements without arithmetic: each works out
//! which source element every output element takes, then takes them.

use crate::tensor::{Data, Tensor, axis, elements, strides};

/// A value of integers read as a shape (no negative sizes).
pub(crate) fn dims(t: &Tensor) -> Result<Vec<usize>, String> {
    t.as_i64("a shape")?
        .iter()
        .map(|d| usize::try_from(*d).map_err(|_| format!("a shape with the size {d}")))
        .collect()
}

/// Every sum of one entry from each list, the last list varying fastest:
/// with each list the source offsets along one axis of the output, the
/// source index of each output element.
fn cartesian(maps: &[Vec<usize>]) -> Result<Vec<usize>, String> {
    let total = maps.iter().try_fold(1usize, |n, m| n.checked_mul(m.len()));
    elements(&[total.ok_or("a value too large")?])?;
    let mut out = vec![0usize];
    for map in maps {
        out = out
            .iter()
            .flat_map(|p| map.iter().map(move |x| p + x))
            .collect();
    }
    Ok(out)
}

/// The offsets of `0..n` along an axis of stride `stride`.
fn along(n: usize, stride: usize) -> Vec<usize> {
    (0..n).map(|c| c * stride).collect()
}

/// The elements the per-axis source offsets `maps` pick, as a value of
/// `shape`: row by row (a row is the last axis), each row copied whole
/// where its offsets run on one by one.
fn take(t: &Tensor, shape: Vec<usize>, maps: &[Vec<usize>]) -> Result<Tensor, String> {
    let Some((inner, outer)) = maps.split_last() else {
        return Tensor::new(shape, t.data.take(&[0]));
    };
    let rows = cartesian(outer)?;
    elements(&[rows.len(), inner.len()])?;
    let run = inner
        .first()
        .is_some_and(|first| inner.iter().enumerate().all(|(i, o)| *o == first + i));
    let data = match &t.data {
        Data::F32(v) => Data::F32(rows_of(v, &rows, inner, run)),
        Data::I64(v) => Data::I64(rows_of(v, &rows, inner, run)),
        Data::Bool(v) => Data::Bool(rows_of(v, &rows, inner, run)),
    };
    Tensor::new(shape, data)
}

fn rows_of<T: Copy>(values: &[T], rows: &[usize], inner: &[usize], run: bool) -> Vec<T> {
    let mut out = Vec::with_capacity(rows.len() * inner.len());
    for row in rows {
        if run {
            let start = row + inner[0];
            out.extend_from_slice(&values[start..start + inner.len()]);
        } else {
            out.extend(inner.iter().map(|o| values[row + o]));
        }
    }
    out
}

pub(crate) fn reshape(t: &Tensor, target: &Tensor) -> Result<Tensor, String> {
    let wanted = target.as_i64("Reshape's shape")?;
    let mut shape = Vec::with_capacity(wanted.len());
    let mut unknown = None;
    for (i, d) in wanted.iter().enumerate() {
        match *d {
            0 => shape.push(*t.shape.get(i).ok_or("Reshape copies a size it lacks")?),
            -1 if unknown.is_none() => {
                unknown = Some(i);
                shape.push(1);
            }
            d => shape.push(usize::try_from(d).map_err(|_| format!("Reshape to a size {d}"))?),
        }
    }
    if let Some(i) = unknown {
        let known = elements(&shape)?;
        if known == 0 || !t.len().is_multiple_of(known) {
            return Err(format!("Reshape of {:?} to {wanted:?}", t.shape));
        }
        shape[i] = t.len() / known;
    }
    t.clone().reshaped(shape)
}

/// A value of axes (each counted from the end when negative) of a value
/// of rank `rank`.
fn axes_of(axes: &Tensor, rank: usize, what: &str) -> Result<Vec<usize>, String> {
    axes.as_i64(what)?.iter().map(|v| axis(*v, rank)).collect()
}

pub(crate) fn squeeze(t: &Tensor, axes: Option<&Tensor>) -> Result<Tensor, String> {
    let rank = t.shape.len();
    let chosen: Vec<usize> = match axes {
        Some(a) => axes_of(a, rank, "Squeeze's axes")?,
        None => (0..rank).filter(|i| t.shape[*i] == 1).collect(),
    };
    if chosen.iter().any(|a| t.shape[*a] != 1) {
        return Err(format!("Squeeze of an axis of {:?} not of size 1", t.shape));
    }
    let shape = (0..rank)
        .filter(|i| !chosen.contains(i))
        .map(|i| t.shape[i])
        .collect();
    t.clone().reshaped(shape)
}

pub(crate) fn unsqueeze(t: &Tensor, axes: &Tensor) -> Result<Tensor, String> {
    let rank = t.shape.len() + axes.len();
    let mut chosen = axes_of(axes, rank, "Unsqueeze's axes")?;
    chosen.sort_unstable();
    let mut source = t.shape.iter();
    let shape = (0..rank)
        .map(|i| {
            if chosen.binary_search(&i).is_ok() {
                Some(1)
            } else {
                source.next().copied()
            }
        })
        .collect::<Option<Vec<_>>>()
        .ok_or("Unsqueeze with repeated axes")?;
    t.clone().reshaped(shape)
}

pub(crate) fn concat(parts: &[&Tensor], axis_value: i64) -> Result<Tensor, String> {
    let first = parts.first().ok_or("Concat of nothing")?;
    let a = axis(axis_value, first.shape.len())?;
    let mut shape = first.shape.clone();
    shape[a] = 0;
    for p in parts {
        let same = p.shape.len() == shape.len()
            && (0..shape.len()).all(|i| i == a || p.shape[i] == shape[i]);
        if !same {
            return Err("Concat of values of different shapes".to_owned());
        }
        shape[a] += p.shape[a];
    }
    elements(&shape)?;
    let outer: usize = shape[..a].iter().product();
    let inner: usize = shape[a + 1..].iter().product();
    let data = match &first.data {
        Data::F32(_) => Data::F32(joined(parts, outer, a, inner, |p| match &p.data {
            Data::F32(v) => Some(v),
            _ => None,
        })?),
        Data::I64(_) => Data::I64(joined(parts, outer, a, inner, |p| match &p.data {
            Data::I64(v) => Some(v),
            _ => None,
        })?),
        Data::Bool(_) => Data::Bool(joined(parts, outer, a, inner, |p| match &p.data {
            Data::Bool(v) => Some(v),
            _ => None,
        })?),
    };
    Tensor::new(shape, data)
}

/// The parts' elements interleaved along the joined axis: for each index
/// of the axes before it, each part's block in turn.
fn joined<'a, T: Copy + 'a>(
    parts: &[&'a Tensor],
    outer: usize,
    a: usize,
    inner: usize,
    values: impl Fn(&'a Tensor) -> Option<&'a Vec<T>>,
) -> Result<Vec<T>, String> {
    let slices = parts
        .iter()
        .map(|p| values(p).map(|v| (v, p.shape[a] * inner)))
        .collect::<Option<Vec<_>>>()
        .ok_or("Concat of values of two kinds")?;
    let mut out = Vec::with_capacity(slices.iter().map(|(v, _)| v.len()).sum());
    for o in 0..outer {
        for (v, block) in &slices {
            out.extend_from_slice(&v[o * block..(o + 1) * block]);
        }
    }
    Ok(out)
}

/// The per-axis source offsets of the whole of `t`, and its strides.
fn whole(t: &Tensor) -> (Vec<Vec<usize>>, Vec<usize>) {
    let st = strides(&t.shape);
    let maps = t
        .shape
        .iter()
        .zip(&st)
        .map(|(n, s)| along(*n, *s))
        .collect();
    (maps, st)
}

/// The per-axis source offsets of the whole of `t`, with `axis`'s replaced.
fn maps_with(t: &Tensor, a: usize, chosen: Vec<usize>) -> Vec<Vec<usize>> {
    let (mut maps, st) = whole(t);
    maps[a] = chosen.into_iter().map(|c| c * st[a]).collect();
    maps
}

pub(crate) fn split(
    t: &Tensor,
    sizes: Option<&Tensor>,
    axis_value: i64,
    outputs: usize,
) -> Result<Vec<Tensor>, String> {
    let a = axis(axis_value, t.shape.len())?;
    let n = t.shape[a];
    let sizes: Vec<usize> = match sizes {
        Some(s) => dims(s)?,
        None if outputs > 0 && n.is_multiple_of(outputs) => vec![n / outputs; outputs],
        None => return Err(format!("Split of {n} into {outputs} equal parts")),
    };
    if sizes.len() != outputs || sizes.iter().sum::<usize>() != n {
        return Err("Split's sizes do not add up to its input".to_owned());
    }
    let mut start = 0;
    let mut out = Vec::with_capacity(outputs);
    for size in sizes {
        let mut shape = t.shape.clone();
        shape[a] = size;
        out.push(take(
            t,
            shape,
            &maps_with(t, a, (start..start + size).collect()),
        )?);
        start += size;
    }
    Ok(out)
}

/// The positions a slice of one axis of size `dim` takes.
fn slice_axis(dim: usize, start: i64, end: i64, step: i64) -> Result<Vec<usize>, String> {
    let d = i64::try_from(dim).map_err(|_| "a size too large")?;
    if d == 0 {
        return Ok(Vec::new());
    }
    let fix = |v: i64| if v < 0 { v.saturating_add(d) } else { v };
    let (mut at, end) = match step.cmp(&0) {
        std::cmp::Ordering::Greater => (fix(start).clamp(0, d), fix(end).clamp(0, d)),
        std::cmp::Ordering::Less => (fix(start).clamp(0, d - 1), fix(end).clamp(-1, d - 1)),
        std::cmp::Ordering::Equal => return Err("Slice by a step of 0".to_owned()),
    };
    let mut out = Vec::new();
    while (step > 0 && at < end) || (step < 0 && at > end) {
        out.push(usize::try_from(at).map_err(|_| "a slice before the start")?);
        at = at.saturating_add(step);
    }
    Ok(out)
}

pub(crate) fn slice(
    t: &Tensor,
    starts: &Tensor,
    ends: &Tensor,
    axes: Option<&Tensor>,
    steps: Option<&Tensor>,
) -> Result<Tensor, String> {
    let (starts, ends) = (starts.as_i64("Slice")?, ends.as_i64("Slice")?);
    let rank = t.shape.len();
    let axes: Vec<usize> = match axes {
        Some(a) => axes_of(a, rank, "Slice's axes")?,
        None => (0..starts.len()).collect(),
    };
    let steps = match steps {
        Some(s) => s.as_i64("Slice's steps")?,
        None => vec![1; starts.len()],
    };
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return Err("Slice's starts, ends, axes and steps differ in length".to_owned());
    }
    let (mut maps, st) = whole(t);
    let mut shape = t.shape.clone();
    for i in 0..starts.len() {
        let a = axes[i];
        let chosen = slice_axis(t.shape[a], starts[i], ends[i], steps[i])?;
        shape[a] = chosen.len();
        maps[a] = chosen.into_iter().map(|c| c * st[a]).collect();
    }
    take(t, shape, &maps)
}

pub(crate) fn transpose(t: &Tensor, perm: Option<&[i64]>) -> Result<Tensor, String> {
    let rank = t.shape.len();
    let perm: Vec<usize> = match perm {
        Some(p) => p.iter().map(|v| axis(*v, rank)).collect::<Result<_, _>>()?,
        None => (0..rank).rev().collect(),
    };
    let mut seen = vec![false; rank];
    for p in &perm {
        if std::mem::replace(&mut seen[*p], true) {
            return Err("Transpose with a repeated axis".to_owned());
        }
    }
    if perm.len() != rank {
        return Err("Transpose's order does not match its input".to_owned());
    }
    let st = strides(&t.shape);
    let shape: Vec<usize> = perm.iter().map(|p| t.shape[*p]).collect();
    let maps: Vec<Vec<usize>> = perm.iter().map(|p| along(t.shape[*p], st[*p])).collect();
    take(t, shape, &maps)
}

pub(crate) fn gather(t: &Tensor, indices: &Tensor, axis_value: i64) -> Result<Tensor, String> {
    let a = axis(axis_value, t.shape.len())?;
    let n = i64::try_from(t.shape[a]).map_err(|_| "a size too large")?;
    let chosen = indices
        .as_i64("Gather's indices")?
        .iter()
        .map(|i| {
            let i = if *i < 0 { i + n } else { *i };
            usize::try_from(i)
                .ok()
                .filter(|_| i < n)
                .ok_or_else(|| format!("Gather of index {i} of {n}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let st = strides(&t.shape);
    let mut maps: Vec<Vec<usize>> = (0..a).map(|i| along(t.shape[i], st[i])).collect();
    maps.push(chosen.iter().map(|c| c * st[a]).collect());
    maps.extend((a + 1..t.shape.len()).map(|i| along(t.shape[i], st[i])));
    let mut shape = t.shape[..a].to_vec();
    shape.extend(&indices.shape);
    shape.extend(&t.shape[a + 1..]);
    take(t, shape, &maps)
}

pub(crate) fn tile(t: &Tensor, repeats: &Tensor) -> Result<Tensor, String> {
    let repeats = dims(repeats)?;
    if repeats.len() != t.shape.len() {
        return Err("Tile's repeats do not match its input".to_owned());
    }
    let st = strides(&t.shape);
    let shape: Vec<usize> = t
        .shape
        .iter()
        .zip(&repeats)
        .map(|(n, r)| n.checked_mul(*r).ok_or("Tile too large"))
        .collect::<Result<_, _>>()?;
    elements(&shape)?;
    let maps: Vec<Vec<usize>> = (0..shape.len())
        .map(|a| {
            (0..shape[a])
                .map(|c| (c % t.shape[a].max(1)) * st[a])
                .collect()
        })
        .collect();
    take(t, shape, &maps)
}

pub(crate) fn scatter(
    data: &Tensor,
    indices: &Tensor,
    updates: &Tensor,
    axis_value: i64,
) -> Result<Tensor, String> {
    let rank = data.shape.len();
    let a = axis(axis_value, rank)?;
    if indices.shape != updates.shape
        || indices.shape.len() != rank
        || (0..rank).any(|i| i != a && indices.shape[i] > data.shape[i])
    {
        return Err("ScatterElements of indices that do not fit its data".to_owned());
    }
    let st = strides(&data.shape);
    let maps: Vec<Vec<usize>> = (0..rank)
        .map(|i| along(indices.shape[i], if i == a { 0 } else { st[i] }))
        .collect();
    let places = cartesian(&maps)?;
    let n = i64::try_from(data.shape[a]).map_err(|_| "a size too large")?;
    let targets = indices
        .as_i64("ScatterElements' indices")?
        .iter()
        .zip(&places)
        .map(|(i, p)| {
            let i = if *i < 0 { i + n } else { *i };
            usize::try_from(i)
                .ok()
                .filter(|_| i < n)
                .map(|i| p + i * st[a])
                .ok_or_else(|| format!("ScatterElements to index {i} of {n}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = data.clone();
    match (&mut out.data, &updates.data) {
        (Data::F32(o), Data::F32(u)) => targets.iter().zip(u).for_each(|(t, v)| o[*t] = *v),
        (Data::I64(o), Data::I64(u)) => targets.iter().zip(u).for_each(|(t, v)| o[*t] = *v),
        (Data::Bool(o), Data::Bool(u)) => targets.iter().zip(u).for_each(|(t, v)| o[*t] = *v),
        _ => return Err("ScatterElements of values of two kinds".to_owned()),
    }
    Ok(out)
}

/// `Resize` by nearest neighbour, asymmetric coordinates rounded down: to
/// `sizes` when given, else by `scales`.
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]
pub(crate) fn resize_nearest(
    t: &Tensor,
    scales: Option<&Tensor>,
    sizes: Option<&Tensor>,
) -> Result<Tensor, String> {
    let rank = t.shape.len();
    let (shape, factors): (Vec<usize>, Vec<f32>) = match (sizes.filter(|s| s.len() > 0), scales) {
        (Some(sizes), _) => {
            let shape = dims(sizes)?;
            let factors = shape
                .iter()
                .zip(&t.shape)
                .map(|(o, i)| *o as f32 / (*i).max(1) as f32)
                .collect();
            (shape, factors)
        }
        (None, Some(scales)) => {
            let factors = scales.as_f32("Resize's scales")?.to_vec();
            if factors.iter().any(|f| !(f.is_finite() && *f > 0.0)) {
                return Err("Resize by a scale that is not positive".to_owned());
            }
            let shape = t
                .shape
                .iter()
                .zip(&factors)
                .map(|(i, f)| (*i as f32 * f).floor() as usize)
                .collect();
            (shape, factors)
        }
        (None, None) => return Err("Resize without scales or sizes".to_owned()),
    };
    if shape.len() != rank || factors.len() != rank {
        return Err("Resize's sizes do not match its input".to_owned());
    }
    elements(&shape)?;
    let st = strides(&t.shape);
    let maps: Vec<Vec<usize>> = (0..rank)
        .map(|a| {
            (0..shape[a])
                .map(|o| {
                    let source = (o as f32 / factors[a]).floor() as usize;
                    source.min(t.shape[a].saturating_sub(1)) * st[a]
                })
                .collect()
        })
        .collect();
    take(t, shape, &maps)
}
