//! What of an image file's own bytes may be passed on: its pixels and what
//! shows them, never what rides along. A file that fits every limit is
//! still walked here, container structure first: metadata that a client
//! might choke on or that tells more than the picture (PNG text and ICC
//! chunks, which can be compressed bombs; EXIF, which can say where a photo
//! was taken; JPEG comments and APP segments) is cut out losslessly where
//! the format allows (PNG chunks, JPEG segments), and a file whose structure
//! is off (sizes that lie, a frame outside its screen, bytes after the end,
//! metadata that cannot be cut out) is not passed on at all: it is decoded
//! and re-encoded instead.

use std::borrow::Cow;

use super::Format;

/// The file's bytes as they may be passed on (borrowed when nothing had to
/// go), or `None` when they may not be and the image must be re-encoded.
pub(super) fn passable(bytes: &[u8], format: Format) -> Option<Cow<'_, [u8]>> {
    match format {
        Format::Png => png(bytes),
        Format::Jpeg => jpeg(bytes),
        Format::Gif => gif(bytes).then_some(Cow::Borrowed(bytes)),
        Format::Webp => webp(bytes).then_some(Cow::Borrowed(bytes)),
        Format::Bmp | Format::Tiff => None,
    }
}

const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

/// PNG chunks kept: the critical ones and those that only say how to show
/// the pixels. Everything else (tEXt, zTXt, iTXt, iCCP, eXIf, tIME,
/// private chunks) is cut; an unknown critical chunk, a chunk past the end
/// or anything after IEND means the file is re-encoded.
fn png(bytes: &[u8]) -> Option<Cow<'_, [u8]>> {
    const KEPT: [&[u8; 4]; 11] = [
        b"IHDR", b"PLTE", b"IDAT", b"IEND", b"tRNS", b"gAMA", b"cHRM", b"sRGB", b"pHYs", b"bKGD",
        b"sBIT",
    ];
    let mut at = PNG_SIGNATURE.len();
    if bytes.get(..at)? != PNG_SIGNATURE {
        return None;
    }
    let mut kept: Vec<(usize, usize)> = Vec::new();
    let mut dropped = false;
    loop {
        let length =
            usize::try_from(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?)).ok()?;
        let kind: &[u8; 4] = bytes.get(at + 4..at + 8)?.try_into().ok()?;
        let end = at.checked_add(12)?.checked_add(length)?;
        if end > bytes.len() {
            return None;
        }
        if KEPT.contains(&kind) {
            kept.push((at, end));
        } else if kind[0].is_ascii_uppercase() {
            return None;
        } else {
            dropped = true;
        }
        at = end;
        if kind == b"IEND" {
            break;
        }
    }
    if at != bytes.len() {
        return None;
    }
    if !dropped {
        return Some(Cow::Borrowed(bytes));
    }
    let mut out = PNG_SIGNATURE.to_vec();
    for (start, end) in kept {
        out.extend_from_slice(&bytes[start..end]);
    }
    Some(Cow::Owned(out))
}

/// JPEG segments kept: the ones that describe and hold the picture, APP0
/// (JFIF) and APP14 (Adobe, which says how the colours are stored). APP1 to
/// APP13, APP15 (EXIF, XMP, ICC, Photoshop…) and comments are cut; a
/// segment past the end, or anything after EOI, means re-encoding.
fn jpeg(bytes: &[u8]) -> Option<Cow<'_, [u8]>> {
    if bytes.get(..2)? != [0xFF, 0xD8] {
        return None;
    }
    let mut kept: Vec<(usize, usize)> = vec![(0, 2)];
    let mut dropped = false;
    let mut at = 2;
    loop {
        // Fill bytes (0xFF repeated) may precede a marker.
        if *bytes.get(at)? != 0xFF {
            return None;
        }
        let mut marker_at = at;
        while *bytes.get(marker_at + 1)? == 0xFF {
            marker_at += 1;
        }
        let marker = *bytes.get(marker_at + 1)?;
        match marker {
            0xD9 => {
                kept.push((at, marker_at + 2));
                if marker_at + 2 != bytes.len() {
                    return None;
                }
                break;
            }
            0x01 | 0xD0..=0xD7 => {
                // Markers without a length; RST markers only inside scans.
                kept.push((at, marker_at + 2));
                at = marker_at + 2;
                continue;
            }
            0x00 | 0xD8 => return None,
            _ => {}
        }
        let length = usize::from(u16::from_be_bytes([
            *bytes.get(marker_at + 2)?,
            *bytes.get(marker_at + 3)?,
        ]));
        if length < 2 {
            return None;
        }
        let end = marker_at + 2 + length;
        if end > bytes.len() {
            return None;
        }
        let metadata = matches!(marker, 0xE1..=0xED | 0xEF | 0xFE);
        if metadata {
            dropped = true;
        } else {
            kept.push((at, end));
        }
        at = end;
        if marker == 0xDA {
            // The entropy-coded scan runs to the next marker that is not a
            // stuffed 0xFF00 or a restart marker.
            let scan_end = scan_end(bytes, at)?;
            kept.push((at, scan_end));
            at = scan_end;
        }
    }
    if !dropped {
        return Some(Cow::Borrowed(bytes));
    }
    let mut out = Vec::with_capacity(bytes.len());
    for (start, end) in kept {
        out.extend_from_slice(&bytes[start..end]);
    }
    Some(Cow::Owned(out))
}

/// Where the entropy-coded data starting at `at` ends: the first 0xFF that
/// begins a marker other than a stuffed zero or a restart.
fn scan_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    loop {
        at += memchr::memchr(0xFF, bytes.get(at..)?)?;
        let mut next = at + 1;
        while *bytes.get(next)? == 0xFF {
            next += 1;
        }
        match bytes.get(next)? {
            0x00 | 0xD0..=0xD7 => at = next + 1,
            _ => return Some(at),
        }
    }
}

/// A GIF passes only with nothing but its frames: no comment, plain-text
/// or application extension, every frame inside the logical screen, and
/// nothing after the trailer.
fn gif(bytes: &[u8]) -> bool {
    gif_clean(bytes).unwrap_or(false)
}

fn gif_clean(bytes: &[u8]) -> Option<bool> {
    if !matches!(bytes.get(..6)?, b"GIF87a" | b"GIF89a") {
        return Some(false);
    }
    let screen_width = u32::from(le16(bytes, 6)?);
    let screen_height = u32::from(le16(bytes, 8)?);
    let packed = *bytes.get(10)?;
    let mut at = 13;
    if packed & 0x80 != 0 {
        at += 3 << ((packed & 0x07) + 1);
    }
    loop {
        match *bytes.get(at)? {
            0x3B => return Some(at + 1 == bytes.len()),
            0x21 => {
                if *bytes.get(at + 1)? != 0xF9 {
                    return Some(false);
                }
                at = sub_blocks_end(bytes, at + 2)?;
            }
            0x2C => {
                let left = u32::from(le16(bytes, at + 1)?);
                let top = u32::from(le16(bytes, at + 3)?);
                let width = u32::from(le16(bytes, at + 5)?);
                let height = u32::from(le16(bytes, at + 7)?);
                if left + width > screen_width || top + height > screen_height {
                    return Some(false);
                }
                let packed = *bytes.get(at + 9)?;
                at += 10;
                if packed & 0x80 != 0 {
                    at += 3 << ((packed & 0x07) + 1);
                }
                // The LZW minimum code size, then the data's sub-blocks.
                at = sub_blocks_end(bytes, at + 1)?;
            }
            _ => return Some(false),
        }
    }
}

/// The end of a chain of GIF sub-blocks (each a length byte and that many
/// bytes, ended by a zero length) that starts at `at`.
fn sub_blocks_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    loop {
        let length = usize::from(*bytes.get(at)?);
        at += 1;
        if length == 0 {
            return Some(at);
        }
        at += length;
        if at > bytes.len() {
            return None;
        }
    }
}

/// A WebP passes only when its RIFF size is the file's, its chunks fill it
/// exactly, and they are only picture chunks (VP8, VP8L, ALPH, VP8X); ICC,
/// EXIF, XMP or animation chunks mean re-encoding.
fn webp(bytes: &[u8]) -> bool {
    webp_clean(bytes).unwrap_or(false)
}

fn webp_clean(bytes: &[u8]) -> Option<bool> {
    if bytes.get(..4)? != b"RIFF" || bytes.get(8..12)? != b"WEBP" {
        return Some(false);
    }
    let riff = usize::try_from(le32(bytes, 4)?).ok()?;
    if riff.checked_add(8)? != bytes.len() {
        return Some(false);
    }
    let mut at = 12;
    let mut frames = 0;
    while at < bytes.len() {
        let kind = bytes.get(at..at + 4)?;
        let size = usize::try_from(le32(bytes, at + 4)?).ok()?;
        let end = at
            .checked_add(8)?
            .checked_add(size)?
            .checked_add(size % 2)?;
        if end > bytes.len() {
            return Some(false);
        }
        match kind {
            b"VP8 " | b"VP8L" => frames += 1,
            b"ALPH" | b"VP8X" => {}
            _ => return Some(false),
        }
        at = end;
    }
    Some(frames == 1)
}

fn le16(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

fn le32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}
