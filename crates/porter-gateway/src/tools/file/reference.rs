//! File references as the model writes them: `volume:<name>:<path>`, or a
//! bare `<path>` in the run's inbox.
//!
//! Parsing refuses what can never name a file beneath a root (`..`, an
//! absolute path, a backslash, a NUL) with a sentence saying what to write.
//! It is the first check, not the only one: every path is then opened
//! beneath its root with cap-std, which also refuses symlinks that lead out.

use porter_mcp::ToolError;

use crate::config::INBOX_VOLUME;

/// `Place` is the root a reference is resolved beneath.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Place {
    /// The run's own inbox.
    Inbox,
    /// A configured volume, by name.
    Volume(String),
}

/// `Reference` is a parsed file reference: a root and a relative path whose
/// parts are plain names (`""` is the root itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reference {
    pub place: Place,
    /// `/`-separated, without `.`, `..` or empty parts.
    pub rel: String,
}

impl Reference {
    /// Parses what the model wrote.
    pub fn parse(text: &str) -> Result<Self, ToolError> {
        let text = text.trim();
        if let Some(rest) = text.strip_prefix("volume:") {
            let (name, rel) = rest.split_once(':').unwrap_or((rest, ""));
            if name.is_empty() {
                return Err(ToolError::tool(format!(
                    "{text:?} names no volume; write volume:<name>:<path>, e.g. volume:inbox:{}",
                    if rel.is_empty() { "report.pdf" } else { rel }
                )));
            }
            let place = if name == INBOX_VOLUME {
                Place::Inbox
            } else {
                Place::Volume(name.to_owned())
            };
            let rel = relative(text, rel)?;
            return Ok(Self { place, rel });
        }
        let first = text.split('/').next().unwrap_or_default();
        if first.contains(':') {
            return Err(ToolError::tool(format!(
                "{text:?} is not a file reference; write a path in the inbox (documents/report.pdf) or volume:<name>:<path>"
            )));
        }
        let rel = relative(text, text)?;
        Ok(Self {
            place: Place::Inbox,
            rel,
        })
    }

    /// A reference to `rel` in `place`.
    pub fn new(place: Place, rel: impl Into<String>) -> Self {
        Self {
            place,
            rel: rel.into(),
        }
    }

    /// The volume's name (`inbox` for the inbox).
    pub fn volume(&self) -> &str {
        match &self.place {
            Place::Inbox => INBOX_VOLUME,
            Place::Volume(name) => name,
        }
    }

    /// The reference as the model sees it: `volume:<name>:<path>`.
    pub fn shown(&self) -> String {
        format!("volume:{}:{}", self.volume(), self.rel)
    }

    /// The path to hand cap-std: the relative path, or `.` for the root.
    pub fn fs_path(&self) -> &str {
        if self.rel.is_empty() { "." } else { &self.rel }
    }

    /// The last part of the path (the file's name), if it is not the root.
    pub fn name(&self) -> Option<&str> {
        self.rel.rsplit('/').next().filter(|n| !n.is_empty())
    }

    /// The reference to `name` inside this one.
    pub fn join(&self, name: &str) -> Self {
        let rel = if self.rel.is_empty() {
            name.to_owned()
        } else {
            format!("{}/{name}", self.rel)
        };
        Self::new(self.place.clone(), rel)
    }
}

/// The relative path `rel` (from the reference `text`) with `.` and empty
/// parts dropped, or why it cannot name a file beneath a root.
fn relative(text: &str, rel: &str) -> Result<String, ToolError> {
    if rel.contains('\0') {
        return Err(ToolError::tool(format!(
            "{text:?} holds a NUL character; no file name does"
        )));
    }
    if rel.contains('\\') {
        return Err(ToolError::tool(format!(
            "{text:?} holds a backslash; separate folders with /"
        )));
    }
    if rel.starts_with('/') {
        return Err(ToolError::tool(format!(
            "{text:?} is an absolute path; paths are relative to their volume, so drop the leading / (e.g. volume:inbox:{})",
            rel.trim_start_matches('/')
        )));
    }
    let mut parts = Vec::new();
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                return Err(ToolError::tool(format!(
                    "{text:?} holds `..`; a path stays beneath its volume, so name the file from the volume's root"
                )));
            }
            name => parts.push(name),
        }
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_name_the_inbox_or_a_volume() {
        let cases: &[(&str, Place, &str)] = &[
            ("report.pdf", Place::Inbox, "report.pdf"),
            ("documents/report.pdf", Place::Inbox, "documents/report.pdf"),
            (
                "./documents//report.pdf",
                Place::Inbox,
                "documents/report.pdf",
            ),
            ("  documents/  ", Place::Inbox, "documents"),
            ("", Place::Inbox, ""),
            ("volume:inbox:a/b.txt", Place::Inbox, "a/b.txt"),
            ("volume:inbox:", Place::Inbox, ""),
            ("volume:inbox", Place::Inbox, ""),
            ("volume:docs:x/y.md", Place::Volume("docs".into()), "x/y.md"),
            ("volume:docs:x:y.md", Place::Volume("docs".into()), "x:y.md"),
            ("volume:docs", Place::Volume("docs".into()), ""),
            ("volume:docs:dir/", Place::Volume("docs".into()), "dir"),
        ];
        for (text, place, rel) in cases {
            let parsed = Reference::parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
            assert_eq!(parsed.place, *place, "{text:?}");
            assert_eq!(parsed.rel, *rel, "{text:?}");
        }
    }

    #[test]
    fn paths_that_cannot_stay_beneath_a_root_are_refused_with_a_reason() {
        let cases: &[(&str, &str)] = &[
            ("../etc/passwd", "holds `..`"),
            ("a/../../b", "holds `..`"),
            ("volume:docs:../x", "holds `..`"),
            ("/etc/passwd", "absolute path"),
            ("volume:inbox:/etc/passwd", "absolute path"),
            ("a\\..\\b", "backslash"),
            ("a\0b", "NUL"),
            ("C:/Windows", "not a file reference"),
            ("inbox:report.pdf", "not a file reference"),
            ("volume::x", "names no volume"),
        ];
        for (text, reason) in cases {
            let error = Reference::parse(text).expect_err(text).to_string();
            assert!(error.contains(reason), "{text:?} gave {error:?}");
        }
    }

    #[test]
    fn a_reference_shows_as_volume_name_path() {
        let reference = Reference::parse("documents/report.pdf").expect("valid");
        assert_eq!(reference.shown(), "volume:inbox:documents/report.pdf");
        assert_eq!(reference.name(), Some("report.pdf"));
        assert_eq!(reference.join("x").rel, "documents/report.pdf/x");
        let root = Reference::parse("volume:out:").expect("valid");
        assert_eq!(root.fs_path(), ".");
        assert_eq!(root.name(), None);
        assert_eq!(root.join("a.txt").shown(), "volume:out:a.txt");
    }
}
