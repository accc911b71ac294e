//! What every long-running subcommand needs of the process: logging to
//! stderr, the async runtime, and the hint for an address already taken.

use std::process::ExitCode;

/// Logs to stderr (stdout carries only JSON-RPC over stdio), filtered by
/// `RUST_LOG` or else by `default`.
pub(crate) fn init_logging(default: &str) {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default)),
        )
        .init();
}

/// The multi-threaded tokio runtime a command runs on; when it cannot
/// start, says so on stderr and gives exit code 1 to return.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| {
            eprintln!("porter: cannot start the async runtime: {error}");
            ExitCode::from(1)
        })
}

/// `busy_hint` is what to do when a listener could not bind because the
/// address is taken (`next` names the option to change); nothing otherwise.
pub(crate) fn busy_hint(error: &std::io::Error, next: &str) -> String {
    if error.kind() == std::io::ErrorKind::AddrInUse {
        format!("; another program listens there: {next}")
    } else {
        String::new()
    }
}
