//! What a worker is started with: the limits it confines itself to and the
//! OCR languages it loads first, and how they travel as its arguments.

use std::ffi::OsString;

use crate::options::Options;

/// The limits a worker is started with, and the OCR languages it loads
/// before it confines itself, which therefore pick which warm worker can
/// serve a request.
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
}

/// What stands for "no OCR" among a worker's arguments.
const NO_OCR: &str = "-";

impl Limits {
    pub(super) fn of(options: &Options) -> Self {
        Self {
            memory_bytes: options.worker_memory_bytes,
            cpu_seconds: options.worker_cpu_seconds.max(1),
            ocr_languages: (options.ocr
                && crate::ocr::check_languages(options.ocr_languages.trim()).is_ok())
            .then(|| options.ocr_languages.trim().to_owned()),
        }
    }

    pub(super) fn to_args(&self) -> [String; 3] {
        [
            self.memory_bytes.to_string(),
            self.cpu_seconds.to_string(),
            self.ocr_languages
                .clone()
                .unwrap_or_else(|| NO_OCR.to_owned()),
        ]
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
        let limits = Self {
            memory_bytes,
            cpu_seconds,
            ocr_languages,
        };
        (args.next().is_none()).then_some(limits)
    }
}
