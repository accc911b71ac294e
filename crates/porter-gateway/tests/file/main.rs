//! The `File` tool against a real inbox and real volumes in temp dirs:
//! confinement (planted symlinks, `..`, absolute paths), grants, keep, rm,
//! clear, read windows and stat hashes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use porter_gateway::access::Caller;
use porter_gateway::config::{Grant, Role, Volume, VolumeMode};
use porter_gateway::file::Files;
use porter_inbox::{FileRecord, Inbox, Incoming, Limits, Origin, Outcome, Owner, RunInfo};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

mod extract;
mod tenants;

/// A run with an inbox, a read-only volume `docs`, a read-write volume `out`
/// of tenant `acme`, and a file `outside.txt` next to them that nothing may
/// reach.
struct World {
    _temp: tempfile::TempDir,
    base: PathBuf,
    inbox: Arc<Inbox>,
    files: Files,
    run: RunInfo,
}

fn world() -> World {
    let temp = tempfile::tempdir().expect("a temp dir");
    let base = temp.path().to_owned();
    for dir in ["data", "docs", "out"] {
        std::fs::create_dir_all(base.join(dir)).expect("a folder");
    }
    std::fs::write(base.join("outside.txt"), b"not yours\n").expect("outside file");
    std::fs::write(base.join("docs/guide.md"), b"# Guide\nline two\n").expect("a doc");
    let inbox = Arc::new(Inbox::open(&base.join("data"), Limits::default()).expect("an inbox"));
    let run = inbox
        .start_run(Owner {
            key_name: "alice".to_owned(),
            tenant: "acme".to_owned(),
        })
        .expect("a run");
    let volumes = BTreeMap::from([
        (
            "docs".to_owned(),
            Volume {
                path: base.join("docs"),
                mode: VolumeMode::Ro,
                tenant: None,
                allow_hard_links: false,
            },
        ),
        (
            "out".to_owned(),
            Volume {
                path: base.join("out"),
                mode: VolumeMode::Rw,
                tenant: Some("acme".to_owned()),
                allow_hard_links: false,
            },
        ),
    ]);
    let files = Files::new(Arc::clone(&inbox), volumes);
    World {
        _temp: temp,
        base,
        inbox,
        files,
        run,
    }
}

fn model(grants: &[Grant]) -> Caller {
    Caller::Model {
        grants: grants.to_vec(),
        volumes: vec!["docs".to_owned(), "out".to_owned()],
    }
}

fn everything() -> Caller {
    model(&[Grant::File, Grant::Read, Grant::Write])
}

impl World {
    fn capture(&self, name: &str, bytes: &[u8]) -> FileRecord {
        let outcome = self
            .inbox
            .keep_bytes(
                self.run.id,
                Incoming {
                    name: Some(name.to_owned()),
                    fallback_name: "get_file".to_owned(),
                    dir: None,
                    declared_type: None,
                    origin: Origin::Mcp {
                        server: "files".to_owned(),
                        tool: "get_file".to_owned(),
                    },
                    call: r#"{"tool":"get_file"}"#.to_owned(),
                },
                bytes,
            )
            .expect("the inbox keeps it");
        match outcome {
            Outcome::Kept(record) => record,
            Outcome::NotKept { why, .. } => panic!("not kept: {why}"),
        }
    }

    fn inbox_dir(&self) -> PathBuf {
        self.inbox.inbox_dir(self.run.id)
    }

    async fn call(&self, caller: &Caller, arguments: Value) -> CallToolResult {
        self.files.call(caller, &self.run, arguments).await
    }

    async fn ok(&self, caller: &Caller, arguments: Value) -> (String, Value) {
        let result = self.call(caller, arguments.clone()).await;
        let text = text_of(&result);
        assert_eq!(result.is_error, Some(false), "{arguments} failed: {text}");
        (text, result.structured_content.unwrap_or(Value::Null))
    }

    async fn refused(&self, caller: &Caller, arguments: Value) -> String {
        let result = self.call(caller, arguments.clone()).await;
        let text = text_of(&result);
        assert_eq!(result.is_error, Some(true), "{arguments} succeeded: {text}");
        text
    }
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn symlink(target: &Path, link: &Path) {
    std::os::unix::fs::symlink(target, link).expect("a symlink");
}

#[tokio::test]
async fn a_symlink_planted_in_the_inbox_pointing_outside_is_refused() {
    let w = world();
    w.capture("real.txt", b"hello\n");
    symlink(
        &w.base.join("outside.txt"),
        &w.inbox_dir().join("planted.txt"),
    );
    symlink(
        Path::new("../../../../outside.txt"),
        &w.inbox_dir().join("relative.txt"),
    );
    for path in ["planted.txt", "volume:inbox:relative.txt"] {
        for op in ["read", "stat"] {
            let text = w
                .refused(&everything(), json!({"op": op, "path": path}))
                .await;
            assert!(
                text.contains("leads outside volume inbox"),
                "{op} {path}: {text}"
            );
            assert!(!text.contains("not yours"), "{text}");
        }
        let text = w
            .refused(
                &everything(),
                json!({"op": "keep", "path": path, "to": "volume:out:x.txt"}),
            )
            .await;
        assert!(text.contains("leads outside"), "{text}");
    }
    assert!(!w.base.join("out/x.txt").exists());
}

#[tokio::test]
async fn a_symlink_planted_in_a_volume_pointing_outside_is_refused() {
    let w = world();
    symlink(&w.base.join("outside.txt"), &w.base.join("docs/escape.txt"));
    symlink(&w.base, &w.base.join("docs/up"));
    for path in ["volume:docs:escape.txt", "volume:docs:up/outside.txt"] {
        let text = w
            .refused(&everything(), json!({"op": "read", "path": path}))
            .await;
        assert!(text.contains("leads outside volume docs"), "{path}: {text}");
    }
    let text = w
        .refused(&everything(), json!({"op": "ls", "path": "volume:docs:up"}))
        .await;
    assert!(text.contains("leads outside"), "{text}");
    let (listing, _) = w
        .ok(&everything(), json!({"op": "ls", "path": "volume:docs:"}))
        .await;
    assert!(
        listing.contains("volume:docs:escape.txt · symlink"),
        "{listing}"
    );
    assert!(listing.contains("volume:docs:guide.md"), "{listing}");
}

#[tokio::test]
async fn rm_through_a_planted_symlinked_folder_is_refused_and_the_outside_file_stays() {
    let w = world();
    w.capture("real.txt", b"hello\n");
    symlink(&w.base, &w.inbox_dir().join("up"));
    let text = w
        .refused(&everything(), json!({"op": "rm", "path": "up/outside.txt"}))
        .await;
    assert!(text.contains("leads outside volume inbox"), "{text}");
    assert!(w.base.join("outside.txt").exists());
}

#[tokio::test]
async fn dot_dot_and_absolute_paths_are_refused_before_anything_is_opened() {
    let w = world();
    w.capture("real.txt", b"hello\n");
    let outside = w.base.join("outside.txt");
    let cases = [
        ("../outside.txt", "holds `..`"),
        ("volume:docs:../outside.txt", "holds `..`"),
        ("volume:inbox:a/../../x", "holds `..`"),
        (outside.to_str().expect("utf-8"), "absolute path"),
        ("volume:docs:/etc/passwd", "absolute path"),
    ];
    for (path, reason) in cases {
        let text = w
            .refused(&everything(), json!({"op": "read", "path": path}))
            .await;
        assert!(text.contains(reason), "{path}: {text}");
    }
}

#[tokio::test]
async fn a_read_only_volume_refuses_keep() {
    let w = world();
    w.capture("report.txt", b"quarterly\n");
    let text = w
        .refused(
            &everything(),
            json!({"op": "keep", "path": "report.txt", "to": "volume:docs:report.txt"}),
        )
        .await;
    assert!(text.contains("volume docs is read-only"), "{text}");
    assert!(text.contains("out (read-write)"), "{text}");
    assert!(!w.base.join("docs/report.txt").exists());
}

#[tokio::test]
async fn keep_without_the_write_grant_is_refused() {
    let w = world();
    w.capture("report.txt", b"quarterly\n");
    let caller = model(&[Grant::File, Grant::Read]);
    let text = w
        .refused(
            &caller,
            json!({"op": "keep", "path": "report.txt", "to": "volume:out:report.txt"}),
        )
        .await;
    assert!(text.contains("needs the Write grant"), "{text}");
    assert!(!w.base.join("out/report.txt").exists());
}

#[tokio::test]
async fn keep_copies_out_and_never_overwrites_unless_asked() {
    let w = world();
    let record = w.capture("report.txt", b"quarterly\n");
    let keep = json!({"op": "keep", "path": format!("volume:inbox:{}", record.path), "to": "volume:out:2026/q1.txt"});
    let (text, out) = w.ok(&everything(), keep.clone()).await;
    assert!(
        text.starts_with("kept volume:inbox:report.txt as volume:out:2026/q1.txt"),
        "{text}"
    );
    assert_eq!(out["sha256"], record.sha256);
    assert_eq!(
        std::fs::read(w.base.join("out/2026/q1.txt")).expect("kept"),
        b"quarterly\n"
    );

    std::fs::write(w.base.join("out/2026/q1.txt"), b"edited by a person\n").expect("edited");
    let text = w.refused(&everything(), keep.clone()).await;
    assert!(
        text.contains("already exists; pass overwrite: true"),
        "{text}"
    );
    assert_eq!(
        std::fs::read(w.base.join("out/2026/q1.txt")).expect("still there"),
        b"edited by a person\n"
    );

    let mut overwrite = keep;
    overwrite["overwrite"] = json!(true);
    w.ok(&everything(), overwrite).await;
    assert_eq!(
        std::fs::read(w.base.join("out/2026/q1.txt")).expect("replaced"),
        b"quarterly\n"
    );

    let (text, _) = w
        .ok(
            &everything(),
            json!({"op": "keep", "path": "report.txt", "to": "volume:out:2026/"}),
        )
        .await;
    assert!(text.contains("as volume:out:2026/report.txt"), "{text}");
    let names: Vec<_> = std::fs::read_dir(w.base.join("out/2026"))
        .expect("listed")
        .map(|e| e.expect("an entry").file_name())
        .collect();
    assert_eq!(names.len(), 2, "no temp file is left behind: {names:?}");
}

#[tokio::test]
async fn rm_and_clear_update_the_inbox_records() {
    let w = world();
    let a = w.capture("a.txt", b"a\n");
    w.capture("b.txt", b"b\n");
    w.capture("c.txt", b"c\n");
    let (text, _) = w
        .ok(&everything(), json!({"op": "rm", "path": a.path}))
        .await;
    assert_eq!(text, "removed volume:inbox:a.txt");
    let left: Vec<String> = w
        .inbox
        .files(w.run.id)
        .expect("records")
        .into_iter()
        .map(|r| r.path)
        .collect();
    assert_eq!(left, vec!["b.txt".to_owned(), "c.txt".to_owned()]);
    let text = w
        .refused(&everything(), json!({"op": "rm", "path": "a.txt"}))
        .await;
    assert!(text.contains("does not exist"), "{text}");
    let text = w
        .refused(
            &everything(),
            json!({"op": "rm", "path": "volume:docs:guide.md"}),
        )
        .await;
    assert!(text.contains("inbox only"), "{text}");
    assert!(w.base.join("docs/guide.md").exists());

    let text = w
        .refused(&everything(), json!({"op": "clear", "path": "b.txt"}))
        .await;
    assert!(text.contains("takes no path"), "{text}");
    let (text, _) = w.ok(&everything(), json!({"op": "clear"})).await;
    assert_eq!(text, "cleared the inbox: 2 files removed");
    assert!(w.inbox.files(w.run.id).expect("records").is_empty());
    let (listing, out) = w.ok(&everything(), json!({"op": "ls"})).await;
    assert_eq!(out["total"], 0, "{listing}");
}

#[tokio::test]
async fn read_of_a_text_file_gives_a_numbered_window() {
    let w = world();
    let text = (1..=30)
        .map(|n| format!("line {n}"))
        .collect::<Vec<_>>()
        .join("\n");
    w.capture("notes.txt", text.as_bytes());
    let result = w
        .call(
            &everything(),
            json!({"op": "read", "path": "notes.txt", "start_line": 10, "line_count": 3}),
        )
        .await;
    assert_eq!(result.is_error, Some(false));
    let shown = text_of(&result);
    assert!(
        shown.contains("    10\tline 10\n    11\tline 11\n    12\tline 12"),
        "{shown}"
    );
    assert!(!shown.contains("line 13"), "{shown}");
    let out = result.structured_content.expect("structured");
    assert_eq!(out["path"], "volume:inbox:notes.txt");
    assert_eq!(out["window"]["next_start_line"], 13);
    let past = w
        .refused(
            &everything(),
            json!({"op": "read", "path": "notes.txt", "start_line": 99}),
        )
        .await;
    assert!(past.contains("past its end"), "{past}");
}

#[tokio::test]
async fn stat_of_a_captured_file_gives_its_sha256_and_origin() {
    let w = world();
    let record = w.capture("hello.txt", b"hello\n");
    let (text, out) = w
        .ok(&everything(), json!({"op": "stat", "path": "hello.txt"}))
        .await;
    let sha = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";
    assert_eq!(record.sha256, sha);
    assert!(text.contains(&format!("sha256:{sha}")), "{text}");
    assert!(text.contains("from mcp:files/get_file"), "{text}");
    assert_eq!(out["sha256"], sha);
    assert_eq!(out["size"], 6);
    let (text, out) = w
        .ok(
            &everything(),
            json!({"op": "stat", "path": "volume:docs:guide.md"}),
        )
        .await;
    assert_eq!(out["size"], 17, "{text}");
    assert_eq!(out["sha256"].as_str().map(str::len), Some(64));
}

#[tokio::test]
async fn the_inbox_root_lists_the_volumes_the_caller_may_use() {
    let w = world();
    w.capture("a.txt", b"a\n");
    let (text, _) = w.ok(&everything(), json!({"op": "ls"})).await;
    assert!(text.contains("volume:inbox:a.txt · text/plain"), "{text}");
    assert!(
        text.contains("Volumes you may use: inbox, docs (read-only), out (read-write)"),
        "{text}"
    );
    let text = w.refused(&model(&[Grant::Read]), json!({"op": "ls"})).await;
    assert!(text.contains("needs the File grant"), "{text}");
}

#[tokio::test]
async fn network_ops_and_bad_arguments_are_answered_with_what_to_do() {
    let w = world();
    // The network ops need the HTTP grant, and without a network client
    // (Files::with_network) they say they are not available.
    let online = model(&[Grant::File, Grant::Read, Grant::Write, Grant::Http]);
    for op in ["download", "upload"] {
        let args = json!({"op": op, "url": "https://example.org/"});
        let text = w.refused(&everything(), args.clone()).await;
        assert!(text.contains("needs the HTTP grant"), "{op}: {text}");
        let text = w.refused(&online, args).await;
        assert!(text.contains("not available"), "{op}: {text}");
    }
    let text = w.refused(&everything(), json!({"op": "read"})).await;
    assert!(text.contains("read needs a path"), "{text}");
    let text = w
        .refused(
            &everything(),
            json!({"op": "stat", "path": "a", "colour": 1}),
        )
        .await;
    assert!(text.contains("not valid"), "{text}");
    let text = w.refused(&everything(), json!("ls")).await;
    assert!(text.contains("takes an object"), "{text}");
}

#[tokio::test]
async fn a_key_from_outside_sees_another_tenants_run_as_missing_and_keeps_only_into_its_tenant() {
    let w = world();
    w.capture("a.txt", b"a\n");
    let key = |name: &str, tenant: &str, role| Caller::Key {
        name: name.to_owned(),
        tenant: tenant.to_owned(),
        role,
        grants: vec![Grant::File, Grant::Read, Grant::Write],
        volumes: vec!["docs".to_owned(), "out".to_owned()],
    };
    let stranger = key("eve", "other", Role::User);
    let text = w.refused(&stranger, json!({"op": "ls"})).await;
    assert_eq!(text, format!("no run {}", w.run.id));
    let operator = key("ops", "acme", Role::TenantOperator);
    w.ok(
        &operator,
        json!({"op": "keep", "path": "a.txt", "to": "volume:out:a.txt"}),
    )
    .await;
    assert!(w.base.join("out/a.txt").exists());
    let admin_elsewhere = key("root", "hq", Role::Admin);
    let text = w
        .refused(
            &admin_elsewhere,
            json!({"op": "keep", "path": "a.txt", "to": "volume:out:b.txt"}),
        )
        .await;
    assert!(text.contains("no volume \"out\" you may use"), "{text}");
}

#[tokio::test]
async fn a_hard_link_planted_in_a_volume_is_not_read_through_unless_the_volume_allows_it() {
    let w = world();
    std::fs::hard_link(w.base.join("outside.txt"), w.base.join("docs/hard.txt"))
        .expect("a hard link");
    for op in ["read", "stat", "extract", "import"] {
        let text = w
            .refused(
                &everything(),
                json!({"op": op, "path": "volume:docs:hard.txt"}),
            )
            .await;
        assert!(
            text.contains("hard link") && text.contains("allow_hard_links: true"),
            "{op}: {text}"
        );
        assert!(!text.contains("not yours"), "{op}: {text}");
    }
    // The same file under one name is read as ever.
    let (text, _) = w
        .ok(
            &everything(),
            json!({"op": "read", "path": "volume:docs:guide.md"}),
        )
        .await;
    assert!(text.contains("line two"), "{text}");

    // A volume whose operator allows hard links reads them.
    let volumes = BTreeMap::from([(
        "docs".to_owned(),
        Volume {
            path: w.base.join("docs"),
            mode: VolumeMode::Ro,
            tenant: None,
            allow_hard_links: true,
        },
    )]);
    let allowing = Files::new(Arc::clone(&w.inbox), volumes);
    let result = allowing
        .call(
            &everything(),
            &w.run,
            json!({"op": "read", "path": "volume:docs:hard.txt"}),
        )
        .await;
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
    assert!(text_of(&result).contains("not yours"));
}
