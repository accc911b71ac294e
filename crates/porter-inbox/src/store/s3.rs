//! Blobs in S3-compatible object storage (AWS S3, Garage, MinIO, …), for
//! gateways that share one inbox.
//!
//! Layout under the configured prefix:
//!
//! - `runs/<run>/inbox/<path>`: committed files, one object each;
//! - `staging/<run>/<host>.<pid>.<instance>.<unique>.part`: a large capture
//!   after its multipart upload completed, before it is copied to its name;
//! - `staging/<run>/<host>.<pid>.<instance>.<unique>.upload`: a small marker
//!   holding the id of a multipart upload in progress, so that the upload of
//!   a process killed mid-write can be aborted at the next start (the
//!   client crate cannot list uploads).
//!
//! A capture is buffered up to [`PART_SIZE`]; a smaller one is put straight
//! under its name at commit, a larger one goes up part by part (never more
//! than one part in memory) and is copied to its name at commit.
//!
//! Names are never replaced. A store that honours `If-None-Match: *` (AWS S3
//! since 2024) gets conditional puts and copies; one that ignores it (Garage
//! 2.x answers 200 and overwrites) is detected by a probe at open, and then
//! a name is claimed by a `HEAD` and the write while this process holds the
//! name (writes of other names go on meanwhile). That is exact within one
//! process; processes sharing records on PostgreSQL claim each name there
//! first ([`crate::store::SharedBudget::claim_name`]), so two replicas never write
//! the same name.
//!
//! The [`Blobs`] trait is synchronous, so, as the PostgreSQL store does, the
//! store runs every request on a small runtime of its own and waits for the
//! answer on a plain channel.

use std::collections::HashSet;
use std::future::Future;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt as _;
use object_store::aws::{AmazonS3, AmazonS3Builder, S3ConditionalPut, S3CopyIfNotExists};
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path;
use object_store::{
    CopyMode, CopyOptions, ObjectStore, ObjectStoreExt as _, PutMode, PutOptions, PutPayload,
};
use porter_net::Secret;

use super::{BlobReader, Blobs, Staged};
use crate::model::{InboxError, RunId};
use crate::names::is_inbox_path;

/// `PART_SIZE` is the most of a capture held in memory: a capture larger
/// than this goes up in parts of this size.
pub const PART_SIZE: usize = 8 * 1024 * 1024;

/// How much one read of a stored object fetches at a time.
const READ_CHUNK: u64 = 4 * 1024 * 1024;

/// How long one request may take before it fails with a message.
const CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// A staged object or upload of another machine counts as abandoned once it
/// is this old (one of this machine's is judged by its process instead).
const STALE_AFTER: Duration = Duration::from_secs(60 * 60);

/// `S3Settings` says where the bucket is and how to sign requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Settings {
    /// `http://127.0.0.1:3900`, `https://s3.eu-west-1.amazonaws.com`, …
    pub endpoint: String,
    /// The bucket's name.
    pub bucket: String,
    /// The region requests are signed for.
    pub region: String,
    /// Where in the bucket this gateway's objects go (`porter/prod`), or
    /// empty for the bucket's root.
    pub prefix: String,
    /// The access key's id.
    pub access_key_id: String,
    /// The access key's secret: never shown.
    pub secret_access_key: Secret,
    /// `true`: `endpoint/bucket/key` (Garage, MinIO); `false`:
    /// `bucket.endpoint/key`.
    pub path_style: bool,
}

impl S3Settings {
    /// `s3://bucket/prefix at endpoint`: what messages show.
    #[must_use]
    pub fn shown(&self) -> String {
        let prefix = self.prefix.trim_matches('/');
        if prefix.is_empty() {
            format!("s3://{} at {}", self.bucket, self.endpoint)
        } else {
            format!("s3://{}/{prefix} at {}", self.bucket, self.endpoint)
        }
    }
}

/// Whether a name the store can ignore conditional writes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameGuard {
    /// `If-None-Match: *` is honoured: the store refuses to replace a name.
    Conditional,
    /// It is not: a name is claimed by `HEAD` then write, while this
    /// process holds the name.
    ClaimedInProcess,
}

/// `S3Blobs` is the [`Blobs`] store on an S3-compatible bucket.
pub struct S3Blobs {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for S3Blobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Blobs")
            .field("bucket", &self.inner.shown)
            .field("names", &self.inner.guard)
            .finish_non_exhaustive()
    }
}

/// What the store and its staged objects and readers share.
struct Inner {
    /// `Some` until dropped; shut down in the background on drop.
    runtime: Option<tokio::runtime::Runtime>,
    store: Arc<AmazonS3>,
    /// The key prefix, without a trailing `/` (empty: the bucket's root).
    prefix: String,
    /// `<host>.<pid>.<instance>`: whose staged objects are whose.
    writer: Writer,
    guard: NameGuard,
    /// The names being claimed right now (a `HEAD`, then the write) when
    /// the store has no conditional writes; writes of other names go on
    /// meanwhile.
    claims: Mutex<HashSet<Path>>,
    shown: String,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Who wrote a staged object.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Writer {
    host: String,
    pid: u32,
    instance: String,
}

impl Writer {
    fn this_process() -> Self {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|h| {
                h.trim()
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || c == '-' {
                            c
                        } else {
                            '-'
                        }
                    })
                    .collect::<String>()
            })
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "host".to_owned());
        Self {
            host,
            pid: std::process::id(),
            instance: uuid::Uuid::new_v4().simple().to_string()[..12].to_owned(),
        }
    }

    /// `<host>.<pid>.<instance>.<unique>.<ext>`.
    fn name(&self, unique: &str, ext: &str) -> String {
        format!(
            "{}.{}.{}.{unique}.{ext}",
            self.host, self.pid, self.instance
        )
    }

    /// The writer and extension of a staged object's name.
    fn parse(name: &str) -> Option<(Self, &str)> {
        let mut parts = name.rsplitn(5, '.');
        let ext = parts.next()?;
        let _unique = parts.next()?;
        let instance = parts.next()?.to_owned();
        let pid = parts.next()?.parse().ok()?;
        let host = parts.next()?.to_owned();
        Some((
            Self {
                host,
                pid,
                instance,
            },
            ext,
        ))
    }
}

/// A name claimed by one writer of this process (see [`Inner::claim`]).
struct Claim<'a> {
    claims: &'a Mutex<HashSet<Path>>,
    key: Path,
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        self.claims
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&self.key);
    }
}

/// Something a request failed on, made a message by [`Inner::call`].
type Failure = object_store::Error;

impl S3Blobs {
    /// Connects to the bucket in `settings`, checks that it answers (a probe
    /// object is written, read and deleted) and whether it honours
    /// conditional writes. Messages never show the secret.
    pub fn open(settings: &S3Settings) -> Result<Self, InboxError> {
        let shown = settings.shown();
        let _ = rustls::crypto::ring::default_provider().install_default();
        let prefix = settings.prefix.trim_matches('/').to_owned();
        if !prefix.is_empty() && Path::parse(&prefix).is_err() {
            return Err(store_error(format!(
                "the prefix {prefix:?} of {shown} is not a plain key prefix; use letters, digits, '-', '_' and '/' between parts"
            )));
        }
        let store = AmazonS3Builder::new()
            .with_endpoint(&settings.endpoint)
            .with_allow_http(settings.endpoint.starts_with("http://"))
            .with_bucket_name(&settings.bucket)
            .with_region(&settings.region)
            .with_access_key_id(&settings.access_key_id)
            .with_secret_access_key(settings.secret_access_key.expose())
            .with_virtual_hosted_style_request(!settings.path_style)
            .with_conditional_put(S3ConditionalPut::ETagMatch)
            .with_copy_if_not_exists(S3CopyIfNotExists::Multipart)
            .build()
            .map_err(|e| store_error(format!("{shown} cannot be used: {e}")))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("porter-s3")
            .enable_all()
            .build()
            .map_err(|e| store_error(format!("could not start the object store runtime: {e}")))?;
        let mut inner = Inner {
            runtime: Some(runtime),
            store: Arc::new(store),
            prefix,
            writer: Writer::this_process(),
            guard: NameGuard::ClaimedInProcess,
            claims: Mutex::new(HashSet::new()),
            shown,
        };
        inner.guard = inner.probe_guard()?;
        if inner.guard == NameGuard::ClaimedInProcess {
            tracing::info!(
                bucket = %inner.shown,
                "the object store ignores conditional writes (If-None-Match); each name is claimed before it is written"
            );
        }
        Ok(Self {
            inner: Arc::new(inner),
        })
    }

    /// How names are kept from being replaced on this store.
    #[must_use]
    pub fn name_guard(&self) -> NameGuard {
        self.inner.guard
    }

    /// Where the store is, without secrets.
    #[must_use]
    pub fn shown(&self) -> &str {
        &self.inner.shown
    }

    /// The key of a committed file, as the bucket holds it.
    #[must_use]
    pub fn key_of(&self, run: RunId, path: &str) -> String {
        self.inner.inbox_key(run, path).to_string()
    }

    /// Writes, reads back and deletes a probe object: the bucket exists,
    /// the key may write, read and delete there.
    pub fn probe(&self) -> Result<(), InboxError> {
        self.inner.probe_round_trip()
    }
}

impl Inner {
    fn key(&self, rest: &str) -> Path {
        if self.prefix.is_empty() {
            Path::from(rest)
        } else {
            Path::from(format!("{}/{rest}", self.prefix))
        }
    }

    fn inbox_prefix(&self, run: RunId) -> Path {
        self.key(&format!("runs/{run}/inbox"))
    }

    fn inbox_key(&self, run: RunId, path: &str) -> Path {
        self.key(&format!("runs/{run}/inbox/{path}"))
    }

    fn staging_root(&self) -> Path {
        self.key("staging")
    }

    fn staging_prefix(&self, run: RunId) -> Path {
        self.key(&format!("staging/{run}"))
    }

    /// Runs `work` on the store's runtime and waits for its answer, at most
    /// [`CALL_TIMEOUT`].
    fn call<T, Fut>(&self, what: &str, work: Fut) -> Result<T, InboxError>
    where
        T: Send + 'static,
        Fut: Future<Output = Result<T, Failure>> + Send + 'static,
    {
        let Some(runtime) = &self.runtime else {
            return Err(store_error(format!(
                "could not {what}: the object store is closed"
            )));
        };
        let (sender, receiver) = mpsc::sync_channel(1);
        runtime.spawn(async move {
            let answer = tokio::time::timeout(CALL_TIMEOUT, work).await;
            let _ = sender.send(answer);
        });
        match receiver.recv() {
            Ok(Ok(Ok(value))) => Ok(value),
            Ok(Ok(Err(e))) => Err(self.failed(what, &e)),
            Ok(Err(_)) => Err(store_error(format!(
                "could not {what}: {} did not answer within {}s; check that it is up and reachable",
                self.shown,
                CALL_TIMEOUT.as_secs()
            ))),
            Err(_) => Err(store_error(format!(
                "could not {what}: the object store task stopped"
            ))),
        }
    }

    /// A request's failure as a message that says what to check.
    fn failed(&self, what: &str, e: &Failure) -> InboxError {
        let text = e.to_string();
        let hint = if text.contains("403") || text.contains("AccessDenied") {
            "; check the access key id and secret and that the key may use the bucket"
        } else if text.contains("NoSuchBucket") {
            "; check that the bucket exists (create it, or fix storage.s3.bucket)"
        } else if text.contains("error sending request") || text.contains("connect") {
            "; check that the endpoint is up and reachable"
        } else {
            ""
        };
        store_error(format!("could not {what} in {}: {text}{hint}", self.shown))
    }

    /// Whether a second conditional put of the same name is refused.
    fn probe_guard(&self) -> Result<NameGuard, InboxError> {
        let probe = self.key(&format!(
            "staging/probe.{}",
            self.writer
                .name(&uuid::Uuid::now_v7().simple().to_string(), "probe")
        ));
        let store = self.store.clone();
        let at = probe.clone();
        let refused = self.call("check the bucket with a probe object", async move {
            let create = PutOptions::from(PutMode::Create);
            store
                .put_opts(
                    &at,
                    PutPayload::from_static(b"porter probe"),
                    create.clone(),
                )
                .await?;
            let second = store
                .put_opts(&at, PutPayload::from_static(b"porter probe 2"), create)
                .await;
            let refused = match second {
                Err(object_store::Error::AlreadyExists { .. }) => true,
                Ok(_) => false,
                Err(e) => {
                    let _ = store.delete(&at).await;
                    return Err(e);
                }
            };
            store.delete(&at).await?;
            Ok(refused)
        })?;
        Ok(if refused {
            NameGuard::Conditional
        } else {
            NameGuard::ClaimedInProcess
        })
    }

    fn probe_round_trip(&self) -> Result<(), InboxError> {
        let probe = self.key(&format!(
            "staging/probe.{}",
            self.writer
                .name(&uuid::Uuid::now_v7().simple().to_string(), "probe")
        ));
        let store = self.store.clone();
        let body = format!("porter probe {}", uuid::Uuid::now_v7());
        let read = self.call("write, read and delete a probe object", {
            let body = body.clone();
            async move {
                store
                    .put(&probe, PutPayload::from(body.into_bytes()))
                    .await?;
                let read = store.get(&probe).await?.bytes().await;
                store.delete(&probe).await?;
                read
            }
        })?;
        if read.as_ref() == body.as_bytes() {
            Ok(())
        } else {
            Err(store_error(format!(
                "a probe object written to {} read back different bytes",
                self.shown
            )))
        }
    }

    /// Claims the name `key` until the answer is dropped; `None` while
    /// another writer of this process holds it (that writer is about to
    /// put something there, so the name counts as taken).
    fn claim(&self, key: &Path) -> Option<Claim<'_>> {
        let mut claims = self
            .claims
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        claims.insert(key.clone()).then(|| Claim {
            claims: &self.claims,
            key: key.clone(),
        })
    }

    /// Puts `bytes` under `to` unless something is there; `false` if it is.
    /// A name `claimed` in shared records is written without a look first.
    fn create(&self, to: &Path, bytes: Bytes, claimed: bool) -> Result<bool, InboxError> {
        let store = self.store.clone();
        let at = to.clone();
        match self.guard {
            NameGuard::ClaimedInProcess if claimed => self.call("store a file", async move {
                store.put(&at, PutPayload::from(bytes)).await?;
                Ok(true)
            }),
            NameGuard::Conditional => self.call("store a file", async move {
                match store
                    .put_opts(&at, PutPayload::from(bytes), PutMode::Create.into())
                    .await
                {
                    Ok(_) => Ok(true),
                    Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
                    Err(e) => Err(e),
                }
            }),
            NameGuard::ClaimedInProcess => {
                let Some(_claim) = self.claim(to) else {
                    return Ok(false);
                };
                self.call("store a file", async move {
                    if exists(&store, &at).await? {
                        return Ok(false);
                    }
                    store.put(&at, PutPayload::from(bytes)).await?;
                    Ok(true)
                })
            }
        }
    }

    /// Copies `from` to `to` unless something is there; `false` if it is.
    /// A name `claimed` in shared records is written without a look first.
    fn copy_new(&self, from: &Path, to: &Path, claimed: bool) -> Result<bool, InboxError> {
        let store = self.store.clone();
        let (from, to) = (from.clone(), to.clone());
        match self.guard {
            NameGuard::ClaimedInProcess if claimed => self.call("name a stored file", async move {
                store.copy(&from, &to).await?;
                Ok(true)
            }),
            NameGuard::Conditional => self.call("name a stored file", async move {
                let options = CopyOptions::new().with_mode(CopyMode::Create);
                match store.copy_opts(&from, &to, options).await {
                    Ok(()) => Ok(true),
                    Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
                    Err(e) => Err(e),
                }
            }),
            NameGuard::ClaimedInProcess => {
                let Some(_claim) = self.claim(&to) else {
                    return Ok(false);
                };
                self.call("name a stored file", async move {
                    if exists(&store, &to).await? {
                        return Ok(false);
                    }
                    store.copy(&from, &to).await?;
                    Ok(true)
                })
            }
        }
    }

    /// Deletes every object under `prefix`, aborting the multipart upload a
    /// marker names first; answers how many objects went.
    fn delete_under(&self, prefix: &Path, what: &str) -> Result<usize, InboxError> {
        let listed = self.list(prefix, what)?;
        let mut removed = 0;
        for object in listed {
            self.remove_staged_or_object(&object.location, what)?;
            removed += 1;
        }
        Ok(removed)
    }

    fn list(&self, prefix: &Path, what: &str) -> Result<Vec<object_store::ObjectMeta>, InboxError> {
        let store = self.store.clone();
        let prefix = prefix.clone();
        self.call(what, async move {
            let mut stream = store.list(Some(&prefix));
            let mut found = Vec::new();
            while let Some(object) = stream.next().await {
                found.push(object?);
            }
            Ok(found)
        })
    }

    /// Deletes one object; for an upload marker, aborts its upload first.
    fn remove_staged_or_object(&self, key: &Path, what: &str) -> Result<(), InboxError> {
        let store = self.store.clone();
        let key = key.clone();
        self.call(what, async move {
            if let Some(part) = key.as_ref().strip_suffix(".upload")
                && let Ok(got) = store.get(&key).await
            {
                let id = String::from_utf8_lossy(&got.bytes().await?).into_owned();
                let part = Path::from(format!("{part}.part"));
                match store.abort_multipart(&part, &id).await {
                    Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
            match store.delete(&key).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(e),
            }
        })
    }
}

async fn exists(store: &AmazonS3, at: &Path) -> Result<bool, Failure> {
    match store.head(at).await {
        Ok(_) => Ok(true),
        Err(object_store::Error::NotFound { .. }) => Ok(false),
        Err(e) => Err(e),
    }
}

fn store_error(message: String) -> InboxError {
    InboxError::Io(io::Error::other(message))
}

impl Blobs for S3Blobs {
    fn stage(&self, run: RunId) -> Result<Box<dyn Staged>, InboxError> {
        let unique = uuid::Uuid::now_v7().simple().to_string();
        let writer = &self.inner.writer;
        let part = self
            .inner
            .key(&format!("staging/{run}/{}", writer.name(&unique, "part")));
        let marker = self
            .inner
            .key(&format!("staging/{run}/{}", writer.name(&unique, "upload")));
        Ok(Box::new(S3Staged {
            inner: self.inner.clone(),
            run,
            part,
            marker,
            buffer: Vec::new(),
            upload: None,
            staged: None,
            small: None,
            committed: false,
        }))
    }

    fn open(&self, run: RunId, path: &str) -> Result<Box<dyn BlobReader>, InboxError> {
        if !is_inbox_path(path) {
            return Err(InboxError::NoFile {
                run,
                path: path.to_owned(),
            });
        }
        let key = self.inner.inbox_key(run, path);
        let store = self.inner.store.clone();
        let at = key.clone();
        let size = self.inner.call("open a stored file", async move {
            match store.head(&at).await {
                Ok(meta) => Ok(Some(meta.size)),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        })?;
        let Some(size) = size else {
            return Err(InboxError::NoFile {
                run,
                path: path.to_owned(),
            });
        };
        Ok(Box::new(S3Reader {
            inner: self.inner.clone(),
            key,
            size,
            position: 0,
            chunk: Bytes::new(),
            chunk_start: 0,
        }))
    }

    fn remove(&self, run: RunId, path: &str) -> Result<(), InboxError> {
        if !is_inbox_path(path) {
            return Err(InboxError::NoFile {
                run,
                path: path.to_owned(),
            });
        }
        self.inner
            .remove_staged_or_object(&self.inner.inbox_key(run, path), "remove a stored file")
    }

    fn purge(&self, run: RunId) -> Result<(), InboxError> {
        self.inner
            .delete_under(&self.inner.inbox_prefix(run), "purge a run's files")?;
        self.inner.delete_under(
            &self.inner.staging_prefix(run),
            "purge a run's staged files",
        )?;
        Ok(())
    }

    fn remove_stale(&self) -> Result<usize, InboxError> {
        let inner = &self.inner;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        let stale_after = i64::try_from(STALE_AFTER.as_secs()).unwrap_or(i64::MAX);
        let mut removed = 0;
        for object in inner.list(&inner.staging_root(), "look for staged files left behind")? {
            let Some(name) = object.location.filename() else {
                continue;
            };
            let stale = match Writer::parse(name) {
                Some((writer, _)) if writer.host == inner.writer.host => {
                    writer.instance != inner.writer.instance
                        && (writer.pid == inner.writer.pid || !process_alive(writer.pid))
                }
                _ => now - object.last_modified.timestamp() > stale_after,
            };
            if stale {
                inner.remove_staged_or_object(
                    &object.location,
                    "remove a staged file left behind",
                )?;
                removed += 1;
            }
        }
        Ok(removed)
    }

    fn on_local_disk(&self) -> bool {
        false
    }
}

/// Whether a process of this machine may still be writing.
fn process_alive(pid: u32) -> bool {
    std::path::Path::new("/proc").join(pid.to_string()).exists()
}

/// A multipart upload in progress.
struct Upload {
    id: String,
    parts: Vec<PartId>,
}

/// A capture being written: buffered up to [`PART_SIZE`], then uploaded
/// part by part.
struct S3Staged {
    inner: Arc<Inner>,
    run: RunId,
    /// Where the multipart upload goes (the staged object).
    part: Path,
    /// The marker that names the upload while it is in progress.
    marker: Path,
    buffer: Vec<u8>,
    upload: Option<Upload>,
    /// The staged object, once its upload is complete.
    staged: Option<Path>,
    /// A capture that fit one part, frozen at the first commit try.
    small: Option<Bytes>,
    committed: bool,
}

impl S3Staged {
    /// Sends the buffer as the next part, starting the upload (and its
    /// marker) first if this is the first.
    fn send_part(&mut self) -> Result<(), InboxError> {
        if self.upload.is_none() {
            let store = self.inner.store.clone();
            let (part, marker) = (self.part.clone(), self.marker.clone());
            let id = self.inner.call("start an upload", async move {
                let id = store.create_multipart(&part).await?;
                if let Err(e) = store
                    .put(&marker, PutPayload::from(id.clone().into_bytes()))
                    .await
                {
                    let _ = store.abort_multipart(&part, &id).await;
                    return Err(e);
                }
                Ok(id)
            })?;
            self.upload = Some(Upload {
                id,
                parts: Vec::new(),
            });
        }
        let Some(upload) = &mut self.upload else {
            return Ok(());
        };
        let data = Bytes::from(std::mem::take(&mut self.buffer));
        let store = self.inner.store.clone();
        let (part, id, index) = (self.part.clone(), upload.id.clone(), upload.parts.len());
        let sent = self.inner.call("upload a part", async move {
            store
                .put_part(&part, &id, index, PutPayload::from(data))
                .await
        })?;
        upload.parts.push(sent);
        Ok(())
    }

    /// Completes the upload (once): the staged object then exists and its
    /// marker goes.
    fn finish_upload(&mut self) -> Result<Path, InboxError> {
        if let Some(staged) = &self.staged {
            return Ok(staged.clone());
        }
        if !self.buffer.is_empty() {
            self.send_part()?;
        }
        let Some(upload) = self.upload.take() else {
            return Err(store_error("no upload to complete".to_owned()));
        };
        let store = self.inner.store.clone();
        let (part, marker) = (self.part.clone(), self.marker.clone());
        self.inner.call("complete an upload", async move {
            store
                .complete_multipart(&part, &upload.id, upload.parts)
                .await?;
            match store.delete(&marker).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(e),
            }
        })?;
        self.staged = Some(self.part.clone());
        Ok(self.part.clone())
    }
}

impl Write for S3Staged {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.committed || self.staged.is_some() || self.small.is_some() {
            return Err(io::Error::other(
                "the staged file is already being committed",
            ));
        }
        let room = PART_SIZE - self.buffer.len();
        let taken = buf.len().min(room);
        let needed = self.buffer.len() + taken;
        if needed > self.buffer.capacity() {
            // Grow by doubling, but never past one part.
            let target = PART_SIZE.min(needed.max(2 * self.buffer.capacity()).max(64 * 1024));
            self.buffer.reserve_exact(target - self.buffer.len());
        }
        self.buffer.extend_from_slice(&buf[..taken]);
        if self.buffer.len() == PART_SIZE {
            self.send_part().map_err(io::Error::other)?;
        }
        Ok(taken)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Staged for S3Staged {
    fn commit(&mut self, path: &str) -> Result<bool, InboxError> {
        self.commit_as(path, false)
    }

    fn commit_claimed(&mut self, path: &str) -> Result<bool, InboxError> {
        self.commit_as(path, true)
    }
}

impl S3Staged {
    /// [`Staged::commit`], told whether the name is `claimed` in shared
    /// records (then no other writer can hold it, and it is not looked up).
    fn commit_as(&mut self, path: &str, claimed: bool) -> Result<bool, InboxError> {
        if self.committed || !is_inbox_path(path) {
            return Err(
                io::Error::other(format!("cannot commit a staged file as {path:?}")).into(),
            );
        }
        let target = self.inner.inbox_key(self.run, path);
        let created = if self.upload.is_some() || self.staged.is_some() {
            let staged = self.finish_upload()?;
            let created = self.inner.copy_new(&staged, &target, claimed)?;
            if created {
                self.inner
                    .remove_staged_or_object(&staged, "remove a staged file")?;
            }
            created
        } else {
            let bytes = if let Some(bytes) = &self.small {
                bytes.clone()
            } else {
                let bytes = Bytes::from(std::mem::take(&mut self.buffer));
                self.small = Some(bytes.clone());
                bytes
            };
            self.inner.create(&target, bytes, claimed)?
        };
        self.committed = created;
        Ok(created)
    }
}

impl Drop for S3Staged {
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        if let Some(upload) = self.upload.take() {
            let store = self.inner.store.clone();
            let (part, marker) = (self.part.clone(), self.marker.clone());
            let _ = self.inner.call("abort an upload", async move {
                let _ = store.abort_multipart(&part, &upload.id).await;
                let _ = store.delete(&marker).await;
                Ok(())
            });
        }
        if let Some(staged) = self.staged.take() {
            let _ = self
                .inner
                .remove_staged_or_object(&staged, "remove a staged file");
        }
    }
}

/// A stored object read in ranged requests of [`READ_CHUNK`] bytes, at most
/// one chunk held at a time.
struct S3Reader {
    inner: Arc<Inner>,
    key: Path,
    size: u64,
    position: u64,
    chunk: Bytes,
    chunk_start: u64,
}

impl Read for S3Reader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() || self.position >= self.size {
            return Ok(0);
        }
        let chunk_end = self.chunk_start + self.chunk.len() as u64;
        if self.position < self.chunk_start || self.position >= chunk_end {
            let end = self.size.min(self.position + READ_CHUNK);
            let store = self.inner.store.clone();
            let key = self.key.clone();
            let range = self.position..end;
            self.chunk = self
                .inner
                .call("read a stored file", async move {
                    store.get_range(&key, range).await
                })
                .map_err(io::Error::other)?;
            self.chunk_start = self.position;
            if self.chunk.is_empty() {
                return Ok(0);
            }
        }
        let offset = usize::try_from(self.position - self.chunk_start).map_err(io::Error::other)?;
        let available = &self.chunk[offset..];
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.position += n as u64;
        Ok(n)
    }
}

impl Seek for S3Reader {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(delta) => self.size.checked_add_signed(delta),
            SeekFrom::Current(delta) => self.position.checked_add_signed(delta),
        };
        let target = target
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        self.position = target;
        Ok(target)
    }
}

impl BlobReader for S3Reader {
    fn size(&self) -> u64 {
        self.size
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead as _, BufReader, Read as _, Write as _};
    use std::net::{TcpListener, TcpStream};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Condvar, Mutex};
    use std::time::{Duration, Instant};

    use super::{NameGuard, S3Blobs, S3Settings, Secret, Writer};
    use crate::model::RunId;
    use crate::store::Blobs as _;

    /// A bucket that ignores conditional writes, as Garage 2.x does: every
    /// PUT is answered 200, every HEAD 404 (nothing is there yet), every
    /// delete as done. A PUT of a run's file is held until another is in flight
    /// (or `HOLD` has passed), and the most PUTs in flight at once are
    /// counted, and so are the HEADs.
    struct Bucket {
        endpoint: String,
        most: Arc<AtomicUsize>,
        heads: Arc<AtomicUsize>,
    }

    const HOLD: Duration = Duration::from_secs(3);

    impl Bucket {
        fn start() -> Self {
            let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
            let endpoint = format!("http://{}", listener.local_addr().expect("its address"));
            let in_flight = Arc::new((Mutex::new(0), Condvar::new()));
            let (most, heads) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
            let bucket = Self {
                endpoint,
                most: Arc::clone(&most),
                heads: Arc::clone(&heads),
            };
            std::thread::spawn(move || {
                for stream in listener.incoming().flatten() {
                    let (in_flight, most) = (Arc::clone(&in_flight), Arc::clone(&most));
                    let heads = Arc::clone(&heads);
                    std::thread::spawn(move || answer(stream, &in_flight, &most, &heads));
                }
            });
            bucket
        }
    }

    /// Reads one request from `stream` and answers it (then closes).
    fn answer(
        stream: TcpStream,
        in_flight: &(Mutex<usize>, Condvar),
        most: &AtomicUsize,
        heads: &AtomicUsize,
    ) {
        let mut reader = BufReader::new(stream);
        let mut head = String::new();
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
            if head.is_empty() {
                head = line;
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let mut parts = head.split(' ');
        let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let status = match method {
            "PUT" if path.contains("/runs/") => {
                let (count, changed) = in_flight;
                let mut now = count.lock().expect("the count");
                *now += 1;
                most.fetch_max(*now, Ordering::SeqCst);
                changed.notify_all();
                let until = Instant::now() + HOLD;
                while most.load(Ordering::SeqCst) < 2 && Instant::now() < until {
                    now = changed
                        .wait_timeout(now, until - Instant::now())
                        .expect("the count")
                        .0;
                }
                *now -= 1;
                "200 OK"
            }
            "PUT" => "200 OK",
            "HEAD" => {
                heads.fetch_add(1, Ordering::SeqCst);
                "404 Not Found"
            }
            "DELETE" => "204 No Content",
            // A batch delete (`POST ?delete`): every key went.
            "POST" if path.ends_with("?delete") => "200 OK",
            _ => "400 Bad Request",
        };
        let body = if method == "POST" {
            let asked = String::from_utf8_lossy(&body).into_owned();
            let mut deleted = String::new();
            for (key, _) in asked
                .split("<Key>")
                .skip(1)
                .filter_map(|rest| rest.split_once("</Key>"))
            {
                deleted.push_str("<Deleted><Key>");
                deleted.push_str(key);
                deleted.push_str("</Key></Deleted>");
            }
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?><DeleteResult>{deleted}</DeleteResult>"
            )
        } else {
            String::new()
        };
        let mut stream = reader.into_inner();
        let _ = write!(
            stream,
            "HTTP/1.1 {status}\r\nETag: \"e\"\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
    }

    fn open(bucket: &Bucket) -> S3Blobs {
        let blobs = S3Blobs::open(&S3Settings {
            endpoint: bucket.endpoint.clone(),
            bucket: "porter".to_owned(),
            region: "us-east-1".to_owned(),
            prefix: String::new(),
            access_key_id: "key".to_owned(),
            secret_access_key: Secret::new("secret"),
            path_style: true,
        })
        .expect("the bucket opens");
        assert_eq!(blobs.name_guard(), NameGuard::ClaimedInProcess);
        blobs
    }

    /// Two writers committing `names` at once: whether each kept its name.
    fn commit_at_once(blobs: &S3Blobs, names: [&str; 2]) -> Vec<bool> {
        let run = RunId::new();
        std::thread::scope(|scope| {
            let writers: Vec<_> = names
                .into_iter()
                .map(|name| {
                    scope.spawn(move || {
                        let mut staged = blobs.stage(run).expect("a staged file");
                        staged.write_all(name.as_bytes()).expect("written");
                        staged.commit(name).expect("committed")
                    })
                })
                .collect();
            writers
                .into_iter()
                .map(|w| w.join().expect("no panic"))
                .collect()
        })
    }

    #[test]
    fn captures_of_different_names_go_up_at_once_on_a_store_without_conditional_writes() {
        let bucket = Bucket::start();
        let blobs = open(&bucket);
        let created = commit_at_once(&blobs, ["file-0.bin", "file-1.bin"]);
        assert_eq!(created, [true, true]);
        assert_eq!(
            bucket.most.load(Ordering::SeqCst),
            2,
            "the second file waited for the first one's upload"
        );
    }

    #[test]
    fn of_two_writers_of_one_name_at_once_one_keeps_it_and_the_other_hears_it_is_taken() {
        // The bucket never holds anything (its HEAD says so) and keeps the
        // first PUT waiting: only this process's claim can tell the second
        // writer that the name is being written.
        let bucket = Bucket::start();
        let blobs = open(&bucket);
        let mut created = commit_at_once(&blobs, ["same.bin", "same.bin"]);
        created.sort_unstable();
        assert_eq!(created, [false, true]);
        assert_eq!(bucket.most.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_name_claimed_in_shared_records_goes_up_without_a_look_first() {
        let bucket = Bucket::start();
        let blobs = open(&bucket);
        let run = RunId::new();
        let heads_after = |name: &str, claimed: bool| {
            let mut staged = blobs.stage(run).expect("a staged file");
            staged.write_all(b"bytes").expect("written");
            let committed = if claimed {
                staged.commit_claimed(name)
            } else {
                staged.commit(name)
            };
            assert!(committed.expect("committed"), "{name} was not kept");
            bucket.heads.load(Ordering::SeqCst)
        };
        assert_eq!(
            heads_after("looked-up.bin", false),
            1,
            "a plain commit looks first"
        );
        assert_eq!(
            heads_after("claimed.bin", true),
            1,
            "a claimed name was looked up"
        );
    }

    #[test]
    fn a_staged_name_tells_its_writer_even_with_dots_in_the_host() {
        let writer = Writer {
            host: "gw.example.org".to_owned(),
            pid: 4242,
            instance: "abc123".to_owned(),
        };
        let name = writer.name("0190aa", "upload");
        let (parsed, ext) = Writer::parse(&name).expect("parses");
        assert_eq!(parsed, writer);
        assert_eq!(ext, "upload");
        assert!(Writer::parse("nonsense").is_none());
    }
}
