//! What a worker is started with: the limits it confines itself to, the
//! engines it starts first and the OCR languages they read with, and how
//! they travel as its arguments.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::engines::{Engine, Engines};
use crate::options::Options;

/// The limits a worker is started with, the engines it starts before it
/// confines itself, and the OCR languages OCR would read with; together
/// they pick which warm worker can serve a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Address space beyond what the worker holds at start, in bytes.
    pub(crate) memory_bytes: u64,
    /// CPU seconds.
    pub(crate) cpu_seconds: u64,
    /// The languages OCR reads with, when it may run: the worker starts
    /// Tesseract with them (and loads their data) while it may still open
    /// files.
    pub(crate) ocr_languages: Option<String>,
    /// The engines the worker starts before it confines itself: none at
    /// first, and those a file was found to need when it is read again.
    /// OCR is started only when `ocr_languages` is set.
    pub(crate) engines: Engines,
    /// Whether the worker runs the common readers once before it reads its
    /// request: worth it for a worker started ahead of need, which waits
    /// anyway, and only a delay for one started for a file at hand.
    pub(crate) warm: bool,
    /// The models folder, which the worker loads a model from before it
    /// confines itself (see [`crate::models`]).
    pub(crate) models_dir: Option<PathBuf>,
}

/// What stands for "no OCR" among a worker's arguments.
const NO_OCR: &str = "-";
/// The last argument of a worker that warms up first, and of one that
/// does not.
const WARM: &str = "warm";
const COLD: &str = "cold";

impl Limits {
    /// The limits `options` set, for a worker that starts `engines` (and
    /// warms up when it is started ahead of need).
    pub(super) fn of(options: &Options, engines: Engines, warm: bool) -> Self {
        // A worker that transcribes gets the recording's CPU budget on top
        // of a file's (the model's own budget stops it first, with a
        // partial transcript that says where).
        let speech = if engines.has(Engine::Speech) {
            options.speech_cpu_seconds
        } else {
            0
        };
        Self {
            memory_bytes: options.worker_memory_bytes,
            cpu_seconds: options.worker_cpu_seconds.max(1).saturating_add(speech),
            ocr_languages: (options.ocr
                && crate::ocr::check_languages(options.ocr_languages.trim()).is_ok())
            .then(|| options.ocr_languages.trim().to_owned()),
            engines,
            warm,
            models_dir: crate::models::dir_for(options).map(std::path::Path::to_path_buf),
        }
    }

    /// Whether `other` is for the same options (memory, languages, warming
    /// up), whatever engines either starts and the CPU time they add.
    pub(crate) fn same_options(&self, other: &Self) -> bool {
        Self {
            engines: other.engines,
            cpu_seconds: other.cpu_seconds,
            ..self.clone()
        } == *other
    }

    /// Whether the worker starts `engine` before it confines itself.
    pub(crate) fn starts(&self, engine: Engine) -> bool {
        match engine {
            Engine::Ocr => self.engines.has(engine) && self.ocr_languages.is_some(),
            Engine::Speech | Engine::Tables => self.engines.has(engine),
        }
    }

    /// The arguments, in order: memory, CPU, OCR languages (`-` for none),
    /// engines (`-` for none), `warm` or `cold`, and the models folder when
    /// there is one.
    pub(super) fn to_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = [
            self.memory_bytes.to_string(),
            self.cpu_seconds.to_string(),
            self.ocr_languages
                .clone()
                .unwrap_or_else(|| NO_OCR.to_owned()),
            self.engines.to_arg(),
            if self.warm { WARM } else { COLD }.to_owned(),
        ]
        .into_iter()
        .map(OsString::from)
        .collect();
        args.extend(self.models_dir.clone().map(OsString::from));
        args
    }

    pub(super) fn from_args(args: impl IntoIterator<Item = OsString>) -> Option<Self> {
        let mut args = args.into_iter();
        let mut number = || args.next()?.to_str()?.parse::<u64>().ok();
        let memory_bytes = number()?;
        let cpu_seconds = number()?;
        let languages = args.next()?.into_string().ok()?;
        let ocr_languages = if languages == NO_OCR {
            None
        } else {
            crate::ocr::check_languages(&languages).ok()?;
            Some(languages)
        };
        let engines = Engines::from_arg(args.next()?.to_str()?)?;
        let warm = match args.next()?.to_str()? {
            WARM => true,
            COLD => false,
            _ => return None,
        };
        let models_dir = args.next().filter(|dir| !dir.is_empty()).map(PathBuf::from);
        let limits = Self {
            memory_bytes,
            cpu_seconds,
            ocr_languages,
            engines,
            warm,
            models_dir,
        };
        (args.next().is_none()).then_some(limits)
    }
}
