//! Long outputs (log, diff, blame, grep, listings) come in windows of
//! lines, like the file view's: the model asks again from `offset` for
//! more, and no window is larger than [`MAX_PAGE_BYTES`].

/// `DEFAULT_PAGE_LINES` is how many lines a window holds unless asked.
pub const DEFAULT_PAGE_LINES: usize = 200;

/// `MAX_PAGE_LINES` is the most lines a window holds, whatever is asked.
pub const MAX_PAGE_LINES: usize = 2_000;

/// `MAX_PAGE_BYTES` is the most text a window holds, so one huge line or
/// many long ones cannot flood the model's context.
pub const MAX_PAGE_BYTES: usize = 64 * 1024;

/// `MAX_LINE_CHARS` is where one line is cut (the cut is marked).
pub const MAX_LINE_CHARS: usize = 2_000;

/// `Window` is which lines of an output to return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The first line to return, counting from 0.
    pub offset: usize,
    /// How many lines at most (capped at [`MAX_PAGE_LINES`]).
    pub lines: usize,
}

impl Default for Window {
    fn default() -> Window {
        Window {
            offset: 0,
            lines: DEFAULT_PAGE_LINES,
        }
    }
}

/// `Page` is one window of an output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The lines, each ending in a newline.
    pub text: String,
    /// The line number of the first line.
    pub offset: usize,
    /// How many lines the window holds.
    pub lines: usize,
    /// Where to ask again for more, if there is more.
    pub next_offset: Option<usize>,
}

impl std::fmt::Display for Page {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)?;
        match self.next_offset {
            Some(next) => write!(
                f,
                "[lines {}–{}; there is more: ask again with offset {next}]",
                self.offset + 1,
                self.offset + self.lines
            ),
            None if self.lines == 0 && self.offset > 0 => {
                write!(
                    f,
                    "[no lines from offset {}; the output is shorter]",
                    self.offset
                )
            }
            None => Ok(()),
        }
    }
}

/// `Pager` collects the lines of one window from an output produced line
/// by line, and tells the producer when to stop.
#[derive(Debug)]
pub struct Pager {
    window: Window,
    seen: usize,
    page: Page,
    done: bool,
}

impl Pager {
    /// `new` starts collecting `window`.
    #[must_use]
    pub fn new(window: Window) -> Pager {
        let window = Window {
            offset: window.offset,
            lines: window.lines.clamp(1, MAX_PAGE_LINES),
        };
        Pager {
            window,
            seen: 0,
            page: Page {
                text: String::new(),
                offset: window.offset,
                lines: 0,
                next_offset: None,
            },
            done: false,
        }
    }

    /// `push` offers the next line (without its newline); `false` means
    /// the window is full and the producer may stop.
    pub fn push(&mut self, line: &str) -> bool {
        if self.done {
            return false;
        }
        let number = self.seen;
        self.seen += 1;
        if number < self.window.offset {
            return true;
        }
        let cut: String;
        let line = if line.chars().count() > MAX_LINE_CHARS {
            cut = format!(
                "{}… [line cut]",
                line.chars().take(MAX_LINE_CHARS).collect::<String>()
            );
            &cut
        } else {
            line
        };
        if self.page.lines >= self.window.lines
            || (self.page.lines > 0 && self.page.text.len() + line.len() + 1 > MAX_PAGE_BYTES)
        {
            self.page.next_offset = Some(number);
            self.done = true;
            return false;
        }
        self.page.text.push_str(line);
        self.page.text.push('\n');
        self.page.lines += 1;
        true
    }

    /// `push_text` offers every line of `text`.
    pub fn push_text(&mut self, text: &str) -> bool {
        text.lines().all(|line| self.push(line))
    }

    /// `finish` is the window.
    #[must_use]
    pub fn finish(self) -> Page {
        self.page
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_holds_its_lines_and_says_where_the_rest_starts() {
        let mut pager = Pager::new(Window {
            offset: 2,
            lines: 3,
        });
        let mut offered = 0;
        for n in 0..100 {
            offered += 1;
            if !pager.push(&format!("line {n}")) {
                break;
            }
        }
        assert_eq!(
            offered, 6,
            "the producer is stopped one line past the window"
        );
        let page = pager.finish();
        assert_eq!(page.text, "line 2\nline 3\nline 4\n");
        assert_eq!(page.next_offset, Some(5));
        assert!(
            page.to_string()
                .ends_with("[lines 3–5; there is more: ask again with offset 5]")
        );
    }

    #[test]
    fn a_window_never_holds_more_than_its_byte_cap() {
        let mut pager = Pager::new(Window {
            offset: 0,
            lines: MAX_PAGE_LINES,
        });
        let long = "x".repeat(MAX_LINE_CHARS);
        while pager.push(&long) {}
        let page = pager.finish();
        assert!(page.text.len() <= MAX_PAGE_BYTES);
        assert_eq!(page.next_offset, Some(page.lines));
    }
}
