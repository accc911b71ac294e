//! The hostile repositories of `tests/git/hostile-repos.sh`, built with real
//! git into the fixture server's folder and cloned through porter: each is
//! refused with a clear class and nothing lands outside the destination
//! volume; the benign control's submodules clone and check out.

use std::path::{Path, PathBuf};
use std::process::Command;

use git2::Repository;
use porter_git::{Bounds, GitError, NetClass, submodule};

use super::{Server, blocking, clone, fetch_and_push, succeeded, text_of};

/// Runs the committed script into the server's `repos/` folder.
fn build_hostile_repos(server: &Server) {
    let script = porter_test::checkout_root().join("tests/git/hostile-repos.sh");
    let output = Command::new("bash")
        .arg(script)
        .arg(server.root.path().join("repos"))
        .arg(format!("https://127.0.0.1:{}", server.port))
        .env("HOME", server.root.path())
        .output()
        .expect("bash runs the script");
    succeeded(output, "hostile-repos.sh failed");
}

/// Every path under `root` whose file name is `name`.
fn find_named(root: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_name() == name {
                found.push(path.clone());
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
            }
        }
    }
    found
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// `Expect` judges one operation's result.
type Expect = fn(&Result<String, GitError>) -> bool;

fn refused_by_policy(result: &Result<String, GitError>) -> bool {
    matches!(
        result,
        Err(GitError::Network {
            op: "submodule_update",
            class: NetClass::Refused,
            ..
        })
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_hostile_repository_is_refused_and_nothing_is_written_outside_the_volume() {
    let server = Server::start();
    build_hostile_repos(&server);
    let temp = tempfile::tempdir().expect("a temp dir");
    let volume = temp.path().join("volume");
    let outside = temp.path().join("outside");
    std::fs::create_dir_all(&volume).expect("the volume");
    std::fs::create_dir_all(&outside).expect("the marker folder");
    let network = server.network(fetch_and_push("t", "https://nowhere.invalid/"));
    let url = |name: &str| format!("https://127.0.0.1:{}/{name}.git", server.port);

    let unsafe_path: Expect = |r| matches!(r, Err(GitError::UnsafePath { .. }));
    let trees: [(&str, Expect); 7] = [
        ("dot-git-upper", unsafe_path),
        ("dot-git-space", unsafe_path),
        ("git-tilde", unsafe_path),
        ("dotdot", unsafe_path),
        ("symlink-etc", unsafe_path),
        ("bomb", |r| {
            matches!(r, Err(GitError::TooManyFiles { limit: 200_000 }))
        }),
        (
            "sparse-2g",
            |r| matches!(r, Err(GitError::TooLarge { limit }) if *limit == 1 << 30),
        ),
    ];
    for (name, expected) in trees {
        let dest = volume.join(name);
        let result = clone(&network, &url(name), &dest).await;
        assert!(expected(&result), "{name}: {result:?}");
        let message = result.expect_err("refused").to_string();
        assert!(message.starts_with("refused:"), "{name}: {message}");
        assert!(
            !dest.exists(),
            "{name}: a refused clone leaves nothing behind, found {:?}",
            names_in(&dest)
        );
    }

    let submodules: [(&str, Expect); 7] = [
        ("sub-upload-pack", refused_by_policy),
        ("sub-ext", refused_by_policy),
        ("sub-file", refused_by_policy),
        ("sub-ssh", refused_by_policy),
        ("sub-climb", refused_by_policy),
        ("sub-escape", unsafe_path),
        ("sub-name-escape", unsafe_path),
    ];
    for (name, expected) in submodules {
        let dest = volume.join(name);
        let cloned = clone(&network, &url(name), &dest).await;
        cloned.unwrap_or_else(|e| panic!("{name}: the superproject clones: {e}"));
        assert!(dest.join("evil").is_dir(), "{name}: the gitlink's folder");
        let (n, d) = (network.clone(), dest.clone());
        let result = blocking(move || submodule::update(&n, &d, &[], Bounds::default())).await;
        assert!(expected(&result), "{name}: {result:?}");
        if refused_by_policy(&result) {
            let message = result.expect_err("refused").to_string();
            assert!(message.contains("refused by policy"), "{message}");
        }
        assert!(
            !dest.join(".git/modules").exists(),
            "{name}: nothing was fetched"
        );
        assert!(names_in(&dest.join("evil")).is_empty(), "{name}");
    }
    assert!(
        server.requests().iter().all(|r| !r.contains("/sub.git/")),
        "no hostile submodule reached the server: {:?}",
        server.requests()
    );

    assert!(names_in(&outside).is_empty(), "{:?}", names_in(&outside));
    // The refused clones left nothing; the seven superprojects stay.
    assert_eq!(
        names_in(&volume),
        vec![
            "sub-climb",
            "sub-escape",
            "sub-ext",
            "sub-file",
            "sub-name-escape",
            "sub-ssh",
            "sub-upload-pack"
        ],
    );
    assert!(!volume.join("escape").exists());
    for root in [temp.path(), server.root.path()] {
        assert!(find_named(root, "pwned").is_empty(), "{}", root.display());
        assert!(find_named(root, "passwd").is_empty(), "{}", root.display());
    }
    assert!(
        !Path::new("pwned").exists(),
        "nothing in the test's own folder"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::too_many_lines, reason = "one scenario, step by step")]
async fn the_benign_submodules_clone_check_out_detached_and_share_one_bound() {
    let server = Server::start();
    build_hostile_repos(&server);
    let temp = tempfile::tempdir().expect("a temp dir");
    let network = server.network(fetch_and_push("t", "https://nowhere.invalid/"));
    let url = server.url("super.git");
    let sub_commit = Repository::open_bare(server.root.path().join("repos/sub.git"))
        .expect("sub")
        .refname_to_id("refs/heads/main")
        .expect("main");

    let dir = temp.path().join("super");
    clone(&network, &url, &dir)
        .await
        .expect("the superproject clones");

    let (n, d) = (network.clone(), dir.clone());
    let only_lib =
        blocking(move || submodule::update(&n, &d, &["lib".to_owned()], Bounds::default()))
            .await
            .expect("lib updates");
    assert!(only_lib.contains("lib (lib) cloned"), "{only_lib}");
    assert_eq!(
        text_of(&dir.join("lib/inner.txt")),
        "inside the submodule\n"
    );
    assert!(
        names_in(&dir.join("rel")).is_empty(),
        "rel was not asked for"
    );

    let (n, d) = (network.clone(), dir.clone());
    let all = blocking(move || submodule::update(&n, &d, &[], Bounds::default()))
        .await
        .expect("all update");
    assert!(
        all.contains("lib (lib) updated") && all.contains("rel (rel) cloned"),
        "{all}"
    );
    assert_eq!(
        text_of(&dir.join("rel/inner.txt")),
        "inside the submodule\n"
    );
    for name in ["lib", "rel"] {
        assert!(
            dir.join(name).join(".git").is_file(),
            "{name}: a gitlink file"
        );
        let sub = Repository::open(dir.join(name)).expect("the submodule opens");
        assert!(sub.head_detached().expect("head"), "{name}");
        assert_eq!(
            sub.head().expect("head").target(),
            Some(sub_commit),
            "{name}"
        );
        assert!(dir.join(".git/modules").join(name).join("HEAD").is_file());
    }
    let requests = server.requests();
    assert!(
        requests
            .iter()
            .any(|r| r.starts_with("GET /sub.git/info/refs?service=git-upload-pack ")),
        "{requests:?}"
    );

    let second = temp.path().join("bounded");
    clone(&network, &url, &second)
        .await
        .expect("the superproject clones again");
    let one_file = Bounds {
        max_files: 1,
        ..Bounds::default()
    };
    let (n, d) = (network.clone(), second.clone());
    let bounded = blocking(move || submodule::update(&n, &d, &[], one_file)).await;
    assert!(
        matches!(bounded, Err(GitError::TooManyFiles { limit: 1 })),
        "one file in all, and each submodule holds one: {bounded:?}"
    );
    assert!(second.join("lib/inner.txt").exists(), "the first fits");
    assert!(
        names_in(&second.join("rel")).is_empty(),
        "the second does not"
    );
    assert!(!second.join(".git/modules/rel").exists());

    // Paths and names that libgit2's checkout would stop first are refused
    // by porter's own checks too, when only HEAD (not the work tree) has them.
    let repo = Repository::open(&second).expect("open");
    let signature = git2::Signature::now("x", "x@example.org").expect("a signature");
    for (section, path) in [
        ("lib", "../escape"),
        ("lib", ".GIT/hooks"),
        ("lib", "-evil"),
        ("../../escape", "lib"),
        ("-n", "lib"),
    ] {
        let text = format!("[submodule \"{section}\"]\n\tpath = {path}\n\turl = ../sub.git\n");
        let head = repo
            .head()
            .expect("head")
            .peel_to_commit()
            .expect("a commit");
        let blob = repo.blob(text.as_bytes()).expect("blob");
        let mut builder = repo
            .treebuilder(Some(&head.tree().expect("tree")))
            .expect("builder");
        builder
            .insert(".gitmodules", blob, 0o100_644)
            .expect("insert");
        let tree = repo
            .find_tree(builder.write().expect("tree"))
            .expect("tree");
        repo.commit(
            Some("HEAD"),
            &signature,
            &signature,
            "hostile",
            &tree,
            &[&head],
        )
        .expect("commit");
        let (n, d) = (network.clone(), second.clone());
        let result = blocking(move || submodule::update(&n, &d, &[], Bounds::default())).await;
        assert!(
            matches!(result, Err(GitError::UnsafePath { .. })),
            "{section} at {path}: {result:?}"
        );
    }
    assert!(!temp.path().join("escape").exists());
    assert!(!second.join(".git/escape").exists());
}
