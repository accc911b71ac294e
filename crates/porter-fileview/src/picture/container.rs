//! Facts read from an image file's container by walking its byte structure,
//! before and without decoding any pixel: a PNG's declared size and
//! animation, whether a GIF has a second frame, what a WebP holds, whether a
//! TIFF has a second page.
//!
//! Every walker reads with bounds-checked slices and gives up quietly on
//! damaged input: the decoder that runs afterwards is the one that reports a
//! damaged file, with its own reason.

use crate::bounds::{Cancel, Failure};

/// The eight bytes every PNG file starts with.
const PNG_SIGNATURE: &[u8; 8] = b"\x89PNG\r\n\x1a\n";

/// How many GIF blocks are walked between two looks at the cancel flag.
const GIF_BLOCKS_PER_CHECK: usize = 4096;

/// `Sequence` says whether a file holds one picture or several, and of which
/// kind, so that the note can say which one is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sequence {
    /// A single picture.
    Single,
    /// An animation of two frames or more (GIF, APNG, animated WebP).
    Animation,
    /// A document of two pages or more (multi-page TIFF).
    Pages,
}

/// The width and height a PNG declares in its IHDR chunk, which by the
/// format's rule comes first. `None` when the signature or IHDR is missing.
pub(super) fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.get(..8)? != PNG_SIGNATURE || bytes.get(12..16)? != b"IHDR" {
        return None;
    }
    Some((be32(bytes, 16)?, be32(bytes, 20)?))
}

/// Whether a PNG is an animation (APNG): an `acTL` chunk before the image
/// data that announces two frames or more.
pub(super) fn png_sequence(bytes: &[u8]) -> Sequence {
    let mut at = 8usize;
    while let (Some(length), Some(kind)) = (be32(bytes, at), bytes.get(at + 4..at + 8)) {
        match kind {
            b"IDAT" | b"IEND" => break,
            b"acTL" => {
                return match be32(bytes, at + 8) {
                    Some(frames) if frames >= 2 => Sequence::Animation,
                    _ => Sequence::Single,
                };
            }
            _ => {}
        }
        let Some(next) = (length as usize)
            .checked_add(12)
            .and_then(|chunk| at.checked_add(chunk))
        else {
            break;
        };
        at = next;
    }
    Sequence::Single
}

/// The width and height of a GIF's logical screen, which every frame is
/// drawn on.
pub(super) fn gif_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if !matches!(bytes.get(..6)?, b"GIF87a" | b"GIF89a") {
        return None;
    }
    Some((u32::from(le16(bytes, 6)?), u32::from(le16(bytes, 8)?)))
}

/// Whether a GIF holds a second frame. The walk skips over blocks without
/// decompressing them and stops at the second image descriptor, so a GIF of
/// 100,000 frames costs no more than one of two.
pub(super) fn gif_sequence(bytes: &[u8], cancel: &Cancel) -> Result<Sequence, Failure> {
    let Some(&packed) = bytes.get(10) else {
        return Ok(Sequence::Single);
    };
    let mut at = 13usize;
    if packed & 0x80 != 0 {
        at += 3 << ((packed & 0x07) + 1);
    }
    let mut frames = 0u32;
    let mut blocks = 0usize;
    while let Some(&introducer) = bytes.get(at) {
        blocks += 1;
        if blocks.is_multiple_of(GIF_BLOCKS_PER_CHECK) {
            cancel.check()?;
        }
        let next = match introducer {
            // An extension: its label, then data sub-blocks.
            0x21 => skip_sub_blocks(bytes, at + 2),
            // An image: a 9-byte descriptor, an optional local colour table,
            // the LZW code size, then data sub-blocks.
            0x2C => {
                frames += 1;
                if frames >= 2 {
                    return Ok(Sequence::Animation);
                }
                bytes.get(at + 9).and_then(|&flags| {
                    let table = if flags & 0x80 == 0 {
                        0
                    } else {
                        3usize << ((flags & 0x07) + 1)
                    };
                    skip_sub_blocks(bytes, at + 10 + table + 1)
                })
            }
            _ => None,
        };
        match next {
            Some(next) => at = next,
            None => break,
        }
    }
    Ok(Sequence::Single)
}

/// The position just past a chain of GIF data sub-blocks starting at `at`
/// (each a length byte then that many bytes, ended by a zero length).
pub(super) fn skip_sub_blocks(bytes: &[u8], mut at: usize) -> Option<usize> {
    loop {
        let length = usize::from(*bytes.get(at)?);
        at += 1;
        if length == 0 {
            return Some(at);
        }
        at = at.checked_add(length)?;
    }
}

/// `WebpFacts` is what a WebP's RIFF chunks say about its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct WebpFacts {
    /// Whether the (first) picture is VP8, the lossy codec, rather than VP8L.
    pub lossy: bool,
    /// Whether the extended header marks it as animated.
    pub animated: bool,
    /// Whether it is an animation with two frames or more.
    pub sequence: Sequence,
}

/// Walks a WebP's chunks (without decoding) to learn whether it is lossy and
/// animated, stopping at the second animation frame.
pub(super) fn webp_facts(bytes: &[u8]) -> WebpFacts {
    let mut facts = WebpFacts {
        lossy: false,
        animated: false,
        sequence: Sequence::Single,
    };
    if bytes.get(..4) != Some(b"RIFF") || bytes.get(8..12) != Some(b"WEBP") {
        return facts;
    }
    let mut codec_seen = false;
    let mut frames = 0u32;
    let mut at = 12usize;
    while let (Some(kind), Some(size)) = (bytes.get(at..at + 4), le32(bytes, at + 4)) {
        let size = size as usize;
        let start = at + 8;
        let data = bytes.get(start..start.saturating_add(size)).unwrap_or(&[]);
        match kind {
            b"VP8 " | b"VP8L" if !codec_seen => {
                codec_seen = true;
                facts.lossy = kind == b"VP8 ";
            }
            b"VP8X" => facts.animated = data.first().is_some_and(|flags| flags & 0x02 != 0),
            b"ANMF" => {
                frames += 1;
                if !codec_seen
                    && let Some(lossy) = first_codec_is_lossy(data.get(16..).unwrap_or(&[]))
                {
                    codec_seen = true;
                    facts.lossy = lossy;
                }
                if frames >= 2 {
                    facts.sequence = Sequence::Animation;
                    break;
                }
            }
            _ => {}
        }
        let Some(next) = size
            .checked_add(size & 1)
            .and_then(|padded| start.checked_add(padded))
        else {
            break;
        };
        at = next;
    }
    facts
}

/// Whether the first VP8/VP8L chunk among `chunks` (the inside of an
/// animation frame) is lossy; `None` when there is neither.
fn first_codec_is_lossy(chunks: &[u8]) -> Option<bool> {
    let mut at = 0usize;
    while let (Some(kind), Some(size)) = (chunks.get(at..at + 4), le32(chunks, at + 4)) {
        match kind {
            b"VP8 " => return Some(true),
            b"VP8L" => return Some(false),
            _ => {}
        }
        let size = size as usize;
        at = at
            .checked_add(8)?
            .checked_add(size)?
            .checked_add(size & 1)?;
    }
    None
}

/// Whether a TIFF has a page after its first: the first image directory
/// links to another one.
pub(super) fn tiff_sequence(bytes: &[u8]) -> Sequence {
    let next = match bytes.get(..4) {
        Some(b"II*\0") => next_ifd(bytes, false, false),
        Some(b"MM\0*") => next_ifd(bytes, true, false),
        Some(b"II+\0") => next_ifd(bytes, false, true),
        Some(b"MM\0+") => next_ifd(bytes, true, true),
        _ => None,
    };
    match next {
        Some(offset) if offset != 0 && offset < bytes.len() as u64 => Sequence::Pages,
        _ => Sequence::Single,
    }
}

/// The offset of the second image directory of a TIFF (classic or `BigTIFF`),
/// zero when there is none.
fn next_ifd(bytes: &[u8], big_endian: bool, big_tiff: bool) -> Option<u64> {
    let u16_at = |at: usize| {
        array_at(bytes, at).map(if big_endian {
            u16::from_be_bytes
        } else {
            u16::from_le_bytes
        })
    };
    let u32_at = |at: usize| {
        array_at(bytes, at).map(if big_endian {
            u32::from_be_bytes
        } else {
            u32::from_le_bytes
        })
    };
    let u64_at = |at: usize| {
        array_at(bytes, at).map(if big_endian {
            u64::from_be_bytes
        } else {
            u64::from_le_bytes
        })
    };
    if big_tiff {
        let first = usize::try_from(u64_at(8)?).ok()?;
        let entries = usize::try_from(u64_at(first)?).ok()?;
        u64_at(
            first
                .checked_add(8)?
                .checked_add(entries.checked_mul(20)?)?,
        )
    } else {
        let first = u32_at(4)? as usize;
        let entries = usize::from(u16_at(first)?);
        u32_at(first.checked_add(2)?.checked_add(entries * 12)?).map(u64::from)
    }
}

/// The `N` bytes at `at`, if the bytes reach that far.
fn array_at<const N: usize>(bytes: &[u8], at: usize) -> Option<[u8; N]> {
    bytes.get(at..at.checked_add(N)?)?.try_into().ok()
}

/// The big-endian `u32` at `at`, if the bytes reach that far.
fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    array_at(bytes, at).map(u32::from_be_bytes)
}

/// The little-endian `u32` at `at`, if the bytes reach that far.
pub(super) fn le32(bytes: &[u8], at: usize) -> Option<u32> {
    array_at(bytes, at).map(u32::from_le_bytes)
}

/// The little-endian `u16` at `at`, if the bytes reach that far.
pub(super) fn le16(bytes: &[u8], at: usize) -> Option<u16> {
    array_at(bytes, at).map(u16::from_le_bytes)
}
