//! porter-speech's audio decoder on bytes named `fuzz.ogg` (see porter_fuzz::decode_audio).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| porter_fuzz::decode_audio(data, "fuzz.ogg"));
