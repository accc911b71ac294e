//! `porter view`: a file the way a model receives it.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;
use porter_fileview::{
    Block, Cancel, FileInput, Options, View, ViewError, WindowRequest, human_size,
};
use porter_paths::{Contents, read_ordinary};

use crate::output;

#[derive(Debug, Args)]
pub(crate) struct ViewArgs {
    /// The file to show.
    file: PathBuf,
    /// First line of the window, counted from 1.
    #[arg(
        long,
        value_name = "N",
        visible_aliases = ["start", "from", "line"],
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    start_line: Option<u64>,
    /// Lines in the window (500 by default, 2000 at most).
    #[arg(
        long,
        short = 'n',
        value_name = "N",
        visible_aliases = ["lines", "count"],
        value_parser = clap::value_parser!(u64).range(1..)
    )]
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

/// Exit 0 for any file the view could describe, 2 for a window the file
/// does not have, 1 (through `Err`) when the file cannot be read.
pub(crate) fn run(args: &ViewArgs) -> anyhow::Result<ExitCode> {
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
