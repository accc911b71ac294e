//! `to_markdown` timed in-process, warm: for each file named on the command
//! line, one untimed run, then `ITER` (default 5) timed runs of reading the
//! file and converting it. Prints one JSON line per file with the median in
//! milliseconds. `bench/extract/run` drives it beside markitdown.

use std::process::ExitCode;
use std::time::Instant;

use porter_fileview::{Cancel, FileInput, Options, to_markdown};

fn once(path: &str) -> Result<f64, String> {
    let started = Instant::now();
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let name = path.rsplit('/').next().unwrap_or(path);
    let markdown = to_markdown(
        &FileInput::new(&bytes, name),
        &Options::default(),
        &Cancel::new(),
    )
    .map_err(|e| e.to_string())?;
    std::hint::black_box(markdown);
    Ok(started.elapsed().as_secs_f64() * 1000.0)
}

fn main() -> ExitCode {
    let iterations: usize = std::env::var("ITER")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
        .max(1);
    for path in std::env::args().skip(1).filter(|a| !a.starts_with("--")) {
        let mut times = Vec::with_capacity(iterations);
        let run = once(&path).and_then(|_| {
            for _ in 0..iterations {
                times.push(once(&path)?);
            }
            Ok(())
        });
        if let Err(error) = run {
            eprintln!("extract bench: {error}");
            return ExitCode::from(1);
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        println!("{{\"file\":{path:?},\"median_ms\":{median:.3},\"iterations\":{iterations}}}");
    }
    ExitCode::SUCCESS
}
