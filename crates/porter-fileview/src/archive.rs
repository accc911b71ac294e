//! Archives, listed and never extracted. (Stub: being written.)

use crate::bounds::{Cancel, Extracted, Failure};
use crate::options::Options;

/// The compression around a tar (or around a single file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compression {
    None,
    Gzip,
    Bzip2,
    Xz,
    Zstd,
}

pub(crate) fn list_zip(
    _bytes: &[u8],
    _options: &Options,
    _cancel: &Cancel,
) -> Result<Extracted, Failure> {
    Err(Failure::unreadable("not yet"))
}

pub(crate) fn list_tar(
    _bytes: &[u8],
    _compression: Compression,
    _options: &Options,
    _cancel: &Cancel,
) -> Result<Extracted, Failure> {
    Err(Failure::unreadable("not yet"))
}

pub(crate) fn wraps_tar(_bytes: &[u8], _compression: Compression) -> bool {
    false
}
