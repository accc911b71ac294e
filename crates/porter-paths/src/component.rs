//! Whether one path component (a file or folder name from somewhere else: a
//! repository's tree, an archive, a model) is one porter may create, and if
//! not, why: one list of reasons for every caller that refuses names rather
//! than cleaning them ([`crate::safe_name`] cleans).

/// `UnsafeComponent` is why a name cannot be created as it is. Its
/// [`reason`](UnsafeComponent::reason) completes a sentence about the path
/// ("`a/../b` has a . or .. component, …").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnsafeComponent {
    /// Nothing between two slashes.
    Empty,
    /// `.` or `..`.
    Dots,
    /// A C0 control character or DEL.
    Control,
    /// `/`, `\` or `:` inside the name.
    Separator,
    /// Bytes that are not UTF-8.
    NotUtf8,
    /// Only dots and spaces, which Windows trims to nothing.
    OnlyDotsAndSpaces,
    /// A Windows device name ([`crate::is_device_name`]), whatever its
    /// extension.
    Device,
}

impl UnsafeComponent {
    /// The reason, as the end of a sentence about the path.
    #[must_use]
    pub fn reason(self) -> &'static str {
        match self {
            Self::Empty => "has an empty component",
            Self::Dots => "has a . or .. component, which would leave its folder",
            Self::Control => "holds a control character",
            Self::Separator => "holds a slash, backslash or colon inside one component",
            Self::NotUtf8 => "is not UTF-8",
            Self::OnlyDotsAndSpaces => "is only dots and spaces",
            Self::Device => "names a Windows device",
        }
    }
}

impl std::fmt::Display for UnsafeComponent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.reason())
    }
}

impl std::error::Error for UnsafeComponent {}

/// `check_component` says why `name` is not a name to create on any of the
/// file systems porter's files may be copied to, or `Ok` if it is.
pub fn check_component(name: &[u8]) -> Result<(), UnsafeComponent> {
    if name.is_empty() {
        return Err(UnsafeComponent::Empty);
    }
    if name == b"." || name == b".." {
        return Err(UnsafeComponent::Dots);
    }
    if name.iter().any(|&b| b < 0x20 || b == 0x7f) {
        return Err(UnsafeComponent::Control);
    }
    if name.iter().any(|&b| matches!(b, b'/' | b'\\' | b':')) {
        return Err(UnsafeComponent::Separator);
    }
    let Ok(text) = std::str::from_utf8(name) else {
        return Err(UnsafeComponent::NotUtf8);
    };
    let trimmed = text.trim_end_matches([' ', '.']);
    if trimmed.is_empty() {
        return Err(UnsafeComponent::OnlyDotsAndSpaces);
    }
    if crate::device_stem_end(trimmed).is_some() {
        return Err(UnsafeComponent::Device);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_unsafe_name_is_refused_for_its_first_reason() {
        let cases: &[(&[u8], UnsafeComponent)] = &[
            (b"", UnsafeComponent::Empty),
            (b"..", UnsafeComponent::Dots),
            (b"a\x01b", UnsafeComponent::Control),
            (b"a\x7f", UnsafeComponent::Control),
            (b"c:", UnsafeComponent::Separator),
            (b"a\\b", UnsafeComponent::Separator),
            (b"\xff\xfe", UnsafeComponent::NotUtf8),
            (b"...", UnsafeComponent::OnlyDotsAndSpaces),
            (b". .", UnsafeComponent::OnlyDotsAndSpaces),
            (b"nul.txt", UnsafeComponent::Device),
            (b"Com1 .log", UnsafeComponent::Device),
        ];
        for (name, why) in cases {
            assert_eq!(
                check_component(name),
                Err(*why),
                "{:?}",
                String::from_utf8_lossy(name)
            );
        }
        for name in ["src", ".gitignore", "a.b.c", "naïve", "com10", "..a"] {
            assert_eq!(check_component(name.as_bytes()), Ok(()), "{name}");
        }
    }

    #[test]
    fn every_name_safe_name_makes_passes() {
        let offered = [
            "",
            ".",
            "..",
            "...",
            " . ",
            "CON",
            "con.txt",
            "a/b",
            "a\\b",
            "c:",
            "a\u{0}b",
            "\u{7f}",
            "tab\there",
            "..\\..\\x",
            "LPT1.log",
            "name.",
            "name ",
            "🙂",
        ];
        for name in offered {
            let made = crate::safe_name(name);
            assert_eq!(
                check_component(made.as_bytes()),
                Ok(()),
                "{name:?} became {made:?}"
            );
        }
    }
}
