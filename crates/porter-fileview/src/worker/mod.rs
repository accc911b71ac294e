//! The isolated worker: where a program installs one, every [`crate::prepare`]
//! and [`crate::to_markdown`] reads its file in a child process instead of in
//! the caller's, so that a bug in any reader (a stack overflow, which no
//! `catch_unwind` catches; a decoder that takes gigabytes; a loop) ends that
//! child, and the caller gets a description of the file instead of dying.
//!
//! The child is the installing program itself, started with the argument it
//! named (porter uses a hidden subcommand); it calls [`serve`]. Before it
//! reads anything it confines itself (see `sandbox`): an address-space limit
//! of [`Options::worker_memory_bytes`] beyond what it holds at start, a CPU
//! limit of [`Options::worker_cpu_seconds`], no file writes, no core dumps,
//! and a seccomp filter under which it can read its standard input, write
//! its standard output and error, manage its own memory and threads, and
//! exit — it cannot open a path, make a socket, or start a program. The
//! parent holds a clock deadline of [`Options::worker_wall_seconds`] and
//! kills the child past it, or when the request is cancelled.
//!
//! Each child serves one file and exits, so the next file always gets a
//! fresh one. A few are kept started and confined ahead of need (the warm
//! pool), so a file waits only for the exchange itself, not for a process
//! to start.
//!
//! Without an installed worker (a library user, the crate's own tests) the
//! readers run in the caller's process as before, bounded by their limits
//! and `catch_unwind` only.

#[cfg(target_os = "linux")]
mod limits;
mod sandbox;

use std::ffi::OsString;
use std::io::{self, BufRead, Read, Write as _};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock, mpsc};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::bounds::Cancel;
use crate::content::View;
use crate::describe::human_size;
use crate::engines::{self, Engine, Engines};
use crate::input::{FileInput, ViewError};
use crate::markdown::Markdown;
use crate::options::Options;
use crate::prepared::{Paged, Prep, Prepared};
use limits::Limits;

/// `Spec` says how to start a worker: a program and the one argument that
/// makes it call [`serve`], and how many to keep started ahead of need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// The program, normally the caller's own executable.
    pub program: PathBuf,
    /// The argument that makes the program serve as a worker; the limits
    /// follow it.
    pub arg: OsString,
    /// How many workers to keep started and waiting (0 for a command that
    /// reads one file and exits).
    pub warm: usize,
}

/// `WARM` is the pool size a long-running server should use: two workers
/// waiting, so that two files read at once both find one.
pub const WARM: usize = 2;

static SPEC: OnceLock<Spec> = OnceLock::new();

/// Installs the worker for the rest of the process: from now on files are
/// read in children started from `spec`. Only the first call counts.
/// Outside Linux, where the confinement is not built, it does nothing and
/// files are read in-process.
pub fn install(spec: Spec) {
    if cfg!(target_os = "linux") {
        let _ = SPEC.set(spec);
    }
}

/// Whether a worker is installed.
#[must_use]
pub fn installed() -> bool {
    SPEC.get().is_some()
}

/// Serves one file as a worker: confines this process, reads the request
/// from standard input, answers on standard output, and returns the exit
/// code. `args` are the ones after the worker argument (the limits).
pub fn serve(args: impl IntoIterator<Item = OsString>) -> u8 {
    // A reader's panic is caught and answered as a description; its message
    // would only be noise on the parent's pipe.
    std::panic::set_hook(Box::new(|_| {}));
    let Some(limits) = Limits::from_args(args) else {
        let _ = writeln!(io::stderr(), "{BAD_ARGS}");
        return 2;
    };
    // The engines the parent named start while files may still be opened
    // (none, unless a file was found to need one); a worker whose OCR
    // cannot start reads its file without it (and each page OCR would have
    // read says why).
    // The models folder the parent named is this process's (a model is
    // loaded from it below, before confining, when one is to be started).
    if let Some(dir) = &limits.models_dir {
        crate::models::install_models(dir.clone());
    }
    if limits.starts(Engine::Ocr)
        && let Some(languages) = &limits.ocr_languages
        && let Err(error) = crate::ocr::preload(languages)
    {
        let _ = writeln!(
            io::stderr(),
            "porter-fileview worker: OCR not started: {error}"
        );
    }
    if limits.starts(Engine::Speech)
        && let Err(error) = crate::speech::preload()
    {
        let _ = writeln!(
            io::stderr(),
            "porter-fileview worker: speech model not loaded: {error}"
        );
    }
    #[cfg(feature = "tables")]
    if limits.starts(Engine::Tables)
        && let Err(error) = crate::pdf::engine::preload()
    {
        let _ = writeln!(
            io::stderr(),
            "porter-fileview worker: table model not loaded: {error}"
        );
    }
    crate::speech::look_for_model();
    #[cfg(feature = "tables")]
    crate::pdf::engine::look_for_model();
    engines::confine(limits.engines);
    #[cfg(target_os = "linux")]
    if let Err(error) = sandbox::confine(&limits) {
        let _ = writeln!(io::stderr(), "{CONFINE_FAILED}{error}");
        return 3;
    }
    if limits.warm {
        warm_up();
    }
    let mut input = io::stdin().lock();
    let Some((request, bytes)) = read_request(&mut input) else {
        return 4;
    };

    let file = FileInput {
        bytes: &bytes,
        name: &request.name,
        declared_type: request.declared_type.as_deref(),
        link: request.link.as_deref(),
    };
    // How far a long reader has got (a recording being transcribed) goes
    // to the parent on standard error, one line at a time.
    let cancel = Cancel::new().with_progress(std::sync::Arc::new(|done, total, doing: &str| {
        let doing = doing.replace(['\n', '\t'], " ");
        let _ = writeln!(io::stderr(), "{PROGRESS}{done}\t{total}\t{doing}");
    }));
    engines::begin_job(&cancel);
    let reply = match request.job {
        Job::Prepare => match crate::read::prepare_here(&file, &request.options, &cancel) {
            Ok(prepared) => Reply::Prepared(Box::new(WirePrep::from(prepared))),
            Err(error) => Reply::Failed(WireError::from(error)),
        },
        Job::Markdown => {
            match crate::markdown::to_markdown_here(&file, &request.options, &cancel) {
                Ok(markdown) => Reply::Markdown {
                    text: markdown.text,
                    title: markdown.title,
                    notes: markdown.notes,
                },
                Err(error) => Reply::Failed(WireError::from(error)),
            }
        }
    };
    drop(bytes);
    let needed = engines::needed();
    let reply = if needed.is_empty() {
        reply
    } else {
        Reply::Needs(needed)
    };
    let reply = Answered {
        reply,
        started: engines::started(),
    };
    // The answer's length goes first, so that the parent has it all without
    // waiting for this process to exit (which, for a big binary, takes
    // longer than the answer).
    let Ok(answer) = serde_json::to_vec(&reply) else {
        return 5;
    };
    drop(reply);
    // Everything said on standard error (progress above all) is said
    // before the answer, and this line tells the parent so.
    let _ = writeln!(io::stderr(), "{ANSWERING}");
    let mut out = io::stdout().lock();
    let written = out
        .write_all(&(answer.len() as u64).to_le_bytes())
        .and_then(|()| out.write_all(&answer))
        .and_then(|()| out.flush());
    if written.is_err() {
        return 5;
    }
    0
}

/// Runs the common readers once on tiny files of their kinds, and the
/// answer's serialisation, while the worker waits anyway: a fresh process
/// first touches the code and memory it runs, which took a file about 2 ms
/// more than reading it did.
fn warm_up() {
    let options = Options::default();
    let cancel = Cancel::new();
    let mut png = Vec::new();
    let picture = image::RgbImage::from_pixel(2, 2, image::Rgb([200, 30, 30]));
    let _ = picture.write_to(&mut io::Cursor::new(&mut png), image::ImageFormat::Png);
    let samples: [(&[u8], &str); 3] = [
        (b"warm\nup\n", "warm.txt"),
        (b"a,b\n1,2\n", "warm.csv"),
        (&png, "warm.png"),
    ];
    for (bytes, name) in samples {
        if let Ok(prepared) =
            crate::read::prepare_here(&FileInput::new(bytes, name), &options, &cancel)
        {
            let reply = Reply::Prepared(Box::new(WirePrep::from(prepared)));
            let _ = serde_json::to_vec(&reply).map(|json| serde_json::from_slice::<Reply>(&json));
        }
    }
}

/// The first line a worker writes on standard error when its arguments are
/// not limits.
const BAD_ARGS: &str = "porter-fileview worker: expected the memory and CPU limits, the OCR languages, the engines to start and warm or cold as arguments";
/// The line a worker writes on standard error just before its answer.
const ANSWERING: &str = "porter-fileview worker: answering";
/// What a worker writes on standard error before how far a long reader
/// has got: done, total and what it is doing, apart by tabs.
const PROGRESS: &str = "porter-fileview worker: progress\t";
/// What a worker writes on standard error before the reason it could not
/// confine itself.
const CONFINE_FAILED: &str = "porter-fileview worker: cannot confine itself: ";

/// What the parent asks of a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Job {
    Prepare,
    Markdown,
}

/// The first line of a worker's input; the file's `size` bytes follow it.
#[derive(Debug, Serialize, Deserialize)]
struct Request {
    job: Job,
    name: String,
    declared_type: Option<String>,
    link: Option<String>,
    options: Options,
    size: u64,
}

/// The worker's answer, the whole of its standard output: what it made of
/// the file, and the engines it started (for [`engines::started`]).
#[derive(Debug, Serialize, Deserialize)]
struct Answered {
    reply: Reply,
    started: Engines,
}

/// What the worker made of the file.
#[derive(Debug, Serialize, Deserialize)]
enum Reply {
    Prepared(Box<WirePrep>),
    Markdown {
        text: String,
        title: Option<String>,
        notes: Vec<String>,
    },
    Failed(WireError),
    /// The file needs engines this worker did not start: it is to be read
    /// again in a worker that starts them.
    Needs(Engines),
}

/// A [`Prepared`] as it crosses the pipe; the line index is rebuilt on the
/// parent's side rather than sent.
#[derive(Debug, Serialize, Deserialize)]
enum WirePrep {
    Whole(Box<View>),
    Paged(Box<Paged>),
}

impl From<Prepared> for WirePrep {
    fn from(prepared: Prepared) -> Self {
        match prepared.0 {
            Prep::Whole(view) => Self::Whole(view),
            Prep::Paged(paged) => Self::Paged(paged),
        }
    }
}

impl From<WirePrep> for Prepared {
    fn from(wire: WirePrep) -> Self {
        match wire {
            WirePrep::Whole(view) => Self(Prep::Whole(view)),
            WirePrep::Paged(mut paged) => {
                paged.index = crate::text::LineIndex::new(&paged.text);
                Self(Prep::Paged(paged))
            }
        }
    }
}

/// The errors `prepare` and `to_markdown` can answer with.
#[derive(Debug, Serialize, Deserialize)]
enum WireError {
    Cancelled,
    NotExtractable { name: String, what: String },
    Unreadable { name: String, reason: String },
}

impl From<ViewError> for WireError {
    fn from(error: ViewError) -> Self {
        match error {
            ViewError::NotExtractable { name, what } => Self::NotExtractable { name, what },
            ViewError::Unreadable { name, reason } => Self::Unreadable { name, reason },
            // prepare and to_markdown answer no window errors; should one
            // appear, it is about nothing the parent asked.
            ViewError::Cancelled | ViewError::PastEnd { .. } | ViewError::BadWindow { .. } => {
                Self::Cancelled
            }
        }
    }
}

impl From<WireError> for ViewError {
    fn from(error: WireError) -> Self {
        match error {
            WireError::Cancelled => Self::Cancelled,
            WireError::NotExtractable { name, what } => Self::NotExtractable { name, what },
            WireError::Unreadable { name, reason } => Self::Unreadable { name, reason },
        }
    }
}

/// Reads the request line and the file's bytes after it.
fn read_request(input: &mut impl BufRead) -> Option<(Request, Vec<u8>)> {
    let mut line = Vec::new();
    input
        .take(REQUEST_LINE_BYTES)
        .read_until(b'\n', &mut line)
        .ok()?;
    let request: Request = serde_json::from_slice(&line).ok()?;
    let size = usize::try_from(request.size).ok()?;
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(size).ok()?;
    input.take(request.size).read_to_end(&mut bytes).ok()?;
    (bytes.len() == size).then_some((request, bytes))
}

/// `REQUEST_LINE_BYTES` caps the request line (names and options).
const REQUEST_LINE_BYTES: u64 = 1024 * 1024;

/// What became of a file sent to a worker.
pub(crate) enum Ran<T> {
    /// No worker is installed, or the file is not one to send (too large
    /// to read, or the request already cancelled): read it in-process.
    Here,
    /// The worker answered.
    Answered(Result<T, ViewError>),
    /// The worker did not answer; the reason completes "It is not shown
    /// because …".
    Died(String),
}

impl<T> Ran<T> {
    /// The answer: the worker's; `here`'s when the file is read in this
    /// process; `died`'s, given the reason, when the worker did not answer.
    pub(crate) fn answer(
        self,
        here: impl FnOnce() -> Result<T, ViewError>,
        died: impl FnOnce(String) -> Result<T, ViewError>,
    ) -> Result<T, ViewError> {
        match self {
            Self::Here => here(),
            Self::Answered(result) => result,
            Self::Died(reason) => died(reason),
        }
    }
}

/// Reads the file as [`crate::prepare`] does, in a worker.
pub(crate) fn prepare(input: &FileInput<'_>, options: &Options, cancel: &Cancel) -> Ran<Prepared> {
    match run(Job::Prepare, input, options, cancel) {
        Ran::Here => Ran::Here,
        Ran::Died(reason) => Ran::Died(reason),
        Ran::Answered(Err(error)) => Ran::Answered(Err(error)),
        Ran::Answered(Ok(Reply::Prepared(wire))) => Ran::Answered(Ok(Prepared::from(*wire))),
        Ran::Answered(Ok(Reply::Failed(error))) => Ran::Answered(Err(error.into())),
        Ran::Answered(Ok(Reply::Markdown { .. } | Reply::Needs(_))) => {
            Ran::Died(CONFUSED.to_owned())
        }
    }
}

/// Turns the file into Markdown as [`crate::to_markdown`] does, in a worker.
pub(crate) fn to_markdown(
    input: &FileInput<'_>,
    options: &Options,
    cancel: &Cancel,
) -> Ran<Markdown> {
    match run(Job::Markdown, input, options, cancel) {
        Ran::Here => Ran::Here,
        Ran::Died(reason) => Ran::Died(reason),
        Ran::Answered(Err(error)) => Ran::Answered(Err(error)),
        Ran::Answered(Ok(Reply::Markdown { text, title, notes })) => {
            Ran::Answered(Ok(Markdown { text, title, notes }))
        }
        Ran::Answered(Ok(Reply::Failed(error))) => Ran::Answered(Err(error.into())),
        Ran::Answered(Ok(Reply::Prepared(_) | Reply::Needs(_))) => Ran::Died(CONFUSED.to_owned()),
    }
}

const CONFUSED: &str = "porter could not read it: its reader answered another question";

fn run(job: Job, input: &FileInput<'_>, options: &Options, cancel: &Cancel) -> Ran<Reply> {
    let Some(spec) = SPEC.get() else {
        return Ran::Here;
    };
    if input.bytes.len() as u64 > options.max_file_bytes || cancel.is_cancelled() {
        return Ran::Here;
    }
    let request = Request {
        job,
        name: input.name.to_owned(),
        declared_type: input.declared_type.map(str::to_owned),
        link: input.link.map(str::to_owned),
        options: options.clone(),
        size: input.bytes.len() as u64,
    };
    let Ok(mut line) = serde_json::to_vec(&request) else {
        return Ran::Died(CONFUSED.to_owned());
    };
    line.push(b'\n');
    // The clock runs over every worker the file is sent to; a recording to
    // transcribe gets twice its CPU budget on top.
    let started = Instant::now();
    let answer_cap = answer_cap(options);
    // First in a worker with no engine; again, in one that starts them,
    // when the file needed engines (each is added at most once).
    let mut engines = Engines::NONE;
    loop {
        let limits = Limits::of(options, engines, spec.warm > 0);
        let speech = if engines.has(Engine::Speech) {
            options.speech_cpu_seconds.saturating_mul(2)
        } else {
            0
        };
        let deadline = started
            + Duration::from_secs(options.worker_wall_seconds.max(1).saturating_add(speech));
        let child = match pool().take(spec, &limits) {
            Ok(child) => child,
            Err(error) => {
                return Ran::Died(format!(
                    "porter could not start the process that reads files ({error}); restart porter, and if that does not help, report it"
                ));
            }
        };
        let answered = match exchange(child, &line, input.bytes, deadline, answer_cap, cancel) {
            Exchange::Answer(bytes) => match serde_json::from_slice::<Answered>(&bytes) {
                Ok(answered) => answered,
                Err(_) => return Ran::Died(CONFUSED.to_owned()),
            },
            Exchange::Cancelled => return Ran::Answered(Err(ViewError::Cancelled)),
            Exchange::Died(death) => return Ran::Died(death.reason(options)),
        };
        engines::record_reported(answered.started);
        match answered.reply {
            Reply::Needs(needed) if !engines.covers(needed) => {
                engines = engines.union(needed);
            }
            Reply::Needs(_) => return Ran::Died(CONFUSED.to_owned()),
            reply => return Ran::Answered(Ok(reply)),
        }
    }
}

/// The most a worker's answer may be: every byte of the largest file may
/// become a six-character JSON escape, and blocks (an image, a PDF) add
/// their base64.
fn answer_cap(options: &Options) -> u64 {
    options
        .max_file_bytes
        .saturating_mul(6)
        .saturating_add(options.media_bytes.max(options.image_bytes) as u64 * 2)
        .saturating_add(16 * 1024 * 1024)
}

/// Why a worker gave no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Death {
    /// Past the clock deadline.
    Deadline,
    /// Past its CPU limit.
    Cpu,
    /// Out of its memory limit.
    Memory,
    /// Its stack overflowed.
    Stack,
    /// Its answer was over the cap.
    TooLarge,
    /// It could not confine itself; the reason follows.
    Unconfined(String),
    /// Anything else: a signal or an exit without an answer.
    Crashed(String),
}

impl Death {
    fn reason(&self, options: &Options) -> String {
        let why = match self {
            Self::Deadline => format!(
                "it took longer than {} s, the time porter gives one file",
                options.worker_wall_seconds
            ),
            Self::Cpu => format!(
                "it took more than {} s of CPU time",
                options.worker_cpu_seconds
            ),
            Self::Memory => format!(
                "it needed more than {} of memory",
                human_size(options.worker_memory_bytes)
            ),
            Self::Stack => "it is nested so deeply that it crashed the reader".to_owned(),
            Self::TooLarge => "what its reader made of it was far larger than expected".to_owned(),
            Self::Unconfined(why) => {
                return format!(
                    "porter could not confine the process that reads files ({why}), and reads no file without it; run porter where seccomp and resource limits are available"
                );
            }
            Self::Crashed(how) => format!("it crashed the reader ({how})"),
        };
        format!("porter could not read it: {why}")
    }
}

enum Exchange {
    Answer(Vec<u8>),
    Cancelled,
    Died(Death),
}

/// What the watchdog did to the child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stopped {
    No,
    Deadline,
    Cancelled,
    TooLarge,
}

/// Sends the request to the child, reads its answer, and waits for it,
/// killing it at the deadline or on cancellation.
fn exchange(
    mut child: Child,
    line: &[u8],
    bytes: &[u8],
    deadline: Instant,
    answer_cap: u64,
    cancel: &Cancel,
) -> Exchange {
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        let _ = child.kill();
        let _ = child.wait();
        return Exchange::Died(Death::Crashed("its pipes were missing".to_owned()));
    };
    let (tell, told) = mpsc::channel::<bool>();
    let watched_cancel = cancel.clone();
    let watchdog = std::thread::spawn(move || watch(child, &told, deadline, &watched_cancel));
    let told = cancel.clone();
    let (answering, heard) = mpsc::channel::<()>();
    let errors = std::thread::spawn(move || said(stderr, &told, &answering));
    // A worker that died before reading all of it closes the pipe; what it
    // says is learnt from its status below.
    let _ = stdin.write_all(line).and_then(|()| stdin.write_all(bytes));
    drop(stdin);
    let answer = read_answer(stdout, answer_cap);
    if matches!(answer, Answer::TooLarge) {
        let _ = tell.send(true);
    }
    let _ = tell.send(false);
    let Ok((mut child, stopped)) = watchdog.join() else {
        return Exchange::Died(Death::Crashed("its watchdog failed".to_owned()));
    };
    if stopped == Stopped::Cancelled {
        reap(child, errors);
        return Exchange::Cancelled;
    }
    if let Answer::Complete(answer) = answer {
        // Its last progress reports are passed on before its answer (the
        // line that says it is answering comes before the answer, so this
        // wait is short; it is bounded all the same).
        let _ = heard.recv_timeout(Duration::from_millis(500));
        // The worker is exiting; it is waited for off the caller's path.
        reap(child, errors);
        return Exchange::Answer(answer);
    }
    let status = child.wait();
    let said = errors.join().unwrap_or_default();
    match (stopped, status) {
        (Stopped::Deadline, _) => Exchange::Died(Death::Deadline),
        (Stopped::TooLarge, _) => Exchange::Died(Death::TooLarge),
        (_, Ok(status)) => Exchange::Died(death(status, &said)),
        (_, Err(error)) => {
            Exchange::Died(Death::Crashed(format!("waiting for it failed: {error}")))
        }
    }
}

/// Waits for a worker that has answered (or was told to stop) and for the
/// reader of its standard error, on one thread kept for that, so that no
/// worker is left a zombie.
fn reap(child: Child, errors: std::thread::JoinHandle<Vec<u8>>) {
    type Reaped = (Child, std::thread::JoinHandle<Vec<u8>>);
    static REAPER: OnceLock<Mutex<mpsc::Sender<Reaped>>> = OnceLock::new();
    let sender = REAPER.get_or_init(|| {
        let (send, receive) = mpsc::channel::<Reaped>();
        let _ = std::thread::Builder::new()
            .name("fileview-reaper".to_owned())
            .spawn(move || {
                for (mut child, errors) in receive {
                    let _ = child.wait();
                    let _ = errors.join();
                }
            });
        Mutex::new(send)
    });
    let unsent = match sender.lock() {
        Ok(sender) => sender.send((child, errors)).err().map(|e| e.0),
        Err(_) => Some((child, errors)),
    };
    if let Some((mut child, errors)) = unsent {
        let _ = child.wait();
        let _ = errors.join();
    }
}

/// What a worker says on standard error: its progress lines are passed on
/// to `cancel`'s progress hook as they come, `answering` is told when it
/// says it is answering, and of the rest the first [`STDERR_BYTES`] are
/// kept, to tell why it died.
fn said(
    stderr: std::process::ChildStderr,
    cancel: &Cancel,
    answering: &mpsc::Sender<()>,
) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut lines = io::BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        // A line is read whole only up to the cap; the rest of an
        // over-long one is read and dropped as the next "line".
        match (&mut lines).take(STDERR_BYTES).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.strip_suffix(b"\n") == Some(ANSWERING.as_bytes()) {
            let _ = answering.send(());
            continue;
        }
        if let Some(progress) = line.strip_prefix(PROGRESS.as_bytes()) {
            let progress = String::from_utf8_lossy(progress);
            let mut fields = progress.trim_end().splitn(3, '\t');
            let done = fields.next().and_then(|f| f.parse::<f64>().ok());
            let total = fields.next().and_then(|f| f.parse::<f64>().ok());
            if let (Some(done), Some(total)) = (done, total) {
                cancel.progress(done, total, fields.next().unwrap_or(""));
            }
            continue;
        }
        let room = STDERR_BYTES as usize - kept.len().min(STDERR_BYTES as usize);
        kept.extend_from_slice(&line[..line.len().min(room)]);
    }
    kept
}

/// `STDERR_BYTES` is how much of a worker's standard error is kept to tell
/// why it died.
const STDERR_BYTES: u64 = 64 * 1024;
/// `TICK` is how often the watchdog looks at the clock and the cancel flag.
const TICK: Duration = Duration::from_millis(20);

/// Waits until told the exchange is over (`false`) or to kill the child
/// (`true`, its answer was too large), killing it itself past the deadline
/// or on cancellation; hands the child back for `wait`.
fn watch(
    mut child: Child,
    told: &mpsc::Receiver<bool>,
    deadline: Instant,
    cancel: &Cancel,
) -> (Child, Stopped) {
    let mut stopped = Stopped::No;
    loop {
        match told.recv_timeout(TICK) {
            Ok(false) | Err(mpsc::RecvTimeoutError::Disconnected) => return (child, stopped),
            Ok(true) => {
                let _ = child.kill();
                stopped = Stopped::TooLarge;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if stopped != Stopped::No {
                    continue;
                }
                if cancel.is_cancelled() {
                    let _ = child.kill();
                    stopped = Stopped::Cancelled;
                } else if Instant::now() >= deadline {
                    let _ = child.kill();
                    stopped = Stopped::Deadline;
                }
            }
        }
    }
}

/// What came back on a worker's standard output.
enum Answer {
    /// All the bytes its length said.
    Complete(Vec<u8>),
    /// A length over the cap.
    TooLarge,
    /// Less than its length said, or nothing: the worker died.
    Short,
}

/// Reads the answer: its length (8 bytes, little-endian), then that many
/// bytes.
fn read_answer(mut stdout: ChildStdout, cap: u64) -> Answer {
    let mut length = [0u8; 8];
    // An error reading is a worker that went away; its status says more.
    if stdout.read_exact(&mut length).is_err() {
        return Answer::Short;
    }
    let length = u64::from_le_bytes(length);
    if length > cap {
        return Answer::TooLarge;
    }
    // Grown as the bytes arrive, not trusted up front.
    let mut answer = Vec::with_capacity(usize::try_from(length.min(1 << 20)).unwrap_or(0));
    let _ = stdout.take(length).read_to_end(&mut answer);
    if answer.len() as u64 == length {
        Answer::Complete(answer)
    } else {
        Answer::Short
    }
}

/// Why a worker that exited without an answer died, from its status and
/// what it wrote on standard error.
fn death(status: ExitStatus, said: &[u8]) -> Death {
    let said = String::from_utf8_lossy(said);
    if let Some(why) = said
        .lines()
        .find_map(|line| line.strip_prefix(CONFINE_FAILED))
    {
        return Death::Unconfined(why.to_owned());
    }
    if said.contains("memory allocation of") {
        return Death::Memory;
    }
    if said.contains("has overflowed its stack") {
        return Death::Stack;
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt as _;
        if let Some(signal) = status.signal() {
            if signal == libc::SIGXCPU {
                return Death::Cpu;
            }
            if signal == libc::SIGKILL {
                // Not porter's own kill (those are told apart before this),
                // and the CPU limit's SIGXCPU ends a worker before its hard
                // limit would: the system killed it, most often for memory.
                return Death::Crashed(
                    "the system killed it, most likely for lack of memory".to_owned(),
                );
            }
            return Death::Crashed(format!("signal {signal}"));
        }
    }
    match status.code() {
        Some(code) => Death::Crashed(format!("exit status {code}")),
        None => Death::Crashed("no status".to_owned()),
    }
}

/// Workers started and confined ahead of need.
struct Pool {
    idle: Mutex<Vec<(Limits, Child)>>,
    refilling: AtomicBool,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        idle: Mutex::new(Vec::new()),
        refilling: AtomicBool::new(false),
    })
}

impl Pool {
    /// A worker with these limits: a warm one when there is one still
    /// alive, else a new one; the pool is refilled in the background.
    fn take(&'static self, spec: &'static Spec, limits: &Limits) -> io::Result<Child> {
        let mut found = None;
        let mut dead = Vec::new();
        if let Ok(mut idle) = self.idle.lock() {
            while let Some(at) = idle.iter().position(|(l, _)| l == limits) {
                let (_, mut child) = idle.swap_remove(at);
                if matches!(child.try_wait(), Ok(None)) {
                    found = Some(child);
                    break;
                }
                dead.push(child);
            }
        }
        for mut child in dead {
            let _ = child.wait();
        }
        if spec.warm > 0 {
            self.refill(spec, limits.clone());
        }
        match found {
            Some(child) => Ok(child),
            None => start(spec, limits),
        }
    }

    /// Starts workers with `limits` on a background thread until as many
    /// wait as their class keeps (see [`kept`]). Idle workers started for
    /// other options (memory, CPU, languages) are let go first, oldest
    /// first; those of the same options with other engines stay, so that a
    /// server that has read a scan keeps one OCR-ready worker beside its
    /// plain ones instead of trading one kind for the other.
    fn refill(&'static self, spec: &'static Spec, limits: Limits) {
        if self.refilling.swap(true, Ordering::AcqRel) {
            return;
        }
        let started = std::thread::Builder::new()
            .name("fileview-pool".to_owned())
            .spawn(move || {
                loop {
                    let (have, evicted) = match self.idle.lock() {
                        Ok(mut idle) => {
                            let have = idle.iter().filter(|(l, _)| *l == limits).count();
                            let evicted = idle
                                .iter()
                                .position(|(l, _)| !l.same_options(&limits))
                                .map(|at| idle.remove(at).1);
                            (have, evicted)
                        }
                        Err(_) => break,
                    };
                    if let Some(mut old) = evicted {
                        // Its standard input closes with it: it exits.
                        drop(old.stdin.take());
                        let _ = old.wait();
                        continue;
                    }
                    if have >= kept(spec, &limits) {
                        break;
                    }
                    let Ok(child) = start(spec, &limits) else {
                        break;
                    };
                    match self.idle.lock() {
                        Ok(mut idle) => idle.push((limits.clone(), child)),
                        Err(_) => break,
                    }
                }
                self.refilling.store(false, Ordering::Release);
            });
        if started.is_err() {
            self.refilling.store(false, Ordering::Release);
        }
    }
}

/// How many idle workers with `limits` the pool keeps: `warm` of those
/// with no engine, which read most files, and one of each set of engines a
/// file has needed (each costs its engines' start and memory while it
/// waits).
fn kept(spec: &Spec, limits: &Limits) -> usize {
    if limits.engines.is_empty() {
        spec.warm
    } else {
        spec.warm.min(1)
    }
}

/// Starts one worker.
fn start(spec: &Spec, limits: &Limits) -> io::Result<Child> {
    Command::new(&spec.program)
        .arg(&spec.arg)
        .args(limits.to_args())
        // Fewer malloc arenas: each reserves 64 MiB of address space, which
        // would count against the worker's limit for nothing.
        .env("MALLOC_ARENA_MAX", "2")
        // Tesseract's OpenMP threads would only compete with the other
        // workers for the same cores, and each costs address space.
        .env("OMP_THREAD_LIMIT", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_cross_as_arguments_and_nothing_else_is_taken_for_them() {
        let limits = Limits {
            memory_bytes: 512 * 1024 * 1024,
            cpu_seconds: 10,
            ocr_languages: Some("eng+deu".to_owned()),
            engines: Engines::NONE.with(Engine::Ocr).with(Engine::Tables),
            warm: true,
            models_dir: Some(PathBuf::from("/srv/porter models")),
        };
        let args = limits.to_args();
        assert_eq!(Limits::from_args(args.clone()), Some(limits.clone()));
        let cold = Limits {
            engines: Engines::NONE,
            warm: false,
            models_dir: None,
            ..limits
        };
        assert_eq!(Limits::from_args(cold.to_args()), Some(cold));
        assert_eq!(Limits::from_args(args.into_iter().take(4)), None);
        let none = ["1", "2", "-", "-", "cold"].map(OsString::from);
        assert_eq!(Limits::from_args(none).and_then(|l| l.ocr_languages), None);
        let extra = ["1", "2", "3", "-", "cold", "/models", "x"].map(OsString::from);
        assert_eq!(Limits::from_args(extra), None);
        let bad = ["1", "2", "../x", "-", "cold"].map(OsString::from);
        assert_eq!(Limits::from_args(bad), None);
        let unknown = ["1", "2", "eng", "gpu", "cold"].map(OsString::from);
        assert_eq!(Limits::from_args(unknown), None);
        let lukewarm = ["1", "2", "eng", "ocr", "lukewarm"].map(OsString::from);
        assert_eq!(Limits::from_args(lukewarm), None);
        assert_eq!(Limits::from_args(["x", "2"].map(OsString::from)), None);
    }

    #[test]
    fn a_pool_keeps_its_warm_plain_workers_and_one_of_each_set_of_engines_needed() {
        let spec = Spec {
            program: PathBuf::from("porter"),
            arg: OsString::from("worker"),
            warm: WARM,
        };
        let plain = Limits::of(&Options::default(), Engines::NONE, true);
        let ocr = Limits::of(&Options::default(), Engines::NONE.with(Engine::Ocr), true);
        assert_eq!(kept(&spec, &plain), WARM);
        assert_eq!(kept(&spec, &ocr), 1);
        // Workers of the same options with other engines stay; those of
        // other options make room.
        assert!(plain.same_options(&ocr) && ocr.same_options(&plain));
        let smaller = Options {
            worker_memory_bytes: 64 * 1024 * 1024,
            ..Options::default()
        };
        assert!(!Limits::of(&smaller, Engines::NONE, true).same_options(&plain));
        let one_shot = Spec { warm: 0, ..spec };
        assert_eq!(kept(&one_shot, &ocr), 0);
    }

    #[test]
    fn a_prepared_file_crosses_the_pipe_and_answers_every_window_the_same() {
        let text = crate::text::numbered_lines("line ", 700);
        let input = FileInput::new(text.as_bytes(), "log.txt");
        let options = Options::default();
        let here =
            crate::read::prepare_here(&input, &options, &Cancel::new()).expect("text prepares");
        let wire = serde_json::to_vec(&Reply::Prepared(Box::new(WirePrep::from(here.clone()))))
            .expect("a reply serialises");
        let Ok(Reply::Prepared(back)) = serde_json::from_slice::<Reply>(&wire) else {
            panic!("the reply reads back");
        };
        let back = Prepared::from(*back);
        for start_line in [None, Some(501), Some(700)] {
            let request = crate::WindowRequest {
                start_line,
                line_count: None,
            };
            assert_eq!(
                back.view(&request, &options),
                here.view(&request, &options),
                "{start_line:?}"
            );
        }
    }

    #[test]
    fn a_request_reads_back_with_exactly_its_bytes() {
        let request = Request {
            job: Job::Markdown,
            name: "a\nb.txt".to_owned(),
            declared_type: None,
            link: Some("https://x.invalid/1".to_owned()),
            options: Options::default(),
            size: 5,
        };
        let mut wire = serde_json::to_vec(&request).expect("serialises");
        wire.push(b'\n');
        wire.extend_from_slice(b"12\n45");
        let (back, bytes) = read_request(&mut io::Cursor::new(&wire)).expect("reads back");
        assert_eq!(back.name, "a\nb.txt");
        assert_eq!(bytes, b"12\n45");
        wire.pop();
        assert!(read_request(&mut io::Cursor::new(&wire)).is_none());
    }

    #[test]
    fn a_dead_worker_is_told_apart_by_how_it_died() {
        use std::os::unix::process::ExitStatusExt as _;
        let options = Options::default();
        let abort = ExitStatus::from_raw(libc::SIGABRT);
        assert_eq!(
            death(abort, b"memory allocation of 1073741824 bytes failed\n").reason(&options),
            "porter could not read it: it needed more than 512 MiB of memory"
        );
        assert_eq!(
            death(
                abort,
                b"\nthread 'main' has overflowed its stack\nfatal runtime error: stack overflow\n"
            ),
            Death::Stack
        );
        assert_eq!(
            death(ExitStatus::from_raw(libc::SIGXCPU), b"").reason(&options),
            "porter could not read it: it took more than 10 s of CPU time"
        );
        assert_eq!(
            death(ExitStatus::from_raw(libc::SIGSEGV), b""),
            Death::Crashed(format!("signal {}", libc::SIGSEGV))
        );
    }
}
