//! HTML pages as Markdown, through `htmd`, with scripts, styles and other
//! code left out.
//!
//! Deep nesting is what hurts here: the HTML parser's scope checks cost the
//! depth for every tag (so a page of 100,000 nested `<div>`s takes minutes),
//! and `htmd` walks the DOM recursively (so it could overflow a stack). A
//! page is therefore first scanned for how deep its explicitly closed
//! elements nest, and refused past `Options::xml_depth` before it is
//! parsed; the DOM is measured again, without recursion, before it is
//! converted; and the conversion runs on a thread with a stack sized for
//! that depth.

use std::rc::Rc;

use htmd::HtmlToMarkdown;
use htmd::options::{BrStyle, BulletListMarker};
use markup5ever_rcdom::{Node, NodeData};

use super::{Markdown, MdOut};
use crate::bounds::Failure;
use crate::options::Options;

/// `SKIPPED_TAGS` never reach the Markdown: code and styling, not content.
const SKIPPED_TAGS: [&str; 7] = [
    "script", "style", "noscript", "template", "svg", "head", "iframe",
];

/// `STACK_BYTES` is the stack the conversion thread gets: `htmd` takes a
/// few kilobytes per level, and the depth is held to `xml_depth` (1000 by
/// default), so this leaves a wide margin in unoptimised builds too.
const STACK_BYTES: usize = 256 * 1024 * 1024;

/// The note every page's Markdown carries.
const HTML_NOTE: &str =
    "Scripts, styles and pictures' bytes are not included; images keep their links.";

/// Converts an HTML page.
pub(crate) fn convert(html: &str, options: &Options) -> Result<Markdown, Failure> {
    let html = html.to_owned();
    let max_depth = options.xml_depth;
    let cap = options.office_text_bytes;
    let worker = std::thread::Builder::new()
        .name("porter-html-markdown".to_owned())
        .stack_size(STACK_BYTES)
        .spawn(move || convert_here(&html, max_depth, cap))
        .map_err(|error| Failure::unreadable(format!("no thread could convert it ({error})")))?;
    worker.join().unwrap_or_else(|_| {
        Err(Failure::unreadable(
            "its HTML reader failed on it unexpectedly",
        ))
    })
}

/// The conversion proper, on the thread with the big stack.
fn convert_here(html: &str, max_depth: usize, cap: usize) -> Result<Markdown, Failure> {
    let nesting = nesting_estimate(html, max_depth);
    if nesting > max_depth {
        return Err(deep(max_depth));
    }
    let converter = HtmlToMarkdown::builder()
        .skip_tags(SKIPPED_TAGS.to_vec())
        .options(htmd::options::Options {
            bullet_list_marker: BulletListMarker::Dash,
            ul_bullet_spacing: 1,
            ol_number_spacing: 1,
            br_style: BrStyle::Backslash,
            ..htmd::options::Options::default()
        })
        .build();
    let document = converter
        .html_to_tree(html)
        .map_err(|error| Failure::unreadable(format!("its HTML could not be parsed ({error})")))?;
    let (depth, title) = measure(&document);
    if depth > max_depth {
        return Err(deep(max_depth));
    }
    let markdown = converter.tree_to_markdown(&document);
    let mut out = MdOut::new(cap);
    out.block(&markdown);
    Ok(out.finish(title, vec![HTML_NOTE.to_owned()]))
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
