//! URL hygiene: refusing URLs the model mangled, showing URLs without their
//! secrets, and masking those secrets wherever they turn up later.

use std::sync::{Arc, Mutex, PoisonError};

use url::Url;

use crate::error::{NetError, Refused};

/// `MIN_SECRET_CHARS` is the shortest query value (or password) the
/// [`Redactor`] masks: shorter ones (`page=2`, `lang=en`) are not secrets and
/// masking them would garble every text they happen to occur in.
pub const MIN_SECRET_CHARS: usize = 4;

/// `MASK` replaces a secret in redacted text and a query in display URLs.
pub const MASK: &str = "…";

/// `check_url` reads a URL given as text (by the model, usually) and refuses
/// it when it holds a character a URL never holds unencoded — `"`, a space,
/// `\`, a backtick or a control character — naming the character and its
/// position but never repeating the URL, which may carry a secret. Such a
/// character usually means the model glued a quote or a sentence onto the
/// URL; guessing what was meant could fetch the wrong thing. Only absolute
/// http and https URLs with a host pass.
pub fn check_url(text: &str) -> Result<Url, NetError> {
    if let Some((position, character)) = text
        .chars()
        .enumerate()
        .find(|&(_, c)| matches!(c, '"' | ' ' | '\\' | '`') || c.is_control())
    {
        return Err(NetError::BadCharacter {
            character,
            position,
        });
    }
    let url = Url::parse(text).map_err(|reason| NetError::Unparsable { reason })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Refused::Scheme {
            scheme: url.scheme().to_owned(),
        }
        .into());
    }
    if url.host().is_none() {
        return Err(Refused::NoHost.into());
    }
    Ok(url)
}

/// `display_url` is the form of a URL that may be shown anywhere (results,
/// errors, events, logs, records): no user name or password, no fragment,
/// and a query shown only as `?…`, because pre-signed URLs and API keys live
/// in queries.
#[must_use]
pub fn display_url(url: &Url) -> String {
    let mut shown = format!("{}://", url.scheme());
    if let Some(host) = url.host_str() {
        shown.push_str(host);
    }
    if let Some(port) = url.port() {
        shown.push(':');
        shown.push_str(&port.to_string());
    }
    shown.push_str(url.path());
    if url.query().is_some() {
        shown.push('?');
        shown.push_str(MASK);
    }
    shown
}

/// `urls_in` finds the http(s) URLs in `text`, with where each stands.
#[must_use]
pub fn urls_in(text: &str) -> Vec<(std::ops::Range<usize>, Url)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = ["http://", "https://"]
        .iter()
        .filter_map(|scheme| text[from..].find(scheme))
        .min()
    {
        let start = from + at;
        let end = text[start..]
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`'))
            .map_or(text.len(), |len| start + len);
        let candidate = text[start..end].trim_end_matches(['.', ',', ';', ')', ']', '}']);
        if let Ok(url) = Url::parse(candidate) {
            found.push((start..start + candidate.len(), url));
        }
        from = end.max(start + 1);
    }
    found
}

/// `hide_url_secrets` is `text` with every URL that has a query or a
/// password shown as [`display_url`] shows it (`?…`, no user info): what a
/// log line or a message may carry of a text that holds URLs.
#[must_use]
pub fn hide_url_secrets(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    let mut last = 0;
    for (range, url) in urls_in(text) {
        if url.query().is_none() && url.password().is_none() {
            continue;
        }
        shown.push_str(&text[last..range.start]);
        shown.push_str(&display_url(&url));
        last = range.end;
    }
    shown.push_str(&text[last..]);
    shown
}

/// `Redactor` remembers the secrets a run's URLs carried (query values and
/// passwords) and masks them in any text afterwards, so a token that a
/// server echoes in a page, an error or a header never reaches the model, a
/// log or a record. Clones share one list: make one per run and hand clones
/// to everything that produces text for that run.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    secrets: Arc<Mutex<Vec<String>>>,
}

impl Redactor {
    /// `new` makes an empty redactor (masking nothing yet).
    #[must_use]
    pub fn new() -> Redactor {
        Redactor::default()
    }

    /// `register` records the URL's query values and password (both as
    /// written and percent-decoded) of at least [`MIN_SECRET_CHARS`]
    /// characters.
    pub fn register(&self, url: &Url) {
        let mut found = Vec::new();
        if let Some(query) = url.query() {
            for pair in query.split('&') {
                let value = pair.split_once('=').map_or("", |(_, value)| value);
                found.push(value.to_owned());
            }
            for (_, value) in url.query_pairs() {
                found.push(value.into_owned());
            }
        }
        if let Some(password) = url.password() {
            found.push(password.to_owned());
            found.push(crate::names::percent_decoded(password));
        }
        for secret in found {
            self.register_secret(&secret);
        }
    }

    /// `register_secret` records one secret (a header value, a token) of at
    /// least [`MIN_SECRET_CHARS`] characters; shorter ones are ignored.
    pub fn register_secret(&self, secret: &str) {
        if secret.chars().count() < MIN_SECRET_CHARS {
            return;
        }
        let mut secrets = self.secrets.lock().unwrap_or_else(PoisonError::into_inner);
        if !secrets.iter().any(|known| known == secret) {
            secrets.push(secret.to_owned());
            // Longest first, so a secret that contains another is masked
            // whole rather than leaving its remainder behind.
            secrets.sort_by_key(|known| std::cmp::Reverse(known.len()));
        }
    }

    /// `redact` returns `text` with every registered secret replaced by `…`.
    #[must_use]
    pub fn redact(&self, text: &str) -> String {
        let secrets = self.secrets.lock().unwrap_or_else(PoisonError::into_inner);
        let mut redacted = text.to_owned();
        for secret in secrets.iter() {
            if redacted.contains(secret.as_str()) {
                redacted = redacted.replace(secret.as_str(), MASK);
            }
        }
        redacted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_shows_its_urls_without_their_queries_or_passwords() {
        let text = "got https://files.example.org/a.png?token=s3cret and \
                    http://me:pw@host.example/x, then https://plain.example/y.";
        assert_eq!(
            hide_url_secrets(text),
            "got https://files.example.org/a.png?… and http://host.example/x, then https://plain.example/y."
        );
        assert_eq!(hide_url_secrets("no links here"), "no links here");
    }

    #[test]
    fn each_character_a_url_never_holds_is_refused_with_its_position() {
        let cases: &[(&str, char, usize)] = &[
            ("https://example.org/a b?token=s3cr3t", ' ', 21),
            ("\"https://example.org/?token=s3cr3t", '"', 0),
            ("https://example.org/?token=s3cr3t\"", '"', 33),
            ("https://example.org\\x?token=s3cr3t", '\\', 19),
            ("https://example.org/`x`?token=s3cr3t", '`', 20),
            ("https://example.org/\tx?token=s3cr3t", '\t', 20),
            ("https://exämple.org/\u{7f}?token=s3cr3t", '\u{7f}', 20),
        ];
        for &(text, character, position) in cases {
            let error = check_url(text).expect_err("the URL holds a bad character");
            let NetError::BadCharacter {
                character: found,
                position: at,
            } = error
            else {
                panic!("{text:?} gave {error:?}");
            };
            assert_eq!((found, at), (character, position), "{text:?}");
            let message = error.to_string();
            assert!(
                message.contains(&format!("position {position}")),
                "{message}"
            );
            assert!(!message.contains("s3cr3t"), "{message}");
            assert!(!message.contains("example.org"), "{message}");
        }
    }

    #[test]
    fn the_refusal_message_names_the_character_plainly() {
        let message = check_url("https://example.org/a b")
            .expect_err("a space")
            .to_string();
        assert!(message.contains("a space at position 21"), "{message}");
        let message = check_url("https://example.org/\u{1}")
            .expect_err("a control")
            .to_string();
        assert!(message.contains("U+0001"), "{message}");
    }

    #[test]
    fn only_absolute_http_and_https_urls_with_a_host_pass() {
        assert!(check_url("https://example.org/x?y=1").is_ok());
        assert!(check_url("http://127.0.0.1:8080/").is_ok());
        assert!(matches!(
            check_url("ftp://example.org/file"),
            Err(NetError::Refused(Refused::Scheme { scheme })) if scheme == "ftp"
        ));
        assert!(matches!(
            check_url("file:///etc/passwd"),
            Err(NetError::Refused(Refused::Scheme { .. }))
        ));
        assert!(matches!(
            check_url("/relative/path?token=s3cr3t"),
            Err(NetError::Unparsable { .. })
        ));
        let message = check_url("/relative/path?token=s3cr3t")
            .expect_err("relative")
            .to_string();
        assert!(!message.contains("s3cr3t"), "{message}");
    }

    #[test]
    fn the_display_form_hides_query_userinfo_and_fragment() {
        let cases = [
            (
                "https://user:pa55word@example.org:8443/a/b?sig=abcdef&x=1#frag",
                "https://example.org:8443/a/b?…",
            ),
            ("https://example.org/a/b", "https://example.org/a/b"),
            ("http://example.org", "http://example.org/"),
            ("http://[::1]:80/x?", "http://[::1]/x?…"),
            ("http://127.0.0.1:3000/p?q", "http://127.0.0.1:3000/p?…"),
        ];
        for (text, shown) in cases {
            let url = Url::parse(text).expect("a URL");
            assert_eq!(display_url(&url), shown, "{text}");
        }
    }

    #[test]
    fn registered_query_values_and_passwords_are_masked_everywhere() {
        let redactor = Redactor::new();
        let url = Url::parse(
            "https://bob:hunter22@example.org/x?sig=AbC%2Bd%2F123&page=2&token=tok_987654",
        )
        .expect("a URL");
        redactor.register(&url);
        let shared = redactor.clone();
        let text = "sig AbC%2Bd%2F123 decoded AbC+d/123 token tok_987654 pw hunter22 page=2";
        assert_eq!(
            shared.redact(text),
            "sig … decoded … token … pw … page=2",
            "short values such as page=2 stay"
        );
    }

    #[test]
    fn a_secret_containing_another_is_masked_whole() {
        let redactor = Redactor::new();
        redactor.register_secret("abcd");
        redactor.register_secret("xxabcdyy");
        redactor.register_secret("abc");
        assert_eq!(redactor.redact("1 xxabcdyy 2 abcd 3 abc"), "1 … 2 … 3 abc");
    }

    #[test]
    fn a_redactor_with_nothing_registered_changes_nothing() {
        assert_eq!(Redactor::new().redact("token=abcdef"), "token=abcdef");
    }
}
