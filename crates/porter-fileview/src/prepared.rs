//! A file read once, ready to answer any window of it: the whole view of a
//! file without windows, or text with its line index and what every
//! window's header repeats.

use crate::content::{Block, Heading, Record, Shown, View, WindowRecord};
use crate::input::ViewError;
use crate::options::Options;
use crate::text::{self, WindowRequest};

/// `Prepared` is a file read once, ready to answer any window of it; see
/// [`prepare`](crate::prepare).
#[derive(Debug, Clone)]
pub struct Prepared(pub(crate) Prep);

#[derive(Debug, Clone)]
pub(crate) enum Prep {
    /// A file without windows: the same view whatever the window.
    Whole(Box<View>),
    /// Text to cut windows from.
    Paged(Box<Paged>),
}

/// Text to cut windows from, and everything each window's answer repeats.
/// It crosses a worker's pipe as it is, but for its line index.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Paged {
    /// The record every window starts from (no window yet, the reader's
    /// notes).
    pub(crate) record: Record,
    /// What the header calls the text ("Word document, as Markdown").
    pub(crate) what: String,
    pub(crate) text: String,
    /// Where the lines of `text` start: never sent, rebuilt from `text`
    /// where a worker's answer is read.
    #[serde(skip)]
    pub(crate) index: text::LineIndex,
    /// The reader's notes, said in every header.
    pub(crate) notes: Vec<String>,
    /// The one line said when there is no text at all.
    pub(crate) empty: String,
    /// Blocks after the text (a PDF's own bytes).
    pub(crate) after: Vec<Block>,
}

impl Prepared {
    pub(crate) fn whole(view: View) -> Self {
        Self(Prep::Whole(Box::new(view)))
    }

    /// The view of one window: for paged text the header and numbered
    /// lines asked for, for anything else the whole view.
    pub fn view(&self, request: &WindowRequest, options: &Options) -> Result<View, ViewError> {
        let paged = match &self.0 {
            Prep::Whole(view) => return Ok(View::clone(view)),
            Prep::Paged(paged) => paged,
        };
        let window = text::window(&paged.text, &paged.index, request, options).map_err(
            |error| match error {
                text::WindowError::PastEnd {
                    start_line,
                    total_lines,
                } => ViewError::PastEnd {
                    name: paged.record.name.clone(),
                    start_line,
                    total_lines,
                },
                text::WindowError::Zero(field) => ViewError::BadWindow { field },
            },
        )?;
        let mut record = paged.record.clone();
        let mut block = if window.total_lines == 0 {
            paged.empty.clone()
        } else {
            text::header(&record.name, &paged.what, &window)
        };
        for note in &paged.notes {
            block.push(' ');
            block.push_str(note);
        }
        push_type_note(&mut block, &record);
        // A document longer than one window names where its sections start,
        // for a model that sees only the text.
        let whole = window.start_line <= 1 && window.next_start_line().is_none();
        if !whole && !record.outline.is_empty() {
            block.push(' ');
            block.push_str(&sections(&record.outline));
        }
        if !window.numbered.is_empty() {
            block.push('\n');
            block.push_str(&window.numbered);
        }
        record.window = Some(WindowRecord {
            start_line: window.start_line,
            end_line: window.end_line,
            total_lines: window.total_lines,
            next_start_line: window.next_start_line(),
        });
        record.notes = window
            .notes
            .into_iter()
            .chain(paged.notes.iter().cloned())
            .collect();
        let mut content = vec![Block::text(block)];
        content.extend(paged.after.iter().cloned());
        Ok(View {
            content,
            structured: record,
        })
    }

    /// About how much memory this holds, for callers that keep several
    /// within a byte budget.
    #[must_use]
    pub fn held_bytes(&self) -> u64 {
        let blocks = |blocks: &[Block]| -> u64 {
            blocks
                .iter()
                .map(|b| match b {
                    Block::Text { text } => text.len() as u64,
                    Block::Image { data, .. } | Block::Audio { data, .. } => data.len() as u64,
                    Block::Resource { resource } => resource.blob.len() as u64,
                })
                .sum()
        };
        match &self.0 {
            Prep::Whole(view) => blocks(&view.content),
            Prep::Paged(paged) => {
                let outline: u64 = paged
                    .record
                    .outline
                    .iter()
                    .map(|h| h.text.len() as u64 + 32)
                    .sum();
                paged.text.len() as u64 + paged.index.held_bytes() + blocks(&paged.after) + outline
            }
        }
    }

    /// Adds a block after every window's text (a PDF's own bytes), and says
    /// so in the record.
    pub(crate) fn attach(&mut self, block: Block) {
        match &mut self.0 {
            Prep::Whole(view) => {
                view.content.push(block);
                view.structured.shown = Shown::Resource;
            }
            Prep::Paged(paged) => {
                paged.after.push(block);
                paged.record.shown = Shown::Resource;
            }
        }
    }
}

/// Adds the record's type note (a name or declared type the bytes
/// disagree with), when it has one, to the text of a header.
pub(crate) fn push_type_note(text: &mut String, record: &Record) {
    if let Some(note) = &record.type_note {
        text.push_str(" Its type: ");
        text.push_str(note);
    }
}

/// `HEADER_SECTIONS` is the most headings a window's header names.
const HEADER_SECTIONS: usize = 20;

/// The sentence naming the lines a document's sections start at: its
/// headings of the top levels it has, the first [`HEADER_SECTIONS`] of them.
fn sections(outline: &[Heading]) -> String {
    use std::fmt::Write as _;

    let top = outline.iter().map(|h| h.level).min().unwrap_or(1);
    // The top two levels, unless they alone are too many to name.
    let levels = if outline.iter().filter(|h| h.level <= top + 1).count() <= HEADER_SECTIONS {
        top + 1
    } else {
        top
    };
    let chosen: Vec<&Heading> = outline.iter().filter(|h| h.level <= levels).collect();
    let mut out = String::from("Sections start at:");
    for (index, heading) in chosen.iter().take(HEADER_SECTIONS).enumerate() {
        let text: String = heading.text.chars().take(60).collect();
        let _ = write!(
            out,
            "{} line {} ({text})",
            if index == 0 { "" } else { ";" },
            heading.line
        );
    }
    if chosen.len() > HEADER_SECTIONS {
        let _ = write!(out, "; {} more", chosen.len() - HEADER_SECTIONS);
    }
    out.push_str(". Pass a line as start_line to read that section.");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_names_the_top_two_levels_of_sections_or_only_the_top_when_they_are_many() {
        let heading = |level: u8, text: &str, line: u64| Heading {
            level,
            text: text.to_owned(),
            line,
        };
        let few = [
            heading(2, "Intro", 1),
            heading(3, "Aim", 5),
            heading(4, "Detail", 9),
            heading(2, "End", 20),
        ];
        assert_eq!(
            sections(&few),
            "Sections start at: line 1 (Intro); line 5 (Aim); line 20 (End). Pass a line as start_line to read that section."
        );
        let mut many = vec![heading(1, "Book", 1)];
        many.extend((0..25).map(|n| heading(2, "Chapter", 10 + n)));
        assert_eq!(
            sections(&many),
            "Sections start at: line 1 (Book). Pass a line as start_line to read that section."
        );
        let tops: Vec<Heading> = (0..25).map(|n| heading(1, "Part", 1 + n)).collect();
        assert!(
            sections(&tops).ends_with(
                "line 20 (Part); 5 more. Pass a line as start_line to read that section."
            )
        );
    }
}
