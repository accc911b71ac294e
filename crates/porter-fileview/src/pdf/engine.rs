//! Where the PDF reader gets the table model: the one place that knows how
//! it is loaded. It is an engine (see [`crate::engines`]): loaded once per
//! process from the models folder (see [`crate::models`]), the first time
//! a page has a table for it; in a confined worker, which can open no
//! file, before the worker confines itself, in a worker started for it. A
//! PDF whose pages have no table never loads it.

use porter_vision::TableModel;

use crate::engines::{self, Engine};
use crate::models::{self, Cache};
use crate::options::Options;

/// What loading the model gave: the model, or why not (one sentence,
/// naming the file and what to do).
type Loaded = models::Loaded<TableModel>;

static MODEL: Cache<TableModel> = Cache::new();

/// The table model for `options`, loaded on the first call and kept for the
/// process (the same reason on every later call when it cannot load);
/// `None` when this confined worker was started without it, which then
/// asks for it (the file is read again in a worker that loaded it).
pub(crate) fn table_model(options: &Options) -> Option<Loaded> {
    let Some(dir) = models::dir_for(options) else {
        return Some(Err("no models folder is set (PORTER_MODELS_DIR)".to_owned()));
    };
    if !models::has(dir, porter_vision::TABLE_MODEL_FILE) {
        return Some(Err(format!(
            "{} is not installed in {} (run scripts/models.sh from porter's source)",
            porter_vision::TABLE_MODEL_FILE,
            dir.display()
        )));
    }
    if !engines::ready(Engine::Tables) {
        return None;
    }
    Some(MODEL.get(dir, |dir| {
        let model = TableModel::load(dir).map_err(|e| e.to_string())?;
        engines::record_start(Engine::Tables);
        Ok(model)
    }))
}

/// Loads the model from the process's models folder, for a worker about to
/// confine itself that was started to read tables with it.
pub(crate) fn preload() -> Result<(), String> {
    match table_model(&Options::default()) {
        Some(loaded) => loaded.map(drop),
        None => Err("the worker is already confined".to_owned()),
    }
}

/// Looks once whether the model is installed, for a worker about to
/// confine itself: without it, a page's tables are read by the rules at
/// once, with no engine asked for.
pub(crate) fn look_for_model() {
    if let Some(dir) = models::models_dir() {
        let _ = models::has(dir, porter_vision::TABLE_MODEL_FILE);
    }
}
