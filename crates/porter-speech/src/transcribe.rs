//! From 16 kHz samples to timestamped text, as Whisper's own transcriber
//! walks a recording: 30 s at a time, each window decoded greedily with
//! timestamp tokens, and the next window starting where the last complete
//! segment ended, so that words cut by a window's edge are heard whole in
//! the next one, once (no seam drops or repeats them).
//!
//! Nothing is invented for silence or music: a window whose no-speech
//! probability is high while its text is unsure gives no words, symbols
//! and notes are never written, and a window that falls into repeating
//! itself is cut at the repetition.

use std::time::Instant;

use crate::audio::Audio;
use crate::mel::{FRAMES, HOP, WINDOW_SAMPLES};
use crate::net::State;
use crate::net::TEXT_CONTEXT;
use crate::tokens::Vocabulary;
use crate::types::{Language, Options, Progress, Segment, Stopped, Transcript, Window};
use crate::weights::Weights;
use crate::{beam, kernels};

/// Seconds per timestamp token.
const TIMESTAMP_STEP: f64 = 0.02;
/// Mel frames per encoder frame (the second convolution's stride).
const FRAMES_PER_POSITION: usize = 2;
/// The latest first timestamp allowed, in timestamp steps (1 s).
const MAX_INITIAL_TIMESTAMP: u32 = 50;
/// The most tokens sampled in one window (half the text context, as
/// Whisper does).
const SAMPLE_LEN: usize = TEXT_CONTEXT / 2;

/// The loudest a window may be and still be silence (-66 dBFS, the last
/// few bits of 16-bit audio): it is not run through the network.
const INAUDIBLE: f32 = 16.0 / 32768.0;

/// What one window's decoding gave.
struct Decoded {
    tokens: Vec<u32>,
    mean_logprob: f32,
    no_speech: f32,
}

impl Decoded {
    /// Nothing decoded (the text context was full).
    fn nothing() -> Self {
        Self {
            tokens: Vec::new(),
            mean_logprob: f32::NEG_INFINITY,
            no_speech: 1.0,
        }
    }
}

/// The language token of the highest logit after `<|startoftranscript|>`,
/// or `None` for a vocabulary without them.
fn likeliest_language(vocabulary: &Vocabulary, logits: &[f32]) -> Option<u32> {
    vocabulary
        .languages
        .iter()
        .filter_map(|(id, _)| Some((*id, *logits.get(*id as usize)?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(id, _)| id)
}

/// How far into the work a check happens, for the CPU budget.
pub(crate) fn transcribe(
    model: &Weights,
    audio: &Audio,
    options: &Options,
    cancelled: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(Progress),
) -> Transcript {
    let total_frames = audio.samples.len() / HOP;
    let started = Instant::now();
    let cpu_start = crate::cpu::process_seconds();
    let mut seek = 0usize;
    let mut segments: Vec<Segment> = Vec::new();
    let mut stopped = None;
    let mut windows: Vec<Window> = Vec::new();
    let mut language: Option<u32> = None;
    let loudest = model.mel.loudest(&audio.samples);
    while seek < total_frames {
        if cancelled() {
            stopped = Some(Stopped {
                at_seconds: seek as f64 / 100.0,
                reason: "the request was cancelled".to_owned(),
            });
            break;
        }
        let spent = crate::cpu::process_seconds().map_or_else(
            || started.elapsed().as_secs_f64(),
            |now| now - cpu_start.unwrap_or(now),
        );
        if !windows.is_empty() && spent >= options.cpu_seconds as f64 {
            stopped = Some(Stopped {
                at_seconds: seek as f64 / 100.0,
                reason: format!(
                    "transcription may take {} s of CPU time and that was spent",
                    options.cpu_seconds
                ),
            });
            break;
        }
        progress(Progress {
            done_seconds: seek as f64 / 100.0,
            total_seconds: audio.seconds(),
        });
        let size = (total_frames - seek).min(FRAMES);
        let samples = audio.window(seek * HOP, (size * HOP).min(WINDOW_SAMPLES));
        if samples.iter().all(|s| s.abs() < INAUDIBLE) {
            // Nothing audible: no words, and no network run for them, so
            // that an hour of silence costs a pass over its samples.
            windows.push(Window {
                start: seek as f64 / 100.0,
                no_speech: 1.0,
                mean_logprob: 0.0,
                kept: false,
            });
            seek += size;
            continue;
        }
        let mel = model.mel.spectrogram(&audio.samples, seek, size, loudest);
        let encoded = model.network.encode(&mel, options.threads);
        let decoded = decode_window(model, &encoded, options, &mut language);
        let offset = seek as f64 / 100.0;
        let window_seconds = size as f64 / 100.0;
        let silent = heard_nothing(decoded.no_speech, decoded.mean_logprob, options);
        let kept = !silent && decoded.mean_logprob >= options.give_up_logprob;
        windows.push(Window {
            start: offset,
            no_speech: decoded.no_speech,
            mean_logprob: decoded.mean_logprob,
            kept,
        });
        if !kept {
            seek += size;
            continue;
        }
        let advance = split_segments(
            model,
            &decoded.tokens,
            offset,
            window_seconds,
            &mut segments,
        );
        seek += advance.map_or(size, |positions| {
            (positions * FRAMES_PER_POSITION).clamp(1, size)
        });
    }
    progress(Progress {
        done_seconds: stopped.as_ref().map_or(audio.seconds(), |s| s.at_seconds),
        total_seconds: audio.seconds(),
    });
    segments.retain(|s| !s.text.trim().is_empty());
    Transcript {
        segments,
        seconds: audio.seconds(),
        stopped,
        windows,
        language: language.and_then(|id| {
            let languages = &model.vocabulary.languages;
            languages
                .iter()
                .find(|(l, _)| *l == id)
                .map(|(_, code)| code.clone())
        }),
    }
}

/// Whether a window is taken as no speech. Whisper's rule drops a window
/// when both its no-speech probability is over 0.6 and its text unsure
/// (mean log-probability under -1.0), and keeps it when either is not: a
/// no-speech probability of 0.8 with text at -0.94 (Whisper base's "You"
/// on faint noise) passes. Here the two are weighed together: the chance
/// that there is speech, times the text's mean probability per token,
/// must reach what it is at Whisper's corner (0.4 · e^-1.0 = 0.15); every
/// window Whisper's rule drops is dropped. Past `no_speech_alone`, no
/// text is sure enough.
fn heard_nothing(no_speech: f32, mean_logprob: f32, options: &Options) -> bool {
    let sure = (1.0 - no_speech) * mean_logprob.exp();
    let corner = (1.0 - options.no_speech_threshold) * options.logprob_threshold.exp();
    sure < corner || no_speech > options.no_speech_alone
}

/// Cuts one window's tokens into segments at pairs of timestamp tokens
/// and appends them; returns how many encoder positions to move on (to
/// the last complete segment's end), or `None` for the whole window.
fn split_segments(
    model: &Weights,
    tokens: &[u32],
    offset: f64,
    window_seconds: f64,
    segments: &mut Vec<Segment>,
) -> Option<usize> {
    let begin = model.vocabulary.special.timestamp_begin;
    let is_time = |t: &u32| *t >= begin;
    let time = |t: u32| f64::from(t - begin) * TIMESTAMP_STEP;
    let single_ending = tokens.len() >= 2
        && !is_time(&tokens[tokens.len() - 2])
        && is_time(&tokens[tokens.len() - 1]);
    let mut cuts: Vec<usize> = (1..tokens.len())
        .filter(|&i| is_time(&tokens[i - 1]) && is_time(&tokens[i]))
        .collect();
    if cuts.is_empty() {
        let end = tokens
            .iter()
            .rev()
            .find(|t| is_time(t))
            .map_or(window_seconds, |t| time(*t))
            .max(0.0);
        let end = if end > 0.0 { end } else { window_seconds };
        push(
            model,
            segments,
            tokens,
            offset,
            offset + end.min(window_seconds),
        );
        return None;
    }
    if single_ending {
        cuts.push(tokens.len());
    }
    let mut last = 0;
    for &cut in &cuts {
        let piece = &tokens[last..cut];
        let start = piece
            .first()
            .filter(|t| is_time(t))
            .map_or(0.0, |t| time(*t));
        let end = piece
            .iter()
            .rev()
            .find(|t| is_time(t))
            .map_or(start, |t| time(*t));
        push(
            model,
            segments,
            piece,
            offset + start,
            offset + end.max(start),
        );
        last = cut;
    }
    if single_ending {
        None
    } else {
        // The last pair's first timestamp is where the next window starts.
        let resume = tokens[last - 1];
        Some(((resume - begin) as usize).max(1))
    }
}

fn push(model: &Weights, segments: &mut Vec<Segment>, tokens: &[u32], start: f64, end: f64) {
    let text = model.vocabulary.text(tokens).trim().to_owned();
    if !text.is_empty() {
        segments.push(Segment { start, end, text });
    }
}

/// Beam search over one window with Whisper's timestamp rules.
fn decode_window(
    model: &Weights,
    encoded: &ndarray::Array2<f32>,
    options: &Options,
    language: &mut Option<u32>,
) -> Decoded {
    let special = &model.vocabulary.special;
    let mut state = model.network.start(encoded, options.threads);
    let Some(start) =
        model
            .network
            .decode(&mut state, &[special.start_of_transcript], options.threads)
    else {
        return Decoded::nothing();
    };
    let row = start.row(0).to_vec();
    let no_speech = softmax_at(&row, special.no_speech as usize);
    let mut logits = start;
    if special.multilingual {
        let chosen = *language.get_or_insert_with(|| {
            match options.language {
                Language::English => special.english,
                Language::Detect => likeliest_language(&model.vocabulary, &row),
            }
            .unwrap_or(special.start_of_transcript)
        });
        let mut prompt = Vec::new();
        if chosen != special.start_of_transcript {
            prompt.push(chosen);
        }
        prompt.push(special.transcribe);
        let Some(next) = model.network.decode(&mut state, &prompt, options.threads) else {
            return Decoded::nothing();
        };
        logits = next;
    }
    let first = logits.row(logits.nrows() - 1).to_vec();
    let mut decoder = WindowDecoder {
        model,
        state,
        options,
    };
    let chosen = beam::search(
        &mut decoder,
        first,
        special.end_of_text,
        options.beam_size,
        SAMPLE_LEN,
    );
    Decoded {
        mean_logprob: chosen.logprob / (chosen.tokens.len() + 1) as f32,
        tokens: chosen.tokens,
        no_speech,
    }
}

/// The network over one window, as the beam search asks it.
struct WindowDecoder<'a> {
    model: &'a Weights,
    state: State,
    options: &'a Options,
}

impl beam::Decoder for WindowDecoder<'_> {
    fn log_probs(&self, tokens: &[u32], logits: &mut [f32]) -> Vec<f32> {
        apply_rules(self.model, tokens, logits, self.options);
        log_softmax(logits)
    }

    fn step(&mut self, parents: &[usize], next: &[u32]) -> Option<Vec<Vec<f32>>> {
        self.state.reorder(parents);
        let logits = self
            .model
            .network
            .step(&mut self.state, next, self.options.threads)?;
        Some(logits.rows().into_iter().map(|row| row.to_vec()).collect())
    }

    fn loop_cut(&self, tokens: &[u32]) -> Option<usize> {
        // A loop: keep the text up to where it began.
        repeats(tokens, self.model.vocabulary.special.timestamp_begin)
            .then(|| tokens.len() - tokens.len() / 3)
    }
}

/// Whisper's rules on the next token: never special tokens or symbols;
/// not a blank or the end first; timestamps first, in pairs, never going
/// back; and a timestamp whenever timestamps together are likelier than
/// any one word.
fn apply_rules(model: &Weights, tokens: &[u32], logits: &mut [f32], _options: &Options) {
    let special = &model.vocabulary.special;
    let len = logits.len();
    let begin = (special.timestamp_begin as usize).min(len);
    let eot = (special.end_of_text as usize).min(len);
    for id in &model.suppressed {
        if let Some(v) = logits.get_mut(*id as usize) {
            *v = f32::NEG_INFINITY;
        }
    }
    if tokens.is_empty() {
        for id in [model.blank, special.end_of_text] {
            if let Some(v) = logits.get_mut(id as usize) {
                *v = f32::NEG_INFINITY;
            }
        }
    }
    let is_time = |t: u32| t as usize >= begin;
    let last_time = tokens.last().is_some_and(|t| is_time(*t));
    let penultimate_time = tokens.len() < 2 || is_time(tokens[tokens.len() - 2]);
    if last_time {
        if penultimate_time {
            logits[begin..].fill(f32::NEG_INFINITY);
        } else {
            logits[..eot].fill(f32::NEG_INFINITY);
        }
    }
    if let Some(latest) = tokens.iter().rev().find(|t| is_time(**t)) {
        let floor = if last_time && !penultimate_time {
            *latest
        } else {
            latest + 1
        };
        let floor = (floor as usize).min(len);
        logits[begin.min(floor)..floor].fill(f32::NEG_INFINITY);
    }
    if tokens.is_empty() {
        logits[..begin].fill(f32::NEG_INFINITY);
        let latest_start = (begin + MAX_INITIAL_TIMESTAMP as usize + 1).min(len);
        logits[latest_start..].fill(f32::NEG_INFINITY);
    }
    let log_probs = log_softmax(logits);
    if begin < log_probs.len() {
        let times = log_sum_exp(&log_probs[begin..]);
        let best_text = log_probs[..begin]
            .iter()
            .copied()
            .fold(f32::NEG_INFINITY, f32::max);
        if times > best_text {
            logits[..begin].fill(f32::NEG_INFINITY);
        }
    }
}

/// Whether the text tokens end in the same run of at least 4 tokens
/// three times over: the loop a decoder falls into on noise.
fn repeats(tokens: &[u32], timestamp_begin: u32) -> bool {
    let text: Vec<u32> = tokens
        .iter()
        .copied()
        .filter(|t| *t < timestamp_begin)
        .collect();
    (4..=text.len() / 3).any(|n| {
        let end = text.len();
        text[end - n..] == text[end - 2 * n..end - n]
            && text[end - n..] == text[end - 3 * n..end - 2 * n]
    })
}

fn log_sum_exp(values: &[f32]) -> f32 {
    let top = kernels::largest(values);
    if top == f32::NEG_INFINITY {
        return top;
    }
    let mut exps = values.to_vec();
    kernels::exp_in_place(&mut exps, 1.0, top);
    top + kernels::sum(&exps).ln()
}

fn log_softmax(values: &[f32]) -> Vec<f32> {
    let total = log_sum_exp(values);
    values.iter().map(|v| v - total).collect()
}

fn softmax_at(values: &[f32], index: usize) -> f32 {
    let total = log_sum_exp(values);
    values.get(index).map_or(0.0, |v| kernels::exp(v - total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phrase_said_three_times_over_is_a_loop_and_twice_is_not() {
        let phrase = [1, 2, 3, 4];
        let twice: Vec<u32> = phrase.iter().chain(&phrase).copied().collect();
        assert!(!repeats(&twice, 100));
        let thrice: Vec<u32> = [9]
            .iter()
            .chain(&phrase)
            .chain(&phrase)
            .chain(&phrase)
            .copied()
            .collect();
        assert!(repeats(&thrice, 100));
        // Timestamps between them do not hide the loop.
        let stamped: Vec<u32> = thrice.iter().flat_map(|t| [*t, 150]).collect();
        assert!(repeats(&stamped, 100));
    }

    #[test]
    fn a_window_is_no_speech_by_its_no_speech_probability_and_its_text_s_sureness_together() {
        let options = Options::default();
        // Whisper's own rule: both over their thresholds.
        assert!(heard_nothing(0.7, -1.2, &options));
        assert!(!heard_nothing(0.7, -0.2, &options));
        assert!(!heard_nothing(0.1, -1.2, &options));
        // Near both thresholds at once, which Whisper's rule keeps.
        assert!(heard_nothing(0.79, -0.94, &options));
        // Speech as the dev clips give it, and sure silence.
        assert!(!heard_nothing(0.34, -0.59, &options));
        assert!(heard_nothing(0.9, -0.1, &options));
    }

    #[test]
    fn log_sum_exp_is_stable_for_large_values() {
        let v = log_sum_exp(&[1000.0, 1000.0]);
        assert!((v - (1000.0 + 2f32.ln())).abs() < 1e-3);
        assert!(log_sum_exp(&[f32::NEG_INFINITY]).is_infinite());
    }
}
