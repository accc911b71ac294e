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
//!
//! A POST body (a push's pack, a fetch's negotiation) is gathered up to
//! [`POST_BUFFER_BYTES`] and then sent with a `Content-Length`, as git does;
//! a larger one (a push of anything big) is streamed instead: the request
//! starts on the runtime with a chunked body fed through a channel of
//! [`CHANNEL_PIECES`] pieces of at most [`PIECE_BYTES`], so a push holds a
//! few hundred KiB of its pack in porter, never the whole of it. A body that
//! libgit2 abandons half way ends the request with an error, never with a
//! clean end that would hand the server a truncated pack.
//!
//! Redirects are followed the way git's `http.followRedirects=initial`
//! does: only for the first request of an exchange (`info/refs`), at most
//! the policy's count, each hop sent as a request of its own (so porter-net
//! judges it again) and judged here too: https, the same host and port as
//! asked, the host on the operator's list for the direction. The credential
//! is chosen again for every hop, so it reaches only URLs it covers. Later
//! requests of the same operation go to the base the redirect led to.

use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock};

use base64::Engine as _;
use git2::transport::{Service, SmartSubtransport, SmartSubtransportStream, Transport};
use porter_net::reqwest::header::{
    ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue, LOCATION,
};
use porter_net::reqwest::{Body, Method, Response, StatusCode};
use porter_net::{Net, NetError, RedirectRule, RequestOptions, display_url};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use url::Url;

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
    /// `moved` maps a repository URL as libgit2 names it to the base a
    /// redirect of its `info/refs` led to, for the requests that follow.
    moved: Mutex<Vec<(Url, Url)>>,
}

impl Wire {
    pub(crate) fn new(network: &Network, op: &'static str) -> Arc<Wire> {
        Arc::new(Wire {
            network: network.clone(),
            op,
            failure: Mutex::new(None),
            credential: Mutex::new(None),
            moved: Mutex::new(Vec::new()),
        })
    }

    fn fail(&self, class: NetClass, detail: &str) -> io::Error {
        tracing::warn!(target: crate::AUDIT_TARGET, op = self.op, %class, detail, "git network request failed");
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
        tracing::warn!(target: crate::AUDIT_TARGET, op = self.op, %class, detail = error.message(), "git network operation failed");
        GitError::Network {
            op: self.op,
            class,
            reason: None,
        }
    }

    pub(crate) fn credential_name(&self) -> Option<String> {
        self.credential.lock().ok().and_then(|c| c.clone())
    }

    /// `moved_to` is where `base` was redirected to earlier in this
    /// operation, if it was.
    fn moved_to(&self, base: &Url) -> Option<Url> {
        let moved = self.moved.lock().ok()?;
        moved
            .iter()
            .find(|(from, _)| from == base)
            .map(|(_, to)| to.clone())
    }

    /// `record_move` remembers that `from` now lives at `to`, for the
    /// requests of this operation still to come.
    fn record_move(&self, from: Url, to: Url) {
        if let Ok(mut moved) = self.moved.lock() {
            moved.retain(|(known, _)| *known != from);
            moved.push((from, to));
        }
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
/// rewrite a URL), `https` goes through `HttpsSubtransport`, and `http`,
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

/// `POST_BUFFER_BYTES` is the largest POST body sent whole, with a
/// `Content-Length` (git's own `http.postBuffer` default): every fetch
/// negotiation and small push fits, and servers that dislike chunked bodies
/// see none for them. A larger body is streamed.
const POST_BUFFER_BYTES: usize = 1 << 20;

/// `PIECE_BYTES` is the most one piece of a streamed body holds; a larger
/// write from libgit2 is cut into pieces of this size.
const PIECE_BYTES: usize = 64 << 10;

/// `CHANNEL_PIECES` is how many pieces may wait between libgit2 and the
/// connection; a full channel makes libgit2 wait for the network, which is
/// what bounds a push's memory.
const CHANNEL_PIECES: usize = 4;

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
        let asked = match wire.network.access.check_url(url, direction) {
            Ok(base) => base,
            Err(refusal) => {
                let _ = wire.fail(NetClass::Refused, refusal.0);
                return Err(git2::Error::from_str("refused by policy"));
            }
        };
        let base = match wire.moved_to(&asked) {
            Some(moved) => match wire.network.access.check_url(moved.as_str(), direction) {
                Ok(base) => base,
                Err(refusal) => {
                    let _ = wire.fail(NetClass::Refused, refusal.0);
                    return Err(git2::Error::from_str("refused by policy"));
                }
            },
            None => asked.clone(),
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
        let target = Url::parse(&joined).map_err(|_| git2::Error::from_str("bad URL"))?;
        Ok(Box::new(HttpStream {
            wire: Arc::clone(wire),
            direction,
            asked,
            target,
            method,
            service,
            phase: Phase::Gathering(Vec::new()),
            pending: Vec::new(),
            position: 0,
        }))
    }

    fn close(&self) -> Result<(), git2::Error> {
        Ok(())
    }
}

/// `HttpStream` is one request. A GET is sent on the first read. A POST
/// gathers what libgit2 writes, switches to a streamed body once that
/// outgrows [`POST_BUFFER_BYTES`], and is finished by the first read; the
/// answer is then read chunk by chunk.
struct HttpStream {
    wire: Arc<Wire>,
    direction: Direction,
    /// `asked` is the repository URL as libgit2 named it (checked), the key
    /// a redirect of its `info/refs` is remembered under.
    asked: Url,
    target: Url,
    method: Method,
    service: &'static str,
    phase: Phase,
    pending: Vec<u8>,
    position: usize,
}

/// `Phase` is where one request stands.
enum Phase {
    /// Nothing sent yet; the POST body so far (never more than
    /// [`POST_BUFFER_BYTES`]).
    Gathering(Vec<u8>),
    /// A POST underway with a streamed body.
    Streaming(Upload),
    /// The answer, being read.
    Reading(Response),
    /// The request failed; nothing more comes of it.
    Failed,
}

/// `Upload` is a POST whose body is still being written.
struct Upload {
    /// `pieces` feeds the body; closing it ends the body.
    pieces: mpsc::Sender<Vec<u8>>,
    /// `complete` is set before `pieces` closes on purpose; a body whose
    /// channel closes without it was abandoned and fails the request.
    complete: Arc<AtomicBool>,
    /// `answer` is the request running on the runtime.
    answer: JoinHandle<Result<Response, NetError>>,
}

/// `body_pieces` yields the pieces sent through `pieces`, and ends cleanly
/// only if `complete` was set before the channel closed; otherwise it ends
/// with an error, so that the request fails and the server never takes a
/// cut body for a whole one.
fn body_pieces(
    pieces: mpsc::Receiver<Vec<u8>>,
    complete: Arc<AtomicBool>,
) -> impl futures_util::Stream<Item = io::Result<Vec<u8>>> + Send + 'static {
    futures_util::stream::unfold(Some(pieces), move |state| {
        let complete = Arc::clone(&complete);
        async move {
            let mut pieces = state?;
            match pieces.recv().await {
                Some(piece) => Some((Ok(piece), Some(pieces))),
                None if complete.load(Ordering::Acquire) => None,
                None => Some((
                    Err(io::Error::other("the request body was abandoned")),
                    None,
                )),
            }
        }
    })
}

impl HttpStream {
    /// `options` are the headers for a request to `target`: the git
    /// content types for a POST, and the credential that covers `target`
    /// (chosen for each URL, so a redirect never carries it further).
    fn options(&self, target: &Url, body: Option<Body>) -> io::Result<RequestOptions> {
        let wire = &self.wire;
        let mut headers = HeaderMap::new();
        if self.method == Method::POST {
            let request = format!("application/x-git-{}-request", self.service);
            let result = format!("application/x-git-{}-result", self.service);
            headers.insert(CONTENT_TYPE, header(&request)?);
            headers.insert(ACCEPT, header(&result)?);
        }
        if let Some(credential) = wire.network.access.credential_for(target, self.direction) {
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
        tracing::debug!(target: crate::AUDIT_TARGET, op = wire.op, method = %self.method, url = %display_url(target), "git request");
        Ok(RequestOptions {
            headers,
            body,
            redirect: RedirectRule::None,
            deadline: None,
        })
    }

    /// `sent` maps the outcome of one request to `target` to the response
    /// or the failure's class.
    fn sent(&self, target: &Url, sent: Result<Response, NetError>) -> io::Result<Response> {
        sent.map_err(|error| {
            let class = if error.refusal().is_some() {
                NetClass::Refused
            } else {
                NetClass::Unreachable
            };
            self.wire
                .fail(class, &format!("{}: {error}", display_url(target)))
        })
    }

    /// `send_now` sends one request to `target` and waits for its answer.
    fn send_now(&self, target: &Url, body: Option<Body>) -> io::Result<Response> {
        let options = self.options(target, body)?;
        let net = &self.wire.network.net;
        let sent =
            self.wire
                .network
                .handle
                .block_on(net.request(self.method.clone(), target, options));
        self.sent(target, sent)
    }

    /// `advertise` sends the GET for `info/refs`, following redirects the
    /// way the module documentation says, and remembers a moved base.
    fn advertise(&self) -> io::Result<Response> {
        let first = self.target.clone();
        let mut target = first.clone();
        let most = self.wire.network.net.policy().max_redirects;
        let mut hops = 0;
        loop {
            let response = self.send_now(&target, None)?;
            if !response.status().is_redirection() {
                let response = self.judge(response, &target)?;
                if target != first {
                    let Some(moved) = moved_base(&first, &target) else {
                        return Err(self.wire.fail(
                            NetClass::Unreachable,
                            &format!(
                                "{} was redirected to {}, which is not a repository's info/refs",
                                display_url(&first),
                                display_url(&target)
                            ),
                        ));
                    };
                    tracing::info!(target: crate::AUDIT_TARGET, op = self.wire.op, from = %display_url(&self.asked), to = %display_url(&moved), "remote moved; later requests go to the new URL");
                    self.wire.record_move(self.asked.clone(), moved);
                }
                return Ok(response);
            }
            let next = self.redirect(&response, &first, &target, hops, most)?;
            hops += 1;
            target = next;
        }
    }

    /// `redirect` judges the redirect `response` (to `target`, after
    /// `hops` others of at most `most`) and names the next URL to ask.
    fn redirect(
        &self,
        response: &Response,
        first: &Url,
        target: &Url,
        hops: usize,
        most: usize,
    ) -> io::Result<Url> {
        let shown = display_url(target);
        let Some(next) = response
            .headers()
            .get(LOCATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|location| target.join(location).ok())
        else {
            return Err(self.wire.fail(
                NetClass::Unreachable,
                &format!(
                    "{shown} answered {} without a usable Location",
                    response.status()
                ),
            ));
        };
        let refused = |why: String| {
            self.wire.fail(
                NetClass::Refused,
                &format!("{shown} redirected to {}: {why}", display_url(&next)),
            )
        };
        if hops >= most {
            return Err(refused(format!("more than {most} redirects")));
        }
        if !same_origin(first, &next) {
            return Err(refused(
                "a redirect to another scheme, host or port is not followed".to_owned(),
            ));
        }
        if let Err(refusal) = self
            .wire
            .network
            .access
            .check_url(next.as_str(), self.direction)
        {
            return Err(refused(refusal.0.to_owned()));
        }
        tracing::info!(target: crate::AUDIT_TARGET, op = self.wire.op, from = %shown, to = %display_url(&next), "following a redirect");
        Ok(next)
    }

    /// `judge` accepts a git answer from `target`: a success status and the
    /// content type of the smart protocol. Anything else becomes a class.
    fn judge(&self, response: Response, target: &Url) -> io::Result<Response> {
        let wire = &self.wire;
        let shown = display_url(target);
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

    /// `start_upload` starts the POST with a streamed body on the runtime.
    fn start_upload(&self) -> io::Result<Upload> {
        let (pieces, receiver) = mpsc::channel(CHANNEL_PIECES);
        let complete = Arc::new(AtomicBool::new(false));
        let body = Body::wrap_stream(body_pieces(receiver, Arc::clone(&complete)));
        let options = self.options(&self.target, Some(body))?;
        let net = self.wire.network.net.clone();
        let (method, target) = (self.method.clone(), self.target.clone());
        let answer = self
            .wire
            .network
            .handle
            .spawn(async move { net.request(method, &target, options).await });
        Ok(Upload {
            pieces,
            complete,
            answer,
        })
    }

    /// `stream` passes `data` on to the streamed body piece by piece,
    /// waiting while the channel is full (at most the policy's timeout: a
    /// server that stops taking the body fails the request).
    fn stream(&mut self, data: &[u8]) -> io::Result<()> {
        let Phase::Streaming(upload) = &self.phase else {
            return Err(io::Error::other("no upload is underway"));
        };
        let wait = self.wire.network.net.policy().timeout;
        for piece in data.chunks(PIECE_BYTES) {
            let sent = self.wire.network.handle.block_on(tokio::time::timeout(
                wait,
                upload.pieces.send(piece.to_vec()),
            ));
            match sent {
                Ok(Ok(())) => {}
                Ok(Err(_closed)) => return Err(self.ended_early()),
                Err(_elapsed) => {
                    self.phase = Phase::Failed;
                    return Err(self.wire.fail(
                        NetClass::Unreachable,
                        &format!(
                            "{} took none of the body for {wait:?}",
                            display_url(&self.target)
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// `ended_early` is the error for a request that ended while its body
    /// was still being written: its own failure, or the server's early
    /// answer judged.
    fn ended_early(&mut self) -> io::Error {
        let Phase::Streaming(upload) = std::mem::replace(&mut self.phase, Phase::Failed) else {
            return io::Error::other("no upload is underway");
        };
        let error = match self.finish(upload) {
            Ok(_) => self.wire.fail(
                NetClass::Unreachable,
                &format!(
                    "{} answered before the request body was sent",
                    display_url(&self.target)
                ),
            ),
            Err(error) => error,
        };
        self.phase = Phase::Failed;
        error
    }

    /// `finish` ends the streamed body cleanly and waits for the answer.
    fn finish(&self, upload: Upload) -> io::Result<Response> {
        let Upload {
            pieces,
            complete,
            answer,
        } = upload;
        complete.store(true, Ordering::Release);
        drop(pieces);
        let outcome = match self.wire.network.handle.block_on(answer) {
            Ok(sent) => sent,
            Err(error) => {
                return Err(self.wire.fail(
                    NetClass::Unreachable,
                    &format!(
                        "{}: the request task ended: {error}",
                        display_url(&self.target)
                    ),
                ));
            }
        };
        let response = self.sent(&self.target, outcome)?;
        self.judge(response, &self.target)
    }

    /// `answer` finishes the request however it stands and returns the
    /// response to read.
    fn answer(&mut self) -> io::Result<&mut Response> {
        let phase = std::mem::replace(&mut self.phase, Phase::Failed);
        let response = match phase {
            Phase::Reading(response) => response,
            Phase::Failed => return Err(io::Error::other("the request failed")),
            Phase::Gathering(body) if self.method == Method::POST => {
                let response = self.send_now(&self.target, Some(body.into()))?;
                self.judge(response, &self.target)?
            }
            Phase::Gathering(_) => self.advertise()?,
            Phase::Streaming(upload) => self.finish(upload)?,
        };
        self.phase = Phase::Reading(response);
        match &mut self.phase {
            Phase::Reading(response) => Ok(response),
            _ => Err(io::Error::other("the request failed")),
        }
    }
}

/// `same_origin` says whether `next` has the scheme, host and port of
/// `first`: the only redirects a git request follows.
fn same_origin(first: &Url, next: &Url) -> bool {
    first.scheme() == next.scheme()
        && first.host_str().map(str::to_ascii_lowercase)
            == next.host_str().map(str::to_ascii_lowercase)
        && first.port_or_known_default() == next.port_or_known_default()
}

/// `moved_base` is the repository URL a redirect of `first` (an
/// `…/info/refs?service=…` URL) to `last` reveals: `last` must end the way
/// `first` does, path and query, as git requires; what comes before is the
/// new base.
fn moved_base(first: &Url, last: &Url) -> Option<Url> {
    const TAIL: &str = "/info/refs";
    if first.query() != last.query() {
        return None;
    }
    let path = last.path().strip_suffix(TAIL)?;
    if path.is_empty() || path == "/" {
        return None;
    }
    let mut base = last.clone();
    base.set_path(path);
    base.set_query(None);
    base.set_fragment(None);
    Some(base)
}

fn header(text: &str) -> io::Result<HeaderValue> {
    HeaderValue::from_str(text).map_err(io::Error::other)
}

impl Read for HttpStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.position >= self.pending.len() {
            let handle = self.wire.network.handle.clone();
            let chunk = handle.block_on(self.answer()?.chunk());
            match chunk {
                Ok(Some(bytes)) => {
                    self.pending = bytes.to_vec();
                    self.position = 0;
                }
                Ok(None) => return Ok(0),
                Err(error) => {
                    self.phase = Phase::Failed;
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
        if self.method != Method::POST {
            return Err(io::Error::other("a GET carries no body"));
        }
        match &mut self.phase {
            Phase::Gathering(body) if body.len() + data.len() <= POST_BUFFER_BYTES => {
                body.extend_from_slice(data);
            }
            Phase::Gathering(body) => {
                let gathered = std::mem::take(body);
                let upload = match self.start_upload() {
                    Ok(upload) => upload,
                    Err(error) => {
                        self.phase = Phase::Failed;
                        return Err(error);
                    }
                };
                self.phase = Phase::Streaming(upload);
                self.stream(&gathered)?;
                self.stream(data)?;
            }
            Phase::Streaming(_) => self.stream(data)?,
            Phase::Reading(_) | Phase::Failed => {
                return Err(io::Error::other("the request was already sent"));
            }
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).expect("the table holds URLs")
    }

    #[test]
    fn a_redirect_reveals_the_new_base_only_when_it_ends_like_the_request() {
        let first = url("https://h.example/old/repo.git/info/refs?service=git-upload-pack");
        for (last, expected) in [
            (
                "https://h.example/new/repo.git/info/refs?service=git-upload-pack",
                Some("https://h.example/new/repo.git"),
            ),
            (
                "https://h.example/r/info/refs?service=git-upload-pack",
                Some("https://h.example/r"),
            ),
            (
                "https://h.example/new/repo.git/info/refs?service=git-receive-pack",
                None,
            ),
            ("https://h.example/new/repo.git/info/refs", None),
            (
                "https://h.example/new/repo.git/refs?service=git-upload-pack",
                None,
            ),
            ("https://h.example/info/refs?service=git-upload-pack", None),
        ] {
            assert_eq!(
                moved_base(&first, &url(last)).map(String::from),
                expected.map(str::to_owned),
                "{last}"
            );
        }
    }

    async fn drained(complete: bool) -> Vec<io::Result<Vec<u8>>> {
        use futures_util::StreamExt as _;
        let (pieces, receiver) = mpsc::channel(CHANNEL_PIECES);
        let done = Arc::new(AtomicBool::new(false));
        let stream = body_pieces(receiver, Arc::clone(&done));
        pieces.send(b"one".to_vec()).await.expect("sent");
        pieces.send(b"two".to_vec()).await.expect("sent");
        done.store(complete, Ordering::Release);
        drop(pieces);
        stream.collect().await
    }

    #[tokio::test]
    async fn a_finished_body_ends_cleanly_and_an_abandoned_one_ends_in_an_error() {
        let finished = drained(true).await;
        assert_eq!(
            finished
                .into_iter()
                .map(|piece| piece.expect("no error"))
                .collect::<Vec<_>>(),
            vec![b"one".to_vec(), b"two".to_vec()]
        );
        let abandoned = drained(false).await;
        assert_eq!(abandoned.len(), 3, "two pieces and the error");
        assert!(abandoned[..2].iter().all(Result::is_ok));
        assert!(abandoned[2].is_err(), "a cut body never ends cleanly");
    }

    #[test]
    fn only_the_same_scheme_host_and_port_count_as_the_same_origin() {
        let first = url("https://git.example.org/a.git/info/refs");
        for (next, expected) in [
            ("https://git.example.org/b.git/info/refs", true),
            ("https://GIT.example.org:443/b.git", true),
            ("https://git.example.org:8443/b.git", false),
            ("http://git.example.org/b.git", false),
            ("https://other.example.org/b.git", false),
            ("https://git.example.org.evil.net/b.git", false),
        ] {
            assert_eq!(same_origin(&first, &url(next)), expected, "{next}");
        }
    }
}
