//! Read operations: they never write to the repository, so they are allowed
//! on read-only volumes.

use std::path::Path;

use git2::{
    BlameOptions, DiffFormat, DiffOptions, ObjectType, Reference, Repository, Sort, Status,
    StatusOptions,
};
use regex::RegexBuilder;

use crate::error::GitError;
use crate::page::{Page, Pager, Window};
use crate::paths::check_path;

/// `MAX_GREP_BLOB_BYTES` is the largest file grep reads; bigger ones are
/// skipped (and counted in the answer).
pub const MAX_GREP_BLOB_BYTES: usize = 4 * 1024 * 1024;

/// `MAX_GREP_PATTERN_BYTES` bounds the compiled size of a grep pattern.
pub const MAX_GREP_PATTERN_BYTES: usize = 1 << 20;

/// `open` opens the repository whose work tree (or bare folder) is `dir`,
/// without searching parent folders: the model names the folder.
pub fn open(dir: &Path) -> Result<Repository, GitError> {
    crate::transport::init()?;
    let repo = open_here(dir).map_err(|_| GitError::NotARepository {
        path: dir.display().to_string(),
    })?;
    refuse_moved_work_tree(&repo, dir)?;
    Ok(repo)
}

/// HEAD of `repo`, or `None` while its branch is unborn (no commit yet).
pub(crate) fn born_head(repo: &Repository) -> Result<Option<Reference<'_>>, GitError> {
    match repo.head() {
        Ok(head) => Ok(Some(head)),
        Err(e)
            if e.code() == git2::ErrorCode::UnbornBranch
                || e.code() == git2::ErrorCode::NotFound =>
        {
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// The repository in `dir` itself, without searching parent folders.
fn open_here(dir: &Path) -> Result<Repository, git2::Error> {
    Repository::open_ext(
        dir,
        git2::RepositoryOpenFlags::NO_SEARCH,
        std::iter::empty::<&std::ffi::OsStr>(),
    )
}

/// `git_folders` are the folders where the repository in `dir` keeps its
/// data (its git dir and, for a linked work tree, the common dir), or
/// `None` when `dir` holds no repository. A caller that confines work to a
/// volume checks them: a `.git` file or a `commondir` can point anywhere.
#[must_use]
pub fn git_folders(dir: &Path) -> Option<Vec<std::path::PathBuf>> {
    crate::transport::init().ok()?;
    let repo = open_here(dir).ok()?;
    let mut folders = vec![repo.path().to_path_buf()];
    if repo.commondir() != repo.path() {
        folders.push(repo.commondir().to_path_buf());
    }
    Some(folders)
}

/// A repository whose config (`core.worktree`) or `.git` file names
/// another folder as its work tree would have checkouts written there,
/// outside the folder the caller resolved inside its volume: refuse it.
fn refuse_moved_work_tree(repo: &Repository, dir: &Path) -> Result<(), GitError> {
    let Some(workdir) = repo.workdir() else {
        return Ok(());
    };
    let same = match (workdir.canonicalize(), dir.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same {
        Ok(())
    } else {
        Err(GitError::invalid(
            "this repository's work tree is set to another folder (core.worktree in its config); porter works only in the folder it was given: remove core.worktree from .git/config",
        ))
    }
}

/// `status` lists changed, staged, untracked and conflicted files, one per
/// line, as `XY path` like `git status --short`.
pub fn status(dir: &Path, window: Window) -> Result<Page, GitError> {
    let repo = open(dir)?;
    let mut options = StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .renames_head_to_index(true);
    let statuses = repo.statuses(Some(&mut options))?;
    let mut pager = Pager::new(window);
    let head = match repo.head() {
        Ok(head) => head.shorthand().unwrap_or("(detached)").to_owned(),
        Err(_) => "(no commits yet)".to_owned(),
    };
    let detached = if repo.head_detached().unwrap_or(false) {
        " (detached)"
    } else {
        ""
    };
    pager.push(&format!("## {head}{detached}"));
    for entry in statuses.iter() {
        let s = entry.status();
        let x = status_letter(s, INDEX_LETTERS);
        let y = status_letter(s, WORK_TREE_LETTERS);
        let (x, y) = if s.is_conflicted() {
            ('U', 'U')
        } else if s.is_wt_new() {
            ('?', '?')
        } else {
            (x, y)
        };
        let path = String::from_utf8_lossy(entry.path_bytes());
        if !pager.push(&format!("{x}{y} {path}")) {
            break;
        }
    }
    Ok(pager.finish())
}

/// The letter `git status --short` gives a change staged in the index, by
/// the first flag that holds.
const INDEX_LETTERS: &[(Status, char)] = &[
    (Status::INDEX_NEW, 'A'),
    (Status::INDEX_MODIFIED, 'M'),
    (Status::INDEX_DELETED, 'D'),
    (Status::INDEX_RENAMED, 'R'),
    (Status::INDEX_TYPECHANGE, 'T'),
];

/// The letter `git status --short` gives a change in the work tree, by the
/// first flag that holds.
const WORK_TREE_LETTERS: &[(Status, char)] = &[
    (Status::WT_NEW, '?'),
    (Status::WT_MODIFIED, 'M'),
    (Status::WT_DELETED, 'D'),
    (Status::WT_TYPECHANGE, 'T'),
];

/// The letter of the first flag of `letters` that `status` holds, or a
/// space when it holds none.
fn status_letter(status: Status, letters: &[(Status, char)]) -> char {
    letters
        .iter()
        .find(|(flag, _)| status.contains(*flag))
        .map_or(' ', |&(_, letter)| letter)
}

/// `log` lists commits from `rev` (default HEAD), newest first, one line
/// each: short id, date, author, summary; only those touching `path` when
/// one is given.
pub fn log(
    dir: &Path,
    rev: Option<&str>,
    path: Option<&str>,
    window: Window,
) -> Result<Page, GitError> {
    let repo = open(dir)?;
    let start = repo
        .revparse_single(rev.unwrap_or("HEAD"))?
        .peel_to_commit()?;
    let mut walk = repo.revwalk()?;
    walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME)?;
    walk.push(start.id())?;
    let mut pager = Pager::new(window);
    for id in walk {
        let commit = repo.find_commit(id?)?;
        if let Some(path) = path
            && !touches(&repo, &commit, path)?
        {
            continue;
        }
        let line = format!(
            "{} {} {} {}",
            short(&repo, commit.id()),
            date(commit.time()),
            commit.author().name().unwrap_or("?"),
            commit.summary().ok().flatten().unwrap_or("")
        );
        if !pager.push(&line) {
            break;
        }
    }
    Ok(pager.finish())
}

fn touches(repo: &Repository, commit: &git2::Commit<'_>, path: &str) -> Result<bool, GitError> {
    let tree = commit.tree()?;
    let parent = match commit.parent(0) {
        Ok(parent) => Some(parent.tree()?),
        Err(_) => None,
    };
    let mut options = DiffOptions::new();
    options.pathspec(path);
    let diff = repo.diff_tree_to_tree(parent.as_ref(), Some(&tree), Some(&mut options))?;
    Ok(diff.deltas().len() > 0)
}

fn short(repo: &Repository, id: git2::Oid) -> String {
    repo.find_object(id, None)
        .and_then(|o| o.short_id())
        .ok()
        .and_then(|b| b.as_str().ok().map(str::to_owned))
        .unwrap_or_else(|| id.to_string()[..7].to_owned())
}

/// The civil date of `time` in its own offset (the author's zone then).
fn date(time: git2::Time) -> String {
    let local = time.seconds() + i64::from(time.offset_minutes()) * 60;
    jiff::Timestamp::from_second(local).map_or_else(
        |_| format!("{} s after 1970-01-01", time.seconds()),
        |at| at.strftime("%Y-%m-%d").to_string(),
    )
}

/// `show` prints a commit (header, message and its patch against its first
/// parent), a tag, a tree listing, or a blob (`rev:path`).
pub fn show(dir: &Path, rev: &str, window: Window) -> Result<Page, GitError> {
    let repo = open(dir)?;
    let object = repo.revparse_single(rev)?;
    let mut pager = Pager::new(window);
    match object.kind() {
        Some(ObjectType::Blob) => {
            let blob = object.peel_to_blob()?;
            if blob.is_binary() {
                pager.push(&format!("(binary blob, {} bytes)", blob.size()));
            } else {
                pager.push_text(&String::from_utf8_lossy(blob.content()));
            }
        }
        Some(ObjectType::Tree) => {
            let tree = object.peel_to_tree()?;
            for entry in &tree {
                let kind = entry.kind().map_or("?", |k| k.str());
                let line = format!(
                    "{:06o} {kind} {}\t{}",
                    entry.filemode(),
                    entry.id(),
                    String::from_utf8_lossy(entry.name_bytes())
                );
                if !pager.push(&line) {
                    break;
                }
            }
        }
        Some(ObjectType::Tag) => {
            let tag = object.peel_to_tag()?;
            pager.push(&format!("tag {}", tag.name().unwrap_or("?")));
            if let Some(tagger) = tag.tagger() {
                pager.push(&format!(
                    "Tagger: {} <{}>",
                    tagger.name().unwrap_or("?"),
                    tagger.email().unwrap_or("?")
                ));
            }
            pager.push("");
            pager.push_text(tag.message().ok().flatten().unwrap_or(""));
            pager.push(&format!("target {}", tag.target_id()));
        }
        _ => {
            let commit = object.peel_to_commit()?;
            pager.push(&format!("commit {}", commit.id()));
            let author = commit.author();
            pager.push(&format!(
                "Author: {} <{}>",
                author.name().unwrap_or("?"),
                author.email().unwrap_or("?")
            ));
            pager.push(&format!("Date:   {}", date(author.when())));
            pager.push("");
            for line in commit.message().unwrap_or("").lines() {
                pager.push(&format!("    {line}"));
            }
            pager.push("");
            let parent = match commit.parent(0) {
                Ok(parent) => Some(parent.tree()?),
                Err(_) => None,
            };
            let diff = repo.diff_tree_to_tree(parent.as_ref(), Some(&commit.tree()?), None)?;
            print_patch(&diff, &mut pager)?;
        }
    }
    Ok(pager.finish())
}

fn print_patch(diff: &git2::Diff<'_>, pager: &mut Pager) -> Result<(), GitError> {
    let result = diff.print(DiffFormat::Patch, |_, _, line| {
        let origin = match line.origin() {
            c @ ('+' | '-' | ' ') => c.to_string(),
            _ => String::new(),
        };
        let content = String::from_utf8_lossy(line.content());
        let text = format!("{origin}{}", content.trim_end_matches('\n'));
        text.lines().all(|l| pager.push(l)) && (!text.is_empty() || pager.push(""))
    });
    match result {
        Ok(()) => Ok(()),
        Err(error) if error.code() == git2::ErrorCode::User => Ok(()),
        Err(error) => Err(error.into()),
    }
}

/// `DiffArgs` says which two states `diff` compares.
#[derive(Debug, Clone, Default)]
pub struct DiffArgs {
    /// A revision to compare from; none: the index (or HEAD when `cached`).
    pub from: Option<String>,
    /// A revision to compare to; none: the work tree (or the index when
    /// `cached`).
    pub to: Option<String>,
    /// Compare HEAD (or `from`) with the index: what a commit would record.
    pub cached: bool,
    /// Only these paths.
    pub paths: Vec<String>,
}

/// `diff` prints a unified patch between two states.
pub fn diff(dir: &Path, args: &DiffArgs, window: Window) -> Result<Page, GitError> {
    let repo = open(dir)?;
    let mut options = DiffOptions::new();
    for path in &args.paths {
        options.pathspec(path);
    }
    let tree = |rev: &str| -> Result<git2::Tree<'_>, GitError> {
        Ok(repo.revparse_single(rev)?.peel_to_tree()?)
    };
    let diff = match (&args.from, &args.to, args.cached) {
        (Some(from), Some(to), _) => {
            repo.diff_tree_to_tree(Some(&tree(from)?), Some(&tree(to)?), Some(&mut options))?
        }
        (from, None, true) => {
            let base = match from {
                Some(from) => Some(tree(from)?),
                None => repo.head().ok().and_then(|h| h.peel_to_tree().ok()),
            };
            repo.diff_tree_to_index(base.as_ref(), None, Some(&mut options))?
        }
        (Some(from), None, false) => {
            repo.diff_tree_to_workdir_with_index(Some(&tree(from)?), Some(&mut options))?
        }
        (None, None, false) => repo.diff_index_to_workdir(None, Some(&mut options))?,
        (None, Some(_), _) => {
            return Err(GitError::invalid("diff: give `from` together with `to`"));
        }
    };
    let mut pager = Pager::new(window);
    print_patch(&diff, &mut pager)?;
    Ok(pager.finish())
}

/// `blame` prints each line of `path` at `rev` (default HEAD) with the
/// commit, author and date that last changed it.
pub fn blame(dir: &Path, path: &str, rev: Option<&str>, window: Window) -> Result<Page, GitError> {
    check_path(path)?;
    let repo = open(dir)?;
    let commit = repo
        .revparse_single(rev.unwrap_or("HEAD"))?
        .peel_to_commit()?;
    let mut options = BlameOptions::new();
    options.newest_commit(commit.id());
    let blame = repo.blame_file(Path::new(path), Some(&mut options))?;
    let blob = commit
        .tree()?
        .get_path(Path::new(path))?
        .to_object(&repo)?
        .peel_to_blob()?;
    if blob.is_binary() {
        return Err(GitError::invalid(format!("blame: {path} is binary")));
    }
    let text = String::from_utf8_lossy(blob.content());
    let mut pager = Pager::new(window);
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let who = match blame.get_line(number) {
            Some(hunk) => {
                let (name, when) = hunk.final_signature().map_or_else(
                    || ("?".to_owned(), "?".to_owned()),
                    |s| (s.name().unwrap_or("?").to_owned(), date(s.when())),
                );
                format!("{} ({name} {when})", short(&repo, hunk.final_commit_id()))
            }
            None => "? (?)".to_owned(),
        };
        if !pager.push(&format!("{who} {number:>5}) {line}")) {
            break;
        }
    }
    Ok(pager.finish())
}

/// `GrepArgs` is what `grep` searches for and where.
#[derive(Debug, Clone, Default)]
pub struct GrepArgs {
    /// A regular expression (Rust `regex` syntax: no backreferences, linear
    /// time whatever the input).
    pub pattern: String,
    /// Search this revision's tree; none: the index (what is staged).
    pub rev: Option<String>,
    /// Only paths beneath this prefix.
    pub path: Option<String>,
    /// Match without regard to case.
    pub ignore_case: bool,
}

/// `grep` searches file contents in the index or a tree with a real regex
/// engine and prints `path:line:text` for each match. Binary files and
/// files over [`MAX_GREP_BLOB_BYTES`] are skipped.
pub fn grep(dir: &Path, args: &GrepArgs, window: Window) -> Result<Page, GitError> {
    let repo = open(dir)?;
    let regex = RegexBuilder::new(&args.pattern)
        .case_insensitive(args.ignore_case)
        .size_limit(MAX_GREP_PATTERN_BYTES)
        .build()
        .map_err(|e| GitError::invalid(format!("grep: the pattern does not compile: {e}")))?;
    let prefix = args.path.as_deref().unwrap_or("").trim_end_matches('/');
    let mut files: Vec<(String, git2::Oid)> = Vec::new();
    match &args.rev {
        Some(rev) => {
            let tree = repo.revparse_single(rev)?.peel_to_tree()?;
            tree.walk(git2::TreeWalkMode::PreOrder, |root, entry| {
                if entry.kind() == Some(ObjectType::Blob) && entry.filemode() != 0o120_000 {
                    files.push((
                        format!("{root}{}", String::from_utf8_lossy(entry.name_bytes())),
                        entry.id(),
                    ));
                }
                git2::TreeWalkResult::Ok
            })?;
        }
        None => {
            for entry in repo.index()?.iter() {
                if entry.mode != 0o120_000 && entry.mode != 0o160_000 {
                    files.push((String::from_utf8_lossy(&entry.path).into_owned(), entry.id));
                }
            }
        }
    }
    let mut pager = Pager::new(window);
    let mut skipped = 0usize;
    let odb = repo.odb()?;
    'files: for (path, id) in files {
        if !prefix.is_empty() && path != prefix && !path.starts_with(&format!("{prefix}/")) {
            continue;
        }
        let (size, _) = odb.read_header(id)?;
        if size > MAX_GREP_BLOB_BYTES {
            skipped += 1;
            continue;
        }
        let blob = repo.find_blob(id)?;
        if blob.is_binary() {
            continue;
        }
        let text = String::from_utf8_lossy(blob.content());
        for (index, line) in text.lines().enumerate() {
            if regex.is_match(line) && !pager.push(&format!("{path}:{}:{line}", index + 1)) {
                break 'files;
            }
        }
    }
    let mut page = pager.finish();
    if skipped > 0 {
        let note =
            format!("({skipped} files over {MAX_GREP_BLOB_BYTES} bytes were not searched)\n");
        page.text.push_str(&note);
    }
    Ok(page)
}

/// `ls_files` lists the index, one path per line, beneath `prefix`.
pub fn ls_files(dir: &Path, prefix: Option<&str>, window: Window) -> Result<Page, GitError> {
    let repo = open(dir)?;
    let prefix = prefix.unwrap_or("").trim_end_matches('/');
    let mut pager = Pager::new(window);
    for entry in repo.index()?.iter() {
        let path = String::from_utf8_lossy(&entry.path);
        if !prefix.is_empty() && path != prefix && !path.starts_with(&format!("{prefix}/")) {
            continue;
        }
        if !pager.push(&path) {
            break;
        }
    }
    Ok(pager.finish())
}

/// `branch_list` lists local and remote-tracking branches, the current one
/// marked `*`, each with its commit.
pub fn branch_list(dir: &Path, window: Window) -> Result<Page, GitError> {
    let repo = open(dir)?;
    let mut pager = Pager::new(window);
    for branch in repo.branches(None)? {
        let (branch, kind) = branch?;
        let name = branch.name()?.unwrap_or("?").to_owned();
        let mark = if branch.is_head() { '*' } else { ' ' };
        let remote = if kind == git2::BranchType::Remote {
            "remotes/"
        } else {
            ""
        };
        let id = branch
            .get()
            .target()
            .map(|id| short(&repo, id))
            .unwrap_or_default();
        if !pager.push(&format!("{mark} {remote}{name} {id}")) {
            break;
        }
    }
    Ok(pager.finish())
}

/// `tag_list` lists tags with the commit they name.
pub fn tag_list(dir: &Path, window: Window) -> Result<Page, GitError> {
    let repo = open(dir)?;
    let mut pager = Pager::new(window);
    let names = repo.tag_names(None)?;
    for name in names.iter().flatten().flatten() {
        let id = repo
            .revparse_single(&format!("refs/tags/{name}"))
            .and_then(|o| o.peel_to_commit())
            .map(|c| short(&repo, c.id()))
            .unwrap_or_default();
        if !pager.push(&format!("{name} {id}")) {
            break;
        }
    }
    Ok(pager.finish())
}

/// `rev_parse` is the full object id `rev` names.
pub fn rev_parse(dir: &Path, rev: &str) -> Result<String, GitError> {
    let repo = open(dir)?;
    Ok(repo.revparse_single(rev)?.id().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil_dates_in_the_authors_zone() {
        assert_eq!(date(git2::Time::new(0, 0)), "1970-01-01");
        assert_eq!(date(git2::Time::new(1_700_000_000, 0)), "2023-11-14");
        assert_eq!(date(git2::Time::new(1_700_000_000, -24 * 60)), "2023-11-13");
        assert_eq!(date(git2::Time::new(951_782_400, 0)), "2000-02-29");
    }
}
