//! Where `porter mattermost login` keeps a token: the OS keychain (Secret
//! Service on Linux, Keychain on macOS, Credential Manager on Windows),
//! one entry per Mattermost URL, behind the small [`TokenStore`] trait so
//! tests can use a file instead ([`FileStore`]).
//!
//! A token is only ever handed over as a [`Token`], whose formatting hides
//! it; no error here carries one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::Token;

/// `SERVICE` is the keychain service name every entry is filed under.
pub const SERVICE: &str = "porter-mattermost";

/// `KeychainError` says why a token could not be read, stored or removed,
/// and what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum KeychainError {
    /// There is no keychain to use (no Secret Service running, no session
    /// bus, a locked or refused store).
    #[error(
        "no OS keychain is available here ({reason}); set MM_TOKEN to a personal access token instead"
    )]
    Unavailable {
        /// What the keychain said.
        reason: String,
    },
    /// The keychain answered with an error.
    #[error("the OS keychain failed: {reason}")]
    Failed {
        /// What the keychain said.
        reason: String,
    },
    /// The test store's file could not be read or written.
    #[error("the token file {path} could not be used: {reason}")]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// `TokenStore` keeps one token per Mattermost URL.
pub trait TokenStore: Send + Sync {
    /// The token stored for `url`, if any.
    fn get(&self, url: &str) -> Result<Option<Token>, KeychainError>;
    /// Stores `token` for `url`, replacing any earlier one.
    fn set(&self, url: &str, token: &Token) -> Result<(), KeychainError>;
    /// Removes the token for `url`; answers whether there was one.
    fn delete(&self, url: &str) -> Result<bool, KeychainError>;
    /// Where the tokens are kept, for messages ("the OS keychain").
    fn describe(&self) -> String;
}

/// `OsKeychain` is the platform's keychain, through the `keyring` crate.
#[derive(Debug, Default, Clone, Copy)]
pub struct OsKeychain;

impl OsKeychain {
    fn entry(url: &str) -> Result<keyring::Entry, KeychainError> {
        keyring::Entry::new(SERVICE, url).map_err(keyring_error)
    }
}

/// Turns a keyring error into ours: a missing or refused store means
/// there is no keychain to use here.
fn keyring_error(error: keyring::Error) -> KeychainError {
    match error {
        keyring::Error::PlatformFailure(inner) | keyring::Error::NoStorageAccess(inner) => {
            KeychainError::Unavailable {
                reason: inner.to_string(),
            }
        }
        other => KeychainError::Failed {
            reason: other.to_string(),
        },
    }
}

impl TokenStore for OsKeychain {
    fn get(&self, url: &str) -> Result<Option<Token>, KeychainError> {
        match Self::entry(url)?.get_password() {
            Ok(token) => Ok(Some(Token::new(token))),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(other) => Err(keyring_error(other)),
        }
    }

    fn set(&self, url: &str, token: &Token) -> Result<(), KeychainError> {
        Self::entry(url)?
            .set_password(token.expose())
            .map_err(keyring_error)
    }

    fn delete(&self, url: &str) -> Result<bool, KeychainError> {
        match Self::entry(url)?.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring::Error::NoEntry) => Ok(false),
            Err(other) => Err(keyring_error(other)),
        }
    }

    fn describe(&self) -> String {
        "the OS keychain".to_owned()
    }
}

/// `FileStore` keeps tokens in a JSON file (`{url: token}`, mode 0600 on
/// Unix). It is for tests and machines without a keychain that a test
/// harness controls; it protects the tokens no better than the file's
/// permissions do.
#[derive(Debug, Clone)]
pub struct FileStore {
    path: PathBuf,
}

impl FileStore {
    /// A store in the file at `path` (made on first write).
    #[must_use]
    pub fn new(path: impl Into<PathBuf>) -> FileStore {
        FileStore { path: path.into() }
    }

    fn failure(&self, reason: &dyn std::fmt::Display) -> KeychainError {
        KeychainError::File {
            path: self.path.clone(),
            reason: reason.to_string(),
        }
    }

    fn read(&self) -> Result<BTreeMap<String, String>, KeychainError> {
        match std::fs::read(&self.path) {
            Ok(bytes) if bytes.is_empty() => Ok(BTreeMap::new()),
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|_| self.failure(&"it is not a JSON object of URL to token")),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(error) => Err(self.failure(&error)),
        }
    }

    fn write(&self, map: &BTreeMap<String, String>) -> Result<(), KeychainError> {
        let bytes = serde_json::to_vec_pretty(map).map_err(|e| self.failure(&e))?;
        write_private(&self.path, &bytes).map_err(|e| self.failure(&e))
    }
}

/// Writes a file only its owner can read (on Unix), replacing it whole.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

impl TokenStore for FileStore {
    fn get(&self, url: &str) -> Result<Option<Token>, KeychainError> {
        Ok(self.read()?.remove(url).map(Token::new))
    }

    fn set(&self, url: &str, token: &Token) -> Result<(), KeychainError> {
        let mut map = self.read()?;
        map.insert(url.to_owned(), token.expose().to_owned());
        self.write(&map)
    }

    fn delete(&self, url: &str) -> Result<bool, KeychainError> {
        let mut map = self.read()?;
        let had = map.remove(url).is_some();
        if had {
            self.write(&map)?;
        }
        Ok(had)
    }

    fn describe(&self) -> String {
        format!("the token file {}", self.path.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_store_keeps_one_token_per_url_and_forgets_it_on_delete() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path().join("tokens.json"));
        assert!(store.get("https://a.example").unwrap().is_none());
        store.set("https://a.example", &Token::new("one")).unwrap();
        store.set("https://b.example", &Token::new("two")).unwrap();
        store
            .set("https://a.example", &Token::new("three"))
            .unwrap();
        assert_eq!(
            store.get("https://a.example").unwrap().unwrap().expose(),
            "three"
        );
        assert!(store.delete("https://a.example").unwrap());
        assert!(!store.delete("https://a.example").unwrap());
        assert!(store.get("https://a.example").unwrap().is_none());
        assert_eq!(
            store.get("https://b.example").unwrap().unwrap().expose(),
            "two"
        );
    }

    #[cfg(unix)]
    #[test]
    fn the_token_file_is_readable_only_by_its_owner() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens.json");
        FileStore::new(&path)
            .set("https://a.example", &Token::new("t"))
            .unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_broken_token_file_is_named_without_its_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens.json");
        std::fs::write(&path, "secret-token-text").unwrap();
        let error = FileStore::new(&path).get("x").unwrap_err().to_string();
        assert!(error.contains("tokens.json"), "{error}");
        assert!(!error.contains("secret-token-text"), "{error}");
    }
}
