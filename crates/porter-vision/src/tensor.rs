//! The values the interpreter passes between nodes: a shape and its
//! elements, row-major, of one of three kinds (ONNX's 32- and 64-bit
//! integers are both kept as `i64`).

/// `MAX_ELEMENTS` is the most elements one value may hold (256 MiB of
/// floats): the real model's largest is about a million; a hostile graph
/// asking for more (a huge `ConstantOfShape`, `Expand` or `Tile`) is an
/// error before anything is allocated.
pub(crate) const MAX_ELEMENTS: usize = 1 << 26;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Data {
    F32(Vec<f32>),
    I64(Vec<i64>),
    Bool(Vec<bool>),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Tensor {
    pub shape: Vec<usize>,
    pub data: Data,
}

/// How many elements a value of `shape` holds, or why it may not exist.
pub(crate) fn elements(shape: &[usize]) -> Result<usize, String> {
    shape
        .iter()
        .try_fold(1usize, |n, d| n.checked_mul(*d))
        .filter(|n| *n <= MAX_ELEMENTS)
        .ok_or_else(|| format!("a value of shape {shape:?} is larger than porter allows"))
}

impl Data {
    /// The elements at `indices`, in their order (every index is one the
    /// caller computed inside this value).
    pub fn take(&self, indices: &[usize]) -> Data {
        match self {
            Data::F32(v) => Data::F32(indices.iter().map(|i| v[*i]).collect()),
            Data::I64(v) => Data::I64(indices.iter().map(|i| v[*i]).collect()),
            Data::Bool(v) => Data::Bool(indices.iter().map(|i| v[*i]).collect()),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Data::F32(v) => v.len(),
            Data::I64(v) => v.len(),
            Data::Bool(v) => v.len(),
        }
    }
}

impl Tensor {
    /// A value whose elements match its shape.
    pub fn new(shape: Vec<usize>, data: Data) -> Result<Self, String> {
        if elements(&shape)? != data.len() {
            return Err(format!(
                "a value of shape {shape:?} with {} elements",
                data.len()
            ));
        }
        Ok(Self { shape, data })
    }

    pub fn floats(shape: Vec<usize>, values: Vec<f32>) -> Result<Self, String> {
        Self::new(shape, Data::F32(values))
    }

    pub fn ints(shape: Vec<usize>, values: Vec<i64>) -> Result<Self, String> {
        Self::new(shape, Data::I64(values))
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// The elements as floats, or an error naming `what` needed them.
    pub fn as_f32(&self, what: &str) -> Result<&[f32], String> {
        match &self.data {
            Data::F32(v) => Ok(v),
            _ => Err(format!("{what} takes floats")),
        }
    }

    /// The elements as integers (booleans as 0 and 1).
    pub fn as_i64(&self, what: &str) -> Result<Vec<i64>, String> {
        match &self.data {
            Data::I64(v) => Ok(v.clone()),
            Data::Bool(v) => Ok(v.iter().map(|b| i64::from(*b)).collect()),
            Data::F32(_) => Err(format!("{what} takes integers")),
        }
    }

    /// The one element of a value that holds one, as an integer.
    pub fn scalar_i64(&self, what: &str) -> Result<i64, String> {
        let values = self.as_i64(what)?;
        match values[..] {
            [v] => Ok(v),
            _ => Err(format!("{what} takes one value, not {}", values.len())),
        }
    }

    /// Whether a condition value holds true (its one element).
    pub fn truth(&self) -> bool {
        match &self.data {
            Data::Bool(v) => v.first().copied().unwrap_or(false),
            Data::I64(v) => v.first().is_some_and(|x| *x != 0),
            Data::F32(v) => v.first().is_some_and(|x| *x != 0.0),
        }
    }

    /// The same elements under another shape of as many elements.
    pub fn reshaped(mut self, shape: Vec<usize>) -> Result<Self, String> {
        if elements(&shape)? != self.len() {
            return Err(format!(
                "a value of {} elements cannot take the shape {shape:?}",
                self.len()
            ));
        }
        self.shape = shape;
        Ok(self)
    }
}

/// `shape`'s row-major strides.
pub(crate) fn strides(shape: &[usize]) -> Vec<usize> {
    let mut out = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        out[i] = out[i + 1] * shape[i + 1];
    }
    out
}

/// An axis counted from the end when negative, checked against `rank`.
pub(crate) fn axis(value: i64, rank: usize) -> Result<usize, String> {
    let rank_i = i64::try_from(rank).map_err(|_| "a rank too large")?;
    let a = if value < 0 { value + rank_i } else { value };
    if (0..rank_i).contains(&a) {
        usize::try_from(a).map_err(|_| "an axis out of range".to_owned())
    } else {
        Err(format!("axis {value} of a value of rank {rank}"))
    }
}

/// The shape two values broadcast to (numpy's rule).
pub(crate) fn broadcast(a: &[usize], b: &[usize]) -> Result<Vec<usize>, String> {
    let rank = a.len().max(b.len());
    let mut out = vec![0; rank];
    for (i, slot) in out.iter_mut().enumerate() {
        let da = (i + a.len()).checked_sub(rank).map_or(1, |j| a[j]);
        let db = (i + b.len()).checked_sub(rank).map_or(1, |j| b[j]);
        *slot = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return Err(format!("shapes {a:?} and {b:?} do not broadcast")),
        };
    }
    elements(&out)?;
    Ok(out)
}

/// For each element of a value of shape `out`, the index of the element of
/// a value of shape `from` (which broadcasts to it) that it takes.
pub(crate) fn broadcast_indices(from: &[usize], out: &[usize]) -> Vec<usize> {
    let rank = out.len();
    let from_strides = strides(from);
    // The stride in `from` of each axis of `out` (0 where it is repeated).
    let step: Vec<usize> = (0..rank)
        .map(|i| match (i + from.len()).checked_sub(rank) {
            Some(j) if from[j] != 1 => from_strides[j],
            _ => 0,
        })
        .collect();
    let total: usize = out.iter().product();
    let mut indices = Vec::with_capacity(total);
    if total == 0 {
        return indices;
    }
    let mut counter = vec![0usize; rank];
    let mut at = 0usize;
    for _ in 0..total {
        indices.push(at);
        for axis in (0..rank).rev() {
            counter[axis] += 1;
            at += step[axis];
            if counter[axis] < out[axis] {
                break;
            }
            at -= step[axis] * counter[axis];
            counter[axis] = 0;
        }
    }
    indices
}
