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

use super::container::{le16, le32, skip_sub_blocks};
use super::format::Format;

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
    if at != bytes.len() || !png_data_sound(bytes, &kept) {
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

/// Whether the image data of the PNG whose chunks are `chunks` is what
/// zlib, and so libpng and Pillow, accept: one zlib stream across the IDAT
/// chunks that inflates to exactly the size IHDR implies and ends with the
/// right Adler-32 checksum. The `png` crate skips the checksum and stops
/// reading once it has its rows, so a file it reads may still be refused
/// elsewhere. The inflating stops one byte past the expected size.
fn png_data_sound(bytes: &[u8], chunks: &[(usize, usize)]) -> bool {
    use std::io::Read as _;

    let data_of = |&(start, end): &(usize, usize)| &bytes[start + 8..end - 4];
    let kind_of = |&(start, _): &(usize, usize)| &bytes[start + 4..start + 8];
    let Some(expected) = chunks
        .first()
        .filter(|chunk| kind_of(chunk) == b"IHDR")
        .and_then(|chunk| png_raw_size(data_of(chunk)))
    else {
        return false;
    };
    let stream: Vec<u8> = chunks
        .iter()
        .filter(|chunk| kind_of(chunk) == b"IDAT")
        .flat_map(|chunk| data_of(chunk).iter().copied())
        .collect();
    let mut inflated = flate2::read::ZlibDecoder::new(stream.as_slice()).take(expected + 1);
    let mut sink = [0u8; 8192];
    let mut total = 0u64;
    loop {
        match inflated.read(&mut sink) {
            Ok(0) => break,
            Ok(n) => total += n as u64,
            Err(_) => return false,
        }
    }
    total == expected
}

/// The bytes a PNG's rows take inflated (a filter byte before each row, of
/// each pass when interlaced), from its IHDR; `None` for a header no
/// decoder accepts.
fn png_raw_size(header: &[u8]) -> Option<u64> {
    let width = u64::from(u32::from_be_bytes(header.get(0..4)?.try_into().ok()?));
    let height = u64::from(u32::from_be_bytes(header.get(4..8)?.try_into().ok()?));
    let depth = u64::from(*header.get(8)?);
    let channels = match header.get(9)? {
        0 | 3 => 1,
        4 => 2,
        2 => 3,
        6 => 4,
        _ => return None,
    };
    // Checked: the header's sizes are the file's word, whatever they say.
    let row = |pixels: u64| Some(1 + pixels.checked_mul(channels * depth)?.div_ceil(8));
    match header.get(12)? {
        0 => height.checked_mul(row(width)?),
        1 => {
            // Adam7: each pass's first column and row, and its steps.
            const PASSES: [(u64, u64, u64, u64); 7] = [
                (0, 0, 8, 8),
                (4, 0, 8, 8),
                (0, 4, 4, 8),
                (2, 0, 4, 4),
                (0, 2, 2, 4),
                (1, 0, 2, 2),
                (0, 1, 1, 2),
            ];
            let along = |size: u64, first: u64, step: u64| {
                size.checked_sub(first)
                    .map_or(0, |left| left.div_ceil(step))
            };
            PASSES.iter().try_fold(0u64, |total, &(x, y, dx, dy)| {
                let (columns, rows) = (along(width, x, dx), along(height, y, dy));
                let pass = if columns == 0 {
                    0
                } else {
                    rows.checked_mul(row(columns)?)?
                };
                total.checked_add(pass)
            })
        }
        _ => None,
    }
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
        if marker == 0xC4 && !huffman_tables_sound(&bytes[marker_at + 4..end]) {
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

/// Whether a DHT segment's tables are ones every common decoder accepts, by
/// the checks libjpeg makes when it reads them (not when it uses them): a
/// table slot of 0 to 3, at most 256 symbols, code counts that fit their
/// lengths, and DC symbols of 15 bits at most. A lenient decoder may read
/// a file that breaks these and a strict one refuse it, so such a file is
/// re-encoded rather than passed on.
fn huffman_tables_sound(mut tables: &[u8]) -> bool {
    while let Some((&class_slot, rest)) = tables.split_first() {
        let (class, slot) = (class_slot >> 4, class_slot & 0x0F);
        if class > 1 || slot > 3 || rest.len() < 16 {
            return false;
        }
        let (counts, rest) = rest.split_at(16);
        let total: usize = counts.iter().map(|&n| usize::from(n)).sum();
        if total > 256 || rest.len() < total {
            return false;
        }
        // Canonical codes: each length's codes follow the last one's, and
        // must fit in that many bits without being all ones.
        let mut next_code = 0u32;
        for (length, &count) in (1u32..).zip(counts) {
            next_code += u32::from(count);
            if next_code >= 1 << length {
                return false;
            }
            next_code <<= 1;
        }
        let (symbols, rest) = rest.split_at(total);
        if class == 0 && symbols.iter().any(|&symbol| symbol > 15) {
            return false;
        }
        tables = rest;
    }
    true
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
                at = skip_sub_blocks(bytes, at + 2)?;
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
                at = skip_sub_blocks(bytes, at + 1)?;
            }
            _ => return Some(false),
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

#[cfg(test)]
mod tests {
    use super::{huffman_tables_sound, png_raw_size};

    /// An IHDR's data.
    fn ihdr(width: u32, height: u32, depth: u8, colour: u8, interlaced: bool) -> Vec<u8> {
        let mut out = width.to_be_bytes().to_vec();
        out.extend(height.to_be_bytes());
        out.extend([depth, colour, 0, 0, u8::from(interlaced)]);
        out
    }

    #[test]
    fn the_inflated_size_of_png_rows_follows_the_header() {
        // 3 rows of 1 filter byte and 10×3 bytes.
        assert_eq!(png_raw_size(&ihdr(10, 3, 8, 2, false)), Some(93));
        // 16-bit RGBA: 8 bytes a pixel.
        assert_eq!(png_raw_size(&ihdr(2, 2, 16, 6, false)), Some(34));
        // 1-bit grey: 10 pixels fill two bytes.
        assert_eq!(png_raw_size(&ihdr(10, 1, 1, 0, false)), Some(3));
        // Adam7 on 3×3 grey: passes of 1, 1, 2, 1 and 3 pixels in rows of
        // 1, 1, 2, 1 (twice) and 3, each row after a filter byte.
        assert_eq!(png_raw_size(&ihdr(3, 3, 8, 0, true)), Some(15));
        assert_eq!(png_raw_size(&ihdr(1, 1, 8, 2, true)), Some(4));
        assert_eq!(
            png_raw_size(&ihdr(1, 1, 8, 5, false)),
            None,
            "colour type 5"
        );
        assert_eq!(
            png_raw_size(&ihdr(u32::MAX, u32::MAX, 16, 6, false)),
            None,
            "sizes past u64"
        );
        assert_eq!(
            png_raw_size(&ihdr(1, 1, 8, 2, false)[..10]),
            None,
            "cut short"
        );
    }

    /// One DHT table: class and slot, 16 counts, then symbols 0, 1, 2…
    fn table(class_slot: u8, counts: [u8; 16]) -> Vec<u8> {
        let total: usize = counts.iter().map(|&n| usize::from(n)).sum();
        let mut out = vec![class_slot];
        out.extend(counts);
        out.extend((0..total).map(|n| u8::try_from(n % 12).expect("under 12")));
        out
    }

    #[test]
    fn the_standard_luminance_dc_table_is_sound() {
        let counts = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0];
        let mut two = table(0x00, counts);
        two.extend(table(0x01, counts));
        assert!(huffman_tables_sound(&two), "two tables in one segment");
    }

    #[test]
    fn tables_libjpeg_refuses_are_not_sound() {
        let mut counts = [0u8; 16];
        counts[0] = 2; // codes 0 and 1 of one bit: the second is all ones
        assert!(!huffman_tables_sound(&table(0x00, counts)));
        counts[0] = 1;
        assert!(huffman_tables_sound(&table(0x00, counts)));
        let sound = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0];
        assert!(!huffman_tables_sound(&table(0x04, sound)), "slot 4");
        assert!(!huffman_tables_sound(&table(0x20, sound)), "class 2");
        let mut big_symbol = table(0x00, sound);
        *big_symbol.last_mut().expect("a symbol") = 16;
        assert!(!huffman_tables_sound(&big_symbol), "a DC symbol of 16 bits");
        let mut ac = big_symbol.clone();
        ac[0] = 0x10;
        assert!(huffman_tables_sound(&ac), "AC symbols may be any byte");
        let short = &table(0x00, sound)[..20];
        assert!(!huffman_tables_sound(short), "symbols cut short");
    }
}
