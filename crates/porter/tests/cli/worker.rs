//! A file cannot take `porter view` or `porter extract` down: PDFs built to
//! overflow a reader's stack (a 50,000-deep page tree, arrays and
//! dictionaries nested 100,000 deep) end as a description with a reason
//! and exit 0 (view) or 2 (extract), never a signal, because the file is
//! read in the confined worker.

use std::os::unix::process::ExitStatusExt as _;
use std::process::Output;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use porter_mmsim::pdf_with_xref;

use super::{porter, write};

fn content(text: &str) -> Vec<u8> {
    let data = format!("BT /F1 14 Tf 72 700 Td ({text}) Tj ET");
    format!("<< /Length {} >>\nstream\n{data}\nendstream", data.len()).into_bytes()
}

const FONT: &[u8] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>";

/// One page with `extra` in its dictionary.
fn one_page(extra: &[u8]) -> Vec<u8> {
    let mut page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >>".to_vec();
    page.extend_from_slice(extra);
    page.extend_from_slice(b" >>");
    pdf_with_xref(
        &[
            b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
            page,
            content("hostile"),
            FONT.to_vec(),
        ],
        None,
    )
}

/// A page tree `depth` Pages nodes deep, each the only kid of the one above.
fn deep_page_tree(depth: usize) -> Vec<u8> {
    let first = 3;
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        format!("<< /Type /Pages /Kids [{first} 0 R] /Count 1 >>").into_bytes(),
    ];
    for level in 0..depth {
        let number = first + level;
        objects.push(
            format!(
                "<< /Type /Pages /Parent {} 0 R /Kids [{} 0 R] /Count 1 >>",
                number - 1,
                number + 1
            )
            .into_bytes(),
        );
    }
    let page = first + depth;
    objects.push(
        format!(
            "<< /Type /Page /Parent {} 0 R /MediaBox [0 0 612 792] /Contents {} 0 R /Resources << /Font << /F1 {} 0 R >> >> >>",
            page - 1,
            page + 1,
            page + 2
        )
        .into_bytes(),
    );
    objects.push(content("the bottom of a deep tree"));
    objects.push(FONT.to_vec());
    pdf_with_xref(&objects, None)
}

fn nested(depth: usize, open: &str, close: &str) -> Vec<u8> {
    let mut extra = b" /Deep ".to_vec();
    extra.extend(open.repeat(depth).into_bytes());
    extra.push(b'1');
    extra.extend(close.repeat(depth).into_bytes());
    one_page(&extra)
}

/// The hostile set: name and bytes.
fn hostile() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("deep-page-tree.pdf", deep_page_tree(50_000)),
        ("nested-arrays.pdf", nested(100_000, "[", "]")),
        ("nested-dicts.pdf", nested(100_000, "<< /A ", " >>")),
    ]
}

/// `HANG_BOUND` is a hang guard for one command, not a benchmark: the
/// worker's own clock deadline is 30 s.
const HANG_BOUND: Duration = Duration::from_secs(60);

fn run(command: &mut Command) -> Output {
    let started = Instant::now();
    let output = command.timeout(HANG_BOUND).output().expect("porter runs");
    assert!(started.elapsed() < HANG_BOUND, "porter hung");
    output
}

fn signal_of(output: &Output) -> Option<i32> {
    output.status.signal()
}

#[test]
fn a_pdf_built_to_overflow_the_stack_is_described_by_view_never_a_signal() {
    let dir = tempfile::tempdir().expect("a temp dir");
    for (name, bytes) in hostile() {
        let path = write(dir.path(), name, &bytes);
        let output = run(porter().arg("view").arg("--json").arg(&path));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(signal_of(&output), None, "{name} killed porter: {stderr}");
        assert!(
            matches!(output.status.code(), Some(0 | 1)),
            "{name}: {:?} {stderr}",
            output.status
        );
        let view: serde_json::Value =
            serde_json::from_slice(&output.stdout).expect("--json prints one JSON object");
        let text = view["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.starts_with(name), "{name}: {text}");
        // Whatever the reader made of it, the answer says it in words: a
        // reason when it could not read the file, the text when it could.
        let record = &view["structured"];
        assert_eq!(record["kind"], "pdf", "{name}: {record}");
        if record.get("reason").is_some() {
            assert!(
                text.contains("could not be read") || text.contains("It is not shown because"),
                "{name}: {text}"
            );
        }
    }
}

#[test]
fn a_pdf_built_to_overflow_the_stack_is_refused_by_extract_with_a_reason() {
    let dir = tempfile::tempdir().expect("a temp dir");
    for (name, bytes) in hostile() {
        let path = write(dir.path(), name, &bytes);
        let out = dir.path().join(format!("{name}.md"));
        let output = run(porter().arg("extract").arg(&path).arg("-o").arg(&out));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(signal_of(&output), None, "{name} killed porter: {stderr}");
        match output.status.code() {
            Some(0) => assert!(out.is_file(), "{name}: exit 0 without the Markdown"),
            Some(1) => {
                assert!(stderr.contains(name), "{name}: {stderr}");
                assert!(stderr.contains("because"), "{name}: {stderr}");
                assert!(!out.exists(), "{name}: a refused file left {out:?} behind");
            }
            other => panic!("{name}: exit {other:?}: {stderr}"),
        }
    }
}

#[test]
fn the_worker_subcommand_refuses_arguments_that_are_not_its_limits() {
    let output = run(porter().arg("__fileview-worker").arg("lots"));
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("limits"));
}
