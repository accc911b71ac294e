//! Whisper's network on the CPU: the audio encoder (two convolutions, then
//! pre-norm transformer layers over 1,500 frames) and the text decoder
//! (token and position embeddings, layers of self-attention over the text
//! so far, cross-attention over the audio, and a feed-forward block, then
//! the embedding matrix as the output projection).
//!
//! The decoder keeps a key-value cache: each new token costs one row
//! through the layers, not the whole text again, and the audio's keys and
//! values for cross-attention are made once per 30 s window. The
//! encoder's weights are held as `f32` (widened from the file's float16
//! when loaded) for matrixmultiply's blocked products over 1,500 frames;
//! the decoder's and the vocabulary (as the output projection) are held
//! in 8 bits a weight, each row with its own step, read a row at a time
//! by the products of one row per beam (`simd`); the token embedding
//! itself stays the file's float16, from which the largest logits of each
//! step are taken again (`Network::logits`). Nothing here reads a file
//! or allocates more than a window's activations.

// Array views are cheap handles (a pointer, shape and strides), passed by
// value as ndarray's own functions take them.
#![allow(clippy::needless_pass_by_value)]

use ndarray::{Array1, Array2, ArrayView2, ArrayViewMut2, Axis, Slice};

use crate::ct2::{FormatError, Variable, Variables};
use crate::{kernels, simd};

/// A dense layer: `y = x · Wᵀ + b`, the weight kept as the file has it
/// (`out × in`).
struct Linear {
    weight: Weight,
    bias: Option<Array1<f32>>,
}

impl Linear {
    fn forward(&self, x: ArrayView2<'_, f32>, threads: usize) -> Array2<f32> {
        let mut y = self.weight.times(x, threads);
        if let Some(bias) = &self.bias {
            y += bias;
        }
        y
    }
}

/// A weight matrix (`out × in`, one output per row), held in `f32` where
/// it meets many rows at once (the encoder's 1,500 frames) and in bytes
/// where it meets one row per beam (the decoder's, token by token): a
/// decoding step reads every decoder weight and the whole vocabulary, and
/// waits on memory for most of its time (see [`simd::ByteRows`]).
enum Weight {
    Full(Array2<f32>),
    Byte(simd::ByteRows),
}

impl Weight {
    /// `x · Wᵀ`.
    fn times(&self, x: ArrayView2<'_, f32>, threads: usize) -> Array2<f32> {
        match self {
            Self::Full(weight) => product(x, weight.view(), threads),
            Self::Byte(weight) if x.nrows() <= FEW_ROWS => byte_product(x, weight, threads),
            Self::Byte(_) => product(x, self.widened().view(), threads),
        }
    }

    /// The matrix in `f32`.
    fn widened(&self) -> std::borrow::Cow<'_, Array2<f32>> {
        match self {
            Self::Full(weight) => std::borrow::Cow::Borrowed(weight),
            Self::Byte(weight) => std::borrow::Cow::Owned(
                Array2::from_shape_vec((weight.rows(), weight.cols()), weight.widened())
                    .unwrap_or_default(),
            ),
        }
    }
}

/// Layer normalisation over each row, with Whisper's epsilon.
struct LayerNorm {
    gamma: Array1<f32>,
    beta: Array1<f32>,
}

impl LayerNorm {
    fn forward(&self, x: ArrayView2<'_, f32>) -> Array2<f32> {
        let mut out = x.to_owned();
        for mut row in out.rows_mut() {
            let n = row.len() as f32;
            let mean = row.sum() / n;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n;
            let scale = 1.0 / (var + 1e-5).sqrt();
            for ((v, g), b) in row.iter_mut().zip(&self.gamma).zip(&self.beta) {
                *v = (*v - mean) * scale * g + b;
            }
        }
        out
    }
}

struct FeedForward {
    norm: LayerNorm,
    up: Linear,
    down: Linear,
}

impl FeedForward {
    fn forward(&self, x: ArrayView2<'_, f32>, threads: usize) -> Array2<f32> {
        let mut hidden = self.up.forward(self.norm.forward(x).view(), threads);
        hidden.mapv_inplace(kernels::gelu);
        self.down.forward(hidden.view(), threads)
    }
}

struct EncoderLayer {
    norm: LayerNorm,
    /// Queries, keys and values in one product (`3D × D`).
    qkv: Linear,
    out: Linear,
    ffn: FeedForward,
}

struct DecoderLayer {
    self_norm: LayerNorm,
    self_qkv: Linear,
    self_out: Linear,
    cross_norm: LayerNorm,
    cross_query: Linear,
    /// Keys and values of the audio in one product (`2D × D`).
    cross_kv: Linear,
    cross_out: Linear,
    ffn: FeedForward,
}

/// Whisper's weights, ready to run.
pub(crate) struct Network {
    conv1: (Array2<f32>, Array1<f32>),
    conv2: (Array2<f32>, Array1<f32>),
    encoder_positions: Array2<f32>,
    encoder_layers: Vec<EncoderLayer>,
    encoder_norm: LayerNorm,
    /// The token embedding as the output projection, in bytes: read whole
    /// at every step.
    embeddings: Weight,
    /// The token embedding as the file has it (float16), of which a step
    /// reads a row per beam.
    token_embeddings: simd::HalfRows,
    decoder_positions: Array2<f32>,
    decoder_layers: Vec<DecoderLayer>,
    decoder_norm: LayerNorm,
    heads: usize,
    pub width: usize,
    pub mel_bands: usize,
}

/// Takes a variable of exactly `shape`, or says why not.
fn tensor(vars: &mut Variables, name: &str, shape: &[usize]) -> Result<Variable, FormatError> {
    let variable = vars.take(name)?;
    if variable.shape != shape {
        return Err(FormatError(format!(
            "variable {name} has shape {:?} where {shape:?} was expected",
            variable.shape
        )));
    }
    Ok(variable)
}

fn matrix(
    vars: &mut Variables,
    name: &str,
    rows: usize,
    cols: usize,
) -> Result<Array2<f32>, FormatError> {
    let v = tensor(vars, name, &[rows, cols])?;
    Array2::from_shape_vec((rows, cols), v.into_f32())
        .map_err(|_| FormatError(format!("variable {name} does not fill its shape")))
}

fn vector(vars: &mut Variables, name: &str, len: usize) -> Result<Array1<f32>, FormatError> {
    Ok(Array1::from(tensor(vars, name, &[len])?.into_f32()))
}

fn linear(
    vars: &mut Variables,
    prefix: &str,
    out: usize,
    inp: usize,
) -> Result<Linear, FormatError> {
    Ok(Linear {
        weight: Weight::Full(matrix(vars, &format!("{prefix}/weight"), out, inp)?),
        bias: Some(vector(vars, &format!("{prefix}/bias"), out)?),
    })
}

/// A dense layer of the decoder's, which meets a row per beam: its weight
/// in bytes.
fn decoder_linear(
    vars: &mut Variables,
    prefix: &str,
    out: usize,
    inp: usize,
) -> Result<Linear, FormatError> {
    Ok(Linear {
        weight: byte_matrix(vars, &format!("{prefix}/weight"), out, inp)?,
        bias: Some(vector(vars, &format!("{prefix}/bias"), out)?),
    })
}

/// A matrix held in bytes, as [`Weight::Byte`].
fn byte_matrix(
    vars: &mut Variables,
    name: &str,
    rows: usize,
    cols: usize,
) -> Result<Weight, FormatError> {
    let values = tensor(vars, name, &[rows, cols])?.into_f32();
    Ok(Weight::Byte(simd::ByteRows::new(&values, rows, cols)))
}

fn norm(vars: &mut Variables, prefix: &str, width: usize) -> Result<LayerNorm, FormatError> {
    Ok(LayerNorm {
        gamma: vector(vars, &format!("{prefix}/gamma"), width)?,
        beta: vector(vars, &format!("{prefix}/beta"), width)?,
    })
}

/// A feed-forward block; `dense` makes its layers (the decoder's hold
/// bytes).
fn feed_forward(
    vars: &mut Variables,
    prefix: &str,
    width: usize,
    dense: fn(&mut Variables, &str, usize, usize) -> Result<Linear, FormatError>,
) -> Result<FeedForward, FormatError> {
    Ok(FeedForward {
        norm: norm(vars, &format!("{prefix}/layer_norm"), width)?,
        up: dense(vars, &format!("{prefix}/linear_0"), 4 * width, width)?,
        down: dense(vars, &format!("{prefix}/linear_1"), width, 4 * width)?,
    })
}

/// A convolution's kernel as a matrix (`out × in·3`) and its bias.
fn conv(
    vars: &mut Variables,
    prefix: &str,
    out: usize,
    inp: usize,
) -> Result<(Array2<f32>, Array1<f32>), FormatError> {
    let name = format!("{prefix}/weight");
    let weight = tensor(vars, &name, &[out, inp, 3])?;
    let weight = Array2::from_shape_vec((out, inp * 3), weight.into_f32())
        .map_err(|_| FormatError(format!("variable {name} does not fill its shape")))?;
    Ok((weight, vector(vars, &format!("{prefix}/bias"), out)?))
}

/// A count stored as a scalar variable.
fn scalar(vars: &mut Variables, name: &str) -> Result<usize, FormatError> {
    let v = vars.take(name)?;
    match v.scalar() {
        Some(n) if (1.0..=1024.0).contains(&n) => Ok(n as usize),
        _ => Err(FormatError(format!("variable {name} is not a small count"))),
    }
}

impl Network {
    /// Builds the network from a Whisper `model.bin`'s variables, checking
    /// every shape against the model's width, read from the token
    /// embedding.
    pub fn from_variables(vars: &mut Variables, vocabulary: usize) -> Result<Self, FormatError> {
        if vars.spec != "WhisperSpec" {
            return Err(FormatError(format!(
                "it is a {} model, not Whisper",
                vars.spec
            )));
        }
        let embedding = vars.take("decoder/embeddings/weight")?;
        let [tokens, width] = embedding.shape[..] else {
            return Err(FormatError(
                "the token embedding is not a matrix".to_owned(),
            ));
        };
        if tokens != vocabulary {
            return Err(FormatError(format!(
                "its token embedding has {tokens} rows but its vocabulary {vocabulary} tokens"
            )));
        }
        let heads = scalar(vars, "encoder/num_heads")?;
        if width == 0 || width % heads != 0 {
            return Err(FormatError(format!(
                "its width {width} does not split into {heads} heads"
            )));
        }
        let mel_bands = vars
            .by_name
            .get("encoder/conv1/weight")
            .and_then(|v| v.shape.get(1).copied())
            .unwrap_or(80);
        let conv1 = conv(vars, "encoder/conv1", width, mel_bands)?;
        let conv2 = conv(vars, "encoder/conv2", width, width)?;
        let encoder_positions = matrix(vars, "encoder/position_encodings/encodings", 1500, width)?;
        let mut encoder_layers = Vec::new();
        while vars.by_name.contains_key(&format!(
            "encoder/layer_{}/ffn/linear_0/weight",
            encoder_layers.len()
        )) {
            let p = format!("encoder/layer_{}", encoder_layers.len());
            encoder_layers.push(EncoderLayer {
                norm: norm(vars, &format!("{p}/self_attention/layer_norm"), width)?,
                qkv: linear(
                    vars,
                    &format!("{p}/self_attention/linear_0"),
                    3 * width,
                    width,
                )?,
                out: linear(vars, &format!("{p}/self_attention/linear_1"), width, width)?,
                ffn: feed_forward(vars, &format!("{p}/ffn"), width, linear)?,
            });
        }
        let mut decoder_layers = Vec::new();
        while vars.by_name.contains_key(&format!(
            "decoder/layer_{}/ffn/linear_0/weight",
            decoder_layers.len()
        )) {
            let p = format!("decoder/layer_{}", decoder_layers.len());
            decoder_layers.push(DecoderLayer {
                self_norm: norm(vars, &format!("{p}/self_attention/layer_norm"), width)?,
                self_qkv: decoder_linear(
                    vars,
                    &format!("{p}/self_attention/linear_0"),
                    3 * width,
                    width,
                )?,
                self_out: decoder_linear(
                    vars,
                    &format!("{p}/self_attention/linear_1"),
                    width,
                    width,
                )?,
                cross_norm: norm(vars, &format!("{p}/attention/layer_norm"), width)?,
                cross_query: decoder_linear(
                    vars,
                    &format!("{p}/attention/linear_0"),
                    width,
                    width,
                )?,
                cross_kv: linear(vars, &format!("{p}/attention/linear_1"), 2 * width, width)?,
                cross_out: decoder_linear(vars, &format!("{p}/attention/linear_2"), width, width)?,
                ffn: feed_forward(vars, &format!("{p}/ffn"), width, decoder_linear)?,
            });
        }
        if encoder_layers.is_empty() || decoder_layers.is_empty() {
            return Err(FormatError(
                "it has no encoder or no decoder layers".to_owned(),
            ));
        }
        let decoder_positions = matrix(
            vars,
            "decoder/position_encodings/encodings",
            TEXT_CONTEXT,
            width,
        )?;
        let token_embeddings = simd::HalfRows::new(embedding.into_f16(), tokens, width);
        let embeddings = Weight::Byte(simd::ByteRows::from_half(&token_embeddings));
        Ok(Self {
            embeddings,
            token_embeddings,
            conv1,
            conv2,
            encoder_positions,
            encoder_norm: norm(vars, "encoder/layer_norm", width)?,
            encoder_layers,
            decoder_positions,
            decoder_norm: norm(vars, "decoder/layer_norm", width)?,
            decoder_layers,
            heads,
            width,
            mel_bands,
        })
    }

    /// The encoder's output (1,500 frames × width) for one window's
    /// spectrogram (`mel_bands` × 3,000, band-major).
    pub fn encode(&self, mel: &[f32], threads: usize) -> Array2<f32> {
        let frames = mel.len() / self.mel_bands.max(1);
        let spectrogram = ArrayView2::from_shape((self.mel_bands, frames), mel).map_or_else(
            |_| Array2::zeros((frames, self.mel_bands)),
            |m| m.t().to_owned(),
        );
        let mut x = convolve(spectrogram.view(), &self.conv1, 1, threads);
        x.mapv_inplace(kernels::gelu);
        let mut x = convolve(x.view(), &self.conv2, 2, threads);
        x.mapv_inplace(kernels::gelu);
        let rows = x.nrows().min(self.encoder_positions.nrows());
        let mut x = x.slice_axis(Axis(0), Slice::from(..rows)).to_owned();
        x += &self
            .encoder_positions
            .slice_axis(Axis(0), Slice::from(..rows));
        for layer in &self.encoder_layers {
            let normed = layer.norm.forward(x.view());
            let qkv = layer.qkv.forward(normed.view(), threads);
            let w = self.width;
            let attended = attention(
                qkv.slice_axis(Axis(1), Slice::from(..w)),
                qkv.slice_axis(Axis(1), Slice::from(w..2 * w)),
                qkv.slice_axis(Axis(1), Slice::from(2 * w..)),
                self.heads,
                None,
                threads,
            );
            x += &layer.out.forward(attended.view(), threads);
            let fed = layer.ffn.forward(x.view(), threads);
            x += &fed;
        }
        self.encoder_norm.forward(x.view())
    }

    /// A decoding state for one window: the audio's keys and values for
    /// each layer, made once and shared by every sequence decoded over
    /// it, and one empty cache of the text's.
    pub fn start(&self, audio: &Array2<f32>, threads: usize) -> State {
        State {
            cross: self
                .decoder_layers
                .iter()
                .map(|layer| layer.cross_kv.forward(audio.view(), threads))
                .collect(),
            caches: vec![self.empty_cache()],
            spare: Vec::new(),
            len: 0,
        }
    }

    fn empty_cache(&self) -> TextCache {
        let layers = self.decoder_layers.len();
        TextCache {
            keys: vec![Array2::zeros((TEXT_CONTEXT, self.width)); layers],
            values: vec![Array2::zeros((TEXT_CONTEXT, self.width)); layers],
        }
    }

    /// Runs `tokens` (following the ones already in `state`'s first
    /// sequence) through the decoder and returns the logits at each of
    /// their positions, or `None` past the text context: the prompt, run
    /// once before the sequences part ways.
    pub fn decode(&self, state: &mut State, tokens: &[u32], threads: usize) -> Option<Array2<f32>> {
        let start = state.len;
        let end = start + tokens.len();
        if end > TEXT_CONTEXT || tokens.is_empty() || state.caches.is_empty() {
            return None;
        }
        let w = self.width;
        let positions: Vec<usize> = (start..end).collect();
        let mut x = self.embed(tokens, &positions);
        for (l, layer) in self.decoder_layers.iter().enumerate() {
            let normed = layer.self_norm.forward(x.view());
            let qkv = layer.self_qkv.forward(normed.view(), threads);
            let cache = &mut state.caches[0];
            cache.keys[l]
                .slice_axis_mut(Axis(0), Slice::from(start..end))
                .assign(&qkv.slice_axis(Axis(1), Slice::from(w..2 * w)));
            cache.values[l]
                .slice_axis_mut(Axis(0), Slice::from(start..end))
                .assign(&qkv.slice_axis(Axis(1), Slice::from(2 * w..)));
            let attended = attention(
                qkv.slice_axis(Axis(1), Slice::from(..w)),
                cache.keys[l].slice_axis(Axis(0), Slice::from(..end)),
                cache.values[l].slice_axis(Axis(0), Slice::from(..end)),
                self.heads,
                Some(start),
                1,
            );
            x += &layer.self_out.forward(attended.view(), threads);
            self.cross_and_feed(layer, &state.cross[l], &mut x, threads);
        }
        state.len = end;
        let x = self.decoder_norm.forward(x.view());
        Some(self.logits(x.view(), threads))
    }

    /// One token more for each sequence in `state` (`tokens[i]` follows
    /// sequence `i`), all in one pass, so that the weights (the output
    /// projection is 80 MB for tiny.en) are read once for every beam;
    /// returns each sequence's logits, or `None` past the text context.
    pub fn step(&self, state: &mut State, tokens: &[u32], threads: usize) -> Option<Array2<f32>> {
        let at = state.len;
        if at + 1 > TEXT_CONTEXT || tokens.is_empty() || tokens.len() != state.caches.len() {
            return None;
        }
        let w = self.width;
        let mut x = self.embed(tokens, &vec![at; tokens.len()]);
        for (l, layer) in self.decoder_layers.iter().enumerate() {
            let normed = layer.self_norm.forward(x.view());
            let qkv = layer.self_qkv.forward(normed.view(), threads);
            let mut attended = Array2::<f32>::zeros((tokens.len(), w));
            for (i, cache) in state.caches.iter_mut().enumerate() {
                let row = qkv.slice_axis(Axis(0), Slice::from(i..=i));
                cache.keys[l]
                    .slice_axis_mut(Axis(0), Slice::from(at..=at))
                    .assign(&row.slice_axis(Axis(1), Slice::from(w..2 * w)));
                cache.values[l]
                    .slice_axis_mut(Axis(0), Slice::from(at..=at))
                    .assign(&row.slice_axis(Axis(1), Slice::from(2 * w..)));
                let one = few_queries(
                    row.slice_axis(Axis(1), Slice::from(..w)),
                    cache.keys[l].slice_axis(Axis(0), Slice::from(..=at)),
                    cache.values[l].slice_axis(Axis(0), Slice::from(..=at)),
                    self.heads,
                    None,
                );
                attended.row_mut(i).assign(&one.row(0));
            }
            x += &layer.self_out.forward(attended.view(), threads);
            self.cross_and_feed(layer, &state.cross[l], &mut x, threads);
        }
        state.len = at + 1;
        let x = self.decoder_norm.forward(x.view());
        Some(self.logits(x.view(), threads))
    }

    /// The logits of each row of the decoder's output: the vocabulary's
    /// products in bytes, then the [`REFINED`] largest of each row again
    /// from the file's float16 rows. The bytes' rounding moves a logit by
    /// a few hundredths, enough to swap two close words, and only the
    /// largest logits choose the words (the rest weigh next to nothing in
    /// the softmax): held-out WER 0.121 with every logit from bytes, 0.110
    /// from float16 (base), and the full float16 projection reads twice
    /// the bytes at every step.
    fn logits(&self, x: ArrayView2<'_, f32>, threads: usize) -> Array2<f32> {
        let mut logits = self.embeddings.times(x, threads);
        for (row, mut out) in x.rows().into_iter().zip(logits.rows_mut()) {
            let Some(out) = out.as_slice_mut() else {
                continue;
            };
            let tokens = kernels::largest_indices(out, REFINED);
            let exact: Vec<f32> = tokens
                .iter()
                .flat_map(|t| self.token_embeddings.row(*t))
                .collect();
            let mut refined = vec![0.0f32; tokens.len()];
            simd::row_products(&[&row.to_vec()], &exact, self.width, &mut refined);
            for (t, value) in tokens.iter().zip(refined) {
                if let Some(cell) = out.get_mut(*t) {
                    *cell = value;
                }
            }
        }
        logits
    }

    /// Token embeddings plus the positions' encodings, one row each.
    fn embed(&self, tokens: &[u32], positions: &[usize]) -> Array2<f32> {
        let mut x = Array2::zeros((tokens.len(), self.width));
        for (i, (token, at)) in tokens.iter().zip(positions).enumerate() {
            let mut out = x.row_mut(i);
            out.assign(&ndarray::ArrayView1::from(
                &self.token_embeddings.row(*token as usize),
            ));
            out += &self.decoder_positions.row(*at);
        }
        x
    }

    /// A decoder layer's cross-attention over the audio and its
    /// feed-forward block, each added to `x`.
    fn cross_and_feed(
        &self,
        layer: &DecoderLayer,
        kv: &Array2<f32>,
        x: &mut Array2<f32>,
        threads: usize,
    ) {
        let w = self.width;
        let normed = layer.cross_norm.forward(x.view());
        let query = layer.cross_query.forward(normed.view(), threads);
        let attended = attention(
            query.view(),
            kv.slice_axis(Axis(1), Slice::from(..w)),
            kv.slice_axis(Axis(1), Slice::from(w..)),
            self.heads,
            None,
            1,
        );
        *x += &layer.cross_out.forward(attended.view(), threads);
        let fed = layer.ffn.forward(x.view(), threads);
        *x += &fed;
    }
}

/// The most tokens the decoder holds (Whisper's text context).
pub(crate) const TEXT_CONTEXT: usize = 448;

/// One sequence's keys and values of the text so far, per layer
/// (`TEXT_CONTEXT` rows each, the first `State::len` of them filled).
pub(crate) struct TextCache {
    keys: Vec<Array2<f32>>,
    values: Vec<Array2<f32>>,
}

/// One window's decoding state: the audio's keys and values, shared, and
/// a text cache for each sequence decoded (each beam).
pub(crate) struct State {
    cross: Vec<Array2<f32>>,
    caches: Vec<TextCache>,
    /// Caches of sequences dropped, kept to be written over.
    spare: Vec<TextCache>,
    pub len: usize,
}

impl State {
    /// Makes sequence `i` continue sequence `parents[i]`: a parent's
    /// cache moves to its first child, and only a second child copies
    /// it (the rows filled so far, into a dropped sequence's cache).
    pub fn reorder(&mut self, parents: &[usize]) {
        let mut old: Vec<Option<TextCache>> = self.caches.drain(..).map(Some).collect();
        let mut placed: Vec<Option<usize>> = vec![None; old.len()];
        let mut copies = Vec::new();
        let mut caches: Vec<Option<TextCache>> = Vec::with_capacity(parents.len());
        for (i, parent) in parents.iter().enumerate() {
            if let Some(cache) = old.get_mut(*parent).and_then(Option::take) {
                placed[*parent] = Some(i);
                caches.push(Some(cache));
            } else {
                copies.push((i, *parent));
                caches.push(None);
            }
        }
        self.spare.extend(old.into_iter().flatten());
        let rows = Slice::from(..self.len);
        for (i, parent) in copies {
            let Some(from) = placed.get(parent).copied().flatten() else {
                continue;
            };
            let mut cache = match self.spare.pop() {
                Some(cache) => cache,
                None => TextCache {
                    keys: caches_like(caches[from].as_ref()),
                    values: caches_like(caches[from].as_ref()),
                },
            };
            if let Some(source) = caches[from].as_ref() {
                for (to, from) in cache.keys.iter_mut().zip(&source.keys) {
                    to.slice_axis_mut(Axis(0), rows)
                        .assign(&from.slice_axis(Axis(0), rows));
                }
                for (to, from) in cache.values.iter_mut().zip(&source.values) {
                    to.slice_axis_mut(Axis(0), rows)
                        .assign(&from.slice_axis(Axis(0), rows));
                }
            }
            caches[i] = Some(cache);
        }
        self.caches = caches.into_iter().flatten().collect();
    }
}

/// Zeroed matrices shaped like a cache's.
fn caches_like(cache: Option<&TextCache>) -> Vec<Array2<f32>> {
    cache.map_or_else(Vec::new, |c| {
        c.keys.iter().map(|k| Array2::zeros(k.dim())).collect()
    })
}

/// Scaled dot-product attention, head by head, the heads shared among
/// `threads`. With `causal_from`, query row `i` sits at position
/// `causal_from + i` and sees keys up to it.
fn attention(
    queries: ArrayView2<'_, f32>,
    keys: ArrayView2<'_, f32>,
    values: ArrayView2<'_, f32>,
    heads: usize,
    causal_from: Option<usize>,
    threads: usize,
) -> Array2<f32> {
    let (rows, width) = queries.dim();
    let head = width / heads;
    let scale = 1.0 / (head as f32).sqrt();
    if rows <= FEW_ROWS {
        return few_queries(queries, keys, values, heads, causal_from);
    }
    let mut out = Array2::zeros((rows, width));
    // One scores matrix per thread, reused for each of its heads: fresh
    // ones (9 MB each for 1,500 frames) cost page faults every time.
    let one_head = |h: usize, mut target: ArrayViewMut2<'_, f32>, scores: &mut Array2<f32>| {
        let cols = Slice::from(h * head..(h + 1) * head);
        ndarray::linalg::general_mat_mul(
            1.0,
            &queries.slice_axis(Axis(1), cols),
            &keys.slice_axis(Axis(1), cols).t(),
            0.0,
            scores,
        );
        for (i, mut row) in scores.axis_iter_mut(Axis(0)).enumerate() {
            let visible = causal_from.map_or(row.len(), |from| (from + i + 1).min(row.len()));
            softmax(row.as_slice_mut(), visible, scale);
        }
        ndarray::linalg::general_mat_mul(
            1.0,
            &*scores,
            &values.slice_axis(Axis(1), cols),
            0.0,
            &mut target,
        );
    };
    let per_head: Vec<(usize, ArrayViewMut2<'_, f32>)> = out
        .axis_chunks_iter_mut(Axis(1), head.max(1))
        .enumerate()
        .collect();
    let threads = threads.clamp(1, heads.max(1));
    let mut shares: Vec<Vec<(usize, ArrayViewMut2<'_, f32>)>> =
        (0..threads).map(|_| Vec::new()).collect();
    for (i, item) in per_head.into_iter().enumerate() {
        shares[i % threads].push(item);
    }
    let run_share = |share: Vec<(usize, ArrayViewMut2<'_, f32>)>| {
        let mut scores = Array2::<f32>::zeros((rows, keys.nrows()));
        for (h, target) in share {
            one_head(h, target, &mut scores);
        }
    };
    std::thread::scope(|scope| {
        let mut shares = shares.into_iter();
        let own = shares.next();
        let run_share = &run_share;
        for share in shares {
            scope.spawn(move || run_share(share));
        }
        if let Some(share) = own {
            run_share(share);
        }
    });
    out
}

/// The logits of each decoder row taken again from the float16 token
/// embedding, the largest by the bytes' products (see `Network::logits`).
const REFINED: usize = 64;

/// At most this many rows (a decoding step of up to eight beams), a
/// product is taken as dot products of rows.
const FEW_ROWS: usize = 8;

/// `a · bᵀ` (`b` as weights are stored, one output per row), split among
/// `threads` by rows of `a`, or by rows of `b` when `a` has few rows (the
/// decoder's one token against the vocabulary).
fn product(a: ArrayView2<'_, f32>, b: ArrayView2<'_, f32>, threads: usize) -> Array2<f32> {
    let (rows, _) = a.dim();
    let outputs = b.nrows();
    let mut out = Array2::<f32>::zeros((rows, outputs));
    let work = rows * outputs * a.ncols();
    let threads = if work < 4_000_000 { 1 } else { threads.max(1) };
    if rows <= FEW_ROWS {
        // A product of few rows is a pass over `b`: dot products of rows,
        // without packing `b` as a blocked product would (for the
        // vocabulary, 80 MB per token).
        let chunk = outputs.div_ceil(threads).max(1);
        std::thread::scope(|scope| {
            for (part, (b_part, mut out_part)) in b
                .axis_chunks_iter(Axis(0), chunk)
                .zip(out.axis_chunks_iter_mut(Axis(1), chunk))
                .enumerate()
            {
                // Each row of `b` is read once for all rows of `a` (the
                // beams), which stay in the cache meanwhile.
                let a_rows: Vec<_> = (0..a.nrows()).map(|i| row_of(a, i)).collect();
                let mut run = move || {
                    let rows: Vec<&[f32]> = a_rows.iter().map(AsRef::as_ref).collect();
                    let weights = b_part.as_standard_layout();
                    let mut local = vec![0.0f32; rows.len() * b_part.nrows()];
                    simd::row_products(
                        &rows,
                        weights.as_slice().unwrap_or_default(),
                        b_part.ncols(),
                        &mut local,
                    );
                    if let Ok(local) = ArrayView2::from_shape((rows.len(), b_part.nrows()), &local)
                    {
                        out_part.assign(&local);
                    }
                };
                if part + 1 == threads || threads == 1 {
                    run();
                } else {
                    scope.spawn(run);
                }
            }
        });
    } else if threads == 1 {
        ndarray::linalg::general_mat_mul(1.0, &a, &b.t(), 0.0, &mut out);
    } else if rows >= threads * 16 {
        let chunk = rows.div_ceil(threads);
        std::thread::scope(|scope| {
            for (a_part, mut out_part) in a
                .axis_chunks_iter(Axis(0), chunk)
                .zip(out.axis_chunks_iter_mut(Axis(0), chunk))
            {
                scope.spawn(move || {
                    ndarray::linalg::general_mat_mul(1.0, &a_part, &b.t(), 0.0, &mut out_part);
                });
            }
        });
    } else {
        let chunk = outputs.div_ceil(threads);
        std::thread::scope(|scope| {
            for (b_part, mut out_part) in b
                .axis_chunks_iter(Axis(0), chunk)
                .zip(out.axis_chunks_iter_mut(Axis(1), chunk))
            {
                scope.spawn(move || {
                    ndarray::linalg::general_mat_mul(1.0, &a, &b_part.t(), 0.0, &mut out_part);
                });
            }
        });
    }
    out
}

/// `a · bᵀ` for the few rows of `a` (a row per beam), `b` in bytes,
/// split among `threads` by rows of `b`.
fn byte_product(a: ArrayView2<'_, f32>, b: &simd::ByteRows, threads: usize) -> Array2<f32> {
    let rows = a.nrows();
    let threads = if rows * b.rows() * b.cols() < 4_000_000 {
        1
    } else {
        threads.max(1)
    };
    let a_rows: Vec<_> = (0..rows).map(|i| row_of(a, i)).collect();
    let a_slices: Vec<&[f32]> = a_rows.iter().map(AsRef::as_ref).collect();
    let mut out = vec![0.0f32; rows * b.rows()];
    b.products(&a_slices, threads, &mut out);
    Array2::from_shape_vec((rows, b.rows()), out).unwrap_or_default()
}

/// Attention for a few query rows (the decoder's one new token): dot
/// products and weighted sums over the keys' and values' rows, where a
/// blocked matrix product would pack every key for one row of output.
/// Each key and value row is read once for all heads.
fn few_queries(
    queries: ArrayView2<'_, f32>,
    keys: ArrayView2<'_, f32>,
    values: ArrayView2<'_, f32>,
    heads: usize,
    causal_from: Option<usize>,
) -> Array2<f32> {
    let rows = queries.nrows();
    let count = keys.nrows();
    let query_rows: Vec<_> = (0..rows).map(|i| row_of(queries, i)).collect();
    let query_slices: Vec<&[f32]> = query_rows.iter().map(AsRef::as_ref).collect();
    let visible: Vec<usize> = (0..rows)
        .map(|i| causal_from.map_or(count, |from| (from + i + 1).min(count)))
        .collect();
    let key = |j: usize| row_of(keys, j);
    let value = |j: usize| row_of(values, j);
    let attended = simd::FewQueries {
        queries: &query_slices,
        keys: &key,
        values: &value,
        count,
        visible: &visible,
        heads,
        softmax: &|row: &mut [f32], visible: usize, scale: f32| softmax(Some(row), visible, scale),
    }
    .run();
    let mut out = Array2::<f32>::zeros((rows, queries.ncols()));
    for (mut target, row) in out.rows_mut().into_iter().zip(&attended) {
        target.assign(&ndarray::ArrayView1::from(row.as_slice()));
    }
    out
}

/// Row `i` of a matrix as a slice: borrowed where the row is contiguous
/// (every matrix here), copied where it is not.
fn row_of(matrix: ArrayView2<'_, f32>, i: usize) -> std::borrow::Cow<'_, [f32]> {
    let row = matrix.index_axis_move(Axis(0), i);
    match row.to_slice() {
        Some(slice) => std::borrow::Cow::Borrowed(slice),
        None => std::borrow::Cow::Owned(row.to_vec()),
    }
}

/// Softmax of `row[..visible] * scale` in place; the rest becomes 0.
fn softmax(row: Option<&mut [f32]>, visible: usize, scale: f32) {
    let Some(row) = row else { return };
    let (seen, hidden) = row.split_at_mut(visible.min(row.len()));
    simd::softmax(seen, scale);
    hidden.fill(0.0);
}

/// A 1-D convolution of width 3 with padding 1 over `input` (time ×
/// channels), as one matrix product over the unrolled input.
fn convolve(
    input: ArrayView2<'_, f32>,
    (weight, bias): &(Array2<f32>, Array1<f32>),
    stride: usize,
    threads: usize,
) -> Array2<f32> {
    let (time, channels) = input.dim();
    let steps = time.div_ceil(stride);
    let mut unrolled = Array2::<f32>::zeros((steps, channels * 3));
    for t in 0..steps {
        let mut row = unrolled.row_mut(t);
        for k in 0..3 {
            let Some(at) = (t * stride + k).checked_sub(1).filter(|at| *at < time) else {
                continue;
            };
            for c in 0..channels {
                row[c * 3 + k] = input[[at, c]];
            }
        }
    }
    let mut out = product(unrolled.view(), weight.view(), threads);
    out += bias;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causal_attention_sees_no_later_token() {
        // One head; the second key is huge, but the first query may not see it.
        let queries = Array2::from_shape_vec((2, 2), vec![1.0, 0.0, 1.0, 0.0]).expect("2x2");
        let keys = Array2::from_shape_vec((2, 2), vec![0.0, 0.0, 50.0, 0.0]).expect("2x2");
        let values = Array2::from_shape_vec((2, 2), vec![1.0, 1.0, 9.0, 9.0]).expect("2x2");
        let out = attention(queries.view(), keys.view(), values.view(), 1, Some(0), 1);
        assert_eq!(out.row(0).to_vec(), vec![1.0, 1.0]);
        assert!((out[[1, 0]] - 9.0).abs() < 1e-3);
    }

    #[test]
    fn a_convolution_pads_by_one_and_steps_by_its_stride() {
        // One channel in, one out, kernel [1, 2, 3]: out[t] = x[t-1] + 2x[t] + 3x[t+1].
        let input = Array2::from_shape_vec((4, 1), vec![1.0, 2.0, 3.0, 4.0]).expect("4x1");
        let kernel = (
            Array2::from_shape_vec((1, 3), vec![1.0, 2.0, 3.0]).expect("1x3"),
            Array1::from(vec![0.5]),
        );
        let once = convolve(input.view(), &kernel, 1, 1);
        assert_eq!(once.column(0).to_vec(), vec![8.5, 14.5, 20.5, 11.5]);
        let twice = convolve(input.view(), &kernel, 2, 1);
        assert_eq!(twice.column(0).to_vec(), vec![8.5, 20.5]);
    }

    /// A Whisper of random weights, `width` wide with 2 heads, one encoder
    /// layer and two decoder layers, over a vocabulary of `tokens`, read
    /// from a `model.bin` as a real one is.
    fn random_network(width: usize, tokens: usize) -> Network {
        let bands = 4;
        let mut specs: Vec<(String, Vec<usize>)> = vec![
            ("decoder/embeddings/weight".into(), vec![tokens, width]),
            ("encoder/conv1/weight".into(), vec![width, bands, 3]),
            ("encoder/conv1/bias".into(), vec![width]),
            ("encoder/conv2/weight".into(), vec![width, width, 3]),
            ("encoder/conv2/bias".into(), vec![width]),
            (
                "encoder/position_encodings/encodings".into(),
                vec![1500, width],
            ),
            (
                "decoder/position_encodings/encodings".into(),
                vec![TEXT_CONTEXT, width],
            ),
        ];
        let linear = |specs: &mut Vec<(String, Vec<usize>)>, name: String, out, inp| {
            specs.push((format!("{name}/weight"), vec![out, inp]));
            specs.push((format!("{name}/bias"), vec![out]));
        };
        let norm = |specs: &mut Vec<(String, Vec<usize>)>, name: String| {
            specs.push((format!("{name}/gamma"), vec![width]));
            specs.push((format!("{name}/beta"), vec![width]));
        };
        for stack in ["encoder/layer_0", "decoder/layer_0", "decoder/layer_1"] {
            norm(&mut specs, format!("{stack}/self_attention/layer_norm"));
            linear(
                &mut specs,
                format!("{stack}/self_attention/linear_0"),
                3 * width,
                width,
            );
            linear(
                &mut specs,
                format!("{stack}/self_attention/linear_1"),
                width,
                width,
            );
            norm(&mut specs, format!("{stack}/ffn/layer_norm"));
            linear(
                &mut specs,
                format!("{stack}/ffn/linear_0"),
                4 * width,
                width,
            );
            linear(
                &mut specs,
                format!("{stack}/ffn/linear_1"),
                width,
                4 * width,
            );
            if stack.starts_with("decoder") {
                norm(&mut specs, format!("{stack}/attention/layer_norm"));
                linear(
                    &mut specs,
                    format!("{stack}/attention/linear_0"),
                    width,
                    width,
                );
                linear(
                    &mut specs,
                    format!("{stack}/attention/linear_1"),
                    2 * width,
                    width,
                );
                linear(
                    &mut specs,
                    format!("{stack}/attention/linear_2"),
                    width,
                    width,
                );
            }
        }
        norm(&mut specs, "encoder/layer_norm".into());
        norm(&mut specs, "decoder/layer_norm".into());
        let mut variables: Vec<(&str, Vec<u32>, Vec<f32>)> = specs
            .iter()
            .enumerate()
            .map(|(i, (name, shape))| {
                let len = shape.iter().product();
                let shape = shape
                    .iter()
                    .map(|d| u32::try_from(*d).expect("small"))
                    .collect();
                (
                    name.as_str(),
                    shape,
                    crate::kernels::tests::noise(len, i as u64 + 10),
                )
            })
            .collect();
        variables.push(("encoder/num_heads", vec![], vec![2.0]));
        let bytes = crate::ct2::tests::model_bin(&variables, &[]);
        let mut vars = crate::ct2::read(&bytes).expect("the model reads back");
        Network::from_variables(&mut vars, tokens).expect("the network builds")
    }

    #[test]
    fn the_largest_logits_are_the_float16_embedding_s_products() {
        let (width, tokens) = (16, 300);
        let network = random_network(width, tokens);
        let x = Array2::from_shape_vec((3, width), crate::kernels::tests::noise(3 * width, 77))
            .expect("3 rows");
        let logits = network.logits(x.view(), 1);
        let from_bytes = network.embeddings.times(x.view(), 1);
        let mut bytes_missed = false;
        for (i, row) in x.rows().into_iter().enumerate() {
            let exact: Vec<f64> = (0..tokens)
                .map(|t| {
                    row.iter()
                        .zip(network.token_embeddings.row(t))
                        .map(|(a, b)| f64::from(*a) * f64::from(b))
                        .sum()
                })
                .collect();
            let mut order: Vec<usize> = (0..tokens).collect();
            order.sort_by(|a, b| exact[*b].total_cmp(&exact[*a]));
            for t in &order[..REFINED / 2] {
                let got = f64::from(logits[[i, *t]]);
                assert!(
                    (got - exact[*t]).abs() < 1e-5,
                    "row {i}, token {t}: {got} vs {}",
                    exact[*t]
                );
                bytes_missed |= (f64::from(from_bytes[[i, *t]]) - exact[*t]).abs() > 1e-4;
            }
            // The rest stay the bytes' products, within their rounding.
            for t in &order[REFINED * 2..] {
                assert!((f64::from(logits[[i, *t]]) - exact[*t]).abs() < 0.1);
            }
        }
        assert!(
            bytes_missed,
            "the bytes alone gave the exact logits: nothing was tested"
        );
    }

    #[test]
    fn the_cached_decoder_gives_the_logits_of_the_whole_text_run_at_once() {
        let network = random_network(16, 40);
        let mel = crate::kernels::tests::noise(4 * 3000, 1);
        let audio = network.encode(&mel, 2);
        assert_eq!(audio.dim(), (1500, 16));
        let text = [3u32, 17, 5, 39, 0, 22, 8, 8, 30];
        // All at once: blocked products, causal masking, no cache reuse.
        let mut whole = network.start(&audio, 2);
        let at_once = network
            .decode(&mut whole, &text, 2)
            .expect("within the context");
        // One token at a time through the cache, as greedy decoding runs.
        let mut state = network.start(&audio, 2);
        for (i, token) in text.iter().enumerate() {
            let step = network
                .decode(&mut state, &[*token], 1)
                .expect("within the context");
            for (a, b) in step.row(0).iter().zip(at_once.row(i)) {
                assert!(
                    (a - b).abs() < 1e-3 * (1.0 + b.abs()),
                    "token {i}: {a} vs {b}"
                );
            }
        }
        assert_eq!(state.len, text.len());
        // The cache matters: the last token alone, without the ones before
        // it, gives other logits.
        let mut fresh = network.start(&audio, 1);
        let alone = network
            .decode(&mut fresh, &text[text.len() - 1..], 1)
            .expect("fits");
        let differs = alone
            .row(0)
            .iter()
            .zip(at_once.row(text.len() - 1))
            .any(|(a, b)| (a - b).abs() > 1e-2);
        assert!(differs, "the earlier tokens changed nothing");
    }

    #[test]
    fn beams_stepped_together_and_reordered_give_each_sequence_s_own_logits() {
        let network = random_network(16, 40);
        let audio = network.encode(&crate::kernels::tests::noise(4 * 3000, 2), 1);
        let alone = |text: &[u32]| {
            let mut state = network.start(&audio, 1);
            let logits = network.decode(&mut state, text, 1).expect("fits");
            logits.row(text.len() - 1).to_vec()
        };
        let mut state = network.start(&audio, 1);
        network.decode(&mut state, &[1, 2], 1).expect("fits");
        // One sequence becomes three (5, 6, 7 after "1 2"), then the
        // second is dropped and the third continued twice.
        state.reorder(&[0, 0, 0]);
        network.step(&mut state, &[5, 6, 7], 1).expect("fits");
        state.reorder(&[0, 2, 2]);
        let logits = network.step(&mut state, &[9, 10, 11], 2).expect("fits");
        let expected = [
            alone(&[1, 2, 5, 9]),
            alone(&[1, 2, 7, 10]),
            alone(&[1, 2, 7, 11]),
        ];
        for (i, want) in expected.iter().enumerate() {
            for (a, b) in logits.row(i).iter().zip(want) {
                assert!(
                    (a - b).abs() < 1e-3 * (1.0 + b.abs()),
                    "sequence {i}: {a} vs {b}"
                );
            }
        }
        assert_eq!(state.len, 4);
    }
}
