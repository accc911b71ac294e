//! The flags people type: one `--listen ADDR` for every server (and the
//! old `--host`/`--port` kept), the names `porter view`'s window goes by,
//! and `porter gateway doctor` starting every upstream the config names.

use std::io::BufRead as _;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{porter, write};

/// Starts `porter` with `args`, its stderr read line by line until a line
/// holds `wanted`; answers that line. The process is killed either way.
fn first_line_with(args: &[&str], wanted: &str) -> Result<String, String> {
    let mut child: Child = Command::new(assert_cmd::cargo::cargo_bin("porter"))
        .args(args)
        .env("HOME", std::env::temp_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("porter starts");
    let stderr = child.stderr.take().expect("stderr is piped");
    let mut seen = Vec::new();
    let mut found = None;
    for line in std::io::BufReader::new(stderr).lines() {
        let Ok(line) = line else { break };
        if line.contains(wanted) {
            found = Some(line);
            break;
        }
        seen.push(line);
    }
    let _ = child.kill();
    let _ = child.wait();
    found.ok_or_else(|| seen.join("\n"))
}

#[test]
fn every_server_listens_where_listen_says_and_mattermost_keeps_host_and_port() {
    let cases: [&[&str]; 4] = [
        &[
            "mattermost",
            "serve",
            "--demo",
            "--transport",
            "http",
            "--listen",
            "127.0.0.1:0",
        ],
        &[
            "mattermost",
            "serve",
            "--demo",
            "--transport",
            "http",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
        ],
        &[
            "gateway",
            "serve",
            "--transport",
            "http",
            "--listen",
            "localhost:0",
        ],
        &[
            "gateway",
            "serve",
            "--transport",
            "http",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
        ],
    ];
    let data = tempfile::tempdir().expect("a temp dir");
    for args in cases {
        let mut with_data = args.to_vec();
        let config = data.path().join("porter.yaml");
        if args[0] == "gateway" {
            std::fs::write(
                &config,
                format!(
                    "data_dir: {}\nmcp_servers: {{}}\n",
                    data.path().join("data").display()
                ),
            )
            .expect("the config is written");
            with_data.extend(["--config", config.to_str().expect("a UTF-8 temp path")]);
        }
        let line = first_line_with(&with_data, "http://127.0.0.1:")
            .unwrap_or_else(|seen| panic!("{args:?} announced no address:\n{seen}"));
        assert!(!line.contains("127.0.0.1:0/"), "{args:?}: {line}");
    }
}

#[test]
fn listen_with_host_or_port_is_refused_naming_both() {
    let output = porter()
        .args([
            "mattermost",
            "serve",
            "--listen",
            "127.0.0.1:9",
            "--port",
            "10",
        ])
        .output()
        .expect("porter runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--listen") && stderr.contains("--port"),
        "{stderr}"
    );
}

#[test]
fn the_view_window_goes_by_the_names_people_type() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let lines = (1..=30)
        .map(|n| format!("line {n}\n"))
        .collect::<Vec<_>>()
        .concat();
    let file = write(dir.path(), "thirty.txt", lines.as_bytes());
    let expected = porter()
        .args(["view", "--start-line", "11", "--line-count", "5"])
        .arg(&file)
        .output()
        .expect("porter runs");
    assert_eq!(expected.status.code(), Some(0));
    let cases: [&[&str]; 3] = [
        &["view", "--start", "11", "--lines", "5"],
        &["view", "--from", "11", "--count", "5"],
        &["view", "--line", "11", "-n", "5"],
    ];
    for args in cases {
        let output = porter()
            .args(args)
            .arg(&file)
            .output()
            .expect("porter runs");
        assert_eq!(output.status.code(), Some(0), "{args:?}: {output:?}");
        assert_eq!(output.stdout, expected.stdout, "{args:?}");
    }
}

/// `porter gateway doctor` with `servers` as the config's `mcp_servers`.
fn doctor(servers: &str, extra: &[&str]) -> (Option<i32>, String, Duration) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let config = dir.path().join("porter.yaml");
    std::fs::write(
        &config,
        format!(
            "data_dir: {}\nmcp_servers:\n{servers}",
            dir.path().join("data").display()
        ),
    )
    .expect("the config is written");
    let started = Instant::now();
    let output = porter()
        .args(["gateway", "doctor", "--config"])
        .arg(&config)
        .args(extra)
        .env("HOME", dir.path())
        .output()
        .expect("porter runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        started.elapsed(),
    )
}

#[test]
fn doctor_starts_every_upstream_and_names_each_that_fails_and_why() {
    let porter_bin = assert_cmd::cargo::cargo_bin("porter");
    let working = format!(
        "  demo: {{command: {}, args: [mattermost, serve, --demo]}}\n",
        porter_bin.display()
    );
    let (code, stdout, _) = doctor(&working, &[]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.contains("upstream demo: ok:") && stdout.contains("tools"),
        "{stdout}"
    );

    let broken = format!(
        "{working}  missing: {{command: /no/such/porter-upstream}}\n  silent: {{command: sleep, args: ['30']}}\n"
    );
    let (code, stdout, took) = doctor(&broken, &["--timeout", "2"]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("upstream demo: ok:"), "{stdout}");
    let missing = stdout
        .lines()
        .find(|l| l.starts_with("upstream missing: FAILED:"))
        .unwrap_or_else(|| panic!("no line for the missing command:\n{stdout}"));
    assert!(missing.contains("/no/such/porter-upstream"), "{missing}");
    let silent = stdout
        .lines()
        .find(|l| l.starts_with("upstream silent: FAILED:"))
        .unwrap_or_else(|| panic!("no line for the silent server:\n{stdout}"));
    assert!(silent.contains("2 s"), "{silent}");
    assert!(stdout.contains("2 checks failed"), "{stdout}");
    assert!(took < Duration::from_secs(20), "doctor took {took:?}");
}
