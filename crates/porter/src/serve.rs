//! The flags `serve` takes for both servers (`porter mattermost serve` and
//! `porter gateway serve`): how clients reach the server, and which Host
//! names HTTP clients may use besides loopback. Where each listens stays
//! the server's own (`--host`/`--port`, `--listen`).

use clap::{Args, ValueEnum};

/// `TransportArg` is how clients reach a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TransportArg {
    /// Standard input and output, for a client that starts porter.
    Stdio,
    /// Streamable HTTP at /mcp.
    Http,
}

/// `Reach` is the flags both servers' `serve` shares.
#[derive(Debug, Args)]
pub(crate) struct Reach {
    /// How clients reach the server.
    #[arg(long, value_enum, default_value = "stdio")]
    pub transport: TransportArg,
    /// Another Host name HTTP clients may use besides loopback (repeatable),
    /// for a server reached by name; DNS-rebinding protection refuses others.
    #[arg(long = "allow-host", value_name = "NAME")]
    pub allow_hosts: Vec<String>,
}
