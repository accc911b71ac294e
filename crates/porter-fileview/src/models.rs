//! Where the learned models are (the table-structure model, the speech
//! model): the folder an [`Options::models_dir`] names, else the one the
//! program installed for the whole process with [`install_models`] (porter
//! passes `PORTER_MODELS_DIR`, else its data folder; see `docs/models.md`).
//! This crate never looks for a folder on its own, and reads nothing in it
//! until a file needs a model: then, in a confined worker, the model is an
//! engine loaded before the worker confines itself (see
//! [`crate::engines`]), and the worker is told the folder as an argument.

// Without a model-reading feature, only the folder itself is kept.
#![cfg_attr(not(any(feature = "speech", feature = "tables")), allow(dead_code))]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::options::Options;

static DIR: OnceLock<PathBuf> = OnceLock::new();

/// Says where the learned models are, for the rest of the process, where
/// an [`Options`] names none. Only the first call counts.
pub fn install_models(dir: PathBuf) {
    let _ = DIR.set(dir);
}

/// The models folder installed for the process, if any.
#[must_use]
pub fn models_dir() -> Option<&'static Path> {
    DIR.get().map(PathBuf::as_path)
}

/// The models folder for a file read with `options`.
pub(crate) fn dir_for(options: &Options) -> Option<&Path> {
    match &options.models_dir {
        Some(dir) => Some(dir),
        None => models_dir(),
    }
}

/// Whether `file` (a path inside a models folder) is in `dir`, looked up
/// once per process: a confined worker, which can look at no file, looks
/// before it confines itself, and reads the answer after.
pub(crate) fn has(dir: &Path, file: &str) -> bool {
    static SEEN: Mutex<Option<HashMap<PathBuf, bool>>> = Mutex::new(None);
    let path = dir.join(file);
    let mut seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
    *seen
        .get_or_insert_with(HashMap::new)
        .entry(path)
        .or_insert_with_key(|path| path.is_file())
}

/// A model loaded from one folder, kept for the process: loaded on first
/// need, and loaded again only for another folder (a test, a library user
/// with two). The reason it could not load is kept and given again rather
/// than tried again.
pub(crate) struct Cache<T> {
    last: Mutex<Option<(PathBuf, Loaded<T>)>>,
}

/// A model loaded, or the reason it could not be.
pub(crate) type Loaded<T> = Result<Arc<T>, String>;

impl<T> Cache<T> {
    pub(crate) const fn new() -> Self {
        Self {
            last: Mutex::new(None),
        }
    }

    /// The model of `dir`, loaded with `load` unless it was already.
    pub(crate) fn get(
        &self,
        dir: &Path,
        load: impl FnOnce(&Path) -> Result<T, String>,
    ) -> Loaded<T> {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((loaded_from, loaded)) = last.as_ref()
            && loaded_from == dir
        {
            return loaded.clone();
        }
        let loaded = load(dir).map(Arc::new);
        *last = Some((dir.to_owned(), loaded.clone()));
        loaded
    }
}
