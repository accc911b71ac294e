//! A pre-scan of a PDF's nesting before any parser sees it. pdf_oxide
//! parses arrays and dictionaries recursively, with no depth limit, so a
//! file of arrays nested 100,000 deep overflows the stack, which ends the
//! process. This walk counts `[`/`]` and `<<`/`>>` outside strings,
//! comments and stream data, in one pass without allocating, and refuses a
//! file nested deeper than [`PDF_DEPTH`] before the parser runs. (Objects
//! inside compressed object streams are not seen here; the worker process
//! contains what gets past.)

use crate::bounds::Failure;

/// `PDF_DEPTH` is the deepest nesting of arrays and dictionaries a PDF may
/// have; real files stay under a dozen.
pub(crate) const PDF_DEPTH: usize = 256;

/// Refuses a PDF whose arrays and dictionaries nest deeper than `limit`.
pub(crate) fn check_pdf(bytes: &[u8], limit: usize) -> Result<(), Failure> {
    let mut depth = 0usize;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'%' => {
                at = memchr::memchr2(b'\n', b'\r', &bytes[at..]).map_or(bytes.len(), |n| at + n);
            }
            b'(' => at = string_end(bytes, at),
            b'<' if bytes.get(at + 1) == Some(&b'<') => {
                depth += 1;
                at += 2;
            }
            b'<' => {
                at = memchr::memchr(b'>', &bytes[at..]).map_or(bytes.len(), |n| at + n + 1);
            }
            b'>' if bytes.get(at + 1) == Some(&b'>') => {
                depth = depth.saturating_sub(1);
                at += 2;
            }
            b'[' => {
                depth += 1;
                at += 1;
            }
            b']' => {
                depth = depth.saturating_sub(1);
                at += 1;
            }
            b's' if starts_stream(bytes, at) => at = stream_end(bytes, at),
            _ => at += 1,
        }
        if depth > limit {
            return Err(Failure::unreadable(format!(
                "its objects are nested deeper than {limit} levels"
            )));
        }
    }
    Ok(())
}

/// The end of the literal string opened at `at`: parentheses nest, and a
/// backslash escapes the next byte.
pub(crate) fn string_end(bytes: &[u8], mut at: usize) -> usize {
    let mut open = 0usize;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 1,
            b'(' => open += 1,
            b')' => {
                open -= 1;
                if open == 0 {
                    return at + 1;
                }
            }
            _ => {}
        }
        at += 1;
    }
    bytes.len()
}

/// Whether the keyword `stream` starts at `at`, after a delimiter or
/// whitespace and before an end of line.
fn starts_stream(bytes: &[u8], at: usize) -> bool {
    bytes[at..].starts_with(b"stream")
        && matches!(bytes.get(at + 6), Some(b'\r' | b'\n'))
        && (at == 0 || matches!(bytes[at - 1], b'>' | b' ' | b'\n' | b'\r' | b'\t'))
}

/// Where the data of the stream whose keyword starts at `at` ends.
fn stream_end(bytes: &[u8], at: usize) -> usize {
    memchr::memmem::find(&bytes[at + 6..], b"endstream").map_or(bytes.len(), |n| at + 6 + n + 9)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(depth: usize, open: &str, close: &str) -> Vec<u8> {
        format!(
            "%PDF-1.4\n1 0 obj\n<< /Deep {}1{} >>\nendobj\n",
            open.repeat(depth),
            close.repeat(depth)
        )
        .into_bytes()
    }

    #[test]
    fn nesting_past_the_limit_is_refused_and_up_to_it_passes() {
        for (open, close) in [("[", "]"), ("<< /A ", " >>")] {
            // The object's own dictionary is one level.
            assert_eq!(check_pdf(&nested(9, open, close), 10), Ok(()), "{open}");
            assert_eq!(
                check_pdf(&nested(10, open, close), 10),
                Err(Failure::unreadable(
                    "its objects are nested deeper than 10 levels"
                )),
                "{open}"
            );
            assert!(check_pdf(&nested(100_000, open, close), PDF_DEPTH).is_err());
        }
    }

    #[test]
    fn brackets_in_strings_comments_hex_and_streams_do_not_count() {
        let deep = "[".repeat(50);
        let text = format!(
            "%PDF-1.4 {deep}\n1 0 obj\n<< /T ({deep} \\( nested (a{deep}) ) /H <5B5B> /Length 60 >>\nstream\n{deep}<<<<\nendstream\nendobj\n"
        );
        assert_eq!(check_pdf(text.as_bytes(), 10), Ok(()));
    }

    /// A one-page PDF whose page dictionary holds arrays nested `depth`
    /// deep, with a correct xref table.
    fn deep_page(depth: usize) -> Vec<u8> {
        let objects = [
            "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Deep {}1{} >>",
                "[".repeat(depth),
                "]".repeat(depth)
            ),
        ];
        let mut out = b"%PDF-1.4\n".to_vec();
        let mut offsets = Vec::new();
        for (at, body) in objects.iter().enumerate() {
            offsets.push(out.len());
            out.extend(format!("{} 0 obj\n{body}\nendobj\n", at + 1).into_bytes());
        }
        let xref = out.len();
        out.extend(b"xref\n0 4\n0000000000 65535 f \n");
        for offset in offsets {
            out.extend(format!("{offset:010} 00000 n \n").into_bytes());
        }
        out.extend(
            format!("trailer\n<< /Size 4 /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n").into_bytes(),
        );
        out
    }

    #[test]
    fn a_pdf_nested_100000_deep_is_described_in_process_instead_of_overflowing_the_stack() {
        use crate::{Cancel, FileInput, Options, ViewError, WindowRequest};
        let bytes = deep_page(100_000);
        let input = FileInput::new(&bytes, "deep.pdf");
        let shown = crate::view(
            &input,
            &WindowRequest::default(),
            &Options::default(),
            &Cancel::new(),
        )
        .expect("a view");
        let reason = shown.structured.reason.unwrap_or_default();
        assert!(reason.contains("nested deeper than 256 levels"), "{reason}");
        match crate::to_markdown(&input, &Options::default(), &Cancel::new()) {
            Err(ViewError::Unreadable { reason, .. }) => {
                assert!(reason.contains("nested deeper than 256 levels"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    }
}
