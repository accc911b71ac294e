//! `submodule_update`: clone or update the submodules a superproject's HEAD
//! names, without trusting anything `.gitmodules` says.
//!
//! `.gitmodules` is read from the HEAD tree (never the work tree, which the
//! model may have edited) by a small parser of its own that knows only
//! `[submodule "name"]` sections and their `path` and `url` (no includes,
//! no `update = !command`). Every submodule is judged before any byte is
//! fetched: its name and path per component ([`check_path`]), nothing
//! starting with `-`, and its URL — a relative one resolved against the
//! superproject's `origin` first — with the same [`Access::check_url`] as
//! any remote, so `--upload-pack=…`, `ext::…`, `file://`, `ssh://` and hosts
//! off the operator's fetch list are refused by policy.
//!
//! Each submodule is then fetched into `.git/modules/<name>` over porter's
//! transport, its recorded commit's tree walked against what is left of the
//! [`Bounds`] (the bounds hold across the whole update, not per submodule)
//! and checked out detached at its path through
//! `crate::change::safe_checkout`. Nested submodules are not recursed
//! into: the answer says so, and `submodule_update` on the submodule's own
//! folder updates them.
//!
//! [`Access::check_url`]: crate::Access::check_url

use std::path::{Path, PathBuf};

use git2::{AutotagOption, FetchOptions, ObjectType, Oid, Repository, Tree};
use url::Url;

use crate::error::GitError;
use crate::paths::{Bounds, check_path};
use crate::read::open;
use crate::remote::{Direction, Refusal};
use crate::transport::{Network, Wire, with_wire};

/// `OP` is the operation's name in errors and the audit log.
const OP: &str = "submodule_update";

/// `MAX_GITMODULES_BYTES` is the largest `.gitmodules` porter reads: far
/// more than any real one, and a hostile one cannot make the parser work
/// without end.
pub const MAX_GITMODULES_BYTES: usize = 1 << 20;

/// `MAX_SUBMODULES` is the most submodules one update fetches, so that a
/// `.gitmodules` listing thousands cannot turn one call into thousands of
/// fetches.
pub const MAX_SUBMODULES: usize = 256;

/// `Declared` is one `[submodule "name"]` section as `.gitmodules` states
/// it, before anything in it is believed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Declared {
    /// The section's name (also the folder under `.git/modules`).
    pub name: String,
    /// `path`: where the submodule's work tree goes.
    pub path: Option<String>,
    /// `url`: where it is fetched from, as written (maybe relative).
    pub url: Option<String>,
}

/// `parse_gitmodules` reads the `[submodule "…"]` sections of a
/// `.gitmodules` text, in order of first appearance; a later `path` or
/// `url` for the same name wins, as in git. Other sections are skipped.
/// Continued lines and anything the parser does not understand are refused
/// rather than guessed at.
pub fn parse_gitmodules(text: &str) -> Result<Vec<Declared>, GitError> {
    let mut found: Vec<Declared> = Vec::new();
    let mut current: Option<usize> = None;
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let unreadable = |why: &str| {
            GitError::invalid(format!(
                "{OP}: .gitmodules line {number} {why}; porter does not read it"
            ))
        };
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            let (header, rest) = header
                .rsplit_once(']')
                .ok_or_else(|| unreadable("opens a section it does not close"))?;
            if !comment_or_nothing(rest) {
                return Err(unreadable("has text after its section header"));
            }
            current = match header.split_once(char::is_whitespace) {
                Some((section, sub)) if section.eq_ignore_ascii_case("submodule") => {
                    let name = quoted(sub.trim())
                        .ok_or_else(|| unreadable("names a submodule without quotes"))?;
                    let at = found.iter().position(|d| d.name == name);
                    Some(at.unwrap_or_else(|| {
                        found.push(Declared {
                            name,
                            ..Declared::default()
                        });
                        found.len() - 1
                    }))
                }
                _ => None,
            };
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((key, value)) => (key.trim(), Some(value.trim())),
            None => (line, None),
        };
        if !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Err(unreadable("is neither a section nor a key = value"));
        }
        let Some(at) = current else { continue };
        let value = match value {
            Some(value) => Some(value_text(value).ok_or_else(|| {
                unreadable("has a value with an unknown escape, an open quote or a continuation")
            })?),
            None => None,
        };
        if key.eq_ignore_ascii_case("path") {
            found[at].path = value;
        } else if key.eq_ignore_ascii_case("url") {
            found[at].url = value;
        }
    }
    Ok(found)
}

fn comment_or_nothing(rest: &str) -> bool {
    let rest = rest.trim_start();
    rest.is_empty() || rest.starts_with('#') || rest.starts_with(';')
}

/// `quoted` is the text of a `"…"` subsection name (escapes `\"` and `\\`).
fn quoted(text: &str) -> Option<String> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(chars.next()?),
            '"' => return None,
            other => out.push(other),
        }
    }
    Some(out)
}

/// `value_text` is a config value as git reads it: quotes removed, the
/// escapes `\" \\ \n \t \b` undone, a `#` or `;` outside quotes ending it,
/// trailing blanks outside quotes dropped. A trailing `\` (a continued
/// line) or an open quote is refused.
fn value_text(value: &str) -> Option<String> {
    let mut out = String::new();
    let mut quoted = false;
    let mut kept = 0usize;
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => {
                out.push(match chars.next()? {
                    '"' => '"',
                    '\\' => '\\',
                    'n' => '\n',
                    't' => '\t',
                    'b' => '\u{8}',
                    _ => return None,
                });
            }
            '#' | ';' if !quoted => break,
            c if c.is_whitespace() && !quoted => out.push(c),
            other => out.push(other),
        }
        if quoted || !out.ends_with(char::is_whitespace) {
            kept = out.len();
        }
    }
    if quoted {
        return None;
    }
    out.truncate(kept);
    Some(out)
}

/// `resolve_url` turns a submodule URL into an absolute one: `./x` and
/// `../x` are taken relative to the superproject's `origin` URL as git
/// does (the origin seen as a folder), and may not climb above its host.
/// Anything else is returned as written, for [`crate::Access::check_url`]
/// to judge.
fn resolve_url(url: &str, origin: Option<&str>) -> Result<String, Refusal> {
    if !(url.starts_with("./") || url.starts_with("../")) {
        return Ok(url.to_owned());
    }
    let Some(origin) = origin else {
        return Err(Refusal(
            "a relative submodule URL needs the superproject's origin remote, and it has none",
        ));
    };
    let mut base = Url::parse(origin)
        .map_err(|_| Refusal("the superproject's origin URL could not be read"))?;
    if base.cannot_be_a_base() || base.query().is_some() || base.fragment().is_some() {
        return Err(Refusal(
            "the superproject's origin URL cannot anchor a relative one",
        ));
    }
    let mut parts: Vec<String> = base
        .path()
        .split('/')
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect();
    let mut rest = url;
    loop {
        if let Some(next) = rest.strip_prefix("./") {
            rest = next;
        } else if let Some(next) = rest.strip_prefix("../") {
            if parts.pop().is_none() {
                return Err(Refusal(
                    "the relative submodule URL climbs above its server's root",
                ));
            }
            rest = next;
        } else {
            break;
        }
    }
    let rest = rest.trim_end_matches('/');
    if rest.is_empty() || rest.starts_with('/') || rest.split('/').any(|p| p == "..") {
        return Err(Refusal("the relative submodule URL is not a plain path"));
    }
    parts.push(rest.to_owned());
    base.set_path(&format!("/{}", parts.join("/")));
    Ok(base.to_string())
}

/// `Planned` is one submodule that passed every check, ready to fetch.
struct Planned {
    name: String,
    path: String,
    url: Url,
    commit: Oid,
}

/// `update` clones (or fetches and checks out again) the submodules that
/// the HEAD tree of the repository at `dir` declares, or only those whose
/// path is in `paths`. Every chosen submodule is judged first (name, path,
/// URL, recorded commit); one refusal refuses the whole update before
/// anything is fetched. `bounds` hold for the sum of all submodules' files.
pub fn update(
    network: &Network,
    dir: &Path,
    paths: &[String],
    bounds: Bounds,
) -> Result<String, GitError> {
    let repo = open(dir)?;
    let workdir = repo
        .workdir()
        .ok_or_else(|| GitError::invalid(format!("{OP}: the repository has no work tree")))?
        .to_path_buf();
    let head = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(|_| GitError::invalid(format!("{OP}: HEAD names no commit yet")))?;
    let tree = head.tree()?;
    let Some(entry) = tree.get_name(".gitmodules") else {
        return Ok("the HEAD tree has no .gitmodules, so there is nothing to update".to_owned());
    };
    let blob = repo.find_blob(entry.id()).map_err(|_| {
        GitError::invalid(format!("{OP}: .gitmodules in the HEAD tree is not a file"))
    })?;
    if blob.size() > MAX_GITMODULES_BYTES {
        return Err(GitError::invalid(format!(
            "{OP}: .gitmodules is larger than {MAX_GITMODULES_BYTES} bytes; porter does not read it"
        )));
    }
    let text = std::str::from_utf8(blob.content())
        .map_err(|_| GitError::invalid(format!("{OP}: .gitmodules is not UTF-8")))?;
    let declared = parse_gitmodules(text)?;
    let origin = repo
        .find_remote("origin")
        .ok()
        .and_then(|r| r.url().ok().map(str::to_owned));
    let planned = plan(network, &tree, &declared, paths, origin.as_deref())?;
    if planned.is_empty() {
        return Ok("the HEAD tree's .gitmodules declares no submodules".to_owned());
    }

    let mut left = bounds;
    let mut lines = Vec::new();
    let mut nested = Vec::new();
    for one in &planned {
        let (line, has_nested) =
            fetch_and_check_out(network, &repo, &workdir, one, bounds, &mut left)?;
        lines.push(line);
        if has_nested {
            nested.push(one.path.clone());
        }
    }
    let nested = if nested.is_empty() {
        String::new()
    } else {
        format!(
            "\nnested submodules were not updated (in {}); run submodule_update on that folder",
            nested.join(", ")
        )
    };
    Ok(format!(
        "updated {} submodules:\n{}{nested}",
        lines.len(),
        lines.join("\n")
    ))
}

/// `plan` judges every chosen submodule before anything is fetched.
fn plan(
    network: &Network,
    tree: &Tree<'_>,
    declared: &[Declared],
    paths: &[String],
    origin: Option<&str>,
) -> Result<Vec<Planned>, GitError> {
    let wanted: Vec<&str> = paths.iter().map(|p| p.trim_end_matches('/')).collect();
    for path in &wanted {
        check_path(path)?;
        if !declared.iter().any(|d| d.path.as_deref() == Some(*path)) {
            return Err(GitError::invalid(format!(
                "{OP}: .gitmodules in HEAD declares no submodule at {path:?}"
            )));
        }
    }
    let mut planned: Vec<Planned> = Vec::new();
    for one in declared {
        let Some(path) = one.path.as_deref().map(|p| p.trim_end_matches('/')) else {
            return Err(GitError::invalid(format!(
                "{OP}: the submodule {:?} has no path in .gitmodules",
                one.name
            )));
        };
        if !wanted.is_empty() && !wanted.contains(&path) {
            continue;
        }
        for (what, text) in [("name", one.name.as_str()), ("path", path)] {
            if text.starts_with('-') {
                return Err(GitError::UnsafePath {
                    path: text.to_owned(),
                    reason: if what == "name" {
                        "is a submodule name that starts with '-'"
                    } else {
                        "is a submodule path that starts with '-'"
                    },
                });
            }
            check_path(text)?;
        }
        let Some(written) = one.url.as_deref() else {
            return Err(GitError::invalid(format!(
                "{OP}: the submodule {:?} has no url in .gitmodules",
                one.name
            )));
        };
        let url = judge_url(network, &one.name, written, origin)?;
        let entry = tree.get_path(Path::new(path)).map_err(|_| {
            GitError::invalid(format!(
                "{OP}: the submodule {:?} has no commit recorded at {path} in the HEAD tree",
                one.name
            ))
        })?;
        if entry.kind() != Some(ObjectType::Commit) {
            return Err(GitError::invalid(format!(
                "{OP}: {path} in the HEAD tree is not a submodule commit"
            )));
        }
        for other in &planned {
            if nests(&other.name, &one.name) || nests(&other.path, path) {
                return Err(GitError::UnsafePath {
                    path: path.to_owned(),
                    reason: "is a submodule whose name or path lies inside another's (or repeats it)",
                });
            }
        }
        planned.push(Planned {
            name: one.name.clone(),
            path: path.to_owned(),
            url,
            commit: entry.id(),
        });
        if planned.len() > MAX_SUBMODULES {
            return Err(GitError::invalid(format!(
                "{OP}: .gitmodules declares more than {MAX_SUBMODULES} submodules; name the ones wanted in paths"
            )));
        }
    }
    Ok(planned)
}

/// `judge_url` is a submodule's URL once it has passed what any remote
/// passes; a refusal is logged with the submodule's name and reason, and
/// the model gets the class.
fn judge_url(
    network: &Network,
    name: &str,
    written: &str,
    origin: Option<&str>,
) -> Result<Url, GitError> {
    let checked = if written.trim_start().starts_with('-') {
        Err(Refusal("the URL starts with '-', as an option would"))
    } else {
        resolve_url(written, origin)
            .and_then(|absolute| network.access.check_url(&absolute, Direction::Fetch))
    };
    checked.map_err(|refusal| {
        tracing::warn!(
            target: crate::AUDIT_TARGET,
            op = OP,
            submodule = name,
            reason = refusal.0,
            "submodule URL refused by policy"
        );
        refusal.into_error(OP)
    })
}

/// `nests` says whether two slash-separated names are equal or one lies
/// inside the other.
fn nests(a: &str, b: &str) -> bool {
    let inside = |outer: &str, inner: &str| {
        inner
            .strip_prefix(outer)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    };
    inside(a, b) || inside(b, a)
}

/// `plain_folder` refuses `path` (beneath `root`) when any component of it
/// that exists is a symlink or not a folder, so that nothing is written
/// through a link the work tree holds.
fn plain_folder(root: &Path, path: &str) -> Result<PathBuf, GitError> {
    let mut current = root.to_path_buf();
    for component in path.split('/') {
        current.push(component);
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() || !meta.is_dir() => {
                return Err(GitError::UnsafePath {
                    path: path.to_owned(),
                    reason: "lies at or beneath a symlink or a file, not a plain folder",
                });
            }
            _ => {}
        }
    }
    Ok(current)
}

/// `fetch_and_check_out` brings one judged submodule to its recorded
/// commit and says how; the flag is whether its tree declares submodules
/// of its own (not updated).
fn fetch_and_check_out(
    network: &Network,
    repo: &Repository,
    workdir: &Path,
    one: &Planned,
    total: Bounds,
    left: &mut Bounds,
) -> Result<(String, bool), GitError> {
    let modules = plain_folder(repo.path(), "modules")?;
    let gitdir = plain_folder(repo.path(), &format!("modules/{}", one.name))?;
    let work = plain_folder(workdir, &one.path)?;
    let fresh = !gitdir.exists();
    if fresh && work.exists() && std::fs::read_dir(&work).map_or(true, |mut d| d.next().is_some()) {
        return Err(GitError::invalid(format!(
            "{OP}: {} is not empty and the submodule {:?} was never cloned; empty the folder first",
            one.path, one.name
        )));
    }
    let io = |path: &Path| {
        let shown = path.display().to_string();
        move |source| GitError::Io {
            path: shown,
            source,
        }
    };
    std::fs::create_dir_all(&modules).map_err(io(&modules))?;
    std::fs::create_dir_all(&work).map_err(io(&work))?;
    let sub = if fresh {
        let mut options = git2::RepositoryInitOptions::new();
        options
            .no_dotgit_dir(true)
            .mkpath(true)
            .external_template(false)
            .no_reinit(true)
            .workdir_path(&work);
        Repository::init_opts(&gitdir, &options)?
    } else {
        let sub = Repository::open(&gitdir)?;
        // Whatever core.worktree says, the work tree is the declared path
        // (and its gitlink file is written again if it went missing).
        sub.set_workdir(&work, true)?;
        sub
    };
    let result = fetch_into(network, &sub, one).and_then(|()| {
        let commit = sub.find_commit(one.commit).map_err(|_| {
            GitError::invalid(format!(
                "{OP}: the commit {} recorded for {} is not on any branch or tag its remote offers",
                one.commit, one.path
            ))
        })?;
        let tree = commit.tree()?;
        let (files, bytes) = measure(&sub, &tree, *left, total)?;
        crate::change::safe_checkout(&sub, &tree, *left, fresh)?;
        sub.set_head_detached(commit.id())?;
        left.max_files -= files;
        left.max_bytes -= bytes;
        Ok(tree.get_name(".gitmodules").is_some())
    });
    match result {
        Ok(nested) => Ok((
            format!(
                "{} ({}) {} at {} (detached)",
                one.path,
                one.name,
                if fresh { "cloned" } else { "updated" },
                one.commit
            ),
            nested,
        )),
        Err(error) => {
            if fresh {
                drop(sub);
                let _ = std::fs::remove_dir_all(&gitdir);
                let _ = std::fs::remove_file(work.join(".git"));
            }
            Err(error)
        }
    }
}

/// `fetch_into` fetches the submodule's branches and tags from its judged
/// URL (the transport judges it again at every request).
fn fetch_into(network: &Network, sub: &Repository, one: &Planned) -> Result<(), GitError> {
    let wire = Wire::new(network, OP);
    let result = with_wire(&wire, || -> Result<(), git2::Error> {
        if sub.find_remote("origin").is_ok() {
            sub.remote_set_url("origin", one.url.as_str())?;
        } else {
            sub.remote("origin", one.url.as_str())?;
        }
        let mut remote = sub.find_remote("origin")?;
        let mut options = FetchOptions::new();
        options.download_tags(AutotagOption::All);
        remote.fetch(&[] as &[&str], Some(&mut options), Some(OP))
    });
    tracing::info!(
        target: crate::AUDIT_TARGET,
        op = OP,
        submodule = one.name,
        url = %porter_net::display_url(&one.url),
        credential = wire.credential_name().as_deref().unwrap_or("none"),
        outcome = if result.is_ok() { "ok" } else { "failed" },
        "git network operation"
    );
    result.map_err(|e| wire.error(&e))
}

/// `measure` counts the files and bytes a tree would write, stopping as
/// soon as `left` is passed (then refusing with the whole update's limit,
/// `total`). Folders count toward the file limit too, so that a tree of
/// nothing but folders is bounded as well.
fn measure(
    repo: &Repository,
    tree: &Tree<'_>,
    left: Bounds,
    total: Bounds,
) -> Result<(usize, u64), GitError> {
    let odb = repo.odb()?;
    let (mut files, mut folders, mut bytes) = (0usize, 0usize, 0u64);
    let mut stack = vec![tree.id()];
    while let Some(id) = stack.pop() {
        let tree = repo.find_tree(id)?;
        for entry in &tree {
            match entry.kind() {
                Some(ObjectType::Tree) => {
                    folders += 1;
                    stack.push(entry.id());
                }
                Some(ObjectType::Blob) => {
                    files += 1;
                    let (size, _) = odb.read_header(entry.id())?;
                    bytes = bytes.saturating_add(size as u64);
                }
                _ => files += 1,
            }
            if files > left.max_files || folders > total.max_files {
                return Err(GitError::TooManyFiles {
                    limit: total.max_files,
                });
            }
            if bytes > left.max_bytes {
                return Err(GitError::TooLarge {
                    limit: total.max_bytes,
                });
            }
        }
    }
    Ok((files, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gitmodules_sections_are_read_with_quotes_escapes_and_comments() {
        let text = "# top\n[submodule \"lib\"]\n\tpath = vendor/lib ; trailing\n\turl = \"https://h/x y.git\"\n[core]\n\turl = ignored\n[submodule \"a\\\"b\"]\n\tpath = p\n\turl = https://h/p.git # c\n[submodule \"lib\"]\n\turl = https://h/lib2.git\n";
        let found = parse_gitmodules(text).expect("it parses");
        assert_eq!(
            found,
            vec![
                Declared {
                    name: "lib".to_owned(),
                    path: Some("vendor/lib".to_owned()),
                    url: Some("https://h/lib2.git".to_owned()),
                },
                Declared {
                    name: "a\"b".to_owned(),
                    path: Some("p".to_owned()),
                    url: Some("https://h/p.git".to_owned()),
                },
            ]
        );
    }

    #[test]
    fn gitmodules_the_parser_does_not_understand_is_refused_not_guessed() {
        for text in [
            "[submodule \"x\"]\n\turl = https://h/\\\n x.git\n",
            "[submodule \"x\"]\n\turl = \"https://h/x.git\n",
            "[submodule x]\n\turl = https://h/x.git\n",
            "[submodule \"x\"\n",
            "[submodule \"x\"]\n\t!url = y\n",
        ] {
            assert!(parse_gitmodules(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn relative_urls_resolve_against_origin_and_may_not_climb_above_the_host() {
        let origin = Some("https://h.example/team/super.git");
        for (url, expected) in [
            ("../lib.git", Ok("https://h.example/team/lib.git")),
            ("./lib.git", Ok("https://h.example/team/super.git/lib.git")),
            (
                "../../other/lib.git/",
                Ok("https://h.example/other/lib.git"),
            ),
            ("https://x.example/a.git", Ok("https://x.example/a.git")),
            ("ext::sh -c touch% pwned", Ok("ext::sh -c touch% pwned")),
        ] {
            assert_eq!(
                resolve_url(url, origin).map_err(|r| r.0),
                expected.map(str::to_owned),
                "{url}"
            );
        }
        for url in [
            "../../../x.git",
            "../",
            "../a/../../b",
            "..//evil.example/x",
        ] {
            assert!(resolve_url(url, origin).is_err(), "{url}");
        }
        assert!(resolve_url("../x.git", None).is_err());
    }

    #[test]
    fn names_nest_only_on_a_slash_boundary() {
        assert!(nests("a", "a"));
        assert!(nests("a", "a/b"));
        assert!(nests("a/b", "a"));
        assert!(!nests("a", "ab"));
        assert!(!nests("a/b", "a/c"));
    }
}
