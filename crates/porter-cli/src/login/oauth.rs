//! `porter mattermost login --oauth`: sign in through the person's browser,
//! Mattermost being the OAuth 2.0 provider.
//!
//! porter listens once on `127.0.0.1:<MM_OAUTH_REDIRECT_PORT>/callback`
//! (the redirect URI the administrator registered with the app; Mattermost
//! matches it exactly), opens the browser (`$BROWSER`, else the platform's
//! opener, started directly with the URL as its one argument) at the
//! server's `/oauth/authorize` with a PKCE challenge (S256) and a random
//! state, and prints the URL for a person to open by hand. The redirect must
//! bring the same state; its code is exchanged at `/oauth/access_token` and
//! the sign-in (access token, refresh token for a confidential app, expiry)
//! is kept in the OS keychain. Nothing is stored when anything fails.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use porter_mattermost::keychain::TokenStore;
use porter_mattermost::oauth::{
    self, OAuthApp, Pkce, SignIn, SignInSource, authorize_url, exchange_code,
};
use porter_mattermost::{Client, ClientOptions, Token};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

/// `REDIRECT_PORT` is the loopback port porter listens on for the
/// redirect unless `MM_OAUTH_REDIRECT_PORT` names another: the app's
/// callback URL is then `http://127.0.0.1:8976/callback`.
pub const REDIRECT_PORT: u16 = 8976;

/// `WAIT_SECONDS` is how long porter waits for the browser to come back
/// unless `MM_OAUTH_WAIT_SECONDS` says otherwise.
pub const WAIT_SECONDS: u64 = 300;

/// The most of a request from the browser that is read.
const REQUEST_BYTES: usize = 16 * 1024;

/// The keychain entry an OAuth sign-in for `url` is kept under (beside
/// the plain token's entry, which is `url` itself).
#[must_use]
pub fn key(url: &str) -> String {
    format!("{url}#oauth")
}

/// A failure: the exit code and the message.
type Failure = (u8, String);

fn var(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// The redirect port: `MM_OAUTH_REDIRECT_PORT` or [`REDIRECT_PORT`].
fn redirect_port() -> Result<u16, Failure> {
    match var("MM_OAUTH_REDIRECT_PORT") {
        None => Ok(REDIRECT_PORT),
        Some(text) => text.parse::<u16>().ok().filter(|p| *p != 0).ok_or_else(|| {
            (
                2,
                format!(
                    "MM_OAUTH_REDIRECT_PORT is {text:?}, not a port; set it to the port of the callback URL registered with the app (http://127.0.0.1:<port>/callback), or unset it for {REDIRECT_PORT}"
                ),
            )
        }),
    }
}

/// How long to wait for the browser: `MM_OAUTH_WAIT_SECONDS` or
/// [`WAIT_SECONDS`].
fn wait() -> Result<Duration, Failure> {
    match var("MM_OAUTH_WAIT_SECONDS") {
        None => Ok(Duration::from_secs(WAIT_SECONDS)),
        Some(text) => text
            .parse::<u64>()
            .ok()
            .filter(|s| *s > 0)
            .map(Duration::from_secs)
            .ok_or_else(|| {
                (
                    2,
                    format!(
                        "MM_OAUTH_WAIT_SECONDS is {text:?}, not a number of seconds; unset it for {WAIT_SECONDS}"
                    ),
                )
            }),
    }
}

/// Runs the sign-in and keeps it; the message to print on success.
pub async fn login(url: &str, store: &dyn TokenStore) -> Result<String, Failure> {
    let port = redirect_port()?;
    let wait = wait()?;
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");
    let listener = TcpListener::bind(("127.0.0.1", port)).await.map_err(|error| {
        let why = if error.kind() == std::io::ErrorKind::AddrInUse {
            "another program listens there".to_owned()
        } else {
            error.to_string()
        };
        (
            1,
            format!(
                "cannot listen on 127.0.0.1:{port} for the sign-in's redirect ({why}); stop that program, or set MM_OAUTH_REDIRECT_PORT to a free port and register http://127.0.0.1:<that port>/callback with the OAuth app. Nothing was stored."
            ),
        )
    })?;
    let options = ClientOptions::default();
    let app = app(url, &redirect_uri, &options).await?;
    let state = oauth::random_text().map_err(|e| (1, e.to_string()))?;
    let pkce = Pkce::new().map_err(|e| (1, e.to_string()))?;
    let address = authorize_url(url, &app, &state, &pkce).map_err(|e| (2, e.to_string()))?;
    eprintln!(
        "Sign in to Mattermost in your browser. If it does not open, open this address:\n{address}"
    );
    if let Err(error) = open_browser(&address) {
        eprintln!(
            "porter: the browser could not be opened ({error}); open the address above by hand."
        );
    }
    let sign_in = tokio::time::timeout(wait, answer(&listener, url, &app, &state, &pkce, &options))
        .await
        .map_err(|_| {
            (
                1,
                format!(
                    "no answer came back from the browser within {}; nothing was stored. If Mattermost showed an error about the redirect URI, the app's callback URL must be exactly {} (or set MM_OAUTH_REDIRECT_PORT to the port it names); then run porter mattermost login --oauth again.",
                    human_duration(u64::try_from(wait.as_millis()).unwrap_or(u64::MAX)),
                    app.redirect_uri
                ),
            )
        })??;
    let client = Client::new(url, sign_in.token(), options).map_err(|e| (1, e.to_string()))?;
    let me = client
        .me()
        .await
        .map_err(|e| (1, format!("{e}. Nothing was stored.")))?;
    store
        .set(&key(url), &sign_in.to_stored())
        .map_err(|e| (1, e.to_string()))?;
    // The newest sign-in is the one used: a pasted token kept before goes.
    let _ = store.delete(url);
    let renewal = if sign_in.refresh_token.is_some() {
        "porter renews it before it expires"
    } else {
        "the app is public, so Mattermost gives no refresh token: run porter mattermost login --oauth again then"
    };
    Ok(format!(
        "Signed in to {url} as @{} with OAuth; the sign-in is kept in {} and expires {} ({renewal}). Unset MM_TOKEN so porter uses it (MM_TOKEN wins when set).\n",
        me.username,
        store.describe(),
        expiry_text(&sign_in)
    ))
}

/// When a sign-in expires, in words.
#[must_use]
pub fn expiry_text(sign_in: &SignIn) -> String {
    match sign_in.expires_at_ms {
        None => "never (the server gave no expiry)".to_owned(),
        Some(at) => {
            let when = porter_mattermost_mcp::iso_utc(i64::try_from(at).unwrap_or(i64::MAX));
            let now = oauth::now_ms();
            if at <= now {
                format!("{when} (it has expired)")
            } else {
                format!("{when} (in {})", human_duration(at - now))
            }
        }
    }
}

fn human_duration(ms: u64) -> String {
    let secs = ms / 1000;
    match secs {
        0..=119 => format!("{secs} seconds"),
        120..=7199 => format!("{} minutes", secs / 60),
        7200..=172_799 => format!("{} hours", secs / 3600),
        _ => format!("{} days", secs / 86_400),
    }
}

/// The app to sign in as: `MM_OAUTH_CLIENT_ID` (+ `MM_OAUTH_CLIENT_SECRET`),
/// else one registered dynamically where the server offers it.
async fn app(url: &str, redirect_uri: &str, options: &ClientOptions) -> Result<OAuthApp, Failure> {
    if let Some(client_id) = var("MM_OAUTH_CLIENT_ID") {
        return Ok(OAuthApp {
            client_id,
            client_secret: var("MM_OAUTH_CLIENT_SECRET").map(Token::new),
            redirect_uri: redirect_uri.to_owned(),
        });
    }
    let endpoint = oauth::registration_endpoint(url, options)
        .await
        .map_err(|e| (1, e.to_string()))?;
    match endpoint {
        Some(endpoint) => oauth::register(url, &endpoint, redirect_uri, options)
            .await
            .map_err(|e| (1, format!("{e}. Nothing was stored."))),
        None => Err((
            2,
            format!(
                "no OAuth app to sign in with: set MM_OAUTH_CLIENT_ID (and MM_OAUTH_CLIENT_SECRET for a confidential app, which porter can renew) to an app an administrator registered in Mattermost (System Console → Integrations → OAuth 2.0 Applications, with the callback URL {redirect_uri}); {url} offers no dynamic client registration"
            ),
        )),
    }
}

/// Starts the browser at `address`: each command of `$BROWSER` (separated
/// by `:`, `%s` standing for the address, else the address added as the
/// last argument) until one starts, else the platform's opener. Never
/// through a shell.
fn open_browser(address: &str) -> Result<(), String> {
    let mut commands: Vec<Vec<String>> = Vec::new();
    if let Some(browser) = var("BROWSER") {
        for entry in browser.split(':').filter(|e| !e.trim().is_empty()) {
            let mut words: Vec<String> = entry.split_whitespace().map(str::to_owned).collect();
            if words.iter().any(|w| w.contains("%s")) {
                for word in &mut words {
                    *word = word.replace("%s", address);
                }
            } else {
                words.push(address.to_owned());
            }
            commands.push(words);
        }
    } else if cfg!(target_os = "macos") {
        commands.push(vec!["open".to_owned(), address.to_owned()]);
    } else if cfg!(windows) {
        commands.push(vec!["explorer.exe".to_owned(), address.to_owned()]);
    } else {
        commands.push(vec!["xdg-open".to_owned(), address.to_owned()]);
    }
    let mut last = String::from("no opener");
    for command in commands {
        let Some((program, args)) = command.split_first() else {
            continue;
        };
        match std::process::Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
        {
            Ok(mut child) => {
                // Reaped when it ends, without holding up the sign-in.
                std::thread::spawn(move || child.wait());
                return Ok(());
            }
            Err(error) => last = format!("{program}: {error}"),
        }
    }
    Err(last)
}

/// Waits for the redirect to `/callback`, answers the browser, and
/// exchanges the code.
async fn answer(
    listener: &TcpListener,
    url: &str,
    app: &OAuthApp,
    state: &str,
    pkce: &Pkce,
    options: &ClientOptions,
) -> Result<SignIn, Failure> {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            continue;
        };
        let Some(target) = read_target(&mut stream).await else {
            continue;
        };
        let Some(query) = target
            .strip_prefix("/callback")
            .filter(|rest| rest.is_empty() || rest.starts_with('?'))
            .map(|rest| rest.trim_start_matches('?').to_owned())
        else {
            respond(
                &mut stream,
                404,
                "Not found",
                "This address only takes the sign-in's redirect.",
            )
            .await;
            continue;
        };
        let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
        let get = |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        if get("state").as_deref() != Some(state) {
            respond(&mut stream, 400, "Sign-in refused", "The answer did not carry the state porter sent, so porter refused it. Nothing was stored; run porter mattermost login --oauth again.").await;
            return Err((
                1,
                "the browser came back with a state porter did not send (an old or someone else's sign-in), so it was refused; nothing was stored. Run porter mattermost login --oauth again.".to_owned(),
            ));
        }
        if let Some(error) = get("error") {
            let said = get("error_description").unwrap_or_default();
            let message = if error == "access_denied" {
                "the sign-in was declined in the browser (access_denied); nothing was stored. Run porter mattermost login --oauth again and choose Allow to sign in.".to_owned()
            } else {
                format!(
                    "Mattermost refused the sign-in ({error}{}{said}); nothing was stored.",
                    if said.is_empty() { "" } else { ": " }
                )
            };
            respond(&mut stream, 200, "Not signed in", &message).await;
            return Err((1, message));
        }
        let Some(code) = get("code").filter(|c| !c.is_empty()) else {
            respond(
                &mut stream,
                400,
                "Sign-in refused",
                "The answer carried no code. Nothing was stored.",
            )
            .await;
            return Err((1, "the browser came back without a code; nothing was stored. Run porter mattermost login --oauth again.".to_owned()));
        };
        return match exchange_code(url, app, &code, pkce, options).await {
            Ok(sign_in) => {
                respond(
                    &mut stream,
                    200,
                    "Signed in",
                    "porter is signed in to Mattermost. You can close this tab.",
                )
                .await;
                Ok(sign_in)
            }
            Err(error) => {
                let message = format!("{error}. Nothing was stored.");
                respond(&mut stream, 200, "Not signed in", &message).await;
                Err((1, message))
            }
        };
    }
}

/// The request target of a `GET` (path and query), or `None` for anything
/// else.
async fn read_target(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !buffer.windows(4).any(|w| w == b"\r\n\r\n") && buffer.len() < REQUEST_BYTES {
        let read = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut chunk))
            .await
            .ok()?
            .ok()?;
        if read == 0 {
            break;
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
    let head = String::from_utf8_lossy(&buffer);
    let line = head.lines().next()?;
    let mut parts = line.split(' ');
    (parts.next()? == "GET").then_some(())?;
    parts.next().map(str::to_owned)
}

/// Answers the browser with a small page.
async fn respond(stream: &mut tokio::net::TcpStream, status: u16, title: &str, text: &str) {
    let escape = |t: &str| {
        t.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let body = format!(
        "<!doctype html><meta charset=\"utf-8\"><title>porter: {}</title><h1>{}</h1><p id=\"message\">{}</p>",
        escape(title),
        escape(title),
        escape(text)
    );
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        _ => "Not Found",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(body.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// The kept OAuth sign-in for `url` as a token source for the client,
/// renewed now when it is due; an error (exit 2) when it has expired and
/// cannot be renewed.
pub async fn source(
    url: &str,
    sign_in: SignIn,
    store: Arc<dyn TokenStore>,
) -> Result<(Arc<SignInSource>, Token), String> {
    let source = Arc::new(SignInSource::new(
        url,
        sign_in,
        store,
        &key(url),
        ClientOptions::default(),
    ));
    let token = oauth::TokenSource::token(source.as_ref())
        .await
        .map_err(|e| e.to_string())?;
    Ok((source, token))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_said_in_the_unit_that_reads_best() {
        assert_eq!(human_duration(4_000), "4 seconds");
        assert_eq!(human_duration(600_000), "10 minutes");
        assert_eq!(human_duration(3 * 3_600_000), "3 hours");
        assert_eq!(human_duration(30 * 86_400_000), "30 days");
    }
}
