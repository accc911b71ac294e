//! The command as a new user meets it on a Unix shell: messages that say
//! what was wrong once and what to do next (`--demo`, `--port`,
//! `--listen`), and every subcommand that prints stopping quietly when
//! the reader of its output goes away (`| head -c 100`).

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command as StdCommand, Output, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;

use super::porter;

fn porter_path() -> PathBuf {
    assert_cmd::cargo::cargo_bin("porter")
}

/// `porter mattermost …` with only the variables a test names (and a
/// keychain file, so no OS keychain is asked).
fn mattermost(dir: &Path, vars: &[(&str, &str)]) -> Command {
    let mut command = porter();
    command
        .env_clear()
        .env("HOME", dir)
        .env("PORTER_KEYCHAIN_FILE", dir.join("keychain.json"))
        .arg("mattermost");
    for (name, value) in vars {
        command.env(name, value);
    }
    command
}

fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn an_unusable_mm_url_is_explained_once() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let output = mattermost(dir.path(), &[("MM_URL", "not-a-url"), ("MM_TOKEN", "t")])
        .arg("serve")
        .output()
        .expect("porter runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = stderr_of(&output);
    assert_eq!(stderr.matches("cannot be used").count(), 1, "{stderr}");
    assert_eq!(stderr.matches("not-a-url").count(), 1, "{stderr}");
    assert!(stderr.contains("https://chat.example.com"), "{stderr}");
}

#[test]
fn a_missing_mm_url_points_at_the_demo() {
    let dir = tempfile::tempdir().expect("a temp dir");
    for command in ["serve", "doctor"] {
        let output = mattermost(dir.path(), &[("MM_TOKEN", "t")])
            .arg(command)
            .output()
            .expect("porter runs");
        assert_eq!(output.status.code(), Some(2), "{command}");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            stderr_of(&output)
        );
        assert!(said.contains("MM_URL"), "{command}: {said}");
        assert!(
            said.contains("porter mattermost serve --demo"),
            "{command}: {said}"
        );
    }
}

/// A loopback port something else listens on, held while the test runs.
fn busy_port() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().expect("a bound address").port();
    (listener, port)
}

#[test]
fn a_busy_port_names_the_option_that_picks_another() {
    let (_held, port) = busy_port();
    let dir = tempfile::tempdir().expect("a temp dir");
    let port_text = port.to_string();
    let address = format!("127.0.0.1:{port}");
    let cases: Vec<(&str, Command, &str)> = vec![
        (
            "mattermost serve",
            {
                let mut c = mattermost(dir.path(), &[]);
                c.args([
                    "serve",
                    "--demo",
                    "--transport",
                    "http",
                    "--port",
                    &port_text,
                ]);
                c
            },
            // The old flag still works; the hint names the one flag.
            "--listen",
        ),
        (
            "gateway serve",
            {
                let mut c = porter();
                c.env("PORTER_DATA_DIR", dir.path().join("gateway")).args([
                    "gateway",
                    "serve",
                    "--transport",
                    "http",
                    "--listen",
                    &address,
                ]);
                c
            },
            "--listen",
        ),
        (
            "mmsim",
            {
                let mut c = porter();
                c.args(["mmsim", "--listen", &address]);
                c
            },
            "--listen",
        ),
    ];
    for (name, mut command, option) in cases {
        let output = command
            .timeout(Duration::from_secs(60))
            .output()
            .expect("porter runs");
        let stderr = stderr_of(&output);
        assert_eq!(output.status.code(), Some(1), "{name}: {stderr}");
        assert!(stderr.contains(&address), "{name}: {stderr}");
        assert!(
            stderr.contains(&format!("pass another {option}")),
            "{name}: {stderr}"
        );
    }
}

/// Runs porter with `args` and its standard output a pipe whose reader is
/// already gone, as after `| head -c 100` has read enough.
fn with_reader_gone(args: &[&str], dir: &Path) -> Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    StdCommand::new(porter_path())
        .args(args)
        .env_clear()
        .env("HOME", dir)
        .env("PORTER_KEYCHAIN_FILE", dir.join("keychain.json"))
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("porter runs")
}

fn assert_quiet(name: &str, output: &Output, code: i32) {
    let stderr = stderr_of(output);
    assert_eq!(output.status.code(), Some(code), "{name}: {stderr}");
    for noise in ["Broken pipe", "broken pipe", "panicked", "os error 32"] {
        assert!(
            !stderr.contains(noise),
            "{name} reported {noise:?}: {stderr}"
        );
    }
}

fn noisy_jpeg(dir: &Path) -> PathBuf {
    let picture = image::RgbImage::from_fn(900, 700, |x, y| {
        let v = x.wrapping_mul(2_654_435_761) ^ y.wrapping_mul(40_503);
        image::Rgb([(v >> 3) as u8, (v >> 11) as u8, (v >> 19) as u8])
    });
    let path = dir.join("big.jpg");
    picture.save(&path).expect("a JPEG encodes");
    path
}

#[test]
fn every_subcommand_that_prints_stops_quietly_when_its_reader_goes_away() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let jpeg = noisy_jpeg(dir.path());
    let text = dir.path().join("long.txt");
    std::fs::write(&text, "a line of text\n".repeat(20_000)).expect("writable");
    let page = dir.path().join("page.html");
    std::fs::write(
        &page,
        "<h1>Head</h1><p>".to_owned() + &"words ".repeat(20_000) + "</p>",
    )
    .expect("writable");
    let jpeg = jpeg.to_string_lossy().into_owned();
    let text = text.to_string_lossy().into_owned();
    let page = page.to_string_lossy().into_owned();
    let cases: [(&str, Vec<&str>, i32); 6] = [
        ("view --json", vec!["view", "--json", &jpeg], 0),
        ("view", vec!["view", &text], 0),
        ("extract", vec!["extract", &page], 0),
        ("gateway schema", vec!["gateway", "schema"], 0),
        // No MM_URL: the report says so and exits 2, reader or not.
        ("mattermost doctor", vec!["mattermost", "doctor"], 2),
        (
            "mattermost logout",
            vec!["mattermost", "logout", "--url", "https://chat.example.com"],
            0,
        ),
    ];
    for (name, args, code) in cases {
        let output = with_reader_gone(&args, dir.path());
        assert_quiet(name, &output, code);
    }
}

/// Asks the emulator on `port` for `GET /api/v4/system/ping` until it
/// answers 200, or gives up after 30 seconds.
fn answers_ping(port: u16, child: &mut Child) -> bool {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return false;
        }
        if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = stream.write_all(
                b"GET /api/v4/system/ping HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
            );
            let mut answer = String::new();
            let _ = stream.read_to_string(&mut answer);
            if answer.starts_with("HTTP/1.1 200") {
                return true;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn the_emulator_keeps_serving_when_no_one_reads_its_announcement() {
    let port = busy_port().1;
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut child = StdCommand::new(porter_path())
        .args(["mmsim", "--listen", &format!("127.0.0.1:{port}")])
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .expect("porter runs");
    let serving = answers_ping(port, &mut child);
    let _ = StdCommand::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let output = child.wait_with_output().expect("porter stops");
    assert!(
        serving,
        "the emulator stopped serving: {}",
        stderr_of(&output)
    );
    assert_quiet("mmsim", &output, 0);
}
