//! Finding long base64 strings in text, byte by byte through one 256-entry
//! table: no regex, no UTF-8 decoding, so a 50 MB string is crossed at
//! memory speed.

/// `MIN_BASE64_CHARS` is the shortest base64 string (padding included,
/// a `data:` prefix not) that is looked at: shorter ones are ids, hashes and
/// tokens, and a file that small costs the model little anyway.
pub(crate) const MIN_BASE64_CHARS: usize = 4096;

/// Set on every byte of either base64 alphabet.
const DIGIT: u8 = 0x80;
/// `A-Z a-z 0-9`, in both alphabets.
const COMMON: u8 = DIGIT | 0x01;
/// `+` and `/`: the standard alphabet only.
const STANDARD_ONLY: u8 = DIGIT | 0x02;
/// `-` and `_`: the URL-safe alphabet only.
const URL_SAFE_ONLY: u8 = DIGIT | 0x04;

/// `CLASS` gives each byte its place in the base64 alphabets (0: none).
static CLASS: [u8; 256] = classes();

const fn classes() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        table[i] = match i as u8 {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' => COMMON,
            b'+' | b'/' => STANDARD_ONLY,
            b'-' | b'_' => URL_SAFE_ONLY,
            _ => 0,
        };
        i += 1;
    }
    table
}

/// `Alphabet` is the base64 alphabet a run is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Alphabet {
    /// `+` and `/` (or neither: then both alphabets read it the same).
    Standard,
    /// `-` and `_`.
    UrlSafe,
}

/// `Run` is one base64 string long enough to look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    /// First base64 character.
    pub start: usize,
    /// Just past the last character, padding included.
    pub end: usize,
    /// Its alphabet.
    pub alphabet: Alphabet,
}

/// Finds the next base64 run of at least `min` characters at or after
/// `from`. A run mixing both alphabets, with more than two `=`, or running on
/// into more base64 after its padding is no clean base64 string, so it is
/// skipped.
pub(crate) fn next_run(bytes: &[u8], mut from: usize, min: usize) -> Option<Run> {
    let len = bytes.len();
    while from < len {
        // Skip what is not base64 at all.
        while from < len && CLASS[bytes[from] as usize] == 0 {
            from += 1;
        }
        if from >= len {
            return None;
        }
        let start = from;
        let (digits_end, seen) = digits(bytes, start);
        let mut end = digits_end;
        while end < len && bytes[end] == b'=' {
            end += 1;
        }
        from = end;
        let padding = end - digits_end;
        let runs_on = end < len && padding > 0 && CLASS[bytes[end] as usize] != 0;
        let mixed = seen & STANDARD_ONLY & !DIGIT != 0 && seen & URL_SAFE_ONLY & !DIGIT != 0;
        if end - start < min || padding > 2 || runs_on || mixed {
            continue;
        }
        let alphabet = if seen & URL_SAFE_ONLY & !DIGIT != 0 {
            Alphabet::UrlSafe
        } else {
            Alphabet::Standard
        };
        return Some(Run {
            start,
            end,
            alphabet,
        });
    }
    None
}

/// Walks the base64 characters from `start`: where they stop, and the union
/// of their classes. Inside a long run, 32 bytes at a time are checked with
/// plain comparisons the compiler turns into vector instructions; the table
/// takes over for the run's last few bytes.
fn digits(bytes: &[u8], start: usize) -> (usize, u8) {
    let mut seen = 0u8;
    let mut i = start;
    while let Some(chunk) = bytes[i..].first_chunk::<LANE_BYTES>() {
        let Some(classes) = lane_classes(chunk) else {
            break;
        };
        seen |= classes;
        i += LANE_BYTES;
    }
    while i < bytes.len() {
        let class = CLASS[bytes[i] as usize];
        if class == 0 {
            break;
        }
        seen |= class;
        i += 1;
    }
    (i, seen)
}

/// `LANE_BYTES` is how many bytes [`lane_classes`] checks at once: one AVX2
/// register, two SSE2 ones.
const LANE_BYTES: usize = 32;

/// The union of the classes of `chunk`'s bytes, or `None` when one of them
/// is not base64. Each byte adds to counters rather than and-ing flags:
/// written that way the loop compiles to vector compares and adds (about
/// 10 GB/s here), where flags compile to a chain of conditional moves.
/// The `|` between booleans is meant: `||` would branch and stop the
/// vectorising.
#[allow(clippy::needless_bitwise_bool)]
fn lane_classes(chunk: &[u8; LANE_BYTES]) -> Option<u8> {
    let mut valid = 0u8;
    let mut standard = 0u8;
    let mut url_safe = 0u8;
    for &b in chunk {
        let digit = b.wrapping_sub(b'0') < 10;
        let letter = (b | 0x20).wrapping_sub(b'a') < 26;
        let std_only = (b == b'+') | (b == b'/');
        let url_only = (b == b'-') | (b == b'_');
        valid += u8::from(digit | letter | std_only | url_only);
        standard += u8::from(std_only);
        url_safe += u8::from(url_only);
    }
    let alphabets =
        if standard > 0 { STANDARD_ONLY } else { 0 } | if url_safe > 0 { URL_SAFE_ONLY } else { 0 };
    (usize::from(valid) == LANE_BYTES).then_some(COMMON | alphabets)
}

/// Whether a run is one segment of a dotted token (`header.payload.sig`,
/// as a JWT is written): a `.` joins it to more base64url on either side,
/// and it has neither padding nor a character of the standard alphabet
/// only. Its middle segment may well decode to readable JSON, but the
/// token is a credential the model passes on whole, not a file.
pub(crate) fn in_dotted_token(bytes: &[u8], run: Run) -> bool {
    let url_safe_char = |b: u8| CLASS[b as usize] != 0 && CLASS[b as usize] != STANDARD_ONLY;
    let joined_before =
        run.start >= 2 && bytes[run.start - 1] == b'.' && url_safe_char(bytes[run.start - 2]);
    let joined_after = bytes.get(run.end) == Some(&b'.')
        && bytes.get(run.end + 1).is_some_and(|&b| url_safe_char(b));
    (joined_before || joined_after)
        && !bytes[run.start..run.end]
            .iter()
            .any(|b| matches!(b, b'=' | b'+' | b'/'))
}

/// `DataUri` is a `data:<type>;base64,` prefix found before a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DataUri<'a> {
    /// Where `data:` starts.
    pub start: usize,
    /// The media type it names, when it names one.
    pub media_type: Option<&'a str>,
}

/// `DATA_URI_HEAD_BYTES` is how far before `;base64,` the `data:` is looked
/// for: a media type with its parameters fits easily.
const DATA_URI_HEAD_BYTES: usize = 256;

/// The `data:<type>;base64,` prefix right before `start`, if there is one.
pub(crate) fn data_uri(bytes: &[u8], start: usize) -> Option<DataUri<'_>> {
    const MARK: &[u8] = b";base64,";
    let mark = start.checked_sub(MARK.len())?;
    if !bytes[mark..start].eq_ignore_ascii_case(MARK) {
        return None;
    }
    let floor = mark.saturating_sub(DATA_URI_HEAD_BYTES);
    let mut i = mark;
    while i > floor {
        i -= 1;
        let b = bytes[i];
        if b == b':' {
            let begin = i.checked_sub(4)?;
            let glued = begin > 0 && bytes[begin - 1].is_ascii_alphanumeric();
            if glued || !bytes[begin..i].eq_ignore_ascii_case(b"data") {
                return None;
            }
            let head = std::str::from_utf8(&bytes[i + 1..mark]).ok()?;
            let media_type = head
                .split(';')
                .next()
                .map(str::trim)
                .filter(|t| t.contains('/'));
            return Some(DataUri {
                start: begin,
                media_type,
            });
        }
        if b <= b' ' || matches!(b, b'"' | b'\'' | b'\\' | b'<' | b'>' | b',') {
            return None;
        }
    }
    None
}

/// How deep in JSON string quoting a span of text sits: 0 outside any
/// string, 1 inside a JSON string (`"…"`), 2 inside a JSON string that is
/// itself inside one (`\"…\"`). The stub put there is escaped that many
/// times so the text stays the JSON it was.
pub(crate) fn quoting(bytes: &[u8], start: usize, end: usize) -> usize {
    if start == 0 || bytes[start - 1] != b'"' {
        return 0;
    }
    let before = backslashes_before(bytes, start - 1);
    let after = bytes[end..].iter().take_while(|&&b| b == b'\\').count();
    if bytes.get(end + after) != Some(&b'"') {
        return 0;
    }
    match (before, after) {
        (0, 0) => 1,
        (1, 1) => 2,
        _ => 0,
    }
}

/// How many backslashes stand right before `at`.
pub(crate) fn backslashes_before(bytes: &[u8], at: usize) -> usize {
    bytes[..at]
        .iter()
        .rev()
        .take_while(|&&b| b == b'\\')
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_in(text: &str, min: usize) -> Option<(String, Alphabet)> {
        next_run(text.as_bytes(), 0, min).map(|r| (text[r.start..r.end].to_owned(), r.alphabet))
    }

    #[test]
    fn runs_are_found_with_their_alphabet_and_padding() {
        let cases: [(&str, Option<(&str, Alphabet)>); 9] = [
            ("x: abcd+/== y", Some(("abcd+/==", Alphabet::Standard))),
            ("\"abcd-_\"", Some(("abcd-_", Alphabet::UrlSafe))),
            ("abcdefgh", Some(("abcdefgh", Alphabet::Standard))),
            ("ab, abcdefgh", Some(("abcdefgh", Alphabet::Standard))),
            ("abc+_def", None),
            ("abcdef===", None),
            ("abcdef==ghij", None),
            ("ab cd ef", None),
            ("", None),
        ];
        for (text, expected) in cases {
            let expected = expected.map(|(s, a)| (s.to_owned(), a));
            assert_eq!(run_in(text, 6), expected, "{text:?}");
        }
    }

    #[test]
    fn a_run_a_chunk_of_eight_cannot_cover_still_ends_in_the_right_place() {
        for len in 1..100 {
            let text = format!("{}\"tail", "A".repeat(len));
            let run = next_run(text.as_bytes(), 0, 1).expect("a run");
            assert_eq!((run.start, run.end), (0, len), "{len}");
        }
    }

    #[test]
    fn the_lane_check_agrees_with_the_table_on_every_byte() {
        for b in 0..=255u8 {
            // The lane's union always holds COMMON; only the alphabet bits
            // matter to the caller.
            let expected = (CLASS[b as usize] != 0).then_some(CLASS[b as usize] | COMMON);
            assert_eq!(lane_classes(&[b; LANE_BYTES]), expected, "byte {b}");
            let mut mixed = [b'A'; LANE_BYTES];
            mixed[LANE_BYTES - 1] = b;
            assert_eq!(lane_classes(&mixed), expected, "byte {b} last");
        }
    }

    #[test]
    fn a_short_run_is_skipped_and_the_next_long_one_is_found() {
        let text = "abc {\"k\": \"abcdefghij\"}";
        let run = next_run(text.as_bytes(), 0, 8).expect("a run");
        assert_eq!(&text[run.start..run.end], "abcdefghij");
    }

    #[test]
    fn segments_of_dotted_tokens_are_told_from_base64_beside_a_full_stop() {
        let cases: [(&str, bool); 7] = [
            ("eyJh.AAAAAAAA.c2ln", true),
            ("xx eyJh.AAAAAAAA", true),
            ("AAAAAAAA.c2ln", true),
            ("see: AAAAAAAA. Then", false),
            ("AAAAAA==.c2ln", false),
            ("AAAA+/AA.c2ln", false),
            ("file.AAAAAAAA", true),
        ];
        for (text, expected) in cases {
            let run = next_run(text.as_bytes(), 0, 8).expect("a run");
            assert_eq!(in_dotted_token(text.as_bytes(), run), expected, "{text:?}");
        }
    }

    #[test]
    fn a_data_uri_prefix_is_found_with_its_type() {
        type Found<'a> = Option<(usize, Option<&'a str>)>;
        let cases: [(&str, Found); 5] = [
            ("\"data:image/png;base64,", Some((1, Some("image/png")))),
            (
                "x data:text/plain;charset=utf-8;base64,",
                Some((2, Some("text/plain"))),
            ),
            ("data:;base64,", Some((0, None))),
            ("\"png;base64,", None),
            ("\"metadata:image/png;base64,", None),
        ];
        for (text, expected) in cases {
            let found = data_uri(text.as_bytes(), text.len()).map(|d| (d.start, d.media_type));
            assert_eq!(found, expected, "{text:?}");
        }
    }

    #[test]
    fn quoting_counts_the_levels_of_json_strings() {
        let cases: [(&str, usize); 5] = [
            ("{\"a\":\"XXXX\"}", 1),
            ("{\"a\":\"{\\\"b\\\":\\\"XXXX\\\"}\"}", 2),
            ("text XXXX text", 0),
            ("\"XXXX", 0),
            ("'XXXX'", 0),
        ];
        for (text, expected) in cases {
            let start = text.find("XXXX").expect("marker");
            assert_eq!(
                quoting(text.as_bytes(), start, start + 4),
                expected,
                "{text:?}"
            );
        }
    }
}
