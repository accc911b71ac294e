//! The `porter` command. Thin by design: it parses arguments, reads the
//! file through `porter-paths`, hands the bytes to `porter-fileview` and
//! prints what comes back; `porter mattermost` ([`mattermost`]) reads the
//! environment into settings and wires the MCP server of
//! `porter-mattermost-mcp`. Every rule
//! about files and tools lives in those crates.

mod extract;
mod gateway;
mod login;
mod mattermost;
mod output;
mod serve;
mod worker;

use std::fmt::Write as _;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};
use porter_fileview::{
    Block, Cancel, FileInput, Options, View, ViewError, WindowRequest, human_size,
};
use porter_paths::{Contents, read_ordinary};

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
    View(ViewArgs),
    /// Turn a document (DOCX, XLSX/XLS/ODS, PPTX, HTML, PDF, text) into
    /// Markdown: headings, lists, tables, links, slides, sheets and pages.
    Extract(extract::ExtractArgs),
    /// Run the Mattermost API emulator on loopback, for trying porter (and
    /// Mattermost clients) without a Mattermost server.
    Mmsim(MmsimArgs),
    /// The MCP server for Mattermost, configured by MM_URL, MM_TOKEN and
    /// the MM_MCP_* variables.
    Mattermost(mattermost::MattermostArgs),
    /// The MCP gateway: other MCP servers behind one, with the files their
    /// tools return kept in the run's inbox instead of the model's context.
    Gateway(gateway::GatewayArgs),
}

#[derive(Debug, Args)]
struct MmsimArgs {
    /// Where to listen; port 0 picks a free one. Loopback only, because the
    /// emulator's tokens are public.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// `demo` for the built-in teams, channels, users, posts and files, or
    /// the path of a YAML/JSON seed file.
    #[arg(long, value_name = "FILE|demo", default_value = "demo")]
    seed: String,
}

#[derive(Debug, Args)]
struct ViewArgs {
    /// The file to show.
    file: PathBuf,
    /// First line of the window, counted from 1.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    start_line: Option<u64>,
    /// Lines in the window (500 by default, 2000 at most).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    line_count: Option<u64>,
    /// The name to show and to take a type hint from (default: the file's own).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// The media type the file's source declared, to be checked against its bytes.
    #[arg(long = "type", value_name = "MIME")]
    declared_type: Option<String>,
    /// Where a person can open the file; added to descriptions.
    #[arg(long, value_name = "URL")]
    link: Option<String>,
    /// Print one JSON object: {"content": [MCP content blocks], "structured": {...}}.
    #[arg(long)]
    json: bool,
}

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

fn main() -> ExitCode {
    if let Some(code) = worker::run_if_worker() {
        return code;
    }
    let cli = Cli::parse();
    match cli.command {
        Command::View(args) => match run_view(&args) {
            Ok(code) => code,
            Err(error) => output::failed(&error),
        },
        Command::Extract(args) => extract::run(&args),
        Command::Mmsim(args) => run_mmsim(&args),
        Command::Mattermost(args) => mattermost::run(args),
        Command::Gateway(args) => gateway::run(args),
    }
}

/// Serves the emulator until interrupted: exit 0 after Ctrl-C, 2 for a bad
/// seed or a non-loopback address, 1 when it cannot listen.
fn run_mmsim(args: &MmsimArgs) -> ExitCode {
    if !args.listen.ip().is_loopback() {
        eprintln!(
            "porter: the emulator listens on loopback only (its tokens are public); pass --listen 127.0.0.1:PORT"
        );
        return ExitCode::from(2);
    }
    let seed = if args.seed == "demo" {
        porter_mmsim::Seed::demo()
    } else {
        match porter_mmsim::Seed::from_path(std::path::Path::new(&args.seed)) {
            Ok(seed) => seed,
            Err(error) => {
                eprintln!("porter: {error}");
                return ExitCode::from(2);
            }
        }
    };
    let user = seed
        .users
        .iter()
        .find(|u| !u.deleted && (u.token.is_some() || !u.tokens.is_empty()))
        .map(|u| {
            (
                u.username.clone(),
                u.token.clone().or_else(|| u.tokens.first().cloned()),
            )
        });
    let sim = match porter_mmsim::Sim::new(&seed) {
        Ok(sim) => sim,
        Err(error) => {
            eprintln!("porter: {error}");
            return ExitCode::from(2);
        }
    };
    let runtime = match crate::runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    runtime.block_on(async move {
        let running = match porter_mmsim::start(sim, args.listen).await {
            Ok(running) => running,
            Err(error) => {
                eprintln!(
                    "porter: cannot listen on {}: {error}{}",
                    args.listen,
                    busy_hint(
                        &error,
                        "pass another --listen address (--listen 127.0.0.1:0 picks a free port)"
                    )
                );
                return ExitCode::from(1);
            }
        };
        let mut announced = format!("MM_URL={}\n", running.url);
        if let Some((username, Some(token))) = user {
            let _ = write!(
                announced,
                "MM_TOKEN={token}\n# the token signs in as {username}; stop the emulator with Ctrl-C\n"
            );
        }
        // The announcement is a courtesy: with no one reading it (the
        // reader went away) the emulator still serves until Ctrl-C.
        let _ = output::print(&announced);
        let _ = tokio::signal::ctrl_c().await;
        running.shutdown().await;
        ExitCode::SUCCESS
    })
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

/// Exit 0 for any file the view could describe, 2 for a window the file
/// does not have, 1 (through `Err`) when the file cannot be read.
fn run_view(args: &ViewArgs) -> anyhow::Result<ExitCode> {
    let options = Options::default();
    let name = args.name.clone().unwrap_or_else(|| {
        args.file.file_name().map_or_else(
            || args.file.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    });
    let contents =
        read_ordinary(&args.file, options.max_file_bytes).context("cannot read the file")?;
    let view = match contents {
        Contents::TooLarge { size } => porter_fileview::describe_too_large(
            &name,
            size,
            args.declared_type.as_deref(),
            args.link.as_deref(),
            &options,
        ),
        Contents::Bytes(bytes) => {
            let input = FileInput {
                bytes: &bytes,
                name: &name,
                declared_type: args.declared_type.as_deref(),
                link: args.link.as_deref(),
            };
            let window = WindowRequest {
                start_line: args.start_line,
                line_count: args.line_count,
            };
            match porter_fileview::view(&input, &window, &options, &Cancel::new()) {
                Ok(view) => view,
                Err(error @ (ViewError::PastEnd { .. } | ViewError::BadWindow { .. })) => {
                    eprintln!("porter: {error}");
                    return Ok(ExitCode::from(2));
                }
                Err(error) => return Err(error.into()),
            }
        }
    };
    let mut text = Vec::new();
    if args.json {
        serde_json::to_writer(&mut text, &view).context("cannot write the JSON")?;
        text.push(b'\n');
    } else {
        print_plain(&mut text, &view).context("cannot write the text")?;
    }
    let mut out = std::io::stdout().lock();
    out.write_all(&text)
        .and_then(|()| out.flush())
        .context("cannot write to standard output")?;
    Ok(ExitCode::SUCCESS)
}

/// Text blocks as they are; one line for each other block.
fn print_plain(out: &mut impl std::io::Write, view: &View) -> std::io::Result<()> {
    for block in &view.content {
        match block {
            Block::Text { text } => {
                out.write_all(output::terminal_safe(text).as_bytes())?;
                if !text.ends_with('\n') {
                    writeln!(out)?;
                }
            }
            Block::Image { data, mime_type } | Block::Audio { data, mime_type } => {
                writeln!(
                    out,
                    "[{} {mime_type}, {}]",
                    block.kind(),
                    human_size(base64_len(data))
                )?;
            }
            Block::Resource { resource } => {
                writeln!(
                    out,
                    "[resource {}, {}]",
                    resource.mime_type,
                    human_size(base64_len(&resource.blob))
                )?;
            }
        }
    }
    Ok(())
}

/// The number of bytes a padded base64 string decodes to.
fn base64_len(data: &str) -> u64 {
    let padding = data.bytes().rev().take_while(|&b| b == b'=').count() as u64;
    (data.len() as u64 / 4) * 3 - padding
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decoded_size_of_base64_accounts_for_padding() {
        for (encoded, bytes) in [
            ("", 0),
            ("YQ==", 1),
            ("YWI=", 2),
            ("YWJj", 3),
            ("YWJjZA==", 4),
        ] {
            assert_eq!(base64_len(encoded), bytes, "{encoded}");
        }
    }
}
