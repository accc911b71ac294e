//! The table-structure model: SLANet-plus, its encoder and decoding pass
//! run by this crate's interpreter, its decoding loop run here.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::error::{LoadError, RunError};
use crate::file::{TABLE_MODEL_FILE, TABLE_MODEL_SHA256, read_model};
use crate::graph::{self, Program};
use crate::interp::Env;
use crate::onnx;
use crate::ops::Value;
use crate::picture::Picture;
use crate::tensor::{Data, Tensor};
use crate::tokens::{self, TableGuess};

/// `SIDE` is the square, in pixels, every picture is scaled into for the
/// model (what it was trained on): the work per table is the same however
/// large the picture.
const SIDE: usize = 488;

/// `MAX_PASSES` is the most decoding passes (tokens) one table gets, as
/// the model was trained (its buffers hold 501 rows): about 300 cells.
const MAX_PASSES: usize = 500;

/// The table-structure model, loaded and checked, ready to read pictures.
/// It holds no file and does no I/O after [`TableModel::load`]; it can be
/// shared between threads.
#[derive(Debug)]
pub struct TableModel {
    program: Program,
    vocabulary: Vec<String>,
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
    fn find(state: &[Value], words: usize) -> Option<Self> {
        let mut scores = None;
        let mut boxes = None;
        for (i, value) in state.iter().enumerate() {
            if !matches!(value.data, Data::F32(_)) {
                continue;
            }
            match value.shape[..] {
                [1, rows, w] if w == words && rows > 1 => scores = Some((i, rows)),
                [1, rows, 8] if rows > 1 => boxes = Some((i, rows)),
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
    /// MiB), checks its sha256 against the pinned one, and compiles its
    /// graph. Every failure is a [`LoadError`] that names the file.
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
            Err(_) => Err("the model could not be prepared (an internal error)".to_owned()),
        }
    }

    fn prepare(bytes: &[u8]) -> Result<Self, String> {
        let model = onnx::model(bytes).map_err(|e| format!("it is not an ONNX model ({e})"))?;
        let vocabulary = vocabulary(&model)?;
        if model.graph.inputs.len() != 1 {
            return Err("its graph does not take one picture".to_owned());
        }
        let program = graph::program(&model.graph)
            .map_err(|e| format!("its graph is not one porter runs: {e}"))?;
        Ok(Self {
            program,
            vocabulary,
        })
    }

    /// Reads a picture of one table: its rows, columns, spans and cell
    /// boxes in the picture's pixels. The picture is scaled to the model's
    /// fixed input first, so the work does not grow with its size.
    pub fn read(&self, picture: &Picture<'_>, budget: &Budget<'_>) -> Result<TableGuess, RunError> {
        let tokens = self.read_tokens(picture, budget)?;
        let longer = picture.width.max(picture.height) as f32;
        let size = (picture.width as f32, picture.height as f32);
        Ok(tokens::read(&tokens, &self.vocabulary, longer, size))
    }

    /// The model's input for `picture` (`[1, 3, SIDE, SIDE]`, row-major):
    /// for checking this crate's runtime against another on the same input.
    #[doc(hidden)]
    pub fn input_of(picture: &Picture<'_>) -> Result<(Vec<usize>, Vec<f32>), RunError> {
        picture.check()?;
        Ok((vec![1, 3, SIDE, SIDE], picture.input(SIDE)))
    }

    /// The most likely token at each pass with that pass's box (in units of
    /// the model's square input), as the model gave them: the raw answer
    /// [`Self::read`] lays out, for checking against another runtime.
    #[doc(hidden)]
    pub fn read_tokens(
        &self,
        picture: &Picture<'_>,
        budget: &Budget<'_>,
    ) -> Result<Vec<(usize, [f32; 8])>, RunError> {
        picture.check()?;
        budget.check()?;
        let input = Tensor::floats(vec![1, 3, SIDE, SIDE], picture.input(SIDE))
            .map_err(RunError::Runtime)?;
        match std::panic::catch_unwind(|| self.decode(input, budget)) {
            Ok(result) => result,
            Err(_) => Err(RunError::Runtime("an internal error".to_owned())),
        }
    }

    /// The encoder, then decoding passes until the end token, the model's
    /// condition, or the budget stops them.
    fn decode(
        &self,
        input: Tensor,
        budget: &Budget<'_>,
    ) -> Result<Vec<(usize, [f32; 8])>, RunError> {
        let Program {
            encoder,
            body,
            trip_count,
            passed,
        } = &self.program;
        let runtime =
            |what: &'static str| move |e: String| RunError::Runtime(format!("{what}: {e}"));
        let mut env = encoder.env();
        let slot = encoder.inputs[0]
            .ok_or_else(|| RunError::Runtime("the encoder takes no picture".to_owned()))?;
        env[slot] = Some(Arc::new(input));
        encoder
            .run_invariant(&mut env)
            .map_err(runtime("encoder"))?;
        encoder.run(&mut env).map_err(runtime("encoder"))?;
        let made: Vec<Value> = encoder
            .outputs
            .iter()
            .map(|s| env[*s].clone())
            .collect::<Option<_>>()
            .ok_or_else(|| RunError::Runtime("the encoder left a value unmade".to_owned()))?;
        drop(env);
        budget.check()?;
        // The body's slots with its invariants and what follows from them.
        let mut base: Env = body.env();
        for (k, value) in made[2..].iter().enumerate() {
            if passed[k]
                && let Some(slot) = body.inputs[k + 2]
            {
                base[slot] = Some(value.clone());
            }
        }
        body.run_invariant(&mut base).map_err(runtime("decoder"))?;
        let mut condition = made[1].clone();
        let mut state: Vec<Value> = made[2..].to_vec();
        let passes = usize::try_from((*trip_count).max(0))
            .unwrap_or(0)
            .min(budget.max_passes);
        let mut buffers = None;
        let mut done = 0;
        for pass in 0..passes {
            if !condition.truth() {
                break;
            }
            done = pass + 1;
            budget.check()?;
            let mut env = base.clone();
            let number = i64::try_from(pass).unwrap_or(i64::MAX);
            let counter = Tensor::ints(Vec::new(), vec![number]).map_err(runtime("decoder"))?;
            let slots = &body.inputs;
            if let (Some(a), Some(b)) = (slots[0], slots[1]) {
                env[a] = Some(Arc::new(counter));
                env[b] = Some(condition.clone());
            }
            for (k, value) in state.iter().enumerate() {
                if !passed[k]
                    && let Some(slot) = slots[k + 2]
                {
                    env[slot] = Some(value.clone());
                }
            }
            body.run(&mut env)
                .map_err(|e| RunError::Runtime(format!("decoding pass {pass}: {e}")))?;
            let out: Vec<Value> = body
                .outputs
                .iter()
                .map(|s| env[*s].clone())
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    RunError::Runtime("a decoding pass left a value unmade".to_owned())
                })?;
            condition = out[0].clone();
            for (k, value) in out[1..].iter().enumerate() {
                if !passed[k] {
                    state[k] = value.clone();
                }
            }
            let found =
                *buffers.get_or_insert_with(|| Buffers::find(&state, self.vocabulary.len()));
            let found = found.ok_or_else(|| {
                RunError::Runtime(
                    "its decoding state holds no buffers of tokens and boxes".to_owned(),
                )
            })?;
            // The model runs on to its last pass even after it wrote the
            // end token; nothing after that token is read, so stop there.
            if pass > 0 && self.wrote_end(&state[found.scores], pass) {
                break;
            }
        }
        let Some(Some(found)) = buffers else {
            return Ok(Vec::new());
        };
        let rows = passes.min(found.rows).min(done);
        self.tokens(&state[found.boxes], &state[found.scores], rows)
    }

    /// Whether pass `pass` wrote the end token as its most likely one.
    fn wrote_end(&self, scores: &Tensor, pass: usize) -> bool {
        let width = self.vocabulary.len();
        let Data::F32(all) = &scores.data else {
            return false;
        };
        let Some(row) = all.get(pass * width..(pass + 1) * width) else {
            return false;
        };
        best(row) + 1 == width
    }

    /// The most likely token at each pass, with that pass's box.
    fn tokens(
        &self,
        locations: &Tensor,
        words: &Tensor,
        rows: usize,
    ) -> Result<Vec<(usize, [f32; 8])>, RunError> {
        let to_runtime = RunError::Runtime;
        let (boxes, scores) = (
            locations.as_f32("the boxes").map_err(to_runtime)?,
            words.as_f32("the scores").map_err(to_runtime)?,
        );
        let width = self.vocabulary.len();
        let passes = (scores.len() / width).min(rows);
        let mut out = Vec::with_capacity(passes);
        for pass in 0..passes {
            let mut corners = [0f32; 8];
            if let Some(b) = boxes.get(pass * 8..pass * 8 + 8) {
                corners.copy_from_slice(b);
            }
            out.push((best(&scores[pass * width..(pass + 1) * width]), corners));
        }
        Ok(out)
    }
}

/// The index of the largest score (the first of equals).
fn best(row: &[f32]) -> usize {
    let mut best = 0;
    for (i, v) in row.iter().enumerate() {
        if *v > row[best] {
            best = i;
        }
    }
    best
}

/// The model's tokens: the start token, the words its metadata lists (the
/// plain cell `<td></td>` in place of `<td>`, as it was trained), the end
/// token.
fn vocabulary(model: &onnx::Model) -> Result<Vec<String>, String> {
    let listed = model
        .metadata
        .iter()
        .find(|(key, _)| key == "character")
        .ok_or("it lists no tokens (no `character` metadata)")?;
    let mut words: Vec<String> = listed.1.lines().map(str::to_owned).collect();
    words.retain(|w| w != "<td>");
    if !words.iter().any(|w| w == "<td></td>") {
        words.push("<td></td>".to_owned());
    }
    let mut out = vec!["sos".to_owned()];
    out.extend(words);
    out.push("eos".to_owned());
    Ok(out)
}
