//! The gateway's configuration (`porter.yaml`): upstream MCP servers,
//! durable volumes, profiles of grants, API keys and the inbox limits.
//!
//! Reading is strict on purpose: an unknown key is refused with its path and
//! the nearest known key, so a typo never silently turns a protection off.
//! The library never reads the environment itself; the binary passes a
//! lookup (`|k| std::env::var(k).ok()`) that resolves `${ENV_NAME}` in API
//! keys and the `PORTER_FILE_MAX_BYTES` / `PORTER_FILE_INBOX_MAX_BYTES`
//! overrides.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `FILE_MAX_BYTES_VAR` overrides `limits.file_max_bytes`, as the spec names it.
pub const FILE_MAX_BYTES_VAR: &str = "PORTER_FILE_MAX_BYTES";
/// `INBOX_MAX_BYTES_VAR` overrides `limits.inbox_max_bytes`.
pub const INBOX_MAX_BYTES_VAR: &str = "PORTER_FILE_INBOX_MAX_BYTES";
/// `INBOX_VOLUME` is the name of every run's inbox; no configured volume may
/// take it, so `volume:inbox:` always means the inbox.
pub const INBOX_VOLUME: &str = "inbox";

/// `Config` is the whole file; every field has a default, so an empty file
/// (or none) is the embedded defaults: no upstream servers, no volumes, no
/// API keys, the default limits.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Where runs, records and inbox files live (default: the platform data
    /// dir, or `PORTER_DATA_DIR`).
    pub data_dir: Option<PathBuf>,
    /// The upstream MCP servers, by name. Their tools are listed to the client
    /// as `mcp__<name>__<tool>`, so a name holds only letters, digits, `_` and
    /// `-`, and never `__`.
    pub mcp_servers: BTreeMap<String, McpServer>,
    /// Durable folders on this machine that `File` can look into and `keep`
    /// files to, by name (`volume:<name>:<path>`). The name `inbox` is
    /// reserved for the run's own inbox.
    pub volumes: BTreeMap<String, Volume>,
    /// Named sets of grants and volumes that API keys refer to.
    pub profiles: BTreeMap<String, Profile>,
    /// The API keys that may call the HTTP API and own runs.
    pub api_keys: Vec<ApiKey>,
    /// What one run's inbox may hold and how long it outlives the run.
    pub limits: LimitsConfig,
    /// The network policy of every request the gateway makes for a run
    /// (`HTTP`, `WebFetch`, `File download`/`upload`).
    pub http: HttpConfig,
    /// The `Git` tool: the hosts it may fetch from and push to, the identity
    /// of its commits, and the credentials it may send.
    pub git: GitConfig,
    /// The operator's hooks that judge network operations before they run.
    pub hooks: HooksConfig,
    /// Where runs, file records and events are kept (the embedded SQLite
    /// file by default, or a PostgreSQL database several gateways can
    /// share), and where the inbox's bytes are (the data dir by default, or
    /// an S3-compatible bucket).
    pub storage: StorageConfig,
}

/// `StorageConfig` chooses the record store and the blob store.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct StorageConfig {
    /// `sqlite` (default: a file in the data dir) or `postgres` (the database
    /// `postgres_url` names).
    pub records: RecordsBackend,
    /// The PostgreSQL database when `records: postgres`:
    /// `postgres://user:password@host:5432/database`. Write the password (or
    /// the whole URL) as `${ENV_NAME}` to read it from the environment; it is
    /// never logged or shown in a message.
    pub postgres_url: Option<String>,
    /// `postgres_url` with its `${ENV}` resolved, set when the config is
    /// loaded.
    #[serde(skip)]
    #[schemars(skip)]
    pub resolved_postgres_url: Option<SecretUrl>,
    /// `local` (default: files under the data dir) or `s3` (the bucket
    /// `s3` names).
    pub blobs: BlobsBackend,
    /// The S3-compatible bucket when `blobs: s3`.
    pub s3: Option<S3Config>,
    /// `s3` with its `${ENV}` resolved and checked, set when the config is
    /// loaded.
    #[serde(skip)]
    #[schemars(skip)]
    pub resolved_s3: Option<porter_inbox::S3Settings>,
}

/// `BlobsBackend` is where the inbox's bytes are kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BlobsBackend {
    /// Files under the data dir (`runs/<run>/inbox/`).
    #[default]
    Local,
    /// An S3-compatible bucket (`storage.s3`).
    S3,
}

/// `S3Config` is an S3-compatible bucket (AWS S3, Garage, MinIO, …).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct S3Config {
    /// The S3 API's base URL: `http://127.0.0.1:3900`,
    /// `https://s3.eu-west-1.amazonaws.com`.
    pub endpoint: String,
    /// The bucket's name (it must exist).
    pub bucket: String,
    /// The region requests are signed for (default `us-east-1`; Garage's is
    /// its `s3_region`, often `garage`).
    pub region: Option<String>,
    /// A key prefix for every object this gateway writes (`porter/prod`);
    /// default: the bucket's root.
    pub prefix: Option<String>,
    /// The access key's id, or `${ENV_NAME}` to read it from the
    /// environment.
    pub access_key_id: String,
    /// The access key's secret, or `${ENV_NAME}` to read it from the
    /// environment (recommended); never logged or shown in a message.
    #[schemars(with = "String")]
    pub secret_access_key: porter_net::Secret,
    /// `true` (default): `endpoint/bucket/key`, what Garage and MinIO
    /// expect; `false`: `bucket.endpoint/key` (virtual-hosted).
    pub path_style: Option<bool>,
}

impl S3Config {
    /// Checks every key and resolves the credentials through `vars`; an
    /// error names the key at fault and never shows the secret.
    fn resolve(
        &self,
        vars: &dyn Fn(&str) -> Option<String>,
    ) -> Result<porter_inbox::S3Settings, ConfigError> {
        let invalid = |key: &str, message: String| ConfigError::Invalid {
            key: format!("storage.s3.{key}"),
            message,
        };
        let endpoint = self.endpoint.trim().trim_end_matches('/').to_owned();
        let parsed = url::Url::parse(&endpoint).map_err(|e| {
            invalid(
                "endpoint",
                format!("{endpoint:?} is not a URL ({e}); write http://host:port or https://host"),
            )
        })?;
        if !matches!(parsed.scheme(), "http" | "https")
            || parsed.host_str().is_none_or(str::is_empty)
            || !parsed.username().is_empty()
            || parsed.password().is_some()
            || parsed.query().is_some()
        {
            return Err(invalid(
                "endpoint",
                format!(
                    "{} is not an http:// or https:// URL with a host and nothing else; write http://host:port or https://host (credentials go in access_key_id and secret_access_key)",
                    parsed.origin().ascii_serialization()
                ),
            ));
        }
        let bucket = self.bucket.trim();
        if !(3..=63).contains(&bucket.len())
            || !bucket
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
            || bucket.starts_with(['-', '.'])
            || bucket.ends_with(['-', '.'])
        {
            return Err(invalid(
                "bucket",
                format!(
                    "{bucket:?} is not a bucket name; write 3 to 63 lower-case letters, digits, '-' or '.'"
                ),
            ));
        }
        let prefix = self
            .prefix
            .as_deref()
            .unwrap_or("")
            .trim()
            .trim_matches('/');
        if !prefix.is_empty()
            && !prefix.split('/').all(|part| {
                !part.is_empty()
                    && part != "."
                    && part != ".."
                    && part
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
            })
        {
            return Err(invalid(
                "prefix",
                format!(
                    "{prefix:?} is not a key prefix; write parts of letters, digits, '-', '_' or '.' between '/', e.g. porter/prod"
                ),
            ));
        }
        let credential = |key: &str, text: &str, secret: bool| {
            let value = expand(text, vars).map_err(|e| match e {
                Expand::Unset(var) => invalid(
                    key,
                    format!(
                        "reads ${{{var}}}, but the environment variable {var} is not set; set it"
                    ),
                ),
                Expand::Unclosed => {
                    invalid(key, "`${` is not closed; write ${ENV_NAME}".to_owned())
                }
            })?;
            if value.trim().is_empty() {
                return Err(invalid(
                    key,
                    if secret {
                        "is empty; write ${S3_SECRET_ACCESS_KEY} and set that variable".to_owned()
                    } else {
                        "is empty; write the key id, or ${S3_ACCESS_KEY_ID} and set that variable"
                            .to_owned()
                    },
                ));
            }
            Ok(value)
        };
        let access_key_id = credential("access_key_id", &self.access_key_id, false)?;
        let secret_access_key =
            credential("secret_access_key", self.secret_access_key.expose(), true)?;
        Ok(porter_inbox::S3Settings {
            endpoint,
            bucket: bucket.to_owned(),
            region: self
                .region
                .as_deref()
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .unwrap_or("us-east-1")
                .to_owned(),
            prefix: prefix.to_owned(),
            access_key_id,
            secret_access_key: porter_net::Secret::new(secret_access_key),
            path_style: self.path_style.unwrap_or(true),
        })
    }
}

/// `RecordsBackend` is where records are kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RecordsBackend {
    /// An SQLite file in the data dir.
    #[default]
    Sqlite,
    /// A PostgreSQL database (`storage.postgres_url`).
    Postgres,
}

/// `SecretUrl` is a database URL that may hold a password: its `Debug`
/// shows it with the password replaced by `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretUrl(pub String);

impl std::fmt::Debug for SecretUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&porter_inbox::store::redacted_url(&self.0))
    }
}

impl StorageConfig {
    /// Checks the section and resolves `postgres_url` and the S3
    /// credentials through `vars`.
    fn resolve(&mut self, vars: &dyn Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        self.resolved_s3 = match (self.blobs, &self.s3) {
            (BlobsBackend::Local, None) => None,
            (BlobsBackend::Local, Some(_)) => {
                return Err(ConfigError::Invalid {
                    key: "storage.s3".to_owned(),
                    message: "is set but storage.blobs is local; write `blobs: s3` to use it, or remove it".to_owned(),
                });
            }
            (BlobsBackend::S3, None) => {
                return Err(ConfigError::Invalid {
                    key: "storage.blobs".to_owned(),
                    message: "is s3 but storage.s3 is not set; add s3: {endpoint: http://host:3900, bucket: porter, access_key_id: ${S3_ACCESS_KEY_ID}, secret_access_key: ${S3_SECRET_ACCESS_KEY}}".to_owned(),
                });
            }
            (BlobsBackend::S3, Some(s3)) => Some(s3.resolve(vars)?),
        };
        self.resolve_records(vars)
    }

    /// Checks the records part and resolves `postgres_url` through `vars`.
    fn resolve_records(
        &mut self,
        vars: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(), ConfigError> {
        let invalid = |message: String| ConfigError::Invalid {
            key: "storage.postgres_url".to_owned(),
            message,
        };
        match (self.records, &self.postgres_url) {
            (RecordsBackend::Sqlite, None) => {
                self.resolved_postgres_url = None;
                Ok(())
            }
            (RecordsBackend::Sqlite, Some(_)) => Err(invalid(
                "is set but storage.records is sqlite; write `records: postgres` to use it, or remove it".to_owned(),
            )),
            (RecordsBackend::Postgres, None) => Err(ConfigError::Invalid {
                key: "storage.records".to_owned(),
                message: "is postgres but storage.postgres_url is not set; add postgres_url: postgres://user:${PG_PASSWORD}@host:5432/database".to_owned(),
            }),
            (RecordsBackend::Postgres, Some(text)) => {
                let url = expand(text, vars).map_err(|e| match e {
                    Expand::Unset(var) => invalid(format!(
                        "reads ${{{var}}}, but the environment variable {var} is not set; set it"
                    )),
                    Expand::Unclosed => {
                        invalid("`${` is not closed; write ${ENV_NAME}".to_owned())
                    }
                })?;
                let shown = porter_inbox::store::redacted_url(&url);
                let parsed = url::Url::parse(&url).map_err(|e| {
                    invalid(format!(
                        "{shown} is not a URL ({e}); write postgres://user:password@host:5432/database"
                    ))
                })?;
                if !matches!(parsed.scheme(), "postgres" | "postgresql")
                    || parsed.host_str().is_none_or(str::is_empty)
                {
                    return Err(invalid(format!(
                        "{shown} is not a postgres:// URL with a host; write postgres://user:password@host:5432/database"
                    )));
                }
                self.resolved_postgres_url = Some(SecretUrl(url));
                Ok(())
            }
        }
    }
}

/// `HooksConfig` names the operator's judges of `File download` and
/// `upload`: a command, a webhook, or both (then both must allow). Each sees
/// the operation as JSON, for an upload `{op, from, size, sha256, url,
/// method}` (never the bytes), for a download `{op, url, to}`, with URLs in
/// their display form. A hook that cannot be reached or does not answer in
/// time refuses: a configured judge is never skipped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct HooksConfig {
    /// A program and its arguments (no shell). It reads the JSON on stdin
    /// and allows with exit status 0; otherwise its stderr is the reason.
    pub command: Option<Vec<String>>,
    /// A URL that gets the JSON as a POST (through the gateway's network
    /// policy: list a private host in `http.private_hosts`) and allows by
    /// answering 2xx with `{"allow": true}`; `{"allow": false, "reason":
    /// "…"}` refuses with that reason.
    pub webhook: Option<String>,
    /// How long a hook may take to answer (default `10s`).
    pub timeout: Option<String>,
}

/// `HttpConfig` is the operator's network policy. The defaults reach any
/// public host and no private address.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct HttpConfig {
    /// Hosts that may be fetched: an entry matches itself and its
    /// subdomains on a dot boundary; `*` is any public host (the default).
    pub allow_hosts: Option<Vec<String>>,
    /// Exact host names or IP addresses that may be reached even though they
    /// are (or resolve to) private addresses: loopback, RFC 1918, link-local
    /// and the like are refused otherwise. List only hosts meant for the model.
    pub private_hosts: Vec<String>,
    /// How long to wait to connect and between two reads (`30s`, `2m`).
    pub timeout: Option<String>,
    /// How many redirects a request may follow, each re-checked (default 5).
    pub max_redirects: Option<usize>,
    /// A proxy every request goes through (none by default; the environment's
    /// proxy variables are never used).
    pub proxy: Option<String>,
    /// PEM files of certificate authorities trusted besides the built-in
    /// web roots, for an in-house forge or a test server with its own CA.
    /// Each one can vouch for any host name, so list only CAs you control.
    /// A relative path is taken from the config file's folder.
    pub ca_files: Vec<PathBuf>,
    /// The certificates of `ca_files`, read when the config is loaded.
    #[serde(skip)]
    #[schemars(skip)]
    pub ca_certificates: Vec<String>,
}

impl HttpConfig {
    /// Reads every `ca_files` entry, refusing one that cannot be read or
    /// holds no PEM certificate.
    fn read_ca_files(&self) -> Result<Vec<String>, ConfigError> {
        let mut read = Vec::with_capacity(self.ca_files.len());
        for (index, path) in self.ca_files.iter().enumerate() {
            let fault = |message: String| ConfigError::Invalid {
                key: format!("http.ca_files[{index}]"),
                message,
            };
            let text = fs_err::read_to_string(path).map_err(|e| fault(e.to_string()))?;
            if !text.contains("-----BEGIN CERTIFICATE-----") {
                return Err(fault(format!(
                    "{} holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
                    path.display()
                )));
            }
            read.push(text);
        }
        Ok(read)
    }
}

/// `McpServer` is one upstream: a stdio command or a streamable HTTP URL.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct McpServer {
    /// The program to start for a stdio server (exactly one of `command` and
    /// `url`).
    pub command: Option<String>,
    /// Arguments to `command`.
    pub args: Vec<String>,
    /// Environment variables set for `command`.
    pub env: BTreeMap<String, String>,
    /// The streamable HTTP endpoint of a remote server (exactly one of
    /// `command` and `url`).
    pub url: Option<String>,
    /// HTTP headers sent to `url` with every request.
    pub headers: BTreeMap<String, String>,
    /// What to do with base64 files hidden in the server's text results:
    /// `passthrough` (default) leaves text untouched, `capture` keeps them in
    /// the inbox and puts a stub in their place.
    pub binary_results: BinaryResults,
    /// `capture` (default) replaces images by their stub; `view` also returns
    /// a scaled copy beside the stub, for clients that show images.
    pub images: Images,
    /// `true` lists the server's tools and prompts under their own names
    /// (`get_weather`, not `mcp__<server>__get_weather`) and its resources
    /// under their own URIs, for clients and scripts written against the
    /// server itself. A name that clashes (with a gateway tool, another such
    /// server's, or one starting `mcp__` or `mcp://`) stays namespaced; the
    /// namespaced names are always accepted too.
    pub bare_names: bool,
}

/// `BinaryResults` says whether base64 inside text results is captured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BinaryResults {
    /// Text blocks pass through byte for byte.
    #[default]
    Passthrough,
    /// Long, cleanly decoding, recognisable base64 strings are kept in the
    /// inbox and replaced by their stub.
    Capture,
}

/// `Images` says what the model gets for an image an upstream returns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Images {
    /// The stub only.
    #[default]
    Capture,
    /// The stub and a scaled copy of the image.
    View,
}

/// `Volume` is one durable folder the `File` tool may use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Volume {
    /// The folder on this machine (absolute). Every path is resolved beneath
    /// it; `..` and symlinks leading out of it are refused.
    pub path: PathBuf,
    /// `ro` (default) or `rw`; a read-only volume is never written.
    #[serde(default)]
    pub mode: VolumeMode,
    /// The tenant the volume belongs to; none: every tenant's.
    #[serde(default)]
    pub tenant: Option<String>,
    /// Whether a file with more than one name (a hard link) may be read
    /// from the volume. Off by default: a hard link planted in the volume
    /// can name a file outside every volume, so reading one is refused.
    /// Turn it on only for a volume whose hard links are all meant.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_hard_links: bool,
}

/// `VolumeMode` says whether a volume may be written; read-only is the
/// default because loosening it should be a visible choice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VolumeMode {
    /// Read-only: `stat`, `ls`, `read`.
    #[default]
    Ro,
    /// Read-write: also `keep` into it.
    Rw,
}

/// `Grant` is one permission a profile gives.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub enum Grant {
    /// The `File` tool on the run's own inbox.
    File,
    /// Looking into (`stat`, `ls`, `read`) the profile's volumes.
    Read,
    /// Keeping files into the profile's read-write volumes.
    Write,
    /// The `HTTP` tool and `File` download/upload.
    #[serde(rename = "HTTP")]
    Http,
    /// The `Git` tool.
    Git,
}

/// `Profile` is a named set of grants and volumes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Profile {
    /// What the profile allows: `File`, `Read`, `Write`, `HTTP`, `Git`.
    pub grants: Vec<Grant>,
    /// The configured volumes the profile may use (never `inbox`: the inbox
    /// needs only the `File` grant).
    pub volumes: Vec<String>,
    /// What the `Git` tool may do with remotes: `[fetch]` or
    /// `[fetch, push]`; empty (the default): no network ops.
    pub git_remote: Vec<RemoteDirection>,
}

/// `Role` is what an API key may do with other keys' runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Every run of every tenant.
    Admin,
    /// Every run of its own tenant.
    TenantOperator,
    /// Its own runs only.
    User,
}

/// `ApiKey` is one key that may call the HTTP API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApiKey {
    /// The key's name, shown as a run's owner; unique.
    pub name: String,
    /// The key itself, or `${ENV_NAME}` to read it from the environment.
    pub key: String,
    /// The tenant the key belongs to.
    pub tenant: String,
    /// `admin`, `tenant_operator` or `user`.
    pub role: Role,
    /// The profile whose grants and volumes the key has; none: `File` on
    /// the inbox only.
    #[serde(default)]
    pub profile: Option<String>,
}

/// `LimitsConfig` bounds each run's inbox; unset fields take the defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct LimitsConfig {
    /// Most bytes one kept file may hold (default 64 MiB; the environment
    /// variable `PORTER_FILE_MAX_BYTES` overrides it).
    pub file_max_bytes: Option<u64>,
    /// Most bytes one run's inbox may hold (default 1 GiB;
    /// `PORTER_FILE_INBOX_MAX_BYTES` overrides it).
    pub inbox_max_bytes: Option<u64>,
    /// How long an inbox outlives its run: a number and a unit, `s`, `m`,
    /// `h` or `d` (`24h`, `90m`, `3600s`, `2d`; default `24h`).
    pub inbox_ttl: Option<String>,
}

/// `ConfigError` is a configuration that cannot be used, with the key at
/// fault and what to write instead.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("could not read the config file: {0}")]
    Read(#[source] std::io::Error),
    /// Something wrong inside a named file; the message names the file first.
    #[error("{file}: {error}")]
    InFile {
        /// The file as the caller named it.
        file: PathBuf,
        /// What was wrong in it.
        error: Box<ConfigError>,
    },
    /// The text is not YAML.
    #[error("not valid YAML: {0}")]
    Syntax(String),
    /// A key the configuration does not have.
    #[error("unknown key {key}{}", .suggestion.as_ref().map(|s| format!(" (did you mean {s}?)")).unwrap_or_default())]
    UnknownKey {
        /// The key's path, e.g. `mcp_servers.files.comand`.
        key: String,
        /// The nearest known key, if one is close.
        suggestion: Option<String>,
    },
    /// A value of the wrong shape.
    #[error("{key}: {message}")]
    BadValue {
        /// The key's path (empty for the whole file).
        key: String,
        /// What was wrong, from the parser.
        message: String,
    },
    /// A value that parses but cannot be used.
    #[error("{key}: {message}")]
    Invalid {
        /// The key's path.
        key: String,
        /// What is wrong and what to write instead.
        message: String,
    },
    /// An API key reads an environment variable that is not set.
    #[error(
        "api key {key:?} reads ${{{var}}}, but the environment variable {var} is not set; set it, or write the key into the file"
    )]
    MissingVar {
        /// The API key's name.
        key: String,
        /// The variable.
        var: String,
    },
    /// A limit override from the environment that is not a byte count.
    #[error("{var}={value:?} is not a number of bytes; write a whole number such as 67108864")]
    BadOverride {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
}

impl Config {
    /// Reads a configuration from YAML text and checks it: unknown keys,
    /// server and volume names, profiles and keys that name what exists,
    /// the ttl, and every `${ENV}` an API key reads (through `vars`). The
    /// limit overrides from `vars` are applied.
    pub fn from_yaml(
        text: &str,
        vars: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        Self::from_yaml_in(text, vars, None)
    }

    /// [`Config::from_yaml`] for a file in folder `base`: relative key and
    /// certificate paths are taken from that folder.
    fn from_yaml_in(
        text: &str,
        vars: &dyn Fn(&str) -> Option<String>,
        base: Option<&Path>,
    ) -> Result<Config, ConfigError> {
        let value: yaml_serde::Value =
            yaml_serde::from_str(text).map_err(|e| ConfigError::Syntax(e.to_string()))?;
        let mut config = if value.is_null() {
            Config::default()
        } else {
            serde_path_to_error::deserialize(value).map_err(|e| from_serde(&e))?
        };
        if let Some(base) = base {
            config.rebase_files(base);
        }
        config.apply_overrides(vars)?;
        config.validate()?;
        config.keys(vars)?;
        config.storage.resolve(vars)?;
        config.http.ca_certificates = config.http.read_ca_files()?;
        Ok(config)
    }

    /// Reads and checks the file at `path`; every error starts with the
    /// file's name.
    pub fn load(path: &Path, vars: &dyn Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let in_file = |error: ConfigError| ConfigError::InFile {
            file: path.to_owned(),
            error: Box::new(error),
        };
        let text = fs_err::read_to_string(path).map_err(|e| in_file(ConfigError::Read(e)))?;
        let base = path.parent().filter(|p| !p.as_os_str().is_empty());
        Self::from_yaml_in(&text, vars, base).map_err(in_file)
    }

    /// Takes the files the config names by a relative path (`http.ca_files`,
    /// `git.signing.key_file`, a GitHub App's `private_key_file`) from the
    /// config file's folder, not from wherever the gateway was started.
    fn rebase_files(&mut self, base: &Path) {
        let rebase = |path: &mut PathBuf| {
            if path.is_relative() {
                *path = base.join(&*path);
            }
        };
        self.http.ca_files.iter_mut().for_each(rebase);
        if let Some(signing) = self.git.signing.as_mut() {
            rebase(&mut signing.key_file);
        }
        for credential in &mut self.git.credentials {
            if let Some(app) = credential.github_app.as_mut() {
                rebase(&mut app.private_key_file);
            }
        }
    }

    /// The inbox limits, defaults filled in. A ttl that does not parse (only
    /// possible for a `Config` built by hand, since loading checks it) takes
    /// the default.
    #[must_use]
    pub fn limits(&self) -> porter_inbox::Limits {
        let defaults = porter_inbox::Limits::default();
        porter_inbox::Limits {
            file_max_bytes: self
                .limits
                .file_max_bytes
                .unwrap_or(defaults.file_max_bytes),
            inbox_max_bytes: self
                .limits
                .inbox_max_bytes
                .unwrap_or(defaults.inbox_max_bytes),
            inbox_ttl: self
                .limits
                .inbox_ttl
                .as_deref()
                .and_then(|t| parse_duration(t).ok())
                .unwrap_or(defaults.inbox_ttl),
        }
    }

    /// The network policy, defaults filled in. Values that do not parse (only
    /// possible for a `Config` built by hand, since loading checks them) take
    /// the defaults.
    #[must_use]
    pub fn net_policy(&self) -> porter_net::Policy {
        let defaults = porter_net::Policy::default();
        porter_net::Policy {
            allow_hosts: self
                .http
                .allow_hosts
                .clone()
                .unwrap_or(defaults.allow_hosts),
            private_hosts: self.http.private_hosts.clone(),
            timeout: self
                .http
                .timeout
                .as_deref()
                .and_then(|t| parse_duration(t).ok())
                .unwrap_or(defaults.timeout),
            max_redirects: self.http.max_redirects.unwrap_or(defaults.max_redirects),
            proxy: self
                .http
                .proxy
                .as_deref()
                .and_then(|p| url::Url::parse(p).ok()),
            extra_roots: self.http.ca_certificates.clone(),
        }
    }

    /// The `git` section ready to use: its credentials' `${ENV_NAME}`
    /// tokens read through `vars`, each GitHub App's key and the signing key
    /// loaded and checked, so that a missing, encrypted or wrong-algorithm
    /// key stops the gateway at start-up with the key at fault.
    pub fn git_resolved(
        &self,
        vars: &dyn Fn(&str) -> Option<String>,
    ) -> Result<GitConfig, ConfigError> {
        let mut git = self.git.clone();
        for (index, credential) in git.credentials.iter_mut().enumerate() {
            match (&credential.token, &credential.github_app) {
                (Some(token), None) => {
                    let token = expand(token.expose(), vars).map_err(|e| match e {
                        Expand::Unset(var) => ConfigError::MissingVar {
                            key: format!("git credential {}", credential.name),
                            var,
                        },
                        Expand::Unclosed => ConfigError::Invalid {
                            key: format!("git.credentials[{index}].token"),
                            message: "`${` is not closed; write ${ENV_NAME}".to_owned(),
                        },
                    })?;
                    credential.token = Some(porter_net::Secret::new(token));
                }
                (None, Some(app)) => {
                    let loaded = porter_git::GithubApp::load(
                        app.app_id,
                        app.installation_id,
                        &app.private_key_file,
                        app.base_url.as_deref(),
                    )
                    .map_err(|e| ConfigError::Invalid {
                        key: format!("git.credentials[{index}].github_app"),
                        message: e.to_string(),
                    })?;
                    credential.app = Some(loaded);
                }
                _ => {
                    return Err(ConfigError::Invalid {
                        key: format!("git.credentials[{index}]"),
                        message: "give exactly one of token and github_app".to_owned(),
                    });
                }
            }
        }
        if let Some(signing) = &git.signing {
            let signer =
                porter_git::Signer::load(&signing.key_file).map_err(|e| ConfigError::Invalid {
                    key: "git.signing.key_file".to_owned(),
                    message: e.to_string(),
                })?;
            git.signer = Some(signer);
        }
        Ok(git)
    }

    /// What the `Git` tool of a run owned by key `key_name` may do with
    /// remotes (the `default` profile's for the local user).
    #[must_use]
    pub fn git_remote_of(&self, key_name: &str) -> Vec<RemoteDirection> {
        let profile = self
            .api_keys
            .iter()
            .find(|k| k.name == key_name)
            .and_then(|k| k.profile.as_deref())
            .or_else(|| (key_name == "local").then_some("default"));
        profile
            .and_then(|name| self.profiles.get(name))
            .map(|p| p.git_remote.clone())
            .unwrap_or_default()
    }

    fn apply_overrides(
        &mut self,
        vars: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(), ConfigError> {
        for (var, field) in [
            (FILE_MAX_BYTES_VAR, &mut self.limits.file_max_bytes),
            (INBOX_MAX_BYTES_VAR, &mut self.limits.inbox_max_bytes),
        ] {
            if let Some(value) = vars(var) {
                let bytes = value
                    .trim()
                    .parse::<u64>()
                    .map_err(|_| ConfigError::BadOverride {
                        var,
                        value: value.clone(),
                    })?;
                *field = Some(bytes);
            }
        }
        Ok(())
    }

    fn validate(&self) -> Result<(), ConfigError> {
        self.validate_http_and_hooks()?;
        self.validate_servers()?;
        self.validate_volumes()?;
        self.validate_access()?;
        self.validate_limits()
    }

    /// The `http` and `hooks` sections.
    fn validate_http_and_hooks(&self) -> Result<(), ConfigError> {
        let invalid = |key: String, message: String| ConfigError::Invalid { key, message };
        if let Some(timeout) = &self.http.timeout
            && let Err(why) = parse_duration(timeout)
        {
            return Err(invalid("http.timeout".to_owned(), why));
        }
        if let Some(proxy) = &self.http.proxy
            && url::Url::parse(proxy).map_or(true, |u| !matches!(u.scheme(), "http" | "https"))
        {
            return Err(invalid(
                "http.proxy".to_owned(),
                "is not an http:// or https:// URL".to_owned(),
            ));
        }
        if let Some(timeout) = &self.hooks.timeout
            && let Err(why) = parse_duration(timeout)
        {
            return Err(invalid("hooks.timeout".to_owned(), why));
        }
        if let Some(command) = &self.hooks.command
            && command
                .first()
                .is_none_or(|program| program.trim().is_empty())
        {
            return Err(invalid(
                "hooks.command".to_owned(),
                "names no program; write [program, arg, …], or leave command out".to_owned(),
            ));
        }
        if let Some(webhook) = &self.hooks.webhook
            && url::Url::parse(webhook).map_or(true, |u| !matches!(u.scheme(), "http" | "https"))
        {
            return Err(invalid(
                "hooks.webhook".to_owned(),
                "is not an http:// or https:// URL".to_owned(),
            ));
        }
        Ok(())
    }

    /// The `mcp_servers`.
    fn validate_servers(&self) -> Result<(), ConfigError> {
        let invalid = |key: String, message: String| ConfigError::Invalid { key, message };
        for (name, server) in &self.mcp_servers {
            let key = format!("mcp_servers.{name}");
            if let Some(why) = name_fault(name) {
                return Err(invalid(
                    key,
                    format!(
                        "{why}; tools are listed as mcp__<server>__<tool>, so a server name holds only letters, digits, _ and -, and never __"
                    ),
                ));
            }
            match (&server.command, &server.url) {
                (Some(_), Some(_)) => {
                    return Err(invalid(
                        key,
                        "has both command and url; a server is either a stdio command or an HTTP url, so keep one".to_owned(),
                    ));
                }
                (None, None) => {
                    return Err(invalid(
                        key,
                        "has neither command nor url; give the stdio command to start, or the HTTP url to call".to_owned(),
                    ));
                }
                (Some(command), None) if command.trim().is_empty() => {
                    return Err(invalid(format!("{key}.command"), "is empty".to_owned()));
                }
                (None, Some(url))
                    if !(url.starts_with("http://") || url.starts_with("https://")) =>
                {
                    return Err(invalid(
                        format!("{key}.url"),
                        format!("{url:?} is not an http:// or https:// URL"),
                    ));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The `volumes`.
    fn validate_volumes(&self) -> Result<(), ConfigError> {
        let invalid = |key: String, message: String| ConfigError::Invalid { key, message };
        for (name, volume) in &self.volumes {
            let key = format!("volumes.{name}");
            if name == INBOX_VOLUME {
                return Err(invalid(
                    key,
                    "the name inbox is reserved for each run's own inbox; pick another name"
                        .to_owned(),
                ));
            }
            if let Some(why) = name_fault(name) {
                return Err(invalid(
                    key,
                    format!(
                        "{why}; files are named volume:<name>:<path>, so a volume name holds only letters, digits, _ and -"
                    ),
                ));
            }
            if !volume.path.is_absolute() {
                return Err(invalid(
                    format!("{key}.path"),
                    format!(
                        "{} is not an absolute path; write the whole path",
                        volume.path.display()
                    ),
                ));
            }
            if volume
                .tenant
                .as_deref()
                .is_some_and(|t| t.trim().is_empty())
            {
                return Err(invalid(
                    format!("{key}.tenant"),
                    "is empty; name a tenant, or leave tenant out for a volume every tenant may use".to_owned(),
                ));
            }
        }
        Ok(())
    }

    /// The `profiles` and the `api_keys` that name them.
    fn validate_access(&self) -> Result<(), ConfigError> {
        let invalid = |key: String, message: String| ConfigError::Invalid { key, message };
        for (name, profile) in &self.profiles {
            for (index, volume) in profile.volumes.iter().enumerate() {
                let key = format!("profiles.{name}.volumes[{index}]");
                if volume == INBOX_VOLUME {
                    return Err(invalid(
                        key,
                        "the inbox needs only the File grant; remove it from volumes".to_owned(),
                    ));
                }
                if !self.volumes.contains_key(volume) {
                    return Err(invalid(
                        key,
                        format!(
                            "no volume {volume:?}; the volumes are: {}",
                            listing(self.volumes.keys())
                        ),
                    ));
                }
            }
        }
        let mut names = BTreeSet::new();
        for (index, api_key) in self.api_keys.iter().enumerate() {
            let key = format!("api_keys[{index}]");
            if api_key.name.trim().is_empty() {
                return Err(invalid(
                    format!("{key}.name"),
                    "is empty; name the key".to_owned(),
                ));
            }
            if !names.insert(api_key.name.as_str()) {
                return Err(invalid(
                    format!("{key}.name"),
                    format!(
                        "{:?} names two keys; give each key its own name",
                        api_key.name
                    ),
                ));
            }
            if api_key.tenant.trim().is_empty() {
                return Err(invalid(
                    format!("{key}.tenant"),
                    "is empty; name the key's tenant".to_owned(),
                ));
            }
            if let Some(profile) = &api_key.profile
                && !self.profiles.contains_key(profile)
            {
                return Err(invalid(
                    format!("{key}.profile"),
                    format!(
                        "no profile {profile:?}; the profiles are: {}",
                        listing(self.profiles.keys())
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The `limits`.
    fn validate_limits(&self) -> Result<(), ConfigError> {
        let invalid = |key: String, message: String| ConfigError::Invalid { key, message };
        if let Some(ttl) = &self.limits.inbox_ttl {
            parse_duration(ttl)
                .map_err(|message| invalid("limits.inbox_ttl".to_owned(), message))?;
        }
        for (key, value) in [
            ("limits.file_max_bytes", self.limits.file_max_bytes),
            ("limits.inbox_max_bytes", self.limits.inbox_max_bytes),
        ] {
            if value == Some(0) {
                return Err(invalid(
                    key.to_owned(),
                    "is 0, which would keep nothing; give a number of bytes".to_owned(),
                ));
            }
        }
        Ok(())
    }
}

/// The configuration's JSON Schema (draft 2020-12), with every field's doc
/// comment as its description, for editors and for `docs/gateway-config.schema.json`.
#[must_use]
pub fn schema() -> serde_json::Value {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<Config>();
    schema.to_value()
}

/// Parses a duration such as `24h`, `90m`, `3600s` or `2d`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let fault = || {
        format!(
            "{text:?} is not a duration; write a whole number and a unit s, m, h or d, e.g. 24h, 90m, 3600s, 2d"
        )
    };
    let unit_at = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(fault)?;
    let (number, unit) = text.split_at(unit_at);
    let number: u64 = number.parse().map_err(|_| fault())?;
    let seconds_per = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 60 * 60,
        "d" => 24 * 60 * 60,
        _ => return Err(fault()),
    };
    let seconds = number.checked_mul(seconds_per).ok_or_else(fault)?;
    Ok(Duration::from_secs(seconds))
}

/// Why a server or volume name cannot be used, if it cannot.
fn name_fault(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("the name is empty".to_owned());
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
    {
        return Some(format!("the name {name:?} holds {c:?}"));
    }
    if name.contains("__") {
        return Some(format!("the name {name:?} holds __"));
    }
    None
}

/// Names for a message: `a, b, c`, or `(none configured)`.
pub(crate) fn listing<'a>(names: impl Iterator<Item = &'a String>) -> String {
    let names: Vec<&str> = names.map(String::as_str).collect();
    if names.is_empty() {
        "(none configured)".to_owned()
    } else {
        names.join(", ")
    }
}

pub(crate) enum Expand {
    Unset(String),
    Unclosed,
}

/// Replaces every `${NAME}` in `text` with `vars(NAME)`.
pub(crate) fn expand(text: &str, vars: &dyn Fn(&str) -> Option<String>) -> Result<String, Expand> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or(Expand::Unclosed)?;
        let name = &after[..end];
        let value = vars(name).ok_or_else(|| Expand::Unset(name.to_owned()))?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A serde error with its path, as a `ConfigError`: unknown keys get the
/// nearest known key as a suggestion.
fn from_serde(error: &serde_path_to_error::Error<yaml_serde::Error>) -> ConfigError {
    let message = error.inner().to_string();
    let path = error.path().to_string();
    let path = if path == "." { String::new() } else { path };
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let unknown = rest.split('`').next().unwrap_or_default();
        let expected: Vec<&str> = rest
            .split_once("expected")
            .map(|(_, list)| list.split('`').skip(1).step_by(2).collect())
            .unwrap_or_default();
        let key = if path.is_empty() {
            unknown.to_owned()
        } else if path.ends_with(unknown) {
            path.clone()
        } else {
            format!("{path}.{unknown}")
        };
        return ConfigError::UnknownKey {
            key,
            suggestion: nearest(unknown, &expected).map(str::to_owned),
        };
    }
    ConfigError::BadValue { key: path, message }
}

/// The candidate closest to `word` by edit distance, if it is close enough
/// to be a likely typo.
fn nearest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (porter_mcp::suggest::distance(word, c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// `RemoteDirection` is one entry of a profile's `git_remote`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RemoteDirection {
    /// clone, fetch, pull, ls_remote.
    Fetch,
    /// push.
    Push,
}

/// `GitConfig` is the operator's `git:` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct GitConfig {
    /// Hosts the Git tool may fetch from (like `http.allow_hosts`); empty:
    /// none.
    pub fetch_hosts: Vec<String>,
    /// Hosts the Git tool may push to; unset: push is off for everyone.
    pub push_hosts: Option<Vec<String>>,
    /// The author and committer of every commit.
    pub identity: Option<GitIdentity>,
    /// Credentials, each sent only to the URLs it covers.
    pub credentials: Vec<GitCredential>,
    /// Most files one checkout writes (default 200,000).
    pub max_checkout_files: Option<usize>,
    /// Signing of commits and tags (`sign: true`) with the operator's
    /// ed25519 key; unset: nothing can be signed.
    pub signing: Option<GitSigning>,
    /// The key `signing.key_file` names, loaded (and checked) by
    /// [`Config::git_resolved`] at start-up; never
    /// serialized.
    #[serde(skip)]
    #[schemars(skip)]
    pub signer: Option<porter_git::Signer>,
}

/// `GitSigning` is where the operator's signing key lives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitSigning {
    /// An OpenSSH ed25519 private key without a passphrase (`ssh-keygen -t
    /// ed25519 -N ''`). Commits and tags get an SSH signature in namespace
    /// `git` that `git verify-commit` checks against an allowed-signers
    /// file; the key never leaves the gateway. A relative path is taken
    /// from the config file's folder.
    pub key_file: PathBuf,
}

/// `GitIdentity` is the operator's name and email for commits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitIdentity {
    /// The name.
    pub name: String,
    /// The email.
    pub email: String,
}

/// `GitCredential` is one credential as configured: exactly one of a
/// static `token` (which may be `${ENV_NAME}`, resolved by the binary
/// before the gateway starts) or a `github_app` whose installation tokens
/// are minted for pushes only.
#[derive(Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitCredential {
    /// Shown in the audit log instead of the token.
    pub name: String,
    /// URL prefixes the credential may be sent to.
    pub allowed_urls: Vec<String>,
    /// The Basic-auth user name (default `x-access-token`).
    #[serde(default)]
    pub username: Option<String>,
    /// A static token, sent for fetches and pushes to the covered URLs.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub token: Option<porter_net::Secret>,
    /// A GitHub App whose write-scoped installation token is minted (and
    /// cached until five minutes before it expires) when a push to a
    /// covered URL needs it; fetches never use it.
    #[serde(default)]
    pub github_app: Option<GitHubAppConfig>,
    /// The app with its key loaded by
    /// [`Config::git_resolved`]; never serialized.
    #[serde(skip)]
    #[schemars(skip)]
    pub app: Option<porter_git::GithubApp>,
}

/// `GitHubAppConfig` names a GitHub App installation and its key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitHubAppConfig {
    /// The app's numeric id (the JWT's `iss`).
    pub app_id: u64,
    /// The installation on the account that owns the repositories.
    pub installation_id: u64,
    /// The app's RSA private key, the .pem file GitHub generated (a
    /// relative path is taken from the config file's folder).
    pub private_key_file: PathBuf,
    /// The REST API root (default `https://api.github.com`; GitHub
    /// Enterprise Server: `https://<host>/api/v3`). Its host must pass the
    /// `http` policy like the git hosts.
    #[serde(default)]
    pub base_url: Option<String>,
}

impl GitHubAppConfig {
    /// `api_host` is the host tokens are minted at.
    pub(crate) fn api_host(&self) -> Option<String> {
        let base = self
            .base_url
            .as_deref()
            .unwrap_or(porter_git::github_app::DEFAULT_BASE_URL);
        url::Url::parse(base)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned))
    }
}

impl std::fmt::Debug for GitCredential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitCredential")
            .field("name", &self.name)
            .field("allowed_urls", &self.allowed_urls)
            .field("github_app", &self.github_app)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_vars(_: &str) -> Option<String> {
        None
    }

    fn vars_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    fn error_of(yaml: &str) -> String {
        Config::from_yaml(yaml, &no_vars)
            .expect_err("the config should be refused")
            .to_string()
    }

    #[test]
    fn storage_is_checked_with_the_key_at_fault_and_no_password_shown() {
        let default = Config::from_yaml("", &no_vars).expect("empty is fine");
        assert_eq!(default.storage.records, RecordsBackend::Sqlite);
        assert_eq!(default.storage.resolved_postgres_url, None);

        let error = error_of("storage: {records: postgres}");
        assert!(error.starts_with("storage.records:"), "{error}");
        assert!(error.contains("postgres_url"), "{error}");
        let error = error_of("storage: {postgres_url: 'postgres://u:hunter2@db/p'}");
        assert!(error.starts_with("storage.postgres_url:"), "{error}");
        assert!(!error.contains("hunter2"), "{error}");
        let error = error_of("storage: {records: mysql}");
        assert!(error.contains("storage.records"), "{error}");
        let error =
            error_of("storage: {records: postgres, postgres_url: 'postgres://u:${PG_PW}@db/p'}");
        assert!(error.starts_with("storage.postgres_url:"), "{error}");
        assert!(error.contains("PG_PW"), "{error}");
        let error =
            error_of("storage: {records: postgres, postgres_url: 'mysql://u:hunter2@db/p'}");
        assert!(error.starts_with("storage.postgres_url:"), "{error}");
        assert!(!error.contains("hunter2"), "{error}");
        assert!(error.contains("u:***@db"), "{error}");
        let error =
            error_of("storage: {records: postgres, postgres_url: 'postgres://u:hunter2@/p'}");
        assert!(!error.contains("hunter2"), "{error}");
        let error = error_of("storage: {records: postgres, postgress_url: x}");
        assert!(error.contains("storage.postgress_url"), "{error}");

        let vars = vars_of(&[("PG_PW", "s3cret-pw")]);
        let config = Config::from_yaml(
            "storage: {records: postgres, postgres_url: 'postgres://u:${PG_PW}@db:5432/p'}",
            &vars,
        )
        .expect("valid");
        let url = config
            .storage
            .resolved_postgres_url
            .clone()
            .expect("resolved");
        assert_eq!(url.0, "postgres://u:s3cret-pw@db:5432/p");
        let shown = format!("{config:?}");
        assert!(!shown.contains("s3cret-pw"), "{shown}");
        assert!(shown.contains("postgres://u:***@db:5432/p"), "{shown}");
    }

    #[test]
    fn s3_blobs_are_checked_with_the_key_at_fault_and_no_secret_shown() {
        let default = Config::from_yaml("", &no_vars).expect("empty is fine");
        assert_eq!(default.storage.blobs, BlobsBackend::Local);
        assert_eq!(default.storage.resolved_s3, None);

        let error = error_of("storage: {blobs: s3}");
        assert!(error.starts_with("storage.blobs:"), "{error}");
        assert!(error.contains("storage.s3"), "{error}");
        let error = error_of("storage: {s3: {endpoint: 'http://h:3900', bucket: b}}");
        assert!(error.starts_with("storage.s3:"), "{error}");
        let error = error_of("storage: {blobs: nfs}");
        assert!(error.contains("storage.blobs"), "{error}");
        let error = error_of("storage: {blobs: s3, s3: {endpoint: x, bucket: b, bukket: c}}");
        assert!(error.contains("storage.s3.bukket"), "{error}");

        let with = |fields: &[(&str, &str)]| {
            let mut map = vec![
                ("endpoint", "'http://127.0.0.1:3900'"),
                ("bucket", "porter-data"),
                ("access_key_id", "GK1"),
                ("secret_access_key", "'${S3_SECRET}'"),
            ];
            for (key, value) in fields {
                match map.iter_mut().find(|(k, _)| k == key) {
                    Some(pair) => pair.1 = value,
                    None => map.push((key, value)),
                }
            }
            let body: Vec<String> = map.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            format!("storage: {{blobs: s3, s3: {{{}}}}}", body.join(", "))
        };
        let vars = vars_of(&[("S3_SECRET", "wJalr-never-shown")]);
        for (field, value, key) in [
            ("endpoint", "'ftp://h'", "storage.s3.endpoint"),
            ("endpoint", "'not a url'", "storage.s3.endpoint"),
            ("endpoint", "'http://u:pw@h:3900'", "storage.s3.endpoint"),
            ("bucket", "'Bad_Bucket'", "storage.s3.bucket"),
            ("bucket", "''", "storage.s3.bucket"),
            ("prefix", "'a/../b'", "storage.s3.prefix"),
            ("prefix", "'a b'", "storage.s3.prefix"),
            ("access_key_id", "''", "storage.s3.access_key_id"),
            (
                "secret_access_key",
                "'${NOT_SET}'",
                "storage.s3.secret_access_key",
            ),
        ] {
            let yaml = with(&[(field, value)]);
            let error = Config::from_yaml(&yaml, &vars)
                .expect_err("refused")
                .to_string();
            assert!(error.starts_with(&format!("{key}:")), "{yaml} → {error}");
            assert!(!error.contains("wJalr-never-shown"), "{error}");
            assert!(!error.contains("pw@"), "{error}");
        }
        let error = Config::from_yaml(&with(&[("secret_access_key", "'${NOT_SET}'")]), &vars)
            .expect_err("refused")
            .to_string();
        assert!(error.contains("NOT_SET"), "{error}");

        let config =
            Config::from_yaml(&with(&[("prefix", "'/porter/prod/'")]), &vars).expect("valid");
        let s3 = config.storage.resolved_s3.clone().expect("resolved");
        assert_eq!(s3.secret_access_key.expose(), "wJalr-never-shown");
        assert_eq!(s3.prefix, "porter/prod");
        assert_eq!(s3.region, "us-east-1");
        assert!(s3.path_style);
        let shown = format!("{config:?}");
        assert!(!shown.contains("wJalr-never-shown"), "{shown}");
        let literal = Config::from_yaml(
            "storage: {blobs: s3, s3: {endpoint: 'http://h:1', bucket: bkt, access_key_id: k, secret_access_key: literal-secret-9}}",
            &no_vars,
        )
        .expect("a literal secret is allowed");
        let shown = format!("{literal:?}");
        assert!(!shown.contains("literal-secret-9"), "{shown}");
    }

    const FULL: &str = r"
data_dir: /var/lib/porter
mcp_servers:
  files:
    command: files-mcp
    args: [--root, /srv]
    binary_results: capture
  remote:
    url: https://mcp.example.org/mcp
    headers: { X-Team: a }
    images: view
    bare_names: true
volumes:
  shared:
    path: /srv/shared
  out:
    path: /srv/out
    mode: rw
    tenant: acme
profiles:
  writer:
    grants: [File, Read, Write, HTTP]
    volumes: [shared, out]
api_keys:
  - name: alice
    key: ${ALICE_KEY}
    tenant: acme
    role: user
    profile: writer
  - name: root
    key: literal-secret
    tenant: ops
    role: admin
limits:
  file_max_bytes: 1000
  inbox_ttl: 90m
";

    fn ed25519_key_file(dir: &Path) -> PathBuf {
        use ssh_key::private::{Ed25519Keypair, KeypairData};
        let pair = Ed25519Keypair::from_seed(&[4; 32]);
        let key = ssh_key::PrivateKey::new(KeypairData::Ed25519(pair), "").expect("a key");
        let file = dir.join("git_ed25519");
        std::fs::write(
            &file,
            key.to_openssh(ssh_key::LineEnding::LF)
                .expect("encodes")
                .as_bytes(),
        )
        .expect("written");
        file
    }

    #[test]
    fn git_keys_are_loaded_at_start_up_and_a_bad_one_names_its_key() {
        let temp = tempfile::tempdir().expect("a temp dir");
        let good = ed25519_key_file(temp.path());
        let junk = temp.path().join("junk");
        std::fs::write(&junk, "not a key").expect("written");
        let resolved = |yaml: &str| {
            Config::from_yaml(yaml, &no_vars)
                .expect("the YAML is a config")
                .git_resolved(&no_vars)
        };

        let git = resolved(&format!(
            "git:\n  signing:\n    key_file: {}\n",
            good.display()
        ))
        .expect("an ed25519 key loads");
        let signer = git.signer.expect("the signer is loaded");
        assert!(signer.public_key().starts_with("ssh-ed25519 "));

        for (yaml, key, says) in [
            (
                format!("git:\n  signing:\n    key_file: {}\n", junk.display()),
                "git.signing.key_file",
                "not an OpenSSH private key",
            ),
            (
                "git:\n  signing:\n    key_file: /nonexistent/key\n".to_owned(),
                "git.signing.key_file",
                "/nonexistent/key",
            ),
            (
                "git:\n  credentials:\n    - {name: a, allowed_urls: [], token: t, github_app: {app_id: 1, installation_id: 2, private_key_file: /x}}\n".to_owned(),
                "git.credentials[0]",
                "exactly one of token and github_app",
            ),
            (
                "git:\n  credentials:\n    - {name: a, allowed_urls: []}\n".to_owned(),
                "git.credentials[0]",
                "exactly one of token and github_app",
            ),
            (
                format!("git:\n  credentials:\n    - {{name: a, allowed_urls: [], github_app: {{app_id: 1, installation_id: 2, private_key_file: {}}}}}\n", junk.display()),
                "git.credentials[0].github_app",
                "not a usable RSA private key",
            ),
            (
                "git:\n  credentials:\n    - {name: a, allowed_urls: [], github_app: {app_id: 1, installation_id: 2, private_key_file: /nonexistent/app.pem}}\n".to_owned(),
                "git.credentials[0].github_app",
                "/nonexistent/app.pem",
            ),
        ] {
            match resolved(&yaml) {
                Err(ConfigError::Invalid { key: at, message }) => {
                    assert_eq!(at, key, "{yaml}");
                    assert!(message.contains(says), "{yaml}: {message}");
                }
                other => panic!("{yaml}: {other:?}"),
            }
        }
    }

    #[test]
    fn an_empty_file_is_the_embedded_defaults() {
        for text in ["", "# only a comment\n", "{}"] {
            let config = Config::from_yaml(text, &no_vars).expect("an empty config is fine");
            assert_eq!(config, Config::default());
            assert_eq!(config.limits(), porter_inbox::Limits::default());
            assert!(config.keys(&no_vars).expect("no keys").is_empty());
        }
    }

    #[test]
    fn a_full_file_is_read_with_its_keys_and_limits() {
        let vars = vars_of(&[("ALICE_KEY", "alice-secret")]);
        let config = Config::from_yaml(FULL, &vars).expect("the full example is valid");
        assert_eq!(
            config.mcp_servers["files"].binary_results,
            BinaryResults::Capture
        );
        assert_eq!(config.mcp_servers["remote"].images, Images::View);
        assert!(config.mcp_servers["remote"].bare_names);
        assert!(!config.mcp_servers["files"].bare_names);
        assert_eq!(config.volumes["out"].mode, VolumeMode::Rw);
        assert_eq!(config.volumes["shared"].mode, VolumeMode::Ro);
        let limits = config.limits();
        assert_eq!(limits.file_max_bytes, 1000);
        assert_eq!(limits.inbox_max_bytes, porter_inbox::INBOX_MAX_BYTES);
        assert_eq!(limits.inbox_ttl, Duration::from_secs(90 * 60));
        let keys = config.keys(&vars).expect("keys resolve");
        let alice = keys
            .authenticate("alice-secret")
            .expect("alice's key works");
        assert_eq!(alice.name, "alice");
        assert_eq!(alice.volumes, vec!["shared".to_owned(), "out".to_owned()]);
        assert!(alice.grants.contains(&Grant::Http));
        let root = keys
            .authenticate("literal-secret")
            .expect("a literal key works");
        assert_eq!(root.grants, vec![Grant::File]);
        assert!(root.volumes.is_empty());
    }

    #[test]
    fn a_hooks_section_is_read_and_a_hook_that_cannot_work_is_refused() {
        let config = Config::from_yaml(
            "hooks:\n  command: [/usr/local/bin/judge, --strict]\n  webhook: https://judge.example.org/porter\n  timeout: 5s\n",
            &no_vars,
        )
        .expect("valid hooks");
        assert_eq!(
            config.hooks.command,
            Some(vec![
                "/usr/local/bin/judge".to_owned(),
                "--strict".to_owned()
            ])
        );
        assert_eq!(
            config.hooks.webhook.as_deref(),
            Some("https://judge.example.org/porter")
        );
        for (yaml, key) in [
            ("hooks:\n  command: []\n", "hooks.command"),
            ("hooks:\n  command: ['  ']\n", "hooks.command"),
            ("hooks:\n  webhook: ftp://judge/\n", "hooks.webhook"),
            ("hooks:\n  timeout: soon\n", "hooks.timeout"),
        ] {
            let error = error_of(yaml);
            assert!(error.starts_with(key), "{yaml}: {error}");
        }
    }

    #[test]
    fn ca_files_are_read_at_load_and_one_without_a_certificate_is_refused() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let good = dir.path().join("ca.pem");
        std::fs::write(
            &good,
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
        )
        .expect("written");
        let bad = dir.path().join("notes.txt");
        std::fs::write(&bad, "not a certificate").expect("written");
        let config = Config::from_yaml(
            &format!("http:\n  ca_files: [{}]\n", good.display()),
            &no_vars,
        )
        .expect("a readable CA file loads");
        assert_eq!(config.net_policy().extra_roots.len(), 1);
        assert!(config.net_policy().extra_roots[0].contains("MIIB"));
        let refused = error_of(&format!(
            "http:\n  ca_files: [{}, {}]\n",
            good.display(),
            bad.display()
        ));
        assert!(refused.contains("http.ca_files[1]"), "{refused}");
        assert!(refused.contains("no PEM certificate"), "{refused}");
        let missing = error_of("http:\n  ca_files: [/nonexistent/ca.pem]\n");
        assert!(missing.contains("http.ca_files[0]"), "{missing}");
    }

    #[test]
    fn relative_key_and_certificate_paths_are_taken_from_the_config_files_folder() {
        let dir = tempfile::tempdir().expect("a temp dir");
        std::fs::create_dir_all(dir.path().join("certs")).expect("made");
        std::fs::write(
            dir.path().join("certs/ca.pem"),
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
        )
        .expect("written");
        let file = dir.path().join("porter.yaml");
        std::fs::write(
            &file,
            "http:\n  ca_files: [certs/ca.pem]\ngit:\n  signing:\n    key_file: keys/git_ed25519\n  credentials:\n    - name: app\n      allowed_urls: [https://github.com/acme/]\n      github_app: {app_id: 1, installation_id: 2, private_key_file: keys/app.pem}\n",
        )
        .expect("written");
        let config = Config::load(&file, &no_vars).expect("the CA is found beside the config");
        assert_eq!(config.http.ca_files, vec![dir.path().join("certs/ca.pem")]);
        assert_eq!(
            config.git.signing.as_ref().map(|s| s.key_file.clone()),
            Some(dir.path().join("keys/git_ed25519"))
        );
        assert_eq!(
            config.git.credentials[0]
                .github_app
                .as_ref()
                .map(|a| a.private_key_file.clone()),
            Some(dir.path().join("keys/app.pem"))
        );
    }

    #[test]
    fn an_unknown_key_is_refused_with_its_path_and_a_suggestion() {
        let message = error_of("mcp_servers:\n  files:\n    comand: x\n");
        assert_eq!(
            message,
            "unknown key mcp_servers.files.comand (did you mean command?)"
        );
        let message = error_of("limts: {}\n");
        assert_eq!(message, "unknown key limts (did you mean limits?)");
        let message =
            error_of("api_keys:\n  - {name: a, key: b, tenant: t, role: user, colour: red}\n");
        assert!(
            message.starts_with("unknown key api_keys[0].colour"),
            "{message}"
        );
    }

    #[test]
    fn loading_a_file_names_the_file_first() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("porter.yaml");
        std::fs::write(&path, "mcp_servers:\n  files:\n    comand: x\n").expect("written");
        let message = Config::load(&path, &no_vars)
            .expect_err("refused")
            .to_string();
        assert_eq!(
            message,
            format!(
                "{}: unknown key mcp_servers.files.comand (did you mean command?)",
                path.display()
            )
        );
        let missing = Config::load(&dir.path().join("none.yaml"), &no_vars)
            .expect_err("a missing file is an error")
            .to_string();
        assert!(missing.contains("none.yaml"), "{missing}");
    }

    #[test]
    fn invalid_configs_are_refused_with_the_key_at_fault() {
        let cases: &[(&str, &str)] = &[
            (
                "mcp_servers:\n  a:\n    command: x\n    url: http://h/\n",
                "mcp_servers.a: has both command and url",
            ),
            (
                "mcp_servers:\n  a: {}\n",
                "mcp_servers.a: has neither command nor url",
            ),
            ("mcp_servers:\n  a__b:\n    command: x\n", "never __"),
            ("mcp_servers:\n  a.b:\n    command: x\n", "holds '.'"),
            (
                "mcp_servers:\n  a:\n    url: ftp://h/\n",
                "mcp_servers.a.url",
            ),
            (
                "volumes:\n  inbox:\n    path: /x\n",
                "volumes.inbox: the name inbox is reserved",
            ),
            ("volumes:\n  a:b:\n    path: /x\n", "holds ':'"),
            (
                "volumes:\n  v:\n    path: rel/x\n",
                "volumes.v.path: rel/x is not an absolute path",
            ),
            (
                "profiles:\n  p:\n    volumes: [nope]\n",
                "profiles.p.volumes[0]: no volume \"nope\"",
            ),
            (
                "profiles:\n  p:\n    volumes: [inbox]\n",
                "the inbox needs only the File grant",
            ),
            (
                "api_keys:\n  - {name: a, key: k, tenant: t, role: user, profile: nope}\n",
                "api_keys[0].profile: no profile \"nope\"",
            ),
            (
                "api_keys:\n  - {name: a, key: k1, tenant: t, role: user}\n  - {name: a, key: k2, tenant: t, role: user}\n",
                "api_keys[1].name: \"a\" names two keys",
            ),
            (
                "api_keys:\n  - {name: a, key: k, tenant: t, role: user}\n  - {name: b, key: k, tenant: t, role: user}\n",
                "has the same key as",
            ),
            (
                "api_keys:\n  - {name: a, key: '', tenant: t, role: user}\n",
                "is empty",
            ),
            (
                "api_keys:\n  - {name: a, key: k, tenant: t, role: boss}\n",
                "api_keys[0].role",
            ),
            (
                "limits:\n  inbox_ttl: 1w\n",
                "limits.inbox_ttl: \"1w\" is not a duration",
            ),
            (
                "limits:\n  file_max_bytes: 0\n",
                "limits.file_max_bytes: is 0",
            ),
            ("limits:\n  file_max_bytes: lots\n", "limits.file_max_bytes"),
            ("mcp_servers: [", "not valid YAML"),
        ];
        for (yaml, expected) in cases {
            let message = error_of(yaml);
            assert!(
                message.contains(expected),
                "{yaml:?} gave {message:?}, expected {expected:?}"
            );
        }
    }

    #[test]
    fn an_unset_variable_names_the_key_and_the_variable() {
        let yaml = "api_keys:\n  - {name: alice, key: '${ALICE_KEY}', tenant: t, role: user}\n";
        let message = error_of(yaml);
        assert!(message.contains("\"alice\""), "{message}");
        assert!(message.contains("ALICE_KEY is not set"), "{message}");
        let vars = vars_of(&[("ALICE_KEY", "s3cret")]);
        let keys = Config::from_yaml(yaml, &vars)
            .expect("set now")
            .keys(&vars)
            .expect("resolved");
        assert!(keys.authenticate("s3cret").is_some());
        assert!(keys.authenticate("${ALICE_KEY}").is_none());
    }

    #[test]
    fn the_environment_overrides_the_byte_limits() {
        let vars = vars_of(&[
            (FILE_MAX_BYTES_VAR, "2048"),
            (INBOX_MAX_BYTES_VAR, " 4096 "),
        ]);
        let config = Config::from_yaml("limits:\n  file_max_bytes: 1000\n", &vars).expect("valid");
        assert_eq!(config.limits().file_max_bytes, 2048);
        assert_eq!(config.limits().inbox_max_bytes, 4096);
        let bad = vars_of(&[(FILE_MAX_BYTES_VAR, "64MiB")]);
        let message = Config::from_yaml("", &bad)
            .expect_err("refused")
            .to_string();
        assert!(
            message.starts_with("PORTER_FILE_MAX_BYTES=\"64MiB\""),
            "{message}"
        );
    }

    #[test]
    fn durations_take_a_number_and_a_unit() {
        let cases: &[(&str, Option<u64>)] = &[
            ("24h", Some(86_400)),
            ("90m", Some(5_400)),
            ("3600s", Some(3_600)),
            ("2d", Some(172_800)),
            ("0s", Some(0)),
            ("24", None),
            ("h", None),
            ("1.5h", None),
            ("-1h", None),
            ("1 h", None),
            ("99999999999999999999d", None),
        ];
        for (text, seconds) in cases {
            assert_eq!(
                parse_duration(text).ok().map(|d| d.as_secs()),
                *seconds,
                "{text:?}"
            );
        }
    }

    #[test]
    fn variables_expand_anywhere_in_a_key() {
        let vars = vars_of(&[("A", "1"), ("B", "2")]);
        assert_eq!(expand("x-${A}-${B}", &vars).ok(), Some("x-1-2".to_owned()));
        assert!(matches!(expand("${C}", &vars), Err(Expand::Unset(v)) if v == "C"));
        assert!(matches!(expand("${A", &vars), Err(Expand::Unclosed)));
    }

    #[test]
    fn the_schema_describes_every_field() {
        let schema = schema();
        let props = &schema["properties"];
        for key in [
            "data_dir",
            "mcp_servers",
            "volumes",
            "profiles",
            "api_keys",
            "limits",
        ] {
            assert!(
                props[key]["description"].is_string(),
                "{key} has no description"
            );
        }
        let text = schema.to_string();
        assert!(
            text.contains("The program to start for a stdio server"),
            "{text}"
        );
    }

    #[test]
    fn the_example_in_the_user_guide_is_a_valid_config() {
        let path = porter_test::checkout_root().join("docs/gateway.md");
        let guide = std::fs::read_to_string(&path).expect("docs/gateway.md is there");
        let example = guide
            .split("```yaml\n")
            .nth(1)
            .and_then(|rest| rest.split("```").next())
            .expect("the guide has a yaml example");
        let vars = |name: &str| {
            name.starts_with("PORTER_KEY_")
                .then(|| format!("secret-{name}"))
        };
        let config = Config::from_yaml(example, &vars).expect("the guide's example is valid");
        assert_eq!(config.mcp_servers.len(), 2);
        assert_eq!(config.keys(&vars).expect("keys").all().len(), 3);
    }

    #[test]
    fn hard_links_are_read_only_from_a_volume_that_says_so() {
        let yaml = "volumes:\n  a: {path: /srv/a}\n  b: {path: /srv/b, allow_hard_links: true}\n";
        let config = Config::from_yaml(yaml, &no_vars).expect("valid");
        assert!(!config.volumes["a"].allow_hard_links);
        assert!(config.volumes["b"].allow_hard_links);
        let volume = &schema()["$defs"]["Volume"]["properties"]["allow_hard_links"];
        assert!(volume["description"].is_string(), "{volume}");
    }

    #[test]
    fn the_committed_schema_matches_the_code() {
        let path = porter_test::checkout_root().join("docs/gateway-config.schema.json");
        let fresh = format!(
            "{}\n",
            serde_json::to_string_pretty(&schema()).expect("a schema serialises")
        );
        if std::env::var_os("PORTER_BLESS").is_some() {
            std::fs::write(&path, &fresh).expect("the schema is written");
            return;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == fresh,
            "{} differs from config::schema(); regenerate it with\n  PORTER_BLESS=1 cargo test -p porter-gateway --lib config::tests::the_committed_schema_matches_the_code",
            path.display()
        );
    }
}
