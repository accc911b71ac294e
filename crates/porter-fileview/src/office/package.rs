//! An Office package: a zip of XML parts tied together by relationships.
//!
//! Every part is read through a [`CappedReader`] whose cap is what is left of
//! `Options::office_xml_bytes`, so all the parts of one package together
//! never decompress past it, whatever sizes the zip declares.

use std::collections::HashMap;
use std::io::{BufReader, Cursor};

use quick_xml::events::BytesStart;
use zip::ZipArchive;
use zip::read::ZipFile;

use super::xml::{Node, Xml, attribute, local, named};
use crate::bounds::{Cancel, CappedReader, Failure, is_cap_error};
use crate::describe::human_size;
use crate::options::Options;

/// The reader a part is parsed from: the zip entry, capped, buffered.
pub(crate) type PartSource<'z, 'a> = BufReader<CappedReader<ZipFile<'z, Cursor<&'a [u8]>>>>;

/// The relationship type suffix of a package's main part.
pub(crate) const OFFICE_DOCUMENT: &str = "/officeDocument";

/// `Rel` is one relationship of a part: its id, its type (a URI) and the
/// part it points at, already resolved to a zip entry name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rel {
    /// The id parts refer to it by (`rId3`).
    pub id: String,
    /// The relationship type URI.
    pub kind: String,
    /// The zip entry name of the target part (no leading `/`).
    pub target: String,
}

/// `Package` is an open Office zip with the budget of decompressed XML
/// still allowed.
pub(crate) struct Package<'a> {
    zip: ZipArchive<Cursor<&'a [u8]>>,
    xml_cap: u64,
    xml_left: u64,
    max_depth: usize,
}

impl<'a> Package<'a> {
    /// Opens `bytes` as a zip.
    pub(crate) fn open(bytes: &'a [u8], options: &Options) -> Result<Self, Failure> {
        let zip = ZipArchive::new(Cursor::new(bytes)).map_err(|error| {
            Failure::unreadable(format!("it is not a readable zip package ({error})"))
        })?;
        Ok(Self {
            zip,
            xml_cap: options.office_xml_bytes,
            xml_left: options.office_xml_bytes,
            max_depth: options.xml_depth,
        })
    }

    /// Opens `bytes` as a zip to be read, refusing one whose entries share
    /// compressed data (a way to make a small zip expand enormously).
    pub(crate) fn open_checked(bytes: &'a [u8], options: &Options) -> Result<Self, Failure> {
        let mut package = Self::open(bytes, options)?;
        match package.zip.has_overlapping_files() {
            Ok(false) => Ok(package),
            Ok(true) => Err(Failure::unreadable(
                "its zip entries overlap one another, as in a zip bomb",
            )),
            Err(error) => Err(Failure::unreadable(format!(
                "it is not a readable zip package ({error})"
            ))),
        }
    }

    /// The content of the `mimetype` entry that marks an `OpenDocument`
    /// package, trimmed; `None` when there is none or it is not short text.
    pub(crate) fn mimetype(&mut self) -> Option<String> {
        const MIMETYPE_BYTES: u64 = 256;
        let index = self.zip.index_for_name("mimetype")?;
        let entry = self.zip.by_index(index).ok()?;
        let mut content = Vec::new();
        let mut capped = CappedReader::new(entry, MIMETYPE_BYTES);
        std::io::Read::read_to_end(&mut capped, &mut content).ok()?;
        String::from_utf8(content)
            .ok()
            .map(|text| text.trim().to_owned())
    }

    /// The index of the entry named `name`: exactly, else ignoring ASCII
    /// case as part names do.
    pub(crate) fn find(&self, name: &str) -> Option<usize> {
        if let Some(index) = self.zip.index_for_name(name) {
            return Some(index);
        }
        let found = self
            .zip
            .file_names()
            .filter_map(Result::ok)
            .find(|entry| entry.eq_ignore_ascii_case(name))?
            .into_owned();
        self.zip.index_for_name(&found)
    }

    /// Parses the part `name` with `read`, or `None` when there is no such
    /// part. What is decompressed counts against the package's budget.
    pub(crate) fn read<T>(
        &mut self,
        name: &str,
        read: impl for<'z> FnOnce(&mut Xml<PartSource<'z, 'a>>) -> Result<T, Failure>,
    ) -> Result<Option<T>, Failure> {
        let Some(index) = self.find(name) else {
            return Ok(None);
        };
        if self.xml_left == 0 {
            return Err(self.over_budget());
        }
        let entry = self.zip.by_index(index).map_err(|error| {
            Failure::unreadable(format!(
                "its part {name} cannot be read from the zip ({error})"
            ))
        })?;
        let source = BufReader::new(CappedReader::new(entry, self.xml_left));
        let mut xml = Xml::new(source, name, self.max_depth, self.xml_cap);
        let result = read(&mut xml);
        let used = xml.source().get_ref().bytes_read();
        self.xml_left = self.xml_left.saturating_sub(used);
        result.map(Some)
    }

    /// The relationships of the part `part` (from `dir/_rels/name.rels`),
    /// internal targets only, resolved to entry names. A part without a
    /// relationships part has none.
    pub(crate) fn relationships(&mut self, part: &str) -> Result<Vec<Rel>, Failure> {
        self.each_relationship(part, |start, part, dir, rels: &mut Vec<Rel>| {
            let id = attribute(start, part, |k| k == "Id")?;
            let kind = attribute(start, part, |k| k == "Type")?;
            let target = attribute(start, part, |k| k == "Target")?;
            let mode = attribute(start, part, |k| k == "TargetMode")?;
            let external = mode.is_some_and(|m| m.eq_ignore_ascii_case("External"));
            if let (Some(id), Some(kind), Some(target), false) = (id, kind, target, external) {
                rels.push(Rel {
                    id,
                    kind,
                    target: resolve(dir, &target),
                });
            }
            Ok(())
        })
    }

    /// The hyperlinks of the part `part`: relationship id to target, as
    /// written (an external URL, or a path inside the package). Unlike
    /// [`Package::relationships`] this keeps external targets, since a
    /// hyperlink's whole point is where it leads.
    pub(crate) fn hyperlinks(&mut self, part: &str) -> Result<HashMap<String, String>, Failure> {
        self.each_relationship(
            part,
            |start, part, _, links: &mut HashMap<String, String>| {
                let kind = attribute(start, part, |k| k == "Type")?;
                if !kind.is_some_and(|k| k.ends_with("/hyperlink")) {
                    return Ok(());
                }
                let id = attribute(start, part, |k| k == "Id")?;
                let target = attribute(start, part, |k| k == "Target")?;
                if let (Some(id), Some(target)) = (id, target) {
                    links.insert(id, target);
                }
                Ok(())
            },
        )
    }

    /// Gathers into a `T` what `each` takes from every `Relationship`
    /// element of `part`'s relationships part (`dir/_rels/name.rels`).
    /// `each` is given the element, the relationships part's name (for its
    /// errors) and `dir`, the folder its targets are relative to. A part
    /// without a relationships part gathers nothing.
    fn each_relationship<T: Default>(
        &mut self,
        part: &str,
        mut each: impl FnMut(&BytesStart<'_>, &str, &str, &mut T) -> Result<(), Failure>,
    ) -> Result<T, Failure> {
        let (dir, file) = match part.rfind('/') {
            Some(at) => (&part[..=at], &part[at + 1..]),
            None => ("", part),
        };
        let rels_name = format!("{dir}_rels/{file}.rels");
        let found = self.read(&rels_name, |xml| {
            let part = xml.part().to_owned();
            let mut gathered = T::default();
            loop {
                match xml.next()? {
                    Node::Start(start) if local(&start) == "Relationship" => {
                        each(&start, &part, dir, &mut gathered)?;
                    }
                    Node::Eof => return Ok(gathered),
                    _ => {}
                }
            }
        })?;
        Ok(found.unwrap_or_default())
    }

    /// The package's main part, from the `officeDocument` relationship of
    /// `_rels/.rels`.
    pub(crate) fn main_part(&mut self) -> Result<Option<String>, Failure> {
        let rels = self.relationships("")?;
        Ok(rels
            .into_iter()
            .find(|rel| rel.kind.ends_with(OFFICE_DOCUMENT))
            .map(|rel| rel.target))
    }

    /// Opens `bytes` as [`Package::open_checked`] does, with the name of
    /// its main part: the one `_rels/.rels` names, else `fallback`.
    pub(crate) fn open_with_main(
        bytes: &'a [u8],
        options: &Options,
        fallback: &str,
    ) -> Result<(Self, String), Failure> {
        let mut package = Self::open_checked(bytes, options)?;
        let main = package.main_part()?.unwrap_or_else(|| fallback.to_owned());
        Ok((package, main))
    }

    /// The content type `[Content_Types].xml` declares for `part` by an
    /// override, if any.
    pub(crate) fn content_type(&mut self, part: &str) -> Result<Option<String>, Failure> {
        let wanted = format!("/{part}");
        let found = self.read("[Content_Types].xml", |xml| {
            let part = xml.part().to_owned();
            let mut kind = None;
            loop {
                match xml.next()? {
                    Node::Start(start) if local(&start) == "Override" => {
                        let part_name = attribute(&start, &part, |k| named(k, "PartName"))?;
                        if part_name.is_some_and(|p| p.eq_ignore_ascii_case(&wanted)) {
                            kind = attribute(&start, &part, |k| named(k, "ContentType"))?;
                        }
                    }
                    Node::Eof => return Ok(kind),
                    _ => {}
                }
            }
        })?;
        Ok(found.flatten())
    }

    /// Decompresses every entry once, discarding the bytes, and returns each
    /// entry's name and decompressed size. This proves, before a library
    /// that holds no limits reads the package, that all of it together stays
    /// within the budget. An entry that cannot be decompressed is passed
    /// over: a library reading it meets the same error at the same byte.
    pub(crate) fn measure_all(&mut self, cancel: &Cancel) -> Result<Vec<(String, u64)>, Failure> {
        let mut sizes = Vec::with_capacity(self.zip.len().min(65_536));
        for index in 0..self.zip.len() {
            cancel.check()?;
            if self.xml_left == 0 {
                return Err(self.over_budget());
            }
            let Ok(entry) = self.zip.by_index(index) else {
                continue;
            };
            if entry.is_dir() {
                continue;
            }
            let name = String::from_utf8_lossy(entry.name_raw()).into_owned();
            let mut capped = CappedReader::new(entry, self.xml_left);
            let copied = std::io::copy(&mut capped, &mut std::io::sink());
            let used = capped.bytes_read();
            drop(capped);
            self.xml_left = self.xml_left.saturating_sub(used);
            if let Err(error) = copied
                && is_cap_error(&error)
            {
                return Err(self.over_budget());
            }
            sizes.push((name, used));
        }
        Ok(sizes)
    }

    /// The reason a package stops when its decompressed budget is spent.
    pub(crate) fn over_budget(&self) -> Failure {
        Failure::unreadable(format!(
            "its XML comes to more than {} when decompressed",
            human_size(self.xml_cap)
        ))
    }
}

/// The entry name a relationship `target` of a part in `dir` (ending in `/`,
/// or empty for the package root) points at: absolute targets start at the
/// root, relative ones at `dir`; `.` and `..` are followed, `%XX` decoded.
pub(crate) fn resolve(dir: &str, target: &str) -> String {
    // Part names in targets may carry `%XX` escapes.
    let target = percent_encoding::percent_decode_str(target).decode_utf8_lossy();
    let joined = match target.strip_prefix('/') {
        Some(absolute) => absolute.to_owned(),
        None => format!("{dir}{target}"),
    };
    let mut segments: Vec<&str> = Vec::new();
    for segment in joined.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            other => segments.push(other),
        }
    }
    segments.join("/")
}
