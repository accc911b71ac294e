//! The table-structure model: SLANet-plus read by tract, its decoding loop
//! run here.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use tract_onnx::prelude::*;

use crate::error::{LoadError, RunError};
use crate::file::{TABLE_MODEL_FILE, TABLE_MODEL_SHA256, read_model};
use crate::graph::{self, Cut};
use crate::picture::Picture;
use crate::tokens::{self, TableGuess};

/// `SIDE` is the square, in pixels, every picture is scaled into for the
/// model (what it was trained on): the work per table is the same however
/// large the picture.
const SIDE: usize = 488;

/// `MAX_PASSES` is the most decoding passes (tokens) one table gets, as
/// the model was trained (its buffers hold 501 rows): about 300 cells.
const MAX_PASSES: usize = 500;

type Plan = Arc<TypedRunnableModel>;

/// The table-structure model, loaded and checked, ready to read pictures.
/// It holds no file and does no I/O after [`TableModel::load`]; it can be
/// shared between threads.
#[derive(Debug)]
pub struct TableModel {
    encoder: Plan,
    /// The first pass (the state starts as scalars) and every later one.
    first: Plan,
    next: Plan,
    vocabulary: Vec<String>,
    trip_count: usize,
    states: usize,
    fed: usize,
    buffers: Buffers,
}

/// Where in the decoding state the model writes each pass's token scores
/// and cell box: two buffers of one row a pass, `[1, rows, vocabulary]`
/// and `[1, rows, 8]`. The part of the graph after the loop only cuts
/// them to the passes run (and turns scores into probabilities, which
/// does not change the most likely token), so porter reads them itself.
#[derive(Debug, Clone, Copy)]
struct Buffers {
    scores: usize,
    boxes: usize,
    rows: usize,
}

impl Buffers {
    fn find(state: &[TypedFact], words: usize) -> Option<Self> {
        let shape = |f: &TypedFact| -> Option<Vec<usize>> {
            (f.datum_type == f32::datum_type())
                .then(|| {
                    f.shape
                        .iter()
                        .map(|d| match d {
                            TDim::Val(v) => usize::try_from(*v).ok(),
                            _ => None,
                        })
                        .collect::<Option<Vec<_>>>()
                })
                .flatten()
        };
        let mut scores = None;
        let mut boxes = None;
        for (i, fact) in state.iter().enumerate() {
            match shape(fact).as_deref() {
                Some(&[1, rows, w]) if w == words && rows > 1 => scores = Some((i, rows)),
                Some(&[1, rows, 8]) if rows > 1 => boxes = Some((i, rows)),
                _ => {}
            }
        }
        let ((scores, rows), (boxes, box_rows)) = (scores?, boxes?);
        (rows == box_rows).then_some(Self {
            scores,
            boxes,
            rows,
        })
    }
}

/// How much a picture may cost: a deadline and a cancel flag, looked at
/// between decoding passes (each a millisecond or so), and a cap on passes.
#[derive(Debug, Clone, Copy)]
pub struct Budget<'a> {
    pub deadline: Option<Instant>,
    pub cancel: Option<&'a AtomicBool>,
    pub max_passes: usize,
}

impl Default for Budget<'_> {
    fn default() -> Self {
        Self {
            deadline: None,
            cancel: None,
            max_passes: MAX_PASSES,
        }
    }
}

impl Budget<'_> {
    fn check(&self) -> Result<(), RunError> {
        if self.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(RunError::Stopped("cancelled"));
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(RunError::Stopped("past its time budget"));
        }
        Ok(())
    }
}

impl TableModel {
    /// Loads `slanet-plus.onnx` from `models_dir`: reads it (at most 64
    /// MiB), checks its sha256 against the pinned one, cuts its graph and
    /// prepares it for this machine. Every failure is a [`LoadError`] that
    /// names the file.
    pub fn load(models_dir: &Path) -> Result<Self, LoadError> {
        let bytes = read_model(models_dir, TABLE_MODEL_FILE, Some(TABLE_MODEL_SHA256))?;
        Self::from_bytes(&bytes).map_err(|reason| LoadError::Model {
            path: models_dir.join(TABLE_MODEL_FILE),
            reason,
        })
    }

    /// Prepares a model from the bytes of an ONNX file, unchecked (the
    /// digest check is [`Self::load`]'s): the reason when it is not a model
    /// this crate can run. Never panics on any bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, String> {
        match std::panic::catch_unwind(|| Self::prepare(bytes)) {
            Ok(result) => result,
            Err(_) => Err("the ONNX runtime failed on it unexpectedly".to_owned()),
        }
    }

    fn prepare(bytes: &[u8]) -> Result<Self, String> {
        let onnx = tract_onnx::onnx();
        let proto = onnx
            .proto_model_for_read(&mut &bytes[..])
            .map_err(|e| format!("it is not an ONNX model ({e})"))?;
        let vocabulary = vocabulary(&proto)?;
        let cut =
            graph::cut(&proto).map_err(|e| format!("its graph is not one porter runs: {e}"))?;
        let Cut {
            encoder,
            step,
            trip_count,
            states,
            fed,
        } = cut;
        let why = |what: &'static str| {
            move |e: TractError| format!("its {what} could not be prepared: {e:#}")
        };
        let input = f32::fact([1, 3, SIDE, SIDE]);
        let encoder = typed(&onnx, &encoder, &[input], false).map_err(why("encoder"))?;
        let made = output_facts(&encoder).map_err(why("encoder"))?;
        // The first pass takes the state as the encoder starts it (some of
        // it scalars); every later pass the state a pass leaves.
        let mut first_facts = vec![i64::scalar_fact()];
        first_facts.extend(made[..1 + states + fed].iter().cloned());
        let first = typed(&onnx, &step, &first_facts, true).map_err(why("first decoding pass"))?;
        let after = output_facts(&first).map_err(why("first decoding pass"))?;
        let mut next_facts = vec![i64::scalar_fact()];
        next_facts.extend(after.iter().cloned());
        next_facts.extend(made[1 + states..1 + states + fed].iter().cloned());
        let next = typed(&onnx, &step, &next_facts, true).map_err(why("decoding pass"))?;
        let settled = output_facts(&next).map_err(why("decoding pass"))?;
        if settled != after {
            return Err("its decoding state changes shape after the second pass".to_owned());
        }
        let buffers = Buffers::find(&settled[1..], vocabulary.len())
            .ok_or("its decoding state holds no buffers of tokens and boxes")?;
        let plan = |m: TypedModel, what: &'static str| m.into_runnable().map_err(why(what));
        Ok(Self {
            encoder: plan(encoder, "encoder")?,
            first: plan(first, "first decoding pass")?,
            next: plan(next, "decoding pass")?,
            vocabulary,
            trip_count: usize::try_from(trip_count.max(0)).unwrap_or(0),
            states,
            fed,
            buffers,
        })
    }

    /// Reads a picture of one table: its rows, columns, spans and cell
    /// boxes in the picture's pixels. The picture is scaled to the model's
    /// fixed input first, so the work does not grow with its size.
    pub fn read(&self, picture: &Picture<'_>, budget: &Budget<'_>) -> Result<TableGuess, RunError> {
        picture.check()?;
        budget.check()?;
        let runtime = |e: TractError| RunError::Runtime(format!("{e:#}"));
        let input =
            Tensor::from_shape(&[1, 3, SIDE, SIDE], &picture.input(SIDE)).map_err(runtime)?;
        let made = self
            .encoder
            .run(tvec![input.into()])
            .map_err(|e| RunError::Runtime(format!("encoder: {e:#}")))?;
        if made.len() != 1 + self.states + self.fed {
            return Err(RunError::Runtime(
                "the encoder gave the wrong number of values".to_owned(),
            ));
        }
        let mut condition = made[0].clone();
        let mut state: Vec<TValue> = made[1..=self.states].to_vec();
        let fed = &made[1 + self.states..1 + self.states + self.fed];
        let passes = self.trip_count.min(budget.max_passes);
        let mut first = self.first.spawn().map_err(runtime)?;
        let mut next = self.next.spawn().map_err(runtime)?;
        let mut done = 0;
        for pass in 0..passes {
            if !truth(&condition) {
                break;
            }
            done = pass + 1;
            budget.check()?;
            let number = i64::try_from(pass).unwrap_or(i64::MAX);
            let mut inputs: TVec<TValue> = tvec![tensor0(number).into(), condition];
            inputs.extend(state.drain(..));
            inputs.extend(fed.iter().cloned());
            let mut out = if pass == 0 {
                first.run(inputs)
            } else {
                next.run(inputs)
            }
            .map_err(|e| RunError::Runtime(format!("decoding pass {pass}: {e:#}")))?;
            if out.len() != 1 + self.states {
                return Err(RunError::Runtime(
                    "a decoding pass gave the wrong number of values".to_owned(),
                ));
            }
            state = out.drain(1..).collect();
            condition = out.remove(0);
            // The model runs on to its last pass even after it wrote the
            // end token; nothing after that token is read, so stop there.
            if pass > 0 && self.wrote_end(&state[self.buffers.scores], pass) {
                break;
            }
        }
        let rows = passes.min(self.buffers.rows).min(done);
        let longer = picture.width.max(picture.height) as f32;
        let size = (picture.width as f32, picture.height as f32);
        let scores = &state[self.buffers.scores];
        let boxes = &state[self.buffers.boxes];
        Ok(tokens::read(
            &self.tokens(boxes, scores, rows)?,
            &self.vocabulary,
            longer,
            size,
        ))
    }

    /// Whether pass `pass` wrote the end token as its most likely one.
    fn wrote_end(&self, scores: &Tensor, pass: usize) -> bool {
        let width = self.vocabulary.len();
        let Ok(view) = scores.to_plain_array_view::<f32>() else {
            return false;
        };
        let Some(all) = view.as_slice() else {
            return false;
        };
        let Some(row) = all.get(pass * width..(pass + 1) * width) else {
            return false;
        };
        let best = row
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map_or(0, |(i, _)| i);
        best + 1 == width
    }

    /// The most likely token at each pass, with that pass's box.
    fn tokens(
        &self,
        locations: &Tensor,
        words: &Tensor,
        rows: usize,
    ) -> Result<Vec<(usize, [f32; 8])>, RunError> {
        let runtime = |e: TractError| RunError::Runtime(format!("{e:#}"));
        let values = |t: &Tensor| -> Result<Vec<f32>, RunError> {
            Ok(t.to_plain_array_view::<f32>()
                .map_err(runtime)?
                .iter()
                .copied()
                .collect())
        };
        let (boxes, scores) = (values(locations)?, values(words)?);
        let width = self.vocabulary.len();
        let passes = (scores.len() / width).min(rows);
        let mut out = Vec::with_capacity(passes);
        for pass in 0..passes {
            let row = &scores[pass * width..(pass + 1) * width];
            let best = row
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .map_or(0, |(i, _)| i);
            let mut corners = [0f32; 8];
            if let Some(b) = boxes.get(pass * 8..pass * 8 + 8) {
                corners.copy_from_slice(b);
            }
            out.push((best, corners));
        }
        Ok(out)
    }
}

/// A cut graph as a typed, optimised model for inputs of `facts`. In a
/// decoding pass (`pass`), the symbols tract is left with are the lengths
/// of slices that start at the pass's counter (the pass's own row of a
/// buffer): one row, always, which tract cannot see from the graph; they
/// are bound to 1 so the pass is fully static and optimised.
fn typed(
    onnx: &tract_onnx::Onnx,
    proto: &tract_onnx::pb::ModelProto,
    facts: &[TypedFact],
    pass: bool,
) -> TractResult<TypedModel> {
    let mut model = onnx.model_for_proto_model(proto)?;
    for (i, fact) in facts.iter().enumerate() {
        model.set_input_fact(i, InferenceFact::from(fact.clone()))?;
    }
    let mut typed = model.into_typed()?;
    if pass {
        let mut left = std::collections::HashMap::new();
        for node in typed.nodes() {
            for output in &node.outputs {
                for dim in output.fact.shape.iter() {
                    for symbol in dim.symbols() {
                        left.insert(symbol, TDim::Val(1));
                    }
                }
            }
        }
        if !left.is_empty() {
            typed = typed.set_symbols(&left)?;
        }
    }
    typed.into_optimized()
}

/// Whether a condition tensor holds true.
fn truth(value: &TValue) -> bool {
    value
        .cast_to::<bool>()
        .ok()
        .and_then(|t| {
            t.to_plain_array_view::<bool>()
                .ok()
                .and_then(|v| v.iter().next().copied())
        })
        .unwrap_or(false)
}

/// The type and shape of a typed model's outputs, without the values
/// tract may know of them (a pass counter is known in one pass, and must
/// not be taken as a constant by the next).
fn output_facts(model: &TypedModel) -> TractResult<Vec<TypedFact>> {
    model
        .output_outlets()?
        .iter()
        .map(|o| {
            let fact = model.outlet_fact(*o)?;
            Ok(TypedFact::dt_shape(fact.datum_type, fact.shape.clone()))
        })
        .collect()
}

/// The model's tokens: the start token, the words its metadata lists (the
/// plain cell `<td></td>` in place of `<td>`, as it was trained), the end
/// token.
fn vocabulary(proto: &tract_onnx::pb::ModelProto) -> Result<Vec<String>, String> {
    let listed = proto
        .metadata_props
        .iter()
        .find(|p| p.key == "character")
        .ok_or("it lists no tokens (no `character` metadata)")?;
    let mut words: Vec<String> = listed.value.lines().map(str::to_owned).collect();
    words.retain(|w| w != "<td>");
    if !words.iter().any(|w| w == "<td></td>") {
        words.push("<td></td>".to_owned());
    }
    let mut out = vec!["sos".to_owned()];
    out.extend(words);
    out.push("eos".to_owned());
    Ok(out)
}
