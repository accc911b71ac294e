"""What the gateway tests share: the porter binary, a config naming the
upstream servers (the reference server-everything and our own TS SDK
server, upstream.mjs, twice: once with `binary_results: capture`, once
passthrough), and `porter gateway serve` over stdio or streamable HTTP with
the Python `mcp` SDK as the client.

The files the upstreams send are rebuilt here from the same recipes
(`pseudo_random`, `png`, `wav`), so a test compares the inbox's bytes with
what the upstream really sent, not with what the gateway says it got.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
import struct
import subprocess
import time
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
import sys
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))
from timing import record, starting  # noqa: E402  (tests/timing.py)

CLIENT_TIMEOUT_S = 120.0

# `[file: volume:inbox:<path> · <type> · <size> · sha256:<12 hex>… · from <origin>]`
STUB = re.compile(
    r"\[file: volume:inbox:(?P<path>[^ ]+) · (?P<type>[^ ]+) · (?P<size>[^·]+) · "
    r"sha256:(?P<sha>[0-9a-f]{12})… · from (?P<origin>[^\]]+)\]"
)
NOT_KEPT = re.compile(r"\[file not kept: (?P<why>[^·]+) · (?P<type>[^ ]+) · (?P<size>[^·]+) · from (?P<origin>[^\]]+)\]")


def porter_bin() -> Path:
    """`$PORTER_BIN`, else the debug build (built once)."""
    if os.environ.get("PORTER_BIN"):
        return Path(os.environ["PORTER_BIN"])
    subprocess.run(["cargo", "build", "-q", "-p", "porter"], cwd=REPO, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return target / "debug" / "porter"


def everything_bin() -> str:
    return os.environ.get("EVERYTHING_BIN") or str(HERE / "node_modules" / ".bin" / "mcp-server-everything")


@dataclass
class Backend:
    """The stores of every gateway a test starts, while conftest's
    `storage_backend` fixture runs the test on PostgreSQL + Garage: the
    config's `storage` section, the environment its secrets come from, and
    the bucket (with a client of the test's own, boto3) to read files back."""

    storage: dict[str, Any]
    env: dict[str, str]
    s3: Any
    bucket: str
    prefix: str

    def keys(self, under: str = "") -> list[str]:
        """Every key in the bucket under `<prefix>/<under>`, the prefix cut."""
        found = []
        pages = self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=f"{self.prefix}/{under}")
        for page in pages:
            found += [item["Key"].removeprefix(f"{self.prefix}/") for item in page.get("Contents", [])]
        return found


# Set by conftest's `storage_backend` fixture (None: SQLite + the data dir).
BACKEND: Backend | None = None

# Runs a test once per backend: SQLite + local disk, PostgreSQL + Garage.
each_backend = pytest.mark.usefixtures("storage_backend")


def backend_env() -> dict[str, str]:
    return BACKEND.env if BACKEND else {}


def bucket_keys() -> list[str]:
    """Everything the gateway left in the bucket (none without one)."""
    return BACKEND.keys() if BACKEND else []


def write_config(root: Path, *, keys: list[dict[str, Any]] | None = None, extra: dict[str, Any] | None = None) -> Path:
    """A gateway config in `root` with its data under `root/data` (and
    the test's backend's `storage`, unless `extra` names one)."""
    root.mkdir(parents=True, exist_ok=True)
    config = {
        "data_dir": str(root / "data"),
        "mcp_servers": {
            "everything": {"command": everything_bin(), "args": ["stdio"]},
            "fixtures": {"command": "node", "args": [str(HERE / "upstream.mjs")], "binary_results": "capture"},
            "plain": {"command": "node", "args": [str(HERE / "upstream.mjs")]},
        },
    }
    if keys:
        config["api_keys"] = keys
    if BACKEND:
        config["storage"] = BACKEND.storage
    config.update(extra or {})
    path = root / "porter.yaml"
    # JSON is YAML.
    path.write_text(json.dumps(config, indent=2) + "\n")
    return path


@dataclass
class Served:
    client: Client
    data: Path
    stderr: Path

    def inbox_file(self, path: str) -> Path:
        """The one run's inbox file `path` on disk (on Garage: a copy of
        its object, read back with boto3)."""
        if BACKEND:
            found = [k for k in BACKEND.keys("runs/") if re.fullmatch(r"runs/[^/]+/inbox/" + re.escape(path), k)]
            assert len(found) == 1, f"expected one object for inbox file {path!r}, found {found}"
            copy = self.data.parent / "from-the-bucket" / path
            copy.parent.mkdir(parents=True, exist_ok=True)
            body = BACKEND.s3.get_object(Bucket=BACKEND.bucket, Key=f"{BACKEND.prefix}/{found[0]}")["Body"]
            copy.write_bytes(body.read())
            return copy
        found = list((self.data / "runs").glob(f"*/inbox/{path}"))
        assert len(found) == 1, f"expected one inbox file {path!r}, found {found}"
        return found[0]

    def runs(self) -> list[Path]:
        return sorted((self.data / "runs").glob("*"))


def unwrap(group: BaseException) -> BaseException:
    inner = group
    while isinstance(inner, BaseExceptionGroup) and len(inner.exceptions) == 1:
        inner = inner.exceptions[0]
    return inner


@contextlib.asynccontextmanager
async def stdio_gateway(
    root: Path, config: Path | None = None, env: dict[str, str] | None = None, **client_options: Any
) -> AsyncIterator[Served]:
    """`porter gateway serve` over stdio with a connected client;
    `client_options` go to the `mcp` `Client` (callbacks, `mode`)."""
    config = config or write_config(root)
    stderr = root / "gateway.stderr"
    full_env = {**os.environ, **backend_env(), **(env or {})}
    params = StdioServerParameters(
        command=str(porter_bin()), args=["gateway", "serve", "--config", str(config)], env=full_env
    )
    began = time.monotonic()
    try:
        with open(stderr, "w") as errlog:
            async with Client(
                stdio_client(params, errlog=errlog), read_timeout_seconds=CLIENT_TIMEOUT_S, **client_options
            ) as client:
                record("porter gateway (stdio)", time.monotonic() - began)
                yield Served(client=client, data=root / "data", stderr=stderr)
    except BaseExceptionGroup as group:
        inner = unwrap(group)
        if inner is group:
            raise
        raise inner from None


# The gateway's "listening on" line, whole: stderr is unbuffered, so a read
# may end in the middle of the address ("http://127.0.0.1:").
LISTENING = re.compile(r"listening on (http://\S+) \(MCP at")


def start_http(
    root: Path, config: Path, env: dict[str, str] | None = None, args: tuple[str, ...] = ()
) -> tuple[subprocess.Popen, str]:
    """`porter gateway serve --transport http` on a free loopback port, with
    `args` after the command's own."""
    with starting("porter gateway (http)"):
        return _start_http(root, config, env, args)


def _start_http(
    root: Path, config: Path, env: dict[str, str] | None, args: tuple[str, ...]
) -> tuple[subprocess.Popen, str]:
    stderr = open(root / "gateway-http.stderr", "w")
    process = subprocess.Popen(
        [str(porter_bin()), "gateway", "serve", "--transport", "http", "--listen", "127.0.0.1:0", "--config", str(config), *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        env={**os.environ, **backend_env(), **(env or {})},
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        text = (root / "gateway-http.stderr").read_text()
        match = LISTENING.search(text)
        if match:
            return process, match.group(1)
        if process.poll() is not None:
            raise AssertionError(f"the gateway exited: {text}")
        time.sleep(0.05)
    process.kill()
    raise AssertionError("the gateway did not start listening")


@contextlib.asynccontextmanager
async def http_client(url: str, key: str | None, **client_options: Any) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http:
        try:
            async with Client(
                streamable_http_client(url + "/mcp", http_client=http),
                read_timeout_seconds=CLIENT_TIMEOUT_S,
                **client_options,
            ) as client:
                yield client
        except BaseExceptionGroup as group:
            inner = unwrap(group)
            if inner is group:
                raise
            raise inner from None


def texts(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


def all_text(result: types.CallToolResult) -> str:
    return "\n".join(texts(result))


# ---------------------------------------------------------------------------
# The upstream's recipes (upstream.mjs), rebuilt


def pseudo_random(size: int, seed: int) -> bytes:
    out = bytearray(size)
    x = seed or 1
    for i in range(size):
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        out[i] = x & 0xFF
    return bytes(out)


def _chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def png(width: int, height: int, seed: int) -> bytes:
    pixels = pseudo_random(width * 3 * height, seed)
    raw = b"".join(b"\x00" + pixels[y * width * 3 : (y + 1) * width * 3] for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    # Node's deflateSync and Python's zlib.compress agree at the default level.
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw)) + _chunk(b"IEND", b"")


def wav(samples: int, seed: int) -> bytes:
    data = pseudo_random(samples * 2, seed)
    header = b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 1, 8000, 16000, 2, 16)
    return header + b"data" + struct.pack("<I", len(data)) + data


def pdf_like(size: int, seed: int) -> bytes:
    return "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n".encode("latin1") + pseudo_random(size, seed)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tiny_image() -> bytes:
    """server-everything's own tiny PNG, read from its source."""
    source = (HERE / "node_modules/@modelcontextprotocol/server-everything/dist/tools/get-tiny-image.js").read_text()
    match = re.search(r'MCP_TINY_IMAGE = "([A-Za-z0-9+/=]+)"', source)
    assert match, "server-everything's tiny image constant moved"
    return base64.b64decode(match.group(1))
