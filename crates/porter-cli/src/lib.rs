//! The `porter` command. Thin by design: this file parses the arguments and
//! hands each subcommand to its own module (`view`, `extract`, `mmsim`,
//! `mattermost`, `gateway`), which reads the environment and wires the crate
//! that does the work; `process` holds what they share about the process
//! (logging, the async runtime). Every rule about files and tools lives in
//! those crates.

mod extract;
mod gateway;
mod login;
mod mattermost;
mod mmsim;
mod models;
mod output;
mod process;
mod serve;
mod view;
mod worker;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Files for MCP without passing bytes through the model.
#[derive(Debug, Parser)]
#[command(name = "porter", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show a file the way a model receives it: text windows, extracted
    /// document text, archive listings, scaled images, or a description.
    View(view::ViewArgs),
    /// Turn a document (DOCX, XLSX/XLS/ODS, PPTX, HTML, PDF, text) into
    /// Markdown: headings, lists, tables, links, slides, sheets and pages.
    Extract(extract::ExtractArgs),
    /// Run the Mattermost API emulator on loopback, for trying porter (and
    /// Mattermost clients) without a Mattermost server.
    Mmsim(mmsim::MmsimArgs),
    /// The MCP server for Mattermost, configured by MM_URL, MM_TOKEN and
    /// the MM_MCP_* variables.
    Mattermost(mattermost::MattermostArgs),
    /// The MCP gateway: other MCP servers behind one, with the files their
    /// tools return kept in the run's inbox instead of the model's context.
    Gateway(gateway::GatewayArgs),
}

/// Runs the `porter` command (or, when started as one, a file view worker)
/// and gives the process's exit code.
#[must_use]
pub fn main() -> ExitCode {
    if let Some(code) = worker::run_if_worker() {
        return code;
    }
    // Where the models are, for this process; a worker is told by its
    // arguments, and loads a model from there before it confines itself.
    models::install();
    let cli = Cli::parse();
    match cli.command {
        Command::View(args) => {
            one_file_logging();
            let code = match view::run(&args) {
                Ok(code) => code,
                Err(error) => output::failed(&error),
            };
            report_engines();
            code
        }
        Command::Extract(args) => {
            one_file_logging();
            let code = extract::run(&args);
            report_engines();
            code
        }
        Command::Mmsim(args) => mmsim::run(&args),
        Command::Mattermost(args) => mattermost::run(args),
        Command::Gateway(args) => gateway::run(args),
    }
}

/// `view` and `extract` log to stderr only when `RUST_LOG` asks them to, so
/// that what they print stays exactly the file's.
fn one_file_logging() {
    if std::env::var_os("RUST_LOG").is_some() {
        process::init_logging("warn");
    }
}

/// Says, at debug level, which engines (OCR's Tesseract) reading the file
/// started, in this process and in its workers: none for a born-digital
/// document or a photo without text. `RUST_LOG=porter=debug` shows it.
fn report_engines() {
    tracing::debug!(
        "file view engines started: {}",
        porter_fileview::engines::started()
    );
}
