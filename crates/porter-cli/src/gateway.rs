//! `porter gateway …`: reads the config file and the environment, then
//! hands them to `porter-gateway`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use porter_gateway::Gateway;
use porter_gateway::config::{Config, ConfigError};
use porter_gateway::serve::HttpOptions;

use crate::serve::{Listen, Reach, TransportArg};

/// `DEFAULT_LISTEN` is where the HTTP transport listens unless told.
const DEFAULT_LISTEN: std::net::SocketAddr =
    std::net::SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 8766);

#[derive(Debug, Args)]
pub struct GatewayArgs {
    #[command(subcommand)]
    command: GatewayCommand,
}

#[derive(Debug, Subcommand)]
enum GatewayCommand {
    /// Serve the gateway: an MCP server in front of the upstream MCP
    /// servers named in the config, keeping the files their tools return in
    /// the run's inbox.
    Serve(ServeArgs),
    /// Print the JSON Schema of the config file.
    Schema,
    /// Check the stores the config names (the records database answers and
    /// its schema version against this build's; the blob store takes a
    /// probe object written, read back and deleted) and that every upstream
    /// server starts and lists its tools. Says what to fix; exit 0 when
    /// every check passes, 1 otherwise.
    Doctor(DoctorArgs),
}

#[derive(Debug, Args)]
struct DoctorArgs {
    /// The config file (YAML); without one the embedded defaults apply.
    #[arg(long)]
    config: Option<PathBuf>,
    /// How long each upstream server may take to start and list its tools.
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    timeout: u64,
}

#[derive(Debug, Args)]
struct ServeArgs {
    /// The config file (YAML); without one the embedded defaults apply.
    #[arg(long)]
    config: Option<PathBuf>,
    #[command(flatten)]
    reach: Reach,
    /// Where the HTTP transport listens (with --transport http); the
    /// address it took is printed on stderr.
    #[command(flatten)]
    listen: Listen,
}

/// Runs `porter gateway …`: exit 0 when served to the end, 1 for a failure,
/// 2 for a configuration error.
pub fn run(args: GatewayArgs) -> ExitCode {
    match args.command {
        GatewayCommand::Schema => {
            match serde_json::to_string_pretty(&porter_gateway::config::schema()) {
                Ok(text) => crate::output::finish(
                    crate::output::print(&format!("{text}\n")),
                    ExitCode::SUCCESS,
                ),
                Err(error) => {
                    eprintln!("porter: {error}");
                    ExitCode::from(1)
                }
            }
        }
        GatewayCommand::Doctor(doctor) => run_doctor(&doctor),
        GatewayCommand::Serve(serve) => {
            crate::process::init_logging(porter_gateway::DEFAULT_LOG_FILTER);
            let config = match load_config(serve.config.as_deref()) {
                Ok(config) => config,
                Err(error) => {
                    eprintln!("porter: {error}");
                    return ExitCode::from(2);
                }
            };
            let mut config = config;
            config.git = match config.git_resolved(&env_var) {
                Ok(git) => git,
                Err(error) => {
                    eprintln!("porter: {error}");
                    return ExitCode::from(2);
                }
            };
            let keys = match config.keys(&env_var) {
                Ok(keys) => keys,
                Err(error) => {
                    eprintln!("porter: {error}");
                    return ExitCode::from(2);
                }
            };
            let listen = match serve.listen.resolve(DEFAULT_LISTEN) {
                Ok(listen) => listen,
                Err(why) => {
                    eprintln!("porter: {why}");
                    return ExitCode::from(2);
                }
            };
            if let Err(why) = serve.reach.sessions() {
                eprintln!("porter: {why}");
                return ExitCode::from(2);
            }
            if keys.is_empty()
                && matches!(serve.reach.transport, TransportArg::Http)
                && !listen.ip().is_loopback()
            {
                eprintln!(
                    "porter: with no api_keys in the config the HTTP transport serves the local \
                     user only, so it listens on loopback only; add api_keys or listen on 127.0.0.1"
                );
                return ExitCode::from(2);
            }
            let data_dir = data_dir(&config, &env_var);
            let runtime = match crate::process::runtime() {
                Ok(runtime) => runtime,
                Err(code) => return code,
            };
            match runtime.block_on(serve_gateway(serve, listen, config, keys, &data_dir)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("porter: {error:#}");
                    ExitCode::from(1)
                }
            }
        }
    }
}

/// `porter gateway doctor`: one line per check on stdout, exit 0 when all
/// pass, 1 when any fails (a config that cannot be read is one).
fn run_doctor(args: &DoctorArgs) -> ExitCode {
    let config = match load_config(args.config.as_deref()) {
        Ok(config) => config,
        Err(error) => {
            let line = format!("config: FAILED: {error}\n");
            return crate::output::finish(crate::output::print(&line), ExitCode::from(1));
        }
    };
    let _ = rustls::crypto::ring::default_provider().install_default();
    let data_dir = data_dir(&config, &env_var);
    let mut checks = porter_gateway::doctor::run(&config, &data_dir);
    let runtime = match crate::process::runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    let timeout = std::time::Duration::from_secs(args.timeout.max(1));
    checks.extend(runtime.block_on(porter_gateway::doctor::upstreams(&config, timeout)));
    let failed = checks.iter().filter(|check| !check.ok).count();
    let mut lines: Vec<String> = checks.iter().map(ToString::to_string).collect();
    lines.push(match failed {
        0 => "doctor: every check passed".to_owned(),
        1 => "doctor: 1 check failed; fix it and run doctor again".to_owned(),
        n => format!("doctor: {n} checks failed; fix them and run doctor again"),
    });
    let text = lines.join("\n") + "\n";
    let code = if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    };
    crate::output::finish(crate::output::print(&text), code)
}

/// An environment variable, as the config's `${VAR}`s and the data dir read
/// it; unset or not Unicode is `None`.
fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Reads the config file, or the embedded defaults when none is given.
fn load_config(path: Option<&Path>) -> Result<Config, ConfigError> {
    match path {
        Some(path) => Config::load(path, &env_var),
        None => Config::from_yaml("", &env_var),
    }
}

async fn serve_gateway(
    args: ServeArgs,
    listen: std::net::SocketAddr,
    config: Config,
    keys: porter_gateway::access::Keys,
    data_dir: &Path,
) -> anyhow::Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let no_keys = keys.is_empty();
    let gateway = Gateway::new(config, data_dir, keys)
        .with_context(|| format!("cannot open the gateway's data in {}", data_dir.display()))?;
    match args.reach.transport {
        TransportArg::Stdio => porter_gateway::serve::stdio(gateway).await,
        TransportArg::Http => {
            let listener = match tokio::net::TcpListener::bind(listen).await {
                Ok(listener) => listener,
                Err(error) => {
                    let hint = crate::process::busy_hint(
                        &error,
                        "pass another --listen address (--listen 127.0.0.1:0 picks a free port)",
                    );
                    anyhow::bail!("cannot listen on {listen}: {error}{hint}");
                }
            };
            let addr = listener.local_addr()?;
            // Without keys the page and the run API would answer every
            // call 401: the person at this machine gets a key of this
            // process's own, in the page's address (in its fragment, which
            // a browser never sends on).
            let (api_keys, page) = if no_keys {
                let key = porter_gateway::access::KeyInfo::one_time(&gateway.local_caller())
                    .context("cannot make a one-time key for the web page")?;
                let page = format!(
                    "porter: the web page: http://{addr}/#token={} (a one-time key of this process; \
                     for a key that lasts, or to reach the page from elsewhere, add api_keys to the config)\n",
                    key.secret
                );
                (porter_gateway::access::Keys::new(vec![key]), page)
            } else {
                (
                    gateway.keys.clone(),
                    format!(
                        "porter: the web page: http://{addr}/ (it asks for a key from api_keys)\n"
                    ),
                )
            };
            // One write each, so that whoever reads the log never sees an
            // address cut short.
            let line = format!(
                "porter: gateway listening on http://{addr} (MCP at /mcp, the web page at /)\n"
            );
            let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
            let _ = std::io::Write::write_all(&mut std::io::stderr(), page.as_bytes());
            let options = HttpOptions {
                sessions: args.reach.sessions().map_err(anyhow::Error::msg)?,
                allow_hosts: args.reach.allow_hosts,
                ..HttpOptions::default()
            };
            let extra = api_routes(&gateway, api_keys);
            porter_gateway::serve::http(gateway, listener, options, extra, async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
            Ok(())
        }
    }
}

/// The run API and the web page, answering `keys`.
fn api_routes(gateway: &Arc<Gateway>, keys: porter_gateway::access::Keys) -> axum::Router {
    porter_gateway::api::router(Arc::new(porter_gateway::api::ApiState {
        inbox: gateway.inbox.clone(),
        files: gateway.files.clone(),
        keys,
    }))
}

/// Where the gateway keeps its data: the config's `data_dir`, else
/// `PORTER_DATA_DIR`, else the platform data dir (`$XDG_DATA_HOME/porter`
/// or `~/.local/share/porter`).
fn data_dir(config: &Config, vars: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    if let Some(dir) = &config.data_dir {
        return dir.clone();
    }
    if let Some(dir) = vars("PORTER_DATA_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = vars("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        return Path::new(&dir).join("porter");
    }
    match vars("HOME") {
        Some(home) => Path::new(&home).join(".local/share/porter"),
        None => PathBuf::from(".porter"),
    }
}
