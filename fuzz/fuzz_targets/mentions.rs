//! The Mattermost message checks' parsing on any message: mentions are
//! lowercase usernames named once, and the nearest-name search stays sane
//! (see porter_fuzz::mention_rules).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| porter_fuzz::mention_rules(data));
