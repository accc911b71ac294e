//! Streaming XML for Office parts: one event at a time, never a DOM, with
//! every limit of the file view held while reading.
//!
//! `Xml` refuses what an Office part never needs and a hostile one uses: a
//! DOCTYPE (the door to billion-laughs entities), an entity XML does not
//! predefine, and nesting deeper than `Options::xml_depth`. Empty elements
//! come out as a start and an end, so every reader can keep a plain stack.

use std::borrow::Cow;
use std::io::BufRead;

use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};

use crate::bounds::{Failure, is_cap_error};
use crate::describe::human_size;

/// `Node` is one step through a part: an element opening (with its
/// attributes), an element closing, some text with its references resolved,
/// or the end of the part.
pub(crate) enum Node<'b> {
    /// An element opens; an empty element is followed by its [`Node::End`].
    Start(BytesStart<'b>),
    /// The innermost open element closes.
    End,
    /// Character data, CDATA, or one resolved character or entity reference.
    Text(Cow<'b, str>),
    /// A declaration, processing instruction or comment: nothing to read.
    Other,
    /// The part is over and every element was closed.
    Eof,
}

/// `Xml` reads one part, tracking how deep it is, so that readers above it
/// only deal with well-formed, bounded input.
pub(crate) struct Xml<R> {
    reader: Reader<R>,
    buf: Vec<u8>,
    depth: usize,
    max_depth: usize,
    part: String,
    cap: u64,
}

impl<R: BufRead> Xml<R> {
    /// A reader of `part` (named in reasons) over `source`, refusing nesting
    /// past `max_depth`; `xml_cap` is the decompressed cap the source is held
    /// to, named when a read stops there.
    pub(crate) fn new(source: R, part: &str, max_depth: usize, xml_cap: u64) -> Self {
        let mut reader = Reader::from_reader(source);
        let config = reader.config_mut();
        config.expand_empty_elements = true;
        config.check_end_names = true;
        Self {
            reader,
            buf: Vec::with_capacity(4096),
            depth: 0,
            max_depth,
            part: part.to_owned(),
            cap: xml_cap,
        }
    }

    /// The name of the part being read, for reasons.
    pub(crate) fn part(&self) -> &str {
        &self.part
    }

    /// How many elements are open now.
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// The source, for a caller that counts what was read through it.
    pub(crate) fn source(&self) -> &R {
        self.reader.get_ref()
    }

    /// The next node, or the reason the part cannot be read.
    pub(crate) fn next(&mut self) -> Result<Node<'_>, Failure> {
        {
            self.buf.clear();
            let event = match self.reader.read_event_into(&mut self.buf) {
                Ok(event) => event,
                Err(error) => return Err(read_failure(&self.part, self.cap, &error)),
            };
            match event {
                // `Empty` never comes while empty elements are expanded.
                Event::Start(start) | Event::Empty(start) => {
                    if self.depth >= self.max_depth {
                        return Err(Failure::unreadable(format!(
                            "its XML is nested deeper than {} levels",
                            self.max_depth
                        )));
                    }
                    self.depth += 1;
                    Ok(Node::Start(start))
                }
                Event::End(_) => {
                    self.depth = self.depth.saturating_sub(1);
                    Ok(Node::End)
                }
                Event::Text(text) => Ok(Node::Text(text.xml10_content())),
                Event::CData(data) => Ok(Node::Text(data.xml10_content())),
                Event::GeneralRef(reference) => {
                    if reference.is_char_ref() {
                        match reference.resolve_char_ref() {
                            Ok(Some(ch)) => Ok(Node::Text(Cow::Owned(ch.to_string()))),
                            _ => Err(Failure::unreadable(format!(
                                "its part {} is broken XML (the character reference &{}; is not valid)",
                                self.part,
                                clip(&reference, 40)
                            ))),
                        }
                    } else {
                        match predefined_entity(&reference) {
                            Some(text) => Ok(Node::Text(Cow::Borrowed(text))),
                            None => Err(Failure::unreadable(format!(
                                "its part {} is broken XML: it uses the entity &{}; which XML does not define, and entities from a DOCTYPE are never expanded",
                                self.part,
                                clip(&reference, 40)
                            ))),
                        }
                    }
                }
                Event::DocType(_) => Err(Failure::unreadable(format!(
                    "its part {} is broken XML: it has a DOCTYPE declaration, which Office files never use and which could define entities that expand without bound",
                    self.part
                ))),
                Event::Eof => {
                    if self.depth > 0 {
                        Err(Failure::unreadable(format!(
                            "its part {} is broken XML: it ends before its elements are closed",
                            self.part
                        )))
                    } else {
                        Ok(Node::Eof)
                    }
                }
                Event::Decl(_) | Event::PI(_) | Event::Comment(_) => Ok(Node::Other),
            }
        }
    }

    /// An element `name` just opened right inside a markup-compatibility
    /// `AlternateContent`, whose first branch was read already when
    /// `taken`: `None` when it is no branch (`Choice` or `Fallback`);
    /// `Some(true)` for the first branch, to be read (and `taken` is set);
    /// `Some(false)` for any later one, read past here.
    pub(crate) fn branch(&mut self, name: &str, taken: &mut bool) -> Result<Option<bool>, Failure> {
        if name != "Choice" && name != "Fallback" {
            return Ok(None);
        }
        if *taken {
            self.skip()?;
            return Ok(Some(false));
        }
        *taken = true;
        Ok(Some(true))
    }

    /// Reads past the rest of the element just opened, holding every limit.
    pub(crate) fn skip(&mut self) -> Result<(), Failure> {
        let level = self.depth;
        loop {
            match self.next()? {
                Node::End => {}
                Node::Eof => return Ok(()),
                _ => continue,
            }
            if self.depth < level {
                return Ok(());
            }
        }
    }
}

/// The local part of an element's name (`p` for `w:p`).
pub(crate) fn local<'a>(start: &'a BytesStart<'_>) -> &'a str {
    let name = start.name();
    let full: &str = name.0;
    match full.rfind(':') {
        Some(at) => &full[at + 1..],
        None => full,
    }
}

/// The value of the first attribute whose name `wanted` accepts, with
/// references resolved. A malformed attribute list is broken XML.
pub(crate) fn attribute(
    start: &BytesStart<'_>,
    part: &str,
    wanted: impl Fn(&str) -> bool,
) -> Result<Option<String>, Failure> {
    for attr in start.attributes().with_checks(false) {
        let attr = attr.map_err(|error| {
            Failure::unreadable(format!("its part {part} is broken XML ({error})"))
        })?;
        if wanted(attr.key.0) {
            let value = attr
                .normalized_value(XmlVersion::Implicit1_0)
                .map_err(|error| {
                    Failure::unreadable(format!("its part {part} is broken XML ({error})"))
                })?;
            return Ok(Some(value.into_owned()));
        }
    }
    Ok(None)
}

/// Whether an attribute name has the local part `name`, whatever its prefix.
pub(crate) fn named(key: &str, name: &str) -> bool {
    match key.rfind(':') {
        Some(at) => &key[at + 1..] == name,
        None => key == name,
    }
}

/// Whether an attribute name is a prefixed `…:id`, as the relationship id
/// `r:id` is (a bare `id` is something else).
pub(crate) fn prefixed_id(key: &str) -> bool {
    key.rfind(':').is_some_and(|at| &key[at + 1..] == "id")
}

/// The relationship ids (`r:id`) of every `element` in the part, in the
/// order the part lists them: how a presentation lists its slides and a
/// workbook its sheets.
pub(crate) fn relationship_ids<R: BufRead>(
    xml: &mut Xml<R>,
    element: &str,
) -> Result<Vec<String>, Failure> {
    let part = xml.part().to_owned();
    let mut ids = Vec::new();
    loop {
        match xml.next()? {
            Node::Start(start) if local(&start) == element => {
                if let Some(id) = attribute(&start, &part, prefixed_id)? {
                    ids.push(id);
                }
            }
            Node::Eof => return Ok(ids),
            _ => {}
        }
    }
}

/// The five entities XML predefines.
fn predefined_entity(name: &str) -> Option<&'static str> {
    Some(match name {
        "lt" => "<",
        "gt" => ">",
        "amp" => "&",
        "apos" => "'",
        "quot" => "\"",
        _ => return None,
    })
}

/// At most `chars` characters of `text`, so a crafted name cannot flood a reason.
fn clip(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// The reason for a failed read: the decompressed cap, the zip, or the XML.
fn read_failure(part: &str, xml_cap: u64, error: &quick_xml::Error) -> Failure {
    if let quick_xml::Error::Io(io) = error {
        if is_cap_error(io) {
            return Failure::unreadable(format!(
                "its XML comes to more than {} when decompressed",
                human_size(xml_cap)
            ));
        }
        return Failure::unreadable(format!(
            "its part {part} cannot be read from the zip ({io})"
        ));
    }
    Failure::unreadable(format!("its part {part} is broken XML ({error})"))
}
