//! Whisper tiny.en and base themselves (the models `scripts/models.sh`
//! installs, found through `PORTER_MODELS_DIR` as porter finds them) on
//! speech espeak-ng speaks while the test runs: the words come out in
//! order, silence gives none, a long recording is stitched at its 30 s
//! seams without repeating or losing sentences, the CPU budget stops it
//! saying where, and base hears which language is spoken.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use porter_speech::{Audio, AudioLimits, Model, Options, Transcript, decode};

fn models_dir() -> PathBuf {
    std::env::var_os("PORTER_MODELS_DIR").map_or_else(|| panic!("PORTER_MODELS_DIR is not set: run `bash scripts/models.sh` (scripts/test does) and set it to the directory it printed"), PathBuf::from)
}

fn model() -> &'static Model {
    static MODEL: OnceLock<Model> = OnceLock::new();
    MODEL.get_or_init(|| {
        Model::load(&models_dir().join(porter_speech::TINY_EN_DIR))
            .unwrap_or_else(|e| panic!("{e}"))
    })
}

/// Whisper base, the multilingual model scripts/models.sh installs too.
fn base() -> &'static Model {
    static MODEL: OnceLock<Model> = OnceLock::new();
    MODEL.get_or_init(|| {
        Model::load(&models_dir().join(porter_speech::BASE_DIR)).unwrap_or_else(|e| panic!("{e}"))
    })
}

/// `text` spoken by espeak-ng with `voice`, decoded to 16 kHz.
fn spoken(text: &str, voice: &str) -> Audio {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("speech.wav");
    let status = Command::new("espeak-ng")
        .args(["-v", voice, "-s", "160", "-w"])
        .arg(&path)
        .arg(text)
        .status()
        .unwrap_or_else(|e| panic!("espeak-ng could not run ({e}): install it (apt-get install espeak-ng; scripts/test does)"));
    assert!(status.success());
    let bytes = std::fs::read(&path).expect("espeak-ng wrote the file");
    decode(&bytes, Some("wav"), &AudioLimits::default(), &|| false)
        .expect("espeak-ng's WAV decodes")
}

/// Recordings one after another with `gap_seconds` of silence between.
fn joined(parts: &[Audio], gap_seconds: f64) -> Audio {
    let mut samples = Vec::new();
    for part in parts {
        samples.extend_from_slice(&part.samples);
        samples.extend(std::iter::repeat_n(0i16, (gap_seconds * 16_000.0) as usize));
    }
    Audio {
        samples,
        cut: None,
        declared_seconds: None,
        ..parts[0].clone()
    }
}

fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

fn text_of(transcript: &Transcript) -> String {
    transcript
        .segments
        .iter()
        .map(|s| s.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The length of the longest common subsequence of two word lists.
fn common(a: &[String], b: &[String]) -> usize {
    let mut row = vec![0usize; b.len() + 1];
    for x in a {
        let mut diagonal = 0;
        for (j, y) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if x == y {
                diagonal + 1
            } else {
                row[j + 1].max(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}

#[test]
fn a_spoken_paragraph_comes_back_with_its_words_in_order_and_timestamps_inside_the_recording() {
    let said = "Please water the tomato plants on the balcony every evening. The neighbours will collect the mail while we are away.";
    let audio = spoken(said, "en-us");
    let transcript = model().transcribe(&audio, &Options::default(), &|| false, &mut |_| {});
    let heard = words(&text_of(&transcript));
    let expected = words(said);
    let kept = common(&expected, &heard);
    assert!(
        kept * 10 >= expected.len() * 7,
        "only {kept} of {} words heard in order: {heard:?}",
        expected.len()
    );
    assert!(
        heard.len() <= expected.len() + 3,
        "words invented: {heard:?}"
    );
    for segment in &transcript.segments {
        assert!(
            segment.start <= segment.end && segment.end <= audio.seconds() + 0.5,
            "{segment:?}"
        );
    }
    assert!(transcript.stopped.is_none());
}

#[test]
fn the_multilingual_model_detects_the_language_spoken_and_writes_it_in_that_language() {
    let model = base();
    assert!(!model.english_only);
    let english = "The ferry to the island leaves twice a day from the northern pier.";
    let transcript = model.transcribe(
        &spoken(english, "en-us"),
        &Options::default(),
        &|| false,
        &mut |_| {},
    );
    assert_eq!(transcript.language.as_deref(), Some("en"));
    let heard = words(&text_of(&transcript));
    let expected = words(english);
    // espeak-ng's "ferry to" and "pier" are heard otherwise.
    assert!(
        common(&expected, &heard) * 10 >= expected.len() * 6,
        "{heard:?}"
    );
    let german = "Der Zug nach Berlin hat heute zwanzig Minuten Verspätung.";
    let audio = spoken(german, "de");
    let detected = model.transcribe(&audio, &Options::default(), &|| false, &mut |_| {});
    assert_eq!(detected.language.as_deref(), Some("de"), "{detected:?}");
    let heard = words(&text_of(&detected));
    for word in ["berlin", "heute", "minuten"] {
        assert!(heard.iter().any(|w| w == word), "{word} not in {heard:?}");
    }
    // Told it is English, the model hears the German as English.
    let options = Options {
        language: porter_speech::Language::English,
        ..Options::default()
    };
    let told = model.transcribe(&audio, &options, &|| false, &mut |_| {});
    assert_eq!(told.language.as_deref(), Some("en"));
}

#[test]
fn silence_gives_no_words() {
    let silent = Audio {
        samples: vec![0; 16_000 * 40],
        source_rate: 16_000,
        source_channels: 1,
        codec: "PCM".to_owned(),
        declared_seconds: None,
        cut: None,
    };
    let transcript = model().transcribe(&silent, &Options::default(), &|| false, &mut |_| {});
    assert_eq!(text_of(&transcript), "", "{transcript:?}");
    assert_eq!(transcript.windows.len(), 2);
    assert!(
        transcript.windows.iter().all(|w| !w.kept),
        "{:?}",
        transcript.windows
    );
    // Faint noise (-60 dBFS) is heard by the network, and gives no words either.
    let mut state = 38u32;
    let faint: Vec<i16> = (0..16_000 * 20)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            ((state >> 16) % 64) as i16 - 32
        })
        .collect();
    let noise = Audio {
        samples: faint,
        ..silent
    };
    for model in [model(), base()] {
        let transcript = model.transcribe(&noise, &Options::default(), &|| false, &mut |_| {});
        assert_eq!(transcript.windows.len(), 1);
        assert!(
            transcript.windows[0].no_speech < 1.0,
            "the network ran: {:?}",
            transcript.windows
        );
        assert_eq!(text_of(&transcript), "", "{model:?}: {transcript:?}");
    }
}

/// About 80 s of sentences, each naming one animal, so that a sentence
/// heard twice at a seam or lost there shows.
fn long_recording() -> &'static (Audio, Vec<&'static str>) {
    static LONG: OnceLock<(Audio, Vec<&'static str>)> = OnceLock::new();
    LONG.get_or_init(|| {
        let animals = [
            "elephant", "giraffe", "penguin", "dolphin", "kangaroo", "tiger", "rabbit", "turtle",
            "zebra", "camel", "horse", "monkey", "lion", "chicken", "whale", "spider",
        ];
        let parts: Vec<Audio> = animals
            .iter()
            .map(|animal| {
                spoken(
                    &format!("Next we saw a {animal} near the old wooden fence."),
                    "en-gb",
                )
            })
            .collect();
        (joined(&parts, 1.2), animals.to_vec())
    })
}

#[test]
fn a_long_recording_is_stitched_at_its_windows_without_a_sentence_repeated_or_lost() {
    let (audio, animals) = long_recording();
    assert!(audio.seconds() > 65.0, "{}", audio.seconds());
    let mut reports = Vec::new();
    let transcript = model().transcribe(audio, &Options::default(), &|| false, &mut |p| {
        reports.push(p);
    });
    assert!(transcript.windows.len() >= 3, "{:?}", transcript.windows);
    let heard = words(&text_of(&transcript));
    let mut found = Vec::new();
    for animal in animals {
        let times = heard
            .iter()
            .filter(|w| w.trim_end_matches('s') == *animal)
            .count();
        assert!(times <= 1, "{animal} heard {times} times: {heard:?}");
        if times == 1 {
            found.push(
                heard
                    .iter()
                    .position(|w| w.trim_end_matches('s') == *animal),
            );
        }
    }
    // Every sentence starts "Next we saw": heard once each, none lost or
    // doubled at a seam, whatever the model makes of the animals.
    let starts = heard.iter().filter(|w| *w == "next").count();
    assert_eq!(starts, animals.len(), "{heard:?}");
    assert!(
        found.len() * 4 >= animals.len() * 3,
        "only {} of {} animals heard: {heard:?}",
        found.len(),
        animals.len()
    );
    assert!(
        found.windows(2).all(|w| w[0] < w[1]),
        "sentences out of order: {heard:?}"
    );
    // Segments run forward in time.
    assert!(
        transcript
            .segments
            .windows(2)
            .all(|w| w[0].start <= w[1].start),
        "{:?}",
        transcript.segments
    );
    // Progress was told before each window and at the end.
    assert_eq!(reports.len(), transcript.windows.len() + 1);
    assert!(
        reports
            .windows(2)
            .all(|w| w[0].done_seconds <= w[1].done_seconds)
    );
    assert!((reports[reports.len() - 1].done_seconds - audio.seconds()).abs() < 0.01);
}

#[test]
fn the_cpu_budget_stops_the_transcript_after_a_window_and_says_where() {
    let (audio, _) = long_recording();
    let options = Options {
        cpu_seconds: 0,
        ..Options::default()
    };
    let transcript = model().transcribe(audio, &options, &|| false, &mut |_| {});
    assert_eq!(transcript.windows.len(), 1, "one window always runs");
    let stopped = transcript.stopped.as_ref().expect("it stopped early");
    assert!(
        stopped.at_seconds > 10.0 && stopped.at_seconds <= 30.0,
        "{stopped:?}"
    );
    assert!(
        stopped.reason.contains("0 s of CPU time"),
        "{}",
        stopped.reason
    );
    assert!(
        transcript
            .segments
            .iter()
            .all(|s| s.end <= stopped.at_seconds + 0.01),
        "{transcript:?}"
    );
    assert!(!transcript.segments.is_empty());
}

#[test]
fn a_cancelled_transcription_stops_before_its_first_window() {
    let (audio, _) = long_recording();
    let transcript = model().transcribe(audio, &Options::default(), &|| true, &mut |_| {});
    assert!(transcript.windows.is_empty());
    assert_eq!(
        transcript.stopped.map(|s| s.reason),
        Some("the request was cancelled".to_owned())
    );
}
