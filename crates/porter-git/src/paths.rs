//! Which paths porter will write into a work tree, and how much a tree may
//! hold before it is checked out.
//!
//! Every component of every path is judged on its own: git itself, and the
//! file systems a clone may later be copied to, treat some names as
//! aliases of `.git` (case, NTFS trailing dots and spaces, the 8.3 short
//! name `GIT~1`, HFS+ ignoring some code points) or as devices (Windows
//! `CON`, `NUL`, ...), and a hostile tree uses exactly those.

use std::collections::HashSet;

use git2::{ObjectType, Oid, Repository, Tree};

use crate::error::GitError;

/// `MAX_CHECKOUT_BYTES` is the most content one checkout writes: 1 GiB.
pub const MAX_CHECKOUT_BYTES: u64 = 1 << 30;

/// `MAX_CHECKOUT_FILES` is the most files one checkout writes.
pub const MAX_CHECKOUT_FILES: usize = 200_000;

/// `MAX_TREE_DEPTH` is the deepest a tree may nest.
pub const MAX_TREE_DEPTH: usize = 256;

/// `Bounds` are the limits a tree is walked against before checkout.
/// The default holds [`MAX_CHECKOUT_FILES`] and [`MAX_CHECKOUT_BYTES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// The most files (blobs, symlinks, submodule entries).
    pub max_files: usize,
    /// The most bytes of blob content, summed over every file.
    pub max_bytes: u64,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds {
            max_files: MAX_CHECKOUT_FILES,
            max_bytes: MAX_CHECKOUT_BYTES,
        }
    }
}

/// HFS+ ignores these code points when it compares names, so `.g\u{200c}it`
/// opens `.git` there.
const HFS_IGNORED: &[char] = &[
    '\u{200c}', '\u{200d}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}',
    '\u{202e}', '\u{206a}', '\u{206b}', '\u{206c}', '\u{206d}', '\u{206e}', '\u{206f}', '\u{feff}',
];

/// `check_component` says why one path component (a tree entry's name) is
/// not one porter writes, or `Ok` if it is: a name that opens `.git` on
/// NTFS or HFS+, or one that is not safe on some file system
/// ([`porter_paths::check_component`]) as it is or as HFS+ reads it.
pub fn check_component(name: &[u8]) -> Result<(), &'static str> {
    let unsafe_name = porter_paths::UnsafeComponent::reason;
    porter_paths::check_component(name).map_err(unsafe_name)?;
    // UTF-8 by now.
    let text = String::from_utf8_lossy(name);
    let folded: String = text
        .chars()
        .filter(|c| !HFS_IGNORED.contains(c))
        .collect::<String>()
        .to_lowercase();
    let trimmed = folded.trim_end_matches([' ', '.']);
    if trimmed == ".git" || trimmed == "git~1" {
        return Err("names .git (or an alias of it on NTFS or HFS+)");
    }
    porter_paths::check_component(folded.as_bytes()).map_err(unsafe_name)
}

/// `check_path` judges every component of a slash-separated path from the
/// model or a tree; an absolute path is refused.
pub fn check_path(path: &str) -> Result<(), GitError> {
    let refuse = |reason| GitError::UnsafePath {
        path: path.to_owned(),
        reason,
    };
    if path.starts_with('/') {
        return Err(refuse("is absolute; give a path inside the repository"));
    }
    for component in path.split('/') {
        check_component(component.as_bytes()).map_err(refuse)?;
    }
    Ok(())
}

/// `check_tree` walks `tree` before anything of it is written: every name
/// is checked, two names in one folder that a case-insensitive file system
/// would merge are refused, symlinks may point only within the tree, and
/// the walk stops as soon as `bounds` are passed — so a tree that repeats
/// one subtree a million times costs at most `max_files` steps.
pub fn check_tree(repo: &Repository, tree: &Tree<'_>, bounds: Bounds) -> Result<(), GitError> {
    let odb = repo.odb()?;
    let mut walk = Walk {
        repo,
        odb: &odb,
        bounds,
        files: 0,
        bytes: 0,
    };
    walk.tree(tree, "", 0)
}

struct Walk<'a> {
    repo: &'a Repository,
    odb: &'a git2::Odb<'a>,
    bounds: Bounds,
    files: usize,
    bytes: u64,
}

impl Walk<'_> {
    fn tree(&mut self, tree: &Tree<'_>, prefix: &str, depth: usize) -> Result<(), GitError> {
        if depth > MAX_TREE_DEPTH {
            return Err(GitError::UnsafePath {
                path: prefix.to_owned(),
                reason: "nests deeper than 256 folders",
            });
        }
        let mut seen: HashSet<String> = HashSet::new();
        for entry in tree {
            let name = entry.name_bytes();
            let shown = format!("{prefix}{}", String::from_utf8_lossy(name));
            check_component(name).map_err(|reason| GitError::UnsafePath {
                path: shown.clone(),
                reason,
            })?;
            let folded: String = String::from_utf8_lossy(name)
                .chars()
                .filter(|c| !HFS_IGNORED.contains(c))
                .collect::<String>()
                .to_lowercase();
            if !seen.insert(folded) {
                return Err(GitError::UnsafePath {
                    path: shown,
                    reason: "appears twice in its folder (perhaps in another case), so one could be written through the other",
                });
            }
            match entry.kind() {
                Some(ObjectType::Tree) => {
                    let subtree = self.repo.find_tree(entry.id())?;
                    self.tree(&subtree, &format!("{shown}/"), depth + 1)?;
                }
                Some(ObjectType::Blob) => {
                    self.count(entry.id())?;
                    if entry.filemode() == 0o120_000 {
                        let blob = self.repo.find_blob(entry.id())?;
                        check_link(&shown, blob.content())?;
                    }
                }
                _ => {
                    // A submodule (commit) entry: checkout makes an empty folder.
                    self.files += 1;
                    if self.files > self.bounds.max_files {
                        return Err(GitError::TooManyFiles {
                            limit: self.bounds.max_files,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    fn count(&mut self, id: Oid) -> Result<(), GitError> {
        self.files += 1;
        if self.files > self.bounds.max_files {
            return Err(GitError::TooManyFiles {
                limit: self.bounds.max_files,
            });
        }
        let (size, _) = self.odb.read_header(id)?;
        self.bytes = self.bytes.saturating_add(size as u64);
        if self.bytes > self.bounds.max_bytes {
            return Err(GitError::TooLarge {
                limit: self.bounds.max_bytes,
            });
        }
        Ok(())
    }
}

/// `check_link` refuses a symlink whose target is absolute or climbs out of
/// the work tree, so nothing written later can go through it elsewhere.
fn check_link(path: &str, target: &[u8]) -> Result<(), GitError> {
    let refuse = |reason| GitError::UnsafePath {
        path: path.to_owned(),
        reason,
    };
    let Ok(target) = std::str::from_utf8(target) else {
        return Err(refuse("is a symlink whose target is not UTF-8"));
    };
    if target.is_empty()
        || target.starts_with('/')
        || target.contains('\\')
        || target.contains('\0')
    {
        return Err(refuse("is a symlink to an absolute or unusual target"));
    }
    let mut depth: isize = path.matches('/').count().cast_signed();
    for component in target.split('/') {
        match component {
            "" | "." => {}
            ".." => depth -= 1,
            other => {
                check_component(other.as_bytes()).map_err(refuse)?;
                depth += 1;
            }
        }
        if depth < 0 {
            return Err(refuse("is a symlink that points outside the repository"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_that_alias_git_or_a_device_or_climb_out_are_refused() {
        let refused: &[&[u8]] = &[
            b"",
            b".",
            b"..",
            b".git",
            b".GIT",
            b".Git ",
            b".git.",
            b".git . .",
            b"GIT~1",
            b"git~1.",
            ".g\u{200c}it".as_bytes(),
            "\u{feff}.GIT".as_bytes(),
            b"CON",
            b"nul.txt",
            b"Com1",
            b"lpt9.log",
            "com\u{b9}".as_bytes(),
            b"a\x01b",
            b"tab\there",
            b"a\\b",
            b"c:",
            b"...",
            b"\xff\xfe",
            ".\u{200c}.".as_bytes(),
            "\u{200d}. ".as_bytes(),
        ];
        for name in refused {
            assert!(
                check_component(name).is_err(),
                "{:?} should be refused",
                String::from_utf8_lossy(name)
            );
        }
        let allowed: &[&[u8]] = &[
            b"src",
            b".gitignore",
            b".github",
            b"git",
            b"GIT~2",
            b"console.rs",
            b"com10",
            b"a.b.c",
            "naïve".as_bytes(),
        ];
        for name in allowed {
            assert_eq!(
                check_component(name),
                Ok(()),
                "{:?}",
                String::from_utf8_lossy(name)
            );
        }
    }

    #[test]
    fn a_path_is_refused_when_any_component_is() {
        assert!(check_path("src/lib.rs").is_ok());
        assert!(check_path("src/../../etc/passwd").is_err());
        assert!(check_path("/etc/passwd").is_err());
        assert!(check_path("a/.GIT/config").is_err());
        assert!(check_path("a//b").is_err());
    }

    #[test]
    fn symlinks_may_point_only_inside_the_tree() {
        assert!(check_link("a", b"b").is_ok());
        assert!(check_link("dir/a", b"../b").is_ok());
        assert!(check_link("a", b"/etc").is_err());
        assert!(check_link("a", b"../x").is_err());
        assert!(check_link("dir/a", b"../../x").is_err());
        assert!(check_link("a", b"x/../../y").is_err());
        assert!(check_link("a", b".git/config").is_err());
    }
}
