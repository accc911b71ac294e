//! Middleware both servers put in front of their streamable HTTP endpoint.

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// `MCP_BODY_MAX_BYTES` is the largest request body an MCP endpoint takes:
/// one JSON-RPC message (4 MiB, rmcp's own limit, named so that both the
/// declared and the streamed check use one number).
pub const MCP_BODY_MAX_BYTES: u64 = 4 * 1024 * 1024;

/// `LOOPBACK_HOSTS` are the `Host` names an HTTP endpoint accepts unless
/// the operator lists more (DNS-rebinding protection).
pub const LOOPBACK_HOSTS: &[&str] = &["localhost", "127.0.0.1", "::1", "[::1]"];

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

#[cfg(test)]
mod tests {
    use super::*;
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

    #[tokio::test]
    async fn a_session_end_is_answered_no_content() {
        let request = Request::delete("/mcp")
            .body(Body::empty())
            .expect("a request");
        assert_eq!(status(request).await, StatusCode::NO_CONTENT);
    }
}
