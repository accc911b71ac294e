//! A real PostgreSQL for tests: its own instance from Debian's `postgresql`
//! package (`initdb` + `pg_ctl`), in a temp directory, on a free loopback
//! port, stopped and removed at the end.
//!
//! The server refuses to run as root, so when the tests do, every server
//! command runs as the `postgres` user (`runuser -u postgres --`). Clients
//! connect over TCP with a password (`scram-sha-256`), as a deployment would.
//!
//! Tests that need PostgreSQL call [`instance`]; it panics (the test fails)
//! when the server cannot be started, and answers `None` only when
//! `PORTER_SKIP_POSTGRES=1` is set, so CI never skips them silently.

use std::os::unix::fs::MetadataExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// `SKIP_ENV` names the variable that skips the PostgreSQL tests when `1`.
pub const SKIP_ENV: &str = "PORTER_SKIP_POSTGRES";
/// `BIN_ENV` names a folder holding `initdb` and `pg_ctl`, when they are not
/// in `/usr/lib/postgresql/<version>/bin`.
pub const BIN_ENV: &str = "PORTER_POSTGRES_BIN";

/// The role the tests connect as, and its password.
pub const USER: &str = "porter";
/// The password of [`USER`]: tests check it never shows in a message.
pub const PASSWORD: &str = "pw-never-shown-7f3a";

/// `Postgres` is one running server. Dropping the process's own stops the
/// server and removes its directory; a watchdog does the same when the
/// process that owns it ends without dropping it (a shared instance, a
/// panic, a kill).
#[derive(Debug)]
pub struct Postgres {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    databases: AtomicU32,
    /// Whether this process started it for itself (and so stops it on drop).
    own: bool,
}

/// The instance this test process shares (started on first use; under
/// nextest, the one of the whole run: see [`crate::shared`]), or `None` when
/// `PORTER_SKIP_POSTGRES=1`.
///
/// # Panics
///
/// When the server cannot be started: the message says what to install.
pub fn instance() -> Option<&'static Postgres> {
    static SHARED: OnceLock<Postgres> = OnceLock::new();
    crate::shared_server(
        &SHARED,
        SKIP_ENV,
        "PostgreSQL",
        crate::shared::run_server::<Postgres>,
    )
}

impl crate::shared::RunServer for Postgres {
    const NAME: &'static str = "postgresql";

    fn start_owned_by(owner: u32) -> Self {
        Self::start_for(owner)
    }

    fn state(&self) -> serde_json::Value {
        serde_json::json!({"dir": self.dir, "bin": self.bin, "port": self.port})
    }

    fn from_state(state: &serde_json::Value) -> Option<Self> {
        Some(Self {
            dir: PathBuf::from(state["dir"].as_str()?),
            bin: PathBuf::from(state["bin"].as_str()?),
            port: u16::try_from(state["port"].as_u64()?).ok()?,
            databases: AtomicU32::new(0),
            own: false,
        })
    }
}

fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

fn bin_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(BIN_ENV) {
        return PathBuf::from(dir);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path().join("bin"))
        .filter(|bin| bin.join("initdb").is_file())
        .collect();
    found.sort_by_key(|bin| {
        bin.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    found.pop().unwrap_or_else(|| {
        panic!(
            "PostgreSQL's initdb was not found under /usr/lib/postgresql/*/bin: install it with \
             `apt-get install -y --no-install-recommends postgresql`, set {BIN_ENV} to its bin \
             folder, or set {SKIP_ENV}=1 to skip these tests"
        )
    })
}

/// A command for the server's own tools: as `postgres` when we are root.
fn server_command(bin: &Path, tool: &str) -> Command {
    if is_root() {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(bin.join(tool));
        command
    } else {
        Command::new(bin.join(tool))
    }
}

fn run(mut command: Command, what: &str) {
    let output = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("could not run {what}: {e}"));
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

impl Postgres {
    /// Starts a new instance of its own (`initdb`, then `pg_ctl start`).
    ///
    /// # Panics
    ///
    /// When the server cannot be set up or started.
    #[must_use]
    pub fn start() -> Self {
        crate::shared::timed("postgresql", || Self::start_for(std::process::id()))
    }

    /// Starts an instance that a watchdog stops when the process `owner`
    /// ends (this process stops it on drop only when it is the owner).
    fn start_for(owner: u32) -> Self {
        let bin = bin_dir();
        let dir = crate::kept_temp_dir("porter-pg-");
        let data = dir.join("data");
        let password_file = dir.join("pw");
        std::fs::write(&password_file, PASSWORD).expect("the password file is written");
        if is_root() {
            let mut chown = Command::new("chown");
            chown.args(["-R", "postgres"]).arg(&dir);
            run(chown, "chown the PostgreSQL temp dir to postgres");
        }
        let mut initdb = server_command(&bin, "initdb");
        // `--no-sync`: a test cluster need not survive a power cut, and
        // syncing it is most of initdb's time on a busy disk.
        initdb
            .arg("--no-sync")
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                USER,
                "--auth=scram-sha-256",
                "-E",
                "UTF8",
                "--locale=C",
            ])
            .arg(format!("--pwfile={}", password_file.display()));
        run(initdb, "initdb");
        let port = crate::free_port();
        let mut start = server_command(&bin, "pg_ctl");
        start
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(dir.join("server.log"))
            .args(["-w", "-t", "60", "-o"])
            .arg(format!(
                "-c listen_addresses=127.0.0.1 -p {port} -k {} -c max_connections=200 -c fsync=off",
                dir.display()
            ))
            .arg("start")
            // Its own process group: a signal to the group of the test that
            // started it (a timeout) must not stop it for the other tests.
            .process_group(0);
        run(start, "pg_ctl start");
        watch(owner, &bin, &dir);
        Self {
            dir,
            bin,
            port,
            databases: AtomicU32::new(0),
            own: owner == std::process::id(),
        }
    }

    /// The loopback port the server listens on.
    #[must_use]
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A URL for the `postgres` database (with the password).
    #[must_use]
    pub fn url(&self) -> String {
        self.url_for("postgres")
    }

    /// A URL for `database` (with the password).
    #[must_use]
    pub fn url_for(&self, database: &str) -> String {
        format!(
            "postgres://{USER}:{PASSWORD}@127.0.0.1:{}/{database}",
            self.port
        )
    }

    /// Creates a new empty database and answers its URL: each test gets its
    /// own, so tests sharing the instance never see each other's rows.
    ///
    /// # Panics
    ///
    /// When `createdb` fails.
    #[must_use]
    pub fn fresh_database(&self) -> String {
        let n = self.databases.fetch_add(1, Ordering::SeqCst);
        let name = format!("t{}_{n}", std::process::id());
        let mut createdb = Command::new(self.bin.join("createdb"));
        createdb
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", USER])
            .arg(&name)
            .env("PGPASSWORD", PASSWORD);
        run(createdb, "createdb");
        self.url_for(&name)
    }
}

/// Runs `sql` with `psql` against `url` and answers its output, unaligned
/// and without headers (one row a line, columns split by `|`).
///
/// # Panics
///
/// When `psql` cannot run or the statement fails.
#[must_use]
pub fn psql(url: &str, sql: &str) -> String {
    let output = Command::new("psql")
        .args([
            "-X",
            "-A",
            "-t",
            "-v",
            "ON_ERROR_STOP=1",
            "-d",
            url,
            "-c",
            sql,
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("could not run psql: {e}"));
    assert!(
        output.status.success(),
        "psql failed on {sql:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if self.own {
            stop(&self.bin, &self.dir);
        }
    }
}

fn stop(bin: &Path, dir: &Path) {
    let mut command = server_command(bin, "pg_ctl");
    command
        .arg("-D")
        .arg(dir.join("data"))
        .args(["-m", "immediate", "-w", "stop"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let _ = command.status();
    let _ = std::fs::remove_dir_all(dir);
}

/// Has a watchdog stop the server and remove its directory once the
/// process `owner` ends.
fn watch(owner: u32, bin: &Path, dir: &Path) {
    let as_postgres = if is_root() {
        "runuser -u postgres -- "
    } else {
        ""
    };
    crate::shared::when_gone(
        owner,
        &format!(
            "{as_postgres}'{pg_ctl}' -D '{data}' -m immediate -w stop >/dev/null 2>&1; rm -rf '{dir}'",
            pg_ctl = bin.join("pg_ctl").display(),
            data = dir.join("data").display(),
            dir = dir.display(),
        ),
    );
}
