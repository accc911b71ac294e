//! The one error type of the HTTP API. Every refusal is a small JSON body
//! `{"error": "...", "message": "..."}` with `Cache-Control: no-store`; an
//! internal failure answers a generic 500 and logs the detail.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// The message of every "no such run" answer. A run the caller may not read
/// gets exactly this answer too, so that a key cannot learn which run ids
/// exist.
pub(super) const NO_RUN_MESSAGE: &str =
    "No run with this id that your API key may read. GET /v1/runs lists the runs you may read.";

/// `ApiError` is every way a request to the HTTP API can fail.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// No `Authorization` header, or a key that is not configured. Both get
    /// the same answer, so that a guess learns nothing.
    #[error("missing or unknown API key")]
    Unauthorized,
    /// A run that does not exist, that the caller may not read, or an id
    /// that is not a run id at all: one answer for all three.
    #[error("no run the caller may read")]
    NoRun,
    /// A path in a readable run's inbox that is not a recorded file (or is a
    /// symbolic link, or tries to leave the inbox).
    #[error("no such file in the run's inbox")]
    NoFile,
    /// A request body or query that cannot be understood; the message says
    /// what was expected.
    #[error("bad request: {0}")]
    BadRequest(String),
    /// Anything that went wrong on our side (disk, database, a task that
    /// panicked). The detail is logged, never sent.
    #[error("internal error: {0}")]
    Internal(String),
    /// The records database is not answering; the same request may well
    /// succeed in a few seconds. The detail is logged, never sent.
    #[error("the records database is not answering: {0}")]
    Unavailable(String),
}

/// `RETRY_AFTER_SECONDS` is when a client is told to try again while the
/// records database is not answering.
pub(crate) const RETRY_AFTER_SECONDS: u64 = 5;

/// What the API and the gRPC service say while the records database is not
/// answering.
pub(crate) const UNAVAILABLE_MESSAGE: &str = "The gateway's records database is not answering; \
     try again in a few seconds. If it keeps failing, the operator should check the database \
     (`porter gateway doctor`).";

impl ApiError {
    /// An internal error from any displayable cause.
    pub(crate) fn internal(cause: impl std::fmt::Display) -> Self {
        Self::Internal(cause.to_string())
    }
}

impl From<porter_inbox::InboxError> for ApiError {
    fn from(err: porter_inbox::InboxError) -> Self {
        match err {
            porter_inbox::InboxError::NoRun(_) => Self::NoRun,
            porter_inbox::InboxError::NoFile { .. } => Self::NoFile,
            unavailable @ porter_inbox::InboxError::Unavailable(_) => {
                Self::Unavailable(unavailable.to_string())
            }
            other => Self::internal(other),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code, message) = match &self {
            Self::Unauthorized => (
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "Send your porter API key as `Authorization: Bearer <key>`. \
                 Keys are configured under `api_keys` in porter.yaml."
                    .to_owned(),
            ),
            Self::NoRun => (StatusCode::NOT_FOUND, "no_run", NO_RUN_MESSAGE.to_owned()),
            Self::NoFile => (
                StatusCode::NOT_FOUND,
                "no_file",
                "No such file in this run's inbox. GET /v1/runs lists each run's files.".to_owned(),
            ),
            Self::BadRequest(message) => (StatusCode::BAD_REQUEST, "bad_request", message.clone()),
            Self::Internal(detail) => {
                tracing::error!(detail = %detail, "HTTP API request failed");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "The gateway failed to answer; the detail is in its log.".to_owned(),
                )
            }
            Self::Unavailable(detail) => {
                tracing::warn!(detail = %detail, "HTTP API request failed: the records database is not answering");
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "unavailable",
                    UNAVAILABLE_MESSAGE.to_owned(),
                )
            }
        };
        let mut response =
            (status, Json(json!({"error": code, "message": message}))).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        if matches!(self, Self::Unavailable(_)) {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECONDS));
        }
        if matches!(self, Self::Unauthorized) {
            headers.insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(porter_mcp::http::BEARER_CHALLENGE),
            );
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_records_database_that_does_not_answer_is_a_503_with_when_to_try_again() {
        let error = ApiError::from(porter_inbox::InboxError::Unavailable(
            "could not list runs: no connection to the database at postgres://porter:***@db/porter"
                .to_owned(),
        ));
        let response = error.into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()[header::RETRY_AFTER], "5");
        let body = axum::body::to_bytes(response.into_body(), 4096)
            .await
            .expect("a body");
        let body: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
        assert_eq!(body["error"], "unavailable");
        let message = body["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("records database") && message.contains("try again"),
            "{message}"
        );
        assert!(!message.contains("postgres://"), "{message}");
    }
}
