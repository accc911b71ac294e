//! Tesseract, through `porter-tesseract` (its C API loaded from the system's
//! library the first time an engine starts), on a thread of its own: a page is handed over and its answer waited for
//! up to the page's time budget. Tesseract cannot be interrupted in the
//! middle of a page through that API, so a page past its budget is left to
//! finish on that thread (in the confined worker, the process ends with its
//! answer; in-process, the page runs on, bounded by its pixel budget) and
//! no further page of the file is started.
//!
//! The engines (one per core, at most two) are started once per process
//! for a set of languages. In the worker they are started, and the
//! orientation data loaded, before the process confines itself (see
//! [`preload`]), since the confined process can open no file.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use porter_tesseract::{Engine as Tesseract, EngineMode, Library, PageSegMode};

use super::gray::Gray;

/// What became of a page handed to the engine.
#[derive(Debug)]
pub(crate) enum Answer {
    /// Tesseract's TSV of the page.
    Tsv(String),
    /// The engine could not read it; the reason completes "OCR could not
    /// read it: …".
    Failed(String),
    /// The page took longer than its budget.
    TimedOut,
    /// An earlier page is still being read past its budget.
    Busy,
}

struct Job {
    id: u64,
    languages: String,
    image: Arc<Gray>,
    ppi: u32,
    orient: bool,
}

struct Engine {
    jobs: Sender<Job>,
    answers: Receiver<(u64, Answer)>,
    next: u64,
    /// A job whose answer was not waited for past its budget.
    pending: Option<u64>,
}

/// The engines, each on a thread of its own: the first reads whole pages
/// (and finds their orientation); with two cores, the second reads the
/// lower half of a page while the first reads the upper (see
/// [`super::bands`]).
static ENGINES: [Mutex<Option<Engine>>; 2] = [const { Mutex::new(None) }; 2];

/// How many engines may read at once: one per core, at most two.
pub(crate) fn engines() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(ENGINES.len()))
}

/// How long the last start of Tesseract took (its language data loaded).
static STARTED_IN: Mutex<Option<Duration>> = Mutex::new(None);

/// How long Tesseract took to start in this process, if it was started.
pub(crate) fn started_in() -> Option<Duration> {
    *STARTED_IN.lock().unwrap_or_else(PoisonError::into_inner)
}

fn engine(slot: usize) -> MutexGuard<'static, Option<Engine>> {
    ENGINES[slot].lock().unwrap_or_else(PoisonError::into_inner)
}

/// Starts the engine for `languages` and loads everything it reads from
/// disk (the language data, the orientation data) by reading a small blank
/// page, so that the process may then confine itself. Returns the reason
/// when the engine cannot start.
pub(crate) fn preload(languages: &str) -> Result<(), String> {
    let blank = Arc::new(Gray {
        width: 64,
        height: 64,
        pixels: vec![255; 64 * 64],
    });
    let budget = Duration::from_secs(60);
    // Every engine starts at once; the first with orientation detection,
    // so that its data is loaded too.
    let mut waits = Vec::new();
    for slot in 0..engines() {
        let sent = submit(slot, languages, Arc::clone(&blank), 300, slot == 0);
        waits.push((slot, sent));
    }
    // Only the first engine's start decides whether OCR runs: a page the
    // second cannot read is read whole by the first (see
    // `super::read_as_it_lies`).
    let mut started = Ok(());
    for (slot, sent) in waits {
        let answer = wait(slot, sent, budget);
        if slot > 0 {
            continue;
        }
        started = match answer {
            Answer::Tsv(_) => Ok(()),
            Answer::Failed(reason) => Err(reason),
            Answer::TimedOut | Answer::Busy => Err("the engine did not start in time".to_owned()),
        };
    }
    started
}

/// Reads the two halves of a page at once, the first on the first engine
/// and the second on the second, waiting at most `budget` for both.
pub(crate) fn recognize_halves(
    languages: &str,
    halves: [Arc<Gray>; 2],
    ppi: u32,
    budget: Duration,
) -> [Answer; 2] {
    let clock = Instant::now();
    let [top, bottom] = halves;
    let first = submit(0, languages, top, ppi, false);
    let second = submit(1, languages, bottom, ppi, false);
    let top = wait(0, first, budget);
    let bottom = wait(1, second, budget.saturating_sub(clock.elapsed()));
    [top, bottom]
}

/// Reads `image` (of `ppi` pixels per inch) with `languages`, waiting at
/// most `budget` for the answer. With `orient`, Tesseract first finds
/// which way up the page is (its orientation detection, a fifth or so of
/// the time of a page) and reads it that way up; without, it reads the
/// page as it lies.
pub(crate) fn recognize(
    languages: &str,
    image: Arc<Gray>,
    ppi: u32,
    budget: Duration,
    orient: bool,
) -> Answer {
    let sent = submit(0, languages, image, ppi, orient);
    wait(0, sent, budget)
}

/// Hands a page to engine `slot` (starting it if need be): the job's id,
/// or the answer already known (the engine is busy or gone).
fn submit(
    slot: usize,
    languages: &str,
    image: Arc<Gray>,
    ppi: u32,
    orient: bool,
) -> Result<u64, Answer> {
    let mut guard = engine(slot);
    if guard.is_none() {
        *guard = start(slot);
    }
    let Some(engine) = guard.as_mut() else {
        return Err(Answer::Failed(
            "the OCR thread could not be started".to_owned(),
        ));
    };
    // An answer to a page given up on earlier may have come since.
    if let Some(pending) = engine.pending {
        loop {
            match engine.answers.try_recv() {
                Ok((id, _)) if id == pending => {
                    engine.pending = None;
                    break;
                }
                Ok(_) => {}
                Err(mpsc::TryRecvError::Empty) => return Err(Answer::Busy),
                Err(mpsc::TryRecvError::Disconnected) => {
                    *guard = None;
                    return Err(Answer::Failed("the OCR thread ended".to_owned()));
                }
            }
        }
    }
    let id = engine.next;
    engine.next += 1;
    let job = Job {
        id,
        languages: languages.to_owned(),
        image,
        ppi,
        orient,
    };
    if engine.jobs.send(job).is_err() {
        *guard = None;
        return Err(Answer::Failed("the OCR thread ended".to_owned()));
    }
    Ok(id)
}

/// Waits at most `budget` for engine `slot`'s answer to the job `sent`.
fn wait(slot: usize, sent: Result<u64, Answer>, budget: Duration) -> Answer {
    let id = match sent {
        Ok(id) => id,
        Err(answer) => return answer,
    };
    let mut guard = engine(slot);
    let Some(engine) = guard.as_mut() else {
        return Answer::Failed("the OCR thread ended".to_owned());
    };
    loop {
        match engine.answers.recv_timeout(budget) {
            Ok((got, answer)) if got == id => return answer,
            Ok(_) => {}
            Err(RecvTimeoutError::Timeout) => {
                engine.pending = Some(id);
                return Answer::TimedOut;
            }
            Err(RecvTimeoutError::Disconnected) => {
                *guard = None;
                return Answer::Failed("the OCR thread ended".to_owned());
            }
        }
    }
}

fn start(slot: usize) -> Option<Engine> {
    let (jobs, job_rx) = mpsc::channel::<Job>();
    let (answer_tx, answers) = mpsc::channel();
    std::thread::Builder::new()
        .name(format!("porter-ocr-{slot}"))
        .spawn(move || serve(&job_rx, &answer_tx))
        .ok()?;
    Some(Engine {
        jobs,
        answers,
        next: 0,
        pending: None,
    })
}

/// The OCR thread: one Tesseract, started for the languages of the first
/// job and started again when a job names others.
fn serve(jobs: &Receiver<Job>, answers: &Sender<(u64, Answer)>) {
    let mut api: Option<(String, Tesseract)> = None;
    while let Ok(job) = jobs.recv() {
        if api
            .as_ref()
            .is_none_or(|(languages, _)| *languages != job.languages)
        {
            api = None;
            let clock = Instant::now();
            let started = init(&job.languages);
            *STARTED_IN.lock().unwrap_or_else(PoisonError::into_inner) = Some(clock.elapsed());
            match started {
                Ok(started) => {
                    crate::engines::record_start(crate::engines::Engine::Ocr);
                    api = Some((job.languages.clone(), started));
                }
                Err(reason) => {
                    if answers.send((job.id, Answer::Failed(reason))).is_err() {
                        return;
                    }
                    continue;
                }
            }
        }
        let answer = match api.as_mut() {
            Some((_, api)) => read(api, &job),
            None => Answer::Failed("the OCR engine is not started".to_owned()),
        };
        if answers.send((job.id, answer)).is_err() {
            return;
        }
    }
}

fn init(languages: &str) -> Result<Tesseract, String> {
    // The library is loaded here, the first time any engine starts.
    let library = Library::load().map_err(|error| error.to_string())?;
    let mut api = Tesseract::new(library).map_err(|error| error.to_string())?;
    // No data path: Tesseract's own (TESSDATA_PREFIX, else where the system
    // installed its data). The LSTM recogniser only, whatever the data
    // holds (a language's data may hold the older engine's too, which the
    // default may then run as well).
    api.init(None, languages, EngineMode::LstmOnly)
        .map_err(|_| missing_language(languages))?;
    Ok(api)
}

/// Why the engine did not start for `languages`.
fn missing_language(languages: &str) -> String {
    let packages: Vec<String> = languages
        .split('+')
        .map(|l| format!("tesseract-ocr-{}", l.to_ascii_lowercase().replace('_', "-")))
        .collect();
    format!(
        "the language data for {languages:?} could not be loaded; install it (Debian: {}) or set the OCR languages to installed ones",
        packages.join(", ")
    )
}

fn read(api: &mut Tesseract, job: &Job) -> Answer {
    api.set_page_seg_mode(if job.orient {
        PageSegMode::AutoOsd
    } else {
        PageSegMode::Auto
    });
    if let Err(e) = api.set_image(&job.image.pixels, job.image.width, job.image.height, 1) {
        return Answer::Failed(format!("the page's pixels were refused ({e})"));
    }
    api.set_source_resolution(job.ppi);
    if api.recognize().is_err() {
        return Answer::Failed("Tesseract could not recognise the page".to_owned());
    }
    match api.tsv_text(0) {
        Ok(text) => Answer::Tsv(text),
        Err(_) => Answer::Failed("Tesseract gave no text for the page".to_owned()),
    }
}
