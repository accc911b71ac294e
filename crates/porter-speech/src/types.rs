//! What transcription takes and gives: its options with their defaults,
//! the transcript, its segments and windows, progress, and the clock
//! marks the transcript is read with.

/// `CPU_SECONDS` is the CPU time transcription of one recording may take
/// by default (120 s): Whisper base with 5 beams hears about seven minutes
/// of speech in that, tiny.en fourteen (bench/transcribe's two-minute clip
/// took 34 s and 17 s, a loaded machine). Past it the transcript stops and
/// says where.
pub const CPU_SECONDS: u64 = 120;
/// `NO_SPEECH_THRESHOLD` is the no-speech probability over which a window
/// whose text is also unsure gives no words (Whisper's 0.6); with
/// [`LOGPROB_THRESHOLD`] it sets how sure of speech a window must be (see
/// `heard_nothing` in transcribe.rs).
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
/// text is dropped whatever the no-speech probability (-1.0, Whisper's own
/// `LOGPROB_THRESHOLD`, a geometric mean of 0.37 per token): Whisper takes
/// text under it as a failed decode and retries it by sampling, which
/// porter does not; the beam's text is the likeliest the model found, and
/// the likeliest still this unsure is a guess at noise, not speech heard.
/// (On bench/transcribe's dev clips, beam 5, speech windows lie between
/// -0.33 and -0.61, music at -1.02 with base and -1.17 with tiny.en: music
/// with base sits near the line. Greedy decoding's -1.5 let the beam's
/// likelier guesses at music through.)
pub const GIVE_UP_LOGPROB: f32 = -1.0;

/// `BEAM_SIZE` is how many sequences each window's decoding carries at
/// once (5, as Whisper's and faster-whisper's transcribers do); 1 is
/// greedy decoding.
pub const BEAM_SIZE: usize = 5;

/// Which language a multilingual model is told it hears (an English-only
/// model always hears English).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Language {
    /// The likeliest by the model's own language tokens on the first
    /// window with sound, as Whisper's transcriber does; then kept for the
    /// whole recording.
    #[default]
    Detect,
    /// English, whatever the model hears.
    English,
}

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
    /// See [`BEAM_SIZE`].
    pub beam_size: usize,
    /// See [`Language`].
    pub language: Language,
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
            beam_size: BEAM_SIZE,
            language: Language::Detect,
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
    /// The language it was transcribed as ("en"; detected or given), or
    /// `None` for an English-only model, which has no choice.
    pub language: Option<String>,
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
