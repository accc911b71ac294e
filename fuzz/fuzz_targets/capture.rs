//! The capture scanner on any JSON value as a tool result: whatever it
//! keeps, its output must hold no file any more, so capturing that output
//! again finds nothing (see porter_fuzz::capture_leaves_no_file).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| porter_fuzz::capture_leaves_no_file(data));
