"""The gateway over streamable HTTP: one run per MCP session, owned by the
API key that opened it, and the admin MCP endpoint's `file` tool, which
answers a run the caller may not read exactly like a missing one."""

from __future__ import annotations

import contextlib
import socket
import time
import uuid
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from harness import STUB, all_text, http_client, sha256, start_http, texts, tiny_image, write_config

pytestmark = pytest.mark.anyio

KEYS = [
    {"name": "alice", "key": "alice-key-0123456789", "tenant": "acme", "role": "user"},
    {"name": "ops", "key": "${PORTER_TEST_OPS_KEY}", "tenant": "acme", "role": "tenant_operator"},
    {"name": "bob", "key": "bob-key-0123456789", "tenant": "globex", "role": "user"},
    {"name": "root", "key": "root-key-0123456789", "tenant": "porter", "role": "admin"},
]
ENV = {"PORTER_TEST_OPS_KEY": "ops-key-from-the-environment"}


@contextlib.asynccontextmanager
async def admin_client(url: str, key: str):
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http:
        async with Client(streamable_http_client(url + "/admin/mcp", http_client=http)) as client:
            yield client


@pytest.fixture
def gateway(tmp_path: Path):
    config = write_config(tmp_path, keys=KEYS)
    process, url = start_http(tmp_path, config, env=ENV)
    yield url, tmp_path / "data"
    process.terminate()
    process.wait(timeout=10)


async def test_each_session_is_a_run_of_its_key_and_the_admin_tool_respects_tenants(gateway) -> None:
    url, data = gateway
    async with http_client(url, "alice-key-0123456789") as alice:
        result = await alice.call_tool("mcp__everything__get-tiny-image", {})
        [line] = [text for text in texts(result) if STUB.search(text)]
        stub = STUB.search(line)
        [run_dir] = sorted((data / "runs").glob("*"))
        run_id = run_dir.name
        kept = run_dir / "inbox" / stub["path"]
        assert sha256(kept.read_bytes()) == sha256(tiny_image())

        # The run's owner, its tenant's operator and an admin can list it.
        for key in ("alice-key-0123456789", ENV["PORTER_TEST_OPS_KEY"], "root-key-0123456789"):
            async with admin_client(url, key) as admin:
                listing = await admin.call_tool("file", {"run_id": run_id, "op": "ls"})
                assert not listing.is_error, all_text(listing)
                assert stub["path"] in all_text(listing)

        # Another tenant's user gets exactly the answer of a run that does not exist.
        async with admin_client(url, "bob-key-0123456789") as admin:
            theirs = await admin.call_tool("file", {"run_id": run_id, "op": "ls"})
            missing_id = str(uuid.uuid7()) if hasattr(uuid, "uuid7") else "0190a4b2-0000-7000-8000-000000000000"
            missing = await admin.call_tool("file", {"run_id": missing_id, "op": "ls"})
            assert theirs.is_error and missing.is_error
            assert all_text(theirs).replace(run_id, "<id>") == all_text(missing).replace(missing_id, "<id>")
            # Network ops are never open from outside, even to a reader.
        async with admin_client(url, "root-key-0123456789") as admin:
            download = await admin.call_tool("file", {"run_id": run_id, "op": "download", "url": "http://127.0.0.1/"})
            assert download.is_error and "outside" in all_text(download)

    # A second session is a second run.
    async with http_client(url, "bob-key-0123456789") as bob:
        await bob.call_tool("mcp__fixtures__image", {})
    assert len(list((data / "runs").glob("*"))) == 2


async def test_without_a_valid_key_the_mcp_endpoints_refuse(gateway) -> None:
    url, _ = gateway
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    headers = {"Accept": "application/json, text/event-stream"}
    async with httpx2.AsyncClient() as http:
        for path in ("/mcp", "/admin/mcp"):
            for auth in ({}, {"Authorization": "Bearer wrong-key"}, {"Authorization": "Basic YWxpY2U6eA=="}):
                response = await http.post(url + path, json=body, headers={**headers, **auth})
                assert response.status_code == 401, (path, auth, response.text)
                assert "Bearer" in response.headers["www-authenticate"]


def test_a_refusal_sent_before_the_body_arrived_says_the_connection_closes(gateway) -> None:
    """The gateway answers a wrong key before reading the body, then closes
    the connection (the rest of the body would be read as the next request).
    Unless the answer says so, a client reuses the connection for its next
    request and gets "server disconnected" instead of an answer."""
    url, _ = gateway
    host, port = url.removeprefix("http://").rsplit(":", 1)
    for path in ("/mcp", "/admin/mcp", "/v1/runs"):
        with socket.create_connection((host, int(port)), timeout=10) as raw:
            raw.sendall(
                f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer wrong-key\r\n"
                "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                "Content-Length: 100000\r\n\r\n".encode() + b"{" * 1000
            )
            answer = b""
            while b"\r\n\r\n" not in answer:
                chunk = raw.recv(65536)
                assert chunk, (path, answer)
                answer += chunk
            head = answer.split(b"\r\n\r\n")[0].decode().lower()
            assert head.startswith("http/1.1 401"), (path, head)
            assert "\r\nconnection: close" in head, (path, head)


async def test_a_legacy_session_is_its_own_run_and_sessionless_requests_share_the_keys_run(gateway) -> None:
    url, data = gateway
    # The 2026-07-28 protocol has no sessions: each request stands alone, so
    # the key's requests share one run.
    async with http_client(url, "alice-key-0123456789") as alice:
        await alice.call_tool("mcp__fixtures__image", {})
    async with http_client(url, "alice-key-0123456789") as alice_again:
        await alice_again.call_tool("mcp__fixtures__audio", {})
    runs = sorted((data / "runs").glob("*"))
    assert len(runs) == 1
    assert {p.name for p in (runs[0] / "inbox").iterdir()} == {"image.png", "audio.wav"}
    # A client that opens a session (initialize) gets a run of its own.
    headers = {"Authorization": "Bearer alice-key-0123456789"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http:
        async with Client(streamable_http_client(url + "/mcp", http_client=http), mode="legacy") as legacy:
            await legacy.call_tool("mcp__fixtures__image", {})
    runs = sorted((data / "runs").glob("*"))
    assert len(runs) == 2
    # The session's end ends its run (the gateway drops the session a moment
    # after the client's DELETE).
    deadline = time.monotonic() + 10
    while '"kind":"run_ended"' not in (runs[1] / "transcript.jsonl").read_text().replace(" ", ""):
        assert time.monotonic() < deadline, "the legacy session's run never ended"
        time.sleep(0.05)
