//! Signing commits and tags with the operator's ed25519 SSH key, in the
//! format `git` itself writes with `gpg.format=ssh`: an SSH signature
//! (`SSHSIG`, namespace `git`, SHA-512) armored as
//! `-----BEGIN SSH SIGNATURE-----`. `git verify-commit` and `git verify-tag`
//! check it against an allowed-signers file.
//!
//! A [`Signer`] is made once, at start-up, from an unencrypted OpenSSH
//! ed25519 private key; anything else (RSA, ECDSA, a key with a passphrase)
//! is refused then, with a message saying what to give instead, rather
//! than on the first signed commit. The key never leaves the process: no
//! method returns it and `Debug` shows only the public half.
//!
//! ```no_run
//! use porter_git::sign::Signer;
//!
//! # fn demo() -> Result<(), porter_git::sign::SignError> {
//! let signer = Signer::load("/etc/porter/keys/git_ed25519".as_ref())?;
//! let armored = signer.sign(b"tree 4b825dc6...\n")?;
//! assert!(armored.starts_with("-----BEGIN SSH SIGNATURE-----"));
//! println!("signed_by: {}", signer.public_key());
//! # Ok(())
//! # }
//! ```

use std::path::Path;
use std::sync::Arc;

use ssh_key::{Algorithm, HashAlg, LineEnding, PrivateKey, PublicKey};

/// `NAMESPACE` is the SSH signature namespace git signs and verifies
/// commits and tags in; a signature made for another namespace does not
/// verify as a commit's.
pub const NAMESPACE: &str = "git";

/// `SignError` is why a key could not be loaded or a payload not signed.
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    /// The key file could not be read.
    #[error("the signing key {path} cannot be read: {source}")]
    Read {
        /// The file named by `git.signing.key_file`.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The text is not an OpenSSH private key.
    #[error(
        "the signing key is not an OpenSSH private key ({0}); give one made by `ssh-keygen -t ed25519 -N ''`"
    )]
    NotOpenSsh(String),
    /// The key is protected by a passphrase porter cannot ask for.
    #[error(
        "the signing key is encrypted with a passphrase, which porter cannot ask for; give an unencrypted ed25519 key (`ssh-keygen -p -N '' -f <copy>` removes the passphrase from a copy)"
    )]
    Encrypted,
    /// The key is not ed25519.
    #[error(
        "the signing key is {0}, not ed25519; porter signs with ed25519 keys only (`ssh-keygen -t ed25519`)"
    )]
    Algorithm(String),
    /// Making the signature failed.
    #[error("the signature could not be made: {0}")]
    Sign(String),
}

/// `Signer` holds the operator's ed25519 signing key. Clones share the one
/// copy of the key; `Debug` and every method show only the public key.
#[derive(Clone)]
pub struct Signer {
    key: Arc<PrivateKey>,
    public: String,
}

impl Signer {
    /// `from_openssh` reads an OpenSSH private key (`-----BEGIN OPENSSH
    /// PRIVATE KEY-----`), refusing an encrypted key or one that is not
    /// ed25519, so that a bad key is found at start-up.
    pub fn from_openssh(text: &str) -> Result<Signer, SignError> {
        // OpenSSH wraps the Base64 at 70 columns and the parser insists on
        // it; other tools (Python's `cryptography`, some vaults) wrap at
        // 64, so a key that fails as written is tried again re-wrapped.
        let key = PrivateKey::from_openssh(text)
            .or_else(|first| PrivateKey::from_openssh(rewrapped(text)).map_err(|_| first))
            .map_err(|e| SignError::NotOpenSsh(e.to_string()))?;
        if key.is_encrypted() {
            return Err(SignError::Encrypted);
        }
        if key.algorithm() != Algorithm::Ed25519 {
            return Err(SignError::Algorithm(key.algorithm().to_string()));
        }
        let public = PublicKey::new(key.public_key().key_data().clone(), "")
            .to_openssh()
            .map_err(|e| SignError::NotOpenSsh(e.to_string()))?;
        Ok(Signer {
            key: Arc::new(key),
            public,
        })
    }

    /// `load` reads the key file at `path` (the operator's
    /// `git.signing.key_file`) with [`Signer::from_openssh`].
    pub fn load(path: &Path) -> Result<Signer, SignError> {
        let text = std::fs::read_to_string(path).map_err(|source| SignError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Signer::from_openssh(&text)
    }

    /// `public_key` is the public key in OpenSSH form (`ssh-ed25519
    /// AAAA…`, no comment): what an allowed-signers file names and what a
    /// signed commit's result reports as `signed_by`.
    #[must_use]
    pub fn public_key(&self) -> &str {
        &self.public
    }

    /// `sign` signs `payload` (a commit or tag object without its
    /// signature) in namespace [`NAMESPACE`] with SHA-512 and returns the
    /// armored signature, ending in a newline.
    pub fn sign(&self, payload: &[u8]) -> Result<String, SignError> {
        let signature = self
            .key
            .sign(NAMESPACE, HashAlg::Sha512, payload)
            .map_err(|e| SignError::Sign(e.to_string()))?;
        let mut armored = signature
            .to_pem(LineEnding::LF)
            .map_err(|e| SignError::Sign(e.to_string()))?;
        if !armored.ends_with('\n') {
            armored.push('\n');
        }
        Ok(armored)
    }
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer")
            .field("public", &self.public)
            .finish_non_exhaustive()
    }
}

/// Two signers are equal when they hold the same key pair (their public
/// keys are equal), so that configs holding them can be compared.
impl PartialEq for Signer {
    fn eq(&self, other: &Signer) -> bool {
        self.public == other.public
    }
}

impl Eq for Signer {}

/// `rewrapped` is an armored key with its Base64 body re-wrapped at the
/// 70 columns OpenSSH writes; the armor lines stay as they are.
fn rewrapped(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let (Some(first), Some(last)) = (lines.first(), lines.last()) else {
        return text.to_owned();
    };
    if lines.len() < 3 {
        return text.to_owned();
    }
    let body: String = lines[1..lines.len() - 1].concat();
    let mut out = format!("{first}\n");
    for chunk in body.as_bytes().chunks(70) {
        out.push_str(&String::from_utf8_lossy(chunk));
        out.push('\n');
    }
    out.push_str(last);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssh_key::private::{Ed25519Keypair, KeypairData};

    fn key_text(seed: u8) -> String {
        let pair = Ed25519Keypair::from_seed(&[seed; 32]);
        let key = PrivateKey::new(KeypairData::Ed25519(pair), "operator@example.org")
            .expect("an ed25519 key is valid");
        key.to_openssh(LineEnding::LF)
            .expect("the key encodes")
            .to_string()
    }

    #[test]
    fn a_key_wrapped_at_64_columns_loads_like_the_same_key_at_70() {
        let text = key_text(7);
        let body: String = text.lines().filter(|l| !l.starts_with("-----")).collect();
        let mut narrow = "-----BEGIN OPENSSH PRIVATE KEY-----\n".to_owned();
        for chunk in body.as_bytes().chunks(64) {
            narrow.push_str(std::str::from_utf8(chunk).expect("base64 is ASCII"));
            narrow.push('\n');
        }
        narrow.push_str("-----END OPENSSH PRIVATE KEY-----\n");
        assert_ne!(narrow, text);
        let wide = Signer::from_openssh(&text).expect("the 70-column key loads");
        let other = Signer::from_openssh(&narrow).expect("the 64-column key loads");
        assert_eq!(wide.public_key(), other.public_key());
        assert!(matches!(
            Signer::from_openssh(
                "-----BEGIN OPENSSH PRIVATE KEY-----\nnot base64\n-----END OPENSSH PRIVATE KEY-----\n"
            ),
            Err(SignError::NotOpenSsh(_))
        ));
    }

    #[test]
    fn a_signature_verifies_for_its_payload_and_namespace_only() {
        let signer = Signer::from_openssh(&key_text(7)).expect("an ed25519 key loads");
        let armored = signer.sign(b"payload\n").expect("signing works");
        assert!(armored.starts_with("-----BEGIN SSH SIGNATURE-----\n"));
        assert!(armored.ends_with("-----END SSH SIGNATURE-----\n"));
        let signature = ssh_key::SshSig::from_pem(&armored).expect("the armor parses");
        let public = PublicKey::from_openssh(signer.public_key()).expect("the public key parses");
        assert!(public.verify(NAMESPACE, b"payload\n", &signature).is_ok());
        assert!(public.verify(NAMESPACE, b"payload!\n", &signature).is_err());
        assert!(public.verify("file", b"payload\n", &signature).is_err());
        assert!(signer.public_key().starts_with("ssh-ed25519 AAAA"));
        assert!(!signer.public_key().contains("operator@"));
    }

    #[test]
    fn debug_shows_the_public_key_and_never_the_private_one() {
        let text = key_text(9);
        let signer = Signer::from_openssh(&text).expect("loads");
        let shown = format!("{signer:?}");
        assert!(shown.contains(signer.public_key()), "{shown}");
        let private_body: String = text.lines().filter(|l| !l.starts_with("-----")).collect();
        assert!(!shown.contains(&private_body[..40]), "{shown}");
        assert!(!shown.contains("OPENSSH PRIVATE KEY"), "{shown}");
    }

    fn string(out: &mut Vec<u8>, bytes: &[u8]) {
        out.extend_from_slice(&u32::try_from(bytes.len()).expect("short").to_be_bytes());
        out.extend_from_slice(bytes);
    }

    /// An ed25519 key as `ssh-keygen -N <passphrase>` lays it out: cipher
    /// aes256-ctr, kdf bcrypt, the public key in the clear and the private
    /// section as ciphertext (here random-looking bytes of a block's length).
    fn encrypted_key_text() -> String {
        let pair = Ed25519Keypair::from_seed(&[3; 32]);
        let public = PublicKey::from(pair.public).to_bytes().expect("encodes");
        let mut kdf_options = Vec::new();
        string(&mut kdf_options, &[0x5a; 16]);
        kdf_options.extend_from_slice(&16u32.to_be_bytes());
        let mut bytes = b"openssh-key-v1\0".to_vec();
        string(&mut bytes, b"aes256-ctr");
        string(&mut bytes, b"bcrypt");
        string(&mut bytes, &kdf_options);
        bytes.extend_from_slice(&1u32.to_be_bytes());
        string(&mut bytes, &public);
        string(&mut bytes, &[0xa5; 160]);
        PrivateKey::from_bytes(&bytes)
            .expect("the layout parses")
            .to_openssh(LineEnding::LF)
            .expect("it encodes")
            .to_string()
    }

    fn rsa_key_text() -> String {
        use ssh_key::Mpint;
        use ssh_key::private::{RsaKeypair, RsaPrivateKey};
        use ssh_key::public::RsaPublicKey;
        let number = |b: u8| Mpint::from_positive_bytes(&[b; 64]).expect("a number");
        let pair = RsaKeypair {
            public: RsaPublicKey {
                e: Mpint::from_positive_bytes(&[1, 0, 1]).expect("e"),
                n: number(0x71),
            },
            private: RsaPrivateKey {
                d: number(0x33),
                iqmp: number(0x22),
                p: number(0x11),
                q: number(0x13),
            },
        };
        PrivateKey::new(KeypairData::Rsa(pair), "")
            .expect("a key")
            .to_openssh(LineEnding::LF)
            .expect("it encodes")
            .to_string()
    }

    #[test]
    fn keys_that_are_not_plain_openssh_ed25519_are_refused_with_a_reason() {
        assert!(matches!(
            Signer::from_openssh("not a key"),
            Err(SignError::NotOpenSsh(_))
        ));
        let encrypted = Signer::from_openssh(&encrypted_key_text());
        assert!(
            matches!(encrypted, Err(SignError::Encrypted)),
            "{encrypted:?}"
        );
        let rsa = Signer::from_openssh(&rsa_key_text());
        assert!(
            matches!(&rsa, Err(SignError::Algorithm(name)) if name == "ssh-rsa"),
            "{rsa:?}"
        );
        assert!(
            rsa.expect_err("refused")
                .to_string()
                .contains("ed25519 keys only")
        );
        let missing = Signer::load(Path::new("/nonexistent/porter-key"));
        assert!(
            matches!(&missing, Err(SignError::Read { path, .. }) if path == "/nonexistent/porter-key"),
            "{missing:?}"
        );
        let same = Signer::from_openssh(&key_text(1)).expect("loads");
        let again = Signer::from_openssh(&key_text(1)).expect("loads");
        let other = Signer::from_openssh(&key_text(2)).expect("loads");
        assert_eq!(same, again);
        assert_ne!(same, other);
    }
}
