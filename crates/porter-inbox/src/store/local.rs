//! Blobs on the local disk: `<data>/runs/<run>/inbox/<path>`, staged in
//! `<data>/runs/<run>/.staging/` on the same file system.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::{BlobReader, Blobs, Staged};
use crate::model::{InboxError, RunId};
use crate::names::is_inbox_path;

/// `LocalBlobs` keeps each run's files in a folder of its own, readable by
/// this user only (folders 0700, files 0600).
///
/// A staged file is named `<pid>.<unique>.part`, so that
/// [`Blobs::remove_stale`] can tell the leftovers of a process that is gone
/// from the files another live process is still writing. A commit is a hard
/// link (which fails rather than replace an existing name) followed by
/// removing the staged name; it needs a file system with hard links.
#[derive(Debug, Clone)]
pub struct LocalBlobs {
    runs_dir: PathBuf,
}

impl LocalBlobs {
    /// Blobs under `data_dir/runs/`.
    #[must_use]
    pub fn new(data_dir: &Path) -> Self {
        Self {
            runs_dir: data_dir.join("runs"),
        }
    }

    /// The folder of one run (its inbox, staging area and transcript).
    #[must_use]
    pub fn run_dir(&self, run: RunId) -> PathBuf {
        self.runs_dir.join(run.to_string())
    }

    /// The inbox root of one run.
    #[must_use]
    pub fn inbox_dir(&self, run: RunId) -> PathBuf {
        self.run_dir(run).join("inbox")
    }

    fn staging_dir(&self, run: RunId) -> PathBuf {
        self.run_dir(run).join(".staging")
    }

    /// The file behind an inbox path, refusing any path the inbox could not
    /// have made.
    fn path_of(&self, run: RunId, path: &str) -> Result<PathBuf, InboxError> {
        if !is_inbox_path(path) {
            return Err(InboxError::NoFile {
                run,
                path: path.to_owned(),
            });
        }
        Ok(self.inbox_dir(run).join(path))
    }
}

impl Blobs for LocalBlobs {
    fn stage(&self, run: RunId) -> Result<Box<dyn Staged>, InboxError> {
        let staging = self.staging_dir(run);
        make_private_dirs(&staging)?;
        let temp = staging.join(format!(
            "{}.{}.part",
            std::process::id(),
            uuid::Uuid::now_v7().simple()
        ));
        let file = create_private_file(&temp)?;
        Ok(Box::new(LocalStaged {
            temp,
            file,
            inbox: self.inbox_dir(run),
            committed: false,
        }))
    }

    fn open(&self, run: RunId, path: &str) -> Result<Box<dyn BlobReader>, InboxError> {
        let real = self.path_of(run, path)?;
        let file = std::fs::File::open(&real).map_err(|e| -> InboxError {
            if e.kind() == io::ErrorKind::NotFound {
                InboxError::NoFile {
                    run,
                    path: path.to_owned(),
                }
            } else {
                at(&real)(e).into()
            }
        })?;
        let size = file.metadata().map_err(at(&real))?.len();
        Ok(Box::new(LocalReader { file, size }))
    }

    fn remove(&self, run: RunId, path: &str) -> Result<(), InboxError> {
        let real = self.path_of(run, path)?;
        match std::fs::remove_file(&real) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(at(&real)(e).into()),
        }
        // Folders left empty go too, up to (not including) the inbox root.
        let root = self.inbox_dir(run);
        let mut dir = real.parent();
        while let Some(d) = dir {
            if d == root || std::fs::remove_dir(d).is_err() {
                break;
            }
            dir = d.parent();
        }
        Ok(())
    }

    fn purge(&self, run: RunId) -> Result<(), InboxError> {
        for dir in [self.inbox_dir(run), self.staging_dir(run)] {
            match std::fs::remove_dir_all(&dir) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(at(&dir)(e).into()),
                _ => {}
            }
        }
        Ok(())
    }

    fn remove_stale(&self) -> Result<usize, InboxError> {
        let runs = match std::fs::read_dir(&self.runs_dir) {
            Ok(runs) => runs,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(at(&self.runs_dir)(e).into()),
        };
        let mut removed = 0;
        for run in runs {
            let staging = run.map_err(at(&self.runs_dir))?.path().join(".staging");
            let Ok(entries) = std::fs::read_dir(&staging) else {
                continue;
            };
            for entry in entries {
                let path = entry.map_err(at(&staging))?.path();
                let writer_alive = path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.split('.').next())
                    .and_then(|pid| pid.parse::<u32>().ok())
                    .is_some_and(process_alive);
                if !writer_alive {
                    std::fs::remove_file(&path).map_err(at(&path))?;
                    removed += 1;
                }
            }
        }
        Ok(removed)
    }

    fn on_local_disk(&self) -> bool {
        true
    }
}

/// `LocalReader` is a file of the local disk as a [`BlobReader`] (any open
/// file: the download API opens its own beneath the inbox root).
#[derive(Debug)]
pub struct LocalReader {
    file: std::fs::File,
    size: u64,
}

impl LocalReader {
    /// Reads `file`, whose size is `size`.
    #[must_use]
    pub fn new(file: std::fs::File, size: u64) -> Self {
        Self { file, size }
    }
}

impl io::Read for LocalReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.file.read(buf)
    }
}

impl io::Seek for LocalReader {
    fn seek(&mut self, to: io::SeekFrom) -> io::Result<u64> {
        self.file.seek(to)
    }
}

impl BlobReader for LocalReader {
    fn size(&self) -> u64 {
        self.size
    }
}

/// Whether the process that named a staged file may still be writing it.
fn process_alive(pid: u32) -> bool {
    pid == std::process::id() || Path::new("/proc").join(pid.to_string()).exists()
}

/// A file being written in the staging folder.
struct LocalStaged {
    temp: PathBuf,
    file: std::fs::File,
    inbox: PathBuf,
    committed: bool,
}

impl Write for LocalStaged {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.file.write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Staged for LocalStaged {
    fn commit(&mut self, path: &str) -> Result<bool, InboxError> {
        if self.committed || !is_inbox_path(path) {
            return Err(
                io::Error::other(format!("cannot commit a staged file as {path:?}")).into(),
            );
        }
        let target = self.inbox.join(path);
        if let Some(parent) = target.parent() {
            make_private_dirs(parent)?;
        }
        match std::fs::hard_link(&self.temp, &target) {
            Ok(()) => {
                self.committed = true;
                std::fs::remove_file(&self.temp).map_err(at(&self.temp))?;
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(at(&target)(e).into()),
        }
    }
}

impl Drop for LocalStaged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Makes `dir` and any missing parents, each readable by this user only.
fn make_private_dirs(dir: &Path) -> Result<(), InboxError> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(at(dir))?;
    Ok(())
}

/// Creates a new file readable by this user only, never opening one that
/// exists.
fn create_private_file(path: &Path) -> Result<std::fs::File, InboxError> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    Ok(options.open(path).map_err(at(path))?)
}

/// Names the path in an I/O error, so a failure says where it happened.
pub(crate) fn at(path: &Path) -> impl Fn(io::Error) -> io::Error + '_ {
    move |e| io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// Every regular file at or under `root/rel` (not through symbolic links),
/// as its `/`-separated path under `root` and its size, added to `found`. A
/// missing `root/rel` adds nothing.
pub(crate) fn local_files(
    root: &Path,
    rel: &str,
    found: &mut Vec<(String, u64)>,
) -> Result<(), InboxError> {
    let start = if rel.is_empty() {
        root.to_owned()
    } else {
        root.join(rel)
    };
    let metadata = match std::fs::symlink_metadata(&start) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(at(&start)(e).into()),
    };
    if metadata.is_file() {
        found.push((rel.to_owned(), metadata.len()));
        return Ok(());
    }
    if !metadata.is_dir() {
        return Ok(());
    }
    for entry in std::fs::read_dir(&start).map_err(at(&start))? {
        let entry = entry.map_err(at(&start))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        let child = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        local_files(root, &child, found)?;
    }
    Ok(())
}
