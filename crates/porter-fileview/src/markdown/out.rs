//! Markdown as it is written out: the text gathered under its cap, the
//! escapes that keep a document's words words, and GFM tables. Every
//! writer of Markdown (the document renderer, the OCR text) uses these; they
//! depend on no reader.

use crate::describe::human_size;
use crate::text;

/// `Markdown` is a document as Markdown: the text, the title it names for
/// itself (when it has one), and notes on what was left out or cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Markdown {
    /// The Markdown, ending in one newline (empty for an empty document).
    pub text: String,
    /// The document's own title: its Title-styled paragraph or first
    /// top-level heading, the first slide's title, an HTML `<title>`.
    pub title: Option<String>,
    /// Whole sentences on what is not included or where a limit cut it.
    pub notes: Vec<String>,
}

/// `CELL_COST_BYTES` is what each table cell counts against the text cap
/// besides its text: the `| ` and ` |` it is written with (see [`table`]).
/// It keeps a row of millions of empty cells from being held at all.
pub(crate) const CELL_COST_BYTES: usize = 4;

/// `MdOut` gathers Markdown blocks, separated by blank lines (list items by
/// a single newline), and stops taking text at its cap.
pub(crate) struct MdOut {
    text: String,
    cap: usize,
    cut: bool,
    last_was_item: bool,
}

impl MdOut {
    /// An empty Markdown text holding at most `cap` bytes.
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            text: String::new(),
            cap,
            cut: false,
            last_was_item: false,
        }
    }

    /// Adds a block (a paragraph, heading, table) after a blank line.
    pub(crate) fn block(&mut self, block: &str) {
        self.add(block, false);
    }

    /// Adds a list item, right under an item before it.
    pub(crate) fn item(&mut self, item: &str) {
        self.add(item, true);
    }

    /// Adds text exactly as it is (plain text and Markdown files).
    pub(crate) fn raw(&mut self, text: &str) {
        self.push(text);
    }

    /// Whether the cap was reached: nothing more will be taken.
    pub(crate) fn is_full(&self) -> bool {
        self.cut
    }

    /// How many more bytes it takes before its cap.
    pub(crate) fn room(&self) -> usize {
        self.cap.saturating_sub(self.text.len())
    }

    fn add(&mut self, block: &str, item: bool) {
        if block.trim().is_empty() {
            return;
        }
        if !self.text.is_empty() {
            self.push(if item && self.last_was_item {
                "\n"
            } else {
                "\n\n"
            });
        }
        self.push(block.trim_end());
        self.last_was_item = item;
    }

    fn push(&mut self, piece: &str) {
        if !self.cut {
            self.cut = !text::push_capped(&mut self.text, piece, self.cap);
        }
    }

    /// The Markdown with its title and notes (plus one on the cut, when the
    /// cap was reached).
    pub(crate) fn finish(mut self, title: Option<String>, mut notes: Vec<String>) -> Markdown {
        let trimmed = self.text.trim_end().len();
        self.text.truncate(trimmed);
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        if self.cut {
            notes.push(format!(
                "The Markdown was cut at {}; the rest of the document is not included.",
                human_size(self.cap as u64)
            ));
        }
        Markdown {
            text: self.text,
            title,
            notes,
        }
    }
}

/// Text with the characters that Markdown would read as emphasis,
/// strikethrough, code, links, raw HTML or an entity escaped, so a
/// document's words stay words.
pub(crate) fn escape_inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (at, c) in text.char_indices() {
        if matches!(c, '\\' | '*' | '_' | '~' | '`' | '[' | ']' | '<' | '>')
            || (c == '&' && starts_entity(&text[at + 1..]))
        {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Whether the text after a `&` makes it an entity or character reference
/// (`&amp;`, `&#35;`, `&#x23;`), which Markdown would read as the character
/// it names.
fn starts_entity(rest: &str) -> bool {
    let Some(end) = rest.find(';') else {
        return false;
    };
    let name = &rest[..end];
    let digits = |text: &str, radix: u32| {
        (1..=7).contains(&text.len()) && text.chars().all(|c| c.is_digit(radix))
    };
    if let Some(number) = name.strip_prefix('#') {
        return match number.strip_prefix(['x', 'X']) {
            Some(hex) => digits(hex, 16),
            None => digits(number, 10),
        };
    }
    name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.len() <= 32
        && name.chars().all(|c| c.is_ascii_alphanumeric())
}

/// One line of text made safe at the start of a Markdown line: inline
/// escapes, and a leading `#`, `>`, `-`, `+`, `=`, or `1.` that would make
/// it a heading, quote, list item or rule.
pub(crate) fn escape_line(line: &str) -> String {
    start_safe(&escape_inline(line))
}

/// A line, already inline-escaped, with a block marker at its start
/// escaped.
pub(crate) fn start_safe(line: &str) -> String {
    let trimmed = line.trim_start();
    let lead = &line[..line.len() - trimmed.len()];
    let marker = trimmed.starts_with(['#', '-', '+', '=', '|', '~'])
        || trimmed.starts_with('>')
        || ordered_marker(trimmed);
    if marker {
        let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            // "1. text" → "1\. text": the dot is what makes the list.
            return format!("{lead}{}\\{}", &trimmed[..digits], &trimmed[digits..]);
        }
        return format!("{lead}\\{trimmed}");
    }
    line.to_owned()
}

/// Whether a line starts like an ordered list item (`12.` or `3)` then a
/// space or the end).
fn ordered_marker(line: &str) -> bool {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 9 {
        return false;
    }
    let rest = &line[digits..];
    rest.starts_with(". ") || rest.starts_with(") ") || rest == "." || rest == ")"
}

/// A GFM table of `rows` (the first is the header), all padded to the
/// widest row. Cells are escaped for a table: `|` as `\|`, line breaks as
/// `<br>`. Empty rows at the end are left out; no rows is no table.
pub(crate) fn table(rows: &[Vec<String>]) -> String {
    let mut rows: Vec<&Vec<String>> = rows.iter().collect();
    while rows
        .last()
        .is_some_and(|row| row.iter().all(|c| c.trim().is_empty()))
    {
        rows.pop();
    }
    let width = rows.iter().map(|row| row.len()).max().unwrap_or(0);
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    for (index, row) in rows.iter().enumerate() {
        out.push('|');
        for column in 0..width {
            let cell = row.get(column).map_or("", String::as_str);
            out.push(' ');
            out.push_str(&table_cell(cell));
            out.push_str(" |");
        }
        out.push('\n');
        if index == 0 {
            out.push('|');
            for _ in 0..width {
                out.push_str(" --- |");
            }
            out.push('\n');
        }
    }
    out
}

/// One cell's text for a GFM table: on one line, `|` escaped.
pub(crate) fn table_cell(cell: &str) -> String {
    let lines: Vec<&str> = cell.trim().lines().map(str::trim).collect();
    lines.join("<br>").replace('|', "\\|")
}

/// Markdown text with its backslash escapes of punctuation undone (a
/// title taken from a heading the readers wrote, for one).
pub(crate) fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&next) = chars.peek()
            && next.is_ascii_punctuation()
        {
            out.push(next);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

    use super::{escape_inline, escape_line, table};

    fn gfm() -> Options {
        let mut options = Options::empty();
        options.insert(Options::ENABLE_TABLES);
        options.insert(Options::ENABLE_STRIKETHROUGH);
        options
    }

    /// What a CommonMark reader (GFM tables and strikethrough on) finds in
    /// `markdown`: the text, and every element it opened other than a
    /// paragraph (a heading, list, quote, emphasis, link, code, HTML…).
    fn read_back(markdown: &str) -> (String, Vec<String>) {
        let mut text = String::new();
        let mut structure = Vec::new();
        for event in Parser::new_ext(markdown, gfm()) {
            match event {
                Event::Text(t) => text.push_str(&t),
                Event::Start(Tag::Paragraph) | Event::End(_) => {}
                other => structure.push(format!("{other:?}")),
            }
        }
        (text, structure)
    }

    /// One line of text: pieces Markdown reads as syntax, and any printable
    /// character.
    fn lines() -> impl Strategy<Value = String> {
        let printable = any::<char>().prop_filter("one line", |c| !c.is_control());
        porter_test::text_from(
            &[
                " ",
                "    ",
                "#",
                "##",
                ">",
                "-",
                "+",
                "*",
                "_",
                "=",
                "~",
                "~~",
                "`",
                "```",
                "|",
                "1.",
                "2)",
                "[",
                "]",
                "(",
                ")",
                "!",
                "<",
                ">",
                "&",
                "&amp;",
                "&copy;",
                "&#35;",
                "\\",
                "http://a.b",
                "<a>",
                "a",
                "word",
                "é",
                "日本",
            ],
            printable,
            1..16,
        )
    }

    /// The cells of the one table in `markdown`, row by row, as a GFM
    /// reader finds them; anything but text inside a cell is a failure.
    fn table_cells(markdown: &str) -> Result<Vec<Vec<String>>, String> {
        let mut rows: Vec<Vec<String>> = Vec::new();
        for event in Parser::new_ext(markdown, gfm()) {
            match event {
                Event::Start(Tag::TableHead | Tag::TableRow) => rows.push(Vec::new()),
                Event::Start(Tag::TableCell) => rows
                    .last_mut()
                    .ok_or("a cell outside a row")?
                    .push(String::new()),
                Event::Text(t) => rows
                    .last_mut()
                    .and_then(|row| row.last_mut())
                    .ok_or_else(|| format!("text outside a cell: {t:?}"))?
                    .push_str(&t),
                Event::Start(Tag::Table(_))
                | Event::End(
                    TagEnd::Table | TagEnd::TableHead | TagEnd::TableRow | TagEnd::TableCell,
                ) => {}
                other => return Err(format!("{other:?}")),
            }
        }
        Ok(rows)
    }

    #[test]
    fn an_entity_and_a_tilde_are_escaped_and_a_lone_ampersand_is_not() {
        assert_eq!(
            escape_line("&amp; &#35; &#x23;"),
            "\\&amp; \\&#35; \\&#x23;"
        );
        assert_eq!(escape_line("#~~#~~"), "\\#\\~\\~#\\~\\~");
        assert_eq!(escape_line("AT&T & co; a&b;c"), "AT&T & co; a\\&b;c");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// A table's cells read back as their texts, whatever they hold.
        #[test]
        fn a_tables_cells_read_back_as_their_text(
            rows in prop::collection::vec(prop::collection::vec(lines(), 1..4), 1..4),
        ) {
            let escaped: Vec<Vec<String>> = rows
                .iter()
                .map(|row| row.iter().map(|cell| escape_inline(cell)).collect())
                .collect();
            let markdown = table(&escaped);
            prop_assume!(!markdown.is_empty());
            let width = rows.iter().map(Vec::len).max().unwrap_or(0);
            let expected: Vec<Vec<String>> = rows
                .iter()
                .take(markdown.lines().count() - 1)
                .map(|row| {
                    (0..width)
                        .map(|i| row.get(i).map_or("", |c| c.trim()).to_owned())
                        .collect()
                })
                .collect();
            prop_assert_eq!(table_cells(&markdown), Ok(expected), "{}", markdown);
        }

        /// A document's words stay words: an escaped line reads back as its
        /// own text in one paragraph.
        #[test]
        fn an_escaped_line_reads_back_as_its_text(line in lines()) {
            prop_assume!(!line.trim_matches(' ').is_empty());
            // Four spaces of indent are kept, and make a code block that
            // holds the same text: the readers' own choice, not an escape.
            prop_assume!(!line.starts_with("    "));
            let (text, structure) = read_back(&escape_line(&line));
            prop_assert!(structure.is_empty(), "{line:?} -> {:?}: {structure:?}", escape_line(&line));
            // A paragraph drops the spaces around its text (ASCII ones only).
            prop_assert_eq!(text, line.trim_matches(' '), "{:?}", escape_line(&line));
        }
    }
}
