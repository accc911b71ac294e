//! Files built to hurt a reader (zip bombs, a tar.gz past 1 GiB, a
//! 60000x60000 PNG, a 100,000-frame GIF, 2000-deep and billion-laughs XML, a
//! looping PDF page tree, truncated and random bytes) each come back as a
//! view that says what was found, promptly, without a panic, and without the
//! process growing past a bound.
//!
//! Needs `PORTER_CORPUS` (see [`porter_test::corpus_dir`]); the files are
//! made by `scripts/make_corpus.py`.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use porter_fileview::{
    Cancel, FileInput, Markdown, Options, View, ViewError, WindowRequest, to_markdown, view,
};
use porter_test::{all_text, corpus_file, numbered_lines};
use serde_json::Value;

/// `TIME_BOUND` is how long one hostile file may take. It is a hang guard,
/// not a benchmark: the slowest honest case inflates 1 GiB of a tar.gz
/// before its cap stops it, which takes about a second optimised and about
/// ten in an unoptimised test build on a slow two-core machine.
const TIME_BOUND: Duration = if cfg!(debug_assertions) {
    Duration::from_secs(60)
} else {
    Duration::from_secs(10)
};

/// `PEAK_RSS_BYTES` bounds the test process's peak resident memory after the
/// whole set. The limits let a view hold at most about half a gigabyte at
/// once (a 64 MiB file, a 50-megapixel RGBA decode of 200 MB and its scaled
/// copy, or 128 MiB of Office XML), while fully expanding any of these files
/// would take from 3 GiB (the tar.gz) to 125 GiB (the overlapping zip) or
/// 14 GB (the PNG's pixels), so a view that trusted any of them passes it.
const PEAK_RSS_BYTES: u64 = 1536 * 1024 * 1024;

/// What a hostile file may come back as.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// Only described, with a reason.
    Described,
    /// Described with a reason, or shown with at least one note saying what
    /// was cut or refused.
    DescribedOrNoted,
    /// Listed as an archive (with these entries present and those absent),
    /// or described.
    ListedOrDescribed {
        present: &'static [&'static str],
        absent: &'static [&'static str],
        note_needed: bool,
    },
    /// An image (a first frame, or what decoded of a cut file), or described.
    ImageOrDescribed,
    /// Anything that does not hang or panic and says something.
    Anything,
}

/// The hostile set: file under `hostile/`, and what it may come back as.
const CASES: &[(&str, Expect)] = &[
    (
        // 4 entries of 1 GiB each; a listing reads only the directory, and
        // its sizes already say what the archive holds.
        "zip-bomb.zip",
        Expect::ListedOrDescribed {
            present: &["zeros-1.bin", "zeros-4.bin"],
            absent: &[],
            note_needed: false,
        },
    ),
    // 2000 directory entries share one local entry: refused, or listed with
    // a note about the overlap or the declared expansion.
    ("overlapping.zip", Expect::DescribedOrNoted),
    (
        // after-the-cap.txt starts past 3 GiB of expansion, so a listing
        // that honours the 1 GiB cap never reaches it and says where it stopped.
        "bomb.tar.gz",
        Expect::ListedOrDescribed {
            present: &["zeros-1.bin"],
            absent: &["after-the-cap.txt"],
            note_needed: true,
        },
    ),
    ("huge-dimensions.png", Expect::Described),
    ("frames-100000.gif", Expect::ImageOrDescribed),
    ("deep-nesting.docx", Expect::Described),
    ("billion-laughs.docx", Expect::DescribedOrNoted),
    ("page-loop.pdf", Expect::Anything),
    ("truncated.jpg", Expect::ImageOrDescribed),
    (
        "truncated.tar.gz",
        Expect::ListedOrDescribed {
            present: &["files/file-000.txt"],
            absent: &[],
            note_needed: true,
        },
    ),
    ("random.bin", Expect::Described),
];

/// Views one hostile file on its own thread, as [`on_its_own_thread`].
fn view_hostile(file: &'static str) -> Result<(Result<View, ViewError>, Duration), String> {
    on_its_own_thread(file, "view", |bytes, cancel| {
        let input = FileInput {
            bytes,
            name: file,
            declared_type: None,
            link: None,
        };
        view(
            &input,
            &WindowRequest::default(),
            &Options::default(),
            cancel,
        )
    })
}

/// [`to_markdown`] of one hostile file on its own thread, as [`view_hostile`].
fn markdown_hostile(file: &'static str) -> Result<(Result<Markdown, ViewError>, Duration), String> {
    on_its_own_thread(file, "to_markdown", |bytes, cancel| {
        to_markdown(&FileInput::new(bytes, file), &Options::default(), cancel)
    })
}

/// Runs `call` (named `what`) on the bytes of one hostile file on its own
/// thread, so that a panic is caught and a hang is noticed at
/// [`TIME_BOUND`] instead of stalling the run; a hang is cancelled.
fn on_its_own_thread<T: Send + 'static>(
    file: &'static str,
    what: &str,
    call: impl FnOnce(&[u8], &Cancel) -> T + Send + 'static,
) -> Result<(T, Duration), String> {
    let bytes = corpus_file(&format!("hostile/{file}"));
    let (sender, receiver) = mpsc::channel();
    let cancel = Cancel::new();
    let worker_cancel = cancel.clone();
    std::thread::spawn(move || {
        let started = Instant::now();
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| call(&bytes, &worker_cancel)));
        // The receiver is gone only when the case already timed out.
        let _ = sender.send(outcome.map(|result| (result, started.elapsed())));
    });
    match receiver.recv_timeout(TIME_BOUND) {
        Ok(Ok(done)) => Ok(done),
        Ok(Err(panic)) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(ToString::to_string)
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(format!("{file}: {what} panicked: {message}"))
        }
        Err(_) => {
            cancel.cancel();
            Err(format!(
                "{file}: {what} gave no answer within {TIME_BOUND:?}"
            ))
        }
    }
}

/// What is wrong with the view of `file`, if anything, given what it may be.
fn problems(file: &str, view: &Value, expect: Expect) -> Vec<String> {
    let mut found = Vec::new();
    let record = &view["structured"];
    let shown = record["shown"].as_str().unwrap_or_default();
    let reason = record["reason"].as_str().unwrap_or_default();
    let notes = record["notes"].as_array().map_or(0, Vec::len);
    let text = all_text(view);

    if text.trim().is_empty() {
        found.push(format!("{file}: no text says what it is"));
    }
    if shown == "described" && reason.trim().is_empty() {
        found.push(format!("{file}: described without a reason"));
    }
    let ok = match expect {
        Expect::Described => shown == "described",
        Expect::DescribedOrNoted => shown == "described" || notes > 0,
        Expect::ImageOrDescribed => shown == "described" || shown == "image",
        Expect::Anything => true,
        Expect::ListedOrDescribed {
            present,
            absent,
            note_needed,
        } => {
            if shown == "described" {
                true
            } else {
                let names: Vec<String> = numbered_lines(&text)
                    .into_iter()
                    .filter_map(|(_, line)| line.split('\t').next().map(str::to_owned))
                    .collect();
                for name in present {
                    if !names.iter().any(|listed| listed == name) {
                        found.push(format!("{file}: {name} is not listed: {names:?}"));
                    }
                }
                for name in absent {
                    if names.iter().any(|listed| listed == name) {
                        found.push(format!("{file}: {name} is listed, past the cap"));
                    }
                }
                shown == "text" && (notes > 0 || !note_needed)
            }
        }
    };
    if !ok {
        found.push(format!(
            "{file}: shown as {shown:?} with {notes} notes and reason {reason:?}, \
             where {expect:?} was expected"
        ));
    }
    // No view may carry the expansion it refused: a window is at most 32 KiB
    // of text, and a billion laughs would be 3 GB of "lol".
    if text.len() > 1024 * 1024 || text.matches("lollol").count() > 100 {
        found.push(format!("{file}: {} bytes of text came back", text.len()));
    }
    found
}

#[test]
fn every_hostile_file_is_described_promptly_without_a_panic_and_within_bounded_memory() {
    let mut failures = Vec::new();
    for &(file, expect) in CASES {
        match view_hostile(file) {
            Err(failure) => failures.push(failure),
            Ok((Err(error), _)) => failures.push(format!("{file}: an error, not a view: {error}")),
            Ok((Ok(view), elapsed)) => {
                let view = serde_json::to_value(&view)
                    .expect("a View serializes, because it holds only plain data");
                eprintln!(
                    "{file}: {} in {elapsed:.1?}",
                    view["structured"]["shown"].as_str().unwrap_or_default()
                );
                failures.extend(problems(file, &view, expect));
            }
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

/// Every hostile file made into Markdown: promptly, without a panic, and
/// either as bounded Markdown or as an error that says why.
#[test]
fn every_hostile_file_through_to_markdown_ends_promptly_in_bounded_markdown_or_a_reason() {
    let files: Vec<&'static str> = CASES
        .iter()
        .map(|(file, _)| *file)
        .chain(["deep-nesting.html"])
        .collect();
    let cap = Options::default().office_text_bytes;
    let mut failures = Vec::new();
    for file in files {
        match markdown_hostile(file) {
            Err(failure) => failures.push(failure),
            Ok((Ok(markdown), elapsed)) => {
                eprintln!(
                    "{file}: Markdown of {} bytes in {elapsed:.1?}",
                    markdown.text.len()
                );
                if markdown.text.len() > cap + 1 || markdown.text.matches("lollol").count() > 100 {
                    failures.push(format!("{file}: {} bytes of Markdown", markdown.text.len()));
                }
            }
            Ok((
                Err(error @ (ViewError::NotExtractable { .. } | ViewError::Unreadable { .. })),
                elapsed,
            )) => {
                eprintln!("{file}: {error} ({elapsed:.1?})");
            }
            Ok((Err(error), _)) => failures.push(format!("{file}: an unexpected error: {error}")),
        }
    }
    if let Some(peak) = porter_test::peak_rss_bytes()
        && peak > PEAK_RSS_BYTES
    {
        failures.push(format!(
            "peak resident memory {} MiB is over {} MiB",
            peak / (1024 * 1024),
            PEAK_RSS_BYTES / (1024 * 1024)
        ));
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
