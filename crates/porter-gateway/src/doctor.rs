//! `porter gateway doctor`: checks that the stores the config names answer
//! (the records database and its schema version, the blob store with a
//! probe object) and that every upstream server starts and lists its tools,
//! and says what to fix, without changing anything a gateway keeps.

use std::path::Path;

use porter_inbox::store::{NameGuard, POSTGRES_SCHEMA_VERSION, redacted_url};
use porter_inbox::{PostgresRecords, S3Blobs};

use crate::config::Config;

/// `Check` is one line of the doctor's report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// What was checked: `records`, `blobs`, `upstream <name>`.
    pub what: String,
    /// Whether it passed.
    pub ok: bool,
    /// What was found, and for a failure what to fix.
    pub text: String,
}

impl std::fmt::Display for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verdict = if self.ok { "ok" } else { "FAILED" };
        write!(f, "{}: {verdict}: {}", self.what, self.text)
    }
}

/// Runs every check of `config`'s stores, whose local data is under
/// `data_dir`. Blocking (call it off any async runtime's threads).
#[must_use]
pub fn run(config: &Config, data_dir: &Path) -> Vec<Check> {
    vec![records(config, data_dir), blobs(config, data_dir)]
}

/// Starts every upstream server `config` names (or connects to it) and
/// lists its tools, each within `timeout`: one check per server, naming
/// each that fails and why, with URL queries hidden.
pub async fn upstreams(config: &Config, timeout: std::time::Duration) -> Vec<Check> {
    let probed = crate::upstream::Upstreams::probe(&config.mcp_servers, timeout).await;
    probed
        .into_iter()
        .map(|(name, outcome)| {
            let how = match config.mcp_servers.get(&name) {
                Some(server) if server.url.is_some() => "its url and headers",
                _ => "its command, args and env",
            };
            match outcome {
                Ok(tools) => Check {
                    what: format!("upstream {name}"),
                    ok: true,
                    text: format!(
                        "started and listed {tools} tool{}",
                        if tools == 1 { "" } else { "s" }
                    ),
                },
                Err(why) => Check {
                    what: format!("upstream {name}"),
                    ok: false,
                    text: format!(
                        "{}; check {how} under mcp_servers.{name} in the config",
                        porter_net::hide_url_secrets(&why)
                    ),
                },
            }
        })
        .collect()
}

fn records(config: &Config, data_dir: &Path) -> Check {
    let Some(url) = &config.storage.resolved_postgres_url else {
        let db = data_dir.join("porter.sqlite3");
        // The first `serve` makes the data dir; so may doctor, run first.
        let opened = std::fs::create_dir_all(data_dir)
            .map_err(porter_inbox::InboxError::Io)
            .and_then(|()| porter_inbox::SqliteRecords::open(&db));
        return match opened {
            Ok(_) => Check {
                what: "records".to_owned(),
                ok: true,
                text: format!("SQLite at {} opens", db.display()),
            },
            Err(error) => Check {
                what: "records".to_owned(),
                ok: false,
                text: format!(
                    "SQLite at {}: {error}; check that the data dir exists and this user may write it",
                    db.display()
                ),
            },
        };
    };
    let shown = redacted_url(&url.0);
    match PostgresRecords::schema_version_at(&url.0) {
        Ok(None) => Check {
            what: "records".to_owned(),
            ok: true,
            text: format!(
                "PostgreSQL at {shown} answers; porter has not run against it yet (the schema, version {POSTGRES_SCHEMA_VERSION}, is made at the first start)"
            ),
        },
        Ok(Some(version)) if version == POSTGRES_SCHEMA_VERSION => Check {
            what: "records".to_owned(),
            ok: true,
            text: format!(
                "PostgreSQL at {shown} answers; schema version {version}, as this build expects"
            ),
        },
        Ok(Some(version)) if version < POSTGRES_SCHEMA_VERSION => Check {
            what: "records".to_owned(),
            ok: true,
            text: format!(
                "PostgreSQL at {shown} answers; schema version {version}, this build expects {POSTGRES_SCHEMA_VERSION}: the next `porter gateway serve` migrates it (under a lock, once for all replicas)"
            ),
        },
        Ok(Some(version)) => Check {
            what: "records".to_owned(),
            ok: false,
            text: format!(
                "PostgreSQL at {shown} holds schema version {version}, newer than this build's {POSTGRES_SCHEMA_VERSION}; run the porter that wrote it, or a newer one"
            ),
        },
        Err(error) => Check {
            what: "records".to_owned(),
            ok: false,
            text: error.to_string(),
        },
    }
}

fn blobs(config: &Config, data_dir: &Path) -> Check {
    let Some(s3) = &config.storage.resolved_s3 else {
        return local_probe(data_dir);
    };
    let opened = S3Blobs::open(s3).and_then(|blobs| blobs.probe().map(|()| blobs));
    match opened {
        Ok(blobs) => {
            let names = match blobs.name_guard() {
                NameGuard::Conditional => {
                    "the store refuses to replace a name (If-None-Match), so names stay unique across replicas"
                }
                NameGuard::ClaimedInProcess if config.storage.resolved_postgres_url.is_some() => {
                    "the store ignores If-None-Match, so each name is claimed in PostgreSQL before it is written, which keeps names unique across replicas"
                }
                NameGuard::ClaimedInProcess => {
                    "the store ignores If-None-Match, so each name is claimed within this gateway before it is written; replicas need records: postgres"
                }
            };
            Check {
                what: "blobs".to_owned(),
                ok: true,
                text: format!(
                    "{} wrote, read back and deleted a probe object; {names}",
                    blobs.shown()
                ),
            }
        }
        Err(error) => Check {
            what: "blobs".to_owned(),
            ok: false,
            text: error.to_string(),
        },
    }
}

/// Writes, reads back and removes a probe file in the data dir.
fn local_probe(data_dir: &Path) -> Check {
    let probe = data_dir.join(format!(".porter-doctor-{}", std::process::id()));
    let result = std::fs::create_dir_all(data_dir)
        .and_then(|()| std::fs::write(&probe, b"porter probe"))
        .and_then(|()| std::fs::read(&probe))
        .and_then(|read| {
            std::fs::remove_file(&probe)?;
            if read == b"porter probe" {
                Ok(())
            } else {
                Err(std::io::Error::other("read back different bytes"))
            }
        });
    match result {
        Ok(()) => Check {
            what: "blobs".to_owned(),
            ok: true,
            text: format!(
                "the local disk under {} takes a probe file (written, read, removed)",
                data_dir.display()
            ),
        },
        Err(error) => {
            let _ = std::fs::remove_file(&probe);
            Check {
                what: "blobs".to_owned(),
                ok: false,
                text: format!(
                    "a probe file in {} failed: {error}; check that the data dir exists and this user may write it",
                    data_dir.display()
                ),
            }
        }
    }
}
