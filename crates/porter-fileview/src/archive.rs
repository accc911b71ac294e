//! Archives, listed and never extracted.
//!
//! A zip is listed from its central directory alone: no entry is
//! decompressed (except the target of a small symbolic link), so a zip bomb
//! costs no more to list than its own bytes, and the sizes it declares are
//! reported, not believed. A tar is walked header by header through its
//! decompressor, and every byte that comes out passes a [`CappedReader`], so
//! no crafted tar can make the listing expand more than
//! `Options::archive_expanded_bytes`. Names are shown safely: control
//! characters become `?` and very long names are cut with their length noted.
//!
//! The listing has one entry per line: the path, a tab, then its size or
//! what it is ("directory", "symbolic link → target", …). The notes say what
//! the archive is and, when a limit stopped the listing, where and why.

use std::fmt::Write as _;
use std::io::{self, Cursor, Read};

use tar::{EntryType, GnuExtSparseHeader, Header};
use zip::ZipArchive;
use zip::result::ZipError;

use crate::bounds::{Cancel, CappedReader, Extracted, Failure, is_cap_error};
use crate::describe::{count as grouped, human_size};
use crate::options::Options;

/// `NAME_CHARS` is the most characters of a name (or link target) shown; a
/// longer one is cut and its length given, so that one hostile entry cannot
/// fill a window.
const NAME_CHARS: usize = 1024;
/// `LINK_TARGET_BYTES` is the largest zip symbolic link whose target is read:
/// a link target is a path, and a path longer than this is not worth
/// decompressing anything for.
const LINK_TARGET_BYTES: u64 = 4096;
/// `LINK_STORED_SLACK_BYTES` is how much larger than its target a link's
/// stored data may be (deflate framing of incompressible bytes) and still be
/// read.
const LINK_STORED_SLACK_BYTES: u64 = 64;
/// `BOMB_RATIO` is the ratio of declared content to file size above which a
/// zip is called out as a likely bomb: deflate cannot honestly do much better
/// than about 1000 to 1, even on zeros.
const BOMB_RATIO: u64 = 1000;
/// `ZIP_CANCEL_EVERY` is how many zip entries pass between cancel checks;
/// each entry costs a header read in memory, so a few hundred are still
/// prompt.
const ZIP_CANCEL_EVERY: usize = 256;
/// `TAR_BLOCK_BYTES` is the size of a tar header and the unit its data is
/// padded to.
const TAR_BLOCK_BYTES: usize = 512;
/// `TAR_EXTENSION_BYTES` is the most a GNU long name or a PAX extended header
/// may hold. They are read into memory whole, so without this bound a small
/// tar.gz could make the listing hold its whole expansion cap at once.
const TAR_EXTENSION_BYTES: u64 = 1024 * 1024;
/// `XZ_MEMORY_BYTES` is the most memory the xz decoder may use; `xz -9`
/// needs about 65 MiB, and an xz stream that declares a dictionary beyond
/// this is refused rather than allocated.
const XZ_MEMORY_BYTES: u64 = 256 * 1024 * 1024;
/// `ZSTD_WINDOW_LOG` is the largest zstd window (2^27 bytes, 128 MiB) the
/// decoder accepts, zstd's own default, named here so it is a decision.
const ZSTD_WINDOW_LOG: u32 = 27;
/// `SKIP_CHUNK_BYTES` is how much entry data is decompressed and dropped
/// between cancel checks while a tar entry's data is passed over.
const SKIP_CHUNK_BYTES: usize = 64 * 1024;

/// The compression around a tar (or around a single file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compression {
    None,
    Gzip,
    Bzip2,
    Xz,
    Zstd,
}

impl Compression {
    /// How a summary names a tar inside this compression.
    fn tar_archive(self) -> &'static str {
        match self {
            Self::None => "A tar archive",
            Self::Gzip => "A gzip-compressed tar archive",
            Self::Bzip2 => "A bzip2-compressed tar archive",
            Self::Xz => "An xz-compressed tar archive",
            Self::Zstd => "A zstd-compressed tar archive",
        }
    }

    /// The compression's name, for reasons ("its gzip data is damaged").
    fn name(self) -> &'static str {
        match self {
            Self::None => "tar",
            Self::Gzip => "gzip",
            Self::Bzip2 => "bzip2",
            Self::Xz => "xz",
            Self::Zstd => "zstd",
        }
    }
}

/// "1 entry" or "12,345 entries".
fn entries_phrase(n: usize) -> String {
    if n == 1 {
        "1 entry".to_owned()
    } else {
        format!("{} entries", grouped(n as u64))
    }
}

/// Whether `c` is shown as `?` in a name: control characters (a tab or a
/// newline would break the listing's lines) and the invisible bidirectional
/// marks that can make `exe.txt` look like `txt.exe`.
fn is_hidden_control(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
}

/// A name (or link target, as `what` says) made safe to show: control
/// characters as `?`, and cut after [`NAME_CHARS`] characters with its full
/// length noted.
fn shown(raw: &str, what: &str) -> String {
    let mut out = String::with_capacity(raw.len().min(NAME_CHARS * 4) + 32);
    let mut total = 0usize;
    for c in raw.chars() {
        if total < NAME_CHARS {
            out.push(if is_hidden_control(c) { '?' } else { c });
        }
        total += 1;
    }
    if total > NAME_CHARS {
        let _ = write!(out, "…({what} of {} characters)", grouped(total as u64));
    }
    out
}

/// [`shown`] for names that come as bytes of unknown encoding (tar).
fn shown_bytes(raw: &[u8], what: &str) -> String {
    shown(&String::from_utf8_lossy(raw), what)
}

/// Which limit of the listing itself was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Full {
    /// `Options::archive_entries` lines are listed and there is another.
    Entries,
    /// The next line would take the text past `Options::archive_listing_bytes`.
    Text,
}

/// `Listing` is the text being built, one line per entry, that refuses a
/// line once either of its limits would be passed.
struct Listing {
    text: String,
    entries: usize,
    max_entries: usize,
    max_bytes: usize,
}

impl Listing {
    fn new(options: &Options) -> Self {
        Self {
            text: String::new(),
            entries: 0,
            max_entries: options.archive_entries,
            max_bytes: options.archive_listing_bytes,
        }
    }

    /// Adds the line `name\twhat\n`, or says which limit it would pass.
    fn add(&mut self, name: &str, what: &str) -> Result<(), Full> {
        if self.entries >= self.max_entries {
            return Err(Full::Entries);
        }
        let grown = self.text.len() + name.len() + what.len() + 2;
        if grown > self.max_bytes {
            return Err(Full::Text);
        }
        self.text.push_str(name);
        self.text.push('\t');
        self.text.push_str(what);
        self.text.push('\n');
        self.entries += 1;
        Ok(())
    }

    /// The note for a listing stopped at `full`; `total` is the archive's
    /// entry count when it is known (zip), and `None` when it is not (tar).
    fn stop_note(&self, full: Full, total: Option<usize>) -> String {
        let rest = match total {
            Some(all) => format!("the archive has {} in all", entries_phrase(all)),
            None => "the archive has more".to_owned(),
        };
        let listed = entries_phrase(self.entries);
        match full {
            Full::Entries => format!("The listing stops after {listed}; {rest}."),
            Full::Text => format!(
                "The listing stops after {listed} because its text reached {}; {rest}.",
                human_size(self.max_bytes as u64)
            ),
        }
    }
}

// ---------------------------------------------------------------- zip

/// What a zip entry is, from its name and the unix mode it may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ZipKind {
    File,
    Directory,
    Symlink,
    CharDevice,
    BlockDevice,
    Fifo,
    Socket,
}

/// `ZipItem` is what the listing needs of one central directory entry,
/// copied out so the archive can be borrowed again.
struct ZipItem {
    name: String,
    kind: ZipKind,
    size: u64,
    compressed_size: u64,
    encrypted: bool,
}

impl ZipItem {
    fn of(entry: &zip::read::ZipFileEntry<'_>) -> Self {
        let name = match entry.name() {
            Ok(name) => shown(&name, "name"),
            Err(_) => shown_bytes(entry.name_raw(), "name"),
        };
        let kind = if entry.is_dir() {
            ZipKind::Directory
        } else {
            match entry.unix_mode().map(|mode| mode & 0o170_000) {
                Some(0o040_000) => ZipKind::Directory,
                Some(0o120_000) => ZipKind::Symlink,
                Some(0o020_000) => ZipKind::CharDevice,
                Some(0o060_000) => ZipKind::BlockDevice,
                Some(0o010_000) => ZipKind::Fifo,
                Some(0o140_000) => ZipKind::Socket,
                _ => ZipKind::File,
            }
        };
        Self {
            name,
            kind,
            size: entry.size(),
            compressed_size: entry.compressed_size(),
            encrypted: entry.encrypted(),
        }
    }
}

/// Lists a zip (jar, war, …) from its central directory, never decompressing
/// an entry's data beyond a small symbolic link's target. Declared sizes are
/// summed and reported; a total far beyond the file's size, or entries that
/// share stored data (the overlapping "non-recursive" zip bomb), are noted.
pub(crate) fn list_zip(
    bytes: &[u8],
    options: &Options,
    cancel: &Cancel,
) -> Result<Extracted, Failure> {
    cancel.check()?;
    let mut archive = ZipArchive::new(Cursor::new(bytes))
        .map_err(|error| Failure::Unreadable(zip_reason(&error)))?;
    let count = archive.len();
    let central_directory = archive.central_directory_start();

    let mut listing = Listing::new(options);
    let mut full = None;
    let mut declared: u64 = 0;
    let mut stored_ranges: Vec<(u64, u64)> = Vec::new();
    let mut damaged_headers = 0usize;
    for index in 0..count {
        if index % ZIP_CANCEL_EVERY == 0 {
            cancel.check()?;
        }
        let item = match archive.by_index_data(index) {
            Ok(entry) => ZipItem::of(&entry),
            Err(_) => continue,
        };
        declared = declared.saturating_add(item.size);
        // The raw view reads the entry's local header (to learn where its
        // data starts) but decompresses nothing.
        match archive.by_index_raw(index) {
            Ok(raw) => {
                if let Some(start) = raw.data_start().filter(|_| item.compressed_size > 0) {
                    stored_ranges.push((start, start.saturating_add(item.compressed_size)));
                }
            }
            Err(_) => damaged_headers += 1,
        }
        if full.is_none() {
            let what = zip_what(&mut archive, index, &item);
            if let Err(stop) = listing.add(&item.name, &what) {
                full = Some(stop);
            }
        }
    }
    cancel.check()?;

    let mut notes = Vec::new();
    if count == 0 {
        notes.push("An empty zip archive: it has no entries.".to_owned());
    } else {
        notes.push(format!(
            "A zip archive of {} ({} when expanded); it is listed, not extracted.",
            entries_phrase(count),
            human_size(declared)
        ));
    }
    if let Some(stop) = full {
        notes.push(listing.stop_note(stop, Some(count)));
    }
    if archive.has_duplicate_names() {
        notes.push(
            "Some entries repeat the name of an earlier entry; only one entry of each name is listed."
                .to_owned(),
        );
    }
    let overlapping = overlapping_ranges(&mut stored_ranges, central_directory);
    if overlapping > 0 {
        let who = if overlapping == 1 {
            "1 entry shares its stored data".to_owned()
        } else {
            format!(
                "{} entries share their stored data",
                grouped(overlapping as u64)
            )
        };
        notes.push(format!(
            "{who} with another entry, the mark of a zip bomb that expands the same bytes many times; it was listed, not expanded."
        ));
    }
    let file_size = bytes.len() as u64;
    if declared > options.archive_expanded_bytes || declared / file_size.max(1) > BOMB_RATIO {
        notes.push(format!(
            "The archive declares {} of content in {}; it was listed, not expanded.",
            human_size(declared),
            human_size(file_size)
        ));
    }
    if damaged_headers > 0 {
        notes.push(format!(
            "{} {} a damaged local header, so extracting {} would fail.",
            entries_phrase(damaged_headers),
            if damaged_headers == 1 { "has" } else { "have" },
            if damaged_headers == 1 { "it" } else { "them" }
        ));
    }
    Ok(Extracted {
        text: listing.text,
        notes,
    })
}

/// The part of a zip entry's line after the tab.
fn zip_what(archive: &mut ZipArchive<Cursor<&[u8]>>, index: usize, item: &ZipItem) -> String {
    match item.kind {
        ZipKind::Directory => "directory".to_owned(),
        ZipKind::Symlink if item.encrypted => "symbolic link, encrypted".to_owned(),
        ZipKind::Symlink => match zip_link_target(archive, index, item) {
            Some(target) => format!("symbolic link → {}", shown(&target, "target")),
            None => "symbolic link (its target is not shown)".to_owned(),
        },
        ZipKind::CharDevice => "character device".to_owned(),
        ZipKind::BlockDevice => "block device".to_owned(),
        ZipKind::Fifo => "named pipe (FIFO)".to_owned(),
        ZipKind::Socket => "socket".to_owned(),
        ZipKind::File if item.encrypted => format!("encrypted, {}", human_size(item.size)),
        ZipKind::File => human_size(item.size),
    }
}

/// A zip symbolic link's target, its stored data, read only when both its
/// declared and stored sizes are tiny and through a [`CappedReader`], so a
/// link cannot be a way to expand data.
fn zip_link_target(
    archive: &mut ZipArchive<Cursor<&[u8]>>,
    index: usize,
    item: &ZipItem,
) -> Option<String> {
    if item.size > LINK_TARGET_BYTES
        || item.compressed_size > LINK_TARGET_BYTES + LINK_STORED_SLACK_BYTES
    {
        return None;
    }
    let file = archive.by_index(index).ok()?;
    let mut target = Vec::new();
    CappedReader::new(file, item.size)
        .read_to_end(&mut target)
        .ok()?;
    Some(String::from_utf8_lossy(&target).into_owned())
}

/// How many stored-data ranges overlap another range or run into the
/// central directory. Sorts `ranges` in place.
fn overlapping_ranges(ranges: &mut [(u64, u64)], central_directory: u64) -> usize {
    ranges.sort_unstable();
    let mut reach = 0u64;
    let mut overlapping = 0usize;
    for (index, &(start, end)) in ranges.iter().enumerate() {
        // Sorted by start, a range overlaps a later one exactly when the
        // next one begins before it ends.
        let next_start = ranges.get(index + 1).map_or(u64::MAX, |next| next.0);
        if start < reach || next_start < end || end > central_directory {
            overlapping += 1;
        }
        reach = reach.max(end);
    }
    overlapping
}

/// Why the zip crate refused an archive, as a reason that completes "It is
/// not shown because …".
fn zip_reason(error: &ZipError) -> String {
    match error {
        // The end of central directory record is what a zip reader looks for
        // first; without it the bytes are a cut-short zip or no zip at all.
        ZipError::InvalidArchive(detail) if detail.contains("EOCD") => {
            "its zip structure is damaged: the index of entries a zip ends with is missing, as if the file were cut short".to_owned()
        }
        ZipError::InvalidArchive(detail) => {
            format!("its zip structure is damaged (the zip reader says: {detail})")
        }
        ZipError::UnsupportedArchive(detail) => {
            format!("it uses a zip feature that cannot be read (the zip reader says: {detail})")
        }
        ZipError::Io(io_error) => {
            format!("its zip structure could not be read (the zip reader says: {io_error})")
        }
        other => format!("it could not be read as a zip archive (the zip reader says: {other})"),
    }
}

// ---------------------------------------------------------------- tar

/// A reader of the decompressed bytes of `bytes`, or an error when the
/// decompressor cannot even be set up.
fn decoder(bytes: &[u8], compression: Compression) -> io::Result<Box<dyn Read + '_>> {
    Ok(match compression {
        Compression::None => Box::new(bytes),
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(bytes)),
        Compression::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(bytes)),
        Compression::Xz => {
            let stream = liblzma::stream::Stream::new_stream_decoder(
                XZ_MEMORY_BYTES,
                liblzma::stream::CONCATENATED,
            )
            .map_err(io::Error::other)?;
            Box::new(liblzma::bufread::XzDecoder::new_stream(bytes, stream))
        }
        Compression::Zstd => {
            let mut decoder = zstd::stream::read::Decoder::with_buffer(bytes)?;
            decoder.window_log_max(ZSTD_WINDOW_LOG)?;
            Box::new(decoder)
        }
    })
}

/// How a walk through a tar ended.
#[derive(Debug, Clone, PartialEq, Eq)]
enum TarEnd {
    /// The end-of-archive block, or the data ending at a header boundary.
    Finished,
    /// A limit of the listing itself.
    Full(Full),
    /// The caller raised the cancel flag.
    Cancelled,
    /// `Options::archive_expanded_bytes` of decompressed data were read.
    Expanded,
    /// The archive is damaged; the reason completes "because …".
    Broken(String),
}

/// `TarWalk` reads a tar's blocks through the capped decompressor.
struct TarWalk<'a> {
    reader: CappedReader<Box<dyn Read + 'a>>,
    compression: Compression,
    cancel: &'a Cancel,
    scratch: Vec<u8>,
}

impl TarWalk<'_> {
    /// Fills `block`: `Ok(true)` when a whole block was read, `Ok(false)`
    /// when the data ended before its first byte.
    fn read_block(&mut self, block: &mut [u8; TAR_BLOCK_BYTES]) -> Result<bool, TarEnd> {
        let filled = fill(&mut self.reader, block).map_err(|error| self.end_for(&error))?;
        match filled {
            0 => Ok(false),
            TAR_BLOCK_BYTES => Ok(true),
            _ => Err(truncated()),
        }
    }

    /// Reads and drops `amount` bytes of entry data, checking the cancel
    /// flag between chunks.
    fn skip(&mut self, mut amount: u64) -> Result<(), TarEnd> {
        if self.scratch.is_empty() {
            self.scratch = vec![0; SKIP_CHUNK_BYTES];
        }
        while amount > 0 {
            if self.cancel.is_cancelled() {
                return Err(TarEnd::Cancelled);
            }
            let want =
                usize::try_from(amount).map_or(SKIP_CHUNK_BYTES, |left| left.min(SKIP_CHUNK_BYTES));
            let read = match self.reader.read(&mut self.scratch[..want]) {
                Ok(0) => return Err(truncated()),
                Ok(read) => read,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(self.end_for(&error)),
            };
            amount -= read as u64;
        }
        Ok(())
    }

    /// Reads the data of a GNU long name or PAX header of `size` bytes (and
    /// its padding), refusing one over [`TAR_EXTENSION_BYTES`].
    fn read_extension(&mut self, size: u64) -> Result<Vec<u8>, TarEnd> {
        if size > TAR_EXTENSION_BYTES {
            return Err(TarEnd::Broken(format!(
                "an extended header declares {} bytes, more than the {} a name and its attributes may take",
                grouped(size),
                human_size(TAR_EXTENSION_BYTES)
            )));
        }
        let mut data = vec![0; size as usize];
        let filled = fill(&mut self.reader, &mut data).map_err(|error| self.end_for(&error))?;
        if filled < data.len() {
            return Err(truncated());
        }
        self.skip(padding(size))?;
        Ok(data)
    }

    /// How a read error ends the walk.
    fn end_for(&self, error: &io::Error) -> TarEnd {
        if is_cap_error(error) {
            TarEnd::Expanded
        } else if error.kind() == io::ErrorKind::UnexpectedEof {
            truncated()
        } else if is_memory_refusal(error) {
            TarEnd::Broken(format!(
                "its {} data needs more memory to decompress than a listing may take",
                self.compression.name()
            ))
        } else if self.compression == Compression::None {
            TarEnd::Broken("its data could not be read".to_owned())
        } else {
            TarEnd::Broken(format!("its {} data is damaged", self.compression.name()))
        }
    }
}

/// Whether a decompressor refused a stream for the memory it would need
/// (an xz dictionary over [`XZ_MEMORY_BYTES`], a zstd window over
/// 2^[`ZSTD_WINDOW_LOG`] bytes), rather than for damage.
fn is_memory_refusal(error: &io::Error) -> bool {
    let xz_limit = error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<liblzma::stream::Error>())
        .is_some_and(|inner| matches!(inner, liblzma::stream::Error::MemLimit));
    // zstd reports this only in its message.
    xz_limit || error.to_string().contains("too much memory")
}

/// The end of a walk through data that stops in the middle of a block.
fn truncated() -> TarEnd {
    TarEnd::Broken("the archive ends in the middle of an entry, as if it were cut short".to_owned())
}

/// Reads into `buf` until it is full or the data ends; the count read.
fn fill(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(filled)
}

/// The zero bytes after `size` bytes of data that reach the next block.
fn padding(size: u64) -> u64 {
    (TAR_BLOCK_BYTES as u64 - size % TAR_BLOCK_BYTES as u64) % TAR_BLOCK_BYTES as u64
}

/// An octal number field of a tar header (leading spaces, digits, then a
/// space or NUL), or `None` when it holds none.
fn octal_field(field: &[u8]) -> Option<u64> {
    let digits = field
        .iter()
        .skip_while(|&&b| b == b' ' || b == 0)
        .take_while(|&&b| b != b' ' && b != 0);
    let mut value: u64 = 0;
    let mut any = false;
    for &digit in digits {
        if !(b'0'..=b'7').contains(&digit) {
            return None;
        }
        value = value.checked_mul(8)?.checked_add(u64::from(digit - b'0'))?;
        any = true;
    }
    any.then_some(value)
}

/// Whether a header block's checksum field matches its bytes, summed as
/// unsigned (POSIX) or signed (some old tars) with the field itself counted
/// as spaces.
fn checksum_matches(block: &[u8; TAR_BLOCK_BYTES]) -> bool {
    const FIELD: std::ops::Range<usize> = 148..156;
    let Some(stored) = octal_field(&block[FIELD]) else {
        return false;
    };
    let mut unsigned: i64 = 0;
    let mut signed: i64 = 0;
    for (index, &byte) in block.iter().enumerate() {
        let (as_unsigned, as_signed) = if FIELD.contains(&index) {
            (32, 32)
        } else {
            (i64::from(byte), i64::from(byte.cast_signed()))
        };
        unsigned += as_unsigned;
        signed += as_signed;
    }
    i64::try_from(stored).is_ok_and(|stored| stored == unsigned || stored == signed)
}

/// Whether `block` is a tar header: its checksum matches, and it has the
/// ustar (or GNU) magic, or else looks like an old v7 header (a name, a
/// known type, a size).
fn looks_like_tar_header(block: &[u8; TAR_BLOCK_BYTES]) -> bool {
    if block.iter().all(|&b| b == 0) || !checksum_matches(block) {
        return false;
    }
    let magic = &block[257..263];
    if magic == b"ustar\0" || magic == b"ustar " {
        return true;
    }
    block[0] != 0
        && matches!(block[156], 0 | b'0'..=b'7')
        && octal_field(&block[124..136]).is_some()
}

/// Whether `bytes`, decompressed with `compression`, begin with a tar
/// header. At most one block is decompressed, so asking is cheap on any
/// input. With `Compression::None` it tells a plain tar by its bytes.
pub(crate) fn wraps_tar(bytes: &[u8], compression: Compression) -> bool {
    let Ok(decoder) = decoder(bytes, compression) else {
        return false;
    };
    let mut reader = CappedReader::new(decoder, TAR_BLOCK_BYTES as u64);
    let mut block = [0u8; TAR_BLOCK_BYTES];
    matches!(fill(&mut reader, &mut block), Ok(TAR_BLOCK_BYTES)) && looks_like_tar_header(&block)
}

/// `Extended` holds what GNU long-name and PAX headers said about the next
/// entry.
#[derive(Debug, Default)]
struct Extended {
    gnu_name: Option<Vec<u8>>,
    gnu_link: Option<Vec<u8>>,
    pax_path: Option<Vec<u8>>,
    pax_link: Option<Vec<u8>>,
    pax_size: Option<u64>,
    sparse_name: Option<Vec<u8>>,
    sparse_size: Option<u64>,
}

impl Extended {
    fn is_empty(&self) -> bool {
        self.gnu_name.is_none()
            && self.gnu_link.is_none()
            && self.pax_path.is_none()
            && self.pax_link.is_none()
            && self.pax_size.is_none()
            && self.sparse_name.is_none()
            && self.sparse_size.is_none()
    }

    /// Takes in the data of an extension header of type `kind`.
    fn absorb(&mut self, kind: EntryType, data: &[u8]) {
        let until_nul = |data: &[u8]| data.split(|&b| b == 0).next().unwrap_or_default().to_vec();
        match kind {
            EntryType::GNULongName => self.gnu_name = Some(until_nul(data)),
            EntryType::GNULongLink => self.gnu_link = Some(until_nul(data)),
            _ => {
                for (key, value) in pax_records(data) {
                    let number = || std::str::from_utf8(value).ok()?.parse::<u64>().ok();
                    match key {
                        b"path" => self.pax_path = Some(value.to_vec()),
                        b"linkpath" => self.pax_link = Some(value.to_vec()),
                        b"size" => self.pax_size = number(),
                        b"GNU.sparse.name" => self.sparse_name = Some(value.to_vec()),
                        b"GNU.sparse.realsize" | b"GNU.sparse.size" => self.sparse_size = number(),
                        _ => {}
                    }
                }
            }
        }
    }
}

/// The `key=value` records of PAX extended header data, each written as
/// "<length> <key>=<value>\n". Parsing stops at the first malformed record.
fn pax_records(data: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    let mut rest = data;
    std::iter::from_fn(move || {
        let space = rest.iter().position(|&b| b == b' ')?;
        let length: usize = std::str::from_utf8(&rest[..space]).ok()?.parse().ok()?;
        if length <= space + 1 || length > rest.len() {
            return None;
        }
        let record = rest[space + 1..length].strip_suffix(b"\n")?;
        rest = &rest[length..];
        let equals = record.iter().position(|&b| b == b'=')?;
        Some((&record[..equals], &record[equals + 1..]))
    })
}

/// Lists a tar, plain or inside gzip, bzip2, xz or zstd. The archive is
/// walked header by header; entry data is decompressed only to be passed
/// over, and never more than `Options::archive_expanded_bytes` in all.
/// GNU long names and PAX paths, link targets and sizes are honoured.
pub(crate) fn list_tar(
    bytes: &[u8],
    compression: Compression,
    options: &Options,
    cancel: &Cancel,
) -> Result<Extracted, Failure> {
    cancel.check()?;
    let decoder = decoder(bytes, compression).map_err(|_| {
        Failure::Unreadable(format!("its {} data cannot be decoded", compression.name()))
    })?;
    let mut walk = TarWalk {
        reader: CappedReader::new(decoder, options.archive_expanded_bytes),
        compression,
        cancel,
        scratch: Vec::new(),
    };
    let mut listing = Listing::new(options);
    let mut content: u64 = 0;
    let end = walk_tar(&mut walk, &mut listing, &mut content);

    let listed = listing.entries;
    let stop = match end {
        TarEnd::Cancelled => return Err(Failure::Cancelled),
        TarEnd::Finished if walk.reader.bytes_read() == 0 => {
            return Err(Failure::unreadable("it holds no tar data"));
        }
        TarEnd::Broken(reason) if listed == 0 => return Err(Failure::Unreadable(reason)),
        TarEnd::Expanded if listed == 0 => {
            return Err(Failure::Unreadable(format!(
                "its first {} of decompressed data hold no complete tar entry",
                human_size(options.archive_expanded_bytes)
            )));
        }
        TarEnd::Finished => None,
        TarEnd::Full(full) => Some(listing.stop_note(full, None)),
        TarEnd::Expanded => Some(format!(
            "The listing stops after {} because {} of decompressed data had been read; the archive may hold more.",
            entries_phrase(listed),
            human_size(options.archive_expanded_bytes)
        )),
        TarEnd::Broken(reason) => Some(format!(
            "The listing stops after {} because {reason}.",
            entries_phrase(listed)
        )),
    };
    let kind = compression.tar_archive();
    let notes = match stop {
        None if listed == 0 => vec![format!("{kind} with no entries.")],
        None => vec![format!(
            "{kind} of {} ({} of content); it is listed, not extracted.",
            entries_phrase(listed),
            human_size(content)
        )],
        Some(stop) => vec![format!("{kind}; it is listed, not extracted."), stop],
    };
    Ok(Extracted {
        text: listing.text,
        notes,
    })
}

/// Walks the tar, adding a line per entry to `listing` and the sizes of
/// regular files to `content`, until the archive ends or something stops it.
fn walk_tar(walk: &mut TarWalk<'_>, listing: &mut Listing, content: &mut u64) -> TarEnd {
    let mut extended = Extended::default();
    let mut block = [0u8; TAR_BLOCK_BYTES];
    loop {
        if walk.cancel.is_cancelled() {
            return TarEnd::Cancelled;
        }
        match walk.read_block(&mut block) {
            Ok(true) => {}
            Ok(false) if extended.is_empty() => return TarEnd::Finished,
            Ok(false) => return dangling_extension(),
            Err(end) => return end,
        }
        if block.iter().all(|&b| b == 0) {
            return if extended.is_empty() {
                TarEnd::Finished
            } else {
                dangling_extension()
            };
        }
        if !checksum_matches(&block) {
            return TarEnd::Broken(if listing.entries == 0 && extended.is_empty() {
                "it does not begin with a tar header".to_owned()
            } else {
                "a tar header is damaged (its checksum does not match)".to_owned()
            });
        }
        let header = Header::from_byte_slice(&block);
        let Ok(header_size) = header.entry_size() else {
            return TarEnd::Broken("a tar header has a size that cannot be read".to_owned());
        };
        let entry_type = header.entry_type();
        match entry_type {
            EntryType::GNULongName | EntryType::GNULongLink | EntryType::XHeader => {
                match walk.read_extension(header_size) {
                    Ok(data) => extended.absorb(entry_type, &data),
                    Err(end) => return end,
                }
                continue;
            }
            EntryType::XGlobalHeader => {
                let Some(padded) = header_size.checked_add(padding(header_size)) else {
                    return impossible_size();
                };
                if let Err(end) = walk.skip(padded) {
                    return end;
                }
                continue;
            }
            _ => {}
        }

        let stored = extended.pax_size.unwrap_or(header_size);
        let name = entry_name(&extended, header);
        let (what, file_size) =
            describe_entry(entry_type, &block, &name, &extended, header, stored);
        if let Err(full) = listing.add(&name, &what) {
            return TarEnd::Full(full);
        }
        *content = content.saturating_add(file_size);

        // An old-style GNU sparse entry may continue its map in extra blocks
        // between the header and the data.
        if entry_type.is_gnu_sparse()
            && header.as_gnu().is_some_and(tar::GnuHeader::is_extended)
            && let Err(end) = skip_sparse_map(walk)
        {
            return end;
        }

        let Some(padded) = stored.checked_add(padding(stored)) else {
            return impossible_size();
        };
        if let Err(end) = walk.skip(padded) {
            return end;
        }
        extended = Extended::default();
    }
}

/// The name an entry is shown under: a pax path or an old GNU sparse name
/// first, then a GNU long name, then the header's own.
fn entry_name(extended: &Extended, header: &Header) -> String {
    match extended
        .pax_path
        .as_deref()
        .or(extended.sparse_name.as_deref())
    {
        Some(path) => shown_bytes(path, "name"),
        None => match extended.gnu_name.as_deref() {
            Some(path) => shown_bytes(path, "name"),
            None => shown_bytes(&header.path_bytes(), "name"),
        },
    }
}

/// What an entry is, as the listing says it, and the bytes of content it
/// stands for.
fn describe_entry(
    entry_type: EntryType,
    block: &[u8; TAR_BLOCK_BYTES],
    name: &str,
    extended: &Extended,
    header: &Header,
    stored: u64,
) -> (String, u64) {
    let target = || {
        let raw = extended
            .pax_link
            .clone()
            .or_else(|| extended.gnu_link.clone())
            .or_else(|| header.link_name_bytes().map(std::borrow::Cow::into_owned))
            .unwrap_or_default();
        shown_bytes(&raw, "target")
    };
    match entry_type {
        EntryType::Regular if block[156] == 0 && name.ends_with('/') => ("directory".to_owned(), 0),
        EntryType::Regular | EntryType::Continuous => {
            let size = extended.sparse_size.unwrap_or(stored);
            (human_size(size), size)
        }
        EntryType::GNUSparse => {
            let size = extended
                .sparse_size
                .or_else(|| header.as_gnu().and_then(|gnu| gnu.real_size().ok()))
                .unwrap_or(stored);
            (format!("{}, sparse", human_size(size)), size)
        }
        EntryType::Directory => ("directory".to_owned(), 0),
        EntryType::Symlink => (format!("symbolic link → {}", target()), 0),
        EntryType::Link => (format!("hard link → {}", target()), 0),
        EntryType::Char => ("character device".to_owned(), 0),
        EntryType::Block => ("block device".to_owned(), 0),
        EntryType::Fifo => ("named pipe (FIFO)".to_owned(), 0),
        other => {
            let byte = other.as_byte();
            let what = if byte.is_ascii_graphic() {
                format!("entry of unknown type '{}'", char::from(byte))
            } else {
                format!("entry of unknown type {byte}")
            };
            (what, 0)
        }
    }
}

/// Skips the extra blocks in which an old-style GNU sparse entry continues
/// its map, between the header and the data.
fn skip_sparse_map(walk: &mut TarWalk<'_>) -> Result<(), TarEnd> {
    let mut block = [0u8; TAR_BLOCK_BYTES];
    loop {
        if walk.cancel.is_cancelled() {
            return Err(TarEnd::Cancelled);
        }
        match walk.read_block(&mut block) {
            Ok(true) => {}
            Ok(false) => return Err(truncated()),
            Err(end) => return Err(end),
        }
        let mut map = GnuExtSparseHeader::new();
        map.as_mut_bytes().copy_from_slice(&block);
        if !map.is_extended() {
            return Ok(());
        }
    }
}

/// The end of a walk where extension headers describe an entry that never
/// comes.
fn dangling_extension() -> TarEnd {
    TarEnd::Broken(
        "the archive ends right after an extended header, without the entry it describes"
            .to_owned(),
    )
}

/// The end of a walk at a size whose padding passes the largest number.
fn impossible_size() -> TarEnd {
    TarEnd::Broken("a tar header declares an impossible size".to_owned())
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::time::{Duration, Instant};

    use zip::write::SimpleFileOptions;
    use zip::{CompressionMethod, ZipWriter};

    use super::*;
    use porter_test::xorshift;

    /// Options with small archive limits, for tests at their edges.
    fn limits(entries: usize, listing_bytes: usize, expanded_bytes: u64) -> Options {
        Options {
            archive_entries: entries,
            archive_listing_bytes: listing_bytes,
            archive_expanded_bytes: expanded_bytes,
            ..Options::default()
        }
    }

    fn stored() -> SimpleFileOptions {
        SimpleFileOptions::default().compression_method(CompressionMethod::Stored)
    }

    fn deflated() -> SimpleFileOptions {
        SimpleFileOptions::default().compression_method(CompressionMethod::Deflated)
    }

    fn zip_of(build: impl FnOnce(&mut ZipWriter<Cursor<Vec<u8>>>)) -> Vec<u8> {
        let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
        build(&mut writer);
        writer
            .finish()
            .expect("an in-memory zip finishes")
            .into_inner()
    }

    fn zip_file(writer: &mut ZipWriter<Cursor<Vec<u8>>>, name: &str, data: &[u8]) {
        writer.start_file(name, stored()).expect("the entry starts");
        writer.write_all(data).expect("the entry is written");
    }

    fn zip_of_files(names: &[&str]) -> Vec<u8> {
        zip_of(|writer| {
            for name in names {
                zip_file(writer, name, b"x");
            }
        })
    }

    fn tar_of(build: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        build(&mut builder);
        builder.into_inner().expect("an in-memory tar finishes")
    }

    fn tar_header(kind: EntryType, size: u64) -> Header {
        let mut header = Header::new_gnu();
        header.set_entry_type(kind);
        header.set_size(size);
        header.set_mode(0o644);
        header
    }

    fn tar_file(builder: &mut tar::Builder<Vec<u8>>, name: &str, data: &[u8]) {
        let mut header = tar_header(EntryType::Regular, data.len() as u64);
        builder
            .append_data(&mut header, name, data)
            .expect("the entry is written");
    }

    fn tar_of_files(names: &[&str]) -> Vec<u8> {
        tar_of(|builder| {
            for name in names {
                tar_file(builder, name, b"x");
            }
        })
    }

    /// A PAX extended header's data holding `records`.
    fn pax_data(records: &[(&str, &[u8])]) -> Vec<u8> {
        let mut data = Vec::new();
        for (key, value) in records {
            let body = key.len() + value.len() + 3; // ' ', '=', '\n'
            let mut length = body + body.to_string().len();
            if length.to_string().len() != body.to_string().len() {
                length += 1;
            }
            data.extend_from_slice(format!("{length} {key}=").as_bytes());
            data.extend_from_slice(value);
            data.push(b'\n');
        }
        data
    }

    fn tar_pax(builder: &mut tar::Builder<Vec<u8>>, records: &[(&str, &[u8])]) {
        let data = pax_data(records);
        let mut header = Header::new_ustar();
        header.set_entry_type(EntryType::XHeader);
        header.set_size(data.len() as u64);
        header.set_path("PaxHeaders/x").expect("a short path fits");
        header.set_cksum();
        builder
            .append(&header, &data[..])
            .expect("the PAX header is written");
    }

    fn compress(data: &[u8], compression: Compression) -> Vec<u8> {
        match compression {
            Compression::None => data.to_vec(),
            Compression::Gzip => {
                let mut encoder =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                encoder.write_all(data).expect("gzip encodes in memory");
                encoder.finish().expect("gzip finishes in memory")
            }
            Compression::Bzip2 => {
                let mut encoder =
                    bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
                encoder.write_all(data).expect("bzip2 encodes in memory");
                encoder.finish().expect("bzip2 finishes in memory")
            }
            Compression::Xz => liblzma::encode_all(data, 1).expect("xz encodes in memory"),
            Compression::Zstd => zstd::stream::encode_all(data, 1).expect("zstd encodes in memory"),
        }
    }

    fn listed(result: Result<Extracted, Failure>) -> Extracted {
        result.expect("the archive is listed")
    }

    /// Every compression around a tar but none.
    const COMPRESSED: [Compression; 4] = [
        Compression::Gzip,
        Compression::Bzip2,
        Compression::Xz,
        Compression::Zstd,
    ];

    /// The listing of the zip in `bytes`, with the default options.
    fn zip_listing(bytes: &[u8]) -> Extracted {
        listed(list_zip(bytes, &Options::default(), &Cancel::new()))
    }

    /// The listing of the tar in `bytes` inside `compression`, with the
    /// default options.
    fn tar_listing(bytes: &[u8], compression: Compression) -> Extracted {
        listed(list_tar(
            bytes,
            compression,
            &Options::default(),
            &Cancel::new(),
        ))
    }

    fn lines(extracted: &Extracted) -> Vec<&str> {
        extracted.text.lines().collect()
    }

    fn has_note(extracted: &Extracted, part: &str) -> bool {
        extracted.notes.iter().any(|note| note.contains(part))
    }

    #[test]
    fn a_zip_lists_every_kind_of_entry_from_its_central_directory() {
        use zip::unstable::write::FileOptionsExt;
        let bytes = zip_of(|writer| {
            zip_file(writer, "a.txt", b"hello, world\n");
            writer
                .start_file("big.bin", deflated())
                .expect("the entry starts");
            writer
                .write_all(&[7u8; 5000])
                .expect("the entry is written");
            writer
                .add_directory("docs/", stored())
                .expect("the directory is added");
            writer
                .add_symlink("link", "a.txt", stored())
                .expect("the link is added");
            writer
                .add_symlink("deflated-link", "docs/a/b/c", deflated())
                .expect("the link is added");
            let secret = deflated()
                .with_deprecated_encryption(b"password")
                .expect("a password is accepted");
            writer
                .start_file("secret.txt", secret)
                .expect("the entry starts");
            writer
                .write_all(&[1u8; 2000])
                .expect("the entry is written");
            zip_file(writer, "one.txt", b"1");
        });
        let extracted = zip_listing(&bytes);
        assert_eq!(
            lines(&extracted),
            [
                "a.txt\t13 bytes",
                "big.bin\t4.9 KiB",
                "docs/\tdirectory",
                "link\tsymbolic link → a.txt",
                "deflated-link\tsymbolic link → docs/a/b/c",
                "secret.txt\tencrypted, 2 KiB",
                "one.txt\t1 byte",
            ]
        );
        assert_eq!(
            extracted.notes[0],
            "A zip archive of 7 entries (6.9 KiB when expanded); it is listed, not extracted."
        );
        assert_eq!(extracted.notes.len(), 1, "{:?}", extracted.notes);
    }

    #[test]
    fn a_zip_link_with_a_long_target_is_listed_without_reading_it() {
        let target = "t/".repeat(3000);
        let bytes = zip_of(|writer| {
            writer
                .add_symlink("far", &target, stored())
                .expect("the link is added");
        });
        let extracted = zip_listing(&bytes);
        assert_eq!(
            lines(&extracted),
            ["far\tsymbolic link (its target is not shown)"]
        );
    }

    #[test]
    fn an_empty_zip_is_listed_as_empty() {
        let extracted = zip_listing(&zip_of(|_| {}));
        assert_eq!(extracted.text, "");
        assert_eq!(
            extracted.notes,
            ["An empty zip archive: it has no entries."]
        );
    }

    #[test]
    fn names_show_control_characters_as_question_marks() {
        let cases: &[(&str, &str)] = &[
            ("tab\there.txt", "tab?here.txt"),
            ("new\nline.txt", "new?line.txt"),
            ("\u{1b}[31mred.txt", "?[31mred.txt"),
            ("del\u{7f}\u{85}.txt", "del??.txt"),
            ("photo\u{202e}gpj.exe", "photo?gpj.exe"),
            ("naïve café.txt", "naïve café.txt"),
        ];
        for &(raw, expected) in cases {
            assert_eq!(shown(raw, "name"), expected, "{raw:?}");
        }
        let bytes = zip_of(|writer| zip_file(writer, "a\nb\tc\r.txt", b""));
        assert_eq!(zip_listing(&bytes).text, "a?b?c?.txt\t0 bytes\n");
        let bytes = tar_of(|builder| {
            tar_pax(builder, &[("path", "x\ny\u{1b}.txt".as_bytes())]);
            tar_file(builder, "short", b"ab");
        });
        let extracted = tar_listing(&bytes, Compression::None);
        assert_eq!(extracted.text, "x?y?.txt\t2 bytes\n");
    }

    #[test]
    fn a_very_long_name_is_cut_with_its_length_noted() {
        let long = "a".repeat(5000);
        let expected = format!("{}…(name of 5,000 characters)", "a".repeat(NAME_CHARS));
        assert_eq!(shown(&long, "name"), expected);
        assert_eq!(
            shown(&"é".repeat(NAME_CHARS), "name"),
            "é".repeat(NAME_CHARS)
        );

        let bytes = zip_of(|writer| zip_file(writer, &long, b"abc"));
        let extracted = zip_listing(&bytes);
        assert_eq!(extracted.text, format!("{expected}\t3 bytes\n"));

        // The tar builder writes a name this long as a GNU long-name entry.
        let bytes = tar_of(|builder| tar_file(builder, &long, b"abc"));
        let extracted = tar_listing(&bytes, Compression::None);
        assert_eq!(extracted.text, format!("{expected}\t3 bytes\n"));
    }

    #[test]
    fn the_entry_limit_stops_a_listing_only_when_an_entry_is_left_out() {
        let names = ["a", "b", "c"];
        let zip = zip_of_files(&names);
        let tar = tar_of_files(&names);
        for (limit, stopped) in [(3, false), (2, true), (0, true)] {
            let options = limits(limit, usize::MAX, u64::MAX);
            let from_zip = listed(list_zip(&zip, &options, &Cancel::new()));
            let from_tar = listed(list_tar(&tar, Compression::None, &options, &Cancel::new()));
            assert_eq!(lines(&from_zip).len(), limit);
            assert_eq!(lines(&from_tar).len(), limit);
            let zip_note = format!(
                "The listing stops after {}; the archive has 3 entries in all.",
                entries_phrase(limit)
            );
            let tar_note = format!(
                "The listing stops after {}; the archive has more.",
                entries_phrase(limit)
            );
            assert_eq!(
                from_zip.notes.contains(&zip_note),
                stopped,
                "{limit}: {:?}",
                from_zip.notes
            );
            assert_eq!(
                from_tar.notes.contains(&tar_note),
                stopped,
                "{limit}: {:?}",
                from_tar.notes
            );
        }
    }

    #[test]
    fn the_listing_text_limit_stops_a_listing_at_its_exact_edge() {
        let names = ["first.txt", "second.txt", "third.txt"];
        let zip = zip_of_files(&names);
        let tar = tar_of_files(&names);
        let whole = "first.txt\t1 byte\nsecond.txt\t1 byte\nthird.txt\t1 byte\n".len();
        for (cap, shown_lines, stopped) in [(whole, 3, false), (whole - 1, 2, true), (0, 0, true)] {
            let options = limits(usize::MAX, cap, u64::MAX);
            for extracted in [
                listed(list_zip(&zip, &options, &Cancel::new())),
                listed(list_tar(&tar, Compression::None, &options, &Cancel::new())),
            ] {
                assert_eq!(lines(&extracted).len(), shown_lines, "cap {cap}");
                assert!(extracted.text.len() <= cap);
                assert_eq!(
                    has_note(&extracted, "because its text reached"),
                    stopped,
                    "cap {cap}: {:?}",
                    extracted.notes
                );
            }
        }
    }

    /// A zip of one stored entry whose central directory declares
    /// `declared` bytes instead of its real size.
    fn zip_declaring(declared: u32) -> Vec<u8> {
        let mut bytes = zip_of(|writer| zip_file(writer, "bomb.bin", b"small"));
        let central = bytes
            .windows(4)
            .rposition(|window| window == b"PK\x01\x02")
            .expect("the zip has a central directory entry");
        bytes[central + 24..central + 28].copy_from_slice(&declared.to_le_bytes());
        bytes
    }

    #[test]
    fn a_zip_declaring_a_huge_size_is_listed_with_a_bomb_note() {
        let bytes = zip_declaring(0xF000_0000);
        let started = Instant::now();
        let extracted = zip_listing(&bytes);
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(lines(&extracted), ["bomb.bin\t3.8 GiB"]);
        let note = format!(
            "The archive declares 3.8 GiB of content in {}; it was listed, not expanded.",
            human_size(bytes.len() as u64)
        );
        assert!(extracted.notes.contains(&note), "{:?}", extracted.notes);
    }

    #[test]
    fn the_bomb_note_follows_the_expanded_limit_at_its_edge() {
        let bytes = zip_declaring(100_000);
        for (cap, noted) in [(100_000, false), (99_999, true)] {
            let options = limits(usize::MAX, usize::MAX, cap);
            let extracted = listed(list_zip(&bytes, &options, &Cancel::new()));
            assert_eq!(
                has_note(&extracted, "it was listed, not expanded"),
                noted,
                "cap {cap}"
            );
        }
    }

    #[test]
    fn zip_entries_sharing_their_data_are_noted_as_a_bomb() {
        let bytes = zip_of(|writer| {
            writer
                .start_file("zeros", deflated())
                .expect("the entry starts");
            writer
                .write_all(&vec![0u8; 1 << 20])
                .expect("the entry is written");
            for copy in 0..2000 {
                writer
                    .shallow_copy_file("zeros", &format!("copy{copy}"))
                    .expect("the entry is copied");
            }
        });
        let started = Instant::now();
        let extracted = zip_listing(&bytes);
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(lines(&extracted).len(), 2001);
        assert!(
            has_note(&extracted, "2,001 entries share their stored data"),
            "{:?}",
            extracted.notes
        );
        assert!(
            has_note(&extracted, "The archive declares 2 GiB of content"),
            "{:?}",
            extracted.notes
        );
    }

    #[test]
    fn a_zip_with_a_damaged_local_header_or_a_repeated_name_is_listed_with_notes() {
        let mut bytes = zip_of_files(&["a", "b", "c"]);
        bytes[0] = b'X'; // the first local header's signature
        let central = bytes
            .windows(4)
            .rposition(|window| window == b"PK\x01\x02")
            .expect("the zip has a central directory entry");
        bytes[central + 46] = b'b'; // the last entry, "c", now repeats "b"
        let extracted = zip_listing(&bytes);
        assert_eq!(lines(&extracted), ["a\t1 byte", "b\t1 byte"]);
        assert!(
            extracted.notes.contains(&"Some entries repeat the name of an earlier entry; only one entry of each name is listed.".to_owned()),
            "{:?}",
            extracted.notes
        );
        assert!(
            extracted.notes.contains(
                &"1 entry has a damaged local header, so extracting it would fail.".to_owned()
            ),
            "{:?}",
            extracted.notes
        );
    }

    #[test]
    fn bytes_that_are_not_a_zip_are_unreadable_with_a_reason() {
        for bytes in [&b""[..], b"PK\x03\x04 not really", &[0u8; 4096]] {
            match list_zip(bytes, &Options::default(), &Cancel::new()) {
                Err(Failure::Unreadable(reason)) => {
                    assert!(
                        reason.starts_with("its zip structure is damaged"),
                        "{reason}"
                    );
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_tar_lists_every_kind_of_entry() {
        let bytes = tar_of(|builder| {
            tar_file(builder, "a.txt", b"hello, world\n");
            tar_file(builder, "big.bin", &[0u8; 5000]);
            builder
                .append_data(
                    &mut tar_header(EntryType::Directory, 0),
                    "docs/",
                    io::empty(),
                )
                .expect("the directory is written");
            builder
                .append_link(&mut tar_header(EntryType::Symlink, 0), "link", "a.txt")
                .expect("the link is written");
            builder
                .append_link(&mut tar_header(EntryType::Link, 0), "hard", "big.bin")
                .expect("the link is written");
            for (kind, name) in [
                (EntryType::Char, "null"),
                (EntryType::Block, "sda"),
                (EntryType::Fifo, "pipe"),
            ] {
                builder
                    .append_data(&mut tar_header(kind, 0), name, io::empty())
                    .expect("the special file is written");
            }
            let far = "far/".repeat(60);
            builder
                .append_link(&mut tar_header(EntryType::Symlink, 0), "long-link", &far)
                .expect("the long link is written");
            tar_pax(
                builder,
                &[("path", b"pax/a name set by PAX.txt"), ("size", b"3")],
            );
            tar_file(builder, "ignored-name", b"abc");
            tar_pax(builder, &[("linkpath", b"pax/target")]);
            builder
                .append_link(
                    &mut tar_header(EntryType::Symlink, 0),
                    "pax-link",
                    "ignored",
                )
                .expect("the link is written");
        });
        let extracted = tar_listing(&bytes, Compression::None);
        let long_link = format!("long-link\tsymbolic link → {}", "far/".repeat(60));
        assert_eq!(
            lines(&extracted),
            [
                "a.txt\t13 bytes",
                "big.bin\t4.9 KiB",
                "docs/\tdirectory",
                "link\tsymbolic link → a.txt",
                "hard\thard link → big.bin",
                "null\tcharacter device",
                "sda\tblock device",
                "pipe\tnamed pipe (FIFO)",
                &long_link,
                "pax/a name set by PAX.txt\t3 bytes",
                "pax-link\tsymbolic link → pax/target",
            ]
        );
        assert_eq!(
            extracted.notes,
            ["A tar archive of 11 entries (4.9 KiB of content); it is listed, not extracted."]
        );
    }

    #[test]
    fn a_tar_is_listed_through_each_compression() {
        let plain = tar_of(|builder| {
            tar_file(builder, "notes.txt", b"some words\n");
            tar_file(builder, "zeros.bin", &vec![0u8; 100_000]);
        });
        let cases = [
            (Compression::None, "A tar archive of 2 entries"),
            (
                Compression::Gzip,
                "A gzip-compressed tar archive of 2 entries",
            ),
            (
                Compression::Bzip2,
                "A bzip2-compressed tar archive of 2 entries",
            ),
            (Compression::Xz, "An xz-compressed tar archive of 2 entries"),
            (
                Compression::Zstd,
                "A zstd-compressed tar archive of 2 entries",
            ),
        ];
        for (compression, summary) in cases {
            let bytes = compress(&plain, compression);
            let extracted = tar_listing(&bytes, compression);
            assert_eq!(
                extracted.text, "notes.txt\t11 bytes\nzeros.bin\t97.7 KiB\n",
                "{compression:?}"
            );
            assert!(
                extracted.notes[0].starts_with(summary),
                "{compression:?}: {:?}",
                extracted.notes
            );
            assert_eq!(
                extracted.notes.len(),
                1,
                "{compression:?}: {:?}",
                extracted.notes
            );
        }
    }

    #[test]
    fn concatenated_compressed_streams_are_read_to_their_end() {
        let plain = tar_of_files(&["a", "b"]);
        // Two streams: the whole tar but for its end blocks, then the rest.
        let split = 3 * TAR_BLOCK_BYTES;
        for compression in COMPRESSED {
            let mut bytes = compress(&plain[..split], compression);
            bytes.extend(compress(&plain[split..], compression));
            let extracted = tar_listing(&bytes, compression);
            assert_eq!(
                lines(&extracted),
                ["a\t1 byte", "b\t1 byte"],
                "{compression:?}"
            );
        }
    }

    #[test]
    fn compressible_data_past_the_expanded_limit_stops_the_listing() {
        let plain = tar_of(|builder| {
            for name in ["one", "two", "three"] {
                tar_file(builder, name, &vec![0u8; 1 << 20]);
            }
        });
        let bytes = compress(&plain, Compression::Gzip);
        assert!(bytes.len() < 64 * 1024, "zeros compress well");
        let options = limits(usize::MAX, usize::MAX, 3 << 19);
        let extracted = listed(list_tar(
            &bytes,
            Compression::Gzip,
            &options,
            &Cancel::new(),
        ));
        assert_eq!(lines(&extracted), ["one\t1 MiB", "two\t1 MiB"]);
        assert_eq!(
            extracted.notes,
            [
                "A gzip-compressed tar archive; it is listed, not extracted.",
                "The listing stops after 2 entries because 1.5 MiB of decompressed data had been read; the archive may hold more.",
            ]
        );
    }

    #[test]
    fn the_expanded_limit_stops_a_tar_only_when_it_is_passed() {
        let plain = tar_of_files(&["a", "b"]);
        // Two headers and their data blocks, then the first end block.
        let walked = 5 * TAR_BLOCK_BYTES as u64;
        let bytes = compress(&plain, Compression::Gzip);
        for (cap, stopped) in [(walked, false), (walked - 1, true)] {
            let options = limits(usize::MAX, usize::MAX, cap);
            let extracted = listed(list_tar(
                &bytes,
                Compression::Gzip,
                &options,
                &Cancel::new(),
            ));
            assert_eq!(
                has_note(&extracted, "of decompressed data had been read"),
                stopped,
                "cap {cap}"
            );
            assert_eq!(lines(&extracted).len(), 2);
        }
    }

    #[test]
    fn a_truncated_compressed_tar_keeps_the_entries_read_so_far() {
        let plain = tar_of(|builder| {
            tar_file(builder, "first.txt", b"first");
            // Incompressible, and long enough to span several blocks of
            // every compression, so the first entries decode from half of it.
            let mut next = xorshift(0x2545_f491_4f6c_dd1d);
            let noise: Vec<u8> = (0..600_000).map(|_| next() as u8).collect();
            tar_file(builder, "noise.bin", &noise);
            tar_file(builder, "last.txt", b"last");
        });
        for compression in COMPRESSED.into_iter().chain([Compression::None]) {
            let bytes = compress(&plain, compression);
            let cut = &bytes[..bytes.len() / 2];
            let extracted = list_tar(cut, compression, &Options::default(), &Cancel::new())
                .unwrap_or_else(|failure| panic!("{compression:?}: {failure:?}"));
            assert_eq!(
                lines(&extracted),
                ["first.txt\t5 bytes", "noise.bin\t585.9 KiB"],
                "{compression:?}"
            );
            assert!(
                extracted.notes[1].starts_with("The listing stops after 2 entries because "),
                "{compression:?}: {:?}",
                extracted.notes
            );
        }
    }

    #[test]
    fn a_tar_cut_before_its_first_entry_is_unreadable() {
        let plain = tar_of_files(&["a"]);
        let gzip = compress(&plain, Compression::Gzip);
        let cases: Vec<(Vec<u8>, Compression)> = vec![
            (gzip[..12].to_vec(), Compression::Gzip),
            (
                b"\x1f\x8b\x08\x00garbage garbage garbage".to_vec(),
                Compression::Gzip,
            ),
            (plain[..300].to_vec(), Compression::None),
            (
                b"just some text, not a tar at all".repeat(40),
                Compression::None,
            ),
            (Vec::new(), Compression::None),
            (compress(b"", Compression::Xz), Compression::Xz),
        ];
        for (bytes, compression) in cases {
            match list_tar(&bytes, compression, &Options::default(), &Cancel::new()) {
                Err(Failure::Unreadable(reason)) => assert!(!reason.is_empty()),
                other => panic!("{compression:?} {} bytes: {other:?}", bytes.len()),
            }
        }
    }

    #[test]
    fn a_damaged_header_after_some_entries_is_noted() {
        let mut bytes = tar_of_files(&["a", "b", "c"]);
        bytes[2 * 2 * TAR_BLOCK_BYTES] ^= 0xff; // the name of the third header
        let extracted = tar_listing(&bytes, Compression::None);
        assert_eq!(lines(&extracted), ["a\t1 byte", "b\t1 byte"]);
        assert_eq!(
            extracted.notes[1],
            "The listing stops after 2 entries because a tar header is damaged (its checksum does not match)."
        );
    }

    #[test]
    fn an_empty_tar_is_listed_as_empty() {
        let bytes = tar_of(|_| {});
        let extracted = tar_listing(&bytes, Compression::None);
        assert_eq!(extracted.text, "");
        assert_eq!(extracted.notes, ["A tar archive with no entries."]);
    }

    #[test]
    fn an_extended_header_over_its_limit_stops_the_listing_without_being_read() {
        let long_name = |size: u64| {
            let mut header = tar_header(EntryType::GNULongName, size);
            header.set_path("././@LongLink").expect("a short path fits");
            header.set_cksum();
            header
        };
        // At the limit: a name of 1 MiB less its NUL is read, then cut.
        let at_limit = tar_of(|builder| {
            let mut name = vec![b'n'; TAR_EXTENSION_BYTES as usize - 1];
            name.push(0);
            builder
                .append(&long_name(TAR_EXTENSION_BYTES), &name[..])
                .expect("the long name is written");
            tar_file(builder, "short", b"abc");
        });
        let extracted = tar_listing(&at_limit, Compression::None);
        let expected = format!(
            "{}…(name of 1,048,575 characters)\t3 bytes\n",
            "n".repeat(NAME_CHARS)
        );
        assert_eq!(extracted.text, expected);

        // One byte over: refused from its header alone, so its data need not
        // even be there.
        let mut over = tar_of(|builder| tar_file(builder, "before.txt", b"b"));
        over.truncate(2 * TAR_BLOCK_BYTES);
        over.extend_from_slice(long_name(TAR_EXTENSION_BYTES + 1).as_bytes());
        let extracted = tar_listing(&over, Compression::None);
        assert_eq!(lines(&extracted), ["before.txt\t1 byte"]);
        assert_eq!(
            extracted.notes[1],
            "The listing stops after 1 entry because an extended header declares 1,048,577 bytes, more than the 1 MiB a name and its attributes may take."
        );
    }

    #[test]
    fn a_raised_cancel_flag_stops_a_listing() {
        let cancel = Cancel::new();
        cancel.cancel();
        let zip = zip_of_files(&["a"]);
        let tar = tar_of_files(&["a"]);
        assert_eq!(
            list_zip(&zip, &Options::default(), &cancel),
            Err(Failure::Cancelled)
        );
        assert_eq!(
            list_tar(&tar, Compression::None, &Options::default(), &cancel),
            Err(Failure::Cancelled)
        );
    }

    #[test]
    fn a_cancel_raised_while_a_tar_is_walked_stops_it_promptly() {
        /// A reader that raises the flag once some data has passed.
        struct Tripwire<'a> {
            inner: &'a [u8],
            cancel: &'a Cancel,
        }
        impl Read for Tripwire<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.inner.len() < 1 << 20 {
                    self.cancel.cancel();
                }
                self.inner.read(buf)
            }
        }
        let plain = tar_of(|builder| tar_file(builder, "big", &vec![0u8; 4 << 20]));
        let cancel = Cancel::new();
        let mut walk = TarWalk {
            reader: CappedReader::new(
                Box::new(Tripwire {
                    inner: &plain,
                    cancel: &cancel,
                }),
                u64::MAX,
            ),
            compression: Compression::None,
            cancel: &cancel,
            scratch: Vec::new(),
        };
        let mut listing = Listing::new(&Options::default());
        let end = walk_tar(&mut walk, &mut listing, &mut 0);
        assert_eq!(end, TarEnd::Cancelled);
        assert!(
            walk.reader.bytes_read() < (4 << 20) - (1 << 19),
            "it stopped inside the entry's data"
        );
    }

    #[test]
    fn wraps_tar_tells_a_tar_by_its_first_block() {
        let plain = tar_of_files(&["a"]);
        let mut v7 = [0u8; TAR_BLOCK_BYTES];
        v7[..5].copy_from_slice(b"old.c");
        v7[100..107].copy_from_slice(b"000644\0");
        v7[124..136].copy_from_slice(b"00000000001\0");
        v7[156] = b'0';
        let sum: u32 = v7.iter().map(|&b| u32::from(b)).sum::<u32>() + 8 * 32;
        v7[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
        let mut bad_sum = plain.clone();
        bad_sum[0] ^= 1;
        let text = b"hello, this is text and not a tar archive at all. ".repeat(20);
        let cases: Vec<(&str, Vec<u8>, Compression, bool)> = vec![
            ("plain tar", plain.clone(), Compression::None, true),
            ("v7 tar", v7.to_vec(), Compression::None, true),
            ("bad checksum", bad_sum, Compression::None, false),
            ("zeros", vec![0; 4096], Compression::None, false),
            ("short", plain[..511].to_vec(), Compression::None, false),
            ("not gzip", plain.clone(), Compression::Gzip, false),
            ("not xz", text.clone(), Compression::Xz, false),
        ];
        for compression in COMPRESSED {
            let bytes = compress(&plain, compression);
            assert!(wraps_tar(&bytes, compression), "{compression:?} tar");
        }
        for compression in [Compression::Gzip, Compression::Zstd] {
            let bytes = compress(&text, compression);
            assert!(!wraps_tar(&bytes, compression), "{compression:?} text");
        }
        for (what, bytes, compression, expected) in cases {
            assert_eq!(wraps_tar(&bytes, compression), expected, "{what}");
        }
    }

    #[test]
    fn an_xz_stream_that_needs_a_huge_dictionary_is_refused_before_it_is_allocated() {
        let mut bytes = compress(&tar_of_files(&["a"]), Compression::Xz);
        // The first block header follows the 12-byte stream header: its size
        // byte, its flags, then the LZMA2 filter (id 0x21, one property byte:
        // the dictionary size), padding, and a CRC32 of all that.
        let start = 12;
        let length = (usize::from(bytes[start]) + 1) * 4;
        let filter = bytes[start..start + length]
            .windows(2)
            .position(|pair| pair == [0x21, 0x01])
            .expect("the block uses LZMA2");
        bytes[start + filter + 2] = 40; // a 4 GiB dictionary
        let mut crc = flate2::Crc::new();
        crc.update(&bytes[start..start + length - 4]);
        bytes[start + length - 4..start + length].copy_from_slice(&crc.sum().to_le_bytes());

        let result = list_tar(&bytes, Compression::Xz, &Options::default(), &Cancel::new());
        assert_eq!(
            result,
            Err(Failure::unreadable(
                "its xz data needs more memory to decompress than a listing may take"
            ))
        );
    }

    #[test]
    fn mangled_archives_never_panic() {
        let tar = tar_of(|builder| {
            tar_file(builder, &"long/".repeat(40), b"data");
            tar_pax(builder, &[("path", b"p"), ("size", b"2")]);
            tar_file(builder, "x", b"ab");
            builder
                .append_link(&mut tar_header(EntryType::Symlink, 0), "l", "t")
                .expect("the link is written");
        });
        let zip = zip_of(|writer| {
            zip_file(writer, "a", b"hello");
            writer
                .add_symlink("l", "a", deflated())
                .expect("the link is added");
            writer
                .add_directory("d/", stored())
                .expect("the directory is added");
        });
        let mut fixtures = vec![(tar.clone(), Some(Compression::None))];
        for compression in COMPRESSED {
            fixtures.push((compress(&tar, compression), Some(compression)));
        }
        fixtures.push((zip, None));
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let options = limits(50, 4096, 1 << 20);
        for (bytes, compression) in &fixtures {
            for _ in 0..300 {
                let mut mangled = bytes.clone();
                for _ in 0..=next() % 4 {
                    let at = (next() % mangled.len() as u64) as usize;
                    mangled[at] = next() as u8;
                }
                if next().is_multiple_of(4) {
                    mangled.truncate((next() % mangled.len() as u64) as usize);
                }
                match compression {
                    Some(compression) => {
                        let _ = wraps_tar(&mangled, *compression);
                        let _ = list_tar(&mangled, *compression, &options, &Cancel::new());
                    }
                    None => {
                        let _ = list_zip(&mangled, &options, &Cancel::new());
                    }
                }
            }
        }
    }

    #[test]
    fn pax_records_are_read_by_their_lengths() {
        let data = pax_data(&[("path", b"a\nb"), ("size", b"12"), ("mtime", b"1.5")]);
        let records: Vec<_> = pax_records(&data).collect();
        assert_eq!(
            records,
            [
                (&b"path"[..], &b"a\nb"[..]),
                (b"size", b"12"),
                (b"mtime", b"1.5")
            ]
        );
        assert_eq!(pax_records(b"99 path=x\n").count(), 0);
        assert_eq!(pax_records(b"0 \n").count(), 0);
        assert_eq!(pax_records(b"x path=y\n").count(), 0);
    }
}
