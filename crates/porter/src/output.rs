//! Standard output as Unix tools treat it: when the reader goes away
//! (`porter view --json big.jpg | head -c 100`), the command stops quietly
//! with status 0 instead of reporting a broken pipe. Rust ignores SIGPIPE,
//! so every write to standard output goes through here rather than
//! `println!`, which would panic.

use std::io::{ErrorKind, Write as _};
use std::process::ExitCode;

/// `print` writes `text` to standard output and flushes it.
pub(crate) fn print(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// `closed` is whether an error (or one of its causes) is a write to a
/// reader that went away.
pub(crate) fn closed(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == ErrorKind::BrokenPipe)
    })
}

/// `failed` ends a command that stopped with `error`: quietly with 0 when
/// the reader of its output went away, else with the error on standard
/// error and status 1.
pub(crate) fn failed(error: &anyhow::Error) -> ExitCode {
    if closed(error) {
        return ExitCode::SUCCESS;
    }
    eprintln!("porter: {error:#}");
    ExitCode::from(1)
}

/// `finish` ends a command whose last step printed: `code` when the
/// printing worked or the reader went away, else status 1 with the error.
pub(crate) fn finish(printed: std::io::Result<()>, code: ExitCode) -> ExitCode {
    match printed {
        Ok(()) => code,
        Err(error) if error.kind() == ErrorKind::BrokenPipe => code,
        Err(error) => {
            eprintln!("porter: cannot write to standard output: {error}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_broken_pipe_counts_as_the_reader_going_away() {
        let pipe = anyhow::Error::from(std::io::Error::from(ErrorKind::BrokenPipe))
            .context("cannot write to standard output");
        assert!(closed(&pipe));
        let full = anyhow::Error::from(std::io::Error::from(ErrorKind::StorageFull));
        assert!(!closed(&full));
        assert_eq!(failed(&pipe), ExitCode::SUCCESS);
        assert_eq!(
            finish(
                Err(std::io::Error::from(ErrorKind::BrokenPipe)),
                ExitCode::from(2)
            ),
            ExitCode::from(2)
        );
    }
}
