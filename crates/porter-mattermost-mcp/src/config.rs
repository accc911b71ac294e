//! The server's settings, read from the `MM_*` / `MM_MCP_*` variables the
//! binary hands over.
//!
//! The library never reads the environment itself: [`Settings::from_vars`]
//! takes a lookup function, so the binary passes `std::env::var` and tests
//! pass a map.

use std::path::{Path, PathBuf};

use porter_mattermost::{Token, normalize_base_url};

/// `ConfigError` is a setting that cannot be used. Each message names the
/// variable and what to set it to; the binary exits 2 with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A required variable is missing or empty.
    #[error("{name} is not set; {fix}")]
    Missing {
        /// The variable.
        name: &'static str,
        /// What to set it to.
        fix: &'static str,
    },
    /// A variable holds a value that cannot be used.
    #[error("{name}={value:?} cannot be used: {reason}")]
    Invalid {
        /// The variable.
        name: &'static str,
        /// The value as given (never a token).
        value: String,
        /// Why, and what to set instead.
        reason: String,
    },
}

/// `Settings` is everything `porter mattermost serve` and `doctor` read from
/// the environment. Its `Debug` hides both tokens.
// Each flag is an independent switch named by its own variable.
#[allow(clippy::struct_excessive_bools)]
#[derive(Clone)]
pub struct Settings {
    /// The Mattermost address, normalised (no trailing `/` or `/api/v4`).
    pub url: String,
    /// The personal access token (`MM_TOKEN`).
    pub token: Token,
    /// Whether the write tools are listed (`MM_MCP_ALLOW_WRITES`, default false).
    pub allow_writes: bool,
    /// Whether a write asks the person first (`MM_MCP_ASK_BEFORE_WRITES`, default true).
    pub ask_before_writes: bool,
    /// Whether posts carry the `ai_generated_by` prop (`MM_MCP_MARK_AI_GENERATED`, default true).
    pub mark_ai_generated: bool,
    /// Where `save_file` writes (`MM_MCP_DOWNLOAD_DIR`, default `~/Downloads`).
    pub download_dir: PathBuf,
    /// Extra PEM roots for a company CA (`MM_MCP_CA_FILE`).
    pub ca_file: Option<PathBuf>,
    /// The bearer token HTTP clients must send (`PORTER_MCP_HTTP_TOKEN`);
    /// when set, the HTTP transport may bind beyond loopback.
    pub http_token: Option<Token>,
    /// The most bytes of recently read files kept for paging
    /// (`PORTER_MM_FILE_CACHE_BYTES`; 0 turns the cache off).
    pub file_cache_bytes: u64,
    /// Whether asking tools carry Claude Code's "requires user interaction"
    /// mark (`MM_MCP_FORCE_HUMAN_IN_THE_LOOP_IN_CLAUDE_CODE`, default
    /// false; only with `MM_MCP_ASK_BEFORE_WRITES=false`).
    pub force_human_in_the_loop: bool,
    /// Whether `read_file` of a PDF whose text was read carries the PDF
    /// itself too, after its Markdown (`MM_MCP_ATTACH_PDF`, default false).
    pub attach_pdf: bool,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("url", &self.url)
            .field("token", &"***")
            .field("allow_writes", &self.allow_writes)
            .field("ask_before_writes", &self.ask_before_writes)
            .field("mark_ai_generated", &self.mark_ai_generated)
            .field("download_dir", &self.download_dir)
            .field("ca_file", &self.ca_file)
            .field("http_token", &self.http_token.as_ref().map(|_| "***"))
            .field("file_cache_bytes", &self.file_cache_bytes)
            .field("force_human_in_the_loop", &self.force_human_in_the_loop)
            .field("attach_pdf", &self.attach_pdf)
            .finish()
    }
}

/// `Need` says which of the connection variables a command requires:
/// `serve --demo` brings its own URL and token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// `MM_URL` and `MM_TOKEN` must be set.
    Connection,
    /// The caller supplies URL and token; the variables are ignored.
    Nothing,
}

impl Settings {
    /// `from_vars` reads the settings through `var` (the binary passes
    /// `std::env::var(..).ok()`). `home` is the person's home directory, for
    /// the default download directory. With [`Need::Nothing`], `url` and
    /// `token` are left empty for the caller to fill in.
    pub fn from_vars(
        var: impl Fn(&str) -> Option<String>,
        home: Option<&Path>,
        need: Need,
    ) -> Result<Settings, ConfigError> {
        let get = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let (url, token) = match need {
            Need::Nothing => (String::new(), Token::new("")),
            Need::Connection => {
                let raw = get("MM_URL").ok_or(ConfigError::Missing {
                    name: "MM_URL",
                    fix: "set it to the address you open Mattermost at, such as https://chat.example.com, \
                          or try porter without a server: `porter mattermost serve --demo` serves a built-in demo Mattermost",
                })?;
                let url = normalize_base_url(&raw).map_err(|e| ConfigError::Invalid {
                    name: "MM_URL",
                    value: if raw.contains('@') {
                        "<hidden: it holds credentials>".to_owned()
                    } else {
                        raw.clone()
                    },
                    reason: match e {
                        // The variable and its value are named already: only why, and what to set.
                        porter_mattermost::Error::BadUrl { reason, .. } => format!(
                            "{reason}; set it to the address you open Mattermost at, such as https://chat.example.com"
                        ),
                        other => other.to_string(),
                    },
                })?;
                let token = get("MM_TOKEN").ok_or(ConfigError::Missing {
                    name: "MM_TOKEN",
                    fix: "make a personal access token in Mattermost (Profile → Security → Personal Access Tokens) and set MM_TOKEN to it, or run `porter mattermost login` to keep one in the OS keychain",
                })?;
                (
                    url.as_str().trim_end_matches('/').to_owned(),
                    Token::new(token.trim()),
                )
            }
        };
        let flag = |name: &'static str, default: bool| -> Result<bool, ConfigError> {
            get(name).map_or(Ok(default), |value| {
                parse_bool(&value).ok_or_else(|| ConfigError::Invalid {
                    name,
                    value: value.clone(),
                    reason: "use 1/true/yes/on or 0/false/no/off".to_owned(),
                })
            })
        };
        let download_dir = match get("MM_MCP_DOWNLOAD_DIR") {
            Some(dir) => {
                let path = PathBuf::from(dir.trim());
                if !path.is_absolute() {
                    return Err(ConfigError::Invalid {
                        name: "MM_MCP_DOWNLOAD_DIR",
                        value: dir,
                        reason: "it must be an absolute path, such as /home/you/Downloads"
                            .to_owned(),
                    });
                }
                path
            }
            None => match home {
                Some(home) => home.join("Downloads"),
                None => {
                    return Err(ConfigError::Missing {
                        name: "MM_MCP_DOWNLOAD_DIR",
                        fix: "the home directory is unknown, so set it to an absolute directory for saved files",
                    });
                }
            },
        };
        let ask_before_writes = flag("MM_MCP_ASK_BEFORE_WRITES", true)?;
        let force_human_in_the_loop = flag("MM_MCP_FORCE_HUMAN_IN_THE_LOOP_IN_CLAUDE_CODE", false)?;
        if force_human_in_the_loop && ask_before_writes {
            return Err(ConfigError::Invalid {
                name: "MM_MCP_FORCE_HUMAN_IN_THE_LOOP_IN_CLAUDE_CODE",
                value: "true".to_owned(),
                reason: "porter already asks the person before every write (MM_MCP_ASK_BEFORE_WRITES is on), and the person would be asked twice; \
                         set MM_MCP_ASK_BEFORE_WRITES=false to leave asking to Claude Code, or unset MM_MCP_FORCE_HUMAN_IN_THE_LOOP_IN_CLAUDE_CODE"
                    .to_owned(),
            });
        }
        Ok(Settings {
            url,
            token,
            allow_writes: flag("MM_MCP_ALLOW_WRITES", false)?,
            ask_before_writes,
            mark_ai_generated: flag("MM_MCP_MARK_AI_GENERATED", true)?,
            download_dir,
            ca_file: get("MM_MCP_CA_FILE").map(|p| PathBuf::from(p.trim())),
            http_token: get("PORTER_MCP_HTTP_TOKEN").map(|t| Token::new(t.trim())),
            file_cache_bytes: match get("PORTER_MM_FILE_CACHE_BYTES") {
                None => crate::cache::FILE_CACHE_BYTES,
                Some(value) => value.trim().parse().map_err(|_| ConfigError::Invalid {
                    name: "PORTER_MM_FILE_CACHE_BYTES",
                    value: value.clone(),
                    reason: "use a whole number of bytes, such as 268435456; 0 turns the cache off"
                        .to_owned(),
                })?,
            },
            force_human_in_the_loop,
            attach_pdf: flag("MM_MCP_ATTACH_PDF", false)?,
        })
    }
}

/// `parse_bool` reads a boolean setting the way mm-mcp does: 1/true/yes/on
/// and 0/false/no/off, in any case; anything else is `None`.
#[must_use]
pub fn parse_bool(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn settings(vars: &[(&str, &str)], need: Need) -> Result<Settings, ConfigError> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Settings::from_vars(
            |name| map.get(name).cloned(),
            Some(Path::new("/home/someone")),
            need,
        )
    }

    #[test]
    fn booleans_take_the_usual_spellings_and_nothing_else() {
        for yes in ["1", "true", "TRUE", "yes", "On", " on "] {
            assert_eq!(parse_bool(yes), Some(true), "{yes}");
        }
        for no in ["0", "false", "No", "off", "OFF"] {
            assert_eq!(parse_bool(no), Some(false), "{no}");
        }
        for bad in ["", "2", "y", "n", "enabled", "tru"] {
            assert_eq!(parse_bool(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_defaults_are_the_safe_ones() {
        let s = settings(
            &[
                ("MM_URL", "https://chat.example.com/api/v4/"),
                ("MM_TOKEN", "t"),
            ],
            Need::Connection,
        )
        .unwrap();
        assert_eq!(s.url, "https://chat.example.com");
        assert!(!s.allow_writes);
        assert!(s.ask_before_writes);
        assert!(s.mark_ai_generated);
        assert_eq!(s.download_dir, PathBuf::from("/home/someone/Downloads"));
        assert_eq!(s.ca_file, None);
        assert!(s.http_token.is_none());
        assert!(
            !s.attach_pdf,
            "a PDF travels as its Markdown only unless asked"
        );
    }

    #[test]
    fn attaching_pdfs_is_asked_for_by_its_variable() {
        let on = settings(
            &[
                ("MM_URL", "https://x.org"),
                ("MM_TOKEN", "t"),
                ("MM_MCP_ATTACH_PDF", "yes"),
            ],
            Need::Connection,
        )
        .unwrap();
        assert!(on.attach_pdf);
        assert!(
            crate::Options::from_settings(&on, crate::Transport::Stdio)
                .view
                .attach_pdf
        );
        let bad = settings(
            &[
                ("MM_URL", "https://x.org"),
                ("MM_TOKEN", "t"),
                ("MM_MCP_ATTACH_PDF", "both"),
            ],
            Need::Connection,
        )
        .unwrap_err()
        .to_string();
        assert!(bad.contains("MM_MCP_ATTACH_PDF"), "{bad}");
    }

    #[test]
    fn a_bad_boolean_names_its_variable() {
        let err = settings(
            &[
                ("MM_URL", "https://chat.example.com"),
                ("MM_TOKEN", "t"),
                ("MM_MCP_ALLOW_WRITES", "sure"),
            ],
            Need::Connection,
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("MM_MCP_ALLOW_WRITES"), "{text}");
        assert!(text.contains("1/true/yes/on"), "{text}");
    }

    #[test]
    fn missing_or_unusable_connection_settings_say_what_to_set() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[("MM_TOKEN", "t")], "MM_URL is not set"),
            (&[("MM_URL", "https://x.org")], "MM_TOKEN is not set"),
            (&[("MM_URL", "  "), ("MM_TOKEN", "t")], "MM_URL is not set"),
            (
                &[("MM_URL", "chat.example.com"), ("MM_TOKEN", "t")],
                "MM_URL=",
            ),
            (
                &[
                    ("MM_URL", "https://x.org"),
                    ("MM_TOKEN", "t"),
                    ("MM_MCP_DOWNLOAD_DIR", "Downloads"),
                ],
                "absolute path",
            ),
        ];
        for (vars, words) in cases {
            let text = settings(vars, Need::Connection).unwrap_err().to_string();
            assert!(text.contains(words), "{vars:?}: {text}");
        }
    }

    #[test]
    fn an_unusable_url_is_explained_once_and_a_missing_one_points_at_the_demo() {
        let bad = settings(
            &[("MM_URL", "not-a-url"), ("MM_TOKEN", "t")],
            Need::Connection,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(bad.matches("cannot be used").count(), 1, "{bad}");
        assert_eq!(bad.matches("not-a-url").count(), 1, "{bad}");
        assert!(bad.contains("it is not a URL"), "{bad}");
        assert!(bad.contains("https://chat.example.com"), "{bad}");
        let missing = settings(&[("MM_TOKEN", "t")], Need::Connection)
            .unwrap_err()
            .to_string();
        assert!(missing.contains("--demo"), "{missing}");
    }

    #[test]
    fn a_url_with_a_password_is_not_repeated() {
        let text = settings(
            &[("MM_URL", "https://me:secret@x.org"), ("MM_TOKEN", "t")],
            Need::Connection,
        )
        .unwrap_err()
        .to_string();
        assert!(!text.contains("secret"), "{text}");
    }

    #[test]
    fn the_demo_needs_no_connection_settings() {
        let s = settings(&[("MM_MCP_ALLOW_WRITES", "yes")], Need::Nothing).unwrap();
        assert!(s.allow_writes);
        assert_eq!(s.url, "");
    }

    #[test]
    fn forcing_claude_codes_check_needs_porters_own_asking_off() {
        let base = [("MM_URL", "https://x.org"), ("MM_TOKEN", "t")];
        let with = |extra: &[(&'static str, &'static str)]| {
            let mut vars = base.to_vec();
            vars.extend_from_slice(extra);
            settings(&vars, Need::Connection)
        };
        let both = with(&[("MM_MCP_FORCE_HUMAN_IN_THE_LOOP_IN_CLAUDE_CODE", "true")])
            .unwrap_err()
            .to_string();
        assert!(
            both.contains("MM_MCP_FORCE_HUMAN_IN_THE_LOOP_IN_CLAUDE_CODE"),
            "{both}"
        );
        assert!(both.contains("asked twice"), "{both}");
        assert!(both.contains("MM_MCP_ASK_BEFORE_WRITES=false"), "{both}");
        let forced = with(&[
            ("MM_MCP_FORCE_HUMAN_IN_THE_LOOP_IN_CLAUDE_CODE", "yes"),
            ("MM_MCP_ASK_BEFORE_WRITES", "false"),
        ])
        .unwrap();
        assert!(forced.force_human_in_the_loop && !forced.ask_before_writes);
        assert!(!with(&[]).unwrap().force_human_in_the_loop);
    }

    #[test]
    fn tokens_never_show_in_debug() {
        let s = settings(
            &[
                ("MM_URL", "https://x.org"),
                ("MM_TOKEN", "s3cret-token"),
                ("PORTER_MCP_HTTP_TOKEN", "http-s3cret"),
            ],
            Need::Connection,
        )
        .unwrap();
        let debug = format!("{s:?}");
        assert!(!debug.contains("s3cret"), "{debug}");
    }
}
