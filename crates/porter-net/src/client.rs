//! `Net`, the one HTTP client: reqwest with the policy built in, so that no
//! caller can forget a check.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::header::HeaderMap;
use reqwest::{Body, Client, Method, Response};
use url::Url;

use crate::error::{NetError, Refused};
use crate::guard::is_private;
use crate::policy::{Policy, RedirectRule, judge_redirect};
use crate::urls::display_url;

/// `USER_AGENT` names porter to the servers it fetches from.
const USER_AGENT: &str = concat!("porter/", env!("CARGO_PKG_VERSION"));

/// `RequestOptions` are the parts of a request besides its method and URL.
/// The default is a bare request that follows policy-checked redirects.
#[derive(Debug, Default)]
pub struct RequestOptions {
    /// `headers` are sent as given. Credentials among them are dropped by
    /// reqwest on a redirect to another host; callers that must refuse them
    /// outright check [`crate::is_credential_header`] first.
    pub headers: HeaderMap,
    /// `body` is sent as given; a streaming body is not re-sent on a 307/308
    /// redirect (the 3xx answer is returned instead).
    pub body: Option<Body>,
    /// `redirect` says which redirects to follow.
    pub redirect: RedirectRule,
    /// `deadline` caps the whole request, answer body included; `None` lets
    /// a transfer that keeps flowing run as long as it needs (the policy's
    /// timeout still ends one that stalls).
    pub deadline: Option<Duration>,
}

/// `Net` is the gateway's one HTTP client. Every request it sends has been
/// judged against its [`Policy`]: the URL's host against the allow list and,
/// for an IP literal, the private-address guard before anything is sent;
/// every name's resolved addresses at connect time (so DNS rebinding gains
/// nothing: the addresses checked are the ones connected to); every redirect
/// again. Proxy settings from the environment are ignored and no `Referer`
/// is sent (it would carry the previous URL's query to the next host).
/// Cloning is cheap and shares the connection pools.
#[derive(Debug, Clone)]
pub struct Net {
    policy: Arc<Policy>,
    follow_any: Client,
    same_host: Client,
    no_redirects: Client,
}

impl Net {
    /// `new` builds the client for `policy`. It installs the ring TLS
    /// provider process-wide if none is installed yet (the only provider
    /// compiled in; installing it twice is harmless).
    pub fn new(policy: Policy) -> Result<Net, NetError> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let policy = Arc::new(policy);
        let resolver = Arc::new(GuardedResolver {
            policy: Arc::clone(&policy),
        });
        Ok(Net {
            follow_any: build_client(&policy, &resolver, RedirectRule::Any)?,
            same_host: build_client(&policy, &resolver, RedirectRule::SameHost)?,
            no_redirects: build_client(&policy, &resolver, RedirectRule::None)?,
            policy,
        })
    }

    /// `policy` is the policy this client enforces.
    #[must_use]
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// `request` sends one request after checking it, following redirects as
    /// `options.redirect` says, and returns the response with its body
    /// unread (stream it with `bytes_stream`, and map its errors with
    /// [`NetError::reading`]). A refusal says what was refused and why; no
    /// error carries more of the URL than its display form.
    pub async fn request(
        &self,
        method: Method,
        url: &Url,
        options: RequestOptions,
    ) -> Result<Response, NetError> {
        self.policy.check_target(url)?;
        let client = match options.redirect {
            RedirectRule::Any => &self.follow_any,
            RedirectRule::SameHost => &self.same_host,
            RedirectRule::None => &self.no_redirects,
        };
        let mut builder = client.request(method, url.clone()).headers(options.headers);
        if let Some(body) = options.body {
            builder = builder.body(body);
        }
        if let Some(deadline) = options.deadline {
            builder = builder.timeout(deadline);
        }
        let started = Instant::now();
        builder.send().await.map_err(|error| {
            let waited = match options.deadline {
                Some(deadline) if started.elapsed() >= deadline => deadline,
                _ => self.policy.timeout,
            };
            NetError::from_reqwest(error, display_url(url), waited)
        })
    }
}

impl NetError {
    /// `reading` maps an error met while streaming a response body from
    /// `url` (the URL the request was sent to) into a `NetError`, dropping
    /// the URL reqwest may have attached.
    #[must_use]
    pub fn reading(url: &Url, error: reqwest::Error, timeout: Duration) -> NetError {
        NetError::from_reqwest(error, display_url(url), timeout)
    }
}

fn build_client(
    policy: &Arc<Policy>,
    resolver: &Arc<GuardedResolver>,
    rule: RedirectRule,
) -> Result<Client, NetError> {
    let judged = Arc::clone(policy);
    let redirects = reqwest::redirect::Policy::custom(move |attempt| {
        match judge_redirect(&judged, rule, attempt.previous(), attempt.url()) {
            Ok(true) => attempt.follow(),
            Ok(false) => attempt.stop(),
            Err(refused) => attempt.error(refused),
        }
    });
    let mut builder = Client::builder()
        .user_agent(USER_AGENT)
        .no_proxy()
        .referer(false)
        .redirect(redirects)
        .dns_resolver(Arc::clone(resolver))
        .connect_timeout(policy.timeout)
        .read_timeout(policy.timeout);
    if let Some(proxy) = &policy.proxy {
        let proxy =
            reqwest::Proxy::all(proxy.as_str()).map_err(|source| NetError::Setup { source })?;
        builder = builder.proxy(proxy);
    }
    for pem in &policy.extra_roots {
        let roots = reqwest::Certificate::from_pem_bundle(pem.as_bytes())
            .map_err(|source| NetError::Setup { source })?;
        builder = builder.tls_certs_merge(roots);
    }
    builder.build().map_err(|source| NetError::Setup { source })
}

/// `GuardedResolver` resolves names with the system resolver and refuses a
/// name when any of its addresses is private, unless the operator listed
/// the name. Refusing on *any* (not just dropping the private ones) keeps a
/// name that mixes public and private answers from reaching the private
/// one on a retry or a later connection.
#[derive(Debug)]
struct GuardedResolver {
    policy: Arc<Policy>,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = Arc::clone(&self.policy);
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addresses: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !policy.is_private_host(&host)
                && let Some(private) = addresses.iter().find(|address| is_private(address.ip()))
            {
                let refused = Refused::ResolvesPrivate {
                    host,
                    address: private.ip(),
                };
                return Err(refused.into());
            }
            let addresses: Addrs = Box::new(addresses.into_iter());
            Ok(addresses)
        })
    }
}
