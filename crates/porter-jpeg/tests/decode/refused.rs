//! Files outside the supported subset are refused as `Unsupported`.

use jpeg_encoder::{ColorType, Encoder, SamplingFactor};
use porter_jpeg::Error;

use super::{Content, decode, find_marker, picture, small};

fn refused(bytes: &[u8]) -> bool {
    matches!(decode(bytes, (1, 1)), Err(Error::Unsupported(_)))
}

/// The test file with its frame marker replaced by `marker`.
fn with_frame_marker(marker: u8) -> Vec<u8> {
    let mut bytes = small(SamplingFactor::F_2_2, None);
    let at = find_marker(&bytes, 0xC0).unwrap();
    bytes[at + 1] = marker;
    bytes
}

#[test]
fn progressive_files_are_refused() {
    let mut out = Vec::new();
    let mut encoder = Encoder::new(&mut out, 80);
    encoder.set_progressive(true);
    encoder
        .encode(&picture(Content::Gradient, 40, 30), 40, 30, ColorType::Rgb)
        .unwrap();
    assert!(find_marker(&out, 0xC2).is_some());
    assert!(refused(&out));
}

#[test]
fn other_coding_processes_are_refused() {
    // Lossless, hierarchical, arithmetic-coded.
    for marker in [0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF] {
        assert!(refused(&with_frame_marker(marker)), "{marker:#x}");
    }
    // SOF1 (extended sequential, Huffman) is decoded like SOF0.
    let extended = with_frame_marker(0xC1);
    assert_eq!(
        decode(&extended, (1, 1)),
        decode(&small(SamplingFactor::F_2_2, None), (1, 1))
    );
}

#[test]
fn twelve_bit_samples_are_refused() {
    let mut bytes = small(SamplingFactor::F_2_2, None);
    let at = find_marker(&bytes, 0xC0).unwrap();
    bytes[at + 4] = 12;
    assert!(refused(&bytes));
}

#[test]
fn a_zero_width_or_height_is_refused() {
    for offset in [5, 7] {
        let mut bytes = small(SamplingFactor::F_2_2, None);
        let at = find_marker(&bytes, 0xC0).unwrap();
        bytes[at + offset..at + offset + 2].copy_from_slice(&[0, 0]);
        assert!(refused(&bytes), "offset {offset}");
    }
}

/// The test file with `segment` (marker and body) put before its frame.
fn with_segment(marker: u8, body: &[u8]) -> Vec<u8> {
    let bytes = small(SamplingFactor::F_2_2, None);
    let at = find_marker(&bytes, 0xC0).unwrap();
    let mut out = bytes[..at].to_vec();
    out.extend_from_slice(&[0xFF, marker]);
    out.extend_from_slice(&(body.len() as u16 + 2).to_be_bytes());
    out.extend_from_slice(body);
    out.extend_from_slice(&bytes[at..]);
    out
}

#[test]
fn adobe_rgb_and_dnl_and_arithmetic_tables_are_refused() {
    assert!(refused(&with_segment(0xEE, b"Adobe\0\x64\0\0\0\0\0")));
    assert!(refused(&with_segment(0xDC, &[0, 23])));
    assert!(refused(&with_segment(0xCC, &[0x00, 0x10])));
    // An Adobe segment that says YCbCr, and other segments, change nothing.
    let plain = decode(&small(SamplingFactor::F_2_2, None), (1, 1));
    assert_eq!(
        decode(&with_segment(0xEE, b"Adobe\0\x64\0\0\0\0\x01"), (1, 1)),
        plain
    );
    assert_eq!(decode(&with_segment(0xFE, b"a comment"), (1, 1)), plain);
    assert_eq!(decode(&with_segment(0xE9, b""), (1, 1)), plain);
}

#[test]
fn cmyk_and_other_subsampling_are_refused() {
    let rgb = picture(Content::Edges, 40, 30);
    let cmyk: Vec<u8> = rgb
        .chunks_exact(3)
        .flat_map(|p| [p[0], p[1], p[2], 9])
        .collect();
    let mut out = Vec::new();
    Encoder::new(&mut out, 80)
        .encode(&cmyk, 40, 30, ColorType::Cmyk)
        .unwrap();
    assert!(refused(&out));
    for sampling in [
        SamplingFactor::F_4_1,
        SamplingFactor::F_2_4,
        SamplingFactor::F_1_4,
    ] {
        assert!(refused(&small(sampling, None)), "{sampling:?}");
    }
}

#[test]
fn a_scan_of_only_some_components_is_refused() {
    let mut bytes = small(SamplingFactor::F_2_2, None);
    let at = find_marker(&bytes, 0xDA).unwrap();
    bytes[at + 4] = 1;
    assert!(refused(&bytes));
}
