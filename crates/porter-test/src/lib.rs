//! Helpers shared by porter's tests: where the generated corpus lives, and
//! reading returned MCP content back into text, lines and pixels.
//!
//! The corpus is made by `scripts/make_corpus.py` (the test script runs it
//! and sets `PORTER_CORPUS`); these helpers never build it themselves, so a
//! missing corpus fails loudly instead of silently testing nothing.
//!
//! Every helper panics with a message naming what was expected, because its
//! callers are tests and a panic is how a test fails.
//!
//! ```
//! let content = serde_json::json!([{"type": "text", "text": "header\n     1\tfirst line"}]);
//! let text = porter_test::all_text(&content);
//! porter_test::assert_words_in_order(&text, &["header", "first line"]);
//! assert_eq!(porter_test::numbered_lines(&text), vec![(1, "first line".to_owned())]);
//! ```

pub mod garage;
pub mod postgres;
pub mod router;
pub mod shared;

use std::path::PathBuf;

use base64::Engine as _;
use serde_json::Value;

/// The root of the checkout under test: two folders above the manifest of
/// the crate whose tests are running, as cargo names it when it runs them.
///
/// Read when the test runs, not when it is built (`env!`): cargo may reuse a
/// test binary built in another checkout of the same commit, and a path
/// built into it would point there.
///
/// # Panics
///
/// When the test is not run by cargo (`CARGO_MANIFEST_DIR` unset).
#[must_use]
pub fn checkout_root() -> PathBuf {
    let manifest = PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .expect("CARGO_MANIFEST_DIR is not set: run the tests with cargo test"),
    );
    manifest
        .ancestors()
        .nth(2)
        .expect("every crate lives at <root>/crates/<name>")
        .to_path_buf()
}

/// `MODELS_ENV` names the variable that holds the learned models' folder
/// (scripts/models.sh installs them there; scripts/test sets it).
pub const MODELS_ENV: &str = "PORTER_MODELS_DIR";

/// The models folder named by `PORTER_MODELS_DIR`, holding the pinned
/// table model (`slanet-plus.onnx`).
///
/// # Panics
///
/// When the variable is unset or the model is not in the folder: the tests
/// of the model cannot run, and saying how to install it is the useful
/// failure.
#[must_use]
pub fn models_dir() -> PathBuf {
    let Some(dir) = std::env::var_os(MODELS_ENV) else {
        panic!(
            "{MODELS_ENV} is not set: run scripts/test, or install the models with \
             `bash -c 'source scripts/models.sh && install_models'` and set {MODELS_ENV} to \
             the folder it names"
        );
    };
    let dir = PathBuf::from(dir);
    assert!(
        dir.join("slanet-plus.onnx").is_file(),
        "{MODELS_ENV}={} has no slanet-plus.onnx: install it with \
         `PORTER_MODELS_DIR={} bash -c 'source scripts/models.sh && install_models'`",
        dir.display(),
        dir.display()
    );
    dir
}

/// `CORPUS_ENV` names the variable that holds the corpus folder.
pub const CORPUS_ENV: &str = "PORTER_CORPUS";

/// The corpus folder named by `PORTER_CORPUS`, which holds `real/` and
/// `hostile/`.
///
/// # Panics
///
/// When the variable is unset or does not name a folder: the tests that need
/// the corpus cannot run, and saying how to make it is the useful failure.
#[must_use]
pub fn corpus_dir() -> PathBuf {
    let Some(dir) = std::env::var_os(CORPUS_ENV) else {
        panic!(
            "{CORPUS_ENV} is not set: run scripts/test, or set {CORPUS_ENV} to a folder made by \
             `.venv/bin/python scripts/make_corpus.py DIR`"
        );
    };
    let dir = PathBuf::from(dir);
    assert!(
        dir.join("real").is_dir() && dir.join("hostile").is_dir(),
        "{CORPUS_ENV}={} has no real/ and hostile/ folders: run scripts/test, or set \
         {CORPUS_ENV} to a folder made by `.venv/bin/python scripts/make_corpus.py DIR`",
        dir.display()
    );
    dir
}

/// The bytes of one corpus file, by its path under the corpus folder (e.g.
/// `real/report.docx`).
///
/// # Panics
///
/// When the file cannot be read: the corpus is incomplete or out of date.
#[must_use]
pub fn corpus_file(relative: &str) -> Vec<u8> {
    let path = corpus_dir().join(relative);
    std::fs::read(&path).unwrap_or_else(|error| {
        panic!(
            "cannot read corpus file {}: {error}; re-run scripts/make_corpus.py",
            path.display()
        )
    })
}

/// The content array of a serialized view (`{"content": [...], ...}`), or
/// the value itself when it is already the array.
fn blocks(content: &Value) -> &[Value] {
    let array = content.get("content").unwrap_or(content);
    array.as_array().map_or(&[], |blocks| blocks.as_slice())
}

/// All text of a content array (or of a serialized view), text blocks joined
/// by newlines, in order. Other blocks are skipped.
#[must_use]
pub fn all_text(content: &Value) -> String {
    blocks(content)
        .iter()
        .filter(|block| block["type"] == "text")
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first block of `kind` (`text`, `image`, `audio`, `resource`) in a
/// content array or serialized view.
///
/// # Panics
///
/// When there is no such block; the message lists the kinds there were.
#[must_use]
pub fn first_block<'a>(content: &'a Value, kind: &str) -> &'a Value {
    let all = blocks(content);
    all.iter()
        .find(|block| block["type"] == kind)
        .unwrap_or_else(|| {
            let kinds: Vec<_> = all.iter().map(|block| block["type"].to_string()).collect();
            panic!("no {kind} block; the blocks were {kinds:?}")
        })
}

/// The bytes of a block's base64 payload: `data` for image and audio blocks,
/// `resource.blob` for an embedded resource.
///
/// # Panics
///
/// When the block has no payload or it is not strict base64.
#[must_use]
pub fn block_bytes(block: &Value) -> Vec<u8> {
    let encoded = block["data"]
        .as_str()
        .or_else(|| block["resource"]["blob"].as_str())
        .unwrap_or_else(|| panic!("block has no base64 payload: {block}"));
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .unwrap_or_else(|error| panic!("block payload is not base64: {error}"))
}

/// Decodes an image block into RGBA pixels.
///
/// # Panics
///
/// When the block is not an image block or its bytes do not decode as the
/// format its `mimeType` names.
#[must_use]
pub fn decode_image_block(block: &Value) -> image::RgbaImage {
    assert_eq!(block["type"], "image", "not an image block: {block}");
    let mime = block["mimeType"].as_str().unwrap_or_default();
    let format = image::ImageFormat::from_mime_type(mime)
        .unwrap_or_else(|| panic!("image block has an unknown mimeType {mime:?}"));
    let bytes = block_bytes(block);
    image::load_from_memory_with_format(&bytes, format)
        .unwrap_or_else(|error| panic!("image block does not decode as {mime}: {error}"))
        .to_rgba8()
}

/// The lines of numbered text (`cat -n` style: spaces, the number, a tab,
/// the line) with their numbers, skipping any line not numbered (headers).
#[must_use]
pub fn numbered_lines(text: &str) -> Vec<(u64, String)> {
    text.lines()
        .filter_map(|line| {
            let (number, rest) = line.trim_start_matches(' ').split_once('\t')?;
            let number = number.parse().ok()?;
            Some((number, rest.to_owned()))
        })
        .collect()
}

/// Checks that each of `words` occurs in `text`, each after the end of the
/// one before.
///
/// # Panics
///
/// At the first word not found after its predecessor, showing the text.
pub fn assert_words_in_order(text: &str, words: &[&str]) {
    let mut from = 0;
    for (index, word) in words.iter().enumerate() {
        let Some(at) = text[from..].find(word) else {
            let before = if index == 0 {
                "at all".to_owned()
            } else {
                format!("after {:?}", words[index - 1])
            };
            let found_anywhere = if text.contains(word) {
                " (it occurs earlier)"
            } else {
                ""
            };
            panic!("{word:?} is not in the text {before}{found_anywhere}; the text is:\n{text}");
        };
        from += at + word.len();
    }
}

/// The colour of a region of an image: the median of each channel over the
/// pixels in `x0..x1`, `y0..y1`, which JPEG ringing and noise do not move.
///
/// # Panics
///
/// When the region is empty or outside the image.
#[must_use]
pub fn region_colour(picture: &image::RgbaImage, x0: u32, y0: u32, x1: u32, y1: u32) -> [u8; 4] {
    assert!(
        x0 < x1 && y0 < y1 && x1 <= picture.width() && y1 <= picture.height(),
        "region {x0}..{x1} x {y0}..{y1} is empty or outside a {}x{} image",
        picture.width(),
        picture.height()
    );
    let mut channels: [Vec<u8>; 4] = Default::default();
    for y in y0..y1 {
        for x in x0..x1 {
            for (channel, value) in channels.iter_mut().zip(picture.get_pixel(x, y).0) {
                channel.push(value);
            }
        }
    }
    channels.map(|mut values| {
        values.sort_unstable();
        values[values.len() / 2]
    })
}

/// The colour of one quadrant of an image, sampled over its middle half so
/// edges blurred by scaling or chroma subsampling do not count.
#[must_use]
pub fn quadrant_colour(picture: &image::RgbaImage, quadrant: Quadrant) -> [u8; 4] {
    let (w, h) = (picture.width(), picture.height());
    let (left, top) = match quadrant {
        Quadrant::TopLeft => (0, 0),
        Quadrant::TopRight => (w / 2, 0),
        Quadrant::BottomLeft => (0, h / 2),
        Quadrant::BottomRight => (w / 2, h / 2),
    };
    let (qw, qh) = (w / 2, h / 2);
    region_colour(
        picture,
        left + qw / 4,
        top + qh / 4,
        left + qw * 3 / 4,
        top + qh * 3 / 4,
    )
}

/// A quarter of an image, for [`quadrant_colour`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quadrant {
    /// The upper left quarter.
    TopLeft,
    /// The upper right quarter.
    TopRight,
    /// The lower left quarter.
    BottomLeft,
    /// The lower right quarter.
    BottomRight,
}

/// Checks that an RGB colour is within `tolerance` of `expected` on every
/// channel (alpha is ignored).
///
/// # Panics
///
/// When a channel differs by more, naming `what` was sampled.
pub fn assert_colour_near(actual: [u8; 4], expected: [u8; 3], tolerance: u8, what: &str) {
    let close = actual
        .iter()
        .zip(expected)
        .all(|(&got, want)| got.abs_diff(want) <= tolerance);
    assert!(
        close,
        "{what}: colour {:?} is not within {tolerance} of {expected:?}",
        &actual[..3]
    );
}

/// A free port on 127.0.0.1, for a server a test starts.
///
/// # Panics
///
/// When no port can be bound.
#[must_use]
pub fn free_port() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free loopback port")
}

/// The server this test process shares, started by `start` on first use;
/// `None`, saying so on stderr, when the variable `skip_env` is `1` (so a
/// server's tests are never skipped silently). `what` names the tests.
pub(crate) fn shared_server<T>(
    cell: &'static std::sync::OnceLock<T>,
    skip_env: &str,
    what: &str,
    start: fn() -> T,
) -> Option<&'static T> {
    if std::env::var(skip_env).is_ok_and(|v| v == "1") {
        eprintln!("{what} tests skipped: {skip_env}=1");
        return None;
    }
    Some(cell.get_or_init(start))
}

/// Generated text for property tests: `count` pieces, each one of `words`
/// (the syntax a rule must survive) or one character from `chars`, joined.
pub fn text_from(
    words: &[&'static str],
    chars: impl proptest::strategy::Strategy<Value = char> + 'static,
    count: std::ops::Range<usize>,
) -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let piece = prop_oneof![
        prop::sample::select(words.to_vec()).prop_map(str::to_owned),
        chars.prop_map(String::from),
    ];
    prop::collection::vec(piece, count).prop_map(|pieces| pieces.concat())
}

/// A new temporary folder named with `prefix`, kept after the test (a
/// server started in it removes it when it stops).
///
/// # Panics
///
/// When the folder cannot be made.
#[must_use]
pub fn kept_temp_dir(prefix: &str) -> PathBuf {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .unwrap_or_else(|e| panic!("a temp dir {prefix}…: {e}"))
        .keep()
}

/// This process's peak resident set size so far, in bytes (`VmHWM` in
/// `/proc/self/status`); `None` where there is no such file (not Linux).
#[must_use]
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// A xorshift sequence from `seed`: numbers that look random and are the
/// same on every run, for test files that no format claims and no encoder
/// can squeeze.
pub fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

/// `len` bytes of noise from `seed` (bits 24 to 31 of each [`xorshift`]
/// number; a zero seed is taken as one).
#[must_use]
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut next = xorshift(seed | 1);
    (0..len).map(|_| (next() >> 24) as u8).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn all_text_joins_text_blocks_of_a_view_and_skips_the_rest() {
        let view = json!({"content": [
            {"type": "text", "text": "one"},
            {"type": "image", "data": "", "mimeType": "image/png"},
            {"type": "text", "text": "two"},
        ]});
        assert_eq!(all_text(&view), "one\ntwo");
        assert_eq!(all_text(&view["content"]), "one\ntwo");
    }

    #[test]
    fn numbered_lines_keep_tabs_inside_lines_and_skip_the_header() {
        let text = "notes.txt: text, 2 lines\n     1\tLeft\tRight\n     2\t\n";
        assert_eq!(
            numbered_lines(text),
            vec![(1, "Left\tRight".to_owned()), (2, String::new())]
        );
    }

    #[test]
    fn words_in_order_pass_and_words_out_of_order_fail() {
        assert_words_in_order("alpha bravo charlie", &["alpha", "charlie"]);
        let out_of_order =
            std::panic::catch_unwind(|| assert_words_in_order("alpha bravo", &["bravo", "alpha"]));
        assert!(out_of_order.is_err());
    }

    #[test]
    fn a_region_colour_ignores_a_few_noisy_pixels() {
        let mut picture = image::RgbaImage::from_pixel(10, 10, image::Rgba([200, 10, 10, 255]));
        picture.put_pixel(3, 3, image::Rgba([0, 255, 255, 255]));
        picture.put_pixel(4, 4, image::Rgba([0, 255, 255, 255]));
        assert_eq!(region_colour(&picture, 0, 0, 10, 10), [200, 10, 10, 255]);
        assert_colour_near(
            quadrant_colour(&picture, Quadrant::BottomRight),
            [200, 10, 10],
            0,
            "q",
        );
    }

    #[test]
    fn an_image_block_decodes_back_to_its_pixels() {
        let picture = image::RgbaImage::from_pixel(3, 2, image::Rgba([1, 2, 3, 4]));
        let mut png = std::io::Cursor::new(Vec::new());
        picture
            .write_to(&mut png, image::ImageFormat::Png)
            .expect("a PNG encodes into memory");
        let block = json!({
            "type": "image",
            "mimeType": "image/png",
            "data": base64::engine::general_purpose::STANDARD.encode(png.into_inner()),
        });
        assert_eq!(decode_image_block(&block), picture);
    }
}
