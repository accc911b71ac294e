//! One document model: what a reader finds in a document (headings with
//! their levels, paragraphs, list items, tables with spans, code blocks,
//! block quotes, thematic breaks, figure text, notes, page markers), kept
//! apart from how it is written out. Every document reader produces
//! [`Block`]s once (the PDF layout analysis, the Word and `PowerPoint`
//! readers, the workbook walk, the HTML reader); the Markdown renderer here
//! writes them, and the file view shows that Markdown in numbered windows,
//! so a window and `extract` show the same structure.
//!
//! The text inside blocks is [`Inline::Plain`] (the renderer escapes it)
//! or, for readers that keep inline marks (emphasis, strong, inline code,
//! links, images, line breaks) inside a block, [`Inline::Markdown`] built
//! by [`Inlines`], which escapes the document's own characters and writes
//! each mark once, the same way for every reader.

use crate::markdown::out::{Markdown, MdOut, escape_inline, escape_line, start_safe, table};

/// How the text inside a document's blocks is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Inline {
    /// Plain text: the renderer escapes whatever Markdown would read as
    /// structure or emphasis.
    Plain,
    /// Inline Markdown already: the reader escaped the document's own
    /// characters and wrote its links as `[text](url)`; a `\n` inside a
    /// paragraph is a line break.
    Markdown,
}

/// One block of a document, in reading order.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(not(feature = "pdf"), allow(dead_code))]
pub(crate) enum Block {
    /// A heading; `level` 1 is the top (Markdown `#`), at most 6.
    Heading { level: u8, text: String },
    /// A paragraph of running text, on one line.
    Paragraph(String),
    /// A list item; `level` 0 is the outer list. `marker` is the item's own
    /// number or letter when it is ordered ("3.", "b)"), kept as written.
    ListItem {
        level: u8,
        marker: Option<String>,
        text: String,
    },
    /// A table: rows of cells, the first row shown as the header.
    Table(Table),
    /// The text of a figure or chart (labels, values, captions inside it).
    Figure(String),
    /// A note of the reader's about the document (a page with no text
    /// layer, a part that could not be read).
    Note(String),
    /// The start of a page: its number from 1 and how many there are.
    Page { number: usize, total: usize },
    /// Preformatted code, its lines exactly as written, and the language
    /// the document names for it (`class="language-rust"`), if any.
    Code {
        language: Option<String>,
        text: String,
    },
    /// A block quote: the blocks quoted, in order.
    Quote(Vec<Block>),
    /// A thematic break between sections (`<hr>`).
    Rule,
}

/// A table's rows. A cell that spans several columns or rows sits once, at
/// its top-left position; the places it covers hold no cell of their own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Table {
    /// The rows, top to bottom.
    pub rows: Vec<Vec<Cell>>,
}

/// One table cell: its text (line breaks inside a cell kept as `\n`) and
/// how many columns and rows it covers (1 and 1 for an ordinary cell).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cell {
    pub text: String,
    pub col_span: usize,
    pub row_span: usize,
}

impl Cell {
    /// An ordinary cell of one column and one row.
    pub(crate) fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            col_span: 1,
            row_span: 1,
        }
    }
}

impl Table {
    /// The table as a grid of texts, every row as wide as the widest: a cell
    /// spanning columns or rows has its text in its first place and empty
    /// text in the places it covers (what a pipe table of it holds).
    #[cfg(test)]
    pub(crate) fn grid(&self) -> Vec<Vec<String>> {
        let mut grid: Vec<Vec<Option<String>>> = Vec::with_capacity(self.rows.len());
        for (r, row) in self.rows.iter().enumerate() {
            if grid.len() <= r {
                grid.push(Vec::new());
            }
            let mut column = 0usize;
            for cell in row {
                // Skip the places an earlier row's cell still covers.
                while grid[r].get(column).is_some_and(Option::is_some) {
                    column += 1;
                }
                let rows = cell.row_span.clamp(1, self.rows.len() - r);
                let columns = cell.col_span.max(1);
                for dr in 0..rows {
                    while grid.len() <= r + dr {
                        grid.push(Vec::new());
                    }
                    let line = &mut grid[r + dr];
                    if line.len() < column + columns {
                        line.resize(column + columns, None);
                    }
                    for dc in 0..columns {
                        line[column + dc] = Some(if dr == 0 && dc == 0 {
                            cell.text.clone()
                        } else {
                            String::new()
                        });
                    }
                }
                column += columns;
            }
        }
        let width = grid.iter().map(Vec::len).max().unwrap_or(0);
        grid.into_iter()
            .map(|row| {
                let mut row: Vec<String> = row.into_iter().map(Option::unwrap_or_default).collect();
                row.resize(width, String::new());
                row
            })
            .collect()
    }
}

/// An inline mark that spans part of a block's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mark {
    /// Strong importance, written `**…**`.
    Strong,
    /// Emphasis, written `*…*`.
    Emphasis,
    /// A link to the target, written `[…](target)`.
    Link(String),
}

impl Mark {
    fn opener(&self) -> &'static str {
        match self {
            Mark::Strong => "**",
            Mark::Emphasis => "*",
            Mark::Link(_) => "[",
        }
    }

    fn closer(&self) -> String {
        match self {
            Mark::Strong => "**".to_owned(),
            Mark::Emphasis => "*".to_owned(),
            Mark::Link(target) => format!("]({})", link_target(target)),
        }
    }
}

/// `Inlines` builds the text of one block as inline Markdown
/// ([`Inline::Markdown`]): words with the document's own Markdown
/// characters escaped, runs of white space collapsed to one space (none at
/// the start or end), hard line breaks, and marks. A mark's opener is
/// written only when text follows it, so a mark around nothing or around
/// white space alone leaves no stray `**`, and white space at a mark's
/// edges lands outside it, where Markdown wants it.
#[derive(Debug, Default)]
pub(crate) struct Inlines {
    text: String,
    space: bool,
    /// The open marks, innermost last, with whether each opener is written.
    marks: Vec<(Mark, bool)>,
    /// How many of `marks` are not written yet, so that text under many
    /// written marks does not look at each of them again for every word.
    unwritten: usize,
}

impl Inlines {
    /// Words of the document's text: white space collapses, Markdown
    /// characters are escaped.
    pub(crate) fn words(&mut self, text: &str) {
        for (index, word) in text.split(is_collapsible).enumerate() {
            if index > 0 {
                self.space = true;
            }
            if !word.is_empty() {
                self.content();
                self.text.push_str(&escape_inline(word));
            }
        }
    }

    /// A piece that is inline Markdown already (an image, a code span),
    /// written as one word.
    pub(crate) fn markdown(&mut self, piece: &str) {
        if !piece.is_empty() {
            self.content();
            self.text.push_str(piece);
        }
    }

    /// Inline code: `code` as a code span, its white space collapsed.
    pub(crate) fn code(&mut self, code: &str) {
        let code = code
            .split(is_collapsible)
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        if code.is_empty() {
            return;
        }
        let longest = code.split(|c| c != '`').map(str::len).max().unwrap_or(0);
        let fence = "`".repeat(longest + 1);
        let pad = if code.starts_with('`') || code.ends_with('`') {
            " "
        } else {
            ""
        };
        self.markdown(&format!("{fence}{pad}{code}{pad}{fence}"));
    }

    /// A space between words, written only if a word follows.
    pub(crate) fn space(&mut self) {
        if !self.text.is_empty() {
            self.space = true;
        }
    }

    /// A hard line break (`\n` in the block's text), unless the text is
    /// empty or ends in one already.
    pub(crate) fn line_break(&mut self) {
        self.space = false;
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.close_written();
            self.text.push('\n');
        }
    }

    /// Opens a mark; [`Self::close`] ends it.
    pub(crate) fn open(&mut self, mark: Mark) {
        self.marks.push((mark, false));
        self.unwritten += 1;
    }

    /// Closes the innermost open mark.
    pub(crate) fn close(&mut self) {
        match self.marks.pop() {
            Some((mark, true)) => self.text.push_str(&mark.closer()),
            Some((_, false)) => self.unwritten -= 1,
            None => {}
        }
    }

    /// Whether no text has been written since the last [`Self::take`].
    pub(crate) fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The text so far, with every open mark closed in it (and opened
    /// again before the next text), leaving the builder empty.
    pub(crate) fn take(&mut self) -> String {
        self.close_written();
        self.space = false;
        let text = std::mem::take(&mut self.text);
        text.trim_end_matches('\n').to_owned()
    }

    /// Closes the written marks in the text, to be opened again when text
    /// follows (a mark does not run across a line or a block).
    fn close_written(&mut self) {
        if self.unwritten == self.marks.len() {
            return;
        }
        for (mark, written) in self.marks.iter_mut().rev() {
            if *written {
                self.text.push_str(&mark.closer());
                *written = false;
            }
        }
        self.unwritten = self.marks.len();
    }

    /// Before text: the pending space, then the openers not yet written.
    fn content(&mut self) {
        if self.space && !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push(' ');
        }
        self.space = false;
        if self.unwritten == 0 {
            return;
        }
        self.unwritten = 0;
        for (mark, written) in &mut self.marks {
            if !*written {
                // "!" right before a link's "[" would make it an image.
                if matches!(mark, Mark::Link(_)) && self.text.ends_with('!') {
                    self.text.pop();
                    self.text.push_str("\\!");
                }
                self.text.push_str(mark.opener());
                *written = true;
            }
        }
    }
}

/// HTML's collapsible white space: space, tab, line feed, form feed,
/// carriage return (not the no-break space).
fn is_collapsible(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{c}' | '\r')
}

/// A link's target as Markdown writes it inside `(…)`: white space,
/// parentheses and angle brackets percent-encoded, control characters
/// dropped.
pub(crate) fn link_target(target: &str) -> String {
    let mut out = String::with_capacity(target.len());
    for c in target.trim().chars() {
        match c {
            ' ' => out.push_str("%20"),
            '(' => out.push_str("%28"),
            ')' => out.push_str("%29"),
            '<' => out.push_str("%3C"),
            '>' => out.push_str("%3E"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Writes `blocks` of plain text as Markdown into `out`; see [`render`].
pub(crate) fn write_markdown(blocks: &[Block], out: &mut MdOut) {
    for block in blocks {
        if out.is_full() {
            return;
        }
        render(block, Inline::Plain, out);
    }
}

/// `Writer` renders a document's blocks as Markdown as its reader produces
/// them, so a document is never held twice, and stops at its cap.
pub(crate) struct Writer {
    out: MdOut,
    inline: Inline,
}

impl Writer {
    /// A writer of at most `cap` bytes of Markdown, for blocks whose text
    /// is written as `inline`.
    pub(crate) fn new(cap: usize, inline: Inline) -> Self {
        Self {
            out: MdOut::new(cap),
            inline,
        }
    }

    /// Renders the next block.
    pub(crate) fn push(&mut self, block: &Block) {
        if !self.out.is_full() {
            render(block, self.inline, &mut self.out);
        }
    }

    /// Whether the cap was reached: nothing more will be taken.
    pub(crate) fn is_full(&self) -> bool {
        self.out.is_full()
    }

    /// The Markdown, with the document's title and notes.
    pub(crate) fn finish(self, title: Option<String>, notes: Vec<String>) -> Markdown {
        self.out.finish(title, notes)
    }
}

/// A table with spans as an HTML block: one line per row, every cell a
/// `<td>` with its `colspan` and `rowspan`, its text HTML-escaped (line
/// breaks as `<br>`), and no blank line inside, which would end the block.
fn html_table(t: &Table) -> String {
    use std::fmt::Write as _;
    let mut out = String::from("<table>\n");
    for row in &t.rows {
        out.push_str("<tr>");
        for cell in row {
            out.push_str("<td");
            if cell.col_span > 1 {
                let _ = write!(out, " colspan=\"{}\"", cell.col_span);
            }
            if cell.row_span > 1 {
                let _ = write!(out, " rowspan=\"{}\"", cell.row_span);
            }
            out.push('>');
            let lines: Vec<String> = cell
                .text
                .trim()
                .lines()
                .map(|line| html_escape(line.trim()))
                .collect();
            out.push_str(&lines.join("<br>"));
            out.push_str("</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>");
    out
}

/// Text as HTML text: `&`, `<`, `>` and `"` as entities.
fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// Writes one block as Markdown: `#` headings on one line, pipe tables,
/// `-` and numbered list items (nested four spaces a level, which holds
/// under any marker up to `99.`), figure text as a paragraph, page markers
/// as `<!-- page N of M -->` comments and notes in italics. Plain text is
/// escaped so a document's words never turn into Markdown structure; a
/// line break inside a paragraph is a Markdown hard break.
fn render(block: &Block, inline: Inline, out: &mut MdOut) {
    let text = |text: &str| match inline {
        Inline::Plain => escape_inline(text),
        Inline::Markdown => text.to_owned(),
    };
    match block {
        Block::Heading {
            level,
            text: heading,
        } => {
            let hashes = "#".repeat(usize::from((*level).clamp(1, 6)));
            let one_line = heading.split_whitespace().collect::<Vec<_>>().join(" ");
            out.block(&format!("{hashes} {}", text(&one_line)));
        }
        Block::Paragraph(paragraph) | Block::Figure(paragraph) => {
            let lines: Vec<String> = paragraph
                .trim()
                .lines()
                .map(|line| match inline {
                    Inline::Plain => escape_line(line.trim()),
                    Inline::Markdown => start_safe(line.trim()),
                })
                .collect();
            out.block(&lines.join("\\\n"));
        }
        Block::ListItem {
            level,
            marker,
            text: item,
        } => {
            let indent = "    ".repeat(usize::from(*level).min(8));
            let marker = marker.as_deref().unwrap_or("-");
            // An item's own text that starts like a marker ("1. ", "- ")
            // would open a list inside the item.
            let continued =
                start_safe(&text(item.trim())).replace('\n', &format!("\n{indent}    "));
            out.item(&format!("{indent}{marker} {continued}"));
        }
        Block::Table(t) => {
            let spans = t
                .rows
                .iter()
                .flatten()
                .any(|c| c.col_span > 1 || c.row_span > 1);
            if spans {
                // A pipe table has no spans: an HTML table keeps them
                // (CommonMark passes an HTML block through as it is).
                out.block(&html_table(t));
            } else {
                // Every Office table: their readers fill merged places
                // themselves. Written from the cells as they are, without a
                // second grid of copies.
                out.block(&table_of_cells(&t.rows, inline));
            }
        }
        Block::Note(note) => out.block(&format!("*({})*", text(note.trim()))),
        Block::Page { number, total } => {
            out.block(&format!("<!-- page {number} of {total} -->"));
        }
        Block::Code {
            language,
            text: code,
        } => out.block(&code_block(language.as_deref(), code)),
        Block::Quote(blocks) => {
            let mut quoted = MdOut::new(out.room());
            for block in blocks {
                if quoted.is_full() {
                    break;
                }
                render(block, inline, &mut quoted);
            }
            let quoted = quoted.finish(None, Vec::new()).text;
            let lines: Vec<String> = quoted
                .lines()
                .map(|line| {
                    if line.is_empty() {
                        ">".to_owned()
                    } else {
                        format!("> {line}")
                    }
                })
                .collect();
            out.block(&lines.join("\n"));
        }
        Block::Rule => out.block("---"),
    }
}

/// A fenced code block: a fence of backticks longer than any run of them
/// in the code (at least three), the language as its info string when it
/// is a plain word, the code's lines as they are.
fn code_block(language: Option<&str>, code: &str) -> String {
    let longest = code.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let language = language
        .map(str::trim)
        .filter(|l| {
            !l.is_empty()
                && l.len() <= 40
                && l.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '_' | '.' | '#'))
        })
        .unwrap_or("");
    let code = code.trim_end_matches(['\n', '\r']);
    let code = code.strip_prefix('\n').unwrap_or(code);
    format!("{fence}{language}\n{code}\n{fence}")
}

/// [`table`] of rows of cells without spans, each cell's text escaped as
/// it is written.
fn table_of_cells(rows: &[Vec<Cell>], inline: Inline) -> String {
    let texts: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|cell| match inline {
                    Inline::Plain => escape_inline(&cell.text),
                    Inline::Markdown => cell.text.clone(),
                })
                .collect()
        })
        .collect();
    table(&texts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(blocks: &[Block]) -> String {
        let mut out = MdOut::new(10_000);
        write_markdown(blocks, &mut out);
        out.finish(None, Vec::new()).text
    }

    #[test]
    fn blocks_render_as_markdown_structure_with_their_text_escaped() {
        let blocks = vec![
            Block::Page {
                number: 1,
                total: 2,
            },
            Block::Heading {
                level: 2,
                text: "3. Results *now*".to_owned(),
            },
            Block::Paragraph("1. not a list".to_owned()),
            Block::ListItem {
                level: 0,
                marker: None,
                text: "first".to_owned(),
            },
            Block::ListItem {
                level: 1,
                marker: Some("2.".to_owned()),
                text: "second".to_owned(),
            },
            Block::Note("Page 2 has no text layer.".to_owned()),
        ];
        assert_eq!(
            render(&blocks),
            "<!-- page 1 of 2 -->\n\n## 3. Results \\*now\\*\n\n1\\. not a list\n\n\
             - first\n    2. second\n\n*(Page 2 has no text layer.)*\n"
        );
    }

    #[test]
    fn a_table_without_spans_is_written_as_the_grid_would_be() {
        let rows = vec![
            vec![Cell::new("Name"), Cell::new("Note")],
            vec![Cell::new("a|b"), Cell::new("one\ntwo"), Cell::new("*x*")],
            vec![Cell::new("short")],
            vec![Cell::new(" "), Cell::new("")],
        ];
        let grid: Vec<Vec<String>> = Table { rows: rows.clone() }
            .grid()
            .into_iter()
            .map(|row| row.iter().map(|c| escape_inline(c)).collect())
            .collect();
        assert_eq!(table_of_cells(&rows, Inline::Plain), table(&grid));
        assert_eq!(
            table_of_cells(&rows, Inline::Plain),
            "| Name | Note |  |\n| --- | --- | --- |\n| a\\|b | one<br>two | \\*x\\* |\n| short |  |  |\n"
        );
        assert_eq!(table_of_cells(&[vec![Cell::new(" ")]], Inline::Plain), "");
    }

    #[test]
    fn spanning_cells_are_written_as_an_html_table_that_keeps_the_spans() {
        let mut wide = Cell::new("Both");
        wide.col_span = 2;
        let mut tall = Cell::new("Tall");
        tall.row_span = 2;
        let t = Table {
            rows: vec![
                vec![Cell::new("Name"), wide],
                vec![tall, Cell::new("a"), Cell::new("b|c")],
                vec![Cell::new("x"), Cell::new("y")],
            ],
        };
        let markdown = render(&[Block::Table(t)]);
        assert_eq!(
            markdown,
            "<table>\n<tr><td>Name</td><td colspan=\"2\">Both</td></tr>\n\
             <tr><td rowspan=\"2\">Tall</td><td>a</td><td>b|c</td></tr>\n\
             <tr><td>x</td><td>y</td></tr>\n</table>\n"
        );
        // A CommonMark reader passes it through whole, as one HTML block.
        let events: Vec<pulldown_cmark::Event<'_>> =
            pulldown_cmark::Parser::new(&markdown).collect();
        assert!(
            events.iter().all(|e| matches!(
                e,
                pulldown_cmark::Event::Html(_)
                    | pulldown_cmark::Event::Start(pulldown_cmark::Tag::HtmlBlock)
                    | pulldown_cmark::Event::End(pulldown_cmark::TagEnd::HtmlBlock)
            )),
            "{events:?}"
        );
    }

    #[test]
    fn a_spanning_cells_text_is_escaped_as_html_and_its_lines_kept() {
        let mut wide = Cell::new("a < b & \"c\"\n\nsecond line");
        wide.col_span = 2;
        let t = Table {
            rows: vec![vec![wide], vec![Cell::new("<script>"), Cell::new("1")]],
        };
        assert_eq!(
            render(&[Block::Table(t)]),
            "<table>\n<tr><td colspan=\"2\">a &lt; b &amp; &quot;c&quot;<br><br>second line</td></tr>\n\
             <tr><td>&lt;script&gt;</td><td>1</td></tr>\n</table>\n"
        );
    }
}
