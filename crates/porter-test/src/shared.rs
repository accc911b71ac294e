//! One server for a whole test run, whichever process asks first.
//!
//! `cargo test` runs every test of a binary in one process, so a server in a
//! `OnceLock` serves them all. `cargo nextest run` gives each test a process
//! of its own, where the same `OnceLock` would start a PostgreSQL or a Garage
//! node per test (seconds each, hundreds of them in a run). Under nextest the
//! first test that asks starts the server for the run: it belongs to the
//! nextest process (a watchdog stops it when that process ends), and its
//! address is left in a file under the temp dir named after the run
//! (`NEXTEST_RUN_ID`), where every later test process finds it (one that
//! asks while it is being started waits for it). Each test still gets a
//! database or a bucket of its own.
//!
//! Nothing changes outside nextest, or where the nextest process cannot be
//! found among the test's ancestors: the server is then the process's own.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// `RUN_ENV` is the variable nextest sets to the id of the run in every test
/// process it starts.
const RUN_ENV: &str = "NEXTEST_RUN_ID";

/// `TIMINGS_ENV` names a folder where each server start is recorded (one
/// JSON line: which server, how many seconds), for the summary
/// `scripts/test` prints.
pub const TIMINGS_ENV: &str = "PORTER_TEST_TIMINGS";

/// How a server kind is started for an owner process and found again by
/// another process.
pub(crate) trait RunServer: Sized {
    /// The name of its state file, and of its kind in the timings.
    const NAME: &'static str;
    /// Starts one that lives as long as the process `owner`.
    fn start_owned_by(owner: u32) -> Self;
    /// What another process needs to use it.
    fn state(&self) -> Value;
    /// The server described by `state`, started by another process; `None`
    /// when the state is not one this kind wrote.
    fn from_state(state: &Value) -> Option<Self>;
}

/// The server of this run: the one another process of the run started, or
/// a new one (owned by the nextest process when there is one, else by this
/// process).
///
/// The first process to create `<name>.starting` starts the server and
/// then writes `<name>.json` (written aside and renamed, so it is never
/// read half-written); the others wait for that file while the starting
/// process lives.
pub(crate) fn run_server<T: RunServer>() -> T {
    let Some((run, owner)) = nextest_run() else {
        return timed(T::NAME, || T::start_owned_by(std::process::id()));
    };
    let dir = std::env::temp_dir().join(format!("porter-test-{run}"));
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("the shared servers' folder {}: {e}", dir.display()));
    let state_file = dir.join(format!("{}.json", T::NAME));
    let starting = dir.join(format!("{}.starting", T::NAME));
    let waited = Instant::now();
    loop {
        if let Some(server) = read_state::<T>(&state_file) {
            return server;
        }
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&starting)
        {
            Ok(mut mark) => {
                let _ =
                    std::io::Write::write_all(&mut mark, std::process::id().to_string().as_bytes());
                let server = timed(T::NAME, || T::start_owned_by(owner));
                let aside = dir.join(format!("{}.json.{}", T::NAME, std::process::id()));
                std::fs::write(&aside, server.state().to_string())
                    .and_then(|()| std::fs::rename(&aside, &state_file))
                    .unwrap_or_else(|e| panic!("the state of the shared {}: {e}", T::NAME));
                remove_when_gone(owner, &dir);
                return server;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                // Another test process is starting it: wait while it lives;
                // one that died before it was done leaves the start to us.
                let starter = std::fs::read_to_string(&starting).unwrap_or_default();
                let gone = starter
                    .trim()
                    .parse::<u32>()
                    .is_ok_and(|pid| !Path::new(&format!("/proc/{pid}")).exists());
                if gone && read_state::<T>(&state_file).is_none() {
                    let _ = std::fs::remove_file(&starting);
                    continue;
                }
                assert!(
                    waited.elapsed() < START_WAIT,
                    "the shared {} was not started within {START_WAIT:?} by process {starter}",
                    T::NAME
                );
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => panic!("{}: {e}", starting.display()),
        }
    }
}

/// `START_WAIT` is how long a test waits for another to start a server.
const START_WAIT: Duration = Duration::from_secs(180);

fn read_state<T: RunServer>(file: &Path) -> Option<T> {
    let text = std::fs::read_to_string(file).ok()?;
    T::from_state(&serde_json::from_str(&text).ok()?)
}

/// The run id and the nextest process, when this test runs under nextest.
fn nextest_run() -> Option<(String, u32)> {
    let run = std::env::var(RUN_ENV).ok().filter(|run| {
        !run.is_empty() && run.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    })?;
    nextest_ancestor().map(|pid| (run, pid))
}

/// The closest ancestor of this process that is `cargo-nextest` (a test may
/// run its own binary again as a helper, so the parent is not always it).
fn nextest_ancestor() -> Option<u32> {
    let mut pid = std::os::unix::process::parent_id();
    for _ in 0..16 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid …`: the name may hold spaces and brackets,
        // so it ends at the last `)`.
        let (head, tail) = stat.rsplit_once(')')?;
        let comm = head.split_once('(')?.1;
        if comm.starts_with("cargo-nextest") {
            return Some(pid);
        }
        pid = tail.split_whitespace().nth(1)?.parse().ok()?;
        if pid <= 1 {
            return None;
        }
    }
    None
}

/// Runs `start`, recording how long it took under `TIMINGS_ENV`.
pub(crate) fn timed<T>(what: &str, start: impl FnOnce() -> T) -> T {
    let began = Instant::now();
    let server = start();
    if let Some(folder) = std::env::var_os(TIMINGS_ENV) {
        let line = serde_json::json!({
            "suite": "rust",
            "server": what,
            "seconds": began.elapsed().as_secs_f64(),
        });
        let path = PathBuf::from(folder).join(format!("rust-{}.jsonl", std::process::id()));
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut file| {
                std::io::Write::write_all(&mut file, format!("{line}\n").as_bytes())
            });
        if let Err(e) = appended {
            eprintln!("could not record a server start in {}: {e}", path.display());
        }
    }
    server
}

/// Starts a background shell that waits for `owner` to end, then runs
/// `cleanup` (a shell command) — how every server here is stopped even when
/// no `Drop` runs (a shared instance, a panic, a kill).
pub(crate) fn when_gone(owner: u32, cleanup: &str) {
    let script = format!("(while kill -0 {owner} 2>/dev/null; do sleep 1; done; {cleanup}) &");
    Command::new("sh")
        .args(["-c", &script])
        // A group of its own, so a signal to the test's group (a timeout)
        // does not take the watchdog with it.
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("the watchdog of a test server starts");
}

fn remove_when_gone(owner: u32, dir: &Path) {
    when_gone(owner, &format!("rm -rf '{}'", dir.display()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_nextest_no_run_is_found() {
        // `cargo test` sets no run id; nextest does, and then the ancestor
        // named cargo-nextest is the owner.
        if std::env::var_os(RUN_ENV).is_none() {
            assert_eq!(nextest_run(), None);
        } else {
            let owner = nextest_ancestor().expect("nextest is an ancestor of its tests");
            let comm =
                std::fs::read_to_string(format!("/proc/{owner}/comm")).expect("the owner's name");
            assert!(comm.starts_with("cargo-nextest"), "{comm}");
        }
    }
}
