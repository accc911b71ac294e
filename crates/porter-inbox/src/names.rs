//! File names in the inbox: what an offered name becomes on disk.
//!
//! A name comes from a result (a resource URI, a Content-Disposition header)
//! or from the call's arguments, so it is untrusted: only its last segment is
//! kept, transliterated to ASCII and cut to `[A-Za-z0-9._-]`, which is a name
//! every file system, shell and URL takes as it is.

/// `NAME_MAX_CHARS` is the longest name the inbox gives a file (before a
/// `-2` is added on a clash), so that a path stays readable in a stub.
pub const NAME_MAX_CHARS: usize = 100;

/// `EXTENSION_MAX_CHARS` is the longest extension (with its dot) kept when a
/// long name is cut; a longer "extension" is just part of the stem.
const EXTENSION_MAX_CHARS: usize = 16;

/// `DIR_MAX_SEGMENTS` bounds how deep a folder under the inbox root may go.
const DIR_MAX_SEGMENTS: usize = 8;

/// Cleans one path segment by the inbox's rules; the result may be empty
/// (the caller then falls back to another name).
#[must_use]
pub fn clean_segment(raw: &str) -> String {
    let ascii = deunicode::deunicode(raw);
    let mut out = String::with_capacity(ascii.len());
    for c in ascii.chars() {
        let c = if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
            c
        } else {
            '-'
        };
        // A dash next to a dot or another dash adds nothing but noise
        // ("report (final).pdf" reads "report-final.pdf").
        if c == '-' && out.ends_with(['-', '.']) {
            continue;
        }
        if c == '.' && out.ends_with('-') {
            out.pop();
        }
        out.push(c);
    }
    let trimmed = out
        .trim_start_matches(['.', '-'])
        .trim_end_matches(['.', '-']);
    cap_length(trimmed)
}

/// Cuts a clean name to [`NAME_MAX_CHARS`], keeping a short extension.
fn cap_length(name: &str) -> String {
    if name.len() <= NAME_MAX_CHARS {
        return name.to_owned();
    }
    let (stem, ext) = split_extension(name);
    let ext = if ext.len() <= EXTENSION_MAX_CHARS {
        ext
    } else {
        ""
    };
    let stem = stem
        .get(..NAME_MAX_CHARS - ext.len())
        .unwrap_or(stem)
        .trim_end_matches(['.', '-']);
    format!("{stem}{ext}")
}

/// Splits `report.final.pdf` into (`report.final`, `.pdf`); a name whose only
/// dot is its first character has no extension.
#[must_use]
pub fn split_extension(name: &str) -> (&str, &str) {
    match name.rfind('.') {
        Some(at) if at > 0 => name.split_at(at),
        _ => (name, ""),
    }
}

/// The name a file gets in the inbox: the offered name's last segment, else
/// the fallback's, else `file`; a name without an extension gets one from
/// the media type when the type has a well-known one.
#[must_use]
pub fn file_name(offered: Option<&str>, fallback: &str, media_type: &str) -> String {
    let mut name = offered
        .map(|n| clean_segment(last_segment(n)))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| clean_segment(last_segment(fallback)));
    if name.is_empty() {
        "file".clone_into(&mut name);
    }
    if split_extension(&name).1.is_empty()
        && let Some(ext) = extension_for(media_type)
    {
        name = cap_length(&format!("{name}.{ext}"));
    }
    name
}

/// The last segment of a path or URL-ish name, split on both slashes.
fn last_segment(name: &str) -> &str {
    name.rsplit(['/', '\\']).next().unwrap_or_default()
}

/// A folder under the inbox root, cleaned segment by segment (`..`, `.` and
/// empty segments are dropped); `None` when nothing is left.
#[must_use]
pub fn clean_dir(dir: &str) -> Option<String> {
    let segments: Vec<String> = dir
        .split(['/', '\\'])
        .map(clean_segment)
        .filter(|s| !s.is_empty())
        .take(DIR_MAX_SEGMENTS)
        .collect();
    (!segments.is_empty()).then(|| segments.join("/"))
}

/// The `n`-th candidate for a name: the name itself first, then `name-2.ext`,
/// `name-3.ext`, …
#[must_use]
pub fn numbered(name: &str, n: u32) -> String {
    if n <= 1 {
        return name.to_owned();
    }
    let (stem, ext) = split_extension(name);
    format!("{stem}-{n}{ext}")
}

/// Whether `path` is one the inbox could have made: relative, `/`-separated,
/// every segment a clean name. Readers check this before touching the disk,
/// so no `..`, absolute path or odd character gets that far.
#[must_use]
pub fn is_inbox_path(path: &str) -> bool {
    !path.is_empty()
        && path.len() <= 4096
        && path.split('/').all(|segment| {
            !segment.is_empty()
                && !segment.starts_with('.')
                && segment
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        })
}

/// The usual extension of a media type, for names offered without one.
fn extension_for(media_type: &str) -> Option<&'static str> {
    Some(match media_type {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/bmp" => "bmp",
        "image/tiff" => "tif",
        "image/svg+xml" => "svg",
        "audio/mpeg" => "mp3",
        "audio/wav" | "audio/x-wav" => "wav",
        "audio/ogg" => "ogg",
        "video/mp4" => "mp4",
        "application/pdf" => "pdf",
        "application/zip" => "zip",
        "application/gzip" => "gz",
        "application/json" => "json",
        "application/xml" | "text/xml" => "xml",
        "text/plain" => "txt",
        "text/markdown" => "md",
        "text/html" => "html",
        "text/csv" => "csv",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document" => "docx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" => "xlsx",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation" => "pptx",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_transliterated_and_cut_to_the_safe_set() {
        let cases = [
            ("report.pdf", "report.pdf"),
            ("Résumé – 2026.pdf", "Resume-2026.pdf"),
            ("日本語.txt", "Ri-Ben-Yu.txt"),
            ("report (final).pdf", "report-final.pdf"),
            ("a\u{202E}fdp.exe", "afdp.exe"),
            ("...hidden", "hidden"),
            ("--dash", "dash"),
            ("..", ""),
            ("   ", ""),
            ("what?.txt", "what.txt"),
            ("tab\there", "tab-here"),
        ];
        for (raw, expected) in cases {
            assert_eq!(clean_segment(raw), expected, "{raw:?}");
        }
    }

    #[test]
    fn only_the_last_segment_of_an_offered_name_is_kept() {
        assert_eq!(
            file_name(Some("../../etc/passwd"), "tool", "text/plain"),
            "passwd.txt"
        );
        assert_eq!(
            file_name(
                Some("C:\\Users\\me\\secret.doc"),
                "tool",
                "application/msword"
            ),
            "secret.doc"
        );
        assert_eq!(
            file_name(Some("https://example.org/a/b/photo.png"), "x", "image/png"),
            "photo.png"
        );
    }

    #[test]
    fn an_empty_name_falls_back_to_the_fallback_then_to_file() {
        assert_eq!(
            file_name(None, "get_attachment", "application/pdf"),
            "get_attachment.pdf"
        );
        assert_eq!(file_name(Some("///"), "report.docx", "x/y"), "report.docx");
        assert_eq!(file_name(Some(""), "", "application/x-unknown"), "file");
        assert_eq!(file_name(Some("…"), "", "image/png"), "file.png");
    }

    #[test]
    fn a_name_with_an_extension_keeps_it_whatever_the_type() {
        assert_eq!(file_name(Some("notes.md"), "t", "image/png"), "notes.md");
    }

    #[test]
    fn a_long_name_is_capped_and_keeps_its_extension() {
        let long = format!("{}.pdf", "a".repeat(300));
        let name = file_name(Some(&long), "t", "application/pdf");
        assert_eq!(name.len(), NAME_MAX_CHARS);
        assert!(name.ends_with("a.pdf"), "{name}");
    }

    #[test]
    fn clashes_are_numbered_from_two_before_the_extension() {
        assert_eq!(numbered("report.pdf", 1), "report.pdf");
        assert_eq!(numbered("report.pdf", 2), "report-2.pdf");
        assert_eq!(numbered("archive.tar.gz", 3), "archive.tar-3.gz");
        assert_eq!(numbered("README", 2), "README-2");
    }

    #[test]
    fn folders_are_cleaned_segment_by_segment() {
        assert_eq!(
            clean_dir("web/example.org").as_deref(),
            Some("web/example.org")
        );
        assert_eq!(
            clean_dir("../../web//Ünï/./x y").as_deref(),
            Some("web/Uni/x-y")
        );
        assert_eq!(clean_dir("/.."), None);
    }

    #[test]
    fn only_clean_relative_paths_are_inbox_paths() {
        for good in ["a.pdf", "web/example.org/a-b_c.png"] {
            assert!(is_inbox_path(good), "{good}");
        }
        for bad in [
            "",
            "../x",
            "/etc/passwd",
            "a//b",
            "a/./b",
            "a\\b",
            ".hidden",
            "a b",
            "é",
        ] {
            assert!(!is_inbox_path(bad), "{bad}");
        }
    }
}
