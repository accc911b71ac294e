//! Engines: the heavy parts a reader may need that load data from disk
//! before they can work (Tesseract with its language and orientation data;
//! the speech model; the table model), each started the first time a file
//! needs it and never
//! ahead of that. A born-digital PDF, a Word file, a spreadsheet or a
//! holiday photo starts none.
//!
//! In the caller's own process an engine starts when a reader first asks
//! for it. A confined worker can open no file once it has confined itself,
//! so it starts only the engines its parent named, before confining (none
//! at first). A reader there that needs one it lacks asks [`ready`], which
//! records the need and raises the job's cancel flag so that the reader
//! stops at its next check; the worker answers with the engines it needed,
//! and the parent reads the file again in a worker started with them (see
//! [`crate::worker`]). Workers that have needed an engine are the only ones
//! kept warm with it.
//!
//! Every process records which engines it started, and a worker reports its
//! own to its parent, so that [`started`] tells a test (or an operator)
//! exactly what a file cost.

use std::fmt;
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use crate::bounds::Cancel;

/// One engine a reader may need.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// Tesseract, with the OCR languages' data and its orientation data.
    Ocr,
    /// The speech model (Whisper), for recordings.
    Speech,
    /// The table-structure model, for tables in PDFs.
    Tables,
}

impl Engine {
    /// Every engine, in the order sets list them.
    pub const ALL: [Self; 3] = [Self::Ocr, Self::Speech, Self::Tables];

    /// Its name, as worker arguments and reports give it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Ocr => "ocr",
            Self::Speech => "speech",
            Self::Tables => "tables",
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A set of engines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Engines(u8);

impl Engines {
    /// No engine.
    pub const NONE: Self = Self(0);

    /// This set with `engine` added.
    #[must_use]
    pub fn with(self, engine: Engine) -> Self {
        Self(self.0 | engine.bit())
    }

    /// Both sets together.
    #[must_use]
    pub fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether `engine` is in the set.
    #[must_use]
    pub fn has(self, engine: Engine) -> bool {
        self.0 & engine.bit() != 0
    }

    /// Whether every engine of `other` is in this set.
    #[must_use]
    pub fn covers(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether the set is empty.
    #[must_use]
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The engines in the set, in [`Engine::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = Engine> {
        Engine::ALL.into_iter().filter(move |e| self.has(*e))
    }

    /// The set as one worker argument: names joined by commas, or `-`.
    pub(crate) fn to_arg(self) -> String {
        if self.is_empty() {
            return "-".to_owned();
        }
        self.iter().map(Engine::name).collect::<Vec<_>>().join(",")
    }

    /// Reads [`Self::to_arg`] back; `None` for anything else.
    pub(crate) fn from_arg(arg: &str) -> Option<Self> {
        if arg == "-" {
            return Some(Self::NONE);
        }
        let mut set = Self::NONE;
        for name in arg.split(',') {
            let engine = Engine::ALL.into_iter().find(|e| e.name() == name)?;
            set = set.with(engine);
        }
        Some(set)
    }
}

impl fmt::Display for Engines {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("none");
        }
        f.write_str(&self.iter().map(Engine::name).collect::<Vec<_>>().join(", "))
    }
}

/// What this process knows of its engines.
struct State {
    /// Set once a worker has confined itself: no engine can start after.
    confined: bool,
    /// The engines a worker loaded (or tried to) before confining.
    loaded: Engines,
    /// The engines started in this process, or reported by its workers.
    started: Engines,
    /// The engines the current job needed and this confined process lacks.
    needed: Engines,
    /// The current job's cancel flag, raised when an engine is needed.
    job: Option<Cancel>,
}

static STATE: Mutex<State> = Mutex::new(State {
    confined: false,
    loaded: Engines::NONE,
    started: Engines::NONE,
    needed: Engines::NONE,
    job: None,
});

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The engines started so far in this process, and by the workers it sent
/// files to.
#[must_use]
pub fn started() -> Engines {
    state().started
}

/// Records that `engine` started in this process.
#[cfg_attr(
    not(any(feature = "ocr", feature = "speech", feature = "tables")),
    allow(dead_code)
)]
pub(crate) fn record_start(engine: Engine) {
    let mut state = state();
    state.started = state.started.with(engine);
}

/// Records the engines a worker reported it started.
pub(crate) fn record_reported(engines: Engines) {
    let mut state = state();
    state.started = state.started.union(engines);
}

/// Records that a worker loaded (or tried to load) `engines` before
/// confining itself, and that it is about to confine: no other can start.
pub(crate) fn confine(engines: Engines) {
    let mut state = state();
    state.loaded = engines;
    state.confined = true;
}

/// Begins a job: its needs are recorded afresh, and `cancel` is raised
/// when it needs an engine this process lacks.
pub(crate) fn begin_job(cancel: &Cancel) {
    let mut state = state();
    state.needed = Engines::NONE;
    state.job = Some(cancel.clone());
}

/// The engines the current job needed and this process lacks.
pub(crate) fn needed() -> Engines {
    state().needed
}

/// Whether `engine` may run in this process now. In a process that is not
/// confined it may (it starts on first use). In a confined worker it may
/// when the worker loaded it before confining; when it did not, the need is
/// recorded, the job's cancel flag is raised, and the answer is `false`:
/// the reader stops, and the parent reads the file again in a worker that
/// has the engine.
pub(crate) fn ready(engine: Engine) -> bool {
    let mut state = state();
    if !state.confined || state.loaded.has(engine) {
        return true;
    }
    state.needed = state.needed.with(engine);
    if let Some(job) = &state.job {
        job.cancel();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_crosses_as_one_argument_and_nothing_else_reads_as_one() {
        let both = Engines::NONE.with(Engine::Ocr).with(Engine::Speech);
        for set in [Engines::NONE, Engines::NONE.with(Engine::Ocr), both] {
            assert_eq!(Engines::from_arg(&set.to_arg()), Some(set));
        }
        assert_eq!(Engines::NONE.to_arg(), "-");
        assert_eq!(Engines::NONE.with(Engine::Ocr).to_arg(), "ocr");
        assert_eq!(both.to_arg(), "ocr,speech");
        assert_eq!(both.to_string(), "ocr, speech");
        for bad in ["", "ocr,", "OCR", "ocr,tesseract", "--"] {
            assert_eq!(Engines::from_arg(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_set_covers_its_subsets_only() {
        let ocr = Engines::NONE.with(Engine::Ocr);
        assert!(ocr.covers(Engines::NONE));
        assert!(ocr.covers(ocr));
        assert!(!Engines::NONE.covers(ocr));
        assert_eq!(ocr.to_string(), "ocr");
        assert_eq!(Engines::NONE.to_string(), "none");
    }
}
