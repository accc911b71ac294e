//! The operator's network policy: which hosts may be fetched, which private
//! hosts are reachable anyway, and how redirects are judged.

use std::net::IpAddr;
use std::time::Duration;

use url::{Host, Url};

use crate::error::Refused;
use crate::guard::is_private;
use crate::urls::display_url;

/// `ANY_PUBLIC_HOST` in an allow list admits every host that passes the
/// private-address guard.
pub const ANY_PUBLIC_HOST: &str = "*";

/// `DEFAULT_TIMEOUT` is how long a server may keep porter waiting, to
/// connect or between two pieces of its answer, before the request fails.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// `DEFAULT_MAX_REDIRECTS` is how many redirects one request follows: enough
/// for http → https → a CDN, few enough to stop a loop at once.
pub const DEFAULT_MAX_REDIRECTS: usize = 5;

/// `Policy` is the operator's network policy (config `http:`), narrowed per
/// run with [`Policy::narrowed`]. Its `Default` is the safe one: any public
/// host, no private host, 5 redirects, 30 s, no proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// `allow_hosts` are the hosts that may be fetched. An entry matches
    /// itself and its subdomains on a dot boundary (`example.org` matches
    /// `a.example.org`, not `badexample.org`; a leading `*.` or `.` is
    /// ignored); an IP address matches only itself; `*` matches any host.
    /// An empty list allows nothing. Matching never lifts the
    /// private-address guard.
    pub allow_hosts: Vec<String>,
    /// `private_hosts` are exact host names or IP addresses that skip the
    /// private-address guard: the operator's own services (and, in tests,
    /// the loopback server). Loosening: every listed host becomes reachable
    /// by whatever the model asks, so list only hosts meant for it. A name
    /// listed here is trusted whatever it resolves to.
    pub private_hosts: Vec<String>,
    /// `timeout` is the longest wait for the server: to connect, and
    /// between two reads of its answer. It does not cap a large download
    /// that keeps flowing; see [`crate::RequestOptions::deadline`] for that.
    pub timeout: Duration,
    /// `max_redirects` is how many redirects one request follows (each one
    /// re-checked); one more is refused.
    pub max_redirects: usize,
    /// `proxy` is the one proxy all requests go through, if any. Proxy
    /// settings from the environment are never used. Through a proxy the
    /// proxy resolves names, so the guard on resolved addresses is the
    /// proxy's job; the allow list and the IP-literal check still apply. The
    /// proxy's own host skips the guard (the operator named it).
    pub proxy: Option<Url>,
    /// `extra_roots` are PEM certificates trusted as roots beside the
    /// platform's own (for an operator's internal CA, and for tests that
    /// serve https on loopback with a CA of their own).
    ///
    /// # Risk
    ///
    /// Whoever holds the private key of an extra root can impersonate *any*
    /// https host to porter, not only the operator's own: every allow-listed
    /// host, every credential sent to one and every byte fetched. List only a
    /// CA whose key the operator controls, and prefer a name-constrained one.
    /// An entry that is not a PEM certificate makes [`crate::Net::new`] fail.
    pub extra_roots: Vec<String>,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            allow_hosts: vec![ANY_PUBLIC_HOST.to_owned()],
            private_hosts: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            max_redirects: DEFAULT_MAX_REDIRECTS,
            proxy: None,
            extra_roots: Vec::new(),
        }
    }
}

/// `RedirectRule` says which redirects a request follows; each followed one
/// is re-checked against the policy either way, and https → http never.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RedirectRule {
    /// Follow redirects anywhere the policy allows (HTTP, WebFetch).
    #[default]
    Any,
    /// Follow redirects only to the host first asked for (File download,
    /// where the model named the place the file comes from).
    SameHost,
    /// Follow none: the 3xx answer itself is the response (uploads, whose
    /// body must not be sent somewhere else).
    None,
}

impl Policy {
    /// `narrowed` is this policy with its allow list cut down to what both
    /// it and `hosts` allow (a profile's or a run's own list), so a run can
    /// never reach more than the operator allows. Everything else is kept.
    #[must_use]
    pub fn narrowed<I, S>(&self, hosts: I) -> Policy
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut allow_hosts: Vec<String> = Vec::new();
        for wanted in hosts {
            let wanted = normal_pattern(wanted.as_ref());
            for allowed in &self.allow_hosts {
                let allowed = normal_pattern(allowed);
                let kept = if pattern_matches(&allowed, &wanted) {
                    Some(wanted.clone())
                } else if pattern_matches(&wanted, &allowed) {
                    Some(allowed)
                } else {
                    None
                };
                if let Some(kept) = kept
                    && !allow_hosts.contains(&kept)
                {
                    allow_hosts.push(kept);
                }
            }
        }
        Policy {
            allow_hosts,
            ..self.clone()
        }
    }

    /// `allows_host` says whether the allow list admits `host` (a name or an
    /// IP address, brackets optional). It does not apply the guard.
    #[must_use]
    pub fn allows_host(&self, host: &str) -> bool {
        let host = normal_host(host);
        self.allow_hosts
            .iter()
            .any(|pattern| pattern_matches(&normal_pattern(pattern), &host))
    }

    /// `is_private_host` says whether the operator listed `host` (exactly)
    /// in `private_hosts`, so that the guard lets it through.
    #[must_use]
    pub fn is_private_host(&self, host: &str) -> bool {
        let host = normal_host(host);
        self.private_hosts
            .iter()
            .any(|listed| normal_host(listed) == host)
            || self
                .proxy
                .as_ref()
                .and_then(Url::host_str)
                .is_some_and(|proxy| normal_host(proxy) == host)
    }

    /// `check_target` judges a URL before anything is sent to it: http or
    /// https, a host, in the allow list, and, for an IP literal, not a
    /// private address unless listed. Names are judged again when they are
    /// resolved, since only then are their addresses known.
    pub fn check_target(&self, url: &Url) -> Result<(), Refused> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Refused::Scheme {
                scheme: url.scheme().to_owned(),
            });
        }
        let (host, ip) = match url.host() {
            None => return Err(Refused::NoHost),
            Some(Host::Domain(name)) => (name.to_owned(), None),
            Some(Host::Ipv4(ip)) => (ip.to_string(), Some(IpAddr::V4(ip))),
            Some(Host::Ipv6(ip)) => (ip.to_string(), Some(IpAddr::V6(ip))),
        };
        let shown = url.host_str().unwrap_or(&host).to_owned();
        if !self.allows_host(&host) {
            return Err(Refused::HostNotAllowed { host: shown });
        }
        if let Some(ip) = ip
            && is_private(ip)
            && !self.is_private_host(&host)
        {
            return Err(Refused::PrivateLiteral { host: shown });
        }
        Ok(())
    }
}

/// `judge_redirect` decides one redirect to `next` after the URLs in
/// `previous` (the first is the one asked for): `Ok(true)` to follow it,
/// `Ok(false)` to hand the 3xx answer back, or the refusal.
pub(crate) fn judge_redirect(
    policy: &Policy,
    rule: RedirectRule,
    previous: &[Url],
    next: &Url,
) -> Result<bool, Refused> {
    if rule == RedirectRule::None {
        return Ok(false);
    }
    if previous.len() > policy.max_redirects {
        return Err(Refused::TooManyRedirects {
            max: policy.max_redirects,
            to: display_url(next),
        });
    }
    if next.scheme() == "http"
        && let Some(secure) = previous.iter().rev().find(|url| url.scheme() == "https")
    {
        return Err(Refused::Downgrade {
            from: display_url(secure),
            to: display_url(next),
        });
    }
    if rule == RedirectRule::SameHost
        && let Some(first) = previous.first()
        && first.host() != next.host()
    {
        return Err(Refused::OtherHost {
            from: first.host_str().unwrap_or_default().to_owned(),
            to: next.host_str().unwrap_or_default().to_owned(),
        });
    }
    policy.check_target(next)?;
    Ok(true)
}

/// `normal_host` is a host as compared: lower case, no trailing dot, no
/// brackets, and an IP address in its canonical form.
pub(crate) fn normal_host(host: &str) -> String {
    let host = host.trim().trim_end_matches('.').to_ascii_lowercase();
    let bare = host
        .strip_prefix('[')
        .and_then(|inner| inner.strip_suffix(']'))
        .unwrap_or(&host);
    match bare.parse::<IpAddr>() {
        Ok(ip) => ip.to_string(),
        Err(_) => bare.to_owned(),
    }
}

fn normal_pattern(pattern: &str) -> String {
    let pattern = pattern.trim();
    if pattern == ANY_PUBLIC_HOST {
        return pattern.to_owned();
    }
    let pattern = pattern
        .strip_prefix("*.")
        .or_else(|| pattern.strip_prefix('.'))
        .unwrap_or(pattern);
    normal_host(pattern)
}

/// `pattern_matches` says whether `host` (normalised) falls under `pattern`
/// (normalised): `*` takes all, an address only itself, a name itself and
/// its subdomains.
fn pattern_matches(pattern: &str, host: &str) -> bool {
    if pattern == ANY_PUBLIC_HOST {
        return true;
    }
    if pattern.is_empty() || host == ANY_PUBLIC_HOST {
        return false;
    }
    if pattern.parse::<IpAddr>().is_ok() || host.parse::<IpAddr>().is_ok() {
        return pattern == host;
    }
    host == pattern
        || host
            .strip_suffix(pattern)
            .is_some_and(|rest| rest.ends_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(allow: &[&str], private: &[&str]) -> Policy {
        Policy {
            allow_hosts: allow.iter().map(|&s| s.to_owned()).collect(),
            private_hosts: private.iter().map(|&s| s.to_owned()).collect(),
            ..Policy::default()
        }
    }

    fn url(text: &str) -> Url {
        Url::parse(text).expect("the table holds URLs")
    }

    #[test]
    fn the_default_policy_is_the_safe_one() {
        let policy = Policy::default();
        assert_eq!(policy.allow_hosts, ["*"]);
        assert!(policy.private_hosts.is_empty());
        assert_eq!(policy.max_redirects, 5);
        assert_eq!(policy.timeout, Duration::from_secs(30));
        assert_eq!(policy.proxy, None);
    }

    #[test]
    fn allow_list_entries_match_on_a_dot_boundary() {
        let listed = policy(&["example.org", "*.docs.rs", "10.1.2.3", "[::1]"], &[]);
        let cases = [
            ("example.org", true),
            ("EXAMPLE.org.", true),
            ("a.example.org", true),
            ("a.b.example.org", true),
            ("badexample.org", false),
            ("example.org.evil.com", false),
            ("org", false),
            ("docs.rs", true),
            ("x.docs.rs", true),
            ("10.1.2.3", true),
            ("110.1.2.3", false),
            ("::1", true),
            ("[::1]", true),
            ("0:0:0:0:0:0:0:1", true),
        ];
        for (host, allowed) in cases {
            assert_eq!(listed.allows_host(host), allowed, "{host}");
        }
        assert!(!policy(&[], &[]).allows_host("example.org"));
        assert!(policy(&["*"], &[]).allows_host("anything.example"));
    }

    #[test]
    fn narrowing_keeps_only_what_both_lists_allow() {
        let cases: &[(&[&str], &[&str], &[&str])] = &[
            (&["*"], &["example.org"], &["example.org"]),
            (&["example.org"], &["*"], &["example.org"]),
            (&["example.org"], &["a.example.org"], &["a.example.org"]),
            (&["a.example.org"], &["example.org"], &["a.example.org"]),
            (&["example.org"], &["example.com"], &[]),
            (&["example.org"], &["badexample.org"], &[]),
            (
                &["example.org", "docs.rs"],
                &["docs.rs", "x.example.org"],
                &["docs.rs", "x.example.org"],
            ),
            (&["*"], &["*"], &["*"]),
            (&["example.org"], &[], &[]),
        ];
        for &(operator, run, expected) in cases {
            let narrowed = policy(operator, &["127.0.0.1"]).narrowed(run);
            assert_eq!(narrowed.allow_hosts, expected, "{operator:?} ∩ {run:?}");
            assert_eq!(narrowed.private_hosts, ["127.0.0.1"]);
        }
        let narrowed = policy(&["example.org"], &[]).narrowed(["a.example.org"]);
        assert!(narrowed.allows_host("b.a.example.org"));
        assert!(!narrowed.allows_host("b.example.org"));
    }

    #[test]
    fn ip_literal_targets_are_judged_before_any_connection() {
        let policy = policy(&["*"], &["127.0.0.1", "[::1]"]);
        let cases: &[(&str, Option<Refused>)] = &[
            ("http://127.0.0.1:8080/", None),
            ("http://[::1]:8080/", None),
            ("http://8.8.8.8/", None),
            ("http://example.org/", None),
            ("http://localhost/", None),
            (
                "http://127.0.0.2/",
                Some(Refused::PrivateLiteral {
                    host: "127.0.0.2".to_owned(),
                }),
            ),
            (
                "http://169.254.169.254/latest/meta-data/",
                Some(Refused::PrivateLiteral {
                    host: "169.254.169.254".to_owned(),
                }),
            ),
            (
                "http://[::ffff:127.0.0.1]/",
                Some(Refused::PrivateLiteral {
                    host: "[::ffff:7f00:1]".to_owned(),
                }),
            ),
            (
                "http://[::ffff:10.0.0.1]/",
                Some(Refused::PrivateLiteral {
                    host: "[::ffff:a00:1]".to_owned(),
                }),
            ),
            (
                "http://[64:ff9b::a00:1]/",
                Some(Refused::PrivateLiteral {
                    host: "[64:ff9b::a00:1]".to_owned(),
                }),
            ),
            (
                "http://2130706434/",
                Some(Refused::PrivateLiteral {
                    host: "127.0.0.2".to_owned(),
                }),
            ),
            (
                "http://0x7f000002/",
                Some(Refused::PrivateLiteral {
                    host: "127.0.0.2".to_owned(),
                }),
            ),
            (
                "ftp://example.org/",
                Some(Refused::Scheme {
                    scheme: "ftp".to_owned(),
                }),
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(policy.check_target(&url(text)).err(), *expected, "{text}");
        }
    }

    #[test]
    fn a_host_outside_the_allow_list_is_refused_by_name() {
        let policy = policy(&["example.org"], &[]);
        assert_eq!(
            policy.check_target(&url("https://badexample.org/x?k=v")),
            Err(Refused::HostNotAllowed {
                host: "badexample.org".to_owned()
            })
        );
        assert_eq!(policy.check_target(&url("https://a.example.org/")), Ok(()));
    }

    #[test]
    fn redirects_are_judged_by_rule_count_scheme_and_host() {
        use RedirectRule::{Any, None as NoRedirect, SameHost};

        let policy = policy(&["*"], &["127.0.0.1", "localhost"]);
        let start = url("https://example.org/a?t=secret1");
        let chain = |n: usize| vec![start.clone(); n];
        let judge = |rule, previous: &[Url], next: &str| {
            judge_redirect(&policy, rule, previous, &url(next))
        };
        assert_eq!(judge(Any, &chain(1), "https://cdn.example.net/f"), Ok(true));
        assert_eq!(judge(Any, &chain(5), "https://example.org/b"), Ok(true));
        assert_eq!(
            judge(Any, &chain(6), "https://example.org/b?t=secret2"),
            Err(Refused::TooManyRedirects {
                max: 5,
                to: "https://example.org/b?…".to_owned()
            })
        );
        assert_eq!(
            judge(Any, &chain(1), "http://example.org/a?t=secret1"),
            Err(Refused::Downgrade {
                from: "https://example.org/a?…".to_owned(),
                to: "http://example.org/a?…".to_owned()
            })
        );
        let via_https = [url("http://example.org/"), url("https://example.org/")];
        assert!(matches!(
            judge(Any, &via_https, "http://example.org/"),
            Err(Refused::Downgrade { .. })
        ));
        assert_eq!(
            judge(Any, &[url("http://example.org/")], "https://example.org/"),
            Ok(true),
            "an upgrade to https is fine"
        );
        assert_eq!(
            judge(SameHost, &chain(1), "https://example.org/elsewhere"),
            Ok(true)
        );
        assert_eq!(
            judge(SameHost, &chain(1), "https://cdn.example.net/f"),
            Err(Refused::OtherHost {
                from: "example.org".to_owned(),
                to: "cdn.example.net".to_owned()
            })
        );
        assert_eq!(
            judge(
                SameHost,
                &[url("http://127.0.0.1:1/")],
                "http://localhost:1/"
            ),
            Err(Refused::OtherHost {
                from: "127.0.0.1".to_owned(),
                to: "localhost".to_owned()
            })
        );
        assert_eq!(
            judge(NoRedirect, &chain(1), "https://example.org/b"),
            Ok(false)
        );
        assert_eq!(
            judge(Any, &chain(1), "http://169.254.169.254/"),
            Err(Refused::Downgrade {
                from: "https://example.org/a?…".to_owned(),
                to: "http://169.254.169.254/".to_owned()
            })
        );
        assert_eq!(
            judge(
                Any,
                &[url("http://example.org/")],
                "http://169.254.169.254/"
            ),
            Err(Refused::PrivateLiteral {
                host: "169.254.169.254".to_owned()
            })
        );
    }

    #[test]
    fn no_redirect_is_followed_when_the_limit_is_zero() {
        let policy = Policy {
            max_redirects: 0,
            ..Policy::default()
        };
        assert!(matches!(
            judge_redirect(
                &policy,
                RedirectRule::Any,
                &[url("https://example.org/")],
                &url("https://example.org/b")
            ),
            Err(Refused::TooManyRedirects { max: 0, .. })
        ));
    }

    #[test]
    fn the_proxy_host_and_listed_hosts_skip_the_guard_and_nothing_else_does() {
        let policy = Policy {
            private_hosts: vec!["Intranet.Example.".to_owned(), "[::1]".to_owned()],
            proxy: Some(url("http://proxy.internal:3128")),
            ..Policy::default()
        };
        assert!(policy.is_private_host("intranet.example"));
        assert!(policy.is_private_host("::1"));
        assert!(policy.is_private_host("proxy.internal"));
        assert!(!policy.is_private_host("a.intranet.example"));
        assert!(!policy.is_private_host("localhost"));
    }
}
