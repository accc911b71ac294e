//! Word documents (DOCX) as Markdown.
//!
//! Before the document itself, three small parts are read: the styles (which
//! paragraph style is a heading of which level, which carries a list), the
//! numbering (whether a list level is bulleted or numbered), and the
//! document's hyperlinks (relationship id to URL). Then the document is
//! streamed once: a heading style (`Title`, `Heading N`, or an outline level)
//! makes `#`…, a numbered paragraph (`w:numPr`, direct or from its style)
//! a `-` or `1.` item indented by its level, a table a GFM table whose first
//! row is the header, a hyperlink `[text](url)`, a bold run `**…**` and an
//! italic one `*…*` (directly or through its character style; headings take
//! no emphasis). The `Title` is the document's one top heading: where it is
//! used, `Heading 1` is `##` and every heading below moves down with it.
//! Deleted text and field instructions are skipped, text boxes follow their
//! paragraph, a table in a cell is flattened into the cell.

use std::collections::HashMap;
use std::io::BufRead;

use super::out::{CELL_COST_BYTES, Markdown};
use super::tables::{OpenTables, TablePart, table_block};
use crate::bounds::{Cancel, Failure};
use crate::document::{Block, Inline, Inlines, Mark, Writer};
use crate::office::package::Package;
use crate::office::xml::{Node, Xml, attribute, local, named, prefixed_id};
use crate::options::Options;
use quick_xml::events::BytesStart;

/// The main part of a package whose relationships do not name one.
const DEFAULT_MAIN: &str = "word/document.xml";

/// The note every Word Markdown carries.
const DOCX_NOTE: &str = "Character formatting other than bold and italic, pictures, headers, footers, footnotes and comments are not included.";

/// `MAX_GRID_SPAN` is the most columns one merged cell is counted as (Word
/// allows 63), so a crafted span cannot make a row millions of cells wide.
const MAX_GRID_SPAN: usize = 64;

/// How deep a style's `basedOn` chain is followed.
const STYLE_CHAIN: usize = 16;

/// What a paragraph or character style says of its text.
#[derive(Debug, Clone, Default)]
struct Style {
    /// The heading level its name (`Title`, `Heading N`) gives.
    heading: Option<usize>,
    /// Whether its name is `Title`.
    title: bool,
    /// Whether its runs are bold, or not, when it says.
    bold: Option<bool>,
    /// Whether its runs are italic, or not, when it says.
    italic: Option<bool>,
    /// Its outline level, counted from 0.
    outline: Option<usize>,
    /// The list it numbers its paragraphs with, and the level.
    num_id: Option<String>,
    ilvl: Option<usize>,
    based_on: Option<String>,
}

/// Converts the Word document in `bytes`.
pub(crate) fn convert(
    bytes: &[u8],
    options: &Options,
    cancel: &Cancel,
) -> Result<Markdown, Failure> {
    let (mut package, main) = Package::open_with_main(bytes, options, DEFAULT_MAIN)?;
    let rels = package.relationships(&main)?;
    let part_of = |suffix: &str, fallback: &str| {
        rels.iter()
            .find(|rel| rel.kind.ends_with(suffix))
            .map_or_else(|| fallback.to_owned(), |rel| rel.target.clone())
    };
    let styles_part = part_of("/styles", "word/styles.xml");
    let numbering_part = part_of("/numbering", "word/numbering.xml");
    #[allow(clippy::redundant_closure)]
    let styles = package
        .read(&styles_part, |xml| read_styles(xml))?
        .unwrap_or_default();
    #[allow(clippy::redundant_closure)]
    let numbering = package
        .read(&numbering_part, |xml| read_numbering(xml))?
        .unwrap_or_default();
    let links = package.hyperlinks(&main)?;
    let mut out = Writer::new(options.office_text_bytes, Inline::Markdown);
    let context = Context {
        styles,
        numbering,
        links,
    };
    let budget = options.office_text_bytes;
    let title = package.read(&main, |xml| read_document(xml, &context, budget, cancel))?;
    let Some((blocks, title, cut)) = title else {
        return Err(Failure::unreadable(format!(
            "its main part {main} is missing"
        )));
    };
    blocks.write(&mut out);
    let mut notes = vec![DOCX_NOTE.to_owned()];
    if cut {
        notes.push(format!(
            "The document was cut at {} of text; the rest is not included.",
            crate::describe::human_size(budget as u64)
        ));
    }
    Ok(out.finish(title, notes))
}

/// Reads `w:styles`: every paragraph style's heading level, outline level,
/// numbering and parent.
fn read_styles<R: BufRead>(xml: &mut Xml<R>) -> Result<HashMap<String, Style>, Failure> {
    let part = xml.part().to_owned();
    let mut styles = HashMap::new();
    let mut current: Option<(String, Style)> = None;
    let mut level = 0;
    loop {
        match xml.next()? {
            Node::Start(start) => {
                let name = local(&start);
                if name == "style" {
                    let id = attribute(&start, &part, |k| named(k, "styleId"))?;
                    current = id.map(|id| (id, Style::default()));
                    level = xml.depth();
                    continue;
                }
                let Some((_, style)) = current.as_mut() else {
                    continue;
                };
                let value = || attribute(&start, &part, |k| named(k, "val"));
                match name {
                    "name" => {
                        if let Some(value) = value()? {
                            style.heading = heading_of_name(&value);
                            style.title = value.trim().eq_ignore_ascii_case("title");
                        }
                    }
                    "b" => style.bold = Some(switched_on(value()?.as_deref())),
                    "i" => style.italic = Some(switched_on(value()?.as_deref())),
                    "basedOn" => style.based_on = value()?,
                    "outlineLvl" => {
                        style.outline = value()?.and_then(|v| v.trim().parse().ok());
                    }
                    "numId" => style.num_id = value()?,
                    "ilvl" => style.ilvl = value()?.and_then(|v| v.trim().parse().ok()),
                    "tblPr" | "tcPr" | "trPr" | "tblStylePr" => xml.skip()?,
                    _ => {}
                }
            }
            Node::End => {
                if xml.depth() < level
                    && let Some((id, style)) = current.take()
                {
                    styles.insert(id, style);
                }
            }
            Node::Eof => return Ok(styles),
            Node::Text(_) | Node::Other => {}
        }
    }
}

/// Whether an on/off property (`w:b`, `w:i`) with value `value` is on: it
/// is when it has no value or one of `1`, `true`, `on`.
fn switched_on(value: Option<&str>) -> bool {
    value.is_none_or(|v| matches!(v.trim(), "1" | "true" | "on"))
}

/// The heading level a style's name stands for: `Title` is 1, `Heading N`
/// is N (1 to 9).
fn heading_of_name(name: &str) -> Option<usize> {
    let lower = name.trim().to_ascii_lowercase();
    if lower == "title" {
        return Some(1);
    }
    let level: usize = lower.strip_prefix("heading")?.trim().parse().ok()?;
    (1..=9).contains(&level).then_some(level)
}

/// `Numbering` tells, for a list and level, whether it is numbered.
#[derive(Debug, Default)]
struct Numbering {
    /// `numId` to `abstractNumId`.
    nums: HashMap<String, String>,
    /// (`abstractNumId`, level) to whether the level is numbered.
    ordered: HashMap<(String, usize), bool>,
}

/// Reads `w:numbering`: each list's levels and their number formats.
fn read_numbering<R: BufRead>(xml: &mut Xml<R>) -> Result<Numbering, Failure> {
    let part = xml.part().to_owned();
    let mut numbering = Numbering::default();
    let mut abstract_id: Option<String> = None;
    let mut lvl: Option<usize> = None;
    let mut num_id: Option<String> = None;
    loop {
        match xml.next()? {
            Node::Start(start) => match local(&start) {
                "abstractNum" => {
                    abstract_id = attribute(&start, &part, |k| named(k, "abstractNumId"))?;
                }
                "lvl" => {
                    lvl = attribute(&start, &part, |k| named(k, "ilvl"))?
                        .and_then(|v| v.trim().parse().ok());
                }
                "numFmt" => {
                    if let (Some(id), Some(level)) = (&abstract_id, lvl) {
                        let format = attribute(&start, &part, |k| named(k, "val"))?;
                        let ordered =
                            format.is_some_and(|f| !matches!(f.as_str(), "bullet" | "none"));
                        numbering.ordered.insert((id.clone(), level), ordered);
                    }
                }
                "num" => num_id = attribute(&start, &part, |k| named(k, "numId"))?,
                "abstractNumId" => {
                    if let Some(id) = num_id.take()
                        && let Some(value) = attribute(&start, &part, |k| named(k, "val"))?
                    {
                        numbering.nums.insert(id, value);
                    }
                }
                "lvlOverride" => xml.skip()?,
                _ => {}
            },
            Node::Eof => return Ok(numbering),
            Node::End | Node::Text(_) | Node::Other => {}
        }
    }
}

/// What the document walk consults.
struct Context {
    styles: HashMap<String, Style>,
    numbering: Numbering,
    links: HashMap<String, String>,
}

impl Context {
    /// A style's value found by `get`, following `basedOn`.
    fn inherited<T>(&self, style: &str, get: impl Fn(&Style) -> Option<T>) -> Option<T> {
        let mut id = style;
        for _ in 0..STYLE_CHAIN {
            let found = self.styles.get(id)?;
            if let Some(value) = get(found) {
                return Some(value);
            }
            id = found.based_on.as_deref()?;
        }
        None
    }

    /// Whether list `num_id` is numbered at `level`.
    fn ordered(&self, num_id: &str, level: usize) -> bool {
        self.numbering
            .nums
            .get(num_id)
            .and_then(|a| self.numbering.ordered.get(&(a.clone(), level)))
            .copied()
            .unwrap_or(false)
    }
}

/// A paragraph being read.
#[derive(Debug, Default)]
struct Paragraph {
    style: Option<String>,
    outline: Option<usize>,
    num_id: Option<String>,
    ilvl: Option<usize>,
    /// The Markdown of its runs, built as they come: escaped words, links
    /// and emphasis.
    text: Inlines,
    /// The marks open in `text`, innermost last, as `text` holds them.
    marks: Vec<Open>,
    /// Whether its style makes it a heading (which takes no emphasis),
    /// known once its properties are read.
    heading: Option<bool>,
    /// The depth of its `w:pPr`, while inside it.
    in_properties: bool,
}

/// One mark open in a paragraph's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Bold,
    Italic,
    /// A hyperlink, written as a link when it has a target.
    Link {
        written: bool,
    },
}

/// A run's character formatting as its `w:rPr` says it: direct, and its
/// character style.
#[derive(Debug, Clone, Default)]
struct RunFormat {
    bold: Option<bool>,
    italic: Option<bool>,
    style: Option<String>,
}

/// One open element, as far as the Markdown cares.
#[derive(Clone, Copy)]
enum Frame {
    Other,
    Paragraph,
    Run,
    Text,
    Hyperlink,
    Table,
    Row,
    /// A table cell and how many grid columns it spans.
    Cell {
        span: usize,
    },
    Alternate {
        taken: bool,
    },
}

/// The walk's state.
struct Walk<'c> {
    context: &'c Context,
    out: Blocks,
    frames: Vec<Frame>,
    paragraphs: Vec<Paragraph>,
    tables: OpenTables,
    /// Lines of text-box paragraphs waiting for their paragraph to end.
    pending: Vec<String>,
    /// The formatting of each open run, innermost last.
    runs: Vec<RunFormat>,
    used: usize,
    budget: usize,
    title: Option<String>,
    first_heading: Option<String>,
}

/// `Blocks` holds the document's blocks until it is read, since where a
/// `Title` is used, every other heading sits one level below it, and the
/// Title may come after the first heading.
#[derive(Default)]
struct Blocks {
    /// Each block, and whether it is a Title-styled heading.
    blocks: Vec<(Block, bool)>,
    /// Whether any paragraph is a Title.
    has_title: bool,
}

impl Blocks {
    fn push(&mut self, block: Block) {
        self.blocks.push((block, false));
    }

    fn push_title(&mut self, block: Block) {
        self.has_title = true;
        self.blocks.push((block, true));
    }

    /// Writes the blocks, headings other than the Title one level down
    /// when the document has a Title.
    fn write(self, out: &mut Writer) {
        for (mut block, title) in self.blocks {
            if let Block::Heading { level, .. } = &mut block
                && self.has_title
                && !title
            {
                *level = (*level + 1).min(6);
            }
            out.push(&block);
        }
    }
}

/// Reads `w:document`: its blocks, the document's title, and whether its
/// text passed the budget and was cut.
fn read_document<R: BufRead>(
    xml: &mut Xml<R>,
    context: &Context,
    budget: usize,
    cancel: &Cancel,
) -> Result<(Blocks, Option<String>, bool), Failure> {
    let part = xml.part().to_owned();
    let mut walk = Walk {
        context,
        out: Blocks::default(),
        frames: Vec::new(),
        paragraphs: Vec::new(),
        tables: OpenTables::default(),
        pending: Vec::new(),
        runs: Vec::new(),
        used: 0,
        budget,
        title: None,
        first_heading: None,
    };
    let mut cut = false;
    loop {
        if walk.used > walk.budget {
            cut = true;
            break;
        }
        match xml.next()? {
            Node::Start(start) => {
                // The element is owned apart from the reader, which may skip
                // past it.
                let start = start.into_owned();
                if let Some(frame) = walk.start(xml, &start, &part)? {
                    walk.frames.push(frame);
                }
            }
            Node::Text(text) => {
                if matches!(walk.frames.last(), Some(Frame::Text)) {
                    walk.words(&text);
                }
            }
            Node::End => {
                if let Some(frame) = walk.frames.pop() {
                    walk.end(frame, cancel)?;
                }
            }
            Node::Other => {}
            Node::Eof => break,
        }
    }
    let title = walk.title.or(walk.first_heading);
    Ok((walk.out, title, cut))
}

impl Walk<'_> {
    /// Opens an element: the frame it pushes, or `None` when it was
    /// skipped or taken as one branch of an alternate content.
    fn start<R: BufRead>(
        &mut self,
        xml: &mut Xml<R>,
        start: &BytesStart<'_>,
        part: &str,
    ) -> Result<Option<Frame>, Failure> {
        let name = local(start).to_owned();
        if let Some(Frame::Alternate { taken }) = self.frames.last_mut()
            && let Some(read) = xml.branch(&name, taken)?
        {
            return Ok(read.then_some(Frame::Other));
        }
        let in_properties = self.paragraphs.last().is_some_and(|p| p.in_properties);
        let value = || attribute(start, part, |k| named(k, "val"));
        if let Some(table_part) = self.tables.start(&name, &mut self.used) {
            return Ok(Some(match table_part {
                TablePart::Table => Frame::Table,
                TablePart::Row => Frame::Row,
                TablePart::Cell => Frame::Cell { span: 1 },
            }));
        }
        let frame = match name.as_str() {
            "del" | "moveFrom" | "delText" | "instrText" | "delInstrText" | "pPrChange"
            | "rPrChange" | "sectPr" => {
                xml.skip()?;
                return Ok(None);
            }
            "p" => {
                self.paragraphs.push(Paragraph::default());
                Frame::Paragraph
            }
            "pPr" => {
                if let Some(paragraph) = self.paragraphs.last_mut() {
                    paragraph.in_properties = true;
                }
                Frame::Other
            }
            "pStyle" | "outlineLvl" | "numId" | "ilvl" if in_properties => {
                let value = value()?;
                self.paragraph_property(&name, value);
                Frame::Other
            }
            "rPr" if in_properties => {
                xml.skip()?;
                return Ok(None);
            }
            "b" | "i" | "rStyle" if !self.runs.is_empty() => {
                let value = value()?;
                self.run_property(&name, value);
                Frame::Other
            }
            "hyperlink" => {
                let id = attribute(start, part, prefixed_id)?;
                let anchor = attribute(start, part, |k| named(k, "anchor"))?;
                let target = id
                    .and_then(|id| self.context.links.get(&id).cloned())
                    .or_else(|| anchor.map(|a| format!("#{a}")));
                self.open_link(target);
                Frame::Hyperlink
            }
            "fldSimple" => {
                let instruction = attribute(start, part, |k| named(k, "instr"))?;
                self.open_link(instruction.as_deref().and_then(field_link));
                Frame::Hyperlink
            }
            "r" => {
                self.runs.push(RunFormat::default());
                Frame::Run
            }
            "t" if !self.runs.is_empty() => Frame::Text,
            "tab" | "ptab" if !self.runs.is_empty() => {
                // A tab stays a tab: it lines up what a table would not.
                self.piece("\t");
                Frame::Other
            }
            "br" | "cr" if !self.runs.is_empty() => {
                if let Some(paragraph) = self.paragraphs.last_mut() {
                    paragraph.text.line_break();
                }
                Frame::Other
            }
            "noBreakHyphen" if !self.runs.is_empty() => {
                self.format_run();
                self.piece("-");
                Frame::Other
            }
            "gridSpan" => {
                let span = value()?
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(1)
                    .clamp(1, MAX_GRID_SPAN);
                self.used += CELL_COST_BYTES * (span - 1);
                if let Some(Frame::Cell { span: cell_span }) = self
                    .frames
                    .iter_mut()
                    .rev()
                    .find(|f| matches!(f, Frame::Cell { .. }))
                {
                    *cell_span = span;
                }
                Frame::Other
            }
            "AlternateContent" => Frame::Alternate { taken: false },
            _ => Frame::Other,
        };
        Ok(Some(frame))
    }

    /// Sets one property of the innermost paragraph from its `w:val`.
    fn paragraph_property(&mut self, name: &str, value: Option<String>) {
        let Some(paragraph) = self.paragraphs.last_mut() else {
            return;
        };
        let number = || value.as_deref().and_then(|v| v.trim().parse().ok());
        match name {
            "outlineLvl" => paragraph.outline = number(),
            "ilvl" => paragraph.ilvl = number(),
            "pStyle" => paragraph.style = value,
            "numId" => paragraph.num_id = value,
            _ => {}
        }
    }

    /// Sets one property of the innermost run from its `w:val`.
    fn run_property(&mut self, name: &str, value: Option<String>) {
        let Some(run) = self.runs.last_mut() else {
            return;
        };
        match name {
            "b" => run.bold = Some(switched_on(value.as_deref())),
            "i" => run.italic = Some(switched_on(value.as_deref())),
            "rStyle" => run.style = value,
            _ => {}
        }
    }

    /// Closes the innermost element, whose frame is `frame`.
    fn end(&mut self, frame: Frame, cancel: &Cancel) -> Result<(), Failure> {
        match frame {
            Frame::Run => {
                self.runs.pop();
            }
            Frame::Hyperlink => self.close_link(),
            Frame::Paragraph => {
                cancel.check()?;
                self.end_paragraph();
            }
            Frame::Table => {
                cancel.check()?;
                self.end_table();
            }
            Frame::Other => {
                // The end of a `w:pPr` is the end of the paragraph's
                // properties.
                let closes_properties = self.frames.len() == self.paragraph_frame() + 1;
                if let Some(p) = self.paragraphs.last_mut()
                    && p.in_properties
                    && closes_properties
                {
                    p.in_properties = false;
                }
            }
            Frame::Cell { span } => {
                // The merged cell's text stays in its first column;
                // the columns it covers follow it empty.
                self.tables.empty_cells(span - 1);
            }
            Frame::Text | Frame::Row | Frame::Alternate { .. } => {}
        }
        Ok(())
    }

    /// The frame index of the innermost open paragraph.
    fn paragraph_frame(&self) -> usize {
        self.frames
            .iter()
            .rposition(|f| matches!(f, Frame::Paragraph))
            .unwrap_or(0)
    }

    /// Adds a run's text to the innermost paragraph, in the run's
    /// formatting, within the budget.
    fn words(&mut self, text: &str) {
        if self.used > self.budget {
            return;
        }
        self.format_run();
        if let Some(paragraph) = self.paragraphs.last_mut() {
            self.used += text.len();
            paragraph.text.words(text);
        }
    }

    /// Adds inline Markdown (a hyphen that may not break) as it is.
    fn piece(&mut self, markdown: &str) {
        if let Some(paragraph) = self.paragraphs.last_mut() {
            self.used += markdown.len();
            paragraph.text.markdown(markdown);
        }
    }

    /// Whether the innermost run is bold and italic: its own properties,
    /// else its character style's.
    fn run_emphasis(&self) -> (bool, bool) {
        let Some(run) = self.runs.last() else {
            return (false, false);
        };
        let styled = |get: fn(&Style) -> Option<bool>| {
            run.style
                .as_deref()
                .and_then(|style| self.context.inherited(style, get))
        };
        (
            run.bold.or_else(|| styled(|s| s.bold)).unwrap_or(false),
            run.italic.or_else(|| styled(|s| s.italic)).unwrap_or(false),
        )
    }

    /// Opens and closes the innermost paragraph's bold and italic marks so
    /// that what comes next is in the innermost run's formatting. Marks
    /// open outside a link stay until it closes; a heading takes none.
    fn format_run(&mut self) {
        let (mut bold, mut italic) = self.run_emphasis();
        let context = self.context;
        let Some(paragraph) = self.paragraphs.last_mut() else {
            return;
        };
        let heading = if let Some(heading) = paragraph.heading {
            heading
        } else {
            let heading = heading_level(context, paragraph).is_some();
            paragraph.heading = Some(heading);
            heading
        };
        if heading {
            (bold, italic) = (false, false);
        }
        let inner = paragraph
            .marks
            .iter()
            .rposition(|m| matches!(m, Open::Link { .. }))
            .map_or(0, |link| link + 1);
        let outside = &paragraph.marks[..inner];
        let wanted: Vec<Open> = [
            (bold && !outside.contains(&Open::Bold), Open::Bold),
            (italic && !outside.contains(&Open::Italic), Open::Italic),
        ]
        .into_iter()
        .filter_map(|(want, mark)| want.then_some(mark))
        .collect();
        // Keep the longest run of open marks that is still wanted, in order.
        let open = paragraph.marks.len() - inner;
        let kept = paragraph.marks[inner..]
            .iter()
            .zip(&wanted)
            .take_while(|(have, want)| have == want)
            .count();
        if kept == open && kept == wanted.len() {
            return;
        }
        for _ in kept..open {
            paragraph.text.close();
            paragraph.marks.pop();
        }
        for mark in &wanted[kept..] {
            paragraph.text.open(match mark {
                Open::Bold => Mark::Strong,
                _ => Mark::Emphasis,
            });
            paragraph.marks.push(*mark);
        }
    }

    fn open_link(&mut self, target: Option<String>) {
        if let Some(paragraph) = self.paragraphs.last_mut() {
            let written = target.is_some();
            if let Some(target) = target {
                paragraph.text.open(Mark::Link(target));
            }
            paragraph.marks.push(Open::Link { written });
        }
    }

    /// Closes the innermost link, and the bold and italic marks opened
    /// inside it.
    fn close_link(&mut self) {
        let Some(paragraph) = self.paragraphs.last_mut() else {
            return;
        };
        while let Some(mark) = paragraph.marks.pop() {
            match mark {
                Open::Link { written } => {
                    if written {
                        paragraph.text.close();
                    }
                    return;
                }
                Open::Bold | Open::Italic => paragraph.text.close(),
            }
        }
    }

    /// Finishes the innermost paragraph: into the cell, text box or
    /// document it belongs to.
    fn end_paragraph(&mut self) {
        let Some(mut paragraph) = self.paragraphs.pop() else {
            return;
        };
        let text = paragraph.text.take().trim().to_owned();
        // A paragraph inside another one is in a text box: it waits for
        // the paragraph holding it.
        if !self.paragraphs.is_empty() && !self.in_cell_of_current_paragraph() {
            if !text.is_empty() {
                self.pending.push(text);
            }
            return;
        }
        let boxed = std::mem::take(&mut self.pending);
        if let Some(cell) = self.current_cell() {
            for piece in std::iter::once(text).chain(boxed) {
                if !piece.is_empty() {
                    if !cell.is_empty() {
                        cell.push('\n');
                    }
                    cell.push_str(&piece);
                }
            }
            return;
        }
        self.pending = boxed;
        self.write_paragraph(&paragraph, &text);
        for line in std::mem::take(&mut self.pending) {
            self.out.push(Block::Paragraph(line));
        }
    }

    /// Whether the innermost open cell is inside the innermost open
    /// paragraph (a table in a text box), so a paragraph ending now belongs
    /// to the cell.
    fn in_cell_of_current_paragraph(&self) -> bool {
        let paragraph = self.paragraph_frame();
        self.frames
            .iter()
            .rposition(|f| matches!(f, Frame::Cell { .. }))
            .is_some_and(|cell| cell > paragraph)
    }

    /// The innermost open cell's text, when a cell is open.
    fn current_cell(&mut self) -> Option<&mut String> {
        if !self.frames.iter().any(|f| matches!(f, Frame::Cell { .. })) {
            return None;
        }
        self.tables.last_cell()
    }

    /// Writes a body paragraph as a heading, a list item or a paragraph.
    fn write_paragraph(&mut self, paragraph: &Paragraph, text: &str) {
        if text.is_empty() {
            return;
        }
        let context = self.context;
        let style = paragraph.style.as_deref();
        if let Some(level) = heading_level(context, paragraph) {
            let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
            let is_title = style.is_some_and(|s| {
                s.eq_ignore_ascii_case("title")
                    || context
                        .inherited(s, |st| st.title.then_some(true))
                        .is_some()
            });
            if is_title && self.title.is_none() {
                self.title = Some(super::out::unescape(&one_line));
            }
            if level == 1 && !is_title && self.first_heading.is_none() {
                self.first_heading = Some(super::out::unescape(&one_line));
            }
            let block = Block::Heading {
                // At most 9, from the style or outline level.
                level: u8::try_from(level.min(6)).unwrap_or(6),
                text: one_line,
            };
            if is_title {
                self.out.push_title(block);
            } else {
                self.out.push(block);
            }
            return;
        }
        let num_id = paragraph
            .num_id
            .clone()
            .or_else(|| style.and_then(|s| context.inherited(s, |st| st.num_id.clone())));
        if let Some(num_id) = num_id.filter(|id| id.trim() != "0") {
            let level = paragraph
                .ilvl
                .or_else(|| style.and_then(|s| context.inherited(s, |st| st.ilvl)))
                .unwrap_or(0)
                .min(8);
            let marker = context.ordered(&num_id, level).then(|| "1.".to_owned());
            self.out.push(Block::ListItem {
                // At most 8.
                level: u8::try_from(level).unwrap_or(8),
                marker,
                text: text.to_owned(),
            });
            return;
        }
        self.out.push(Block::Paragraph(text.to_owned()));
    }

    /// Finishes the innermost table: as a GFM table in the body, or
    /// flattened into the cell that holds it.
    fn end_table(&mut self) {
        let Some(finished) = self.tables.close() else {
            return;
        };
        if let Some(cell) = self.current_cell() {
            for row in &finished {
                let line = row
                    .iter()
                    .map(|c| c.replace('\n', " "))
                    .filter(|c| !c.trim().is_empty())
                    .collect::<Vec<_>>()
                    .join(" ");
                if !line.is_empty() {
                    if !cell.is_empty() {
                        cell.push('\n');
                    }
                    cell.push_str(&line);
                }
            }
            return;
        }
        if self.paragraphs.is_empty() {
            self.out.push(table_block(finished));
        } else {
            // A table in a text box: its rows wait with the box's lines.
            for row in &finished {
                self.pending.push(row.join(" "));
            }
        }
    }
}

/// The heading level of `paragraph`: from its style's name (`Title`,
/// `Heading N`), else its outline level, direct or from its style.
fn heading_level(context: &Context, paragraph: &Paragraph) -> Option<usize> {
    let style = paragraph.style.as_deref();
    style
        .and_then(|s| context.inherited(s, |st| st.heading))
        .or_else(|| {
            paragraph
                .outline
                .or_else(|| style.and_then(|s| context.inherited(s, |st| st.outline)))
                .filter(|&level| level < 9)
                .map(|level| level + 1)
        })
}

/// The target of a `HYPERLINK "url"` field instruction.
fn field_link(instruction: &str) -> Option<String> {
    let rest = instruction.trim().strip_prefix("HYPERLINK")?.trim();
    let quoted = rest.strip_prefix('"')?;
    let end = quoted.find('"')?;
    Some(quoted[..end].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::office::tests::{content_types, root_rels, zip_of};

    const WORD: &str =
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml";
    const NS: &str = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships""#;

    fn docx(body: &str, styles: &str, numbering: &str) -> Vec<u8> {
        let document = format!("<w:document {NS}><w:body>{body}</w:body></w:document>");
        let styles = format!("<w:styles {NS}>{styles}</w:styles>");
        let numbering = format!("<w:numbering {NS}>{numbering}</w:numbering>");
        let rels = r#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering" Target="numbering.xml"/><Relationship Id="rId9" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="https://example.com/a?b=1" TargetMode="External"/></Relationships>"#;
        zip_of(&[
            (
                "[Content_Types].xml",
                &content_types("word/document.xml", WORD),
            ),
            ("_rels/.rels", &root_rels("word/document.xml")),
            ("word/_rels/document.xml.rels", rels),
            ("word/document.xml", &document),
            ("word/styles.xml", &styles),
            ("word/numbering.xml", &numbering),
        ])
    }

    fn run(text: &str) -> String {
        format!("<w:r><w:t xml:space=\"preserve\">{text}</w:t></w:r>")
    }

    fn styled(style: &str, text: &str) -> String {
        format!(
            "<w:p><w:pPr><w:pStyle w:val=\"{style}\"/></w:pPr>{}</w:p>",
            run(text)
        )
    }

    fn markdown(bytes: &[u8]) -> Markdown {
        convert(bytes, &Options::default(), &Cancel::new()).expect("the document converts")
    }

    const STYLES: &str = r#"<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/></w:style>
<w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/><w:rPr><w:b/></w:rPr></w:style>
<w:style w:type="paragraph" w:styleId="Custom"><w:name w:val="Chapter"/><w:pPr><w:outlineLvl w:val="2"/></w:pPr></w:style>
<w:style w:type="paragraph" w:styleId="ListBullet"><w:name w:val="List Bullet"/><w:pPr><w:numPr><w:numId w:val="1"/></w:numPr></w:pPr></w:style>
<w:style w:type="paragraph" w:styleId="ListNumber"><w:name w:val="List Number"/><w:basedOn w:val="ListBase"/></w:style>
<w:style w:type="paragraph" w:styleId="ListBase"><w:name w:val="List Base"/><w:pPr><w:numPr><w:numId w:val="2"/></w:numPr></w:pPr></w:style>"#;

    const NUMBERING: &str = r#"<w:abstractNum w:abstractNumId="10"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/></w:lvl><w:lvl w:ilvl="1"><w:numFmt w:val="bullet"/></w:lvl></w:abstractNum>
<w:abstractNum w:abstractNumId="20"><w:lvl w:ilvl="0"><w:numFmt w:val="decimal"/></w:lvl></w:abstractNum>
<w:num w:numId="1"><w:abstractNumId w:val="10"/></w:num><w:num w:numId="2"><w:abstractNumId w:val="20"/></w:num>"#;

    #[test]
    fn heading_styles_and_outline_levels_become_hashes_and_the_title_is_named() {
        let body = [
            styled("Title", "The Title"),
            styled("Heading2", "Second Level"),
            styled("Custom", "By Outline"),
            format!(
                "<w:p><w:pPr><w:outlineLvl w:val=\"0\"/></w:pPr>{}</w:p>",
                run("Direct Outline")
            ),
            styled("Normal", "# just text"),
        ]
        .concat();
        let md = markdown(&docx(&body, STYLES, NUMBERING));
        // The Title is the one top heading; every other heading sits below it.
        assert_eq!(
            md.text,
            "# The Title\n\n### Second Level\n\n#### By Outline\n\n## Direct Outline\n\n\\# just text\n"
        );
        assert_eq!(md.title.as_deref(), Some("The Title"));
    }

    #[test]
    fn the_title_sits_above_heading_one_wherever_it_stands_and_without_one_heading_one_is_top() {
        let styles = format!(
            "{STYLES}<w:style w:type=\"paragraph\" w:styleId=\"Heading1\"><w:name w:val=\"heading 1\"/></w:style>"
        );
        let with_title = [
            styled("Heading1", "Before"),
            styled("Title", "Field Guide"),
            styled("Heading1", "Getting Started"),
            styled("Heading2", "Route Steps"),
        ]
        .concat();
        assert_eq!(
            markdown(&docx(&with_title, &styles, NUMBERING)).text,
            "## Before\n\n# Field Guide\n\n## Getting Started\n\n### Route Steps\n"
        );
        let without = [
            styled("Heading1", "Getting Started"),
            styled("Heading2", "Route Steps"),
        ]
        .concat();
        let md = markdown(&docx(&without, &styles, NUMBERING));
        assert_eq!(md.text, "# Getting Started\n\n## Route Steps\n");
        assert_eq!(md.title.as_deref(), Some("Getting Started"));
    }

    /// A run of `text` with the run properties `properties`.
    fn formatted(properties: &str, text: &str) -> String {
        format!("<w:r><w:rPr>{properties}</w:rPr><w:t xml:space=\"preserve\">{text}</w:t></w:r>")
    }

    #[test]
    fn bold_and_italic_runs_keep_their_marks_and_neighbours_of_one_kind_share_them() {
        let styles = format!(
            "{STYLES}<w:style w:type=\"character\" w:styleId=\"Strong\"><w:name w:val=\"Strong\"/><w:rPr><w:b/></w:rPr></w:style>\
             <w:style w:type=\"character\" w:styleId=\"Quiet\"><w:name w:val=\"Quiet\"/><w:basedOn w:val=\"Strong\"/><w:rPr><w:i/></w:rPr></w:style>"
        );
        let body = [
            format!(
                "<w:p>{}{}{}{}{}{}{}{}</w:p>",
                run("Walk "),
                formatted("<w:b/>", "slowly "),
                run("on "),
                formatted("<w:i w:val=\"true\"/>", "wet"),
                run(" rocks and "),
                formatted("<w:b/><w:i/>", "never"),
                formatted("<w:b w:val=\"0\"/>", " alone"),
                run("."),
            ),
            format!(
                "<w:p>{}{}{}{}</w:p>",
                formatted("<w:b/>", "one "),
                formatted("<w:b/>", "bold phrase"),
                formatted("<w:rStyle w:val=\"Strong\"/>", ", styled"),
                formatted("<w:rStyle w:val=\"Quiet\"/>", " and quiet"),
            ),
            format!(
                "<w:p><w:pPr><w:pStyle w:val=\"Heading2\"/></w:pPr>{}</w:p>",
                formatted("<w:b/>", "A bold heading")
            ),
            format!("<w:p>{}</w:p>", formatted("<w:b/>", "  ")),
            format!(
                "<w:p>{}<w:hyperlink r:id=\"rId9\">{}</w:hyperlink>{}</w:p>",
                formatted("<w:b/>", "see "),
                formatted("<w:b/>", "the site"),
                run(" now"),
            ),
        ]
        .concat();
        let md = markdown(&docx(&body, &styles, NUMBERING));
        assert_eq!(
            md.text,
            "Walk **slowly** on *wet* rocks and ***never*** alone.\n\n\
             **one bold phrase, styled *and quiet***\n\n\
             ## A bold heading\n\n\
             **see [the site](https://example.com/a?b=1)** now\n"
        );
        assert!(
            !md.notes.iter().any(|n| n.contains("Character formatting,")),
            "{:?}",
            md.notes
        );
    }

    #[test]
    fn numbered_paragraphs_are_list_items_indented_by_level() {
        let direct = |level: usize, text: &str| {
            format!(
                "<w:p><w:pPr><w:numPr><w:ilvl w:val=\"{level}\"/><w:numId w:val=\"1\"/></w:numPr></w:pPr>{}</w:p>",
                run(text)
            )
        };
        let body = [
            styled("ListBullet", "first bullet"),
            direct(1, "nested bullet"),
            styled("ListNumber", "numbered by inherited style"),
            styled("Normal", "after"),
        ]
        .concat();
        let md = markdown(&docx(&body, STYLES, NUMBERING));
        assert_eq!(
            md.text,
            "- first bullet\n    - nested bullet\n1. numbered by inherited style\n\nafter\n"
        );
    }

    #[test]
    fn tables_are_gfm_with_merged_cells_breaks_and_pipes_kept_in_their_columns() {
        let cell = |text: &str| format!("<w:tc><w:p>{}</w:p></w:tc>", run(text));
        let body = format!(
            "<w:tbl><w:tr>{}{}{}</w:tr><w:tr><w:tc><w:tcPr><w:gridSpan w:val=\"2\"/></w:tcPr><w:p>{}</w:p></w:tc>{}</w:tr><w:tr>{}<w:tc><w:p>{}</w:p><w:p>{}</w:p></w:tc>{}</w:tr></w:tbl>",
            cell("A"),
            cell("B"),
            cell("C"),
            run("wide"),
            cell("x|y"),
            cell("1"),
            run("two"),
            run("lines"),
            cell("3"),
        );
        let md = markdown(&docx(&body, STYLES, NUMBERING));
        assert_eq!(
            md.text,
            "| A | B | C |\n| --- | --- | --- |\n| wide |  | x\\|y |\n| 1 | two<br>lines | 3 |\n"
        );
    }

    #[test]
    fn hyperlinks_keep_their_targets_and_deleted_text_is_gone() {
        let body = format!(
            "<w:p>{}<w:hyperlink r:id=\"rId9\">{}</w:hyperlink>{}<w:del><w:r><w:delText>gone</w:delText></w:r></w:del><w:fldSimple w:instr=' HYPERLINK \"https://field.example/x\" '>{}</w:fldSimple></w:p>",
            run("See "),
            run("the site"),
            run(" and "),
            run("a field"),
        );
        let md = markdown(&docx(&body, STYLES, NUMBERING));
        assert_eq!(
            md.text,
            "See [the site](https://example.com/a?b=1) and [a field](https://field.example/x)\n"
        );
    }

    #[test]
    fn a_text_box_follows_its_paragraph_and_a_nested_table_is_flattened() {
        let body = format!(
            "<w:p>{}<w:r><w:pict><w:txbxContent><w:p>{}</w:p></w:txbxContent></w:pict></w:r></w:p><w:tbl><w:tr><w:tc><w:tbl><w:tr><w:tc><w:p>{}</w:p></w:tc><w:tc><w:p>{}</w:p></w:tc></w:tr></w:tbl></w:tc></w:tr></w:tbl>",
            run("outer"),
            run("boxed"),
            run("in"),
            run("ner"),
        );
        let md = markdown(&docx(&body, STYLES, NUMBERING));
        assert_eq!(md.text, "outer\n\nboxed\n\n| in ner |\n| --- |\n");
    }

    // The bounds every read of a Word document holds: the view and extract
    // both read it here.

    fn reason_for(bytes: &[u8], options: &Options) -> String {
        match convert(bytes, options, &Cancel::new()) {
            Err(Failure::Unreadable(reason)) => reason,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    fn document_of(document: &str) -> Vec<u8> {
        zip_of(&[
            (
                "[Content_Types].xml",
                &content_types("word/document.xml", WORD),
            ),
            ("_rels/.rels", &root_rels("word/document.xml")),
            ("word/document.xml", document),
        ])
    }

    fn body_of(body: &str) -> Vec<u8> {
        document_of(&format!(
            "<w:document {NS}><w:body>{body}</w:body></w:document>"
        ))
    }

    fn paragraph(text: &str) -> String {
        format!("<w:p>{}</w:p>", run(text))
    }

    #[test]
    fn nesting_is_accepted_up_to_the_depth_limit_and_refused_past_it() {
        // w:document, w:body, w:p, w:r, w:t are 5 levels.
        let nested = |levels: usize| {
            let fill = levels - 5;
            format!(
                "{}{}{}",
                "<x>".repeat(fill),
                paragraph("deep"),
                "</x>".repeat(fill)
            )
        };
        for (limit, levels, ok) in [
            (1000, 1000, true),
            (1000, 1001, false),
            (8, 8, true),
            (8, 9, false),
        ] {
            let options = Options {
                xml_depth: limit,
                ..Options::default()
            };
            let result = convert(&body_of(&nested(levels)), &options, &Cancel::new());
            if ok {
                assert_eq!(
                    result.expect("within the limit").text,
                    "deep\n",
                    "{levels} of {limit}"
                );
            } else {
                assert_eq!(
                    result.map(|md| md.text),
                    Err(Failure::Unreadable(format!(
                        "its XML is nested deeper than {limit} levels"
                    ))),
                    "{levels} of {limit}"
                );
            }
        }
    }

    #[test]
    fn billion_laughs_is_refused_at_once_without_expanding() {
        use std::fmt::Write as _;
        use std::time::{Duration, Instant};

        let mut entities = String::from(r#"<!ENTITY lol "lol">"#);
        for level in 1..10 {
            let previous = if level == 1 {
                "lol".to_owned()
            } else {
                format!("lol{}", level - 1)
            };
            let _ = write!(
                entities,
                "<!ENTITY lol{level} \"{}\">",
                format!("&{previous};").repeat(10)
            );
        }
        let document = format!(
            r#"<?xml version="1.0"?><!DOCTYPE w:document [{entities}]><w:document {NS}><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>"#
        );
        let started = Instant::now();
        let reason = reason_for(&document_of(&document), &Options::default());
        assert!(started.elapsed() < Duration::from_secs(1));
        assert!(reason.contains("DOCTYPE"), "{reason}");

        let undefined = reason_for(&body_of(&paragraph("&lol9;")), &Options::default());
        assert!(undefined.contains("&lol9;"), "{undefined}");
    }

    #[test]
    fn the_text_is_cut_at_its_cap_with_a_note() {
        let body = format!("{}{}", paragraph("abc"), paragraph("def"));
        let options = |cap: usize| Options {
            office_text_bytes: cap,
            ..Options::default()
        };
        let whole = convert(&body_of(&body), &options(8), &Cancel::new()).expect("readable");
        assert_eq!(whole.text, "abc\n\ndef\n");
        assert_eq!(whole.notes, vec![DOCX_NOTE.to_owned()]);

        let cut = convert(&body_of(&body), &options(6), &Cancel::new()).expect("readable");
        assert!(cut.text.len() <= 7, "{:?}", cut.text);
        assert!(cut.text.starts_with("abc"), "{:?}", cut.text);
        assert!(
            cut.notes.iter().any(|n| n.contains("cut at 6 bytes")),
            "{:?}",
            cut.notes
        );
    }

    #[test]
    fn decompressed_xml_past_its_cap_is_refused() {
        let body = paragraph(&"x".repeat(20_000));
        let options = Options {
            office_xml_bytes: 10_000,
            ..Options::default()
        };
        assert_eq!(
            reason_for(&body_of(&body), &options),
            "its XML comes to more than 9.8 KiB when decompressed"
        );
        assert!(convert(&body_of(&body), &Options::default(), &Cancel::new()).is_ok());
    }

    #[test]
    fn broken_or_missing_parts_are_refused_with_a_reason() {
        let cases = [
            (
                document_of("<w:document><w:body><w:p></w:body></w:document>"),
                "its part word/document.xml is broken XML",
            ),
            (
                document_of("<w:document><w:body><w:p>"),
                "its part word/document.xml is broken XML",
            ),
            (
                zip_of(&[("_rels/.rels", &root_rels("word/document.xml"))]),
                "its main part word/document.xml is missing",
            ),
        ];
        for (bytes, start) in cases {
            let reason = reason_for(&bytes, &Options::default());
            assert!(reason.starts_with(start), "{reason}");
        }
    }

    #[test]
    fn a_raised_cancel_flag_stops_the_read() {
        let cancel = Cancel::new();
        cancel.cancel();
        assert_eq!(
            convert(&body_of(&paragraph("a")), &Options::default(), &cancel).map(|md| md.text),
            Err(Failure::Cancelled)
        );
    }

    #[test]
    fn a_zip_bomb_part_ends_in_a_reason_quickly() {
        use std::time::{Duration, Instant};

        let filler = " ".repeat(8 * 1024 * 1024);
        let bytes = body_of(&paragraph(&filler));
        assert!(bytes.len() < 64 * 1024, "the part compresses well");
        let options = Options {
            office_xml_bytes: 1024 * 1024,
            ..Options::default()
        };
        let started = Instant::now();
        assert_eq!(
            reason_for(&bytes, &options),
            "its XML comes to more than 1 MiB when decompressed"
        );
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn zip_entries_sharing_their_data_are_refused() {
        use std::io::{Cursor, Write};
        use zip::write::SimpleFileOptions;

        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, content) in [
            (
                "[Content_Types].xml",
                content_types("word/document.xml", WORD),
            ),
            ("_rels/.rels", root_rels("word/document.xml")),
            (
                "word/document.xml",
                format!(
                    "<w:document {NS}><w:body>{}</w:body></w:document>",
                    paragraph("x")
                ),
            ),
        ] {
            writer
                .start_file(name, SimpleFileOptions::default())
                .expect("a fresh zip takes a new entry");
            writer
                .write_all(content.as_bytes())
                .expect("writing to memory cannot fail");
        }
        for copy in 0..3 {
            writer
                .shallow_copy_file("word/document.xml", &format!("word/copy{copy}.xml"))
                .expect("the entry to copy exists");
        }
        let bytes = writer
            .finish()
            .expect("finishing an in-memory zip cannot fail")
            .into_inner();
        assert_eq!(
            reason_for(&bytes, &Options::default()),
            "its zip entries overlap one another, as in a zip bomb"
        );
    }
}
