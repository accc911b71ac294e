//! Decoded pixels and what is done to them: decoding under a guard against
//! a decoder's panic, scaling with a good filter and turning upright from
//! the EXIF orientation.

use std::panic::{self, AssertUnwindSafe};

use image::DynamicImage;
use image::metadata::Orientation;

use crate::bounds::Failure;

/// `Layout` is how a pixel is stored: 8 bits per channel, grey, RGB, or RGB
/// with straight (not premultiplied) alpha. Every decoded image is brought
/// to one of these, which both encoders and the resizer take as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Layout {
    /// One grey channel.
    Luma,
    /// Red, green, blue.
    Rgb,
    /// Red, green, blue, alpha.
    Rgba,
}

impl Layout {
    /// Bytes per pixel.
    pub(super) fn channels(self) -> usize {
        match self {
            Self::Luma => 1,
            Self::Rgb => 3,
            Self::Rgba => 4,
        }
    }
}

/// The grey of an RGB pixel, by Rec. 601's weights in 16-bit fixed point.
fn luma(r: u8, g: u8, b: u8) -> u8 {
    ((19_595 * u32::from(r) + 38_470 * u32::from(g) + 7_471 * u32::from(b) + 32_768) >> 16) as u8
}

/// `Pixels` is a decoded image: rows top to bottom, no padding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Pixels {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// How each pixel is stored.
    pub layout: Layout,
    /// `width * height * layout.channels()` bytes.
    pub data: Vec<u8>,
}

impl Pixels {
    /// Brings any decoded image to 8-bit grey, RGB or RGBA. An alpha channel
    /// that is opaque everywhere is dropped, so that an opaque picture saved
    /// with alpha can still become a JPEG.
    pub(super) fn from_dynamic(image: DynamicImage) -> Self {
        let (width, height) = (image.width(), image.height());
        let color = image.color();
        if color.has_alpha() {
            let rgba = image.into_rgba8().into_raw();
            if !rgba.chunks_exact(4).all(|pixel| pixel[3] == u8::MAX) {
                return Self {
                    width,
                    height,
                    layout: Layout::Rgba,
                    data: rgba,
                };
            }
            let (layout, data) = if color.has_color() {
                let data = rgba
                    .chunks_exact(4)
                    .flat_map(|pixel| [pixel[0], pixel[1], pixel[2]])
                    .collect();
                (Layout::Rgb, data)
            } else {
                (
                    Layout::Luma,
                    rgba.chunks_exact(4).map(|pixel| pixel[0]).collect(),
                )
            };
            return Self {
                width,
                height,
                layout,
                data,
            };
        }
        if color.has_color() {
            Self {
                width,
                height,
                layout: Layout::Rgb,
                data: image.into_rgb8().into_raw(),
            }
        } else {
            Self {
                width,
                height,
                layout: Layout::Luma,
                data: image.into_luma8().into_raw(),
            }
        }
    }

    /// These pixels in grey (Rec. 601 luma), a transparent pixel as if on
    /// white paper.
    pub(super) fn grey_pixels(self) -> Self {
        if self.layout == Layout::Luma {
            return self;
        }
        Self {
            width: self.width,
            height: self.height,
            layout: Layout::Luma,
            data: self.grey_data(),
        }
    }

    /// A grey copy of these pixels, as [`Self::grey_pixels`] makes it.
    pub(super) fn grey(&self) -> image::GrayImage {
        image::GrayImage::from_raw(self.width, self.height, self.grey_data())
            .unwrap_or_else(|| image::GrayImage::new(self.width, self.height))
    }

    fn grey_data(&self) -> Vec<u8> {
        match self.layout {
            Layout::Luma => self.data.clone(),
            Layout::Rgb => self
                .data
                .chunks_exact(3)
                .map(|p| luma(p[0], p[1], p[2]))
                .collect(),
            Layout::Rgba => self
                .data
                .chunks_exact(4)
                .map(|p| {
                    let ink = u32::from(luma(p[0], p[1], p[2]));
                    let alpha = u32::from(p[3]);
                    ((ink * alpha + 255 * (255 - alpha) + 127) / 255) as u8
                })
                .collect(),
        }
    }

    /// Whether every pixel is fully opaque (only an RGBA image can be less).
    pub(super) fn is_opaque(&self) -> bool {
        self.layout != Layout::Rgba
    }

    /// This image scaled to `width` × `height` with a Lanczos3 filter (alpha
    /// is premultiplied while filtering, so transparent pixels do not bleed
    /// their colour into their neighbours).
    pub(super) fn resized(&self, width: u32, height: u32) -> Result<Self, Failure> {
        if (width, height) == (self.width, self.height) {
            return Ok(self.clone());
        }
        let data = porter_pixels::resize(
            &self.data,
            (self.width, self.height),
            self.layout.channels(),
            (width, height),
        )
        .ok_or_else(|| {
            Failure::unreadable(format!(
                "it could not be scaled from {}×{} to {width}×{height}",
                self.width, self.height
            ))
        })?;
        Ok(Self {
            width,
            height,
            layout: self.layout,
            data,
        })
    }

    /// This image at `width` × `height`, itself when it already is that size.
    pub(super) fn into_size(self, width: u32, height: u32) -> Result<Self, Failure> {
        if (width, height) == (self.width, self.height) {
            Ok(self)
        } else {
            self.resized(width, height)
        }
    }

    /// This image turned as the EXIF `orientation` says, so that it shows
    /// upright. Orientations 5 to 8 swap width and height.
    pub(super) fn oriented(self, orientation: Orientation) -> Self {
        if orientation == Orientation::NoTransforms {
            return self;
        }
        let (width, height) = if swaps_sides(orientation) {
            (self.height, self.width)
        } else {
            (self.width, self.height)
        };
        let data = match self.layout {
            Layout::Luma => turn::<1>(&self, orientation, width),
            Layout::Rgb => turn::<3>(&self, orientation, width),
            Layout::Rgba => turn::<4>(&self, orientation, width),
        };
        Self {
            width,
            height,
            layout: self.layout,
            data,
        }
    }
}

/// The side of the square tiles an image is turned in.
const TILE: usize = 64;

/// Whether `orientation` turns the picture a quarter, so that its width
/// and height trade places.
pub(super) fn swaps_sides(orientation: Orientation) -> bool {
    matches!(
        orientation,
        Orientation::Rotate90
            | Orientation::Rotate270
            | Orientation::Rotate90FlipH
            | Orientation::Rotate270FlipH
    )
}

/// The pixels of `image` rearranged for `orientation`, in an image `width`
/// wide. Every orientation maps an output pixel to a stored one along
/// straight lines, so each output row is read as a start and a fixed step
/// through the stored pixels (steps backwards wrap, as two's complement).
fn turn<const N: usize>(image: &Pixels, orientation: Orientation, width: u32) -> Vec<u8> {
    let (stored_width, stored_height) = (image.width as usize, image.height as usize);
    let (source, _) = image.data.as_chunks::<N>();
    let width = width as usize;
    if width == 0 || source.is_empty() {
        return Vec::new();
    }
    let last_row = (stored_height - 1) * stored_width;
    let last_column = stored_width - 1;
    let back = |step: usize| 0usize.wrapping_sub(step);
    let (start, step_x, step_y) = match orientation {
        Orientation::NoTransforms => (0, 1, stored_width),
        Orientation::FlipHorizontal => (last_column, back(1), stored_width),
        Orientation::Rotate180 => (last_row + last_column, back(1), back(stored_width)),
        Orientation::FlipVertical => (last_row, 1, back(stored_width)),
        Orientation::Rotate90FlipH => (0, stored_width, 1),
        Orientation::Rotate90 => (last_row, back(stored_width), 1),
        Orientation::Rotate270FlipH => (last_row + last_column, back(stored_width), back(1)),
        Orientation::Rotate270 => (last_column, stored_width, back(1)),
    };
    let height = source.len() / width;
    let mut out = vec![[0u8; N]; source.len()];
    // A quarter turn reads the stored pixels down columns; working in tiles
    // keeps those reads within a few cache lines.
    for tile_y in (0..height).step_by(TILE) {
        for tile_x in (0..width).step_by(TILE) {
            let tile_width = TILE.min(width - tile_x);
            for y in tile_y..(tile_y + TILE).min(height) {
                let row = &mut out[y * width + tile_x..][..tile_width];
                let mut at = start
                    .wrapping_add(step_y.wrapping_mul(y))
                    .wrapping_add(step_x.wrapping_mul(tile_x));
                for pixel in row {
                    *pixel = source[at];
                    at = at.wrapping_add(step_x);
                }
            }
        }
    }
    out.into_flattened()
}

/// The size that brings the long edge of `width` × `height` down to `edge`,
/// keeping the aspect ratio; unchanged when it already fits.
pub(super) fn fit_edge(width: u32, height: u32, edge: u32) -> (u32, u32) {
    let edge = edge.max(1);
    let long = width.max(height);
    if long <= edge || long == 0 {
        return (width, height);
    }
    let scale = |side: u32| {
        let scaled = (u64::from(side) * u64::from(edge) + u64::from(long) / 2) / u64::from(long);
        (scaled as u32).clamp(1, edge)
    };
    (scale(width), scale(height))
}

/// The orientation an EXIF block gives (from its TIFF header; a leading
/// `Exif\0\0`, as some PNG writers put it, is skipped). Absent, damaged or
/// out-of-range values mean upright, never an error.
pub(super) fn exif_orientation(exif: &[u8]) -> Orientation {
    let exif = exif.strip_prefix(b"Exif\0\0").unwrap_or(exif);
    Orientation::from_exif_chunk(exif).unwrap_or(Orientation::NoTransforms)
}

/// Runs a third-party decoder so that a panic on a crafted file becomes a
/// reason instead of taking the caller down.
pub(super) fn guarded<T>(decode: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    panic::catch_unwind(AssertUnwindSafe(decode)).unwrap_or_else(|_| {
        Err(Failure::unreadable(
            "its decoder stopped on data it could not handle",
        ))
    })
}
