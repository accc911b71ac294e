//! What porter's fuzz targets share. Each target in `fuzz_targets/` is one
//! reader or check fed libFuzzer's bytes; the properties below are what
//! must hold for any input at all, not only that nothing panics:
//!
//! - every file gets a view (only cancellation or a bad window may fail);
//! - an image block handed back decodes (never the original bytes of a file
//!   no decoder could read);
//! - a capture leaves no file behind: capturing its output again finds none;
//! - a secret a URL carried never survives redaction;
//! - a mention is a lowercase username, named once.
//!
//! Run them with `scripts/fuzz` (seeds from the corpus, a CPU-time budget
//! per target); a crash leaves its input in `fuzz/artifacts/<target>/`.
//!
//! The file view runs its readers under `catch_unwind`, so a dependency that
//! panics on a file costs a description, not the server. Such a panic is
//! not a crash here either: libFuzzer's abort-on-panic hook is replaced by
//! one that writes the panic's place, once, to the file named by
//! `PORTER_FUZZ_CAUGHT` (scripts/fuzz reports them). A panic that gets
//! past the view still aborts the run.

use std::collections::HashSet;
use std::io::Write as _;
use std::sync::{Mutex, Once};

use base64::Engine as _;
use porter_fileview::{Block, Cancel, FileInput, Options, WindowRequest};

/// Panic places already written down.
static CAUGHT: Mutex<Option<HashSet<String>>> = Mutex::new(None);
static HOOK: Once = Once::new();

/// Replaces the abort-on-panic hook with one that notes where panics happen
/// and lets them unwind to whoever catches them.
fn note_panics() {
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let place = info.location().map_or_else(
                || "an unknown place".to_owned(),
                |l| format!("{}:{}", l.file(), l.line()),
            );
            let mut seen = CAUGHT
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if seen.get_or_insert_with(HashSet::new).insert(place.clone()) {
                let line = format!("{place}: {info}\n");
                match std::env::var_os("PORTER_FUZZ_CAUGHT") {
                    Some(path) => {
                        if let Ok(mut file) = std::fs::OpenOptions::new()
                            .create(true)
                            .append(true)
                            .open(path)
                        {
                            let _ = file.write_all(line.as_bytes());
                        }
                    }
                    None => eprint!("panic at {line}"),
                }
            }
        }));
    });
}

/// Reads `data` as a file called `name` in this process (no worker), shows
/// its first and last windows and, where the format has a reader, turns it
/// into Markdown.
///
/// # Panics
///
/// When a property of the file view does not hold: that is the finding.
pub fn view_as(data: &[u8], name: &str) {
    note_panics();
    // Tesseract (C++, not porter's code) would spend a fuzz run's time on
    // each picture; the readers and the image checks are what is fuzzed.
    let options = Options {
        ocr: false,
        ..Options::default()
    };
    let cancel = Cancel::new();
    let input = FileInput::new(data, name);
    let prepared = porter_fileview::prepare(&input, &options, &cancel)
        .unwrap_or_else(|e| panic!("prepare refused a file without being cancelled: {e}"));
    let first = prepared
        .view(&WindowRequest::default(), &options)
        .unwrap_or_else(|e| panic!("the first window of a file failed: {e}"));
    check_images(&first.content);
    let total = first
        .structured
        .window
        .as_ref()
        .map_or(0, |w| w.total_lines);
    if total > 1 {
        let last = WindowRequest {
            start_line: Some(total),
            line_count: Some(1),
        };
        let end = prepared
            .view(&last, &options)
            .unwrap_or_else(|e| panic!("the last line ({total}) of a file failed: {e}"));
        check_images(&end.content);
    }
    // Refusals (not extractable, unreadable) are answers; only a panic or a
    // hang is a finding here.
    let _ = porter_fileview::to_markdown(&input, &options, &cancel);
}

/// Every image block must decode: a client may reject a whole tool result
/// for one image it cannot read.
fn check_images(content: &[Block]) {
    for block in content {
        if let Block::Image { data, mime_type } = block {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data)
                .unwrap_or_else(|e| panic!("an image block ({mime_type}) is not base64: {e}"));
            if let Err(e) = image::load_from_memory(&bytes) {
                panic!(
                    "an image block ({mime_type}, {} bytes) does not decode: {e}",
                    bytes.len()
                );
            }
            if mime_type == "image/png" {
                if let Err(e) = png_with_checksums(&bytes) {
                    panic!(
                        "a PNG block ({} bytes) fails a check zlib or libpng makes: {e}",
                        bytes.len()
                    );
                }
            }
        }
    }
}

/// Reads a PNG to its end with the chunk CRCs and the zlib Adler-32
/// checked, which the `image` crate's reading skips in part.
fn png_with_checksums(bytes: &[u8]) -> Result<(), png::DecodingError> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.ignore_checksums(false);
    let mut reader = decoder.read_info()?;
    let mut frame = vec![0; reader.output_buffer_size().unwrap_or(0)];
    reader.next_frame(&mut frame)?;
    reader.finish()
}

/// A keeper that counts what it is handed and answers a stub as the inbox
/// would.
#[derive(Default)]
struct Counter(std::cell::Cell<usize>);

impl porter_capture::Keep for Counter {
    fn keep(&self, found: porter_capture::Found<'_>) -> String {
        self.0.set(self.0.get() + 1);
        format!(
            "[file: inbox/f{}.bin ({} bytes)]",
            self.0.get(),
            found.bytes.len()
        )
    }
}

/// Captures `data` read as a tool result (an `outputSchema` member, if any,
/// taken out and used as the tool's schema; the first byte picks the
/// policy), then captures the output again.
///
/// # Panics
///
/// When the second capture finds a file: the first left one in the result
/// the client would get.
pub fn capture_leaves_no_file(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok(mut result) = serde_json::from_slice::<serde_json::Value>(rest) else {
        return;
    };
    let schema = result
        .as_object_mut()
        .and_then(|members| members.remove("outputSchema"))
        .and_then(|schema| match schema {
            serde_json::Value::Object(map) => Some(map),
            _ => None,
        });
    let policy = porter_capture::Policy {
        capture_base64: first & 1 == 1,
        images_view: false,
    };
    let keeper = Counter::default();
    porter_capture::capture_result(&mut result, policy, schema.as_ref(), &keeper);
    let before = result.clone();
    let again = Counter::default();
    let report = porter_capture::capture_result(&mut result, policy, schema.as_ref(), &again);
    assert_eq!(
        report.files, 0,
        "a captured result still held a file: {before}"
    );
}

/// Checks a text as a URL, shows it and redacts it.
///
/// # Panics
///
/// When a display form keeps a query, or a secret of ASCII letters and
/// digits survives redaction (one the mask cannot have split, so any left
/// is a leak).
pub fn url_hygiene(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(url) = porter_net::check_url(text) else {
        return;
    };
    let shown = porter_net::display_url(&url);
    if url.query().is_some() {
        assert!(
            shown.ends_with(&format!("?{}", porter_net::MASK)),
            "{shown}"
        );
    }
    if let Some(password) = url.password() {
        // The display keeps the host and the path; a password that is also
        // written there is shown as that part, not as the credential.
        let elsewhere =
            url.host_str().unwrap_or("").contains(password) || url.path().contains(password);
        assert!(
            password.len() < porter_net::MIN_SECRET_CHARS || elsewhere || !shown.contains(password),
            "the password is shown: {shown}"
        );
    }
    let redactor = porter_net::Redactor::new();
    redactor.register(&url);
    let echoed = format!("{text} said {}", url.as_str());
    let redacted = redactor.redact(&echoed);
    let mut secrets: Vec<String> = url.query_pairs().map(|(_, v)| v.into_owned()).collect();
    if let Some(query) = url.query() {
        secrets.extend(
            query
                .split('&')
                .filter_map(|pair| pair.split_once('=').map(|(_, v)| v.to_owned())),
        );
    }
    secrets.extend(url.password().map(str::to_owned));
    for secret in secrets {
        if secret.chars().count() >= porter_net::MIN_SECRET_CHARS
            && secret.bytes().all(|b| b.is_ascii_alphanumeric())
        {
            assert!(
                !redacted.contains(&secret),
                "{secret:?} survived: {redacted}"
            );
        }
    }
}

/// Parses a message's mentions and looks up near names among them.
///
/// # Panics
///
/// When a mention is empty, not lowercase, holds a character no username
/// holds, ends in punctuation or is named twice.
pub fn mention_rules(data: &[u8]) {
    use porter_mattermost_mcp::outgoing::checks::{CLOSEST_NAMES, closest, mentions};
    let Ok(message) = std::str::from_utf8(data) else {
        return;
    };
    let names = mentions(message);
    for (i, name) in names.iter().enumerate() {
        assert!(!name.is_empty(), "an empty mention");
        assert!(
            name.chars().all(|c| c.is_ascii_lowercase()
                || c.is_ascii_digit()
                || matches!(c, '.' | '_' | '-')),
            "{name:?}"
        );
        assert!(!name.ends_with(['.', '-', '_']), "{name:?}");
        assert!(!names[..i].contains(name), "{name:?} twice");
        let near = closest(name, &names, CLOSEST_NAMES);
        assert!(near.len() <= CLOSEST_NAMES);
        assert_eq!(near.first(), Some(name), "a name is nearest to itself");
    }
}

/// `MAX_FUZZ_SECONDS` is the most of a fuzzed recording decoded: enough for
/// every container's structure, little enough to keep a run fast.
const MAX_FUZZ_SECONDS: u64 = 120;

/// porter-speech's decoder on bytes named `name` (the extension is only a
/// hint): it ends with samples within the duration cap or a reason, never a
/// panic (symphonia runs here without the file view's `catch_unwind`, so a
/// panic in it is a finding), and what it decodes is 16 kHz audio no longer
/// than the cap.
pub fn decode_audio(data: &[u8], name: &str) {
    let limits = porter_speech::AudioLimits {
        max_seconds: MAX_FUZZ_SECONDS,
    };
    let extension = name.rsplit('.').next();
    match porter_speech::decode(data, extension, &limits, &|| false) {
        Ok(audio) => {
            assert!(audio.samples.len() as u64 <= (MAX_FUZZ_SECONDS + 1) * 16_000, "{} samples past the cap", audio.samples.len());
            assert!(audio.source_rate >= 1000 && audio.source_channels >= 1);
        }
        Err(porter_speech::AudioError::Cancelled) => panic!("decoding was cancelled without being asked to"),
        Err(error) => assert!(!error.to_string().is_empty(), "an error without a reason"),
    }
}

/// `MAX_JPEG_PIXELS` is the most pixels a fuzzed JPEG is decoded to: a
/// 4096 x 4096 image, enough for every structure, little enough to stay
/// fast.
const MAX_JPEG_PIXELS: u64 = 1 << 24;

/// porter-jpeg's decoder on any bytes, asked for sizes that select each of
/// its four scales on small images and the full scale on any: it returns
/// an image whose buffer matches its size, or an error, never a panic, and
/// never `Cancelled` when no one asked.
///
/// # Panics
///
/// When the decoder panics, or returns an image whose size and buffer
/// disagree, or is empty, or is over the pixel limit.
pub fn decode_jpeg_fast(data: &[u8]) {
    for min in [0, 16, 64, 256, u32::MAX] {
        match porter_jpeg::decode_scaled(data, min, min, MAX_JPEG_PIXELS, &|| false) {
            Ok(image) => {
                let pixels = u64::from(image.width) * u64::from(image.height);
                assert!(
                    pixels > 0 && pixels <= MAX_JPEG_PIXELS,
                    "{}x{}",
                    image.width,
                    image.height
                );
                assert!(
                    matches!(image.channels, 1 | 3),
                    "{} channels",
                    image.channels
                );
                assert_eq!(image.data.len() as u64, pixels * u64::from(image.channels));
            }
            Err(porter_jpeg::Error::Cancelled) => {
                panic!("decoding was cancelled without being asked to")
            }
            Err(_) => {}
        }
    }
}
