//! Counted work limits a page must stay within before the PDF library
//! reads it. pdf_oxide decodes a page's content streams whole (up to
//! 256 MiB each), runs every operator and expands every font's `ToUnicode`
//! map into memory, so one page can cost gigabytes: a content stream that
//! inflates to 200 MiB of text, one stream listed 100,000 times in
//! `/Contents`, a `ToUnicode` map of 200 MiB. Here each page's content
//! streams (and the form pictures its resources name) are inflated with a
//! cap, one at a time, and counted (decoded bytes, operators, glyph bytes
//! drawn), and each font's `ToUnicode` map is inflated with a cap and its
//! entries counted (a `bfrange` counts every code it covers); a page past
//! any limit is not given to the library, and its place says why.
//!
//! What is counted is kept by object, so a stream or a font that many
//! pages share is inflated once. Every filter that can make a stream larger
//! than it is stored (Flate, LZW, RunLength, ASCII85) is decoded here with
//! the cap, chains stage by stage. A stream that cannot be decoded here (an
//! encrypted document's, or one in a picture's filter) is counted by its
//! stored size; the library's own 256 MiB cap and the worker's limits hold
//! for those.

use std::collections::HashMap;
use std::io::Read;

use pdf_oxide::document::PdfDocument;
use pdf_oxide::object::{Object, ObjectRef};

use crate::describe::{count, human_size};
use crate::nesting::string_end;
use crate::options::Options;

/// `DOCUMENT_PAGES` is how many pages' worth of the per-page content limits
/// the pages read of one document may add up to (4: 128 MiB of decoded
/// content, 16,000,000 operators and 8,000,000 glyphs by default). Past it
/// the rest of the document is not read: without it, 2,000 pages that each
/// stay just within the page limits would still cost the library minutes.
const DOCUMENT_PAGES: u64 = 4;

/// The limits of one page, from [`Options`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    content_bytes: u64,
    operators: u64,
    glyphs: u64,
    cmap_bytes: u64,
    cmap_entries: u64,
}

impl Limits {
    pub(crate) fn of(options: &Options) -> Self {
        Self {
            content_bytes: options.pdf_content_bytes,
            operators: options.pdf_operators,
            glyphs: options.pdf_glyphs,
            cmap_bytes: options.pdf_cmap_bytes,
            cmap_entries: options.pdf_cmap_entries,
        }
    }
}

/// What a content stream holds.
#[derive(Debug, Clone, Copy, Default)]
struct Work {
    bytes: u64,
    operators: u64,
    glyphs: u64,
}

impl Work {
    fn add(&mut self, other: Work) {
        self.bytes = self.bytes.saturating_add(other.bytes);
        self.operators = self.operators.saturating_add(other.operators);
        self.glyphs = self.glyphs.saturating_add(other.glyphs);
    }
}

/// A `ToUnicode` map's size: over its byte cap, or its entries.
#[derive(Debug, Clone, Copy)]
enum Map {
    TooLarge,
    Entries(u64),
}

/// `Budget` checks pages against the [`Limits`], remembering what it
/// counted by object.
pub(crate) struct Budget<'d> {
    document: &'d PdfDocument,
    limits: Limits,
    streams: HashMap<ObjectRef, Work>,
    maps: HashMap<ObjectRef, Map>,
    /// The work of the pages found within their limits so far.
    read: Work,
}

impl<'d> Budget<'d> {
    pub(crate) fn new(document: &'d PdfDocument, limits: Limits) -> Self {
        Self {
            document,
            limits,
            streams: HashMap::new(),
            maps: HashMap::new(),
            read: Work::default(),
        }
    }

    /// Why page `index` must not be read (a clause: "its content streams
    /// decode to more than 32 MiB"), or `None` when it is within every
    /// limit or cannot be looked at here (the library then says why).
    pub(crate) fn over(&mut self, index: usize) -> Option<String> {
        let mut work = Work::default();
        let verdict = self.page_over(index, &mut work);
        if verdict.is_none() {
            self.read.add(work);
        }
        verdict
    }

    /// Why no more pages may be read, as a clause ("decode to more than
    /// 128 MiB"): the pages found within their own limits so far add up to
    /// more than [`DOCUMENT_PAGES`] pages' worth.
    pub(crate) fn document_over(&self) -> Option<String> {
        let whole = Limits {
            content_bytes: self.limits.content_bytes.saturating_mul(DOCUMENT_PAGES),
            operators: self.limits.operators.saturating_mul(DOCUMENT_PAGES),
            glyphs: self.limits.glyphs.saturating_mul(DOCUMENT_PAGES),
            ..self.limits
        };
        past(&whole, self.read)
    }

    /// [`Budget::over`], adding what the page holds into `work`.
    fn page_over(&mut self, index: usize, work: &mut Work) -> Option<String> {
        let page = self.document.get_page(index).ok()?;
        let page = page.as_dict()?;
        let contents = match page.get("Contents") {
            Some(Object::Reference(at)) => match self.document.load_object(*at) {
                Ok(Object::Array(items)) => items,
                Ok(_) => vec![Object::Reference(*at)],
                Err(_) => Vec::new(),
            },
            Some(Object::Array(items)) => items.clone(),
            Some(other) => vec![other.clone()],
            None => Vec::new(),
        };
        for item in &contents {
            let room = self.limits.content_bytes.saturating_sub(work.bytes);
            work.add(self.stream_work(item, room));
            if let Some(reason) = self.past(*work) {
                return Some(reason);
            }
        }
        let resources = page.get("Resources").and_then(|r| self.resolve(r));
        let resources = resources.as_ref().and_then(Object::as_dict)?;
        // The form pictures the page may draw run content of their own.
        if let Some(forms) = resources.get("XObject").and_then(|x| self.resolve(x))
            && let Some(forms) = forms.as_dict()
        {
            for form in forms.values() {
                let Some(at) = form.as_reference() else {
                    continue;
                };
                let is_form = self.document.load_object(at).ok().is_some_and(|o| {
                    o.as_dict()
                        .and_then(|d| d.get("Subtype"))
                        .and_then(Object::as_name)
                        == Some("Form")
                });
                if is_form {
                    let room = self.limits.content_bytes.saturating_sub(work.bytes);
                    work.add(self.stream_work(form, room));
                    if let Some(reason) = self.past(*work) {
                        return Some(reason);
                    }
                }
            }
        }
        let fonts = resources.get("Font").and_then(|f| self.resolve(f))?;
        let mut entries = 0u64;
        for font in fonts.as_dict()?.values() {
            let Some(font) = self.resolve(font) else {
                continue;
            };
            let Some(map) = font
                .as_dict()
                .and_then(|d| d.get("ToUnicode"))
                .and_then(Object::as_reference)
            else {
                continue;
            };
            match self.map(map) {
                Map::TooLarge => {
                    return Some(format!(
                        "a font's ToUnicode map decodes to more than {}",
                        human_size(self.limits.cmap_bytes)
                    ));
                }
                Map::Entries(n) => entries = entries.saturating_add(n),
            }
            if entries > self.limits.cmap_entries {
                return Some(format!(
                    "its fonts' ToUnicode maps hold more than {} entries",
                    count(self.limits.cmap_entries)
                ));
            }
        }
        None
    }

    /// The reason for the first limit of a page `work` is past.
    fn past(&self, work: Work) -> Option<String> {
        past(&self.limits, work).map(|clause| format!("its content streams {clause}"))
    }

    /// An object, loaded when it is a reference.
    fn resolve(&self, object: &Object) -> Option<Object> {
        match object {
            Object::Reference(at) => self.document.load_object(*at).ok(),
            other => Some(other.clone()),
        }
    }

    /// What one content stream holds, counted once per object; at most
    /// `room` bytes (and one more, to see it is past) are decoded.
    fn stream_work(&mut self, item: &Object, room: u64) -> Work {
        let at = item.as_reference();
        if let Some(at) = at
            && let Some(work) = self.streams.get(&at)
        {
            return *work;
        }
        let Some(stream) = self.resolve(item) else {
            return Work::default();
        };
        let work = match decoded(&stream, room) {
            Some(bytes) => {
                let mut work = content_work(&bytes);
                work.bytes = bytes.len() as u64;
                work
            }
            None => Work {
                bytes: stored_len(&stream),
                ..Work::default()
            },
        };
        // A count cut at `room` is kept only when it was whole.
        if let Some(at) = at
            && work.bytes <= room
        {
            self.streams.insert(at, work);
        }
        work
    }

    /// A `ToUnicode` map's size, counted once per object.
    fn map(&mut self, at: ObjectRef) -> Map {
        if let Some(map) = self.maps.get(&at) {
            return *map;
        }
        let map = match self.document.load_object(at) {
            Ok(stream) => match decoded(&stream, self.limits.cmap_bytes) {
                Some(bytes) if bytes.len() as u64 > self.limits.cmap_bytes => Map::TooLarge,
                Some(bytes) => Map::Entries(cmap_entries(&bytes)),
                None if stored_len(&stream) > self.limits.cmap_bytes => Map::TooLarge,
                None => Map::Entries(0),
            },
            Err(_) => Map::Entries(0),
        };
        self.maps.insert(at, map);
        map
    }
}

/// The clause for the first of the content `limits` that `work` is past
/// ("decode to more than 32 MiB").
fn past(limits: &Limits, work: Work) -> Option<String> {
    if work.bytes > limits.content_bytes {
        Some(format!(
            "decode to more than {}",
            human_size(limits.content_bytes)
        ))
    } else if work.operators > limits.operators {
        Some(format!(
            "hold more than {} operators",
            count(limits.operators)
        ))
    } else if work.glyphs > limits.glyphs {
        Some(format!("draw more than {} glyphs", count(limits.glyphs)))
    } else {
        None
    }
}

/// The stored (encoded) length of a stream.
fn stored_len(stream: &Object) -> u64 {
    match stream {
        Object::Stream { data, .. } => data.len() as u64,
        _ => 0,
    }
}

/// A stream's data decoded through its filters, at most `room + 1` bytes
/// of it; `None` for a filter of pictures (DCT, JPX, JBIG2, CCITT), which
/// says nothing about content, or deflated data that does not inflate.
/// Every filter that can make data larger (Flate, LZW, RunLength, ASCII85's
/// `z`) stops at the cap, so a chain is bounded stage by stage.
fn decoded(stream: &Object, room: u64) -> Option<Vec<u8>> {
    let Object::Stream { dict, data } = stream else {
        return None;
    };
    let filters: Vec<&str> = match dict.get("Filter") {
        None => Vec::new(),
        Some(Object::Name(name)) => vec![name.as_str()],
        Some(Object::Array(names)) => names.iter().filter_map(Object::as_name).collect(),
        Some(_) => return None,
    };
    let cap = room.saturating_add(1);
    let mut bytes = data.to_vec();
    for (index, filter) in filters.iter().enumerate() {
        bytes = match *filter {
            "FlateDecode" | "Fl" => inflate(&bytes, cap)?,
            "LZWDecode" | "LZW" => lzw(&bytes, cap, early_change(dict, index)),
            "RunLengthDecode" | "RL" => run_length(&bytes, cap),
            "ASCII85Decode" | "A85" => ascii85(&bytes, cap),
            "ASCIIHexDecode" | "AHx" => ascii_hex(&bytes),
            _ => return None,
        };
    }
    bytes.truncate(usize::try_from(cap).unwrap_or(usize::MAX));
    Some(bytes)
}

/// Deflated data inflated, at most `cap` bytes; a stream cut short counts
/// for what inflated.
fn inflate(data: &[u8], cap: u64) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let zlib = flate2::read::ZlibDecoder::new(data)
        .take(cap)
        .read_to_end(&mut out);
    if zlib.is_err() && out.is_empty() {
        // Some writers leave out the zlib header.
        flate2::read::DeflateDecoder::new(data)
            .take(cap)
            .read_to_end(&mut out)
            .ok()?;
    }
    Some(out)
}

/// Whether the `index`th filter's LZW codes widen one code early (PDF's
/// default, `/EarlyChange 1`).
fn early_change(dict: &HashMap<String, Object>, index: usize) -> bool {
    let params = match dict.get("DecodeParms") {
        Some(Object::Array(each)) => each.get(index),
        other => other,
    };
    let value = match params {
        Some(Object::Dictionary(params)) => params.get("EarlyChange").and_then(Object::as_integer),
        _ => None,
    };
    value != Some(0)
}

/// LZW data decoded, at most `cap` bytes; data that breaks off counts for
/// what decoded before it.
fn lzw(data: &[u8], cap: u64, early: bool) -> Vec<u8> {
    let mut decoder = if early {
        weezl::decode::Decoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8)
    } else {
        weezl::decode::Decoder::new(weezl::BitOrder::Msb, 8)
    };
    let cap = usize::try_from(cap).unwrap_or(usize::MAX);
    let mut out = Vec::new();
    let mut buffer = vec![0u8; 64 * 1024];
    let mut input = data;
    while out.len() < cap {
        let step = decoder.decode_bytes(input, &mut buffer);
        let room = cap - out.len();
        out.extend_from_slice(&buffer[..step.consumed_out.min(room)]);
        input = &input[step.consumed_in..];
        let moved = step.consumed_in > 0 || step.consumed_out > 0;
        if !matches!(step.status, Ok(weezl::LzwStatus::Ok)) || !moved {
            break;
        }
    }
    out
}

/// RunLength data decoded, at most `cap` bytes.
fn run_length(data: &[u8], cap: u64) -> Vec<u8> {
    let cap = usize::try_from(cap).unwrap_or(usize::MAX);
    let mut out = Vec::new();
    let mut at = 0;
    while at < data.len() && out.len() < cap {
        let length = usize::from(data[at]);
        at += 1;
        match length {
            0..=127 => {
                let end = (at + length + 1).min(data.len());
                out.extend_from_slice(&data[at..end]);
                at = end;
            }
            128 => break,
            _ => {
                let Some(&byte) = data.get(at) else { break };
                at += 1;
                let run = (257 - length).min(cap - out.len());
                out.resize(out.len() + run, byte);
            }
        }
    }
    out.truncate(cap);
    out
}

/// ASCII85 data decoded (`z` standing for four zero bytes), at most `cap`
/// bytes.
fn ascii85(data: &[u8], cap: u64) -> Vec<u8> {
    let cap = usize::try_from(cap).unwrap_or(usize::MAX);
    let value = |group: &[u8; 5]| {
        group
            .iter()
            .fold(0u64, |value, &digit| value * 85 + u64::from(digit)) as u32
    };
    let data = data.strip_prefix(b"<~").unwrap_or(data);
    let mut out = Vec::new();
    let mut group = [0u8; 5];
    let mut filled = 0;
    for &byte in data {
        if out.len() >= cap || byte == b'~' {
            break;
        }
        match byte {
            b'z' if filled == 0 => out.extend_from_slice(&[0; 4]),
            b'!'..=b'u' => {
                group[filled] = byte - b'!';
                filled += 1;
                if filled == 5 {
                    out.extend_from_slice(&value(&group).to_be_bytes());
                    filled = 0;
                }
            }
            _ => {}
        }
    }
    if filled > 1 && out.len() < cap {
        // A last partial group is padded with the highest digit.
        group[filled..].fill(84);
        out.extend_from_slice(&value(&group).to_be_bytes()[..filled - 1]);
    }
    out.truncate(cap);
    out
}

/// ASCIIHex data decoded: pairs of hex digits up to `>`, anything else
/// skipped, an odd last digit as the high half of a byte. Never larger
/// than its input.
fn ascii_hex(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() / 2);
    let mut high: Option<u8> = None;
    for &byte in data {
        if byte == b'>' {
            break;
        }
        let Some(digit) = char::from(byte).to_digit(16) else {
            continue;
        };
        let digit = digit as u8;
        match high.take() {
            Some(high) => out.push((high << 4) | digit),
            None => high = Some(digit),
        }
    }
    if let Some(high) = high {
        out.push(high << 4);
    }
    out
}

/// Counts a content stream's operators and the bytes of the strings it
/// shows, in one pass without allocating: comments, strings (nested
/// parentheses, escapes), hex strings, names, numbers and inline images'
/// data are told apart from operators.
fn content_work(bytes: &[u8]) -> Work {
    let mut work = Work::default();
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        match byte {
            b'%' => {
                at = memchr::memchr2(b'\n', b'\r', &bytes[at..]).map_or(bytes.len(), |n| at + n);
            }
            b'(' => {
                let end = string_end(bytes, at);
                work.glyphs += (end - at).saturating_sub(2) as u64;
                at = end;
            }
            b'<' if bytes.get(at + 1) == Some(&b'<') => at += 2,
            b'<' => {
                let end = memchr::memchr(b'>', &bytes[at..]).map_or(bytes.len(), |n| at + n + 1);
                let digits = bytes[at..end]
                    .iter()
                    .filter(|b| b.is_ascii_hexdigit())
                    .count();
                work.glyphs += digits.div_ceil(2) as u64;
                at = end;
            }
            b'/' => {
                at += 1;
                while at < bytes.len() && regular(bytes[at]) {
                    at += 1;
                }
            }
            _ if regular(byte) => {
                let start = at;
                while at < bytes.len() && regular(bytes[at]) {
                    at += 1;
                }
                let token = &bytes[start..at];
                let operator = (token[0].is_ascii_alphabetic() || matches!(token[0], b'\'' | b'"'))
                    && !matches!(token, b"true" | b"false" | b"null");
                if operator {
                    work.operators += 1;
                    if token == b"ID" {
                        at = inline_image_end(bytes, at);
                    }
                }
            }
            _ => at += 1,
        }
    }
    work
}

/// Whether a byte is part of a regular token (not white space or a
/// delimiter).
fn regular(byte: u8) -> bool {
    !matches!(
        byte,
        b' ' | b'\t'
            | b'\n'
            | b'\r'
            | b'\x0c'
            | b'\0'
            | b'('
            | b')'
            | b'<'
            | b'>'
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'/'
            | b'%'
    )
}

/// Where an inline image's data that starts after `ID` at `at` ends: after
/// the `EI` that stands between white space.
fn inline_image_end(bytes: &[u8], mut at: usize) -> usize {
    while let Some(found) = memchr::memmem::find(&bytes[at..], b"EI") {
        let start = at + found;
        let before = start > 0 && bytes[start - 1].is_ascii_whitespace();
        let after = bytes.get(start + 2).is_none_or(u8::is_ascii_whitespace);
        if before && after {
            return start + 2;
        }
        at = start + 2;
    }
    bytes.len()
}

/// The entries a `ToUnicode` map makes: one for each `bfchar`/`cidchar`
/// pair, and for each `bfrange`/`cidrange` every code from its low to its
/// high end.
fn cmap_entries(bytes: &[u8]) -> u64 {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Section {
        None,
        Char,
        Range,
    }
    let mut section = Section::None;
    let mut entries = 0u64;
    // The codes read so far of the current pair or range.
    let mut codes: Vec<u64> = Vec::with_capacity(2);
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'%' => {
                at = memchr::memchr2(b'\n', b'\r', &bytes[at..]).map_or(bytes.len(), |n| at + n);
            }
            b'<' if bytes.get(at + 1) != Some(&b'<') => {
                let end = memchr::memchr(b'>', &bytes[at..]).map_or(bytes.len(), |n| at + n + 1);
                let value = hex_value(&bytes[at..end]);
                at = end;
                match section {
                    Section::Char => {
                        codes.push(value);
                        if codes.len() == 2 {
                            entries += 1;
                            codes.clear();
                        }
                    }
                    Section::Range if codes.len() < 2 => codes.push(value),
                    Section::Range => {
                        // The destination of a range.
                        entries = entries.saturating_add(range_size(&codes));
                        codes.clear();
                    }
                    Section::None => {}
                }
            }
            b'[' if section == Section::Range && codes.len() == 2 => {
                entries = entries.saturating_add(range_size(&codes));
                codes.clear();
                at = memchr::memchr(b']', &bytes[at..]).map_or(bytes.len(), |n| at + n + 1);
            }
            byte if regular(byte) => {
                let start = at;
                while at < bytes.len() && regular(bytes[at]) {
                    at += 1;
                }
                let token = &bytes[start..at];
                match token {
                    b"beginbfchar" | b"begincidchar" => section = Section::Char,
                    b"beginbfrange" | b"begincidrange" => section = Section::Range,
                    b"endbfchar" | b"endcidchar" | b"endbfrange" | b"endcidrange" => {
                        section = Section::None;
                    }
                    // A CID as a range's or a pair's destination.
                    _ if token[0].is_ascii_digit() => match section {
                        Section::Range if codes.len() == 2 => {
                            entries = entries.saturating_add(range_size(&codes));
                            codes.clear();
                        }
                        Section::Char if codes.len() == 1 => {
                            entries += 1;
                            codes.clear();
                        }
                        _ => {}
                    },
                    _ => {}
                }
                codes.truncate(2);
            }
            _ => at += 1,
        }
    }
    entries
}

/// How many codes a range from `codes[0]` to `codes[1]` covers.
fn range_size(codes: &[u64]) -> u64 {
    match codes {
        [low, high] if high >= low => high - low + 1,
        _ => 1,
    }
}

/// The value of a hex string `<…>` (its last eight bytes).
fn hex_value(hex: &[u8]) -> u64 {
    let mut value = 0u64;
    for &b in hex {
        let digit = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => continue,
        };
        value = (value << 4) | u64::from(digit);
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(filter: &[&str], data: Vec<u8>) -> Object {
        let mut dict = std::collections::HashMap::new();
        dict.insert(
            "Filter".to_owned(),
            Object::Array(
                filter
                    .iter()
                    .map(|f| Object::Name((*f).to_owned()))
                    .collect(),
            ),
        );
        Object::Stream {
            dict,
            data: data.into(),
        }
    }

    /// Every filter that can make a stream larger than it is stored is
    /// counted by what it decodes to, cut one byte past the room.
    #[test]
    fn streams_in_every_expanding_filter_are_counted_by_decoded_size() {
        // RunLength: two bytes make 128 of one byte.
        let runs = [129u8, b'q'].repeat(1000);
        let out = decoded(&stream(&["RunLengthDecode"], runs.clone()), 10_000).expect("decoded");
        assert_eq!(out.len(), 10_001);
        assert!(out.iter().all(|&b| b == b'q'));
        let out =
            decoded(&stream(&["RL"], [2u8, b'a', b'b', b'c', 128].to_vec()), 99).expect("decoded");
        assert_eq!(out, b"abc");

        // LZW (early change, PDF's default): a long run of one byte.
        let plain = vec![b'x'; 1 << 20];
        let mut encoder = weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8);
        let lzw = encoder.encode(&plain).expect("encoded");
        assert!(lzw.len() < plain.len() / 50);
        let out = decoded(&stream(&["LZWDecode"], lzw.clone()), 100_000).expect("decoded");
        assert_eq!(out.len(), 100_001);
        let out = decoded(&stream(&["LZW"], lzw), u64::MAX - 1).expect("decoded");
        assert_eq!(out, plain);

        // ASCII85: `z` is four zero bytes; a last partial group.
        let out =
            decoded(&stream(&["ASCII85Decode"], b"<~zz87cURDZ~>".to_vec()), 99).expect("decoded");
        assert_eq!(out, b"\0\0\0\0\0\0\0\0Hello");
        let out = decoded(&stream(&["A85"], b"z".repeat(1000)), 10).expect("decoded");
        assert_eq!(out.len(), 11);

        // ASCIIHex, white space skipped, an odd last digit as its high half.
        let out = decoded(&stream(&["AHx"], b"48 65\n6c6C 6f7>".to_vec()), 99).expect("decoded");
        assert_eq!(out, b"Hellop");

        // A chain: hex of a deflated stream.
        let mut deflated = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut deflated, &vec![b'y'; 50_000]).expect("deflated");
        let deflated = deflated.finish().expect("deflated");
        let digits = b"0123456789abcdef";
        let hex: Vec<u8> = deflated
            .iter()
            .flat_map(|b| [digits[usize::from(b >> 4)], digits[usize::from(b & 15)]])
            .collect();
        let out =
            decoded(&stream(&["ASCIIHexDecode", "FlateDecode"], hex), 1_000).expect("decoded");
        assert_eq!(out.len(), 1_001);

        // A picture's filter says nothing about content: not decoded here.
        assert_eq!(decoded(&stream(&["DCTDecode"], vec![0xff; 10]), 99), None);
    }

    #[test]
    fn operators_and_glyphs_are_counted_apart_from_strings_names_and_image_data() {
        let content = b"% a comment Tj Tj\nBT /F1 12 Tf 72 700 Td (a (nested) \\) string) Tj\n\
            [(ab) -120 <0041 0042>] TJ ET\nBI /W 2 /H 2 ID \x00Tj Tj\xff EI Q\ntrue false null";
        let work = content_work(content);
        // BT Tf Td Tj TJ ET BI ID Q
        assert_eq!(work.operators, 9);
        // "a (nested) \\) string" is 21 bytes, "ab" 2, <0041 0042> 4.
        assert_eq!(work.glyphs, 20 + 2 + 4);
    }

    #[test]
    fn a_cmap_counts_pairs_and_every_code_of_its_ranges() {
        let cmap = b"1 begincodespacerange <0000> <FFFF> endcodespacerange\n\
            2 beginbfchar <0041> <0042>\n<0043> <0044> endbfchar\n\
            2 beginbfrange <0000> <00FF> <0020>\n<1000> <1001> [<0041> <0042>] endbfrange\n\
            1 begincidrange <2000> <200F> 5 endcidrange";
        assert_eq!(cmap_entries(cmap), 2 + 256 + 2 + 16);
    }
}
