//! The name a response gives the file it carries: the `Content-Disposition`
//! header's `filename*` or `filename`, else the URL path's last segment;
//! and the percent-decoding both of them, and a URL's user info, need.
//!
//! These are one rule each, for every caller that keeps what it fetched
//! under a name (the gateway's `HTTP`, `WebFetch` and `File download`).
//! The names are as the server gave them: making one safe to write is
//! `porter-paths`' work.

use reqwest::header::{CONTENT_DISPOSITION, HeaderMap};
use url::Url;

/// `offered_file_name` is the name a response offers for its body: its
/// `Content-Disposition` file name ([`disposition_file_name`], the header
/// read as UTF-8 whatever bytes it holds), else the last segment of the
/// URL it came from ([`url_file_name`]), else none.
#[must_use]
pub fn offered_file_name(headers: &HeaderMap, url: &Url) -> Option<String> {
    headers
        .get(CONTENT_DISPOSITION)
        .and_then(|value| disposition_file_name(&String::from_utf8_lossy(value.as_bytes())))
        .or_else(|| url_file_name(url))
}

/// `percent_decoded_bytes` is `text` with every `%XX` escape turned into its
/// byte; a `%` not followed by two hex digits stays as it is.
#[must_use]
pub fn percent_decoded_bytes(text: &str) -> Vec<u8> {
    percent_encoding::percent_decode_str(text).collect()
}

/// `percent_decoded` is [`percent_decoded_bytes`] read as UTF-8, each byte
/// that is not UTF-8 shown as U+FFFD.
#[must_use]
pub fn percent_decoded(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

/// `disposition_file_name` is the file name a `Content-Disposition` value
/// gives: `filename*` (RFC 8187: `charset'language'percent-encoded`, in a
/// charset `encoding_rs` knows, ISO-8859-1 read as Windows-1252 as browsers
/// do) over `filename` (a quoted string or a token). A `%` not followed by
/// two hex digits is read as itself, but puts the extended form second to a
/// plain `filename`; an extended form cut off inside an escape, or whose
/// bytes are not valid in its charset, is unreadable. A blank name is none.
#[must_use]
pub fn disposition_file_name(value: &str) -> Option<String> {
    let mut plain = None;
    let mut extended = None;
    for param in split_params(value) {
        let Some((key, raw)) = param.split_once('=') else {
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        let raw = raw.trim();
        if key == "filename*" {
            extended = extended_value(raw.trim_matches('"'));
        } else if key == "filename" {
            plain = Some(unquote(raw));
        }
    }
    let named = |name: &String| !name.trim().is_empty();
    let plain = plain.filter(named);
    match extended.filter(|(name, _)| named(name)) {
        Some((name, true)) => Some(name),
        Some((name, false)) => plain.or(Some(name)),
        None => plain,
    }
}

/// RFC 8187's `charset'language'percent-encoded`, decoded, and whether
/// every `%` in it was an escape; none when it cannot be read.
fn extended_value(raw: &str) -> Option<(String, bool)> {
    let mut parts = raw.splitn(3, '\'');
    let (charset, _language, encoded) = (parts.next()?, parts.next()?, parts.next()?);
    let (bytes, clean) = escapes_decoded(encoded)?;
    let encoding = encoding_rs::Encoding::for_label(charset.trim().as_bytes())?;
    let text = encoding.decode_without_bom_handling_and_without_replacement(&bytes)?;
    Some((text.into_owned(), clean))
}

/// `text` with every `%XX` escape turned into its byte, and whether every
/// `%` was one (one followed by other characters stays as it is); none when
/// the text ends inside an escape.
fn escapes_decoded(text: &str) -> Option<(Vec<u8>, bool)> {
    let raw = text.as_bytes();
    let mut bytes = Vec::with_capacity(raw.len());
    let mut clean = true;
    let mut at = 0;
    while at < raw.len() {
        if raw[at] == b'%' {
            let hex = raw.get(at + 1..at + 3)?;
            let digit = |b: u8| char::from(b).to_digit(16);
            if let (Some(high), Some(low)) = (digit(hex[0]), digit(hex[1])) {
                bytes.push(u8::try_from(high * 16 + low).ok()?);
                at += 3;
                continue;
            }
            clean = false;
        }
        bytes.push(raw[at]);
        at += 1;
    }
    Some((bytes, clean))
}

/// `url_file_name` is the last non-empty segment of `url`'s path,
/// percent-decoded; none for a bare host.
#[must_use]
pub fn url_file_name(url: &Url) -> Option<String> {
    let segment = url.path_segments()?.rev().find(|s| !s.is_empty())?;
    Some(percent_decoded(segment))
}

/// Splits header parameters on `;` outside quotes.
fn split_params(value: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut quoted = false;
    let mut escaped = false;
    let mut start = 0;
    for (at, c) in value.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ';' if !quoted => {
                parts.push(&value[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&value[start..]);
    parts
}

/// A quoted-string without its quotes and escapes, or a token as it is.
fn unquote(raw: &str) -> String {
    let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) else {
        return raw.to_owned();
    };
    let mut out = String::with_capacity(inner.len());
    let mut escaped = false;
    for c in inner.chars() {
        if escaped || c != '\\' {
            out.push(c);
            escaped = false;
        } else {
            escaped = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_disposition_names_the_file_preferring_the_extended_form() {
        let cases = [
            ("attachment; filename=\"report.pdf\"", Some("report.pdf")),
            ("attachment; filename=plain.txt", Some("plain.txt")),
            (
                "attachment; filename=\"a;b \\\"c\\\".pdf\"",
                Some("a;b \"c\".pdf"),
            ),
            (
                "attachment; filename=\"fallback.pdf\"; filename*=UTF-8''R%C3%A9sum%C3%A9.pdf",
                Some("Résumé.pdf"),
            ),
            (
                "attachment; filename=\"fallback.pdf\"; filename*=UTF-8''Gr%C3%BC%C3%9Fe%20Q3.pdf",
                Some("Grüße Q3.pdf"),
            ),
            (
                "attachment; filename*=iso-8859-1'en'caf%E9.txt",
                Some("café.txt"),
            ),
            ("inline", None),
            ("attachment; filename=\"\"", None),
        ];
        for (value, expected) in cases {
            assert_eq!(disposition_file_name(value).as_deref(), expected, "{value}");
        }
    }

    #[test]
    fn the_disposition_names_the_file_before_the_url_does() {
        let url = Url::parse("http://h/docs/Q3%20report.pdf?sig=abcdef").expect("a URL");
        let mut headers = HeaderMap::new();
        assert_eq!(
            offered_file_name(&headers, &url).as_deref(),
            Some("Q3 report.pdf")
        );
        headers.insert(
            CONTENT_DISPOSITION,
            reqwest::header::HeaderValue::from_bytes(
                "attachment; filename=\"Grüße.pdf\"".as_bytes(),
            )
            .expect("a header value"),
        );
        assert_eq!(
            offered_file_name(&headers, &url).as_deref(),
            Some("Grüße.pdf")
        );
        headers.insert(
            CONTENT_DISPOSITION,
            reqwest::header::HeaderValue::from_static("inline"),
        );
        assert_eq!(
            offered_file_name(&headers, &url).as_deref(),
            Some("Q3 report.pdf")
        );
    }

    #[test]
    fn a_url_names_the_file_by_its_last_non_empty_segment() {
        let name = |text: &str| url_file_name(&Url::parse(text).expect("a URL"));
        assert_eq!(
            name("https://h/a/b/report%201.pdf?sig=x").as_deref(),
            Some("report 1.pdf")
        );
        assert_eq!(
            name("http://h/docs/Q3%20report.pdf?sig=abcdef").as_deref(),
            Some("Q3 report.pdf")
        );
        assert_eq!(name("http://h/dir/").as_deref(), Some("dir"));
        assert_eq!(name("http://h/"), None);
    }

    #[test]
    fn percent_escapes_become_bytes_and_a_broken_one_stays() {
        let cases: &[(&str, &[u8])] = &[
            ("a%20b", b"a b"),
            ("%C3%A9", "é".as_bytes()),
            ("100%", b"100%"),
            ("%zz%4", b"%zz%4"),
            ("%e9", b"\xe9"),
        ];
        for (text, bytes) in cases {
            assert_eq!(percent_decoded_bytes(text), *bytes, "{text}");
        }
        assert_eq!(percent_decoded("%e9t%C3%A9"), "\u{FFFD}té");
    }

    #[test]
    fn a_sign_is_not_a_hex_digit() {
        // `%+4` is no escape: two hex digits must follow the `%`, and a
        // number parser's leading `+` is not one.
        for text in ["%+41", "a%+fb", "%+0"] {
            assert_eq!(percent_decoded(text), text, "{text}");
        }
        assert_eq!(
            disposition_file_name("attachment; filename*=UTF-8''Q%+33.pdf").as_deref(),
            Some("Q%+33.pdf")
        );
    }
}
