//! The image formats the view reads, and what it says of each.

/// The image formats the view decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// PNG, including animated PNG.
    Png,
    /// JPEG (JFIF or EXIF).
    Jpeg,
    /// GIF, still or animated.
    Gif,
    /// WebP, lossy or lossless, still or animated.
    Webp,
    /// Windows bitmap.
    Bmp,
    /// TIFF, of one page or several.
    Tiff,
}

impl Format {
    /// The format's name in notes and reasons.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::Png => "PNG",
            Self::Jpeg => "JPEG",
            Self::Gif => "GIF",
            Self::Webp => "WebP",
            Self::Bmp => "BMP",
            Self::Tiff => "TIFF",
        }
    }

    /// The media type of the file's own bytes.
    pub(crate) fn mime_type(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Gif => "image/gif",
            Self::Webp => "image/webp",
            Self::Bmp => "image/bmp",
            Self::Tiff => "image/tiff",
        }
    }

    /// Whether clients commonly show this format as it is. BMP and TIFF are
    /// always converted.
    pub(super) fn shown_as_is(self) -> bool {
        matches!(self, Self::Png | Self::Jpeg | Self::Gif | Self::Webp)
    }
}
