//! Where porter's learned models are: `PORTER_MODELS_DIR`, else
//! `$XDG_DATA_HOME/porter/models`, else `~/.local/share/porter/models`,
//! the folder `scripts/models.sh` installs them into (docs/models.md).
//! Told to the file view once at start, in every porter process and in its
//! workers (which load a model before they confine themselves); nothing is
//! read until a file needs a model.

use std::path::PathBuf;

/// The models folder from the environment, as above; `None` without any
/// of those variables (no home to look in).
pub(crate) fn models_dir() -> Option<PathBuf> {
    models_dir_of(&|name| std::env::var_os(name).filter(|v| !v.is_empty()))
}

/// Tells the file view where the models are.
pub(crate) fn install() {
    if let Some(dir) = models_dir() {
        porter_fileview::install_models(dir);
    }
}

fn models_dir_of(vars: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    if let Some(dir) = vars("PORTER_MODELS_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(data) = vars("XDG_DATA_HOME") {
        return Some(PathBuf::from(data).join("porter/models"));
    }
    vars("HOME").map(|home| PathBuf::from(home).join(".local/share/porter/models"))
}

#[cfg(test)]
mod tests {
    use super::models_dir_of;
    use std::ffi::OsString;
    use std::path::PathBuf;

    #[test]
    fn the_models_folder_is_the_variable_then_the_data_dir_then_home() {
        let of = |pairs: &[(&str, &str)]| {
            let pairs: Vec<(String, OsString)> = pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), OsString::from(v)))
                .collect();
            models_dir_of(&move |name| {
                pairs
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
            })
        };
        assert_eq!(
            of(&[
                ("PORTER_MODELS_DIR", "/m"),
                ("XDG_DATA_HOME", "/x"),
                ("HOME", "/h")
            ]),
            Some(PathBuf::from("/m"))
        );
        assert_eq!(
            of(&[("XDG_DATA_HOME", "/x"), ("HOME", "/h")]),
            Some(PathBuf::from("/x/porter/models"))
        );
        assert_eq!(
            of(&[("HOME", "/h")]),
            Some(PathBuf::from("/h/.local/share/porter/models"))
        );
        assert_eq!(of(&[]), None);
    }
}
