//! Decoding base64 and deciding whether what it decodes to is a file worth
//! keeping, or a token, cursor or hash that only looks like one.

use std::sync::LazyLock;

use base64::Engine as _;
use base64::engine::general_purpose::PAD_INDIFFERENT;
use base64::engine::simd::Simd;
use porter_fileview::{Kind, sniff_type};

use crate::scan::Alphabet;
use crate::siblings::Hints;

/// The standard alphabet, padding optional, trailing bits refused (a
/// string with stray low bits is not what any encoder writes).
static STANDARD: LazyLock<Simd> = LazyLock::new(|| Simd::standard(PAD_INDIFFERENT));
/// The URL-safe alphabet, under the same rules.
static URL_SAFE: LazyLock<Simd> = LazyLock::new(|| Simd::url_safe(PAD_INDIFFERENT));

/// `PARALLEL_DECODE_CHARS` is the base64 length from which decoding is
/// split over two threads: below it a thread costs more than it saves.
const PARALLEL_DECODE_CHARS: usize = 4 << 20;

/// The decoder of an alphabet.
pub(crate) fn engine(alphabet: Alphabet) -> &'static Simd {
    match alphabet {
        Alphabet::Standard => &STANDARD,
        Alphabet::UrlSafe => &URL_SAFE,
    }
}

/// Decodes `text` in `alphabet` into `into` (replacing what it held). False
/// when it is not clean base64.
///
/// The buffer comes zeroed from the allocator untouched (its pages are
/// mapped on first write, by the decoder itself, rather than zeroed first
/// and written again), and a long text is decoded in two halves at once:
/// mapping fresh pages costs as much as decoding, and both halves pay it
/// in parallel.
pub(crate) fn decode_into(text: &[u8], alphabet: Alphabet, into: &mut Vec<u8>) -> bool {
    let engine = engine(alphabet);
    crate::free::release(std::mem::take(into));
    let mut out = vec![0u8; text.len().div_ceil(4) * 3];
    let written = if text.len() < PARALLEL_DECODE_CHARS {
        engine.decode_slice(text, &mut out).ok()
    } else {
        // The first half is whole quads, so it decodes to exactly three
        // bytes for every four and the second half's bytes follow on.
        let split = text.len() / 2 / 4 * 4;
        let (first, second) = text.split_at(split);
        let (first_out, second_out) = out.split_at_mut(split / 4 * 3);
        let (first_written, second_written) = std::thread::scope(|scope| {
            let other = scope.spawn(|| engine.decode_slice(second, second_out).ok());
            let mine = engine.decode_slice(first, first_out).ok();
            (mine, other.join().ok().flatten())
        });
        match (first_written, second_written) {
            (Some(a), Some(b)) if a == split / 4 * 3 => Some(a + b),
            _ => None,
        }
    };
    let Some(written) = written else {
        return false;
    };
    out.truncate(written);
    *into = out;
    true
}

/// Decodes the `data` of an image, audio or resource block, which the MCP
/// schema says is standard base64 but which servers send in both alphabets,
/// wrapped in lines, or as a whole `data:` URI, through `decode` (which
/// decodes base64 text in an alphabet, false when it is not clean). False
/// when none of those reads cleanly.
pub(crate) fn decode_block_data(
    data: &str,
    mut decode: impl FnMut(&[u8], Alphabet) -> bool,
) -> bool {
    let data = match data.strip_prefix("data:") {
        Some(rest) => match rest.split_once(',') {
            Some((head, body)) if head.to_ascii_lowercase().ends_with(";base64") => body,
            _ => return false,
        },
        None => data,
    };
    let bytes = data.as_bytes();
    let url_safe = bytes.iter().any(|b| matches!(b, b'-' | b'_'));
    let alphabet = if url_safe {
        Alphabet::UrlSafe
    } else {
        Alphabet::Standard
    };
    if decode(bytes, alphabet) {
        return true;
    }
    if bytes.iter().any(u8::is_ascii_whitespace) {
        let joined: Vec<u8> = bytes
            .iter()
            .copied()
            .filter(|b| !b.is_ascii_whitespace())
            .collect();
        return decode(&joined, alphabet);
    }
    false
}

/// Whether decoded bytes are a file rather than a token, and if so the
/// hints to hand over with them. A file is vouched for by the sibling
/// fields (see [`vouched`]: all their hints go along), or recognised on its
/// own by a signature the file view knows (the weakest few excepted) or as
/// readable text: then only the hints that agree with the bytes go along,
/// so a PNG beside `"mimeType": "application/pdf"` is not recorded as a
/// PDF.
pub(crate) fn recognised(bytes: &[u8], hints: &Hints) -> Option<Hints> {
    if bytes.is_empty() {
        return None;
    }
    if vouched(bytes, hints) {
        return Some(hints.clone());
    }
    let found = sniff_type(bytes, "");
    let by_signature = found.kind != Kind::Text
        && found.mime_type != "application/octet-stream"
        && !weak_signature(&found.mime_type, bytes);
    if !by_signature && !readable_text(bytes) {
        return None;
    }
    Some(Hints {
        declared_type: hints
            .declared_type
            .clone()
            .filter(|declared| agrees(&essence(declared), bytes)),
        name: hints
            .name
            .clone()
            .filter(|name| extension_type(name).is_none_or(|named| agrees(&named, bytes))),
    })
}

/// Whether the sibling fields vouch for the bytes: they name a type (a
/// media type, or a file name whose extension has one) and the bytes agree
/// with every type they name. A type with a signature (PDF, PNG, zip, …)
/// agrees only with bytes that carry it, a text type only with readable
/// text; a type porter knows no signature for (`application/octet-stream`,
/// a vendor's own) takes the sibling's word. So a cursor or token that sits
/// beside `"fileName": "report.pdf"` is not taken for the report.
fn vouched(bytes: &[u8], hints: &Hints) -> bool {
    let named = hints.name.as_deref().and_then(extension_type);
    let types: Vec<String> = hints
        .declared_type
        .as_deref()
        .map(essence)
        .into_iter()
        .chain(named)
        .collect();
    !types.is_empty() && types.iter().all(|t| agrees(t, bytes))
}

/// A media type's essence: without parameters, trimmed, lower case.
fn essence(media_type: &str) -> String {
    media_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// The media type a file name's extension has, if it has one.
fn extension_type(name: &str) -> Option<String> {
    let last = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let (stem, extension) = last.rsplit_once('.')?;
    if stem.is_empty() || !(1..=10).contains(&extension.len()) {
        return None;
    }
    mime_guess::from_ext(extension)
        .first()
        .map(|m| m.essence_str().to_ascii_lowercase())
}

/// Whether bytes agree with a media type (an essence, lower case).
fn agrees(media_type: &str, bytes: &[u8]) -> bool {
    if let Some(carries) = signature(media_type) {
        carries(bytes)
    } else if porter_fileview::is_text_media_type(media_type) {
        readable_text(bytes)
    } else {
        true
    }
}

/// The check for the signature every file of a type starts with (or holds
/// at a fixed place), for the types that have one.
fn signature(media_type: &str) -> Option<fn(&[u8]) -> bool> {
    fn at(bytes: &[u8], offset: usize, magic: &[u8]) -> bool {
        bytes
            .get(offset..)
            .is_some_and(|rest| rest.starts_with(magic))
    }
    let zip_family = media_type.starts_with("application/vnd.openxmlformats-officedocument.")
        || media_type.starts_with("application/vnd.oasis.opendocument.")
        || (media_type.starts_with("application/vnd.ms-")
            && media_type.ends_with(".macroenabled.12"));
    if zip_family {
        return Some(|b| at(b, 0, b"PK\x03\x04") || at(b, 0, b"PK\x05\x06"));
    }
    let check: fn(&[u8]) -> bool = match media_type {
        // A PDF reader looks for the header in the first kilobyte.
        "application/pdf" | "application/x-pdf" => {
            |b| b[..b.len().min(1024)].windows(5).any(|w| w == b"%PDF-")
        }
        "image/png" | "image/apng" => |b| at(b, 0, b"\x89PNG\r\n\x1a\n"),
        "image/jpeg" | "image/jpg" | "image/pjpeg" => |b| at(b, 0, b"\xFF\xD8\xFF"),
        "image/gif" => |b| at(b, 0, b"GIF87a") || at(b, 0, b"GIF89a"),
        "image/webp" => |b| at(b, 0, b"RIFF") && at(b, 8, b"WEBP"),
        "image/bmp" | "image/x-ms-bmp" => |b| at(b, 0, b"BM"),
        "image/tiff" => |b| at(b, 0, b"II*\0") || at(b, 0, b"MM\0*"),
        "image/x-icon" | "image/vnd.microsoft.icon" => |b| at(b, 0, b"\0\0\x01\0"),
        "image/heic" | "image/heif" | "image/avif" | "video/mp4" | "audio/mp4" | "audio/x-m4a"
        | "audio/m4a" | "video/quicktime" | "video/3gpp" => |b| at(b, 4, b"ftyp"),
        "audio/wav" | "audio/x-wav" | "audio/wave" | "audio/vnd.wave" => {
            |b| at(b, 0, b"RIFF") && at(b, 8, b"WAVE")
        }
        "audio/mpeg" | "audio/mp3" => {
            |b| at(b, 0, b"ID3") || (b.len() > 1 && b[0] == 0xFF && b[1] & 0xE0 == 0xE0)
        }
        "audio/ogg" | "audio/opus" | "video/ogg" | "application/ogg" => |b| at(b, 0, b"OggS"),
        "audio/flac" | "audio/x-flac" => |b| at(b, 0, b"fLaC"),
        "video/webm" | "audio/webm" | "video/x-matroska" => |b| at(b, 0, b"\x1A\x45\xDF\xA3"),
        "application/zip"
        | "application/x-zip-compressed"
        | "application/epub+zip"
        | "application/java-archive"
        | "application/vnd.android.package-archive" => {
            |b| at(b, 0, b"PK\x03\x04") || at(b, 0, b"PK\x05\x06")
        }
        "application/msword"
        | "application/vnd.ms-excel"
        | "application/vnd.ms-powerpoint"
        | "application/vnd.ms-outlook"
        | "application/x-msi" => |b| at(b, 0, b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1"),
        "application/gzip" | "application/x-gzip" => |b| at(b, 0, b"\x1F\x8B"),
        "application/x-bzip2" => |b| at(b, 0, b"BZh"),
        "application/x-xz" => |b| at(b, 0, b"\xFD7zXZ\0"),
        "application/zstd" => |b| at(b, 0, b"\x28\xB5\x2F\xFD"),
        "application/x-7z-compressed" => |b| at(b, 0, b"7z\xBC\xAF\x27\x1C"),
        "application/vnd.rar" | "application/x-rar-compressed" => |b| at(b, 0, b"Rar!\x1A\x07"),
        "application/x-tar" => |b| at(b, 257, b"ustar"),
        "application/vnd.sqlite3" | "application/x-sqlite3" => |b| at(b, 0, b"SQLite format 3\0"),
        "application/wasm" => |b| at(b, 0, b"\0asm"),
        "font/woff" => |b| at(b, 0, b"wOFF"),
        "font/woff2" => |b| at(b, 0, b"wOF2"),
        "font/otf" => |b| at(b, 0, b"OTTO"),
        _ => return None,
    };
    Some(check)
}

/// Signatures of two or three bytes that about one random string in a few
/// thousand carries (an MPEG or AAC frame sync, `MZ`): alone they do not
/// make random bytes a file.
fn weak_signature(mime_type: &str, bytes: &[u8]) -> bool {
    match mime_type {
        "audio/mpeg" => !bytes.starts_with(b"ID3"),
        "audio/aac" | "application/vnd.microsoft.portable-executable" => true,
        _ => false,
    }
}

/// `UNPRINTABLE_PER_MILLE` is how many control characters per thousand
/// bytes text may hold and still read as text (a stray form feed or escape
/// sequence in a log).
const UNPRINTABLE_PER_MILLE: usize = 10;

/// Whether bytes are text a person could read: valid UTF-8 with no NUL and
/// nearly no other control characters than tab and line ends.
fn readable_text(bytes: &[u8]) -> bool {
    if std::str::from_utf8(bytes).is_err() {
        return false;
    }
    let mut unprintable = 0usize;
    for &b in bytes {
        if b == 0 {
            return false;
        }
        if (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')) || b == 0x7F {
            unprintable += 1;
        }
    }
    unprintable * 1000 <= bytes.len() * UNPRINTABLE_PER_MILLE
}

#[cfg(test)]
mod tests {
    use super::*;
    use porter_test::noise;

    fn hints(declared_type: Option<&str>, name: Option<&str>) -> Hints {
        Hints {
            declared_type: declared_type.map(str::to_owned),
            name: name.map(str::to_owned),
        }
    }

    #[test]
    fn files_are_told_from_tokens() {
        let png = [b"\x89PNG\r\n\x1a\n".as_slice(), &noise(64, 1)].concat();
        let mpeg_sync = [b"\xFF\xFB\x90\x00".as_slice(), &noise(64, 2)].concat();
        let log = b"2026-01-01 started\n\tline two\r\n".repeat(20);
        let pdf = [b"%PDF-1.7\n".as_slice(), &noise(64, 4)].concat();
        let cases: [(&[u8], Hints, bool); 17] = [
            (&png, Hints::default(), true),
            (&log, Hints::default(), true),
            (&noise(3000, 3), Hints::default(), false),
            (
                &noise(3000, 3),
                hints(Some("application/x-thing"), None),
                true,
            ),
            (&noise(3000, 3), hints(None, Some("a.bin")), true),
            (&noise(3000, 3), hints(None, Some("dir/report.pdf")), false),
            (&pdf, hints(None, Some("dir/report.pdf")), true),
            (&noise(3000, 3), hints(Some("application/pdf"), None), false),
            (&noise(3000, 3), hints(Some("Image/PNG; x=1"), None), false),
            (&noise(3000, 3), hints(Some("text/csv"), None), false),
            (&log, hints(Some("text/csv"), None), true),
            (&log, hints(Some("application/pdf"), Some("log.txt")), true),
            (&noise(3000, 3), hints(None, Some("cursor")), false),
            (&noise(3000, 3), hints(None, Some("page.not-a-type")), false),
            (&mpeg_sync, Hints::default(), false),
            (b"text with a \0 inside", Hints::default(), false),
            (b"", hints(Some("image/png"), None), false),
        ];
        for (i, (bytes, hints, expected)) in cases.into_iter().enumerate() {
            assert_eq!(recognised(bytes, &hints).is_some(), expected, "case {i}");
        }
    }

    #[test]
    fn only_the_hints_that_agree_with_a_file_go_along_with_it() {
        let png = [b"\x89PNG\r\n\x1a\n".as_slice(), &noise(64, 5)].concat();
        let cases = [
            (
                hints(Some("application/pdf"), Some("report.pdf")),
                hints(None, None),
            ),
            (
                hints(Some("application/pdf"), Some("photo.png")),
                hints(None, Some("photo.png")),
            ),
            (
                hints(Some("image/png"), Some("report.pdf")),
                hints(Some("image/png"), None),
            ),
            (
                hints(Some("image/png"), Some("photo.png")),
                hints(Some("image/png"), Some("photo.png")),
            ),
            (hints(None, Some("upload")), hints(None, Some("upload"))),
        ];
        for (given, expected) in cases {
            assert_eq!(recognised(&png, &given), Some(expected), "{given:?}");
        }
    }

    #[test]
    fn a_long_text_decoded_in_two_halves_equals_the_whole() {
        use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
        for (extra, url_safe) in [(0, false), (1, false), (2, true), (3, true)] {
            let bytes = [noise(PARALLEL_DECODE_CHARS, 7), noise(extra, 8)].concat();
            let (text, alphabet) = if url_safe {
                (URL_SAFE_NO_PAD.encode(&bytes), Alphabet::UrlSafe)
            } else {
                (STANDARD.encode(&bytes), Alphabet::Standard)
            };
            assert!(text.len() >= PARALLEL_DECODE_CHARS);
            let mut out = Vec::new();
            assert!(decode_into(text.as_bytes(), alphabet, &mut out), "{extra}");
            assert!(out == bytes, "{extra}: the bytes differ");

            for at in [10, text.len() / 2 + 1] {
                let mut broken = text.clone().into_bytes();
                broken[at] = b'*';
                assert!(!decode_into(&broken, alphabet, &mut out), "{extra} {at}");
            }
        }
    }

    #[test]
    fn block_data_decodes_in_every_form_servers_send() {
        let cases: [(&str, Option<&[u8]>); 7] = [
            ("aGk/Pz4+", Some(b"hi??>>")),
            ("aGk_Pz4-", Some(b"hi??>>")),
            ("aGk", Some(b"hi")),
            ("aG\nk=", Some(b"hi")),
            ("data:text/plain;base64,aGk=", Some(b"hi")),
            ("data:text/plain,hi", None),
            ("not base64!", None),
        ];
        for (data, expected) in cases {
            let mut out = Vec::new();
            let ok =
                decode_block_data(data, |text, alphabet| decode_into(text, alphabet, &mut out));
            assert_eq!(ok.then_some(out.as_slice()), expected, "{data:?}");
        }
    }
}
