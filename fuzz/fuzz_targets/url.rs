//! URL hygiene on any text: the check never panics, a display form holds
//! no query or credentials, and a registered secret never survives
//! redaction (see porter_fuzz::url_hygiene).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| porter_fuzz::url_hygiene(data));
