//! The file view on bytes named `fuzz.pptx` (see porter_fuzz::view_as).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| porter_fuzz::view_as(data, "fuzz.pptx"));
