//! `porter mattermost`: its arguments, and the wiring of `serve`, `doctor`,
//! `login` and `logout` from the environment to `porter-mattermost-mcp`
//! (the tokens `login` keeps are in [`crate::login`]).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use porter_mattermost::{Client, ClientOptions, Error as MmError, Token};
use porter_mattermost_mcp::{
    HttpOptions, MattermostServer, Need, Options as ServerOptions, Settings, Transport,
};

use crate::process::busy_hint;
use crate::serve::{Listen, Reach, TransportArg};

/// `DEFAULT_LISTEN` is where the HTTP transport listens unless told.
const DEFAULT_LISTEN: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 8765);
use crate::{login, output};

#[derive(Debug, Args)]
pub(crate) struct MattermostArgs {
    #[command(subcommand)]
    command: MattermostCommand,
}

#[derive(Debug, Subcommand)]
enum MattermostCommand {
    /// Serve MCP over stdio (for a client that starts porter) or streamable
    /// HTTP at /mcp.
    Serve(ServeArgs),
    /// Check MM_URL, MM_TOKEN, the server and the download directory, and
    /// say what to fix.
    Doctor,
    /// Keep a token for a Mattermost URL in the OS keychain, by pasting a
    /// personal access token or signing in with username and password
    /// (+ MFA); serve and doctor use it when MM_TOKEN is unset.
    Login(login::LoginArgs),
    /// Remove the token kept for a Mattermost URL from the OS keychain.
    Logout(login::LogoutArgs),
}

#[derive(Debug, Args)]
struct ServeArgs {
    #[command(flatten)]
    reach: Reach,
    /// Where HTTP listens; anything but loopback needs PORTER_MCP_HTTP_TOKEN.
    #[command(flatten)]
    listen: Listen,
    /// Serve against a built-in demo Mattermost (signed in as alice), so
    /// every feature can be tried without a server; MM_URL and MM_TOKEN are
    /// not needed.
    #[arg(long)]
    demo: bool,
}

/// Runs `porter mattermost …`: exit 0 when the client closed the
/// connection (or after Ctrl-C over HTTP), 1 for a failure, 2 for a
/// configuration error.
pub(crate) fn run(args: MattermostArgs) -> ExitCode {
    crate::process::init_logging("warn,porter_mattermost=info,porter_mattermost_mcp=info");
    let runtime = match crate::process::runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    let home = std::env::var_os("HOME").map(PathBuf::from);
    // MM_TOKEN wins when set; otherwise the token `login` kept for MM_URL.
    let needs_token = matches!(
        args.command,
        MattermostCommand::Doctor | MattermostCommand::Serve(ServeArgs { demo: false, .. })
    );
    let stored = if needs_token {
        login::stored_token()
    } else {
        None
    };
    // An OAuth sign-in is renewed now when it is due, and then as it
    // expires while serving.
    let mut sign_in = None;
    let token = match stored {
        Some(login::Stored::Token(token)) => Some(token),
        Some(login::Stored::OAuth {
            url,
            sign_in: kept,
            store,
        }) => match runtime.block_on(login::oauth::source(&url, kept, store)) {
            Ok((source, token)) => {
                sign_in = Some(source);
                Some(token.expose().to_owned())
            }
            Err(error) => {
                eprintln!("porter: {error}");
                return ExitCode::from(2);
            }
        },
        None => None,
    };
    let vars = |name: &str| match std::env::var(name).ok() {
        Some(value) if !value.trim().is_empty() => Some(value),
        _ if name == "MM_TOKEN" => token.clone(),
        other => other,
    };
    match args.command {
        MattermostCommand::Login(login) => runtime.block_on(login::login(login)),
        MattermostCommand::Logout(logout) => login::logout(&logout),
        MattermostCommand::Doctor => {
            let settings = match Settings::from_vars(vars, home.as_deref(), Need::Connection) {
                Ok(settings) => settings,
                Err(error) => {
                    return output::finish(
                        output::print(&format!("FAIL  {error}\n")),
                        ExitCode::from(2),
                    );
                }
            };
            let mut report = runtime.block_on(porter_mattermost_mcp::doctor(&settings));
            if let Some(source) = &sign_in {
                let kept = runtime.block_on(source.sign_in());
                report.checks.push(porter_mattermost_mcp::Check {
                    level: porter_mattermost_mcp::Level::Note,
                    what: format!(
                        "signed in with OAuth (porter mattermost login --oauth); the sign-in expires {}{}",
                        login::oauth::expiry_text(&kept),
                        if kept.refresh_token.is_some() {
                            " and is renewed before then"
                        } else {
                            "; the app is public, so run porter mattermost login --oauth again then"
                        }
                    ),
                    fix: None,
                });
            }
            output::finish(
                output::print(&report.to_string()),
                ExitCode::from(report.exit_code()),
            )
        }
        MattermostCommand::Serve(serve) => {
            let need = if serve.demo {
                Need::Nothing
            } else {
                Need::Connection
            };
            match Settings::from_vars(vars, home.as_deref(), need) {
                Ok(settings) => runtime.block_on(run_serve(serve, settings, sign_in)),
                Err(error) => {
                    eprintln!("porter: {error}");
                    ExitCode::from(2)
                }
            }
        }
    }
}

async fn run_serve(
    args: ServeArgs,
    mut settings: Settings,
    sign_in: Option<std::sync::Arc<porter_mattermost::oauth::SignInSource>>,
) -> ExitCode {
    let transport = match args.reach.transport {
        TransportArg::Stdio => Transport::Stdio,
        TransportArg::Http => Transport::Http,
    };
    let sessions = match args.reach.sessions() {
        Ok(sessions) => sessions,
        Err(why) => {
            eprintln!("porter: {why}");
            return ExitCode::from(2);
        }
    };
    let bind = if transport == Transport::Http {
        match http_address(&args, &settings) {
            Ok(addr) => Some(addr),
            Err(code) => return code,
        }
    } else {
        None
    };
    // The demo's emulator lives as long as the server.
    let mut _demo = None;
    if args.demo {
        match start_demo().await {
            Ok((running, token)) => {
                settings.url.clone_from(&running.url);
                settings.token = Token::new(token);
                eprintln!(
                    "porter: demo Mattermost at {} (signed in as alice)",
                    running.url
                );
                _demo = Some(running);
            }
            Err(error) => {
                eprintln!("porter: cannot start the demo Mattermost: {error:#}");
                return ExitCode::from(1);
            }
        }
    }
    let client_options = ClientOptions {
        ca_file: settings.ca_file.clone(),
        ..ClientOptions::default()
    };
    let client = match Client::new(&settings.url, settings.token.clone(), client_options) {
        Ok(client) => match sign_in {
            Some(source) => client.with_token_source(source),
            None => client,
        },
        Err(error) => {
            eprintln!("porter: {error}");
            return ExitCode::from(2);
        }
    };
    let mut options = ServerOptions::from_settings(&settings, transport);
    options.home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let server = MattermostServer::new(client.clone(), settings.token.clone(), options);
    match client.me().await {
        Ok(me) => {
            tracing::info!(user = %me.username, url = client.base_url(), "signed in");
            server.set_me(me);
        }
        Err(error @ (MmError::Unauthorized { .. } | MmError::BadToken { .. })) => {
            eprintln!("porter: {error}");
            return ExitCode::from(2);
        }
        Err(error) => {
            tracing::warn!(
                "{error}; serving anyway, tools will fail until Mattermost can be reached"
            );
        }
    }
    let outcome = match bind {
        None => porter_mattermost_mcp::serve_stdio(server).await,
        Some(addr) => {
            let listener = match tokio::net::TcpListener::bind(addr).await {
                Ok(listener) => listener,
                Err(error) => {
                    eprintln!(
                        "porter: cannot listen on {addr}: {error}{}",
                        busy_hint(
                            &error,
                            "pass another --listen address (--listen 127.0.0.1:0 picks a free port)"
                        )
                    );
                    return ExitCode::from(1);
                }
            };
            let local = listener.local_addr().unwrap_or(addr);
            let url = format!("http://{local}/mcp");
            eprintln!("porter: MCP at {url}");
            if args.demo {
                let snippet = serde_json::json!({
                    "mcpServers": { "porter-mattermost-demo": { "type": "http", "url": url } }
                });
                eprintln!(
                    "porter: paste this into your MCP client's configuration:\n{}",
                    serde_json::to_string_pretty(&snippet).unwrap_or_default()
                );
            }
            let http = HttpOptions {
                bearer: settings.http_token.clone(),
                extra_hosts: args.reach.allow_hosts.clone(),
                sessions,
                ..HttpOptions::default()
            };
            let stop = async {
                let _ = tokio::signal::ctrl_c().await;
            };
            porter_mattermost_mcp::serve_http(server, listener, http, stop).await
        }
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("porter: the server stopped: {error}");
            ExitCode::from(1)
        }
    }
}

/// The address `serve --transport http` listens on: `--listen` (or
/// `--host` and `--port`) resolved, and refused (exit 2) when it is not
/// local and no bearer token is set.
fn http_address(args: &ServeArgs, settings: &Settings) -> Result<SocketAddr, ExitCode> {
    let addr = match args.listen.resolve(DEFAULT_LISTEN) {
        Ok(addr) => addr,
        Err(why) => {
            eprintln!("porter: {why}");
            return Err(ExitCode::from(2));
        }
    };
    if !addr.ip().is_loopback() && settings.http_token.is_none() {
        eprintln!(
            "porter: --listen {} is reachable from other machines, so set PORTER_MCP_HTTP_TOKEN to a long random secret that clients must send as a bearer token (or listen on 127.0.0.1)",
            args.listen.written(DEFAULT_LISTEN)
        );
        return Err(ExitCode::from(2));
    }
    Ok(addr)
}

/// Starts the emulator with the demo seed on a free loopback port and
/// answers it with alice's token.
/// Adds the voice memo `scripts/demo` speaks with espeak-ng (named by
/// `PORTER_DEMO_RECORDING`) to the demo's files channel, so that a
/// recording can be read as text in the demo; without it the demo is as
/// before.
fn add_demo_recording(seed: &mut porter_mmsim::Seed) {
    let Some(path) = std::env::var_os("PORTER_DEMO_RECORDING").map(std::path::PathBuf::from) else {
        return;
    };
    if !path.is_file() {
        eprintln!(
            "porter: no demo recording at {} (PORTER_DEMO_RECORDING)",
            path.display()
        );
        return;
    }
    let name = path.file_name().map_or_else(
        || "voice-memo.wav".to_owned(),
        |n| n.to_string_lossy().into_owned(),
    );
    seed.posts.push(porter_mmsim::SeedPost {
        channel: "files".to_owned(),
        user: "carol".to_owned(),
        message: "Voice memo from this morning's stand-up.".to_owned(),
        files: vec![porter_mmsim::SeedFile {
            name,
            text: None,
            base64: None,
            path: Some(path),
            generate: None,
        }],
        ..porter_mmsim::SeedPost::default()
    });
}

async fn start_demo() -> anyhow::Result<(porter_mmsim::Running, String)> {
    let mut seed = porter_mmsim::Seed::demo();
    add_demo_recording(&mut seed);
    let sim = porter_mmsim::Sim::new(&seed).context("the demo seed")?;
    let token = sim
        .token_for("alice")
        .context("the demo seed has a token for alice")?;
    let running = porter_mmsim::start(sim, SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .context("cannot listen on loopback")?;
    Ok((running, token))
}
