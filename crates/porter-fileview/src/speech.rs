//! Recordings as text: the speech in an audio file (or a video's sound)
//! transcribed by `porter-speech` (Whisper on the CPU), shown as numbered
//! lines with `[mm:ss]` marks in the view and as timestamped paragraphs in
//! Markdown.
//!
//! The model is found in the models folder the program named with
//! [`crate::install_models`] (porter passes `PORTER_MODELS_DIR`); this
//! crate never looks on its own.
//! It is loaded once per process, on the first recording that needs it
//! (one small accessor, [`model`]), so that no other file pays for it: in
//! a confined worker, which can load nothing once confined, a recording
//! decoded there makes the worker ask for the speech engine, and the file
//! is read again in a worker that loaded the model first (see
//! [`crate::engines`]).
//! Without a model, or in a build without the `speech` feature, a
//! recording is described as before and a note says how to install one.

// Without the `speech` feature the rendering is unused but still tested.
#![cfg_attr(not(feature = "speech"), allow(dead_code))]

use std::fmt::Write as _;

use crate::bounds::{Cancel, Failure};
use crate::markdown::out::Markdown;
use crate::options::Options;

/// What a note says when no model is installed: how to install it.
pub(crate) const NO_MODEL: &str = "Its speech is not transcribed: no speech model is installed (run scripts/models.sh from porter's source, or set PORTER_MODELS_DIR to a directory holding whisper-base or whisper-tiny.en).";
/// What a note says in a build without speech to text.
#[cfg(not(feature = "speech"))]
pub(crate) const NOT_AVAILABLE: &str =
    "Its speech is not transcribed: speech to text is not available in this build.";

/// Loads the speech model from the process's models folder, for a worker
/// about to confine itself that was started to transcribe (see
/// [`crate::engines`]).
pub(crate) fn preload() -> Result<(), String> {
    #[cfg(feature = "speech")]
    return model(&Options::default()).map(drop);
    #[cfg(not(feature = "speech"))]
    Err(NOT_AVAILABLE.to_owned())
}

/// A recording's speech, as text.
pub(crate) struct Heard {
    /// One line per stretch of speech: "[mm:ss] words".
    pub lines: String,
    /// Timestamped paragraphs for Markdown.
    pub paragraphs: Vec<(f64, String)>,
    /// The length of the recording heard, in seconds.
    pub seconds: f64,
    /// Sentences for the header: what read it, where it stopped.
    pub notes: Vec<String>,
}

/// What became of a recording.
pub(crate) enum Outcome {
    Heard(Heard),
    /// Not transcribed; the note says why and what to do.
    NotTranscribed(String),
}

/// Transcribes a recording's bytes within `options`.
#[cfg(feature = "speech")]
pub(crate) fn hear(
    bytes: &[u8],
    name: &str,
    options: &Options,
    cancel: &Cancel,
) -> Result<Outcome, Failure> {
    if !options.speech {
        return Ok(Outcome::NotTranscribed(
            "Its speech is not transcribed: transcription is turned off.".to_owned(),
        ));
    }
    if !model_installed(options) {
        return Ok(Outcome::NotTranscribed(NO_MODEL.to_owned()));
    }
    let extension = std::path::Path::new(name)
        .extension()
        .and_then(|e| e.to_str());
    let limits = porter_speech::AudioLimits {
        max_seconds: options.speech_seconds,
    };
    let cancelled = || cancel.is_cancelled();
    let audio =
        porter_speech::decode(bytes, extension, &limits, &cancelled).map_err(
            |error| match error {
                porter_speech::AudioError::Cancelled => Failure::Cancelled,
                other => Failure::unreadable(format!("its audio could not be decoded: {other}")),
            },
        )?;
    // The model is loaded only for audio that decoded: a file that is not
    // a recording never pays for it. A confined worker started without it
    // stops here, and the file is read again in one that loaded it.
    if !crate::engines::ready(crate::engines::Engine::Speech) {
        return Ok(Outcome::NotTranscribed(
            "Its speech is transcribed in another worker.".to_owned(),
        ));
    }
    let model = match model(options) {
        Ok(model) => model,
        Err(note) => return Ok(Outcome::NotTranscribed(note)),
    };
    let speech_options = porter_speech::Options {
        cpu_seconds: options.speech_cpu_seconds,
        threads: options.speech_threads.max(1),
        ..porter_speech::Options::default()
    };
    let transcript = model
        .model
        .transcribe(&audio, &speech_options, &cancelled, &mut |p| {
            cancel.progress(
                p.done_seconds,
                p.total_seconds,
                "transcribing the recording",
            );
        });
    cancel.check()?;
    Ok(Outcome::Heard(heard(model.name, &audio, &transcript)))
}

#[cfg(not(feature = "speech"))]
#[allow(clippy::unnecessary_wraps)] // the signature the speech build shares
pub(crate) fn hear(_: &[u8], _: &str, _: &Options, _: &Cancel) -> Result<Outcome, Failure> {
    Ok(Outcome::NotTranscribed(NOT_AVAILABLE.to_owned()))
}

/// The speech model of a models folder: the first of
/// [`porter_speech::MODELS`] whose `model.bin` is there (looked up once
/// per process; see [`crate::models::has`]), as its folder and name.
#[cfg(feature = "speech")]
fn model_found(dir: &std::path::Path) -> Option<(&'static str, &'static str)> {
    porter_speech::MODELS
        .iter()
        .copied()
        .find(|(folder, _)| crate::models::has(dir, &format!("{folder}/model.bin")))
}

/// Whether a model is in the models folder for `options`, without loading
/// it.
#[cfg(feature = "speech")]
fn model_installed(options: &Options) -> bool {
    crate::models::dir_for(options).is_some_and(|dir| model_found(dir).is_some())
}

/// Looks once whether a model is installed, for a worker about to confine
/// itself: a recording then says "no model" without asking for the speech
/// engine.
pub(crate) fn look_for_model() {
    #[cfg(feature = "speech")]
    let _ = model_installed(&Options::default());
}

/// A speech model loaded, with the name its notes give it.
#[cfg(feature = "speech")]
pub(crate) struct Named {
    pub model: porter_speech::Model,
    pub name: &'static str,
}

/// The model of the models folder for `options`, loaded on first need and
/// kept for the process: `Err` with the note to show when there is none or
/// it cannot load.
#[cfg(feature = "speech")]
pub(crate) fn model(options: &Options) -> Result<std::sync::Arc<Named>, String> {
    static MODEL: crate::models::Cache<Named> = crate::models::Cache::new();
    let Some(dir) = crate::models::dir_for(options) else {
        return Err(NO_MODEL.to_owned());
    };
    let Some((folder, name)) = model_found(dir) else {
        return Err(NO_MODEL.to_owned());
    };
    MODEL.get(dir, |dir| {
        let model = porter_speech::Model::load(&dir.join(folder))
            .map_err(|error| format!("Its speech is not transcribed: {error}."))?;
        crate::engines::record_start(crate::engines::Engine::Speech);
        Ok(Named { model, name })
    })
}

#[cfg(feature = "speech")]
fn heard(
    model: &str,
    audio: &porter_speech::Audio,
    transcript: &porter_speech::Transcript,
) -> Heard {
    let mut lines = String::new();
    for segment in &transcript.segments {
        let _ = writeln!(
            lines,
            "[{}] {}",
            clock(segment.start),
            one_line(&segment.text)
        );
    }
    let language = transcript
        .language
        .as_ref()
        .map_or_else(|| "English".to_owned(), |code| format!("language {code}"));
    let mut notes = vec![format!(
        "Transcribed by porter with {model} ({language}; {} of {} audio at {} Hz); silence and music give no words, and the words are the model's hearing, not a verified record.",
        clock(audio.seconds()),
        audio.codec,
        audio.source_rate,
    )];
    if transcript.segments.is_empty() && transcript.stopped.is_none() {
        notes.push("No speech was heard in it.".to_owned());
    }
    if let Some(stopped) = &transcript.stopped {
        notes.push(format!(
            "The transcript stops at {} of {}: {}.",
            clock(stopped.at_seconds),
            clock(transcript.seconds),
            stopped.reason
        ));
    }
    if let Some(cut) = &audio.cut {
        notes.push(format!(
            "Only its first {} were decoded: {cut}.",
            clock(audio.seconds())
        ));
    }
    Heard {
        lines,
        paragraphs: paragraphs(&transcript.segments),
        seconds: audio.seconds(),
        notes,
    }
}

/// Seconds as the transcript marks them: "mm:ss", or "h:mm:ss" from an
/// hour on.
pub(crate) fn clock(seconds: f64) -> String {
    let whole = seconds.max(0.0).floor() as u64;
    if whole >= 3600 {
        format!("{}:{:02}:{:02}", whole / 3600, whole / 60 % 60, whole % 60)
    } else {
        format!("{:02}:{:02}", whole / 60, whole % 60)
    }
}

/// A stretch of speech on one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The longest pause inside one paragraph, in seconds.
#[cfg(feature = "speech")]
const PARAGRAPH_PAUSE: f64 = 2.0;
/// The most characters a paragraph gathers before the next starts.
#[cfg(feature = "speech")]
const PARAGRAPH_CHARS: usize = 600;

/// Stretches of speech gathered into paragraphs: a new one after a pause
/// or once a paragraph is long.
#[cfg(feature = "speech")]
fn paragraphs(segments: &[porter_speech::Segment]) -> Vec<(f64, String)> {
    let mut out: Vec<(f64, String)> = Vec::new();
    let mut last_end = f64::NEG_INFINITY;
    for segment in segments {
        let text = one_line(&segment.text);
        match out.last_mut() {
            Some((_, paragraph))
                if segment.start - last_end < PARAGRAPH_PAUSE
                    && paragraph.len() < PARAGRAPH_CHARS =>
            {
                paragraph.push(' ');
                paragraph.push_str(&text);
            }
            _ => out.push((segment.start, text)),
        }
        last_end = segment.end;
    }
    out
}

/// The transcript as Markdown: a heading with the file's name and length,
/// then one paragraph per stretch of speech, each after its `[mm:ss]`
/// mark; porter's own notes are HTML comments, so that a search of the
/// text finds only what was said.
pub(crate) fn markdown(name: &str, heard: Heard) -> Markdown {
    let mut text = format!(
        "# {} ({})\n",
        crate::markdown::out::escape_inline(name),
        clock(heard.seconds)
    );
    for note in &heard.notes {
        let _ = write!(text, "\n<!-- porter: {} -->\n", note.replace("--", "- -"));
    }
    for (start, paragraph) in &heard.paragraphs {
        let _ = write!(
            text,
            "\n[{}] {}\n",
            clock(*start),
            crate::markdown::out::escape_inline(paragraph)
        );
    }
    Markdown {
        text,
        title: Some(name.to_owned()),
        notes: heard.notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "speech")]
    #[test]
    fn stretches_of_speech_gather_into_paragraphs_at_pauses() {
        let segment = |start: f64, end: f64, text: &str| porter_speech::Segment {
            start,
            end,
            text: text.to_owned(),
        };
        let gathered = paragraphs(&[
            segment(0.0, 2.0, "One."),
            segment(2.5, 4.0, " Two."),
            segment(9.0, 10.0, "Three."),
        ]);
        assert_eq!(
            gathered,
            vec![(0.0, "One. Two.".to_owned()), (9.0, "Three.".to_owned())]
        );
    }

    #[test]
    fn the_markdown_heads_with_name_and_length_and_keeps_notes_in_comments() {
        let heard = Heard {
            lines: String::new(),
            paragraphs: vec![
                (0.0, "Hello *there*.".to_owned()),
                (65.0, "Bye.".to_owned()),
            ],
            seconds: 70.4,
            notes: vec!["Transcribed -- by a model.".to_owned()],
        };
        let markdown = markdown("memo.wav", heard);
        assert_eq!(
            markdown.text,
            "# memo.wav (01:10)\n\n<!-- porter: Transcribed - - by a model. -->\n\n[00:00] Hello \\*there\\*.\n\n[01:05] Bye.\n"
        );
    }
}
