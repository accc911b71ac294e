//! Local paths a server may read for a person: absolute paths to ordinary
//! files on this machine, with links resolved, and never a file the system
//! makes up (`/proc`, `/sys`, `/dev`) or one on another machine.

use std::io::Read as _;
use std::path::{Component, Path, PathBuf};

use crate::{Contents, PathError, ordinary};

/// The trees the system makes up rather than stores: their files describe
/// running programs, the kernel and devices, and reading one can block,
/// never end, or hand out another program's secrets (`/proc/self/environ`).
const SYSTEM_TREES: [(&str, &str); 3] = [("proc", "/proc"), ("sys", "/sys"), ("dev", "/dev")];

/// Checks a path given as text by the rules that need no file system, and
/// expands a leading `~`: it must not hold a control or invisible
/// character, must not name another machine or a device (`\\host\share`,
/// `//host/share`, `\\?\…`, `\\.\…`, with either slash), must be absolute
/// once `~` or `~/…` is expanded to `home` (`~user` is refused: only the
/// person's own home is known), and must not lie in `/proc`, `/sys` or
/// `/dev`. Nothing is opened or even looked up, so a caller can refuse a
/// path before touching the disk; [`ordinary_path`] then resolves it.
pub fn expand_path(raw: &str, home: &Path) -> Result<PathBuf, PathError> {
    visible_and_local(raw)?;
    let expanded = if raw == "~" {
        home.to_owned()
    } else if let Some(rest) = home_relative(raw) {
        home.join(rest)
    } else if raw.starts_with('~') {
        return Err(PathError::OtherUsersHome { shown: shown(raw) });
    } else {
        PathBuf::from(raw)
    };
    if !expanded.is_absolute() {
        return Err(PathError::Relative { shown: shown(raw) });
    }
    if names_another_machine(&expanded.to_string_lossy()) {
        return Err(PathError::OtherMachine { shown: shown(raw) });
    }
    if let Some(tree) = system_tree(&expanded) {
        return Err(PathError::SystemTree {
            path: expanded,
            tree,
        });
    }
    Ok(expanded)
}

/// The part after `~/` (or `~\` on Windows), without further leading
/// separators so that joining it to the home directory cannot jump to the
/// root or to another machine.
fn home_relative(raw: &str) -> Option<&str> {
    let rest = raw.strip_prefix("~/").or_else(|| {
        if cfg!(windows) {
            raw.strip_prefix("~\\")
        } else {
            None
        }
    })?;
    Some(if cfg!(windows) {
        rest.trim_start_matches(['/', '\\'])
    } else {
        rest.trim_start_matches('/')
    })
}

/// Resolves a path given as text to the real path of an ordinary file on
/// this machine, refusing everything [`expand_path`] refuses and then, with
/// every link followed, the same rules again on the real path (a link into
/// `/proc` is refused like `/proc` itself), a file system the kernel makes
/// up wherever it is mounted, a real path that is not Unicode or holds an
/// invisible character, and anything that is not a regular file
/// (directory, named pipe, device, socket). Nothing is opened: the file is
/// only looked up. The real path is what a question names and what
/// [`read_local`] reads.
pub fn ordinary_path(raw: &str, home: &Path) -> Result<PathBuf, PathError> {
    let expanded = expand_path(raw, home)?;
    let real = fs_err::canonicalize(&expanded).map_err(|e| PathError::io(&expanded, e))?;
    let real = plain_path(real)?;
    let Some(text) = real.to_str() else {
        return Err(PathError::NotUnicode { path: real });
    };
    visible_and_local(text)?;
    if let Some(tree) = system_tree(&real).or_else(|| made_up_file_system(&real)) {
        return Err(PathError::SystemTree { path: real, tree });
    }
    let metadata = fs_err::metadata(&real).map_err(|e| PathError::io(&real, e))?;
    ordinary(&real, &metadata)?;
    Ok(real)
}

/// Reads a file at a real path from [`ordinary_path`], at most `cap`
/// bytes, and makes sure it is still that file: the last component is not
/// followed if it became a link, a named pipe put in its place is not
/// waited on, the open file must be a regular file on a stored file system,
/// and the path must still resolve to the very file that was opened. A file
/// over the cap, or one that grows past it while read, is not returned.
pub fn read_local(real: &Path, cap: u64) -> Result<Contents, PathError> {
    let file = open_unfollowed(real)?;
    let metadata = file.metadata().map_err(|e| PathError::io(real, e))?;
    ordinary(real, &metadata)?;
    if let Some(tree) = made_up_file_system_of(&file) {
        return Err(PathError::SystemTree {
            path: real.to_owned(),
            tree,
        });
    }
    still_the_same_file(real, &metadata)?;
    if metadata.len() > cap {
        return Ok(Contents::TooLarge {
            size: metadata.len(),
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| PathError::io(real, e))?;
    if bytes.len() as u64 > cap {
        return Ok(Contents::TooLarge {
            size: bytes.len() as u64,
        });
    }
    Ok(Contents::Bytes(bytes))
}

#[cfg(unix)]
fn open_unfollowed(real: &Path) -> Result<std::fs::File, PathError> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    match rustix::fs::open(real, flags, Mode::empty()) {
        Ok(fd) => Ok(std::fs::File::from(fd)),
        Err(rustix::io::Errno::LOOP) => Err(PathError::Changed {
            path: real.to_owned(),
        }),
        Err(errno) => Err(PathError::io(real, errno.into())),
    }
}

#[cfg(not(unix))]
fn open_unfollowed(real: &Path) -> Result<std::fs::File, PathError> {
    std::fs::File::open(real).map_err(|e| PathError::io(real, e))
}

/// The path still resolves to the file that was opened.
fn still_the_same_file(real: &Path, opened: &std::fs::Metadata) -> Result<(), PathError> {
    let changed = || PathError::Changed {
        path: real.to_owned(),
    };
    let again = fs_err::canonicalize(real).map_err(|_| changed())?;
    if plain_path(again).ok().as_deref() != Some(real) {
        return Err(changed());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        let now = std::fs::symlink_metadata(real).map_err(|_| changed())?;
        if (now.dev(), now.ino()) != (opened.dev(), opened.ino()) {
            return Err(changed());
        }
    }
    #[cfg(not(unix))]
    let _ = opened;
    Ok(())
}

/// On Windows, `canonicalize` answers `\\?\C:\…`; that is turned back into
/// `C:\…`, and any other prefix (a share, a device) is refused.
#[cfg(windows)]
fn plain_path(real: PathBuf) -> Result<PathBuf, PathError> {
    use std::path::Prefix;
    let mut components = real.components();
    match components.next() {
        Some(Component::Prefix(prefix)) => match prefix.kind() {
            Prefix::VerbatimDisk(letter) | Prefix::Disk(letter) => {
                let mut plain = PathBuf::from(format!("{}:\\", char::from(letter)));
                plain.extend(components.filter(|c| !matches!(c, Component::RootDir)));
                Ok(plain)
            }
            _ => Err(PathError::OtherMachine {
                shown: shown(&real.to_string_lossy()),
            }),
        },
        _ => Ok(real),
    }
}

#[cfg(not(windows))]
#[allow(clippy::unnecessary_wraps)]
fn plain_path(real: PathBuf) -> Result<PathBuf, PathError> {
    Ok(real)
}

/// Refuses a path (given or real) with an invisible character, or one
/// that names another machine or a device.
fn visible_and_local(text: &str) -> Result<(), PathError> {
    if let Some(character) = text.chars().find(|&c| is_invisible(c)) {
        return Err(PathError::InvisibleCharacter {
            shown: shown(text),
            character,
        });
    }
    if names_another_machine(text) {
        return Err(PathError::OtherMachine { shown: shown(text) });
    }
    Ok(())
}

/// Whether text names another machine or a device: two separators first
/// (`\\host\share`, `//host/share`, `\\?\C:\…`, `\\.\pipe\…`, or any mix of
/// slashes), or the NT object prefix `\??\`.
fn names_another_machine(text: &str) -> bool {
    let bytes = text.as_bytes();
    let separator = |b: u8| b == b'/' || b == b'\\';
    (bytes.len() >= 2 && separator(bytes[0]) && separator(bytes[1]))
        || text.starts_with("\\??\\")
        || text.starts_with("/??/")
}

/// The system tree a path lies in, judged from the path alone with `.` and
/// `..` taken away.
fn system_tree(path: &Path) -> Option<&'static str> {
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part),
            Component::ParentDir => {
                parts.pop();
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    let first = parts.first()?.to_str()?;
    SYSTEM_TREES
        .iter()
        .find(|(name, _)| *name == first)
        .map(|(_, shown)| *shown)
}

/// File systems the Linux kernel makes up, by their `statfs` magic number:
/// mounted anywhere, their files are no more ordinary than `/proc`'s.
#[cfg(any(target_os = "linux", target_os = "android"))]
const MADE_UP_FILE_SYSTEMS: [(u64, &str); 14] = [
    (0x9fa0, "a proc file system"),
    (0x6265_6572, "a sysfs file system"),
    (0x6462_6720, "a debugfs file system"),
    (0x7472_6163, "a tracefs file system"),
    (0x7363_6673, "a securityfs file system"),
    (0x0027_e0eb, "a cgroup file system"),
    (0x6367_7270, "a cgroup2 file system"),
    (0xcafe_4a11, "a bpf file system"),
    (0x6265_6570, "a configfs file system"),
    (0xde5e_81e4, "an efivarfs file system"),
    (0x6165_676c, "a pstore file system"),
    (0x1cd1, "a devpts file system"),
    (0x6573_5543, "a fusectl file system"),
    (0x4249_4e4d, "a binfmt_misc file system"),
];

#[cfg(any(target_os = "linux", target_os = "android"))]
fn made_up_kind(f_type: impl TryInto<u64>) -> Option<&'static str> {
    let magic = f_type.try_into().ok()?;
    MADE_UP_FILE_SYSTEMS
        .iter()
        .find(|(m, _)| *m == magic)
        .map(|(_, what)| *what)
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn made_up_file_system(path: &Path) -> Option<&'static str> {
    made_up_kind(rustix::fs::statfs(path).ok()?.f_type)
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn made_up_file_system_of(file: &std::fs::File) -> Option<&'static str> {
    made_up_kind(rustix::fs::fstatfs(file).ok()?.f_type)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn made_up_file_system(_path: &Path) -> Option<&'static str> {
    None
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn made_up_file_system_of(_file: &std::fs::File) -> Option<&'static str> {
    None
}

/// Whether `c` is a control character or one that changes how a name looks
/// without showing itself: Unicode format characters (bidi overrides such as
/// U+202E, zero-width spaces and joiners, the byte-order mark), line and
/// paragraph separators, and the Hangul fillers and grapheme joiner that
/// render as nothing.
#[must_use]
pub fn is_invisible(c: char) -> bool {
    use unicode_general_category::{GeneralCategory as G, get_general_category};
    matches!(
        get_general_category(c),
        G::Control | G::Format | G::LineSeparator | G::ParagraphSeparator
    ) || matches!(
        c,
        '\u{034F}' | '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}'
    )
}

/// Text as it is safe to print in a message: each invisible character is
/// written as its escape (`\u{202e}`), so a refusal shows what was there.
#[must_use]
pub fn shown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_invisible(c) {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What kind of refusal a case expects.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Expect {
        OtherMachine,
        SystemTree,
        Relative,
        OtherUsersHome,
        Invisible,
        NotOrdinary,
        NotFound,
    }

    fn kind(error: &PathError) -> Option<Expect> {
        Some(match error {
            PathError::OtherMachine { .. } => Expect::OtherMachine,
            PathError::SystemTree { .. } => Expect::SystemTree,
            PathError::Relative { .. } => Expect::Relative,
            PathError::OtherUsersHome { .. } => Expect::OtherUsersHome,
            PathError::InvisibleCharacter { .. } => Expect::Invisible,
            PathError::NotOrdinary { .. } => Expect::NotOrdinary,
            PathError::NotFound { .. } => Expect::NotFound,
            _ => return None,
        })
    }

    #[test]
    fn paths_a_local_server_must_not_read_are_refused_before_they_are_opened() {
        let home = tempfile::tempdir().expect("a temp dir");
        let home = &fs_err::canonicalize(home.path()).expect("real home");
        fs_err::create_dir(home.join("folder")).expect("mkdir");
        fs_err::write(home.join("note.txt"), "hello").expect("write");
        let at = |name: &str| home.join(name).to_string_lossy().into_owned();
        #[cfg(unix)]
        {
            crate::tests::make_fifo(&home.join("pipe"));
            std::os::unix::fs::symlink("/proc/self/environ", home.join("environ"))
                .expect("symlink");
            std::os::unix::fs::symlink("/dev", home.join("devices")).expect("symlink");
        }
        let mut cases = vec![
            (r"\\host\share\x".to_owned(), Expect::OtherMachine),
            ("//host/x".to_owned(), Expect::OtherMachine),
            (r"\\?\C:\x".to_owned(), Expect::OtherMachine),
            (r"\\.\pipe\x".to_owned(), Expect::OtherMachine),
            ("//?/C:/x".to_owned(), Expect::OtherMachine),
            (r"\/host/x".to_owned(), Expect::OtherMachine),
            (r"\??\C:\x".to_owned(), Expect::OtherMachine),
            ("/proc/self/environ".to_owned(), Expect::SystemTree),
            ("/dev/zero".to_owned(), Expect::SystemTree),
            ("/sys/x".to_owned(), Expect::SystemTree),
            ("/tmp/../proc/self/environ".to_owned(), Expect::SystemTree),
            ("note.txt".to_owned(), Expect::Relative),
            ("./note.txt".to_owned(), Expect::Relative),
            (String::new(), Expect::Relative),
            ("~user/x".to_owned(), Expect::OtherUsersHome),
            (at("folder"), Expect::NotOrdinary),
            ("~".to_owned(), Expect::NotOrdinary),
            (at("missing.txt"), Expect::NotFound),
            (at("a\u{202E}txt.exe"), Expect::Invisible),
            (at("zero\u{200B}width.txt"), Expect::Invisible),
            (at("line\nbreak.txt"), Expect::Invisible),
        ];
        if cfg!(unix) {
            cases.extend([
                (at("pipe"), Expect::NotOrdinary),
                (at("environ"), Expect::SystemTree),
                (at("devices/zero"), Expect::SystemTree),
            ]);
        }
        for (raw, expected) in cases {
            let error = ordinary_path(&raw, home).expect_err(&raw);
            assert_eq!(kind(&error), Some(expected), "{raw:?}: {error}");
        }
    }

    #[test]
    fn a_refusal_says_what_was_wrong_and_shows_invisible_characters() {
        let home = Path::new("/home/you");
        let error = expand_path("/home/you/a\u{202E}fdp.exe", home).expect_err("refused");
        let text = error.to_string();
        assert!(text.contains("U+202E"), "{text}");
        assert!(text.contains(r"a\u{202e}fdp.exe"), "{text}");
        assert!(!text.contains('\u{202E}'), "{text}");
        let error = expand_path(r"\\host\share\x", home).expect_err("refused");
        assert!(error.to_string().contains("another machine"), "{error}");
    }

    #[test]
    fn tilde_expands_to_home_and_links_resolve_to_the_real_file() {
        let home = tempfile::tempdir().expect("a temp dir");
        let home = &fs_err::canonicalize(home.path()).expect("real home");
        fs_err::create_dir(home.join("docs")).expect("mkdir");
        let real = home.join("docs").join("report.txt");
        fs_err::write(&real, "numbers").expect("write");
        assert_eq!(ordinary_path("~/docs/report.txt", home).expect("ok"), real);
        assert_eq!(
            expand_path("~//docs/report.txt", home).expect("ok"),
            real,
            "extra slashes after ~/ stay in the home directory"
        );
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&real, home.join("latest.txt")).expect("symlink");
            assert_eq!(ordinary_path("~/latest.txt", home).expect("ok"), real);
            let raw = home.join("docs/../latest.txt");
            assert_eq!(
                ordinary_path(&raw.to_string_lossy(), home).expect("ok"),
                real
            );
        }
    }

    #[test]
    fn read_local_reads_the_checked_file_under_the_cap() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let real = fs_err::canonicalize(dir.path())
            .expect("real")
            .join("ten.bin");
        fs_err::write(&real, [1u8; 10]).expect("write");
        assert_eq!(
            read_local(&real, 10).expect("read"),
            Contents::Bytes(vec![1; 10])
        );
        assert_eq!(
            read_local(&real, 9).expect("read"),
            Contents::TooLarge { size: 10 }
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_file_swapped_for_a_link_or_a_pipe_after_the_check_is_not_read() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let dir = fs_err::canonicalize(dir.path()).expect("real");
        let real = dir.join("note.txt");
        fs_err::write(&real, "hello").expect("write");
        let checked = ordinary_path(&real.to_string_lossy(), &dir).expect("ok");

        fs_err::remove_file(&real).expect("remove");
        std::os::unix::fs::symlink("/proc/self/environ", &real).expect("symlink");
        let error = read_local(&checked, 1024).expect_err("a link now");
        assert!(matches!(error, PathError::Changed { .. }), "{error}");

        fs_err::remove_file(&real).expect("remove");
        crate::tests::make_fifo(&real);
        let error = read_local(&checked, 1024).expect_err("a pipe now");
        assert!(error.to_string().contains("a named pipe"), "{error}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_made_up_file_system_is_known_wherever_it_is() {
        assert_eq!(
            made_up_file_system(Path::new("/proc/self/status")),
            Some("a proc file system")
        );
        assert_eq!(made_up_file_system(Path::new("/")), None);
    }
}
