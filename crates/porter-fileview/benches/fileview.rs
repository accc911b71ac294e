//! Times porter's file view on the benchmark corpus, one document type at a
//! time, so that `bench/fileview/run` can set it beside markitdown and Pillow
//! on the very same files.
//!
//! This is a plain binary (`harness = false`), not a criterion suite, because
//! the comparison needs each side in its own process (for its peak RSS) and
//! one JSON line per file that a script can read.
//!
//! Usage: `fileview [CORPUS_DIR] [ITER] [--only docx,pptx,…]`. Without
//! arguments the corpus is `$FILEVIEW_CORPUS` or the workspace's
//! `target/bench-corpus`, the count is `$ITER` or 5, and `$FILEVIEW_ONLY` may
//! name the types. The `--bench` flag that `cargo bench` passes is ignored.
//!
//! Each timed run includes reading the file from disk (`std::fs::read`), as
//! markitdown and Pillow read from the path too; one untimed run warms up
//! first.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use porter_fileview::{Block, Cancel, FileInput, Options, WindowRequest};
use serde_json::{Value, json};

/// `CORPUS` names each document type and the file that
/// `bench/fileview/make_bench_corpus.py` writes for it.
const CORPUS: &[(&str, &str)] = &[
    ("docx", "report.docx"),
    ("pptx", "deck.pptx"),
    ("xlsx", "sheet.xlsx"),
    ("pdf", "paper.pdf"),
    ("html", "page.html"),
    ("jpeg", "photo.jpg"),
];

/// `DEFAULT_CORPUS` is where `bench/fileview/run` writes the corpus, under
/// the checkout's root (`cargo bench` runs the binary in this crate's
/// folder).
const DEFAULT_CORPUS: &str = "target/bench-corpus";

/// `DEFAULT_ITER` is how many timed runs each file gets when no count is
/// given: enough for a stable median while the whole comparison stays short.
const DEFAULT_ITER: usize = 5;

/// `Settings` is what the command line and environment asked for.
struct Settings {
    /// Folder holding the corpus files.
    corpus: PathBuf,
    /// Timed runs per file.
    iterations: usize,
    /// Types to time; empty means all.
    only: Vec<String>,
}

/// Reads the settings from the arguments first, then the environment, so the
/// same binary works under `cargo bench` and when run directly.
fn settings() -> Result<Settings, String> {
    let mut positional = Vec::new();
    let mut only = std::env::var("FILEVIEW_ONLY").unwrap_or_default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--only" {
            only = args
                .next()
                .ok_or_else(|| "--only needs a list of types, e.g. --only docx,pdf".to_owned())?;
        } else if let Some(list) = arg.strip_prefix("--only=") {
            list.clone_into(&mut only);
        } else if arg.starts_with("--") {
            // `cargo bench` passes `--bench`; other harness flags mean nothing here.
        } else {
            positional.push(arg);
        }
    }
    let corpus = positional
        .first()
        .cloned()
        .or_else(|| std::env::var("FILEVIEW_CORPUS").ok())
        .unwrap_or_else(|| {
            porter_test::checkout_root()
                .join(DEFAULT_CORPUS)
                .display()
                .to_string()
        });
    let iterations = match positional
        .get(1)
        .cloned()
        .or_else(|| std::env::var("ITER").ok())
    {
        Some(text) => text
            .parse::<usize>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("the iteration count {text:?} is not a positive number"))?,
        None => DEFAULT_ITER,
    };
    let only = only
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
        .collect();
    Ok(Settings {
        corpus: PathBuf::from(corpus),
        iterations,
        only,
    })
}

/// The median of some timings, which need not be sorted.
fn median(times: &mut [f64]) -> f64 {
    times.sort_by(f64::total_cmp);
    let mid = times.len() / 2;
    if times.len().is_multiple_of(2) {
        f64::midpoint(times[mid - 1], times[mid])
    } else {
        times[mid]
    }
}

/// One view of the file, from reading it to the finished content, in
/// milliseconds, with what porter made of it (for the sanity columns).
fn view_once(path: &Path, name: &str) -> Result<(f64, Value), String> {
    let start = Instant::now();
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let input = FileInput {
        bytes: &bytes,
        name,
        declared_type: None,
        link: None,
    };
    let view = porter_fileview::view(
        &input,
        &WindowRequest::default(),
        &Options::default(),
        &Cancel::new(),
    );
    let elapsed = start.elapsed().as_secs_f64() * 1000.0;
    let view = std::hint::black_box(view).map_err(|e| format!("view failed: {e}"))?;
    let text_chars: usize = view
        .content
        .iter()
        .map(|block| match block {
            Block::Text { text } => text.chars().count(),
            _ => 0,
        })
        .sum();
    let blocks: Vec<&str> = view.content.iter().map(Block::kind).collect();
    let record = serde_json::to_value(&view.structured).unwrap_or(Value::Null);
    let summary = json!({
        "kind": record.get("kind"),
        "shown": record.get("shown"),
        "mime_type": record.get("mime_type"),
        "blocks": blocks,
        "text_chars": text_chars,
        "total_lines": record.get("window").and_then(|w| w.get("total_lines")),
        "image": record.get("image"),
        "reason": record.get("reason"),
    });
    Ok((elapsed, summary))
}

/// Times one corpus file and returns its JSON line.
fn time_file(kind: &str, path: &Path, name: &str, iterations: usize) -> Value {
    let size = std::fs::metadata(path).map(|m| m.len()).ok();
    let fail = |error: String| json!({"side": "porter", "type": kind, "file": name, "bytes": size, "error": error});
    let summary = match view_once(path, name) {
        Ok((_, summary)) => summary,
        Err(error) => return fail(error),
    };
    let mut times = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        match view_once(path, name) {
            Ok((ms, _)) => times.push(ms),
            Err(error) => return fail(error),
        }
    }
    let min = times.iter().copied().fold(f64::INFINITY, f64::min);
    let max = times.iter().copied().fold(0.0, f64::max);
    json!({
        "side": "porter",
        "type": kind,
        "file": name,
        "bytes": size,
        "iterations": iterations,
        "median_ms": median(&mut times),
        "min_ms": min,
        "max_ms": max,
        "timed": "std::fs::read + porter_fileview::view (default window and options)",
        "result": summary,
    })
}

fn main() -> ExitCode {
    let settings = match settings() {
        Ok(settings) => settings,
        Err(message) => {
            eprintln!("fileview bench: {message}");
            return ExitCode::from(2);
        }
    };
    if !settings.corpus.is_dir() {
        eprintln!(
            "fileview bench: no corpus at {}; make one with `bench/fileview/make_bench_corpus.py {}` \
             or run `bench/fileview/run`",
            settings.corpus.display(),
            settings.corpus.display()
        );
        return ExitCode::from(2);
    }
    for &(kind, name) in CORPUS {
        if !settings.only.is_empty() && !settings.only.iter().any(|o| o == kind) {
            continue;
        }
        let line = time_file(kind, &settings.corpus.join(name), name, settings.iterations);
        println!("{line}");
    }
    ExitCode::SUCCESS
}
