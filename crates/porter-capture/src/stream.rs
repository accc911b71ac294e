//! Decoding a long base64 string while its keeper writes it and another
//! core hashes it, so that a 50 MB file is not decoded, then hashed, then
//! written, one after the other.
//!
//! The caller's thread decodes a block, hands it to a hashing thread, and
//! writes it to the keeper's staging file while the block is still in cache;
//! then it decodes the next block while the other core hashes. The whole
//! file still ends up decoded in one buffer, because telling a file from a
//! token (and sniffing a zip's type) needs all of it.

use std::sync::mpsc;

use base64::Engine as _;

use sha2::{Digest as _, Sha256};

use crate::recognise::engine;
use crate::scan::Alphabet;

/// `STAGED_DECODE_CHARS` is the base64 length from which a file is written
/// and hashed while it is decoded: below it, the thread costs more than
/// the overlap saves.
pub(crate) const STAGED_DECODE_CHARS: usize = 4 << 20;

/// `BLOCK_CHARS` is how much base64 is decoded at a time: 2 MiB of text,
/// 1.5 MiB of bytes, a multiple of 4,096 so that every block the keeper
/// writes starts on a page of the file.
const BLOCK_CHARS: usize = 2 << 20;

/// `BLOCKS_AHEAD` is how many decoded blocks may wait for the hashing
/// thread before decoding waits for it in turn.
const BLOCKS_AHEAD: usize = 8;

/// The number of bytes clean base64 `text` decodes to, padding or none;
/// `None` when its length cannot be base64's.
pub(crate) fn decoded_size(text: &[u8]) -> Option<usize> {
    let padding = text
        .iter()
        .rev()
        .take(2)
        .take_while(|&&b| b == b'=')
        .count();
    let digits = text.len() - padding;
    let tail = match digits % 4 {
        0 => 0,
        2 => 1,
        3 => 2,
        _ => return None,
    };
    Some(digits / 4 * 3 + tail)
}

/// Decodes `text` in `alphabet` into `into` (replacing what it held),
/// handing each decoded block to `write` and hashing it on another thread:
/// the SHA-256 of the decoded bytes, or `None` when `text` is not clean
/// base64. A failed write stops the writing, not the decoding: the keeper
/// remembers why, and says so when it is asked to keep the file.
pub(crate) fn decode_staged(
    text: &[u8],
    alphabet: Alphabet,
    into: &mut Vec<u8>,
    mut write: impl FnMut(&[u8]) -> std::io::Result<()>,
) -> Option<[u8; 32]> {
    let engine = engine(alphabet);
    crate::free::release(std::mem::take(into));
    let mut out = vec![0u8; text.len().div_ceil(4) * 3];
    let mut decoded = 0;
    let digest = std::thread::scope(|scope| {
        let (blocks, to_hash) = mpsc::sync_channel::<&[u8]>(BLOCKS_AHEAD);
        let hashing = scope.spawn(move || {
            let mut hasher = Sha256::new();
            for block in to_hash {
                hasher.update(block);
            }
            <[u8; 32]>::from(hasher.finalize())
        });
        let mut rest: &mut [u8] = &mut out;
        let mut writing = true;
        for chunk in text.chunks(BLOCK_CHARS) {
            // Every chunk but the last is whole quads, so each decodes on
            // its own to exactly the bytes that follow the previous one's.
            let written = engine.decode_slice(chunk, &mut *rest).ok()?;
            let (block, tail) = std::mem::take(&mut rest).split_at_mut(written);
            rest = tail;
            let block: &[u8] = block;
            decoded += written;
            blocks.send(block).ok()?;
            if writing && write(block).is_err() {
                writing = false;
            }
        }
        drop(blocks);
        hashing.join().ok()
    })?;
    out.truncate(decoded);
    *into = out;
    Some(digest)
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
    use proptest::prelude::*;

    use super::*;
    use porter_test::noise;

    /// `Written` keeps what was written to it, block by block.
    #[derive(Default)]
    struct Written {
        blocks: Vec<Vec<u8>>,
        fail_after: Option<usize>,
    }

    impl Written {
        fn write(&mut self, block: &[u8]) -> std::io::Result<()> {
            if self.fail_after.is_some_and(|n| self.blocks.len() >= n) {
                return Err(std::io::Error::other("disk full"));
            }
            self.blocks.push(block.to_vec());
            Ok(())
        }
    }

    /// Byte counts around the block boundaries (1.5 MiB decoded each).
    fn sizes_around_blocks() -> impl Strategy<Value = usize> {
        let block = BLOCK_CHARS / 4 * 3;
        (0usize..=3, 0usize..=6)
            .prop_map(move |(blocks, offset)| (blocks * block + offset).saturating_sub(3).max(1))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        #[test]
        fn decoding_in_blocks_gives_the_bytes_and_hash_of_the_whole(
            len in sizes_around_blocks(),
            url_safe in any::<bool>(),
            seed in 0u64..1000,
        ) {
            let bytes = noise(len, seed);
            let (text, alphabet) = if url_safe {
                (URL_SAFE_NO_PAD.encode(&bytes), Alphabet::UrlSafe)
            } else {
                (STANDARD.encode(&bytes), Alphabet::Standard)
            };
            prop_assert_eq!(decoded_size(text.as_bytes()), Some(len));
            let mut out = Vec::new();
            let mut written = Written::default();
            let digest = decode_staged(text.as_bytes(), alphabet, &mut out, |b| written.write(b));
            prop_assert_eq!(digest, Some(<[u8; 32]>::from(Sha256::digest(&bytes))));
            prop_assert!(out == bytes, "the decoded bytes differ");
            prop_assert!(written.blocks.concat() == bytes, "the written bytes differ");
            prop_assert!(
                written.blocks.iter().rev().skip(1).all(|b| b.len() % 4096 == 0),
                "every block but the last fills whole pages"
            );
        }
    }

    #[test]
    fn text_that_is_not_clean_base64_decodes_to_nothing_wherever_it_breaks() {
        let bytes = noise(3 * BLOCK_CHARS / 4 * 3 + 7, 3);
        let text = STANDARD.encode(&bytes);
        for at in [5, BLOCK_CHARS + 1, text.len() - 3] {
            let mut broken = text.clone().into_bytes();
            broken[at] = b'*';
            let mut out = Vec::new();
            let mut written = Written::default();
            assert_eq!(
                decode_staged(&broken, Alphabet::Standard, &mut out, |b| written.write(b)),
                None,
                "{at}"
            );
        }
    }

    #[test]
    fn a_failed_write_stops_the_writing_but_not_the_decoding() {
        let bytes = noise(3 * BLOCK_CHARS / 4 * 3, 4);
        let text = STANDARD.encode(&bytes);
        let mut out = Vec::new();
        let mut written = Written {
            fail_after: Some(1),
            ..Written::default()
        };
        let digest = decode_staged(text.as_bytes(), Alphabet::Standard, &mut out, |b| {
            written.write(b)
        });
        assert_eq!(digest, Some(<[u8; 32]>::from(Sha256::digest(&bytes))));
        assert!(out == bytes);
        assert_eq!(written.blocks.len(), 1);
    }

    #[test]
    fn the_decoded_size_is_known_from_the_length_and_padding() {
        for len in 0..20 {
            let bytes = noise(len, 9);
            let padded = STANDARD.encode(&bytes);
            let unpadded = URL_SAFE_NO_PAD.encode(&bytes);
            assert_eq!(decoded_size(padded.as_bytes()), Some(len), "{padded}");
            assert_eq!(decoded_size(unpadded.as_bytes()), Some(len), "{unpadded}");
        }
        assert_eq!(decoded_size(b"AAAAA"), None);
    }
}
