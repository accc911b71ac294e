//! Capture into a real inbox, the way the gateway keeps files: a long
//! base64 file is written and hashed while it is decoded, and whatever is
//! not kept leaves nothing behind.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use porter_capture::{Policy, capture_result};
use porter_inbox::{Inbox, Limits, Owner};
use serde_json::json;
use sha2::{Digest as _, Sha256};

mod keep;

use keep::InboxKeep;

const MIB: u64 = 1024 * 1024;

fn opened(dir: &Path, file_max_bytes: u64) -> InboxKeep {
    let limits = Limits {
        file_max_bytes,
        inbox_max_bytes: 64 * MIB,
        ..Limits::default()
    };
    let inbox = Inbox::open(dir, limits).expect("the inbox opens");
    let run = inbox
        .start_run(Owner {
            key_name: "local".to_owned(),
            tenant: "local".to_owned(),
        })
        .expect("a run starts")
        .id;
    InboxKeep {
        inbox,
        run,
        stage_long: true,
    }
}

/// Every file under `dir` but the runs' transcripts.
fn left_behind(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.join("runs")];
    while let Some(folder) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.map(|e| e.expect("an entry").path()) {
            if entry.is_dir() {
                todo.push(entry);
            } else if !entry.ends_with("transcript.jsonl") {
                found.push(entry);
            }
        }
    }
    found
}

/// A tool result whose one text block is JSON holding `bytes` as base64
/// beside `siblings`.
fn result_with(bytes: &[u8], siblings: &str) -> serde_json::Value {
    let text = format!(r#"{{{siblings}"data": "{}"}}"#, STANDARD.encode(bytes));
    json!({"content": [{"type": "text", "text": text}]})
}

const CAPTURE: Policy = Policy {
    capture_base64: true,
    images_view: false,
};

fn pdf(len: usize) -> Vec<u8> {
    let mut bytes = b"%PDF-1.7\n".to_vec();
    bytes.extend(porter_test::noise(len - bytes.len(), 31));
    bytes
}

#[test]
fn a_long_pdf_is_kept_with_the_hash_and_bytes_of_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let keep = opened(dir.path(), 64 * MIB);
    let bytes = pdf(5_000_003);
    let mut result = result_with(&bytes, r#""fileName": "q3.pdf", "#);
    let report = capture_result(&mut result, CAPTURE, None, &keep);
    assert_eq!(report.files, 1);
    let [file] = keep
        .inbox
        .files(keep.run)
        .expect("files")
        .try_into()
        .expect("one file");
    assert_eq!(file.path, "q3.pdf");
    assert_eq!(file.media_type, "application/pdf");
    assert_eq!(file.size, bytes.len() as u64);
    let sha256: String = keep::hex(&Sha256::digest(&bytes));
    assert_eq!(file.sha256, sha256);
    let text = result["content"][0]["text"].as_str().expect("text");
    assert!(text.contains("[file: volume:inbox:q3.pdf · "), "{text}");
    let (_, mut reader) = keep.inbox.open_file(keep.run, &file.path).expect("opens");
    let mut on_disk = Vec::new();
    reader.read_to_end(&mut on_disk).expect("reads");
    assert!(on_disk == bytes, "the bytes on disk are the file's");
    assert_eq!(
        keep.inbox.inbox_bytes(keep.run).expect("usage"),
        bytes.len() as u64
    );
}

#[test]
fn a_long_string_that_is_no_file_leaves_nothing_in_the_inbox() {
    let dir = tempfile::tempdir().expect("temp dir");
    let keep = opened(dir.path(), 64 * MIB);
    let mut result = result_with(&porter_test::noise(4_000_000, 7), r#""cursor": "x", "#);
    let before = result.clone();
    let report = capture_result(&mut result, CAPTURE, None, &keep);
    assert_eq!(report.files, 0);
    assert_eq!(result, before);
    assert_eq!(left_behind(dir.path()), Vec::<PathBuf>::new());
    assert_eq!(keep.inbox.files(keep.run).expect("files"), []);
    assert_eq!(keep.inbox.inbox_bytes(keep.run).expect("usage"), 0);
}

#[test]
fn a_long_file_over_the_cap_is_not_kept_and_leaves_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let keep = opened(dir.path(), 4 * MIB);
    let bytes = pdf(5_000_000);
    let mut result = result_with(&bytes, r#""fileName": "big.pdf", "#);
    let report = capture_result(&mut result, CAPTURE, None, &keep);
    assert_eq!(report.files, 1);
    let text = result["content"][0]["text"].as_str().expect("text");
    assert!(
        text.contains(
            "[file not kept: over the 4 MiB limit for one file · application/pdf · 4.8 MiB · "
        ),
        "{text}"
    );
    assert_eq!(left_behind(dir.path()), Vec::<PathBuf>::new());
    assert_eq!(keep.inbox.files(keep.run).expect("files"), []);
    assert_eq!(keep.inbox.inbox_bytes(keep.run).expect("usage"), 0);
}
