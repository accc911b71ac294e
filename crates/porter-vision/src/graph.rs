//! An ONNX graph with one `Loop` as two compiled graphs: the part before
//! the loop (`encoder`) and the loop's body (one pass). The loop itself
//! runs in [`crate::table`], which lets it stop at a budget between passes
//! and at the end token. What the graph does after the loop (cutting its
//! buffers to the passes run) is left to the caller, which reads the
//! loop's final state.
//!
//! The values the loop carries fall in three kinds. Those its body hands
//! back unchanged that are constants (the decoder's weights) become
//! constants of the body, so what is computed from them alone is computed
//! at load. Those it hands back unchanged that the encoder computes (the
//! picture's features) are the body's invariants: what depends only on
//! them is computed once a picture. The rest are the loop's state.

use crate::error::GraphError;
use crate::interp::{Plan, Source};
use crate::onnx::Graph;
use crate::tensor::Tensor;

#[derive(Debug)]
pub(crate) struct Program {
    /// From the model's inputs to every input of the loop: the trip count,
    /// the condition, then each carried value.
    pub encoder: Plan,
    /// One pass: the pass number, the condition and the carried values in;
    /// the next condition and carried values out.
    pub body: Plan,
    /// The most passes the model asks for (its `Loop`'s trip count).
    pub trip_count: i64,
    /// For each carried value, whether the body hands it back unchanged.
    pub passed: Vec<bool>,
}

/// Compiles `graph` around its one top-level `Loop`.
pub(crate) fn program(graph: &Graph) -> Result<Program, GraphError> {
    let loops: Vec<usize> = (0..graph.nodes.len())
        .filter(|&i| graph.nodes[i].op == "Loop")
        .collect();
    let [at] = loops[..] else {
        return Err(GraphError::Loops(loops.len()));
    };
    let node = &graph.nodes[at];
    let body = node
        .attribute("body")
        .and_then(|a| a.graph.as_ref())
        .ok_or(GraphError::Shape("the Loop has no body"))?;
    let carried = node.inputs.len().saturating_sub(2);
    if node.inputs.len() < 2
        || body.inputs.len() != carried + 2
        || body.outputs.len() != carried + 1
        || node.outputs.len() != carried
        || node.inputs[..2].iter().any(String::is_empty)
    {
        return Err(GraphError::Shape(
            "the Loop's inputs, outputs and body do not match (scan outputs and an unbounded loop are not supported)",
        ));
    }
    let encoder = Plan::compile(Source {
        nodes: &graph.nodes[..at],
        constants: graph.initializers.clone(),
        inputs: &graph.inputs,
        invariant: &[],
        outputs: &node.inputs,
    })
    .map_err(GraphError::Compile)?;
    let trip_count = encoder
        .constant(encoder.outputs[0])
        .and_then(|t| t.scalar_i64("the trip count").ok())
        .ok_or(GraphError::Shape("the Loop's trip count is not a constant"))?;

    let passed: Vec<bool> = (0..carried)
        .map(|k| body.outputs[k + 1] == body.inputs[k + 2])
        .collect();
    let mut constants: Vec<(String, Tensor)> = body.initializers.clone();
    let mut invariant = Vec::new();
    for k in (0..carried).filter(|k| passed[*k]) {
        let inside = &body.inputs[k + 2];
        match encoder.constant(encoder.outputs[k + 2]) {
            Some(value) => constants.push((inside.clone(), (**value).clone())),
            None => invariant.push(inside.clone()),
        }
    }
    let body = Plan::compile(Source {
        nodes: &body.nodes,
        constants,
        inputs: &body.inputs,
        invariant: &invariant,
        outputs: &body.outputs,
    })
    .map_err(GraphError::Compile)?;
    if body.inputs[..2].iter().any(Option::is_none) {
        return Err(GraphError::Shape(
            "the Loop's body takes its counter as a constant",
        ));
    }
    Ok(Program {
        encoder,
        body,
        trip_count,
        passed,
    })
}
