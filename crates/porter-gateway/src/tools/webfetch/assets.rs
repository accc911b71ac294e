//! A page's links, read from its DOM: which ones are files worth keeping
//! (images, PDFs, Office documents), and the page as Markdown with its
//! links made absolute or pointed at the inbox copies.
//!
//! The DOM (`markup5ever_rcdom`, which `html5ever` parses into) is not
//! `Send`, so each function parses the page itself and returns plain
//! values; the fetching in between happens without it. The Markdown is the
//! file view's (`porter_fileview::html_to_markdown`): the same reader and
//! renderer as an HTML file shown or extracted.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use html5ever::tendril::TendrilSink;
use html5ever::{ParseOpts, parse_document};
use markup5ever_rcdom::{Node, NodeData, RcDom};
use url::Url;

/// `FILE_EXTENSIONS` mark a link (`<a href>`) as a file to keep: images,
/// PDFs and Office documents.
const FILE_EXTENSIONS: &[&str] = &[
    "png", "jpg", "jpeg", "gif", "webp", "svg", "bmp", "tif", "tiff", "ico", "avif", "heic", "pdf",
    "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "odp", "rtf",
];

/// The page's images (`<img src>`) and links to files, resolved against
/// the page's URL (or its `<base href>`), in page order, each once
/// (fragments dropped). Only http and https URLs are returned.
pub(crate) fn file_links(html: &str, page: &Url) -> Vec<Url> {
    let Some(document) = parse(html) else {
        return Vec::new();
    };
    let base = base_url(&document, page);
    let mut seen = HashSet::new();
    let mut found = Vec::new();
    walk(&document, &mut |tag, attrs| {
        let attribute = match tag {
            "img" => "src",
            "a" => "href",
            _ => return,
        };
        let attrs = attrs.borrow();
        let Some(value) = attrs
            .iter()
            .find(|attr| &*attr.name.local == attribute)
            .map(|attr| attr.value.trim().to_owned())
        else {
            return;
        };
        let Some(url) = resolve(&base, &value) else {
            return;
        };
        if (tag == "img" || is_file_link(&url)) && seen.insert(key(&url)) {
            found.push(url);
        }
    });
    found
}

/// The page as Markdown: every image and link made absolute, those in
/// `kept` (by [`key`]) pointed at their inbox reference instead, inline
/// `data:` images cut to a marker. A page the file view's reader refuses
/// (nested too deep) is a sentence saying why, and gives no files
/// ([`file_links`] is empty).
pub(crate) fn markdown(html: &str, page: &Url, kept: &HashMap<String, String>) -> String {
    let base = parse(html).map_or_else(|| page.clone(), |document| base_url(&document, page));
    let rewrite = |value: &str| {
        let value = value.trim();
        if value.starts_with('#') {
            return None;
        }
        let url = resolve(&base, value)?;
        Some(
            kept.get(&key(&url))
                .cloned()
                .unwrap_or_else(|| url.to_string()),
        )
    };
    match porter_fileview::html_to_markdown(html, &rewrite, &porter_fileview::Options::default()) {
        Ok(markdown) => markdown.text,
        Err(reason) => format!("(The page was not turned into Markdown: {reason}.)"),
    }
}

/// The key a URL is matched by: its text without the fragment.
pub(crate) fn key(url: &Url) -> String {
    let mut url = url.clone();
    url.set_fragment(None);
    url.to_string()
}

/// Whether a link's path ends in a file extension worth keeping.
fn is_file_link(url: &Url) -> bool {
    let path = url.path();
    let last = path.rsplit('/').next().unwrap_or_default();
    last.rsplit_once('.').is_some_and(|(_, extension)| {
        FILE_EXTENSIONS.contains(&extension.to_ascii_lowercase().as_str())
    })
}

/// A link's target resolved against `base`, if it is an http(s) URL.
fn resolve(base: &Url, value: &str) -> Option<Url> {
    if value.is_empty() {
        return None;
    }
    let url = base.join(value).ok()?;
    matches!(url.scheme(), "http" | "https").then_some(url)
}

/// The page's DOM, or `None` for a page nested past the file view's depth
/// bound (checked first, by its tags alone: the parser's cost grows with
/// depth).
fn parse(html: &str) -> Option<Rc<Node>> {
    porter_fileview::html_nesting_within(html, &porter_fileview::Options::default()).ok()?;
    Some(
        parse_document(RcDom::default(), ParseOpts::default())
            .one(html)
            .document,
    )
}

/// The page's `<base href>` resolved against its URL, else its URL.
fn base_url(document: &Rc<Node>, page: &Url) -> Url {
    let mut base = None;
    walk(document, &mut |tag, attrs| {
        if tag != "base" || base.is_some() {
            return;
        }
        base = attrs
            .borrow()
            .iter()
            .find(|attr| &*attr.name.local == "href")
            .and_then(|attr| page.join(attr.value.trim()).ok())
            .filter(|url| matches!(url.scheme(), "http" | "https"));
    });
    base.unwrap_or_else(|| page.clone())
}

/// An element's attributes, as the DOM holds them.
type Attributes = RefCell<Vec<html5ever::Attribute>>;

/// Calls `visit` with every element's tag name and attributes, in
/// document order (depth first, without recursion, so a deeply nested page
/// cannot overflow the stack).
fn walk(root: &Rc<Node>, visit: &mut dyn FnMut(&str, &Attributes)) {
    let mut stack = vec![Rc::clone(root)];
    while let Some(node) = stack.pop() {
        if let NodeData::Element { name, attrs, .. } = &node.data {
            visit(&name.local, attrs);
        }
        let children = node.children.borrow();
        stack.extend(children.iter().rev().cloned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = r##"<!doctype html><html><head><title>T</title>
        <style>body{color:red}</style><script>var secret = 1;</script></head>
        <body><h1>Report</h1>
        <p>See <a href="docs/report.pdf#page=2">the report</a>,
           <a href="/about">about us</a>, <a href="#top">top</a>,
           <a href="mailto:x@example.org">mail</a>.</p>
        <img src="img/chart.png" alt="chart">
        <img src="img/chart.png" alt="again">
        <img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUg" alt="inline">
        <a href="https://other.example/sheet.XLSX">sheet</a>
        </body></html>"##;

    fn page() -> Url {
        Url::parse("http://127.0.0.1:8000/site/index.html").expect("a URL")
    }

    /// A page nested past the file view's depth bound is not parsed at all
    /// (html5ever's cost grows with depth, so 10^5 nested elements take
    /// minutes): no files are taken from it, and its Markdown says why.
    #[test]
    fn a_page_nested_past_the_depth_bound_is_not_parsed() {
        let depth = porter_fileview::Options::default().xml_depth + 50;
        let page_html = format!(
            "<html><body>{}<img src=\"deep.png\"><a href=\"deep.pdf\">x</a>{}</body></html>",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        );
        assert_eq!(file_links(&page_html, &page()), Vec::<Url>::new());
        let text = markdown(&page_html, &page(), &HashMap::new());
        assert!(text.contains("nested deeper than"), "{text}");
        // Within the bound the same page gives its files.
        let shallow = page_html
            .replace(&"<div>".repeat(depth), "<div>")
            .replace(&"</div>".repeat(depth), "</div>");
        assert_eq!(file_links(&shallow, &page()).len(), 2);
    }

    #[test]
    fn images_and_links_to_files_are_found_once_each_and_absolute() {
        let found: Vec<String> = file_links(PAGE, &page())
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            found,
            [
                "http://127.0.0.1:8000/site/docs/report.pdf#page=2",
                "http://127.0.0.1:8000/site/img/chart.png",
                "https://other.example/sheet.XLSX",
            ]
        );
    }

    #[test]
    fn the_markdown_points_kept_files_at_the_inbox_and_the_rest_at_absolute_urls() {
        let kept = HashMap::from([(
            "http://127.0.0.1:8000/site/img/chart.png".to_owned(),
            "volume:inbox:web/127.0.0.1/chart.png".to_owned(),
        )]);
        let markdown = markdown(PAGE, &page(), &kept);
        assert!(markdown.contains("# Report"), "{markdown}");
        assert!(
            markdown.contains("![chart](volume:inbox:web/127.0.0.1/chart.png)"),
            "{markdown}"
        );
        assert!(
            markdown.contains("[the report](http://127.0.0.1:8000/site/docs/report.pdf#page=2)"),
            "{markdown}"
        );
        assert!(
            markdown.contains("[about us](http://127.0.0.1:8000/about)"),
            "{markdown}"
        );
        assert!(markdown.contains("[top](#top)"), "{markdown}");
        assert!(markdown.contains("(data:…)"), "{markdown}");
        assert!(!markdown.contains("iVBOR"), "{markdown}");
        assert!(!markdown.contains("secret"), "{markdown}");
        assert!(!markdown.contains("color:red"), "{markdown}");
    }

    #[test]
    fn a_base_element_moves_where_relative_links_point() {
        let html = r#"<html><head><base href="https://cdn.example/assets/"></head>
            <body><img src="logo.gif"></body></html>"#;
        let found = file_links(html, &page());
        assert_eq!(found[0].as_str(), "https://cdn.example/assets/logo.gif");
    }
}
