"""An MCP session over streamable HTTP outlives a quiet spell.

rmcp frees a quiet session's machinery (after five minutes by default;
`--session-park`). Neither the Python nor the TypeScript SDK client opens a
new session when a request answers 404, so a session lost there leaves the
client stuck ("Session terminated", seen with 310 s of quiet before the
gateway kept its sessions). The gateway keeps each session's handshake and
run, and the next request rebuilds the session on the same run. A session
without requests for `--session-idle` ends, and its run with it; so does a
session its client ends."""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from harness import STUB, all_text, http_client, porter_bin, start_http, write_config
from server_log import SESSIONS_LOG, until_parked

pytestmark = pytest.mark.anyio

ALICE = "k-sessions-alice-0123456789abcdef"
BOB = "k-sessions-bob-0123456789abcdef00"
KEYS = [
    {"name": "alice", "key": ALICE, "tenant": "acme", "role": "admin"},
    {"name": "bob", "key": BOB, "tenant": "other", "role": "user"},
]


def runs_of(url: str, key: str) -> list[dict]:
    answer = httpx2.get(url + "/v1/runs", headers={"Authorization": f"Bearer {key}"}, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.json()["runs"]


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    process.wait(timeout=15)


def log_path(root: Path) -> Path:
    return root / "gateway-http.stderr"


def log_of(root: Path) -> str:
    return log_path(root).read_text(errors="replace")


def ended_soon(url: str, key: str) -> dict:
    """The one run of `key`, once it has ended (within a few seconds)."""
    deadline = time.monotonic() + 10
    while True:
        [run] = runs_of(url, key)
        if run.get("ended_at") is not None or time.monotonic() > deadline:
            return run
        time.sleep(0.1)


# Parked after a second with nothing in flight (looked at every second);
# the tests wait for the gateway to say it parked them.
PARK = ("--session-park", "1s")
LOG_PARKING = {"RUST_LOG": f"info,{SESSIONS_LOG}"}



async def test_a_session_parked_after_a_quiet_spell_goes_on_in_its_run(tmp_path: Path) -> None:
    process, url = start_http(tmp_path, write_config(tmp_path, keys=KEYS), env=LOG_PARKING, args=PARK)
    try:
        async with http_client(url, ALICE, mode="legacy") as client:
            first = await client.call_tool("mcp__fixtures__big-blob", {"size": 3000})
            assert STUB.search(all_text(first)), all_text(first)
            await until_parked(log_path(tmp_path), 1)
            second = await client.call_tool("mcp__fixtures__big-blob", {"size": 3001})
            assert STUB.search(all_text(second)), all_text(second)
            await until_parked(log_path(tmp_path), 2)
            echoed = await client.call_tool("mcp__everything__echo", {"message": "still here"})
            assert "still here" in all_text(echoed), all_text(echoed)
            [run] = runs_of(url, ALICE)
            assert run.get("ended_at") is None, run
            assert sorted(f["size"] for f in run["files"]) == [3000, 3001], run
        # The client ended its session (DELETE): the run ends with it.
        run = ended_soon(url, ALICE)
        assert run.get("ended_at") is not None, run
        assert runs_of(url, BOB) == []
    finally:
        stop(process)
    log = log_of(tmp_path)
    # Twice parked, twice resumed, on the one run.
    assert log.count("a session resumed") == 2, log


async def test_a_call_longer_than_the_park_time_is_answered_and_the_session_goes_on(tmp_path: Path) -> None:
    # rmcp's own keep-alive drops a session after a spell without messages
    # even while a call is being answered; a session is parked only with
    # nothing in flight. The call sends no progress for three seconds, three
    # times the park time.
    process, url = start_http(tmp_path, write_config(tmp_path, keys=KEYS), args=PARK)
    try:
        async with http_client(url, ALICE, mode="legacy") as client:
            slow = await client.call_tool("mcp__fixtures__slow", {"steps": 1, "ms": 3000})
            assert "done after 1 steps" in all_text(slow), all_text(slow)
            again = await client.call_tool("mcp__everything__echo", {"message": "after the slow one"})
            assert "after the slow one" in all_text(again)
    finally:
        stop(process)
    assert "a session resumed" not in log_of(tmp_path)


async def test_a_session_quiet_past_its_idle_time_ends_with_its_run(tmp_path: Path) -> None:
    process, url = start_http(
        tmp_path, write_config(tmp_path, keys=KEYS), args=("--session-park", "1s", "--session-idle", "2s")
    )
    try:
        async with http_client(url, ALICE, mode="legacy") as client:
            first = await client.call_tool("mcp__everything__echo", {"message": "one"})
            assert "one" in all_text(first)
            run = ended_soon(url, ALICE)
            assert run.get("ended_at") is not None, run
            with pytest.raises(Exception) as refused:
                await client.call_tool("mcp__everything__echo", {"message": "two"})
            assert "terminated" in str(refused.value).lower() or "404" in str(refused.value), refused.value
    finally:
        stop(process)


async def test_an_admin_session_parked_after_a_quiet_spell_goes_on(tmp_path: Path) -> None:
    process, url = start_http(tmp_path, write_config(tmp_path, keys=KEYS), env=LOG_PARKING, args=PARK)
    try:
        async with http_client(url, ALICE, mode="legacy") as client:
            await client.call_tool("mcp__fixtures__big-blob", {"size": 2500})
            [run] = runs_of(url, ALICE)
            headers = {"Authorization": f"Bearer {ALICE}"}
            async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http:
                async with Client(streamable_http_client(url + "/admin/mcp", http_client=http), mode="legacy") as admin:
                    # Both sessions parked, then the admin one again after
                    # its call (the other stays parked).
                    for parked in (2, 3):
                        await until_parked(log_path(tmp_path), parked)
                        listing = await admin.call_tool("file", {"run_id": run["id"], "op": "ls"})
                        assert not listing.is_error, all_text(listing)
                        assert run["files"][0]["path"] in all_text(listing), all_text(listing)
    finally:
        stop(process)


def post(url: str, key: str, body: dict, session: str | None = None) -> httpx2.Response:
    headers = {
        "Authorization": f"Bearer {key}",
        "MCP-Protocol-Version": "2025-11-25",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    if session:
        headers["Mcp-Session-Id"] = session
    return httpx2.post(url + "/mcp", headers=headers, json=body, timeout=30)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def test_a_parked_session_presented_with_another_key_is_refused(tmp_path: Path) -> None:
    process, url = start_http(tmp_path, write_config(tmp_path, keys=KEYS), env=LOG_PARKING, args=PARK)
    try:
        opened = post(url, ALICE, INITIALIZE)
        assert opened.status_code == 200, opened.text
        session = opened.headers["mcp-session-id"]
        done = post(url, ALICE, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        assert done.status_code in (200, 202, 204), done.text
        asyncio.run(until_parked(log_path(tmp_path), 1))
        # Bob names Alice's parked session: it is not resumed for him, and
        # no run of Alice's is joined or shown to him.
        refused = post(url, BOB, LIST_TOOLS, session)
        assert refused.status_code != 200 or '"error"' in refused.text, refused.text
        assert '"tools"' not in refused.text, refused.text
        assert runs_of(url, BOB) == []
        # Alice's session goes on, on her run.
        listed = post(url, ALICE, LIST_TOOLS, session)
        assert listed.status_code == 200 and '"tools"' in listed.text, listed.text
        [run] = runs_of(url, ALICE)
        assert run.get("ended_at") is None, run
    finally:
        stop(process)
    assert "another owner's key" in log_of(tmp_path)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--session-park", "2h", "--session-idle", "1h"), "--session-park"),
        (("--session-park", "0s"), "at least 1s"),
        (("--session-idle", "soon"), "not a duration"),
    ],
)
def test_session_times_that_cannot_be_met_are_refused_before_serving(tmp_path: Path, args: tuple, said: str) -> None:
    config = write_config(tmp_path, keys=KEYS)
    done = subprocess.run(
        [str(porter_bin()), "gateway", "serve", "--transport", "http", "--listen", "127.0.0.1:0", "--config", str(config), *args],
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 2, done
    assert said in done.stderr.decode(), done.stderr
    assert not (tmp_path / "data").exists() or not any((tmp_path / "data").rglob("*.sqlite*")), "nothing is left behind"
