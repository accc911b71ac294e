//! A fast decoder for the JPEGs that cameras and most programs write.
//!
//! It decodes baseline JPEGs (SOF0 and SOF1) with 8-bit samples: grey, or
//! YCbCr with chroma at full size, half width, half height or both (4:4:4,
//! 4:2:2, 4:2:0, 4:4:0), in one interleaved scan, with or without restart
//! markers. It decodes straight at 1/8, 1/4, 1/2 or full scale: a reduced
//! scale transforms only the frequencies the smaller picture can show, and
//! 1/8 needs no transform at all. Chroma is brought to full size by the
//! centred triangle filter (3/4 and 1/4 weights, across and down) at the
//! output scale.
//!
//! It refuses everything else: progressive, lossless, hierarchical and
//! arithmetic-coded files, 12-bit samples, RGB and CMYK files, other
//! subsampling, a scan of only some components, and DNL markers. A refusal
//! means "use a general decoder": this crate exists to make the common case
//! fast (a 24 MP photo shown at 3000 pixels decodes in about half the time
//! `jpeg-decoder` takes), not to read every file. Data that ends before the
//! last block is an error, never grey filler.
//!
//! It never panics, whatever the bytes; its work is bounded by the file's
//! size (every block takes at least two bits of data, checked before
//! decoding), and it holds the output and a few rows of blocks in memory.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let bytes = std::fs::read("photo.jpg")?;
//! let image = porter_jpeg::decode_scaled(&bytes, 2048, 1365, 50_000_000, &|| false)?;
//! println!("{} x {}, {} bytes a pixel", image.width, image.height, image.channels);
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod decode;
mod header;
mod huffman;
mod idct;
mod types;

pub use types::{Error, Image};

/// Decodes a baseline JPEG at the smallest DCT scale (8/8, 4/8, 2/8, 1/8)
/// whose output is at least `min_width` x `min_height` (8/8 when even that
/// is smaller). The output of a w x h image at scale s/8 is
/// ceil(w s/8) x ceil(h s/8).
///
/// It refuses with `TooLarge`, before allocating, an output of more than
/// `max_pixels` pixels. `cancelled` is asked about once per row of MCUs;
/// when it answers true, decoding stops with `Cancelled`.
pub fn decode_scaled(
    bytes: &[u8],
    min_width: u32,
    min_height: u32,
    max_pixels: u64,
    cancelled: &dyn Fn() -> bool,
) -> Result<Image, Error> {
    let header = header::read(bytes)?;
    let (width, height) = (
        u64::from(header.frame.width),
        u64::from(header.frame.height),
    );
    let block = [1u64, 2, 4, 8]
        .into_iter()
        .find(|&s| {
            (width * s).div_ceil(8) >= u64::from(min_width)
                && (height * s).div_ceil(8) >= u64::from(min_height)
        })
        .unwrap_or(8);
    let pixels = (width * block).div_ceil(8) * (height * block).div_ceil(8);
    if pixels > max_pixels {
        return Err(Error::TooLarge);
    }
    let geometry = decode::Geometry::new(&header, block as usize);
    // Every block takes at least two bits (a DC code and an AC code), so a
    // file too short for its declared size is refused before any work.
    let data_bits = (bytes.len() - header.data_start.min(bytes.len())) as u64 * 8;
    if geometry.blocks(header.frame.components.len()) as u64 * 2 > data_bits {
        return Err(Error::Corrupt("the data is too short for the image's size"));
    }
    decode::decode(bytes, &header, &geometry, cancelled)
}
