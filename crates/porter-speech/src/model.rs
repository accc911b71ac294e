//! Loading a model: all of its file reading, checked, up front.

use std::path::{Path, PathBuf};

use crate::audio::Audio;
use crate::types::{Options, Progress, Transcript};
use crate::weights::Weights;
use crate::{ct2, mel, net, tokens, transcribe};

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
    weights: Weights,
    /// Whether it is an English-only model.
    pub english_only: bool,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("width", &self.weights.network.width)
            .field("vocabulary", &self.weights.vocabulary.len())
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
        // A language token is part of the prompt, never of the text.
        suppressed.extend(vocabulary.languages.iter().map(|(id, _)| *id));
        let blank = 220; // " " in GPT-2's vocabulary, which Whisper's extends.
        Ok(Self {
            english_only: !special.multilingual,
            weights: Weights {
                mel: mel::Mel::new(network.mel_bands),
                network,
                vocabulary,
                suppressed,
                blank,
            },
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
        transcribe::transcribe(&self.weights, audio, options, cancelled, progress)
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

/// The directory under a models directory that holds Whisper tiny.en, as
/// the setup script unpacks it.
pub const TINY_EN_DIR: &str = "whisper-tiny.en";
/// The directory that holds Whisper base (multilingual).
pub const BASE_DIR: &str = "whisper-base";

/// The speech models a models directory may hold, the one to use first
/// first, each with the name a note gives it. Base comes first: on
/// bench/transcribe's clips, beam 5, it heard held-out speech at WER 0.108
/// where tiny.en heard 0.156 (dev 0.171 and 0.210), for 2.2 times the CPU
/// time and 292 MiB at its peak, within a worker's 512 MiB; and it hears
/// other languages than English. tiny.en alone still works.
pub const MODELS: &[(&str, &str)] = &[(BASE_DIR, "Whisper base"), (TINY_EN_DIR, "Whisper tiny.en")];
