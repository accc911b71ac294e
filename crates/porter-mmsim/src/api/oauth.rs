//! Mattermost as an OAuth 2.0 provider, as the server's web routes
//! (`server/channels/web/oauth.go`) and its app store behave:
//!
//! - `GET /oauth/authorize` checks the app and its redirect URI (matched
//!   exactly; a wrong one is an error page, never a redirect), sends a
//!   visitor without a session to `/login?redirect_to=…`, and otherwise
//!   shows the consent page, whose Allow posts `POST /oauth/authorize`
//!   (JSON, the session cookie and `X-Requested-With`) and follows the
//!   `redirect` it answers: the redirect URI with `code` and the `state`
//!   echoed. Deny goes to the redirect URI with `error=access_denied`.
//! - `POST /oauth/access_token` (a form) exchanges a code once (it expires
//!   in ten minutes), checking the client secret of a confidential app, the
//!   redirect URI and the PKCE verifier (S256; public apps must use PKCE),
//!   and answers `access_token`, `token_type`, `expires_in`, `scope` and,
//!   for confidential apps only, a `refresh_token`. The `refresh_token`
//!   grant answers a new pair and retires the old one.
//! - Access tokens expire after `oauth_access_token_seconds` (the seed's
//!   config), after which the API answers 401.
//! - With `oauth_registration` on, `POST /api/v4/oauth/apps/register`
//!   registers a client (RFC 7591) and the authorization server metadata
//!   (`/.well-known/oauth-authorization-server`) lists it.
//!
//! `GET /login` and `POST /login` stand in for the web app's sign-in page.

use axum::Router;
use axum::extract::{Form, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use serde::Deserialize;
use serde_json::json;
use sha2::{Digest, Sha256};

use super::shared::{ApiResult, Body, Query, cookie_token, json_response, ok};
use crate::error::ApiError;
use crate::model::{Ids, escape_markup, now_millis};
use crate::sim::Sim;
use crate::state::oauth::{Code, OAuthApp, Refresh};

/// How long an authorization code can be exchanged (the server's
/// `AUTHCODE_EXPIRE_TIME`, ten minutes).
const CODE_MILLIS: i64 = 10 * 60 * 1000;

/// The routes outside `/api/v4`.
pub(crate) fn web_routes() -> Router<Sim> {
    Router::new()
        .route("/oauth/authorize", get(authorize_page).post(authorize))
        .route("/oauth/access_token", post(access_token))
        .route("/login", get(login_page).post(login_form))
        .route(
            "/.well-known/oauth-authorization-server",
            get(server_metadata),
        )
}

/// The routes under `/api/v4`.
pub(crate) fn api_routes() -> Router<Sim> {
    Router::new().route("/oauth/apps/register", post(register))
}

/// An error page (what the server's web app shows for a bad request).
fn error_page(status: StatusCode, message: &str) -> Response {
    (
        status,
        Html(format!(
            "<!doctype html><title>Error</title><h1>Error</h1><p id=\"error\">{}</p>",
            escape_markup(message)
        )),
    )
        .into_response()
}

/// `base` with `pairs` added to its query (form-encoded, after `?` or `&`).
fn with_query(mut base: String, pairs: &[(&str, &str)]) -> String {
    base.push(if base.contains('?') { '&' } else { '?' });
    base.push_str(
        &url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(pairs)
            .finish(),
    );
    base
}

/// The user whose session a browser carries in its `MMAUTHTOKEN` cookie.
fn cookie_user(sim: &Sim, headers: &HeaderMap) -> Option<String> {
    let token = cookie_token(headers)?;
    let state = sim.lock();
    state.user_for_token(&token).map(|u| u.id.clone())
}

/// What an authorize request asks.
#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct AuthorizeAsk {
    response_type: String,
    client_id: String,
    redirect_uri: String,
    state: String,
    scope: String,
    code_challenge: String,
    code_challenge_method: String,
}

impl AuthorizeAsk {
    fn from_query(query: &Query) -> AuthorizeAsk {
        let get = |k: &str| query.get(k).unwrap_or_default().to_owned();
        AuthorizeAsk {
            response_type: get("response_type"),
            client_id: get("client_id"),
            redirect_uri: get("redirect_uri"),
            state: get("state"),
            scope: get("scope"),
            code_challenge: get("code_challenge"),
            code_challenge_method: get("code_challenge_method"),
        }
    }

    /// The app, when the request is one the server would show a consent
    /// page for; otherwise the error page's message.
    fn check(&self, sim: &Sim) -> Result<OAuthApp, String> {
        if self.client_id.is_empty() || self.redirect_uri.is_empty() {
            return Err("invalid_request: client_id and redirect_uri are required".to_owned());
        }
        let state = sim.lock();
        let app = state
            .oauth
            .app(&self.client_id)
            .cloned()
            .ok_or_else(|| "invalid_request: the OAuth app does not exist".to_owned())?;
        if !app.callback_urls.iter().any(|u| u == &self.redirect_uri) {
            return Err(
                "invalid_request: the redirect URI does not match a callback URL of the app"
                    .to_owned(),
            );
        }
        if self.response_type != "code" {
            return Err("unsupported_response_type: only code is supported".to_owned());
        }
        if !self.code_challenge.is_empty() && self.code_challenge_method != "S256" {
            return Err("invalid_request: code_challenge_method must be S256".to_owned());
        }
        if app.is_public() && self.code_challenge.is_empty() {
            return Err("invalid_request: a public client must use PKCE".to_owned());
        }
        Ok(app)
    }
}

/// `GET /oauth/authorize`: sign in first, then the consent page.
async fn authorize_page(State(sim): State<Sim>, query: Query, headers: HeaderMap) -> Response {
    let ask = AuthorizeAsk::from_query(&query);
    let app = match ask.check(&sim) {
        Ok(app) => app,
        Err(message) => return error_page(StatusCode::BAD_REQUEST, &message),
    };
    if cookie_user(&sim, &headers).is_none() {
        let here = format!(
            "/oauth/authorize?{}",
            url::form_urlencoded::Serializer::new(String::new())
                .append_pair("response_type", &ask.response_type)
                .append_pair("client_id", &ask.client_id)
                .append_pair("redirect_uri", &ask.redirect_uri)
                .append_pair("state", &ask.state)
                .append_pair("scope", &ask.scope)
                .append_pair("code_challenge", &ask.code_challenge)
                .append_pair("code_challenge_method", &ask.code_challenge_method)
                .finish()
        );
        let to = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("redirect_to", &here)
            .finish();
        return Redirect::to(&format!("/login?{to}")).into_response();
    }
    let body = json!({
        "response_type": ask.response_type,
        "client_id": ask.client_id,
        "redirect_uri": ask.redirect_uri,
        "state": ask.state,
        "scope": ask.scope,
        "code_challenge": ask.code_challenge,
        "code_challenge_method": ask.code_challenge_method,
    });
    let denied = with_query(
        url::Url::parse(&ask.redirect_uri)
            .map_or_else(|_| ask.redirect_uri.clone(), |u| u.to_string()),
        &[("error", "access_denied"), ("state", &ask.state)],
    );
    Html(format!(
        r#"<!doctype html><title>Authorize {name}</title>
<h1>{name} would like to access your account</h1>
<button id="allow">Allow</button> <button id="deny">Deny</button>
<script>
const body = {body};
document.getElementById("allow").onclick = async () => {{
  const answer = await fetch("/oauth/authorize", {{method: "POST", credentials: "same-origin",
    headers: {{"Content-Type": "application/json", "X-Requested-With": "XMLHttpRequest"}}, body: JSON.stringify(body)}});
  const data = await answer.json();
  window.location.href = data.redirect;
}};
document.getElementById("deny").onclick = () => {{ window.location.href = {denied}; }};
</script>"#,
        name = escape_markup(&app.name),
        body = body,
        denied = serde_json::Value::String(denied),
    ))
    .into_response()
}

/// `POST /oauth/authorize`: the consent, from the signed-in person's
/// browser; answers `{"redirect": …}` with the code and the state.
async fn authorize(State(sim): State<Sim>, headers: HeaderMap, body: Body) -> ApiResult {
    let Some(user_id) = cookie_user(&sim, &headers) else {
        return Err(ApiError::unauthorized("no session"));
    };
    if headers
        .get("x-requested-with")
        .and_then(|v| v.to_str().ok())
        != Some("XMLHttpRequest")
    {
        return Err(ApiError::unauthorized(
            "a cookie session needs X-Requested-With",
        ));
    }
    let ask: AuthorizeAsk = body.json("authorize_request")?;
    ask.check(&sim).map_err(|message| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.oauth.allow_oauth.bad_request.app_error",
            message,
        )
    })?;
    let code = Ids::random_id();
    sim.lock().oauth.codes.insert(
        code.clone(),
        Code {
            client_id: ask.client_id.clone(),
            user_id,
            redirect_uri: ask.redirect_uri.clone(),
            challenge: ask.code_challenge.clone(),
            expires_at: now_millis() + CODE_MILLIS,
        },
    );
    let redirect = with_query(
        ask.redirect_uri.clone(),
        &[("code", &code), ("state", &ask.state)],
    );
    ok(&json!({ "redirect": redirect }))
}

/// The form `POST /oauth/access_token` takes.
#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct TokenForm {
    grant_type: String,
    client_id: String,
    client_secret: String,
    code: String,
    redirect_uri: String,
    code_verifier: String,
    refresh_token: String,
}

fn bad(id: &'static str, message: &str) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, id, message)
}

/// `POST /oauth/access_token`: the code or refresh grant.
async fn access_token(State(sim): State<Sim>, Form(form): Form<TokenForm>) -> ApiResult {
    let mut state = sim.lock();
    let app = state.oauth.app(&form.client_id).cloned().ok_or_else(|| {
        bad(
            "api.oauth.get_access_token.credentials.app_error",
            "invalid_client: Bad client credentials.",
        )
    })?;
    if !app.is_public() && app.secret != form.client_secret {
        return Err(bad(
            "api.oauth.get_access_token.credentials.app_error",
            "invalid_client: Bad client credentials.",
        ));
    }
    let (user_id, old_access) = match form.grant_type.as_str() {
        "authorization_code" => {
            if form.code.is_empty() {
                return Err(bad(
                    "api.oauth.get_access_token.missing_code.app_error",
                    "invalid_request: Missing code.",
                ));
            }
            // A code is used once, whatever the outcome.
            let code = state.oauth.codes.remove(&form.code).ok_or_else(|| {
                bad(
                    "api.oauth.get_access_token.expired_code.app_error",
                    "invalid_grant: Invalid or expired authorization code.",
                )
            })?;
            if code.client_id != app.id || code.expires_at <= now_millis() {
                return Err(bad(
                    "api.oauth.get_access_token.expired_code.app_error",
                    "invalid_grant: Invalid or expired authorization code.",
                ));
            }
            if code.redirect_uri != form.redirect_uri {
                return Err(bad(
                    "api.oauth.get_access_token.redirect_uri.app_error",
                    "invalid_request: Supplied redirect_uri does not match authorization code redirect_uri.",
                ));
            }
            if !code.challenge.is_empty() {
                if form.code_verifier.is_empty() {
                    return Err(bad(
                        "api.oauth.get_access_token.pkce_verifier_required.app_error",
                        "invalid_request: code_verifier is required.",
                    ));
                }
                let made = base64::engine::general_purpose::URL_SAFE_NO_PAD
                    .encode(Sha256::digest(form.code_verifier.as_bytes()));
                if made != code.challenge {
                    return Err(bad(
                        "api.oauth.get_access_token.pkce_verification_failed.app_error",
                        "invalid_grant: PKCE verification failed.",
                    ));
                }
            }
            (code.user_id, None)
        }
        "refresh_token" => {
            if app.is_public() {
                return Err(bad(
                    "api.oauth.get_access_token.public_client_refresh.app_error",
                    "invalid_grant: Public clients cannot use refresh tokens.",
                ));
            }
            let refresh = state
                .oauth
                .refreshes
                .remove(&form.refresh_token)
                .filter(|r| r.client_id == app.id)
                .ok_or_else(|| {
                    bad(
                        "api.oauth.get_access_token.refresh_token.app_error",
                        "invalid_grant: Invalid refresh token.",
                    )
                })?;
            (refresh.user_id, Some(refresh.access_token))
        }
        _ => {
            return Err(bad(
                "api.oauth.get_access_token.bad_grant.app_error",
                "invalid_request: Bad grant_type.",
            ));
        }
    };
    if let Some(old) = old_access {
        state.tokens.remove(&old);
        state.oauth.expiries.remove(&old);
    }
    let lifetime = state.config.oauth_access_token_seconds;
    let access = Ids::random_id();
    state.tokens.insert(access.clone(), user_id.clone());
    let millis = i64::try_from(lifetime.saturating_mul(1000)).unwrap_or(i64::MAX);
    state
        .oauth
        .expiries
        .insert(access.clone(), now_millis().saturating_add(millis));
    let mut answer = json!({
        "access_token": access,
        "token_type": "bearer",
        "expires_in": lifetime,
        "scope": "user",
    });
    if !app.is_public() {
        let refresh = Ids::random_id();
        state.oauth.refreshes.insert(
            refresh.clone(),
            Refresh {
                client_id: app.id.clone(),
                user_id,
                access_token: access,
            },
        );
        answer["refresh_token"] = json!(refresh);
    }
    ok(&answer)
}

/// `GET /login`: the sign-in form.
async fn login_page(query: Query) -> Response {
    let to = query.get("redirect_to").unwrap_or("/").to_owned();
    Html(format!(
        r#"<!doctype html><title>Log in</title><h1>Log in to Mattermost</h1>
<form method="post" action="/login">
<input type="hidden" name="redirect_to" value="{to}">
<label>Username <input name="login_id" id="login_id"></label>
<label>Password <input type="password" name="password" id="password"></label>
<button type="submit" id="login">Log in</button></form>"#,
        to = escape_markup(&to)
    ))
    .into_response()
}

#[derive(Debug, Deserialize)]
struct LoginForm {
    login_id: String,
    password: String,
    #[serde(default)]
    redirect_to: String,
}

/// `POST /login`: checks the password, sets the session cookie and goes on.
async fn login_form(State(sim): State<Sim>, Form(form): Form<LoginForm>) -> Response {
    let mut state = sim.lock();
    let wanted = form.login_id.trim().to_ascii_lowercase();
    let Some(user) = state
        .users
        .iter()
        .find(|u| u.username == wanted || u.email == wanted)
        .filter(|u| !u.is_deleted())
        .cloned()
    else {
        return error_page(
            StatusCode::UNAUTHORIZED,
            "Enter a valid username and password.",
        );
    };
    if state
        .own
        .logins
        .get(&user.id)
        .is_none_or(|login| login.password != form.password)
    {
        return error_page(
            StatusCode::UNAUTHORIZED,
            "Enter a valid username and password.",
        );
    }
    let token = Ids::random_id();
    state.tokens.insert(token.clone(), user.id.clone());
    let to = if form.redirect_to.starts_with('/') && !form.redirect_to.starts_with("//") {
        form.redirect_to
    } else {
        "/".to_owned()
    };
    let mut response = Redirect::to(&to).into_response();
    if let Ok(cookie) = HeaderValue::from_str(&format!(
        "MMAUTHTOKEN={token}; Path=/; HttpOnly; SameSite=Lax"
    )) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

/// `GET /.well-known/oauth-authorization-server` (RFC 8414).
async fn server_metadata(State(sim): State<Sim>, headers: HeaderMap) -> ApiResult {
    let state = sim.lock();
    let base = if state.site_url.is_empty() {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("localhost");
        format!("http://{host}")
    } else {
        state.site_url.clone()
    };
    let mut meta = json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/oauth/authorize"),
        "token_endpoint": format!("{base}/oauth/access_token"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_post", "none"],
    });
    if state.config.oauth_registration {
        meta["registration_endpoint"] = json!(format!("{base}/api/v4/oauth/apps/register"));
    }
    ok(&meta)
}

/// What dynamic client registration takes.
#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct Registration {
    client_name: String,
    redirect_uris: Vec<String>,
    token_endpoint_auth_method: String,
}

/// `POST /api/v4/oauth/apps/register` (RFC 7591), when enabled.
async fn register(State(sim): State<Sim>, body: Body) -> ApiResult {
    let mut state = sim.lock();
    if !state.config.oauth_registration {
        return Err(ApiError::new(
            StatusCode::NOT_IMPLEMENTED,
            "api.oauth.register_oauth_app.not_enabled.app_error",
            "Dynamic client registration is not enabled.",
        ));
    }
    let asked: Registration = body.json("client_metadata")?;
    if asked.redirect_uris.is_empty() {
        return Err(bad(
            "api.oauth.register_oauth_app.redirect_uris.app_error",
            "invalid_redirect_uri: redirect_uris are required.",
        ));
    }
    let public = asked.token_endpoint_auth_method == "none";
    let app = OAuthApp {
        id: Ids::random_id(),
        name: if asked.client_name.is_empty() {
            "Registered app".to_owned()
        } else {
            asked.client_name.clone()
        },
        secret: if public {
            String::new()
        } else {
            Ids::random_id()
        },
        callback_urls: asked.redirect_uris.clone(),
    };
    let mut answer = json!({
        "client_id": app.id,
        "client_name": app.name,
        "redirect_uris": app.callback_urls,
        "token_endpoint_auth_method": if public { "none" } else { "client_secret_post" },
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
    });
    if !public {
        answer["client_secret"] = json!(app.secret);
    }
    state.oauth.apps.push(app);
    json_response(StatusCode::CREATED, &answer)
}

/// `POST /__sim/oauth/expire`: every OAuth access token expires now, for
/// tests that check what happens after.
pub(crate) async fn expire_all(State(sim): State<Sim>) -> ApiResult {
    let mut state = sim.lock();
    let now = now_millis();
    for at in state.oauth.expiries.values_mut() {
        *at = now;
    }
    super::shared::status_ok()
}
