//! GitHub App installation tokens for pushing: the operator configures an
//! app (its id, the installation, its RSA private key) instead of a
//! long-lived token, and porter mints a short-lived, write-scoped token
//! when a push needs one.
//!
//! Minting follows GitHub's documented flow: a JWT signed RS256 with the
//! app's key (`iat` a minute in the past against clock drift, `exp` nine
//! minutes ahead, `iss` the app id) is sent as a bearer token to
//! `POST {base_url}/app/installations/{id}/access_tokens` asking for
//! `contents: write`; the answer's token is cached until five minutes
//! before its `expires_at`, so a burst of pushes mints once. The request
//! goes through the same [`porter_net::Net`] as git's own (host policy,
//! private-address guard, no redirects).
//!
//! Only the transport's push requests ask for a token
//! ([`crate::Access::credential_for`] skips an app for fetches): no read
//! path mints one or sends it. Neither the key nor the JWT appears in any
//! `Debug` or error.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use porter_net::reqwest::Method;
use porter_net::reqwest::header::{
    ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue, USER_AGENT,
};
use porter_net::{Net, RedirectRule, RequestOptions, display_url};
use url::Url;

use porter_net::Secret;

/// `DEFAULT_BASE_URL` is github.com's API; GitHub Enterprise Server uses
/// `https://<host>/api/v3`.
pub const DEFAULT_BASE_URL: &str = "https://api.github.com";

/// `JWT_BACKDATE_SECS` is how far in the past the JWT's `iat` is set, so a
/// server clock a little ahead of ours still accepts it (GitHub's advice).
const JWT_BACKDATE_SECS: u64 = 60;

/// `JWT_LIFETIME_SECS` is how long the JWT is valid from now; GitHub takes
/// at most ten minutes.
const JWT_LIFETIME_SECS: u64 = 9 * 60;

/// `REFRESH_MARGIN` is how long before its expiry a minted token stops
/// being used, so a push never starts with a token about to lapse.
pub const REFRESH_MARGIN: Duration = Duration::from_secs(5 * 60);

/// `MAX_ANSWER_BYTES` is the most of the API's answer that is read.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// `MINT_DEADLINE` caps one mint request, answer included.
const MINT_DEADLINE: Duration = Duration::from_secs(30);

/// `API_VERSION` is the REST API version the request is written against.
const API_VERSION: &str = "2022-11-28";

/// `AppKeyError` is why a GitHub App credential could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum AppKeyError {
    /// The key file could not be read.
    #[error("the GitHub App key {path} cannot be read: {source}")]
    Read {
        /// The file named by `private_key_file`.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The file holds no RSA private key that signs.
    #[error(
        "the GitHub App key is not a usable RSA private key in PEM form ({0}); give the .pem file GitHub generated for the app"
    )]
    NotRsa(String),
    /// The API base URL is not an https URL.
    #[error("the GitHub App base_url {0:?} is not an https URL (default {DEFAULT_BASE_URL})")]
    BaseUrl(String),
}

/// `MintError` is why no installation token came back; its text goes to
/// the operator log only (it never holds the JWT or a token).
#[derive(Debug, thiserror::Error)]
pub(crate) enum MintError {
    /// The JWT could not be signed.
    #[error("the app's JWT could not be made: {0}")]
    Jwt(String),
    /// The request did not get an answer.
    #[error("the token request failed: {0}")]
    Net(String),
    /// The API said no.
    #[error("{url} answered {status}: {body}")]
    Status {
        /// Where the request went, as displayed.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The start of the API's answer.
        body: String,
    },
    /// The answer was not `{token, expires_at}`.
    #[error("the token answer could not be read: {0}")]
    Answer(String),
}

/// `GithubApp` mints installation tokens for one app installation and
/// caches the current one. Clones share the key and the cache.
#[derive(Clone)]
pub struct GithubApp {
    inner: Arc<Inner>,
}

struct Inner {
    app_id: u64,
    installation_id: u64,
    base_url: Url,
    key: ring::signature::RsaKeyPair,
    cache: tokio::sync::Mutex<Option<Minted>>,
}

struct Minted {
    token: Secret,
    fresh_until: SystemTime,
}

#[derive(serde::Serialize)]
struct Claims {
    iat: u64,
    exp: u64,
    iss: u64,
}

#[derive(serde::Deserialize)]
struct Answer {
    token: String,
    expires_at: String,
}

impl GithubApp {
    /// `new` sets up app `app_id`'s installation `installation_id` with its
    /// RSA private key (`private_key_pem`, PKCS#1 or PKCS#8 PEM) against
    /// `base_url` (default [`DEFAULT_BASE_URL`]). The key signs a JWT here
    /// once, so a key that cannot sign is refused at start-up rather than
    /// at the first push.
    pub fn new(
        app_id: u64,
        installation_id: u64,
        private_key_pem: &[u8],
        base_url: Option<&str>,
    ) -> Result<GithubApp, AppKeyError> {
        let text = base_url.unwrap_or(DEFAULT_BASE_URL);
        let base_url = Url::parse(text)
            .ok()
            .filter(|u| u.scheme() == "https" && u.host_str().is_some())
            .ok_or_else(|| AppKeyError::BaseUrl(text.to_owned()))?;
        let key = rsa_key(private_key_pem).map_err(AppKeyError::NotRsa)?;
        let app = GithubApp {
            inner: Arc::new(Inner {
                app_id,
                installation_id,
                base_url,
                key,
                cache: tokio::sync::Mutex::new(None),
            }),
        };
        app.jwt(SystemTime::now())
            .map_err(|e| AppKeyError::NotRsa(e.to_string()))?;
        Ok(app)
    }

    /// `load` is [`GithubApp::new`] with the key read from `key_file`.
    pub fn load(
        app_id: u64,
        installation_id: u64,
        key_file: &Path,
        base_url: Option<&str>,
    ) -> Result<GithubApp, AppKeyError> {
        let pem = std::fs::read(key_file).map_err(|source| AppKeyError::Read {
            path: key_file.display().to_string(),
            source,
        })?;
        GithubApp::new(app_id, installation_id, &pem, base_url)
    }

    /// `api_host` is the host the tokens are minted at, which the client's
    /// policy must admit.
    #[must_use]
    pub fn api_host(&self) -> Option<&str> {
        self.inner.base_url.host_str()
    }

    fn jwt(&self, now: SystemTime) -> Result<String, MintError> {
        let seconds = now
            .duration_since(UNIX_EPOCH)
            .map_err(|_| MintError::Jwt("the clock is before 1970".to_owned()))?
            .as_secs();
        let claims = Claims {
            iat: seconds.saturating_sub(JWT_BACKDATE_SECS),
            exp: seconds + JWT_LIFETIME_SECS,
            iss: self.inner.app_id,
        };
        let claims = serde_json::to_vec(&claims).map_err(|e| MintError::Jwt(e.to_string()))?;
        let mut jwt = URL_SAFE_NO_PAD.encode(br#"{"alg":"RS256","typ":"JWT"}"#);
        jwt.push('.');
        URL_SAFE_NO_PAD.encode_string(claims, &mut jwt);
        let mut signature = vec![0; self.inner.key.public().modulus_len()];
        self.inner
            .key
            .sign(
                &ring::signature::RSA_PKCS1_SHA256,
                &ring::rand::SystemRandom::new(),
                jwt.as_bytes(),
                &mut signature,
            )
            .map_err(|_| MintError::Jwt("the RSA signature failed".to_owned()))?;
        jwt.push('.');
        URL_SAFE_NO_PAD.encode_string(signature, &mut jwt);
        Ok(jwt)
    }

    /// `token` is an installation token good for at least
    /// [`REFRESH_MARGIN`]: the cached one, or a new one minted through
    /// `net`. Concurrent callers wait for one mint.
    pub(crate) async fn token(&self, net: &Net) -> Result<Secret, MintError> {
        let mut cache = self.inner.cache.lock().await;
        let now = SystemTime::now();
        if let Some(minted) = cache.as_ref()
            && now < minted.fresh_until
        {
            return Ok(minted.token.clone());
        }
        let minted = self.mint(net, now).await?;
        let token = minted.token.clone();
        *cache = Some(minted);
        Ok(token)
    }

    async fn mint(&self, net: &Net, now: SystemTime) -> Result<Minted, MintError> {
        let jwt = self.jwt(now)?;
        let url = Url::parse(&format!(
            "{}/app/installations/{}/access_tokens",
            self.inner.base_url.as_str().trim_end_matches('/'),
            self.inner.installation_id
        ))
        .map_err(|e| MintError::Net(e.to_string()))?;
        let mut headers = HeaderMap::new();
        headers.insert(
            ACCEPT,
            HeaderValue::from_static("application/vnd.github+json"),
        );
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(USER_AGENT, HeaderValue::from_static("porter-git"));
        headers.insert(
            "x-github-api-version",
            HeaderValue::from_static(API_VERSION),
        );
        let mut bearer = HeaderValue::from_str(&format!("Bearer {jwt}"))
            .map_err(|_| MintError::Jwt("the JWT is not a header value".to_owned()))?;
        bearer.set_sensitive(true);
        headers.insert(AUTHORIZATION, bearer);
        let options = RequestOptions {
            headers,
            body: Some(r#"{"permissions":{"contents":"write"}}"#.into()),
            redirect: RedirectRule::None,
            deadline: Some(MINT_DEADLINE),
        };
        let shown = display_url(&url);
        let mut response = net
            .request(Method::POST, &url, options)
            .await
            .map_err(|e| MintError::Net(e.to_string()))?;
        let mut body = Vec::new();
        while body.len() < MAX_ANSWER_BYTES {
            match response.chunk().await {
                Ok(Some(bytes)) => body.extend_from_slice(&bytes),
                Ok(None) => break,
                Err(error) => return Err(MintError::Net(format!("{shown}: {error}"))),
            }
        }
        let status = response.status();
        if !status.is_success() {
            let text = String::from_utf8_lossy(&body);
            return Err(MintError::Status {
                url: shown,
                status: status.as_u16(),
                body: text.chars().take(200).collect(),
            });
        }
        let answer: Answer =
            serde_json::from_slice(&body).map_err(|e| MintError::Answer(e.to_string()))?;
        let expires: jiff::Timestamp = answer
            .expires_at
            .parse()
            .map_err(|e| MintError::Answer(format!("expires_at: {e}")))?;
        let expires = SystemTime::try_from(expires)
            .map_err(|e| MintError::Answer(format!("expires_at: {e}")))?;
        let fresh_until = expires.checked_sub(REFRESH_MARGIN).unwrap_or(UNIX_EPOCH);
        tracing::info!(
            target: crate::AUDIT_TARGET,
            app_id = self.inner.app_id,
            installation_id = self.inner.installation_id,
            expires_at = %answer.expires_at,
            "minted a GitHub App installation token"
        );
        Ok(Minted {
            token: Secret::new(answer.token),
            fresh_until,
        })
    }
}

/// `rsa_key` reads an RSA private key from PEM: PKCS#1 (`RSA PRIVATE
/// KEY`, the form GitHub hands out) or PKCS#8 (`PRIVATE KEY`, what `openssl
/// pkcs8 -topk8 -nocrypt` writes). The error says what was found instead.
fn rsa_key(pem: &[u8]) -> Result<ring::signature::RsaKeyPair, String> {
    let text = std::str::from_utf8(pem).map_err(|_| "the file is not text".to_owned())?;
    let (label, der) = pem_block(text)?;
    let key = match label {
        "RSA PRIVATE KEY" => ring::signature::RsaKeyPair::from_der(&der),
        "PRIVATE KEY" => ring::signature::RsaKeyPair::from_pkcs8(&der),
        other => return Err(format!("it holds a {other}, not an RSA PRIVATE KEY")),
    };
    key.map_err(|e| format!("its {label} was rejected: {e}"))
}

/// `pem_block` is the label and the decoded body of the first PEM block in
/// `text` (`-----BEGIN label-----`, base64 lines, `-----END label-----`).
fn pem_block(text: &str) -> Result<(&str, Vec<u8>), String> {
    let begin = text
        .find("-----BEGIN ")
        .ok_or_else(|| "no -----BEGIN line was found".to_owned())?;
    let rest = &text[begin + "-----BEGIN ".len()..];
    // A label is a few words on the BEGIN line; anything else would carry
    // the file's text (the key itself, in a damaged file) into the error.
    let label = rest
        .find("-----")
        .map(|end| &rest[..end])
        .filter(|label| {
            label.len() <= 40 && label.bytes().all(|b| b.is_ascii_uppercase() || b == b' ')
        })
        .ok_or_else(|| "its -----BEGIN line is not closed by a label".to_owned())?;
    let label_end = label.len();
    let body = &rest[label_end + "-----".len()..];
    let end = body
        .find(&format!("-----END {label}-----"))
        .ok_or_else(|| format!("its {label} has no -----END line"))?;
    let base64: String = body[..end]
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    let der = STANDARD
        .decode(base64)
        .map_err(|e| format!("its {label} is not valid base64: {e}"))?;
    Ok((label, der))
}

impl std::fmt::Debug for GithubApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GithubApp")
            .field("app_id", &self.inner.app_id)
            .field("installation_id", &self.inner.installation_id)
            .field("base_url", &self.inner.base_url.as_str())
            .finish_non_exhaustive()
    }
}

/// Two apps are equal when they are the same resolver (clones of one
/// another, sharing key and cache): comparing keys would mean keeping
/// their bytes around.
impl PartialEq for GithubApp {
    fn eq(&self, other: &GithubApp) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for GithubApp {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_app_is_refused_at_set_up_for_a_plain_http_api_or_a_key_that_is_not_rsa() {
        for base in ["http://api.github.com", "not a url", "file:///etc"] {
            let refused = GithubApp::new(1, 2, b"irrelevant", Some(base));
            assert!(
                matches!(&refused, Err(AppKeyError::BaseUrl(b)) if b == base),
                "{base}: {refused:?}"
            );
        }
        let refused = GithubApp::new(1, 2, b"-----BEGIN OPENSSH PRIVATE KEY-----\n", None);
        assert!(
            matches!(refused, Err(AppKeyError::NotRsa(_))),
            "{refused:?}"
        );
        // A damaged file whose BEGIN line runs into the key: the error names
        // no part of it.
        let damaged = GithubApp::new(
            1,
            2,
            b"-----BEGIN RSA PRIVATE KEY\nMIIEsecretkeymaterial\n-----END RSA PRIVATE KEY-----\n",
            None,
        )
        .expect_err("a damaged PEM is refused");
        assert!(!damaged.to_string().contains("secret"), "{damaged}");
        let missing = GithubApp::load(1, 2, Path::new("/nonexistent/app.pem"), None);
        assert!(
            missing
                .expect_err("no file")
                .to_string()
                .contains("/nonexistent/app.pem")
        );
    }
}
