//! Porter never starts a process. Two proofs: a repository armed with every
//! configuration git would run a program for (fsmonitor, hooks and a
//! hooks path, a filter and a diff driver, a credential helper, remote
//! upload/receive-pack programs) goes through status, add, commit, diff,
//! checkout, reset, fetch, pull and push without its marker ever appearing
//! (while real git, on the same repository, makes it appear at once); and
//! clone, commit and push run under `strace -f -e trace=execve`, whose log
//! must hold exactly one execve (or execveat, attempted or done): the test
//! binary's own.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use porter_git::change::{self, ResetMode};
use porter_git::read::{self, DiffArgs};
use porter_git::{Bounds, Window, network};

use super::{
    ChildTest, Server, blocking, clone, commit_file, fetch_and_push, identity, push, write,
};

/// The hooks git runs around the operations porter offers.
const HOOKS: &[&str] = &[
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "post-checkout",
    "post-merge",
    "pre-push",
    "post-rewrite",
    "reference-transaction",
    "post-index-change",
    "pre-auto-gc",
    "fsmonitor-watchman",
];

fn executable(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("the folder");
    std::fs::write(path, text).expect("the script is written");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// Arms the repository at `dir`: every program it names touches `marker`.
fn arm(dir: &Path, scripts: &Path, marker: &Path) {
    let evil = scripts.join("evil.sh");
    executable(
        &evil,
        &format!(
            "#!/bin/sh\ntouch '{}'\nif [ \"$1\" = filter ]; then cat; fi\nexit 0\n",
            marker.display()
        ),
    );
    let hook = format!("#!/bin/sh\ntouch '{}'\n", marker.display());
    let hooks_path = scripts.join("hooks");
    for name in HOOKS {
        executable(&dir.join(".git/hooks").join(name), &hook);
        executable(&hooks_path.join(name), &hook);
    }
    let evil = evil.display();
    let config = format!(
        "[core]\n\tfsmonitor = {evil}\n\thooksPath = {hooks}\n\tsshCommand = {evil}\n\
         \taskPass = {evil}\n\teditor = {evil}\n\tpager = {evil}\n\
         [filter \"evil\"]\n\tclean = {evil} filter\n\tsmudge = {evil} filter\n\
         [diff \"evil\"]\n\ttextconv = {evil}\n\tcommand = {evil}\n\
         [credential]\n\thelper = {evil}\n\
         [remote \"origin\"]\n\tuploadpack = {evil}\n\treceivepack = {evil}\n",
        hooks = hooks_path.display()
    );
    let path = dir.join(".git/config");
    let mut text = std::fs::read_to_string(&path).expect("the config");
    text.push_str(&config);
    std::fs::write(&path, text).expect("the config is armed");
    write(dir, ".gitattributes", "* filter=evil diff=evil\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_armed_with_hooks_fsmonitor_filters_and_helpers_never_runs_them() {
    let server = Server::start();
    let url = server.repo("armed.git");
    let temp = tempfile::tempdir().expect("a temp dir");
    let dir = temp.path().join("volume/armed");
    let marker = temp.path().join("marker");
    let network = server.network(fetch_and_push("t", "https://nowhere.invalid/"));
    clone(&network, &url, &dir).await.expect("clone");
    arm(&dir, &temp.path().join("scripts"), &marker);

    // The control: real git on the same repository runs what it names.
    let status = Command::new("git")
        .args(["status", "--short"])
        .current_dir(&dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", temp.path())
        .output()
        .expect("git runs");
    assert!(status.status.success(), "{status:?}");
    assert!(marker.exists(), "real git ran the armed configuration");
    std::fs::remove_file(&marker).expect("the marker is removed");

    let untouched = |op: &str| {
        assert!(!marker.exists(), "{op} started a process");
    };
    read::status(&dir, Window::default()).expect("status");
    untouched("status");
    write(&dir, "a.txt", "a\n");
    change::add(&dir, &[".".to_owned()]).expect("add");
    untouched("add");
    change::commit(&dir, "armed", &identity(), "run-x", false).expect("commit");
    untouched("commit");
    write(&dir, "a.txt", "a changed\n");
    read::diff(&dir, &DiffArgs::default(), Window::default()).expect("diff");
    untouched("diff");
    change::add(&dir, &["a.txt".to_owned()]).expect("add");
    change::commit(&dir, "armed again", &identity(), "run-x", false).expect("commit");
    change::checkout(&dir, "topic", true, Bounds::default()).expect("checkout -b");
    change::checkout(&dir, "HEAD~1", false, Bounds::default()).expect("checkout");
    change::checkout(&dir, "main", false, Bounds::default()).expect("checkout");
    untouched("checkout");
    change::reset(&dir, "HEAD~1", ResetMode::Hard, Bounds::default()).expect("reset");
    change::reset(&dir, "topic", ResetMode::Hard, Bounds::default()).expect("reset");
    untouched("reset --hard");
    let (n, d) = (network.clone(), dir.clone());
    blocking(move || network::fetch(&n, &d, None))
        .await
        .expect("fetch");
    untouched("fetch");
    let (n, d) = (network.clone(), dir.clone());
    blocking(move || network::pull(&n, &d, Bounds::default()))
        .await
        .expect("pull");
    untouched("pull");
    push(&network, &dir).await.expect("push");
    untouched("push");
    assert_eq!(
        server.head_of("armed.git"),
        read::rev_parse(&dir, "HEAD").expect("head"),
        "the push arrived"
    );
}

const CHILD: ChildTest = ChildTest {
    name: "noprocess::inner_clone_commit_and_push_for_strace",
    parent: "the strace test",
    url_var: "PORTER_TRACE_URL",
    ca_var: "PORTER_TRACE_CA",
    work_var: "PORTER_TRACE_WORK",
};

fn in_path(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|path| path.is_file())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clone_commit_and_push_under_strace_execute_nothing_but_the_test_itself() {
    let strace = in_path("strace").unwrap_or_else(|| {
        panic!(
            "strace is not installed, so this test cannot prove that porter starts no process: \
             install the Debian package strace (scripts/test installs it)"
        )
    });
    let server = Server::start();
    let url = server.repo("traced.git");
    let temp = tempfile::tempdir().expect("a temp dir");
    let log = temp.path().join("execve.log");
    let work = temp.path().join("work");
    let exe = std::env::current_exe().expect("the test binary");
    let mut traced = Command::new(strace);
    traced
        .args(["-f", "-qq", "-e", "trace=execve,execveat", "-o"])
        .arg(&log)
        .arg(&exe);
    let pushed = CHILD.run(traced, &server, url, &work).await;
    assert_eq!(server.head_of("traced.git"), pushed);

    let traced = std::fs::read_to_string(&log).expect("the strace log");
    let execs: Vec<&str> = traced.lines().filter(|l| l.contains("execve")).collect();
    assert_eq!(execs.len(), 1, "exactly one execve: {execs:#?}");
    assert!(
        execs[0].contains(&format!("execve(\"{}\"", exe.display())),
        "and it is the test binary: {}",
        execs[0]
    );
}

/// The traced half: clone, commit and push against the server the parent
/// started. Without the parent's environment it has nothing to do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run by clone_commit_and_push_under_strace_execute_nothing_but_the_test_itself"]
async fn inner_clone_commit_and_push_for_strace() {
    let Some((url, network, work)) = CHILD.setup() else {
        return;
    };
    let dir = work.join("traced");
    clone(&network, &url, &dir).await.expect("clone");
    let id = commit_file(&dir, "traced.txt", "under strace\n", "traced", "run-trace");
    push(&network, &dir).await.expect("push");
    std::fs::write(work.join("pushed"), id.to_string()).expect("the result is written");
}
