//! What went wrong with a fetch, said so that the model (or the operator)
//! knows what to do next, and never with a URL's query or password.

use std::net::IpAddr;
use std::time::Duration;

/// `HINT_PRIVATE` ends every private-address refusal, because only the
/// operator can lift it and the model should say so rather than retry.
const HINT_PRIVATE: &str = "an operator can list the host in http.private_hosts";

/// `Refused` is a policy decision against a request: the host, the address
/// or a redirect was not allowed. It is cloneable because a refusal made
/// inside reqwest (in the resolver or the redirect policy) travels back as
/// the source of reqwest's error and is copied out of it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The URL's scheme is not http or https.
    #[error("refused: only http and https URLs are fetched, not {scheme}:")]
    Scheme {
        /// The scheme that was asked for.
        scheme: String,
    },
    /// The URL names no host (`http:///x`, `file:` style URLs).
    #[error("refused: the URL names no host; give an absolute http or https URL")]
    NoHost,
    /// The host is not in the allow list (the operator's, narrowed per run).
    #[error(
        "refused: {host} is not an allowed host for this run; an operator can add it to http.allow_hosts"
    )]
    HostNotAllowed {
        /// The host as it appears in the URL.
        host: String,
    },
    /// The host is an IP literal in a private range; refused before any
    /// connection is tried.
    #[error("refused: {host} is a private address; {HINT_PRIVATE}")]
    PrivateLiteral {
        /// The host as it appears in the URL.
        host: String,
    },
    /// The host's name resolves to a private address; refused at connect
    /// time by the resolver, before any connection is tried.
    #[error("refused: {host} resolves to {address}, a private address; {HINT_PRIVATE}")]
    ResolvesPrivate {
        /// The name that was resolved.
        host: String,
        /// The first private address it resolved to.
        address: IpAddr,
    },
    /// More redirects than the policy's `max_redirects`.
    #[error(
        "refused: more than {max} redirects, the last one to {to}; the server may be redirecting in a loop"
    )]
    TooManyRedirects {
        /// The limit in force.
        max: usize,
        /// The display form of the redirect that went over it.
        to: String,
    },
    /// A redirect from https to plain http, which would send the request
    /// (and whatever it carries) unencrypted.
    #[error("refused: a redirect from {from} to {to} would leave https for plain http")]
    Downgrade {
        /// The display form of the https URL.
        from: String,
        /// The display form of the http URL it redirected to.
        to: String,
    },
    /// A redirect to another host where the operation follows only
    /// redirects within the same host (File download).
    #[error(
        "refused: a redirect from {from} to another host, {to}; this operation follows redirects only within the same host"
    )]
    OtherHost {
        /// The host the request was sent to.
        from: String,
        /// The host it was redirected to.
        to: String,
    },
}

/// `NetError` is everything [`crate::Net`] and [`crate::check_url`] can
/// answer instead of a response. Every message names the URL only in its
/// display form (query as `?…`, no userinfo), so it is safe to show.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// The URL holds a character a URL never holds unencoded. The URL itself
    /// is not repeated, since it may carry a secret.
    #[error(
        "refused: the URL holds {} at position {position} (counting from 0), which a URL never holds unencoded; percent-encode it (a space is %20)",
        describe(*character)
    )]
    BadCharacter {
        /// The character found.
        character: char,
        /// Its position, in characters, counting from 0.
        position: usize,
    },
    /// The URL could not be parsed at all.
    #[error("the URL could not be read ({reason}); give an absolute http or https URL")]
    Unparsable {
        /// Why the parser refused it (never includes the URL).
        reason: url::ParseError,
    },
    /// The policy refused the request or one of its redirects.
    #[error(transparent)]
    Refused(#[from] Refused),
    /// The server did not answer (or stopped sending) in time.
    #[error("{url} did not answer within {} s; try again later or ask for less", after.as_secs())]
    Timeout {
        /// The display form of the URL.
        url: String,
        /// The time allowed.
        after: Duration,
    },
    /// No connection could be made (refused, unreachable, name unknown, TLS).
    #[error("could not connect to {url}")]
    Connect {
        /// The display form of the URL.
        url: String,
        /// reqwest's error, stripped of its URL.
        #[source]
        source: reqwest::Error,
    },
    /// Any other failure while sending the request or reading the answer.
    #[error("the request to {url} failed")]
    Http {
        /// The display form of the URL.
        url: String,
        /// reqwest's error, stripped of its URL.
        #[source]
        source: reqwest::Error,
    },
    /// The client could not be built (TLS set-up, proxy URL).
    #[error("the HTTP client could not be set up")]
    Setup {
        /// reqwest's error.
        #[source]
        source: reqwest::Error,
    },
}

fn describe(character: char) -> String {
    match character {
        ' ' => "a space".to_owned(),
        '"' => "a double quote (\")".to_owned(),
        '\\' => "a backslash (\\)".to_owned(),
        '`' => "a backtick (`)".to_owned(),
        other => format!("a control character (U+{:04X})", u32::from(other)),
    }
}

impl NetError {
    /// `from_reqwest` turns reqwest's error into ours: a refusal made inside
    /// reqwest (resolver, redirect policy) comes back as that refusal, and
    /// every other error loses its URL, which may carry a secret.
    pub(crate) fn from_reqwest(error: reqwest::Error, url: String, timeout: Duration) -> NetError {
        if let Some(refused) = find_refusal(&error) {
            return NetError::Refused(refused);
        }
        let source = error.without_url();
        if source.is_timeout() {
            NetError::Timeout {
                url,
                after: timeout,
            }
        } else if source.is_connect() {
            NetError::Connect { url, source }
        } else {
            NetError::Http { url, source }
        }
    }

    /// `refusal` is the policy decision behind this error, if it is one;
    /// callers use it to tell "not allowed" from "did not work".
    #[must_use]
    pub fn refusal(&self) -> Option<&Refused> {
        match self {
            NetError::Refused(refused) => Some(refused),
            _ => None,
        }
    }
}

fn find_refusal(error: &(dyn std::error::Error + 'static)) -> Option<Refused> {
    let mut current = Some(error);
    while let Some(error) = current {
        if let Some(refused) = error.downcast_ref::<Refused>() {
            return Some(refused.clone());
        }
        current = error.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_buried_in_a_chain_of_errors_is_found() {
        #[derive(Debug, thiserror::Error)]
        #[error("outer")]
        struct Outer(#[source] Refused);
        let outer = Outer(Refused::NoHost);
        assert_eq!(find_refusal(&outer), Some(Refused::NoHost));
        assert_eq!(find_refusal(&std::fmt::Error), None);
    }

    #[test]
    fn a_private_address_refusal_names_the_host_the_address_and_the_remedy() {
        let refused = Refused::ResolvesPrivate {
            host: "example.internal".to_owned(),
            address: "10.0.0.5".parse().expect("an address"),
        };
        assert_eq!(
            refused.to_string(),
            "refused: example.internal resolves to 10.0.0.5, a private address; an operator can list the host in http.private_hosts"
        );
    }
}
