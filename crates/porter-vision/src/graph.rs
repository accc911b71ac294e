//! An ONNX graph with one `Loop` cut into two loop-free graphs that tract
//! runs: the part before the loop (`encoder`) and one pass of the loop's
//! body (`step`). tract has no `Loop`; the loop itself runs in Rust
//! ([`crate::table`]), which also lets it stop at a budget between passes.
//! What the graph does after the loop (cutting its buffers to the passes
//! run) is left to the caller, which reads the loop's final state.
//!
//! The body's values fall in three kinds. Those it hands back unchanged and
//! that start as constants (the decoder's weights) become constants of the
//! step graph, so tract folds and packs them once. Those it hands back
//! unchanged but that the encoder computes (the image's features) are fed
//! to every pass as they came. The rest are the loop's state. An `If`
//! inside the body whose branches are small graphs of their own becomes a
//! `Where` over both branches, computed side by side.

use std::collections::{HashMap, HashSet};

use tract_onnx::pb::{
    AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto, ValueInfoProto,
};

use crate::error::GraphError;

/// The two graphs and how the loop joins them.
#[derive(Debug)]
pub(crate) struct Cut {
    /// From the model's inputs to what the loop starts with: the condition,
    /// then each of `state`'s starting values, then each of `fed`'s values.
    pub encoder: ModelProto,
    /// One pass: the pass number, the condition, the state, the fed values;
    /// out come the next condition and the next state.
    pub step: ModelProto,
    /// The most passes the model asks for (its `Loop`'s trip count).
    pub trip_count: i64,
    /// How many of the encoder's outputs are state (after the condition).
    pub states: usize,
    /// How many are fed to every pass unchanged (after the state).
    pub fed: usize,
}

/// Cuts `model` at its one top-level `Loop`.
pub(crate) fn cut(model: &ModelProto) -> Result<Cut, GraphError> {
    let graph = model.graph.as_ref().ok_or(GraphError::NoGraph)?;
    let loops: Vec<usize> = (0..graph.node.len())
        .filter(|&i| graph.node[i].op_type == "Loop")
        .collect();
    let [at] = loops[..] else {
        return Err(GraphError::Loops(loops.len()));
    };
    let node = &graph.node[at];
    let body = node
        .attribute
        .iter()
        .find(|a| a.name == "body")
        .and_then(|a| a.g.as_ref())
        .ok_or(GraphError::Shape("the Loop has no body"))?;
    let carried = node.input.len().saturating_sub(2);
    if node.input.len() < 2
        || body.input.len() != carried + 2
        || body.output.len() != carried + 1
        || node.output.len() != carried
    {
        return Err(GraphError::Shape(
            "the Loop's inputs, outputs and body do not match (scan outputs are not supported)",
        ));
    }
    let constants = constants_of(graph);
    let trip_count = constants
        .get(node.input[0].as_str())
        .and_then(|t| first_i64(t))
        .ok_or(GraphError::Shape("the Loop's trip count is not a constant"))?;

    // The carried values by kind.
    let mut state = Vec::new();
    let mut fed = Vec::new();
    let mut folded: Vec<TensorProto> = Vec::new();
    for k in 0..carried {
        let inside = &body.input[k + 2].name;
        let passed = &body.output[k + 1].name == inside;
        let outer = &node.input[k + 2];
        match (passed, constants.get(outer.as_str())) {
            (true, Some(value)) => {
                let mut value = (*value).clone();
                value.name.clone_from(inside);
                folded.push(value);
            }
            (true, None) => fed.push(k),
            (false, _) => state.push(k),
        }
    }

    let mut encoder_outputs = vec![node.input[1].clone()];
    encoder_outputs.extend(state.iter().map(|&k| node.input[k + 2].clone()));
    encoder_outputs.extend(fed.iter().map(|&k| node.input[k + 2].clone()));
    let encoder = sub_model(
        model,
        graph.node[..at].to_vec(),
        graph.input.clone(),
        encoder_outputs.iter().map(|n| named(n)).collect(),
        graph.initializer.clone(),
    );

    let mut step_inputs = vec![body.input[0].clone(), body.input[1].clone()];
    step_inputs.extend(state.iter().map(|&k| body.input[k + 2].clone()));
    step_inputs.extend(fed.iter().map(|&k| body.input[k + 2].clone()));
    let mut step_outputs = vec![body.output[0].clone()];
    step_outputs.extend(state.iter().map(|&k| body.output[k + 1].clone()));
    let mut initializers = body.initializer.clone();
    initializers.extend(folded);
    let step = sub_model(
        model,
        without_ifs(&body.node)?,
        step_inputs,
        step_outputs,
        initializers,
    );

    Ok(Cut {
        encoder,
        step,
        trip_count,
        states: state.len(),
        fed: fed.len(),
    })
}

/// A model of the same opsets and metadata as `model` over another graph.
fn sub_model(
    model: &ModelProto,
    node: Vec<NodeProto>,
    input: Vec<ValueInfoProto>,
    output: Vec<ValueInfoProto>,
    initializer: Vec<TensorProto>,
) -> ModelProto {
    // Initializers the graph does not read are left out.
    let read: HashSet<&str> = node
        .iter()
        .flat_map(|n| n.input.iter().map(String::as_str))
        .chain(output.iter().map(|o| o.name.as_str()))
        .collect();
    let initializer: Vec<TensorProto> = initializer
        .into_iter()
        .filter(|t| read.contains(t.name.as_str()))
        .collect();
    let graph = GraphProto {
        node,
        input,
        output,
        initializer,
        ..GraphProto::default()
    };
    ModelProto {
        ir_version: model.ir_version,
        opset_import: model.opset_import.clone(),
        graph: Some(graph),
        ..ModelProto::default()
    }
}

/// A value known only by name (tract infers its type and shape).
fn named(name: &str) -> ValueInfoProto {
    ValueInfoProto {
        name: name.to_owned(),
        ..ValueInfoProto::default()
    }
}

/// The values of the graph's `Constant` nodes and initializers, by name.
fn constants_of(graph: &GraphProto) -> HashMap<&str, &TensorProto> {
    let mut out: HashMap<&str, &TensorProto> = graph
        .initializer
        .iter()
        .map(|t| (t.name.as_str(), t))
        .collect();
    for n in &graph.node {
        if n.op_type == "Constant"
            && let (Some(name), Some(value)) = (
                n.output.first(),
                n.attribute
                    .iter()
                    .find(|a| a.name == "value")
                    .and_then(|a| a.t.as_ref()),
            )
        {
            out.insert(name.as_str(), value);
        }
    }
    out
}

/// The first value of an integer tensor (INT64 or INT32), from its typed
/// field or its raw little-endian bytes.
fn first_i64(tensor: &TensorProto) -> Option<i64> {
    const INT32: i32 = 6;
    const INT64: i32 = 7;
    match tensor.data_type {
        INT64 => tensor.int64_data.first().copied().or_else(|| {
            let bytes: [u8; 8] = tensor.raw_data.get(..8)?.try_into().ok()?;
            Some(i64::from_le_bytes(bytes))
        }),
        INT32 => tensor
            .int32_data
            .first()
            .map(|v| i64::from(*v))
            .or_else(|| {
                let bytes: [u8; 4] = tensor.raw_data.get(..4)?.try_into().ok()?;
                Some(i64::from(i32::from_le_bytes(bytes)))
            }),
        _ => None,
    }
}

/// The body's nodes with every `If` replaced by both of its branches,
/// their values renamed apart, and a `Where` that picks between their
/// outputs. Branches are side-effect free, so computing both changes only
/// the cost, and these are a handful of nodes each.
fn without_ifs(nodes: &[NodeProto]) -> Result<Vec<NodeProto>, GraphError> {
    let mut out = Vec::with_capacity(nodes.len());
    for (index, n) in nodes.iter().enumerate() {
        if n.op_type != "If" {
            if n.attribute
                .iter()
                .any(|a| a.g.is_some() || !a.graphs.is_empty())
            {
                return Err(GraphError::Shape(
                    "the Loop's body holds control flow other than If",
                ));
            }
            out.push(n.clone());
            continue;
        }
        let branch = |name: &str| {
            n.attribute
                .iter()
                .find(|a: &&AttributeProto| a.name == name)
                .and_then(|a| a.g.as_ref())
                .ok_or(GraphError::Shape("an If lacks a branch"))
        };
        let (then, other) = (branch("then_branch")?, branch("else_branch")?);
        if then.output.len() != n.output.len() || other.output.len() != n.output.len() {
            return Err(GraphError::Shape(
                "an If's branches do not match its outputs",
            ));
        }
        let then_out = inline(then, &format!("if{index}.then/"), &mut out)?;
        let else_out = inline(other, &format!("if{index}.else/"), &mut out)?;
        let condition = n.input.first().cloned().unwrap_or_default();
        for ((result, a), b) in n.output.iter().zip(then_out).zip(else_out) {
            out.push(NodeProto {
                input: vec![condition.clone(), a, b],
                output: vec![result.clone()],
                name: format!("{result}.where"),
                op_type: "Where".to_owned(),
                ..NodeProto::default()
            });
        }
    }
    Ok(out)
}

/// Appends a branch's nodes to `out`, every value it makes renamed with
/// `prefix` (its initializers as `Constant` nodes); the names of its
/// outputs.
fn inline(
    branch: &GraphProto,
    prefix: &str,
    out: &mut Vec<NodeProto>,
) -> Result<Vec<String>, GraphError> {
    let mut renamed: HashMap<String, String> = HashMap::new();
    for t in &branch.initializer {
        let name = format!("{prefix}{}", t.name);
        renamed.insert(t.name.clone(), name.clone());
        let mut value = t.clone();
        value.name.clone_from(&name);
        out.push(NodeProto {
            output: vec![name],
            op_type: "Constant".to_owned(),
            attribute: vec![AttributeProto {
                name: "value".to_owned(),
                r#type: 4,
                t: Some(value),
                ..AttributeProto::default()
            }],
            ..NodeProto::default()
        });
    }
    for n in &branch.node {
        if n.attribute
            .iter()
            .any(|a| a.g.is_some() || !a.graphs.is_empty())
        {
            return Err(GraphError::Shape(
                "an If's branch holds control flow of its own",
            ));
        }
        let mut n = n.clone();
        for input in &mut n.input {
            if let Some(name) = renamed.get(input) {
                input.clone_from(name);
            }
        }
        for output in &mut n.output {
            if !output.is_empty() {
                let name = format!("{prefix}{output}");
                renamed.insert(output.clone(), name.clone());
                *output = name;
            }
        }
        n.name = format!("{prefix}{}", n.name);
        out.push(n);
    }
    Ok(branch
        .output
        .iter()
        .map(|o| {
            renamed
                .get(&o.name)
                .cloned()
                .unwrap_or_else(|| o.name.clone())
        })
        .collect())
}
