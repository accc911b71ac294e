//! The picture OCR reads: a page as 8-bit grey pixels.

/// A page as 8-bit grey pixels, row by row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Gray {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<u8>,
}
