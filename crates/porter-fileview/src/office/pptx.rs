//! `PowerPoint` presentations (PPTX): slides in the order they are shown.
//!
//! The order is the presentation's slide list (`p:sldIdLst`) resolved
//! through its relationships, never the slide parts' file names. Each slide
//! is headed `Slide N` (hidden ones say so), its text paragraphs are lines,
//! its tables tab-joined rows, and its speaker notes follow under `Notes:`.

use std::io::BufRead;

use super::package::{Package, Rel};
use super::text::TextOut;
use super::xml::{Node, Xml, attribute, local, named, prefixed_id, push_bounded, push_cell_text};
use crate::bounds::{Cancel, Extracted, Failure};
use crate::options::Options;

/// The note every `PowerPoint` text carries.
const PPTX_NOTE: &str = "This is the presentation's text only: formatting, pictures, charts and diagrams are not included.";

/// The main part of a package whose relationships do not name one.
const DEFAULT_MAIN: &str = "ppt/presentation.xml";

/// Placeholders of a slide that only repeat what the viewer adds anyway.
const SLIDE_SKIPPED: &[&str] = &["sldNum", "dt"];

/// Placeholders of a notes page that are not the notes: the slide's
/// picture, its number, the header, footer and date.
const NOTES_SKIPPED: &[&str] = &["sldImg", "sldNum", "hdr", "ftr", "dt"];

/// Extracts the text of the presentation in `bytes`.
pub(crate) fn extract(
    bytes: &[u8],
    options: &Options,
    cancel: &Cancel,
) -> Result<Extracted, Failure> {
    let mut package = Package::open_checked(bytes, options)?;
    let main = package
        .main_part()?
        .unwrap_or_else(|| DEFAULT_MAIN.to_owned());
    // A generic fn item is not general enough for `read`'s higher-ranked
    // bound on the reader's lifetime; a closure is.
    #[allow(clippy::redundant_closure)]
    let found = package.read(&main, |xml| read_slide_ids(xml))?;
    let Some(slide_ids) = found else {
        return Err(Failure::unreadable(format!(
            "its main part {main} is missing"
        )));
    };
    let rels = package.relationships(&main)?;
    let limit = options.office_text_bytes.saturating_add(1);
    let mut out = TextOut::new(options.office_text_bytes);
    for (index, id) in slide_ids.iter().enumerate() {
        cancel.check()?;
        if out.is_full() {
            break;
        }
        if index > 0 {
            out.line("");
        }
        let number = index + 1;
        let target = rels
            .iter()
            .find(|rel| &rel.id == id)
            .map(|rel| rel.target.clone());
        let slide = match &target {
            Some(part) => {
                package.read(part, |xml| read_slide(xml, SLIDE_SKIPPED, limit, cancel))?
            }
            None => None,
        };
        let (Some(part), Some(slide)) = (target, slide) else {
            out.line(&format!("Slide {number}"));
            out.line("(This slide's content is missing from the file.)");
            continue;
        };
        if slide.hidden {
            out.line(&format!("Slide {number} (hidden)"));
        } else {
            out.line(&format!("Slide {number}"));
        }
        for line in &slide.lines {
            out.line(line);
        }
        let notes_part = package
            .relationships(&part)?
            .into_iter()
            .find(|rel: &Rel| rel.kind.ends_with("/notesSlide"))
            .map(|rel| rel.target);
        if let Some(notes_part) = notes_part
            && let Some(notes) = package.read(&notes_part, |xml| {
                read_slide(xml, NOTES_SKIPPED, limit, cancel)
            })?
            && !notes.lines.is_empty()
        {
            out.line("Notes:");
            for line in &notes.lines {
                out.line(line);
            }
        }
    }
    Ok(out.finish(PPTX_NOTE))
}

/// The relationship ids of the slides, in the order the presentation lists
/// them.
fn read_slide_ids<R: BufRead>(xml: &mut Xml<R>) -> Result<Vec<String>, Failure> {
    let part = xml.part().to_owned();
    let mut ids = Vec::new();
    loop {
        match xml.next()? {
            Node::Start(start) if local(&start) == "sldId" => {
                if let Some(id) = attribute(&start, &part, prefixed_id)? {
                    ids.push(id);
                }
            }
            Node::Eof => return Ok(ids),
            _ => {}
        }
    }
}

/// The text of one slide or notes page.
pub(crate) struct Slide {
    /// Whether the slide is hidden from the show (`show="0"`).
    pub hidden: bool,
    /// Its non-empty text lines, paragraphs and table rows in shape order.
    pub lines: Vec<String>,
}

/// One open element, as far as the text cares.
enum Frame {
    Other,
    /// A shape; `skip` once its placeholder type says it holds no content.
    Shape {
        skip: bool,
    },
    Paragraph(String),
    Run,
    Text,
    Row(Vec<String>),
    Cell(String),
    Alternate {
        taken: bool,
    },
}

/// Reads a slide (`p:sld`) or notes page (`p:notes`), leaving out the
/// shapes that are placeholders of a type in `skipped`.
pub(crate) fn read_slide<R: BufRead>(
    xml: &mut Xml<R>,
    skipped: &[&str],
    limit: usize,
    cancel: &Cancel,
) -> Result<Slide, Failure> {
    let part = xml.part().to_owned();
    let mut slide = Slide {
        hidden: false,
        lines: Vec::new(),
    };
    let mut frames: Vec<Frame> = Vec::new();
    let mut shapes: Vec<usize> = Vec::new();
    let mut paragraphs: Vec<usize> = Vec::new();
    let mut cells: Vec<usize> = Vec::new();
    let mut rows: Vec<usize> = Vec::new();
    let mut runs = 0usize;
    let mut text_bytes = 0usize;
    loop {
        match xml.next()? {
            Node::Start(start) => {
                let name = local(&start).to_owned();
                if frames.is_empty() && name == "sld" {
                    let show = attribute(&start, &part, |k| named(k, "show"))?;
                    slide.hidden = show.is_some_and(|s| s == "0" || s == "false");
                }
                if let Some(Frame::Alternate { taken }) = frames.last_mut()
                    && (name == "Choice" || name == "Fallback")
                {
                    if *taken {
                        xml.skip()?;
                        continue;
                    }
                    *taken = true;
                    frames.push(Frame::Other);
                    continue;
                }
                let skipping_shape = shapes
                    .last()
                    .is_some_and(|&at| matches!(frames[at], Frame::Shape { skip: true }));
                let frame = match name.as_str() {
                    "sp" => {
                        shapes.push(frames.len());
                        Frame::Shape { skip: false }
                    }
                    "ph" => {
                        let kind = attribute(&start, &part, |k| named(k, "type"))?;
                        if let (Some(kind), Some(&at)) = (kind, shapes.last())
                            && skipped.contains(&kind.as_str())
                        {
                            frames[at] = Frame::Shape { skip: true };
                        }
                        Frame::Other
                    }
                    "txBody" if skipping_shape => {
                        xml.skip()?;
                        continue;
                    }
                    "p" => {
                        paragraphs.push(frames.len());
                        Frame::Paragraph(String::new())
                    }
                    "r" | "fld" => {
                        runs += 1;
                        Frame::Run
                    }
                    "t" if runs > 0 => Frame::Text,
                    "br" if !paragraphs.is_empty() => {
                        append(&mut frames, &paragraphs, "\n", limit);
                        Frame::Other
                    }
                    "tr" => {
                        rows.push(frames.len());
                        Frame::Row(Vec::new())
                    }
                    "tc" => {
                        cells.push(frames.len());
                        Frame::Cell(String::new())
                    }
                    "AlternateContent" => Frame::Alternate { taken: false },
                    _ => Frame::Other,
                };
                frames.push(frame);
            }
            Node::Text(text) => {
                if matches!(frames.last(), Some(Frame::Text)) {
                    append(&mut frames, &paragraphs, &text, limit);
                }
            }
            Node::End => {
                let Some(frame) = frames.pop() else { continue };
                match frame {
                    Frame::Shape { .. } => {
                        shapes.pop();
                    }
                    Frame::Run => runs = runs.saturating_sub(1),
                    Frame::Paragraph(text) => {
                        paragraphs.pop();
                        cancel.check()?;
                        match cells.last() {
                            Some(&at) => add_to_cell(&mut frames[at], &text, limit),
                            None => {
                                for line in text.split('\n') {
                                    let line = line.trim_end();
                                    if !line.trim().is_empty() && text_bytes < limit {
                                        text_bytes += line.len() + 1;
                                        slide.lines.push(line.to_owned());
                                    }
                                }
                            }
                        }
                    }
                    Frame::Cell(text) => {
                        cells.pop();
                        if let Some(&at) = rows.last()
                            && let Frame::Row(row) = &mut frames[at]
                        {
                            row.push(text);
                        }
                    }
                    Frame::Row(row) => {
                        rows.pop();
                        cancel.check()?;
                        if let Some(&at) = cells.last() {
                            add_to_cell(&mut frames[at], &row.join(" "), limit);
                        } else {
                            let line = row.join("\t");
                            if !line.trim().is_empty() && text_bytes < limit {
                                text_bytes += line.len() + 1;
                                slide.lines.push(line);
                            }
                        }
                    }
                    Frame::Other | Frame::Text | Frame::Alternate { .. } => {}
                }
            }
            Node::Other => {}
            Node::Eof => return Ok(slide),
        }
    }
}

/// Appends to the innermost open paragraph.
fn append(frames: &mut [Frame], paragraphs: &[usize], text: &str, limit: usize) {
    if let Some(&at) = paragraphs.last()
        && let Frame::Paragraph(paragraph) = &mut frames[at]
    {
        push_bounded(paragraph, text, limit);
    }
}

/// Adds a paragraph to a cell's one line, breaks and tabs made spaces.
fn add_to_cell(frame: &mut Frame, text: &str, limit: usize) {
    let text = text.trim();
    if text.is_empty() {
        return;
    }
    if let Frame::Cell(cell) = frame {
        push_cell_text(cell, text, limit);
    }
}

#[cfg(test)]
// Fixtures are literal XML and bytes put together with `format!`, which
// reads more plainly here than a chain of `write!` calls.
#[allow(clippy::format_collect, clippy::format_push_string)]
mod tests {
    use super::*;
    use crate::office::tests::{content_types, root_rels, zip_of};

    const SLIDES: &str =
        "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml";
    const NS: &str = r#"xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main""#;
    const REL: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

    fn shape(placeholder: Option<&str>, paragraphs: &[&str]) -> String {
        let ph = placeholder.map_or(String::new(), |kind| format!(r#"<p:ph type="{kind}"/>"#));
        let body: String = paragraphs
            .iter()
            .map(|text| format!("<a:p><a:r><a:rPr lang=\"en\"/><a:t>{text}</a:t></a:r></a:p>"))
            .collect();
        format!(
            "<p:sp><p:nvSpPr><p:cNvPr id=\"2\" name=\"s\"/><p:cNvSpPr/><p:nvPr>{ph}</p:nvPr></p:nvSpPr><p:txBody><a:bodyPr/>{body}</p:txBody></p:sp>"
        )
    }

    fn slide(show: &str, shapes: &str) -> String {
        format!(
            r#"<?xml version="1.0"?><p:sld {NS}{show}><p:cSld><p:spTree>{shapes}</p:spTree></p:cSld></p:sld>"#
        )
    }

    /// A presentation listing `slide_files` (in that order) with the given
    /// contents, each with optional notes.
    fn pptx_of(slides: &[(&str, String, Option<String>)]) -> Vec<u8> {
        let mut parts: Vec<(String, String)> = vec![
            (
                "[Content_Types].xml".into(),
                content_types("ppt/presentation.xml", SLIDES),
            ),
            ("_rels/.rels".into(), root_rels("ppt/presentation.xml")),
        ];
        let mut ids = String::new();
        let mut rels = String::new();
        for (index, (file, content, notes)) in slides.iter().enumerate() {
            let rid = format!("rId{}", index + 10);
            ids.push_str(&format!(r#"<p:sldId id="{}" r:id="{rid}"/>"#, 256 + index));
            rels.push_str(&format!(
                r#"<Relationship Id="{rid}" Type="{REL}/slide" Target="slides/{file}"/>"#
            ));
            parts.push((format!("ppt/slides/{file}"), content.clone()));
            if let Some(notes) = notes {
                let notes_file = format!("notesSlide{}.xml", index + 1);
                parts.push((
                    format!("ppt/slides/_rels/{file}.rels"),
                    format!(
                        r#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{REL}/slideLayout" Target="../slideLayouts/slideLayout1.xml"/><Relationship Id="rId2" Type="{REL}/notesSlide" Target="../notesSlides/{notes_file}"/></Relationships>"#
                    ),
                ));
                parts.push((format!("ppt/notesSlides/{notes_file}"), notes.clone()));
            }
        }
        parts.push((
            "ppt/presentation.xml".into(),
            format!(r"<p:presentation {NS}><p:sldIdLst>{ids}</p:sldIdLst></p:presentation>"),
        ));
        parts.push((
            "ppt/_rels/presentation.xml.rels".into(),
            format!(r#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">{rels}</Relationships>"#),
        ));
        let borrowed: Vec<(&str, &str)> = parts
            .iter()
            .map(|(n, c)| (n.as_str(), c.as_str()))
            .collect();
        zip_of(&borrowed)
    }

    fn text_of(bytes: &[u8]) -> String {
        extract(bytes, &Options::default(), &Cancel::new())
            .expect("the test presentation is readable")
            .text
    }

    #[test]
    fn slides_follow_the_slide_list_not_file_names_and_hidden_ones_are_marked() {
        let bytes = pptx_of(&[
            (
                "slide3.xml",
                slide("", &shape(Some("title"), &["First shown"])),
                None,
            ),
            (
                "slide1.xml",
                slide(r#" show="0""#, &shape(None, &["Second, hidden"])),
                None,
            ),
            (
                "slide2.xml",
                slide("", &shape(None, &["Third", "", "with two lines"])),
                None,
            ),
        ]);
        assert_eq!(
            text_of(&bytes),
            "Slide 1\nFirst shown\n\nSlide 2 (hidden)\nSecond, hidden\n\nSlide 3\nThird\nwith two lines"
        );
    }

    #[test]
    fn notes_follow_their_slide_without_the_slide_image_or_number() {
        let notes = format!(
            r"<p:notes {NS}><p:cSld><p:spTree>{}{}{}</p:spTree></p:cSld></p:notes>",
            shape(Some("sldImg"), &[]),
            shape(Some("body"), &["Say this", "and that"]),
            shape(Some("sldNum"), &["4"])
        );
        let bytes = pptx_of(&[
            (
                "slide1.xml",
                slide("", &shape(None, &["Body"])),
                Some(notes),
            ),
            (
                "slide2.xml",
                slide("", &shape(Some("sldNum"), &["2"])),
                None,
            ),
        ]);
        assert_eq!(
            text_of(&bytes),
            "Slide 1\nBody\nNotes:\nSay this\nand that\n\nSlide 2"
        );
    }

    #[test]
    fn tables_are_tab_joined_rows_and_breaks_start_lines() {
        let table = r"<p:graphicFrame><a:graphic><a:graphicData><a:tbl><a:tr><a:tc><a:txBody><a:p><a:r><a:t>a</a:t></a:r></a:p></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>b</a:t></a:r></a:p><a:p><a:r><a:t>c</a:t></a:r></a:p></a:txBody></a:tc></a:tr><a:tr><a:tc><a:txBody><a:p/></a:txBody></a:tc><a:tc><a:txBody><a:p><a:r><a:t>d</a:t></a:r></a:p></a:txBody></a:tc></a:tr></a:tbl></a:graphicData></a:graphic></p:graphicFrame>";
        let broken = r"<p:sp><p:txBody><a:p><a:r><a:t>up</a:t></a:r><a:br/><a:r><a:t>down</a:t></a:r></a:p></p:txBody></p:sp>";
        let bytes = pptx_of(&[("slide1.xml", slide("", &format!("{broken}{table}")), None)]);
        assert_eq!(text_of(&bytes), "Slide 1\nup\ndown\na\tb c\n\td");
    }

    #[test]
    fn a_missing_slide_part_is_said_and_a_missing_presentation_refused() {
        let mut bytes = pptx_of(&[("slide1.xml", slide("", &shape(None, &["x"])), None)]);
        let text = text_of(&bytes);
        assert_eq!(text, "Slide 1\nx");
        bytes = zip_of(&[
            ("_rels/.rels", &root_rels("ppt/presentation.xml")),
            (
                "ppt/presentation.xml",
                &format!(
                    r#"<p:presentation {NS}><p:sldIdLst><p:sldId id="256" r:id="rId9"/></p:sldIdLst></p:presentation>"#
                ),
            ),
        ]);
        assert_eq!(
            text_of(&bytes),
            "Slide 1\n(This slide's content is missing from the file.)"
        );
        let empty = zip_of(&[("_rels/.rels", &root_rels("ppt/presentation.xml"))]);
        assert_eq!(
            extract(&empty, &Options::default(), &Cancel::new()),
            Err(Failure::unreadable(
                "its main part ppt/presentation.xml is missing"
            ))
        );
    }
}
