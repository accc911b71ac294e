//! Real files of every kind the file view handles, made in code.
//!
//! Each generator is deterministic (the same bytes on every run) and quick,
//! and writes a file that its usual program opens: the Office files are
//! minimal but complete Open XML packages, the PDF has a correct
//! cross-reference table and a text content stream, the JPEG carries a
//! hand-built EXIF segment. The bytes are made once per process and shared.

use std::fmt::Write as _;
use std::io::{Cursor, Write};
use std::sync::OnceLock;

use bytes::Bytes;
use image::ImageEncoder;
use zip::write::SimpleFileOptions;

use crate::model::escape_markup;
use crate::seed::DemoFile;

/// `ALL_KINDS` lists every generated kind, in the order the demo posts them.
pub(crate) const ALL_KINDS: [DemoFile; 11] = [
    DemoFile::Text,
    DemoFile::Docx,
    DemoFile::Xlsx,
    DemoFile::Pptx,
    DemoFile::Zip,
    DemoFile::TarGz,
    DemoFile::SidewaysJpeg,
    DemoFile::BigPng,
    DemoFile::Wav,
    DemoFile::Pdf,
    DemoFile::Binary,
];

/// `BIG_PNG_WIDTH_PX` × `BIG_PNG_HEIGHT_PX` is the size of the big PNG: larger
/// than any viewer shows unscaled.
pub(crate) const BIG_PNG_WIDTH_PX: u32 = 3000;
/// See [`BIG_PNG_WIDTH_PX`].
pub(crate) const BIG_PNG_HEIGHT_PX: u32 = 2000;

/// The JPEG as stored (landscape); shown upright it is portrait.
pub(crate) const JPEG_STORED_WIDTH_PX: u32 = 400;
/// See [`JPEG_STORED_WIDTH_PX`].
pub(crate) const JPEG_STORED_HEIGHT_PX: u32 = 300;

/// The demo's file name for each kind.
pub(crate) fn file_name(kind: DemoFile) -> &'static str {
    match kind {
        DemoFile::Text => "release-notes.txt",
        DemoFile::Docx => "meeting-notes.docx",
        DemoFile::Xlsx => "budget.xlsx",
        DemoFile::Pptx => "roadmap.pptx",
        DemoFile::Zip => "assets.zip",
        DemoFile::TarGz => "logs.tar.gz",
        DemoFile::SidewaysJpeg => "whiteboard.jpg",
        DemoFile::BigPng => "floor-plan.png",
        DemoFile::Wav => "chime.wav",
        DemoFile::Pdf => "handbook.pdf",
        DemoFile::Binary => "firmware.bin",
    }
}

/// The bytes of a demo file, made on first use and shared after.
pub(crate) fn bytes(kind: DemoFile) -> Bytes {
    static CACHE: [OnceLock<Bytes>; 11] = [const { OnceLock::new() }; 11];
    let slot = ALL_KINDS.iter().position(|k| *k == kind).unwrap_or(0);
    CACHE[slot].get_or_init(|| Bytes::from(make(kind))).clone()
}

/// Makes one demo file.
fn make(kind: DemoFile) -> Vec<u8> {
    match kind {
        DemoFile::Text => text().into_bytes(),
        DemoFile::Docx => docx(),
        DemoFile::Xlsx => xlsx(),
        DemoFile::Pptx => pptx(),
        DemoFile::Zip => zip_archive(),
        DemoFile::TarGz => tar_gz(),
        DemoFile::SidewaysJpeg => sideways_jpeg(),
        DemoFile::BigPng => big_png(),
        DemoFile::Wav => wav(),
        DemoFile::Pdf => pdf(),
        DemoFile::Binary => crate::model::Ids::bytes(0xb1_0b, 8192),
    }
}

/// Release notes long enough (120 lines) that a viewer pages through them.
fn text() -> String {
    let mut out = String::from("Porter release notes\n====================\n\n");
    for n in 1..=117 {
        let area = ["sync", "search", "uploads", "threads", "permalinks"][n % 5];
        let _ = writeln!(
            out,
            "{n:3}. Improved {area}: change number {n} of the spring release."
        );
    }
    out
}

/// The XML declaration every Open XML part starts with.
const XML_HEAD: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#;

/// Namespace of package relationships.
const RELS_NS: &str = "http://schemas.openxmlformats.org/package/2006/relationships";
/// Relationship type of the main document part.
const REL_OFFICE_DOCUMENT: &str =
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument";
/// Relationship type of the core properties.
const REL_CORE: &str =
    "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties";
/// Prefix of the document-level relationship types.
const REL_DOC: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

/// Builds a relationships part from `(id, type, target)` triples.
fn rels(entries: &[(&str, &str, &str)]) -> String {
    let mut out = format!(r#"{XML_HEAD}<Relationships xmlns="{RELS_NS}">"#);
    for (id, kind, target) in entries {
        let _ = write!(
            out,
            r#"<Relationship Id="{id}" Type="{kind}" Target="{target}"/>"#
        );
    }
    out.push_str("</Relationships>");
    out
}

/// Builds `[Content_Types].xml` with the usual defaults and the given
/// `(part, content type)` overrides.
fn content_types(overrides: &[(&str, &str)]) -> String {
    let mut out = format!(
        r#"{XML_HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>"#
    );
    for (part, kind) in overrides {
        let _ = write!(out, r#"<Override PartName="{part}" ContentType="{kind}"/>"#);
    }
    out.push_str(r#"<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/></Types>"#);
    out
}

/// The core properties part: title and author.
fn core_properties(title: &str) -> String {
    format!(
        r#"{XML_HEAD}<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><dc:title>{}</dc:title><dc:creator>Alice Example</dc:creator><dcterms:created xsi:type="dcterms:W3CDTF">2026-03-02T09:00:00Z</dcterms:created><dcterms:modified xsi:type="dcterms:W3CDTF">2026-03-02T09:00:00Z</dcterms:modified></cp:coreProperties>"#,
        escape_markup(title)
    )
}

/// Writes a zip with fixed times (so the bytes never change) from
/// `(name, content)` pairs.
fn zip_of(entries: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default());
    for (name, content) in entries {
        // Writing to memory cannot fail; a failure here would be a bug in
        // the entry list (a duplicate name), caught by the unit tests.
        if writer.start_file(*name, options).is_err() || writer.write_all(content).is_err() {
            return Vec::new();
        }
    }
    writer.finish().map(Cursor::into_inner).unwrap_or_default()
}

/// An Open XML package: `[Content_Types].xml` with `overrides`, the
/// package relationships (to the main part, the first of `parts`, and to
/// the core properties), then `parts` in order, and last the core
/// properties titled `title`.
fn office_package(overrides: &[(&str, &str)], parts: Vec<(&str, Vec<u8>)>, title: &str) -> Vec<u8> {
    let main = parts.first().map_or("", |(name, _)| *name);
    let package_rels = rels(&[
        ("rId1", REL_OFFICE_DOCUMENT, main),
        ("rId2", REL_CORE, "docProps/core.xml"),
    ]);
    let mut entries = vec![
        ("[Content_Types].xml", content_types(overrides).into_bytes()),
        ("_rels/.rels", package_rels.into_bytes()),
    ];
    entries.extend(parts);
    entries.push(("docProps/core.xml", core_properties(title).into_bytes()));
    zip_of(&entries)
}

/// A Word document: a title, a heading, paragraphs and a table, with the
/// styles they use defined.
fn docx() -> Vec<u8> {
    const W: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
    let para = |style: Option<&str>, text: &str| {
        let ppr = style.map_or(String::new(), |s| {
            format!(r#"<w:pPr><w:pStyle w:val="{s}"/></w:pPr>"#)
        });
        format!(
            r#"<w:p>{ppr}<w:r><w:t xml:space="preserve">{}</w:t></w:r></w:p>"#,
            escape_markup(text)
        )
    };
    let cell = |text: &str| {
        format!(
            r#"<w:tc><w:tcPr><w:tcW w:w="3000" w:type="dxa"/></w:tcPr>{}</w:tc>"#,
            para(None, text)
        )
    };
    let rows = [
        ["Owner", "Action", "Due"],
        ["Alice", "Draft the upload rules", "2026-03-06"],
        ["Bob", "Review the permalink format", "2026-03-09"],
        ["Carol", "Test the demo on a fresh machine", "2026-03-10"],
    ];
    let mut table = String::from(
        r#"<w:tbl><w:tblPr><w:tblStyle w:val="TableGrid"/><w:tblW w:w="9000" w:type="dxa"/><w:tblBorders><w:top w:val="single" w:sz="4" w:space="0" w:color="auto"/><w:left w:val="single" w:sz="4" w:space="0" w:color="auto"/><w:bottom w:val="single" w:sz="4" w:space="0" w:color="auto"/><w:right w:val="single" w:sz="4" w:space="0" w:color="auto"/><w:insideH w:val="single" w:sz="4" w:space="0" w:color="auto"/><w:insideV w:val="single" w:sz="4" w:space="0" w:color="auto"/></w:tblBorders></w:tblPr><w:tblGrid><w:gridCol w:w="3000"/><w:gridCol w:w="3000"/><w:gridCol w:w="3000"/></w:tblGrid>"#,
    );
    for row in rows {
        table.push_str("<w:tr>");
        for text in row {
            table.push_str(&cell(text));
        }
        table.push_str("</w:tr>");
    }
    table.push_str("</w:tbl>");
    let body = [
        para(Some("Title"), "Kickoff meeting notes"),
        para(
            None,
            "Present: Alice, Bob and Carol. The meeting agreed on the scope of the spring release.",
        ),
        para(Some("Heading1"), "Decisions"),
        para(
            None,
            "Uploads keep Mattermost's field order: channel_id, client_ids, then files.",
        ),
        para(
            None,
            "Permalinks use the /_redirect/pl/ form so they work from any team.",
        ),
        para(Some("Heading1"), "Action items"),
        table,
        para(None, "Next meeting: Monday at 10:00."),
    ]
    .concat();
    let document = format!(
        r#"{XML_HEAD}<w:document xmlns:w="{W}"><w:body>{body}<w:sectPr><w:pgSz w:w="11906" w:h="16838"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="708" w:footer="708" w:gutter="0"/></w:sectPr></w:body></w:document>"#
    );
    let styles = format!(
        r#"{XML_HEAD}<w:styles xmlns:w="{W}"><w:docDefaults><w:rPrDefault><w:rPr><w:rFonts w:ascii="Calibri" w:hAnsi="Calibri"/><w:sz w:val="22"/></w:rPr></w:rPrDefault></w:docDefaults><w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/><w:pPr><w:spacing w:after="160"/></w:pPr></w:style><w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:rPr><w:b/><w:sz w:val="48"/></w:rPr></w:style><w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:pPr><w:keepNext/><w:outlineLvl w:val="0"/></w:pPr><w:rPr><w:b/><w:sz w:val="32"/></w:rPr></w:style><w:style w:type="table" w:styleId="TableGrid"><w:name w:val="Table Grid"/></w:style></w:styles>"#
    );
    office_package(
        &[
            (
                "/word/document.xml",
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
            ),
            (
                "/word/styles.xml",
                "application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml",
            ),
        ],
        vec![
            ("word/document.xml", document.into_bytes()),
            (
                "word/_rels/document.xml.rels",
                rels(&[("rId1", &format!("{REL_DOC}/styles"), "styles.xml")]).into_bytes(),
            ),
            ("word/styles.xml", styles.into_bytes()),
        ],
        "Kickoff meeting notes",
    )
}

/// One spreadsheet cell: numbers as values, text inline.
enum Cell<'a> {
    /// Inline text.
    Text(&'a str),
    /// A number.
    Number(f64),
    /// A formula with its cached result.
    Formula(&'a str, f64),
}

/// A worksheet part from rows of cells.
fn sheet_xml(rows: &[Vec<Cell<'_>>]) -> String {
    let mut out = format!(
        r#"{XML_HEAD}<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>"#
    );
    for (r, row) in rows.iter().enumerate() {
        let row_number = r + 1;
        let _ = write!(out, r#"<row r="{row_number}">"#);
        for (c, cell) in row.iter().enumerate() {
            let column = char::from(b'A' + u8::try_from(c).unwrap_or(0));
            let reference = format!("{column}{row_number}");
            match cell {
                Cell::Text(text) => {
                    let _ = write!(
                        out,
                        r#"<c r="{reference}" t="inlineStr"><is><t>{}</t></is></c>"#,
                        escape_markup(text)
                    );
                }
                Cell::Number(value) => {
                    let _ = write!(out, r#"<c r="{reference}"><v>{value}</v></c>"#);
                }
                Cell::Formula(formula, value) => {
                    let _ = write!(
                        out,
                        r#"<c r="{reference}"><f>{}</f><v>{value}</v></c>"#,
                        escape_markup(formula)
                    );
                }
            }
        }
        out.push_str("</row>");
    }
    out.push_str("</sheetData></worksheet>");
    out
}

/// An Excel workbook with two sheets: a budget and its totals (a formula
/// with its cached value).
fn xlsx() -> Vec<u8> {
    const MAIN: &str = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
    let items: [(&str, &str, f64); 5] = [
        ("Servers", "Infrastructure", 1200.0),
        ("Laptops", "Hardware", 5400.5),
        ("Training", "People", 800.0),
        ("Licences", "Software", 1500.25),
        ("Travel", "People", 950.0),
    ];
    let mut budget = vec![vec![
        Cell::Text("Item"),
        Cell::Text("Category"),
        Cell::Text("Amount (EUR)"),
    ]];
    for (item, category, amount) in items {
        budget.push(vec![
            Cell::Text(item),
            Cell::Text(category),
            Cell::Number(amount),
        ]);
    }
    let total: f64 = items.iter().map(|(_, _, amount)| amount).sum();
    let totals = vec![
        vec![Cell::Text("Measure"), Cell::Text("Value")],
        vec![
            Cell::Text("Total"),
            Cell::Formula("SUM(Budget!C2:C6)", total),
        ],
        vec![
            Cell::Text("Largest"),
            Cell::Formula("MAX(Budget!C2:C6)", 5400.5),
        ],
    ];
    let workbook = format!(
        r#"{XML_HEAD}<workbook xmlns="{MAIN}" xmlns:r="{REL_DOC}"><sheets><sheet name="Budget" sheetId="1" r:id="rId1"/><sheet name="Totals" sheetId="2" r:id="rId2"/></sheets></workbook>"#
    );
    let styles = format!(
        r#"{XML_HEAD}<styleSheet xmlns="{MAIN}"><fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills><borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/></cellXfs><cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>"#
    );
    let worksheet_type =
        "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml";
    office_package(
        &[
            (
                "/xl/workbook.xml",
                "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
            ),
            ("/xl/worksheets/sheet1.xml", worksheet_type),
            ("/xl/worksheets/sheet2.xml", worksheet_type),
            (
                "/xl/styles.xml",
                "application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml",
            ),
        ],
        vec![
            ("xl/workbook.xml", workbook.into_bytes()),
            (
                "xl/_rels/workbook.xml.rels",
                rels(&[
                    (
                        "rId1",
                        &format!("{REL_DOC}/worksheet"),
                        "worksheets/sheet1.xml",
                    ),
                    (
                        "rId2",
                        &format!("{REL_DOC}/worksheet"),
                        "worksheets/sheet2.xml",
                    ),
                    ("rId3", &format!("{REL_DOC}/styles"), "styles.xml"),
                ])
                .into_bytes(),
            ),
            ("xl/worksheets/sheet1.xml", sheet_xml(&budget).into_bytes()),
            ("xl/worksheets/sheet2.xml", sheet_xml(&totals).into_bytes()),
            ("xl/styles.xml", styles.into_bytes()),
        ],
        "Budget",
    )
}

/// The namespaces a PresentationML part declares.
const PML_NS: &str = r#"xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main""#;

/// The empty group-shape header every shape tree starts with.
const SP_TREE_HEAD: &str = r#"<p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/><a:chOff x="0" y="0"/><a:chExt cx="0" cy="0"/></a:xfrm></p:grpSpPr>"#;

/// One slide: a title placeholder and a text box of bullet lines.
fn slide_xml(title: &str, lines: &[&str]) -> String {
    let mut body = String::new();
    for line in lines {
        let _ = write!(
            body,
            r#"<a:p><a:pPr marL="342900" indent="-342900"><a:buFont typeface="Arial"/><a:buChar char="&#8226;"/></a:pPr><a:r><a:rPr lang="en-US" sz="2400"/><a:t>{}</a:t></a:r></a:p>"#,
            escape_markup(line)
        );
    }
    format!(
        r#"{XML_HEAD}<p:sld {PML_NS}><p:cSld><p:spTree>{SP_TREE_HEAD}<p:sp><p:nvSpPr><p:cNvPr id="2" name="Title 1"/><p:cNvSpPr><a:spLocks noGrp="1"/></p:cNvSpPr><p:nvPr><p:ph type="title"/></p:nvPr></p:nvSpPr><p:spPr><a:xfrm><a:off x="838200" y="365125"/><a:ext cx="10515600" cy="1325563"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr><p:txBody><a:bodyPr/><a:lstStyle/><a:p><a:r><a:rPr lang="en-US" sz="4400" b="1"/><a:t>{}</a:t></a:r></a:p></p:txBody></p:sp><p:sp><p:nvSpPr><p:cNvPr id="3" name="Text 2"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr><p:spPr><a:xfrm><a:off x="838200" y="1825625"/><a:ext cx="10515600" cy="4351338"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr><p:txBody><a:bodyPr wrap="square"/><a:lstStyle/>{body}</p:txBody></p:sp></p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sld>"#,
        escape_markup(title)
    )
}

/// The theme every deck needs: colours, fonts and the three-of-each format
/// lists PowerPoint insists on.
fn theme_xml() -> String {
    let accents = ["2563EB", "16A34A", "DC2626", "D97706", "7C3AED", "0891B2"];
    let mut colours = String::from(
        r#"<a:dk1><a:sysClr val="windowText" lastClr="000000"/></a:dk1><a:lt1><a:sysClr val="window" lastClr="FFFFFF"/></a:lt1><a:dk2><a:srgbClr val="1F2937"/></a:dk2><a:lt2><a:srgbClr val="F3F4F6"/></a:lt2>"#,
    );
    for (n, colour) in accents.iter().enumerate() {
        let n = n + 1;
        let _ = write!(
            colours,
            r#"<a:accent{n}><a:srgbClr val="{colour}"/></a:accent{n}>"#
        );
    }
    colours.push_str(r#"<a:hlink><a:srgbClr val="0563C1"/></a:hlink><a:folHlink><a:srgbClr val="954F72"/></a:folHlink>"#);
    let solid = r#"<a:solidFill><a:schemeClr val="phClr"/></a:solidFill>"#;
    let fills = solid.repeat(3);
    let mut lines = String::new();
    for width in [6350, 12700, 19050] {
        let _ = write!(lines, r#"<a:ln w="{width}">{solid}</a:ln>"#);
    }
    let effects = "<a:effectStyle><a:effectLst/></a:effectStyle>".repeat(3);
    format!(
        r#"{XML_HEAD}<a:theme xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" name="Porter"><a:themeElements><a:clrScheme name="Porter">{colours}</a:clrScheme><a:fontScheme name="Porter"><a:majorFont><a:latin typeface="Calibri Light"/><a:ea typeface=""/><a:cs typeface=""/></a:majorFont><a:minorFont><a:latin typeface="Calibri"/><a:ea typeface=""/><a:cs typeface=""/></a:minorFont></a:fontScheme><a:fmtScheme name="Porter"><a:fillStyleLst>{fills}</a:fillStyleLst><a:lnStyleLst>{lines}</a:lnStyleLst><a:effectStyleLst>{effects}</a:effectStyleLst><a:bgFillStyleLst>{fills}</a:bgFillStyleLst></a:fmtScheme></a:themeElements><a:objectDefaults/><a:extraClrSchemeLst/></a:theme>"#
    )
}

/// A PowerPoint deck of two slides, with the master, layout and theme a
/// deck must have.
fn pptx() -> Vec<u8> {
    let pml = "application/vnd.openxmlformats-officedocument.presentationml";
    let presentation = format!(
        r#"{XML_HEAD}<p:presentation {PML_NS}><p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/></p:sldMasterIdLst><p:sldIdLst><p:sldId id="256" r:id="rId2"/><p:sldId id="257" r:id="rId3"/></p:sldIdLst><p:sldSz cx="12192000" cy="6858000"/><p:notesSz cx="6858000" cy="9144000"/></p:presentation>"#
    );
    let master = format!(
        r#"{XML_HEAD}<p:sldMaster {PML_NS}><p:cSld><p:bg><p:bgRef idx="1001"><a:schemeClr val="bg1"/></p:bgRef></p:bg><p:spTree>{SP_TREE_HEAD}</p:spTree></p:cSld><p:clrMap bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" accent2="accent2" accent3="accent3" accent4="accent4" accent5="accent5" accent6="accent6" hlink="hlink" folHlink="folHlink"/><p:sldLayoutIdLst><p:sldLayoutId id="2147483649" r:id="rId1"/></p:sldLayoutIdLst><p:txStyles><p:titleStyle/><p:bodyStyle/><p:otherStyle/></p:txStyles></p:sldMaster>"#
    );
    let layout = format!(
        r#"{XML_HEAD}<p:sldLayout {PML_NS} type="blank" preserve="1"><p:cSld name="Blank"><p:spTree>{SP_TREE_HEAD}</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sldLayout>"#
    );
    let layout_rel = format!("{REL_DOC}/slideLayout");
    office_package(
        &[
            (
                "/ppt/presentation.xml",
                &format!("{pml}.presentation.main+xml"),
            ),
            ("/ppt/slides/slide1.xml", &format!("{pml}.slide+xml")),
            ("/ppt/slides/slide2.xml", &format!("{pml}.slide+xml")),
            (
                "/ppt/slideMasters/slideMaster1.xml",
                &format!("{pml}.slideMaster+xml"),
            ),
            (
                "/ppt/slideLayouts/slideLayout1.xml",
                &format!("{pml}.slideLayout+xml"),
            ),
            (
                "/ppt/theme/theme1.xml",
                "application/vnd.openxmlformats-officedocument.theme+xml",
            ),
        ],
        vec![
            ("ppt/presentation.xml", presentation.into_bytes()),
            (
                "ppt/_rels/presentation.xml.rels",
                rels(&[
                    (
                        "rId1",
                        &format!("{REL_DOC}/slideMaster"),
                        "slideMasters/slideMaster1.xml",
                    ),
                    ("rId2", &format!("{REL_DOC}/slide"), "slides/slide1.xml"),
                    ("rId3", &format!("{REL_DOC}/slide"), "slides/slide2.xml"),
                    ("rId4", &format!("{REL_DOC}/theme"), "theme/theme1.xml"),
                ])
                .into_bytes(),
            ),
            (
                "ppt/slides/slide1.xml",
                slide_xml(
                    "Spring roadmap",
                    &[
                        "Typed Mattermost client",
                        "An emulator Client4 accepts",
                        "Files you can read in the chat",
                    ],
                )
                .into_bytes(),
            ),
            (
                "ppt/slides/slide2.xml",
                slide_xml(
                    "Milestones",
                    &[
                        "March: uploads and downloads",
                        "April: search with filters",
                        "May: release",
                    ],
                )
                .into_bytes(),
            ),
            (
                "ppt/slides/_rels/slide1.xml.rels",
                rels(&[("rId1", &layout_rel, "../slideLayouts/slideLayout1.xml")]).into_bytes(),
            ),
            (
                "ppt/slides/_rels/slide2.xml.rels",
                rels(&[("rId1", &layout_rel, "../slideLayouts/slideLayout1.xml")]).into_bytes(),
            ),
            ("ppt/slideMasters/slideMaster1.xml", master.into_bytes()),
            (
                "ppt/slideMasters/_rels/slideMaster1.xml.rels",
                rels(&[
                    ("rId1", &layout_rel, "../slideLayouts/slideLayout1.xml"),
                    ("rId2", &format!("{REL_DOC}/theme"), "../theme/theme1.xml"),
                ])
                .into_bytes(),
            ),
            ("ppt/slideLayouts/slideLayout1.xml", layout.into_bytes()),
            (
                "ppt/slideLayouts/_rels/slideLayout1.xml.rels",
                rels(&[(
                    "rId1",
                    &format!("{REL_DOC}/slideMaster"),
                    "../slideMasters/slideMaster1.xml",
                )])
                .into_bytes(),
            ),
            ("ppt/theme/theme1.xml", theme_xml().into_bytes()),
        ],
        "Spring roadmap",
    )
}

/// A zip of a readme, a CSV and a nested folder.
fn zip_archive() -> Vec<u8> {
    let mut csv = String::from("month,uploads,downloads\n");
    for (n, month) in ["jan", "feb", "mar", "apr"].iter().enumerate() {
        let _ = writeln!(csv, "{month},{},{}", 120 + n * 17, 300 + n * 41);
    }
    zip_of(&[
        (
            "assets/README.txt",
            b"Design assets for the spring release.\nSee data/usage.csv for the numbers.\n"
                .to_vec(),
        ),
        ("assets/data/usage.csv", csv.into_bytes()),
        (
            "assets/icons/LICENSE.txt",
            b"The icons are the team's own work.\n".to_vec(),
        ),
    ])
}

/// A gzip-compressed tar of two log files.
fn tar_gz() -> Vec<u8> {
    let mut app_log = String::new();
    for n in 0..40 {
        let _ = writeln!(
            app_log,
            "2026-03-02T09:{:02}:00Z INFO request {n} served in {} ms",
            n % 60,
            10 + n % 7
        );
    }
    let entries: [(&str, Vec<u8>); 2] = [
        ("logs/app.log", app_log.into_bytes()),
        (
            "logs/error.log",
            b"2026-03-02T09:17:00Z ERROR upload refused: file too large\n".to_vec(),
        ),
    ];
    let encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut builder = tar::Builder::new(encoder);
    for (path, content) in &entries {
        let mut header = tar::Header::new_gnu();
        header.set_size(content.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(1_772_442_000);
        header.set_entry_type(tar::EntryType::Regular);
        if builder
            .append_data(&mut header, path, content.as_slice())
            .is_err()
        {
            return Vec::new();
        }
    }
    builder
        .into_inner()
        .and_then(flate2::write::GzEncoder::finish)
        .unwrap_or_default()
}

/// The picture as a person should see it (portrait, 300×400): a sky, a
/// lawn, and a red arrow pointing up, so a wrong rotation is obvious.
fn upright_pixel(x: u32, y: u32) -> [u8; 3] {
    let (width, height) = (JPEG_STORED_HEIGHT_PX, JPEG_STORED_WIDTH_PX);
    let centre = i64::from(width / 2);
    let dx = (i64::from(x) - centre).abs();
    let arrow_head = y > 80 && y < 200 && dx < i64::from(y - 80);
    let arrow_shaft = (200..330).contains(&y) && dx < 25;
    if arrow_head || arrow_shaft {
        [210, 30, 30]
    } else if y < height * 2 / 3 {
        let shade = (y * 120 / height) as u8;
        [90 + shade / 2, 150 + shade / 3, 235]
    } else {
        let shade = ((x * 7 + y * 3) % 40) as u8;
        [40 + shade, 150 + shade, 50]
    }
}

/// A JPEG stored sideways (400×300) with EXIF orientation 6, which tells a
/// viewer to turn it 90° clockwise; turned, it shows [`upright_pixel`].
fn sideways_jpeg() -> Vec<u8> {
    let (width, height) = (JPEG_STORED_WIDTH_PX, JPEG_STORED_HEIGHT_PX);
    let mut pixels = Vec::with_capacity((width * height * 3) as usize);
    for y in 0..height {
        for x in 0..width {
            // Turning stored (x, y) clockwise lands it at (height-1-y, x).
            pixels.extend_from_slice(&upright_pixel(height - 1 - y, x));
        }
    }
    let mut jpeg = Vec::new();
    let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 85);
    if encoder
        .write_image(&pixels, width, height, image::ExtendedColorType::Rgb8)
        .is_err()
    {
        return Vec::new();
    }
    insert_exif_orientation(&jpeg, 6)
}

/// Returns `jpeg` with an APP1 EXIF segment holding only an Orientation tag,
/// placed after SOI and any APP0 (JFIF) segment, where readers look for it.
pub(crate) fn insert_exif_orientation(jpeg: &[u8], orientation: u16) -> Vec<u8> {
    // TIFF header (big-endian, "MM"), IFD0 at offset 8 with one entry:
    // tag 0x0112 Orientation, type 3 SHORT, count 1, value left-justified.
    let mut tiff = Vec::new();
    tiff.extend_from_slice(b"MM\x00\x2a");
    tiff.extend_from_slice(&8u32.to_be_bytes());
    tiff.extend_from_slice(&1u16.to_be_bytes());
    tiff.extend_from_slice(&0x0112u16.to_be_bytes());
    tiff.extend_from_slice(&3u16.to_be_bytes());
    tiff.extend_from_slice(&1u32.to_be_bytes());
    tiff.extend_from_slice(&orientation.to_be_bytes());
    tiff.extend_from_slice(&[0, 0]);
    tiff.extend_from_slice(&0u32.to_be_bytes());
    let mut segment = vec![0xff, 0xe1];
    let length = u16::try_from(2 + 6 + tiff.len()).unwrap_or(u16::MAX);
    segment.extend_from_slice(&length.to_be_bytes());
    segment.extend_from_slice(b"Exif\x00\x00");
    segment.extend_from_slice(&tiff);

    let mut at = 2; // after SOI
    if jpeg.get(2..4) == Some(&[0xff, 0xe0]) {
        let app0_len = jpeg
            .get(4..6)
            .map_or(0, |b| usize::from(u16::from_be_bytes([b[0], b[1]])));
        at = 4 + app0_len;
    }
    let at = at.min(jpeg.len());
    let mut out = Vec::with_capacity(jpeg.len() + segment.len());
    out.extend_from_slice(&jpeg[..at]);
    out.extend_from_slice(&segment);
    out.extend_from_slice(&jpeg[at..]);
    out
}

/// The colours of the floor plan, as palette entries.
const PLAN_PALETTE: [[u8; 3]; 12] = [
    [250, 250, 250], // 0: paper
    [40, 40, 40],    // 1: walls
    [255, 224, 178], // 2..=6: rooms
    [200, 230, 201],
    [187, 222, 251],
    [225, 190, 231],
    [255, 205, 210],
    [235, 204, 158], // 7..=11: the rooms' grid lines
    [180, 210, 181],
    [167, 202, 231],
    [205, 170, 211],
    [235, 185, 190],
];

/// A 3000×2000 floor plan: coloured rooms with walls and a 100 px grid.
/// It is an indexed-colour PNG written chunk by chunk (a third of the bytes
/// of RGB to compress), with rows filled by spans, so it is made quickly
/// even in a debug build.
fn big_png() -> Vec<u8> {
    const WALL_PX: u32 = 6;
    let (width, height) = (BIG_PNG_WIDTH_PX, BIG_PNG_HEIGHT_PX);
    let rooms: [(u32, u32, u32, u32, u8); 5] = [
        (100, 100, 1200, 900, 2),
        (1300, 100, 2900, 900, 3),
        (100, 1000, 900, 1900, 4),
        (1000, 1000, 2200, 1900, 5),
        (2300, 1000, 2900, 1900, 6),
    ];
    // Each row is a filter byte (0, none) and one palette index per pixel.
    let row_len = width as usize + 1;
    let mut raw = vec![0u8; row_len * height as usize];
    for (y, row) in raw.chunks_exact_mut(row_len).enumerate() {
        let y = y as u32;
        let pixels = &mut row[1..];
        let mut fill = |from: u32, to: u32, index: u8| {
            let (from, to) = (from.min(width) as usize, to.min(width) as usize);
            pixels[from..to].fill(index);
        };
        for &(x0, y0, x1, y1, colour) in &rooms {
            if y + WALL_PX <= y0 || y >= y1 + WALL_PX {
                continue;
            }
            let (left, right) = (x0.saturating_sub(WALL_PX - 1), x1 + WALL_PX);
            if y.abs_diff(y0) < WALL_PX || y.abs_diff(y1) < WALL_PX {
                fill(left, right, 1);
                continue;
            }
            let line = colour + 5;
            if y.is_multiple_of(100) {
                fill(x0, x1, line);
            } else {
                fill(x0, x1, colour);
                let mut x = (x0 / 100 + 1) * 100;
                while x < x1 {
                    fill(x, x + 1, line);
                    x += 100;
                }
            }
            fill(left, x0 + WALL_PX, 1);
            fill(x1.saturating_sub(WALL_PX - 1), right, 1);
        }
    }
    let mut idat = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    if idat.write_all(&raw).is_err() {
        return Vec::new();
    }
    let Ok(idat) = idat.finish() else {
        return Vec::new();
    };
    let mut header = Vec::with_capacity(13);
    header.extend_from_slice(&width.to_be_bytes());
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[8, 3, 0, 0, 0]); // 8-bit, indexed, deflate, adaptive, no interlace
    let palette: Vec<u8> = PLAN_PALETTE.iter().flatten().copied().collect();
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    for (kind, data) in [
        (b"IHDR", header.as_slice()),
        (b"PLTE", palette.as_slice()),
        (b"IDAT", idat.as_slice()),
        (b"IEND", &[][..]),
    ] {
        let mut crc = flate2::Crc::new();
        crc.update(kind);
        crc.update(data);
        png.extend_from_slice(&u32::try_from(data.len()).unwrap_or(0).to_be_bytes());
        png.extend_from_slice(kind);
        png.extend_from_slice(data);
        png.extend_from_slice(&crc.sum().to_be_bytes());
    }
    png
}

/// `WAV_RATE_HZ` is the sample rate of the chime.
pub(crate) const WAV_RATE_HZ: u32 = 16_000;

/// One second of a 440 Hz tone with a fade-out, 16-bit mono PCM.
fn wav() -> Vec<u8> {
    let samples = WAV_RATE_HZ as usize;
    let data_len = u32::try_from(samples * 2).unwrap_or(0);
    let mut out = Vec::with_capacity(44 + samples * 2);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data_len).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&1u16.to_le_bytes()); // mono
    out.extend_from_slice(&WAV_RATE_HZ.to_le_bytes());
    out.extend_from_slice(&(WAV_RATE_HZ * 2).to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_len.to_le_bytes());
    for n in 0..samples {
        let t = n as f64 / f64::from(WAV_RATE_HZ);
        let fade = 1.0 - t;
        let value = (2.0 * std::f64::consts::PI * 440.0 * t).sin() * fade * 12_000.0;
        out.extend_from_slice(&(value as i16).to_le_bytes());
    }
    out
}

/// Escapes text for a PDF literal string.
fn pdf_string(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('(', "\\(")
        .replace(')', "\\)")
}

/// A PDF of `objects` (numbered from 1, the first the catalog) with a
/// correct cross-reference table, so that a reader follows it rather than
/// giving up; `info` is the number of the document information dictionary,
/// when there is one. The demo's handbook is written with it, and porter's
/// tests write hostile PDFs with it.
#[must_use]
pub fn pdf_with_xref(objects: &[Vec<u8>], info: Option<usize>) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::with_capacity(objects.len());
    for (at, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", at + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref_at = out.len();
    let size = objects.len() + 1;
    out.extend_from_slice(format!("xref\n0 {size}\n0000000000 65535 f \n").as_bytes());
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    let info = info.map(|n| format!(" /Info {n} 0 R")).unwrap_or_default();
    out.extend_from_slice(
        format!("trailer\n<< /Size {size} /Root 1 0 R{info} >>\nstartxref\n{xref_at}\n%%EOF\n")
            .as_bytes(),
    );
    out
}

/// A one-page PDF with a title and paragraphs in Helvetica, and the
/// document information (title, author) as its last object.
fn pdf() -> Vec<u8> {
    let lines = [
        "Welcome to the team. This handbook covers the basics.",
        "1. Post in town-square for anything everyone should see.",
        "2. Keep design discussions in the private design channel.",
        "3. Attach files to posts; search finds them by name.",
        "4. Permalinks (/_redirect/pl/...) open a post in any team.",
        "Questions? Ask Alice (alice) or Bob (bob).",
    ];
    let mut content = String::from("BT /F1 20 Tf 72 720 Td (Porter Team Handbook) Tj ET\n");
    content.push_str("BT /F1 12 Tf 72 680 Td 18 TL\n");
    for line in lines {
        let _ = writeln!(content, "({}) Tj T*", pdf_string(line));
    }
    content.push_str("ET\n");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>".to_owned(),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_owned(),
        format!("<< /Length {} >>\nstream\n{content}endstream", content.len()),
        "<< /Title (Porter Team Handbook) /Author (Alice Example) /Producer (porter-mmsim) >>".to_owned(),
    ]
    .map(String::into_bytes);
    pdf_with_xref(&objects, Some(objects.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn zip_names(data: &[u8]) -> Vec<String> {
        let archive = zip::ZipArchive::new(Cursor::new(data)).expect("the package is a zip");
        archive
            .file_names()
            .map(|n| n.expect("a name reads").into_owned())
            .collect()
    }

    fn zip_text(data: &[u8], name: &str) -> String {
        let mut archive = zip::ZipArchive::new(Cursor::new(data)).expect("the package is a zip");
        let mut text = String::new();
        archive
            .by_name(name)
            .expect("the part exists")
            .read_to_string(&mut text)
            .expect("the part is UTF-8");
        text
    }

    #[test]
    fn every_demo_file_is_made_and_is_the_same_each_time() {
        for kind in ALL_KINDS {
            let first = make(kind);
            assert!(!first.is_empty(), "{kind:?} is empty");
            assert_eq!(first, make(kind), "{kind:?} changes between runs");
        }
    }

    #[test]
    fn office_files_have_content_types_relationships_and_their_main_part() {
        let cases = [
            (docx(), "word/document.xml", "Kickoff meeting notes"),
            (xlsx(), "xl/worksheets/sheet1.xml", "Laptops"),
            (pptx(), "ppt/slides/slide2.xml", "Milestones"),
        ];
        for (data, main, words) in cases {
            let names = zip_names(&data);
            for needed in ["[Content_Types].xml", "_rels/.rels", main] {
                assert!(
                    names.iter().any(|n| n == needed),
                    "{needed} missing in {names:?}"
                );
            }
            assert!(zip_text(&data, main).contains(words));
            assert!(zip_text(&data, "[Content_Types].xml").contains(&format!("/{main}")));
        }
        let deck = zip_names(&pptx());
        for part in [
            "ppt/slideMasters/slideMaster1.xml",
            "ppt/slideLayouts/slideLayout1.xml",
            "ppt/theme/theme1.xml",
        ] {
            assert!(deck.iter().any(|n| n == part), "{part} missing");
        }
    }

    #[test]
    fn the_sideways_jpeg_is_landscape_and_says_orientation_6() {
        use image::ImageDecoder;

        let data = sideways_jpeg();
        let image = image::load_from_memory(&data).expect("the JPEG decodes");
        assert_eq!(
            (image.width(), image.height()),
            (JPEG_STORED_WIDTH_PX, JPEG_STORED_HEIGHT_PX)
        );
        let mut decoder = image::codecs::jpeg::JpegDecoder::new(Cursor::new(&data))
            .expect("the JPEG has a header");
        assert_eq!(
            decoder.orientation().expect("the orientation reads"),
            image::metadata::Orientation::Rotate90
        );
        // Turned upright, the arrow's shaft is red at the bottom centre.
        let mut upright = image.to_rgb8();
        upright = image::imageops::rotate90(&upright);
        let pixel = upright.get_pixel(150, 260);
        assert!(pixel[0] > 150 && pixel[1] < 90, "{pixel:?}");
    }

    #[test]
    fn the_big_png_is_3000_by_2000() {
        let image = image::load_from_memory(&big_png()).expect("the PNG decodes");
        assert_eq!((image.width(), image.height()), (3000, 2000));
    }

    #[test]
    fn the_pdf_cross_reference_points_at_each_object() {
        let data = pdf();
        let text = String::from_utf8_lossy(&data);
        let startxref: usize = text
            .rsplit("startxref\n")
            .next()
            .and_then(|rest| rest.lines().next())
            .and_then(|n| n.parse().ok())
            .expect("startxref has a number");
        assert!(data[startxref..].starts_with(b"xref\n"));
        let table = String::from_utf8_lossy(&data[startxref..]);
        for (n, line) in table.lines().skip(3).take(6).enumerate() {
            let offset: usize = line[..10].parse().expect("a ten-digit offset");
            assert!(
                data[offset..].starts_with(format!("{} 0 obj", n + 1).as_bytes()),
                "object {} is not at {offset}",
                n + 1
            );
        }
        assert!(text.contains("(Porter Team Handbook) Tj"));
    }

    #[test]
    fn the_wav_header_matches_its_data() {
        let data = wav();
        assert_eq!(&data[..4], b"RIFF");
        let riff_len = u32::from_le_bytes([data[4], data[5], data[6], data[7]]) as usize;
        assert_eq!(riff_len + 8, data.len());
        assert_eq!(&data[36..40], b"data");
    }

    #[test]
    fn the_tar_gz_lists_its_logs() {
        let data = tar_gz();
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(Cursor::new(data)));
        let names: Vec<String> = archive
            .entries()
            .expect("the archive reads")
            .map(|e| {
                e.expect("an entry")
                    .path()
                    .expect("a path")
                    .display()
                    .to_string()
            })
            .collect();
        assert_eq!(names, ["logs/app.log", "logs/error.log"]);
    }
}
