//! What the isolated worker adds to a file's latency: small files prepared
//! in-process, then through the worker (the same porter binary a server
//! uses, with its warm pool), one after another and paced as a server sees
//! them, printing medians, p90s, the added time and the ratio, and the
//! machine's load while it ran.
//!
//! Usage: `worker PORTER_BIN [ITER]` (or `$PORTER_BIN`, `$ITER`; 200 by
//! default); `bench/worker/run` builds both and runs it. The `--bench` flag
//! `cargo bench` passes is ignored.

use std::io::Cursor;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use porter_fileview::worker::{self, Spec};
use porter_fileview::{Cancel, FileInput, Options, prepare};

/// Small files of the kinds a chat carries most: a note, a CSV, a PNG.
fn files() -> Vec<(&'static str, Vec<u8>)> {
    let note = (1..=40)
        .map(|n| format!("line {n} of a short note\n"))
        .collect::<Vec<_>>()
        .concat();
    let csv = (1..=200)
        .map(|n| format!("{n},item {n},{}.50\n", n * 3))
        .collect::<Vec<_>>()
        .concat();
    let mut png = Vec::new();
    image::RgbImage::from_fn(64, 48, |x, y| image::Rgb([x as u8 * 4, y as u8 * 5, 90]))
        .write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png)
        .expect("a PNG encodes");
    vec![
        ("note.txt", note.into_bytes()),
        ("items.csv", csv.into_bytes()),
        ("chart.png", png),
    ]
}

/// Times `iter` prepares of each file, `pause` apart; all times in µs.
fn timed(files: &[(&'static str, Vec<u8>)], iter: usize, pause: Duration) -> Vec<f64> {
    let options = Options::default();
    let mut times = Vec::new();
    for round in 0..iter {
        let (name, bytes) = &files[round % files.len()];
        let started = Instant::now();
        let prepared = prepare(&FileInput::new(bytes, name), &options, &Cancel::new())
            .expect("a small file prepares");
        times.push(started.elapsed().as_secs_f64() * 1e6);
        std::hint::black_box(prepared);
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
    }
    times
}

fn percentile(times: &[f64], p: f64) -> f64 {
    let mut sorted = times.to_vec();
    sorted.sort_by(f64::total_cmp);
    let at = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[at]
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(
        |_| "unknown".to_owned(),
        |l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
    )
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(program) = args
        .first()
        .cloned()
        .or_else(|| std::env::var("PORTER_BIN").ok())
    else {
        eprintln!("worker: pass the porter binary (or set PORTER_BIN)");
        return ExitCode::from(2);
    };
    let iter = args
        .get(1)
        .cloned()
        .or_else(|| std::env::var("ITER").ok())
        .and_then(|n| n.parse().ok())
        .unwrap_or(200);
    let files = files();
    let before = load();
    // In-process first: once a worker is installed it stays.
    timed(&files, 10, Duration::ZERO);
    let here = timed(&files, iter, Duration::ZERO);
    worker::install(Spec {
        program: PathBuf::from(program),
        arg: "__fileview-worker".into(),
        warm: worker::WARM,
    });
    // The first file starts the pool; give it time to fill.
    timed(&files, 1, Duration::from_millis(500));
    let back_to_back = timed(&files, iter, Duration::ZERO);
    std::thread::sleep(Duration::from_millis(500));
    let pause = std::env::var("PAUSE_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .unwrap_or(25);
    let paced = timed(&files, iter, Duration::from_millis(pause));
    let after = load();
    let here_median = percentile(&here, 0.5);
    for (label, times) in [
        ("in-process".to_owned(), &here),
        ("worker, back to back".to_owned(), &back_to_back),
        (format!("worker, {pause} ms apart"), &paced),
    ] {
        let median = percentile(times, 0.5);
        println!(
            "{label:<22} median {median:>8.0} µs  p90 {:>8.0} µs  added {:>7.0} µs  ratio {:>6.1}x",
            percentile(times, 0.9),
            median - here_median,
            median / here_median.max(1.0),
        );
    }
    println!(
        "{iter} files each (a 40-line note, a 200-row CSV, a 64×48 PNG); load average before {before}, after {after}"
    );
    ExitCode::SUCCESS
}
