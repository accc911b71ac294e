//! Hashes that bind an answer to what it was given about: a file's SHA-256,
//! and a fingerprint over several parts.

use sha2::{Digest as _, Sha256};

/// The SHA-256 of `bytes` as 64 lower-case hex digits, the form a question's
/// fingerprint and a re-read before upload compare.
#[must_use]
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// A SHA-256 over several parts, each preceded by its length, so that no
/// two different lists of parts ("ab", "c" and "a", "bc") share a
/// fingerprint. A question's answer is bound to the fingerprint of what the
/// call acts on (each file's name and hash, the destination).
#[must_use]
pub fn fingerprint(parts: &[&[u8]]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    hex(&hasher.finalize())
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_hex_matches_the_known_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn a_fingerprint_tells_apart_parts_split_differently() {
        assert_ne!(fingerprint(&[b"ab", b"c"]), fingerprint(&[b"a", b"bc"]));
        assert_eq!(fingerprint(&[b"a", b"bc"]), fingerprint(&[b"a", b"bc"]));
        assert_eq!(fingerprint(&[]).len(), 64);
    }
}
