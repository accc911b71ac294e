//! The PDF families of `scripts/hostile_pdf.py` that used to run a reader to
//! gigabytes or past its CPU time (a content stream inflating to 200 MiB of
//! text, one 1 MiB stream listed 100,000 times in `/Contents`, a font's
//! `ToUnicode` map inflating to 200 MiB, 100,000 real pages, 2,000 pages
//! each just within the limits of one page) read in this
//! process, with no worker to contain them: each comes back promptly as
//! Markdown and as a view whose notes say what was not read and why, and
//! the process stays within the worker's 512 MiB.
//!
//! One test, the families one after another, so that the process's peak
//! memory is theirs alone. Needs `python3` (the generator is the script the
//! real-client tests use).

use std::path::Path;
use std::time::{Duration, Instant};

use porter_fileview::{Cancel, FileInput, Options, WindowRequest, to_markdown, view};
use porter_test::all_text;

/// `TIME_BOUND` is how long one family may take: a hang guard for an
/// unoptimised build on a slow, shared two-core machine.
const TIME_BOUND: Duration = if cfg!(debug_assertions) {
    Duration::from_secs(60)
} else {
    Duration::from_secs(10)
};

/// `PEAK_RSS_BYTES` is the worker's memory limit, which the reader must
/// now hold by itself.
const PEAK_RSS_BYTES: u64 = 512 * 1024 * 1024;

/// Writes every family of `scripts/hostile_pdf.py` into `dir`.
fn generate(dir: &Path) {
    let script = porter_test::checkout_root().join("scripts/hostile_pdf.py");
    let status = std::process::Command::new("python3")
        .arg(&script)
        .arg(dir)
        .status()
        .expect("python3 runs the generator");
    assert!(status.success(), "{} failed: {status}", script.display());
}

#[test]
fn hostile_pdf_families_are_read_in_process_within_bounds_with_a_note_saying_what_was_not_read() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    generate(dir.path());
    let only = std::env::var("HOSTILE_PDF_ONLY").ok();
    let families: [(&str, &[&str]); 5] = [
        (
            "text-amplification.pdf",
            &[
                "Page 1 was not read: its content streams",
                "past what porter reads of one page",
            ],
        ),
        (
            "repeated-contents.pdf",
            &[
                "Page 1 was not read: its content streams",
                "past what porter reads of one page",
            ],
        ),
        (
            "tounicode-bomb.pdf",
            &["Page 1 was not read: a font's ToUnicode map decodes to more than 8 MiB"],
        ),
        ("many-pages.pdf", &["<!-- page 63 of 100000 -->", "page 63"]),
        (
            "heavy-pages.pdf",
            &["<!-- page 4 of 2000 -->", "a heavy page"],
        ),
    ];
    let mut failures = Vec::new();
    for (name, expected) in families {
        if only.as_deref().is_some_and(|only| only != name) {
            continue;
        }
        let bytes = std::fs::read(dir.path().join(name)).expect("the family was written");
        let input = FileInput::new(&bytes, name);
        let started = Instant::now();
        let markdown = to_markdown(&input, &Options::default(), &Cancel::new());
        let elapsed = started.elapsed();
        let markdown = match markdown {
            Ok(markdown) => markdown,
            Err(error) => {
                failures.push(format!("{name}: no Markdown but an error: {error}"));
                continue;
            }
        };
        eprintln!(
            "{name}: {} bytes of Markdown in {elapsed:.1?}; notes: {:?}",
            markdown.text.len(),
            markdown.notes
        );
        if elapsed > TIME_BOUND {
            failures.push(format!("{name}: took {elapsed:.1?}"));
        }
        for piece in expected {
            if !markdown.text.contains(piece) {
                failures.push(format!("{name}: the Markdown lacks {piece:?}"));
            }
        }
        let noted = match name {
            "many-pages.pdf" => {
                "Read pages 1–63 of 100,000: a PDF listing more than 20,000 pages is read only that far"
            }
            "heavy-pages.pdf" => {
                "Read pages 1–4 of 2,000: with page 5, the pages' content streams decode to more than 128 MiB, past what porter reads of one PDF."
            }
            _ => "Pages not read because their content is past porter's limits for one page: 1.",
        };
        if !markdown.notes.iter().any(|n| n.contains(noted)) {
            failures.push(format!("{name}: no note {noted:?} in {:?}", markdown.notes));
        }

        // The view says the same in its header, as a document.
        let started = Instant::now();
        let shown = view(
            &input,
            &WindowRequest::default(),
            &Options::default(),
            &Cancel::new(),
        );
        let elapsed = started.elapsed();
        match shown {
            Ok(shown) => {
                let json = serde_json::to_value(&shown).expect("a view serialises");
                let text = all_text(&json);
                if !text.contains("as Markdown") || !text.contains(noted) {
                    failures.push(format!(
                        "{name}: the view is not the noted Markdown: {text:.600}"
                    ));
                }
            }
            Err(error) => failures.push(format!("{name}: the view failed: {error}")),
        }
        if elapsed > TIME_BOUND {
            failures.push(format!("{name}: the view took {elapsed:.1?}"));
        }
        if let Some(peak) = porter_test::peak_rss_bytes() {
            eprintln!(
                "{name}: peak resident memory so far {} MiB",
                peak / (1024 * 1024)
            );
        }
    }
    if let Some(peak) = porter_test::peak_rss_bytes() {
        eprintln!("peak resident memory: {} MiB", peak / (1024 * 1024));
        if peak > PEAK_RSS_BYTES {
            failures.push(format!(
                "peak resident memory {} MiB is over {} MiB",
                peak / (1024 * 1024),
                PEAK_RSS_BYTES / (1024 * 1024)
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
