//! Signed commits and tags checked by real `git verify-commit` /
//! `git verify-tag` (fixture only) against an allowed-signers file, and
//! GitHub App tokens minted from the fixture's fake GitHub API for pushes
//! and never for fetches.

use std::path::Path;
use std::process::Command;

use base64::Engine as _;
use git2::Repository;
use porter_git::change;
use porter_git::{
    Access, Bounds, Credential, CredentialSource, GitError, GithubApp, NetClass, Network, Signer,
    network,
};
use ssh_key::private::{Ed25519Keypair, KeypairData};
use ssh_key::{LineEnding, PrivateKey};

use super::{Server, blocking, clone, commit_file, identity, push, write};

fn signer(seed: u8) -> Signer {
    let pair = Ed25519Keypair::from_seed(&[seed; 32]);
    let key = PrivateKey::new(KeypairData::Ed25519(pair), "").expect("an ed25519 key");
    let text = key.to_openssh(LineEnding::LF).expect("it encodes");
    Signer::from_openssh(&text).expect("an unencrypted ed25519 key loads")
}

/// Runs `git <args>` in `dir` with only `allowed` trusted as a signer for
/// the operator's email; true when git says the signature is good.
fn git_verifies(dir: &Path, allowed: &Signer, args: &[&str]) -> bool {
    let home = tempfile::tempdir().expect("a temp dir");
    let signers = home.path().join("allowed_signers");
    std::fs::write(
        &signers,
        format!("operator@example.org {}\n", allowed.public_key()),
    )
    .expect("the allowed-signers file is written");
    let output = Command::new("git")
        .arg("-c")
        .arg("gpg.format=ssh")
        .arg("-c")
        .arg(format!(
            "gpg.ssh.allowedSignersFile={}",
            signers.to_str().expect("utf-8")
        ))
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", home.path())
        .output()
        .expect("git runs (fixture only)");
    output.status.success()
}

/// `git fsck --strict` (fixture only): every object porter wrote is one
/// git itself accepts.
fn fsck_is_clean(dir: &Path) -> bool {
    Command::new("git")
        .args(["fsck", "--strict", "--no-dangling"])
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git runs (fixture only)")
        .status
        .success()
}

fn staged(dir: &Path, path: &str, text: &str) {
    write(dir, path, text);
    change::add(dir, &[path.to_owned()]).expect("add works");
}

#[test]
fn a_signed_commit_passes_git_verify_commit_and_moves_the_branch_with_its_reflog() {
    let temp = tempfile::tempdir().expect("a temp dir");
    let dir = temp.path();
    let key = signer(1);
    change::init(dir, Some("main")).expect("init works");
    staged(dir, "a.txt", "a\n");
    let first = change::signed_commit(dir, "First", &identity(), "run-s", false, &key)
        .expect("a signed commit on an unborn branch");
    staged(dir, "b.txt", "b\n");
    let second = change::signed_commit(dir, "Second", &identity(), "run-s", false, &key)
        .expect("a signed commit on a branch");

    let repo = Repository::open(dir).expect("open");
    assert_eq!(repo.refname_to_id("refs/heads/main").expect("main"), second);
    let head = repo.head().expect("head");
    assert_eq!(head.name(), Ok("refs/heads/main"));
    let commit = repo.find_commit(second).expect("the commit");
    assert_eq!(commit.parent_id(0).expect("a parent"), first);
    assert_eq!(
        commit.message().expect("utf-8"),
        "Second\n\nPorter-Run: run-s\n"
    );
    let (signature, _) = repo.extract_signature(&second, None).expect("gpgsig");
    assert!(
        signature
            .as_str()
            .expect("utf-8")
            .starts_with("-----BEGIN SSH SIGNATURE-----")
    );
    for refname in ["HEAD", "refs/heads/main"] {
        let log = repo.reflog(refname).expect("a reflog");
        let messages: Vec<String> = log
            .iter()
            .map(|e| e.message().expect("utf-8").unwrap_or("").to_owned())
            .collect();
        assert_eq!(
            messages,
            ["commit: Second", "commit (initial): First"],
            "{refname}"
        );
    }

    assert!(git_verifies(dir, &key, &["verify-commit", "HEAD"]));
    assert!(git_verifies(dir, &key, &["verify-commit", "HEAD~1"]));
    assert!(fsck_is_clean(dir));

    change::checkout(dir, &first.to_string(), false, Bounds::default()).expect("detach");
    staged(dir, "c.txt", "c\n");
    let detached = change::signed_commit(dir, "Detached", &identity(), "run-s", false, &key)
        .expect("a signed commit on a detached HEAD");
    let repo = Repository::open(dir).expect("open");
    assert!(repo.head_detached().expect("head"));
    assert_eq!(repo.head().expect("head").target(), Some(detached));
    assert_eq!(
        repo.refname_to_id("refs/heads/main").expect("main"),
        second,
        "the branch stays"
    );
    assert!(git_verifies(dir, &key, &["verify-commit", "HEAD"]));
}

#[test]
fn a_commit_signed_with_another_key_or_unsigned_fails_verification() {
    let temp = tempfile::tempdir().expect("a temp dir");
    let dir = temp.path();
    let trusted = signer(1);
    let stranger = signer(2);
    change::init(dir, Some("main")).expect("init works");
    staged(dir, "a.txt", "a\n");
    change::signed_commit(dir, "By a stranger", &identity(), "run-s", false, &stranger)
        .expect("signed");
    assert!(!git_verifies(dir, &trusted, &["verify-commit", "HEAD"]));
    assert!(git_verifies(dir, &stranger, &["verify-commit", "HEAD"]));
    staged(dir, "b.txt", "b\n");
    change::commit(dir, "Unsigned", &identity(), "run-s", false).expect("unsigned");
    assert!(!git_verifies(dir, &trusted, &["verify-commit", "HEAD"]));
}

#[test]
fn a_signed_tag_passes_git_verify_tag_and_names_its_key() {
    let temp = tempfile::tempdir().expect("a temp dir");
    let dir = temp.path();
    let key = signer(5);
    super::committed_repo(dir);
    let answer = change::signed_tag_create(dir, "v1", None, "Release 1", &identity(), &key)
        .expect("a signed tag");
    assert!(
        answer.ends_with(&format!("\nsigned_by: {}", key.public_key())),
        "{answer}"
    );
    assert!(git_verifies(dir, &key, &["verify-tag", "v1"]));
    assert!(!git_verifies(dir, &signer(6), &["verify-tag", "v1"]));
    assert!(fsck_is_clean(dir));

    let repo = Repository::open(dir).expect("open");
    let tag = repo
        .find_reference("refs/tags/v1")
        .expect("the tag ref")
        .peel_to_tag()
        .expect("an annotated tag");
    assert_eq!(tag.name(), Ok("v1"));
    assert_eq!(tag.target_id(), repo.refname_to_id("HEAD").expect("head"));
    let tagger = tag.tagger().expect("a tagger");
    assert_eq!(tagger.email(), Ok("operator@example.org"));
    assert!(
        tag.message()
            .expect("utf-8")
            .is_some_and(|m| m.starts_with("Release 1\n-----BEGIN SSH SIGNATURE-----\n")),
        "{:?}",
        tag.message()
    );

    let again = change::signed_tag_create(dir, "v1", None, "Again", &identity(), &key);
    assert!(matches!(again, Err(GitError::Invalid(_))), "{again:?}");
    let empty = change::signed_tag_create(dir, "v2", None, "  \n", &identity(), &key);
    assert!(matches!(empty, Err(GitError::Invalid(_))), "{empty:?}");
    assert!(repo.find_reference("refs/tags/v2").is_err());
}

// ----- GitHub App tokens -----

const MINT: &str = "POST /api/v3/app/installations/77/access_tokens ";

fn app_network(server: &Server, key_file: &str) -> Network {
    let base = server.url("api/v3");
    let app = GithubApp::load(4242, 77, &server.root.path().join(key_file), Some(&base))
        .expect("the app key loads");
    server.network(Access {
        fetch_hosts: vec!["127.0.0.1".to_owned()],
        push_hosts: Some(vec!["127.0.0.1".to_owned()]),
        may_push: true,
        credentials: vec![Credential {
            name: "the-app".to_owned(),
            allowed_urls: vec![url::Url::parse(&server.url("")).expect("url")],
            username: None,
            source: CredentialSource::GithubApp(app),
        }],
    })
}

/// The passwords of the Basic-auth headers the server saw on push
/// requests, in order.
fn push_tokens(requests: &[String]) -> Vec<String> {
    requests
        .iter()
        .filter(|r| r.contains("receive-pack"))
        .filter_map(|r| r.split_once(" Basic "))
        .map(|(_, b64)| {
            let pair = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .expect("base64");
            let pair = String::from_utf8(pair).expect("utf-8");
            pair.split_once(':').expect("user:password").1.to_owned()
        })
        .collect()
}

fn commit_in(dir: &Path, file: &str) -> git2::Oid {
    commit_file(dir, file, "change\n", file, "run-app")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_mints_one_app_token_and_sends_it_while_a_fetch_never_does() {
    let server = Server::start();
    let url = server.repo("app-push.git");
    let work = tempfile::tempdir().expect("a temp dir");
    let network = app_network(&server, "app.pem");
    let dir = work.path().join("r");

    clone(&network, &url, &dir).await.expect("clone works");
    let after_clone = server.requests();
    assert!(!after_clone.is_empty());
    assert!(
        after_clone.iter().all(|r| r.ends_with(" -")),
        "a clone neither mints nor sends the app token: {after_clone:?}"
    );

    let first = commit_in(&dir, "one.txt");
    push(&network, &dir)
        .await
        .expect("the push with a minted token works");
    assert_eq!(server.head_of("app-push.git"), first.to_string());

    let second = commit_in(&dir, "two.txt");
    push(&network, &dir).await.expect("the second push works");
    assert_eq!(server.head_of("app-push.git"), second.to_string());

    let requests = server.requests();
    let mints = requests.iter().filter(|r| r.starts_with(MINT)).count();
    assert_eq!(
        mints, 1,
        "two pushes within the hour mint once: {requests:?}"
    );
    let tokens = push_tokens(&requests);
    assert!(tokens.len() >= 4, "{requests:?}");
    assert!(tokens[0].starts_with("ghs_"), "{tokens:?}");
    assert!(
        tokens.iter().all(|t| t == &tokens[0]),
        "every push request carries the one cached token: {tokens:?}"
    );

    let before = server.requests().len();
    let (n, d) = (network.clone(), dir.clone());
    blocking(move || network::fetch(&n, &d, None))
        .await
        .expect("fetch works");
    let (n, u) = (network.clone(), url.clone());
    blocking(move || network::ls_remote(&n, None, &u))
        .await
        .expect("ls_remote works");
    let reads = &server.requests()[before..];
    assert!(!reads.is_empty());
    assert!(
        reads
            .iter()
            .all(|r| r.ends_with(" -") && !r.starts_with(MINT)),
        "a fetch never mints nor sends the app token: {reads:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_with_an_app_key_github_does_not_know_fails_as_auth_and_pushes_nothing() {
    let server = Server::start();
    let url = server.repo("app-guarded.git");
    let work = tempfile::tempdir().expect("a temp dir");
    let dir = work.path().join("r");
    let network = app_network(&server, "other-app.pem");
    clone(&network, &url, &dir).await.expect("clone works");
    let before = server.head_of("app-guarded.git");
    commit_in(&dir, "x.txt");

    let refused = push(&network, &dir).await;
    match refused {
        Err(error @ GitError::Network { .. }) => {
            assert_eq!(error.class(), Some(NetClass::Auth));
            let text = error.to_string();
            assert!(
                !text.contains("eyJ") && !text.contains("JSON web token"),
                "{text}"
            );
        }
        other => panic!("{other:?}"),
    }
    let requests = server.requests();
    assert_eq!(
        requests.iter().filter(|r| r.starts_with(MINT)).count(),
        1,
        "{requests:?}"
    );
    assert!(push_tokens(&requests).is_empty(), "{requests:?}");

    let plain = server.network(super::fetch_and_push("not-an-app-token", &server.url("")));
    let refused = push(&plain, &dir).await;
    assert_eq!(
        refused.err().and_then(|e| e.class()),
        Some(NetClass::Auth),
        "the server wants a minted token for app- repositories"
    );
    assert_eq!(server.head_of("app-guarded.git"), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_key_in_pkcs8_form_mints_as_the_pkcs1_one_does_and_an_ec_key_is_refused() {
    let server = Server::start();
    let url = server.repo("app-pkcs8.git");
    let work = tempfile::tempdir().expect("a temp dir");
    let dir = work.path().join("r");
    let network = app_network(&server, "app-pkcs8.pem");
    clone(&network, &url, &dir).await.expect("clone works");
    let pushed = commit_in(&dir, "eight.txt");
    push(&network, &dir)
        .await
        .expect("the server takes the JWT the PKCS#8 key signed");
    assert_eq!(server.head_of("app-pkcs8.git"), pushed.to_string());
    let tokens = push_tokens(&server.requests());
    assert!(
        tokens.first().is_some_and(|t| t.starts_with("ghs_")),
        "{tokens:?}"
    );

    // The TLS server's own key: PKCS#8 too, but elliptic-curve.
    let ec = GithubApp::load(4242, 77, &server.root.path().join("server.key"), None)
        .expect_err("an EC key cannot sign RS256");
    let text = ec.to_string();
    assert!(
        text.contains("PRIVATE KEY was rejected") && text.contains(".pem file GitHub generated"),
        "{text}"
    );
}
