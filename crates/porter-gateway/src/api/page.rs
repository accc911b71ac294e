//! The web page at `/`: it asks once for an API key (kept in the tab's
//! `sessionStorage`), lists the key's runs and their inbox files, and adds
//! each capture live from `GET /v1/events`. Its script and style are files
//! of their own, served from this origin, so its Content-Security-Policy can
//! forbid every inline script and every other origin.

use axum::http::{HeaderName, StatusCode, header};
use axum::response::IntoResponse;

/// The page itself; every string it shows is set with `textContent`.
const PAGE_HTML: &str = include_str!("page/index.html");
/// The page's script.
const APP_JS: &str = include_str!("page/app.js");
/// The page's style.
const APP_CSS: &str = include_str!("page/app.css");

/// `PAGE_CSP` lets the page run only its own script and style and talk only
/// to its own origin; nothing may frame it, and it has no forms to post.
/// Images may also come from `blob:` URLs the page makes itself: a preview
/// is the PNG/JPEG porter's file view re-encoded, never a file's own bytes.
pub(crate) const PAGE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self' blob:; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

/// The headers every part of the page goes out with.
fn headers(content_type: &'static str) -> [(HeaderName, &'static str); 5] {
    [
        (header::CONTENT_TYPE, content_type),
        (header::CONTENT_SECURITY_POLICY, PAGE_CSP),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CACHE_CONTROL, "no-store"),
    ]
}

/// `GET /`: the page. It needs no key to load; it asks for one.
pub(super) async fn page() -> impl IntoResponse {
    (headers("text/html; charset=utf-8"), PAGE_HTML)
}

/// `GET /app.js`: the page's script.
pub(super) async fn script() -> impl IntoResponse {
    (headers("text/javascript; charset=utf-8"), APP_JS)
}

/// `GET /app.css`: the page's style.
pub(super) async fn style() -> impl IntoResponse {
    (headers("text/css; charset=utf-8"), APP_CSS)
}

/// `GET /favicon.ico`: nothing, said plainly, so a browser's automatic
/// request does not log an error beside the page.
pub(super) async fn favicon() -> StatusCode {
    StatusCode::NO_CONTENT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_loads_only_its_own_script_and_style() {
        assert!(PAGE_HTML.contains(r#"<script src="/app.js" defer></script>"#));
        assert!(PAGE_HTML.contains(r#"<link rel="stylesheet" href="/app.css">"#));
        // No inline script or style, which the CSP would refuse anyway.
        assert_eq!(PAGE_HTML.matches("<script").count(), 1);
        assert!(!PAGE_HTML.contains("<style"));
        assert!(!PAGE_HTML.contains(" style="));
        assert!(!PAGE_HTML.contains("http://") && !PAGE_HTML.contains("https://"));
    }

    #[test]
    fn the_script_never_writes_markup_from_strings() {
        for sink in [
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "eval(",
        ] {
            assert!(!APP_JS.contains(sink), "app.js uses {sink}");
        }
        assert!(APP_JS.contains("textContent"));
    }
}
