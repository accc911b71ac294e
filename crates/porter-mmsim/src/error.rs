//! Mattermost's error answers: `{"id", "message", "detailed_error",
//! "request_id", "status_code"}` with `Content-Type: application/json`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// `ApiError` is one refusal, shaped like the server's `model.AppError`.
/// Ids and messages are the server's own, so a client that branches on
/// `id` behaves as it would against Mattermost.
#[derive(Debug, Clone)]
pub(crate) struct ApiError {
    pub status: StatusCode,
    pub id: &'static str,
    pub message: String,
    pub detailed: String,
}

impl ApiError {
    /// Any error with its status, id and message.
    pub(crate) fn new(status: StatusCode, id: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            id,
            message: message.into(),
            detailed: String::new(),
        }
    }

    /// Adds the server's `detailed_error` text.
    pub(crate) fn detail(mut self, detailed: impl Into<String>) -> Self {
        self.detailed = detailed.into();
        self
    }

    /// 401: no token, or one that belongs to no active user.
    pub(crate) fn unauthorized(detail: &str) -> Self {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "api.context.session_expired.app_error",
            "Invalid or expired session, please login again.",
        )
        .detail(detail)
    }

    /// 403: the user lacks a permission (named in the detail, as the
    /// server does).
    pub(crate) fn forbidden(user_id: &str, permission: &str) -> Self {
        ApiError::new(
            StatusCode::FORBIDDEN,
            "api.context.permissions.app_error",
            "You do not have the appropriate permissions.",
        )
        .detail(format!("userId={user_id}, permission={permission}"))
    }

    /// 404: a thing that does not exist.
    pub(crate) fn not_found(id: &'static str, message: &str, detail: String) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, id, message).detail(detail)
    }

    /// 400: a URL parameter that is missing or malformed.
    pub(crate) fn invalid_url_param(name: &str) -> Self {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.context.invalid_url_param.app_error",
            format!("Invalid or missing {name} parameter in request URL."),
        )
    }

    /// 400: a body field that is missing or malformed.
    pub(crate) fn invalid_body_param(name: &str) -> Self {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.context.invalid_body_param.app_error",
            format!("Invalid or missing {name} in request body."),
        )
    }

    /// 404 for a path no route serves; the server answers JSON here too,
    /// never a web page.
    pub(crate) fn no_route() -> Self {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "api.context.404.app_error",
            "Sorry, we could not find the page.",
        )
        .detail("There doesn't appear to be an api call for the url='…'.")
    }

    /// 500 with a generic message; the cause goes to the log only.
    pub(crate) fn internal(cause: &str) -> Self {
        tracing::error!(cause, "mmsim internal error");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "app.internal_error",
            "An internal error occurred.",
        )
    }
}

/// `JSON_TYPE` is the exact `Content-Type` Client4 requires before it parses
/// a body as JSON.
pub(crate) const JSON_TYPE: &str = "application/json";

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let request_id = crate::model::Ids::random_id();
        let body = json!({
            "id": self.id,
            "message": self.message,
            "detailed_error": self.detailed,
            "request_id": request_id,
            "status_code": self.status.as_u16(),
        });
        let mut response = (self.status, body.to_string()).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON_TYPE));
        if let Ok(value) = HeaderValue::from_str(&request_id) {
            headers.insert("x-request-id", value);
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_answers_mattermost_json_with_its_status() {
        let response = ApiError::invalid_url_param("channel_id").into_response();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            HeaderValue::from_static("application/json")
        );
        assert!(response.headers().contains_key("x-request-id"));
    }
}
