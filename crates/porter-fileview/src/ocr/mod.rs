//! OCR: the text in a picture of a page (a scanned PDF page, a photo or
//! screenshot of text) read with Tesseract, laid out as the PDF reader lays
//! out a page's text, into the same document model.
//!
//! Before a page is read it is made grey, scaled to about 300 pixels per
//! inch, held to [`Options::ocr_pixel_bytes`], straightened and cleared of
//! speckle (see `prep`). Tesseract then reads it with its automatic page
//! segmentation, as it lies; a page that reads poorly that way is read
//! again with orientation detection, so that a page scanned sideways or
//! upside down is read upright, and its words' boxes are turned upright
//! here from the direction its lines run. Its words, with their boxes,
//! go through the PDF reader's layout analysis (lines, columns, tables
//! from aligned text, paragraphs, headings) into blocks.
//!
//! Every word keeps Tesseract's confidence; a word under
//! [`Options::ocr_word_confidence`] is written with `(?)` after it, as
//! read, never corrected. A file's notes name the pages read by OCR, their
//! mean confidence, and the pages that were not (past the page cap, the
//! time budget, or in a build without OCR).
//!
//! Bounded like every reader: at most [`Options::ocr_pages`] pages of a
//! file, each within [`Options::ocr_page_seconds`] and all within
//! [`Options::ocr_seconds`], each at most [`Options::ocr_pixel_bytes`] of
//! pixels, checking the cancel flag between pages.

// Without the engine, the reading of its answers is unused but still
// tested.
#![cfg_attr(not(feature = "ocr"), allow(dead_code))]

#[cfg(feature = "ocr")]
mod bands;
#[cfg(feature = "ocr")]
mod engine;
#[cfg(feature = "ocr")]
mod gray;
pub(crate) mod lines;
#[cfg(feature = "ocr")]
pub(crate) mod prep;

#[cfg(feature = "ocr")]
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::bounds::{Cancel, Failure};
use crate::describe::count;
use crate::options::Options;

#[cfg(feature = "ocr")]
use gray::Gray;

/// What a note says where OCR would have run in a build without it.
pub(crate) const NOT_AVAILABLE: &str = "OCR is not available in this build";

/// One word as Tesseract read it, its box in the page's pixels.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Word {
    pub text: String,
    /// Tesseract's confidence, 0–100.
    pub confidence: f32,
    pub block: u32,
    pub paragraph: u32,
    pub line: u32,
    pub x0: f32,
    pub y0: f32,
    pub x1: f32,
    pub y1: f32,
}

/// One line read by OCR: its words joined, unsure ones marked, and its box
/// in the picture's own pixels (upright, y growing downwards).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Line {
    pub text: String,
    pub x0: f32,
    pub y0: f32,
    pub x1: f32,
    pub y1: f32,
    /// Its words (unsure ones marked), each with where it starts and ends
    /// across the line.
    pub words: Vec<(String, f32, f32)>,
}

impl Line {
    /// The line as the layout analysis takes a PDF's text: a piece for
    /// each word, set across where the word stands and down where the
    /// line does, in the size of the line's height, `x` and `y` mapping the
    /// picture's pixels to the page's points. The layout then joins words
    /// a word space apart and parts them at a column's gutter or a table's
    /// column gap, as it does a PDF's own text: a Tesseract line may run
    /// across the cells of a table's row.
    #[cfg(any(feature = "pdf", feature = "ocr"))]
    pub(crate) fn pieces(
        &self,
        x: impl Fn(f32) -> f32,
        y: impl Fn(f32) -> f32,
    ) -> impl Iterator<Item = crate::pdf::layout::Piece> {
        let (y0, y1) = (y(self.y0), y(self.y1));
        let size = (y1 - y0) / box_share(&self.text);
        let spans: Vec<(String, f32, f32)> = self
            .words
            .iter()
            .map(|(text, x0, x1)| (text.clone(), x(*x0), x(*x1)))
            .collect();
        spans
            .into_iter()
            .map(move |(text, x0, x1)| crate::pdf::layout::Piece {
                text,
                x0,
                y0,
                x1,
                y1,
                size: size.max(1.0),
                bold: false,
                small_caps: false,
                italic: false,
            })
    }
}

/// How much of its letters' full height (the top of an ascender to the
/// foot of a descender, about an em) a line of `text` covers: a line box
/// is as tall as the letters in it, so a line without descenders ("after
/// the winter storms had lifted its slates") is a quarter shorter than one
/// with them in the same type, and one of small letters only ("a summer
/// name") about half. Dividing the box by this share gives every line of a
/// type the same size, which is what tells a heading from a paragraph's
/// first line. The shares are those of common Latin faces (ascenders about
/// 0.73 of the em, x-height 0.5, descenders 0.23).
#[cfg(any(feature = "pdf", feature = "ocr"))]
fn box_share(text: &str) -> f32 {
    let tall = text.chars().any(|c| {
        c.is_uppercase()
            || c.is_ascii_digit()
            || "bdfhkltij!?'\"/\\()[]{}|#%&@$".contains(c)
            || (c.is_alphabetic() && !c.is_ascii())
    });
    let deep = text.chars().any(|c| "gjpqy()[]{}|;,@$Q".contains(c));
    match (tall, deep) {
        (true, true) => 1.0,
        (true, false) => 0.77,
        (false, true) => 0.75,
        (false, false) => 0.52,
    }
}

/// The text of one picture read by OCR.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PageText {
    pub lines: Vec<Line>,
    /// Words read, and how many of them are marked unsure.
    pub words: usize,
    pub marked: usize,
    /// The mean confidence of its words, 0–100.
    pub confidence: f32,
    /// How far the picture was turned to read it upright (0, 90, 180, 270
    /// degrees clockwise).
    pub turned: u16,
    /// The skew taken out, in degrees.
    pub skew: f32,
    /// The picture's size, upright, in its own pixels.
    pub width: f32,
    pub height: f32,
    /// How many points (1/72 inch) one of its pixels is, at the resolution
    /// it was read at (known, or taken from its text's height).
    pub point: f32,
}

/// What OCR made of one page.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Read {
    /// Its text.
    Text(PageText),
    /// OCR ran and found no text in it.
    NoText,
    /// OCR did not read it; the reason completes "not read by OCR: …".
    Skipped(String),
}

/// Whether a text layer is empty or garbage, so that OCR should read the
/// page instead: no character but spaces, or at least a quarter of its
/// characters (spaces aside) ones no real text is made of — the
/// replacement character U+FFFD (a glyph the PDF maps to nothing), private
/// use code points (a font's own codes passed through), control
/// characters, `(cid:N)` placeholders — or, over at least 40 characters,
/// fewer than a quarter of them letters or digits (symbol soup from a font
/// whose codes were read as another encoding).
#[cfg(any(feature = "pdf", test))]
pub(crate) fn unreadable_text(text: &str) -> bool {
    let mut total = 0usize;
    let mut bad = 0usize;
    let mut alphanumeric = 0usize;
    for c in text.chars() {
        if c.is_whitespace() {
            continue;
        }
        total += 1;
        let private = matches!(u32::from(c), 0xE000..=0xF8FF | 0xF_0000..=0x10_FFFF);
        if c == '\u{FFFD}' || private || c.is_control() {
            bad += 1;
        } else if c.is_alphanumeric() {
            alphanumeric += 1;
        }
    }
    // Each "(cid:N)" placeholder counts as bad throughout.
    let placeholders = text.matches("(cid:").count();
    bad += placeholders * 7;
    if total == 0 {
        return true;
    }
    bad * 4 >= total || (total >= 40 && alphanumeric * 4 < total)
}

/// Tesseract's TSV output as words (level 5 rows with text), in its order.
pub(crate) fn parse_tsv(tsv: &str) -> Vec<Word> {
    let mut words = Vec::new();
    for row in tsv.lines() {
        let fields: Vec<&str> = row.split('\t').collect();
        if fields.len() < 12 || fields[0] != "5" {
            continue;
        }
        let text = fields[11..].join("\t");
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let number = |i: usize| fields[i].trim().parse::<f32>().ok();
        let whole = |i: usize| fields[i].trim().parse::<u32>().ok();
        let (Some(left), Some(top), Some(width), Some(height), Some(confidence)) =
            (number(6), number(7), number(8), number(9), number(10))
        else {
            continue;
        };
        let (Some(block), Some(paragraph), Some(line)) = (whole(2), whole(3), whole(4)) else {
            continue;
        };
        words.push(Word {
            text: text.to_owned(),
            confidence: confidence.clamp(0.0, 100.0),
            block,
            paragraph,
            line,
            x0: left,
            y0: top,
            x1: left + width,
            y1: top + height,
        });
    }
    words
}

/// Which way the page's lines run, as the clockwise turn (0, 90, 180 or
/// 270 degrees) that makes them run left to right: from the way each line
/// of two words or more goes from its first word to its last, weighted by
/// that distance.
pub(crate) fn turn_of(words: &[Word]) -> u16 {
    let mut sum = [0f32; 4];
    let mut start = 0;
    while start < words.len() {
        let key = |w: &Word| (w.block, w.paragraph, w.line);
        let mut end = start + 1;
        while end < words.len() && key(&words[end]) == key(&words[start]) {
            end += 1;
        }
        if end - start >= 2 {
            let centre = |w: &Word| (f32::midpoint(w.x0, w.x1), f32::midpoint(w.y0, w.y1));
            let (ax, ay) = centre(&words[start]);
            let (bx, by) = centre(&words[end - 1]);
            let (dx, dy) = (bx - ax, by - ay);
            // Left to right: no turn. Upwards: the page lies turned a
            // quarter anticlockwise, and is turned 90° clockwise back.
            let at = if dx.abs() >= dy.abs() {
                if dx >= 0.0 { 0 } else { 2 }
            } else if dy < 0.0 {
                1
            } else {
                3
            };
            sum[at] += dx.hypot(dy);
        }
        start = end;
    }
    let mut best = 0;
    for at in 1..4 {
        if sum[at] > sum[best] {
            best = at;
        }
    }
    [0, 90, 180, 270][best]
}

/// The words' boxes in a picture `width` × `height` turned `turn` degrees
/// clockwise; returns the turned picture's size.
pub(crate) fn turn_boxes(words: &mut [Word], turn: u16, width: f32, height: f32) -> (f32, f32) {
    let point = |x: f32, y: f32| -> (f32, f32) {
        match turn {
            90 => (height - y, x),
            180 => (width - x, height - y),
            270 => (y, width - x),
            _ => (x, y),
        }
    };
    for w in words.iter_mut() {
        let (ax, ay) = point(w.x0, w.y0);
        let (bx, by) = point(w.x1, w.y1);
        w.x0 = ax.min(bx);
        w.x1 = ax.max(bx);
        w.y0 = ay.min(by);
        w.y1 = ay.max(by);
    }
    if matches!(turn, 90 | 270) {
        (height, width)
    } else {
        (width, height)
    }
}

/// A word as written in the text: itself, with `(?)` after it when its
/// confidence is under `floor`.
pub(crate) fn marked(word: &Word, floor: u8) -> (String, bool) {
    if word.confidence < f32::from(floor) {
        (format!("{}(?)", word.text), true)
    } else {
        (word.text.clone(), false)
    }
}

/// Whether the words are text rather than what Tesseract makes of a
/// photograph or a drawing: at least three sure words of two letters or
/// digits or more, and sure words half of all.
pub(crate) fn is_text(words: &[Word], floor: u8) -> bool {
    let sure = words
        .iter()
        .filter(|w| {
            w.confidence >= f32::from(floor)
                && w.text.chars().filter(|c| c.is_alphanumeric()).count() >= 2
        })
        .count();
    sure >= 3 && sure * 2 >= words.len()
}

/// `UPRIGHT_CONFIDENCE` is the mean word confidence under which a page
/// read as it lies is read again with orientation detection: an upright
/// page of print, even a poor scan, reads at 80–95; one sideways or upside
/// down comes out as garbage at 30–40.
const UPRIGHT_CONFIDENCE: f32 = 60.0;

/// Whether a page read as it lies should be read again with orientation
/// detection: no text found, or text read too unsurely to be upright.
pub(crate) fn needs_orientation(read: &Read) -> bool {
    match read {
        Read::Text(text) => text.confidence < UPRIGHT_CONFIDENCE,
        Read::NoText => true,
        Read::Skipped(_) => false,
    }
}

/// The better of two readings of a page: the one with more words read
/// surely (at or over the floor); the first when they tie or the second
/// found nothing.
pub(crate) fn better(first: Read, second: Read) -> Read {
    let sure = |read: &Read| match read {
        Read::Text(text) => Some(text.words - text.marked),
        Read::NoText | Read::Skipped(_) => None,
    };
    match (sure(&first), sure(&second)) {
        (Some(a), Some(b)) if b > a => second,
        (None, Some(_)) => second,
        _ => first,
    }
}

/// The words as lines, in Tesseract's order, unsure words marked.
pub(crate) fn lines_of(words: &[Word], floor: u8) -> (Vec<Line>, usize) {
    let mut lines: Vec<Line> = Vec::new();
    let mut marks = 0;
    let mut last = None;
    for w in words {
        let key = (w.block, w.paragraph, w.line);
        let (text, unsure) = marked(w, floor);
        marks += usize::from(unsure);
        match lines.last_mut() {
            Some(line) if last == Some(key) => {
                line.text.push(' ');
                line.text.push_str(&text);
                line.x0 = line.x0.min(w.x0);
                line.y0 = line.y0.min(w.y0);
                line.x1 = line.x1.max(w.x1);
                line.y1 = line.y1.max(w.y1);
                line.words.push((text, w.x0, w.x1));
            }
            _ => lines.push(Line {
                text: text.clone(),
                x0: w.x0,
                y0: w.y0,
                x1: w.x1,
                y1: w.y1,
                words: vec![(text, w.x0, w.x1)],
            }),
        }
        last = Some(key);
    }
    (lines, marks)
}

/// Page numbers as ranges: "3–5, 8".
pub(crate) fn page_ranges(pages: &[usize]) -> String {
    let mut sorted = pages.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            sorted[i].to_string()
        } else {
            format!("{}–{}", sorted[i], sorted[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// The OCR of one file's pages: what it read and left, for the notes.
pub(crate) struct Session<'a> {
    options: &'a Options,
    started: Option<Instant>,
    /// Pages read, each with its mean confidence and words.
    read: Vec<(usize, f32, usize)>,
    marked: usize,
    /// Pages OCR found no text on.
    blank: Vec<usize>,
    /// Pages not read, and why (the first reason of each kind).
    skipped: Vec<usize>,
    reasons: Vec<String>,
    turned: Vec<usize>,
    /// The pages OCR was started on (a page of several pictures once).
    pages: Vec<usize>,
    /// Set once a page ran past its time budget: no page is started after.
    stopped: bool,
    /// Time spent in each stage, for [`TIMES_VARIABLE`].
    times: Times,
}

/// `TIMES_VARIABLE` names the environment variable that, set (to
/// anything), adds a note with the time OCR spent in each stage: for the
/// benchmark and for finding where a slow page's time went.
pub(crate) const TIMES_VARIABLE: &str = "PORTER_OCR_TIMES";

/// Time spent in each stage of a file's OCR.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Times {
    /// Decoding the pictures (a PDF's image streams).
    pub decode: Duration,
    /// Preparing them (scaling, straightening, smoothing).
    pub prep: Duration,
    /// Tesseract's reading (layout, orientation, recognition).
    pub engine: Duration,
    /// Turning its answer into lines.
    pub lines: Duration,
}

impl Times {
    /// The note naming each stage's time, with the engine's start (its
    /// language data loaded) when it was started in this process.
    fn note(&self, pictures: usize, start: Option<Duration>) -> String {
        let ms = |d: Duration| count(u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let start = start.map_or_else(String::new, |d| format!("engine start {} ms, ", ms(d)));
        format!(
            "OCR times ({TIMES_VARIABLE}): {start}decode {} ms, prep {} ms, Tesseract {} ms, lines {} ms over {} picture{}.",
            ms(self.decode),
            ms(self.prep),
            ms(self.engine),
            ms(self.lines),
            count(pictures as u64),
            if pictures == 1 { "" } else { "s" }
        )
    }
}

impl<'a> Session<'a> {
    pub(crate) fn new(options: &'a Options) -> Self {
        Self {
            options,
            started: None,
            read: Vec::new(),
            marked: 0,
            blank: Vec::new(),
            skipped: Vec::new(),
            reasons: Vec::new(),
            turned: Vec::new(),
            pages: Vec::new(),
            stopped: false,
            times: Times::default(),
        }
    }

    /// Counts `spent` decoding a picture, for [`TIMES_VARIABLE`].
    #[cfg(feature = "pdf")]
    pub(crate) fn decoded(&mut self, spent: Duration) {
        self.times.decode += spent;
    }

    /// Why no further page may be read now, if none may.
    fn refusal(&self) -> Option<String> {
        if !self.options.ocr {
            return Some("OCR is turned off".to_owned());
        }
        if !cfg!(feature = "ocr") {
            return Some(NOT_AVAILABLE.to_owned());
        }
        if self.stopped {
            return Some(format!(
                "OCR stopped after a page took longer than the {} s one page may take",
                self.options.ocr_page_seconds
            ));
        }
        if self.pages.len() >= self.options.ocr_pages {
            return Some(format!(
                "past the {} pages porter reads by OCR in one file",
                count(self.options.ocr_pages as u64)
            ));
        }
        if let Some(started) = self.started
            && started.elapsed().as_secs() >= self.options.ocr_seconds
        {
            return Some(format!(
                "past the {} s porter spends on OCR of one file",
                self.options.ocr_seconds
            ));
        }
        None
    }

    /// Notes that `page` (its number, or 0 for a picture that is no page)
    /// was not read, and why.
    pub(crate) fn skip(&mut self, page: usize, reason: &str) -> Read {
        if page > 0 {
            self.skipped.push(page);
        }
        if !self.reasons.iter().any(|r| r == reason) {
            self.reasons.push(reason.to_owned());
        }
        Read::Skipped(reason.to_owned())
    }

    /// Whether OCR may read another page now (and otherwise, records it
    /// as skipped).
    pub(crate) fn admit(&mut self, page: usize) -> Option<Read> {
        if let Some(reason) = self.refusal() {
            return Some(self.skip(page, &reason));
        }
        // A confined worker started without the engine stops here; the file
        // is read again in one that has it (see `crate::engines`).
        if !crate::engines::ready(crate::engines::Engine::Ocr) {
            return Some(Read::Skipped(
                "OCR is started for it in another worker".to_owned(),
            ));
        }
        None
    }

    /// Reads one picture: `page` is its page number (0 for an image file),
    /// `ppi` its resolution when known.
    #[cfg_attr(
        not(feature = "ocr"),
        allow(clippy::unused_self, unused_variables, clippy::needless_pass_by_value)
    )]
    pub(crate) fn read(
        &mut self,
        page: usize,
        picture: image::GrayImage,
        ppi: Option<f32>,
        cancel: &Cancel,
    ) -> Result<Read, Failure> {
        cancel.check()?;
        if self.pages.last() == Some(&page) && page > 0 {
            // A further picture of a page already started.
            if let Some(reason) = self.refusal().filter(|r| !r.starts_with("past the ")) {
                return Ok(self.skip(page, &reason));
            }
        } else if let Some(refused) = self.admit(page) {
            return Ok(refused);
        } else {
            self.pages.push(page);
        }
        #[cfg(feature = "ocr")]
        {
            self.started.get_or_insert_with(Instant::now);
            let read = self.recognize(picture, ppi);
            match &read {
                Read::Text(text) => {
                    self.read.push((page, text.confidence, text.words));
                    self.marked += text.marked;
                    if text.turned != 0 && page > 0 {
                        self.turned.push(page);
                    }
                }
                Read::NoText => self.blank.push(page),
                Read::Skipped(reason) => {
                    let reason = reason.clone();
                    return Ok(self.skip(page, &reason));
                }
            }
            Ok(read)
        }
        #[cfg(not(feature = "ocr"))]
        Ok(self.skip(page, NOT_AVAILABLE))
    }

    #[cfg(feature = "ocr")]
    fn recognize(&mut self, picture: image::GrayImage, ppi: Option<f32>) -> Read {
        let options = self.options;
        let languages = options.ocr_languages.trim();
        if let Err(reason) = check_languages(languages) {
            return Read::Skipped(reason);
        }
        let clock = Instant::now();
        let (gray, done) = prep::prepare(picture, ppi, self.options.ocr_pixel_bytes);
        self.times.prep += clock.elapsed();
        let (width, height) = (gray.width as f32, gray.height as f32);
        let ppi = done.ppi.round().clamp(70.0, 1200.0) as u32;
        let budget = Duration::from_secs(self.options.ocr_page_seconds.max(1));
        let gray = Arc::new(gray);
        // As it lies first: most pages are upright, and orientation
        // detection costs a fifth or so of a page's time. A page read
        // poorly that way (sideways or upside down, its words come out
        // as unsure garbage) is read again with it.
        let clock = Instant::now();
        let answer = read_as_it_lies(languages, &gray, ppi, budget);
        self.times.engine += clock.elapsed();
        let mut read = self.lines_read(answer, &done, width, height);
        if needs_orientation(&read) {
            let left = budget.saturating_sub(clock.elapsed());
            if !left.is_zero() {
                let again = Instant::now();
                let answer = engine::recognize(languages, gray, ppi, left, true);
                self.times.engine += again.elapsed();
                let turned = self.lines_read(answer, &done, width, height);
                read = better(read, turned);
            }
        }
        read
    }

    /// What Tesseract's `answer` holds: the lines of a picture `width` by
    /// `height` as prepared (`done`), in the picture's own pixels.
    #[cfg(feature = "ocr")]
    fn lines_read(
        &mut self,
        answer: engine::Answer,
        done: &prep::Prepared,
        width: f32,
        height: f32,
    ) -> Read {
        let clock = Instant::now();
        let read = self.read_answer(answer, done, width, height);
        self.times.lines += clock.elapsed();
        read
    }

    #[cfg(feature = "ocr")]
    fn read_answer(
        &mut self,
        answer: engine::Answer,
        done: &prep::Prepared,
        width: f32,
        height: f32,
    ) -> Read {
        let tsv = match answer {
            engine::Answer::Tsv(tsv) => tsv,
            engine::Answer::Failed(reason) => {
                return Read::Skipped(format!("OCR could not read it: {reason}"));
            }
            engine::Answer::TimedOut | engine::Answer::Busy => {
                self.stopped = true;
                return Read::Skipped(format!(
                    "it took longer than the {} s OCR may take over one page",
                    self.options.ocr_page_seconds
                ));
            }
        };
        let mut words = parse_tsv(&tsv);
        let floor = self.options.ocr_word_confidence;
        if !is_text(&words, floor) {
            return Read::NoText;
        }
        let turned = turn_of(&words);
        let (w, h) = turn_boxes(&mut words, turned, width, height);
        // Back to the picture's own pixels.
        for word in &mut words {
            word.x0 /= done.scale;
            word.y0 /= done.scale;
            word.x1 /= done.scale;
            word.y1 /= done.scale;
        }
        let (lines, marks) = lines_of(&words, floor);
        let confidence = words.iter().map(|w| w.confidence).sum::<f32>() / words.len() as f32;
        Read::Text(PageText {
            lines,
            words: words.len(),
            marked: marks,
            confidence,
            turned,
            skew: done.skew,
            width: w / done.scale,
            height: h / done.scale,
            point: done.scale * 72.0 / done.ppi.max(1.0),
        })
    }

    /// The notes on what OCR did over the file: the pages it read (with
    /// their mean confidence and the unsure words marked), those where it
    /// found no text, and those it left and why.
    pub(crate) fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let pages: Vec<usize> = self.read.iter().map(|r| r.0).filter(|&p| p > 0).collect();
        let words: usize = self.read.iter().map(|r| r.2).sum();
        if !self.read.is_empty() {
            let confidence =
                self.read.iter().map(|r| r.1 * r.2 as f32).sum::<f32>() / words.max(1) as f32;
            let what = match pages.len() {
                0 => "The text was read from the picture by OCR".to_owned(),
                1 => format!("Page {} was read by OCR", pages[0]),
                _ => format!("Pages {} were read by OCR", page_ranges(&pages)),
            };
            let marked = match self.marked {
                0 => String::new(),
                1 => format!(
                    "; 1 word under {}% is marked (?)",
                    self.options.ocr_word_confidence
                ),
                n => format!(
                    "; {} words under {}% are marked (?)",
                    count(n as u64),
                    self.options.ocr_word_confidence
                ),
            };
            notes.push(format!(
                "{what} (mean word confidence {confidence:.0}%{marked}), so its text may hold misread words."
            ));
        }
        if !self.turned.is_empty() {
            notes.push(format!(
                "Scanned sideways or upside down, read upright: page{} {}.",
                if self.turned.len() == 1 { "" } else { "s" },
                page_ranges(&self.turned)
            ));
        }
        let blank: Vec<usize> = self
            .blank
            .iter()
            .copied()
            .filter(|&p| p > 0 && !pages.contains(&p))
            .collect();
        if !blank.is_empty() {
            notes.push(format!(
                "OCR found no text on page{} {}.",
                if blank.len() == 1 { "" } else { "s" },
                page_ranges(&blank)
            ));
        }
        if !self.skipped.is_empty() {
            notes.push(format!(
                "Not read by OCR: page{} {} ({}).",
                if self.skipped.len() == 1 { "" } else { "s" },
                page_ranges(&self.skipped),
                self.reasons.join("; ")
            ));
        }
        let pictures = self.read.len() + self.blank.len();
        if pictures > 0 && std::env::var_os(TIMES_VARIABLE).is_some() {
            #[cfg(feature = "ocr")]
            let start = engine::started_in();
            #[cfg(not(feature = "ocr"))]
            let start = None;
            notes.push(self.times.note(pictures, start));
        }
        notes
    }
}

/// Tesseract's reading of `gray` as it lies: in two halves at once, on
/// two engines, when there are two cores and the page has a blank band
/// to cut it at (see [`bands`]); else whole.
#[cfg(feature = "ocr")]
fn read_as_it_lies(
    languages: &str,
    gray: &Arc<Gray>,
    ppi: u32,
    budget: Duration,
) -> engine::Answer {
    let cut = (engine::engines() > 1)
        .then(|| bands::cut_row(gray, ppi))
        .flatten();
    let Some(cut) = cut else {
        return engine::recognize(languages, Arc::clone(gray), ppi, budget, false);
    };
    let clock = Instant::now();
    let (top, bottom) = bands::split(gray, cut);
    match engine::recognize_halves(languages, [Arc::new(top), Arc::new(bottom)], ppi, budget) {
        [engine::Answer::Tsv(top), engine::Answer::Tsv(bottom)] => {
            engine::Answer::Tsv(bands::join_tsv(&top, &bottom, cut))
        }
        // An engine that could not read its half (the second could not
        // start, say): the first reads the whole page in the time left.
        [
            engine::Answer::Tsv(_) | engine::Answer::Failed(_),
            engine::Answer::Failed(_),
        ]
        | [engine::Answer::Failed(_), engine::Answer::Tsv(_)] => {
            let left = budget.saturating_sub(clock.elapsed());
            engine::recognize(languages, Arc::clone(gray), ppi, left, false)
        }
        // Out of time or busy: the page's answer.
        [engine::Answer::Tsv(_), other] | [other, _] => other,
    }
}

/// The text of an image file read by OCR, as Markdown (headings,
/// paragraphs and columns by the PDF reader's layout analysis), with the
/// notes on what OCR did; `None` for the text when OCR found none or did
/// not run (the notes say which).
///
/// OCR runs only on a picture that shows lines of text (see [`lines`]),
/// judged on `shown` (the picture as the view shows it, in grey) or, when
/// the caller has none, on a copy decoded small for it; and it reads the
/// picture at the resolution its text needs, not at a camera's full size.
#[cfg_attr(not(feature = "ocr"), allow(clippy::unnecessary_wraps))]
pub(crate) fn picture_text(
    bytes: &[u8],
    format: crate::picture::Format,
    shown: Option<lines::Looked>,
    options: &Options,
    cancel: &Cancel,
) -> Result<(Option<crate::markdown::out::Markdown>, Vec<String>), Failure> {
    let not_read = |reason: &str| vec![format!("Its text, if any, was not read: {reason}.")];
    let session = Session::new(options);
    if let Some(reason) = session.refusal() {
        return Ok((None, not_read(&reason)));
    }
    #[cfg(feature = "ocr")]
    {
        let mut session = session;
        let looked = match shown {
            Some(looked) => looked,
            None => match crate::picture::grey_at(bytes, format, LOOK_EDGE_PX, options, cancel) {
                Ok(grey) => lines::look(grey),
                Err(Failure::Cancelled) => return Err(Failure::Cancelled),
                Err(Failure::Unreadable(why)) => {
                    return Ok((
                        None,
                        not_read(&format!("its pixels could not be decoded ({why})")),
                    ));
                }
            },
        };
        let lines::Looked { grey, found } = looked;
        if grey.width() < 16 || grey.height() < 16 {
            return Ok((None, Vec::new()));
        }
        let Some(found) = found else {
            return Ok((None, vec![NO_LINES.to_owned()]));
        };
        cancel.check()?;
        if let Some(Read::Skipped(reason)) = session.admit(0) {
            cancel.check()?;
            return Ok((None, not_read(&reason)));
        }
        // Read where its characters stand about `READ_HEIGHT_PX` tall: the
        // copy itself when they already do, else the picture decoded at
        // that scale (or whole, for small print).
        let long = grey.width().max(grey.height());
        let edge = (long as f32 * READ_HEIGHT_PX / found.height.max(1.0)).ceil() as u32;
        let picture = if edge <= long + long / 8 {
            grey
        } else {
            drop(grey);
            match crate::picture::grey_at(bytes, format, edge, options, cancel) {
                Ok(picture) => picture,
                Err(Failure::Cancelled) => return Err(Failure::Cancelled),
                Err(Failure::Unreadable(why)) => {
                    return Ok((
                        None,
                        not_read(&format!("its pixels could not be decoded for OCR ({why})")),
                    ));
                }
            }
        };
        let read = session.read(0, picture, None, cancel)?;
        let mut notes = session.notes();
        let Read::Text(text) = read else {
            if let Read::Skipped(reason) = read {
                notes = not_read(&reason);
            } else {
                notes.push("OCR found no text in it.".to_owned());
            }
            return Ok((None, notes));
        };
        let blocks = layout_blocks(&text);
        let mut out = crate::markdown::out::MdOut::new(options.office_text_bytes);
        crate::document::write_markdown(&blocks, &mut out);
        Ok((Some(out.finish(None, Vec::new())), notes))
    }
    #[cfg(not(feature = "ocr"))]
    {
        let _ = (bytes, format, shown, cancel);
        Ok((None, not_read(NOT_AVAILABLE)))
    }
}

/// What the notes say of a picture that shows no lines of text.
pub(crate) const NO_LINES: &str = "It shows no lines of text, so OCR did not read it.";

/// `LOOK_EDGE_PX` is the long edge of the copy a picture is looked at for
/// lines of text when the caller has no copy of its own.
#[cfg(feature = "ocr")]
const LOOK_EDGE_PX: u32 = 2048;

/// `READ_HEIGHT_PX` is how tall (a line's marks, by their median box) a
/// picture's characters are made for OCR: about 11 pt at 300 ppi, where
/// Tesseract reads best (the preparation then fine-tunes it).
#[cfg(feature = "ocr")]
const READ_HEIGHT_PX: f32 = 30.0;

/// A picture's lines in reading order as blocks, through the PDF reader's
/// layout analysis in points.
#[cfg(feature = "ocr")]
fn layout_blocks(text: &PageText) -> Vec<crate::document::Block> {
    use crate::pdf::layout::{Piece, page_layout};
    let pt = text.point;
    let pieces: Vec<Piece> = text
        .lines
        .iter()
        .flat_map(|line| line.pieces(|x| x * pt, |y| y * pt))
        .collect();
    page_layout(pieces, Vec::new(), &[], Some((0.0, text.height * pt))).blocks
}

/// Checks an OCR language list: Tesseract language names (letters, digits,
/// `_`, `-`) joined by `+`, as "eng" or "eng+deu".
pub(crate) fn check_languages(languages: &str) -> Result<(), String> {
    let good = !languages.is_empty()
        && languages.len() <= 200
        && languages.split('+').all(|l| {
            !l.is_empty()
                && l.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        });
    if good {
        Ok(())
    } else {
        Err(format!(
            "the OCR languages {languages:?} are not a list of Tesseract language names joined by '+' (as \"eng\" or \"eng+deu\")"
        ))
    }
}

/// Starts OCR for `languages` and loads its data, for a process about to
/// confine itself; a build without OCR has nothing to start.
pub(crate) fn preload(languages: &str) -> Result<(), String> {
    check_languages(languages)?;
    #[cfg(feature = "ocr")]
    return engine::preload(languages);
    #[cfg(not(feature = "ocr"))]
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page of `lines` read upright and straight at 300 ppi, every word
    /// sure (95 %).
    #[cfg(feature = "ocr")]
    fn upright_page(lines: Vec<Line>, words: usize, width: f32, height: f32) -> PageText {
        PageText {
            lines,
            words,
            marked: 0,
            confidence: 95.0,
            turned: 0,
            skew: 0.0,
            width,
            height,
            point: 72.0 / 300.0,
        }
    }

    fn word(text: &str, confidence: f32, line: u32, x: f32, y: f32) -> Word {
        Word {
            text: text.to_owned(),
            confidence,
            block: 1,
            paragraph: 1,
            line,
            x0: x,
            y0: y,
            x1: x + 50.0,
            y1: y + 20.0,
        }
    }

    #[test]
    fn an_empty_or_garbage_text_layer_is_told_from_real_text() {
        assert!(unreadable_text(""));
        assert!(unreadable_text("  \n\t "));
        assert!(unreadable_text("\u{FFFD}\u{FFFD}\u{FFFD} ab \u{FFFD}"));
        assert!(unreadable_text("\u{E001}\u{E002}\u{E003}\u{E004} Total"));
        assert!(unreadable_text("(cid:12)(cid:34)(cid:56) a"));
        assert!(unreadable_text(
            &"!\"#$%&'()*+,-./:;<=>?@[]^_`{|}~".repeat(3)
        ));
        assert!(!unreadable_text(
            "The committee met on the fourth of March."
        ));
        assert!(!unreadable_text("Zoë paid €12.50 — naïve café; 東京 2024"));
        // One odd glyph in a page of text is no reason to OCR it.
        assert!(!unreadable_text(
            "Revenue rose 4% in the year \u{FFFD} as the harbour reopened to traffic."
        ));
        // A short page of figures is text.
        assert!(!unreadable_text("3 — 4"));
    }

    #[test]
    fn tsv_rows_become_words_and_unsure_words_are_marked_not_changed() {
        let tsv = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n\
                   1\t1\t0\t0\t0\t0\t0\t0\t800\t600\t-1\t\n\
                   5\t1\t1\t1\t1\t1\t10\t20\t60\t18\t96.5\tInvoice\n\
                   5\t1\t1\t1\t1\t2\t80\t20\t40\t18\t31.0\t4O1\n\
                   5\t1\t1\t1\t2\t1\t10\t50\t60\t18\t90.0\tPaid\n\
                   5\t1\t1\t1\t2\t2\t80\t50\t40\t18\t95\t \n";
        let words = parse_tsv(tsv);
        assert_eq!(words.len(), 3);
        assert_eq!(words[1].text, "4O1");
        assert!((words[1].confidence - 31.0).abs() < f32::EPSILON);
        let (lines, marks) = lines_of(&words, 50);
        assert_eq!(marks, 1);
        assert_eq!(
            lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>(),
            ["Invoice 4O1(?)", "Paid"]
        );
        assert_eq!((lines[0].x0, lines[0].x1), (10.0, 120.0));
        // The floor decides: at 30 nothing is marked.
        assert_eq!(lines_of(&words, 30).1, 0);
    }

    #[test]
    fn a_sideways_or_upside_down_page_is_turned_upright_from_its_lines() {
        // Upright: two lines left to right.
        let upright = vec![
            word("one", 90.0, 1, 10.0, 10.0),
            word("two", 90.0, 1, 100.0, 10.0),
            word("three", 90.0, 2, 10.0, 40.0),
            word("four", 90.0, 2, 100.0, 40.0),
        ];
        assert_eq!(turn_of(&upright), 0);
        // The same page in a picture 200 wide, 100 high, turned each way.
        for turn in [90u16, 180, 270] {
            let mut turned = upright.clone();
            // Turning a picture by (360 - turn) is undone by turning it by `turn`.
            let back = (360 - turn) % 360;
            let (w, h) = turn_boxes(&mut turned, back, 200.0, 100.0);
            assert_eq!(turn_of(&turned), turn, "turned by {back}");
            let (w2, h2) = turn_boxes(&mut turned, turn, w, h);
            assert_eq!((w2, h2), (200.0, 100.0));
            for (a, b) in turned.iter().zip(&upright) {
                assert!(
                    (a.x0 - b.x0).abs() < 0.01 && (a.y0 - b.y0).abs() < 0.01,
                    "{turn}: {a:?} {b:?}"
                );
            }
        }
    }

    #[test]
    fn a_photo_without_text_is_not_taken_for_text() {
        let noise = vec![
            word("~", 20.0, 1, 0.0, 0.0),
            word("ii", 35.0, 1, 60.0, 0.0),
            word("Wa", 40.0, 2, 0.0, 30.0),
            word("ok", 80.0, 2, 60.0, 30.0),
        ];
        assert!(!is_text(&noise, 50));
        let text = vec![
            word("The", 92.0, 1, 0.0, 0.0),
            word("harbour", 95.0, 1, 60.0, 0.0),
            word("board", 91.0, 1, 120.0, 0.0),
            word("~", 10.0, 1, 180.0, 0.0),
        ];
        assert!(is_text(&text, 50));
    }

    fn page_text(words: usize, marked: usize, confidence: f32) -> Read {
        Read::Text(PageText {
            lines: Vec::new(),
            words,
            marked,
            confidence,
            turned: 0,
            skew: 0.0,
            width: 100.0,
            height: 100.0,
            point: 0.24,
        })
    }

    #[test]
    fn only_a_page_read_poorly_as_it_lies_is_read_again_for_its_orientation() {
        // Upright print, even a poor scan, reads at 80 and over; a page
        // upside down or sideways as garbage at 30 to 40.
        assert!(!needs_orientation(&page_text(400, 3, 95.0)));
        assert!(!needs_orientation(&page_text(40, 8, 72.0)));
        assert!(needs_orientation(&page_text(441, 287, 36.3)));
        assert!(needs_orientation(&Read::NoText));
        // A page not read (its time spent) is not tried again.
        assert!(!needs_orientation(&Read::Skipped("slow".to_owned())));
    }

    #[test]
    fn of_two_readings_the_one_with_more_sure_words_is_kept() {
        let lying = page_text(441, 287, 36.3);
        let turned = page_text(439, 2, 95.4);
        assert_eq!(better(lying.clone(), turned.clone()), turned);
        assert_eq!(better(turned.clone(), lying.clone()), turned);
        // Nothing better found: the first stays.
        assert_eq!(better(lying.clone(), Read::NoText), lying);
        assert_eq!(
            better(lying.clone(), Read::Skipped("slow".to_owned())),
            lying
        );
        assert_eq!(better(Read::NoText, turned.clone()), turned);
    }

    /// A table's rows as Tesseract often gives them: one line each, its
    /// cells' words far apart.
    #[cfg(feature = "ocr")]
    #[test]
    fn a_table_read_as_lines_across_its_columns_comes_out_a_table() {
        let rows = [
            ["Item", "Quantity", "Price"],
            ["Rope", "12", "4.50"],
            ["Anchor", "2", "120.00"],
            ["Chain", "30", "9.75"],
        ];
        let mut words = Vec::new();
        for (r, row) in rows.iter().enumerate() {
            for (c, cell) in row.iter().enumerate() {
                let x = 100.0 + 500.0 * c as f32;
                let y = 100.0 + 60.0 * r as f32;
                let mut w = word(cell, 95.0, r as u32 + 1, x, y);
                w.y1 = y + 40.0;
                words.push(w);
            }
        }
        let (lines, _) = lines_of(&words, 50);
        assert_eq!(lines.len(), 4);
        let page = upright_page(lines, words.len(), 1600.0, 400.0);
        let blocks = layout_blocks(&page);
        let tables: Vec<_> = blocks
            .iter()
            .filter_map(|b| match b {
                crate::document::Block::Table(t) => Some(t),
                _ => None,
            })
            .collect();
        assert_eq!(tables.len(), 1, "{blocks:?}");
        let cells: Vec<Vec<&str>> = tables[0]
            .rows
            .iter()
            .map(|row| row.iter().map(|c| c.text.as_str()).collect())
            .collect();
        assert_eq!(cells[0], ["Item", "Quantity", "Price"]);
        assert_eq!(cells[2], ["Anchor", "2", "120.00"]);
    }

    /// A paragraph's lines are one paragraph whether or not a line has
    /// letters that reach below the baseline: the boxes OCR gives them
    /// differ by a quarter, the type does not.
    #[cfg(feature = "ocr")]
    #[test]
    fn lines_of_one_type_are_one_paragraph_whether_or_not_they_have_descenders() {
        // 12 pt at 300 ppi (an em of 50 px), lines 60 px apart: a box
        // reaches 37 px above the baseline with a tall letter (else 25, the
        // x-height) and 11 px below it with a descender.
        let lines = [
            "The roof of the east warehouse was replaced in May",
            "after the winter storms had lifted its slates, and",
            "a gray rumour was sung",
            "from the quarry at Penrhyn before the autumn rains.",
        ];
        let mut words = Vec::new();
        for (n, text) in lines.iter().enumerate() {
            let baseline = 140.0 + 60.0 * n as f32;
            let tall = text
                .chars()
                .any(|c| c.is_uppercase() || "bdfhklt".contains(c));
            let deep = text.chars().any(|c| "gjpqy,".contains(c));
            let top = baseline - if tall { 37.0 } else { 25.0 };
            let bottom = baseline + if deep { 11.0 } else { 0.0 };
            let mut x = 100.0;
            for t in text.split(' ') {
                let mut w = word(t, 95.0, n as u32 + 1, x, top);
                w.x1 = x + 24.0 * t.len() as f32;
                w.y1 = bottom;
                x = w.x1 + 14.0;
                words.push(w);
            }
        }
        let (lines, _) = lines_of(&words, 50);
        let page = upright_page(lines, words.len(), 1600.0, 500.0);
        let blocks = layout_blocks(&page);
        assert!(
            matches!(blocks.as_slice(), [crate::document::Block::Paragraph(_)]),
            "{blocks:?}"
        );
    }

    /// The words of a line of running text stay one line.
    #[cfg(feature = "ocr")]
    #[test]
    fn the_words_of_a_line_of_prose_stay_one_paragraph() {
        let text = "The harbour board met on the fourth of March and agreed the dues";
        let mut words = Vec::new();
        let mut x = 100.0;
        for t in text.split(' ') {
            let mut w = word(t, 95.0, 1, x, 100.0);
            w.x1 = x + 18.0 * t.len() as f32;
            w.y1 = 140.0;
            x = w.x1 + 12.0;
            words.push(w);
        }
        let (lines, _) = lines_of(&words, 50);
        let page = upright_page(lines, words.len(), x + 100.0, 300.0);
        assert_eq!(
            layout_blocks(&page),
            [crate::document::Block::Paragraph(text.to_owned())]
        );
    }

    #[test]
    fn pages_are_named_in_ranges() {
        assert_eq!(page_ranges(&[5, 3, 4, 8, 10, 11]), "3–5, 8, 10–11");
        assert_eq!(page_ranges(&[2]), "2");
    }

    #[test]
    fn languages_are_checked_before_any_is_loaded() {
        assert!(check_languages("eng").is_ok());
        assert!(check_languages("eng+deu+chi_sim").is_ok());
        for bad in ["", "eng+", "../etc/passwd", "eng deu", "e\u{0}g"] {
            let error = check_languages(bad).expect_err(bad);
            assert!(error.contains("joined by '+'"), "{error}");
        }
    }

    #[test]
    fn a_build_or_setting_without_ocr_says_so_for_each_page() {
        let options = Options {
            ocr: false,
            ..Options::default()
        };
        let mut session = Session::new(&options);
        let read = session
            .read(3, image::GrayImage::new(10, 10), None, &Cancel::new())
            .expect("not cancelled");
        assert_eq!(read, Read::Skipped("OCR is turned off".to_owned()));
        assert_eq!(
            session.notes(),
            ["Not read by OCR: page 3 (OCR is turned off)."]
        );
    }
}
