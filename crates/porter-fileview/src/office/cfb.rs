//! Compound File Binary (the OLE container of legacy Office files): just
//! enough to take one stream out, with every chain checked.
//!
//! Nothing a file declares is trusted: sector numbers must lie inside the
//! file, chains may not loop or run longer than the file has sectors, and a
//! stream is never larger than the bytes its chain covers. So taking a
//! stream out costs at most about the file's own size in memory and time.

use crate::bounds::Failure;

const SIGNATURE: [u8; 8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];
const END_OF_CHAIN: u32 = 0xFFFF_FFFE;
const FREE_SECTOR: u32 = 0xFFFF_FFFF;
/// The highest ordinary sector number; larger ones are markers.
const MAX_SECTOR: u32 = 0xFFFF_FFFA;
const HEADER_BYTES: usize = 512;
const DIRECTORY_ENTRY_BYTES: usize = 128;
const MINI_SECTOR_BYTES: usize = 64;
const HEADER_DIFAT_ENTRIES: usize = 109;

/// Whether `bytes` start like a compound file.
pub(crate) fn is_compound_file(bytes: &[u8]) -> bool {
    bytes.starts_with(&SIGNATURE)
}

/// The content of the first stream named one of `names` (ASCII case
/// ignored), in order of preference; `Ok(None)` when the file has none.
pub(crate) fn stream(bytes: &[u8], names: &[&str]) -> Result<Option<(String, Vec<u8>)>, Failure> {
    let file = Compound::open(bytes)?;
    let entries = file.directory()?;
    for wanted in names {
        if let Some(entry) = entries.iter().find(|entry| {
            entry.kind == EntryKind::Stream && entry.name.eq_ignore_ascii_case(wanted)
        }) {
            let content = file.stream_of(entry, &entries)?;
            return Ok(Some((entry.name.clone(), content)));
        }
    }
    Ok(None)
}

/// The reason for a compound file whose structure does not hold together.
fn broken(what: &str) -> Failure {
    Failure::unreadable(format!("its compound file structure is damaged ({what})"))
}

/// The little-endian `u16` at `at`, or 0 past the end (a damaged header
/// then fails a later check instead of panicking here).
fn u16_at(bytes: &[u8], at: usize) -> u16 {
    bytes
        .get(at..at + 2)
        .map_or(0, |b| u16::from_le_bytes([b[0], b[1]]))
}

/// The little-endian `u32` at `at`, or 0 past the end.
fn u32_at(bytes: &[u8], at: usize) -> u32 {
    bytes
        .get(at..at + 4)
        .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EntryKind {
    Stream,
    Root,
    Other,
}

/// One directory entry: a stream's name, kind, first sector and size.
#[derive(Debug, Clone)]
struct Entry {
    name: String,
    kind: EntryKind,
    start: u32,
    size: u64,
}

/// An opened compound file: its sectors and allocation table.
struct Compound<'a> {
    bytes: &'a [u8],
    sector_bytes: usize,
    sectors: usize,
    fat: Vec<u32>,
    directory_start: u32,
    mini_cutoff: u64,
    mini_fat_start: u32,
}

impl<'a> Compound<'a> {
    /// Checks the header and loads the allocation table.
    fn open(bytes: &'a [u8]) -> Result<Self, Failure> {
        if bytes.len() < HEADER_BYTES || !is_compound_file(bytes) {
            return Err(Failure::unreadable("it is not a compound (OLE) file"));
        }
        let shift = u16_at(bytes, 0x1E);
        let sector_bytes = match shift {
            9 => 512,
            12 => 4096,
            _ => return Err(broken("its sector size is not 512 or 4096 bytes")),
        };
        if u16_at(bytes, 0x20) != 6 {
            return Err(broken("its mini sector size is not 64 bytes"));
        }
        let sectors = bytes.len().saturating_sub(sector_bytes) / sector_bytes;
        let mut file = Self {
            bytes,
            sector_bytes,
            sectors,
            fat: Vec::new(),
            directory_start: u32_at(bytes, 0x30),
            mini_cutoff: u64::from(u32_at(bytes, 0x38)),
            mini_fat_start: u32_at(bytes, 0x3C),
        };

        // The allocation table's own sectors: 109 in the header, more in a
        // chain of DIFAT sectors, each ending with the next one's number.
        let mut fat_sectors: Vec<u32> = (0..HEADER_DIFAT_ENTRIES)
            .map(|index| u32_at(bytes, 0x4C + index * 4))
            .filter(|&id| id <= MAX_SECTOR)
            .collect();
        let mut difat = u32_at(bytes, 0x44);
        let mut seen = vec![false; sectors];
        let per_sector = sector_bytes / 4;
        while difat <= MAX_SECTOR {
            let sector = file.sector(difat)?;
            if std::mem::replace(&mut seen[difat as usize], true) {
                return Err(broken("its DIFAT chain loops"));
            }
            for index in 0..per_sector - 1 {
                let id = u32_at(sector, index * 4);
                if id <= MAX_SECTOR {
                    fat_sectors.push(id);
                }
            }
            difat = u32_at(sector, (per_sector - 1) * 4);
        }
        if fat_sectors.len() > sectors {
            return Err(broken(
                "it lists more allocation sectors than it has sectors",
            ));
        }
        let mut fat = Vec::with_capacity(fat_sectors.len() * per_sector);
        for id in fat_sectors {
            let sector = file.sector(id)?;
            fat.extend((0..per_sector).map(|index| u32_at(sector, index * 4)));
        }
        file.fat = fat;
        Ok(file)
    }

    /// The bytes of sector `id`, which must lie wholly inside the file.
    fn sector(&self, id: u32) -> Result<&'a [u8], Failure> {
        let index = id as usize;
        if index >= self.sectors {
            return Err(broken("a sector number points past the end of the file"));
        }
        let start = (index + 1) * self.sector_bytes;
        self.bytes
            .get(start..start + self.sector_bytes)
            .ok_or_else(|| broken("a sector number points past the end of the file"))
    }

    /// The sectors of the chain starting at `start` in `table`, checked to
    /// stay in `limit` entries and never to loop.
    fn chain(table: &[u32], start: u32, limit: usize) -> Result<Vec<u32>, Failure> {
        let mut chain = Vec::new();
        let mut seen = vec![false; limit.min(table.len())];
        let mut id = start;
        while id != END_OF_CHAIN && id != FREE_SECTOR {
            let index = id as usize;
            if index >= seen.len() {
                return Err(broken("a chain points outside its table"));
            }
            if std::mem::replace(&mut seen[index], true) {
                return Err(broken("a chain of sectors loops"));
            }
            chain.push(id);
            id = table[index];
        }
        Ok(chain)
    }

    /// The bytes of a chain in the main allocation table, at most `size`.
    fn read_chain(&self, start: u32, size: u64) -> Result<Vec<u8>, Failure> {
        let chain = Self::chain(&self.fat, start, self.sectors)?;
        let covered = (chain.len() * self.sector_bytes) as u64;
        let wanted = size.min(covered) as usize;
        let mut out = Vec::with_capacity(wanted);
        for id in chain {
            if out.len() >= wanted {
                break;
            }
            let sector = self.sector(id)?;
            let take = (wanted - out.len()).min(sector.len());
            out.extend_from_slice(&sector[..take]);
        }
        Ok(out)
    }

    /// Every directory entry, the root first.
    fn directory(&self) -> Result<Vec<Entry>, Failure> {
        let raw = self.read_chain(self.directory_start, u64::MAX)?;
        let mut entries = Vec::new();
        for chunk in raw.chunks_exact(DIRECTORY_ENTRY_BYTES) {
            let name_bytes = usize::from(u16_at(chunk, 0x40)).min(64);
            let units: Vec<u16> = chunk[..name_bytes]
                .chunks_exact(2)
                .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
                .take_while(|&unit| unit != 0)
                .collect();
            let kind = match chunk[0x42] {
                2 => EntryKind::Stream,
                5 => EntryKind::Root,
                _ => EntryKind::Other,
            };
            let size = if self.sector_bytes == 512 {
                u64::from(u32_at(chunk, 0x78))
            } else {
                u64::from(u32_at(chunk, 0x78)) | (u64::from(u32_at(chunk, 0x7C)) << 32)
            };
            entries.push(Entry {
                name: String::from_utf16_lossy(&units),
                kind,
                start: u32_at(chunk, 0x74),
                size,
            });
        }
        if entries
            .first()
            .is_none_or(|root| root.kind != EntryKind::Root)
        {
            return Err(broken("it has no root entry"));
        }
        Ok(entries)
    }

    /// A stream's bytes: from the mini stream when it is small, else from
    /// ordinary sectors. A stream that declares more than its chain holds
    /// is cut to what is there.
    fn stream_of(&self, entry: &Entry, entries: &[Entry]) -> Result<Vec<u8>, Failure> {
        if entry.size >= self.mini_cutoff {
            return self.read_chain(entry.start, entry.size);
        }
        let root = &entries[0];
        let mini_stream = self.read_chain(root.start, root.size)?;
        let mini_fat_bytes = self.read_chain(self.mini_fat_start, u64::MAX)?;
        let mini_fat: Vec<u32> = mini_fat_bytes
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let mini_sectors = mini_stream.len() / MINI_SECTOR_BYTES;
        let chain = Self::chain(&mini_fat, entry.start, mini_sectors)?;
        let wanted = entry.size.min((chain.len() * MINI_SECTOR_BYTES) as u64) as usize;
        let mut out = Vec::with_capacity(wanted);
        for id in chain {
            if out.len() >= wanted {
                break;
            }
            let start = id as usize * MINI_SECTOR_BYTES;
            let sector = mini_stream
                .get(start..start + MINI_SECTOR_BYTES)
                .ok_or_else(|| broken("a mini sector lies past the mini stream"))?;
            let take = (wanted - out.len()).min(MINI_SECTOR_BYTES);
            out.extend_from_slice(&sector[..take]);
        }
        Ok(out)
    }
}

// Fixtures are literal XML and bytes put together with `format!`, which
// reads more plainly here than a chain of `write!` calls.
#[allow(clippy::format_collect, clippy::format_push_string)]
#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A compound file of 512-byte sectors holding one stream `name` with
    /// `content`; a content under 4096 bytes goes in the mini stream.
    pub(crate) fn compound_of(name: &str, content: &[u8]) -> Vec<u8> {
        let sector = 512;
        let mini = content.len() < 4096;
        // Layout: sector 0 FAT, 1 directory, 2 mini FAT, then data.
        let data: Vec<u8> = if mini {
            let mut padded = content.to_vec();
            padded.resize(content.len().div_ceil(64) * 64, 0);
            padded
        } else {
            content.to_vec()
        };
        let data_sectors = data.len().div_ceil(sector).max(1);
        assert!(
            data_sectors + 3 <= 128,
            "one FAT sector is enough for tests"
        );
        let mut fat = vec![FREE_SECTOR; 128];
        fat[0] = 0xFFFF_FFFD;
        fat[1] = END_OF_CHAIN;
        fat[2] = END_OF_CHAIN;
        for index in 0..data_sectors {
            fat[3 + index] = if index + 1 == data_sectors {
                END_OF_CHAIN
            } else {
                (4 + index) as u32
            };
        }
        let mut mini_fat = vec![FREE_SECTOR; 128];
        let mini_sectors = if mini { data.len() / 64 } else { 0 };
        for (index, slot) in mini_fat.iter_mut().enumerate().take(mini_sectors) {
            *slot = if index + 1 == mini_sectors {
                END_OF_CHAIN
            } else {
                (index + 1) as u32
            };
        }

        let mut header = vec![0u8; 512];
        header[..8].copy_from_slice(&SIGNATURE);
        header[0x18..0x1A].copy_from_slice(&0x3Eu16.to_le_bytes());
        header[0x1A..0x1C].copy_from_slice(&3u16.to_le_bytes());
        header[0x1C..0x1E].copy_from_slice(&0xFFFEu16.to_le_bytes());
        header[0x1E..0x20].copy_from_slice(&9u16.to_le_bytes());
        header[0x20..0x22].copy_from_slice(&6u16.to_le_bytes());
        header[0x2C..0x30].copy_from_slice(&1u32.to_le_bytes());
        header[0x30..0x34].copy_from_slice(&1u32.to_le_bytes());
        header[0x38..0x3C].copy_from_slice(&4096u32.to_le_bytes());
        header[0x3C..0x40].copy_from_slice(&(if mini { 2u32 } else { END_OF_CHAIN }).to_le_bytes());
        header[0x40..0x44].copy_from_slice(&u32::from(mini).to_le_bytes());
        header[0x44..0x48].copy_from_slice(&END_OF_CHAIN.to_le_bytes());
        for index in 0..HEADER_DIFAT_ENTRIES {
            let id = if index == 0 { 0 } else { FREE_SECTOR };
            header[0x4C + index * 4..0x50 + index * 4].copy_from_slice(&id.to_le_bytes());
        }

        let entry = |name: &str, kind: u8, start: u32, size: u32, child: u32| {
            let mut raw = vec![0u8; 128];
            let units: Vec<u16> = name.encode_utf16().chain([0]).collect();
            for (index, unit) in units.iter().enumerate() {
                raw[index * 2..index * 2 + 2].copy_from_slice(&unit.to_le_bytes());
            }
            raw[0x40..0x42].copy_from_slice(&((units.len() * 2) as u16).to_le_bytes());
            raw[0x42] = kind;
            raw[0x44..0x48].copy_from_slice(&FREE_SECTOR.to_le_bytes());
            raw[0x48..0x4C].copy_from_slice(&FREE_SECTOR.to_le_bytes());
            raw[0x4C..0x50].copy_from_slice(&child.to_le_bytes());
            raw[0x74..0x78].copy_from_slice(&start.to_le_bytes());
            raw[0x78..0x7C].copy_from_slice(&size.to_le_bytes());
            raw
        };
        let (root_start, root_size, stream_start) = if mini {
            (3, data.len() as u32, 0)
        } else {
            (END_OF_CHAIN, 0, 3)
        };
        let mut directory = entry("Root Entry", 5, root_start, root_size, 1);
        directory.extend(entry(
            name,
            2,
            stream_start,
            content.len() as u32,
            FREE_SECTOR,
        ));
        directory.resize(512, 0);

        let mut file = header;
        file.extend(fat.iter().flat_map(|id| id.to_le_bytes()));
        file.extend(directory);
        file.extend(mini_fat.iter().flat_map(|id| id.to_le_bytes()));
        let mut data = data;
        data.resize(data_sectors * sector, 0);
        file.extend(data);
        file
    }

    #[test]
    fn a_stream_comes_out_of_ordinary_and_mini_sectors() {
        for size in [10, 4095, 4096, 20_000] {
            let content: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            let file = compound_of("Workbook", &content);
            let (name, got) = stream(&file, &["Workbook"])
                .expect("a well-formed file")
                .expect("the stream is there");
            assert_eq!(name, "Workbook");
            assert_eq!(got, content, "{size} bytes");
        }
    }

    #[test]
    fn looping_or_outside_chains_are_refused() {
        let content = vec![1u8; 5000];
        let mut looping = compound_of("Workbook", &content);
        // FAT entry of the stream's first sector (3) points back at itself.
        let fat_at = 512 + 3 * 4;
        looping[fat_at..fat_at + 4].copy_from_slice(&3u32.to_le_bytes());
        let reason = stream(&looping, &["Workbook"]).expect_err("a loop is refused");
        assert!(
            matches!(&reason, Failure::Unreadable(r) if r.contains("loops")),
            "{reason:?}"
        );

        let mut outside = compound_of("Workbook", &content);
        outside[fat_at..fat_at + 4].copy_from_slice(&9_999u32.to_le_bytes());
        assert!(stream(&outside, &["Workbook"]).is_err());

        assert!(stream(&content, &["Workbook"]).is_err());
        assert!(stream(&looping[..600], &["Workbook"]).is_err());
    }
}
