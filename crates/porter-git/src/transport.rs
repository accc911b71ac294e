//! The smart-HTTP subtransport: libgit2 speaks the git protocol, and every
//! byte it sends or receives travels as an HTTP request through porter-net
//! (host policy, private-address guard, redirects judged). The URL is judged
//! again here, at the moment of use, for the direction the request serves,
//! so a remote URL edited in `.git/config` (or rewritten by `insteadOf`)
//! after a check gains nothing.
//!
//! libgit2 is synchronous and the client is async: a network operation runs
//! on a blocking thread (`spawn_blocking`) and each request is driven with
//! the runtime's [`tokio::runtime::Handle::block_on`]. The operation's
//! [`Wire`] reaches the transport through a thread-local, set for the
//! length of the libgit2 call on that very thread.

use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::sync::{Arc, Mutex, Once, OnceLock};

use base64::Engine as _;
use git2::transport::{Service, SmartSubtransport, SmartSubtransportStream, Transport};
use porter_net::reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use porter_net::reqwest::{Method, Response, StatusCode};
use porter_net::{Net, RedirectRule, RequestOptions, display_url};

use crate::error::{GitError, NetClass};
use crate::remote::{Access, CredentialSource, Direction};

/// `Network` is what network operations share: the client, the runtime
/// that drives it, and what the run may reach.
#[derive(Debug, Clone)]
pub struct Network {
    /// The policy-checked client. Its own allow list must admit the git
    /// hosts too (the gateway builds it from the union of both git lists).
    pub net: Net,
    /// The runtime the client's requests run on.
    pub handle: tokio::runtime::Handle,
    /// What this run may reach, with which credentials.
    pub access: Access,
}

/// `Wire` is one network operation's view of the transport: its network,
/// and what went wrong on it (kept for the error the model gets).
#[derive(Debug)]
pub(crate) struct Wire {
    pub(crate) network: Network,
    pub(crate) op: &'static str,
    pub(crate) failure: Mutex<Option<NetClass>>,
    pub(crate) credential: Mutex<Option<String>>,
}

impl Wire {
    pub(crate) fn new(network: &Network, op: &'static str) -> Arc<Wire> {
        Arc::new(Wire {
            network: network.clone(),
            op,
            failure: Mutex::new(None),
            credential: Mutex::new(None),
        })
    }

    fn fail(&self, class: NetClass, detail: &str) -> io::Error {
        tracing::warn!(target: "porter_git::audit", op = self.op, %class, detail, "git network request failed");
        if let Ok(mut failure) = self.failure.lock() {
            failure.get_or_insert(class);
        }
        io::Error::other(format!("{class}"))
    }

    /// `error` turns a libgit2 error met during this operation into the
    /// model's error: the class recorded by the transport if there is one,
    /// else one read from libgit2's own error class.
    pub(crate) fn error(&self, error: &git2::Error) -> GitError {
        let recorded = self.failure.lock().ok().and_then(|f| *f);
        let class = recorded.unwrap_or(match error.code() {
            git2::ErrorCode::Auth => NetClass::Auth,
            git2::ErrorCode::NotFound => NetClass::NotFound,
            git2::ErrorCode::NotFastForward | git2::ErrorCode::Locked => NetClass::Rejected,
            _ => NetClass::Unreachable,
        });
        tracing::warn!(target: "porter_git::audit", op = self.op, %class, detail = error.message(), "git network operation failed");
        GitError::Network {
            op: self.op,
            class,
            reason: None,
        }
    }

    pub(crate) fn credential_name(&self) -> Option<String> {
        self.credential.lock().ok().and_then(|c| c.clone())
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<Wire>>> = const { RefCell::new(None) };
}

/// `with_wire` runs `work` (libgit2 calls) with `wire` reachable by the
/// transport on this thread, and clears it afterwards whatever happens.
pub(crate) fn with_wire<T>(wire: &Arc<Wire>, work: impl FnOnce() -> T) -> T {
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            CURRENT.with(|current| current.borrow_mut().take());
        }
    }
    CURRENT.with(|current| *current.borrow_mut() = Some(Arc::clone(wire)));
    let _clear = Clear;
    work()
}

static SETUP: Once = Once::new();
static SETUP_RESULT: OnceLock<Result<(), String>> = OnceLock::new();

/// `init` sets libgit2 up once per process, before any repository is
/// opened: the system, global, XDG and ProgramData config search paths are
/// emptied (no `~/.gitconfig` or `/etc/gitconfig` can name a helper or
/// rewrite a URL), `https` goes through [`HttpsSubtransport`], and `http`,
/// `git`, `ssh` and `file` URLs are refused by a transport that never
/// connects. Every operation calls it; only the first call does anything.
pub fn init() -> Result<(), GitError> {
    SETUP.call_once(|| {
        let _ = SETUP_RESULT.set(setup().map_err(|e| e.message().to_owned()));
    });
    match SETUP_RESULT.get() {
        Some(Ok(())) => Ok(()),
        Some(Err(message)) => Err(GitError::Setup(message.clone())),
        None => Err(GitError::Setup("set-up did not run".to_owned())),
    }
}

#[allow(unsafe_code)]
fn setup() -> Result<(), git2::Error> {
    use git2::ConfigLevel;
    for level in [
        ConfigLevel::System,
        ConfigLevel::Global,
        ConfigLevel::XDG,
        ConfigLevel::ProgramData,
    ] {
        // SAFETY: runs once, under `SETUP`, before this process opens any
        // repository through porter-git, so no libgit2 call races it.
        unsafe { git2::opts::set_search_path(level, "")? };
    }
    // SAFETY: as above; registration happens once, before any transport is
    // created.
    unsafe {
        git2::transport::register("https", |remote| {
            let wire = CURRENT.with(|current| current.borrow().clone());
            Transport::smart(remote, true, HttpsSubtransport { wire })
        })?;
        for scheme in ["http", "git", "ssh", "file", "git+ssh", "ssh+git"] {
            git2::transport::register(scheme, |_remote| {
                Err(git2::Error::from_str(
                    "porter reaches remotes over https only",
                ))
            })?;
        }
    }
    Ok(())
}

/// `HttpsSubtransport` turns libgit2's smart-protocol actions into HTTP
/// requests through porter-net.
struct HttpsSubtransport {
    wire: Option<Arc<Wire>>,
}

impl SmartSubtransport for HttpsSubtransport {
    fn action(
        &self,
        url: &str,
        action: Service,
    ) -> Result<Box<dyn SmartSubtransportStream>, git2::Error> {
        let Some(wire) = &self.wire else {
            return Err(git2::Error::from_str(
                "no porter operation is running on this thread",
            ));
        };
        let direction = match action {
            Service::UploadPackLs | Service::UploadPack => Direction::Fetch,
            Service::ReceivePackLs | Service::ReceivePack => Direction::Push,
        };
        let base = match wire.network.access.check_url(url, direction) {
            Ok(base) => base,
            Err(refusal) => {
                let _ = wire.fail(NetClass::Refused, refusal.0);
                return Err(git2::Error::from_str("refused by policy"));
            }
        };
        let (method, suffix, service) = match action {
            Service::UploadPackLs => (
                Method::GET,
                "/info/refs?service=git-upload-pack",
                "upload-pack",
            ),
            Service::UploadPack => (Method::POST, "/git-upload-pack", "upload-pack"),
            Service::ReceivePackLs => (
                Method::GET,
                "/info/refs?service=git-receive-pack",
                "receive-pack",
            ),
            Service::ReceivePack => (Method::POST, "/git-receive-pack", "receive-pack"),
        };
        let joined = format!("{}{suffix}", base.as_str().trim_end_matches('/'));
        let target = url::Url::parse(&joined).map_err(|_| git2::Error::from_str("bad URL"))?;
        Ok(Box::new(HttpStream {
            wire: Arc::clone(wire),
            direction,
            base,
            target,
            method,
            service,
            body: Vec::new(),
            response: None,
            pending: Vec::new(),
            position: 0,
        }))
    }

    fn close(&self) -> Result<(), git2::Error> {
        Ok(())
    }
}

/// `HttpStream` is one request: writes are buffered, and the first read
/// sends the request (GET, or POST with everything written) and then reads
/// the answer chunk by chunk.
struct HttpStream {
    wire: Arc<Wire>,
    direction: Direction,
    base: url::Url,
    target: url::Url,
    method: Method,
    service: &'static str,
    body: Vec<u8>,
    response: Option<Response>,
    pending: Vec<u8>,
    position: usize,
}

impl HttpStream {
    fn send(&mut self) -> io::Result<Response> {
        let wire = Arc::clone(&self.wire);
        let mut headers = HeaderMap::new();
        if self.method == Method::POST {
            let request = format!("application/x-git-{}-request", self.service);
            let result = format!("application/x-git-{}-result", self.service);
            headers.insert(CONTENT_TYPE, header(&request)?);
            headers.insert(ACCEPT, header(&result)?);
        }
        if let Some(credential) = wire
            .network
            .access
            .credential_for(&self.base, self.direction)
        {
            let token = match &credential.source {
                CredentialSource::Token(token) => token.clone(),
                CredentialSource::GithubApp(app) => {
                    match wire.network.handle.block_on(app.token(&wire.network.net)) {
                        Ok(token) => token,
                        Err(error) => {
                            let detail = format!(
                                "credential {}: no GitHub App token: {error}",
                                credential.name
                            );
                            return Err(wire.fail(NetClass::Auth, &detail));
                        }
                    }
                }
            };
            let user = credential.username.as_deref().unwrap_or("x-access-token");
            let basic = base64::engine::general_purpose::STANDARD
                .encode(format!("{user}:{}", token.expose()));
            let mut value = header(&format!("Basic {basic}"))?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
            if let Ok(mut used) = wire.credential.lock() {
                *used = Some(credential.name.clone());
            }
        }
        let options = RequestOptions {
            headers,
            body: (self.method == Method::POST).then(|| std::mem::take(&mut self.body).into()),
            redirect: RedirectRule::None,
            deadline: None,
        };
        let shown = display_url(&self.target);
        tracing::debug!(target: "porter_git::audit", op = wire.op, method = %self.method, url = %shown, "git request");
        let sent = wire.network.handle.block_on(wire.network.net.request(
            self.method.clone(),
            &self.target,
            options,
        ));
        let response = match sent {
            Ok(response) => response,
            Err(error) => {
                let class = if error.refusal().is_some() {
                    NetClass::Refused
                } else {
                    NetClass::Unreachable
                };
                return Err(wire.fail(class, &format!("{shown}: {error}")));
            }
        };
        let status = response.status();
        if !status.is_success() {
            let class = match status {
                StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => NetClass::Auth,
                StatusCode::NOT_FOUND | StatusCode::GONE => NetClass::NotFound,
                _ => NetClass::Unreachable,
            };
            return Err(wire.fail(class, &format!("{shown} answered {status}")));
        }
        let expected = if self.method == Method::GET {
            format!("application/x-git-{}-advertisement", self.service)
        } else {
            format!("application/x-git-{}-result", self.service)
        };
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if content_type != expected {
            return Err(wire.fail(
                NetClass::Unreachable,
                &format!(
                    "{shown} answered {content_type:?}, not {expected}: not a smart-HTTP git server"
                ),
            ));
        }
        Ok(response)
    }
}

fn header(text: &str) -> io::Result<HeaderValue> {
    HeaderValue::from_str(text).map_err(io::Error::other)
}

impl Read for HttpStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.response.is_none() {
            self.response = Some(self.send()?);
        }
        while self.position >= self.pending.len() {
            let Some(response) = self.response.as_mut() else {
                return Ok(0);
            };
            let chunk = self.wire.network.handle.block_on(response.chunk());
            match chunk {
                Ok(Some(bytes)) => {
                    self.pending = bytes.to_vec();
                    self.position = 0;
                }
                Ok(None) => return Ok(0),
                Err(error) => {
                    let detail = format!("{}: {error}", display_url(&self.target));
                    return Err(self.wire.fail(NetClass::Unreachable, &detail));
                }
            }
        }
        let n = buf.len().min(self.pending.len() - self.position);
        buf[..n].copy_from_slice(&self.pending[self.position..self.position + n]);
        self.position += n;
        Ok(n)
    }
}

impl Write for HttpStream {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.response.is_some() {
            return Err(io::Error::other("the request was already sent"));
        }
        self.body.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
