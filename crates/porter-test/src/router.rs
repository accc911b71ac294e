//! Requests sent straight through an axum router (no socket), as the API
//! tests of the gateway and the simulator send them.

use axum::Router;
use axum::body::Body;
use axum::http::{Request, Response, header};
use tower::ServiceExt as _;

/// Sends one request through `app`: `method` to `uri`, with `bearer` as its
/// `Authorization: Bearer` token when given and `body` (its content type
/// and bytes) when given. The answer's body is left to the caller (an event
/// stream never ends).
///
/// # Panics
///
/// When the request cannot be built or the router fails to answer.
pub async fn send(
    app: &Router,
    method: &str,
    uri: &str,
    bearer: Option<&str>,
    body: Option<(&str, Vec<u8>)>,
) -> Response<Body> {
    let mut request = Request::builder().method(method).uri(uri);
    if let Some(bearer) = bearer {
        request = request.header(header::AUTHORIZATION, format!("Bearer {bearer}"));
    }
    let request = match body {
        Some((content_type, bytes)) => request
            .header(header::CONTENT_TYPE, content_type)
            .body(Body::from(bytes)),
        None => request.body(Body::empty()),
    }
    .expect("the request is well formed");
    app.clone()
        .oneshot(request)
        .await
        .expect("the router answers")
}
