//! Encoding the finished pixels as JPEG or PNG, shrinking until the bytes
//! fit the limit.

use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::{ExtendedColorType, ImageEncoder};
use jpeg_encoder::{ChromaSubsamplingMethod, ColorType, Encoder};

use super::pixels::{Layout, Pixels};
use crate::bounds::{Cancel, Failure};
use crate::describe::human_size;

/// `JPEG_QUALITY` is the quality a re-encoded JPEG is written at: high
/// enough that text and edges stay clean, low enough that a 2048-pixel photo
/// takes well under the byte limit.
const JPEG_QUALITY: u8 = 85;

/// `MAX_ATTEMPTS` bounds the encode-and-shrink loop; each attempt shrinks by
/// at least a quarter, so this reaches a hundredth of the area and beyond.
const MAX_ATTEMPTS: usize = 12;

/// `SHRINK_STEP` is the most one attempt keeps of each side (0.75× per step).
const SHRINK_STEP: f64 = 0.75;

/// `Encoding` is the format a picture is re-encoded in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Encoding {
    /// Lossy, for photos without transparency.
    Jpeg,
    /// Lossless, for everything else (and keeps alpha).
    Png,
}

impl Encoding {
    /// Its media type.
    pub(super) fn mime_type(self) -> &'static str {
        match self {
            Self::Jpeg => "image/jpeg",
            Self::Png => "image/png",
        }
    }

    /// Its name in notes.
    pub(super) fn label(self) -> &'static str {
        match self {
            Self::Jpeg => "JPEG",
            Self::Png => "PNG",
        }
    }
}

/// `Fitted` is the encoded picture that fits the byte limit.
#[derive(Debug)]
pub(super) struct Fitted {
    /// The encoded bytes.
    pub bytes: Vec<u8>,
    /// Their format.
    pub encoding: Encoding,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Whether the picture had to be made smaller than the edge limit to fit
    /// the byte limit.
    pub shrunk_for_bytes: bool,
}

/// Encodes `picture` as `encoding` and, while the result is over `max_bytes`,
/// switches an opaque PNG to JPEG, then shrinks the picture (at least 0.75×
/// a side per step, more when the overshoot is large) for a bounded number
/// of attempts.
pub(super) fn fit(
    picture: &Pixels,
    mut encoding: Encoding,
    max_bytes: usize,
    cancel: &Cancel,
) -> Result<Fitted, Failure> {
    let (mut width, mut height) = (picture.width, picture.height);
    let mut last = (0usize, width, height);
    for _ in 0..MAX_ATTEMPTS {
        cancel.check()?;
        let scaled;
        let current = if (width, height) == (picture.width, picture.height) {
            picture
        } else {
            scaled = picture.resized(width, height)?;
            cancel.check()?;
            &scaled
        };
        let bytes = encode(current, encoding)?;
        if bytes.len() <= max_bytes {
            return Ok(Fitted {
                bytes,
                encoding,
                width,
                height,
                shrunk_for_bytes: (width, height) != (picture.width, picture.height),
            });
        }
        last = (bytes.len(), width, height);
        if encoding == Encoding::Png && current.is_opaque() {
            encoding = Encoding::Jpeg;
            continue;
        }
        if width == 1 && height == 1 {
            break;
        }
        let factor = (max_bytes as f64 / bytes.len() as f64).sqrt() * 0.95;
        let factor = factor.clamp(0.1, SHRINK_STEP);
        let shrink = |side: u32| ((f64::from(side) * factor).round() as u32).max(1);
        (width, height) = (shrink(width), shrink(height));
    }
    let (size, width, height) = last;
    Err(Failure::unreadable(format!(
        "it could not be made small enough: even at {width}×{height} pixels it took {}, more \
         than the {} an image is returned in",
        human_size(size as u64),
        human_size(max_bytes as u64)
    )))
}

/// `picture` encoded as `encoding`.
pub(super) fn encode(picture: &Pixels, encoding: Encoding) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::new();
    match encoding {
        Encoding::Jpeg => {
            let color = match picture.layout {
                Layout::Luma => ColorType::Luma,
                Layout::Rgb => ColorType::Rgb,
                Layout::Rgba => ColorType::Rgba,
            };
            let too_wide = || Failure::unreadable("it is too wide to be written as a JPEG");
            let width = u16::try_from(picture.width).map_err(|_| too_wide())?;
            let height = u16::try_from(picture.height).map_err(|_| too_wide())?;
            let mut encoder = Encoder::new(&mut out, JPEG_QUALITY);
            // Averaging each 2×2 block for the halved colour planes, as
            // libjpeg does, keeps coloured edges and text from fringing.
            encoder.set_chroma_subsampling_method(ChromaSubsamplingMethod::Average);
            encoder
                .encode(&picture.data, width, height, color)
                .map_err(|error| {
                    Failure::unreadable(format!("it could not be written as a JPEG ({error})"))
                })?;
        }
        Encoding::Png => {
            let color = match picture.layout {
                Layout::Luma => ExtendedColorType::L8,
                Layout::Rgb => ExtendedColorType::Rgb8,
                Layout::Rgba => ExtendedColorType::Rgba8,
            };
            PngEncoder::new_with_quality(&mut out, CompressionType::Default, FilterType::Adaptive)
                .write_image(&picture.data, picture.width, picture.height, color)
                .map_err(|error| {
                    Failure::unreadable(format!("it could not be written as a PNG ({error})"))
                })?;
        }
    }
    Ok(out)
}
