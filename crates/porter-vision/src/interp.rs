//! A graph's nodes turned once, at load, into steps over numbered slots,
//! and run. At load: `Constant` nodes and every node whose inputs are all
//! constant are computed; a batch normalisation after a convolution is
//! folded into the convolution's weights; each value is dropped after its
//! last reader; an `If`'s branches become steps of their own. A graph may
//! also be given values that stay the same over many runs (a loop's
//! invariants): the steps that depend on nothing else run once.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::onnx::Node;
use crate::ops::{self, Op, Value};
use crate::tensor::Tensor;

/// What a step does.
#[derive(Debug)]
enum Kind {
    Op(Op),
    /// Runs one branch's steps, then copies its outputs to the step's.
    If {
        then: Vec<Step>,
        then_out: Vec<usize>,
        other: Vec<Step>,
        other_out: Vec<usize>,
    },
}

#[derive(Debug)]
struct Step {
    kind: Kind,
    inputs: Vec<Option<usize>>,
    outputs: Vec<usize>,
    /// Slots no later step reads: emptied after this one.
    free: Vec<usize>,
}

/// A compiled graph. Slots hold values by number; `inputs` are the slots
/// the caller fills (`None` where the graph was given a constant instead),
/// `outputs` those it reads back.
#[derive(Debug)]
pub(crate) struct Plan {
    slots: usize,
    constants: Vec<(usize, Value)>,
    /// Steps that read only constants and the invariant inputs.
    invariant: Vec<Step>,
    steps: Vec<Step>,
    pub inputs: Vec<Option<usize>>,
    pub outputs: Vec<usize>,
}

/// The values of one run, by slot.
pub(crate) type Env = Vec<Option<Value>>;

/// What a graph is made of, for [`Plan::compile`].
pub(crate) struct Source<'a> {
    pub nodes: &'a [Node],
    /// Values known at load, by name.
    pub constants: Vec<(String, Tensor)>,
    /// The names the caller fills in each run.
    pub inputs: &'a [String],
    /// Of those, the ones that stay the same from run to run.
    pub invariant: &'a [String],
    pub outputs: &'a [String],
}

struct Builder {
    names: HashMap<String, usize>,
    slots: usize,
    constants: HashMap<usize, Value>,
    /// How many nodes read each name (a branch's reads included).
    readers: HashMap<String, usize>,
    /// The step that made each slot, where it is a `Conv`.
    conv_of: HashMap<usize, usize>,
}

fn count_readers(nodes: &[Node], out: &mut HashMap<String, usize>) {
    for n in nodes {
        for i in n.inputs.iter().filter(|i| !i.is_empty()) {
            *out.entry(i.clone()).or_default() += 1;
        }
        for a in &n.attributes {
            if let Some(g) = &a.graph {
                count_readers(&g.nodes, out);
                for o in &g.outputs {
                    *out.entry(o.clone()).or_default() += 1;
                }
            }
        }
    }
}

impl Builder {
    fn bind(&mut self, name: &str) -> usize {
        let slot = self.slots;
        self.slots += 1;
        self.names.insert(name.to_owned(), slot);
        slot
    }

    fn constant(&mut self, name: &str, value: Tensor) -> usize {
        let slot = self.bind(name);
        self.constants.insert(slot, Arc::new(value));
        slot
    }

    fn find(&self, name: &str) -> Result<usize, String> {
        self.names
            .get(name)
            .copied()
            .ok_or_else(|| format!("the value {name:?} is read before it is made"))
    }

    fn steps(&mut self, nodes: &[Node]) -> Result<Vec<Step>, String> {
        let mut steps = Vec::new();
        for node in nodes {
            match node.op.as_str() {
                "Constant" => {
                    let value = node
                        .attribute("value")
                        .and_then(|a| a.tensor.clone())
                        .ok_or("a Constant without a tensor value")?;
                    let name = node.outputs.first().ok_or("a Constant without an output")?;
                    self.constant(name, value);
                }
                "If" => steps.push(self.branch(node)?),
                "BatchNormalization" if self.fold(node, &mut steps)? => {}
                _ => {
                    if let Some(step) = self.node(node, steps.len())? {
                        steps.push(step);
                    }
                }
            }
        }
        Ok(steps)
    }

    /// A node as a step, or `None` when its inputs are all constant and it
    /// was computed here.
    fn node(&mut self, node: &Node, index: usize) -> Result<Option<Step>, String> {
        let op = Op::of(node)?;
        let inputs = node
            .inputs
            .iter()
            .map(|n| {
                if n.is_empty() {
                    Ok(None)
                } else {
                    self.find(n).map(Some)
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        if inputs
            .iter()
            .flatten()
            .all(|s| self.constants.contains_key(s))
        {
            let values: Env = inputs
                .iter()
                .map(|s| s.and_then(|s| self.constants.get(&s).cloned()))
                .collect();
            let made = ops::run(&op, &values, node.outputs.len())
                .map_err(|e| format!("computing a constant: {e}"))?;
            if made.len() != node.outputs.len() {
                return Err(format!("{} made the wrong number of values", node.op));
            }
            for (name, value) in node.outputs.iter().zip(made) {
                self.constant(name, value);
            }
            return Ok(None);
        }
        let outputs: Vec<usize> = node.outputs.iter().map(|n| self.bind(n)).collect();
        if matches!(op, Op::Conv(_)) {
            self.conv_of.insert(outputs[0], index);
        }
        Ok(Some(Step {
            kind: Kind::Op(op),
            inputs,
            outputs,
            free: Vec::new(),
        }))
    }

    /// Folds a batch normalisation into the convolution before it, when
    /// that convolution's weights are constants and nothing else reads its
    /// output: whether it did.
    fn fold(&mut self, node: &Node, steps: &mut [Step]) -> Result<bool, String> {
        let (Some(x), Some(out)) = (node.inputs.first(), node.outputs.first()) else {
            return Ok(false);
        };
        let Ok(slot) = self.find(x) else {
            return Ok(false);
        };
        let (Some(&at), Some(1)) = (self.conv_of.get(&slot), self.readers.get(x)) else {
            return Ok(false);
        };
        let params: Option<Vec<Value>> = node.inputs[1..]
            .iter()
            .map(|n| {
                self.find(n)
                    .ok()
                    .and_then(|s| self.constants.get(&s).cloned())
            })
            .collect();
        let Some(step) = steps
            .get_mut(at)
            .filter(|s| s.outputs.first() == Some(&slot))
        else {
            return Ok(false);
        };
        let weight = step
            .inputs
            .get(1)
            .copied()
            .flatten()
            .and_then(|s| self.constants.get(&s).cloned());
        let (Some(params), Some(weight)) = (params, weight) else {
            return Ok(false);
        };
        let [gamma, beta, mean, variance] = &params[..] else {
            return Ok(false);
        };
        let epsilon = node.float("epsilon", 1e-5);
        let (scale, shift) = ops::batch_norm_affine([gamma, beta, mean, variance], epsilon)?;
        let channels = scale.len();
        let mut w = weight.as_f32("Conv")?.to_vec();
        if weight.shape.first() != Some(&channels) {
            return Err("BatchNormalization's statistics do not match its Conv".to_owned());
        }
        let per = w.len() / channels.max(1);
        for (c, chunk) in w.chunks_exact_mut(per.max(1)).enumerate() {
            for v in chunk.iter_mut() {
                *v *= scale[c];
            }
        }
        let bias_slot = step.inputs.get(2).copied().flatten();
        let mut bias = match bias_slot.and_then(|s| self.constants.get(&s)) {
            Some(b) => b.as_f32("Conv's bias")?.to_vec(),
            None if bias_slot.is_none() => vec![0.0; channels],
            None => return Ok(false),
        };
        if bias.len() != channels {
            return Err("Conv's bias does not match its weights".to_owned());
        }
        for c in 0..channels {
            bias[c] = bias[c] * scale[c] + shift[c];
        }
        let w_slot = self.constant(
            &format!("{out}/folded weight"),
            Tensor::floats(weight.shape.clone(), w)?,
        );
        let b_slot = self.constant(
            &format!("{out}/folded bias"),
            Tensor::floats(vec![channels], bias)?,
        );
        step.inputs.truncate(1);
        step.inputs.extend([Some(w_slot), Some(b_slot)]);
        self.names.insert(out.clone(), slot);
        Ok(true)
    }

    fn branch(&mut self, node: &Node) -> Result<Step, String> {
        let condition = self.find(node.inputs.first().ok_or("an If without a condition")?)?;
        let mut side = |name: &str| -> Result<(Vec<Step>, Vec<usize>), String> {
            let graph = node
                .attribute(name)
                .and_then(|a| a.graph.as_ref())
                .ok_or("an If lacks a branch")?;
            if graph.outputs.len() != node.outputs.len() {
                return Err("an If's branches do not match its outputs".to_owned());
            }
            let outer = self.names.clone();
            for (name, value) in &graph.initializers {
                self.constant(name, value.clone());
            }
            let steps = self.steps(&graph.nodes)?;
            let outputs = graph
                .outputs
                .iter()
                .map(|o| self.find(o))
                .collect::<Result<_, _>>()?;
            self.names = outer;
            Ok((steps, outputs))
        };
        let (then, then_out) = side("then_branch")?;
        let (other, other_out) = side("else_branch")?;
        let outputs = node.outputs.iter().map(|n| self.bind(n)).collect();
        Ok(Step {
            kind: Kind::If {
                then,
                then_out,
                other,
                other_out,
            },
            inputs: vec![Some(condition)],
            outputs,
            free: Vec::new(),
        })
    }
}

/// Every slot a step reads, its branches' reads included.
fn reads(step: &Step, out: &mut Vec<usize>) {
    out.extend(step.inputs.iter().flatten());
    if let Kind::If {
        then,
        then_out,
        other,
        other_out,
    } = &step.kind
    {
        out.extend(then_out.iter().chain(other_out));
        for s in then.iter().chain(other) {
            reads(s, out);
        }
    }
}

impl Plan {
    pub fn compile(source: Source<'_>) -> Result<Self, String> {
        let mut readers = HashMap::new();
        count_readers(source.nodes, &mut readers);
        for o in source.outputs {
            *readers.entry(o.clone()).or_default() += 1;
        }
        let mut b = Builder {
            names: HashMap::new(),
            slots: 0,
            constants: HashMap::new(),
            readers,
            conv_of: HashMap::new(),
        };
        let mut constant_names = HashSet::new();
        for (name, value) in source.constants {
            constant_names.insert(name.clone());
            b.constant(&name, value);
        }
        let inputs: Vec<Option<usize>> = source
            .inputs
            .iter()
            .map(|n| (!constant_names.contains(n)).then(|| b.bind(n)))
            .collect();
        let all = b.steps(source.nodes)?;
        let outputs: Vec<usize> = source
            .outputs
            .iter()
            .map(|o| b.find(o))
            .collect::<Result<_, _>>()?;
        // The steps that depend only on constants and invariant inputs.
        let mut fixed: HashSet<usize> = b.constants.keys().copied().collect();
        for name in source.invariant {
            fixed.insert(b.find(name)?);
        }
        let (mut invariant, mut steps) = (Vec::new(), Vec::new());
        for step in all {
            let mut read = Vec::new();
            reads(&step, &mut read);
            if matches!(step.kind, Kind::Op(_)) && read.iter().all(|s| fixed.contains(s)) {
                fixed.extend(step.outputs.iter().copied());
                invariant.push(step);
            } else {
                steps.push(step);
            }
        }
        // Each slot a varying step makes is dropped after its last reader.
        let mut last: HashMap<usize, usize> = HashMap::new();
        for (i, step) in steps.iter().enumerate() {
            let mut read = Vec::new();
            reads(step, &mut read);
            for s in read {
                last.insert(s, i);
            }
        }
        let kept: HashSet<usize> = outputs
            .iter()
            .copied()
            .chain(fixed.iter().copied())
            .collect();
        for (slot, at) in last {
            if !kept.contains(&slot) && inputs.iter().flatten().all(|i| *i != slot) {
                steps[at].free.push(slot);
            }
        }
        Ok(Self {
            slots: b.slots,
            constants: b.constants.into_iter().collect(),
            invariant,
            steps,
            inputs,
            outputs,
        })
    }

    /// A run's slots, the constants in place.
    pub fn env(&self) -> Env {
        let mut env = vec![None; self.slots];
        for (slot, value) in &self.constants {
            env[*slot] = Some(value.clone());
        }
        env
    }

    /// The value of `slot` when it is a constant.
    pub fn constant(&self, slot: usize) -> Option<&Value> {
        self.constants
            .iter()
            .find(|(s, _)| *s == slot)
            .map(|(_, v)| v)
    }

    /// Runs the steps that depend only on invariant inputs (filled in `env`).
    pub fn run_invariant(&self, env: &mut Env) -> Result<(), String> {
        run(&self.invariant, env)
    }

    /// Runs the rest.
    pub fn run(&self, env: &mut Env) -> Result<(), String> {
        run(&self.steps, env)
    }
}

fn run(steps: &[Step], env: &mut Env) -> Result<(), String> {
    for step in steps {
        match &step.kind {
            Kind::Op(op) => {
                let made = match (op.unary(), step.inputs.first()) {
                    // A value read for the last time is changed in place.
                    (Some(u), Some(Some(slot))) if step.free.contains(slot) => {
                        let value = env[*slot].take().ok_or("a value read before it is made")?;
                        let mut value =
                            Arc::try_unwrap(value).unwrap_or_else(|shared| (*shared).clone());
                        ops::apply(u, &mut value)?;
                        vec![value]
                    }
                    _ => {
                        let inputs: Env = step
                            .inputs
                            .iter()
                            .map(|s| s.and_then(|s| env[s].clone()))
                            .collect();
                        ops::run(op, &inputs, step.outputs.len())?
                    }
                };
                if made.len() != step.outputs.len() {
                    return Err(format!("{op:?} made the wrong number of values"));
                }
                for (slot, value) in step.outputs.iter().zip(made) {
                    env[*slot] = Some(Arc::new(value));
                }
            }
            Kind::If {
                then,
                then_out,
                other,
                other_out,
            } => {
                let condition = step.inputs[0]
                    .and_then(|s| env[s].clone())
                    .ok_or("an If's condition is missing")?;
                let (branch, outputs) = if condition.truth() {
                    (then, then_out)
                } else {
                    (other, other_out)
                };
                run(branch, env)?;
                for (to, from) in step.outputs.iter().zip(outputs) {
                    let value = env[*from].clone();
                    env[*to] = value;
                }
            }
        }
        for slot in &step.free {
            env[*slot] = None;
        }
    }
    Ok(())
}
