//! The file view's worker: `porter __fileview-worker MEMORY CPU OCR-LANGUAGES` reads one
//! file in a confined process (see `porter_fileview::worker`), and every
//! other porter command installs it so that the files it views or extracts
//! are read there rather than in porter's own process.

use std::ffi::OsStr;
use std::process::ExitCode;

/// `ARG` is the hidden subcommand a worker is started with; no person
/// types it.
const ARG: &str = "__fileview-worker";

/// Serves as a worker when started as one, returning its exit code; else
/// installs the worker for this process and returns `None`.
pub(crate) fn run_if_worker() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    let first = args.next();
    if first.as_deref() == Some(OsStr::new(ARG)) {
        return Some(ExitCode::from(porter_fileview::worker::serve(args)));
    }
    // `view` and `extract` read one file and exit: a pool kept warm for a
    // next file would only be started to be thrown away.
    let one_shot = matches!(
        first.as_deref().and_then(OsStr::to_str),
        Some("view" | "extract")
    );
    match std::env::current_exe() {
        Ok(program) => porter_fileview::worker::install(porter_fileview::worker::Spec {
            program,
            arg: ARG.into(),
            warm: if one_shot {
                0
            } else {
                porter_fileview::worker::WARM
            },
        }),
        Err(error) => eprintln!(
            "porter: cannot find its own program ({error}), so files are read without the confined worker"
        ),
    }
    None
}
