//! What can go wrong when porter talks to Mattermost, each case saying what
//! to do about it.
//!
//! Mattermost answers a failed request with a JSON body
//! (`{"id":"api.…","message":"…","detailed_error":"","request_id":"…","status_code":N}`).
//! [`ApiError`] keeps that body; [`Error`] adds what the client was asking
//! for ([`Target`]) so the message can say *which* channel was not found or
//! *what* the account may not do. No variant holds the token, and network
//! errors carry the server's host, never the full request.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use reqwest::StatusCode;
use serde::Deserialize;

/// `ERROR_BODY_BYTES` is the most of an error answer the client reads,
/// because a proxy's HTML error page can be large and only its start helps.
pub const ERROR_BODY_BYTES: usize = 64 * 1024;

/// `BODY_EXCERPT_CHARS` is how much of a non-JSON error body is kept, enough
/// to recognise a proxy's page without flooding a log.
const BODY_EXCERPT_CHARS: usize = 200;

/// `Error` is every failure of the Mattermost client. Each message names
/// what was asked for and what the person can do next.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The base URL cannot be used.
    #[error(
        "the Mattermost URL {url:?} cannot be used: {reason}; set MM_URL to the address you open Mattermost at, such as https://chat.example.com"
    )]
    BadUrl {
        /// The URL as given (a URL with a password in it is not repeated).
        url: String,
        /// Why it was refused.
        reason: &'static str,
    },
    /// The token cannot be sent in an HTTP header.
    #[error("the Mattermost token {reason}; copy the personal access token again and set MM_TOKEN")]
    BadToken {
        /// What is wrong with it (never the token itself).
        reason: &'static str,
    },
    /// The extra CA file could not be read or holds no usable certificate.
    #[error("the CA file {} cannot be used: {reason}; point MM_MCP_CA_FILE at a PEM file of CA certificates", path.display())]
    CaFile {
        /// The file given.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The HTTP client could not be built (TLS set-up).
    #[error("the HTTP client could not be set up: {source}")]
    Setup {
        /// The cause.
        #[source]
        source: reqwest::Error,
    },
    /// A file to upload has a name or type that cannot be sent.
    #[error("the file {name:?} cannot be uploaded: {reason}")]
    BadUpload {
        /// The file's name (control characters shown escaped).
        name: String,
        /// Why.
        reason: &'static str,
    },
    /// The server could not be reached or the connection failed.
    #[error(
        "could not reach Mattermost at {host}: {reason}; check MM_URL and that the server is up"
    )]
    Network {
        /// The server's host (and port), never the token or full request.
        host: String,
        /// A short description ("connection refused", "no answer within 60s", …).
        reason: String,
        /// The cause.
        #[source]
        source: reqwest::Error,
    },
    /// Signing in with OAuth failed.
    #[error("signing in to Mattermost at {host} failed: {reason}")]
    SignIn {
        /// The server's host.
        host: String,
        /// What went wrong.
        reason: String,
    },
    /// An OAuth sign-in expired and cannot be renewed (a public app has no
    /// refresh token); no request was sent with the expired token.
    #[error(
        "the OAuth sign-in to Mattermost at {host} has expired; run `porter mattermost login --oauth` again to renew it"
    )]
    SignInExpired {
        /// The server's host.
        host: String,
    },
    /// Renewing an OAuth sign-in failed.
    #[error(
        "the OAuth sign-in to Mattermost at {host} could not be renewed ({reason}); run `porter mattermost login --oauth` again"
    )]
    SignInRenewal {
        /// The server's host.
        host: String,
        /// Why renewing failed.
        reason: String,
    },
    /// 401: the token was refused.
    #[error(
        "Mattermost at {host} refused the token: it is wrong, expired or revoked; make a new personal access token (Profile → Security → Personal Access Tokens) and set MM_TOKEN ({api})"
    )]
    Unauthorized {
        /// The server's host.
        host: String,
        /// What the server said.
        api: Box<ApiError>,
    },
    /// 403: the account may not do this.
    #[error(
        "the account lacks permission to {action} {target}; ask a Mattermost admin, or join the channel first ({api})"
    )]
    Forbidden {
        /// What was being done ("read", "post in", …).
        action: &'static str,
        /// What it was done to.
        target: Target,
        /// What the server said.
        api: Box<ApiError>,
    },
    /// 404: the thing asked for does not exist (or is hidden from the account).
    #[error("{target} was not found; check the id or name ({api})")]
    NotFound {
        /// What was asked for.
        target: Target,
        /// What the server said.
        api: Box<ApiError>,
    },
    /// 413: the server refused a request body as too large.
    #[error("Mattermost refused {target} as too large{}; send something smaller ({api})", limit_note(*.limit))]
    RejectedTooLarge {
        /// What was sent.
        target: Target,
        /// The server's limit in bytes, when it is known (its `MaxFileSize`).
        limit: Option<u64>,
        /// What the server said.
        api: Box<ApiError>,
    },
    /// A download (or an answer) would pass the caller's byte cap; reading
    /// stopped there.
    #[error("{target} is larger than the cap of {cap} bytes{}; it was not read", size_note(*.size))]
    TooLarge {
        /// What was being read.
        target: Target,
        /// The caller's cap in bytes.
        cap: u64,
        /// The size declared (file info or Content-Length), when that was
        /// what showed it was too large; `None` when the body itself ran past
        /// the cap.
        size: Option<u64>,
        /// How many body bytes were read before stopping (at most the cap
        /// plus one chunk).
        received: u64,
    },
    /// 400: the server refused the request as malformed.
    #[error("Mattermost refused the request to {action} {target} as invalid ({api})")]
    BadRequest {
        /// What was being done.
        action: &'static str,
        /// What it was done to.
        target: Target,
        /// What the server said.
        api: Box<ApiError>,
    },
    /// 429 or 503 on every attempt.
    #[error(
        "Mattermost is busy or rate limiting ({status}) and still was after {attempts} attempts; wait a little and try again ({api})"
    )]
    Busy {
        /// The last status.
        status: StatusCode,
        /// How many requests were made.
        attempts: u32,
        /// What the server said last.
        api: Box<ApiError>,
    },
    /// Any other unsuccessful status.
    #[error("Mattermost answered {status} to the request to {action} {target} ({api})")]
    Status {
        /// The status.
        status: StatusCode,
        /// What was being done.
        action: &'static str,
        /// What it was done to.
        target: Target,
        /// What the server said.
        api: Box<ApiError>,
    },
    /// A successful answer did not have the expected shape.
    #[error(
        "Mattermost's answer to {target} could not be read ({reason}); is the URL a Mattermost server?"
    )]
    Decode {
        /// What was asked for.
        target: Target,
        /// What was wrong with it.
        reason: String,
    },
}

impl Error {
    /// `status` is the HTTP status behind this error, if the server answered.
    #[must_use]
    pub fn status(&self) -> Option<StatusCode> {
        self.api()
            .and_then(|api| StatusCode::from_u16(api.status_code).ok())
    }

    /// `api` is what the server said, if it answered with an error.
    #[must_use]
    pub fn api(&self) -> Option<&ApiError> {
        match self {
            Self::Unauthorized { api, .. }
            | Self::Forbidden { api, .. }
            | Self::NotFound { api, .. }
            | Self::RejectedTooLarge { api, .. }
            | Self::BadRequest { api, .. }
            | Self::Busy { api, .. }
            | Self::Status { api, .. } => Some(api),
            _ => None,
        }
    }
}

fn limit_note(limit: Option<u64>) -> String {
    limit.map_or_else(String::new, |limit| {
        format!(" (its limit is {limit} bytes)")
    })
}

fn size_note(size: Option<u64>) -> String {
    size.map_or_else(
        || " (it sent more than that)".to_owned(),
        |size| format!(" (it is {size} bytes)"),
    )
}

/// `ApiError` is Mattermost's error body, kept so a person can quote the
/// `request_id` to an admin. A body that is not Mattermost JSON (a proxy's
/// page) becomes an `ApiError` with an empty `id` and an excerpt as message.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct ApiError {
    /// Mattermost's error id, such as `api.context.session_expired.app_error`.
    pub id: String,
    /// Its human message.
    pub message: String,
    /// More detail, usually empty.
    pub detailed_error: String,
    /// The request's id in the server's log.
    pub request_id: String,
    /// The HTTP status.
    pub status_code: u16,
}

impl ApiError {
    /// `decode` reads an error body: Mattermost's JSON when it is that,
    /// otherwise an excerpt of the text. The HTTP status wins over the one in
    /// the body, because a proxy may rewrite one but not the other.
    #[must_use]
    pub fn decode(status: StatusCode, body: &[u8]) -> ApiError {
        if let Ok(mut api) = serde_json::from_slice::<ApiError>(body)
            && (!api.id.is_empty() || !api.message.is_empty())
        {
            api.status_code = status.as_u16();
            return api;
        }
        let text = String::from_utf8_lossy(body);
        let text: String = text
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .filter(|c| !c.is_control())
            .take(BODY_EXCERPT_CHARS)
            .collect();
        let message = if text.is_empty() {
            status.canonical_reason().unwrap_or("no message").to_owned()
        } else {
            text
        };
        ApiError {
            message,
            status_code: status.as_u16(),
            ..ApiError::default()
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.status_code)?;
        if !self.id.is_empty() {
            write!(f, " {}", self.id)?;
        }
        write!(f, ": {:?}", self.message)?;
        if !self.request_id.is_empty() {
            write!(f, ", request id {}", self.request_id)?;
        }
        Ok(())
    }
}

/// `Thing` is the kind of Mattermost object a request is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Thing {
    /// A user account.
    User,
    /// A team.
    Team,
    /// A channel (public, private, direct or group).
    Channel,
    /// A post.
    Post,
    /// An attached file.
    File,
    /// The server itself (configuration, health).
    Server,
}

impl fmt::Display for Thing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::User => "user",
            Self::Team => "team",
            Self::Channel => "channel",
            Self::Post => "post",
            Self::File => "file",
            Self::Server => "server",
        })
    }
}

/// `Key` is how a request named the object: by id, by name, by several
/// names, or not at all (the caller's own account).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    /// A 26-character Mattermost id.
    Id(String),
    /// A name (a username, a team or channel name).
    Name(String),
    /// Several ids or names.
    Several(Vec<String>),
    /// Nothing more (for example "your own account").
    Own,
}

/// `Target` is what a request was about, carried into errors so a 404 says
/// *which* channel and a 403 *what* the account may not touch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The kind of object.
    pub thing: Thing,
    /// How it was named.
    pub key: Key,
    /// Where it was looked for, when that matters (a channel name within a
    /// team), already described ("in team 8x…").
    pub within: Option<String>,
}

impl Target {
    /// `id` names one object by id.
    #[must_use]
    pub fn id(thing: Thing, id: &str) -> Target {
        Target {
            thing,
            key: Key::Id(id.to_owned()),
            within: None,
        }
    }

    /// `name` names one object by name.
    #[must_use]
    pub fn name(thing: Thing, name: &str) -> Target {
        Target {
            thing,
            key: Key::Name(name.to_owned()),
            within: None,
        }
    }

    /// `several` names objects by several ids or names.
    #[must_use]
    pub fn several(thing: Thing, keys: &[impl AsRef<str>]) -> Target {
        Target {
            thing,
            key: Key::Several(keys.iter().map(|k| k.as_ref().to_owned()).collect()),
            within: None,
        }
    }

    /// `own` is the caller's own object of that kind.
    #[must_use]
    pub fn own(thing: Thing) -> Target {
        Target {
            thing,
            key: Key::Own,
            within: None,
        }
    }

    /// `within` adds where the object was looked for.
    #[must_use]
    pub fn within(mut self, place: impl Into<String>) -> Target {
        self.within = Some(place.into());
        self
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key {
            Key::Id(id) => write!(f, "{} with id {id:?}", self.thing)?,
            Key::Name(name) => write!(f, "{} named {name:?}", self.thing)?,
            Key::Several(keys) => {
                write!(f, "{}s ", self.thing)?;
                for (i, key) in keys.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{key:?}")?;
                }
            }
            Key::Own if self.thing == Thing::Server => f.write_str("the server")?,
            Key::Own => write!(f, "your own {}", self.thing)?,
        }
        if let Some(within) = &self.within {
            write!(f, " {within}")?;
        }
        Ok(())
    }
}

/// `describe_network` turns a reqwest failure into a short reason a person
/// understands, without the URL.
pub(crate) fn describe_network(err: &reqwest::Error, timeout: Duration) -> String {
    if err.is_timeout() {
        return format!("no answer within {}s", timeout.as_secs_f32());
    }
    let mut reason = String::from(if err.is_connect() {
        "the connection failed"
    } else if err.is_body() || err.is_decode() {
        "the answer broke off"
    } else {
        "the request failed"
    });
    // The innermost cause is the one that says why ("Connection refused").
    let mut cause: Option<&dyn std::error::Error> = std::error::Error::source(err);
    let mut last = None;
    while let Some(c) = cause {
        last = Some(c.to_string());
        cause = c.source();
    }
    if let Some(last) = last {
        reason.push_str(": ");
        reason.push_str(&last);
    }
    reason
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSON: &str = r#"{"id":"api.context.session_expired.app_error","message":"Invalid or expired session, please login again.","detailed_error":"","request_id":"r1","status_code":401}"#;

    #[test]
    fn a_mattermost_error_body_is_decoded_field_by_field() {
        let api = ApiError::decode(StatusCode::UNAUTHORIZED, JSON.as_bytes());
        assert_eq!(api.id, "api.context.session_expired.app_error");
        assert_eq!(
            api.message,
            "Invalid or expired session, please login again."
        );
        assert_eq!(api.request_id, "r1");
        assert_eq!(api.status_code, 401);
    }

    #[test]
    fn error_bodies_of_every_shape_become_an_api_error() {
        // (status, body, expected id, expected message)
        let cases: &[(u16, &str, &str, &str)] = &[
            (
                401,
                JSON,
                "api.context.session_expired.app_error",
                "Invalid or expired session, please login again.",
            ),
            (
                404,
                r#"{"id":"app.channel.get.existing.app_error","message":"Unable to find the existing channel.","status_code":404,"extra":1}"#,
                "app.channel.get.existing.app_error",
                "Unable to find the existing channel.",
            ),
            (
                502,
                "<html><body><h1>502 Bad Gateway</h1>\n<hr>nginx</body></html>",
                "",
                "<html><body><h1>502 Bad Gateway</h1> <hr>nginx</body></html>",
            ),
            (503, "", "", "Service Unavailable"),
            (500, "{}", "", "{}"),
            (500, "[1,2]", "", "[1,2]"),
            (
                400,
                "plain \u{7}text\r\nwith controls",
                "",
                "plain text with controls",
            ),
            (418, "\u{fffd}\u{fffd}", "", "\u{fffd}\u{fffd}"),
        ];
        for (status, body, id, message) in cases {
            let status = StatusCode::from_u16(*status).unwrap();
            let api = ApiError::decode(status, body.as_bytes());
            assert_eq!(api.id, *id, "{body}");
            assert_eq!(api.message, *message, "{body}");
            assert_eq!(api.status_code, status.as_u16(), "{body}");
        }
    }

    #[test]
    fn the_http_status_wins_over_the_one_in_the_body() {
        let api = ApiError::decode(StatusCode::FORBIDDEN, JSON.as_bytes());
        assert_eq!(api.status_code, 403);
    }

    #[test]
    fn a_long_html_page_is_cut_to_an_excerpt() {
        let body = "x".repeat(10_000);
        let api = ApiError::decode(StatusCode::BAD_GATEWAY, body.as_bytes());
        assert_eq!(api.message.chars().count(), BODY_EXCERPT_CHARS);
    }

    #[test]
    fn targets_read_as_what_was_asked_for() {
        let cases = [
            (Target::id(Thing::Channel, "abc"), "channel with id \"abc\""),
            (
                Target::name(Thing::Channel, "town-square").within("in team \"t1\""),
                "channel named \"town-square\" in team \"t1\"",
            ),
            (
                Target::several(Thing::User, &["bob", "carol"]),
                "users \"bob\", \"carol\"",
            ),
            (Target::own(Thing::User), "your own user"),
            (Target::own(Thing::Server), "the server"),
        ];
        for (target, text) in cases {
            assert_eq!(target.to_string(), text);
        }
    }

    #[test]
    fn messages_say_what_to_do() {
        let api = ApiError::decode(StatusCode::NOT_FOUND, b"");
        let not_found = Error::NotFound {
            target: Target::id(Thing::Post, "p1"),
            api: Box::new(api.clone()),
        };
        assert!(
            not_found
                .to_string()
                .starts_with("post with id \"p1\" was not found; check the id or name"),
            "{not_found}"
        );
        let too_large = Error::TooLarge {
            target: Target::id(Thing::File, "f1"),
            cap: 10,
            size: Some(20),
            received: 0,
        };
        assert_eq!(
            too_large.to_string(),
            "file with id \"f1\" is larger than the cap of 10 bytes (it is 20 bytes); it was not read"
        );
        let rejected = Error::RejectedTooLarge {
            target: Target::id(Thing::Channel, "c1"),
            limit: Some(100),
            api: Box::new(api),
        };
        assert!(rejected.to_string().contains("its limit is 100 bytes"));
    }
}
