//! What transcription takes and gives: its options with their defaults,
//! the transcript, its segments and windows, progress, and the clock
//! marks the transcript is read with.

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
