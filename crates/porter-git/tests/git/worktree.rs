//! Checkouts porter writes itself: every checkout, fast-forward, hard reset
//! and clone is compared with what real `git` (run here as a fixture only)
//! leaves in a twin repository — the same files, modes, symlinks, index and
//! status — and the writes are shown never to go through a symlink swapped
//! in for a folder, nor under `.git`.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Command;

use git2::Repository;
use porter_git::change::{self, ResetMode};
use porter_git::{Bounds, GitError, read};

use super::{
    Server, assert_every_move_to_is_unsafe, clone, committed_repo, fetch_and_push, hostile_commit,
    raw_tree, succeeded, text_of, write,
};

/// Runs real git in `dir` with no system or global config, returning its
/// output; a failure fails the test.
fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Seed")
        .env("GIT_AUTHOR_EMAIL", "seed@example.org")
        .env("GIT_COMMITTER_NAME", "Seed")
        .env("GIT_COMMITTER_EMAIL", "seed@example.org")
        .output()
        .expect("git runs");
    String::from_utf8(succeeded(output, &format!("git {args:?}"))).expect("utf-8")
}

/// Everything in a work tree but `.git`: folders, files (content and
/// whether executable) and symlinks (their targets), by path.
fn files(root: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, found: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).expect("listed").flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .expect("beneath")
                .to_string_lossy()
                .into_owned();
            if rel == ".git" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).expect("stat");
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).expect("a link");
                found.insert(rel, format!("link -> {}", target.display()));
            } else if meta.is_dir() {
                found.insert(rel, "folder".to_owned());
                walk(root, &path, found);
            } else {
                let executable = meta.permissions().mode() & 0o111 != 0;
                let text = std::fs::read_to_string(&path).expect("text");
                found.insert(rel, format!("file exec={executable} {text:?}"));
            }
        }
    }
    let mut found = BTreeMap::new();
    walk(root, root, &mut found);
    found
}

/// The index as git lists it, and the status as git sees it (without
/// letting git refresh the index first).
fn index_and_status(dir: &Path) -> (String, String) {
    (
        git(dir, &["ls-files", "-s"]),
        git(dir, &["--no-optional-locks", "status", "--porcelain"]),
    )
}

/// Asserts that porter's work tree `ours` and git's `theirs` hold the same
/// files, index and status, and that git sees nothing changed in ours.
fn same_as_git(ours: &Path, theirs: &Path, step: &str) {
    assert_eq!(files(ours), files(theirs), "{step}: the files differ");
    assert_eq!(
        index_and_status(ours),
        index_and_status(theirs),
        "{step}: the index or status differ"
    );
    assert_eq!(
        git(ours, &["rev-parse", "HEAD"]),
        git(theirs, &["rev-parse", "HEAD"]),
        "{step}: HEAD differs"
    );
}

/// A repository made by real git with two commits: `main` (files, an
/// executable, a symlink, nested folders) and `next`, which changes
/// content, flips modes, deletes a folder's only file, adds a deep one,
/// turns a file into a symlink, a symlink into a file and a folder into a
/// file.
fn source_repo(dir: &Path) {
    std::fs::create_dir_all(dir).expect("made");
    git(dir, &["init", "-q", "-b", "main"]);
    write(dir, "README.md", "hello\n");
    write(dir, "keep.txt", "kept as is\n");
    write(dir, "bin/run.sh", "#!/bin/sh\necho run\n");
    write(dir, "docs/a.md", "a\n");
    write(dir, "docs/deep/b.md", "b\n");
    write(dir, "gone/x.txt", "x\n");
    write(dir, "typed", "a file at first\n");
    std::fs::set_permissions(
        dir.join("bin/run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");
    std::os::unix::fs::symlink("README.md", dir.join("link")).expect("linked");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "first"]);
    git(dir, &["checkout", "-q", "-b", "next"]);
    write(dir, "README.md", "hello, next\n");
    std::fs::set_permissions(
        dir.join("bin/run.sh"),
        std::fs::Permissions::from_mode(0o644),
    )
    .expect("chmod");
    std::fs::set_permissions(
        dir.join("docs/a.md"),
        std::fs::Permissions::from_mode(0o755),
    )
    .expect("chmod");
    std::fs::remove_dir_all(dir.join("gone")).expect("removed");
    write(dir, "new/deeper/c.txt", "c\n");
    std::fs::remove_file(dir.join("typed")).expect("removed");
    std::os::unix::fs::symlink("docs", dir.join("typed")).expect("linked");
    std::fs::remove_file(dir.join("link")).expect("removed");
    write(dir, "link", "a file now\n");
    std::fs::remove_dir_all(dir.join("docs/deep")).expect("removed");
    write(dir, "docs/deep", "a file where a folder was\n");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "second"]);
    git(dir, &["checkout", "-q", "main"]);
}

/// Two clones of the source made by git: porter works in the first, git in
/// the second; both have a local `next` branch.
fn twins(root: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let source = root.join("source");
    source_repo(&source);
    let (ours, theirs) = (root.join("ours"), root.join("theirs"));
    for dir in [&ours, &theirs] {
        git(
            root,
            &[
                "clone",
                "-q",
                source.to_str().expect("utf-8"),
                dir.to_str().expect("utf-8"),
            ],
        );
        git(dir, &["branch", "-q", "next", "origin/next"]);
    }
    same_as_git(&ours, &theirs, "the clones");
    (ours, theirs)
}

#[test]
fn checkout_fast_forward_and_reset_hard_leave_what_git_leaves() {
    let temp = tempfile::tempdir().expect("a temp dir");
    let (ours, theirs) = twins(temp.path());
    let bounds = Bounds::default();

    change::checkout(&ours, "next", false, bounds).expect("checkout next");
    git(&theirs, &["checkout", "-q", "next"]);
    same_as_git(&ours, &theirs, "checkout next");
    assert!(!ours.join("gone").exists(), "an emptied folder is removed");

    change::checkout(&ours, "main", false, bounds).expect("checkout main");
    git(&theirs, &["checkout", "-q", "main"]);
    same_as_git(&ours, &theirs, "checkout main");

    change::merge(&ours, "next", bounds).expect("fast-forward");
    git(&theirs, &["merge", "-q", "--ff-only", "next"]);
    same_as_git(&ours, &theirs, "fast-forward");

    for dir in [&ours, &theirs] {
        write(dir, "README.md", "a local change\n");
        write(dir, "staged.txt", "staged\n");
        git(dir, &["add", "staged.txt"]);
        write(dir, "untracked.txt", "mine\n");
    }
    change::reset(&ours, "HEAD~1", ResetMode::Hard, bounds).expect("reset --hard");
    git(&theirs, &["reset", "-q", "--hard", "HEAD~1"]);
    same_as_git(&ours, &theirs, "reset --hard");
    assert_eq!(text_of(&ours.join("untracked.txt")), "mine\n");
    assert!(!ours.join("staged.txt").exists());

    change::reset(&ours, "next", ResetMode::Mixed, bounds).expect("reset --mixed");
    git(&theirs, &["reset", "-q", "--mixed", "next"]);
    same_as_git(&ours, &theirs, "reset --mixed");
}

#[test]
fn local_changes_block_a_safe_checkout_and_survive_it() {
    let temp = tempfile::tempdir().expect("a temp dir");
    let (ours, theirs) = twins(temp.path());
    let bounds = Bounds::default();
    let head = read::rev_parse(&ours, "HEAD").expect("head");

    write(&ours, "README.md", "edited here\n");
    let refused = change::checkout(&ours, "next", false, bounds);
    assert!(
        matches!(&refused, Err(GitError::Invalid(m)) if m.contains("README.md") && m.contains("nothing was written")),
        "{refused:?}"
    );
    let merged = change::merge(&ours, "next", bounds);
    assert!(matches!(merged, Err(GitError::Invalid(_))), "{merged:?}");
    assert_eq!(text_of(&ours.join("README.md")), "edited here\n");
    assert_eq!(read::rev_parse(&ours, "HEAD").expect("head"), head);
    assert!(!ours.join("new").exists(), "nothing of next was written");
    git(&ours, &["checkout", "-q", "--", "README.md"]);

    write(&ours, "new/deeper/c.txt", "an untracked file in the way\n");
    let refused = change::checkout(&ours, "next", false, bounds);
    assert!(
        matches!(&refused, Err(GitError::Invalid(m)) if m.contains("new/deeper/c.txt")),
        "{refused:?}"
    );
    assert_eq!(
        text_of(&ours.join("new/deeper/c.txt")),
        "an untracked file in the way\n"
    );
    std::fs::remove_dir_all(ours.join("new")).expect("removed");

    write(&ours, "new", "an untracked file where a folder goes\n");
    let refused = change::checkout(&ours, "next", false, bounds);
    assert!(
        matches!(&refused, Err(GitError::Invalid(m)) if m.contains("new")),
        "{refused:?}"
    );
    std::fs::remove_file(ours.join("new")).expect("removed");

    write(
        &ours,
        "docs/deep/mine.txt",
        "untracked, where next puts a file\n",
    );
    let refused = change::checkout(&ours, "next", false, bounds);
    assert!(
        matches!(&refused, Err(GitError::Invalid(m)) if m.contains("docs/deep/mine.txt")),
        "{refused:?}"
    );
    std::fs::remove_file(ours.join("docs/deep/mine.txt")).expect("removed");
    assert_eq!(read::rev_parse(&ours, "HEAD").expect("head"), head);

    for dir in [&ours, &theirs] {
        write(dir, "keep.txt", "changed locally, untouched by next\n");
        git(dir, &["add", "keep.txt"]);
        write(dir, "keep.txt", "changed again, unstaged\n");
        write(dir, "bin/run.sh", "#!/bin/sh\necho staged\n");
        git(dir, &["add", "bin/run.sh"]);
        write(dir, "scratch.txt", "untracked\n");
        write(
            dir,
            "gone/mine.txt",
            "untracked, in a folder next empties\n",
        );
    }
    let refused = change::checkout(&ours, "next", false, bounds);
    assert!(
        matches!(&refused, Err(GitError::Invalid(m)) if m.contains("bin/run.sh") && !m.contains("keep.txt")),
        "a staged change to a path next changes blocks it: {refused:?}"
    );
    for dir in [&ours, &theirs] {
        git(dir, &["reset", "-q", "HEAD", "--", "bin/run.sh"]);
        git(dir, &["checkout", "-q", "--", "bin/run.sh"]);
    }
    change::checkout(&ours, "next", false, bounds).expect("local changes elsewhere are carried");
    git(&theirs, &["checkout", "-q", "next"]);
    same_as_git(&ours, &theirs, "checkout with local changes carried along");
    assert_eq!(text_of(&ours.join("keep.txt")), "changed again, unstaged\n");
}

#[test]
fn a_folder_swapped_for_a_symlink_is_never_written_through() {
    let temp = tempfile::tempdir().expect("a temp dir");
    let dir = temp.path().join("repo");
    let outside = temp.path().join("outside");
    std::fs::create_dir_all(&outside).expect("made");
    committed_repo(&dir);
    change::checkout(&dir, "more", true, Bounds::default()).expect("a branch");
    write(&dir, "src/more.rs", "more\n");
    write(&dir, "src/lib.rs", "changed\n");
    change::add(&dir, &[".".to_owned()]).expect("add");
    change::commit(&dir, "more", &super::identity(), "run-1", false).expect("commit");
    change::checkout(&dir, "main", false, Bounds::default()).expect("back to main");
    let head = read::rev_parse(&dir, "HEAD").expect("head");

    for (target, label) in [
        (outside.clone(), "a folder outside"),
        (dir.join(".git"), "the .git folder"),
        (
            Path::new(".git").to_path_buf(),
            "the .git folder, relatively",
        ),
        (Path::new("README.md").to_path_buf(), "a file inside"),
    ] {
        std::fs::remove_dir_all(dir.join("src")).expect("removed");
        std::os::unix::fs::symlink(&target, dir.join("src")).expect("linked");
        let checkout = change::checkout(&dir, "more", false, Bounds::default());
        assert!(checkout.is_err(), "{label}: {checkout:?}");
        let merged = change::merge(&dir, "more", Bounds::default());
        assert!(merged.is_err(), "{label}: {merged:?}");
        let reset = change::reset(&dir, "more", ResetMode::Hard, Bounds::default());
        assert!(
            matches!(reset, Err(GitError::UnsafePath { .. })),
            "{label}: {reset:?}"
        );
        assert_eq!(
            read::rev_parse(&dir, "HEAD").expect("head"),
            head,
            "{label}"
        );
        assert_eq!(
            std::fs::read_dir(&outside).expect("listed").count(),
            0,
            "{label}: nothing lands outside"
        );
        assert!(!dir.join(".git/more.rs").exists(), "{label}");
        assert!(!dir.join(".git/lib.rs").exists(), "{label}");
        std::fs::remove_file(dir.join("src")).expect("the link goes");
        std::fs::create_dir(dir.join("src")).expect("a folder again");
        git(&dir, &["checkout", "-q", "--", "src"]);
    }
    change::reset(&dir, "more", ResetMode::Hard, Bounds::default()).expect("a real folder works");
    assert_eq!(text_of(&dir.join("src/more.rs")), "more\n");
}

#[test]
fn nothing_is_written_under_git_through_the_work_tree() {
    let temp = tempfile::tempdir().expect("a temp dir");
    let dir = temp.path().join("repo");
    committed_repo(&dir);
    let repo = Repository::open(&dir).expect("open");
    let blob = repo.blob(b"#!/bin/sh\ntouch pwned\n").expect("blob");
    let hook = raw_tree(&repo, &[("100755", b"x", blob)]);
    let hooks = raw_tree(&repo, &[("40000", b"hooks", hook)]);
    let into_git = raw_tree(&repo, &[("40000", b".git", hooks)]);
    hostile_commit(&repo, into_git, "into-git");
    let link = repo.blob(b".git/hooks").expect("blob");
    let via_link = raw_tree(&repo, &[("120000", b"h", link)]);
    hostile_commit(&repo, via_link, "via-link");
    for branch in ["into-git", "via-link"] {
        assert_every_move_to_is_unsafe(&dir, branch);
    }
    assert!(!dir.join(".git/hooks/x").exists());
    assert!(!dir.join("h").exists());
}

#[test]
fn a_work_tree_moved_by_config_is_refused() {
    let temp = tempfile::tempdir().expect("a temp dir");
    let dir = temp.path().join("repo");
    let outside = temp.path().join("outside");
    std::fs::create_dir_all(&outside).expect("made");
    committed_repo(&dir);
    change::branch_create(&dir, "other", None).expect("branch");
    git(
        &dir,
        &["config", "core.worktree", outside.to_str().expect("utf-8")],
    );
    let reset = change::reset(&dir, "other", ResetMode::Hard, Bounds::default());
    assert!(
        matches!(&reset, Err(GitError::Invalid(m)) if m.contains("core.worktree")),
        "{reset:?}"
    );
    assert_eq!(std::fs::read_dir(&outside).expect("listed").count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clone_leaves_what_git_clone_leaves() {
    let server = Server::start();
    let _ = server.repo("rich.git");
    let bare = server.root.path().join("repos/rich.git");
    let work = tempfile::tempdir().expect("a temp dir");
    let source = work.path().join("source");
    source_repo(&source);
    git(&source, &["checkout", "-q", "next"]);
    git(
        &source,
        &[
            "push",
            "-q",
            "-f",
            bare.to_str().expect("utf-8"),
            "next:main",
        ],
    );

    let ours = work.path().join("ours");
    let theirs = work.path().join("theirs");
    let url = server.url("rich.git");
    let network = server.network(fetch_and_push("t", "https://nowhere.invalid/"));
    clone(&network, &url, &ours).await.expect("clone works");
    git(
        work.path(),
        &[
            "clone",
            "-q",
            bare.to_str().expect("utf-8"),
            theirs.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(files(&ours), files(&theirs), "the files differ");
    assert_eq!(
        index_and_status(&ours),
        index_and_status(&theirs),
        "the index or status differ"
    );
    assert_eq!(
        git(&ours, &["--no-optional-locks", "status", "--porcelain"]),
        ""
    );
    assert!(
        std::fs::symlink_metadata(ours.join("typed"))
            .expect("there")
            .file_type()
            .is_symlink()
    );
}
