//! JPEG decoding, scaled in the DCT domain: a 6000×4000 photo meant for
//! 2048 pixels is decoded at half size directly, which skips most of the
//! inverse transform, colour conversion and memory traffic of a full
//! decode. The common JPEG (baseline, grey or YCbCr) goes through
//! `porter-jpeg`, made for that case; anything it leaves (progressive,
//! CMYK, lossless, unusual subsampling, a file it finds damaged) through
//! `jpeg-decoder`, which reads the header in every case. Both refuse a
//! file whose data ends early, where a more lenient decoder would fill in
//! grey.

use std::io;

use image::metadata::Orientation;
use jpeg_decoder::{CodingProcess, Decoder, ImageInfo, PixelFormat};

use super::pixels::{Layout, Pixels, exif_orientation, guarded};
use crate::bounds::{Cancel, Failure};

/// `Jpeg` is a JPEG whose header has been read: its size, pixel format and
/// orientation are known, no pixel has been decoded yet.
pub(super) struct Jpeg<'a> {
    bytes: &'a [u8],
    max_pixels: u64,
    decoder: Decoder<&'a [u8]>,
    info: ImageInfo,
    /// What the EXIF (APP1) segment says, upright when absent or broken.
    pub orientation: Orientation,
}

impl<'a> Jpeg<'a> {
    /// Reads the header up to the frame, refusing to later decode more than
    /// `max_pixels` (the decoder's own buffer limit is set from it).
    pub(super) fn open(bytes: &'a [u8], max_pixels: u64) -> Result<Self, Failure> {
        let mut decoder = Decoder::new(bytes);
        decoder.set_max_decoding_buffer_size(
            usize::try_from(max_pixels.saturating_mul(4)).unwrap_or(usize::MAX),
        );
        guarded(|| decoder.read_info().map_err(reason))?;
        let info = decoder
            .info()
            .ok_or_else(|| Failure::unreadable("its JPEG header holds no image frame"))?;
        let orientation = decoder
            .exif_data()
            .map_or(Orientation::NoTransforms, exif_orientation);
        Ok(Self {
            bytes,
            max_pixels,
            decoder,
            info,
            orientation,
        })
    }

    /// Width and height as stored.
    pub(super) fn size(&self) -> (u32, u32) {
        (u32::from(self.info.width), u32::from(self.info.height))
    }

    /// Whether every client can show these bytes as they are: 8-bit grey or
    /// YCbCr, baseline or progressive. CMYK and lossless JPEGs are converted.
    pub(super) fn passable(&self) -> bool {
        matches!(self.info.pixel_format, PixelFormat::L8 | PixelFormat::RGB24)
            && self.info.coding_process != CodingProcess::Lossless
    }

    /// Whether it is stored in CMYK, which the note mentions when converting.
    pub(super) fn is_cmyk(&self) -> bool {
        self.info.pixel_format == PixelFormat::CMYK32
    }

    /// Decodes the whole entropy-coded stream at 1/8 scale: every coefficient
    /// is read (so a damaged or cut-short file fails here) while the inverse
    /// transform is skipped. This proves the file decodes before it is
    /// passed on as it is.
    pub(super) fn validate(mut self, cancel: &Cancel) -> Result<(), Failure> {
        if self.fast(1, 1, cancel)?.is_some() {
            return Ok(());
        }
        if self.info.coding_process != CodingProcess::Lossless {
            guarded(|| self.decoder.scale(1, 1).map_err(reason))?;
        }
        guarded(|| self.decoder.decode().map_err(reason)).map(drop)
    }

    /// The pixels `porter-jpeg` decodes at the least scale that gives
    /// `width` × `height`, or `None` when the file is one it leaves to
    /// jpeg-decoder (not baseline, or something it does not take) or finds
    /// damaged: jpeg-decoder then decodes it, or says what is wrong.
    fn fast(&self, width: u32, height: u32, cancel: &Cancel) -> Result<Option<Pixels>, Failure> {
        if self.info.coding_process != CodingProcess::DctSequential {
            return Ok(None);
        }
        let cancelled = || cancel.is_cancelled();
        let decoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            porter_jpeg::decode_scaled(self.bytes, width, height, self.max_pixels, &cancelled)
        }));
        match decoded {
            Ok(Ok(image)) => from_fast(image).map(Some),
            Ok(Err(porter_jpeg::Error::Cancelled)) => Err(Failure::Cancelled),
            // A refusal, a damaged file, or (it should never) a panic.
            Ok(Err(_)) | Err(_) => Ok(None),
        }
    }

    /// Decodes at the smallest DCT scale (1/1, 1/2, 1/4, 1/8) whose result is
    /// still at least `width` × `height`, as grey or RGB pixels.
    pub(super) fn decode_at_least(
        mut self,
        width: u32,
        height: u32,
        cancel: &Cancel,
    ) -> Result<Pixels, Failure> {
        if let Some(pixels) = self.fast(width, height, cancel)? {
            return Ok(pixels);
        }
        if self.info.coding_process != CodingProcess::Lossless {
            let (width, height) = (
                u16::try_from(width).unwrap_or(u16::MAX),
                u16::try_from(height).unwrap_or(u16::MAX),
            );
            guarded(|| self.decoder.scale(width, height).map_err(reason))?;
        }
        let data = guarded(|| self.decoder.decode().map_err(reason))?;
        let info = self.decoder.info().unwrap_or(self.info);
        let (width, height) = (u32::from(info.width), u32::from(info.height));
        let pixels = width as usize * height as usize;
        let wrong_size =
            || Failure::unreadable("its decoded JPEG data does not match its declared size");
        let (layout, data) = match info.pixel_format {
            PixelFormat::L8 => (Layout::Luma, data),
            PixelFormat::RGB24 => (Layout::Rgb, data),
            PixelFormat::CMYK32 => (Layout::Rgb, cmyk_to_rgb(&data)),
            PixelFormat::L16 => (Layout::Luma, wide_grey_to_narrow(&data)),
        };
        if data.len() != pixels * layout.channels() {
            return Err(wrong_size());
        }
        Ok(Pixels {
            width,
            height,
            layout,
            data,
        })
    }
}

/// What `porter-jpeg` decoded, as pixels.
fn from_fast(image: porter_jpeg::Image) -> Result<Pixels, Failure> {
    let layout = if image.channels == 1 {
        Layout::Luma
    } else {
        Layout::Rgb
    };
    if image.data.len() != image.width as usize * image.height as usize * layout.channels() {
        return Err(Failure::unreadable(
            "its decoded JPEG data does not match its declared size",
        ));
    }
    Ok(Pixels {
        width: image.width,
        height: image.height,
        layout,
        data: image.data,
    })
}

/// CMYK (as `jpeg-decoder` returns it, 0 meaning no ink) to RGB.
fn cmyk_to_rgb(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() / 4 * 3);
    for pixel in data.chunks_exact(4) {
        let white = 255 - u32::from(pixel[3]);
        for &ink in &pixel[..3] {
            out.push(((255 - u32::from(ink)) * white / 255) as u8);
        }
    }
    out
}

/// 16-bit grey (native byte order, from lossless JPEGs of 9 to 16 bits) to
/// 8-bit, scaled by the brightest sample so that a 12-bit image is not black.
fn wide_grey_to_narrow(data: &[u8]) -> Vec<u8> {
    let samples: Vec<u16> = data
        .chunks_exact(2)
        .map(|pair| u16::from_ne_bytes([pair[0], pair[1]]))
        .collect();
    let brightest = samples.iter().copied().max().unwrap_or(0);
    let bits = 16 - brightest.leading_zeros();
    let shift = bits.saturating_sub(8);
    samples
        .iter()
        .map(|&sample| (sample >> shift) as u8)
        .collect()
}

/// The reason a JPEG could not be read, completing "It is not shown
/// because …".
fn reason(error: jpeg_decoder::Error) -> Failure {
    match error {
        jpeg_decoder::Error::Io(io) if io.kind() == io::ErrorKind::UnexpectedEof => {
            Failure::unreadable("its JPEG data ends early (the file is cut short)")
        }
        jpeg_decoder::Error::Unsupported(feature) => Failure::unreadable(format!(
            "it uses a JPEG feature that cannot be decoded here ({feature:?})"
        )),
        other => Failure::unreadable(format!("it could not be decoded as a JPEG ({other})")),
    }
}
