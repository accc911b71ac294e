//! The server's OAuth 2.0 provider state: the registered apps, the codes
//! not yet exchanged, refresh tokens, and when each OAuth access token
//! expires. `api::oauth` serves the routes that change it.

use std::collections::HashMap;

use crate::model::now_millis;
use crate::seed::Seed;

/// `OAuthApp` is a registered app.
#[derive(Debug, Clone)]
pub(crate) struct OAuthApp {
    pub id: String,
    pub name: String,
    /// Empty for a public client.
    pub secret: String,
    pub callback_urls: Vec<String>,
}

impl OAuthApp {
    /// Whether the app is a public client (no secret).
    pub(crate) fn is_public(&self) -> bool {
        self.secret.is_empty()
    }
}

/// An authorization code not yet exchanged.
#[derive(Debug, Clone)]
pub(crate) struct Code {
    pub client_id: String,
    pub user_id: String,
    pub redirect_uri: String,
    pub challenge: String,
    pub expires_at: i64,
}

/// A refresh token and what it renews.
#[derive(Debug, Clone)]
pub(crate) struct Refresh {
    pub client_id: String,
    pub user_id: String,
    pub access_token: String,
}

/// `OAuthState` is the apps, codes and token lifetimes of the server.
#[derive(Debug, Default)]
pub(crate) struct OAuthState {
    pub apps: Vec<OAuthApp>,
    /// Code → what it was issued for.
    pub codes: HashMap<String, Code>,
    /// Access token → when it expires (ms since the epoch).
    pub expiries: HashMap<String, i64>,
    /// Refresh token → what it renews.
    pub refreshes: HashMap<String, Refresh>,
}

impl OAuthState {
    /// The apps the seed registers.
    pub(crate) fn from_seed(seed: &Seed) -> OAuthState {
        OAuthState {
            apps: seed
                .oauth_apps
                .iter()
                .map(|app| OAuthApp {
                    id: app.client_id.clone(),
                    name: app.name.clone(),
                    secret: app.client_secret.clone().unwrap_or_default(),
                    callback_urls: app.callback_urls.clone(),
                })
                .collect(),
            ..OAuthState::default()
        }
    }

    /// Whether `token` is an OAuth access token past its expiry.
    pub(crate) fn expired(&self, token: &str) -> bool {
        self.expiries
            .get(token)
            .is_some_and(|at| *at <= now_millis())
    }

    /// The app registered as `client_id`.
    pub(crate) fn app(&self, client_id: &str) -> Option<&OAuthApp> {
        self.apps.iter().find(|a| a.id == client_id)
    }
}
