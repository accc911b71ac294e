//! `porter-gateway` is an MCP runtime in front of other MCP servers. To its
//! client it is one MCP server; to each upstream server named in its config
//! it is a client. Upstream tools are listed as `mcp__<server>__<tool>`
//! beside the gateway's own `File` tool. Every file an upstream result
//! carries (image, audio and resource blocks, and — for servers set to
//! `binary_results: capture` — long base64 strings) is kept in the run's
//! inbox on disk and reaches the model as one line: path, type, size,
//! sha256 and origin. The inbox can be reached from outside over an HTTP
//! API (and as the `file` tool of the admin MCP endpoint), with API keys,
//! tenants and roles.
//!
//! It deliberately does not read the environment or config files itself:
//! the binary loads a [`config::Config`] and hands it over, with the data
//! directory and the resolved API keys.
//!
//! ```no_run
//! # async fn run() -> anyhow::Result<()> {
//! use porter_gateway::{Gateway, config::Config};
//!
//! let config = Config::default();
//! let gateway = Gateway::new(config, "/tmp/porter-data".as_ref(), Default::default())?;
//! porter_gateway::serve::stdio(gateway).await?;
//! # Ok(()) }
//! ```

pub mod access;
pub mod admin;
pub mod api;
pub mod config;
pub mod context;
pub mod doctor;
pub mod hooks;
pub mod replicas;
pub mod serve;
pub mod session;
pub mod tools;
pub mod upstream;

pub use tools::{documents, file, git, web};

use std::path::Path;
use std::sync::Arc;

use porter_inbox::Inbox;
use porter_mcp::Registry;
use porter_mcp::sessions::KeptSessions;

use crate::access::Keys;
use crate::config::Config;
use crate::context::Turn;
use crate::tools::documents::DocumentsTool;
use crate::tools::file::Files;
use crate::tools::offered::Offered;
use crate::tools::web::Web;
use crate::upstream::Upstreams;

/// `DEFAULT_LOG_FILTER` is the log filter `porter gateway serve` starts
/// with when `RUST_LOG` is unset: warnings, the gateway's and the inbox's
/// own news, and the audit lines of the Git tool ([`porter_git::AUDIT_TARGET`]:
/// which credential went where, why a remote was refused), which are meant
/// for the operator and so shown by default.
pub const DEFAULT_LOG_FILTER: &str =
    "warn,porter_gateway=info,porter_inbox=info,porter::audit=info";

/// `Gateway` is what every session shares: the config, the inbox, the File
/// tool's files, the upstream connections, the API keys and the gateway's
/// own tools (each holding what it keeps between calls).
pub struct Gateway {
    pub config: Arc<Config>,
    /// The one policy-checked HTTP client every network tool uses.
    pub net: porter_net::Net,
    pub inbox: Arc<Inbox>,
    /// The `File` tool's work, which the run API and the admin endpoint
    /// call too.
    pub files: Arc<Files>,
    pub upstreams: Arc<Upstreams>,
    pub keys: Keys,
    /// The shared run of each key for requests without a session, with
    /// when it was last used.
    shared_runs: std::sync::Mutex<SharedRuns>,
    /// Each run's redactor, shared by every session and request of the run.
    redactors:
        std::sync::Mutex<std::collections::HashMap<porter_inbox::RunId, porter_net::Redactor>>,
    /// The gateway's own tools, by name, as sessions list and call them,
    /// each with to whom it is offered.
    pub tools: Registry<Turn, Offered>,
    /// The HTTP sessions this process serves, each it opened with its
    /// run, kept past a quiet spell so that a parked session resumes on
    /// its run (set when HTTP is served).
    pub kept_sessions: std::sync::OnceLock<Arc<KeptSessions<porter_inbox::RunId>>>,
}

/// The shared run of each owner (key name, tenant) and client name, and
/// when it was last used.
type SharedRuns = std::collections::HashMap<
    (String, String, Option<String>),
    (porter_inbox::RunInfo, std::time::Instant),
>;

impl Gateway {
    /// Opens the inbox under `data_dir` and gets ready to start upstream
    /// servers on first use.
    pub fn new(config: Config, data_dir: &Path, keys: Keys) -> anyhow::Result<Arc<Self>> {
        porter_git::init()?;
        let postgres_url = config.storage.resolved_postgres_url.as_ref();
        let inbox = Arc::new(match (&config.storage.resolved_s3, postgres_url) {
            (Some(s3), url) => {
                let blobs = Arc::new(porter_inbox::S3Blobs::open(s3)?);
                Inbox::open_with_blobs(data_dir, blobs, url.map(|u| u.0.as_str()), config.limits())?
            }
            (None, Some(url)) => Inbox::open_on_postgres(data_dir, &url.0, config.limits())?,
            (None, None) => Inbox::open(data_dir, config.limits())?,
        });
        let net = porter_net::Net::new(config.net_policy())?;
        let hooks = hooks::Hooks::new(&config.hooks, &net);
        let files = Arc::new(
            Files::new(inbox.clone(), config.volumes.clone()).with_network(net.clone(), hooks),
        );
        let upstreams = Arc::new(Upstreams::new(&config.mcp_servers));
        let git_net =
            porter_net::Net::new(git::GitTool::net_policy(&config.net_policy(), &config.git))?;
        let git = git::GitTool::new(git_net, config.git.clone(), config.volumes.clone());
        let config = Arc::new(config);
        // The gateway's own tools, each a [`porter_mcp::Tool`] of a [`Turn`]
        // filed with its noun (its arguments, the grant it checks, its call)
        // and holding what it keeps between calls.
        let web = Arc::new(Web::new(net.clone(), inbox.clone()));
        let tools = Registry::new()
            .with(
                file::File {
                    files: files.clone(),
                },
                file::OFFERED,
            )
            .with(
                documents::Documents {
                    documents: Arc::new(DocumentsTool::new(inbox.clone())),
                },
                Offered::Always,
            )
            .with(tools::http::Http { web: web.clone() }, web::OFFERED)
            .with(tools::webfetch::WebFetch { web }, web::OFFERED)
            .with(
                git::Git {
                    git: Arc::new(git),
                    config: config.clone(),
                },
                git::OFFERED,
            );
        Ok(Arc::new(Self {
            config,
            net,
            inbox,
            files,
            upstreams,
            keys,
            shared_runs: std::sync::Mutex::default(),
            redactors: std::sync::Mutex::default(),
            tools,
            kept_sessions: std::sync::OnceLock::new(),
        }))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_default_log_filter_shows_the_audit_target_at_info() {
        let directive = format!("{}=info", porter_git::AUDIT_TARGET);
        assert!(
            super::DEFAULT_LOG_FILTER.split(',').any(|d| d == directive),
            "{}",
            super::DEFAULT_LOG_FILTER
        );
    }
}
