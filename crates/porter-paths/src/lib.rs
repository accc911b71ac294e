//! `porter-paths` keeps porter's file-system work safe: it reads only
//! ordinary files and never more than a cap, turns any name into one that is
//! safe to create on disk, and writes new files without ever replacing one.
//!
//! For a server that reads the person's own files (a local MCP server
//! attaching a file to a post) it decides which paths may be read at all:
//! [`ordinary_path`] resolves a path given as text to the real path of an
//! ordinary file on this machine (never another machine, a device, `/proc`,
//! `/sys` or `/dev`, a relative path or a name with invisible characters),
//! [`is_credential_path`] names files where credentials live, and
//! [`holds_secret`] finds a private key or the server's own token in bytes.
//! [`sha256_hex`] and [`fingerprint`] bind a question's answer to what it
//! was about. For downloads, [`save_new`] saves under a cap, with the
//! system's download mark, and answers an earlier copy instead of saving a
//! file twice.
//!
//! It deliberately knows nothing of MCP, Mattermost or the gateway: callers
//! pass the paths, the home directory, the token and the limits. It does not
//! decide *where* files may go; the servers do that and hand the directory
//! in.
//!
//! ```
//! use porter_paths::{ordinary_path, read_ordinary, safe_name, Contents};
//!
//! assert_eq!(safe_name("../../etc/passwd"), "passwd");
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("note.txt");
//! std::fs::write(&path, "hello")?;
//! match read_ordinary(&path, 1024)? {
//!     Contents::Bytes(bytes) => assert_eq!(bytes, b"hello"),
//!     Contents::TooLarge { size } => unreachable!("5 bytes fit a cap of 1024, not {size}"),
//! }
//! assert!(ordinary_path("/proc/self/environ", dir.path()).is_err());
//! assert!(ordinary_path("~/note.txt", dir.path())?.ends_with("note.txt"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod component;
mod credentials;
mod digest;
mod local;
mod save;

pub use component::{UnsafeComponent, check_component};
pub use credentials::{MIN_TOKEN_BYTES, holds_secret, is_credential_path};
pub use digest::{fingerprint, sha256_hex};
pub use local::{expand_path, is_invisible, ordinary_path, read_local, shown};
pub use save::{
    MAX_NAME_ATTEMPTS, MAX_SAVE_BYTES, ORIGIN_ATTRIBUTE, Saved, SavedFiles, save_new, write_new,
};

use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// `SAFE_NAME_BYTES` is the longest name [`safe_name`] returns, kept under
/// the 255-byte limit of common file systems with room for " (1000)" and
/// for the hidden temporary name a file is written under first.
pub const SAFE_NAME_BYTES: usize = 200;

/// `PathError` says what was wrong with a path and what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// Nothing is at the path.
    #[error("{}: no such file; check the path", path.display())]
    NotFound {
        /// The path given.
        path: PathBuf,
    },
    /// The path names a directory, a device, a pipe or a socket.
    #[error("{}: it is {what}, not an ordinary file; pass the path of a file", path.display())]
    NotOrdinary {
        /// The path given.
        path: PathBuf,
        /// What it is instead ("a directory", "a named pipe", …).
        what: &'static str,
    },
    /// Every numbered name up to [`MAX_NAME_ATTEMPTS`] is taken.
    #[error("{}: every name up to \"{name}\" is taken; clear some out or choose another name", dir.display())]
    NamesTaken {
        /// The directory written into.
        dir: PathBuf,
        /// The last name tried ("notes (1000).txt").
        name: String,
    },
    /// The path names another machine or a device, which a local server
    /// never reads: a share (`\\host\share`, `//host/share`) or a Windows
    /// device or verbatim path (`\\?\…`, `\\.\…`).
    #[error(
        "{shown} names another machine or a device, and porter reads only files on this computer; pass the path of a file on a local disk, such as /home/you/report.pdf or C:\\Users\\you\\report.pdf"
    )]
    OtherMachine {
        /// The path, with invisible characters escaped.
        shown: String,
    },
    /// The path lies in a tree the system makes up (`/proc`, `/sys`,
    /// `/dev`, or such a file system mounted elsewhere).
    #[error("{} lies in {tree}, which the system makes up rather than stores (its files describe running programs and devices, and can hold their secrets); pass the path of an ordinary file", path.display())]
    SystemTree {
        /// The path (as given, or resolved).
        path: PathBuf,
        /// The tree ("/proc") or the kind of file system.
        tree: &'static str,
    },
    /// The path is relative, so which file it names depends on a working
    /// directory the model cannot see.
    #[error(
        "{shown} is a relative path, and which file it names depends on where the server was started; pass an absolute path, or one starting with ~/ for the home directory"
    )]
    Relative {
        /// The path, with invisible characters escaped.
        shown: String,
    },
    /// The path starts with `~user`, another account's home.
    #[error(
        "{shown} names another account's home directory, which porter does not look up; pass an absolute path, or ~/… for your own home directory"
    )]
    OtherUsersHome {
        /// The path, with invisible characters escaped.
        shown: String,
    },
    /// The path holds a control or invisible character, which can make one
    /// name look like another (U+202E shows "photo\u{202E}gpj.exe" as
    /// "photoexe.jpg").
    #[error("{shown} contains the invisible or control character U+{:04X}, which can make a name look like another; rename the file and pass its new path", u32::from(*character))]
    InvisibleCharacter {
        /// The path, with invisible characters escaped.
        shown: String,
        /// The first such character.
        character: char,
    },
    /// The real path is not valid Unicode, so no question could show it as
    /// it is.
    #[error("{}: its real path is not valid Unicode text, so it cannot be shown faithfully; rename the file and pass its new path", path.display())]
    NotUnicode {
        /// The path, shown with replacement characters.
        path: PathBuf,
    },
    /// The file changed between the check and the read (it was replaced
    /// by a link, or the path now leads elsewhere).
    #[error("{}: the file changed while it was being checked (it was replaced or a link now leads elsewhere); check it and pass the path again", path.display())]
    Changed {
        /// The real path that was checked.
        path: PathBuf,
    },
    /// The file is larger than the cap.
    #[error(
        "{name} is {size} bytes, more than the {cap} bytes porter saves or sends; a person can download or share it themselves"
    )]
    TooLarge {
        /// The file's name.
        name: String,
        /// Its size in bytes.
        size: u64,
        /// The cap in bytes.
        cap: u64,
    },
    /// The directory to save into does not exist or is not a directory.
    #[error("{}: it does not exist or is not a directory; create it or choose another download directory", path.display())]
    NoDirectory {
        /// The directory given.
        path: PathBuf,
    },
    /// The operating system refused.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

impl PathError {
    pub(crate) fn io(path: &Path, source: io::Error) -> Self {
        if source.kind() == io::ErrorKind::NotFound {
            Self::NotFound {
                path: path.to_owned(),
            }
        } else {
            Self::Io {
                path: path.to_owned(),
                source,
            }
        }
    }
}

/// What [`read_ordinary`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Contents {
    /// The whole file.
    Bytes(Vec<u8>),
    /// The file is larger than the cap; nothing was read.
    TooLarge {
        /// Its size in bytes.
        size: u64,
    },
}

/// Reads a whole ordinary file of at most `cap` bytes. A directory, device,
/// named pipe or socket is refused without being opened for reading (a pipe
/// would block forever); a file over the cap is not read at all. A file that
/// grows past the cap while it is read is reported as too large too, so the
/// cap holds whatever the size said.
pub fn read_ordinary(path: &Path, cap: u64) -> Result<Contents, PathError> {
    let metadata = fs_err::metadata(path).map_err(|e| PathError::io(path, e))?;
    ordinary(path, &metadata)?;
    if metadata.len() > cap {
        return Ok(Contents::TooLarge {
            size: metadata.len(),
        });
    }
    let file = fs_err::File::open(path).map_err(|e| PathError::io(path, e))?;
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| PathError::io(path, e))?;
    if bytes.len() as u64 > cap {
        let size = fs_err::metadata(path).map_or(bytes.len() as u64, |m| m.len());
        return Ok(Contents::TooLarge { size });
    }
    Ok(Contents::Bytes(bytes))
}

pub(crate) fn ordinary(path: &Path, metadata: &std::fs::Metadata) -> Result<(), PathError> {
    let kind = metadata.file_type();
    if kind.is_file() {
        return Ok(());
    }
    let what = if kind.is_dir() {
        "a directory"
    } else {
        special_kind(kind)
    };
    Err(PathError::NotOrdinary {
        path: path.to_owned(),
        what,
    })
}

#[cfg(unix)]
fn special_kind(kind: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    if kind.is_fifo() {
        "a named pipe"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

#[cfg(not(unix))]
fn special_kind(_kind: std::fs::FileType) -> &'static str {
    "not a regular file"
}

/// `DEVICE_NAMES` are the names Windows reserves for devices (besides
/// `COM` and `LPT` with a digit, [`is_device_name`]): a file of that stem,
/// whatever its extension, opens the device there.
const DEVICE_NAMES: [&str; 6] = ["con", "prn", "aux", "nul", "conin$", "conout$"];

/// `is_device_name` says whether `stem` (a name without its extension) is
/// one Windows opens as a device: `CON`, `PRN`, `AUX`, `NUL`, `CONIN$`,
/// `CONOUT$`, or `COM`/`LPT` with a digit 1–9 or a superscript ¹²³, in any
/// case and with trailing spaces. Such a name is refused as a file's stem
/// everywhere, so that a name saved here is safe to copy to any machine.
#[must_use]
pub fn is_device_name(stem: &str) -> bool {
    let stem = stem.trim_end_matches(' ').to_ascii_lowercase();
    let numbered = |prefix: &str| {
        stem.strip_prefix(prefix).is_some_and(|rest| {
            matches!(
                rest,
                "1" | "2"
                    | "3"
                    | "4"
                    | "5"
                    | "6"
                    | "7"
                    | "8"
                    | "9"
                    | "\u{b9}"
                    | "\u{b2}"
                    | "\u{b3}"
            )
        })
    };
    DEVICE_NAMES.contains(&stem.as_str()) || numbered("com") || numbered("lpt")
}

/// Turns any name (from a chat attachment, a URL, a header) into a single
/// path component that is safe to create: the last component only (no
/// directories, no `..`), no control, format or bidi characters, none of
/// `<>:"/\|?*`, no leading dots or trailing dots and spaces, not a Windows
/// device name, at most [`SAFE_NAME_BYTES`] bytes with the extension kept.
/// Letters of any script are kept; a name left empty becomes "file".
#[must_use]
pub fn safe_name(name: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or_default();
    let mut cleaned: String = last
        .chars()
        .map(|c| if is_unsafe_char(c) { '_' } else { c })
        .collect();
    cleaned = cleaned
        .trim_start_matches(['.', ' '])
        .trim_end_matches(['.', ' '])
        .to_owned();
    if cleaned.chars().all(|c| c == '_') {
        cleaned.clear();
    }
    if cleaned.is_empty() {
        return "file".to_owned();
    }
    if let Some(end) = device_stem_end(&cleaned) {
        cleaned.insert(end, '_');
    }
    let (stem, ext) = split_extension(&cleaned);
    let ext = truncate_bytes(ext, 32);
    let stem = truncate_bytes(stem, SAFE_NAME_BYTES.saturating_sub(ext.len()));
    // A cut may end the name in a dot or a space, which Windows drops.
    format!("{stem}{ext}")
        .trim_end_matches(['.', ' '])
        .to_owned()
}

/// Where the part of `name` that Windows reads as a device ends (its first
/// dot, or the end of the name), when that part is a device name: `CON`,
/// `con .txt` and `nul.tar.gz` all open a device there.
pub(crate) fn device_stem_end(name: &str) -> Option<usize> {
    let end = name.find('.').unwrap_or(name.len());
    is_device_name(name[..end].trim_end()).then_some(end)
}

fn is_unsafe_char(c: char) -> bool {
    use unicode_general_category::{GeneralCategory as G, get_general_category};
    matches!(c, '<' | '>' | ':' | '"' | '/' | '\\' | '|' | '?' | '*')
        || matches!(
            get_general_category(c),
            G::Control
                | G::Format
                | G::PrivateUse
                | G::Unassigned
                | G::LineSeparator
                | G::ParagraphSeparator
                | G::Surrogate
        )
}

/// Splits "report.final.pdf" into ("report.final", ".pdf"); a name with no
/// dot after its first character has no extension.
pub(crate) fn split_extension(name: &str) -> (&str, &str) {
    match name.rfind('.') {
        Some(at) if at > 0 => name.split_at(at),
        _ => (name, ""),
    }
}

fn truncate_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut at = max;
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    &s[..at]
}

/// An ASCII rendering of a name, for file systems or logs that want one:
/// "Résumé – 2026.pdf" becomes "Resume - 2026.pdf".
#[must_use]
pub fn ascii_name(name: &str) -> String {
    safe_name(&deunicode::deunicode(&safe_name(name)))
}

#[cfg(test)]
mod properties;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Makes a named pipe, which a reader that opened it would wait on.
    #[cfg(unix)]
    pub(crate) fn make_fifo(path: &Path) {
        let made = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .expect("mkfifo runs");
        assert!(made.success(), "mkfifo {}", path.display());
    }

    #[test]
    fn safe_names_keep_the_last_component_and_lose_what_could_hurt() {
        let cases = [
            ("report.pdf", "report.pdf"),
            ("../../etc/passwd", "passwd"),
            ("C:\\Users\\me\\secret.txt", "secret.txt"),
            ("..", "file"),
            ("", "file"),
            ("   ", "file"),
            (".bashrc", "bashrc"),
            ("name. . .", "name"),
            ("a\u{202E}fdp.exe", "a_fdp.exe"),
            ("tab\there.txt", "tab_here.txt"),
            ("what?.txt", "what_.txt"),
            ("CON.txt", "CON_.txt"),
            ("nul", "nul_"),
            ("conin$.log", "conin$_.log"),
            ("COM\u{b9}.txt", "COM\u{b9}_.txt"),
            ("lpt9 .txt", "lpt9 _.txt"),
            ("nul.tar.gz", "nul_.tar.gz"),
            ("con..con", "con_..con"),
            ("com10.txt", "com10.txt"),
            ("Résumé – 2026.pdf", "Résumé – 2026.pdf"),
            ("日本語.txt", "日本語.txt"),
        ];
        for (name, expected) in cases {
            assert_eq!(safe_name(name), expected, "{name:?}");
        }
    }

    #[test]
    fn a_cut_name_does_not_end_in_a_space_or_a_dot() {
        let stem = "a".repeat(SAFE_NAME_BYTES - 1);
        assert_eq!(safe_name(&format!("{stem} b")), stem);
        let spaces = " ".repeat(40);
        assert_eq!(safe_name(&format!("x.b{spaces}c")), "x.b");
    }

    #[test]
    fn device_names_are_known_in_any_case_and_nothing_else_is() {
        for stem in [
            "CON",
            "con",
            "Prn",
            "aux",
            "NUL ",
            "CONIN$",
            "conout$",
            "COM1",
            "com9",
            "LPT1",
            "lpt9",
            "com\u{b9}",
            "LPT\u{b3}",
        ] {
            assert!(is_device_name(stem), "{stem:?}");
        }
        for stem in [
            "", "console", "com", "com0", "com10", "lpt", "nul.txt", " con", "c\u{f6}n",
        ] {
            assert!(!is_device_name(stem), "{stem:?}");
        }
    }

    #[test]
    fn a_long_name_is_cut_to_the_limit_and_keeps_its_extension() {
        let name = format!("{}.tar.gz", "é".repeat(300));
        let safe = safe_name(&name);
        assert!(safe.len() <= SAFE_NAME_BYTES, "{} bytes", safe.len());
        assert_eq!(safe.rsplit_once('.').map(|(_, ext)| ext), Some("gz"));
        assert_eq!(
            safe_name(&"a".repeat(SAFE_NAME_BYTES)).len(),
            SAFE_NAME_BYTES
        );
    }

    #[test]
    fn an_ascii_name_transliterates_letters() {
        assert_eq!(ascii_name("Résumé – 2026.pdf"), "Resume - 2026.pdf");
    }

    #[test]
    fn read_ordinary_reads_up_to_the_cap_and_not_a_byte_past_it() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("ten.bin");
        std::fs::write(&path, [1u8; 10]).expect("write");
        assert_eq!(
            read_ordinary(&path, 10).expect("read"),
            Contents::Bytes(vec![1; 10])
        );
        assert_eq!(
            read_ordinary(&path, 9).expect("read"),
            Contents::TooLarge { size: 10 }
        );
    }

    #[test]
    fn directories_and_missing_files_are_refused_with_the_path() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let error = read_ordinary(dir.path(), 10).expect_err("a directory");
        assert!(
            error
                .to_string()
                .contains("it is a directory, not an ordinary file"),
            "{error}"
        );
        let missing = dir.path().join("missing.txt");
        let error = read_ordinary(&missing, 10).expect_err("missing");
        assert!(matches!(error, PathError::NotFound { .. }), "{error}");
        assert!(error.to_string().contains("missing.txt"));
    }

    #[cfg(unix)]
    #[test]
    fn a_named_pipe_is_refused_without_blocking_on_it() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let fifo = dir.path().join("pipe");
        make_fifo(&fifo);
        let error = read_ordinary(&fifo, 10).expect_err("a pipe");
        assert!(error.to_string().contains("a named pipe"), "{error}");
    }
}
