//! Standard output as Unix tools treat it: when the reader goes away
//! (`porter view --json big.jpg | head -c 100`), the command stops quietly
//! with status 0 instead of reporting a broken pipe. Rust ignores SIGPIPE,
//! so every write to standard output goes through here rather than
//! `println!`, which would panic.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{ErrorKind, Write as _};
use std::process::ExitCode;

/// `terminal_safe` is `text` as it may reach a terminal: C0 and C1 control
/// characters (but tab and newline), DEL, and the bidi marks, embeddings,
/// overrides and isolates become visible escapes (`\u{1b}`, `\r`), so that
/// a file's text can neither drive the terminal (clear it, retitle it,
/// move the cursor) nor reorder the line it is printed in. `--json` output
/// carries the text as it is.
pub(crate) fn terminal_safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(unsafe_on_terminal) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 64);
    for c in text.chars() {
        match c {
            '\r' => out.push_str("\\r"),
            c if unsafe_on_terminal(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn unsafe_on_terminal(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

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
    fn controls_and_bidi_overrides_become_escapes_and_tab_and_newline_stay() {
        assert!(matches!(terminal_safe("plain\ttext\n"), Cow::Borrowed(_)));
        assert_eq!(
            terminal_safe("a\u{1b}]0;title\u{7}b\r\n\u{9b}\u{7f}\u{202e}\u{2067}c"),
            "a\\u{1b}]0;title\\u{7}b\\r\n\\u{9b}\\u{7f}\\u{202e}\\u{2067}c"
        );
    }

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
