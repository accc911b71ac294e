//! The part of ONNX's protobuf files this crate reads: a model's graph,
//! its nodes, their attributes, the constant tensors, and the model's
//! metadata. A small reader of the protobuf wire format, with every length
//! checked against the bytes left and every tensor's size against its data,
//! so hostile bytes are an error, never a panic or a large allocation.

use crate::tensor::{Data, Tensor, elements};

/// `MAX_DEPTH` is how deeply graphs may nest (a graph in a node's
/// attribute in a graph): this model nests two deep; the bound keeps a
/// hostile file from recursing without end.
const MAX_DEPTH: usize = 6;

/// A model: its graph and its metadata (`key`, `value` pairs).
#[derive(Debug, Default)]
pub(crate) struct Model {
    pub graph: Graph,
    pub metadata: Vec<(String, String)>,
}

/// A graph: its nodes in order, its constant tensors, and the names of its
/// inputs and outputs.
#[derive(Debug, Default, Clone)]
pub(crate) struct Graph {
    pub nodes: Vec<Node>,
    pub initializers: Vec<(String, Tensor)>,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
}

/// One node: what it does, the names of the values it reads (an empty name
/// is an input left out) and makes, and its attributes.
#[derive(Debug, Default, Clone)]
pub(crate) struct Node {
    pub op: String,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
    pub attributes: Vec<Attribute>,
}

/// One attribute, whichever of its fields the file sets.
#[derive(Debug, Default, Clone)]
pub(crate) struct Attribute {
    pub name: String,
    pub float: Option<f32>,
    pub int: Option<i64>,
    pub text: Option<String>,
    pub tensor: Option<Tensor>,
    pub graph: Option<Graph>,
    pub floats: Vec<f32>,
    pub ints: Vec<i64>,
}

impl Node {
    pub fn attribute(&self, name: &str) -> Option<&Attribute> {
        self.attributes.iter().find(|a| a.name == name)
    }

    /// An integer attribute, or `default` when the node leaves it out.
    pub fn int(&self, name: &str, default: i64) -> i64 {
        self.attribute(name).and_then(|a| a.int).unwrap_or(default)
    }

    pub fn float(&self, name: &str, default: f32) -> f32 {
        self.attribute(name)
            .and_then(|a| a.float)
            .unwrap_or(default)
    }

    pub fn ints(&self, name: &str) -> Option<&[i64]> {
        self.attribute(name).map(|a| a.ints.as_slice())
    }

    pub fn text(&self, name: &str) -> Option<&str> {
        self.attribute(name).and_then(|a| a.text.as_deref())
    }
}

/// One field as the wire format carries it.
#[derive(Clone, Copy)]
enum Field<'a> {
    Varint(u64),
    Fixed64,
    Bytes(&'a [u8]),
    Fixed32(u32),
}

/// Reads fields off a message's bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, at: 0 }
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self
                .bytes
                .get(self.at)
                .ok_or("a number runs past the end of the file")?;
            self.at += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("a number is longer than ten bytes".to_owned())
    }

    fn take(&mut self, length: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(length)
            .filter(|end| *end <= self.bytes.len())
            .ok_or("a field runs past the end of its message")?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    /// The next field's number and value, or `None` at the end.
    fn next(&mut self) -> Result<Option<(u64, Field<'a>)>, String> {
        if self.at >= self.bytes.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let field = match key & 7 {
            0 => Field::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Field::Fixed64
            }
            2 => {
                let length =
                    usize::try_from(self.varint()?).map_err(|_| "a length is too large")?;
                Field::Bytes(self.take(length)?)
            }
            5 => {
                let b = self.take(4)?;
                Field::Fixed32(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            }
            _ => return Err(format!("an unknown wire type {}", key & 7)),
        };
        Ok(Some((key >> 3, field)))
    }
}

fn text(bytes: &[u8]) -> Result<String, String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| "a name is not UTF-8".to_owned())
}

/// Integers that come one a field or packed into one field.
fn push_ints(field: Field<'_>, out: &mut Vec<i64>) -> Result<(), String> {
    match field {
        Field::Varint(v) => out.push(v.cast_signed()),
        Field::Bytes(b) => {
            let mut r = Reader::new(b);
            while r.at < b.len() {
                out.push(r.varint()?.cast_signed());
            }
        }
        _ => return Err("integers of the wrong wire type".to_owned()),
    }
    Ok(())
}

/// Floats that come one a field or packed into one field.
fn push_floats(field: Field<'_>, out: &mut Vec<f32>) -> Result<(), String> {
    match field {
        Field::Fixed32(v) => out.push(f32::from_bits(v)),
        Field::Bytes(b) => {
            if b.len() % 4 != 0 {
                return Err("packed floats of a length not a multiple of 4".to_owned());
            }
            out.extend(
                b.chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            );
        }
        _ => return Err("floats of the wrong wire type".to_owned()),
    }
    Ok(())
}

/// Parses a model file.
pub(crate) fn model(bytes: &[u8]) -> Result<Model, String> {
    let mut out = Model::default();
    let mut found = false;
    let mut r = Reader::new(bytes);
    while let Some((number, field)) = r.next()? {
        match (number, field) {
            (7, Field::Bytes(b)) => {
                out.graph = graph(b, 0)?;
                found = true;
            }
            (14, Field::Bytes(b)) => {
                let mut entry = Reader::new(b);
                let (mut key, mut value) = (String::new(), String::new());
                while let Some((n, f)) = entry.next()? {
                    match (n, f) {
                        (1, Field::Bytes(b)) => key = text(b)?,
                        (2, Field::Bytes(b)) => value = text(b)?,
                        _ => {}
                    }
                }
                out.metadata.push((key, value));
            }
            _ => {}
        }
    }
    if !found {
        return Err("it holds no graph".to_owned());
    }
    Ok(out)
}

fn graph(bytes: &[u8], depth: usize) -> Result<Graph, String> {
    if depth > MAX_DEPTH {
        return Err("its graphs nest too deeply".to_owned());
    }
    let mut out = Graph::default();
    let mut r = Reader::new(bytes);
    while let Some((number, field)) = r.next()? {
        match (number, field) {
            (1, Field::Bytes(b)) => out.nodes.push(node(b, depth)?),
            (5, Field::Bytes(b)) => {
                let (name, value) = tensor(b)?;
                out.initializers.push((name, value));
            }
            (11, Field::Bytes(b)) => out.inputs.push(value_name(b)?),
            (12, Field::Bytes(b)) => out.outputs.push(value_name(b)?),
            _ => {}
        }
    }
    Ok(out)
}

fn value_name(bytes: &[u8]) -> Result<String, String> {
    let mut r = Reader::new(bytes);
    while let Some((number, field)) = r.next()? {
        if let (1, Field::Bytes(b)) = (number, field) {
            return text(b);
        }
    }
    Ok(String::new())
}

fn node(bytes: &[u8], depth: usize) -> Result<Node, String> {
    let mut out = Node::default();
    let mut r = Reader::new(bytes);
    while let Some((number, field)) = r.next()? {
        match (number, field) {
            (1, Field::Bytes(b)) => out.inputs.push(text(b)?),
            (2, Field::Bytes(b)) => out.outputs.push(text(b)?),
            (4, Field::Bytes(b)) => out.op = text(b)?,
            (5, Field::Bytes(b)) => out.attributes.push(attribute(b, depth)?),
            (7, Field::Bytes(b)) if !b.is_empty() && b != b"ai.onnx" => {
                return Err(format!("a node of the operator domain {:?}", text(b)?));
            }
            _ => {}
        }
    }
    Ok(out)
}

fn attribute(bytes: &[u8], depth: usize) -> Result<Attribute, String> {
    let mut out = Attribute::default();
    let mut r = Reader::new(bytes);
    while let Some((number, field)) = r.next()? {
        match (number, field) {
            (1, Field::Bytes(b)) => out.name = text(b)?,
            (2, Field::Fixed32(v)) => out.float = Some(f32::from_bits(v)),
            (3, Field::Varint(v)) => out.int = Some(v.cast_signed()),
            (4, Field::Bytes(b)) => out.text = Some(text(b)?),
            (5, Field::Bytes(b)) => out.tensor = Some(tensor(b)?.1),
            (6, Field::Bytes(b)) => out.graph = Some(graph(b, depth + 1)?),
            (7, field) => push_floats(field, &mut out.floats)?,
            (8, field) => push_ints(field, &mut out.ints)?,
            (11, Field::Bytes(_)) => {
                return Err("a node holds a list of graphs".to_owned());
            }
            _ => {}
        }
    }
    Ok(out)
}

/// ONNX's numbers for the element types this crate reads.
const FLOAT: i64 = 1;
const INT32: i64 = 6;
const INT64: i64 = 7;
const BOOL: i64 = 9;

/// A tensor's name and value, its size checked against its data.
fn tensor(bytes: &[u8]) -> Result<(String, Tensor), String> {
    let mut dims = Vec::new();
    let mut kind = 0i64;
    let mut name = String::new();
    let mut raw: Option<&[u8]> = None;
    let (mut floats, mut ints) = (Vec::new(), Vec::new());
    let mut r = Reader::new(bytes);
    while let Some((number, field)) = r.next()? {
        match (number, field) {
            (1, field) => push_ints(field, &mut dims)?,
            (2, Field::Varint(v)) => kind = v.cast_signed(),
            (4, field) => push_floats(field, &mut floats)?,
            (5 | 7, field) => push_ints(field, &mut ints)?,
            (8, Field::Bytes(b)) => name = text(b)?,
            (9, Field::Bytes(b)) => raw = Some(b),
            (12..=14, _) => {
                return Err("a tensor stored outside the file".to_owned());
            }
            _ => {}
        }
    }
    let shape = dims
        .iter()
        .map(|d| usize::try_from(*d).map_err(|_| format!("a tensor of size {d}")))
        .collect::<Result<Vec<usize>, String>>()?;
    let count = elements(&shape)?;
    let width = match kind {
        FLOAT | INT32 => 4,
        INT64 => 8,
        BOOL => 1,
        other => return Err(format!("a tensor of element type {other}")),
    };
    let data = match raw {
        Some(raw) => {
            if raw.len() != count * width {
                return Err(format!("tensor {name:?} holds the wrong number of bytes"));
            }
            match kind {
                FLOAT => Data::F32(
                    raw.chunks_exact(4)
                        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                        .collect(),
                ),
                INT32 => Data::I64(
                    raw.chunks_exact(4)
                        .map(|c| i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                        .collect(),
                ),
                INT64 => Data::I64(
                    raw.chunks_exact(8)
                        .map(|c| {
                            i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
                        })
                        .collect(),
                ),
                _ => Data::Bool(raw.iter().map(|b| *b != 0).collect()),
            }
        }
        None => match kind {
            FLOAT => Data::F32(floats),
            BOOL => Data::Bool(ints.iter().map(|v| *v != 0).collect()),
            _ => Data::I64(ints),
        },
    };
    Ok((name, Tensor::new(shape, data)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A field's key.
    fn key(number: u64, wire: u64) -> Vec<u8> {
        varint(number << 3 | wire)
    }

    fn varint(mut v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(byte);
                return out;
            }
            out.push(byte | 0x80);
        }
    }

    /// A length-delimited field.
    fn bytes(number: u64, body: &[u8]) -> Vec<u8> {
        let mut out = key(number, 2);
        out.extend(varint(body.len() as u64));
        out.extend(body);
        out
    }

    #[test]
    fn a_tensor_whose_size_is_not_its_data_is_refused_before_anything_is_allocated() {
        // dims [2^40], float, no data: claims 4 TiB.
        let mut tensor = key(1, 0);
        tensor.extend(varint(1 << 40));
        tensor.extend(key(2, 0));
        tensor.extend(varint(1));
        let graph = bytes(5, &tensor);
        let model = bytes(7, &graph);
        let error = super::model(&model).expect_err("too large");
        assert!(error.contains("larger than porter allows"), "{error}");
        // dims [3], float, two floats of raw data.
        let mut tensor = key(1, 0);
        tensor.extend(varint(3));
        tensor.extend(key(2, 0));
        tensor.extend(varint(1));
        tensor.extend(bytes(9, &[0; 8]));
        let error = super::model(&bytes(7, &bytes(5, &tensor))).expect_err("short");
        assert!(error.contains("wrong number of bytes"), "{error}");
    }

    #[test]
    fn lengths_past_the_end_and_endless_nesting_are_errors() {
        // A graph field that claims a terabyte.
        let mut model = key(7, 2);
        model.extend(varint(1 << 40));
        assert!(super::model(&model).is_err());
        // A varint that never ends.
        assert!(super::model(&[0x38, 0xff, 0xff, 0xff]).is_err());
        // Graphs nested in If branches deeper than any model.
        let mut graph = Vec::new();
        for _ in 0..20 {
            let attribute = [bytes(1, b"then_branch"), bytes(6, &graph)].concat();
            let node = [bytes(4, b"If"), bytes(5, &attribute)].concat();
            graph = bytes(1, &node);
        }
        let error = super::model(&bytes(7, &graph)).expect_err("too deep");
        assert!(error.contains("nest too deeply"), "{error}");
        // No graph at all.
        assert!(super::model(&bytes(14, &bytes(1, b"k"))).is_err());
    }

    #[test]
    fn a_small_graph_reads_back_as_written() {
        let mut tensor = key(1, 0);
        tensor.extend(varint(2));
        tensor.extend(key(2, 0));
        tensor.extend(varint(7));
        tensor.extend(bytes(8, b"w"));
        tensor.extend(bytes(
            9,
            &[
                1, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255,
            ],
        ));
        let attribute = [bytes(1, b"axis"), key(3, 0), varint(1)].concat();
        let node = [
            bytes(1, b"x"),
            bytes(1, b"w"),
            bytes(2, b"y"),
            bytes(4, b"Concat"),
            bytes(5, &attribute),
        ]
        .concat();
        let graph = [
            bytes(1, &node),
            bytes(5, &tensor),
            bytes(11, &bytes(1, b"x")),
            bytes(12, &bytes(1, b"y")),
        ]
        .concat();
        let entry = [bytes(1, b"character"), bytes(2, b"a\nb")].concat();
        let model = super::model(&[bytes(7, &graph), bytes(14, &entry)].concat()).expect("a model");
        let node = &model.graph.nodes[0];
        assert_eq!(node.op, "Concat");
        assert_eq!(
            (node.inputs.clone(), node.outputs.clone()),
            (vec!["x".to_owned(), "w".to_owned()], vec!["y".to_owned()])
        );
        assert_eq!(node.int("axis", 0), 1);
        assert_eq!(
            model.graph.initializers[0].1,
            Tensor::ints(vec![2], vec![1, -1]).expect("ints")
        );
        assert_eq!(model.graph.inputs, ["x"]);
        assert_eq!(
            model.metadata,
            [("character".to_owned(), "a\nb".to_owned())]
        );
    }
}
