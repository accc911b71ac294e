//! Reads a picture of a table (a binary PGM file) with the table model and
//! prints the time it took and the cells it found. For measuring the
//! runtime by hand: `read_table MODELS_DIR TABLE.pgm [RUNS]`.

use std::time::Instant;

use porter_vision::{Budget, Picture, TableModel};

#[path = "common/pgm.rs"]
mod pgm;
use pgm::pgm;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, dir, picture, ..] = &args[..] else {
        return Err("usage: read_table MODELS_DIR TABLE.pgm [RUNS]".into());
    };
    let runs: usize = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(3);
    let started = Instant::now();
    let model = TableModel::load(std::path::Path::new(dir))?;
    println!("load {:.3} s", started.elapsed().as_secs_f64());
    let bytes = std::fs::read(picture)?;
    let (width, height, grey) = pgm(&bytes).ok_or("not a binary PGM")?;
    for _ in 0..runs {
        let started = Instant::now();
        let table = model.read(
            &Picture {
                width,
                height,
                grey,
            },
            &Budget::default(),
        )?;
        println!(
            "read {:.3} s: {} passes, {} rows, {} columns, {} cells",
            started.elapsed().as_secs_f64(),
            table.passes,
            table.rows,
            table.columns,
            table.cells.len()
        );
        if let Some(cell) = table.cells.first() {
            println!("first cell {cell:?}");
        }
    }
    Ok(())
}
