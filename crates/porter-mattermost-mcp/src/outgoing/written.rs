//! The rules for a file the model wrote: a plain name, at most 1 MiB, and
//! text, never encoded bytes.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use porter_fileview::{Kind, human_size, sniff_type};
use porter_paths::{is_invisible, shown};

use super::rules::{OutgoingLimits, Refusal, RefusalKind, Stage};

/// `BASE64_MIN_CHARS` is the shortest run judged as possibly encoded bytes:
/// shorter runs are tokens, hashes and identifiers that happen to fit the
/// alphabet.
const BASE64_MIN_CHARS: usize = 128;

/// Checks a written file's name and content; nothing here touches a disk.
pub(super) fn check(
    name: &str,
    content: &str,
    limits: &OutgoingLimits,
    stage: Stage,
) -> Result<(), Refusal> {
    let refuse = |kind, why: String| Err(Refusal::new(kind, Some(shown(name)), why, stage));
    if name.trim().is_empty() {
        return refuse(
            RefusalKind::Name,
            "A written file has no name; give each one a name with an extension, such as notes.md."
                .to_owned(),
        );
    }
    if let Some(c) = name.chars().find(|&c| is_invisible(c)) {
        return refuse(
            RefusalKind::Name,
            format!(
                "The name {} contains the invisible or control character U+{:04X}, which can make a name look like another; choose a plain name.",
                shown(name),
                u32::from(c)
            ),
        );
    }
    let size = content.len() as u64;
    if size > limits.max_written_bytes {
        return refuse(
            RefusalKind::TooLarge,
            format!(
                "{} is {} of text, more than the {} a written file may be; shorten it or split it into several files.",
                shown(name),
                human_size(size),
                human_size(limits.max_written_bytes)
            ),
        );
    }
    if content.contains('\0') {
        return refuse(
            RefusalKind::NotText,
            format!(
                "{} contains a NUL character, so it is not text; a written file is text written for the post.",
                shown(name)
            ),
        );
    }
    if looks_like_encoded_binary(content) {
        return refuse(
            RefusalKind::NotText,
            format!(
                "{} looks like base64 of a binary file, and a written file must be text written for the post, never encoded bytes; to send a binary file, attach it by path on the person's own computer, or ask the person to attach it.",
                shown(name)
            ),
        );
    }
    Ok(())
}

/// Whether text is a base64 `data:` URI, or a long run of base64 (wrapped
/// in lines of one length or not) that decodes to bytes that are not text.
/// A run must mix upper- and lower-case letters and digits, as encoded
/// bytes do, so that hex dumps and lists of identifiers are left alone.
fn looks_like_encoded_binary(content: &str) -> bool {
    let body = content.trim();
    if body.starts_with("data:")
        && body
            .split_once(',')
            .is_some_and(|(head, _)| head.ends_with(";base64"))
    {
        return true;
    }
    let lines: Vec<&str> = body.lines().map(str::trim_end).collect();
    if let Some((_, wrapped)) = lines.split_last()
        && wrapped.iter().any(|line| line.len() != wrapped[0].len())
    {
        return false;
    }
    let compact: String = lines.concat();
    if compact.len() < BASE64_MIN_CHARS
        || !compact
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+/=-_".contains(&b))
        || !compact.bytes().any(|b| b.is_ascii_uppercase())
        || !compact.bytes().any(|b| b.is_ascii_lowercase())
        || !compact.bytes().any(|b| b.is_ascii_digit())
    {
        return false;
    }
    [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
        .iter()
        .find_map(|engine| engine.decode(&compact).ok())
        .is_some_and(|bytes| sniff_type(&bytes, "").kind != Kind::Text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_binaries_are_told_from_text() {
        let png = [
            0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, b'I', b'H', b'D', b'R',
        ];
        let binary: Vec<u8> = png.iter().copied().cycle().take(300).collect();
        let encoded = STANDARD.encode(&binary);
        let wrapped: Vec<String> = encoded
            .as_bytes()
            .chunks(76)
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .collect();
        let hex: String = binary
            .iter()
            .flat_map(|b| [b >> 4, b & 0x0f])
            .map(|d| char::from_digit(u32::from(d), 16).unwrap_or('0'))
            .collect();
        let cases = [
            (encoded.clone(), true),
            (wrapped.join("\n"), true),
            (format!("data:image/png;base64,{encoded}"), true),
            (STANDARD.encode("plain words, ".repeat(30)), false),
            (hex, false),
            ("# Minutes\n\nWe met and agreed.\n".to_owned(), false),
            ("abc123".repeat(40), false),
        ];
        for (content, expected) in cases {
            assert_eq!(
                looks_like_encoded_binary(&content),
                expected,
                "{}",
                &content[..content.len().min(60)]
            );
        }
    }
}
