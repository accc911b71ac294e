//! `porter mmsim`: the Mattermost API emulator on loopback.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::process::ExitCode;

use clap::Args;

use crate::output;
use crate::process::{busy_hint, runtime};

/// `DEFAULT_LISTEN` is where the emulator listens unless told: a free
/// loopback port.
const DEFAULT_LISTEN: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 0);

#[derive(Debug, Args)]
pub(crate) struct MmsimArgs {
    /// Where to listen: loopback only, because the emulator's tokens are
    /// public.
    #[command(flatten)]
    pub listen: crate::serve::Listen,
    /// `demo` for the built-in teams, channels, users, posts and files, or
    /// the path of a YAML/JSON seed file.
    #[arg(long, value_name = "FILE|demo", default_value = "demo")]
    pub seed: String,
}

/// Serves the emulator until interrupted: exit 0 after Ctrl-C, 2 for a bad
/// seed or a non-loopback address, 1 when it cannot listen.
pub(crate) fn run(args: &MmsimArgs) -> ExitCode {
    let listen = match args.listen.resolve(DEFAULT_LISTEN) {
        Ok(listen) => listen,
        Err(why) => {
            eprintln!("porter: {why}");
            return ExitCode::from(2);
        }
    };
    if !listen.ip().is_loopback() {
        eprintln!(
            "porter: the emulator listens on loopback only (its tokens are public); pass --listen 127.0.0.1:PORT"
        );
        return ExitCode::from(2);
    }
    let seed = if args.seed == "demo" {
        porter_mmsim::Seed::demo()
    } else {
        match porter_mmsim::Seed::from_path(std::path::Path::new(&args.seed)) {
            Ok(seed) => seed,
            Err(error) => {
                eprintln!("porter: {error}");
                return ExitCode::from(2);
            }
        }
    };
    let user = seed
        .users
        .iter()
        .find(|u| !u.deleted && (u.token.is_some() || !u.tokens.is_empty()))
        .map(|u| {
            (
                u.username.clone(),
                u.token.clone().or_else(|| u.tokens.first().cloned()),
            )
        });
    let sim = match porter_mmsim::Sim::new(&seed) {
        Ok(sim) => sim,
        Err(error) => {
            eprintln!("porter: {error}");
            return ExitCode::from(2);
        }
    };
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    runtime.block_on(async move {
        let running = match porter_mmsim::start(sim, listen).await {
            Ok(running) => running,
            Err(error) => {
                eprintln!(
                    "porter: cannot listen on {listen}: {error}{}",
                    busy_hint(
                        &error,
                        "pass another --listen address (--listen 127.0.0.1:0 picks a free port)"
                    )
                );
                return ExitCode::from(1);
            }
        };
        let mut announced = format!("MM_URL={}\n", running.url);
        if let Some((username, Some(token))) = user {
            let _ = write!(
                announced,
                "MM_TOKEN={token}\n# the token signs in as {username}; stop the emulator with Ctrl-C\n"
            );
        }
        // The announcement is a courtesy: with no one reading it (the
        // reader went away) the emulator still serves until Ctrl-C.
        let _ = output::print(&announced);
        let _ = tokio::signal::ctrl_c().await;
        running.shutdown().await;
        ExitCode::SUCCESS
    })
}
