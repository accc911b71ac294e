//! The generated corpus, file by file: every document, image, archive, text
//! and sound made by a real producer (`scripts/make_corpus.py`) comes back as
//! content that says what the file says, not merely without an error.
//!
//! Needs `PORTER_CORPUS` (see [`porter_test::corpus_dir`]); `scripts/test`
//! builds the corpus and sets it.

use porter_fileview::{Cancel, FileInput, Options, View, ViewError, WindowRequest, view};
use porter_test::{
    Quadrant, all_text, assert_colour_near, assert_words_in_order, block_bytes, corpus_dir,
    corpus_file, decode_image_block, first_block, numbered_lines, quadrant_colour, region_colour,
};
use serde_json::Value;

/// The colours of the upright test picture, by quadrant (see the script's
/// `QUADRANTS`).
const QUADRANTS: [(Quadrant, [u8; 3]); 4] = [
    (Quadrant::TopLeft, [255, 0, 0]),
    (Quadrant::TopRight, [0, 255, 0]),
    (Quadrant::BottomLeft, [0, 0, 255]),
    (Quadrant::BottomRight, [255, 255, 0]),
];

/// How far a sampled colour may be from the one drawn: JPEG at quality 90
/// and a rescale move a flat colour by a few levels, never by this much.
const COLOUR_TOLERANCE: u8 = 60;

/// Views a corpus file (by its path under the corpus folder) with default
/// options and the given window.
fn view_window(relative: &str, window: &WindowRequest) -> Result<View, ViewError> {
    let bytes = corpus_file(relative);
    let name = relative.rsplit('/').next().unwrap_or(relative);
    let input = FileInput {
        bytes: &bytes,
        name,
        declared_type: None,
        link: None,
    };
    view(&input, window, &Options::default(), &Cancel::new())
}

/// The first window of a corpus file, serialized as the MCP tool result
/// carries it.
fn view_json(relative: &str) -> Value {
    let view = view_window(relative, &WindowRequest::default())
        .unwrap_or_else(|error| panic!("{relative} is not viewed: {error}"));
    serde_json::to_value(&view).expect("a View serializes, because it holds only plain data")
}

/// The numbered lines of a view's text, without their numbers.
fn lines(view: &Value) -> Vec<String> {
    numbered_lines(&all_text(view))
        .into_iter()
        .map(|(_, line)| line)
        .collect()
}

/// The first line of the first text block: the header of a text window.
fn header(view: &Value) -> String {
    first_block(view, "text")["text"]
        .as_str()
        .and_then(|text| text.lines().next())
        .unwrap_or_default()
        .to_owned()
}

/// The first numbered line containing `needle`.
fn line_with<'a>(lines: &'a [String], needle: &str) -> &'a str {
    lines
        .iter()
        .find(|line| line.contains(needle))
        .unwrap_or_else(|| panic!("no line contains {needle:?}; the lines are {lines:#?}"))
}

/// Asserts the record's `kind` and `shown`.
fn assert_shown(view: &Value, kind: &str, shown: &str) {
    let record = &view["structured"];
    assert_eq!(
        (record["kind"].as_str(), record["shown"].as_str()),
        (Some(kind), Some(shown)),
        "record: {record:#}"
    );
}

#[test]
fn a_word_document_reads_as_markdown_headings_paragraphs_and_pipe_table_rows_in_order() {
    let view = view_json("real/report.docx");
    assert_shown(&view, "document", "text");
    let lines = lines(&view);
    assert_words_in_order(
        &lines.join("\n"),
        &[
            "# Quarterly Report Alpha",
            "apples",
            "bananas",
            "Left\tRight",
            "Second line",
            "## Details Table",
            "| Fruit | Colour | Count |",
            "| Apple | Red | 3 |",
            "| Banana | Yellow | 5 |",
            "The closing paragraph says goodbye.",
        ],
    );
    assert!(
        lines
            .windows(2)
            .any(|pair| pair[0] == "Left\tRight\\" && pair[1] == "Second line"),
        "the tab inside the run is kept and its break is a Markdown line break: {lines:#?}"
    );
    for row in [
        "| Fruit | Colour | Count |",
        "| Apple | Red | 3 |",
        "| Banana | Yellow | 5 |",
    ] {
        assert!(lines.iter().any(|line| line == row), "no row line {row:?}");
    }
    let outline = &view["structured"]["outline"];
    assert_eq!(outline[0]["text"], "Quarterly Report Alpha", "{outline:#}");
    assert_eq!(outline[1]["text"], "Details Table", "{outline:#}");
    assert_eq!(outline[1]["level"], 2, "{outline:#}");
    let line = |n: &Value| {
        let n = usize::try_from(n.as_u64().expect("a line number")).expect("small");
        lines[n - 1].clone()
    };
    assert_eq!(line(&outline[0]["line"]), "# Quarterly Report Alpha");
    assert_eq!(line(&outline[1]["line"]), "## Details Table");
    let said = format!("{}\n{}", all_text(&view), view["structured"]["notes"]).to_lowercase();
    assert!(
        said.contains("formatting"),
        "a note says formatting is not included: {said}"
    );
}

#[test]
fn a_presentation_reads_slides_in_the_order_shown_with_notes_after_each_and_the_hidden_one_marked()
{
    let view = view_json("real/slides.pptx");
    assert_shown(&view, "presentation", "text");
    let lines = lines(&view);
    assert_words_in_order(
        &lines.join("\n"),
        &[
            "Slide 1",
            "Opening Remarks",
            "Welcome everyone",
            "Remember to smile",
            "Slide 2",
            "Budget Table",
            "| Item | Cost |",
            "| Coffee | 12 |",
            "| Paper | 7 |",
            "Mention coffee",
            "Slide 3",
            "Appendix Figures",
            "Secret numbers",
            "Slide 4",
            "Closing Thoughts",
            "Thank you all",
            "Wave goodbye",
        ],
    );
    for slide in 1..=4 {
        let heading = line_with(&lines, &format!("Slide {slide}"));
        assert_eq!(
            heading.to_lowercase().contains("hidden"),
            slide == 3,
            "only slide 3 is marked hidden; its heading is {heading:?}"
        );
    }
}

#[test]
fn a_workbook_reads_sheets_in_order_with_the_hidden_one_marked_cached_formulas_and_iso_dates() {
    let view = view_json("real/book.xlsx");
    assert_shown(&view, "spreadsheet", "text");
    let lines = lines(&view);
    assert_words_in_order(
        &lines.join("\n"),
        &[
            "Summary",
            "| Name | Amount |",
            "| Widget | 42 |",
            "| Gadget | 17.5 |",
            "| Total | 59.5 |",
            "## Secret",
            "| classified | 1 |",
            "## Timeline",
            "| Event | Day |",
            "| Launch | 2024-03-15 |",
            "| Review | 2024-12-01 |",
        ],
    );
    for (sheet, hidden) in [("Summary", false), ("Secret", true), ("Timeline", false)] {
        let heading = line_with(&lines, sheet);
        assert_eq!(
            heading.to_lowercase().contains("hidden"),
            hidden,
            "only Secret is marked hidden; the heading of {sheet} is {heading:?}"
        );
    }
}

/// Whether `line` marks the start of PDF page `page` ("Page 2", "--- page 2
/// of 3 ---", …): the words "page N" with no digit after N.
fn is_page_marker(line: &str, page: usize) -> bool {
    let lower = line.to_lowercase();
    let marker = format!("page {page}");
    lower.match_indices(&marker).any(|(at, _)| {
        !lower[at + marker.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    })
}

#[test]
fn a_pdf_travels_as_a_blob_only_when_asked_or_when_its_text_cannot_be_read() {
    for file in ["real/reportlab.pdf", "real/fpdf2.pdf"] {
        let bytes = corpus_file(file);
        let input = FileInput::new(&bytes, "a.pdf");
        let view_with = |attach_pdf: bool| {
            let options = Options {
                attach_pdf,
                ..Options::default()
            };
            let view = view(&input, &WindowRequest::default(), &options, &Cancel::new())
                .unwrap_or_else(|error| panic!("{file} is not viewed: {error}"));
            serde_json::to_value(&view).expect("a View serializes")
        };
        let asked = view_with(true);
        let blob = first_block(&asked, "resource");
        assert_eq!(blob["resource"]["mimeType"], "application/pdf", "{file}");
        assert_eq!(block_bytes(blob), bytes, "{file}: the blob is the file");
        let plain = view_with(false);
        let blocks = plain["content"].as_array().expect("content");
        let resources = blocks.iter().filter(|b| b["type"] == "resource").count();
        // Without a PDF reader its text cannot be read: the PDF is all there is.
        let expected = usize::from(!cfg!(feature = "pdf"));
        assert_eq!(resources, expected, "{file}: {blocks:?}");
    }
}

#[test]
fn each_pdf_page_s_words_follow_its_page_marker() {
    let cases: [(&str, [&str; 3]); 2] = [
        (
            "real/reportlab.pdf",
            [
                "alpha bravo charlie",
                "delta echo foxtrot",
                "golf hotel india",
            ],
        ),
        (
            "real/fpdf2.pdf",
            [
                "juliet kilo lima",
                "mike november oscar",
                "papa quebec romeo",
            ],
        ),
    ];
    for (file, pages) in cases {
        let view = view_json(file);
        assert_eq!(view["structured"]["kind"], "pdf", "{file}");
        if !cfg!(feature = "pdf") {
            continue;
        }
        let lines = lines(&view);
        let markers: Vec<usize> = (1..=pages.len())
            .map(|page| {
                lines
                    .iter()
                    .position(|line| is_page_marker(line, page))
                    .unwrap_or_else(|| panic!("{file}: no marker for page {page}: {lines:#?}"))
            })
            .collect();
        for (index, words) in pages.iter().enumerate() {
            let end = markers.get(index + 1).copied().unwrap_or(lines.len());
            assert!(
                markers[index] < end,
                "{file}: page markers out of order: {markers:?}"
            );
            let page_text = lines[markers[index]..end].join("\n");
            assert_words_in_order(&page_text, &words.split(' ').collect::<Vec<_>>());
        }
    }
}

#[test]
fn every_exif_orientation_comes_back_upright_with_its_quadrant_colours() {
    let mut failures = Vec::new();
    for orientation in 1..=8 {
        let file = format!("real/orientation-{orientation}.jpg");
        let view = view_json(&file);
        let picture = decode_image_block(first_block(&view, "image"));
        if picture.dimensions() != (160, 120) {
            failures.push(format!(
                "{file}: {:?} returned, not 160x120 upright",
                picture.dimensions()
            ));
            continue;
        }
        for (quadrant, expected) in QUADRANTS {
            let got = quadrant_colour(&picture, quadrant);
            if got[..3]
                .iter()
                .zip(expected)
                .any(|(&g, e)| g.abs_diff(e) > COLOUR_TOLERANCE)
            {
                failures.push(format!("{file}: {quadrant:?} is {got:?}, not {expected:?}"));
            }
        }
        let turned = view["structured"]["image"]["turned_upright"].as_bool();
        if turned != Some(orientation != 1) {
            failures.push(format!("{file}: turned_upright is {turned:?}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn a_picture_turned_a_quarter_by_exif_is_described_as_stored_and_as_shown() {
    for orientation in 1..=8 {
        let file = format!("real/orientation-{orientation}.jpg");
        let view = view_json(&file);
        let text = all_text(&view);
        let shown = decode_image_block(first_block(&view, "image")).dimensions();
        assert_eq!(
            shown,
            (160, 120),
            "{file}: the model gets the upright picture"
        );
        if (5..=8).contains(&orientation) {
            assert!(
                text.contains("120×160 pixels as stored")
                    && text.contains("160×120 as shown upright"),
                "{file}: {text}"
            );
        } else {
            assert!(text.contains("160×120 pixels"), "{file}: {text}");
            assert!(!text.contains("as stored"), "{file}: {text}");
        }
    }
}

#[test]
fn a_6000_by_4000_photo_turned_by_exif_comes_back_upright_scaled_and_within_the_byte_limit() {
    let options = Options::default();
    let view = view_json("real/photo-6000x4000.jpg");
    assert_shown(&view, "image", "image");
    let record = &view["structured"]["image"];
    assert_eq!(
        (&record["original_width"], &record["original_height"]),
        (&Value::from(6000), &Value::from(4000)),
        "{record:#}"
    );
    for flag in ["turned_upright", "scaled", "reencoded"] {
        assert_eq!(record[flag], true, "{flag}: {record:#}");
    }

    let block = first_block(&view, "image");
    assert_eq!(block["mimeType"], "image/jpeg");
    let bytes = block_bytes(block);
    assert!(bytes.len() <= options.image_bytes, "{} bytes", bytes.len());
    assert_eq!(record["bytes"], bytes.len());
    let picture = decode_image_block(block);
    let (width, height) = picture.dimensions();
    assert_eq!(
        (record["width"].as_u64(), record["height"].as_u64()),
        (Some(width.into()), Some(height.into()))
    );
    assert!(
        height > width && height <= options.image_edge_px && height >= options.image_edge_px / 2,
        "upright the photo is tall, its long edge at most {} px: {width}x{height}",
        options.image_edge_px
    );
    // The red square fills the upright top-left quarter of the width and a
    // sixth of the height.
    let red = region_colour(&picture, 0, 0, width / 8, height / 12);
    assert_colour_near(
        red,
        [255, 0, 0],
        COLOUR_TOLERANCE,
        "the upright top-left corner",
    );
    assert!(
        all_text(&view).to_lowercase().contains("scaled"),
        "the text says it was scaled: {}",
        all_text(&view)
    );
}

#[test]
fn an_animated_gif_comes_back_as_its_first_frame() {
    let view = view_json("real/animated.gif");
    assert_shown(&view, "image", "image");
    let picture = decode_image_block(first_block(&view, "image"));
    assert_eq!(picture.dimensions(), (64, 64));
    assert_colour_near(
        region_colour(&picture, 16, 16, 48, 48),
        [255, 0, 0],
        COLOUR_TOLERANCE,
        "the first frame",
    );
}

#[test]
fn a_transparent_png_that_fits_comes_back_as_itself_with_its_transparent_pixels() {
    let view = view_json("real/transparent.png");
    assert_shown(&view, "image", "image");
    let block = first_block(&view, "image");
    assert_eq!(block["mimeType"], "image/png");
    assert_eq!(block_bytes(block), corpus_file("real/transparent.png"));
    let picture = decode_image_block(block);
    assert_eq!(
        picture.get_pixel(48, 32).0[3],
        0,
        "the right half is transparent"
    );
    assert_eq!(
        picture.get_pixel(16, 32).0,
        [0, 0, 255, 255],
        "the left half is opaque blue"
    );
}

#[test]
fn bmp_and_tiff_are_converted_with_their_colours_kept() {
    for (file, format) in [("real/picture.bmp", "BMP"), ("real/picture.tiff", "TIFF")] {
        let view = view_json(file);
        assert_shown(&view, "image", "image");
        let block = first_block(&view, "image");
        assert!(
            ["image/png", "image/jpeg"].contains(&block["mimeType"].as_str().unwrap_or_default()),
            "{file}: returned as {}",
            block["mimeType"]
        );
        assert_eq!(view["structured"]["image"]["reencoded"], true, "{file}");
        assert!(
            all_text(&view).contains(format),
            "{file}: the text says it was converted from {format}: {}",
            all_text(&view)
        );
        let picture = decode_image_block(block);
        assert_eq!(picture.dimensions(), (64, 48), "{file}");
        for (quadrant, expected) in QUADRANTS {
            assert_colour_near(
                quadrant_colour(&picture, quadrant),
                expected,
                COLOUR_TOLERANCE,
                &format!("{file} {quadrant:?}"),
            );
        }
    }
}

/// The listing line of entry `name`: its first tab-separated field is the
/// name (a directory with or without its trailing slash).
fn entry_line<'a>(lines: &'a [String], name: &str) -> Option<&'a str> {
    let bare = name.trim_end_matches('/');
    lines.iter().map(String::as_str).find(|line| {
        line.split('\t')
            .next()
            .map(|field| field.trim_end_matches('/'))
            == Some(bare)
    })
}

#[test]
fn every_archive_kind_lists_its_entries_with_sizes_directories_and_links() {
    let archives = [
        "archive.zip",
        "archive.tar",
        "archive.tar.gz",
        "archive.tar.bz2",
        "archive.tar.xz",
        "archive.tar.zst",
    ];
    for archive in archives {
        let file = format!("real/{archive}");
        if archive == "archive.tar.zst" && !corpus_dir().join(&file).exists() {
            eprintln!("{file} was not made (no zstd command); skipped");
            continue;
        }
        let view = view_json(&file);
        assert_shown(&view, "archive", "text");
        let lines = lines(&view);
        for name in [
            "data/numbers.csv",
            "docs/meeting notes.txt",
            "docs/notes/todo.txt",
            "docs/readme.txt",
            "empty-dir/",
        ] {
            assert!(
                entry_line(&lines, name).is_some(),
                "{file}: no entry {name:?}: {lines:#?}"
            );
        }
        let readme = entry_line(&lines, "docs/readme.txt").unwrap_or_default();
        assert!(
            readme.contains("23"),
            "{file}: readme is 23 bytes: {readme:?}"
        );
        let directory = entry_line(&lines, "empty-dir/").unwrap_or_default();
        assert!(
            directory.to_lowercase().contains("director"),
            "{file}: empty-dir is said to be a directory: {directory:?}"
        );
        if archive != "archive.zip" {
            let link = entry_line(&lines, "link-to-readme")
                .unwrap_or_else(|| panic!("{file}: no symbolic link entry: {lines:#?}"));
            assert!(
                link.to_lowercase().contains("link") && link.contains("docs/readme.txt"),
                "{file}: the link shows its target: {link:?}"
            );
        }
    }
}

#[test]
fn utf8_text_is_numbered_like_cat_and_a_last_line_without_newline_counts() {
    let view = view_json("real/lines.txt");
    assert_shown(&view, "text", "text");
    let numbered = numbered_lines(&all_text(&view));
    assert_eq!(numbered.len(), 5, "{numbered:#?}");
    assert_eq!(
        numbered[1],
        (2, "Second line: naïve café, ünïcödé ✓.".to_owned())
    );
    assert_eq!(numbered[2], (3, String::new()));
    assert_eq!(
        numbered[4],
        (5, "A final line without newline counts.".to_owned())
    );
    let window = &view["structured"]["window"];
    assert_eq!(window["total_lines"], 5);
    assert!(window.get("next_start_line").is_none(), "{window:#}");
}

#[test]
fn utf16_and_windows_1252_text_are_decoded_and_the_header_says_from_what() {
    let cases: [(&str, &str, &[&str]); 2] = [
        (
            "real/utf16le.txt",
            "UTF-16",
            &["Grüße aus Köln", "日本語のテキスト", "Ελληνικά γράμματα"],
        ),
        (
            "real/windows-1252.txt",
            "Windows-1252",
            &[
                "Café costs 5 € today.",
                "“Quoted” text — with a dash.",
                "Plain ASCII last line.",
            ],
        ),
    ];
    for (file, encoding, expected) in cases {
        let view = view_json(file);
        assert_shown(&view, "text", "text");
        assert!(
            header(&view).contains(encoding),
            "{file}: the header names {encoding}: {}",
            header(&view)
        );
        // The BOM is not part of line 1, and CR before LF is dropped.
        assert_eq!(lines(&view), expected, "{file}");
    }
}

#[test]
fn csv_and_html_are_shown_as_text_with_their_words_in_order() {
    let view = view_json("real/table.csv");
    assert_shown(&view, "text", "text");
    assert_words_in_order(
        &lines(&view).join("\n"),
        &["id,name,comment", "Alice", "likes, commas", "Bob", "hi"],
    );

    let view = view_json("real/page.html");
    assert_eq!(view["structured"]["kind"], "text");
    assert_words_in_order(
        &all_text(&view),
        &[
            "Corpus Page",
            "Corpus Heading",
            "The first paragraph of the page.",
            "apple item",
            "banana item",
        ],
    );
}

#[test]
fn a_text_file_named_like_a_jpeg_is_shown_as_text_and_says_both_types() {
    let view = view_json("real/actually-text.jpg");
    assert_shown(&view, "text", "text");
    let note = view["structured"]["type_note"].as_str().unwrap_or_default();
    assert!(
        note.contains("image/jpeg") && note.contains("text/plain"),
        "the type note names both types: {note:?}"
    );
}

/// The window record of a view as (start, end, total, next).
fn window_of(view: &Value) -> (Option<u64>, Option<u64>, Option<u64>, Option<u64>) {
    let window = &view["structured"]["window"];
    (
        window["start_line"].as_u64(),
        window["end_line"].as_u64(),
        window["total_lines"].as_u64(),
        window["next_start_line"].as_u64(),
    )
}

#[test]
fn a_10000_line_file_pages_in_windows_of_500_and_says_where_the_next_starts() {
    let file = "real/numbered-10000.txt";
    let first = view_json(file);
    assert_eq!(
        window_of(&first),
        (Some(1), Some(500), Some(10_000), Some(501))
    );
    let numbered = numbered_lines(&all_text(&first));
    assert_eq!(numbered.len(), 500);
    assert_eq!(numbered[0], (1, "line 1 of 10000".to_owned()));
    assert_eq!(numbered[499], (500, "line 500 of 10000".to_owned()));
    assert!(
        header(&first).contains("start_line=501"),
        "{}",
        header(&first)
    );

    let window = WindowRequest {
        start_line: Some(9900),
        line_count: None,
    };
    let last = view_window(file, &window).expect("line 9900 is inside the file");
    let last = serde_json::to_value(&last).expect("a View serializes");
    assert_eq!(
        window_of(&last),
        (Some(9900), Some(10_000), Some(10_000), None)
    );
    let numbered = numbered_lines(&all_text(&last));
    assert_eq!(numbered.len(), 101);
    assert_eq!(numbered[100], (10_000, "line 10000 of 10000".to_owned()));
    assert!(!header(&last).contains("start_line="), "{}", header(&last));
}

#[test]
fn a_window_past_the_end_is_an_error_naming_the_line_count() {
    let window = WindowRequest {
        start_line: Some(10_001),
        line_count: None,
    };
    match view_window("real/numbered-10000.txt", &window) {
        Err(error @ ViewError::PastEnd { total_lines, .. }) => {
            assert_eq!(total_lines, 10_000);
            let message = error.to_string();
            assert!(
                message.contains("10000") || message.contains("10,000"),
                "the message names the line count: {message}"
            );
        }
        other => panic!("expected PastEnd, got {other:?}"),
    }
}

#[test]
fn a_window_stops_before_32_kib_of_numbered_text_and_points_at_the_next_line() {
    let options = Options::default();
    let window = WindowRequest {
        start_line: Some(1),
        line_count: Some(options.max_window_lines),
    };
    let view = view_window("real/numbered-10000.txt", &window).expect("line 1 exists");
    let view = serde_json::to_value(&view).expect("a View serializes");
    let text = all_text(&view);
    let numbered_bytes: usize = text
        .lines()
        .filter(|line| numbered_lines(line).len() == 1)
        .map(|line| line.len() + 1)
        .sum();
    assert!(
        numbered_bytes <= options.window_bytes,
        "{numbered_bytes} bytes"
    );
    let (start, end, _, next) = window_of(&view);
    let end = end.expect("the window has an end line");
    assert_eq!(start, Some(1));
    assert!(
        end < options.max_window_lines,
        "2000 lines of this file pass 32 KiB"
    );
    assert_eq!(next, Some(end + 1));
}

#[test]
fn a_small_wav_comes_back_as_an_audio_block_of_its_bytes() {
    let view = view_json("real/tone.wav");
    assert_shown(&view, "audio", "audio");
    let block = first_block(&view, "audio");
    let mime = block["mimeType"].as_str().unwrap_or_default();
    assert!(mime.starts_with("audio/") && mime.contains("wav"), "{mime}");
    assert_eq!(block_bytes(block), corpus_file("real/tone.wav"));
}

#[test]
fn no_real_file_is_only_described() {
    let real = corpus_dir().join("real");
    let mut entries: Vec<_> = std::fs::read_dir(&real)
        .expect("the corpus has a real/ folder")
        .map(|entry| {
            entry
                .expect("a corpus folder entry is readable")
                .file_name()
        })
        .collect();
    entries.sort();
    let mut described = Vec::new();
    for name in entries {
        let name = name.to_string_lossy();
        // The photo has its own test; decoding it again only costs time.
        if name.starts_with("photo-") {
            continue;
        }
        let view = view_json(&format!("real/{name}"));
        if view["structured"]["shown"] == "described" {
            described.push(format!("{name}: {}", view["structured"]["reason"]));
        }
    }
    assert!(described.is_empty(), "{described:#?}");
}
