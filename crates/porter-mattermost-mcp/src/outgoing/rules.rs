//! The rules a post's files are held to, and the refusal that says which
//! one a file broke: the limits (how many files, how large), and the kinds
//! of refusal with the sentence the model reads.

use std::fmt;

use porter_paths::{PathError, shown};

/// `MAX_FILES` is the most files one post carries.
pub const MAX_FILES: usize = 10;
/// `MAX_PATH_BYTES` is the most a file read from a path may be (100 MiB).
pub const MAX_PATH_BYTES: u64 = 100 * 1024 * 1024;
/// `MAX_WRITTEN_BYTES` is the most text the model may write as one file
/// (1 MiB): a tool call's arguments are no place for more.
pub const MAX_WRITTEN_BYTES: u64 = 1024 * 1024;

/// `OutgoingLimits` are the limits on a post's files. The default holds
/// the spec's: 10 files, 100 MiB from a path, 1 MiB written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingLimits {
    /// The most files one post carries.
    pub max_files: usize,
    /// The most bytes of a file read from a path.
    pub max_path_bytes: u64,
    /// The most bytes of a file the model wrote.
    pub max_written_bytes: u64,
}

impl Default for OutgoingLimits {
    fn default() -> Self {
        Self {
            max_files: MAX_FILES,
            max_path_bytes: MAX_PATH_BYTES,
            max_written_bytes: MAX_WRITTEN_BYTES,
        }
    }
}

/// `RefusalKind` says which rule refused a post's files, for a caller that
/// answers some differently (a file changed after the question).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalKind {
    /// A `{path}` file on a server reached over HTTP.
    PathNotLocal,
    /// More files than a post carries.
    TooManyFiles,
    /// A path that may not be read (another machine, a device, a system
    /// tree, relative, an invisible character, not a regular file, gone).
    Path,
    /// A file where credentials live.
    Credential,
    /// Bytes holding a private key or the server's token.
    Secret,
    /// A file over its size limit.
    TooLarge,
    /// Written content that is not text (a NUL, or base64 of a binary).
    NotText,
    /// A written file's name that is empty or holds invisible characters.
    Name,
    /// A file that could not be read.
    Unreadable,
    /// A file (or the destination) that changed after the question.
    Changed,
}

/// `Refusal` is why a post's files were refused. Its `Display` is a
/// sentence for the model: what was refused, why, what to do next, and that
/// nothing was posted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{sentence}")]
pub struct Refusal {
    /// Which rule refused.
    pub kind: RefusalKind,
    /// The file concerned, as given or as named in the question.
    pub file: Option<String>,
    sentence: String,
}

/// Whether the person was asked yet, which changes what a refusal says
/// happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    Prepare,
    Reread,
}

impl Refusal {
    pub(super) fn new(
        kind: RefusalKind,
        file: Option<String>,
        why: impl fmt::Display,
        stage: Stage,
    ) -> Self {
        let after = match stage {
            Stage::Prepare => "Nothing was posted, and the person was not asked.",
            Stage::Reread => "Nothing was uploaded or posted.",
        };
        Self {
            kind,
            file,
            sentence: format!("{why} {after}"),
        }
    }

    pub(super) fn from_path_error(error: &PathError, raw: &str, stage: Stage) -> Self {
        let kind = match error {
            PathError::Io { .. } => RefusalKind::Unreadable,
            PathError::TooLarge { .. } => RefusalKind::TooLarge,
            PathError::Changed { .. } => RefusalKind::Changed,
            _ => RefusalKind::Path,
        };
        let why = match (stage, error) {
            (Stage::Reread, PathError::NotFound { .. }) => format!(
                "{} is gone since the person was asked; call again if the post should still carry it.",
                shown(raw)
            ),
            _ => format!("{}.", error.to_string().trim_end_matches('.')),
        };
        Self::new(kind, Some(shown(raw)), why, stage)
    }
}
