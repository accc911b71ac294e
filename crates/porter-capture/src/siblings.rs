//! What the fields beside a base64 string say of it: a media type
//! (`contentType`, `mimeType`, `mediaType`) and a file name (`fileName`,
//! `filename`, `name`, `path`). Read from parsed JSON where there is some,
//! and from the text around the string where there is only text — which may
//! be broken JSON, so the reading is tolerant and bounded.

use serde_json::{Map, Value};

use crate::scan::backslashes_before;

/// `Hints` is what sibling fields say of a string.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Hints {
    /// A media type named by a sibling field.
    pub declared_type: Option<String>,
    /// A file name or path named by a sibling field.
    pub name: Option<String>,
}

impl Hints {
    /// These hints, with `other`'s filling what these lack.
    pub(crate) fn or(self, other: &Hints) -> Hints {
        Hints {
            declared_type: self.declared_type.or_else(|| other.declared_type.clone()),
            name: self.name.or_else(|| other.name.clone()),
        }
    }

    fn take(&mut self, key: &str, value: &str, name_rank: &mut u8) {
        match field(key) {
            Some(Field::Type) if self.declared_type.is_none() && is_media_type(value) => {
                self.declared_type = Some(value.trim().to_owned());
            }
            Some(Field::Name(rank)) if rank < *name_rank && is_name(value) => {
                self.name = Some(value.to_owned());
                *name_rank = rank;
            }
            _ => {}
        }
    }
}

/// `SIBLING_VALUE_BYTES` is the longest sibling value read as a type or
/// name: longer strings are content, not labels.
const SIBLING_VALUE_BYTES: usize = 1024;

/// `SIBLING_WINDOW_BYTES` is how far before and after a string the text is
/// read for its object's other fields. Labels sit beside the data in every
/// real result; the bound keeps a text holding many long strings linear.
pub(crate) const SIBLING_WINDOW_BYTES: usize = 64 * 1024;

enum Field {
    Type,
    /// A name field, ranked: a file name beats a name beats a path.
    Name(u8),
}

/// Which kind of label a key is, compared without case, `_` or `-`
/// (`mimeType`, `mime_type`, `Content-Type` all count).
fn field(key: &str) -> Option<Field> {
    if key.len() > 16 {
        return None;
    }
    let folded: String = key
        .chars()
        .filter(|c| !matches!(c, '_' | '-'))
        .map(|c| c.to_ascii_lowercase())
        .collect();
    match folded.as_str() {
        "contenttype" | "mimetype" | "mediatype" => Some(Field::Type),
        "filename" => Some(Field::Name(0)),
        "name" => Some(Field::Name(1)),
        "path" => Some(Field::Name(2)),
        _ => None,
    }
}

/// Whether a value reads as a media type (`type/subtype`, parameters
/// allowed).
fn is_media_type(value: &str) -> bool {
    let essence = value.split(';').next().unwrap_or_default().trim();
    let Some((kind, sub)) = essence.split_once('/') else {
        return false;
    };
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    value.len() <= 255 && token(kind) && token(sub)
}

fn is_name(value: &str) -> bool {
    !value.trim().is_empty() && value.len() <= SIBLING_VALUE_BYTES
}

/// The hints in a parsed object's string members.
pub(crate) fn in_object(object: &Map<String, Value>) -> Hints {
    let mut hints = Hints::default();
    let mut name_rank = u8::MAX;
    for (key, value) in object {
        if let Value::String(value) = value {
            hints.take(key, value, &mut name_rank);
        }
    }
    hints
}

/// The hints in the text around a JSON string value `"…"` whose quotes are
/// at `open_quote` and `close_quote`: the other members of the object it
/// sits in. Broken JSON is read as far as it goes: an unclosed object ends
/// at the window's edge. A string that is an array element has no siblings.
pub(crate) fn in_text(bytes: &[u8], open_quote: usize, close_quote: usize) -> Hints {
    let floor = open_quote.saturating_sub(SIBLING_WINDOW_BYTES);
    let ceiling = close_quote
        .saturating_add(SIBLING_WINDOW_BYTES)
        .min(bytes.len());
    let Some(begin) = object_start(bytes, floor, open_quote) else {
        return Hints::default();
    };
    let finish = object_end(bytes, close_quote + 1, ceiling);
    let mut hints = Hints::default();
    let mut name_rank = u8::MAX;
    for (from, to) in [(begin, open_quote), (close_quote + 1, finish)] {
        members(&bytes[from..to], |key, value| {
            hints.take(key, value, &mut name_rank);
        });
    }
    hints
}

/// Where the members of the object holding `at` begin (just past its `{`),
/// read backwards and skipping strings and nested values; `floor` when no
/// `{` is found within the window (broken or cut text: read what is there).
/// `None` when `at` is an array element.
fn object_start(bytes: &[u8], floor: usize, at: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = at;
    while i > floor {
        i -= 1;
        match bytes[i] {
            b'"' if backslashes_before(bytes, i).is_multiple_of(2) => {
                // Back to the string's opening quote.
                while i > floor {
                    i -= 1;
                    if bytes[i] == b'"' && backslashes_before(bytes, i).is_multiple_of(2) {
                        break;
                    }
                }
            }
            b'}' | b']' => depth += 1,
            b'{' if depth == 0 => return Some(i + 1),
            b'[' if depth == 0 => return None,
            b'{' | b'[' => depth -= 1,
            _ => {}
        }
    }
    Some(floor)
}

/// Where the object holding `from` ends (its `}`), or `ceiling` if it does
/// not end within the window.
fn object_end(bytes: &[u8], from: usize, ceiling: usize) -> usize {
    let mut depth = 0usize;
    let mut i = from;
    while i < ceiling {
        match bytes[i] {
            b'"' => i = string_end(bytes, i, ceiling),
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth == 0 => return i,
            b'}' | b']' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    ceiling
}

/// The index of the quote closing the string opened at `open`, or
/// `ceiling` when it does not close.
fn string_end(bytes: &[u8], open: usize, ceiling: usize) -> usize {
    let mut i = open + 1;
    while i < ceiling {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i,
            _ => i += 1,
        }
    }
    ceiling
}

/// Calls `found` with each `"key": "value"` member at the top level of
/// `text` (a piece of an object's inside). Nested values are skipped; what
/// is not JSON is stepped over a byte at a time.
fn members(text: &[u8], mut found: impl FnMut(&str, &str)) {
    let end = text.len();
    let mut i = 0;
    let mut depth = 0usize;
    let mut key: Option<(usize, usize)> = None;
    let mut after_colon = false;
    while i < end {
        match text[i] {
            b'"' => {
                let close = string_end(text, i, end);
                if depth == 0 {
                    if after_colon {
                        if let Some((ks, ke)) = key.take()
                            && close < end
                            && close - i - 1 <= SIBLING_VALUE_BYTES
                            && let (Some(k), Some(v)) =
                                (unescape(&text[ks..ke]), unescape(&text[i + 1..close]))
                        {
                            found(&k, &v);
                        }
                        after_colon = false;
                    } else {
                        key = Some((i + 1, close.min(end)));
                    }
                }
                i = close;
            }
            b':' if depth == 0 && key.is_some() => after_colon = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                key = None;
                after_colon = false;
            }
            b' ' | b'\t' | b'\r' | b'\n' => {}
            _ if depth == 0 => after_colon = false,
            _ => {}
        }
        i += 1;
    }
}

/// A JSON string's raw inside as text, its escapes resolved.
fn unescape(raw: &[u8]) -> Option<String> {
    if raw.len() > SIBLING_VALUE_BYTES {
        return None;
    }
    let text = std::str::from_utf8(raw).ok()?;
    if !text.contains('\\') {
        return Some(text.to_owned());
    }
    serde_json::from_str(&format!("\"{text}\"")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hints_around(text: &str) -> Hints {
        let at = text.find("\"XXXX\"").expect("marker");
        in_text(text.as_bytes(), at, at + 5)
    }

    fn hints(declared_type: Option<&str>, name: Option<&str>) -> Hints {
        Hints {
            declared_type: declared_type.map(str::to_owned),
            name: name.map(str::to_owned),
        }
    }

    #[test]
    fn siblings_are_read_from_the_object_the_string_sits_in() {
        let cases = [
            (
                r#"{"mimeType": "application/pdf", "data": "XXXX", "fileName": "a.pdf"}"#,
                hints(Some("application/pdf"), Some("a.pdf")),
            ),
            (
                r#"{"data":"XXXX","content_type":"image/png"}"#,
                hints(Some("image/png"), None),
            ),
            (
                r#"{"Content-Type":"image/png; q=1","data":"XXXX"}"#,
                hints(Some("image/png; q=1"), None),
            ),
            (
                r#"[{"name":"a.png","data":"1"},{"data":"XXXX","path":"x/b.pdf"},{"name":"c.gif"}]"#,
                hints(None, Some("x/b.pdf")),
            ),
            (
                r#"{"outer":{"mimeType":"image/gif"},"data":"XXXX","name":"n\u0041.txt"}"#,
                hints(None, Some("nA.txt")),
            ),
            (
                r#"{"path":"p.bin","name":"n.bin","data":"XXXX","filename":"f.bin"}"#,
                hints(None, Some("f.bin")),
            ),
            (
                r#"{"mimeType":"not a type","note":"mimeType: image/png","data":"XXXX"}"#,
                hints(None, None),
            ),
            (r#"["image/png", "XXXX"]"#, hints(None, None)),
            (
                r#"{"a": "XXXX" , broken "mimeType": "image/png""#,
                hints(Some("image/png"), None),
            ),
            (
                r#"oops "mimeType": "image/png", "data": "XXXX" and more"#,
                hints(Some("image/png"), None),
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(hints_around(text), expected, "{text}");
        }
    }

    #[test]
    fn braces_and_quotes_inside_strings_do_not_confuse_the_reading() {
        let text = r#"{"mimeType":"image/png","note":"a } and a \" and a {","data":"XXXX"}"#;
        assert_eq!(hints_around(text), hints(Some("image/png"), None));
    }

    #[test]
    fn parsed_objects_give_the_same_hints() {
        let value = serde_json::json!({
            "mediaType": "audio/wav", "name": "a.wav", "data": "XXXX", "size": 3
        });
        let object = value.as_object().expect("an object");
        assert_eq!(in_object(object), hints(Some("audio/wav"), Some("a.wav")));
    }
}
