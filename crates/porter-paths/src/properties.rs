//! Properties of the name rules over generated names: what `safe_name`
//! makes, `check_component` accepts, whatever it was given.

use proptest::prelude::*;

use crate::{SAFE_NAME_BYTES, ascii_name, check_component, safe_name};

/// Names built from pieces that meet the rules' edges (device names, dots,
/// spaces, separators, invisible and wide characters, long runs) and from
/// any character at all.
fn names() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        prop::sample::select(vec![
            "con",
            "CON",
            "Nul",
            "aux",
            "prn",
            "com1",
            "LPT9",
            "com\u{b9}",
            "conin$",
            "CONOUT$",
            ".",
            "..",
            " ",
            "/",
            "\\",
            ":",
            "*",
            "?",
            "tar",
            "gz",
            "txt",
            "a",
            "é",
            "日本",
            "\u{202e}",
            "\u{200b}",
            "\t",
            "\n",
            "\u{7f}",
            "\u{e000}",
        ])
        .prop_map(str::to_owned),
        any::<char>().prop_map(String::from),
        "[a-z]{40,120}",
        // Runs that end near the length limits, with dots and spaces where
        // a cut may fall.
        "[a-z .]{150,230}",
        "\\.[a-z .]{25,40}",
        "[a-z]{190,200}[ .]{1,3}[a-z]{1,3}",
    ];
    prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn a_safe_name_passes_the_component_check(name in names()) {
        let safe = safe_name(&name);
        prop_assert_eq!(check_component(safe.as_bytes()), Ok(()), "{:?} -> {:?}", name, safe);
    }

    #[test]
    fn a_safe_name_is_short_has_no_trailing_dot_or_space_and_stays_as_it_is(name in names()) {
        let safe = safe_name(&name);
        prop_assert!(safe.len() <= SAFE_NAME_BYTES, "{:?} -> {} bytes", name, safe.len());
        prop_assert!(!safe.ends_with(['.', ' ']), "{:?} -> {:?}", name, safe);
        prop_assert!(!safe.starts_with(['.', ' ']), "{:?} -> {:?}", name, safe);
        prop_assert_eq!(safe_name(&safe), safe.clone(), "{:?}", name);
    }

    #[test]
    fn an_ascii_name_is_ascii_and_safe(name in names()) {
        let ascii = ascii_name(&name);
        prop_assert!(ascii.is_ascii(), "{:?} -> {:?}", name, ascii);
        prop_assert_eq!(check_component(ascii.as_bytes()), Ok(()), "{:?} -> {:?}", name, ascii);
    }
}
