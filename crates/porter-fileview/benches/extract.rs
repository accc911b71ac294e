//! `to_markdown` timed in-process, warm: for each file named on the command
//! line, one untimed run, then `ITER` (default 5) timed runs of reading the
//! file and converting it. Prints one JSON line per file with the median in
//! milliseconds. `bench/extract/run` drives it beside markitdown, and
//! `bench/pdf-structure/run` over both PDF sets.
//!
//! `--out DIR` also writes each file's Markdown to `DIR/<stem>.md`, so that
//! what the library makes in-process can be scored too; with `ITER=0` the
//! one run that writes it is the timed one (a cold run: the first file pays
//! for loading the table model). The learned models
//! are used when `PORTER_MODELS_DIR` names their folder (the bench, like the
//! `porter` program, reads it; the library never does).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use porter_fileview::{Cancel, FileInput, Options, to_markdown};

fn once(path: &str, options: &Options, out: Option<&Path>) -> Result<f64, String> {
    let started = Instant::now();
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let name = path.rsplit('/').next().unwrap_or(path);
    let markdown = to_markdown(&FileInput::new(&bytes, name), options, &Cancel::new())
        .map_err(|e| e.to_string())?;
    let elapsed = started.elapsed().as_secs_f64() * 1000.0;
    if let Some(dir) = out {
        let stem = Path::new(path).file_stem().unwrap_or_default();
        let target = dir.join(stem).with_extension("md");
        std::fs::write(&target, &markdown.text)
            .map_err(|e| format!("{}: {e}", target.display()))?;
    }
    std::hint::black_box(markdown);
    Ok(elapsed)
}

fn main() -> ExitCode {
    let iterations: usize = std::env::var("ITER")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let options = Options {
        models_dir: std::env::var_os("PORTER_MODELS_DIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from),
        ..Options::default()
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = args
        .iter()
        .position(|a| a == "--out")
        .and_then(|i| args.get(i + 1))
        .map(PathBuf::from);
    let files = args
        .iter()
        .enumerate()
        .filter(|(i, a)| !a.starts_with("--") && (*i == 0 || args[i - 1] != "--out"))
        .map(|(_, a)| a);
    for path in files {
        let mut times = Vec::with_capacity(iterations.max(1));
        let run = once(path, &options, out.as_deref()).and_then(|first| {
            if iterations == 0 {
                times.push(first);
            }
            for _ in 0..iterations {
                times.push(once(path, &options, None)?);
            }
            Ok(())
        });
        if let Err(error) = run {
            eprintln!("extract bench: {error}");
            return ExitCode::from(1);
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        let runs = times.len();
        println!("{{\"file\":{path:?},\"median_ms\":{median:.3},\"iterations\":{runs}}}");
    }
    ExitCode::SUCCESS
}
