//! Office packages and workbooks: what a zip holds, the package and XML
//! readers, and the workbook walk.
//!
//! Word and `PowerPoint` packages are read by our own streaming reader over
//! `zip` and `quick-xml` (no DOM), so that every limit holds: decompressed
//! XML across all parts (`office_xml_bytes`) and nesting (`xml_depth`); the
//! one reader of each format ([`crate::markdown`]) holds the text to
//! `office_text_bytes`. Workbooks are read by calamine (XLS by our own
//! reader), after the package has been proven small enough to give it, and
//! walked once into whatever [`cells::SheetSink`] asks.

pub(crate) mod cells;
mod cfb;
pub(crate) mod package;
#[cfg(test)]
mod text;
pub(crate) mod workbook;
mod xls;
pub(crate) mod xml;

use package::Package;

use crate::options::Options;

/// What a zip package holds, by its relationships or main part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ZipKind {
    /// A Word document, read by [`crate::markdown::docx`].
    Docx,
    /// A `PowerPoint` presentation, read by [`crate::markdown::pptx`].
    Pptx,
    /// An Excel workbook, read by [`workbook`].
    Xlsx,
    /// An `OpenDocument` spreadsheet, read by [`workbook`].
    Ods,
    /// A zip that is no Office package: listed as an archive.
    Plain,
}

/// `CLASSIFY_XML_BYTES` is the most XML decompressed to tell what a zip
/// holds: its `[Content_Types].xml` and `_rels/.rels` are small in every
/// real package, so a bomb there only makes the zip a plain one.
const CLASSIFY_XML_BYTES: u64 = 16 * 1024 * 1024;

/// The `mimetype` entry that marks an `OpenDocument` spreadsheet.
const ODS_MIMETYPE: &str = "application/vnd.oasis.opendocument.spreadsheet";

/// Tells what a zip package is from the package itself (its `mimetype`,
/// its main-part relationship and that part's content type), never from a
/// file name. Anything unreadable or unrecognised is [`ZipKind::Plain`].
pub(crate) fn zip_kind(bytes: &[u8], options: &Options) -> ZipKind {
    let mut limits = options.clone();
    limits.office_xml_bytes = options.office_xml_bytes.min(CLASSIFY_XML_BYTES);
    let Ok(mut package) = Package::open(bytes, &limits) else {
        return ZipKind::Plain;
    };
    if package.mimetype().is_some_and(|m| m == ODS_MIMETYPE) {
        return ZipKind::Ods;
    }
    let Ok(Some(main)) = package.main_part() else {
        return ZipKind::Plain;
    };
    let declared = package.content_type(&main).ok().flatten();
    declared
        .as_deref()
        .and_then(kind_of_content_type)
        .or_else(|| kind_of_main_part(&main))
        .unwrap_or(ZipKind::Plain)
}

/// Which workbook format `workbook` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WorkbookFormat {
    /// Office Open XML (a zip of XML parts).
    Xlsx,
    /// Legacy binary Excel 97-2003 (BIFF8 in a compound file).
    Xls,
    /// `OpenDocument` spreadsheet (a zip with `content.xml`).
    Ods,
}

/// The kind a main part's content type names, for the Office Open XML
/// documents, templates and macro-enabled variants.
fn kind_of_content_type(content_type: &str) -> Option<ZipKind> {
    let lower = content_type.to_ascii_lowercase();
    if !lower.ends_with(".main+xml") {
        return None;
    }
    if lower.contains("wordprocessingml") || lower.contains("ms-word.") {
        Some(ZipKind::Docx)
    } else if lower.contains("presentationml") || lower.contains("ms-powerpoint.") {
        Some(ZipKind::Pptx)
    } else if lower.contains("spreadsheetml") || lower.contains("ms-excel.") {
        Some(ZipKind::Xlsx)
    } else {
        None
    }
}

/// The kind a main part's usual name stands for, when no content type says.
fn kind_of_main_part(main: &str) -> Option<ZipKind> {
    match main.to_ascii_lowercase().as_str() {
        "word/document.xml" => Some(ZipKind::Docx),
        "ppt/presentation.xml" => Some(ZipKind::Pptx),
        "xl/workbook.xml" => Some(ZipKind::Xlsx),
        _ => None,
    }
}

// Fixtures are literal XML and bytes put together with `format!`, which
// reads more plainly here than a chain of `write!` calls.
#[allow(clippy::format_collect, clippy::format_push_string)]
#[cfg(test)]
pub(crate) mod tests {
    use std::io::{Cursor, Write};

    use zip::write::SimpleFileOptions;

    use super::*;

    /// A zip made of `parts` (name, content), deflated.
    pub(crate) fn zip_of(parts: &[(&str, &str)]) -> Vec<u8> {
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, content) in parts {
            writer
                .start_file(*name, SimpleFileOptions::default())
                .expect("a fresh zip takes a new entry");
            writer
                .write_all(content.as_bytes())
                .expect("writing to memory cannot fail");
        }
        writer
            .finish()
            .expect("finishing an in-memory zip cannot fail")
            .into_inner()
    }

    /// The package relationships of a package whose main part is `main`.
    pub(crate) fn root_rels(main: &str) -> String {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="{main}"/></Relationships>"#
        )
    }

    /// A content types part declaring `main` with `content_type`.
    pub(crate) fn content_types(main: &str, content_type: &str) -> String {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/{main}" ContentType="{content_type}"/></Types>"#
        )
    }

    #[test]
    fn a_package_is_known_by_its_main_part_and_content_type_not_its_names() {
        let word =
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml";
        let slides =
            "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml";
        let sheets = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml";
        let cases: Vec<(&str, Vec<u8>, ZipKind)> = vec![
            (
                "a docx whose main part has an unusual name",
                zip_of(&[
                    ("_rels/.rels", &root_rels("text/main.xml")),
                    ("[Content_Types].xml", &content_types("text/main.xml", word)),
                    ("text/main.xml", "<w:document/>"),
                ]),
                ZipKind::Docx,
            ),
            (
                "a pptx",
                zip_of(&[
                    ("_rels/.rels", &root_rels("ppt/presentation.xml")),
                    (
                        "[Content_Types].xml",
                        &content_types("ppt/presentation.xml", slides),
                    ),
                ]),
                ZipKind::Pptx,
            ),
            (
                "an xlsx with an absolute target",
                zip_of(&[
                    ("_rels/.rels", &root_rels("/xl/workbook.xml")),
                    (
                        "[Content_Types].xml",
                        &content_types("xl/workbook.xml", sheets),
                    ),
                ]),
                ZipKind::Xlsx,
            ),
            (
                "a package with no content type falls back to the main part's usual name",
                zip_of(&[("_rels/.rels", &root_rels("word/document.xml"))]),
                ZipKind::Docx,
            ),
            (
                "an ods by its mimetype entry",
                zip_of(&[("mimetype", ODS_MIMETYPE), ("content.xml", "<x/>")]),
                ZipKind::Ods,
            ),
            (
                "an odt is no spreadsheet",
                zip_of(&[("mimetype", "application/vnd.oasis.opendocument.text")]),
                ZipKind::Plain,
            ),
            (
                "a zip with Office-like names but no relationships",
                zip_of(&[("word/document.xml", "<w:document/>")]),
                ZipKind::Plain,
            ),
            (
                "bytes that are no zip",
                b"PK\x03\x04 broken".to_vec(),
                ZipKind::Plain,
            ),
        ];
        for (what, bytes, expected) in cases {
            assert_eq!(zip_kind(&bytes, &Options::default()), expected, "{what}");
        }
    }
}
