//! Change operations: they write to the repository, so the gateway allows
//! them only on read-write volumes. Every tree about to be checked out is
//! walked first ([`crate::paths::check_tree`]) and then written by porter
//! through directory handles beneath the work tree (`crate::worktree`),
//! never by libgit2's path-based checkout; a reset, checkout or merge that
//! fails puts HEAD, the branch and the index back as they were.

use std::path::Path;

use git2::{IndexAddOption, Oid, Repository, ResetType, Signature};

use crate::error::GitError;
use crate::paths::{Bounds, check_path, check_tree};
use crate::read::{born_head, open};
use crate::sign::Signer;
use crate::worktree::{self, WorkTree};

/// `Identity` is the operator's author and committer; the model cannot
/// choose it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The name commits carry.
    pub name: String,
    /// The email commits carry.
    pub email: String,
}

impl Identity {
    fn signature(&self) -> Result<Signature<'static>, GitError> {
        Ok(Signature::now(&self.name, &self.email)?)
    }
}

/// `RUN_TRAILER` is the trailer every commit gets, naming the run.
pub const RUN_TRAILER: &str = "Porter-Run";

/// `init` makes a new repository in `dir` (created if missing) with
/// `branch` (default `main`) as its first branch.
pub fn init(dir: &Path, branch: Option<&str>) -> Result<String, GitError> {
    crate::transport::init()?;
    let branch = branch.unwrap_or("main");
    check_branch_name(branch)?;
    let mut options = git2::RepositoryInitOptions::new();
    options.initial_head(branch).mkdir(true).no_reinit(true);
    let repo = Repository::init_opts(dir, &options)?;
    Ok(format!(
        "initialised an empty repository on branch {branch} in {}",
        repo.workdir().unwrap_or(dir).display()
    ))
}

fn check_branch_name(name: &str) -> Result<(), GitError> {
    if name.starts_with('-') || !git2::Branch::name_is_valid(name)? {
        return Err(GitError::invalid(format!(
            "{name:?} is not a valid branch name"
        )));
    }
    Ok(())
}

fn check_paths(paths: &[String]) -> Result<(), GitError> {
    if paths.is_empty() {
        return Err(GitError::invalid(
            "name at least one path (\".\" for everything)",
        ));
    }
    for path in paths {
        if path != "." {
            check_path(path.trim_end_matches('/'))?;
        }
    }
    Ok(())
}

/// `add` stages `paths` (files or folders, `.` for everything) as they are
/// in the work tree, deletions included.
pub fn add(dir: &Path, paths: &[String]) -> Result<String, GitError> {
    check_paths(paths)?;
    let repo = open(dir)?;
    let mut index = repo.index()?;
    let specs: Vec<&str> = paths
        .iter()
        .map(|p| if p == "." { "*" } else { p.as_str() })
        .collect();
    index.add_all(specs.iter(), IndexAddOption::DEFAULT, None)?;
    index.update_all(specs.iter(), None)?;
    index.write()?;
    Ok(format!("staged; the index holds {} files", index.len()))
}

/// `rm` removes `paths` from the index and, unless `cached`, from the work
/// tree. A folder must be named with `recursive`.
pub fn rm(dir: &Path, paths: &[String], cached: bool) -> Result<String, GitError> {
    check_paths(paths)?;
    let repo = open(dir)?;
    let workdir = repo
        .workdir()
        .ok_or_else(|| GitError::invalid("rm: the repository has no work tree"))?
        .to_path_buf();
    let mut index = repo.index()?;
    let mut work = if cached {
        None
    } else {
        Some(WorkTree::open(&workdir)?)
    };
    let mut removed = 0usize;
    for path in paths {
        let tracked = index.get_path(Path::new(path), 0).is_some();
        if !tracked {
            return Err(GitError::invalid(format!("rm: {path} is not tracked")));
        }
        index.remove_path(Path::new(path))?;
        if let Some(work) = work.as_mut() {
            work.remove(path)?;
        }
        removed += 1;
    }
    index.write()?;
    Ok(format!("removed {removed} paths"))
}

/// `with_trailer` is `message` with the `Porter-Run: <run_id>` trailer.
#[must_use]
pub fn with_trailer(message: &str, run_id: &str) -> String {
    let body = message.trim_end();
    let trailer = format!("{RUN_TRAILER}: {run_id}");
    let last = body.rsplit("\n\n").next().unwrap_or("");
    let last_is_trailers = body.contains("\n\n")
        && last.lines().all(|l| {
            l.split_once(": ")
                .is_some_and(|(k, _)| !k.is_empty() && !k.contains(' '))
        });
    if last_is_trailers {
        format!("{body}\n{trailer}\n")
    } else {
        format!("{body}\n\n{trailer}\n")
    }
}

/// `commit` records the index as a new commit on the current branch, by
/// the operator's `identity`, with the run's trailer. An empty commit (the
/// tree unchanged) is refused unless `allow_empty`.
pub fn commit(
    dir: &Path,
    message: &str,
    identity: &Identity,
    run_id: &str,
    allow_empty: bool,
) -> Result<Oid, GitError> {
    record(dir, message, identity, run_id, allow_empty, None)
}

/// `signed_commit` is [`commit`] with an SSH signature by `signer` in the
/// commit's `gpgsig` header, as `git commit -S` with `gpg.format=ssh`
/// writes it, so `git verify-commit` checks it against an allowed-signers
/// file. The branch (or a detached HEAD) moves with a reflog entry, as for
/// an unsigned commit, on an unborn branch too.
pub fn signed_commit(
    dir: &Path,
    message: &str,
    identity: &Identity,
    run_id: &str,
    allow_empty: bool,
    signer: &Signer,
) -> Result<Oid, GitError> {
    record(dir, message, identity, run_id, allow_empty, Some(signer))
}

fn record(
    dir: &Path,
    message: &str,
    identity: &Identity,
    run_id: &str,
    allow_empty: bool,
    signer: Option<&Signer>,
) -> Result<Oid, GitError> {
    if message.trim().is_empty() {
        return Err(GitError::invalid("commit: give a message"));
    }
    let repo = open(dir)?;
    let mut index = repo.index()?;
    if index.has_conflicts() {
        return Err(GitError::invalid(
            "commit: the index has conflicts; resolve them first",
        ));
    }
    let tree = repo.find_tree(index.write_tree()?)?;
    let parent = born_head(&repo)?
        .map(|head| head.peel_to_commit())
        .transpose()?;
    if !allow_empty && parent.as_ref().is_some_and(|p| p.tree_id() == tree.id()) {
        return Err(GitError::invalid(
            "commit: nothing staged changes the tree; add files first",
        ));
    }
    let signature = identity.signature()?;
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    let message = with_trailer(message, run_id);
    let Some(signer) = signer else {
        return Ok(repo.commit(
            Some("HEAD"),
            &signature,
            &signature,
            &message,
            &tree,
            &parents,
        )?);
    };
    let buffer = repo.commit_create_buffer(&signature, &signature, &message, &tree, &parents)?;
    let content = buffer
        .as_str()
        .map_err(|_| GitError::invalid("commit: the commit text is not UTF-8"))?;
    let armored = signer
        .sign(content.as_bytes())
        .map_err(|e| GitError::invalid(format!("commit: {e}")))?;
    let id = repo.commit_signed(content, armored.trim_end_matches('\n'), None)?;
    let summary = message.lines().next().unwrap_or("");
    let reflog = match &parent {
        Some(_) => format!("commit: {summary}"),
        None => format!("commit (initial): {summary}"),
    };
    advance_head(&repo, id, parent.as_ref().map(git2::Commit::id), &reflog)?;
    Ok(id)
}

/// `advance_head` moves what HEAD names (its branch, or HEAD itself when
/// detached) from `parent` to `id`, as libgit2's own commit does: only if
/// it still points at `parent` (or, unborn, does not exist yet), so a
/// commit made concurrently is not overwritten.
fn advance_head(
    repo: &Repository,
    id: Oid,
    parent: Option<Oid>,
    reflog: &str,
) -> Result<(), GitError> {
    let head = repo.find_reference("HEAD")?;
    let name = match head.symbolic_target() {
        Ok(Some(branch)) => branch.to_owned(),
        _ => "HEAD".to_owned(),
    };
    match parent {
        Some(parent) => repo.reference_matching(&name, id, true, parent, reflog)?,
        None => repo.reference(&name, id, false, reflog)?,
    };
    Ok(())
}

/// `Snapshot` is HEAD, the branch it names and the index, taken before an
/// operation that moves them, so that a failure can put them back.
struct Snapshot {
    head: Option<String>,
    detached: Option<Oid>,
    branch_target: Option<Oid>,
    index: Option<Vec<u8>>,
}

impl Snapshot {
    fn take(repo: &Repository) -> Snapshot {
        let head = repo.find_reference("HEAD").ok();
        let symbolic = head
            .as_ref()
            .and_then(|h| h.symbolic_target().ok().flatten().map(str::to_owned));
        let detached = if symbolic.is_none() {
            head.as_ref().and_then(git2::Reference::target)
        } else {
            None
        };
        let branch_target = symbolic
            .as_deref()
            .and_then(|name| repo.find_reference(name).ok())
            .and_then(|r| r.target());
        let index = std::fs::read(repo.path().join("index")).ok();
        Snapshot {
            head: symbolic,
            detached,
            branch_target,
            index,
        }
    }

    fn restore(&self, repo: &Repository) {
        if let Some(name) = &self.head {
            if let Some(target) = self.branch_target {
                let _ = repo.reference(
                    name,
                    target,
                    true,
                    "porter: restore after a failed operation",
                );
            }
            let _ = repo.set_head(name);
        } else if let Some(id) = self.detached {
            let _ = repo.set_head_detached(id);
        }
        if let Some(bytes) = &self.index {
            let _ = std::fs::write(repo.path().join("index"), bytes);
        }
        tracing::warn!("HEAD, the branch and the index were restored after a failed operation");
    }
}

fn guarded<T>(
    repo: &Repository,
    work: impl FnOnce() -> Result<T, GitError>,
) -> Result<T, GitError> {
    let snapshot = Snapshot::take(repo);
    let result = work();
    if result.is_err() {
        snapshot.restore(repo);
    }
    result
}

/// `safe_checkout` makes the work tree and the index hold `tree` (the
/// caller moves HEAD): the tree is walked against `bounds` and its paths
/// checked first, then every write goes through directory handles beneath
/// the work tree ([`crate::worktree`]). Without `force` a local change on
/// a path the checkout touches refuses it before anything is written; with
/// `force` (reset --hard, a clone's first checkout) tracked files are
/// overwritten and untracked ones kept. `submodule` calls it for each
/// submodule's work tree.
pub(crate) fn safe_checkout(
    repo: &Repository,
    tree: &git2::Tree<'_>,
    bounds: Bounds,
    force: bool,
) -> Result<(), GitError> {
    check_tree(repo, tree, bounds)?;
    worktree::checkout(repo, tree, force)
}

/// `checkout` switches to branch `target` (or detaches at a revision),
/// refusing when local changes would be overwritten. `create` makes the
/// branch at HEAD first.
pub fn checkout(
    dir: &Path,
    target: &str,
    create: bool,
    bounds: Bounds,
) -> Result<String, GitError> {
    let repo = open(dir)?;
    if create {
        check_branch_name(target)?;
        let head = repo.head()?.peel_to_commit()?;
        repo.branch(target, &head, false)?;
    }
    // As git does: a name that is neither a local branch nor a revision,
    // but a branch of exactly one remote, becomes a new local branch that
    // tracks it.
    let tracking = if !create
        && repo.find_branch(target, git2::BranchType::Local).is_err()
        && repo.revparse_single(target).is_err()
    {
        remote_branch(&repo, target)?
    } else {
        None
    };
    if let Some(upstream) = &tracking {
        check_branch_name(target)?;
        let commit = repo
            .find_branch(upstream, git2::BranchType::Remote)?
            .get()
            .peel_to_commit()?;
        let mut branch = repo.branch(target, &commit, false)?;
        branch.set_upstream(Some(upstream))?;
    }
    let switched = guarded(&repo, || {
        if let Ok(branch) = repo.find_branch(target, git2::BranchType::Local) {
            let reference = branch.into_reference();
            let name = reference
                .name()
                .map_err(|_| GitError::invalid("branch name is not UTF-8"))?
                .to_owned();
            let tree = reference.peel_to_tree()?;
            safe_checkout(&repo, &tree, bounds, false)?;
            repo.set_head(&name)?;
            Ok(format!("switched to branch {target}"))
        } else {
            let object = repo.revparse_single(target)?;
            let commit = object.peel_to_commit()?;
            safe_checkout(&repo, &commit.tree()?, bounds, false)?;
            repo.set_head_detached(commit.id())?;
            Ok(format!("HEAD is now detached at {}", commit.id()))
        }
    });
    match (switched, tracking) {
        (Ok(text), Some(upstream)) => Ok(format!(
            "created branch {target} to track {upstream}\n{text}"
        )),
        (Err(error), Some(_)) => {
            // The branch was made for this checkout only.
            if let Ok(mut branch) = repo.find_branch(target, git2::BranchType::Local) {
                let _ = branch.delete();
            }
            Err(error)
        }
        (switched, None) => switched,
    }
}

/// `remote_branch` is `<remote>/<name>` when exactly one remote has a
/// branch `name`; an error naming them when several do; none when no
/// remote has it.
fn remote_branch(repo: &Repository, name: &str) -> Result<Option<String>, GitError> {
    let remotes = repo.remotes()?;
    let found: Vec<String> = remotes
        .iter()
        .filter_map(|remote| remote.ok().flatten().map(|r| format!("{r}/{name}")))
        .filter(|candidate| {
            repo.find_branch(candidate, git2::BranchType::Remote)
                .is_ok()
        })
        .collect();
    match found.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one.clone())),
        many => Err(GitError::invalid(format!(
            "checkout: {name} is a branch of several remotes ({}), so it is not guessed; say which: branch_create name {name} rev {}, then checkout {name}",
            many.join(", "),
            many[0]
        ))),
    }
}

/// `branch_create` makes branch `name` at `start` (default HEAD).
pub fn branch_create(dir: &Path, name: &str, start: Option<&str>) -> Result<String, GitError> {
    check_branch_name(name)?;
    let repo = open(dir)?;
    let commit = repo
        .revparse_single(start.unwrap_or("HEAD"))?
        .peel_to_commit()?;
    repo.branch(name, &commit, false)?;
    Ok(format!("created branch {name} at {}", commit.id()))
}

/// `branch_delete` deletes local branch `name` (never the current one).
pub fn branch_delete(dir: &Path, name: &str) -> Result<String, GitError> {
    let repo = open(dir)?;
    let mut branch = repo.find_branch(name, git2::BranchType::Local)?;
    if branch.is_head() {
        return Err(GitError::invalid(format!(
            "branch_delete: {name} is the current branch; check out another first"
        )));
    }
    branch.delete()?;
    Ok(format!("deleted branch {name}"))
}

/// `tag_create` tags `target` (default HEAD): annotated, by the operator's
/// identity, when a `message` is given, else lightweight.
pub fn tag_create(
    dir: &Path,
    name: &str,
    target: Option<&str>,
    message: Option<&str>,
    identity: &Identity,
) -> Result<String, GitError> {
    check_tag_name(name)?;
    let repo = open(dir)?;
    let object = repo.revparse_single(target.unwrap_or("HEAD"))?;
    let id = match message {
        Some(message) => repo.tag(name, &object, &identity.signature()?, message, false)?,
        None => repo.tag_lightweight(name, &object, false)?,
    };
    Ok(format!("tagged {} as {name} ({id})", object.id()))
}

/// `signed_tag_create` makes an annotated tag of `target` (default HEAD)
/// by the operator's identity, signed by `signer` as `git tag -s` with
/// `gpg.format=ssh` does: the armored SSH signature over the tag's header
/// and message is appended to the message, so `git verify-tag` checks it.
/// A signed tag needs a message (a lightweight tag has nowhere to hold a
/// signature). The answer names the public key as `signed_by`.
pub fn signed_tag_create(
    dir: &Path,
    name: &str,
    target: Option<&str>,
    message: &str,
    identity: &Identity,
    signer: &Signer,
) -> Result<String, GitError> {
    check_tag_name(name)?;
    let message = message.trim_end();
    if message.trim().is_empty() {
        return Err(GitError::invalid(
            "tag_create: a signed tag needs a message",
        ));
    }
    let repo = open(dir)?;
    let object = repo.revparse_single(target.unwrap_or("HEAD"))?;
    let refname = format!("refs/tags/{name}");
    if repo.find_reference(&refname).is_ok() {
        return Err(GitError::invalid(format!(
            "tag_create: the tag {name} exists already"
        )));
    }
    let kind = object
        .kind()
        .map(|kind| kind.str())
        .ok_or_else(|| GitError::invalid("tag_create: the target is not a taggable object"))?;
    let tagger = identity.signature()?;
    let mut bytes = format!(
        "object {}\ntype {kind}\ntag {name}\ntagger {}\n\n{message}\n",
        object.id(),
        signature_line(&tagger)?,
    )
    .into_bytes();
    let armored = signer
        .sign(&bytes)
        .map_err(|e| GitError::invalid(format!("tag_create: {e}")))?;
    bytes.extend_from_slice(armored.as_bytes());
    let id = repo.odb()?.write(git2::ObjectType::Tag, &bytes)?;
    repo.reference(&refname, id, false, &format!("tag: signed {name}"))?;
    Ok(format!(
        "tagged {} as {name} ({id})\nsigned_by: {}",
        object.id(),
        signer.public_key()
    ))
}

fn check_tag_name(name: &str) -> Result<(), GitError> {
    if name.starts_with('-') || !git2::Reference::is_valid_name(&format!("refs/tags/{name}")) {
        return Err(GitError::invalid(format!(
            "{name:?} is not a valid tag name"
        )));
    }
    Ok(())
}

/// `signature_line` is `Name <email> <seconds> <±hhmm>`, the form of a
/// tagger line.
fn signature_line(signature: &Signature<'_>) -> Result<String, GitError> {
    let name = signature
        .name()
        .map_err(|_| GitError::invalid("the operator's name is not UTF-8"))?;
    let email = signature
        .email()
        .map_err(|_| GitError::invalid("the operator's email is not UTF-8"))?;
    let when = signature.when();
    let offset = when.offset_minutes();
    let sign = if offset < 0 { '-' } else { '+' };
    let offset = offset.unsigned_abs();
    Ok(format!(
        "{name} <{email}> {} {sign}{:02}{:02}",
        when.seconds(),
        offset / 60,
        offset % 60
    ))
}

/// `merge` fast-forwards the current branch to `rev`; anything else (a real
/// merge) is refused.
pub fn merge(dir: &Path, rev: &str, bounds: Bounds) -> Result<String, GitError> {
    let repo = open(dir)?;
    fast_forward(&repo, rev, bounds)
}

pub(crate) fn fast_forward(
    repo: &Repository,
    rev: &str,
    bounds: Bounds,
) -> Result<String, GitError> {
    let target = repo.revparse_single(rev)?.peel_to_commit()?;
    let annotated = repo.find_annotated_commit(target.id())?;
    let (analysis, _) = repo.merge_analysis(&[&annotated])?;
    if analysis.is_up_to_date() {
        return Ok("already up to date".to_owned());
    }
    if !analysis.is_fast_forward() && !analysis.is_unborn() {
        return Err(GitError::invalid(format!(
            "merge: {rev} is not a fast-forward of HEAD; only fast-forward merges are offered"
        )));
    }
    let branch = repo
        .find_reference("HEAD")?
        .symbolic_target()
        .ok()
        .flatten()
        .ok_or_else(|| GitError::invalid("merge: HEAD is detached; check out a branch first"))?
        .to_owned();
    guarded(repo, || {
        safe_checkout(repo, &target.tree()?, bounds, false)?;
        repo.reference(
            &branch,
            target.id(),
            true,
            &format!("merge {rev}: fast-forward"),
        )?;
        Ok(format!("fast-forwarded to {}", target.id()))
    })
}

/// `ResetMode` is what a reset moves besides the branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetMode {
    /// Only the branch.
    Soft,
    /// The branch and the index.
    Mixed,
    /// The branch, the index and the work tree (local changes lost).
    Hard,
}

/// `reset` moves the current branch to `rev`.
pub fn reset(dir: &Path, rev: &str, mode: ResetMode, bounds: Bounds) -> Result<String, GitError> {
    let repo = open(dir)?;
    let object = repo.revparse_single(rev)?;
    let commit = object.peel_to_commit()?;
    guarded(&repo, || {
        let kind = match mode {
            ResetMode::Soft => ResetType::Soft,
            ResetMode::Mixed => ResetType::Mixed,
            ResetMode::Hard => {
                safe_checkout(&repo, &commit.tree()?, bounds, true)?;
                repo.cleanup_state()?;
                // The work tree and the index already hold the commit; a soft
                // reset moves the branch (and records ORIG_HEAD).
                ResetType::Soft
            }
        };
        repo.reset(commit.as_object(), kind, None)?;
        Ok(format!("HEAD is now at {}", commit.id()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_trailer_joins_existing_trailers_or_starts_its_own_paragraph() {
        assert_eq!(with_trailer("Fix it", "r1"), "Fix it\n\nPorter-Run: r1\n");
        assert_eq!(
            with_trailer("Fix it\n\nBody text here.\n", "r1"),
            "Fix it\n\nBody text here.\n\nPorter-Run: r1\n"
        );
        assert_eq!(
            with_trailer("Fix it\n\nSigned-off-by: A <a@x>", "r1"),
            "Fix it\n\nSigned-off-by: A <a@x>\nPorter-Run: r1\n"
        );
    }
}
