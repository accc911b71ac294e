//! Signing in with OAuth 2.0, Mattermost being the provider: the pieces of
//! the authorization-code flow with PKCE (S256) that talk to the server, the
//! sign-in as it is kept, and a [`TokenSource`] that renews it.
//!
//! Mattermost gives refresh tokens to confidential apps only (those with a
//! client secret), a new one at each refresh, so the newest is stored after
//! every refresh. A public app's sign-in cannot be renewed: once it has
//! expired, [`SignInSource`] answers [`Error::SignInExpired`] and no request
//! goes out with the expired token.
//!
//! Opening the browser and listening for the redirect is the binary's; this
//! module only builds the URL and exchanges what comes back.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use url::Url;

use crate::USER_AGENT;
use crate::keychain::TokenStore;
use crate::{ApiError, Client, ClientOptions, Error, Token, normalize_base_url};

/// `REFRESH_MARGIN` is how long before its expiry a token is renewed at
/// most (a tenth of its lifetime when that is shorter).
pub const REFRESH_MARGIN: Duration = Duration::from_secs(60);

/// `OAuthApp` is the app porter signs in as: its id, its secret for a
/// confidential app, and the redirect URI registered with it.
#[derive(Clone)]
pub struct OAuthApp {
    /// The app's client id.
    pub client_id: String,
    /// The client secret of a confidential app.
    pub client_secret: Option<Token>,
    /// The redirect URI, exactly as registered.
    pub redirect_uri: String,
}

impl std::fmt::Debug for OAuthApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthApp")
            .field("client_id", &self.client_id)
            .field("confidential", &self.client_secret.is_some())
            .field("redirect_uri", &self.redirect_uri)
            .finish()
    }
}

/// `Pkce` is one sign-in's proof key: the verifier kept, the challenge sent.
#[derive(Clone)]
pub struct Pkce {
    /// Sent with the code exchange.
    pub verifier: String,
    /// `base64url(sha256(verifier))`, sent with the authorize request.
    pub challenge: String,
}

impl Pkce {
    /// A fresh verifier (43 characters from 32 random bytes) and its S256
    /// challenge.
    pub fn new() -> Result<Pkce, Error> {
        let verifier = random_text()?;
        let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(Sha256::digest(verifier.as_bytes()));
        Ok(Pkce {
            verifier,
            challenge,
        })
    }
}

/// `random_text` is 32 random bytes as base64url: a state or a verifier.
pub fn random_text() -> Result<String, Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| Error::SignIn {
        host: String::new(),
        reason: format!("the system gave no random bytes ({e})"),
    })?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// `authorize_url` is where the person's browser goes: the server's
/// `/oauth/authorize` with the app, the redirect, the state and the PKCE
/// challenge.
pub fn authorize_url(
    base_url: &str,
    app: &OAuthApp,
    state: &str,
    pkce: &Pkce,
) -> Result<String, Error> {
    let mut url = endpoint(base_url, &["oauth", "authorize"])?;
    url.query_pairs_mut()
        .append_pair("response_type", "code")
        .append_pair("client_id", &app.client_id)
        .append_pair("redirect_uri", &app.redirect_uri)
        .append_pair("state", state)
        .append_pair("code_challenge", &pkce.challenge)
        .append_pair("code_challenge_method", "S256");
    Ok(url.to_string())
}

/// A URL under the server's base (not under `/api/v4`).
fn endpoint(base_url: &str, segments: &[&str]) -> Result<Url, Error> {
    let mut url = normalize_base_url(base_url)?;
    url.path_segments_mut()
        .map_err(|()| Error::BadUrl {
            url: base_url.to_owned(),
            reason: "it cannot have a path",
        })?
        .pop_if_empty()
        .extend(segments);
    Ok(url)
}

/// `SignIn` is an OAuth sign-in as kept in the keychain.
#[derive(Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SignIn {
    /// The app's client id.
    pub client_id: String,
    /// The app's secret, for a confidential app (needed to refresh).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The bearer token.
    pub access_token: String,
    /// The refresh token (confidential apps only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires, in ms since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at_ms: Option<u64>,
    /// How long the access token was given for, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifetime_ms: Option<u64>,
}

impl std::fmt::Debug for SignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignIn")
            .field("client_id", &self.client_id)
            .field("refreshable", &self.refresh_token.is_some())
            .field("expires_at_ms", &self.expires_at_ms)
            .finish_non_exhaustive()
    }
}

/// Milliseconds since the epoch now.
#[must_use]
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl SignIn {
    /// `from_stored` reads a sign-in kept with [`SignIn::to_stored`].
    #[must_use]
    pub fn from_stored(token: &Token) -> Option<SignIn> {
        serde_json::from_str(token.expose()).ok()
    }

    /// `to_stored` is the sign-in as one keychain secret.
    #[must_use]
    pub fn to_stored(&self) -> Token {
        Token::new(serde_json::to_string(self).unwrap_or_default())
    }

    /// The access token.
    #[must_use]
    pub fn token(&self) -> Token {
        Token::new(self.access_token.clone())
    }

    /// Whether the access token has expired at `now` (ms).
    #[must_use]
    pub fn expired_at(&self, now: u64) -> bool {
        self.expires_at_ms.is_some_and(|at| now >= at)
    }

    /// Whether the token should be renewed at `now`: within the margin of
    /// its expiry, and renewable.
    #[must_use]
    pub fn due_at(&self, now: u64) -> bool {
        let Some(at) = self.expires_at_ms else {
            return false;
        };
        let margin = self.lifetime_ms.map_or(
            u64::try_from(REFRESH_MARGIN.as_millis()).unwrap_or(u64::MAX),
            |life| (life / 10).min(u64::try_from(REFRESH_MARGIN.as_millis()).unwrap_or(u64::MAX)),
        );
        now.saturating_add(margin) >= at
    }
}

/// What `/oauth/access_token` answers.
#[derive(Deserialize)]
struct Grant {
    access_token: String,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    expires_in: Option<u64>,
}

/// `exchange_code` trades the code the redirect brought for a sign-in.
pub async fn exchange_code(
    base_url: &str,
    app: &OAuthApp,
    code: &str,
    pkce: &Pkce,
    options: &ClientOptions,
) -> Result<SignIn, Error> {
    let mut form = vec![
        ("grant_type", "authorization_code".to_owned()),
        ("client_id", app.client_id.clone()),
        ("code", code.to_owned()),
        ("redirect_uri", app.redirect_uri.clone()),
        ("code_verifier", pkce.verifier.clone()),
    ];
    if let Some(secret) = &app.client_secret {
        form.push(("client_secret", secret.expose().to_owned()));
    }
    let grant = token_request(base_url, &form, options).await?;
    Ok(signed_in(
        grant,
        &app.client_id,
        app.client_secret.as_ref().map(|s| s.expose().to_owned()),
    ))
}

/// `refresh` renews `sign_in` with its refresh token; the answer carries
/// the new refresh token, which replaces the old.
pub async fn refresh(
    base_url: &str,
    sign_in: &SignIn,
    options: &ClientOptions,
) -> Result<SignIn, Error> {
    let host = host_of(base_url);
    let Some(refresh_token) = &sign_in.refresh_token else {
        return Err(Error::SignInExpired { host });
    };
    let mut form = vec![
        ("grant_type", "refresh_token".to_owned()),
        ("client_id", sign_in.client_id.clone()),
        ("refresh_token", refresh_token.clone()),
    ];
    if let Some(secret) = &sign_in.client_secret {
        form.push(("client_secret", secret.clone()));
    }
    let grant = token_request(base_url, &form, options).await?;
    Ok(signed_in(
        grant,
        &sign_in.client_id,
        sign_in.client_secret.clone(),
    ))
}

fn signed_in(grant: Grant, client_id: &str, client_secret: Option<String>) -> SignIn {
    let lifetime_ms = grant.expires_in.map(|s| s.saturating_mul(1000));
    SignIn {
        client_id: client_id.to_owned(),
        client_secret,
        access_token: grant.access_token,
        refresh_token: grant.refresh_token,
        expires_at_ms: lifetime_ms.map(|life| now_ms().saturating_add(life)),
        lifetime_ms,
    }
}

fn host_of(base_url: &str) -> String {
    normalize_base_url(base_url)
        .ok()
        .and_then(|u| {
            u.host_str().map(|h| match u.port() {
                Some(port) => format!("{h}:{port}"),
                None => h.to_owned(),
            })
        })
        .unwrap_or_else(|| base_url.to_owned())
}

/// One form POST to `/oauth/access_token`, with porter's `User-Agent`.
async fn token_request(
    base_url: &str,
    form: &[(&str, String)],
    options: &ClientOptions,
) -> Result<Grant, Error> {
    let host = host_of(base_url);
    let url = endpoint(base_url, &["oauth", "access_token"])?;
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str())))
        .finish();
    // The client brings the TLS settings and timeouts; the request carries
    // no bearer token (the form authenticates).
    let client = Client::new(base_url, Token::new("signing-in"), options.clone())?;
    let response = client
        .http
        .post(url)
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(ACCEPT, "application/json")
        .header(reqwest::header::USER_AGENT, USER_AGENT)
        .body(body)
        .send()
        .await
        .map_err(|e| Error::SignIn {
            host: host.clone(),
            reason: format!("the server could not be reached ({})", e.without_url()),
        })?;
    let status = response.status();
    let bytes = response.bytes().await.map_err(|e| Error::SignIn {
        host: host.clone(),
        reason: format!("the answer was cut off ({})", e.without_url()),
    })?;
    if !status.is_success() {
        let api = ApiError::decode(status, &bytes);
        return Err(Error::SignIn {
            host,
            reason: format!("the server refused the token request: {}", api.message),
        });
    }
    serde_json::from_slice(&bytes).map_err(|e| Error::SignIn {
        host,
        reason: format!("the server's answer is not a token ({e})"),
    })
}

/// `Registration` is an app made by dynamic client registration.
#[derive(Debug, Clone, Deserialize)]
struct Registered {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
}

/// `registration_endpoint` is where the server registers clients
/// dynamically, when its OAuth metadata lists one.
pub async fn registration_endpoint(
    base_url: &str,
    options: &ClientOptions,
) -> Result<Option<String>, Error> {
    let url = endpoint(base_url, &[".well-known", "oauth-authorization-server"])?;
    let client = Client::new(base_url, Token::new("signing-in"), options.clone())?;
    let Ok(response) = client
        .http
        .get(url)
        .header(ACCEPT, "application/json")
        .send()
        .await
    else {
        return Ok(None);
    };
    if !response.status().is_success() {
        return Ok(None);
    }
    let meta: serde_json::Value = response.json().await.unwrap_or_default();
    Ok(meta
        .get("registration_endpoint")
        .and_then(|v| v.as_str())
        .map(str::to_owned))
}

/// `register` registers porter as a confidential client with exactly
/// `redirect_uri`, so it can refresh.
pub async fn register(
    base_url: &str,
    endpoint_url: &str,
    redirect_uri: &str,
    options: &ClientOptions,
) -> Result<OAuthApp, Error> {
    let host = host_of(base_url);
    let client = Client::new(base_url, Token::new("signing-in"), options.clone())?;
    let body = serde_json::json!({
        "client_name": "porter",
        "redirect_uris": [redirect_uri],
        "token_endpoint_auth_method": "client_secret_post",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
    });
    let response = client
        .http
        .post(endpoint_url)
        .json(&body)
        .send()
        .await
        .map_err(|e| Error::SignIn {
            host: host.clone(),
            reason: format!("registering porter failed ({})", e.without_url()),
        })?;
    let status = response.status();
    let bytes = response.bytes().await.unwrap_or_default();
    if !status.is_success() {
        let api = ApiError::decode(status, &bytes);
        return Err(Error::SignIn {
            host,
            reason: format!("the server refused to register porter: {}", api.message),
        });
    }
    let made: Registered = serde_json::from_slice(&bytes).map_err(|e| Error::SignIn {
        host,
        reason: format!("the registration answer is not a client ({e})"),
    })?;
    Ok(OAuthApp {
        client_id: made.client_id,
        client_secret: made.client_secret.map(Token::new),
        redirect_uri: redirect_uri.to_owned(),
    })
}

/// A boxed future, as [`TokenSource`] returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// `TokenSource` gives the client the token to send, for a sign-in that
/// expires and may be renewed.
pub trait TokenSource: Send + Sync {
    /// The token to send now, renewed first when it is due; an error when
    /// the sign-in has expired and cannot be renewed (then nothing is sent).
    fn token(&self) -> BoxFuture<'_, Result<Token, Error>>;
    /// The server refused `sent` (401): a renewed token to try once more,
    /// or `None` when there is nothing to try.
    fn refused<'a>(&'a self, sent: &'a Token) -> BoxFuture<'a, Result<Option<Token>, Error>>;
}

/// `SignInSource` is a kept OAuth sign-in: renewed before it expires (and
/// after a 401), each renewal stored at once, since Mattermost retires the
/// old refresh token.
pub struct SignInSource {
    base_url: String,
    key: String,
    store: Arc<dyn TokenStore>,
    options: ClientOptions,
    current: tokio::sync::Mutex<SignIn>,
}

impl std::fmt::Debug for SignInSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignInSource")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl SignInSource {
    /// A source for `sign_in`, kept in `store` under `key`.
    #[must_use]
    pub fn new(
        base_url: &str,
        sign_in: SignIn,
        store: Arc<dyn TokenStore>,
        key: &str,
        options: ClientOptions,
    ) -> SignInSource {
        SignInSource {
            base_url: base_url.to_owned(),
            key: key.to_owned(),
            store,
            options,
            current: tokio::sync::Mutex::new(sign_in),
        }
    }

    /// The sign-in as it is now.
    pub async fn sign_in(&self) -> SignIn {
        self.current.lock().await.clone()
    }

    /// Renews the sign-in held in `current` and stores the result.
    async fn renew(&self, current: &mut SignIn) -> Result<(), Error> {
        let host = host_of(&self.base_url);
        if current.refresh_token.is_none() {
            return Err(Error::SignInExpired { host });
        }
        let renewed = refresh(&self.base_url, current, &self.options)
            .await
            .map_err(|error| Error::SignInRenewal {
                host: host.clone(),
                reason: error.to_string(),
            })?;
        if let Err(error) = self.store.set(&self.key, &renewed.to_stored()) {
            tracing::warn!("the renewed sign-in could not be kept: {error}");
        }
        tracing::info!("renewed the OAuth sign-in to {host}");
        *current = renewed;
        Ok(())
    }
}

impl TokenSource for SignInSource {
    fn token(&self) -> BoxFuture<'_, Result<Token, Error>> {
        Box::pin(async move {
            let mut current = self.current.lock().await;
            let now = now_ms();
            if current.due_at(now) && current.refresh_token.is_some() {
                self.renew(&mut current).await?;
            } else if current.expired_at(now) {
                return Err(Error::SignInExpired {
                    host: host_of(&self.base_url),
                });
            }
            Ok(current.token())
        })
    }

    fn refused<'a>(&'a self, sent: &'a Token) -> BoxFuture<'a, Result<Option<Token>, Error>> {
        Box::pin(async move {
            let mut current = self.current.lock().await;
            if current.access_token != sent.expose() {
                // Renewed meanwhile by another request: try the new one.
                return Ok(Some(current.token()));
            }
            if current.refresh_token.is_none() {
                return Err(Error::SignInExpired {
                    host: host_of(&self.base_url),
                });
            }
            self.renew(&mut current).await?;
            Ok(Some(current.token()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_is_the_base64url_sha256_of_the_verifier() {
        // RFC 7636, appendix B.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(Sha256::digest(verifier.as_bytes()));
        assert_eq!(challenge, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
        let made = Pkce::new().expect("random bytes");
        assert_eq!(made.verifier.len(), 43);
        assert_ne!(made.verifier, Pkce::new().expect("random bytes").verifier);
    }

    #[test]
    fn a_token_is_due_a_tenth_of_its_life_before_expiry_at_most_a_minute() {
        let sign_in = |life_ms: u64| SignIn {
            client_id: "c".into(),
            client_secret: None,
            access_token: "a".into(),
            refresh_token: None,
            expires_at_ms: Some(1_000_000 + life_ms),
            lifetime_ms: Some(life_ms),
        };
        let short = sign_in(3000);
        assert!(!short.due_at(1_000_000 + 2699));
        assert!(short.due_at(1_000_000 + 2700));
        assert!(!short.expired_at(1_000_000 + 2999));
        assert!(short.expired_at(1_000_000 + 3000));
        let long = sign_in(3_600_000);
        assert!(!long.due_at(1_000_000 + 3_540_000 - 1));
        assert!(long.due_at(1_000_000 + 3_540_000));
    }

    #[test]
    fn the_authorize_url_carries_the_app_the_state_and_the_challenge() {
        let app = OAuthApp {
            client_id: "app1".into(),
            client_secret: None,
            redirect_uri: "http://127.0.0.1:8976/callback".into(),
        };
        let pkce = Pkce::new().expect("random bytes");
        let url = authorize_url("https://chat.example.com/mm/", &app, "st", &pkce).expect("url");
        let parsed = Url::parse(&url).expect("a URL");
        assert_eq!(parsed.path(), "/mm/oauth/authorize");
        let pairs: std::collections::HashMap<_, _> = parsed.query_pairs().into_owned().collect();
        assert_eq!(pairs["client_id"], "app1");
        assert_eq!(pairs["redirect_uri"], "http://127.0.0.1:8976/callback");
        assert_eq!(pairs["state"], "st");
        assert_eq!(pairs["code_challenge"], pkce.challenge);
        assert_eq!(pairs["code_challenge_method"], "S256");
        assert_eq!(pairs["response_type"], "code");
    }
}
