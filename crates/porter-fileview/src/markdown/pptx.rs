//! `PowerPoint` presentations (PPTX) as Markdown.
//!
//! Slides come in the order shown (the presentation's slide list, as in the
//! view), each as `## Slide N: <title>` (hidden ones marked), then its
//! shapes in order: paragraphs of body placeholders, and paragraphs with a
//! bullet of their own, as list items indented by their level; other text
//! as paragraphs; tables as GFM tables; a run with a click link as
//! `[text](url)`. The speaker notes follow under `### Notes`.

use std::collections::HashMap;
use std::io::BufRead;

use super::out::{Markdown, escape_inline};
use super::tables::{OpenTables, TablePart, table_block};
use crate::bounds::{Cancel, Failure};
use crate::describe::human_size;
use crate::document::{Block, Inline, Writer};
use crate::office::package::Package;
use crate::office::xml::{Node, Xml, attribute, local, named, prefixed_id, relationship_ids};
use crate::options::Options;
use quick_xml::events::BytesStart;

/// The main part of a package whose relationships do not name one.
const DEFAULT_MAIN: &str = "ppt/presentation.xml";

/// Placeholders of a slide that only repeat what the viewer adds anyway.
const SLIDE_SKIPPED: &[&str] = &["sldNum", "dt", "ftr", "hdr"];

/// Placeholders of a notes page that are not the notes.
const NOTES_SKIPPED: &[&str] = &["sldImg", "sldNum", "hdr", "ftr", "dt"];

/// The note every presentation's Markdown carries.
const PPTX_NOTE: &str = "Pictures, charts, diagrams and formatting are not included.";

/// Converts the presentation in `bytes`.
pub(crate) fn convert(
    bytes: &[u8],
    options: &Options,
    cancel: &Cancel,
) -> Result<Markdown, Failure> {
    let (mut package, main) = Package::open_with_main(bytes, options, DEFAULT_MAIN)?;
    let Some(slide_ids) = package.read(&main, |xml| relationship_ids(xml, "sldId"))? else {
        return Err(Failure::unreadable(format!(
            "its main part {main} is missing"
        )));
    };
    let rels = package.relationships(&main)?;
    let budget = options.office_text_bytes;
    let mut used = 0usize;
    let mut out = Writer::new(options.office_text_bytes, Inline::Markdown);
    let mut title = None;
    let mut notes = vec![PPTX_NOTE.to_owned()];
    for (index, id) in slide_ids.iter().enumerate() {
        cancel.check()?;
        if out.is_full() {
            break;
        }
        if used > budget {
            notes.push(format!(
                "The presentation was cut at {} of text: slide {} and those after it are not included.",
                human_size(budget as u64),
                index + 1
            ));
            break;
        }
        let number = index + 1;
        let part = rels
            .iter()
            .find(|rel| &rel.id == id)
            .map(|rel| rel.target.clone());
        let slide = match &part {
            Some(part) => {
                let links = package.hyperlinks(part)?;
                package.read(part, |xml| {
                    read_slide(xml, SLIDE_SKIPPED, &links, &mut used, budget, cancel)
                })?
            }
            None => None,
        };
        let (Some(part), Some(slide)) = (part, slide) else {
            out.push(&Block::Heading {
                level: 2,
                text: format!("Slide {number}"),
            });
            out.push(&Block::Note(
                "This slide's content is missing from the file.".to_owned(),
            ));
            continue;
        };
        let mut heading = format!("Slide {number}");
        if let Some(slide_title) = &slide.title {
            heading.push_str(": ");
            heading.push_str(slide_title);
            if title.is_none() {
                title = Some(super::out::unescape(slide_title));
            }
        }
        if slide.hidden {
            heading.push_str(" (hidden)");
        }
        out.push(&Block::Heading {
            level: 2,
            text: heading,
        });
        write_blocks(&mut out, &slide.blocks);
        let notes_part = package
            .relationships(&part)?
            .into_iter()
            .find(|rel| rel.kind.ends_with("/notesSlide"))
            .map(|rel| rel.target);
        if let Some(notes_part) = notes_part {
            let links = package.hyperlinks(&notes_part)?;
            if let Some(page) = package.read(&notes_part, |xml| {
                read_slide(xml, NOTES_SKIPPED, &links, &mut used, budget, cancel)
            })? && !page.blocks.is_empty()
            {
                out.push(&Block::Heading {
                    level: 3,
                    text: "Notes".to_owned(),
                });
                write_blocks(&mut out, &page.blocks);
            }
        }
    }
    Ok(out.finish(title, notes))
}

/// Writes a slide's or notes page's blocks.
fn write_blocks(out: &mut Writer, blocks: &[Block]) {
    for block in blocks {
        out.push(block);
    }
}

/// A slide or notes page as document blocks (text as inline Markdown).
#[derive(Debug, Default)]
struct Slide {
    hidden: bool,
    /// The text of its title placeholder.
    title: Option<String>,
    blocks: Vec<Block>,
}

/// What kind of text a shape holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ShapeKind {
    /// A title placeholder: its text is the slide's title.
    Title,
    /// A body or content placeholder: its paragraphs are bulleted unless
    /// they say otherwise.
    Body,
    /// A text box, subtitle or other shape: paragraphs unless bulleted.
    Plain,
    /// A placeholder that only repeats what a viewer adds (slide number).
    Skipped,
}

/// A paragraph being read.
#[derive(Debug, Default)]
struct Paragraph {
    level: usize,
    /// `Some(false)` for `a:buNone`; `Some(true)` for a bullet of its own.
    bullet: Option<bool>,
    ordered: bool,
    text: String,
}

/// One open element, as far as the Markdown cares.
#[derive(Clone, Copy)]
enum Frame {
    Other,
    Shape,
    Paragraph,
    /// A run, and where in its paragraph's text it began.
    Run {
        at: usize,
    },
    Text,
    Table,
    Row,
    Cell,
    Alternate {
        taken: bool,
    },
}

/// Reads a slide (`p:sld`) or notes page (`p:notes`), leaving out the
/// shapes that are placeholders of a type in `skipped`. A notes page
/// (`skipped` is [`NOTES_SKIPPED`]) is prose, so its body is not bulleted.
fn read_slide<R: BufRead>(
    xml: &mut Xml<R>,
    skipped: &[&str],
    links: &HashMap<String, String>,
    used: &mut usize,
    budget: usize,
    cancel: &Cancel,
) -> Result<Slide, Failure> {
    let mut walk = SlideWalk {
        part: xml.part().to_owned(),
        skipped,
        links,
        slide: Slide::default(),
        frames: Vec::new(),
        shapes: Vec::new(),
        paragraph: None,
        run_link: None,
        tables: OpenTables::default(),
        in_cell: 0,
        title: String::new(),
    };
    loop {
        match xml.next()? {
            Node::Start(start) => {
                // The element is owned apart from the reader, which may skip
                // past it.
                let start = start.into_owned();
                if let Some(frame) = walk.start(xml, &start, used)? {
                    walk.frames.push(frame);
                }
            }
            Node::Text(text) => {
                if matches!(walk.frames.last(), Some(Frame::Text))
                    && *used <= budget
                    && let Some(p) = walk.paragraph.as_mut()
                {
                    let text = escape_inline(&text);
                    *used += text.len();
                    p.text.push_str(&text);
                }
            }
            Node::End => {
                if let Some(frame) = walk.frames.pop() {
                    walk.end(frame, cancel)?;
                }
            }
            Node::Other => {}
            Node::Eof => {
                let mut slide = walk.slide;
                if !walk.title.is_empty() {
                    slide.title = Some(walk.title);
                }
                return Ok(slide);
            }
        }
    }
}

/// The state of one slide's walk.
struct SlideWalk<'a> {
    part: String,
    skipped: &'a [&'a str],
    links: &'a HashMap<String, String>,
    slide: Slide,
    frames: Vec<Frame>,
    shapes: Vec<ShapeKind>,
    paragraph: Option<Paragraph>,
    /// The link of the run being read.
    run_link: Option<String>,
    tables: OpenTables,
    /// How many table cells are open around the walk.
    in_cell: usize,
    title: String,
}

impl SlideWalk<'_> {
    /// Opens an element: the frame it pushes, or `None` when it was
    /// skipped or taken as one branch of an alternate content.
    fn start<R: BufRead>(
        &mut self,
        xml: &mut Xml<R>,
        start: &BytesStart<'_>,
        used: &mut usize,
    ) -> Result<Option<Frame>, Failure> {
        let name = local(start).to_owned();
        if self.frames.is_empty() && name == "sld" {
            let show = attribute(start, &self.part, |k| named(k, "show"))?;
            self.slide.hidden = show.is_some_and(|s| s == "0" || s == "false");
        }
        if let Some(Frame::Alternate { taken }) = self.frames.last_mut()
            && let Some(read) = xml.branch(&name, taken)?
        {
            return Ok(read.then_some(Frame::Other));
        }
        if let Some(table_part) = self.tables.start(&name, used) {
            return Ok(Some(match table_part {
                TablePart::Table => Frame::Table,
                TablePart::Row => Frame::Row,
                TablePart::Cell => {
                    self.in_cell += 1;
                    Frame::Cell
                }
            }));
        }
        let frame = match name.as_str() {
            "sp" => {
                self.shapes.push(ShapeKind::Plain);
                Frame::Shape
            }
            "ph" => {
                let kind = attribute(start, &self.part, |k| named(k, "type"))?;
                if let Some(shape) = self.shapes.last_mut() {
                    *shape = match kind.as_deref() {
                        Some(k) if self.skipped.contains(&k) => ShapeKind::Skipped,
                        Some("title" | "ctrTitle") => ShapeKind::Title,
                        None | Some("body" | "obj") if self.skipped != NOTES_SKIPPED => {
                            ShapeKind::Body
                        }
                        _ => ShapeKind::Plain,
                    };
                }
                Frame::Other
            }
            "txBody" if self.shapes.last() == Some(&ShapeKind::Skipped) => {
                xml.skip()?;
                return Ok(None);
            }
            "p" => {
                self.paragraph = Some(Paragraph::default());
                Frame::Paragraph
            }
            "pPr" => {
                let level = attribute(start, &self.part, |k| named(k, "lvl"))?
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0)
                    .min(8);
                if let Some(p) = self.paragraph.as_mut() {
                    p.level = level;
                }
                Frame::Other
            }
            "buNone" | "buChar" | "buAutoNum" | "buBlip" => {
                if let Some(p) = self.paragraph.as_mut() {
                    p.bullet = Some(name != "buNone");
                    p.ordered = name == "buAutoNum";
                }
                Frame::Other
            }
            "r" | "fld" => {
                self.run_link = None;
                Frame::Run {
                    at: self.paragraph.as_ref().map_or(0, |p| p.text.len()),
                }
            }
            "hlinkClick" => {
                let id = attribute(start, &self.part, prefixed_id)?;
                if self.frames.iter().any(|f| matches!(f, Frame::Run { .. })) {
                    self.run_link = id.and_then(|id| self.links.get(&id).cloned());
                }
                Frame::Other
            }
            "t" if self.frames.iter().any(|f| matches!(f, Frame::Run { .. })) => Frame::Text,
            "br" => {
                if let Some(p) = self.paragraph.as_mut() {
                    p.text.push('\n');
                }
                Frame::Other
            }
            "AlternateContent" => Frame::Alternate { taken: false },
            _ => Frame::Other,
        };
        Ok(Some(frame))
    }

    /// Closes the innermost element, whose frame is `frame`.
    fn end(&mut self, frame: Frame, cancel: &Cancel) -> Result<(), Failure> {
        match frame {
            Frame::Shape => {
                self.shapes.pop();
            }
            Frame::Run { at } => {
                if let (Some(target), Some(p)) = (self.run_link.take(), self.paragraph.as_mut()) {
                    let at = at.min(p.text.len());
                    let inner = p.text[at..].to_owned();
                    if !inner.trim().is_empty() {
                        p.text.truncate(at);
                        p.text.push('[');
                        p.text.push_str(&inner);
                        p.text.push_str("](");
                        p.text.push_str(target.trim());
                        p.text.push(')');
                    }
                }
            }
            Frame::Paragraph => {
                cancel.check()?;
                let Some(p) = self.paragraph.take() else {
                    return Ok(());
                };
                let text = p.text.trim().to_owned();
                if text.is_empty() {
                    return Ok(());
                }
                if self.in_cell > 0 {
                    if let Some(cell) = self.tables.last_cell() {
                        if !cell.is_empty() {
                            cell.push('\n');
                        }
                        cell.push_str(&text);
                    }
                    return Ok(());
                }
                let kind = self.shapes.last().copied().unwrap_or(ShapeKind::Plain);
                match kind {
                    ShapeKind::Title => {
                        if !self.title.is_empty() {
                            self.title.push(' ');
                        }
                        self.title
                            .push_str(&text.split_whitespace().collect::<Vec<_>>().join(" "));
                    }
                    ShapeKind::Skipped => {}
                    ShapeKind::Body | ShapeKind::Plain => {
                        let bulleted = p.bullet.unwrap_or(kind == ShapeKind::Body);
                        self.slide.blocks.push(if bulleted {
                            Block::ListItem {
                                // At most 8.
                                level: u8::try_from(p.level).unwrap_or(8),
                                marker: p.ordered.then(|| "1.".to_owned()),
                                text,
                            }
                        } else {
                            Block::Paragraph(text)
                        });
                    }
                }
            }
            Frame::Cell => self.in_cell = self.in_cell.saturating_sub(1),
            Frame::Table => {
                cancel.check()?;
                let Some(rows) = self.tables.close() else {
                    return Ok(());
                };
                if let Some(cell) = self.tables.last_cell() {
                    for row in rows {
                        let line = row.join(" ");
                        if !line.trim().is_empty() {
                            cell.push_str(&line);
                            cell.push('\n');
                        }
                    }
                } else {
                    self.slide.blocks.push(table_block(rows));
                }
            }
            Frame::Other | Frame::Text | Frame::Row | Frame::Alternate { .. } => {}
        }
        Ok(())
    }
}

// Fixtures are literal XML put together with `format!`.
#[allow(clippy::format_push_string)]
#[cfg(test)]
mod tests {
    use super::*;
    use crate::office::tests::{content_types, root_rels, zip_of};

    const SLIDES: &str =
        "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml";
    const NS: &str = r#"xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main""#;
    const RELS: &str = r#"xmlns="http://schemas.openxmlformats.org/package/2006/relationships""#;

    fn shape(placeholder: Option<&str>, paragraphs: &str) -> String {
        let ph = match placeholder {
            Some("") => "<p:nvPr><p:ph idx=\"1\"/></p:nvPr>".to_owned(),
            Some(kind) => format!("<p:nvPr><p:ph type=\"{kind}\"/></p:nvPr>"),
            None => "<p:nvPr/>".to_owned(),
        };
        format!("<p:sp><p:nvSpPr>{ph}</p:nvSpPr><p:txBody>{paragraphs}</p:txBody></p:sp>")
    }

    fn para(text: &str) -> String {
        format!("<a:p><a:r><a:t>{text}</a:t></a:r></a:p>")
    }

    /// A presentation whose slides (shown in the listed order) have the
    /// given shapes; the first slide has notes and a link relationship.
    fn pptx(slides: &[(&str, bool)], notes: &str) -> Vec<u8> {
        let mut parts: Vec<(String, String)> = vec![
            (
                "[Content_Types].xml".into(),
                content_types("ppt/presentation.xml", SLIDES),
            ),
            ("_rels/.rels".into(), root_rels("ppt/presentation.xml")),
        ];
        let mut list = String::new();
        let mut rels = String::new();
        for (index, (body, hidden)) in slides.iter().enumerate() {
            let n = index + 1;
            list.push_str(&format!("<p:sldId id=\"{}\" r:id=\"rId{n}\"/>", 255 + n));
            rels.push_str(&format!("<Relationship Id=\"rId{n}\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide\" Target=\"slides/slide{n}.xml\"/>"));
            let show = if *hidden { " show=\"0\"" } else { "" };
            parts.push((
                format!("ppt/slides/slide{n}.xml"),
                format!("<p:sld {NS}{show}><p:cSld><p:spTree>{body}</p:spTree></p:cSld></p:sld>"),
            ));
        }
        parts.push((
            "ppt/slides/_rels/slide1.xml.rels".into(),
            format!("<Relationships {RELS}><Relationship Id=\"rId7\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink\" Target=\"https://example.org/deck\" TargetMode=\"External\"/><Relationship Id=\"rId8\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/notesSlide\" Target=\"../notesSlides/notesSlide1.xml\"/></Relationships>"),
        ));
        parts.push((
            "ppt/notesSlides/notesSlide1.xml".into(),
            format!(
                "<p:notes {NS}><p:cSld><p:spTree>{}{}</p:spTree></p:cSld></p:notes>",
                shape(Some("sldNum"), &para("1")),
                shape(Some("body"), notes)
            ),
        ));
        parts.push((
            "ppt/presentation.xml".into(),
            format!("<p:presentation {NS}><p:sldIdLst>{list}</p:sldIdLst></p:presentation>"),
        ));
        parts.push((
            "ppt/_rels/presentation.xml.rels".into(),
            format!("<Relationships {RELS}>{rels}</Relationships>"),
        ));
        let borrowed: Vec<(&str, &str)> = parts
            .iter()
            .map(|(n, c)| (n.as_str(), c.as_str()))
            .collect();
        zip_of(&borrowed)
    }

    #[test]
    fn slides_are_sections_with_titles_bullets_links_tables_and_notes() {
        let first = [
            shape(Some("title"), &para("Opening")),
            shape(
                Some(""),
                &format!(
                    "{}<a:p><a:pPr lvl=\"1\"/><a:r><a:t>deeper</a:t></a:r></a:p><a:p><a:pPr><a:buNone/></a:pPr><a:r><a:rPr><a:hlinkClick r:id=\"rId7\"/></a:rPr><a:t>the deck</a:t></a:r></a:p>",
                    para("point one")
                ),
            ),
            shape(None, &para("a text box")),
            "<p:graphicFrame><a:graphic><a:graphicData><a:tbl><a:tr><a:tc><a:txBody><a:p><a:r><a:t>Item</a:t></a:r></a:p></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>Cost</a:t></a:r></a:p></a:txBody></a:tc></a:tr><a:tr><a:tc><a:txBody><a:p><a:r><a:t>Tea</a:t></a:r></a:p></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>3</a:t></a:r></a:p></a:txBody></a:tc></a:tr></a:tbl></a:graphicData></a:graphic></p:graphicFrame>".to_owned(),
        ]
        .concat();
        let second = [
            shape(Some("ctrTitle"), &para("Hidden One")),
            shape(Some("sldNum"), &para("2")),
        ]
        .concat();
        let bytes = pptx(&[(&first, false), (&second, true)], &para("say hello"));
        let md = convert(&bytes, &Options::default(), &Cancel::new()).expect("it converts");
        assert_eq!(
            md.text,
            "## Slide 1: Opening\n\n- point one\n    - deeper\n\n[the deck](https://example.org/deck)\n\na text box\n\n| Item | Cost |\n| --- | --- |\n| Tea | 3 |\n\n### Notes\n\nsay hello\n\n## Slide 2: Hidden One (hidden)\n"
        );
        assert_eq!(md.title.as_deref(), Some("Opening"));
    }

    #[test]
    fn a_missing_slide_part_is_said_and_a_missing_presentation_refused() {
        let bytes = zip_of(&[
            ("_rels/.rels", &root_rels("ppt/presentation.xml")),
            (
                "ppt/presentation.xml",
                &format!(
                    r#"<p:presentation {NS}><p:sldIdLst><p:sldId id="256" r:id="rId9"/></p:sldIdLst></p:presentation>"#
                ),
            ),
        ]);
        let md = convert(&bytes, &Options::default(), &Cancel::new()).expect("readable");
        assert_eq!(
            md.text,
            "## Slide 1\n\n*(This slide's content is missing from the file.)*\n"
        );
        let empty = zip_of(&[("_rels/.rels", &root_rels("ppt/presentation.xml"))]);
        assert_eq!(
            convert(&empty, &Options::default(), &Cancel::new()).map(|md| md.text),
            Err(Failure::unreadable(
                "its main part ppt/presentation.xml is missing"
            ))
        );
    }
}
