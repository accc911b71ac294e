//! What every reader shares: the cancel flag, the failure a reader reports,
//! the extracted text it hands back, and a reader that stops at a byte cap.

use std::io::{self, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// `Cancel` is a flag the caller raises to stop a long listing or decode.
/// Readers check it between entries, rows and frames, so a cancelled request
/// ends promptly instead of running to its limit. It also carries where a
/// long reader tells how far it has got (a recording being transcribed),
/// for a caller that passes it on as progress notifications.
#[derive(Clone, Default)]
pub struct Cancel {
    flag: Arc<AtomicBool>,
    progress: Option<Arc<ProgressFn>>,
}

/// What a reader calls with how far it has got: done and total, in the
/// reader's own unit (seconds of a recording), and what it is doing.
pub type ProgressFn = dyn Fn(f64, f64, &str) + Send + Sync;

impl std::fmt::Debug for Cancel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cancel")
            .field("flag", &self.flag)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

impl Cancel {
    /// A flag that is not raised.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The same flag, with `report` told how far a long reader has got.
    /// It is called on the reader's thread and must not block for long.
    #[must_use]
    pub fn with_progress(mut self, report: Arc<ProgressFn>) -> Self {
        self.progress = Some(report);
        self
    }

    /// Tells the caller how far a reader has got, if it asked.
    pub(crate) fn progress(&self, done: f64, total: f64, doing: &str) {
        if let Some(report) = &self.progress {
            report(done, total, doing);
        }
    }

    /// Raises the flag; every view working under it stops at its next check.
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }

    /// Whether the flag is raised.
    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    /// The flag itself, for work that looks at it between its own steps
    /// (the table model's decoding passes).
    #[cfg(feature = "tables")]
    pub(crate) fn flag(&self) -> &AtomicBool {
        &self.flag
    }

    /// `Err(Failure::Cancelled)` once the flag is raised, for use with `?`.
    pub(crate) fn check(&self) -> Result<(), Failure> {
        if self.is_cancelled() {
            Err(Failure::Cancelled)
        } else {
            Ok(())
        }
    }
}

/// `Failure` is how a reader stops: the file could not be read as its kind
/// (it is then described with the reason), or the request was cancelled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The reason, as a sentence fragment that completes "It is not shown
    /// because …" (e.g. "its XML is nested deeper than 1000 levels").
    Unreadable(String),
    /// The caller raised the [`Cancel`] flag.
    Cancelled,
}

impl Failure {
    pub(crate) fn unreadable(reason: impl Into<String>) -> Self {
        Self::Unreadable(reason.into())
    }

    /// The failure as the sentence a caller outside the crate shows.
    pub(crate) fn into_reason(self) -> String {
        match self {
            Self::Unreadable(reason) => reason,
            Self::Cancelled => "it was cancelled".to_owned(),
        }
    }
}

/// `Extracted` is the text a reader took from a document or archive, one
/// line per `\n`, plus notes for the window header (what was left out, where
/// a limit cut the text).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Extracted {
    /// The text, lines separated by `\n`.
    pub text: String,
    /// Whole sentences for the header, each ending in a full stop.
    pub notes: Vec<String>,
}

/// `CappedReader` passes bytes through until `cap` have been read, then fails
/// with an error that [`is_cap_error`] recognises. Decompressors are wrapped
/// in it so that no crafted file can expand past a limit, whatever sizes it
/// declares.
pub(crate) struct CappedReader<R> {
    inner: R,
    left: u64,
    read: u64,
}

/// The message of the error a [`CappedReader`] fails with.
const CAP_MESSAGE: &str = "porter-fileview: byte cap reached";

impl<R: Read> CappedReader<R> {
    pub(crate) fn new(inner: R, cap: u64) -> Self {
        Self {
            inner,
            left: cap,
            read: 0,
        }
    }

    /// How many bytes have passed through so far.
    pub(crate) fn bytes_read(&self) -> u64 {
        self.read
    }
}

impl<R: Read> Read for CappedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            // One byte more than the cap tells "exactly at the cap" from "over it".
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(io::Error::other(CAP_MESSAGE)),
            };
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        self.read += n as u64;
        Ok(n)
    }
}

/// Whether `error` (or an error it wraps) is the one a [`CappedReader`]
/// raises at its cap.
pub(crate) fn is_cap_error(error: &io::Error) -> bool {
    if error.to_string().contains(CAP_MESSAGE) {
        return true;
    }
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        if inner.to_string().contains(CAP_MESSAGE) {
            return true;
        }
        source = inner.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capped_reader_passes_exactly_the_cap_and_fails_one_byte_later() {
        let data = [7u8; 100];
        let mut exact = CappedReader::new(&data[..], 100);
        let mut out = Vec::new();
        assert_eq!(
            exact.read_to_end(&mut out).expect("100 fit a cap of 100"),
            100
        );

        let mut over = CappedReader::new(&data[..], 99);
        let error = over
            .read_to_end(&mut Vec::new())
            .expect_err("100 pass a cap of 99");
        assert!(is_cap_error(&error));
        assert_eq!(over.bytes_read(), 99);
    }

    #[test]
    fn a_raised_cancel_flag_is_seen_by_every_clone() {
        let cancel = Cancel::new();
        let seen = cancel.clone();
        assert_eq!(seen.check(), Ok(()));
        cancel.cancel();
        assert_eq!(seen.check(), Err(Failure::Cancelled));
    }
}
