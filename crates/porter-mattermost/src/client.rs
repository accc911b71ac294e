//! The HTTP client: one [`Client`] per Mattermost server and token.
//!
//! Every request goes through [`Client::send`], which adds the token,
//! retries on 429/503 as the server asks, and turns an unsuccessful answer
//! into an [`Error`] that names what was asked for. Answers are read under a
//! byte cap, never trusting a declared size alone.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasher, Hasher, RandomState};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
/// The file name of a `Content-Disposition` value: one rule for every
/// download porter makes.
pub use porter_net::disposition_file_name;
use reqwest::header::{AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use reqwest::{Method, RequestBuilder, Response, StatusCode, Url};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::USER_AGENT;
use crate::error::{ApiError, ERROR_BODY_BYTES, Error, Target, describe_network};
use crate::model::{FileInfo, Upload};

/// `Token` is a Mattermost personal access token (or session token). Its
/// `Debug` and `Display` print `***`, so it cannot leak into a log or an
/// error by formatting.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// `new` wraps a token.
    #[must_use]
    pub fn new(token: impl Into<String>) -> Token {
        Token(token.into())
    }

    /// `expose` is the token itself, for the few places that must compare
    /// or store it (a keychain, a check that an upload does not contain
    /// it). Never format it.
    #[must_use]
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(***)")
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// `ClientOptions` are the client's limits and trust settings. The default
/// trusts only the platform's roots, waits at most a minute for an answer,
/// and tries a busy server four times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientOptions {
    /// A PEM file of extra CA certificates trusted besides the platform's
    /// roots, for servers behind a company CA.
    pub ca_file: Option<PathBuf>,
    /// How long to wait for a connection.
    pub connect_timeout: Duration,
    /// How long one request may take from start to the end of its body;
    /// raise it to download large files over slow links.
    pub request_timeout: Duration,
    /// How many times a request is sent in all when the server answers 429
    /// or 503 (1 means never retry).
    pub max_attempts: u32,
    /// The first wait before a retry when the server does not say how long;
    /// it doubles each time, with jitter.
    pub retry_base_delay: Duration,
    /// The longest wait before a retry, also when `Retry-After` asks for more.
    pub retry_max_delay: Duration,
    /// The most bytes of a JSON answer read, because a broken or hostile
    /// server could otherwise send without end.
    pub max_answer_bytes: u64,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            ca_file: None,
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(60),
            max_attempts: 4,
            retry_base_delay: Duration::from_millis(500),
            retry_max_delay: Duration::from_secs(30),
            max_answer_bytes: 32 * 1024 * 1024,
        }
    }
}

/// `Client` talks to one Mattermost server's API v4 as one account. It is
/// cheap to clone; clones share connections.
#[derive(Clone)]
pub struct Client {
    pub(crate) http: reqwest::Client,
    base: Url,
    host: String,
    auth: HeaderValue,
    options: ClientOptions,
    /// Where the token comes from when it expires and is renewed (an
    /// OAuth sign-in); `auth` is used otherwise.
    source: Option<std::sync::Arc<dyn crate::oauth::TokenSource>>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("base", &self.base.as_str())
            .field("token", &"***")
            .finish_non_exhaustive()
    }
}

/// `Ask` is what a request does, carried into its errors.
pub(crate) struct Ask {
    action: &'static str,
    pub(crate) target: Target,
}

impl Ask {
    pub(crate) fn new(action: &'static str, target: Target) -> Ask {
        Ask { action, target }
    }
}

impl Client {
    /// Sends a request with `method` and an optional JSON body, and reads
    /// the JSON answer.
    pub(crate) async fn send_json<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        method: Method,
        segments: &[&str],
        body: Option<&B>,
        ask: &Ask,
    ) -> Result<T, Error> {
        let url = self.api_url(segments);
        let body = match body {
            Some(body) => Some(Bytes::from(serde_json::to_vec(body).map_err(|e| {
                Error::Decode {
                    target: ask.target.clone(),
                    reason: format!("the request could not be written: {e}"),
                }
            })?)),
            None => None,
        };
        let response = self
            .send(ask, || {
                let request = self.http.request(method.clone(), url.clone());
                match &body {
                    Some(body) => request
                        .header(CONTENT_TYPE, "application/json")
                        .body(body.clone()),
                    None => request,
                }
            })
            .await?;
        self.read_json(response, &ask.target).await
    }

    /// `new` makes a client for the server at `base_url` (a trailing `/` or
    /// `/api/v4` is dropped) using `token`. It does not contact the server;
    /// call [`Client::me`] to check the token.
    pub fn new(base_url: &str, token: Token, options: ClientOptions) -> Result<Client, Error> {
        let base = normalize_base_url(base_url)?;
        let host = match (base.host_str(), base.port()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_owned(),
            (None, _) => String::new(),
        };
        let Token(token) = token;
        if token.trim().is_empty() {
            return Err(Error::BadToken { reason: "is empty" });
        }
        let mut auth =
            HeaderValue::from_str(&format!("Bearer {}", token.trim())).map_err(|_| {
                Error::BadToken {
                    reason: "has characters an HTTP header cannot carry",
                }
            })?;
        auth.set_sensitive(true);

        // Only the ring provider is compiled in; installing it twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder = reqwest::Client::builder()
            .user_agent(USER_AGENT)
            .no_proxy()
            .connect_timeout(options.connect_timeout)
            .timeout(options.request_timeout);
        if let Some(path) = &options.ca_file {
            builder = builder.tls_certs_merge(read_ca_file(path)?);
        }
        let http = builder.build().map_err(|source| match &options.ca_file {
            Some(path) => Error::CaFile {
                path: path.clone(),
                reason: format!("the TLS set-up refused it: {source}"),
            },
            None => Error::Setup { source },
        })?;
        Ok(Client {
            http,
            base,
            host,
            auth,
            options,
            source: None,
        })
    }

    /// `with_token_source` takes every request's token from `source`
    /// instead: renewed before it expires and once after a 401, and never
    /// sent once expired.
    #[must_use]
    pub fn with_token_source(
        mut self,
        source: std::sync::Arc<dyn crate::oauth::TokenSource>,
    ) -> Client {
        self.source = Some(source);
        self
    }

    /// `sourced_token` is the token requests send now when it comes from a
    /// token source (an OAuth sign-in, renewed as it expires), so a caller
    /// can keep it out of what it sends; `None` for a fixed token (the one
    /// the client was made with) or when the source has none to give.
    pub async fn sourced_token(&self) -> Option<Token> {
        let source = self.source.as_ref()?;
        source.token().await.ok()
    }

    /// The `Authorization` header for `token`.
    fn bearer(token: &Token) -> Result<HeaderValue, Error> {
        let mut auth = HeaderValue::from_str(&format!("Bearer {}", token.expose().trim()))
            .map_err(|_| Error::BadToken {
                reason: "has characters an HTTP header cannot carry",
            })?;
        auth.set_sensitive(true);
        Ok(auth)
    }

    /// `base_url` is the server's address as normalised (no trailing `/`,
    /// no `/api/v4`).
    #[must_use]
    pub fn base_url(&self) -> &str {
        self.base.as_str().trim_end_matches('/')
    }

    /// `permalink` is the link that opens a post in Mattermost's web app.
    #[must_use]
    pub fn permalink(&self, post_id: &str) -> String {
        format!("{}/_redirect/pl/{post_id}", self.base_url())
    } // ----- plumbing -----

    pub(crate) fn api_url(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .expect("the base URL has a path because normalize_base_url accepts only http(s) URLs")
            .pop_if_empty()
            .extend(["api", "v4"])
            .extend(segments);
        url
    }

    pub(crate) async fn get<T: DeserializeOwned>(
        &self,
        segments: &[&str],
        query: &[(&'static str, String)],
        ask: &Ask,
    ) -> Result<T, Error> {
        let url = self.api_url(segments);
        let response = self
            .send(ask, || {
                let request = self.http.get(url.clone());
                if query.is_empty() {
                    request
                } else {
                    request.query(query)
                }
            })
            .await?;
        self.read_json(response, &ask.target).await
    }

    /// Reads one page of `per_page` items of a Mattermost list; `page`
    /// counts from 0.
    pub(crate) async fn get_page<T: DeserializeOwned>(
        &self,
        segments: &[&str],
        page: u32,
        per_page: u32,
        ask: &Ask,
    ) -> Result<T, Error> {
        let query = [
            ("page", page.to_string()),
            ("per_page", per_page.to_string()),
        ];
        self.get(segments, &query, ask).await
    }

    pub(crate) async fn post_json<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        segments: &[&str],
        body: &B,
        ask: &Ask,
    ) -> Result<T, Error> {
        let url = self.api_url(segments);
        let body = Bytes::from(serde_json::to_vec(body).map_err(|e| Error::Decode {
            target: ask.target.clone(),
            reason: format!("the request could not be written: {e}"),
        })?);
        let response = self
            .send(ask, || {
                self.http
                    .request(Method::POST, url.clone())
                    .header(CONTENT_TYPE, "application/json")
                    .body(body.clone())
            })
            .await?;
        self.read_json(response, &ask.target).await
    }

    /// `send` sends the request `build` makes, with the token, again after
    /// a wait while the server answers 429 or 503 and attempts remain.
    pub(crate) async fn send(
        &self,
        ask: &Ask,
        build: impl Fn() -> RequestBuilder,
    ) -> Result<Response, Error> {
        let mut attempt = 1;
        let mut sent = match &self.source {
            Some(source) => Some(source.token().await?),
            None => None,
        };
        let mut renewed = false;
        loop {
            let auth = match &sent {
                Some(token) => Self::bearer(token)?,
                None => self.auth.clone(),
            };
            let response = build()
                .header(AUTHORIZATION, auth)
                .send()
                .await
                .map_err(|e| self.network(e))?;
            let status = response.status();
            tracing::debug!(
                path = response.url().path(),
                status = status.as_u16(),
                attempt,
                "mattermost answered"
            );
            if status.is_success() {
                return Ok(response);
            }
            if status == StatusCode::UNAUTHORIZED
                && !renewed
                && let (Some(source), Some(token)) = (&self.source, &sent)
                && let Some(fresh) = source.refused(token).await?
            {
                drop(response);
                renewed = true;
                sent = Some(fresh);
                continue;
            }
            let busy = status == StatusCode::TOO_MANY_REQUESTS
                || status == StatusCode::SERVICE_UNAVAILABLE;
            if busy && attempt < self.options.max_attempts {
                let asked = response
                    .headers()
                    .get(RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| retry_after(v, SystemTime::now()));
                let wait = asked.map_or_else(
                    || {
                        backoff(
                            attempt,
                            self.options.retry_base_delay,
                            self.options.retry_max_delay,
                        )
                    },
                    |asked| asked.min(self.options.retry_max_delay),
                );
                tracing::debug!(
                    wait_ms = wait.as_millis() as u64,
                    "mattermost is busy; waiting"
                );
                drop(response);
                tokio::time::sleep(wait).await;
                attempt += 1;
                continue;
            }
            let body = self
                .read_capped(response, ERROR_BODY_BYTES as u64, &ask.target)
                .await
                .unwrap_or_default();
            return Err(error_for(status, &body, ask, &self.host, attempt));
        }
    }

    fn network(&self, source: reqwest::Error) -> Error {
        Error::Network {
            host: self.host.clone(),
            reason: describe_network(&source, self.options.request_timeout),
            source: source.without_url(),
        }
    }

    pub(crate) async fn read_json<T: DeserializeOwned>(
        &self,
        response: Response,
        target: &Target,
    ) -> Result<T, Error> {
        let body = self
            .read_capped(response, self.options.max_answer_bytes, target)
            .await?;
        serde_json::from_slice(&body).map_err(|e| Error::Decode {
            target: target.clone(),
            reason: e.to_string(),
        })
    }

    /// `read_capped` reads a body, refusing one that declares or turns out
    /// to be longer than `cap` bytes; it stops reading at the first chunk
    /// past the cap.
    pub(crate) async fn read_capped(
        &self,
        response: Response,
        cap: u64,
        target: &Target,
    ) -> Result<Bytes, Error> {
        let declared = response
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if let Some(size) = declared
            && size > cap
        {
            return Err(Error::TooLarge {
                target: target.clone(),
                cap,
                size: Some(size),
                received: 0,
            });
        }
        let initial = declared.unwrap_or(0).min(cap).min(1024 * 1024) as usize;
        let mut body = BytesMut::with_capacity(initial);
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| self.network(e))?;
            let received = body.len() as u64 + chunk.len() as u64;
            if received > cap {
                return Err(Error::TooLarge {
                    target: target.clone(),
                    cap,
                    size: None,
                    received,
                });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body.freeze())
    }
}

/// `normalize_base_url` checks the server address and drops what people
/// often paste with it: a trailing `/`, `/api/v4`, a query or fragment.
pub fn normalize_base_url(raw: &str) -> Result<Url, Error> {
    let trimmed = raw.trim();
    let bad = |reason| Error::BadUrl {
        url: if trimmed.contains('@') {
            "<hidden: it holds credentials>".to_owned()
        } else {
            trimmed.to_owned()
        },
        reason,
    };
    if trimmed.is_empty() {
        return Err(bad("it is empty"));
    }
    let mut url = Url::parse(trimmed).map_err(|_| bad("it is not a URL"))?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(bad("it must start with https:// or http://"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("it has no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad(
            "it holds a user name or password; put the token in MM_TOKEN instead",
        ));
    }
    url.set_query(None);
    url.set_fragment(None);
    let mut path = url.path().trim_end_matches('/').to_owned();
    loop {
        let shorter = path
            .strip_suffix("/api/v4")
            .map(|p| p.trim_end_matches('/').to_owned());
        match shorter {
            Some(p) => path = p,
            None => break,
        }
    }
    url.set_path(&path);
    Ok(url)
}

/// `retry_after` reads a `Retry-After` value: seconds, or an HTTP date
/// (a date in the past means now). Anything else is `None`, and the client
/// backs off on its own.
#[must_use]
pub fn retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Duration::from_secs(
            value.parse::<u64>().unwrap_or(u64::MAX),
        ));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// `backoff` is the wait before retry number `attempt` (from 1) when the
/// server gave no `Retry-After`: `base` doubled each time up to `max`, then
/// a random half to whole of it so clients do not retry in step.
fn backoff(attempt: u32, base: Duration, max: Duration) -> Duration {
    let full = base
        .saturating_mul(
            1u32.checked_shl(attempt.saturating_sub(1))
                .unwrap_or(u32::MAX),
        )
        .min(max);
    let half = full / 2;
    let spread = full.saturating_sub(half).as_millis() as u64;
    let jitter = if spread == 0 {
        0
    } else {
        random_u64() % (spread + 1)
    };
    half + Duration::from_millis(jitter)
}

/// `random_u64` is a fresh random number from the standard library's
/// randomly keyed hasher: enough for jitter and client ids, not for secrets.
fn random_u64() -> u64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u128(
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.finish()
}

/// `ID_ALPHABET` is Mattermost's base32 alphabet for ids.
const ID_ALPHABET: &[u8; 32] = b"ybndrfg8ejkmcpqxot1uwisza345h769";

/// `new_id` is a Mattermost-shaped id (26 base32 characters), used for the
/// upload's `client_ids`.
pub(crate) fn new_id() -> String {
    let bits = (u128::from(random_u64()) << 64) | u128::from(random_u64());
    (0..26)
        .map(|i| char::from(ID_ALPHABET[((bits >> ((i * 5) % 128)) & 31) as usize]))
        .collect()
}

/// `error_for` turns an unsuccessful answer into the error that says what
/// to do, using what the request was for.
fn error_for(status: StatusCode, body: &[u8], ask: &Ask, host: &str, attempts: u32) -> Error {
    let api = Box::new(ApiError::decode(status, body));
    let target = ask.target.clone();
    let action = ask.action;
    match status {
        StatusCode::BAD_REQUEST => Error::BadRequest {
            action,
            target,
            api,
        },
        StatusCode::UNAUTHORIZED => Error::Unauthorized {
            host: host.to_owned(),
            api,
        },
        StatusCode::FORBIDDEN => Error::Forbidden {
            action,
            target,
            api,
        },
        StatusCode::NOT_FOUND => Error::NotFound { target, api },
        StatusCode::PAYLOAD_TOO_LARGE => Error::RejectedTooLarge {
            target,
            limit: None,
            api,
        },
        StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE => Error::Busy {
            status,
            attempts,
            api,
        },
        _ => Error::Status {
            status,
            action,
            target,
            api,
        },
    }
}

pub(crate) fn header_text(
    response: &Response,
    name: reqwest::header::HeaderName,
) -> Option<String> {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

pub(crate) fn check_upload_name(name: &str) -> Result<(), Error> {
    let reason = if name.trim().is_empty() {
        "it has no name"
    } else if name.chars().any(char::is_control) {
        "its name holds a control character"
    } else {
        return Ok(());
    };
    Err(Error::BadUpload {
        name: name.escape_debug().to_string(),
        reason,
    })
}

/// `order_uploads` puts the server's file infos in the order the files were
/// given, matched by client id, because the answer's order is not promised.
pub(crate) fn order_uploads(
    upload: Upload,
    client_ids: &[String],
    target: &Target,
) -> Result<Vec<FileInfo>, Error> {
    if upload.file_infos.len() != client_ids.len() {
        return Err(Error::Decode {
            target: target.clone(),
            reason: format!(
                "{} files were sent but {} came back",
                client_ids.len(),
                upload.file_infos.len()
            ),
        });
    }
    if upload.client_ids.len() != upload.file_infos.len() {
        return Ok(upload.file_infos);
    }
    let mut by_client: HashMap<String, FileInfo> = upload
        .client_ids
        .into_iter()
        .zip(upload.file_infos)
        .collect();
    client_ids
        .iter()
        .map(|id| {
            by_client.remove(id).ok_or_else(|| Error::Decode {
                target: target.clone(),
                reason: format!("the answer lacks client id {id}"),
            })
        })
        .collect()
}

/// `read_ca_file` reads the PEM certificates of an extra CA file.
fn read_ca_file(path: &std::path::Path) -> Result<Vec<reqwest::Certificate>, Error> {
    let bad = |reason: String| Error::CaFile {
        path: path.to_owned(),
        reason,
    };
    let pem = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    let certs = reqwest::Certificate::from_pem_bundle(&pem)
        .map_err(|e| bad(format!("it is not PEM: {e}")))?;
    if certs.is_empty() {
        return Err(bad(
            "it holds no PEM certificate (-----BEGIN CERTIFICATE-----)".to_owned(),
        ));
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Thing;

    #[test]
    fn base_urls_are_normalised() {
        let cases = [
            ("https://chat.example.com", "https://chat.example.com/"),
            ("https://chat.example.com/", "https://chat.example.com/"),
            (
                "https://chat.example.com/api/v4",
                "https://chat.example.com/",
            ),
            (
                "https://chat.example.com/api/v4/",
                "https://chat.example.com/",
            ),
            (
                "  https://chat.example.com/api/v4//  ",
                "https://chat.example.com/",
            ),
            (
                "https://example.com/mattermost/",
                "https://example.com/mattermost",
            ),
            (
                "https://example.com/mattermost/api/v4",
                "https://example.com/mattermost",
            ),
            ("http://127.0.0.1:8065/?x=1#frag", "http://127.0.0.1:8065/"),
            ("HTTPS://Chat.Example.COM", "https://chat.example.com/"),
        ];
        for (raw, want) in cases {
            assert_eq!(normalize_base_url(raw).unwrap().as_str(), want, "{raw}");
        }
    }

    #[test]
    fn unusable_base_urls_are_refused_with_the_reason() {
        let cases = [
            ("", "it is empty"),
            ("chat.example.com", "it is not a URL"),
            (
                "ftp://chat.example.com",
                "it must start with https:// or http://",
            ),
            ("file:///tmp/x", "it must start with https:// or http://"),
            (
                "https://user:secret@chat.example.com",
                "it holds a user name or password",
            ),
        ];
        for (raw, reason) in cases {
            let err = normalize_base_url(raw).unwrap_err();
            let text = err.to_string();
            assert!(text.contains(reason), "{raw}: {text}");
            assert!(!text.contains("secret"), "{text}");
        }
    }

    #[test]
    fn the_permalink_and_base_url_drop_the_api_path() {
        let client = Client::new(
            "https://chat.example.com/api/v4/",
            Token::new("t"),
            ClientOptions::default(),
        )
        .unwrap();
        assert_eq!(client.base_url(), "https://chat.example.com");
        assert_eq!(
            client.permalink("abc"),
            "https://chat.example.com/_redirect/pl/abc"
        );
        assert_eq!(
            client.api_url(&["users", "me"]).as_str(),
            "https://chat.example.com/api/v4/users/me"
        );
        let sub = Client::new(
            "https://x.org/mm",
            Token::new("t"),
            ClientOptions::default(),
        )
        .unwrap();
        assert_eq!(sub.permalink("p"), "https://x.org/mm/_redirect/pl/p");
        assert_eq!(
            sub.api_url(&["channels", "a/b?c"]).as_str(),
            "https://x.org/mm/api/v4/channels/a%2Fb%3Fc"
        );
    }

    #[test]
    fn retry_after_reads_seconds_dates_and_ignores_garbage() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let in_ten = httpdate::fmt_http_date(now + Duration::from_secs(10));
        let past = httpdate::fmt_http_date(now - Duration::from_secs(10));
        let cases: Vec<(&str, Option<Duration>)> = vec![
            ("0", Some(Duration::ZERO)),
            ("3", Some(Duration::from_secs(3))),
            (" 120 ", Some(Duration::from_secs(120))),
            (
                "99999999999999999999999",
                Some(Duration::from_secs(u64::MAX)),
            ),
            (&in_ten, Some(Duration::from_secs(10))),
            (&past, Some(Duration::ZERO)),
            ("", None),
            ("-1", None),
            ("1.5", None),
            ("soon", None),
            ("Tue, 99 Foo 2026 00:00:00 GMT", None),
        ];
        for (value, want) in cases {
            assert_eq!(retry_after(value, now), want, "{value:?}");
        }
    }

    #[test]
    fn backoff_doubles_up_to_the_cap_with_jitter() {
        let base = Duration::from_millis(100);
        let max = Duration::from_secs(1);
        for attempt in 1..=40 {
            let full = (base * 2u32.saturating_pow(attempt - 1)).min(max);
            let wait = backoff(attempt, base, max);
            assert!(wait >= full / 2 && wait <= full, "{attempt}: {wait:?}");
        }
    }

    #[test]
    fn the_token_never_shows_when_formatted() {
        let token = Token::new("s3cr3t-token-value");
        assert_eq!(format!("{token}"), "***");
        assert_eq!(format!("{token:?}"), "Token(***)");
        let client = Client::new(
            "https://chat.example.com",
            token.clone(),
            ClientOptions::default(),
        )
        .unwrap();
        let debug = format!("{client:?}");
        assert!(!debug.contains("s3cr3t"), "{debug}");
        assert_eq!(token.expose(), "s3cr3t-token-value");
    }

    #[test]
    fn a_token_that_cannot_be_a_header_is_refused_without_showing_it() {
        for bad in ["", "   ", "abc\ndef"] {
            let err = Client::new(
                "https://chat.example.com",
                Token::new(bad),
                ClientOptions::default(),
            )
            .unwrap_err();
            assert!(matches!(err, Error::BadToken { .. }), "{err}");
            if !bad.trim().is_empty() {
                assert!(!err.to_string().contains(bad), "{err}");
            }
        }
    }

    fn ask() -> Ask {
        Ask::new("read", Target::id(Thing::Channel, "c1"))
    }

    #[test]
    fn each_status_becomes_the_error_that_says_what_to_do() {
        let json = |status: u16, id: &str| {
            format!(
                r#"{{"id":"{id}","message":"m","detailed_error":"","request_id":"rq","status_code":{status}}}"#
            )
        };
        // (status, body, words the message must hold)
        let cases: Vec<(u16, String, &[&str])> = vec![
            (
                400,
                json(400, "api.context.invalid_param.app_error"),
                &[
                    "refused the request to read channel with id \"c1\" as invalid",
                    "api.context.invalid_param.app_error",
                ],
            ),
            (
                401,
                json(401, "api.context.session_expired.app_error"),
                &[
                    "refused the token",
                    "personal access token",
                    "MM_TOKEN",
                    "chat.example.com",
                    "request id rq",
                ],
            ),
            (
                401,
                "Unauthorized".to_owned(),
                &["refused the token", "MM_TOKEN", "\"Unauthorized\""],
            ),
            (
                403,
                json(403, "api.context.permissions.app_error"),
                &[
                    "lacks permission to read channel with id \"c1\"",
                    "ask a Mattermost admin",
                    "join the channel",
                ],
            ),
            (
                404,
                json(404, "app.channel.get.existing.app_error"),
                &["channel with id \"c1\" was not found"],
            ),
            (
                404,
                "<html>404 page not found</html>".to_owned(),
                &["channel with id \"c1\" was not found", "404 page not found"],
            ),
            (
                413,
                json(413, "api.file.upload_file.too_large_detailed.app_error"),
                &[
                    "refused channel with id \"c1\" as too large",
                    "send something smaller",
                ],
            ),
            (
                429,
                json(429, "api.context.rate_limit"),
                &["busy or rate limiting", "3 attempts"],
            ),
            (
                503,
                String::new(),
                &["busy or rate limiting", "Service Unavailable"],
            ),
            (
                500,
                json(500, "app.internal"),
                &["answered 500 Internal Server Error to the request to read channel"],
            ),
            (
                502,
                "<html><body>bad gateway</body></html>".to_owned(),
                &["502 Bad Gateway", "bad gateway"],
            ),
        ];
        for (status, body, words) in cases {
            let status = StatusCode::from_u16(status).unwrap();
            let err = error_for(status, body.as_bytes(), &ask(), "chat.example.com", 3);
            let text = err.to_string();
            for word in words {
                assert!(text.contains(word), "{status}: {text:?} lacks {word:?}");
            }
            assert_eq!(err.status(), Some(status), "{text}");
        }
    }

    #[test]
    fn a_sign_in_an_escape_is_not_a_hex_digit() {
        // `%+3` is a broken escape (a number parser would read `+3` as 3):
        // the extended form is unreadable, so the plain name is used.
        assert_eq!(
            disposition_file_name("attachment; filename*=UTF-8''Q%+33.pdf; filename=\"Q3.pdf\"")
                .as_deref(),
            Some("Q3.pdf")
        );
    }

    #[test]
    fn content_disposition_names_are_read() {
        let cases = [
            (
                "attachment;filename=\"report.pdf\"; filename*=UTF-8''report.pdf",
                Some("report.pdf"),
            ),
            (
                "attachment; filename*=UTF-8''%C3%A9t%C3%A9%20notes.txt",
                Some("été notes.txt"),
            ),
            (
                "attachment; filename=\"a \\\"quoted\\\" name;.txt\"",
                Some("a \"quoted\" name;.txt"),
            ),
            ("inline; filename=plain.txt", Some("plain.txt")),
            ("attachment; filename*=iso-8859-1'en'%E9.txt", Some("é.txt")),
            (
                "attachment; filename*=UTF-8''bad%zz; filename=\"fallback.bin\"",
                Some("fallback.bin"),
            ),
            ("attachment; filename*=UTF-8''trunc%E", None),
            ("attachment", None),
            ("attachment; filename=\"\"", None),
            ("", None),
        ];
        for (value, want) in cases {
            assert_eq!(disposition_file_name(value).as_deref(), want, "{value}");
        }
    }

    #[test]
    fn client_ids_look_like_mattermost_ids() {
        let a = new_id();
        let b = new_id();
        assert_eq!(a.len(), 26);
        assert!(a.bytes().all(|c| ID_ALPHABET.contains(&c)), "{a}");
        assert_ne!(a, b);
    }

    #[test]
    fn uploads_come_back_in_the_order_given() {
        let info = |id: &str| FileInfo {
            id: id.to_owned(),
            ..FileInfo::default()
        };
        let upload = Upload {
            file_infos: vec![info("f2"), info("f1")],
            client_ids: vec!["c2".into(), "c1".into()],
        };
        let target = Target::id(Thing::Channel, "x");
        let ordered = order_uploads(upload, &["c1".into(), "c2".into()], &target).unwrap();
        let ids: Vec<&str> = ordered.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["f1", "f2"]);
        let short = Upload {
            file_infos: vec![info("f1")],
            client_ids: vec![],
        };
        assert!(order_uploads(short, &["c1".into(), "c2".into()], &target).is_err());
    }

    #[test]
    fn names_that_cannot_be_uploaded_are_refused() {
        assert!(check_upload_name("ok name.txt").is_ok());
        assert!(check_upload_name("").is_err());
        assert!(check_upload_name("a\r\nb.txt").is_err());
    }

    #[test]
    fn a_missing_ca_file_is_named_in_the_error() {
        let options = ClientOptions {
            ca_file: Some(PathBuf::from("/nonexistent/porter-ca.pem")),
            ..ClientOptions::default()
        };
        let err = Client::new("https://chat.example.com", Token::new("t"), options).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("/nonexistent/porter-ca.pem"), "{text}");
        assert!(matches!(err, Error::CaFile { .. }));
    }

    #[test]
    fn a_ca_file_without_certificates_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.pem");
        std::fs::write(&path, "not a certificate\n").unwrap();
        let options = ClientOptions {
            ca_file: Some(path.clone()),
            ..ClientOptions::default()
        };
        let err = Client::new("https://chat.example.com", Token::new("t"), options).unwrap_err();
        let text = err.to_string();
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains("no PEM certificate"), "{text}");
    }

    #[test]
    fn a_ca_file_with_a_broken_certificate_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("broken.pem");
        std::fs::write(
            &path,
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let options = ClientOptions {
            ca_file: Some(path.clone()),
            ..ClientOptions::default()
        };
        let err = Client::new("https://chat.example.com", Token::new("t"), options).unwrap_err();
        assert!(
            err.to_string().contains(&path.display().to_string()),
            "{err}"
        );
    }

    #[test]
    fn a_real_ca_bundle_is_accepted() {
        let bundle = PathBuf::from("/etc/ssl/certs/ca-certificates.crt");
        if !bundle.exists() {
            return;
        }
        let options = ClientOptions {
            ca_file: Some(bundle),
            ..ClientOptions::default()
        };
        Client::new("https://chat.example.com", Token::new("t"), options).unwrap();
    }
}
