//! A TEMPORARY stand-in for the Markdown extraction (issue 7, part 1), with
//! the agreed signature, so that the gateway's `extract` and `import` build
//! and run before the real one lands. Plain text comes back as it is;
//! anything else comes back as the file view's extracted text, its `Slide
//! N`, `Notes:` and `Sheet: name` lines turned into headings.

use crate::{Cancel, FileInput, Options, Prep, ViewError, prepare};

/// `Markdown` is a document as Markdown: its text, its title if it names
/// one, and notes on what could not be carried over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Markdown {
    /// The Markdown.
    pub text: String,
    /// The document's own title, if it has one.
    pub title: Option<String>,
    /// What the extraction could not carry over, one sentence each.
    pub notes: Vec<String>,
}

/// Turns a file into Markdown (stand-in: see the module's doc).
pub fn to_markdown(
    input: &FileInput<'_>,
    options: &Options,
    cancel: &Cancel,
) -> Result<Markdown, ViewError> {
    let prepared = prepare(input, options, cancel)?;
    let Prep::Paged(paged) = prepared.0 else {
        return Ok(Markdown {
            text: String::new(),
            title: None,
            notes: vec![format!("{} has no text to extract", input.name)],
        });
    };
    let mut text = String::with_capacity(paged.text.len());
    for line in paged.text.lines() {
        if let Some(sheet) = line.strip_prefix("Sheet: ") {
            text.push_str("## ");
            text.push_str(sheet);
        } else if line.starts_with("Slide ")
            && line[6..].chars().next().is_some_and(|c| c.is_ascii_digit())
        {
            text.push_str("## ");
            text.push_str(line);
        } else if line == "Notes:" {
            text.push_str("### Notes");
        } else {
            text.push_str(line);
        }
        text.push('\n');
    }
    Ok(Markdown {
        text,
        title: None,
        notes: paged.notes,
    })
}
