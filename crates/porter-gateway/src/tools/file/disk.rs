//! File system work confined beneath a root.
//!
//! Every path is opened through a `cap_std::fs::Dir` of its root, which on
//! Linux resolves with `openat2(RESOLVE_BENEATH)`: `..`, absolute paths and
//! symlinks that lead out of the root fail with an error instead of reaching
//! the file. Nothing here joins strings onto the root path.

use std::io::{self, Read, Write};
use std::path::Path;

use cap_std::fs::{Dir, OpenOptions};
use sha2::{Digest, Sha256};

/// `COPY_CHUNK_BYTES` is how much is read at a time while copying and
/// hashing.
const COPY_CHUNK_BYTES: usize = 256 * 1024;

/// Opens `root` as the directory every path of one operation is resolved
/// beneath.
pub(crate) fn open_root(root: &Path) -> io::Result<Dir> {
    Dir::open_ambient_dir(root, cap_std::ambient_authority())
}

/// Whether an error is cap-std refusing a path that leads out of its root.
pub(crate) fn is_escape(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::PermissionDenied
        && error.to_string().contains("outside of the filesystem")
}

/// `EntryKind` is what a directory entry is, without following symlinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryKind {
    File,
    Dir,
    Link,
    Other,
}

impl EntryKind {
    pub fn word(self) -> &'static str {
        match self {
            Self::File => "file",
            Self::Dir => "dir",
            Self::Link => "link",
            Self::Other => "other",
        }
    }
}

/// `Entry` is one name in a listed folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub name: String,
    pub kind: EntryKind,
    /// Bytes, for files.
    pub size: Option<u64>,
}

/// The entries of the folder `rel` beneath `dir`, sorted by name.
pub(crate) fn list(dir: &Dir, rel: &str) -> io::Result<Vec<Entry>> {
    let mut entries = Vec::new();
    for entry in dir.read_dir(rel)? {
        let entry = entry?;
        let file_type = entry.file_type()?;
        let kind = if file_type.is_symlink() {
            EntryKind::Link
        } else if file_type.is_dir() {
            EntryKind::Dir
        } else if file_type.is_file() {
            EntryKind::File
        } else {
            EntryKind::Other
        };
        let size = if kind == EntryKind::File {
            entry.metadata().ok().map(|m| m.len())
        } else {
            None
        };
        entries.push(Entry {
            name: entry.file_name().to_string_lossy().into_owned(),
            kind,
            size,
        });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

/// `Contents` is a file read whole, or only its size when it is over the cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Contents {
    Bytes(Vec<u8>),
    TooLarge(u64),
}

/// `NotAFile` is the error for a folder (or device) where a file was asked.
pub(crate) fn not_a_file() -> io::Error {
    io::Error::new(io::ErrorKind::IsADirectory, "it is a folder, not a file")
}

/// `Links` says whether a file with more than one name (a hard link) may be
/// read. A hard link planted in a volume can be a second name of any file
/// on the same file system that its planter could link, also one outside
/// every volume, and nothing in the link shows where the other name is; so
/// such a file is refused unless the volume's operator says the volume
/// holds hard links on purpose (`allow_hard_links: true`). Porter itself
/// leaves none behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Links {
    /// Only files with one name are read (the default, and the inbox).
    One,
    /// Hard-linked files are read too.
    Many,
}

/// `HardLinked` is the refusal of a file that has `names` names.
#[derive(Debug, thiserror::Error)]
#[error("the file has {names} names (hard links)")]
pub(crate) struct HardLinked {
    pub names: u64,
}

/// The number of names of the file `error` refused, if it is a
/// [`HardLinked`] refusal.
pub(crate) fn hard_linked(error: &io::Error) -> Option<u64> {
    error
        .get_ref()
        .and_then(|e| e.downcast_ref::<HardLinked>())
        .map(|h| h.names)
}

/// Opens the regular file `rel` beneath `dir` for reading: a folder or
/// device is refused, and so is a hard-linked file unless `links` allows it.
/// The checks are made on the opened file, so a name swapped after them
/// does not matter.
pub(crate) fn open_file(
    dir: &Dir,
    rel: &str,
    links: Links,
) -> io::Result<(cap_std::fs::File, cap_std::fs::Metadata)> {
    use cap_std::fs::MetadataExt as _;
    let file = dir.open(rel)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(not_a_file());
    }
    if links == Links::One && metadata.nlink() > 1 {
        return Err(io::Error::other(HardLinked {
            names: metadata.nlink(),
        }));
    }
    Ok((file, metadata))
}

/// Reads the file `rel` beneath `dir` if it holds at most `cap` bytes.
pub(crate) fn read_capped(dir: &Dir, rel: &str, cap: u64, links: Links) -> io::Result<Contents> {
    let (file, metadata) = open_file(dir, rel, links)?;
    if metadata.len() > cap {
        return Ok(Contents::TooLarge(metadata.len()));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Ok(Contents::TooLarge(bytes.len() as u64));
    }
    Ok(Contents::Bytes(bytes))
}

/// `Copied` is what `copy_into` wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Copied {
    pub size: u64,
    /// Lower-case hex SHA-256 of the bytes written.
    pub sha256: String,
}

/// `CopyFault` is why a copy did not happen.
#[derive(Debug)]
pub(crate) enum CopyFault {
    /// The target exists and overwriting was not asked for.
    Exists,
    /// The target is a folder.
    TargetIsDir,
    /// Reading the source failed.
    Source(io::Error),
    /// Writing the target failed.
    Target(io::Error),
}

/// Copies the file `from_rel` beneath `from` to `to_rel` beneath `to`:
/// written to a temp file in the target folder (created beneath the root
/// when missing) and renamed in, so that no half file ever carries the real
/// name. Without `overwrite` the rename never replaces an existing file,
/// even one that appears while copying (the temp file is hard-linked to the
/// name, which fails if the name exists).
pub(crate) fn copy_into(
    from: &Dir,
    from_rel: &str,
    to: &Dir,
    to_rel: &str,
    overwrite: bool,
) -> Result<Copied, CopyFault> {
    let (mut source, _) = open_file(from, from_rel, Links::One).map_err(CopyFault::Source)?;
    let (parent_rel, name) = match to_rel.rsplit_once('/') {
        Some((parent, name)) => (parent, name),
        None => (".", to_rel),
    };
    if parent_rel != "."
        && let Err(error) = to.create_dir_all(parent_rel)
    {
        // A symlink leading out reads as "exists" here; opening it says
        // what is really wrong.
        return Err(CopyFault::Target(
            to.open_dir(parent_rel).err().unwrap_or(error),
        ));
    }
    let parent = to.open_dir(parent_rel).map_err(CopyFault::Target)?;
    match parent.symlink_metadata(name) {
        Ok(existing) if existing.is_dir() => return Err(CopyFault::TargetIsDir),
        Ok(_) if !overwrite => return Err(CopyFault::Exists),
        Ok(_) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => {}
        Err(error) => return Err(CopyFault::Target(error)),
    }
    let temp = format!(".porter-keep-{}.tmp", uuid::Uuid::now_v7());
    let written = write_temp(&mut source, &parent, &temp);
    let copied = match written {
        Ok(copied) => copied,
        Err(fault) => {
            let _ = parent.remove_file(&temp);
            return Err(fault);
        }
    };
    let placed = if overwrite {
        parent.rename(&temp, &parent, name)
    } else {
        let linked = parent.hard_link(&temp, &parent, name);
        let _ = parent.remove_file(&temp);
        linked
    };
    match placed {
        Ok(()) => Ok(copied),
        Err(error) => {
            let _ = parent.remove_file(&temp);
            if error.kind() == io::ErrorKind::AlreadyExists {
                Err(CopyFault::Exists)
            } else {
                Err(CopyFault::Target(error))
            }
        }
    }
}

fn write_temp(source: &mut impl Read, parent: &Dir, temp: &str) -> Result<Copied, CopyFault> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    let mut target = parent
        .open_with(temp, &options)
        .map_err(CopyFault::Target)?;
    let (size, sha256) = read_hashed(
        source,
        |chunk| target.write_all(chunk).map_err(CopyFault::Target),
        CopyFault::Source,
    )?;
    target.sync_all().map_err(CopyFault::Target)?;
    Ok(Copied { size, sha256 })
}

/// Reads `source` to its end a chunk at a time, handing each chunk to
/// `each`; returns the size read and its SHA-256 as hex. An error of the
/// read is `read_failed`'s, an error of `each` stops the read.
pub(crate) fn read_hashed<E>(
    source: &mut impl Read,
    mut each: impl FnMut(&[u8]) -> Result<(), E>,
    read_failed: impl Fn(io::Error) -> E,
) -> Result<(u64, String), E> {
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; COPY_CHUNK_BYTES];
    let mut size = 0u64;
    loop {
        let read = match source.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(read_failed(error)),
        };
        hasher.update(&buffer[..read]);
        each(&buffer[..read])?;
        size += read as u64;
    }
    Ok((size, hex(&hasher.finalize())))
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots() -> (tempfile::TempDir, Dir, Dir) {
        let temp = tempfile::tempdir().expect("a temp dir");
        std::fs::create_dir_all(temp.path().join("src")).expect("src");
        std::fs::create_dir_all(temp.path().join("dst")).expect("dst");
        std::fs::write(temp.path().join("secret.txt"), b"outside").expect("outside file");
        std::fs::write(temp.path().join("src/a.txt"), b"hello\n").expect("a.txt");
        let src = open_root(&temp.path().join("src")).expect("src root");
        let dst = open_root(&temp.path().join("dst")).expect("dst root");
        (temp, src, dst)
    }

    #[test]
    fn a_symlink_leading_out_of_the_root_is_refused() {
        let (temp, src, _) = roots();
        std::os::unix::fs::symlink(temp.path().join("secret.txt"), temp.path().join("src/abs"))
            .expect("absolute link");
        std::os::unix::fs::symlink("../secret.txt", temp.path().join("src/rel"))
            .expect("relative link");
        for name in ["abs", "rel", "../secret.txt"] {
            let error = read_capped(&src, name, 1024, Links::One).expect_err(name);
            assert!(is_escape(&error), "{name}: {error}");
        }
        let error = read_capped(
            &src,
            temp.path().join("secret.txt").to_str().expect("utf-8"),
            1024,
            Links::One,
        )
        .expect_err("absolute");
        assert!(is_escape(&error), "{error}");
    }

    #[test]
    fn a_hard_linked_file_is_read_only_where_links_are_allowed() {
        let (temp, src, _) = roots();
        std::fs::hard_link(
            temp.path().join("secret.txt"),
            temp.path().join("src/hard.txt"),
        )
        .expect("a hard link");
        let error = read_capped(&src, "hard.txt", 1024, Links::One).expect_err("two names");
        assert_eq!(hard_linked(&error), Some(2), "{error}");
        assert_eq!(
            read_capped(&src, "hard.txt", 1024, Links::Many).expect("allowed"),
            Contents::Bytes(b"outside".to_vec())
        );
        assert_eq!(
            hard_linked(&read_capped(&src, "nope", 9, Links::One).expect_err("gone")),
            None
        );
    }

    #[test]
    fn a_file_over_the_cap_is_not_read() {
        let (_temp, src, _) = roots();
        assert_eq!(
            read_capped(&src, "a.txt", 6, Links::One).expect("read"),
            Contents::Bytes(b"hello\n".to_vec())
        );
        assert_eq!(
            read_capped(&src, "a.txt", 5, Links::One).expect("read"),
            Contents::TooLarge(6)
        );
        assert!(read_capped(&src, ".", 5, Links::One).is_err());
    }

    #[test]
    fn a_copy_lands_under_its_name_with_its_hash_and_parents_made() {
        let (temp, src, dst) = roots();
        let copied = copy_into(&src, "a.txt", &dst, "deep/er/b.txt", false).expect("copied");
        assert_eq!(copied.size, 6);
        assert_eq!(
            copied.sha256,
            "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
        );
        assert_eq!(
            std::fs::read(temp.path().join("dst/deep/er/b.txt")).expect("there"),
            b"hello\n"
        );
        let left: Vec<_> = std::fs::read_dir(temp.path().join("dst/deep/er"))
            .expect("listed")
            .collect();
        assert_eq!(left.len(), 1, "no temp file is left behind");
    }

    #[test]
    fn a_copy_never_replaces_a_file_unless_asked() {
        let (temp, src, dst) = roots();
        std::fs::write(temp.path().join("dst/b.txt"), b"old").expect("old");
        assert!(matches!(
            copy_into(&src, "a.txt", &dst, "b.txt", false),
            Err(CopyFault::Exists)
        ));
        assert_eq!(
            std::fs::read(temp.path().join("dst/b.txt")).expect("old"),
            b"old"
        );
        copy_into(&src, "a.txt", &dst, "b.txt", true).expect("overwritten");
        assert_eq!(
            std::fs::read(temp.path().join("dst/b.txt")).expect("new"),
            b"hello\n"
        );
        std::fs::create_dir(temp.path().join("dst/d")).expect("dir");
        assert!(matches!(
            copy_into(&src, "a.txt", &dst, "d", true),
            Err(CopyFault::TargetIsDir)
        ));
        assert_eq!(
            std::fs::read_dir(temp.path().join("dst"))
                .expect("ls")
                .count(),
            2
        );
    }

    #[test]
    fn a_copy_through_a_symlinked_folder_out_of_the_target_is_refused() {
        let (temp, src, dst) = roots();
        std::fs::create_dir(temp.path().join("elsewhere")).expect("elsewhere");
        std::os::unix::fs::symlink(temp.path().join("elsewhere"), temp.path().join("dst/out"))
            .expect("link");
        let fault = copy_into(&src, "a.txt", &dst, "out/b.txt", false).expect_err("refused");
        assert!(
            matches!(&fault, CopyFault::Target(e) if is_escape(e)),
            "{fault:?}"
        );
        assert_eq!(
            std::fs::read_dir(temp.path().join("elsewhere"))
                .expect("ls")
                .count(),
            0
        );
    }

    #[test]
    fn a_listing_names_files_folders_and_links_without_following_them() {
        let (temp, src, _) = roots();
        std::fs::create_dir(temp.path().join("src/sub")).expect("sub");
        std::os::unix::fs::symlink("../secret.txt", temp.path().join("src/link")).expect("link");
        let entries = list(&src, ".").expect("listed");
        let shown: Vec<_> = entries
            .iter()
            .map(|e| (e.name.as_str(), e.kind, e.size))
            .collect();
        assert_eq!(
            shown,
            vec![
                ("a.txt", EntryKind::File, Some(6)),
                ("link", EntryKind::Link, None),
                ("sub", EntryKind::Dir, None),
            ]
        );
        assert!(list(&src, "..").is_err());
    }
}
