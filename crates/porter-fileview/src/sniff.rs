//! Deciding what a file is from its bytes. The name and the declared type
//! are hints only where the bytes cannot tell (which text type a text is).

use crate::archive::{self, Compression};
use crate::picture::Format;

/// The encodings text is read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    Utf8,
    /// UTF-8 behind a byte-order mark, which is dropped.
    Utf8Bom,
    Utf16Le,
    Utf16Be,
    /// The last resort before "binary": every byte is a Windows-1252
    /// character and none is a control character text would not hold.
    Windows1252,
}

/// What the bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Sniffed {
    Text(Encoding),
    Pdf,
    Image(Format),
    /// An image in a format the view does not decode (HEIC, AVIF, ICO…).
    OtherImage {
        mime: &'static str,
        what: &'static str,
    },
    Zip,
    Tar(Compression),
    /// A compressed file that does not hold a tar.
    Compressed(Compression),
    /// An OLE compound file: legacy Word, Excel, PowerPoint, Outlook…
    Ole,
    Audio {
        mime: &'static str,
        what: &'static str,
    },
    Video {
        mime: &'static str,
        what: &'static str,
    },
    Other {
        mime: String,
        what: String,
    },
}

/// Reads the kind of a file from its bytes.
pub(crate) fn sniff(bytes: &[u8]) -> Sniffed {
    if let Some(encoding) = unicode_text(bytes) {
        // A PDF written entirely in ASCII is still a PDF: its header is an
        // exact marker of the format, so it is not shown as text.
        if !bytes.starts_with(b"%PDF-") {
            return Sniffed::Text(encoding);
        }
    }
    if let Some(found) = by_signature(bytes) {
        return found;
    }
    if is_windows_1252_text(bytes) {
        return Sniffed::Text(Encoding::Windows1252);
    }
    other(bytes)
}

/// UTF-8 without NUL, or UTF-16 behind its byte-order mark.
fn unicode_text(bytes: &[u8]) -> Option<Encoding> {
    if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        return (!rest.contains(&0) && std::str::from_utf8(rest).is_ok())
            .then_some(Encoding::Utf8Bom);
    }
    if bytes.starts_with(b"\xFF\xFE") && !bytes.starts_with(b"\xFF\xFE\0\0") {
        return utf16_is_text(&bytes[2..], u16::from_le_bytes).then_some(Encoding::Utf16Le);
    }
    if bytes.starts_with(b"\xFE\xFF") {
        return utf16_is_text(&bytes[2..], u16::from_be_bytes).then_some(Encoding::Utf16Be);
    }
    (memchr::memchr(0, bytes).is_none() && std::str::from_utf8(bytes).is_ok())
        .then_some(Encoding::Utf8)
}

/// Whether the bytes after a UTF-16 byte-order mark decode cleanly: an even
/// length, no unpaired surrogate and no NUL character.
fn utf16_is_text(bytes: &[u8], unit: fn([u8; 2]) -> u16) -> bool {
    if !bytes.len().is_multiple_of(2) {
        return false;
    }
    let units = bytes.chunks_exact(2).map(|pair| unit([pair[0], pair[1]]));
    char::decode_utf16(units).all(|c| matches!(c, Ok(c) if c != '\0'))
}

/// Windows-1252 as a last resort: no byte it leaves undefined, and no
/// control character other than tab, line feed, form feed and carriage
/// return, which random binary data nearly always has.
fn is_windows_1252_text(bytes: &[u8]) -> bool {
    !bytes.is_empty()
        && bytes.iter().all(|&b| {
            !matches!(b, 0x81 | 0x8D | 0x8F | 0x90 | 0x9D | 0x7F)
                && (b >= 0x20 || matches!(b, b'\t' | b'\n' | b'\r' | 0x0C))
        })
}

fn by_signature(bytes: &[u8]) -> Option<Sniffed> {
    let starts = |sig: &[u8]| bytes.starts_with(sig);
    let at = |offset: usize, sig: &[u8]| bytes.get(offset..offset + sig.len()) == Some(sig);

    if starts(b"%PDF-") {
        return Some(Sniffed::Pdf);
    }
    if starts(b"\x89PNG\r\n\x1a\n") {
        return Some(Sniffed::Image(Format::Png));
    }
    if starts(b"\xFF\xD8\xFF") {
        return Some(Sniffed::Image(Format::Jpeg));
    }
    if starts(b"GIF87a") || starts(b"GIF89a") {
        return Some(Sniffed::Image(Format::Gif));
    }
    if starts(b"RIFF") && at(8, b"WEBP") {
        return Some(Sniffed::Image(Format::Webp));
    }
    if starts(b"BM")
        && bytes.len() >= 26
        && matches!(bytes.get(14), Some(12 | 40 | 52 | 56 | 64 | 108 | 124))
    {
        return Some(Sniffed::Image(Format::Bmp));
    }
    if starts(b"II*\0") || starts(b"MM\0*") {
        return Some(Sniffed::Image(Format::Tiff));
    }
    if starts(b"PK\x03\x04") || starts(b"PK\x05\x06") || starts(b"PK\x07\x08") {
        return Some(Sniffed::Zip);
    }
    if let Some(compression) = compression(bytes) {
        return Some(if archive::wraps_tar(bytes, compression) {
            Sniffed::Tar(compression)
        } else {
            Sniffed::Compressed(compression)
        });
    }
    if archive::wraps_tar(bytes, Compression::None) {
        return Some(Sniffed::Tar(Compression::None));
    }
    if starts(b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1") {
        return Some(Sniffed::Ole);
    }
    if let Some(found) = iso_media(bytes) {
        return Some(found);
    }
    riff_and_friends(bytes)
}

fn compression(bytes: &[u8]) -> Option<Compression> {
    if bytes.starts_with(b"\x1F\x8B") {
        Some(Compression::Gzip)
    } else if bytes.starts_with(b"BZh") && bytes.get(3).is_some_and(|b| (b'1'..=b'9').contains(b)) {
        Some(Compression::Bzip2)
    } else if bytes.starts_with(b"\xFD7zXZ\0") {
        Some(Compression::Xz)
    } else if bytes.starts_with(b"\x28\xB5\x2F\xFD") {
        Some(Compression::Zstd)
    } else {
        None
    }
}

/// ISO base media files (`ftyp` box): MP4, MOV, 3GP, M4A, HEIC, AVIF.
fn iso_media(bytes: &[u8]) -> Option<Sniffed> {
    if bytes.get(4..8) != Some(b"ftyp") {
        return None;
    }
    let brand = bytes.get(8..12)?;
    let audio = |what| Sniffed::Audio {
        mime: "audio/mp4",
        what,
    };
    let video = |mime, what| Sniffed::Video { mime, what };
    Some(match brand {
        b"M4A " | b"M4B " | b"M4P " | b"F4A " => audio("MPEG-4 audio"),
        b"qt  " => video("video/quicktime", "QuickTime video"),
        b"3gp4" | b"3gp5" | b"3gp6" | b"3gp7" | b"3gs7" | b"3ge6" | b"3ge7" | b"3gg6" => {
            video("video/3gpp", "3GPP video")
        }
        b"3g2a" | b"3g2b" | b"3g2c" => video("video/3gpp2", "3GPP2 video"),
        b"heic" | b"heix" | b"hevc" | b"heim" | b"heis" | b"mif1" | b"msf1" => {
            Sniffed::OtherImage {
                mime: "image/heic",
                what: "HEIC image",
            }
        }
        b"avif" | b"avis" => Sniffed::OtherImage {
            mime: "image/avif",
            what: "AVIF image",
        },
        _ => video("video/mp4", "MP4 video"),
    })
}

fn riff_and_friends(bytes: &[u8]) -> Option<Sniffed> {
    let starts = |sig: &[u8]| bytes.starts_with(sig);
    let at = |offset: usize, sig: &[u8]| bytes.get(offset..offset + sig.len()) == Some(sig);
    let audio = |mime, what| Some(Sniffed::Audio { mime, what });
    let video = |mime, what| Some(Sniffed::Video { mime, what });

    if starts(b"RIFF") && at(8, b"WAVE") {
        return audio("audio/wav", "WAV audio");
    }
    if starts(b"RIFF") && at(8, b"AVI ") {
        return video("video/x-msvideo", "AVI video");
    }
    if starts(b"FORM") && (at(8, b"AIFF") || at(8, b"AIFC")) {
        return audio("audio/aiff", "AIFF audio");
    }
    if starts(b"fLaC") {
        return audio("audio/flac", "FLAC audio");
    }
    if starts(b"OggS") {
        let head = &bytes[..bytes.len().min(256)];
        let has = |needle: &[u8]| memchr::memmem::find(head, needle).is_some();
        if has(b"\x80theora") {
            return video("video/ogg", "Ogg video");
        }
        if has(b"OpusHead") {
            return audio("audio/ogg", "Ogg Opus audio");
        }
        return audio("audio/ogg", "Ogg audio");
    }
    if starts(b"ID3") || is_mpeg_audio_frame(bytes) {
        return audio("audio/mpeg", "MP3 audio");
    }
    if bytes.len() >= 2 && bytes[0] == 0xFF && (bytes[1] & 0xF6) == 0xF0 {
        return audio("audio/aac", "AAC audio");
    }
    if starts(b"#!AMR") {
        return audio("audio/amr", "AMR audio");
    }
    if starts(b"MThd") {
        return audio("audio/midi", "MIDI music");
    }
    if starts(b"\x1A\x45\xDF\xA3") {
        let head = &bytes[..bytes.len().min(64)];
        return if memchr::memmem::find(head, b"webm").is_some() {
            video("video/webm", "WebM video")
        } else {
            video("video/x-matroska", "Matroska video")
        };
    }
    if starts(b"FLV\x01") {
        return video("video/x-flv", "Flash video");
    }
    if starts(b"\x00\x00\x01\xBA") {
        return video("video/mpeg", "MPEG video");
    }
    if bytes.len() >= 188 * 3 && bytes[0] == 0x47 && bytes[188] == 0x47 && bytes[376] == 0x47 {
        return video("video/mp2t", "MPEG transport stream");
    }
    None
}

/// An MPEG audio frame header: sync bits, a defined version and layer,
/// and a bitrate and sample rate that are not the reserved values.
fn is_mpeg_audio_frame(bytes: &[u8]) -> bool {
    let [a, b, c, ..] = bytes else { return false };
    *a == 0xFF
        && (b & 0xE0) == 0xE0
        && (b & 0x18) != 0x08
        && (b & 0x06) != 0
        && (c & 0xF0) != 0xF0
        && (c & 0x0C) != 0x0C
}

/// The binary formats the view does not read, by their first bytes, with
/// their type and what a description calls them; the first match names
/// the file.
const OTHER_SIGNATURES: &[(&[u8], &str, &str)] = &[
    (
        b"7z\xBC\xAF\x27\x1C",
        "application/x-7z-compressed",
        "7-Zip archive",
    ),
    (b"Rar!\x1A\x07", "application/vnd.rar", "RAR archive"),
    (b"\x7FELF", "application/x-executable", "ELF executable"),
    (
        b"MZ",
        "application/vnd.microsoft.portable-executable",
        "Windows executable",
    ),
    (
        b"SQLite format 3\0",
        "application/vnd.sqlite3",
        "SQLite database",
    ),
    (b"\0asm", "application/wasm", "WebAssembly module"),
    (b"wOFF", "font/woff", "web font"),
    (b"wOF2", "font/woff", "web font"),
    (b"\0\x01\0\0\0", "font/ttf", "font"),
    (b"OTTO", "font/ttf", "font"),
    (b"\0\0\x01\0", "image/vnd.microsoft.icon", "icon"),
    (b"8BPS", "image/vnd.adobe.photoshop", "Photoshop image"),
    (
        b"\xCA\xFE\xBA\xBE",
        "application/java-vm",
        "Java class file",
    ),
];

/// Names for binary formats the view does not read, so the description
/// says what the file is.
fn other(bytes: &[u8]) -> Sniffed {
    let (mime, what) = match OTHER_SIGNATURES
        .iter()
        .find(|(signature, _, _)| bytes.starts_with(signature))
    {
        Some(&(_, mime, what)) => (mime, what),
        None if bytes.is_empty() => ("application/octet-stream", "an empty file"),
        None => ("application/octet-stream", "binary data"),
    };
    Sniffed::Other {
        mime: mime.to_owned(),
        what: what.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_comes_first_because_a_text_may_begin_with_anything() {
        assert_eq!(
            sniff(b"PK\x03\x04 looks like zip but is text"),
            Sniffed::Text(Encoding::Utf8)
        );
        assert_eq!(
            sniff(b"GIF89a is how it starts"),
            Sniffed::Text(Encoding::Utf8)
        );
        assert_eq!(
            sniff("caf\u{e9}\n".as_bytes()),
            Sniffed::Text(Encoding::Utf8)
        );
    }

    #[test]
    fn encodings_are_told_apart_by_the_bytes() {
        let cases: [(&[u8], Sniffed); 6] = [
            (b"\xEF\xBB\xBFhi", Sniffed::Text(Encoding::Utf8Bom)),
            (b"\xFF\xFEh\0i\0", Sniffed::Text(Encoding::Utf16Le)),
            (b"\xFE\xFF\0h\0i", Sniffed::Text(Encoding::Utf16Be)),
            (
                b"caf\xE9 \x80 \x93quoted\x94\r\n",
                Sniffed::Text(Encoding::Windows1252),
            ),
            (
                b"nul\0inside",
                Sniffed::Other {
                    mime: "application/octet-stream".into(),
                    what: "binary data".into(),
                },
            ),
            (
                b"\x01\x02\x03\xE9",
                Sniffed::Other {
                    mime: "application/octet-stream".into(),
                    what: "binary data".into(),
                },
            ),
        ];
        for (bytes, expected) in cases {
            assert_eq!(sniff(bytes), expected, "{bytes:?}");
        }
    }

    #[test]
    fn an_odd_length_utf16_file_is_not_text() {
        assert_ne!(sniff(b"\xFF\xFEh\0i"), Sniffed::Text(Encoding::Utf16Le));
    }

    #[test]
    fn signatures_name_images_media_and_containers() {
        let cases: [(&[u8], Sniffed); 12] = [
            (
                b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
                Sniffed::Image(Format::Png),
            ),
            (
                b"\xFF\xD8\xFF\xE0\0\x10JFIF\0",
                Sniffed::Image(Format::Jpeg),
            ),
            (b"RIFF\x24\0\0\0WEBPVP8 ", Sniffed::Image(Format::Webp)),
            (b"II*\0\x08\0\0\0", Sniffed::Image(Format::Tiff)),
            (b"%PDF-1.7\n", Sniffed::Pdf),
            (b"PK\x03\x04\x14\0\0\0", Sniffed::Zip),
            (b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1\0\0", Sniffed::Ole),
            (
                b"RIFF\x24\0\0\0WAVEfmt ",
                Sniffed::Audio {
                    mime: "audio/wav",
                    what: "WAV audio",
                },
            ),
            (
                b"ID3\x04\0\0\0\0\0\0",
                Sniffed::Audio {
                    mime: "audio/mpeg",
                    what: "MP3 audio",
                },
            ),
            (
                b"\0\0\0\x18ftypisom\0\0\0\0",
                Sniffed::Video {
                    mime: "video/mp4",
                    what: "MP4 video",
                },
            ),
            (
                b"\0\0\0\x18ftypM4A \0\0\0\0",
                Sniffed::Audio {
                    mime: "audio/mp4",
                    what: "MPEG-4 audio",
                },
            ),
            (
                b"\x1A\x45\xDF\xA3\x9F\x42\x86\x81\x01\x42\x82\x84webm",
                Sniffed::Video {
                    mime: "video/webm",
                    what: "WebM video",
                },
            ),
        ];
        for (bytes, expected) in cases {
            assert_eq!(sniff(bytes), expected, "{bytes:?}");
        }
    }
}
