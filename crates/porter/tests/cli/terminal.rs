//! Without `--json`, what `porter view` and `porter extract` print cannot
//! drive the terminal: C0 and C1 control characters (but tab and newline)
//! and bidi overrides from the file come out as visible escapes, while
//! `--json` carries the text as it is.

use std::path::PathBuf;

use tempfile::TempDir;

use super::{json_of, printed, run_on, write};

/// A line that clears the screen, rings the bell, sends a C1 CSI, and
/// turns the rest of the line around with a right-to-left override.
const HOSTILE: &str =
    "title \u{1b}[2J\u{7} csi \u{9b}31m rlo \u{202e}txt.exe isolate \u{2066}x\u{2069}\tend\n";

fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n' && c != '\t')
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect()
}

/// Runs `porter <command>` on a file of [`HOSTILE`] text (in a new temp
/// dir), expects exit 0 and no raw control on stdout, and gives the dir,
/// the file and what was printed.
fn printed_from_hostile(command: &str) -> (TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = write(dir.path(), "notes.txt", HOSTILE.as_bytes());
    let stdout = printed(&[command], &file);
    assert_eq!(raw_controls(&stdout), Vec::<char>::new(), "{stdout:?}");
    (dir, file, stdout)
}

#[test]
fn view_prints_controls_and_bidi_overrides_as_visible_escapes() {
    let (_dir, file, stdout) = printed_from_hostile("view");
    assert!(
        stdout.contains(
            "title \\u{1b}[2J\\u{7} csi \\u{9b}31m rlo \\u{202e}txt.exe isolate \\u{2066}x\\u{2069}\tend"
        ),
        "{stdout:?}"
    );

    let view = json_of(&run_on(&["view", "--json"], &file).stdout);
    let text = view["content"][0]["text"].as_str().expect("a text block");
    assert!(
        text.contains("\u{1b}[2J\u{7}"),
        "--json keeps the text as it is"
    );
}

#[test]
fn extract_prints_controls_as_escapes_and_writes_the_file_as_it_is() {
    let (dir, file, stdout) = printed_from_hostile("extract");
    assert!(stdout.contains("\\u{1b}[2J\\u{7}"), "{stdout:?}");

    let out = dir.path().join("notes.md");
    let written = super::porter()
        .arg("extract")
        .arg(&file)
        .arg("-o")
        .arg(&out)
        .output()
        .expect("porter runs");
    assert_eq!(written.status.code(), Some(0));
    let markdown = std::fs::read_to_string(&out).expect("written");
    assert!(
        markdown.contains("\u{1b}[2J\u{7}"),
        "the file keeps the text as it is: {markdown:?}"
    );
}
