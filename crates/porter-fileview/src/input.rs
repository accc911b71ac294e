//! What a reader is given (a file's bytes and what its source says of it)
//! and the few requests a view cannot answer.

/// `FileInput` is one file to view: its bytes, and what its source says of
/// it.
#[derive(Debug, Clone, Copy)]
pub struct FileInput<'a> {
    /// The whole file (at most [`Options::max_file_bytes`](crate::Options::max_file_bytes); a caller with a
    /// bigger file calls [`describe_too_large`](crate::describe_too_large) instead of reading it).
    pub bytes: &'a [u8],
    /// The file's name, shown in every result and used as a type hint.
    pub name: &'a str,
    /// The media type its source declared, which may be absent or wrong.
    pub declared_type: Option<&'a str>,
    /// Where a person can open the file, added to descriptions.
    pub link: Option<&'a str>,
}

impl<'a> FileInput<'a> {
    /// A file with a name and nothing declared.
    #[must_use]
    pub fn new(bytes: &'a [u8], name: &'a str) -> Self {
        Self {
            bytes,
            name,
            declared_type: None,
            link: None,
        }
    }
}

/// `ViewError` is a request the view cannot answer. Everything about the
/// file itself (broken, hostile, unknown) is answered with a description
/// instead; these are about the window asked for, or a cancelled request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ViewError {
    /// The window starts past the last line.
    #[error(
        "{name} has {total_lines} lines, so start_line={start_line} is past its end; pass a start_line from 1 to {}",
        (*total_lines).max(1)
    )]
    PastEnd {
        /// The file's name as shown.
        name: String,
        /// The line asked for.
        start_line: u64,
        /// Lines in the file's text.
        total_lines: u64,
    },
    /// `start_line` or `line_count` was 0.
    #[error("{field} counts from 1, so 0 asks for nothing; pass 1 or more")]
    BadWindow {
        /// The field that was 0.
        field: &'static str,
    },
    /// The caller raised the [`Cancel`](crate::Cancel) flag.
    #[error("the request was cancelled before the file was shown")]
    Cancelled,
    /// [`to_markdown`](crate::to_markdown) has no reader for this kind of file.
    #[error(
        "{name} is {what}, which cannot be turned into Markdown; extract reads DOCX, XLSX/XLS/ODS, PPTX, HTML, PDF, plain text, Markdown, the text in images (OCR) and the speech in recordings (with the speech model installed)"
    )]
    NotExtractable {
        /// The file's name as shown.
        name: String,
        /// What the file is, with its article ("an image").
        what: String,
    },
    /// [`to_markdown`](crate::to_markdown) reads this kind of file, but not this file.
    #[error("{name} cannot be turned into Markdown because {reason}")]
    Unreadable {
        /// The file's name as shown.
        name: String,
        /// Why, completing "because …".
        reason: String,
    },
}
