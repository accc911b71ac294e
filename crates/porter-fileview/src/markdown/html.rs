//! HTML pages into the document model: headings with their levels,
//! paragraphs, list items with their levels and numbers, tables with their
//! spans, code blocks with their language, block quotes, thematic breaks,
//! figures, and inline emphasis, strong, code, links and images, read from
//! the tree a real HTML5 parser (`html5ever`) builds. Scripts, styles,
//! templates, the head and hidden elements are left out.
//!
//! Deep nesting is what hurts here: the HTML parser's scope checks cost the
//! depth for every tag (so a page of 100,000 nested `<div>`s takes minutes),
//! and the reader walks the tree recursively. A page is therefore first
//! scanned for how deep its explicitly closed elements nest, and refused
//! past `Options::xml_depth` before it is parsed; the tree is measured
//! again, without recursion, before it is read; and the reading runs on a
//! thread with a stack sized for that depth.

use std::rc::Rc;

use html5ever::tendril::TendrilSink;
use html5ever::{Attribute, ParseOpts, parse_document};
use markup5ever_rcdom::{Node, NodeData, RcDom};

use super::out::{Markdown, escape_inline};
use crate::bounds::Failure;
use crate::document::{Block, Cell, Inline, Inlines, Mark, Table, Writer, link_target};
use crate::options::Options;

/// `SKIPPED_TAGS` never reach the Markdown: code, styling, embedded
/// objects and form fields, not content.
const SKIPPED_TAGS: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "head", "iframe", "canvas", "object",
    "embed", "audio", "video", "textarea", "select", "datalist", "title", "math",
];

/// `PARAGRAPH_TAGS` are the elements that stand as blocks of their own
/// text: a paragraph ends before and after each.
const PARAGRAPH_TAGS: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "main",
    "header",
    "footer",
    "nav",
    "aside",
    "address",
    "details",
    "summary",
    "dl",
    "dt",
    "dd",
    "form",
    "fieldset",
    "legend",
    "center",
    "hgroup",
    "figcaption",
    "search",
    "dialog",
    "body",
    "html",
];

/// `STACK_BYTES` is the stack the reading thread gets: the walk takes well
/// under a kilobyte per level, and the depth is held to `xml_depth` (1000
/// by default), so this leaves a wide margin in unoptimised builds too.
const STACK_BYTES: usize = 64 * 1024 * 1024;

/// `SPAN_PLACES` is the most table places a page's spanning cells may
/// cover between them; past it, spans are read as single cells, so that a
/// `colspan=1000 rowspan=65534` cannot make a grid of millions.
const SPAN_PLACES: usize = 1_000_000;

/// The note every page's Markdown carries.
const HTML_NOTE: &str =
    "Scripts, styles and pictures' bytes are not included; images keep their links.";

/// Turns a link's or an image's target, as the page writes it, into the
/// target the Markdown shows (`None` keeps it as written).
pub(crate) type LinkRewrite<'a> = &'a (dyn Fn(&str) -> Option<String> + Sync);

/// Converts an HTML page, its links as written.
pub(crate) fn convert(html: &str, options: &Options) -> Result<Markdown, Failure> {
    convert_with(html, options, &|_| None)
}

/// Converts an HTML page, each link and image target passed through
/// `links`.
pub(crate) fn convert_with(
    html: &str,
    options: &Options,
    links: LinkRewrite<'_>,
) -> Result<Markdown, Failure> {
    let max_depth = options.xml_depth;
    let cap = options.office_text_bytes;
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("porter-html-markdown".to_owned())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, move || convert_here(html, max_depth, cap, links))
            .map_err(|error| {
                Failure::unreadable(format!("no thread could convert it ({error})"))
            })?;
        worker.join().unwrap_or_else(|_| {
            Err(Failure::unreadable(
                "its HTML reader failed on it unexpectedly",
            ))
        })
    })
}

/// The conversion proper, on the thread with the big stack.
fn convert_here(
    html: &str,
    max_depth: usize,
    cap: usize,
    links: LinkRewrite<'_>,
) -> Result<Markdown, Failure> {
    check_nesting(html, max_depth)?;
    let document = parse_document(RcDom::default(), ParseOpts::default())
        .one(html)
        .document;
    let (depth, title) = measure(&document);
    if depth > max_depth {
        return Err(deep(max_depth));
    }
    let mut reader = Reader::new(cap, links);
    reader.visit(&document);
    reader.flush();
    let mut notes = vec![HTML_NOTE.to_owned()];
    if reader.spans_clipped {
        notes.push(format!(
            "Its tables' spanning cells cover more than {} places; past that, spans are read as single cells.",
            crate::describe::count(SPAN_PLACES as u64)
        ));
    }
    Ok(reader.out.finish(title, notes))
}

/// Who the text being gathered belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Owner {
    /// The document's flow: text becomes paragraphs.
    Flow,
    /// A heading of this level.
    Heading(u8),
    /// A list item.
    Item { level: u8, marker: Option<String> },
    /// A table cell (or a table's caption): everything inside is its text.
    Cell,
    /// A figure's text (its pictures and caption).
    Figure,
}

/// A list being read: whether it is numbered, and the next number.
struct List {
    ordered: bool,
    next: i64,
}

/// A table being read.
#[derive(Default)]
struct TableBuild {
    rows: Vec<Vec<Cell>>,
    caption: String,
}

/// `Reader` walks the parsed page in document order and writes its blocks.
struct Reader<'a> {
    out: Writer,
    /// The blocks of the block quotes being read, innermost last.
    quotes: Vec<Vec<Block>>,
    inline: Inlines,
    owner: Owner,
    lists: Vec<List>,
    table: Option<TableBuild>,
    links: LinkRewrite<'a>,
    span_places: usize,
    spans_clipped: bool,
}

impl<'a> Reader<'a> {
    fn new(cap: usize, links: LinkRewrite<'a>) -> Self {
        Self {
            out: Writer::new(cap, Inline::Markdown),
            quotes: Vec::new(),
            inline: Inlines::default(),
            owner: Owner::Flow,
            lists: Vec::new(),
            table: None,
            links,
            span_places: SPAN_PLACES,
            spans_clipped: false,
        }
    }

    /// Writes a block, or keeps it in the block quote being read.
    fn emit(&mut self, block: Block) {
        match self.quotes.last_mut() {
            Some(quote) => quote.push(block),
            None => self.out.push(&block),
        }
    }

    /// Ends the text being gathered as the block its owner makes. A cell's
    /// text is taken when the cell ends, never here.
    fn flush(&mut self) {
        if self.inline.is_empty() || self.owner == Owner::Cell {
            return;
        }
        let text = self.inline.take();
        if text.trim().is_empty() {
            return;
        }
        let block = match &self.owner {
            Owner::Flow => Block::Paragraph(text),
            Owner::Figure => Block::Figure(text),
            Owner::Heading(level) => Block::Heading {
                level: *level,
                text,
            },
            Owner::Item { level, marker } => {
                let block = Block::ListItem {
                    level: *level,
                    marker: marker.clone(),
                    text,
                };
                // What follows a nested list or table in the same item is
                // a paragraph of its own.
                self.owner = Owner::Flow;
                block
            }
            Owner::Cell => return,
        };
        self.emit(block);
    }

    /// Whether block elements are text inside the current owner (a cell,
    /// a heading, an item, a figure) rather than blocks of their own.
    fn inline_owner(&self) -> bool {
        self.owner != Owner::Flow
    }

    /// Whether structures (lists, tables, code, quotes) can stand as blocks
    /// here: not inside a cell or a heading.
    fn structures_allowed(&self) -> bool {
        !matches!(self.owner, Owner::Cell | Owner::Heading(_))
    }

    /// A paragraph boundary: a new block in the flow, a line break inside
    /// an owner of its own.
    fn block_break(&mut self) {
        if self.inline_owner() {
            self.inline.line_break();
        } else {
            self.flush();
        }
    }

    /// Walks `node`'s children with `owner` making the blocks of their text,
    /// then ends the last one and gives back the owner before.
    fn children_owned_by(&mut self, node: &Node, owner: Owner) {
        let saved = std::mem::replace(&mut self.owner, owner);
        self.children(node);
        self.flush();
        self.owner = saved;
    }

    /// The text of `node`'s children as one table cell (or caption), after
    /// the text gathered before it is ended as its own block.
    fn cell_text(&mut self, node: &Node) -> String {
        self.flush();
        let saved = std::mem::replace(&mut self.owner, Owner::Cell);
        self.children(node);
        self.owner = saved;
        self.inline.take()
    }

    /// A structure where none may stand (a list, quote or table inside a
    /// cell or heading): its text, set apart by line breaks.
    fn as_lines(&mut self, node: &Node) {
        self.block_break();
        self.children(node);
        self.block_break();
    }

    fn children(&mut self, node: &Node) {
        for child in node.children.borrow().iter() {
            if self.out.is_full() {
                return;
            }
            self.visit(child);
        }
    }

    fn visit(&mut self, node: &Node) {
        match &node.data {
            NodeData::Document => self.children(node),
            NodeData::Text { contents } => self.inline.words(&contents.borrow()),
            NodeData::Element { name, attrs, .. } => {
                let attrs = attrs.borrow();
                self.element(&name.local, &attrs, node);
            }
            NodeData::Doctype { .. }
            | NodeData::Comment { .. }
            | NodeData::ProcessingInstruction { .. } => {}
        }
    }

    fn element(&mut self, tag: &str, attrs: &[Attribute], node: &Node) {
        if SKIPPED_TAGS.contains(&tag) || hidden(attrs) {
            return;
        }
        match tag {
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                if self.inline_owner() {
                    self.as_lines(node);
                    return;
                }
                self.flush();
                let level = tag.as_bytes()[1] - b'0';
                self.children_owned_by(node, Owner::Heading(level));
            }
            "br" => self.inline.line_break(),
            "hr" => {
                if self.inline_owner() {
                    self.inline.line_break();
                } else {
                    self.flush();
                    self.emit(Block::Rule);
                }
            }
            "pre" | "listing" | "xmp" | "plaintext" => {
                if !self.structures_allowed() {
                    self.inline.code(&text_content(node));
                    return;
                }
                self.flush();
                let language = code_language(node, attrs);
                let text = text_content(node);
                if !text.trim().is_empty() {
                    self.emit(Block::Code { language, text });
                }
            }
            "code" | "kbd" | "samp" | "tt" => self.inline.code(&text_content(node)),
            "strong" | "b" => self.marked(Mark::Strong, node),
            "em" | "i" | "cite" | "dfn" | "var" => self.marked(Mark::Emphasis, node),
            "a" => match attribute(attrs, "href").map(str::trim) {
                Some(href)
                    if !href.is_empty()
                        && !href
                            .get(..11)
                            .is_some_and(|s| s.eq_ignore_ascii_case("javascript:")) =>
                {
                    let target = self.target(href);
                    self.marked(Mark::Link(target), node);
                }
                _ => self.children(node),
            },
            "img" => self.image(attrs),
            "ul" | "ol" | "menu" | "dir" => self.list(tag == "ol", attrs, node),
            "li" => self.list_item(attrs, node),
            "table" => self.html_table(node),
            "tr" if self.owner != Owner::Cell && self.table.is_some() => {
                self.flush();
                if let Some(table) = &mut self.table {
                    table.rows.push(Vec::new());
                }
                self.children(node);
                self.flush();
            }
            "tr" => self.as_lines(node),
            "td" | "th" if self.owner != Owner::Cell && self.table.is_some() => {
                self.cell(attrs, node);
            }
            "td" | "th" => {
                self.inline.space();
                self.children(node);
                self.inline.space();
            }
            "caption" if self.owner != Owner::Cell && self.table.is_some() => {
                let text = self.cell_text(node);
                if let Some(table) = &mut self.table {
                    table.caption = text;
                }
            }
            "blockquote" => {
                if !self.structures_allowed() {
                    self.as_lines(node);
                    return;
                }
                self.flush();
                self.quotes.push(Vec::new());
                self.children_owned_by(node, Owner::Flow);
                let quoted = self.quotes.pop().unwrap_or_default();
                if !quoted.is_empty() {
                    self.emit(Block::Quote(quoted));
                }
            }
            "figure" => {
                if self.inline_owner() {
                    self.as_lines(node);
                    return;
                }
                self.flush();
                self.children_owned_by(node, Owner::Figure);
            }
            _ if PARAGRAPH_TAGS.contains(&tag) => self.as_lines(node),
            _ => self.children(node),
        }
    }

    /// A list (`ordered` for `ol`): its items, numbered from its `start`.
    fn list(&mut self, ordered: bool, attrs: &[Attribute], node: &Node) {
        if !self.structures_allowed() {
            self.as_lines(node);
            return;
        }
        self.flush();
        let start = attribute(attrs, "start")
            .and_then(|s| s.trim().parse::<i64>().ok())
            .unwrap_or(1);
        self.lists.push(List {
            ordered,
            next: start,
        });
        self.children(node);
        self.lists.pop();
        self.flush();
    }

    /// A list item, with its number in an ordered list (an item's `value`
    /// sets it, and the next item's).
    fn list_item(&mut self, attrs: &[Attribute], node: &Node) {
        if !self.structures_allowed() {
            self.as_lines(node);
            return;
        }
        self.flush();
        let level = u8::try_from(self.lists.len().saturating_sub(1)).unwrap_or(u8::MAX);
        let marker = match self.lists.last_mut() {
            Some(list) if list.ordered => {
                if let Some(value) =
                    attribute(attrs, "value").and_then(|v| v.trim().parse::<i64>().ok())
                {
                    list.next = value;
                }
                let number = list.next;
                list.next = list.next.saturating_add(1);
                Some(format!("{number}."))
            }
            _ => None,
        };
        self.children_owned_by(node, Owner::Item { level, marker });
    }

    /// A table: its caption as a paragraph, then its rows, unless no cell
    /// holds text.
    fn html_table(&mut self, node: &Node) {
        if !self.structures_allowed() {
            // A table inside a cell or heading: its text, a line a row.
            self.as_lines(node);
            return;
        }
        self.flush();
        let outer = self.table.replace(TableBuild::default());
        self.children_owned_by(node, Owner::Flow);
        let built = std::mem::replace(&mut self.table, outer).unwrap_or_default();
        if !built.caption.trim().is_empty() {
            self.emit(Block::Paragraph(built.caption));
        }
        if built
            .rows
            .iter()
            .flatten()
            .any(|c| !c.text.trim().is_empty())
        {
            self.emit(Block::Table(Table { rows: built.rows }));
        }
    }

    /// A cell of the table being built, in its last row (a first row if
    /// the cell comes before any).
    fn cell(&mut self, attrs: &[Attribute], node: &Node) {
        let text = self.cell_text(node);
        let (col_span, row_span) = self.spans(attrs);
        if let Some(table) = &mut self.table {
            if table.rows.is_empty() {
                table.rows.push(Vec::new());
            }
            if let Some(row) = table.rows.last_mut() {
                row.push(Cell {
                    text,
                    col_span,
                    row_span,
                });
            }
        }
    }

    /// The children of `node` inside `mark` (headings take no emphasis:
    /// they are emphasis already).
    fn marked(&mut self, mark: Mark, node: &Node) {
        if matches!(self.owner, Owner::Heading(_)) && !matches!(mark, Mark::Link(_)) {
            self.children(node);
            return;
        }
        self.inline.open(mark);
        self.children(node);
        self.inline.close();
    }

    /// An image as `![alt](src)` (its alt text alone in a heading, or when
    /// it has no source).
    fn image(&mut self, attrs: &[Attribute]) {
        let alt = attribute(attrs, "alt")
            .unwrap_or_default()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let source = attribute(attrs, "src")
            .map(str::trim)
            .filter(|s| !s.is_empty());
        match source {
            Some(source) if !matches!(self.owner, Owner::Heading(_)) => {
                let target = self.target(source);
                self.inline.markdown(&format!(
                    "![{}]({})",
                    escape_inline(&alt),
                    link_target(&target)
                ));
            }
            _ => self.inline.words(&alt),
        }
    }

    /// A link's or image's target as the Markdown shows it: an inline
    /// `data:` URL cut to a marker (its bytes would flood the text), the
    /// rest through the caller's rewrite.
    fn target(&self, written: &str) -> String {
        if written
            .get(..5)
            .is_some_and(|s| s.eq_ignore_ascii_case("data:"))
        {
            return INLINE_DATA.to_owned();
        }
        (self.links)(written).unwrap_or_else(|| written.to_owned())
    }

    /// A cell's column and row spans, within the page's budget of places.
    fn spans(&mut self, attrs: &[Attribute]) -> (usize, usize) {
        let read = |name: &str, max: usize| {
            attribute(attrs, name)
                .and_then(|v| v.trim().parse::<usize>().ok())
                .map_or(1, |n| n.clamp(1, max))
        };
        // The limits HTML itself sets on spans.
        let (columns, rows) = (read("colspan", 1000), read("rowspan", 65_534));
        let places = columns * rows;
        if places == 1 {
            return (1, 1);
        }
        if places > self.span_places {
            self.spans_clipped = true;
            return (1, 1);
        }
        self.span_places -= places;
        (columns, rows)
    }
}

/// `INLINE_DATA` replaces a `data:` URL in the Markdown.
pub(crate) const INLINE_DATA: &str = "data:…";

/// An attribute's value.
fn attribute<'v>(attrs: &'v [Attribute], name: &str) -> Option<&'v str> {
    attrs
        .iter()
        .find(|attr| &*attr.name.local == name)
        .map(|attr| &*attr.value)
}

/// Whether an element is hidden from readers: `hidden`, `aria-hidden`,
/// or a style of `display: none` or `visibility: hidden`.
fn hidden(attrs: &[Attribute]) -> bool {
    if attribute(attrs, "hidden").is_some() {
        return true;
    }
    if attribute(attrs, "aria-hidden").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
        return true;
    }
    attribute(attrs, "style").is_some_and(|style| {
        let style: String = style
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase();
        style.contains("display:none") || style.contains("visibility:hidden")
    })
}

/// The language of a code block, from `class="language-x"` (or `lang-x`)
/// on the `<pre>` or on a `<code>` inside it.
fn code_language(node: &Node, attrs: &[Attribute]) -> Option<String> {
    let of = |attrs: &[Attribute]| {
        attribute(attrs, "class").and_then(|class| {
            class.split_ascii_whitespace().find_map(|name| {
                name.strip_prefix("language-")
                    .or_else(|| name.strip_prefix("lang-"))
                    .filter(|l| !l.is_empty())
                    .map(str::to_owned)
            })
        })
    };
    of(attrs).or_else(|| {
        node.children
            .borrow()
            .iter()
            .find_map(|child| match &child.data {
                NodeData::Element { name, attrs, .. } if &*name.local == "code" => {
                    of(&attrs.borrow())
                }
                _ => None,
            })
    })
}

/// The text of an element and everything inside it as written, `<br>` as
/// a line break; found without recursion.
fn text_content(node: &Node) -> String {
    let mut text = String::new();
    let mut stack: Vec<Rc<Node>> = node.children.borrow().iter().rev().cloned().collect();
    while let Some(node) = stack.pop() {
        match &node.data {
            NodeData::Text { contents } => text.push_str(&contents.borrow()),
            NodeData::Element { name, .. } if &*name.local == "br" => text.push('\n'),
            NodeData::Element { name, .. } if SKIPPED_TAGS.contains(&&*name.local) => {}
            NodeData::Element { .. } => {
                stack.extend(node.children.borrow().iter().rev().cloned());
            }
            _ => {}
        }
    }
    text
}

/// Refuses a page whose tags nest deeper than `max_depth`, before any
/// parser runs (see [`nesting_estimate`]).
pub(crate) fn check_nesting(html: &str, max_depth: usize) -> Result<(), Failure> {
    if nesting_estimate(html, max_depth) > max_depth {
        return Err(deep(max_depth));
    }
    Ok(())
}

fn deep(max_depth: usize) -> Failure {
    Failure::unreadable(format!("its HTML is nested deeper than {max_depth} levels"))
}

/// Elements that never hold others, or whose end tag may be left out (the
/// parser closes them itself), so they do not count towards nesting.
const NOT_NESTING: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "p", "li", "dt", "dd", "tr", "td", "th", "thead", "tbody", "tfoot", "option",
    "optgroup", "rb", "rt", "rp", "colgroup", "caption", "html", "head", "body", "param",
];

/// How deep the page's elements nest by its tags alone: start tags open,
/// end tags close, void and optional-end elements, comments, and the
/// content of scripts and styles do not count. Stops counting once past
/// `stop`. A cheap, linear look before the parser, whose cost grows with
/// depth.
fn nesting_estimate(html: &str, stop: usize) -> usize {
    let bytes = html.as_bytes();
    let mut at = 0;
    let mut depth = 0usize;
    let mut deepest = 0usize;
    while let Some(found) = memchr::memchr(b'<', &bytes[at..]) {
        at += found + 1;
        if bytes[at..].starts_with(b"!--") {
            at = memchr::memmem::find(&bytes[at..], b"-->").map_or(bytes.len(), |end| at + end + 3);
            continue;
        }
        let closing = bytes.get(at) == Some(&b'/');
        let name_start = at + usize::from(closing);
        let name_len = bytes[name_start..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        if name_len == 0 || !bytes[name_start].is_ascii_alphabetic() {
            continue;
        }
        let name = html[name_start..name_start + name_len].to_ascii_lowercase();
        let end =
            memchr::memchr(b'>', &bytes[name_start..]).map_or(bytes.len(), |e| name_start + e);
        let self_closing = end > 0 && bytes.get(end - 1) == Some(&b'/');
        at = (end + 1).min(bytes.len());
        if NOT_NESTING.contains(&name.as_str()) {
            continue;
        }
        if closing {
            depth = depth.saturating_sub(1);
            continue;
        }
        if self_closing {
            continue;
        }
        if matches!(
            name.as_str(),
            "script" | "style" | "textarea" | "title" | "xmp"
        ) {
            at = raw_text_end(bytes, at, name.as_bytes());
            continue;
        }
        depth += 1;
        deepest = deepest.max(depth);
        if deepest > stop {
            break;
        }
    }
    deepest
}

/// Where the end tag `</name` of a raw-text element (a script, a style)
/// starts, searching from `at` without regard to case; the end of the page
/// when there is none.
fn raw_text_end(bytes: &[u8], mut at: usize, name: &[u8]) -> usize {
    while let Some(found) = memchr::memmem::find(&bytes[at..], b"</") {
        let start = at + found;
        let tag = start + 2;
        if bytes
            .get(tag..tag + name.len())
            .is_some_and(|candidate| candidate.eq_ignore_ascii_case(name))
        {
            return start;
        }
        at = tag;
    }
    bytes.len()
}

/// The DOM's depth and the text of its first `<title>`, found without
/// recursion.
fn measure(document: &Rc<Node>) -> (usize, Option<String>) {
    let mut deepest = 0;
    let mut title = None;
    let mut stack = vec![(Rc::clone(document), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        if title.is_none()
            && let NodeData::Element { name, .. } = &node.data
            && &*name.local == "title"
        {
            let mut text = String::new();
            for child in node.children.borrow().iter() {
                if let NodeData::Text { contents } = &child.data {
                    text.push_str(&contents.borrow());
                }
            }
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            if !text.is_empty() {
                title = Some(text);
            }
        }
        for child in node.children.borrow().iter() {
            stack.push((Rc::clone(child), depth + 1));
        }
    }
    (deepest, title)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_keeps_headings_tables_and_links_and_drops_scripts() {
        let html = "<html><head><title>The  Page</title><style>p{color:red}</style></head><body>\
            <h1>Top</h1><script>alert('no')</script><p>See <a href=\"https://example.com/x\">this</a>.</p>\
            <ul><li>one</li><li>two</li></ul>\
            <table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table></body></html>";
        let md = convert(html, &Options::default()).expect("the page converts");
        assert_eq!(md.title.as_deref(), Some("The Page"));
        assert!(md.text.starts_with("# Top\n"), "{}", md.text);
        assert!(
            md.text.contains("[this](https://example.com/x)"),
            "{}",
            md.text
        );
        assert!(md.text.contains("- one\n- two"), "{}", md.text);
        assert!(md.text.contains("| A | B |"), "{}", md.text);
        assert!(md.text.contains("| 1 | 2 |"), "{}", md.text);
        assert!(!md.text.contains("alert"), "{}", md.text);
        assert!(!md.text.contains("color"), "{}", md.text);
    }

    fn md(html: &str) -> String {
        convert(html, &Options::default())
            .expect("the page converts")
            .text
    }

    #[test]
    fn nested_lists_keep_their_levels_numbers_and_start() {
        let html = "<body><ul>\n  <li>Fruit\n    <ul>\n      <li>apple</li>\n      <li>pear\n        <ol start=\"3\"><li>ripe</li><li value=\"7\">green</li><li>brown</li></ol>\n      </li>\n    </ul>\n  </li>\n  <li><p>Veg</p></li>\n</ul>\n<ol><li>1. already numbered</li></ol></body>";
        assert_eq!(
            md(html),
            "- Fruit\n    - apple\n    - pear\n        3. ripe\n        7. green\n        8. brown\n- Veg\n\
             1. 1\\. already numbered\n"
        );
    }

    #[test]
    fn a_table_with_spans_keeps_them_as_an_html_table_after_its_caption() {
        let html = r#"<table class="data">
            <caption>Quarterly <b>sales</b></caption>
            <thead><tr><th rowspan="2">Region</th><th colspan="2">2024</th></tr>
                   <tr><th>Q1</th><th>Q2</th></tr></thead>
            <tbody>
              <tr><td>North</td><td>1,200</td><td>1,350</td></tr>
              <tr><td>South | East</td><td colspan="2"><p>n/a</p><p>see notes</p></td></tr>
            </tbody></table>"#;
        assert_eq!(
            md(html),
            "Quarterly **sales**\n\n<table>\n\
             <tr><td rowspan=\"2\">Region</td><td colspan=\"2\">2024</td></tr>\n\
             <tr><td>Q1</td><td>Q2</td></tr>\n\
             <tr><td>North</td><td>1,200</td><td>1,350</td></tr>\n\
             <tr><td>South | East</td><td colspan=\"2\">n/a<br>see notes</td></tr>\n</table>\n"
        );
    }

    #[test]
    fn hostile_spans_are_read_as_single_cells_past_the_budget() {
        let row = "<tr><td colspan=1000 rowspan=65534>x</td></tr>";
        let html = format!("<table>{}</table>", row.repeat(100));
        let page = convert(&html, &Options::default()).expect("converts");
        assert!(
            page.notes.iter().any(|n| n.contains("spanning cells")),
            "{:?}",
            page.notes
        );
        assert!(page.text.len() < 200_000, "{} bytes", page.text.len());
    }

    #[test]
    fn code_blocks_keep_their_lines_and_language_and_inline_code_its_text() {
        let html = "<p>Call <code>parse(a|b)</code> or <kbd>Ctrl</kbd>, not <code>x`y</code>.</p>\
            <pre><code class=\"hljs language-rust\">fn main() {\n    // # not a heading\n    println!(\"&lt;hi&gt;\");\n}\n</code></pre>\
            <pre>```\nfenced inside\n```</pre>";
        assert_eq!(
            md(html),
            "Call `parse(a|b)` or `Ctrl`, not ``x`y``.\n\n\
             ```rust\nfn main() {\n    // # not a heading\n    println!(\"<hi>\");\n}\n```\n\n\
             ````\n```\nfenced inside\n```\n````\n"
        );
        let page = convert(html, &Options::default()).expect("converts");
        assert!(super::super::outline(&page.text).0.is_empty());
    }

    #[test]
    fn block_quotes_rules_and_breaks_keep_their_shape() {
        let html = "<p>Before</p><blockquote><p>Quoted <em>words</em>,<br>a second line.</p>\
            <blockquote><p>nested</p></blockquote><ul><li>in a quote</li></ul></blockquote><hr><p>After</p>";
        assert_eq!(
            md(html),
            "Before\n\n> Quoted *words*,\\\n> a second line.\n>\n> > nested\n>\n> - in a quote\n\n---\n\nAfter\n"
        );
    }

    #[test]
    fn inline_marks_links_and_images_are_written_once_with_white_space_outside() {
        let html = "<p>  Some <b> bold </b>and <i>italic</i>, <strong><em>both</em></strong>,\n\
            <b></b><em> </em>a <a href=\"/docs/a b(1).html\">link with <code>code</code></a>,\n\
            Hi!<a href=\"https://example.org/\">there</a> <a href=\"javascript:alert(1)\">no link</a>\n\
            <img src=\"pic.png\" alt=\"A  chart\"> <img src=\"data:image/png;base64,AAAA\" alt=\"inline\"> <img alt=\"no source\">\n\
            5 * 3 = 15 and a_b [c] &lt;tag&gt; &amp; &copy;&nbsp;x</p>";
        assert_eq!(
            md(html),
            "Some **bold** and *italic*, ***both***, a [link with `code`](/docs/a%20b%281%29.html), \
             Hi\\![there](https://example.org/) no link ![A chart](pic.png) ![inline](data:…) no source \
             5 \\* 3 = 15 and a\\_b \\[c\\] \\<tag\\> & ©\u{a0}x\n"
        );
    }

    #[test]
    fn a_mark_across_paragraphs_is_closed_and_opened_in_each() {
        let html = "<b><p>one</p><p>two</p></b><p><a href=\"x\">a<br>b</a></p>";
        assert_eq!(md(html), "**one**\n\n**two**\n\n[a](x)\\\n[b](x)\n");
    }

    #[test]
    fn headings_keep_their_levels_without_emphasis_and_make_the_outline() {
        let html = "<h1>The <em>Title</em></h1><p>intro</p><h2><a href=\"#s\">Section</a> <img src=\"i.png\" alt=\"icon\"></h2>\
            <h4>  Deep\n  heading </h4><div><h3>In a div</h3><p># not a heading</p></div>";
        let page = convert(html, &Options::default()).expect("converts");
        assert_eq!(
            page.text,
            "# The Title\n\nintro\n\n## [Section](#s) icon\n\n#### Deep heading\n\n### In a div\n\n\\# not a heading\n"
        );
        let outline: Vec<(u8, String, u64)> = super::super::outline(&page.text)
            .0
            .into_iter()
            .map(|h| (h.level, h.text, h.line))
            .collect();
        assert_eq!(
            outline,
            vec![
                (1, "The Title".to_owned(), 1),
                (2, "Section icon".to_owned(), 5),
                (4, "Deep heading".to_owned(), 7),
                (3, "In a div".to_owned(), 9)
            ]
        );
    }

    #[test]
    fn hidden_and_non_content_elements_are_left_out_and_figures_keep_their_text() {
        let html = "<html><head><title>T</title><style>p{}</style></head><body>\
            <nav hidden>menu</nav><div style=\"display: none\">secret</div><span aria-hidden=\"true\">icon</span>\
            <template><p>tpl</p></template><noscript>enable js</noscript><script>var x=1</script>\
            <svg><text>svg text</text></svg><select><option>choice</option></select>\
            <figure><img src=\"c.png\" alt=\"Sales chart\"><figcaption>Figure 1: <i>sales</i></figcaption></figure>\
            <p>shown</p></body></html>";
        assert_eq!(
            md(html),
            "![Sales chart](c.png)\\\nFigure 1: *sales*\n\nshown\n"
        );
    }

    #[test]
    fn links_and_images_pass_through_the_rewrite() {
        let page = convert_with(
            "<p><a href=\"a.pdf\">doc</a> <img src=\"b.png\" alt=\"b\"> <a href=\"#top\">top</a></p>",
            &Options::default(),
            &|target: &str| (!target.starts_with('#')).then(|| format!("https://x.example/{target}")),
        )
        .expect("converts");
        assert_eq!(
            page.text,
            "[doc](https://x.example/a.pdf) ![b](https://x.example/b.png) [top](#top)\n"
        );
    }

    #[test]
    fn a_page_nested_past_the_depth_limit_is_refused_without_overflowing() {
        let depth = 100_000;
        for html in [
            format!("{}deep{}", "<div>".repeat(depth), "</div>".repeat(depth)),
            format!("{}unclosed", "<b>".repeat(depth)),
        ] {
            let started = std::time::Instant::now();
            let error = convert(&html, &Options::default()).expect_err("too deep to convert");
            assert_eq!(
                error,
                Failure::unreadable("its HTML is nested deeper than 1000 levels")
            );
            assert!(started.elapsed() < std::time::Duration::from_secs(5));
        }
        let shallow = format!("{}ok{}", "<div>".repeat(900), "</div>".repeat(900));
        let md = convert(&shallow, &Options::default()).expect("900 levels convert");
        assert_eq!(md.text, "ok\n");
    }

    #[test]
    fn the_nesting_estimate_ignores_optional_ends_comments_and_scripts() {
        let cases = [
            ("<div><div></div></div>", 2),
            ("<p>a<p>b<p>c<ul><li>x<li>y</ul>", 1),
            ("<div><!-- <div><div> --><br/><img src=x></div>", 1),
            (
                "<script>if (a<b) { '<div><div><div>' }</script><span>s</span>",
                1,
            ),
            ("<x-y/><svg><path/></svg>", 1),
        ];
        for (html, expected) in cases {
            assert_eq!(nesting_estimate(html, 1000), expected, "{html}");
        }
    }
}
