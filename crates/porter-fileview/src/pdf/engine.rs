//! Where the PDF reader gets the table model: the one place that knows how
//! a model is loaded, so that the worker's own way of starting engines
//! before it confines itself (issue 33) replaces only this file.
//!
//! Today the model is loaded on first need, once per process, from
//! [`Options::models_dir`](crate::Options::models_dir), and kept for the
//! process's life. A confined worker can open no file, so there the load
//! fails and says so, and tables are read by the layout rules.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use porter_vision::TableModel;

/// What loading the model from one folder gave: the model, or why not.
type Loaded = Result<Arc<TableModel>, String>;

/// The last folder a model was loaded from, and what that gave.
static LOADED: Mutex<Option<(PathBuf, Loaded)>> = Mutex::new(None);

/// The table model of `dir`, loaded on the first call for that folder;
/// the reason (one sentence, naming the file and what to do) when it cannot
/// be loaded, given again on every later call rather than tried again.
pub(crate) fn table_model(dir: &Path) -> Loaded {
    let mut slot = LOADED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((loaded_dir, loaded)) = slot.as_ref()
        && loaded_dir == dir
    {
        return loaded.clone();
    }
    let loaded = TableModel::load(dir)
        .map(Arc::new)
        .map_err(|e| e.to_string());
    *slot = Some((dir.to_owned(), loaded.clone()));
    loaded
}
