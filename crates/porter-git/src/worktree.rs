//! Checkouts written by porter itself, through directory handles opened
//! beneath the work tree's root.
//!
//! libgit2's own checkout writes by path: between its check and its write a
//! folder could be swapped for a symlink to somewhere else, and the write
//! would follow it. Here libgit2 only says *what* changes (a tree-to-tree
//! or tree-to-work-tree diff); every write goes through a
//! [`cap_std::fs::Dir`] of the work tree, each folder on the way opened one
//! component at a time without following symlinks, so a symlink met on the
//! way is refused instead of followed, and nothing is resolved outside the
//! root. A file is written to a fresh temporary name in its folder and
//! renamed into place, so a hard link or symlink standing at the name is
//! replaced, never written through. No path with a `.git` component (in any
//! of its aliases) is ever written.
//!
//! What it deliberately does not do: run filters (no CRLF or `ident`
//! conversion; a file is written as its blob holds it), fill in submodules
//! (a submodule entry becomes an empty folder, as in libgit2), or roll back
//! files already written when a later write fails (the caller restores
//! HEAD, the branch and the index; the files left are visible in `status`).

use std::collections::HashSet;
use std::io::{self, Write as _};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_fs_ext::DirExt as _;
use cap_std::fs::{Dir, MetadataExt as _, OpenOptions, OpenOptionsExt as _};
use git2::{Delta, FileMode, IndexEntry, IndexTime, Oid, Repository, Status, Tree};

use crate::error::GitError;
use crate::paths::check_path;
use crate::read::born_head;

/// `MAX_LISTED_CONFLICTS` is how many paths a refused checkout names.
const MAX_LISTED_CONFLICTS: usize = 10;

/// `MODE_LINK` is git's mode for a symlink entry.
const MODE_LINK: u32 = 0o120_000;
/// `MODE_EXECUTABLE` is git's mode for an executable file.
const MODE_EXECUTABLE: u32 = 0o100_755;
/// `MODE_FILE` is git's mode for an ordinary file.
const MODE_FILE: u32 = 0o100_644;
/// `MODE_GITLINK` is git's mode for a submodule entry.
const MODE_GITLINK: u32 = 0o160_000;

/// Numbers the temporary names of one process, so two writes never pick
/// the same one.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// `Step` is one change to the work tree.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    /// Write the blob (or symlink, or submodule folder) `id` at `path`.
    Write { path: String, id: Oid, mode: u32 },
    /// Remove whatever tracked file was at `path`.
    Remove { path: String },
}

/// `checkout` makes the work tree and the index of `repo` hold `tree`.
///
/// With `force`, every tracked file that differs from `tree` is rewritten
/// and files tracked but absent from `tree` are removed (untracked files
/// stay); the index becomes `tree`. Without it, only the paths that differ
/// between HEAD and `tree` change, and a local change (staged, unstaged or
/// an untracked file in the way) on any of them refuses the whole checkout
/// before anything is written; other local changes are carried along.
/// The caller has checked `tree` ([`crate::paths::check_tree`]) and moves
/// HEAD afterwards.
pub(crate) fn checkout(repo: &Repository, tree: &Tree<'_>, force: bool) -> Result<(), GitError> {
    let workdir = repo
        .workdir()
        .ok_or_else(|| GitError::invalid("checkout: the repository has no work tree"))?;
    let steps = if force {
        force_steps(repo, tree)?
    } else {
        let steps = safe_steps(repo, tree)?;
        refuse_local_changes(repo, &steps)?;
        steps
    };
    let mut work = WorkTree::open(workdir)?;
    let mut written = Vec::new();
    let mut removed = Vec::new();
    for step in &steps {
        if let Step::Remove { path } = step {
            work.remove(path)?;
            removed.push(path.as_str());
        }
    }
    for step in &steps {
        if let Step::Write { path, id, mode } = step {
            written.push(write_entry(repo, &mut work, path, *id, *mode)?);
        }
    }
    let mut index = repo.index()?;
    if force {
        index.read_tree(tree)?;
    } else {
        for path in removed {
            match index.remove_path(Path::new(path)) {
                Ok(()) => {}
                Err(e) if e.code() == git2::ErrorCode::NotFound => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    for entry in &written {
        index.add(entry)?;
    }
    index.write()?;
    Ok(())
}

fn text_path(bytes: Option<&[u8]>) -> Result<String, GitError> {
    let bytes = bytes.ok_or_else(|| GitError::invalid("checkout: a change without a path"))?;
    String::from_utf8(bytes.to_vec()).map_err(|_| GitError::UnsafePath {
        path: String::from_utf8_lossy(bytes).into_owned(),
        reason: "is not UTF-8",
    })
}

fn git_mode(mode: FileMode) -> u32 {
    match mode {
        FileMode::BlobExecutable => MODE_EXECUTABLE,
        FileMode::Link => MODE_LINK,
        FileMode::Commit => MODE_GITLINK,
        _ => MODE_FILE,
    }
}

/// The steps from HEAD's tree (nothing, when HEAD is unborn) to `tree`.
fn safe_steps(repo: &Repository, tree: &Tree<'_>) -> Result<Vec<Step>, GitError> {
    let baseline = born_head(repo)?
        .map(|head| head.peel_to_tree())
        .transpose()?;
    let diff = repo.diff_tree_to_tree(baseline.as_ref(), Some(tree), None)?;
    let mut steps = Vec::new();
    for delta in diff.deltas() {
        if delta.status() == Delta::Deleted {
            steps.push(Step::Remove {
                path: text_path(delta.old_file().path_bytes())?,
            });
        } else {
            let new = delta.new_file();
            steps.push(Step::Write {
                path: text_path(new.path_bytes())?,
                id: new.id(),
                mode: git_mode(new.mode()),
            });
        }
    }
    Ok(steps)
}

/// The steps from the index and work tree to `tree`: tracked files that
/// differ are rewritten, tracked files `tree` lacks are removed.
fn force_steps(repo: &Repository, tree: &Tree<'_>) -> Result<Vec<Step>, GitError> {
    let diff = repo.diff_tree_to_workdir_with_index(Some(tree), None)?;
    let mut steps = Vec::new();
    for delta in diff.deltas() {
        let wanted = delta.old_file();
        if delta.status() == Delta::Added || !wanted.exists() {
            steps.push(Step::Remove {
                path: text_path(delta.new_file().path_bytes())?,
            });
        } else {
            steps.push(Step::Write {
                path: text_path(wanted.path_bytes())?,
                id: wanted.id(),
                mode: git_mode(wanted.mode()),
            });
        }
    }
    Ok(steps)
}

/// Refuses a safe checkout when a path it would change has a local change
/// (staged or not), an untracked file stands where it writes or where one
/// of its folders goes, or an untracked file lies in a folder it replaces.
fn refuse_local_changes(repo: &Repository, steps: &[Step]) -> Result<(), GitError> {
    if steps.is_empty() {
        return Ok(());
    }
    let changing: HashSet<&str> = steps
        .iter()
        .map(|s| match s {
            Step::Write { path, .. } | Step::Remove { path } => path.as_str(),
        })
        .collect();
    let folders: HashSet<&str> = changing
        .iter()
        .flat_map(|p| p.match_indices('/').map(|(at, _)| &p[..at]))
        .collect();
    let mut options = git2::StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(true);
    let statuses = repo.statuses(Some(&mut options))?;
    let mut blocking = Vec::new();
    for entry in statuses.iter() {
        let status = entry.status();
        if status.is_empty() || status.contains(Status::IGNORED) {
            continue;
        }
        let Ok(path) = entry.path() else { continue };
        let untracked = status == Status::WT_NEW;
        let in_the_way = changing.contains(path)
            || (untracked && folders.contains(path))
            || (untracked
                && path
                    .match_indices('/')
                    .any(|(at, _)| changing.contains(&path[..at])))
            || status.contains(Status::CONFLICTED);
        if in_the_way {
            blocking.push(path.to_owned());
        }
    }
    if blocking.is_empty() {
        return Ok(());
    }
    let count = blocking.len();
    let listed = blocking
        .into_iter()
        .take(MAX_LISTED_CONFLICTS)
        .collect::<Vec<_>>()
        .join(", ");
    let more = if count > MAX_LISTED_CONFLICTS {
        format!(" and {} more", count - MAX_LISTED_CONFLICTS)
    } else {
        String::new()
    };
    Err(GitError::invalid(format!(
        "checkout refused: local changes to {count} path(s) would be overwritten: {listed}{more}; commit them, or reset --hard to drop them, and try again (nothing was written)"
    )))
}

/// Writes one tree entry and says what the index should hold for it.
fn write_entry(
    repo: &Repository,
    work: &mut WorkTree,
    path: &str,
    id: Oid,
    mode: u32,
) -> Result<IndexEntry, GitError> {
    let stat = match mode {
        MODE_GITLINK => {
            work.make_dir(path)?;
            None
        }
        MODE_LINK => {
            let blob = repo.find_blob(id)?;
            let target = std::str::from_utf8(blob.content()).map_err(|_| GitError::UnsafePath {
                path: path.to_owned(),
                reason: "is a symlink whose target is not UTF-8",
            })?;
            Some(work.write_link(path, target)?)
        }
        _ => {
            let blob = repo.find_blob(id)?;
            Some(work.write_file(path, blob.content(), mode == MODE_EXECUTABLE)?)
        }
    };
    let zero = IndexTime::new(0, 0);
    let mut entry = IndexEntry {
        ctime: zero,
        mtime: zero,
        dev: 0,
        ino: 0,
        mode,
        uid: 0,
        gid: 0,
        file_size: 0,
        id,
        flags: 0,
        flags_extended: 0,
        path: path.as_bytes().to_vec(),
    };
    if let Some(stat) = stat {
        entry.ctime = IndexTime::new(stat.ctime() as i32, stat.ctime_nsec() as u32);
        entry.mtime = IndexTime::new(stat.mtime() as i32, stat.mtime_nsec() as u32);
        entry.dev = stat.dev() as u32;
        entry.ino = stat.ino() as u32;
        entry.uid = stat.uid();
        entry.gid = stat.gid();
        entry.file_size = stat.size() as u32;
    }
    Ok(entry)
}

/// `WorkTree` is the work tree's root handle and the chain of folders
/// opened beneath it for the last path, so that a checkout's sorted paths
/// reopen only the folders that change from one path to the next.
pub(crate) struct WorkTree {
    root: Dir,
    /// The folders of the current path, outermost first: each one's name
    /// and its handle, opened from the one before without following links.
    open: Vec<(String, Dir)>,
}

/// Why a folder on the way to a path cannot be gone through.
const NOT_A_FOLDER: &str = "lies beneath a symlink or a file where a folder should be; nothing is written through it (remove it and try again)";

impl WorkTree {
    /// `open` opens the work tree at `workdir`: the one open that uses the
    /// process's authority; every later one is relative to it.
    pub(crate) fn open(workdir: &Path) -> Result<WorkTree, GitError> {
        let root =
            Dir::open_ambient_dir(workdir, cap_std::ambient_authority()).map_err(|source| {
                GitError::Io {
                    path: workdir.display().to_string(),
                    source,
                }
            })?;
        Ok(WorkTree {
            root,
            open: Vec::new(),
        })
    }

    fn current(&self) -> &Dir {
        self.open.last().map_or(&self.root, |(_, dir)| dir)
    }

    /// Opens the folders of `path` (all but its last component), making
    /// missing ones when `create`. `Ok(false)` means one is missing and
    /// `create` was off. A symlink or file on the way is refused.
    fn descend(&mut self, path: &str, folders: &[&str], create: bool) -> Result<bool, GitError> {
        let keep = self
            .open
            .iter()
            .zip(folders)
            .take_while(|((open, _), wanted)| open == *wanted)
            .count();
        self.open.truncate(keep);
        for name in &folders[keep..] {
            let parent = self.current();
            let opened = match parent.open_dir_nofollow(name) {
                Ok(dir) => dir,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    if !create {
                        return Ok(false);
                    }
                    match parent.create_dir(name) {
                        Ok(()) => {}
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                        Err(source) => return Err(io_error(path, source)),
                    }
                    parent
                        .open_dir_nofollow(name)
                        .map_err(|e| refusal(parent, name, path, e))?
                }
                Err(e) => return Err(refusal(parent, name, path, e)),
            };
            self.open.push(((*name).to_owned(), opened));
        }
        Ok(true)
    }

    /// `write_file` writes `content` at `path` (a new temporary file
    /// renamed into place), executable when asked, and returns the written
    /// file's metadata for the index.
    pub(crate) fn write_file(
        &mut self,
        path: &str,
        content: &[u8],
        executable: bool,
    ) -> Result<cap_std::fs::Metadata, GitError> {
        let (folders, name) = split(path)?;
        self.descend(path, &folders, true)?;
        let dir = self.current();
        clear_empty_folder(dir, name);
        let mut options = OpenOptions::new();
        options
            .write(true)
            .create_new(true)
            .mode(if executable { 0o777 } else { 0o666 });
        let (temp, mut file) = loop {
            let temp = temp_name();
            match dir.open_with(&temp, &options) {
                Ok(file) => break (temp, file),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(source) => return Err(io_error(path, source)),
            }
        };
        let placed = file
            .write_all(content)
            .and_then(|()| dir.rename(&temp, dir, name));
        if let Err(source) = placed {
            let _ = dir.remove_file(&temp);
            return Err(io_error(path, source));
        }
        file.metadata().map_err(|source| io_error(path, source))
    }

    /// `write_link` makes `path` a symlink to `target` (a temporary link
    /// renamed into place) and returns the link's own metadata.
    pub(crate) fn write_link(
        &mut self,
        path: &str,
        target: &str,
    ) -> Result<cap_std::fs::Metadata, GitError> {
        let (folders, name) = split(path)?;
        self.descend(path, &folders, true)?;
        let dir = self.current();
        clear_empty_folder(dir, name);
        let temp = loop {
            let temp = temp_name();
            match dir.symlink(target, &temp) {
                Ok(()) => break temp,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(source) => return Err(io_error(path, source)),
            }
        };
        if let Err(source) = dir.rename(&temp, dir, name) {
            let _ = dir.remove_file(&temp);
            return Err(io_error(path, source));
        }
        dir.symlink_metadata(name)
            .map_err(|source| io_error(path, source))
    }

    /// `make_dir` makes the (empty) folder a submodule entry stands for.
    pub(crate) fn make_dir(&mut self, path: &str) -> Result<(), GitError> {
        let (folders, name) = split(path)?;
        self.descend(path, &folders, true)?;
        let dir = self.current();
        match dir.create_dir(name) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => dir
                .open_dir_nofollow(name)
                .map(drop)
                .map_err(|e| refusal(dir, name, path, e)),
            Err(source) => Err(io_error(path, source)),
        }
    }

    /// `remove` removes the file or symlink at `path` (an empty folder, for
    /// a submodule entry) if it is there, then every folder above it that
    /// this left empty.
    pub(crate) fn remove(&mut self, path: &str) -> Result<(), GitError> {
        let (folders, name) = split(path)?;
        if !self.descend(path, &folders, false)? {
            return Ok(());
        }
        let dir = self.current();
        let removed = match dir.symlink_metadata(name) {
            Ok(meta) if meta.is_dir() => match dir.remove_dir(name) {
                Err(e) if e.kind() == io::ErrorKind::DirectoryNotEmpty => Ok(()),
                other => other,
            },
            Ok(_) => dir.remove_file(name),
            Err(e) => Err(e),
        };
        match removed {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(source) => return Err(io_error(path, source)),
        }
        while let Some((name, handle)) = self.open.pop() {
            if self.current().remove_dir(&name).is_err() {
                self.open.push((name, handle));
                break;
            }
        }
        Ok(())
    }
}

/// Splits a checked path into its folders and its last name.
fn split(path: &str) -> Result<(Vec<&str>, &str), GitError> {
    check_path(path)?;
    let mut parts: Vec<&str> = path.split('/').collect();
    let name = parts
        .pop()
        .ok_or_else(|| GitError::invalid("checkout: an empty path"))?;
    Ok((parts, name))
}

/// A submodule folder or a folder the checkout emptied may stand where a
/// file goes; an empty one is removed (a full one stays, and the rename
/// that follows fails with a clear error).
fn clear_empty_folder(dir: &Dir, name: &str) {
    if dir.symlink_metadata(name).is_ok_and(|m| m.is_dir()) {
        let _ = dir.remove_dir(name);
    }
}

fn temp_name() -> String {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!(".porter-checkout-{}-{n}.tmp", std::process::id())
}

fn io_error(path: &str, source: io::Error) -> GitError {
    GitError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Turns a failed no-follow open of folder `name` into a refusal when a
/// symlink or a file stands there, else into the I/O error.
fn refusal(parent: &Dir, name: &str, path: &str, error: io::Error) -> GitError {
    match parent.symlink_metadata(name) {
        Ok(meta) if !meta.is_dir() => GitError::UnsafePath {
            path: path.to_owned(),
            reason: NOT_A_FOLDER,
        },
        _ => io_error(path, error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn text_of(path: &Path) -> String {
        std::fs::read_to_string(path).expect("the file reads")
    }

    fn tree_with_outside() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
        let temp = tempfile::tempdir().expect("a temp dir");
        let root = temp.path().join("work");
        let outside = temp.path().join("outside");
        std::fs::create_dir_all(root.join(".git/hooks")).expect("folders");
        std::fs::create_dir_all(&outside).expect("folders");
        (temp, root, outside)
    }

    #[test]
    fn files_links_and_modes_land_beneath_the_root() {
        let (_temp, root, _) = tree_with_outside();
        let mut work = WorkTree::open(&root).expect("opens");
        work.write_file("a/b/run.sh", b"#!/bin/sh\n", true)
            .expect("written");
        work.write_file("a/b/plain.txt", b"plain\n", false)
            .expect("written");
        work.write_link("a/link", "b/plain.txt").expect("linked");
        let run = std::fs::metadata(root.join("a/b/run.sh")).expect("there");
        assert_ne!(run.permissions().mode() & 0o111, 0, "executable");
        let plain = std::fs::metadata(root.join("a/b/plain.txt")).expect("there");
        assert_eq!(plain.permissions().mode() & 0o111, 0, "not executable");
        assert_eq!(
            std::fs::read_link(root.join("a/link")).expect("a link"),
            Path::new("b/plain.txt")
        );
        work.write_file("a/b/plain.txt", b"again\n", false)
            .expect("rewritten");
        assert_eq!(text_of(&root.join("a/b/plain.txt")), "again\n");
        let names: Vec<_> = std::fs::read_dir(root.join("a/b"))
            .expect("listed")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "no temporary file is left: {names:?}");
        work.remove("a/b/run.sh").expect("removed");
        work.remove("a/b/plain.txt").expect("removed");
        assert!(root.join("a").exists(), "a still holds the link");
        work.remove("a/link").expect("removed");
        assert!(!root.join("a").exists(), "emptied folders are pruned");
        assert!(root.exists(), "the root itself stays");
    }

    #[test]
    fn a_folder_swapped_for_a_symlink_is_never_written_or_removed_through() {
        let (_temp, root, outside) = tree_with_outside();
        std::fs::write(outside.join("victim"), "keep\n").expect("written");
        std::os::unix::fs::symlink(&outside, root.join("sub")).expect("linked");
        std::os::unix::fs::symlink("../outside-relative", root.join("rel")).expect("linked");
        std::fs::create_dir(root.join("real")).expect("made");
        std::os::unix::fs::symlink("real", root.join("inner")).expect("linked");
        std::os::unix::fs::symlink(".git/hooks", root.join("hooks")).expect("linked");
        let mut work = WorkTree::open(&root).expect("opens");
        for path in ["sub/file", "sub/deeper/file", "sub/victim"] {
            let result = work.write_file(path, b"pwned\n", false);
            assert!(
                matches!(result, Err(GitError::UnsafePath { .. })),
                "{path}: {result:?}"
            );
            let linked = work.write_link(path, "x");
            assert!(matches!(linked, Err(GitError::UnsafePath { .. })), "{path}");
        }
        let removed = work.remove("sub/victim");
        assert!(
            matches!(removed, Err(GitError::UnsafePath { .. })),
            "{removed:?}"
        );
        for path in ["rel/file", "inner/file", "hooks/post-checkout"] {
            let result = work.write_file(path, b"x", true);
            assert!(
                matches!(result, Err(GitError::UnsafePath { .. })),
                "{path}: {result:?}"
            );
        }
        assert_eq!(
            std::fs::read_dir(root.join("real"))
                .expect("listed")
                .count(),
            0
        );
        assert_eq!(
            std::fs::read_dir(root.join(".git/hooks"))
                .expect("listed")
                .count(),
            0
        );
        let names: Vec<_> = std::fs::read_dir(&outside)
            .expect("listed")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("victim")]);
        assert_eq!(text_of(&outside.join("victim")), "keep\n");
    }

    #[test]
    fn a_hard_link_at_the_name_is_replaced_not_written_through() {
        let (_temp, root, outside) = tree_with_outside();
        std::fs::write(outside.join("target"), "keep\n").expect("written");
        std::fs::hard_link(outside.join("target"), root.join("file")).expect("linked");
        let mut work = WorkTree::open(&root).expect("opens");
        work.write_file("file", b"new\n", false).expect("written");
        assert_eq!(text_of(&outside.join("target")), "keep\n");
        assert_eq!(text_of(&root.join("file")), "new\n");
    }

    #[test]
    fn nothing_is_ever_written_under_git_in_any_spelling() {
        let (_temp, root, _) = tree_with_outside();
        let mut work = WorkTree::open(&root).expect("opens");
        for path in [
            ".git/hooks/post-checkout",
            ".GIT/hooks/post-checkout",
            "GIT~1/hooks/post-checkout",
            ".git /hooks/post-checkout",
            "a/.git/config",
            "../escape",
            "/etc/passwd",
        ] {
            let result = work.write_file(path, b"pwned\n", true);
            assert!(
                matches!(result, Err(GitError::UnsafePath { .. })),
                "{path}: {result:?}"
            );
            assert!(
                matches!(work.remove(path), Err(GitError::UnsafePath { .. })),
                "{path}"
            );
        }
        assert!(!root.join(".git/hooks/post-checkout").exists());
        assert!(!root.join("a").exists());
    }
}
