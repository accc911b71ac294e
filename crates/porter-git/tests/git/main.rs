//! porter-git end to end: local operations on real repositories, hostile
//! trees refused before checkout, and network operations against a
//! smart-HTTP server on loopback (git http-backend behind TLS with a test
//! CA; `git` runs only in that fixture, never in porter).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use git2::{ObjectType, Oid, Repository};
use porter_git::change::{self, ResetMode};
use porter_git::read::{self, GrepArgs};
use porter_git::{
    Access, Bounds, Credential, CredentialSource, GitError, Identity, NetClass, Network, Secret,
    Window, network,
};

mod hostile;
mod noprocess;
mod sign;
mod transport;
mod worktree;

fn identity() -> Identity {
    Identity {
        name: "Porter Operator".to_owned(),
        email: "operator@example.org".to_owned(),
    }
}

fn write(dir: &Path, path: &str, text: &str) {
    let file = dir.join(path);
    std::fs::create_dir_all(file.parent().expect("a parent")).expect("the folder is made");
    std::fs::write(file, text).expect("the file is written");
}

/// Writes `text` to `file` in `dir`, stages it and commits it as `message`
/// with the run id `run`.
fn commit_file(dir: &Path, file: &str, text: &str, message: &str, run: &str) -> Oid {
    write(dir, file, text);
    change::add(dir, &[file.to_owned()]).expect("add");
    change::commit(dir, message, &identity(), run, false).expect("commit")
}

/// The text of the file at `path`.
fn text_of(path: &Path) -> String {
    std::fs::read_to_string(path).expect("the file reads")
}

fn committed_repo(dir: &Path) {
    change::init(dir, Some("main")).expect("init works");
    write(dir, "README.md", "hello\nworld\n");
    write(
        dir,
        "src/lib.rs",
        "fn main() {\n    println!(\"needle\");\n}\n",
    );
    change::add(dir, &[".".to_owned()]).expect("add works");
    change::commit(dir, "First commit", &identity(), "run-1", false).expect("commit works");
}

#[test]
fn a_commit_is_the_operators_with_the_run_trailer_and_reads_back() {
    let temp = tempfile::tempdir().expect("a temp dir");
    let dir = temp.path();
    committed_repo(dir);
    let repo = Repository::open(dir).expect("the repo opens");
    let head = repo
        .head()
        .expect("a head")
        .peel_to_commit()
        .expect("a commit");
    assert_eq!(head.author().name().expect("utf-8"), "Porter Operator");
    assert_eq!(
        head.committer().email().expect("utf-8"),
        "operator@example.org"
    );
    assert_eq!(
        head.message().expect("utf-8"),
        "First commit\n\nPorter-Run: run-1\n"
    );

    let log = read::log(dir, None, None, Window::default()).expect("log works");
    assert!(log.text.contains("Porter Operator First commit"), "{log}");
    let grep = read::grep(
        dir,
        &GrepArgs {
            pattern: "need+le".to_owned(),
            ..GrepArgs::default()
        },
        Window::default(),
    )
    .expect("grep works");
    assert_eq!(grep.text, "src/lib.rs:2:    println!(\"needle\");\n");
    let files = read::ls_files(dir, Some("src"), Window::default()).expect("ls_files works");
    assert_eq!(files.text, "src/lib.rs\n");
    let shown = read::show(dir, "HEAD", Window::default()).expect("show works");
    assert!(shown.text.contains("+hello"), "{shown}");
    let blame = read::blame(dir, "README.md", None, Window::default()).expect("blame works");
    assert!(
        blame.text.contains("Porter Operator") && blame.text.contains("1) hello"),
        "{blame}"
    );

    write(dir, "README.md", "hello\nthere\n");
    let status = read::status(dir, Window::default()).expect("status works");
    assert!(status.text.contains(" M README.md"), "{status}");
    let diff = read::diff(dir, &read::DiffArgs::default(), Window::default()).expect("diff works");
    assert!(
        diff.text.contains("-world") && diff.text.contains("+there"),
        "{diff}"
    );
    let empty = change::commit(dir, "nothing", &identity(), "run-1", false);
    assert!(
        matches!(empty, Err(GitError::Invalid(_))),
        "an unchanged tree is not committed"
    );
}

#[test]
fn a_long_log_comes_in_windows() {
    let temp = tempfile::tempdir().expect("a temp dir");
    let dir = temp.path();
    committed_repo(dir);
    for n in 0..5 {
        write(dir, "n.txt", &n.to_string());
        change::add(dir, &["n.txt".to_owned()]).expect("add works");
        change::commit(dir, &format!("change {n}"), &identity(), "run-1", false)
            .expect("commit works");
    }
    let first = read::log(
        dir,
        None,
        None,
        Window {
            offset: 0,
            lines: 2,
        },
    )
    .expect("log works");
    assert_eq!(first.lines, 2);
    assert_eq!(first.next_offset, Some(2));
    let last = read::log(
        dir,
        None,
        None,
        Window {
            offset: 4,
            lines: 10,
        },
    )
    .expect("log works");
    assert_eq!(last.lines, 2);
    assert_eq!(last.next_offset, None);
    assert!(last.text.contains("First commit"));
}

#[test]
fn branches_fast_forward_and_a_real_merge_is_refused() {
    let temp = tempfile::tempdir().expect("a temp dir");
    let dir = temp.path();
    committed_repo(dir);
    change::checkout(dir, "topic", true, Bounds::default()).expect("checkout -b works");
    write(dir, "topic.txt", "topic\n");
    change::add(dir, &["topic.txt".to_owned()]).expect("add");
    change::commit(dir, "topic work", &identity(), "run-1", false).expect("commit");
    change::checkout(dir, "main", false, Bounds::default()).expect("back to main");
    assert!(!dir.join("topic.txt").exists());
    change::merge(dir, "topic", Bounds::default()).expect("a fast-forward");
    assert!(dir.join("topic.txt").exists());
    assert_eq!(
        read::rev_parse(dir, "main").expect("main"),
        read::rev_parse(dir, "topic").expect("topic")
    );

    change::checkout(dir, "side", true, Bounds::default()).expect("branch");
    write(dir, "side.txt", "side\n");
    change::add(dir, &["side.txt".to_owned()]).expect("add");
    change::commit(dir, "side work", &identity(), "run-1", false).expect("commit");
    change::checkout(dir, "main", false, Bounds::default()).expect("main");
    write(dir, "main.txt", "main\n");
    change::add(dir, &["main.txt".to_owned()]).expect("add");
    change::commit(dir, "main work", &identity(), "run-1", false).expect("commit");
    let refused = change::merge(dir, "side", Bounds::default());
    assert!(
        matches!(&refused, Err(GitError::Invalid(m)) if m.contains("not a fast-forward")),
        "{refused:?}"
    );

    let branches = read::branch_list(dir, Window::default()).expect("branches");
    assert!(
        branches.text.contains("* main") && branches.text.contains("  side"),
        "{branches}"
    );
    change::branch_delete(dir, "side").expect("delete");
    assert!(
        change::branch_delete(dir, "main").is_err(),
        "the current branch stays"
    );
    change::tag_create(dir, "v1", None, Some("release"), &identity()).expect("tag");
    assert!(
        read::tag_list(dir, Window::default())
            .expect("tags")
            .text
            .starts_with("v1 ")
    );
    change::reset(dir, "HEAD~1", ResetMode::Hard, Bounds::default()).expect("reset");
    assert!(!dir.join("main.txt").exists());
}

/// Writes a raw tree object, so that names libgit2's tree builder refuses
/// can be stored the way a hostile server would send them.
fn raw_tree(repo: &Repository, entries: &[(&str, &[u8], Oid)]) -> Oid {
    let mut bytes = Vec::new();
    for (mode, name, id) in entries {
        bytes.extend_from_slice(mode.as_bytes());
        bytes.push(b' ');
        bytes.extend_from_slice(name);
        bytes.push(0);
        bytes.extend_from_slice(id.as_bytes());
    }
    repo.odb()
        .expect("an odb")
        .write(ObjectType::Tree, &bytes)
        .expect("the tree is written")
}

fn hostile_commit(repo: &Repository, tree: Oid, branch: &str) {
    let head = repo.head().expect("head").peel_to_commit().expect("commit");
    let tree = repo.find_tree(tree).expect("tree");
    let signature = git2::Signature::now("x", "x@x").expect("sig");
    repo.commit(
        Some(&format!("refs/heads/{branch}")),
        &signature,
        &signature,
        "hostile",
        &tree,
        &[&head],
    )
    .expect("the commit is written");
}

/// Checks that a checkout of, a merge of and a hard reset to `branch` in
/// `dir` are each refused as an unsafe path.
fn assert_every_move_to_is_unsafe(dir: &Path, branch: &str) {
    let checkout = change::checkout(dir, branch, false, Bounds::default());
    assert!(
        matches!(checkout, Err(GitError::UnsafePath { .. })),
        "{branch}: {checkout:?}"
    );
    let merged = change::merge(dir, branch, Bounds::default());
    assert!(
        matches!(merged, Err(GitError::UnsafePath { .. })),
        "{branch}: {merged:?}"
    );
    let reset = change::reset(dir, branch, ResetMode::Hard, Bounds::default());
    assert!(
        matches!(reset, Err(GitError::UnsafePath { .. })),
        "{branch}: {reset:?}"
    );
}

/// The standard output of a command that ran, which must have succeeded;
/// `what` names it when it did not.
fn succeeded(output: std::process::Output, what: &str) -> Vec<u8> {
    assert!(
        output.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

#[test]
fn hostile_trees_are_refused_before_anything_is_written_and_head_stays() {
    let temp = tempfile::tempdir().expect("a temp dir");
    let dir = temp.path().join("repo");
    committed_repo(&dir);
    let repo = Repository::open(&dir).expect("open");
    let blob = repo.blob(b"pwned\n").expect("blob");
    let hook = raw_tree(&repo, &[("100755", b"post-checkout", blob)]);
    let hooks = raw_tree(&repo, &[("40000", b"hooks", hook)]);
    let cases: Vec<(&str, Oid)> = vec![
        (
            "dot-git-upper",
            raw_tree(&repo, &[("40000", b".GIT", hooks)]),
        ),
        (
            "dot-git-space",
            raw_tree(&repo, &[("40000", b".git ", hooks)]),
        ),
        ("git-tilde", raw_tree(&repo, &[("40000", b"GIT~1", hooks)])),
        ("dotdot", raw_tree(&repo, &[("100644", b"..", blob)])),
        (
            "hfs",
            raw_tree(&repo, &[("40000", ".g\u{200c}it".as_bytes(), hooks)]),
        ),
        ("device", raw_tree(&repo, &[("100644", b"aux.txt", blob)])),
        ("control", raw_tree(&repo, &[("100644", b"a\x1bb", blob)])),
        ("symlink-out", {
            let link = repo.blob(b"/etc").expect("blob");
            let sub = raw_tree(&repo, &[("100644", b"passwd", blob)]);
            raw_tree(&repo, &[("120000", b"a", link), ("40000", b"a", sub)])
        }),
    ];
    let head_before = read::rev_parse(&dir, "HEAD").expect("head");
    for (name, tree) in cases {
        hostile_commit(&repo, tree, name);
        assert_every_move_to_is_unsafe(&dir, name);
        assert_eq!(
            read::rev_parse(&dir, "HEAD").expect("head"),
            head_before,
            "{name}: HEAD moved"
        );
        assert_eq!(
            repo.head().expect("head").name().expect("name"),
            "refs/heads/main"
        );
    }
    assert!(!dir.join(".git/hooks/post-checkout").exists());
    let written: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        written.len(),
        3,
        "only .git, README.md and src: {written:?}"
    );
    assert!(!temp.path().join("passwd").exists());
}

#[test]
fn a_tree_that_expands_one_subtree_a_million_times_is_refused_by_count() {
    let temp = tempfile::tempdir().expect("a temp dir");
    let dir = temp.path();
    committed_repo(dir);
    let repo = Repository::open(dir).expect("open");
    let blob = repo.blob(b"x").expect("blob");
    let names: Vec<String> = (0..16).map(|n| format!("d{n:x}")).collect();
    let mut level = raw_tree(
        &repo,
        &names
            .iter()
            .map(|n| ("100644", n.as_bytes(), blob))
            .collect::<Vec<_>>(),
    );
    for _ in 0..4 {
        level = raw_tree(
            &repo,
            &names
                .iter()
                .map(|n| ("40000", n.as_bytes(), level))
                .collect::<Vec<_>>(),
        );
    }
    hostile_commit(&repo, level, "bomb");
    let started = std::time::Instant::now();
    let result = change::checkout(dir, "bomb", false, Bounds::default());
    assert!(
        matches!(result, Err(GitError::TooManyFiles { limit: 200_000 })),
        "{result:?}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    assert!(!dir.join("d0").exists());

    let big = repo.blob(&vec![b'a'; 1 << 20]).expect("a 1 MiB blob");
    let names: Vec<String> = (0..1100).map(|n| format!("f{n}")).collect();
    let heavy = raw_tree(
        &repo,
        &names
            .iter()
            .map(|n| ("100644", n.as_bytes(), big))
            .collect::<Vec<_>>(),
    );
    hostile_commit(&repo, heavy, "heavy");
    let result = change::checkout(dir, "heavy", false, Bounds::default());
    assert!(
        matches!(result, Err(GitError::TooLarge { limit }) if limit == 1 << 30),
        "{result:?}"
    );
    assert!(!dir.join("f0").exists());
}

#[test]
fn paths_from_the_model_that_leave_the_work_tree_are_refused() {
    let temp = tempfile::tempdir().expect("a temp dir");
    let dir = temp.path();
    committed_repo(dir);
    for path in [
        "../x",
        ".git/config",
        "/etc/passwd",
        "src/../../x",
        ".GIT/hooks",
    ] {
        assert!(
            matches!(
                change::add(dir, &[path.to_owned()]),
                Err(GitError::UnsafePath { .. })
            ),
            "{path}"
        );
        assert!(
            matches!(
                change::rm(dir, &[path.to_owned()], false),
                Err(GitError::UnsafePath { .. })
            ),
            "{path}"
        );
    }
}

// ----- network -----

struct Server {
    child: Child,
    root: tempfile::TempDir,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start() -> Server {
        let root = tempfile::tempdir().expect("a temp dir");
        let script = porter_test::checkout_root().join("tests/git/https_server.py");
        // The Python of the test venv (scripts/test sets PORTER_PYTHON), which
        // holds the pinned `cryptography` the server makes its test CA with.
        let python = std::env::var("PORTER_PYTHON").unwrap_or_else(|_| "python3".to_owned());
        let mut child = Command::new(python)
            .arg(script)
            .arg(root.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the test server starts (python3 with cryptography)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the port is printed");
        let port = line
            .trim()
            .strip_prefix("port ")
            .expect("a port line")
            .parse()
            .expect("a port");
        Server { child, root, port }
    }

    /// A bare repository on the server with one commit, made by real git
    /// (fixture only).
    fn repo(&self, name: &str) -> String {
        let bare = self.root.path().join("repos").join(name);
        let seed = self.root.path().join(format!("seed-{name}"));
        let git = |args: &[&str], cwd: &Path| {
            let status = Command::new("git")
                .args(args)
                .current_dir(cwd)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", self.root.path())
                .env("GIT_AUTHOR_NAME", "Seed")
                .env("GIT_AUTHOR_EMAIL", "seed@example.org")
                .env("GIT_COMMITTER_NAME", "Seed")
                .env("GIT_COMMITTER_EMAIL", "seed@example.org")
                .status()
                .expect("git runs");
            assert!(status.success(), "git {args:?}");
        };
        git(
            &[
                "init",
                "-q",
                "--bare",
                "-b",
                "main",
                bare.to_str().expect("utf-8"),
            ],
            self.root.path(),
        );
        git(&["config", "http.receivepack", "true"], &bare);
        git(
            &["init", "-q", "-b", "main", seed.to_str().expect("utf-8")],
            self.root.path(),
        );
        std::fs::write(seed.join("hello.txt"), "hello from the server\n").expect("write");
        git(&["add", "."], &seed);
        git(&["commit", "-q", "-m", "seed"], &seed);
        git(
            &["push", "-q", bare.to_str().expect("utf-8"), "main"],
            &seed,
        );
        self.url(name)
    }

    /// The server's HTTPS URL of `path` (a repository, or a folder ending
    /// in `/`).
    fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}/{path}", self.port)
    }

    fn requests(&self) -> Vec<String> {
        std::fs::read_to_string(self.root.path().join("requests.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn network(&self, access: Access) -> Network {
        loopback_network(&self.root.path().join("ca.pem"), access)
    }

    fn head_of(&self, name: &str) -> String {
        let bare = self.root.path().join("repos").join(name);
        Repository::open_bare(bare)
            .expect("bare")
            .refname_to_id("refs/heads/main")
            .expect("main")
            .to_string()
    }
}

/// `loopback_network` reaches the fixture server (127.0.0.1 and localhost
/// listed, its CA at `ca_file` trusted) with `access`. Call it inside a
/// tokio runtime.
fn loopback_network(ca_file: &Path, access: Access) -> Network {
    let ca = std::fs::read_to_string(ca_file).expect("the CA");
    let policy = porter_net::Policy {
        allow_hosts: vec!["127.0.0.1".to_owned(), "localhost".to_owned()],
        private_hosts: vec!["127.0.0.1".to_owned(), "localhost".to_owned()],
        extra_roots: vec![ca],
        ..porter_net::Policy::default()
    };
    Network {
        net: porter_net::Net::new(policy).expect("the client builds"),
        handle: tokio::runtime::Handle::current(),
        access,
    }
}

/// `ChildTest` is an ignored test that a test runs again as a child
/// process of this binary (so that it can be measured or traced on its
/// own), and the environment variables through which the parent hands it
/// the repository URL, the server's CA file and a work folder.
struct ChildTest {
    name: &'static str,
    /// The test that runs it, named in the line it writes when run alone.
    parent: &'static str,
    url_var: &'static str,
    ca_var: &'static str,
    work_var: &'static str,
}

impl ChildTest {
    /// The parent's half: runs the child through `command` (this binary, or
    /// a tracer in front of it) against `url` on `server` with `work` as its
    /// folder, checks that it passed, and answers with the commit id it
    /// wrote to `work/pushed`.
    async fn run(&self, mut command: Command, server: &Server, url: String, work: &Path) -> String {
        command
            .args([self.name, "--exact", "--ignored", "--test-threads=1"])
            .env(self.url_var, url)
            .env(self.ca_var, server.root.path().join("ca.pem"))
            .env(self.work_var, work);
        let output = blocking(move || command.output().expect("the child test runs")).await;
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.contains("1 passed"),
            "the child test {} passed: {stdout}\n{}",
            self.name,
            String::from_utf8_lossy(&output.stderr)
        );
        let pushed = std::fs::read_to_string(work.join("pushed")).expect("the child test finished");
        pushed.trim().to_owned()
    }

    /// The child's half: what it gets from its parent through the
    /// environment (the repository URL, a network to the parent's server,
    /// and a work folder), or `None`, said on stderr, when run on its own.
    fn setup(&self) -> Option<(String, Network, PathBuf)> {
        let Ok(url) = std::env::var(self.url_var) else {
            eprintln!(
                "{} runs only under {}, which sets {}",
                self.name, self.parent, self.url_var
            );
            return None;
        };
        let ca = std::env::var(self.ca_var).ok()?;
        let work = std::env::var(self.work_var).ok()?;
        let network = loopback_network(
            Path::new(&ca),
            fetch_and_push("t", "https://nowhere.invalid/"),
        );
        Some((url, network, PathBuf::from(work)))
    }
}

fn fetch_and_push(token: &str, covered: &str) -> Access {
    Access {
        fetch_hosts: vec!["127.0.0.1".to_owned()],
        push_hosts: Some(vec!["127.0.0.1".to_owned()]),
        may_push: true,
        credentials: vec![Credential {
            name: "test-cred".to_owned(),
            allowed_urls: vec![url::Url::parse(covered).expect("url")],
            username: None,
            source: CredentialSource::Token(Secret::new(token)),
        }],
    }
}

async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(work)
        .await
        .expect("the blocking task ends")
}

/// [`network::clone`] of `url` into `dest` with the default bounds, off
/// the runtime's threads.
async fn clone(network: &Network, url: &str, dest: &Path) -> Result<String, GitError> {
    let (n, u, d) = (network.clone(), url.to_owned(), dest.to_owned());
    blocking(move || network::clone(&n, &u, &d, Bounds::default())).await
}

/// [`network::push`] of the current branch of `dir` to its origin, off the
/// runtime's threads.
async fn push(network: &Network, dir: &Path) -> Result<String, GitError> {
    let (n, d) = (network.clone(), dir.to_owned());
    blocking(move || network::push(&n, &d, None, &[])).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clone_commit_push_and_pull_go_through_porter_net_with_the_covering_credential() {
    let server = Server::start();
    let url = server.repo("shared.git");
    let work = tempfile::tempdir().expect("a temp dir");
    let network = server.network(fetch_and_push("s3cret-token", &server.url("shared.git")));

    let (a, b) = (work.path().join("a"), work.path().join("b"));
    let cloned = clone(&network, &url, &a).await.expect("clone works");
    assert!(cloned.contains("on branch main"), "{cloned}");
    assert_eq!(text_of(&a.join("hello.txt")), "hello from the server\n");
    clone(&network, &url, &b).await.expect("second clone");

    let id = commit_file(&a, "new.txt", "new\n", "from porter", "run-9");
    push(&network, &a).await.expect("push works");
    assert_eq!(server.head_of("shared.git"), id.to_string());

    let (n, bb) = (network.clone(), b.clone());
    let pulled = blocking(move || network::pull(&n, &bb, Bounds::default()))
        .await
        .expect("pull works");
    assert!(pulled.contains("fast-forwarded"), "{pulled}");
    assert_eq!(text_of(&b.join("new.txt")), "new\n");

    let (n, u) = (network.clone(), url.clone());
    let listed = blocking(move || network::ls_remote(&n, None, &u))
        .await
        .expect("ls_remote works");
    assert!(
        listed.contains(&format!("{id}\trefs/heads/main")),
        "{listed}"
    );

    let requests = server.requests();
    assert!(
        requests
            .iter()
            .any(|r| r.starts_with("POST /shared.git/git-receive-pack Basic ")),
        "{requests:?}"
    );
    assert!(
        requests.iter().all(|r| !r.ends_with(" -")),
        "every request to the covered URL carries the credential: {requests:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_credential_that_does_not_cover_the_url_is_never_sent() {
    let server = Server::start();
    let url = server.repo("open.git");
    let work = tempfile::tempdir().expect("a temp dir");
    let network = server.network(fetch_and_push("never-sent", &server.url("private/")));
    clone(&network, &url, &work.path().join("c"))
        .await
        .expect("clone works");
    let requests = server.requests();
    assert!(!requests.is_empty());
    assert!(requests.iter().all(|r| r.ends_with(" -")), "{requests:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_is_refused_by_policy_before_any_request_when_not_allowed() {
    let server = Server::start();
    let url = server.repo("guarded.git");
    let work = tempfile::tempdir().expect("a temp dir");
    let full = server.network(fetch_and_push("t", "https://nowhere.invalid/"));
    let dir = work.path().join("r");
    clone(&full, &url, &dir).await.expect("clone");
    commit_file(&dir, "x.txt", "x\n", "x", "run");

    let mut fetch_only = full.access.clone();
    fetch_only.may_push = false;
    let mut fetch_list_only = full.access.clone();
    fetch_list_only.push_hosts = Some(vec!["localhost".to_owned()]);
    let mut push_off = full.access.clone();
    push_off.push_hosts = None;
    for access in [fetch_only, fetch_list_only, push_off] {
        let n = Network {
            access,
            ..full.clone()
        };
        let result = push(&n, &dir).await;
        assert!(
            matches!(
                result,
                Err(GitError::Network {
                    class: NetClass::Refused,
                    ..
                })
            ),
            "{result:?}"
        );
    }
    assert!(
        server
            .requests()
            .iter()
            .all(|r| !r.contains("receive-pack")),
        "{:?}",
        server.requests()
    );

    let plain = format!("http://127.0.0.1:{}/guarded.git", server.port);
    let result = clone(&full, &plain, &work.path().join("plain")).await;
    assert!(
        matches!(
            result,
            Err(GitError::Network {
                class: NetClass::Refused,
                ..
            })
        ),
        "{result:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_failures_reach_the_model_as_a_class_without_the_servers_words() {
    let server = Server::start();
    let _ = server.repo("present.git");
    let work = tempfile::tempdir().expect("a temp dir");
    let network = server.network(fetch_and_push("t", "https://nowhere.invalid/"));
    let cases = [
        ("missing.git", NetClass::NotFound),
        ("denied.git", NetClass::Auth),
    ];
    for (name, class) in cases {
        let url = server.url(name);
        let result = clone(&network, &url, &work.path().join(name)).await;
        match result {
            Err(error @ GitError::Network { .. }) => {
                assert_eq!(error.class(), Some(class), "{name}");
                assert!(!error.to_string().contains("127.0.0.1"), "{error}");
            }
            other => panic!("{name}: {other:?}"),
        }
    }
}

/// Real git, in the fixture only: `git <args>` in `dir`, its output.
fn real_git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git runs");
    let stdout = succeeded(output, &format!("git {args:?}"));
    String::from_utf8_lossy(&stdout).trim().to_owned()
}

#[test]
fn checkout_of_a_branch_only_one_remote_has_makes_a_local_branch_tracking_it_as_git_does() {
    let temp = tempfile::tempdir().expect("a temp dir");
    let upstream = temp.path().join("upstream");
    committed_repo(&upstream);
    change::checkout(&upstream, "swap", true, Bounds::default()).expect("branch swap");
    write(&upstream, "swap.txt", "swapped\n");
    change::add(&upstream, &["swap.txt".to_owned()]).expect("add");
    change::commit(&upstream, "swap work", &identity(), "run-1", false).expect("commit");
    change::checkout(&upstream, "main", false, Bounds::default()).expect("main");
    let swap_tip = read::rev_parse(&upstream, "swap").expect("swap");

    // Cloned by real git, so the remote-tracking refs are git's own.
    let upstream_text = upstream.to_str().expect("utf-8");
    real_git(temp.path(), &["clone", "-q", upstream_text, "clone"]);
    let clone = temp.path().join("clone");
    assert!(!clone.join("swap.txt").exists());

    let answer =
        change::checkout(&clone, "swap", false, Bounds::default()).expect("swap is origin/swap's");
    assert!(answer.contains("origin/swap"), "{answer}");
    assert_eq!(read::rev_parse(&clone, "HEAD").expect("HEAD"), swap_tip);
    assert_eq!(text_of(&clone.join("swap.txt")), "swapped\n");
    // Real git agrees: HEAD is the new branch, and it tracks origin/swap.
    assert_eq!(
        real_git(&clone, &["symbolic-ref", "HEAD"]),
        "refs/heads/swap"
    );
    assert_eq!(
        real_git(&clone, &["rev-parse", "--abbrev-ref", "swap@{upstream}"]),
        "origin/swap"
    );

    // A name no remote has is still not found, and leaves no branch.
    let missing = change::checkout(&clone, "nowhere", false, Bounds::default());
    assert!(missing.is_err(), "{missing:?}");
    assert!(real_git(&clone, &["branch", "--list", "nowhere"]).is_empty());

    // Two remotes with the branch: git does not guess, and neither does porter.
    real_git(&clone, &["checkout", "-q", "main"]);
    real_git(&clone, &["branch", "-q", "-D", "swap"]);
    real_git(&clone, &["remote", "add", "second", upstream_text]);
    real_git(&clone, &["fetch", "-q", "second"]);
    let ambiguous = change::checkout(&clone, "swap", false, Bounds::default());
    let Err(GitError::Invalid(message)) = &ambiguous else {
        panic!("{ambiguous:?}");
    };
    assert!(
        message.contains("origin/swap") && message.contains("second/swap"),
        "{message}"
    );
    assert!(real_git(&clone, &["branch", "--list", "swap"]).is_empty());
}
