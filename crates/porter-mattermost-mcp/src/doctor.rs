//! `porter mattermost doctor`: checks the settings and the server, and says
//! what is wrong and how to fix it.

use std::fmt;
use std::path::Path;

use crate::config::Settings;
use porter_mattermost::{Client, ClientOptions, Error, OLDEST_SUPPORTED_VERSION, Version};

/// `Level` is how a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Fine.
    Ok,
    /// Worth knowing; nothing to fix.
    Note,
    /// Works, but may not do what the person expects.
    Warn,
    /// A setting is wrong (exit 2).
    Config,
    /// The server or the machine failed (exit 1).
    Failure,
}

/// `Check` is one line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// How it came out.
    pub level: Level,
    /// What was checked and found.
    pub what: String,
    /// What to do about it, when something is wrong.
    pub fix: Option<String>,
}

/// `Report` is every check, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// The checks.
    pub checks: Vec<Check>,
}

impl Report {
    pub(crate) fn push(&mut self, level: Level, what: impl Into<String>, fix: Option<String>) {
        self.checks.push(Check {
            level,
            what: what.into(),
            fix,
        });
    }

    /// `exit_code` is 2 when a setting is wrong, 1 when the server or the
    /// machine failed, else 0.
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        if self.checks.iter().any(|c| c.level == Level::Config) {
            2
        } else {
            u8::from(self.checks.iter().any(|c| c.level == Level::Failure))
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for check in &self.checks {
            let mark = match check.level {
                Level::Ok => "ok  ",
                Level::Note => "note",
                Level::Warn => "warn",
                Level::Config | Level::Failure => "FAIL",
            };
            writeln!(f, "{mark}  {}", check.what)?;
            if let Some(fix) = &check.fix {
                writeln!(f, "      fix: {fix}")?;
            }
        }
        Ok(())
    }
}

/// `doctor` checks the URL, the server's reachability and version, the
/// token, and the download directory.
pub async fn doctor(settings: &Settings) -> Report {
    let mut report = Report::default();
    let options = ClientOptions {
        ca_file: settings.ca_file.clone(),
        max_attempts: 1,
        ..ClientOptions::default()
    };
    let client = match Client::new(&settings.url, settings.token.clone(), options) {
        Ok(client) => {
            report.push(Level::Ok, format!("MM_URL is {}", client.base_url()), None);
            if let Some(ca) = &settings.ca_file {
                report.push(
                    Level::Ok,
                    format!("MM_MCP_CA_FILE {} holds certificates", ca.display()),
                    None,
                );
            }
            client
        }
        Err(error) => {
            report.push(Level::Config, error.to_string(), None);
            check_download_dir(&mut report, &settings.download_dir);
            return report;
        }
    };
    if !server_checks(&client, &mut report).await {
        check_download_dir(&mut report, &settings.download_dir);
        return report;
    }
    check_download_dir(&mut report, &settings.download_dir);
    report.push(
        Level::Note,
        if settings.allow_writes {
            if settings.ask_before_writes {
                "writes are allowed and ask the person first".to_owned()
            } else {
                "writes are allowed and do NOT ask the person first (MM_MCP_ASK_BEFORE_WRITES=false)".to_owned()
            }
        } else {
            "the server only reads (set MM_MCP_ALLOW_WRITES=true to allow posting)".to_owned()
        },
        None,
    );
    report
}

/// `server_checks` checks that the server answers, its version, and who
/// the client's token signs in as; `doctor` and the `diagnose` tool share
/// it. Answers false when the server cannot be reached at all (the later
/// checks are then skipped).
pub(crate) async fn server_checks(client: &Client, report: &mut Report) -> bool {
    let mut version_id = None;
    match client.ping().await {
        Ok(ping) => {
            version_id = ping.version_id;
            report.push(Level::Ok, format!("{} answers", client.base_url()), None);
        }
        Err(error @ Error::Network { .. }) => {
            report.push(
                Level::Failure,
                error.to_string(),
                Some("check that MM_URL is the address you open Mattermost at in a browser, and that this machine can reach it (VPN, proxy, firewall)".to_owned()),
            );
            return false;
        }
        Err(error) => report.push(
            Level::Warn,
            format!("the health check answered oddly: {error}"),
            Some(
                "if the next checks fail too, MM_URL may not point at a Mattermost server"
                    .to_owned(),
            ),
        ),
    }
    let config = client.client_config().await;
    let said = match &config {
        Ok(config) if !config.version.is_empty() => Some(config.version.clone()),
        _ => None,
    };
    match said.or(version_id).as_deref().map(|v| (v, Version::parse(v))) {
        Some((_, Some(version))) => check_version(report, version),
        Some((text, None)) => report.push(
            Level::Note,
            format!(
                "the server says its version is {text:?}, which porter cannot compare with {OLDEST_SUPPORTED_VERSION}, the oldest release it supports"
            ),
            None,
        ),
        None => match config {
            Err(error) => report.push(
                Level::Warn,
                format!("the server's version could not be read: {error}"),
                None,
            ),
            Ok(_) => report.push(Level::Note, "the server does not say its version", None),
        },
    }
    match client.me().await {
        Ok(me) => report.push(
            Level::Ok,
            format!("MM_TOKEN signs in as @{} ({})", me.username, me.full_name()),
            None,
        ),
        Err(error @ (Error::Unauthorized { .. } | Error::BadToken { .. })) => {
            report.push(Level::Config, error.to_string(), None);
        }
        Err(error) => report.push(Level::Failure, error.to_string(), None),
    }
    true
}

/// A server older than [`OLDEST_SUPPORTED_VERSION`] works in part: say
/// what fails there and what to do.
fn check_version(report: &mut Report, version: Version) {
    if version >= OLDEST_SUPPORTED_VERSION {
        report.push(
            Level::Ok,
            format!(
                "Mattermost version {version} (porter supports {OLDEST_SUPPORTED_VERSION} and newer)"
            ),
            None,
        );
    } else {
        report.push(
            Level::Warn,
            format!(
                "Mattermost version {version} is older than {OLDEST_SUPPORTED_VERSION}, the oldest release porter supports: adding several people to a channel at once fails there, and other tools may too"
            ),
            Some(format!(
                "ask the Mattermost admin to upgrade to {OLDEST_SUPPORTED_VERSION} or newer"
            )),
        );
    }
}

/// The download directory must be an existing, writable directory.
pub(crate) fn check_download_dir(report: &mut Report, dir: &Path) {
    let fix = Some(format!(
        "create {} or set MM_MCP_DOWNLOAD_DIR to an existing absolute directory you can write to",
        dir.display()
    ));
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => {
            let probe = dir.join(format!(".porter-doctor-{}", std::process::id()));
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&probe)
            {
                Ok(_) => {
                    let _ = std::fs::remove_file(&probe);
                    report.push(
                        Level::Ok,
                        format!("save_file writes into {}", dir.display()),
                        None,
                    );
                }
                Err(error) => report.push(
                    Level::Config,
                    format!(
                        "the download directory {} cannot be written: {error}",
                        dir.display()
                    ),
                    fix,
                ),
            }
        }
        Ok(_) => report.push(
            Level::Config,
            format!(
                "the download directory {} is not a directory",
                dir.display()
            ),
            fix,
        ),
        Err(error) => report.push(
            Level::Config,
            format!("the download directory {}: {error}", dir.display()),
            fix,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exit_code_is_the_worst_check() {
        let mut report = Report::default();
        report.push(Level::Ok, "a", None);
        report.push(Level::Warn, "b", None);
        assert_eq!(report.exit_code(), 0);
        report.push(Level::Failure, "c", None);
        assert_eq!(report.exit_code(), 1);
        report.push(Level::Config, "d", Some("fix it".to_owned()));
        assert_eq!(report.exit_code(), 2);
        let text = report.to_string();
        assert!(text.contains("FAIL  d\n      fix: fix it"), "{text}");
    }

    #[test]
    fn a_server_below_the_oldest_supported_release_is_warned_about() {
        let mut report = Report::default();
        check_version(&mut report, Version::parse("9.2.4").unwrap());
        check_version(&mut report, OLDEST_SUPPORTED_VERSION);
        check_version(&mut report, Version::parse("10.11.0").unwrap());
        let levels: Vec<Level> = report.checks.iter().map(|c| c.level).collect();
        assert_eq!(levels, [Level::Warn, Level::Ok, Level::Ok]);
        assert!(report.checks[0].what.contains("9.2.4"), "{report}");
        assert!(report.checks[0].what.contains("9.3.0"), "{report}");
        assert!(
            report.checks[0]
                .fix
                .as_deref()
                .is_some_and(|f| f.contains("upgrade"))
        );
        assert_eq!(
            report.exit_code(),
            0,
            "an old server is a warning, not a failure"
        );
    }

    #[test]
    fn a_missing_download_directory_is_a_configuration_error() {
        let mut report = Report::default();
        check_download_dir(&mut report, Path::new("/nonexistent/porter/Downloads"));
        assert_eq!(report.exit_code(), 2);
        let dir = tempfile::tempdir().unwrap();
        let mut report = Report::default();
        check_download_dir(&mut report, dir.path());
        assert_eq!(report.exit_code(), 0, "{report}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
