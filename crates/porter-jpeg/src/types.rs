//! What the decoder gives back: the decoded image, or why there is none.

use std::fmt;

/// `Image` is decoded pixels, row after row without padding: one byte per
/// pixel for grey (`channels` 1), three (R, G, B) for colour (`channels` 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Pixels across, at the decoded scale.
    pub width: u32,
    /// Pixels down, at the decoded scale.
    pub height: u32,
    /// 1 for grey, 3 for RGB.
    pub channels: u8,
    /// `width * height * channels` bytes, top row first.
    pub data: Vec<u8>,
}

/// `Error` is why a file was not decoded. The caller should try a general
/// decoder after `Unsupported` or `Corrupt`, and give up after `TooLarge`
/// or `Cancelled`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// The file uses something this decoder leaves to others.
    Unsupported(&'static str),
    /// The file breaks the format or ends early.
    Corrupt(&'static str),
    /// The decoded image would have more pixels than allowed.
    TooLarge,
    /// The caller's `cancelled` said to stop.
    Cancelled,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unsupported(what) => write!(f, "unsupported JPEG: {what}"),
            Self::Corrupt(what) => write!(f, "corrupt JPEG: {what}"),
            Self::TooLarge => f.write_str("the decoded JPEG would exceed the pixel limit"),
            Self::Cancelled => f.write_str("JPEG decoding was cancelled"),
        }
    }
}

impl std::error::Error for Error {}
