//! Network operations. Each one checks its URL for its direction before it
//! starts (for a clear refusal) and the transport checks it again at every
//! request (so nothing edited in between counts). Each is audited with the
//! credential's name, never its value. Call them from a blocking thread.

use std::path::Path;
use std::sync::Arc;

use git2::{
    AutotagOption, FetchOptions, PushOptions, RemoteCallbacks, RemoteUpdateFlags, Repository,
};

use crate::change::{fast_forward, safe_checkout};
use crate::error::{GitError, NetClass};
use crate::paths::Bounds;
use crate::read::open;
use crate::remote::Direction;
use crate::transport::{Network, Wire, init, with_wire};

fn audit(wire: &Wire, url: &url::Url, outcome: &str) {
    tracing::info!(
        target: crate::AUDIT_TARGET,
        op = wire.op,
        url = %porter_net::display_url(url),
        credential = wire.credential_name().as_deref().unwrap_or("none"),
        outcome,
        "git network operation"
    );
}

fn remote_url(repo: &Repository, remote: &str) -> Result<String, GitError> {
    let found = repo
        .find_remote(remote)
        .map_err(|_| GitError::invalid(format!("no remote named {remote:?}")))?;
    found
        .url()
        .map(str::to_owned)
        .map_err(|_| GitError::invalid(format!("the remote {remote:?} has no UTF-8 URL")))
}

fn fetch_options<'a>() -> FetchOptions<'a> {
    let mut options = FetchOptions::new();
    options
        .download_tags(AutotagOption::Auto)
        .update_fetchhead(true);
    options
}

/// `clone` clones `url` into the empty (or missing) folder `dest`: fetch,
/// then the default branch's tree is walked against `bounds` and checked
/// for unsafe paths before anything of it is written, and written through
/// directory handles beneath `dest`.
pub fn clone(
    network: &Network,
    url: &str,
    dest: &Path,
    bounds: Bounds,
) -> Result<String, GitError> {
    init()?;
    let wire = Wire::new(network, "clone");
    let checked = network
        .access
        .check_url(url, Direction::Fetch)
        .map_err(|r| r.into_error("clone"))?;
    if dest.exists() && std::fs::read_dir(dest).map_or(true, |mut d| d.next().is_some()) {
        return Err(GitError::invalid(format!(
            "clone: {} exists and is not empty",
            dest.display()
        )));
    }
    let existed = dest.exists();
    let cloned = clone_into(&wire, &checked, dest, bounds);
    if cloned.is_err() {
        // All or nothing: the folder was empty (or missing) before, so
        // whatever is in it now is this clone's.
        discard(dest, existed);
    }
    cloned
}

/// Empties `dest` (removes it when it did not exist before), never
/// following a symlink out of it.
fn discard(dest: &Path, existed: bool) {
    if !existed {
        let _ = std::fs::remove_dir_all(dest);
        return;
    }
    if let Ok(entries) = std::fs::read_dir(dest) {
        for entry in entries.flatten() {
            let path = entry.path();
            let _ = match entry.file_type() {
                Ok(kind) if kind.is_dir() => std::fs::remove_dir_all(&path),
                _ => std::fs::remove_file(&path),
            };
        }
    }
}

fn clone_into(
    wire: &Arc<Wire>,
    checked: &url::Url,
    dest: &Path,
    bounds: Bounds,
) -> Result<String, GitError> {
    let repo = Repository::init(dest)?;
    let result = with_wire(wire, || -> Result<Option<String>, git2::Error> {
        let mut remote = repo.remote("origin", checked.as_str())?;
        remote.fetch(&[] as &[&str], Some(&mut fetch_options()), Some("clone"))?;
        let default = remote
            .default_branch()
            .ok()
            .and_then(|b| b.as_str().ok().map(str::to_owned));
        Ok(default)
    });
    let default = match result {
        Ok(default) => default,
        Err(error) => {
            audit(wire, checked, "failed");
            return Err(wire.error(&error));
        }
    };
    audit(wire, checked, "ok");
    let Some(branch_ref) = default else {
        return Ok(format!(
            "cloned an empty repository into {}",
            dest.display()
        ));
    };
    let branch = branch_ref
        .strip_prefix("refs/heads/")
        .unwrap_or(&branch_ref)
        .to_owned();
    let tracking = format!("refs/remotes/origin/{branch}");
    let commit = repo.find_reference(&tracking)?.peel_to_commit()?;
    safe_checkout(&repo, &commit.tree()?, bounds, true)?;
    let mut local = repo.branch(&branch, &commit, true)?;
    local.set_upstream(Some(&format!("origin/{branch}")))?;
    repo.set_head(&format!("refs/heads/{branch}"))?;
    Ok(format!(
        "cloned into {} on branch {branch} at {}",
        dest.display(),
        commit.id()
    ))
}

/// `fetch` fetches `remote` (default `origin`) with its configured refspecs.
pub fn fetch(network: &Network, dir: &Path, remote: Option<&str>) -> Result<String, GitError> {
    let repo = open(dir)?;
    let name = remote.unwrap_or("origin");
    fetch_repo(network, &repo, name, "fetch")?;
    Ok(format!("fetched {name}"))
}

fn fetch_repo(
    network: &Network,
    repo: &Repository,
    name: &str,
    op: &'static str,
) -> Result<(), GitError> {
    let wire = Wire::new(network, op);
    let url = remote_url(repo, name)?;
    let checked = network
        .access
        .check_url(&url, Direction::Fetch)
        .map_err(|r| r.into_error(op))?;
    let result = with_wire(&wire, || {
        let mut remote = repo.find_remote(name)?;
        remote.fetch(&[] as &[&str], Some(&mut fetch_options()), Some(op))
    });
    audit(
        &wire,
        &checked,
        if result.is_ok() { "ok" } else { "failed" },
    );
    result.map_err(|e| wire.error(&e))
}

/// `pull` fetches the current branch's upstream and fast-forwards to it.
pub fn pull(network: &Network, dir: &Path, bounds: Bounds) -> Result<String, GitError> {
    let repo = open(dir)?;
    let head = repo.head()?;
    if !head.is_branch() {
        return Err(GitError::invalid(
            "pull: HEAD is detached; check out a branch first",
        ));
    }
    let branch_name = head.name().unwrap_or("").to_owned();
    let remote = repo.branch_upstream_remote(&branch_name)?;
    let remote = remote.as_str().unwrap_or("origin").to_owned();
    fetch_repo(network, &repo, &remote, "pull")?;
    let upstream = repo.branch_upstream_name(&branch_name)?;
    let upstream = upstream.as_str().unwrap_or("").to_owned();
    fast_forward(&repo, &upstream, bounds)
}

/// `push` pushes `refspecs` (default: the current branch to the same name)
/// to `remote` (default `origin`). A ref the server refuses makes the whole
/// answer [`NetClass::Rejected`].
pub fn push(
    network: &Network,
    dir: &Path,
    remote: Option<&str>,
    refspecs: &[String],
) -> Result<String, GitError> {
    let repo = open(dir)?;
    let name = remote.unwrap_or("origin");
    let url = remote_url(&repo, name)?;
    let checked = network
        .access
        .check_url(&url, Direction::Push)
        .map_err(|r| r.into_error("push"))?;
    let specs: Vec<String> = if refspecs.is_empty() {
        let head = repo.head()?;
        let branch = head
            .name()
            .ok()
            .filter(|_| head.is_branch())
            .ok_or_else(|| GitError::invalid("push: HEAD is detached; name what to push"))?
            .to_owned();
        vec![format!("{branch}:{branch}")]
    } else {
        for spec in refspecs {
            if spec.starts_with('+') || spec.starts_with('-') {
                return Err(GitError::invalid("push: forced pushes are not offered"));
            }
        }
        refspecs.to_vec()
    };
    let wire = Wire::new(network, "push");
    let rejected: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let seen = Arc::clone(&rejected);
    let result = with_wire(&wire, || {
        let mut callbacks = RemoteCallbacks::new();
        callbacks.push_update_reference(move |reference, status| {
            if let Some(status) = status {
                tracing::warn!(target: crate::AUDIT_TARGET, reference, status, "push rejected by the server");
                if let Ok(mut list) = seen.lock() {
                    list.push(reference.to_owned());
                }
            }
            Ok(())
        });
        let mut options = PushOptions::new();
        options.remote_callbacks(callbacks);
        let mut remote = repo.find_remote(name)?;
        remote.push(&specs, Some(&mut options))?;
        remote.update_tips(
            None,
            RemoteUpdateFlags::UPDATE_FETCHHEAD,
            AutotagOption::Unspecified,
            Some("push"),
        )
    });
    let refused = rejected.lock().map(|l| l.clone()).unwrap_or_default();
    audit(
        &wire,
        &checked,
        if result.is_ok() && refused.is_empty() {
            "ok"
        } else {
            "failed"
        },
    );
    result.map_err(|e| wire.error(&e))?;
    if !refused.is_empty() {
        return Err(GitError::Network {
            op: "push",
            class: NetClass::Rejected,
            reason: None,
        });
    }
    Ok(format!("pushed {} to {name}", specs.join(", ")))
}

/// `ls_remote` lists the refs of a remote, given by name in the repository
/// at `dir` or, with no repository, by URL.
pub fn ls_remote(network: &Network, dir: Option<&Path>, remote: &str) -> Result<String, GitError> {
    init()?;
    let wire = Wire::new(network, "ls_remote");
    let (url, repo) = match dir {
        Some(dir) => {
            let repo = open(dir)?;
            (remote_url(&repo, remote)?, Some(repo))
        }
        None => (remote.to_owned(), None),
    };
    let checked = network
        .access
        .check_url(&url, Direction::Fetch)
        .map_err(|r| r.into_error("ls_remote"))?;
    let result = with_wire(&wire, || -> Result<String, git2::Error> {
        let mut detached = match &repo {
            Some(repo) => repo.remote_anonymous(checked.as_str())?,
            None => git2::Remote::create_detached(checked.as_str())?,
        };
        let connection = detached.connect_auth(git2::Direction::Fetch, None, None)?;
        let mut text = String::new();
        for head in connection.list()? {
            text.push_str(&head.oid().to_string());
            text.push('\t');
            text.push_str(head.name());
            text.push('\n');
        }
        Ok(text)
    });
    audit(
        &wire,
        &checked,
        if result.is_ok() { "ok" } else { "failed" },
    );
    result.map_err(|e| wire.error(&e))
}
