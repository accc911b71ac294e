//! For checking this crate's runtime against ONNX Runtime (see
//! `bench/table-model`): reads pictures of tables (binary PGM files) and,
//! for each, writes the model's input as little-endian floats to
//! `OUT_DIR/NAME.f32` and prints one JSON line with the tokens and boxes
//! the model gave and the seconds the read took.
//! `table_tokens MODELS_DIR OUT_DIR A.pgm [B.pgm ...]`.

use std::fmt::Write as _;
use std::time::Instant;

use porter_vision::{Budget, Picture, TableModel};

#[path = "common/pgm.rs"]
mod pgm;
use pgm::pgm;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, dir, out_dir, pictures @ ..] = &args[..] else {
        return Err("usage: table_tokens MODELS_DIR OUT_DIR A.pgm [B.pgm ...]".into());
    };
    let started = Instant::now();
    let model = TableModel::load(std::path::Path::new(dir))?;
    eprintln!("load {:.3} s", started.elapsed().as_secs_f64());
    for path in pictures {
        let bytes = std::fs::read(path)?;
        let (width, height, grey) = pgm(&bytes).ok_or("not a binary PGM")?;
        let picture = Picture {
            width,
            height,
            grey,
        };
        let (_, input) = TableModel::input_of(&picture)?;
        let name = std::path::Path::new(path)
            .file_stem()
            .and_then(|s| s.to_str())
            .ok_or("a file name")?;
        let raw: Vec<u8> = input.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(
            std::path::Path::new(out_dir).join(format!("{name}.f32")),
            raw,
        )?;
        let started = Instant::now();
        let tokens = model.read_tokens(&picture, &Budget::default())?;
        let seconds = started.elapsed().as_secs_f64();
        let mut line = format!("{{\"name\":\"{name}\",\"seconds\":{seconds:.4},\"tokens\":[");
        for (i, (token, _)) in tokens.iter().enumerate() {
            write!(line, "{}{token}", if i > 0 { "," } else { "" })?;
        }
        line.push_str("],\"boxes\":[");
        for (i, (_, corners)) in tokens.iter().enumerate() {
            let values: Vec<String> = corners.iter().map(|v| format!("{v:e}")).collect();
            write!(
                line,
                "{}[{}]",
                if i > 0 { "," } else { "" },
                values.join(",")
            )?;
        }
        line.push_str("]}");
        println!("{line}");
    }
    Ok(())
}
