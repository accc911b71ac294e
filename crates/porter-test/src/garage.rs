//! A real S3-compatible object store for tests: one Garage node
//! (`cargo install garage --locked`), configured in a temp directory, on
//! free loopback ports, with a bucket and a key made with its own CLI,
//! stopped and removed at the end.
//!
//! Garage is AGPL; it only ever runs here as a separate process.
//!
//! The binary is `$PORTER_GARAGE`, else `~/.cache/porter/garage/bin/garage`
//! (where `scripts/test` installs it). Tests that need it call [`instance`]:
//! it panics (the test fails) when Garage cannot be started, and answers
//! `None` only when `PORTER_SKIP_S3=1` is set, so CI never skips them
//! silently.

use std::net::TcpStream;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// `SKIP_ENV` names the variable that skips the object-store tests when `1`.
pub const SKIP_ENV: &str = "PORTER_SKIP_S3";
/// `BIN_ENV` names the Garage binary, when it is not in the cache.
pub const BIN_ENV: &str = "PORTER_GARAGE";
/// The region the node signs for.
pub const REGION: &str = "garage";

/// `Garage` is one running node. Dropping the process's own stops the node
/// and removes its directory; a watchdog does the same when the process
/// that owns it ends without dropping it.
#[derive(Debug)]
pub struct Garage {
    dir: PathBuf,
    bin: PathBuf,
    config: PathBuf,
    s3_port: u16,
    child: Mutex<Option<Child>>,
    buckets: AtomicU32,
    key_id: String,
    secret: String,
    /// Whether this process started it for itself (and so stops it on drop).
    own: bool,
}

/// The node this test process shares (started on first use; under nextest,
/// the one of the whole run: see [`crate::shared`]), or `None` when
/// `PORTER_SKIP_S3=1`.
///
/// # Panics
///
/// When the node cannot be started: the message says how to get Garage.
pub fn instance() -> Option<&'static Garage> {
    static SHARED: OnceLock<Garage> = OnceLock::new();
    crate::shared_server(
        &SHARED,
        SKIP_ENV,
        "object-store (Garage)",
        crate::shared::run_server::<Garage>,
    )
}

impl crate::shared::RunServer for Garage {
    const NAME: &'static str = "garage";

    fn start_owned_by(owner: u32) -> Self {
        Self::start_for(owner)
    }

    fn state(&self) -> serde_json::Value {
        serde_json::json!({
            "dir": self.dir,
            "bin": self.bin,
            "config": self.config,
            "s3_port": self.s3_port,
            "key_id": self.key_id,
            "secret": self.secret,
        })
    }

    fn from_state(state: &serde_json::Value) -> Option<Self> {
        Some(Self {
            dir: PathBuf::from(state["dir"].as_str()?),
            bin: PathBuf::from(state["bin"].as_str()?),
            config: PathBuf::from(state["config"].as_str()?),
            s3_port: u16::try_from(state["s3_port"].as_u64()?).ok()?,
            child: Mutex::new(None),
            buckets: AtomicU32::new(0),
            key_id: state["key_id"].as_str()?.to_owned(),
            secret: state["secret"].as_str()?.to_owned(),
            own: false,
        })
    }
}

/// Where the Garage binary is.
///
/// # Panics
///
/// When it is not there: the message says how to build it.
#[must_use]
pub fn binary() -> PathBuf {
    if let Some(bin) = std::env::var_os(BIN_ENV) {
        return PathBuf::from(bin);
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/root"), PathBuf::from);
    let bin = home.join(".cache/porter/garage/bin/garage");
    assert!(
        bin.is_file(),
        "Garage was not found at {}: build it with `cargo install garage --locked --root \
         ~/.cache/porter/garage` (about 40 minutes cold), set {BIN_ENV} to a garage binary, or set \
         {SKIP_ENV}=1 to skip these tests",
        bin.display()
    );
    bin
}

fn random_hex(bytes: usize) -> String {
    let mut out = String::new();
    while out.len() < bytes * 2 {
        out.push_str(&uuid_like());
    }
    out.truncate(bytes * 2);
    out
}

/// 32 hex digits from the kernel's random source.
fn uuid_like() -> String {
    let raw = std::fs::read_to_string("/proc/sys/kernel/random/uuid").expect("a random uuid");
    raw.trim().replace('-', "")
}

impl Garage {
    /// Starts a node of its own, lays it out, and makes a bucket and a key.
    ///
    /// # Panics
    ///
    /// When the node cannot be set up or started.
    #[must_use]
    pub fn start() -> Self {
        crate::shared::timed("garage", || Self::start_for(std::process::id()))
    }

    /// Starts a node that a watchdog kills when the process `owner` ends
    /// (this process stops it on drop only when it is the owner).
    fn start_for(owner: u32) -> Self {
        let bin = binary();
        let dir = crate::kept_temp_dir("porter-garage-");
        let (rpc, s3, admin) = (crate::free_port(), crate::free_port(), crate::free_port());
        let config = dir.join("garage.toml");
        std::fs::write(
            &config,
            format!(
                "metadata_dir = \"{meta}\"\n\
                 data_dir = \"{data}\"\n\
                 db_engine = \"sqlite\"\n\
                 replication_factor = 1\n\
                 rpc_bind_addr = \"127.0.0.1:{rpc}\"\n\
                 rpc_public_addr = \"127.0.0.1:{rpc}\"\n\
                 rpc_secret = \"{secret}\"\n\
                 [s3_api]\n\
                 s3_region = \"{REGION}\"\n\
                 api_bind_addr = \"127.0.0.1:{s3}\"\n\
                 [admin]\n\
                 api_bind_addr = \"127.0.0.1:{admin}\"\n",
                meta = dir.join("meta").display(),
                data = dir.join("data").display(),
                secret = random_hex(32),
            ),
        )
        .expect("garage.toml is written");
        let log = std::fs::File::create(dir.join("garage.log")).expect("the Garage log");
        let child = Command::new(&bin)
            .arg("-c")
            .arg(&config)
            .arg("server")
            .env("RUST_LOG", "garage=warn")
            // Its own process group: a signal to the group of the test that
            // started it (a timeout) must not stop it for the other tests.
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("the log twice"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("could not start {}: {e}", bin.display()));
        watch(owner, child.id(), &dir);
        let garage = Self {
            dir,
            bin,
            config,
            s3_port: s3,
            child: Mutex::new(Some(child)),
            buckets: AtomicU32::new(0),
            key_id: format!("GK{}", random_hex(12)),
            secret: random_hex(32),
            own: owner == std::process::id(),
        };
        garage.wait_for(
            || garage.try_cli(&["status"]).is_some(),
            "the node to answer",
        );
        let node = garage.cli(&["node", "id", "-q"]);
        let node = node.trim().split('@').next().unwrap_or_default().to_owned();
        let _ = garage.cli(&["layout", "assign", "-z", "dc1", "-c", "1G", &node]);
        let _ = garage.cli(&["layout", "apply", "--version", "1"]);
        let _ = garage.cli(&[
            "key",
            "import",
            "--yes",
            "-n",
            "porter",
            &garage.key_id,
            &garage.secret,
        ]);
        garage.wait_for(
            || TcpStream::connect(("127.0.0.1", s3)).is_ok(),
            "the S3 API to listen",
        );
        garage
    }

    fn wait_for(&self, ready: impl Fn() -> bool, what: &str) {
        let started = Instant::now();
        while !ready() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "Garage did not get ready ({what}) within 60 s; its log:\n{}",
                std::fs::read_to_string(self.dir.join("garage.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The Garage CLI with this node's config and `args`, stdin closed.
    fn cli_command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.bin);
        command
            .arg("-c")
            .arg(&self.config)
            .args(args)
            .stdin(Stdio::null());
        command
    }

    fn try_cli(&self, args: &[&str]) -> Option<String> {
        let output = self.cli_command(args).output().ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// Runs the Garage CLI against this node and answers its output.
    ///
    /// # Panics
    ///
    /// When the command fails.
    #[must_use = "the output is the point; use `let _ =` to drop it"]
    pub fn cli(&self, args: &[&str]) -> String {
        let output = self
            .cli_command(args)
            .output()
            .unwrap_or_else(|e| panic!("could not run garage {args:?}: {e}"));
        assert!(
            output.status.success(),
            "garage {args:?} failed ({}):\n{}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// `http://127.0.0.1:<port>`: the S3 API.
    #[must_use]
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.s3_port)
    }

    /// The access key's id (allowed on every bucket [`Garage::fresh_bucket`]
    /// makes).
    #[must_use]
    pub fn access_key_id(&self) -> &str {
        &self.key_id
    }

    /// The access key's secret.
    #[must_use]
    pub fn secret_access_key(&self) -> &str {
        &self.secret
    }

    /// The folder holding the node's config, data and log.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Creates a new bucket the key may read, write and own, and answers its
    /// name: each test gets its own.
    ///
    /// # Panics
    ///
    /// When the CLI fails.
    #[must_use]
    pub fn fresh_bucket(&self) -> String {
        let n = self.buckets.fetch_add(1, Ordering::SeqCst);
        let name = format!("porter-t{}-{n}", std::process::id());
        let _ = self.cli(&["bucket", "create", &name]);
        let _ = self.cli(&[
            "bucket", "allow", "--read", "--write", "--owner", &name, "--key", "porter",
        ]);
        name
    }

    /// Stops the node (kill), leaving its folder for [`Drop`].
    pub fn stop(&self) {
        if let Some(mut child) = self
            .child
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
        {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Garage {
    fn drop(&mut self) {
        if self.own {
            self.stop();
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Has a watchdog kill the node and remove its directory once the process
/// `owner` ends.
fn watch(owner: u32, node: u32, dir: &Path) {
    crate::shared::when_gone(
        owner,
        &format!("kill -9 {node} 2>/dev/null; rm -rf '{}'", dir.display()),
    );
}
