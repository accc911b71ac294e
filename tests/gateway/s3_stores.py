"""Real stores for the gateway's S3 tests: one Garage node and one
PostgreSQL instance, each in a temp dir on free loopback ports, started
here and stopped at the end (the Python twins of porter-test's garage.rs
and postgres.rs).

Garage is `$PORTER_GARAGE`, else `~/.cache/porter/garage/bin/garage`
(scripts/test builds it there). Its tests fail when it is missing, unless
`PORTER_SKIP_S3=1`; PostgreSQL's likewise unless `PORTER_SKIP_POSTGRES=1`.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from replicas import Postgres, free_port
from timing import starting

REGION = "garage"


def garage_bin() -> Path:
    if os.environ.get("PORTER_GARAGE"):
        return Path(os.environ["PORTER_GARAGE"])
    return Path.home() / ".cache/porter/garage/bin/garage"


@dataclass
class Garage:
    dir: Path
    config: Path
    endpoint: str
    key_id: str
    secret: str
    process: subprocess.Popen

    def cli(self, *args: str) -> str:
        done = subprocess.run(
            [str(garage_bin()), "-c", str(self.config), *args], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, f"garage {args} failed: {done.stdout}\n{done.stderr}"
        return done.stdout

    def fresh_bucket(self) -> str:
        name = f"porter-py-{secrets.token_hex(4)}"
        self.cli("bucket", "create", name)
        self.cli("bucket", "allow", "--read", "--write", "--owner", name, "--key", "porter")
        return name

    def client(self):  # boto3's S3 client, of its own: not the gateway's.
        import boto3
        from botocore.config import Config

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id=self.key_id,
            aws_secret_access_key=self.secret,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 2}),
        )

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def start_garage(db_engine: str = "sqlite") -> Garage:
    """A one-node Garage on loopback; `db_engine` is its metadata store (`sqlite` or `lmdb`)."""
    if os.environ.get("PORTER_SKIP_S3") == "1":
        pytest.skip("object-store (Garage) tests skipped: PORTER_SKIP_S3=1")
    with starting("Garage"):
        return _start_garage(db_engine)


def _start_garage(db_engine: str) -> Garage:
    binary = garage_bin()
    assert binary.is_file(), (
        f"Garage was not found at {binary}: build it with `cargo install garage --locked --root "
        "~/.cache/porter/garage`, set PORTER_GARAGE, or set PORTER_SKIP_S3=1 to skip these tests"
    )
    root = Path(tempfile.mkdtemp(prefix="porter-garage-py-"))
    rpc, s3, admin = free_port(), free_port(), free_port()
    config = root / "garage.toml"
    config.write_text(
        f'metadata_dir = "{root}/meta"\n'
        f'data_dir = "{root}/data"\n'
        f'db_engine = "{db_engine}"\n'
        "replication_factor = 1\n"
        f'rpc_bind_addr = "127.0.0.1:{rpc}"\n'
        f'rpc_public_addr = "127.0.0.1:{rpc}"\n'
        f'rpc_secret = "{secrets.token_hex(32)}"\n'
        "[s3_api]\n"
        f's3_region = "{REGION}"\n'
        f'api_bind_addr = "127.0.0.1:{s3}"\n'
        "[admin]\n"
        f'api_bind_addr = "127.0.0.1:{admin}"\n'
    )
    log = open(root / "garage.log", "w")
    process = subprocess.Popen(
        [str(binary), "-c", str(config), "server"],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        env={**os.environ, "RUST_LOG": "garage=warn"},
    )
    garage = Garage(
        dir=root,
        config=config,
        endpoint=f"http://127.0.0.1:{s3}",
        key_id="GK" + secrets.token_hex(12),
        secret=secrets.token_hex(32),
        process=process,
    )
    deadline = time.monotonic() + 60
    while subprocess.run(
        [str(binary), "-c", str(config), "status"], capture_output=True
    ).returncode != 0:
        assert time.monotonic() < deadline, (root / "garage.log").read_text()
        assert process.poll() is None, (root / "garage.log").read_text()
        time.sleep(0.2)
    node = garage.cli("node", "id", "-q").strip().split("@")[0]
    garage.cli("layout", "assign", "-z", "dc1", "-c", "1G", node)
    garage.cli("layout", "apply", "--version", "1")
    garage.cli("key", "import", "--yes", "-n", "porter", garage.key_id, garage.secret)
    while True:
        try:
            socket.create_connection(("127.0.0.1", s3), timeout=1).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "the S3 API did not listen"
            time.sleep(0.1)
    return garage


def start_postgres() -> Postgres:
    """A PostgreSQL of its own (replicas.Postgres: the one harness of the
    gateway tests), unless `PORTER_SKIP_POSTGRES=1`."""
    if os.environ.get("PORTER_SKIP_POSTGRES") == "1":
        pytest.skip("PostgreSQL tests skipped: PORTER_SKIP_POSTGRES=1")
    return Postgres()
