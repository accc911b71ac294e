//! Text in windows of numbered lines, like `cat -n`, so that a model reads a
//! file of any length a window at a time and always knows where it is.

use std::borrow::Cow;
use std::fmt::Write as _;

use crate::describe::{count, human_size};
use crate::options::Options;
use crate::sniff::Encoding;

/// `WindowRequest` asks for a window of lines. The default is the first
/// window of the default size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowRequest {
    /// First line wanted, counted from 1; 1 when absent.
    pub start_line: Option<u64>,
    /// How many lines; [`Options::window_lines`] when absent, and never more
    /// than [`Options::max_window_lines`].
    pub line_count: Option<u64>,
}

/// Decodes text bytes in the encoding the sniff found. UTF-8 is borrowed
/// as it is; everything else is decoded once into a new string.
pub(crate) fn decode(bytes: &[u8], encoding: Encoding) -> Cow<'_, str> {
    match encoding {
        Encoding::Utf8 => String::from_utf8_lossy(bytes),
        Encoding::Utf8Bom => String::from_utf8_lossy(&bytes[3..]),
        Encoding::Utf16Le => {
            encoding_rs::UTF_16LE
                .decode_without_bom_handling(&bytes[2..])
                .0
        }
        Encoding::Utf16Be => {
            encoding_rs::UTF_16BE
                .decode_without_bom_handling(&bytes[2..])
                .0
        }
        Encoding::Windows1252 => {
            encoding_rs::WINDOWS_1252
                .decode_without_bom_handling(bytes)
                .0
        }
    }
}

/// How the header names an encoding: "text", "text decoded from UTF-16", …
pub(crate) fn encoding_phrase(encoding: Encoding) -> &'static str {
    match encoding {
        Encoding::Utf8 => "text",
        Encoding::Utf8Bom => "text (UTF-8 with a byte-order mark)",
        Encoding::Utf16Le => "text decoded from UTF-16 (little-endian)",
        Encoding::Utf16Be => "text decoded from UTF-16 (big-endian)",
        Encoding::Windows1252 => {
            "text decoded from Windows-1252, where its bytes are not UTF-8 (a guess: accented letters may be wrong)"
        }
    }
}

/// The name the record gives an encoding.
pub(crate) fn encoding_label(encoding: Encoding) -> &'static str {
    match encoding {
        Encoding::Utf8 | Encoding::Utf8Bom => "utf-8",
        Encoding::Utf16Le => "utf-16le",
        Encoding::Utf16Be => "utf-16be",
        Encoding::Windows1252 => "windows-1252",
    }
}

/// A window that could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WindowError {
    /// `start_line` is past the last line.
    PastEnd { start_line: u64, total_lines: u64 },
    /// `start_line` or `line_count` was 0.
    Zero(&'static str),
}

/// `Window` is a numbered run of lines and where it sits in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Window {
    /// The numbered lines, each ending in `\n`.
    pub numbered: String,
    pub start_line: u64,
    /// Last line shown; `start_line - 1` when none is (an empty text).
    pub end_line: u64,
    pub total_lines: u64,
    /// Sentences about how the window was cut: a request over the line
    /// limit, the byte budget, a cut line.
    pub notes: Vec<String>,
}

impl Window {
    /// Where the next window starts, if there is one.
    pub(crate) fn next_start_line(&self) -> Option<u64> {
        (self.end_line < self.total_lines).then_some(self.end_line + 1)
    }
}

/// `LineIndex` knows how many lines a text has and where every
/// `LINE_STRIDE`th one starts, so a window anywhere in a large text is found
/// without scanning from the top, at a cost of one word per
/// `LINE_STRIDE` lines.
/// The default index is that of an empty text.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct LineIndex {
    /// Byte offsets of lines 1, 1 + stride, 1 + 2 × stride, …
    marks: Vec<usize>,
    total_lines: u64,
}

/// `LINE_STRIDE` is how many lines lie between two marks of a [`LineIndex`].
const LINE_STRIDE: u64 = 128;

impl LineIndex {
    /// Indexes `text`, counting lines as `cat -n` numbers them: each `\n`
    /// ends one, and a last line without a newline counts too.
    pub(crate) fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut marks = Vec::new();
        let mut total_lines = 0u64;
        if !bytes.is_empty() {
            marks.push(0);
            total_lines = 1;
        }
        for at in memchr::memchr_iter(b'\n', bytes) {
            if at + 1 < bytes.len() {
                if total_lines.is_multiple_of(LINE_STRIDE) {
                    marks.push(at + 1);
                }
                total_lines += 1;
            }
        }
        Self { marks, total_lines }
    }

    /// Lines in the text.
    pub(crate) fn total_lines(&self) -> u64 {
        self.total_lines
    }

    /// Byte offset where line `line` (from 1, at most the total) begins.
    fn line_start(&self, text: &str, line: u64) -> usize {
        let Some(index) = line.checked_sub(1) else {
            return 0;
        };
        let mark = usize::try_from(index / LINE_STRIDE).unwrap_or(usize::MAX);
        let Some(&from) = self.marks.get(mark) else {
            return text.len();
        };
        let skip = usize::try_from(index % LINE_STRIDE).unwrap_or(usize::MAX);
        if skip == 0 {
            return from;
        }
        memchr::memchr_iter(b'\n', &text.as_bytes()[from..])
            .nth(skip - 1)
            .map_or(text.len(), |at| from + at + 1)
    }

    /// Memory the index holds, in bytes.
    pub(crate) fn held_bytes(&self) -> u64 {
        (self.marks.len() * std::mem::size_of::<usize>()) as u64
    }
}

/// Makes the window `request` asks for. Lines are numbered `%6d\t`, a CR
/// before LF is dropped, and the window stops at the line count or before
/// the line that would take the numbered text past `options.window_bytes`.
/// A first line longer than the whole budget is cut at a character
/// boundary, and the next window starts at the line after it.
pub(crate) fn window(
    text: &str,
    index: &LineIndex,
    request: &WindowRequest,
    options: &Options,
) -> Result<Window, WindowError> {
    let start_line = request.start_line.unwrap_or(1);
    if start_line == 0 {
        return Err(WindowError::Zero("start_line"));
    }
    let asked = request.line_count.unwrap_or(options.window_lines);
    if asked == 0 {
        return Err(WindowError::Zero("line_count"));
    }
    let mut notes = Vec::new();
    let line_count = if asked > options.max_window_lines {
        notes.push(format!(
            "A window holds at most {} lines, so {} were asked and {} are shown.",
            count(options.max_window_lines),
            count(asked),
            count(options.max_window_lines)
        ));
        options.max_window_lines
    } else {
        asked
    };

    let total_lines = index.total_lines();
    if start_line > total_lines.max(1) {
        return Err(WindowError::PastEnd {
            start_line,
            total_lines,
        });
    }
    let mut numbered = String::new();
    let mut end_line = start_line - 1;
    let mut rest = &text[index.line_start(text, start_line)..];
    while end_line + 1 - start_line < line_count && end_line < total_lines {
        let (line, after) = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(at) => (&rest[..at], &rest[at + 1..]),
            None => (rest, ""),
        };
        let line = line.strip_suffix('\r').unwrap_or(line);
        let number = end_line + 1;
        let prefix = format!("{number:>6}\t");
        let needed = prefix.len() + line.len() + 1;
        if numbered.len() + needed > options.window_bytes {
            if !numbered.is_empty() {
                notes.push(format!(
                    "The window stops after line {} to stay within {} of text.",
                    count(end_line),
                    human_size(options.window_bytes as u64)
                ));
                break;
            }
            let room = options.window_bytes.saturating_sub(prefix.len() + 1);
            let cut = floor_char_boundary(line, room);
            numbered.push_str(&prefix);
            numbered.push_str(&line[..cut]);
            numbered.push('\n');
            notes.push(format!(
                "Line {} is {} long; only its first {} are shown.",
                count(number),
                human_size(line.len() as u64),
                human_size(cut as u64)
            ));
            end_line = number;
            break;
        }
        let _ = writeln!(numbered, "{prefix}{line}");
        end_line = number;
        rest = after;
    }
    Ok(Window {
        numbered,
        start_line,
        end_line,
        total_lines,
        notes,
    })
}

/// Appends to `text` as much of `piece` as keeps it within `cap` bytes (cut
/// on a character boundary), and says whether all of `piece` fitted: the
/// one rule of the outputs that stop taking text at a cap.
pub(crate) fn push_capped(text: &mut String, piece: &str, cap: usize) -> bool {
    let room = cap.saturating_sub(text.len());
    let end = floor_char_boundary(piece, room);
    text.push_str(&piece[..end]);
    end == piece.len()
}

/// `count` lines for tests, each its number after `prefix`
/// (`line 1\nline 2\n…`).
#[cfg(test)]
pub(crate) fn numbered_lines(prefix: &str, count: usize) -> String {
    let mut text = String::new();
    for n in 1..=count {
        text.push_str(prefix);
        text.push_str(&n.to_string());
        text.push('\n');
    }
    text
}

/// The largest index ≤ `at` that falls on a character boundary of `s`.
pub(crate) fn floor_char_boundary(s: &str, at: usize) -> usize {
    if at >= s.len() {
        return s.len();
    }
    let mut at = at;
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The header line of a window: name, what the text is, how many lines,
/// which follow, and how to get the next window.
pub(crate) fn header(name: &str, what: &str, window: &Window) -> String {
    let lines = match window.total_lines {
        1 => "1 line".to_owned(),
        n => format!("{} lines", count(n)),
    };
    let mut header = format!("{name}: {what}, {lines}.");
    if window.start_line == 1 && window.next_start_line().is_none() {
        header.push_str(" All of it follows.");
    } else {
        let _ = write!(
            header,
            " Lines {}-{} follow;",
            count(window.start_line),
            count(window.end_line)
        );
        match window.next_start_line() {
            Some(next) => {
                let _ = write!(header, " pass start_line={next} for the next window.");
            }
            None => header.push_str(" this is the end."),
        }
    }
    for note in &window.notes {
        header.push(' ');
        header.push_str(note);
    }
    header
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window_of(
        text: &str,
        request: &WindowRequest,
        options: &Options,
    ) -> Result<Window, WindowError> {
        window(text, &LineIndex::new(text), request, options)
    }

    #[test]
    fn every_line_is_found_across_the_index_marks() {
        let text = numbered_lines("", 1000);
        let index = LineIndex::new(&text);
        assert_eq!(index.total_lines(), 1000);
        for line in [1, 2, 127, 128, 129, 130, 256, 257, 999, 1000] {
            let at = index.line_start(&text, line);
            assert!(text[at..].starts_with(&format!("{line}\n")), "line {line}");
        }
    }

    fn request(start_line: Option<u64>, line_count: Option<u64>) -> WindowRequest {
        WindowRequest {
            start_line,
            line_count,
        }
    }

    #[test]
    fn lines_are_counted_like_cat_n() {
        for (text, lines) in [
            ("", 0),
            ("a", 1),
            ("a\n", 1),
            ("a\nb", 2),
            ("a\nb\n", 2),
            ("\n\n", 2),
        ] {
            assert_eq!(LineIndex::new(text).total_lines(), lines, "{text:?}");
        }
    }

    #[test]
    fn lines_are_numbered_with_six_columns_and_a_tab_and_crlf_loses_its_cr() {
        let w = window_of(
            "alpha\r\nbeta\ngamma",
            &WindowRequest::default(),
            &Options::default(),
        )
        .expect("fits");
        assert_eq!(w.numbered, "     1\talpha\n     2\tbeta\n     3\tgamma\n");
        assert_eq!(
            (w.start_line, w.end_line, w.total_lines, w.next_start_line()),
            (1, 3, 3, None)
        );
    }

    #[test]
    fn a_window_stops_at_the_line_count_and_says_where_the_next_starts() {
        let text = numbered_lines("line ", 1200);
        let options = Options::default();
        let first = window_of(&text, &WindowRequest::default(), &options).expect("fits");
        assert_eq!((first.end_line, first.next_start_line()), (500, Some(501)));
        let last = window_of(&text, &request(Some(1001), None), &options).expect("fits");
        assert_eq!(
            (last.start_line, last.end_line, last.next_start_line()),
            (1001, 1200, None)
        );
        assert!(last.numbered.starts_with("  1001\tline 1001\n"));
        assert!(
            header("log.txt", "text", &last)
                .ends_with("Lines 1,001-1,200 follow; this is the end.")
        );
    }

    #[test]
    fn the_line_limit_is_held_at_its_edge_and_a_bigger_request_is_capped_with_a_note() {
        let text = numbered_lines("", 3000);
        let options = Options::default();
        let at_limit = window_of(&text, &request(None, Some(2000)), &options).expect("fits");
        assert_eq!((at_limit.end_line, at_limit.notes.len()), (2000, 0));
        let over = window_of(&text, &request(None, Some(2001)), &options).expect("fits");
        assert_eq!(over.end_line, 2000);
        assert!(
            over.notes[0].contains("at most 2,000 lines"),
            "{:?}",
            over.notes
        );
    }

    #[test]
    fn the_byte_budget_is_held_at_its_edge() {
        // Each numbered line "     N\txxxxxxxxx\n" is 17 bytes.
        let text = "xxxxxxxxx\n".repeat(10);
        let options = Options {
            window_bytes: 17 * 4,
            ..Options::default()
        };
        let exact = window_of(&text, &WindowRequest::default(), &options).expect("fits");
        assert_eq!(exact.end_line, 4);
        assert!(exact.notes[0].contains("stops after line 4"));
        let roomier = Options {
            window_bytes: 17 * 4 + 16,
            ..Options::default()
        };
        assert_eq!(
            window_of(&text, &WindowRequest::default(), &roomier)
                .expect("fits")
                .end_line,
            4
        );
        let room_for_five = Options {
            window_bytes: 17 * 5,
            ..Options::default()
        };
        assert_eq!(
            window_of(&text, &WindowRequest::default(), &room_for_five)
                .expect("fits")
                .end_line,
            5
        );
    }

    #[test]
    fn a_line_longer_than_the_window_is_cut_at_a_character_boundary_and_paging_moves_on() {
        let long = "é".repeat(40);
        let text = format!("{long}\nnext\n");
        let options = Options {
            window_bytes: 30,
            ..Options::default()
        };
        let w = window_of(&text, &WindowRequest::default(), &options).expect("fits");
        assert_eq!((w.end_line, w.next_start_line()), (1, Some(2)));
        // 30 bytes less the 7-byte prefix and the newline leave 22: 11 "é".
        assert_eq!(w.numbered, format!("     1\t{}\n", "é".repeat(11)));
        assert!(
            w.notes[0].starts_with("Line 1 is 80 bytes long"),
            "{:?}",
            w.notes
        );
        let next = window_of(&text, &request(Some(2), None), &options).expect("fits");
        assert_eq!(next.numbered, "     2\tnext\n");
    }

    #[test]
    fn past_the_end_is_an_error_naming_the_line_count_and_zero_is_refused() {
        let options = Options::default();
        assert_eq!(
            window_of("a\nb\n", &request(Some(3), None), &options),
            Err(WindowError::PastEnd {
                start_line: 3,
                total_lines: 2
            })
        );
        assert_eq!(
            window_of("a", &request(Some(0), None), &options),
            Err(WindowError::Zero("start_line"))
        );
        assert_eq!(
            window_of("a", &request(None, Some(0)), &options),
            Err(WindowError::Zero("line_count"))
        );
        assert!(window_of("", &WindowRequest::default(), &options).is_ok());
    }

    #[test]
    fn every_encoding_decodes_its_characters() {
        assert_eq!(decode(b"\xFF\xFEh\0\xE9\0", Encoding::Utf16Le), "hé");
        assert_eq!(decode(b"\xFE\xFF\0h\0\xE9", Encoding::Utf16Be), "hé");
        assert_eq!(decode(b"\xEF\xBB\xBFhi", Encoding::Utf8Bom), "hi");
        assert_eq!(
            decode(b"caf\xE9 \x80 \x93q\x94", Encoding::Windows1252),
            "café € “q”"
        );
    }
}
