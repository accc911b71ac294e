//! Writing new files without ever replacing one, and saving downloads:
//! under a cap, with the download mark, and once per file.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::{PathError, safe_name, split_extension};

/// `MAX_NAME_ATTEMPTS` is how many names [`write_new`] tries: the name
/// itself, then "name (2).ext" up to "name (1000).ext".
pub const MAX_NAME_ATTEMPTS: u32 = 1000;

/// `MAX_SAVE_BYTES` is the most [`save_new`] saves of one file (100 MiB),
/// the limit the spec sets for saving an attachment.
pub const MAX_SAVE_BYTES: u64 = 100 * 1024 * 1024;

/// `ORIGIN_ATTRIBUTE` is the extended attribute that marks a file as
/// downloaded on Linux (freedesktop's `user.xdg.origin.url`), which file
/// managers show and which [`SavedFiles`] reads to find an earlier copy.
pub const ORIGIN_ATTRIBUTE: &str = "user.xdg.origin.url";

/// Writes `bytes` as a new file named `name` (made safe) in `dir`, never
/// replacing anything: if the name is taken it tries "name (2).ext",
/// "name (3).ext", … up to "name (1000).ext". Each attempt is an exclusive
/// create, so two writers cannot both win a name. The bytes go to a hidden
/// temporary file first and are linked into place only when complete, so
/// no reader ever sees a partial file and a failed write leaves nothing
/// behind. Returns the path written.
pub fn write_new(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf, PathError> {
    write_new_marked(dir, name, bytes, None).map(|(path, _)| path)
}

/// `Saved` is where [`save_new`] put a file, or where the earlier copy is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    /// The file's path.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// The same file was saved before and that copy is still there with the
    /// same size, so nothing was written.
    pub already_saved: bool,
    /// Set when the download mark could not be set, saying why; the file is
    /// saved all the same.
    pub mark_note: Option<String>,
}

/// `SavedFiles` remembers which downloads were saved where, so saving the
/// same file again answers the earlier copy (`already_saved`) while that
/// copy is still at its path with the same size.
///
/// The record is kept in two places, and neither is a file of porter's own:
/// in memory (keyed by the origin URL, which names the file on its server),
/// and on the saved file itself, whose download mark on Linux is that same
/// URL. The mark makes the record outlive the server (an MCP client starts
/// a new one per session) without an index file in the person's Downloads
/// folder that could go stale, be edited, or race with a second server: a
/// copy that is renamed, deleted or changed in size is simply not found,
/// which is the rule. Only the names [`save_new`] would have chosen are
/// looked at, so the check costs a few `stat` calls.
#[derive(Debug, Default)]
pub struct SavedFiles {
    saved: Mutex<HashMap<String, PathBuf>>,
}

impl SavedFiles {
    /// An empty record.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The earlier copy of the file from `origin_url` saved in `dir` under
    /// `name`, if it is still there with `size` bytes. A caller asks this
    /// before downloading, so a file already saved is not fetched again.
    #[must_use]
    pub fn earlier_copy(
        &self,
        dir: &Path,
        name: &str,
        origin_url: &str,
        size: u64,
    ) -> Option<PathBuf> {
        let mut saved = self.lock();
        earlier_copy(&mut saved, dir, name, origin_url, size)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, PathBuf>> {
        self.saved
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn earlier_copy(
    saved: &mut HashMap<String, PathBuf>,
    dir: &Path,
    name: &str,
    origin_url: &str,
    size: u64,
) -> Option<PathBuf> {
    if let Some(path) = saved.get(origin_url) {
        if is_file_of_size(path, size) {
            return Some(path.clone());
        }
        saved.remove(origin_url);
    }
    let found = marked_copy(dir, name, origin_url, size)?;
    saved.insert(origin_url.to_owned(), found.clone());
    Some(found)
}

fn is_file_of_size(path: &Path, size: u64) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() == size)
}

/// Saves a downloaded file into `dir` as a new file: `dir` must be an
/// absolute path to an existing directory; the name is made safe; nothing
/// is ever replaced (`name (2).ext`, … up to 1000, as [`write_new`]); a file
/// over `max_bytes` is refused with nothing written; the file carries the
/// download mark naming `origin_url` (Linux `user.xdg.origin.url`, macOS
/// `com.apple.quarantine`, Windows `Zone.Identifier`), and a mark that
/// cannot be set is noted in [`Saved::mark_note`], not fatal. Saving the
/// same `origin_url` again answers the earlier copy while it is still there
/// with the same size (see [`SavedFiles`]). `origin_url` must name the file
/// itself (for Mattermost, `<MM_URL>/api/v4/files/<file_id>`), not the post
/// that carries it.
pub fn save_new(
    dir: &Path,
    name: &str,
    bytes: &[u8],
    origin_url: &str,
    max_bytes: u64,
    remembered: &SavedFiles,
) -> Result<Saved, PathError> {
    if !dir.is_absolute() {
        return Err(PathError::Relative {
            shown: crate::shown(&dir.to_string_lossy()),
        });
    }
    if !fs_err::metadata(dir).is_ok_and(|m| m.is_dir()) {
        return Err(PathError::NoDirectory {
            path: dir.to_owned(),
        });
    }
    let size = bytes.len() as u64;
    if size > max_bytes {
        return Err(PathError::TooLarge {
            name: crate::shown(name),
            size,
            cap: max_bytes,
        });
    }
    // Held until the file is in place, so two saves of one file at once
    // cannot both miss the other's copy.
    let mut saved = remembered.lock();
    if let Some(path) = earlier_copy(&mut saved, dir, name, origin_url, size) {
        return Ok(Saved {
            path,
            size,
            already_saved: true,
            mark_note: None,
        });
    }
    let (path, mark_note) = write_new_marked(dir, name, bytes, Some(origin_url))?;
    saved.insert(origin_url.to_owned(), path.clone());
    Ok(Saved {
        path,
        size,
        already_saved: false,
        mark_note,
    })
}

/// Makes temporary names unique within this process, so that two writes
/// of one name at once do not share a temporary file.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

fn numbered(stem: &str, ext: &str, attempt: u32) -> String {
    if attempt == 1 {
        format!("{stem}{ext}")
    } else {
        format!("{stem} ({attempt}){ext}")
    }
}

/// [`write_new`], setting the download mark for `origin_url` when one is
/// given; answers the path and, when the mark could not be set, why.
fn write_new_marked(
    dir: &Path,
    name: &str,
    bytes: &[u8],
    origin_url: Option<&str>,
) -> Result<(PathBuf, Option<String>), PathError> {
    let name = safe_name(name);
    let (stem, ext) = split_extension(&name);
    let temp = dir.join(format!(
        ".{stem}.porter-partial-{}-{}",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let mark_note = write_file(&temp, bytes, origin_url)?;
    let mut result = Err(PathError::NamesTaken {
        dir: dir.to_owned(),
        name: numbered(stem, ext, MAX_NAME_ATTEMPTS),
    });
    for attempt in 1..=MAX_NAME_ATTEMPTS {
        let target = dir.join(numbered(stem, ext, attempt));
        match std::fs::hard_link(&temp, &target) {
            Ok(()) => {
                result = Ok((target, mark_note.clone()));
                break;
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            // A file system without hard links (FAT, some network shares):
            // each name is created exclusively and written in place instead.
            Err(e)
                if attempt == 1
                    && matches!(
                        e.kind(),
                        io::ErrorKind::Unsupported | io::ErrorKind::PermissionDenied
                    ) =>
            {
                result = write_in_place(dir, stem, ext, bytes, origin_url);
                break;
            }
            Err(e) => {
                result = Err(PathError::io(&target, e));
                break;
            }
        }
    }
    let _ = std::fs::remove_file(&temp);
    result
}

/// Creates each numbered name exclusively and writes into it, removing it
/// again if the write fails.
fn write_in_place(
    dir: &Path,
    stem: &str,
    ext: &str,
    bytes: &[u8],
    origin_url: Option<&str>,
) -> Result<(PathBuf, Option<String>), PathError> {
    for attempt in 1..=MAX_NAME_ATTEMPTS {
        let target = dir.join(numbered(stem, ext, attempt));
        match write_file(&target, bytes, origin_url) {
            Ok(note) => return Ok((target, note)),
            Err(PathError::Io { source, .. }) if source.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(PathError::NamesTaken {
        dir: dir.to_owned(),
        name: numbered(stem, ext, MAX_NAME_ATTEMPTS),
    })
}

/// Creates `path` exclusively, writes and syncs the bytes, and sets the
/// download mark; on failure the file is removed.
fn write_file(
    path: &Path,
    bytes: &[u8],
    origin_url: Option<&str>,
) -> Result<Option<String>, PathError> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| PathError::Io {
            path: path.to_owned(),
            source: e,
        })?;
    let mark_note = origin_url.and_then(|url| mark::set(&file, path, url));
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    if let Err(e) = written {
        drop(file);
        let _ = std::fs::remove_file(path);
        return Err(PathError::io(path, e));
    }
    Ok(mark_note)
}

/// Looks for a copy of the file from `origin_url` among the names
/// [`save_new`] would have chosen, by the download mark it set.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn marked_copy(dir: &Path, name: &str, origin_url: &str, size: u64) -> Option<PathBuf> {
    let name = safe_name(name);
    let (stem, ext) = split_extension(&name);
    let mut buffer = vec![0u8; origin_url.len() + 1];
    for attempt in 1..=MAX_NAME_ATTEMPTS {
        let path = dir.join(numbered(stem, ext, attempt));
        let Ok(metadata) = std::fs::symlink_metadata(&path) else {
            // Copies take the first free name, so the first gap ends them.
            return None;
        };
        if metadata.is_file()
            && metadata.len() == size
            && rustix::fs::lgetxattr(&path, ORIGIN_ATTRIBUTE, &mut buffer[..])
                .is_ok_and(|n| &buffer[..n] == origin_url.as_bytes())
        {
            return Some(path);
        }
    }
    None
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn marked_copy(_dir: &Path, _name: &str, _origin_url: &str, _size: u64) -> Option<PathBuf> {
    None
}

/// The download mark: how each system records that a file came from the
/// internet, and from where.
mod mark {
    use std::path::Path;

    /// Sets the mark on a file just created; answers why when it could not.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub(super) fn set(file: &std::fs::File, _path: &Path, origin_url: &str) -> Option<String> {
        let value = without_controls(origin_url);
        rustix::fs::fsetxattr(
            file,
            super::ORIGIN_ATTRIBUTE,
            value.as_bytes(),
            rustix::fs::XattrFlags::empty(),
        )
        .err()
        .map(|errno| {
            format!(
                "the download mark ({}) could not be set: {}; the file is saved without it",
                super::ORIGIN_ATTRIBUTE,
                std::io::Error::from(errno)
            )
        })
    }

    /// macOS's quarantine flag: "flags;hex seconds;agent;" with the flag
    /// that Gatekeeper reads as "downloaded by an application".
    #[cfg(target_os = "macos")]
    pub(super) fn set(file: &std::fs::File, _path: &Path, _origin_url: &str) -> Option<String> {
        let seconds = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let value = format!("0081;{seconds:x};porter;");
        rustix::fs::fsetxattr(
            file,
            "com.apple.quarantine",
            value.as_bytes(),
            rustix::fs::XattrFlags::empty(),
        )
        .err()
        .map(|errno| {
            format!(
                "the download mark (com.apple.quarantine) could not be set: {}; the file is saved without it",
                std::io::Error::from(errno)
            )
        })
    }

    /// Windows's mark of the web: a `Zone.Identifier` stream naming the
    /// internet zone and the URL. Streams belong to the file, so every
    /// hard link to it carries the mark.
    #[cfg(windows)]
    pub(super) fn set(_file: &std::fs::File, path: &Path, origin_url: &str) -> Option<String> {
        let mut stream = path.as_os_str().to_owned();
        stream.push(":Zone.Identifier");
        let text = format!(
            "[ZoneTransfer]\r\nZoneId=3\r\nHostUrl={}\r\n",
            without_controls(origin_url)
        );
        std::fs::write(&stream, text).err().map(|e| {
            format!(
                "the download mark (Zone.Identifier) could not be set: {e}; the file is saved without it"
            )
        })
    }

    #[cfg(not(any(
        target_os = "linux",
        target_os = "android",
        target_os = "macos",
        windows
    )))]
    pub(super) fn set(_file: &std::fs::File, _path: &Path, _origin_url: &str) -> Option<String> {
        Some("this system has no download mark porter knows how to set".to_owned())
    }

    /// The URL without line breaks or other controls, which would end the
    /// mark's line early.
    #[cfg(any(target_os = "linux", target_os = "android", windows))]
    fn without_controls(url: &str) -> String {
        url.chars().filter(|c| !c.is_control()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "https://chat.example.com/api/v4/files/abc123";

    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn write_new_never_overwrites_and_numbers_the_next_name() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let first = write_new(dir.path(), "notes.txt", b"one").expect("first write");
        let second = write_new(dir.path(), "notes.txt", b"two").expect("second write");
        let third = write_new(dir.path(), "../notes.txt", b"three").expect("third write");
        assert_eq!(
            first.file_name().and_then(|n| n.to_str()),
            Some("notes.txt")
        );
        assert_eq!(
            second.file_name().and_then(|n| n.to_str()),
            Some("notes (2).txt")
        );
        assert_eq!(
            third.file_name().and_then(|n| n.to_str()),
            Some("notes (3).txt")
        );
        assert_eq!(std::fs::read(&first).expect("read"), b"one");
        assert_eq!(
            names_in(dir.path()).len(),
            3,
            "no temporary file is left behind"
        );
    }

    #[test]
    fn write_new_goes_up_to_the_thousandth_name_and_then_says_they_are_taken() {
        let dir = tempfile::tempdir().expect("a temp dir");
        std::fs::write(dir.path().join("a.txt"), "").expect("write");
        for n in 2..MAX_NAME_ATTEMPTS {
            std::fs::write(dir.path().join(format!("a ({n}).txt")), "").expect("write");
        }
        let last = write_new(dir.path(), "a.txt", b"x").expect("the last name is free");
        assert_eq!(
            last.file_name().and_then(|n| n.to_str()),
            Some("a (1000).txt")
        );
        let error = write_new(dir.path(), "a.txt", b"y").expect_err("all taken");
        assert!(matches!(error, PathError::NamesTaken { .. }), "{error}");
        assert!(error.to_string().contains("a (1000).txt"), "{error}");
        assert_eq!(names_in(dir.path()).len(), 1000, "nothing left behind");
    }

    #[test]
    fn save_new_leaves_an_existing_file_untouched_and_takes_the_next_name() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let existing = dir.path().join("report.pdf");
        std::fs::write(&existing, "the person's own").expect("write");
        let saved = save_new(
            dir.path(),
            "report.pdf",
            b"downloaded",
            URL,
            MAX_SAVE_BYTES,
            &SavedFiles::new(),
        )
        .expect("saved");
        assert_eq!(saved.path, dir.path().join("report (2).pdf"));
        assert_eq!(saved.size, 10);
        assert!(!saved.already_saved);
        assert_eq!(std::fs::read(&existing).expect("read"), b"the person's own");
        assert_eq!(std::fs::read(&saved.path).expect("read"), b"downloaded");
    }

    #[test]
    fn saving_the_same_file_again_answers_the_earlier_copy_while_it_is_unchanged() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let remembered = SavedFiles::new();
        let save = |bytes: &[u8]| {
            save_new(
                dir.path(),
                "notes.txt",
                bytes,
                URL,
                MAX_SAVE_BYTES,
                &remembered,
            )
            .expect("saved")
        };
        let first = save(b"hello");
        let again = save(b"hello");
        assert!(again.already_saved);
        assert_eq!(again.path, first.path);
        assert_eq!(names_in(dir.path()), ["notes.txt"]);
        assert_eq!(
            remembered.earlier_copy(dir.path(), "notes.txt", URL, 5),
            Some(first.path.clone())
        );
        let other = save_new(
            dir.path(),
            "notes.txt",
            b"hello",
            "https://chat.example.com/api/v4/files/other",
            MAX_SAVE_BYTES,
            &remembered,
        )
        .expect("another file of the same name");
        assert!(!other.already_saved, "another file id is another file");

        std::fs::write(&first.path, "hello, edited").expect("edit");
        let after_edit = save(b"hello");
        assert!(
            !after_edit.already_saved,
            "a copy of another size is not the file"
        );
        std::fs::remove_file(&after_edit.path).expect("remove");
        let after_removal = save(b"hello");
        assert!(!after_removal.already_saved, "a removed copy is not there");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_download_mark_is_set_and_finds_the_copy_after_a_restart() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let saved = save_new(
            dir.path(),
            "photo.jpg",
            b"jpeg bytes",
            URL,
            MAX_SAVE_BYTES,
            &SavedFiles::new(),
        )
        .expect("saved");
        let mut value = vec![0u8; 256];
        match rustix::fs::getxattr(&saved.path, ORIGIN_ATTRIBUTE, &mut value[..]) {
            Ok(n) => {
                assert_eq!(saved.mark_note, None);
                assert_eq!(&value[..n], URL.as_bytes());
                let fresh = SavedFiles::new();
                let again = save_new(
                    dir.path(),
                    "photo.jpg",
                    b"jpeg bytes",
                    URL,
                    MAX_SAVE_BYTES,
                    &fresh,
                )
                .expect("saved");
                assert!(
                    again.already_saved,
                    "the mark is the record a new server reads"
                );
                assert_eq!(again.path, saved.path);
            }
            Err(errno) => {
                // A file system without user xattrs: the failure is noted.
                let note = saved.mark_note.expect("a note when the mark is missing");
                assert!(note.contains(ORIGIN_ATTRIBUTE), "{note} ({errno})");
            }
        }
    }

    #[test]
    fn a_file_over_the_cap_is_refused_and_nothing_is_written() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let bytes = vec![0u8; 11];
        let error = save_new(dir.path(), "big.bin", &bytes, URL, 10, &SavedFiles::new())
            .expect_err("over the cap");
        assert!(
            matches!(
                error,
                PathError::TooLarge {
                    size: 11,
                    cap: 10,
                    ..
                }
            ),
            "{error}"
        );
        assert!(names_in(dir.path()).is_empty(), "nothing is written");
        let bytes = vec![0u8; MAX_SAVE_BYTES as usize + 1];
        let error = save_new(
            dir.path(),
            "big.bin",
            &bytes,
            URL,
            MAX_SAVE_BYTES,
            &SavedFiles::new(),
        )
        .expect_err("100 MiB + 1 byte");
        assert!(error.to_string().contains("104857601 bytes"), "{error}");
        assert!(names_in(dir.path()).is_empty(), "nothing is written");
    }

    #[test]
    fn save_new_wants_an_absolute_existing_directory() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let missing = dir.path().join("missing");
        let error =
            save_new(&missing, "a.txt", b"x", URL, 10, &SavedFiles::new()).expect_err("missing");
        assert!(matches!(error, PathError::NoDirectory { .. }), "{error}");
        let error = save_new(
            Path::new("downloads"),
            "a.txt",
            b"x",
            URL,
            10,
            &SavedFiles::new(),
        )
        .expect_err("relative");
        assert!(matches!(error, PathError::Relative { .. }), "{error}");
    }
}
