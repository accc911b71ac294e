//! The flags `serve` takes for both servers (`porter mattermost serve` and
//! `porter gateway serve`): how clients reach the server, and which Host
//! names HTTP clients may use besides loopback; and where every server
//! listens (`--listen ADDR`, with `--host` and `--port` kept), the same for
//! both servers and `porter mmsim`.

use std::net::{SocketAddr, ToSocketAddrs as _};
use std::time::Duration;

use clap::{Args, ValueEnum};
use porter_mcp::sessions::SessionTimes;

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
    /// After how long without a request an HTTP session's memory is freed;
    /// its next request rebuilds it where it was (a number and s, m, h or d).
    #[arg(long = "session-park", value_name = "DURATION", default_value = "5m", value_parser = session_duration)]
    pub session_park: Duration,
    /// How long an HTTP session may go without a request and still go on;
    /// after it the session ends (and, in the gateway, its run).
    #[arg(long = "session-idle", value_name = "DURATION", default_value = "24h", value_parser = session_duration)]
    pub session_idle: Duration,
}

impl Reach {
    /// How long HTTP sessions live, or what to pass instead.
    pub(crate) fn sessions(&self) -> Result<SessionTimes, String> {
        if self.session_park > self.session_idle {
            return Err(format!(
                "--session-park ({}s) is longer than --session-idle ({}s): a session would end before it is parked; pass a --session-park no longer than --session-idle",
                self.session_park.as_secs(),
                self.session_idle.as_secs()
            ));
        }
        Ok(SessionTimes {
            park_after: self.session_park,
            end_after: self.session_idle,
        })
    }
}

/// A session's time as `--session-park` and `--session-idle` take it: a
/// whole number and a unit, at least a second.
fn session_duration(text: &str) -> Result<Duration, String> {
    let duration = porter_gateway::config::parse_duration(text)?;
    if duration < Duration::from_secs(1) {
        return Err(format!("{text:?} is no time at all; pass at least 1s"));
    }
    Ok(duration)
}

/// `Listen` is where a server listens: one `--listen HOST:PORT`, as every
/// porter server takes it, or its parts: `--host` and `--port` (the flags
/// `porter mattermost serve` took first), each replacing its part of the
/// server's default.
#[derive(Debug, Args)]
pub(crate) struct Listen {
    /// Where to listen, HOST:PORT (port 0 picks a free one). Defaults:
    /// 127.0.0.1:8765 for `mattermost serve`, 127.0.0.1:8766 for `gateway
    /// serve`, 127.0.0.1:0 for `mmsim`.
    #[arg(long = "listen", value_name = "ADDR", conflicts_with_all = ["host", "port"])]
    pub address: Option<String>,
    /// The host part of the address (as --listen HOST:…).
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// The port part of the address (as --listen …:PORT); 0 picks a free one.
    #[arg(long, value_name = "PORT")]
    pub port: Option<u16>,
}

impl Listen {
    /// The address asked for, as written: `--listen`, else `default` with
    /// `--host` and `--port` in place of its parts.
    pub(crate) fn written(&self, default: SocketAddr) -> String {
        if let Some(address) = &self.address {
            return address.trim().to_owned();
        }
        let port = self.port.unwrap_or(default.port());
        match &self.host {
            Some(host) if host.contains(':') && !host.starts_with('[') => {
                format!("[{host}]:{port}")
            }
            Some(host) => format!("{host}:{port}"),
            None => SocketAddr::new(default.ip(), port).to_string(),
        }
    }

    /// The address to listen on, resolved (a name such as `localhost`
    /// becomes its first address), or the sentence saying what to pass.
    pub(crate) fn resolve(&self, default: SocketAddr) -> Result<SocketAddr, String> {
        let written = self.written(default);
        written
            .to_socket_addrs()
            .ok()
            .and_then(|mut found| found.next())
            .ok_or_else(|| {
                format!(
                    "--listen {written} is not an address this machine can listen on; pass HOST:PORT, such as --listen {default}"
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listen(address: Option<&str>, host: Option<&str>, port: Option<u16>) -> Listen {
        Listen {
            address: address.map(str::to_owned),
            host: host.map(str::to_owned),
            port,
        }
    }

    #[test]
    fn listen_host_and_port_make_one_address_from_the_servers_default() {
        let default: SocketAddr = "127.0.0.1:8765".parse().expect("an address");
        let cases = [
            (listen(None, None, None), "127.0.0.1:8765"),
            (listen(Some("127.0.0.1:0"), None, None), "127.0.0.1:0"),
            (listen(None, None, Some(9000)), "127.0.0.1:9000"),
            (listen(None, Some("::1"), None), "[::1]:8765"),
            (listen(None, Some("0.0.0.0"), Some(1)), "0.0.0.0:1"),
        ];
        for (given, expected) in cases {
            assert_eq!(
                given.resolve(default).map(|a| a.to_string()),
                Ok(expected.to_owned()),
                "{given:?}"
            );
        }
        let bad = listen(Some("nowhere"), None, None)
            .resolve(default)
            .expect_err("no port");
        assert!(
            bad.contains("--listen nowhere") && bad.contains("--listen 127.0.0.1:8765"),
            "{bad}"
        );
    }
}
