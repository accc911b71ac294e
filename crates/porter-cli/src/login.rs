//! `porter mattermost login` and `logout`: keep a Mattermost token for a
//! URL in the OS keychain, so `serve` and `doctor` need no `MM_TOKEN`.
//!
//! The token is pasted (read without echo from a terminal, as a plain line
//! from a pipe) or made by signing in with a username and password (and an
//! MFA code when the account has MFA). It is checked against the server
//! before it is stored, and never printed. `PORTER_KEYCHAIN_FILE` swaps the
//! keychain for a JSON file, for tests on machines with no Secret Service.

pub mod oauth;

use std::io::{BufRead as _, IsTerminal as _};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use porter_mattermost::keychain::{FileStore, OsKeychain, TokenStore};
use porter_mattermost::{
    Client, ClientOptions, Error as MmError, PasswordLogin, Token, login_with_password,
    normalize_base_url,
};

/// `KEYCHAIN_FILE_VAR` names the file that replaces the OS keychain, for
/// tests only: the file protects tokens no better than its permissions.
pub const KEYCHAIN_FILE_VAR: &str = "PORTER_KEYCHAIN_FILE";

/// The MFA error ids a server answers when a code is missing or wrong.
const MFA_ERRORS: &[&str] = &[
    "mfa.validate_token.authenticate.app_error",
    "api.user.check_user_mfa.bad_code.app_error",
];

#[derive(Debug, Args)]
pub struct LoginArgs {
    /// The Mattermost address (default: MM_URL).
    #[arg(long)]
    url: Option<String>,
    /// Sign in with this username (or e-mail) and a password instead of
    /// pasting a personal access token.
    #[arg(long, conflicts_with = "oauth")]
    username: Option<String>,
    /// Sign in through the browser, Mattermost being the OAuth 2.0
    /// provider: the app from MM_OAUTH_CLIENT_ID (+ MM_OAUTH_CLIENT_SECRET),
    /// the redirect on 127.0.0.1:MM_OAUTH_REDIRECT_PORT (default 8976).
    #[arg(long)]
    oauth: bool,
}

#[derive(Debug, Args)]
pub struct LogoutArgs {
    /// The Mattermost address (default: MM_URL).
    #[arg(long)]
    url: Option<String>,
}

/// The token store to use: the file `PORTER_KEYCHAIN_FILE` names, else
/// the OS keychain.
pub fn store() -> Arc<dyn TokenStore> {
    match std::env::var_os(KEYCHAIN_FILE_VAR).filter(|v| !v.is_empty()) {
        Some(path) => Arc::new(FileStore::new(path)),
        None => Arc::new(OsKeychain),
    }
}

/// The normalised URL a token is stored under, from `--url` or `MM_URL`.
fn url_of(given: Option<&str>) -> Result<String, String> {
    let raw = given
        .map(str::to_owned)
        .or_else(|| std::env::var("MM_URL").ok())
        .filter(|u| !u.trim().is_empty())
        .ok_or_else(|| {
            "pass --url with the address you open Mattermost at (or set MM_URL)".to_owned()
        })?;
    normalize_base_url(raw.trim())
        .map(|u| u.as_str().trim_end_matches('/').to_owned())
        .map_err(|e| e.to_string())
}

/// `Stored` is what `login` kept for a URL.
pub enum Stored {
    /// A personal access token or session token.
    Token(String),
    /// An OAuth sign-in, renewed as it expires.
    OAuth {
        /// The normalised URL.
        url: String,
        /// The sign-in.
        sign_in: porter_mattermost::oauth::SignIn,
        /// Where it is kept.
        store: Arc<dyn TokenStore>,
    },
}

/// What is kept for the `MM_URL` in the environment, when `MM_TOKEN` is
/// unset: what `serve` and `doctor` use then (an OAuth sign-in before a
/// token, though `login` keeps only the newest of the two). A keychain
/// that cannot be used is only logged; the missing `MM_TOKEN` is then the
/// error.
pub fn stored_token() -> Option<Stored> {
    if std::env::var("MM_TOKEN").is_ok_and(|t| !t.trim().is_empty()) {
        return None;
    }
    let url = url_of(None).ok()?;
    let store = store();
    match store.get(&oauth::key(&url)) {
        Ok(Some(kept)) => {
            if let Some(sign_in) = porter_mattermost::oauth::SignIn::from_stored(&kept) {
                return Some(Stored::OAuth {
                    url,
                    sign_in,
                    store,
                });
            }
        }
        Ok(None) => {}
        Err(error) => tracing::debug!("no stored sign-in for {url}: {error}"),
    }
    match store.get(&url) {
        Ok(found) => found.map(|t| Stored::Token(t.expose().to_owned())),
        Err(error) => {
            tracing::debug!("no stored token for {url}: {error}");
            None
        }
    }
}

/// Reads one secret: without echo from a terminal, else one line of
/// standard input. `None` at the end of input.
fn read_secret(prompt: &str) -> std::io::Result<Option<String>> {
    if std::io::stdin().is_terminal() {
        return rpassword::prompt_password(prompt).map(Some);
    }
    let mut line = String::new();
    let read = std::io::stdin().lock().read_line(&mut line)?;
    Ok((read > 0).then(|| line.trim_end_matches(['\r', '\n']).to_owned()))
}

/// Runs `porter mattermost login`.
pub async fn login(args: LoginArgs) -> ExitCode {
    let url = match url_of(args.url.as_deref()) {
        Ok(url) => url,
        Err(error) => {
            eprintln!("porter: {error}");
            return ExitCode::from(2);
        }
    };
    if args.oauth {
        let store = store();
        return match oauth::login(&url, store.as_ref()).await {
            Ok(message) => crate::output::finish(crate::output::print(&message), ExitCode::SUCCESS),
            Err((code, message)) => {
                eprintln!("porter: {message}");
                ExitCode::from(code)
            }
        };
    }
    let outcome = match &args.username {
        Some(username) => by_password(&url, username).await,
        None => by_token(&url).await,
    };
    let (token, username) = match outcome {
        Ok(found) => found,
        Err((code, message)) => {
            eprintln!("porter: {message}");
            return ExitCode::from(code);
        }
    };
    let store = store();
    match store.set(&url, &token) {
        Ok(()) => {
            // The newest sign-in is the one used: an OAuth one kept before goes.
            let _ = store.delete(&oauth::key(&url));
            crate::output::finish(
                crate::output::print(&format!(
                    "Signed in to {url} as @{username}; the token is kept in {}. Unset MM_TOKEN so porter uses it (MM_TOKEN wins when set).\n",
                    store.describe()
                )),
                ExitCode::SUCCESS,
            )
        }
        Err(error) => {
            eprintln!("porter: {error}");
            ExitCode::from(1)
        }
    }
}

/// A pasted personal access token, checked against the server.
async fn by_token(url: &str) -> Result<(Token, String), (u8, String)> {
    if std::io::stdin().is_terminal() {
        eprintln!(
            "Make a personal access token in Mattermost (Profile → Security → Personal Access Tokens) and paste it here."
        );
    }
    let token = read_secret("Token: ")
        .map_err(|e| (1, format!("cannot read the token: {e}")))?
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            (
                2,
                "no token was given; paste a personal access token".to_owned(),
            )
        })?;
    let token = Token::new(token);
    let client = Client::new(url, token.clone(), ClientOptions::default())
        .map_err(|e| (2, e.to_string()))?;
    match client.me().await {
        Ok(me) => Ok((token, me.username)),
        Err(error @ (MmError::Unauthorized { .. } | MmError::BadToken { .. })) => {
            Err((2, format!("{error}. Nothing was stored.")))
        }
        Err(error) => Err((1, format!("{error}. Nothing was stored."))),
    }
}

/// A username and password (+ MFA code), exchanged for a session token.
async fn by_password(url: &str, username: &str) -> Result<(Token, String), (u8, String)> {
    let password = read_secret("Password: ")
        .map_err(|e| (1, format!("cannot read the password: {e}")))?
        .filter(|p| !p.is_empty())
        .ok_or_else(|| (2, "no password was given".to_owned()))?;
    let mut login = PasswordLogin {
        login_id: username.trim().to_owned(),
        password,
        mfa_code: None,
    };
    loop {
        match login_with_password(url, &login, ClientOptions::default()).await {
            Ok((token, user)) => return Ok((token, user.username)),
            Err(error)
                if login.mfa_code.is_none()
                    && error
                        .api()
                        .is_some_and(|api| MFA_ERRORS.contains(&api.id.as_str())) =>
            {
                let code = read_secret("MFA code: ")
                    .map_err(|e| (1, format!("cannot read the MFA code: {e}")))?
                    .map(|c| c.trim().to_owned())
                    .filter(|c| !c.is_empty())
                    .ok_or_else(|| {
                        (
                            2,
                            "the account has MFA; give the code from your authenticator app"
                                .to_owned(),
                        )
                    })?;
                login.mfa_code = Some(code);
            }
            Err(error) => {
                let refused = error.api().map(|api| api.message.clone());
                let message = match refused {
                    Some(said) if error.api().is_some_and(|a| a.status_code == 401) => format!(
                        "{url} refused the sign-in as {username}: {said} Nothing was stored."
                    ),
                    _ => format!("{error}. Nothing was stored."),
                };
                let code = if error.api().is_some_and(|a| a.status_code == 401) {
                    2
                } else {
                    1
                };
                return Err((code, message));
            }
        }
    }
}

/// Runs `porter mattermost logout`.
pub fn logout(args: &LogoutArgs) -> ExitCode {
    let url = match url_of(args.url.as_deref()) {
        Ok(url) => url,
        Err(error) => {
            eprintln!("porter: {error}");
            return ExitCode::from(2);
        }
    };
    let store = store();
    let signed_in = store.delete(&oauth::key(&url)).unwrap_or(false);
    match store.delete(&url).map(|token| token || signed_in) {
        Ok(true) => crate::output::finish(
            crate::output::print(&format!(
                "Removed the token for {url} from {}.\n",
                store.describe()
            )),
            ExitCode::SUCCESS,
        ),
        Ok(false) => crate::output::finish(
            crate::output::print(&format!(
                "No token for {url} was kept in {}.\n",
                store.describe()
            )),
            ExitCode::SUCCESS,
        ),
        Err(error) => {
            eprintln!("porter: {error}");
            ExitCode::from(1)
        }
    }
}
