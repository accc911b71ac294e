//! Images: upright, scaled, re-encoded to fit. (Stub: being written.)

use crate::bounds::{Cancel, Failure};
use crate::content::ImageRecord;
use crate::options::Options;

/// The image formats the view decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Png,
    Jpeg,
    Gif,
    Webp,
    Bmp,
    Tiff,
}

/// An image ready to return.
pub(crate) struct Picture {
    pub bytes: Vec<u8>,
    pub record: ImageRecord,
    pub note: String,
}

pub(crate) fn picture(
    _bytes: &[u8],
    _format: Format,
    _name: &str,
    _options: &Options,
    _cancel: &Cancel,
) -> Result<Picture, Failure> {
    Err(Failure::unreadable("not yet"))
}
