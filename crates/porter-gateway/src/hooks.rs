//! The operator's hooks: a command and/or a webhook that judge each network
//! operation of the `File` tool (download, upload) before any byte moves.
//!
//! A hook sees what the operation is about, never its bytes: for an upload
//! `{op, from, size, sha256, url, method}`, for a download `{op, url, to}`,
//! every URL in its display form (query as `?…`). A hook that cannot be
//! started, reached or does not answer in time refuses: a judge the
//! operator configured is never skipped. With both a command and a webhook,
//! both must allow.

use std::process::Stdio;
use std::time::Duration;

use porter_net::reqwest::Method;
use porter_net::reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use porter_net::{Net, RequestOptions, display_url};
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use url::Url;

use crate::config::{HooksConfig, parse_duration};

/// `HOOK_TIMEOUT` is how long a hook may take by default: long enough for
/// a script that looks something up, short enough that a hung one does not
/// hold the model's call.
pub const HOOK_TIMEOUT: Duration = Duration::from_secs(10);

/// `REASON_MAX_CHARS` is the most of a hook's reason passed on, so that a
/// chatty script cannot flood the model's context.
pub const REASON_MAX_CHARS: usize = 500;

/// `WEBHOOK_ANSWER_MAX_BYTES` is the most of a webhook's answer read.
const WEBHOOK_ANSWER_MAX_BYTES: usize = 64 * 1024;

/// `Hooks` are the operator's judges of network operations. The default
/// has none and allows everything the grants and the network policy allow.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    command: Option<Vec<String>>,
    /// The webhook's URL (`None` when it does not parse: it then refuses)
    /// and the client to call it with.
    webhook: Option<(Option<Url>, Net)>,
    timeout: Option<Duration>,
}

impl Hooks {
    /// The hooks of `config`; the webhook is called through `net`, so the
    /// network policy applies to it as to everything else. A webhook URL
    /// that does not parse (only possible for a config built by hand, since
    /// loading checks it) is kept as a hook that always refuses.
    #[must_use]
    pub fn new(config: &HooksConfig, net: &Net) -> Self {
        let webhook = config
            .webhook
            .as_deref()
            .map(|text| (Url::parse(text).ok(), net.clone()));
        Self {
            command: config.command.clone().filter(|c| !c.is_empty()),
            webhook,
            timeout: config
                .timeout
                .as_deref()
                .and_then(|t| parse_duration(t).ok()),
        }
    }

    /// Whether any hook is configured.
    #[must_use]
    pub fn is_configured(&self) -> bool {
        self.command.is_some() || self.webhook.is_some()
    }

    fn timeout(&self) -> Duration {
        self.timeout.unwrap_or(HOOK_TIMEOUT)
    }

    /// Asks every configured hook about `operation`; `Err` carries the
    /// sentence the caller reads (the hook's own reason, when it gave one).
    pub async fn judge(&self, operation: &Value) -> Result<(), String> {
        let input = operation.to_string();
        if let Some(command) = &self.command {
            self.run_command(command, &input).await?;
        }
        if let Some((url, net)) = &self.webhook {
            let Some(url) = url else {
                return Err(
                    "the operator's hook webhook has no valid URL, so the operation is refused; tell the operator"
                        .to_owned(),
                );
            };
            self.call_webhook(url, net, &input).await?;
        }
        Ok(())
    }

    async fn run_command(&self, command: &[String], input: &str) -> Result<(), String> {
        let Some((program, args)) = command.split_first() else {
            return Ok(());
        };
        let spawned = tokio::process::Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn();
        let mut child = spawned.map_err(|error| {
            tracing::error!(program, %error, "the hook command could not be started");
            "the operator's hook could not be run, so the operation is refused; tell the operator"
                .to_owned()
        })?;
        let stdin = child.stdin.take();
        let stderr = child.stderr.take();
        let talk = async move {
            if let Some(mut stdin) = stdin {
                // A hook that decides without reading its input closes the
                // pipe early; that is its right, not a failure.
                let _ = stdin.write_all(input.as_bytes()).await;
                let _ = stdin.shutdown().await;
            }
            let mut reason = Vec::new();
            if let Some(stderr) = stderr {
                let _ = stderr
                    .take(REASON_MAX_CHARS as u64 * 4)
                    .read_to_end(&mut reason)
                    .await;
            }
            let status = child.wait().await;
            (status, reason)
        };
        let Ok((status, reason)) = tokio::time::timeout(self.timeout(), talk).await else {
            return Err(format!(
                "the operator's hook did not answer within {} s, so the operation is refused",
                self.timeout().as_secs()
            ));
        };
        match status {
            Ok(status) if status.success() => Ok(()),
            Ok(status) => {
                let reason = clipped(String::from_utf8_lossy(&reason).trim());
                tracing::info!(%status, reason, "the hook command refused an operation");
                Err(if reason.is_empty() {
                    "the operator's hook refused this operation".to_owned()
                } else {
                    format!("the operator's hook refused this operation: {reason}")
                })
            }
            Err(error) => {
                tracing::error!(%error, "the hook command could not be waited for");
                Err("the operator's hook failed, so the operation is refused".to_owned())
            }
        }
    }

    async fn call_webhook(&self, url: &Url, net: &Net, input: &str) -> Result<(), String> {
        let shown = display_url(url);
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let options = RequestOptions {
            headers,
            body: Some(input.to_owned().into()),
            redirect: porter_net::RedirectRule::None,
            deadline: Some(self.timeout()),
        };
        let unreachable = |error: &dyn std::fmt::Display| {
            tracing::error!(webhook = %shown, %error, "the hook webhook could not be asked");
            "the operator's hook webhook could not be reached, so the operation is refused; tell the operator".to_owned()
        };
        let response = net
            .request(Method::POST, url, options)
            .await
            .map_err(|e| unreachable(&e))?;
        let status = response.status();
        let mut body = Vec::new();
        let mut response = response;
        while body.len() < WEBHOOK_ANSWER_MAX_BYTES {
            match response.chunk().await {
                Ok(Some(chunk)) => body.extend_from_slice(&chunk),
                Ok(None) => break,
                Err(error) => return Err(unreachable(&error)),
            }
        }
        let answer: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        if status.is_success() && answer.get("allow") == Some(&Value::Bool(true)) {
            return Ok(());
        }
        let reason = answer
            .get("reason")
            .and_then(Value::as_str)
            .map(|r| clipped(r.trim()))
            .unwrap_or_default();
        tracing::info!(webhook = %shown, %status, reason, "the hook webhook refused an operation");
        Err(if reason.is_empty() {
            "the operator's hook refused this operation".to_owned()
        } else {
            format!("the operator's hook refused this operation: {reason}")
        })
    }
}

/// At most [`REASON_MAX_CHARS`] characters of `text`, with `…` when cut.
fn clipped(text: &str) -> String {
    match text.char_indices().nth(REASON_MAX_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn command_hooks(script: &str) -> Hooks {
        Hooks {
            command: Some(vec!["sh".to_owned(), "-c".to_owned(), script.to_owned()]),
            webhook: None,
            timeout: Some(Duration::from_secs(5)),
        }
    }

    #[tokio::test]
    async fn no_hook_allows_everything() {
        let hooks = Hooks::default();
        assert!(!hooks.is_configured());
        assert_eq!(hooks.judge(&json!({"op": "upload"})).await, Ok(()));
    }

    #[tokio::test]
    async fn a_command_allows_with_status_zero_after_reading_the_operation() {
        let hooks = command_hooks(r#"grep -q '"op":"upload"' && exit 0; exit 3"#);
        assert_eq!(
            hooks.judge(&json!({"op": "upload", "size": 5})).await,
            Ok(())
        );
        let refused = hooks.judge(&json!({"op": "download"})).await;
        assert_eq!(
            refused,
            Err("the operator's hook refused this operation".to_owned())
        );
    }

    #[tokio::test]
    async fn a_command_that_refuses_gives_its_stderr_as_the_reason() {
        let hooks = command_hooks(
            "cat >/dev/null; echo 'uploads to this host are not allowed' >&2; exit 1",
        );
        let refused = hooks.judge(&json!({"op": "upload"})).await;
        assert_eq!(
            refused,
            Err(
                "the operator's hook refused this operation: uploads to this host are not allowed"
                    .to_owned()
            )
        );
    }

    #[tokio::test]
    async fn a_command_that_hangs_or_cannot_start_refuses() {
        let mut hooks = command_hooks("sleep 30");
        hooks.timeout = Some(Duration::from_millis(200));
        let refused = hooks
            .judge(&json!({"op": "upload"}))
            .await
            .expect_err("refused");
        assert!(refused.contains("did not answer"), "{refused}");
        let missing = Hooks {
            command: Some(vec!["/nonexistent/porter-hook".to_owned()]),
            ..Hooks::default()
        };
        let refused = missing
            .judge(&json!({"op": "upload"}))
            .await
            .expect_err("refused");
        assert!(refused.contains("could not be run"), "{refused}");
    }

    #[tokio::test]
    async fn a_webhook_allows_only_on_an_explicit_yes() {
        use tokio::io::AsyncWriteExt as _;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let address = listener.local_addr().expect("an address");
        let answers = [
            ("200 OK", r#"{"allow": true}"#),
            ("200 OK", r#"{"allow": false, "reason": "not on Fridays"}"#),
            ("500 Internal Server Error", r#"{"allow": true}"#),
            ("200 OK", "yes"),
        ];
        let server = tokio::spawn(async move {
            let mut seen = Vec::new();
            for (status, body) in answers {
                let (mut socket, _) = listener.accept().await.expect("a client");
                // Read until the JSON body (which ends in `}`) is in.
                let mut request = Vec::new();
                let mut buffer = [0u8; 4096];
                while !request.ends_with(b"}") {
                    let read = socket.read(&mut buffer).await.expect("a request");
                    assert!(read > 0, "the request ended early");
                    request.extend_from_slice(&buffer[..read]);
                }
                seen.push(String::from_utf8_lossy(&request).into_owned());
                let reply = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                socket.write_all(reply.as_bytes()).await.expect("a reply");
            }
            seen
        });
        let policy = porter_net::Policy {
            private_hosts: vec!["127.0.0.1".to_owned()],
            ..porter_net::Policy::default()
        };
        let net = Net::new(policy).expect("a client");
        let config = HooksConfig {
            webhook: Some(format!("http://{address}/judge")),
            ..HooksConfig::default()
        };
        let hooks = Hooks::new(&config, &net);
        let operation = json!({"op": "download", "url": "http://example.org/a?…"});
        assert_eq!(hooks.judge(&operation).await, Ok(()));
        assert_eq!(
            hooks.judge(&operation).await,
            Err("the operator's hook refused this operation: not on Fridays".to_owned())
        );
        assert!(hooks.judge(&operation).await.is_err(), "a 500 refuses");
        assert!(
            hooks.judge(&operation).await.is_err(),
            "a non-JSON answer refuses"
        );
        let seen = server.await.expect("the server ran");
        assert!(seen[0].starts_with("POST /judge "), "{}", seen[0]);
        assert!(seen[0].contains(r#""op":"download""#), "{}", seen[0]);
    }
}
