//! Times `capture_result` on a tool result holding one long base64 file and
//! sets it beside the shell pipeline `base64 -d | sha256sum` on the same
//! base64 text, so `bench/capture/run` can print both with the targets.
//!
//! The timed figure keeps the file in a real inbox (`porter_inbox::Inbox`
//! on a temp data dir: SQLite records, the blob staged, hashed, committed
//! and recorded, `file_captured` stored), through a keeper that does what
//! the gateway's does (`InboxKeep` in `porter-gateway`'s `session.rs`):
//! `keep_bytes` for a file handed over whole, `decoded_keeper` and
//! `finish_decoded` for one written while it is decoded.
//!
//! This is a plain binary (`harness = false`): each timed capture runs in a
//! child process of its own, which builds the result, resets its peak-RSS
//! mark (`/proc/self/clear_refs`), captures once and reports its time and
//! the peak (`VmHWM`) reached while capturing. Building the result is not
//! timed and not in the peak.
//!
//! Usage: `capture [--mb N] [--iter N] [--strict]` (also `CAPTURE_MB`,
//! `ITER`, `STRICT`). The `--bench` flag that `cargo bench` passes is
//! ignored. `--strict` exits 1 when a target is missed.

use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use porter_capture::{Found, Keep, Policy, capture_result};
use porter_inbox::{Inbox, Limits, Owner};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

#[path = "../tests/inbox/keep.rs"]
mod keep;

use keep::InboxKeep;

/// `DEFAULT_MB` is the base64 text's size in megabytes (10^6 characters):
/// the issue's 50 MB.
const DEFAULT_MB: usize = 50;
/// `DEFAULT_ITER` is how many timed runs each side gets; the median is
/// reported.
const DEFAULT_ITER: usize = 5;
/// `TARGET_MB_PER_S` is the throughput capture must reach (1 GB/s).
const TARGET_MB_PER_S: f64 = 1000.0;
/// `TARGET_RSS_RATIO` is the most the capture's peak RSS may be, as a
/// multiple of the result's size.
const TARGET_RSS_RATIO: f64 = 2.0;
/// `TARGET_SPEED_RATIO` is how fast capture must be against the pipeline.
const TARGET_SPEED_RATIO: f64 = 1.0;

/// `Settings` is what the command line and environment asked for.
struct Settings {
    /// Base64 characters in the result, in millions.
    mb: usize,
    /// Timed runs per side.
    iterations: usize,
    /// Exit 1 when a target is missed.
    strict: bool,
    /// Run as the child: build, capture once, print one line.
    child: bool,
    /// What the child's keeper does.
    keeping: Keeping,
}

fn settings() -> Result<Settings, String> {
    let number = |name: &str, value: &str| {
        value
            .parse::<usize>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("{name} must be a positive whole number, not {value:?}"))
    };
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let mut settings = Settings {
        mb: env("CAPTURE_MB").map_or(Ok(DEFAULT_MB), |v| number("CAPTURE_MB", &v))?,
        iterations: env("ITER").map_or(Ok(DEFAULT_ITER), |v| number("ITER", &v))?,
        strict: env("STRICT").is_some(),
        child: false,
        keeping: Keeping::Inbox,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--bench" => {}
            "--strict" => settings.strict = true,
            "--child" => settings.child = true,
            "--keeper" => {
                let value = args.next().unwrap_or_default();
                settings.keeping = Keeping::from_name(&value).ok_or_else(|| {
                    format!("--keeper takes inbox, whole or nothing, not {value:?}")
                })?;
            }
            "--mb" | "--iter" => {
                let value = args.next().ok_or_else(|| format!("{arg} needs a number"))?;
                let value = number(&arg, &value)?;
                if arg == "--mb" {
                    settings.mb = value;
                } else {
                    settings.iterations = value;
                }
            }
            other => {
                return Err(format!(
                    "unknown argument {other:?}; usage: capture [--mb N] [--iter N] [--strict]"
                ));
            }
        }
    }
    Ok(settings)
}

/// The file's bytes: a PDF header, then pseudo-random bytes (xorshift, so
/// every run makes the same file), `len` in all.
fn file_bytes(len: usize) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(len);
    bytes.extend_from_slice(b"%PDF-1.7\n");
    let mut next = porter_test::xorshift(0x9E37_79B9_7F4A_7C15);
    while bytes.len() < len {
        let take = (len - bytes.len()).min(8);
        bytes.extend_from_slice(&next().to_le_bytes()[..take]);
    }
    bytes
}

/// The base64 text of a file whose encoding is `mb` million characters.
fn base64_text(mb: usize) -> String {
    let chars = mb * 1_000_000;
    base64::engine::general_purpose::STANDARD.encode(file_bytes(chars / 4 * 3))
}

/// The tool result: one text block holding a JSON object with the base64
/// string and its `mimeType` and `fileName` siblings. The string is moved,
/// not copied, into the text.
fn tool_result(encoded: &str) -> Value {
    let mut text = String::with_capacity(encoded.len() + 128);
    text.push_str(r#"{"fileName": "big.pdf", "mimeType": "application/pdf", "data": ""#);
    text.push_str(encoded);
    text.push_str(r#"", "pages": 12}"#);
    json!({"content": [{"type": "text", "text": text}], "isError": false})
}

/// `Keeping` is what the bench's keeper does, so the breakdown can tell
/// finding and decoding apart from keeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keeping {
    /// Keep the file in a real inbox the way the gateway does, written and
    /// hashed while it is decoded: the timed figure.
    Inbox,
    /// The same inbox, the file handed over whole once decoded
    /// (`keep_bytes`: one write, then one SHA-256 pass), as every file
    /// was before the staged path.
    Whole,
    /// Nothing: what capture itself costs (find, decode, recognise, splice).
    Nothing,
}

impl Keeping {
    fn name(self) -> &'static str {
        match self {
            Self::Inbox => "inbox",
            Self::Whole => "whole",
            Self::Nothing => "nothing",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        [Self::Inbox, Self::Whole, Self::Nothing]
            .into_iter()
            .find(|k| k.name() == name)
    }
}

/// `Nothing` keeps nothing: what capture itself costs.
struct Nothing;

impl Keep for Nothing {
    fn keep(&self, found: Found<'_>) -> String {
        format!("[file: {} bytes]", found.bytes.len())
    }
}

/// A field of `/proc/self/status`, in KiB.
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The child: build the result, reset the peak mark, capture once, print
/// `seconds result_bytes hwm_kib rss_before_kib files`.
fn child(settings: &Settings) -> Result<(), String> {
    let encoded = base64_text(settings.mb);
    let chars = encoded.len();
    let mut result = tool_result(&encoded);
    drop(encoded);
    let dir = tempfile::tempdir().map_err(|e| format!("cannot make a temp dir: {e}"))?;
    let room = (chars as u64).max(1) * 2;
    let limits = Limits {
        file_max_bytes: room.max(porter_inbox::FILE_MAX_BYTES),
        inbox_max_bytes: room.max(porter_inbox::INBOX_MAX_BYTES),
        ..Limits::default()
    };
    let inbox =
        Inbox::open(dir.path(), limits).map_err(|e| format!("cannot open the inbox: {e}"))?;
    let run = inbox
        .start_run(Owner {
            key_name: "bench".to_owned(),
            tenant: "bench".to_owned(),
        })
        .map_err(|e| format!("cannot start a run: {e}"))?;
    let inbox_keep = InboxKeep {
        inbox,
        run: run.id,
        stage_long: settings.keeping == Keeping::Inbox,
    };
    let keeper: &dyn Keep = if settings.keeping == Keeping::Nothing {
        &Nothing
    } else {
        &inbox_keep
    };
    let policy = Policy {
        capture_base64: true,
        images_view: false,
    };
    let rss_before = status_kib("VmRSS:").unwrap_or(0);
    std::fs::write("/proc/self/clear_refs", "5")
        .map_err(|e| format!("cannot reset the peak RSS mark: {e}"))?;
    let started = Instant::now();
    let report = capture_result(&mut result, policy, None, keeper);
    let seconds = started.elapsed().as_secs_f64();
    let hwm = status_kib("VmHWM:").unwrap_or(0);
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    if report.files != 1 || text.len() > 1000 || text.contains("not kept") {
        return Err(format!(
            "capture did not replace the file ({} kept, text now {} bytes)",
            report.files,
            text.len()
        ));
    }
    if settings.keeping != Keeping::Nothing {
        check_kept(&inbox_keep, settings.mb)?;
    }
    println!("{seconds} {chars} {hwm} {rss_before} {}", report.files);
    Ok(())
}

/// Checks, after the timing, that the inbox holds the file the result
/// carried: one record whose size and SHA-256 are the file's, and the bytes
/// on disk.
fn check_kept(keeper: &InboxKeep, mb: usize) -> Result<(), String> {
    let bytes = file_bytes(mb * 1_000_000 / 4 * 3);
    let files = keeper
        .inbox
        .files(keeper.run)
        .map_err(|e| format!("cannot list the inbox: {e}"))?;
    let [file] = files.as_slice() else {
        return Err(format!("the inbox holds {} files, not 1", files.len()));
    };
    let expected: String = keep::hex(&Sha256::digest(&bytes));
    let mut on_disk = Vec::new();
    keeper
        .inbox
        .open_file(keeper.run, &file.path)
        .and_then(|(_, mut reader)| Ok(std::io::Read::read_to_end(&mut reader, &mut on_disk)?))
        .map_err(|e| format!("cannot read the kept file back: {e}"))?;
    if file.sha256 != expected || file.size != bytes.len() as u64 || on_disk != bytes {
        return Err(format!(
            "the inbox kept {} ({} bytes, sha256 {}), not the file ({} bytes, sha256 {expected})",
            file.path,
            file.size,
            file.sha256,
            bytes.len()
        ));
    }
    Ok(())
}

/// One child's report.
struct ChildRun {
    seconds: f64,
    chars: u64,
    hwm_kib: u64,
    rss_before_kib: u64,
}

fn run_child(mb: usize, keeping: Keeping) -> Result<ChildRun, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let output = Command::new(exe)
        .args([
            "--child",
            "--mb",
            &mb.to_string(),
            "--keeper",
            keeping.name(),
        ])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot start the child: {e}"))?;
    if !output.status.success() {
        return Err(format!("the child failed: {}", output.status));
    }
    let line = String::from_utf8_lossy(&output.stdout);
    let fields: Vec<&str> = line.split_whitespace().collect();
    let field = |i: usize| {
        fields
            .get(i)
            .ok_or_else(|| format!("short child line {line:?}"))
    };
    let parse_u64 = |i: usize| -> Result<u64, String> {
        field(i)?
            .parse()
            .map_err(|e| format!("bad child line {line:?}: {e}"))
    };
    Ok(ChildRun {
        seconds: field(0)?
            .parse()
            .map_err(|e| format!("bad child line {line:?}: {e}"))?,
        chars: parse_u64(1)?,
        hwm_kib: parse_u64(2)?,
        rss_before_kib: parse_u64(3)?,
    })
}

/// Times `base64 -d < file | sha256sum` once.
fn run_pipeline(file: &Path) -> Result<Duration, String> {
    let started = Instant::now();
    let output = Command::new("bash")
        .args([
            "-c",
            "set -o pipefail; base64 -d < \"$1\" | sha256sum",
            "pipeline",
        ])
        .arg(file)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run the pipeline: {e}"))?;
    let elapsed = started.elapsed();
    if !output.status.success() {
        return Err(format!("the pipeline failed: {}", output.status));
    }
    Ok(elapsed)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(
        |_| "?".to_owned(),
        |l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
    )
}

fn parent(settings: &Settings) -> Result<bool, String> {
    println!(
        "porter-capture bench: one {} MB base64 PDF in a JSON text block, {} runs each, load {}",
        settings.mb,
        settings.iterations,
        load()
    );
    let dir = tempfile::tempdir().map_err(|e| format!("cannot make a temp dir: {e}"))?;
    let file = dir.path().join("file.b64");
    std::fs::write(&file, base64_text(settings.mb))
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;

    let mut porter = Vec::new();
    let mut hwm = 0u64;
    let mut before = 0u64;
    let mut chars = 0u64;
    for _ in 0..settings.iterations {
        let run = run_child(settings.mb, Keeping::Inbox)?;
        porter.push(run.seconds);
        hwm = hwm.max(run.hwm_kib);
        before = before.max(run.rss_before_kib);
        chars = run.chars;
    }
    let mut parts = Vec::new();
    for keeping in [Keeping::Whole, Keeping::Nothing] {
        let mut times = Vec::new();
        for _ in 0..settings.iterations {
            times.push(run_child(settings.mb, keeping)?.seconds);
        }
        parts.push((keeping, median(times)));
    }
    let mut pipeline = Vec::new();
    for _ in 0..settings.iterations {
        pipeline.push(run_pipeline(&file)?.as_secs_f64());
    }
    let mb = chars as f64 / 1e6;
    let porter_s = median(porter);
    let pipeline_s = median(pipeline);
    let porter_rate = mb / porter_s;
    let pipeline_rate = mb / pipeline_s;
    let ratio = porter_rate / pipeline_rate;
    let rss_ratio = (hwm * 1024) as f64 / chars as f64;
    let mark = |ok: bool| if ok { "ok" } else { "MISSED" };
    let rate_ok = porter_rate >= TARGET_MB_PER_S;
    let rss_ok = rss_ratio <= TARGET_RSS_RATIO;
    let ratio_ok = ratio >= TARGET_SPEED_RATIO;

    println!();
    println!("| side | median time | throughput (base64 in) |");
    println!("|---|---|---|");
    println!(
        "| porter capture_result into the inbox (written and hashed while decoded) | {:.1} ms | {porter_rate:.0} MB/s |",
        porter_s * 1e3
    );
    println!(
        "| base64 -d | sha256sum | {:.1} ms | {pipeline_rate:.0} MB/s |",
        pipeline_s * 1e3
    );
    for (keeping, seconds) in parts {
        let what = match keeping {
            Keeping::Nothing => "capture alone (keeper does nothing)",
            Keeping::Whole => "capture, then the inbox keeps the whole file (keep_bytes)",
            Keeping::Inbox => "capture into the inbox",
        };
        println!(
            "| {what} | {:.1} ms | {:.0} MB/s |",
            seconds * 1e3,
            mb / seconds
        );
    }
    println!();
    println!(
        "throughput  {porter_rate:.0} MB/s   target >= {TARGET_MB_PER_S:.0} MB/s   {}",
        mark(rate_ok)
    );
    println!(
        "peak RSS    {:.1} MB while capturing ({:.1} MB before) = {rss_ratio:.2}x the {mb:.0} MB result   target <= {TARGET_RSS_RATIO:.1}x   {}",
        hwm as f64 * 1024.0 / 1e6,
        before as f64 * 1024.0 / 1e6,
        mark(rss_ok)
    );
    println!(
        "ratio       {ratio:.2}x the pipeline's throughput   target >= {TARGET_SPEED_RATIO:.1}x   {}",
        mark(ratio_ok)
    );
    println!("load after  {}", load());
    Ok(rate_ok && rss_ok && ratio_ok)
}

fn main() -> ExitCode {
    let settings = match settings() {
        Ok(settings) => settings,
        Err(message) => {
            eprintln!("capture bench: {message}");
            return ExitCode::from(2);
        }
    };
    let outcome = if settings.child {
        child(&settings).map(|()| true)
    } else {
        parent(&settings)
    };
    match outcome {
        Ok(met) if met || !settings.strict => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("capture bench: {message}");
            ExitCode::FAILURE
        }
    }
}
