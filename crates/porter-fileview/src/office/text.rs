//! The text an Office reader hands back, built line by line and cut at
//! `Options::office_text_bytes`.

use crate::bounds::Extracted;
use crate::describe::human_size;
use crate::text::push_capped;

/// `TextOut` gathers lines separated by `\n` and stops taking text once the
/// cap is reached, remembering that it cut so that a note can say so.
pub(crate) struct TextOut {
    text: String,
    cap: usize,
    lines: usize,
    open: bool,
    cut: bool,
}

impl TextOut {
    /// An empty text that holds at most `cap` bytes.
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            text: String::new(),
            cap,
            lines: 0,
            open: false,
            cut: false,
        }
    }

    /// Appends `piece` to the current line, opening one if none is open. A
    /// `\n` inside `piece` starts a further line.
    pub(crate) fn push(&mut self, piece: &str) {
        if !self.open {
            self.open_line();
        }
        self.append(piece);
    }

    /// Closes the current line; an empty line is written when none was open.
    pub(crate) fn end_line(&mut self) {
        if !self.open {
            self.open_line();
        }
        self.open = false;
    }

    /// Writes `line` as a whole line of its own.
    pub(crate) fn line(&mut self, line: &str) {
        if self.open {
            self.end_line();
        }
        self.push(line);
        self.end_line();
    }

    /// Whether nothing has been written yet.
    pub(crate) fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Whether the cap was reached: nothing more will be taken.
    pub(crate) fn is_full(&self) -> bool {
        self.cut
    }

    /// The text and its notes: `what` (always) and, when the text was cut,
    /// where. Trailing empty lines are dropped.
    pub(crate) fn finish(mut self, what: &str) -> Extracted {
        while self.text.ends_with('\n') {
            self.text.pop();
        }
        let mut notes = vec![what.to_owned()];
        if self.cut {
            notes.push(format!(
                "The text was cut at {}; later parts are not shown.",
                human_size(self.cap as u64)
            ));
        }
        Extracted {
            text: self.text,
            notes,
        }
    }

    /// Starts a line, separated from the one before.
    fn open_line(&mut self) {
        if self.lines > 0 {
            self.append("\n");
        }
        self.lines += 1;
        self.open = true;
    }

    /// Appends what still fits under the cap, noting a cut.
    fn append(&mut self, piece: &str) {
        if !self.cut {
            self.cut = !push_capped(&mut self.text, piece, self.cap);
        }
    }
}
