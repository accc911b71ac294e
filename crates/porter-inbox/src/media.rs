//! The media type a kept file is recorded under: the one its source declared
//! when that says something, else what its bytes show.

/// `SNIFF_BYTES` is how much of a streamed file is held to sniff its type:
/// every signature the file view knows sits well inside it.
pub const SNIFF_BYTES: usize = 64 * 1024;

/// The declared type's essence, lower-cased with parameters dropped; `None`
/// when nothing usable was declared (absent, `application/octet-stream`,
/// or not shaped like `type/subtype`, so a stub never carries odd text).
#[must_use]
pub fn declared_essence(declared: Option<&str>) -> Option<String> {
    let essence = declared?.split(';').next()?.trim().to_ascii_lowercase();
    let (kind, sub) = essence.split_once('/')?;
    let token = |s: &str| {
        !s.is_empty()
            && s.len() <= 127
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&^_.+-".contains(&b))
    };
    (token(kind) && token(sub) && essence != "application/octet-stream").then_some(essence)
}

/// The media type to record: the declared one when usable, else sniffed by
/// `porter_fileview::sniff_type`. `bytes` may be only the head of the file;
/// a head cut inside a UTF-8 character is trimmed back to the last whole
/// one so that text is still seen as text.
#[must_use]
pub fn media_type(declared: Option<&str>, bytes: &[u8], name: &str) -> String {
    if let Some(essence) = declared_essence(declared) {
        return essence;
    }
    porter_fileview::sniff_type(whole_chars(bytes), name).mime_type
}

/// The head of a file without a UTF-8 character cut at its end.
fn whole_chars(bytes: &[u8]) -> &[u8] {
    match std::str::from_utf8(bytes) {
        Err(e) if e.error_len().is_none() && bytes.len() >= SNIFF_BYTES => {
            &bytes[..e.valid_up_to()]
        }
        _ => bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] =
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";

    #[test]
    fn a_declared_type_wins_lower_cased_without_parameters() {
        assert_eq!(
            media_type(Some("Text/HTML; charset=UTF-8"), PNG, "x"),
            "text/html"
        );
    }

    #[test]
    fn octet_stream_or_junk_declared_falls_back_to_the_bytes() {
        for declared in [
            None,
            Some("application/octet-stream"),
            Some(""),
            Some("image"),
            Some("image/png · evil"),
        ] {
            assert_eq!(media_type(declared, PNG, "x"), "image/png", "{declared:?}");
        }
    }

    #[test]
    fn text_sniffed_from_a_head_cut_inside_a_character_is_still_text() {
        let mut head = "é".repeat(SNIFF_BYTES / 2).into_bytes();
        head.truncate(SNIFF_BYTES - 1);
        head.extend_from_slice(&[0xC3]);
        assert_eq!(head.len(), SNIFF_BYTES);
        assert_eq!(media_type(None, &head, "notes"), "text/plain");
    }
}
