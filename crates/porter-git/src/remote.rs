//! Who may reach which remote: the operator's host lists (fetch and push
//! apart), the profile's `git_remote` directions, and the credentials that
//! resolve only for the URLs they cover.

pub use porter_net::Secret;
use url::Url;

use crate::error::{GitError, NetClass};
use crate::github_app::GithubApp;

/// `Direction` is which way a network operation moves objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// clone, fetch, pull, ls_remote: reading from a remote.
    Fetch,
    /// push: writing to a remote.
    Push,
}

/// `Credential` is one operator credential (config `git.credentials`). It is
/// sent only to a URL that one of `allowed_urls` covers: same scheme, host
/// and port, and a path beneath the allowed path on a `/` boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credential {
    /// `name` appears in the audit log instead of the token.
    pub name: String,
    /// `allowed_urls` are the URL prefixes the credential may be sent to.
    pub allowed_urls: Vec<Url>,
    /// `username` goes with the token in HTTP Basic auth; forges that take
    /// a token as the password accept any name (GitHub wants
    /// `x-access-token`, the default).
    pub username: Option<String>,
    /// `source` is where the secret comes from.
    pub source: CredentialSource,
}

/// `CredentialSource` is where a credential's secret comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialSource {
    /// A static token, sent for fetches and pushes alike.
    Token(Secret),
    /// A GitHub App installation token, minted (and cached) for pushes
    /// only: a fetch never mints it, never sends it.
    GithubApp(GithubApp),
}

impl Credential {
    /// `covers` says whether this credential may be sent to `target`.
    #[must_use]
    pub fn covers(&self, target: &Url) -> bool {
        self.allowed_urls
            .iter()
            .any(|allowed| covers(allowed, target))
    }

    /// `serves` says whether this credential is used for `direction`: a
    /// GitHub App's write-scoped token only for pushes, a static token for
    /// both.
    #[must_use]
    pub fn serves(&self, direction: Direction) -> bool {
        match self.source {
            CredentialSource::Token(_) => true,
            CredentialSource::GithubApp(_) => direction == Direction::Push,
        }
    }
}

fn covers(allowed: &Url, target: &Url) -> bool {
    if allowed.scheme() != target.scheme()
        || allowed.host_str().map(str::to_ascii_lowercase)
            != target.host_str().map(str::to_ascii_lowercase)
        || allowed.port_or_known_default() != target.port_or_known_default()
    {
        return false;
    }
    let base = allowed.path().trim_end_matches('/');
    let path = target.path();
    path == base
        || path
            .strip_prefix(base)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// `ONLY_HTTPS` is the refusal of a remote of another scheme.
const ONLY_HTTPS: &str =
    "only https remotes are used (not ssh, git, file or http); ask for the repository's https URL";

/// `Access` is what one run may reach: the operator's host lists narrowed
/// by the profile's directions, and the operator's credentials.
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// Hosts fetched from (entries match like `http.allow_hosts`: the host
    /// and its subdomains; `*` any public host).
    pub fetch_hosts: Vec<String>,
    /// Hosts pushed to; `None` (the default) turns push off for everyone.
    pub push_hosts: Option<Vec<String>>,
    /// Whether the profile's `git_remote` includes `push`.
    pub may_push: bool,
    /// The operator's credentials.
    pub credentials: Vec<Credential>,
}

impl Access {
    /// `check_url` judges a remote URL for `direction` at the moment it is
    /// used: https only, no user or password in it, its host on the list
    /// for that direction (and push allowed at all).
    pub fn check_url(&self, text: &str, direction: Direction) -> Result<Url, Refusal> {
        // An ssh://, git:// or file:// remote (and an scp-like
        // `git@host:path`) is refused for its scheme, and said so: the
        // model can only do something about it by asking for the https URL.
        if Url::parse(text).is_ok_and(|u| u.scheme() != "https") {
            return Err(Refusal::new(ONLY_HTTPS));
        }
        let url = porter_net::check_url(text).map_err(|_| {
            Refusal::new("the URL could not be read as an https URL (only https remotes are used)")
        })?;
        if url.scheme() != "https" {
            return Err(Refusal::new(ONLY_HTTPS));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(Refusal::new(
                "the URL carries a user or password; credentials come from the operator's config",
            ));
        }
        let Some(host) = url.host_str() else {
            return Err(Refusal::new("the URL names no host"));
        };
        let list = match direction {
            Direction::Fetch => &self.fetch_hosts,
            Direction::Push => {
                if !self.may_push {
                    return Err(Refusal::new(
                        "this profile may not push (git_remote: [fetch])",
                    ));
                }
                match &self.push_hosts {
                    Some(list) => list,
                    None => {
                        return Err(Refusal::new(
                            "push is off until the operator sets git.push_hosts",
                        ));
                    }
                }
            }
        };
        let policy = porter_net::Policy {
            allow_hosts: list.clone(),
            ..porter_net::Policy::default()
        };
        if !policy.allows_host(host) {
            return Err(Refusal::new(match direction {
                Direction::Fetch => "the host is not on the operator's fetch list",
                Direction::Push => "the host is not on the operator's push list",
            }));
        }
        Ok(url)
    }

    /// `credential_for` is the first credential that covers `url` and
    /// serves `direction` (a GitHub App only pushes), if any.
    #[must_use]
    pub fn credential_for(&self, url: &Url, direction: Direction) -> Option<&Credential> {
        self.credentials
            .iter()
            .find(|c| c.serves(direction) && c.covers(url))
    }
}

/// `Refusal` is why a URL was not used; it goes to the log, the model sees
/// only [`NetClass::Refused`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub &'static str);

impl Refusal {
    fn new(why: &'static str) -> Refusal {
        Refusal(why)
    }

    /// `into_error` is the model-facing error for operation `op`.
    #[must_use]
    pub fn into_error(self, op: &'static str) -> GitError {
        tracing::info!(target: crate::AUDIT_TARGET, op, refused = self.0, "remote refused by policy");
        GitError::Network {
            op,
            class: NetClass::Refused,
            reason: Some(self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).expect("the table holds URLs")
    }

    #[test]
    fn a_credential_covers_only_its_host_port_and_path_beneath() {
        let credential = Credential {
            name: "ci".to_owned(),
            allowed_urls: vec![url("https://git.example.org/team/")],
            username: None,
            source: CredentialSource::Token(Secret::new("t0ken")),
        };
        for (target, expected) in [
            ("https://git.example.org/team/repo.git", true),
            ("https://GIT.example.org/team/repo.git", true),
            ("https://git.example.org:443/team", true),
            ("https://git.example.org/teamx/repo.git", false),
            ("https://git.example.org/other/repo.git", false),
            ("https://git.example.org:8443/team/repo.git", false),
            ("http://git.example.org/team/repo.git", false),
            ("https://evil.example.org/team/repo.git", false),
            ("https://git.example.org.evil.net/team/repo.git", false),
        ] {
            assert_eq!(credential.covers(&url(target)), expected, "{target}");
        }
        assert!(
            format!("{credential:?}").contains("Secret(…)")
                && !format!("{credential:?}").contains("t0ken")
        );
    }

    #[test]
    fn a_remote_of_another_scheme_is_refused_saying_only_https_is_used() {
        let access = Access {
            fetch_hosts: vec!["*".to_owned()],
            ..Access::default()
        };
        for text in [
            "ssh://git@example.org/team/r.git",
            "git://example.org/team/r.git",
            "file:///srv/repos/r.git",
            "http://example.org/team/r.git",
            "git@example.org:team/r.git",
            "example.org:team/r.git",
        ] {
            let refusal = access
                .check_url(text, Direction::Fetch)
                .expect_err("not https");
            assert!(
                refusal.0.contains("only https remotes are used"),
                "{text}: {refusal:?}"
            );
        }
    }

    #[test]
    fn urls_are_judged_by_scheme_userinfo_direction_and_host_list() {
        let mut access = Access {
            fetch_hosts: vec!["example.org".to_owned()],
            push_hosts: None,
            may_push: true,
            credentials: Vec::new(),
        };
        for (text, allowed) in [
            ("https://git.example.org/r.git", true),
            ("http://example.org/r.git", false),
            ("ssh://example.org/r.git", false),
            ("file:///tmp/r.git", false),
            ("ext::sh -c touch% /tmp/pwned", false),
            ("https://user:pw@example.org/r.git", false),
            ("https://other.org/r.git", false),
        ] {
            let judged = access.check_url(text, Direction::Fetch);
            assert_eq!(judged.is_ok(), allowed, "{text}: {judged:?}");
        }
        assert_eq!(
            access.check_url("https://example.org/r.git", Direction::Push),
            Err(Refusal(
                "push is off until the operator sets git.push_hosts"
            ))
        );
        access.push_hosts = Some(vec!["push.example.org".to_owned()]);
        for (text, allowed) in [
            ("https://example.org/r.git", false),
            ("https://push.example.org/r.git", true),
        ] {
            let judged = access.check_url(text, Direction::Push);
            assert_eq!(judged.is_ok(), allowed, "{text}: {judged:?}");
        }
        access.may_push = false;
        assert!(
            access
                .check_url("https://push.example.org/r.git", Direction::Push)
                .is_err()
        );
    }
}
