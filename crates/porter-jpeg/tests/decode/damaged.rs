//! Cut-short and damaged files: errors, never panics or grey filler.

use jpeg_encoder::SamplingFactor;
use porter_jpeg::{Error, decode_scaled};

use super::{Content, Options, decode, encode, find_marker, small};

fn test_files() -> Vec<Vec<u8>> {
    vec![
        small(SamplingFactor::F_2_2, None),
        small(SamplingFactor::F_2_1, Some(2)),
        small(SamplingFactor::F_1_1, Some(1)),
        small(SamplingFactor::F_1_2, None),
        encode(
            Content::Noise,
            19,
            17,
            Options {
                sampling: None,
                restart: Some(3),
                quality: 95,
            },
        ),
    ]
}

#[test]
fn a_file_cut_anywhere_before_the_end_of_its_end_marker_is_an_error() {
    for bytes in test_files() {
        assert_eq!(&bytes[bytes.len() - 2..], [0xFF, 0xD9]);
        for eighths in [1, 8] {
            let min = (37 * eighths / 8, 23 * eighths / 8);
            // Even a file that lacks only its end marker: its last block
            // may be whole, but nothing says the file is.
            for cut in 0..bytes.len() {
                assert!(
                    decode(&bytes[..cut], min).is_err(),
                    "cut at {cut} of {}",
                    bytes.len()
                );
            }
            assert!(decode(&bytes, min).is_ok());
        }
    }
}

#[test]
fn garbage_between_the_last_block_and_the_end_marker_is_tolerated() {
    let bytes = small(SamplingFactor::F_2_2, None);
    let whole = decode(&bytes, (37, 23)).unwrap();
    let mut longer = bytes[..bytes.len() - 2].to_vec();
    longer.extend_from_slice(&[0x12, 0x34, 0xFF, 0xFF, 0x00, 0x99, 0xFF, 0xD9]);
    assert_eq!(decode(&longer, (37, 23)).unwrap(), whole);
}

#[test]
fn fill_bytes_before_a_marker_are_skipped() {
    let bytes = small(SamplingFactor::F_2_2, None);
    let whole = decode(&bytes, (37, 23)).unwrap();
    let at = find_marker(&bytes, 0xC0).unwrap();
    let mut filled = bytes[..at].to_vec();
    filled.extend_from_slice(&[0xFF; 40]);
    filled.extend_from_slice(&bytes[at..]);
    assert_eq!(decode(&filled, (37, 23)).unwrap(), whole);
}

#[test]
fn restart_markers_out_of_order_are_an_error() {
    let mut bytes = small(SamplingFactor::F_1_1, Some(1));
    let scan = find_marker(&bytes, 0xDA).unwrap();
    let at = scan
        + bytes[scan..]
            .windows(2)
            .position(|w| w == [0xFF, 0xD1])
            .unwrap();
    bytes[at + 1] = 0xD2;
    assert!(matches!(decode(&bytes, (37, 23)), Err(Error::Corrupt(_))));
}

#[test]
fn a_huge_declared_size_with_little_data_is_refused_at_once() {
    let mut bytes = small(SamplingFactor::F_2_2, None);
    let frame = find_marker(&bytes, 0xC0).unwrap();
    bytes[frame + 5..frame + 9].copy_from_slice(&[0xFF, 0xFF, 0xFF, 0xFF]);
    let started = std::time::Instant::now();
    let result = decode_scaled(&bytes, 1, 1, u64::MAX, &|| false);
    assert!(matches!(result, Err(Error::Corrupt(_))), "{result:?}");
    assert!(started.elapsed().as_millis() < 500);
}

#[test]
fn a_stream_of_fill_bytes_is_refused_quickly() {
    let mut bytes = vec![0xFF, 0xD8];
    bytes.extend(std::iter::repeat_n(0xFF, 5_000_000));
    let started = std::time::Instant::now();
    assert!(decode(&bytes, (1, 1)).is_err());
    assert!(started.elapsed().as_millis() < 2_000);
}

/// A deterministic walk over byte changes: setting a byte to a random
/// value, to 0xFF or to 0, and dropping a byte.
#[test]
fn changed_bytes_never_cause_a_panic() {
    let mut seed = 99u64;
    let mut next = move |bound: usize| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((seed >> 33) as usize) % bound
    };
    for bytes in test_files() {
        for _ in 0..800 {
            let mut changed = bytes.clone();
            for _ in 0..=next(3) {
                let at = next(changed.len());
                match next(4) {
                    0 => changed[at] = next(256) as u8,
                    1 => changed[at] = 0xFF,
                    2 => changed[at] = 0,
                    _ => {
                        changed.remove(at);
                    }
                }
            }
            for min in [(1, 1), (10, 6), (37, 23)] {
                let _ = decode_scaled(&changed, min.0, min.1, 1 << 24, &|| false);
            }
        }
    }
}

#[test]
fn fill_bytes_before_a_restart_marker_are_skipped() {
    let bytes = small(SamplingFactor::F_2_1, Some(2));
    let whole = decode(&bytes, (37, 23)).unwrap();
    let scan = find_marker(&bytes, 0xDA).unwrap();
    let at = scan
        + bytes[scan..]
            .windows(2)
            .position(|w| w == [0xFF, 0xD0])
            .unwrap();
    let mut filled = bytes[..at].to_vec();
    filled.extend_from_slice(&[0xFF; 5]);
    filled.extend_from_slice(&bytes[at..]);
    assert_eq!(decode(&filled, (37, 23)).unwrap(), whole);
}
