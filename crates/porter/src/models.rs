//! Where the speech model is: `PORTER_MODELS_DIR`, else
//! `$XDG_DATA_HOME/porter/models` (`~/.local/share/porter/models`), the
//! directory `scripts/models.sh` installs Whisper tiny.en into. Told to
//! the file view once at start; nothing is read until a recording needs
//! the model.

use std::path::PathBuf;

/// The models directory this process uses.
pub(crate) fn models_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("PORTER_MODELS_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|home| PathBuf::from(home).join(".local/share"))
        })?;
    Some(data.join("porter").join("models"))
}

/// Tells the file view where the models are.
pub(crate) fn install() {
    if let Some(dir) = models_dir() {
        porter_fileview::speech::install_models(dir);
    }
}
