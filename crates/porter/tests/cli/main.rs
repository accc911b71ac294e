//! `porter view` as a person runs it: exit codes, plain output, and the
//! JSON that carries MCP content blocks.

mod flags;
mod terminal;
mod unix;
mod worker;

use std::path::Path;
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

fn porter() -> Command {
    Command::cargo_bin("porter").expect("the porter binary is built for its tests")
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("the temp dir is writable");
    path
}

fn json_of(output: &[u8]) -> Value {
    serde_json::from_slice(output).expect("--json prints one JSON object")
}

/// Runs `porter` with `args` and then `path`.
fn run_on(args: &[&str], path: &Path) -> Output {
    porter().args(args).arg(path).output().expect("porter runs")
}

/// Runs `porter` with `args` and then `path`, expects exit 0, and gives
/// what it printed.
fn printed(args: &[&str], path: &Path) -> String {
    let output = run_on(args, path);
    assert_eq!(output.status.code(), Some(0));
    String::from_utf8(output.stdout).expect("text")
}

/// Runs `porter` with `args` (`--json` among them) and then `path`, expects
/// exit 0, and gives the JSON it printed.
fn printed_json(args: &[&str], path: &Path) -> Value {
    let output = run_on(args, path);
    assert_eq!(output.status.code(), Some(0));
    json_of(&output.stdout)
}

fn small_png() -> Vec<u8> {
    let image = image::RgbImage::from_pixel(3, 2, image::Rgb([200, 10, 10]));
    let mut bytes = Vec::new();
    image
        .write_to(
            &mut std::io::Cursor::new(&mut bytes),
            image::ImageFormat::Png,
        )
        .expect("a PNG encodes");
    bytes
}

#[test]
fn plain_output_prints_the_numbered_text_window() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = write(dir.path(), "two.txt", b"alpha\nbeta\n");
    let stdout = printed(&["view"], &file);
    assert!(stdout.starts_with("two.txt: text, 2 lines."), "{stdout}");
    assert!(stdout.contains("     1\talpha\n     2\tbeta\n"), "{stdout}");
}

#[test]
fn json_output_carries_mcp_content_blocks_and_the_structured_record() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let lines = (1..=30)
        .map(|n| format!("line {n}\n"))
        .collect::<Vec<_>>()
        .concat();
    let file = write(dir.path(), "thirty.log", lines.as_bytes());
    let json = printed_json(
        &["view", "--json", "--start-line", "11", "--line-count", "10"],
        &file,
    );
    assert_eq!(json["content"][0]["type"], "text");
    let text = json["content"][0]["text"].as_str().expect("a text block");
    assert!(
        text.contains("    11\tline 11\n") && text.contains("    20\tline 20\n"),
        "{text}"
    );
    assert!(!text.contains("line 21"), "{text}");
    assert_eq!(json["structured"]["window"]["next_start_line"], 21);
    assert_eq!(json["structured"]["window"]["total_lines"], 30);
}

#[test]
fn an_image_prints_one_line_with_its_type_and_size_and_json_has_an_image_block() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let png = small_png();
    let file = write(dir.path(), "dot.png", &png);
    let stdout = printed(&["view"], &file);
    assert!(
        stdout.lines().any(|l| l.starts_with("[image image/png, ")),
        "{stdout}"
    );

    let json = json_of(&run_on(&["view", "--json"], &file).stdout);
    let image = json["content"]
        .as_array()
        .expect("content is a list")
        .iter()
        .find(|b| b["type"] == "image")
        .expect("an image block");
    assert_eq!(image["mimeType"], "image/png");
    assert!(image["data"].as_str().is_some_and(|d| !d.is_empty()));
}

#[test]
fn the_name_type_and_link_flags_reach_the_description() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = write(dir.path(), "blob", &[0u8, 1, 2, 3, 0xFE, 0xFF, 0, 7]);
    let json = printed_json(
        &[
            "view",
            "--json",
            "--name",
            "photo.jpg",
            "--type",
            "image/jpeg",
            "--link",
            "https://chat.example.invalid/pl/abc",
        ],
        &file,
    );
    let text = json["content"][0]["text"].as_str().expect("a text block");
    assert!(
        text.starts_with("photo.jpg: binary data (application/octet-stream), 8 bytes."),
        "{text}"
    );
    assert!(
        text.contains("A person can open it at https://chat.example.invalid/pl/abc."),
        "{text}"
    );
    assert_eq!(json["structured"]["shown"], "described");
}

#[test]
fn a_window_past_the_end_exits_2_naming_the_line_count() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = write(dir.path(), "short.txt", b"one\ntwo\n");
    let output = run_on(&["view", "--start-line", "3"], &file);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).expect("text");
    assert!(stderr.contains("short.txt has 2 lines"), "{stderr}");
}

#[test]
fn bad_arguments_exit_2() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = write(dir.path(), "a.txt", b"a\n");
    let file = file.to_str().expect("a UTF-8 temp path");
    let cases: [&[&str]; 4] = [
        &["view", "--start-line", "0", file],
        &["view", "--line-count", "many", file],
        &["view", "--no-such-flag", file],
        &["view"],
    ];
    for args in cases {
        let output = porter().args(args).output().expect("porter runs");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn a_file_that_cannot_be_read_exits_1_with_the_reason() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let missing = run_on(&["view"], &dir.path().join("missing.txt"));
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no such file"));

    let directory = run_on(&["view"], dir.path());
    assert_eq!(directory.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&directory.stderr).contains("a directory"));
}

#[test]
fn the_readme_sample_is_shown() {
    let sample = porter_test::checkout_root().join("samples/welcome.md");
    let stdout = printed(&["view"], &sample);
    assert!(stdout.contains("     1\t# Welcome to porter"), "{stdout}");
}

#[test]
fn a_file_over_the_64_mib_cap_is_described_from_its_size_without_being_read() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("huge.log");
    let file = std::fs::File::create(&path).expect("the temp dir is writable");
    // A sparse file: 64 MiB and one byte, with nothing written.
    file.set_len(64 * 1024 * 1024 + 1)
        .expect("the file can be sized");
    let json = printed_json(
        &[
            "view",
            "--json",
            "--link",
            "https://chat.example.invalid/f/1",
        ],
        &path,
    );
    let text = json["content"][0]["text"].as_str().expect("a text block");
    assert!(
        text.starts_with("huge.log: text (text/plain), 64 MiB."),
        "{text}"
    );
    assert!(
        text.contains("larger than the 64 MiB that is read of any file"),
        "{text}"
    );
    assert!(text.ends_with("A person can open it at https://chat.example.invalid/f/1."));
    assert_eq!(json["structured"]["shown"], "described");
    assert_eq!(json["structured"]["size_bytes"], 64 * 1024 * 1024 + 1);
}

/// Sends one HTTP/1.1 request over a plain socket and returns the answer.
fn http_get(url: &str, path: &str, token: &str) -> String {
    use std::io::{Read as _, Write as _};
    let host = url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(host).expect("the emulator accepts connections");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    )
    .expect("the request is sent");
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .expect("the answer is read");
    answer
}

#[test]
fn mmsim_serves_the_demo_on_loopback_and_prints_its_url_and_token() {
    use std::io::BufRead as _;
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("porter"))
        .args(["mmsim"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("porter mmsim starts");
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut lines = std::io::BufReader::new(stdout).lines();
    let url_line = lines.next().expect("a first line").expect("text");
    let token_line = lines.next().expect("a second line").expect("text");
    let url = url_line
        .strip_prefix("MM_URL=")
        .expect("the URL line")
        .to_owned();
    let token = token_line
        .strip_prefix("MM_TOKEN=")
        .expect("the token line")
        .to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");

    let me = http_get(&url, "/api/v4/users/me", &token);
    let wrong = http_get(&url, "/api/v4/users/me", "not-a-token");
    child.kill().expect("the emulator stops");
    let _ = child.wait();

    assert!(me.starts_with("HTTP/1.1 200"), "{me}");
    assert!(me.contains("\"username\":\"alice\""), "{me}");
    assert!(wrong.starts_with("HTTP/1.1 401"), "{wrong}");
}

#[test]
fn mmsim_refuses_an_address_other_than_loopback_and_a_missing_seed() {
    let public = porter()
        .args(["mmsim", "--listen", "0.0.0.0:0"])
        .output()
        .expect("porter runs");
    assert_eq!(public.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&public.stderr).contains("loopback only"));

    let dir = tempfile::tempdir().expect("a temp dir");
    let missing = porter()
        .args(["mmsim", "--seed"])
        .arg(dir.path().join("missing.yaml"))
        .output()
        .expect("porter runs");
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("missing.yaml"));
}
