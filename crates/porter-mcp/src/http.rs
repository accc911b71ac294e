//! Middleware both servers put in front of their streamable HTTP endpoint,
//! the `Host` and `Origin` lists it accepts, and how both read and check a
//! bearer token.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

/// `MCP_BODY_MAX_BYTES` is the largest request body an MCP endpoint takes:
/// one JSON-RPC message (4 MiB, rmcp's own limit, named so that both the
/// declared and the streamed check use one number).
pub const MCP_BODY_MAX_BYTES: u64 = 4 * 1024 * 1024;

/// `LOOPBACK_HOSTS` are the `Host` names an HTTP endpoint accepts unless
/// the operator lists more (DNS-rebinding protection).
pub const LOOPBACK_HOSTS: &[&str] = &["localhost", "127.0.0.1", "::1", "[::1]"];

/// `allowed_hosts` are the `Host` names an endpoint accepts: loopback, and
/// the names (or `host:port`) the operator adds.
#[must_use]
pub fn allowed_hosts(extra: &[String]) -> Vec<String> {
    let mut hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| (*h).to_owned()).collect();
    hosts.extend(extra.iter().cloned());
    hosts
}

/// `allowed_origins` are the browser origins that go with `hosts`: each
/// host over http and https, on any port unless the host names one
/// (IPv6 literals in brackets).
#[must_use]
pub fn allowed_origins(hosts: &[String]) -> Vec<String> {
    let mut origins = Vec::new();
    for host in hosts {
        let host = if host.contains(':')
            && !host.starts_with('[')
            && host.parse::<std::net::Ipv6Addr>().is_ok()
        {
            format!("[{host}]")
        } else {
            host.clone()
        };
        let with_port = if host
            .rsplit_once(':')
            .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
            && !host.ends_with(']')
        {
            host.clone()
        } else {
            format!("{host}:*")
        };
        origins.push(format!("http://{with_port}"));
        origins.push(format!("https://{with_port}"));
    }
    origins.sort();
    origins.dedup();
    origins
}

/// `guard` puts the endpoint's middleware around `routes`: an answer given
/// before the body was read says the connection closes
/// ([`close_after_unread_body`]), a body is judged on its declared length
/// first ([`declared_body_limit`] at [`MCP_BODY_MAX_BYTES`]), and a
/// session's end is answered 204 ([`ended_session`]).
pub fn guard(routes: Router) -> Router {
    routes
        .layer(middleware::from_fn(ended_session))
        .layer(middleware::from_fn_with_state(
            MCP_BODY_MAX_BYTES,
            declared_body_limit,
        ))
        .layer(middleware::from_fn(close_after_unread_body))
}

/// Refuses a request whose `Content-Length` is over the route's limit
/// (`max`, its state) with 413 before a byte of the body is read. The
/// checks that count bytes while a body streams in still hold for a body
/// without a length, but one that declares its size is judged on the
/// header alone, so a declared 2 GiB costs the server nothing. A length
/// that is not a number is a 400.
pub async fn declared_body_limit(State(max): State<u64>, request: Request, next: Next) -> Response {
    let declared = request.headers().get(header::CONTENT_LENGTH).map(|value| {
        value
            .to_str()
            .ok()
            .and_then(|text| text.trim().parse::<u64>().ok())
    });
    match declared {
        Some(None) => (
            StatusCode::BAD_REQUEST,
            "the Content-Length header is not a number of bytes\n",
        )
            .into_response(),
        Some(Some(length)) if length > max => {
            let mut response = (
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "the request body declares {length} bytes, more than the {max} this endpoint takes; send a smaller body\n"
                ),
            )
                .into_response();
            // The body is never read, so the connection cannot carry another
            // request.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            response
        }
        _ => next.run(request).await,
    }
}

/// Says `Connection: close` on an answer given before the request's body
/// was read to its end (a refused key, a refused Host, a handler that
/// answered early). The server closes such a connection after the answer
/// (the rest of the body would be read as the next request), and a client
/// that is not told so sends its next request on it and gets "server
/// disconnected" instead of an answer. A request without a body, or whose
/// body was read whole, keeps its connection.
pub async fn close_after_unread_body(request: Request, next: Next) -> Response {
    let headers = request.headers();
    let declares_body = headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|text| text.trim() != "0");
    if !declares_body {
        return next.run(request).await;
    }
    let finished = Arc::new(AtomicBool::new(false));
    let (parts, body) = request.into_parts();
    let body = axum::body::Body::new(Watched {
        inner: body,
        finished: Arc::clone(&finished),
    });
    let mut response = next.run(Request::from_parts(parts, body)).await;
    if !finished.load(Ordering::Acquire) {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// A request body that notes when it has been read to its end.
struct Watched {
    inner: axum::body::Body,
    finished: Arc<AtomicBool>,
}

impl http_body::Body for Watched {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) || self.inner.is_end_stream() {
            self.finished.store(true, Ordering::Release);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// Answers a session's end (`DELETE /mcp`) with 204 No Content: rmcp says
/// 202, which clients read as a failed termination.
pub async fn ended_session(request: Request, next: Next) -> Response {
    let delete = request.method() == axum::http::Method::DELETE;
    let mut response = next.run(request).await;
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
        *response.body_mut() = axum::body::Body::empty();
    }
    response
}

/// The token of an `Authorization: Bearer <token>` header value: the
/// scheme in any case (`bearer`, `BEARER`), as HTTP says, with the
/// whitespace around and between them dropped. `None` for no header, another
/// scheme or an empty token.
#[must_use]
pub fn bearer_token(header: Option<&str>) -> Option<&str> {
    let (scheme, token) = header?.trim().split_once(char::is_whitespace)?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// SHA-256 of a secret, to keep in place of it and compare with
/// [`same_digest`]: digests of any two secrets have the same length.
#[must_use]
pub fn secret_digest(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// Whether two digests are equal, looking at every byte whatever the first
/// difference, so that the time taken says nothing about which bytes were
/// right.
#[must_use]
pub fn same_digest(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let difference = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(difference) == 0
}

/// The `401` both servers answer a request without a valid bearer token
/// with: `message` (what to send instead) as a plain-text body, and
/// `WWW-Authenticate: Bearer realm="porter"`.
#[must_use]
pub fn unauthorized(message: &'static str) -> Response {
    let mut response = (StatusCode::UNAUTHORIZED, message).into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(BEARER_CHALLENGE),
    );
    response
}

/// The `WWW-Authenticate` challenge of every `401` porter answers.
pub const BEARER_CHALLENGE: &str = "Bearer realm=\"porter\"";

/// Sets a connection an MCP server accepted to send small writes at once
/// (`TCP_NODELAY`), for `axum::serve(listener.tap_io(send_at_once), app)`.
/// A streamed MCP answer leaves in several small writes; under Nagle's
/// algorithm each waits for the client's deliberately late acknowledgement
/// of the one before, about 40 ms a call. Should the option not be set
/// (it cannot fail on a TCP socket), the connection only answers slower.
pub fn send_at_once(connection: &mut tokio::net::TcpStream) {
    let _ = connection.set_nodelay(true);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_token_is_read_in_any_case_with_the_whitespace_around_it_dropped() {
        for (header, token) in [
            (Some("Bearer alice-0001"), Some("alice-0001")),
            (Some("bearer alice-0001"), Some("alice-0001")),
            (Some("  BEARER \t alice-0001  "), Some("alice-0001")),
            (Some("Bearer"), None),
            (Some("Bearer    "), None),
            (Some("Basic YWxpY2U6cHc="), None),
            (Some("alice-0001"), None),
            (Some(""), None),
            (None, None),
        ] {
            assert_eq!(bearer_token(header), token, "{header:?}");
        }
    }

    #[test]
    fn digests_are_the_same_only_for_the_same_secret() {
        let known = secret_digest("root-secret-0003");
        assert!(same_digest(&secret_digest("root-secret-0003"), &known));
        assert!(!same_digest(&secret_digest("root-secret-0004"), &known));
        assert!(!same_digest(&secret_digest(""), &known));
    }

    #[test]
    fn a_refusal_says_what_to_send_and_names_the_bearer_scheme() {
        let response = unauthorized("send a token\n");
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(
            response.headers()[header::WWW_AUTHENTICATE],
            "Bearer realm=\"porter\""
        );
    }
    use axum::Router;
    use axum::body::Body;
    use axum::middleware;
    use axum::routing::{delete, post};
    use tower::ServiceExt as _;

    fn app() -> Router {
        Router::new()
            .route("/mcp", post(|| async { "read" }))
            .route("/mcp", delete(|| async { StatusCode::ACCEPTED }))
            .layer(middleware::from_fn(ended_session))
            .layer(middleware::from_fn_with_state(10u64, declared_body_limit))
    }

    async fn status(request: Request) -> StatusCode {
        app().oneshot(request).await.expect("answered").status()
    }

    fn post_declaring(length: &str) -> Request {
        Request::post("/mcp")
            .header(header::CONTENT_LENGTH, length)
            .body(Body::empty())
            .expect("a request")
    }

    #[tokio::test]
    async fn a_declared_length_is_judged_at_the_limit_and_one_past_it() {
        assert_eq!(status(post_declaring("10")).await, StatusCode::OK);
        assert_eq!(
            status(post_declaring("11")).await,
            StatusCode::PAYLOAD_TOO_LARGE
        );
        assert_eq!(
            status(post_declaring("2147483648")).await,
            StatusCode::PAYLOAD_TOO_LARGE
        );
        assert_eq!(status(post_declaring("ten")).await, StatusCode::BAD_REQUEST);
    }

    /// A route that refuses without reading the body and one that reads it.
    fn early_and_late() -> Router {
        Router::new()
            .route("/refuse", post(|| async { StatusCode::UNAUTHORIZED }))
            .route(
                "/read",
                post(|body: axum::body::Bytes| async move { body.len().to_string() }),
            )
            .layer(middleware::from_fn(close_after_unread_body))
    }

    async fn connection_header(path: &str, body: &'static str) -> Option<String> {
        let request = Request::post(path)
            .header(header::CONTENT_LENGTH, body.len().to_string())
            .body(Body::from(body))
            .expect("a request");
        let response = early_and_late().oneshot(request).await.expect("answered");
        response
            .headers()
            .get(header::CONNECTION)
            .map(|value| value.to_str().expect("ASCII").to_owned())
    }

    #[tokio::test]
    async fn an_answer_before_the_body_was_read_says_the_connection_closes() {
        assert_eq!(
            connection_header("/refuse", "{\"jsonrpc\":\"2.0\"}")
                .await
                .as_deref(),
            Some("close")
        );
        assert_eq!(
            connection_header("/read", "{\"jsonrpc\":\"2.0\"}").await,
            None
        );
        assert_eq!(connection_header("/refuse", "").await, None);
    }

    #[test]
    fn origins_cover_each_host_on_any_port_unless_it_names_one() {
        let hosts = allowed_hosts(&["chat.example".to_owned(), "10.0.0.5:8080".to_owned()]);
        assert!(hosts.iter().any(|h| h == "::1"));
        let origins = allowed_origins(&hosts);
        for expected in [
            "http://[::1]:*",
            "https://localhost:*",
            "http://127.0.0.1:*",
            "https://chat.example:*",
            "http://10.0.0.5:8080",
        ] {
            assert!(
                origins.iter().any(|o| o == expected),
                "{expected}: {origins:?}"
            );
        }
        assert!(!origins.iter().any(|o| o == "http://10.0.0.5:8080:*"));
    }

    #[tokio::test]
    async fn a_session_end_is_answered_no_content() {
        let request = Request::delete("/mcp")
            .body(Body::empty())
            .expect("a request");
        assert_eq!(status(request).await, StatusCode::NO_CONTENT);
    }
}
