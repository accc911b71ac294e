//! `porter extract FILE [-o OUT.md]`: a document as Markdown, on standard
//! output or into a file, with the notes on what was left out on standard
//! error.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;
use porter_fileview::{Cancel, FileInput, Markdown, Options, ViewError, to_markdown};
use porter_paths::{Contents, read_ordinary};

/// Arguments of `porter extract`.
#[derive(Debug, Args)]
pub(crate) struct ExtractArgs {
    /// The document: DOCX, XLSX/XLS/ODS, PPTX, HTML, PDF (scanned pages
    /// read by OCR), plain text, Markdown, or an image of text (read by OCR);
    /// told by its bytes, not its name.
    file: PathBuf,
    /// Write the Markdown here instead of standard output (replacing the
    /// file if it exists).
    #[arg(short = 'o', long = "output", value_name = "OUT.md")]
    output: Option<PathBuf>,
}

/// Runs `porter extract`: exit 0 with the Markdown written, 1 with the
/// reason on stderr when it is not (a file of a kind extract does not read,
/// one that cannot be read as its kind, or a file or output that cannot be
/// opened). Exit 2 is left to the command line's own usage errors.
pub(crate) fn run(args: &ExtractArgs) -> ExitCode {
    match extract(args) {
        Ok(code) => code,
        Err(error) => crate::output::failed(&error),
    }
}

fn extract(args: &ExtractArgs) -> anyhow::Result<ExitCode> {
    let options = Options::default();
    let name = file_name(&args.file);
    let contents =
        read_ordinary(&args.file, options.max_file_bytes).context("cannot read the file")?;
    let bytes = match contents {
        Contents::Bytes(bytes) => bytes,
        Contents::TooLarge { size } => {
            eprintln!(
                "porter: {name} is {}, larger than the {} extract reads",
                porter_fileview::human_size(size),
                porter_fileview::human_size(options.max_file_bytes)
            );
            return Ok(ExitCode::FAILURE);
        }
    };
    let input = FileInput::new(&bytes, &name);
    let markdown = match to_markdown(&input, &options, &Cancel::new()) {
        Ok(markdown) => markdown,
        Err(error @ (ViewError::NotExtractable { .. } | ViewError::Unreadable { .. })) => {
            eprintln!(
                "porter: {}",
                crate::output::terminal_safe(&error.to_string())
            );
            return Ok(ExitCode::FAILURE);
        }
        Err(error) => return Err(error.into()),
    };
    write_markdown(&markdown, args.output.as_deref())?;
    for note in &markdown.notes {
        eprintln!("porter: note: {}", crate::output::terminal_safe(note));
    }
    Ok(ExitCode::SUCCESS)
}

/// The file's own name, for messages and as the type hint.
fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Writes the Markdown to `output` as it is, or to standard output with
/// control characters made visible (see [`crate::output::terminal_safe`]).
fn write_markdown(markdown: &Markdown, output: Option<&Path>) -> anyhow::Result<()> {
    if let Some(path) = output {
        return std::fs::write(path, markdown.text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()));
    }
    let mut out = std::io::stdout().lock();
    out.write_all(crate::output::terminal_safe(&markdown.text).as_bytes())
        .and_then(|()| out.flush())
        .context("cannot write to standard output")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_is_written_to_the_output_file_and_an_image_is_refused_with_code_2() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let page = dir.path().join("page.html");
        std::fs::write(
            &page,
            "<h1>Head</h1><p><a href=\"https://a.example/\">link</a></p>",
        )
        .expect("the temp dir is writable");
        let out = dir.path().join("page.md");
        let code = run(&ExtractArgs {
            file: page,
            output: Some(out.clone()),
        });
        assert_eq!(code, ExitCode::SUCCESS);
        let written = std::fs::read_to_string(&out).expect("the Markdown was written");
        assert_eq!(written, "# Head\n\n[link](https://a.example/)\n");

        let picture = dir.path().join("x.png");
        std::fs::write(&picture, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").expect("writable");
        let code = run(&ExtractArgs {
            file: picture,
            output: Some(dir.path().join("x.md")),
        });
        assert_eq!(code, ExitCode::FAILURE);
        assert!(!dir.path().join("x.md").exists());
    }
}
