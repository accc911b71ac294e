"""Several gateway replicas behind one load balancer, for the replica tests:
a PostgreSQL of their own (Debian's `postgresql`: `initdb` and `pg_ctl` in a
temp dir on a free loopback port, run as the `postgres` user when the tests
run as root, since the server refuses root), nginx from Debian's packages
as a round-robin load balancer on loopback whose access log names the
upstream that served each request, and two `porter gateway serve
--transport http` replicas sharing the records and the files' bytes (one
data dir on this machine, or one bucket on Garage).

The blob backend is a parameter (`BLOB_BACKENDS`): each replica test runs
once per backend listed there.
"""

from __future__ import annotations

import atexit
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import start_http, write_config

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from processes import stop  # noqa: E402  (tests/processes.py)
from timing import starting  # noqa: E402  (tests/timing.py)

PG_USER = "porter"
PG_PASSWORD = "pw-never-shown-3c1d"

# The blob stores the replica tests run against. `local`: both replicas on
# one data dir (same machine); `s3`: one bucket on Garage (conftest's
# session-wide node, a fresh bucket per test).
BLOB_BACKENDS = ["local", "s3"]
# Two keys of two tenants, for the replicas' tenancy tests.
KEYS = [
    {"name": "alice", "key": "alice-key-0123456789", "tenant": "acme", "role": "user"},
    {"name": "bob", "key": "bob-key-0123456789", "tenant": "globex", "role": "user"},
]
ALICE = "alice-key-0123456789"
BOB = "bob-key-0123456789"


def is_root() -> bool:
    return os.geteuid() == 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_bin() -> Path:
    if os.environ.get("PORTER_POSTGRES_BIN"):
        return Path(os.environ["PORTER_POSTGRES_BIN"])
    found = sorted(
        (p for p in Path("/usr/lib/postgresql").glob("*/bin") if (p / "initdb").is_file()),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    if not found:
        raise AssertionError(
            "PostgreSQL's initdb was not found under /usr/lib/postgresql/*/bin: install it with "
            "`apt-get install -y --no-install-recommends postgresql` (scripts/test does)"
        )
    return found[-1]


def as_server(command: list[str]) -> list[str]:
    """A PostgreSQL server command, as `postgres` when we are root."""
    return ["runuser", "-u", "postgres", "--", *command] if is_root() else command


_TEMPLATES: dict[Path, Path] = {}


def cluster_template(bin_dir: Path) -> Path:
    """An empty cluster made by `initdb` once per process (per xdist
    worker), which each `Postgres` copies: initdb is most of a new
    instance's start (0.8 s, seconds on a busy disk). `--no-sync`: a test
    cluster need not survive a power cut. Removed when the process ends."""
    if bin_dir in _TEMPLATES:
        return _TEMPLATES[bin_dir]
    root = Path(tempfile.mkdtemp(prefix="porter-pg-template-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    data = root / "pgdata"
    password_file = root / "pw"
    password_file.write_text(PG_PASSWORD)
    if is_root():
        subprocess.run(["chown", "-R", "postgres", str(root)], check=True)
    subprocess.run(
        as_server(
            [
                str(bin_dir / "initdb"),
                "--no-sync",
                "-D",
                str(data),
                "-U",
                PG_USER,
                "--auth=scram-sha-256",
                "-E",
                "UTF8",
                "--locale=C",
                f"--pwfile={password_file}",
            ]
        ),
        check=True,
        capture_output=True,
    )
    _TEMPLATES[bin_dir] = data
    return data


@dataclass
class Postgres:
    """One PostgreSQL instance in a temp dir of its own (the `postgres`
    user must reach it, so not under pytest's private tmp_path); `stop()`
    and `start()` it at will, `close()` removes it."""

    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="porter-pg-")))
    port: int = 0
    bin: Path = field(default_factory=pg_bin)
    # More `-c name=value` settings for the server (a benchmark's statistics).
    settings: str = ""

    def __post_init__(self) -> None:
        with starting("PostgreSQL"):
            self._set_up()

    def _set_up(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.data = self.root / "pgdata"
        # A copy of this process's one initdb (an instance of its own all
        # the same, in a tenth of the time).
        subprocess.run(["cp", "-a", str(cluster_template(self.bin)), str(self.data)], check=True)
        if is_root():
            subprocess.run(["chown", "postgres", str(self.root)], check=True)
        self.port = free_port()
        self.start()

    def start(self) -> None:
        subprocess.run(
            as_server(
                [
                    str(self.bin / "pg_ctl"),
                    "-D",
                    str(self.data),
                    "-l",
                    str(self.root / "server.log"),
                    "-w",
                    "-t",
                    "60",
                    "-o",
                    f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} -c max_connections=200 -c fsync=off {self.settings}".strip(),
                    "start",
                ]
            ),
            check=True,
            capture_output=True,
        )

    def stop(self) -> None:
        """Stops the server now (`-m fast`: open connections are cut)."""
        subprocess.run(
            as_server([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"]),
            check=True,
            capture_output=True,
        )

    def url(self, database: str = "postgres") -> str:
        return f"postgres://{PG_USER}:{PG_PASSWORD}@127.0.0.1:{self.port}/{database}"

    def psql(self, sql: str, database: str = "porter") -> str:
        done = subprocess.run(
            ["psql", "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", self.url(database), "-c", sql],
            check=True,
            capture_output=True,
            text=True,
        )
        return done.stdout.strip()

    def rows(self, url: str, sql: str) -> list[list[str]]:
        """What `sql` answers on the database at `url`, row by row."""
        done = subprocess.run(
            ["psql", "-X", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", sql],
            capture_output=True,
            text=True,
            check=True,
        )
        return [line.split("\t") for line in done.stdout.splitlines() if line]

    def fresh_database(self) -> str:
        """A new empty database's URL."""
        return self.create_database(f"py_{secrets.token_hex(4)}")

    def create_database(self, name: str) -> str:
        subprocess.run(
            [str(self.bin / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", PG_USER, name],
            check=True,
            capture_output=True,
            env={**os.environ, "PGPASSWORD": PG_PASSWORD},
        )
        return self.url(name)

    def close(self) -> None:
        subprocess.run(
            as_server([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(self.root, ignore_errors=True)


def nginx_bin() -> str:
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if not found:
        raise AssertionError("nginx was not found: install it with `apt-get install -y --no-install-recommends nginx`")
    return found


# One access log line per request: method, URI, status, the upstream that
# served it, and the MCP session it named (`-` for none).
LOG_FORMAT = "$request_method $request_uri $status $upstream_addr $http_mcp_session_id"
LOG_LINE = re.compile(r"^(?P<method>\S+) (?P<uri>\S+) (?P<status>\d+) (?P<upstream>\S+) (?P<session>\S+)$")


@dataclass
class Nginx:
    """nginx on a free loopback port, round robin over `upstreams`
    (`host:port`), its config, logs and temp files in `root`.

    By default every request goes to the next replica in turn, whatever
    happens (the tests prove the alternation). With `failover`, as a
    production balancer would be set up: a replica that refuses a
    connection is skipped for 30 s and the request goes to the next one
    (nginx never resends a request a replica has already received)."""

    root: Path
    upstreams: list[str]
    port: int = 0
    failover: bool = False
    # A second port (`grpc_url`) where nginx speaks HTTP/2 (h2c) and passes
    # gRPC on with `grpc_pass`, round robin per call.
    grpc: bool = False
    grpc_port: int = 0

    def __post_init__(self) -> None:
        with starting("nginx"):
            self._start()

    def _start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (self.root / "tmp" / sub).mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.grpc_port = free_port() if self.grpc else 0
        health = "max_fails=1 fail_timeout=30s" if self.failover else "max_fails=0"
        servers = "\n".join(f"        server {u} {health};" for u in self.upstreams)
        next_upstream = "error timeout" if self.failover else "off"
        # As root the workers would drop to `nobody`, who cannot reach the
        # temp dir: they stay root (a test's own nginx, loopback, high port).
        user = "user root;" if is_root() else ""
        tmp = self.root / "tmp"
        self.conf = self.root / "nginx.conf"
        self.conf.write_text(
            f"""{user}
worker_processes 1;
daemon off;
pid {self.root}/nginx.pid;
error_log {self.root}/error.log warn;
events {{ worker_connections 512; }}
http {{
    log_format replicas '{LOG_FORMAT}';
    access_log {self.root}/access.log replicas;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    client_max_body_size 0;
    upstream porter {{
{servers}
    }}
    server {{
        listen 127.0.0.1:{self.port};
        location / {{
            proxy_pass http://porter;
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_read_timeout 300s;
            proxy_next_upstream {next_upstream};
        }}
    }}
{self.grpc_server(next_upstream)}
}}
"""
        )
        self.process = subprocess.Popen(
            [nginx_bin(), "-p", str(self.root), "-c", str(self.conf)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=open(self.root / "nginx.stderr", "w"),
        )
        deadline = time.monotonic() + 15
        waiting = {self.port, self.grpc_port} - {0}
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"nginx exited: {(self.root / 'nginx.stderr').read_text()}{self.error_log()}")
            for port in list(waiting):
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        waiting.discard(port)
            if not waiting:
                return
            time.sleep(0.05)
        raise AssertionError(f"nginx did not listen: {self.error_log()}")

    def grpc_server(self, next_upstream: str) -> str:
        """The server block of the gRPC port, if there is one: HTTP/2
        without TLS (what a gRPC client with an insecure channel speaks)."""
        if not self.grpc:
            return ""
        return f"""    server {{
        listen 127.0.0.1:{self.grpc_port} http2;
        location / {{
            grpc_pass grpc://porter;
            grpc_read_timeout 300s;
            grpc_next_upstream {next_upstream};
        }}
    }}"""

    @property
    def grpc_url(self) -> str:
        return f"http://127.0.0.1:{self.grpc_port}"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def error_log(self) -> str:
        path = self.root / "error.log"
        return path.read_text() if path.exists() else ""

    def log(self) -> list[dict[str, str]]:
        """The access log, one dict per request, oldest first."""
        path = self.root / "access.log"
        if not path.exists():
            return []
        return [m.groupdict() for line in path.read_text().splitlines() if (m := LOG_LINE.match(line))]

    def close(self) -> None:
        stop(self.process)


# The environment variable a replica reads the bucket's secret from.
S3_SECRET_ENV = "PORTER_TEST_S3_SECRET"


def s3_section(endpoint: str, bucket: str, key_id: str, *, prefix: str = "gw", region: str = "garage") -> dict[str, Any]:
    """The `storage.s3` section for `bucket` at `endpoint` (Garage: path
    style), its secret read from `$PORTER_TEST_S3_SECRET`."""
    return {
        "endpoint": endpoint,
        "bucket": bucket,
        "region": region,
        "prefix": prefix,
        "access_key_id": key_id,
        "secret_access_key": "${" + S3_SECRET_ENV + "}",
        "path_style": True,
    }


def storage_config(backend: str, postgres_url: str, s3: dict[str, Any] | None = None) -> dict[str, Any]:
    """The `storage` section of a replica's config for blob `backend`
    (`s3` needs the bucket's section, `s3_section`)."""
    if backend == "local":
        return {"records": "postgres", "postgres_url": postgres_url}
    if backend == "s3":
        if s3 is None:
            raise AssertionError("the s3 blob backend needs its bucket: pass s3=s3_section(...)")
        return {"records": "postgres", "postgres_url": postgres_url, "blobs": "s3", "s3": s3}
    raise AssertionError(f"no blob backend {backend!r} in these tests")


@dataclass
class Replicas:
    """Two gateway replicas on one database behind nginx."""

    root: Path
    postgres: Postgres
    processes: list[subprocess.Popen]
    urls: list[str]
    nginx: Nginx
    config: Path

    def close(self) -> None:
        self.nginx.close()
        stop(*self.processes)

    def upstream_of(self, url: str) -> str:
        return url.removeprefix("http://")


def start_replicas(
    root: Path,
    postgres: Postgres,
    *,
    backend: str = "local",
    keys: list[dict[str, Any]] | None = None,
    extra: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    count: int = 2,
    s3: dict[str, Any] | None = None,
    failover: bool = False,
    grpc: bool = False,
    args: tuple[str, ...] = (),
) -> Replicas:
    """`count` replicas on a fresh database `porter` (one data dir; with
    `backend="s3"` the bytes in the bucket `s3` names), each started with
    `args` after its command, and nginx in front of them (`failover`,
    `grpc`: see `Nginx`)."""
    url = postgres.create_database("porter")
    config = write_config(root, keys=keys, extra={"storage": storage_config(backend, url, s3), **(extra or {})})
    processes, urls = [], []
    for i in range(count):
        home = root / f"replica-{i}"
        home.mkdir()
        process, listening = start_http(home, config, env=env, args=args)
        processes.append(process)
        urls.append(listening)
    nginx = Nginx(root / "nginx", [u.removeprefix("http://") for u in urls], failover=failover, grpc=grpc)
    return Replicas(root=root, postgres=postgres, processes=processes, urls=urls, nginx=nginx, config=config)


@dataclass
class BlobCheck:
    """Whether the file records agree with the bucket: the keys of objects
    under `<prefix>/runs/` that no record names, of records (of runs not
    purged) whose object is missing, and of both whose sizes differ."""

    unrecorded: list[str]
    missing: list[str]
    wrong_size: list[str]

    @property
    def clean(self) -> bool:
        return not (self.unrecorded or self.missing or self.wrong_size)


def check_blobs(postgres: Postgres, s3_client: Any, bucket: str, prefix: str, database: str = "porter") -> BlobCheck:
    """Lists the records' blob keys (`porter_files` of runs not purged) and
    the bucket's objects under the prefix's `runs/`, and reports strays
    both ways. `s3_client` is a client of the test's own (boto3)."""
    rows = postgres.psql(
        "SELECT f.size || ' ' || f.run || '/inbox/' || f.path FROM porter_files f "
        "JOIN porter_runs r ON r.id = f.run WHERE NOT r.purged",
        database,
    )
    recorded: dict[str, int] = {}
    for row in rows.splitlines():
        size, rest = row.split(" ", 1)
        recorded[f"{prefix}/runs/{rest}"] = int(size)
    stored: dict[str, int] = {}
    for page in s3_client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=f"{prefix}/runs/"):
        for item in page.get("Contents", []):
            stored[item["Key"]] = item["Size"]
    return BlobCheck(
        unrecorded=sorted(set(stored) - set(recorded)),
        missing=sorted(set(recorded) - set(stored)),
        wrong_size=sorted(k for k in set(stored) & set(recorded) if stored[k] != recorded[k]),
    )
