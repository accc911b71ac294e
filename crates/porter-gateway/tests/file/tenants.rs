//! Every tool that takes a `volume:<name>:<path>`, asked for a volume of
//! another tenant, answers exactly as for a volume that does not exist, and
//! writes nothing there: the config of issue 14 (`gx` belongs to globex,
//! alice is acme's, and her profile lists `gx` all the same).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use porter_gateway::access::Caller;
use porter_gateway::config::GitConfig;
use porter_gateway::config::{Grant, HooksConfig, Volume, VolumeMode};
use porter_gateway::file::Files;
use porter_gateway::git::GitTool;
use porter_inbox::{Inbox, Incoming, Limits, Origin, Owner, RunInfo};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use super::text_of;

struct Tenants {
    _temp: tempfile::TempDir,
    gx: PathBuf,
    inbox: Arc<Inbox>,
    files: Files,
    git: GitTool,
    run: RunInfo,
}

fn alice() -> Owner {
    Owner {
        key_name: "alice".to_owned(),
        tenant: "acme".to_owned(),
    }
}

/// alice's model: the `full` profile of the issue.
fn full() -> Caller {
    Caller::Model {
        grants: vec![
            Grant::File,
            Grant::Read,
            Grant::Write,
            Grant::Http,
            Grant::Git,
        ],
        volumes: vec!["gx".to_owned(), "pub".to_owned()],
    }
}

fn tenants() -> Tenants {
    let temp = tempfile::tempdir().expect("a temp dir");
    let base = temp.path().to_owned();
    let gx = base.join("gx");
    for dir in ["data", "gx", "pub"] {
        std::fs::create_dir_all(base.join(dir)).expect("a folder");
    }
    std::fs::write(gx.join("plan.md"), "# globex's plan\n").expect("a file");
    porter_git::change::init(&gx.join("repo"), Some("main")).expect("a repository");
    let volume = |path: PathBuf, mode, tenant: Option<&str>| Volume {
        path,
        mode,
        tenant: tenant.map(str::to_owned),
        allow_hard_links: false,
    };
    let volumes = BTreeMap::from([
        (
            "gx".to_owned(),
            volume(gx.clone(), VolumeMode::Rw, Some("globex")),
        ),
        (
            "pub".to_owned(),
            volume(base.join("pub"), VolumeMode::Ro, None),
        ),
    ]);
    let inbox = Arc::new(Inbox::open(&base.join("data"), Limits::default()).expect("an inbox"));
    let run = inbox.start_run(alice()).expect("a run");
    let net = porter_net::Net::new(porter_net::Policy::default()).expect("a client");
    let files = Files::new(Arc::clone(&inbox), volumes.clone()).with_network(
        net.clone(),
        porter_gateway::hooks::Hooks::new(&HooksConfig::default(), &net),
    );
    porter_git::init().expect("git is set up");
    let git = GitTool::new(net, GitConfig::default(), volumes);
    Tenants {
        _temp: temp,
        gx,
        inbox,
        files,
        git,
        run,
    }
}

/// Every file and folder beneath `root`, to see that nothing was written.
fn tree(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("listed") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                stack.push(path.clone());
            }
            found.push(path);
        }
    }
    found.sort();
    found
}

/// The call with `volume:gx:` and with `volume:zz:` (configured nowhere):
/// both refused, in the same words once the names are set aside.
async fn alike<F, Fut>(what: &str, call: F)
where
    F: Fn(&'static str) -> Fut,
    Fut: std::future::Future<Output = CallToolResult>,
{
    let foreign = call("gx").await;
    let missing = call("zz").await;
    let foreign_text = text_of(&foreign);
    let missing_text = text_of(&missing);
    assert_eq!(foreign.is_error, Some(true), "{what}: {foreign_text}");
    assert_eq!(missing.is_error, Some(true), "{what}: {missing_text}");
    assert_eq!(
        foreign_text.replace("gx", "X"),
        missing_text.replace("zz", "X"),
        "{what}"
    );
    assert!(foreign_text.contains("no volume"), "{what}: {foreign_text}");
    assert!(
        foreign.structured_content.is_none(),
        "{what}: {:?}",
        foreign.structured_content
    );
}

#[tokio::test]
async fn every_file_op_answers_another_tenants_volume_like_a_missing_one() {
    let t = tenants();
    let before = tree(&t.gx);
    let caller = full();
    let file = |arguments: Value| t.files.call(&caller, &t.run, arguments);
    alike("stat", |v| {
        file(json!({"op": "stat", "path": format!("volume:{v}:plan.md")}))
    })
    .await;
    alike("ls", |v| {
        file(json!({"op": "ls", "path": format!("volume:{v}:")}))
    })
    .await;
    alike("read", |v| {
        file(json!({"op": "read", "path": format!("volume:{v}:plan.md")}))
    })
    .await;
    alike("extract", |v| {
        file(json!({"op": "extract", "path": format!("volume:{v}:plan.md")}))
    })
    .await;
    alike("import", |v| {
        file(json!({"op": "import", "path": format!("volume:{v}:plan.md")}))
    })
    .await;
    alike("download to", |v| {
        file(json!({
            "op": "download",
            "url": "https://example.org/report.pdf",
            "to": format!("volume:{v}:report.pdf"),
        }))
    })
    .await;
    alike("upload from", |v| {
        file(json!({
            "op": "upload",
            "method": "put",
            "url": "https://example.org/up",
            "from": format!("volume:{v}:plan.md"),
        }))
    })
    .await;
    t.inbox
        .keep_bytes(
            t.run.id,
            Incoming {
                name: Some("note.txt".to_owned()),
                fallback_name: "note".to_owned(),
                dir: None,
                declared_type: None,
                origin: Origin::FileDownload,
                call: "{}".to_owned(),
            },
            b"kept\n",
        )
        .expect("kept in the inbox");
    alike("keep to", |v| {
        file(json!({"op": "keep", "path": "volume:inbox:note.txt", "to": format!("volume:{v}:note.txt")}))
    })
    .await;
    assert_eq!(
        tree(&t.gx),
        before,
        "nothing was written into globex's volume"
    );
}

#[tokio::test]
async fn every_git_op_answers_another_tenants_volume_like_a_missing_one() {
    let t = tenants();
    let before = tree(&t.gx);
    let caller = full();
    let owner = alice();
    let git = |arguments: Value| t.git.call(&caller, &owner, &[], "run-1", arguments);
    for (op, extra) in [
        ("log", json!({})),
        ("show", json!({"rev": "HEAD"})),
        ("grep", json!({"pattern": "plan"})),
        ("status", json!({})),
        ("branch_list", json!({})),
        ("init", json!({})),
        ("commit", json!({"message": "m"})),
        ("clone", json!({"url": "https://example.org/r.git"})),
    ] {
        alike(op, |v| {
            let mut arguments = extra.clone();
            arguments["op"] = json!(op);
            let path = if op == "init" || op == "clone" {
                "newrepo"
            } else {
                "repo"
            };
            arguments["repo"] = json!(format!("volume:{v}:{path}"));
            git(arguments)
        })
        .await;
    }
    assert_eq!(
        tree(&t.gx),
        before,
        "nothing was written into globex's volume"
    );
}
