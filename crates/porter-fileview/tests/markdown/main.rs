//! The corpus as Markdown: each document made by a real producer
//! (`scripts/make_corpus.py`) comes back with its headings, list items,
//! table rows and links, and its slides, sheets and pages in order.
//!
//! Needs `PORTER_CORPUS` (see [`porter_test::corpus_dir`]).

use porter_fileview::{Cancel, FileInput, Markdown, Options, ViewError, to_markdown};
use porter_mmsim::pdf_with_xref;
use porter_test::corpus_file;

mod headings;
mod order;
mod structure;
mod tables;

/// The Markdown of a corpus file under `real/`.
fn markdown(name: &str) -> Markdown {
    let bytes = corpus_file(&format!("real/{name}"));
    to_markdown(
        &FileInput::new(&bytes, name),
        &Options::default(),
        &Cancel::new(),
    )
    .unwrap_or_else(|error| panic!("{name} is not converted: {error}"))
}

/// Asserts that each of `pieces` is a whole line of `text`, in this order.
fn assert_lines_in_order(text: &str, pieces: &[&str]) {
    let lines: Vec<&str> = text.lines().collect();
    let mut from = 0;
    for piece in pieces {
        match lines[from..].iter().position(|line| line == piece) {
            Some(at) => from += at + 1,
            None => panic!("{piece:?} is not a line after line {from} of:\n{text}"),
        }
    }
}

#[test]
fn a_word_report_has_its_headings_table_and_paragraphs() {
    let md = markdown("report.docx");
    assert_lines_in_order(
        &md.text,
        &[
            "# Quarterly Report Alpha",
            "The first paragraph mentions apples before bananas.",
            "## Details Table",
            "| Fruit | Colour | Count |",
            "| --- | --- | --- |",
            "| Apple | Red | 3 |",
            "| Banana | Yellow | 5 |",
            "The closing paragraph says goodbye.",
        ],
    );
    assert_eq!(md.title.as_deref(), Some("Quarterly Report Alpha"));
}

#[test]
fn a_word_guide_has_its_title_heading_levels_list_items_and_link() {
    let md = markdown("guide.docx");
    assert_lines_in_order(
        &md.text,
        &[
            "# Field Guide",
            "## Getting Started",
            "Walk **slowly** on *wet* rocks and ***never*** alone.",
            "- compass",
            "- water bottle",
            "- spare socks",
            "### Route Steps",
            "1. leave the car park",
            "1. cross the bridge",
            "Maps are at [the trail office](https://maps.example.org/trail) for free.",
            "#### Huts",
            "| Hut | Beds |",
            "| Lake Hut | 8 |",
        ],
    );
    assert_eq!(md.title.as_deref(), Some("Field Guide"));
}

#[test]
fn slides_come_in_the_order_shown_with_titles_tables_and_notes() {
    let md = markdown("slides.pptx");
    assert_lines_in_order(
        &md.text,
        &[
            "## Slide 1: Opening Remarks",
            "- Welcome everyone",
            "### Notes",
            "Remember to smile",
            "## Slide 2: Budget Table",
            "| Item | Cost |",
            "| Coffee | 12 |",
            "| Paper | 7 |",
            "Mention coffee",
            "## Slide 3: Appendix Figures (hidden)",
            "- Secret numbers",
            "## Slide 4: Closing Thoughts",
            "Wave goodbye",
        ],
    );
    assert_eq!(md.title.as_deref(), Some("Opening Remarks"));
}

#[test]
fn sheets_are_tables_with_cached_formula_values_and_iso_dates() {
    let md = markdown("book.xlsx");
    assert_lines_in_order(
        &md.text,
        &[
            "## Summary",
            "| Name | Amount |",
            "| --- | --- |",
            "| Widget | 42 |",
            "| Total | 59.5 |",
            "## Secret (hidden)",
            "| classified | 1 |",
            "## Timeline",
            "| Event | Day |",
            "| Launch | 2024-03-15 |",
            "| Review | 2024-12-01 |",
        ],
    );
}

#[test]
fn an_html_page_keeps_headings_table_links_and_drops_its_script() {
    let md = markdown("article.html");
    assert_lines_in_order(
        &md.text,
        &[
            "# Harbour Report",
            "## Arrivals",
            "## Contacts",
            "- harbour master",
            "### Out of hours",
        ],
    );
    let cells: Vec<Vec<String>> = md
        .text
        .lines()
        .filter(|l| l.starts_with('|') && !l.contains("---"))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_owned())
                .collect()
        })
        .collect();
    assert_eq!(
        cells,
        vec![
            vec!["Vessel", "Berth", "Day"],
            vec!["Sea Lark", "4", "Monday"],
            vec!["Grey Heron", "7", "Friday"]
        ]
    );
    for link in [
        "[tide tables](https://port.example.org/tides)",
        "[notices](https://port.example.org/notices?year=2024)",
        "[duty officer](https://port.example.org/duty)",
    ] {
        assert!(md.text.contains(link), "{link} in:\n{}", md.text);
    }
    assert!(!md.text.contains("script words"), "{}", md.text);
    assert_eq!(md.title.as_deref(), Some("Harbour Report"));
}

#[test]
fn pdf_pages_come_in_order_after_their_markers() {
    for (name, words) in [
        (
            "reportlab.pdf",
            [
                "alpha bravo charlie",
                "delta echo foxtrot",
                "golf hotel india",
            ],
        ),
        (
            "fpdf2.pdf",
            [
                "juliet kilo lima",
                "mike november oscar",
                "papa quebec romeo",
            ],
        ),
    ] {
        let md = markdown(name);
        assert_lines_in_order(
            &md.text,
            &[
                "<!-- page 1 of 3 -->",
                words[0],
                "<!-- page 2 of 3 -->",
                words[1],
                "<!-- page 3 of 3 -->",
                words[2],
            ],
        );
    }
}

/// A one-page PDF that sets each word of `lines` on its own (a `Tj` in its
/// own text object) a third of the 9-point size after the word before, and
/// draws no space: in a face whose every glyph is half the size wide, and
/// whose code 32, a space in most fonts, is a glyph as wide as the size
/// (as in a subset font that numbers its glyphs from 1).
fn words_set_apart(lines: &[&str]) -> Vec<u8> {
    use std::fmt::Write as _;
    let mut content = String::new();
    for (row, line) in lines.iter().enumerate() {
        let mut x = 60.0;
        for word in line.split(' ') {
            let y = 780 - 12 * row;
            writeln!(content, "BT /F1 9 Tf {x:.2} {y} Td ({word}) Tj ET")
                .expect("a String takes text");
            #[allow(clippy::cast_precision_loss)]
            let width = word.len() as f64 * 4.5;
            x += width + 3.0;
        }
    }
    let widths = std::iter::once("1000")
        .chain(std::iter::repeat_n("500", 90))
        .collect::<Vec<_>>()
        .join(" ");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] \
         /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>"
            .to_owned(),
        format!(
            "<< /Length {} >>\nstream\n{content}\nendstream",
            content.len()
        ),
        format!(
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica \
             /FirstChar 32 /LastChar 122 /Widths [{widths}] >>"
        ),
    ];
    pdf_with_xref(&objects.map(String::into_bytes), None)
}

#[test]
fn words_a_pdf_sets_apart_without_a_space_are_read_apart() {
    let lines = [
        "The first orbiting observatory, launched in 1983, was built by the United States.",
        "It cataloged about 350,000 sources of infrared radiation in a 10-month survey.",
    ];
    let pdf = words_set_apart(&lines);
    let md = to_markdown(
        &FileInput::new(&pdf, "apart.pdf"),
        &Options::default(),
        &Cancel::new(),
    )
    .expect("the PDF is read");
    assert_lines_in_order(&md.text, &["<!-- page 1 of 1 -->", &lines.join(" ")]);
}

#[test]
fn an_archive_and_an_image_are_refused_with_what_extract_reads() {
    for name in ["archive.zip", "orientation-1.jpg", "tone.wav"] {
        let bytes = corpus_file(&format!("real/{name}"));
        let error = to_markdown(
            &FileInput::new(&bytes, name),
            &Options::default(),
            &Cancel::new(),
        )
        .expect_err("no Markdown of this");
        assert!(
            matches!(error, ViewError::NotExtractable { .. }),
            "{name}: {error:?}"
        );
        assert!(
            error
                .to_string()
                .contains("DOCX, XLSX/XLS/ODS, PPTX, HTML, PDF"),
            "{error}"
        );
    }
}

/// A one-page PDF of `lines` in Helvetica (WinAnsiEncoding, where byte
/// 0xAD is the soft hyphen), each line one `Tj` filling the same width.
fn winansi_lines(lines: &[&[u8]]) -> Vec<u8> {
    let mut content = Vec::new();
    for (row, line) in lines.iter().enumerate() {
        let y = 780 - 14 * row;
        content.extend_from_slice(format!("BT /F1 11 Tf 60 {y} Td (").as_bytes());
        content.extend_from_slice(line);
        content.extend_from_slice(b") Tj ET\n");
    }
    let mut stream = format!("<< /Length {} >>\nstream\n", content.len()).into_bytes();
    stream.extend_from_slice(&content);
    stream.extend_from_slice(b"\nendstream");
    let objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] \
          /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>"
            .to_vec(),
        stream,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_vec(),
    ];
    pdf_with_xref(&objects, None)
}

#[test]
fn soft_hyphens_are_dropped_and_a_word_broken_at_one_is_joined() {
    let lines: [&[u8]; 3] = [
        b"A sym\xADmetric matrix equals its own trans\xAD",
        b"pose, and every real sym\xADmetric matrix has",
        b"real eigen\xADvalues, as the spectral theorem says.",
    ];
    let pdf = winansi_lines(&lines);
    let md = to_markdown(
        &FileInput::new(&pdf, "soft.pdf"),
        &Options::default(),
        &Cancel::new(),
    )
    .expect("the PDF is read");
    assert!(!md.text.contains('\u{AD}'), "{:?}", md.text);
    let words: Vec<&str> = md.text.split_whitespace().collect();
    for word in ["symmetric", "transpose,", "eigenvalues,"] {
        assert!(words.contains(&word), "{word} in {:?}", md.text);
    }
}
