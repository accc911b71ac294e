//! PNG, GIF, WebP, BMP and TIFF through the `image` crate's decoders, with
//! its `Limits` set before a pixel is decoded.

use std::io::Cursor;

use image::codecs::bmp::BmpDecoder;
use image::codecs::gif::GifDecoder;
use image::codecs::png::PngDecoder;
use image::codecs::tiff::TiffDecoder;
use image::codecs::webp::WebPDecoder;
use image::metadata::Orientation;
use image::{DynamicImage, ImageDecoder, ImageError, Limits};

use super::container::{self, Sequence};
use super::format::Format;
use super::pixels::{Pixels, exif_orientation, guarded};
use crate::bounds::{Cancel, Failure};

/// Bytes the decoders may allocate per pixel of the limit: enough for
/// 16-bit RGBA, the widest layout these formats decode to, apart from
/// float TIFF; a bound on their working buffers.
const BYTES_PER_PIXEL: u64 = 8;

/// The decoded picture's budget, in bytes per pixel of the limit: 8-bit
/// RGBA. A 16-bit or float picture takes more bytes a pixel, so it gets
/// fewer pixels: the budget is what the memory holds, not a pixel count
/// (a 7000×7000 16-bit RGBA PNG of 379 KiB decodes to 392 MB).
const BUDGET_BYTES_PER_PIXEL: u64 = 4;

/// `Other` is a non-JPEG image whose header has been read.
pub(super) struct Other<'a> {
    decoder: Box<dyn ImageDecoder + 'a>,
    /// What the EXIF data (PNG eXIf, WebP EXIF chunk, TIFF tag) says.
    pub orientation: Orientation,
    /// Whether it holds further frames or pages.
    pub sequence: Sequence,
    /// Whether it is stored lossily (lossy WebP), which makes JPEG the
    /// fitting re-encoding.
    pub lossy: bool,
    /// Whether it is marked animated (an animated WebP of one frame is
    /// still converted, since not every client decodes that container).
    pub animated: bool,
    max_pixels: u64,
}

impl<'a> Other<'a> {
    /// Reads the header. Only headers are parsed here, no pixel buffer is
    /// allocated; the caller checks the size before calling [`Other::decode`].
    pub(super) fn open(
        bytes: &'a [u8],
        format: Format,
        max_pixels: u64,
        cancel: &Cancel,
    ) -> Result<Self, Failure> {
        let reader = Cursor::new(bytes);
        let mut sequence = Sequence::Single;
        let mut lossy = false;
        let mut animated = false;
        let decoder: Box<dyn ImageDecoder + 'a> = match format {
            Format::Png => {
                sequence = container::png_sequence(bytes);
                animated = sequence == Sequence::Animation;
                Box::new(decoded(
                    PngDecoder::with_limits(reader, limits(max_pixels)),
                    format,
                )?)
            }
            Format::Gif => {
                sequence = container::gif_sequence(bytes, cancel)?;
                animated = sequence == Sequence::Animation;
                Box::new(decoded(GifDecoder::new(reader), format)?)
            }
            Format::Webp => {
                let facts = container::webp_facts(bytes);
                sequence = facts.sequence;
                lossy = facts.lossy;
                animated = facts.animated;
                Box::new(decoded(WebPDecoder::new(reader), format)?)
            }
            Format::Bmp => Box::new(decoded(BmpDecoder::new(reader), format)?),
            Format::Tiff => {
                sequence = container::tiff_sequence(bytes);
                Box::new(decoded(TiffDecoder::new(reader), format)?)
            }
            Format::Jpeg => {
                return Err(Failure::unreadable(
                    "its JPEG data was sent to the wrong decoder",
                ));
            }
        };
        let mut other = Self {
            decoder,
            orientation: Orientation::NoTransforms,
            sequence,
            lossy,
            animated,
            max_pixels,
        };
        other.orientation = match format {
            Format::Png | Format::Webp => other
                .decoder
                .exif_metadata()
                .ok()
                .flatten()
                .map_or(Orientation::NoTransforms, |exif| exif_orientation(&exif)),
            Format::Tiff => other
                .decoder
                .orientation()
                .unwrap_or(Orientation::NoTransforms),
            Format::Gif | Format::Bmp | Format::Jpeg => Orientation::NoTransforms,
        };
        Ok(other)
    }

    /// Width and height as stored (for a GIF, its logical screen).
    pub(super) fn size(&self) -> (u32, u32) {
        self.decoder.dimensions()
    }

    /// Decodes the first frame or page into 8-bit pixels, under limits on
    /// width, height and memory.
    pub(super) fn decode(mut self, format: Format) -> Result<Pixels, Failure> {
        let too_big = |error: ImageError| reason(error, format);
        self.decoder
            .set_limits(limits(self.max_pixels))
            .map_err(too_big)?;
        let needed = self.decoder.total_bytes();
        let budget = self.max_pixels.saturating_mul(BUDGET_BYTES_PER_PIXEL);
        if needed > budget {
            return Err(Failure::unreadable(format!(
                "its pixels would take {} decoded, more than the {} an image decoded to scale may take",
                crate::describe::human_size(needed),
                crate::describe::human_size(budget)
            )));
        }
        let image = guarded(|| {
            DynamicImage::from_decoder(self.decoder).map_err(|error| reason(error, format))
        })?;
        Ok(Pixels::from_dynamic(image))
    }
}

/// The `image` crate limits for a decode of at most `max_pixels`: neither
/// side longer than that many pixels, and at most 8 bytes a pixel.
fn limits(max_pixels: u64) -> Limits {
    let side = u32::try_from(max_pixels).unwrap_or(u32::MAX);
    let mut limits = Limits::default();
    limits.max_image_width = Some(side);
    limits.max_image_height = Some(side);
    limits.max_alloc = Some(max_pixels.saturating_mul(BYTES_PER_PIXEL));
    limits
}

/// A constructed decoder, or the reason its header could not be read.
fn decoded<D>(result: Result<D, ImageError>, format: Format) -> Result<D, Failure> {
    result.map_err(|error| reason(error, format))
}

/// The reason an image could not be read, completing "It is not shown
/// because …".
fn reason(error: ImageError, format: Format) -> Failure {
    let kind = format.label();
    match error {
        ImageError::Limits(limit) => Failure::unreadable(format!(
            "it is larger than an image decoded to scale may be ({limit})"
        )),
        ImageError::Unsupported(unsupported) => Failure::unreadable(format!(
            "it uses a {kind} feature that cannot be decoded here ({unsupported})"
        )),
        other => Failure::unreadable(format!("it could not be decoded as a {kind} ({other})")),
    }
}
