//! Sentences that describe a file instead of showing it, sizes as people
//! read them, and the note that says when the name and the bytes disagree.

/// Formats a byte count the way the descriptions say it: "1 byte",
/// "13 bytes", "4.9 KiB", "3.6 MiB", "1 GiB" (a whole number loses its ".0").
#[must_use]
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    match bytes {
        1 => "1 byte".to_owned(),
        0..1024 => format!("{bytes} bytes"),
        _ => {
            let mut value = bytes as f64 / 1024.0;
            let mut unit = 0;
            // Round first, so 1023.97 KiB reads "1.0 MiB" rather than "1024.0 KiB".
            while (value * 10.0).round() / 10.0 >= 1024.0 && unit + 1 < UNITS.len() {
                value /= 1024.0;
                unit += 1;
            }
            let tenths = (value * 10.0).round() / 10.0;
            if tenths.fract() == 0.0 {
                format!("{tenths:.0} {}", UNITS[unit])
            } else {
                format!("{tenths:.1} {}", UNITS[unit])
            }
        }
    }
}

/// Formats a count with thousands separators ("100,000"), as the notes and
/// headers print line and entry counts.
#[must_use]
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The name as it is shown: control characters (including bidi overrides
/// and other invisible formatting) become `?`, so a name cannot rewrite the
/// line it is printed in.
pub(crate) fn shown_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| if is_invisible(c) { '?' } else { c })
        .collect();
    if cleaned.trim().is_empty() {
        "the file".to_owned()
    } else {
        cleaned
    }
}

/// Whether `c` would change how a line looks without showing itself:
/// control characters, bidi embeddings and overrides, isolates, and the
/// line and paragraph separators.
pub(crate) fn is_invisible(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2028}' | '\u{2029}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FEFF}')
}

/// The sentence for a file that is only described:
/// "<name>: <what> (<mime>), <size>. It is not shown because <reason>."
/// followed, when the caller knows one, by the link a person can open.
pub(crate) fn described(
    name: &str,
    what: &str,
    mime: &str,
    size: u64,
    reason: &str,
    link: Option<&str>,
) -> String {
    let mut text = format!(
        "{name}: {what} ({mime}), {}. It is not shown because {reason}.",
        human_size(size)
    );
    push_link(&mut text, link);
    text
}

/// Appends "A person can open it at <link>." when there is a link.
pub(crate) fn push_link(text: &mut String, link: Option<&str>) {
    if let Some(link) = link.filter(|l| !l.trim().is_empty()) {
        text.push_str(" A person can open it at ");
        text.push_str(link.trim());
        text.push('.');
    }
}

/// The media type without parameters, lower-cased: "Text/HTML; charset=x"
/// becomes "text/html".
pub(crate) fn essence(mime: &str) -> String {
    mime.split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// Whether a media type (parameters and case aside) is text, under its own
/// name or another (JSON, XML, YAML, scripts, SQL, RTF…): the one list the
/// file view, the capture scanner and the gateway's web tools judge by.
/// An SVG (`image/svg+xml`) counts as text here; a caller that treats
/// images as files whatever their format says so itself.
#[must_use]
pub fn is_text_media_type(mime: &str) -> bool {
    let mime = essence(mime);
    mime.starts_with("text/")
        || mime.ends_with("+xml")
        || mime.ends_with("+json")
        || mime.ends_with("+yaml")
        || matches!(
            mime.as_str(),
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-javascript"
                | "application/ecmascript"
                | "application/x-sh"
                | "application/x-shellscript"
                | "application/x-yaml"
                | "application/yaml"
                | "application/toml"
                | "application/sql"
                | "application/x-sql"
                | "application/x-tex"
                | "application/x-latex"
                | "application/rtf"
                | "application/x-httpd-php"
                | "application/x-perl"
                | "application/x-python"
                | "application/x-ruby"
                | "application/graphql"
                | "application/x-ndjson"
                | "application/jsonl"
                | "application/ld+json"
                | "application/x-subrip"
                | "application/x-ipynb+json"
                | "application/csv"
                | "application/x-www-form-urlencoded"
        )
}

/// Types that say nothing about the content, and so never disagree with it.
fn is_uninformative(mime: &str) -> bool {
    matches!(
        essence(mime).as_str(),
        "" | "application/octet-stream" | "binary/octet-stream" | "application/unknown" | "*/*"
    )
}

/// Families of types that hold the same bytes under several names: a zip
/// is also a jar, a tar.gz is also gzip, and so on.
fn family(mime: &str) -> &str {
    match mime {
        "application/zip"
        | "application/x-zip-compressed"
        | "application/java-archive"
        | "application/x-java-archive"
        | "application/vnd.android.package-archive"
        | "application/epub+zip" => "zip",
        "application/gzip"
        | "application/x-gzip"
        | "application/x-compressed-tar"
        | "application/x-tgz" => "gzip",
        "application/x-bzip2" | "application/x-bzip-compressed-tar" | "application/x-bzip" => {
            "bzip2"
        }
        "application/x-xz" | "application/x-xz-compressed-tar" => "xz",
        "application/zstd" | "application/x-zstd" | "application/x-zstd-compressed-tar" => "zstd",
        "application/x-tar" | "application/tar" => "tar",
        "audio/mpeg" | "audio/mp3" | "audio/x-mpeg" | "audio/mpeg3" => "mp3",
        "audio/wav" | "audio/x-wav" | "audio/wave" | "audio/vnd.wave" => "wav",
        "audio/mp4" | "audio/x-m4a" | "audio/m4a" | "audio/aac" => "m4a",
        "video/mp4" | "application/mp4" | "video/x-m4v" => "mp4",
        "audio/ogg" | "video/ogg" | "application/ogg" | "audio/opus" => "ogg",
        "video/webm" | "audio/webm" | "video/x-matroska" | "audio/x-matroska" => "mkv",
        "image/jpeg" | "image/jpg" | "image/pjpeg" => "jpeg",
        "image/bmp" | "image/x-bmp" | "image/x-ms-bmp" => "bmp",
        "image/tiff" | "image/tif" => "tiff",
        "audio/flac" | "audio/x-flac" => "flac",
        "application/vnd.ms-excel"
        | "application/msword"
        | "application/vnd.ms-powerpoint"
        | "application/x-ole-storage" => "ole",
        other => other,
    }
}

/// Whether a claimed type (from a name or a declaration) agrees with the
/// type the bytes show.
pub(crate) fn agrees(claimed: &str, found: &str) -> bool {
    let claimed = essence(claimed);
    let found = essence(found);
    if is_uninformative(&claimed) || claimed == found {
        return true;
    }
    if is_text_media_type(&claimed) && is_text_media_type(&found) {
        return true;
    }
    // A compressed tar found by its bytes agrees with a name that says only
    // the compression, and the other way round.
    let (a, b) = (family(&claimed), family(&found));
    a == b
        || (found.contains("tar")
            && (a == "gzip" || a == "bzip2" || a == "xz" || a == "zstd" || a == "tar"))
}

/// The sentence that says both types when they disagree, e.g.
/// "image/jpeg by its name, but its bytes are text/plain."
pub(crate) fn type_note(
    name_type: Option<&str>,
    declared: Option<&str>,
    found: &str,
) -> Option<String> {
    let found = essence(found);
    let mut parts = Vec::new();
    if let Some(declared) = declared.filter(|d| !agrees(d, &found)) {
        parts.push(format!("{} as declared", essence(declared)));
    }
    if let Some(named) = name_type.filter(|n| !agrees(n, &found))
        && !parts.iter().any(|p| p.starts_with(&essence(named)))
    {
        parts.push(format!("{} by its name", essence(named)));
    }
    if parts.is_empty() {
        return None;
    }
    Some(format!(
        "{}, but its bytes are {found}.",
        parts.join(" and ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_say_them() {
        let cases = [
            (0, "0 bytes"),
            (1, "1 byte"),
            (13, "13 bytes"),
            (1023, "1023 bytes"),
            (1024, "1 KiB"),
            (5018, "4.9 KiB"),
            (3_750_000, "3.6 MiB"),
            (1024 * 1024 - 1, "1 MiB"),
            (1024 * 1024 * 1024, "1 GiB"),
            (64 * 1024 * 1024, "64 MiB"),
        ];
        for (bytes, expected) in cases {
            assert_eq!(human_size(bytes), expected, "{bytes} bytes");
        }
    }

    #[test]
    fn counts_carry_thousands_separators() {
        for (n, expected) in [
            (0, "0"),
            (999, "999"),
            (1000, "1,000"),
            (100_000, "100,000"),
            (1_234_567, "1,234,567"),
        ] {
            assert_eq!(count(n), expected);
        }
    }

    #[test]
    fn control_and_bidi_characters_in_a_name_are_shown_as_question_marks() {
        assert_eq!(shown_name("a\u{202E}gpj.exe"), "a?gpj.exe");
        assert_eq!(shown_name("line\nbreak\t.txt"), "line?break?.txt");
        assert_eq!(shown_name(""), "the file");
    }

    #[test]
    fn a_described_file_names_what_it_is_why_and_the_link() {
        let text = described(
            "tool.bin",
            "binary data",
            "application/octet-stream",
            13,
            "porter has no reader for it",
            Some("https://chat.example/pl/1"),
        );
        assert_eq!(
            text,
            "tool.bin: binary data (application/octet-stream), 13 bytes. It is not shown because \
             porter has no reader for it. A person can open it at https://chat.example/pl/1."
        );
    }

    #[test]
    fn the_type_note_says_both_types_only_when_they_disagree() {
        let cases = [
            (
                Some("image/jpeg"),
                None,
                "text/plain",
                Some("image/jpeg by its name, but its bytes are text/plain."),
            ),
            (Some("application/json"), None, "text/plain", None),
            (Some("application/octet-stream"), None, "image/png", None),
            (None, Some("image/png; x=y"), "image/png", None),
            (
                None,
                Some("image/png"),
                "application/pdf",
                Some("image/png as declared, but its bytes are application/pdf."),
            ),
            (
                Some("application/gzip"),
                None,
                "application/x-compressed-tar",
                None,
            ),
            (
                Some("application/java-archive"),
                None,
                "application/zip",
                None,
            ),
            (
                Some("text/plain"),
                Some("image/gif"),
                "image/png",
                Some(
                    "image/gif as declared and text/plain by its name, but its bytes are image/png.",
                ),
            ),
        ];
        for (named, declared, found, expected) in cases {
            assert_eq!(
                type_note(named, declared, found).as_deref(),
                expected,
                "{named:?} {declared:?} {found}"
            );
        }
    }
}
