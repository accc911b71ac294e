//! Which request headers look like credentials.

/// `CREDENTIAL_HEADERS` are the header names that carry credentials outright.
const CREDENTIAL_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "cookie2",
    "set-cookie",
    "www-authenticate",
    "apikey",
    "api-key",
];

/// `CREDENTIAL_WORDS` mark a header as a credential when any of its
/// hyphen- or underscore-separated words is one of them: `X-Auth-Token`,
/// `Private-Token`, `X-Api-Key`, `Ocp-Apim-Subscription-Key`,
/// `X-Client-Secret`, `X-Amz-Security-Token`, `X-Session-Id`.
const CREDENTIAL_WORDS: &[&str] = &[
    "token",
    "key",
    "apikey",
    "secret",
    "password",
    "passwd",
    "auth",
    "credential",
    "credentials",
    "session",
    "signature",
    "cookie",
    "jwt",
    "bearer",
];

/// `is_credential_header` says whether a header name (any case) looks like it
/// carries a credential. The File download refuses such headers from the
/// model: a download writes the answer to disk and hands it on, so a
/// credential in it would authorise a fetch the operator never configured,
/// and could leak into records. It errs on the side of refusing.
#[must_use]
pub fn is_credential_header(name: &str) -> bool {
    let name = name.trim().to_ascii_lowercase();
    CREDENTIAL_HEADERS.contains(&name.as_str())
        || name
            .split(['-', '_'])
            .any(|word| CREDENTIAL_WORDS.contains(&word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_looking_headers_are_recognised_in_any_case() {
        for name in [
            "Authorization",
            "authorization",
            "Proxy-Authorization",
            "Cookie",
            "Set-Cookie",
            "X-Api-Key",
            "x-api-key",
            "Api-Key",
            "apikey",
            "X-Auth-Token",
            "X-Auth-User",
            "Private-Token",
            "X-Goog-Api-Key",
            "Ocp-Apim-Subscription-Key",
            "X-Client-Secret",
            "X-Amz-Security-Token",
            "X-Session-Id",
            "X_AUTH_TOKEN",
            " Authorization ",
        ] {
            assert!(is_credential_header(name), "{name} should be refused");
        }
    }

    #[test]
    fn ordinary_headers_are_not_taken_for_credentials() {
        for name in [
            "Accept",
            "Accept-Language",
            "User-Agent",
            "Range",
            "If-None-Match",
            "Keep-Alive",
            "Content-Type",
            "X-Request-Id",
            "Author",
            "Monkey",
        ] {
            assert!(!is_credential_header(name), "{name} should pass");
        }
    }
}
