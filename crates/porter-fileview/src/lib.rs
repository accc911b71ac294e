//! Turns a file's bytes into what a model can use.
#![allow(dead_code)]

mod archive;
mod bounds;
mod content;
mod office;
mod options;
mod picture;

pub use bounds::Cancel;
pub use content::{Block, ImageRecord, Kind, Record, ResourceBlob, Shown, View, WindowRecord};
pub use options::*;
