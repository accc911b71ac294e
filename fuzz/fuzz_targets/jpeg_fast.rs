//! porter-jpeg's fast decoder on any bytes, at every scale: it returns an
//! image of the size it reports or an error, never a panic (see
//! porter_fuzz::decode_jpeg_fast).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| porter_fuzz::decode_jpeg_fast(data));
