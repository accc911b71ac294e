"""Two gateway replicas on one PostgreSQL behind nginx (round robin, no
sticky sessions) serve one inbox: a legacy MCP session's requests land on
both replicas and stay one run, replica B's event stream sees what was
captured through replica A, and the tree cap holds exactly for captures
racing through both. Each test runs once per blob backend (`BLOB_BACKENDS`).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from harness import STUB, NOT_KEPT, all_text, http_client, pseudo_random, sha256
from replicas import ALICE, BLOB_BACKENDS, BOB, KEYS, PG_PASSWORD, S3_SECRET_ENV, Postgres, Replicas, s3_section, start_replicas
from server_log import SESSIONS_LOG, until_parked  # noqa: E402  (tests/server_log.py, on the path harness sets)

pytestmark = pytest.mark.anyio


@pytest.fixture(params=BLOB_BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def blobs(request: pytest.FixtureRequest, backend: str) -> dict:
    """For `s3`: a fresh bucket on the session's Garage, as `start_replicas`
    options (its `s3` section and the secret's environment)."""
    if backend != "s3":
        return {}
    garage = request.getfixturevalue("shared_garage")
    bucket = garage.fresh_bucket()
    return {"s3": s3_section(garage.endpoint, bucket, garage.key_id), "env": {S3_SECRET_ENV: garage.secret}}


def replicas_for(tmp_path: Path, postgres: Postgres, backend: str, blobs: dict, **options) -> Replicas:
    return start_replicas(tmp_path / "gw", postgres, backend=backend, keys=KEYS, **blobs, **options)


@pytest.fixture
def replicas(tmp_path: Path, postgres: Postgres, backend: str, blobs: dict) -> Iterator[Replicas]:
    started = replicas_for(tmp_path, postgres, backend, blobs)
    yield started
    started.close()


def runs_of(url: str, key: str) -> list[dict]:
    answer = httpx2.get(url + "/v1/runs", headers={"Authorization": f"Bearer {key}"}, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.json()["runs"]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_every_request_alternates_between_replicas_and_the_run_stays_one_run(
    replicas: Replicas, mode: str
) -> None:
    calls = 6
    async with http_client(replicas.nginx.url, ALICE, mode=mode) as client:
        for i in range(calls):
            size = 2000 + i
            result = await client.call_tool("mcp__fixtures__big-blob", {"size": size})
            [stub] = [m for m in (STUB.search(t) for t in all_text(result).splitlines()) if m]
            assert stub["sha"] == sha256(pseudo_random(size, 5))[:12]

    # Every request went to the replicas in turn: round robin, no
    # stickiness. A legacy session's requests (all but `initialize`) name
    # the session; a 2026-07-28 client's name none.
    log = replicas.nginx.log()
    posts = [line for line in log if line["method"] == "POST" and line["uri"] == "/mcp"]
    if mode == "legacy":
        in_session = [line for line in posts if line["session"] != "-"]
    else:
        assert all(line["session"] == "-" for line in posts), posts
        in_session = posts
    assert len(in_session) >= calls, log
    upstreams = [line["upstream"] for line in in_session]
    assert set(upstreams) == {u.removeprefix("http://") for u in replicas.urls}, upstreams
    # Round robin hands each request to the next replica; a long-lived GET
    # (a legacy session's stream) takes its turn too, so two POSTs in a row
    # may meet one replica, never three.
    assert all(len({a, b, c}) == 2 for a, b, c in zip(upstreams, upstreams[1:], upstreams[2:])), upstreams
    for upstream in set(upstreams):
        assert upstreams.count(upstream) * 3 >= len(upstreams), upstreams
    assert all(line["status"] in {"200", "202"} for line in in_session), in_session

    # One run, seen the same from either replica, holding every capture.
    for url in replicas.urls:
        runs = runs_of(url, ALICE)
        assert len(runs) == 1, runs
        [run] = runs
        assert sorted(f["size"] for f in run["files"]) == [2000 + i for i in range(calls)]
    # Another tenant sees no run on either replica.
    for url in replicas.urls:
        assert runs_of(url, BOB) == []


async def sse_events(url: str, key: str, path: str, wanted: int, seen: list[dict], ready: asyncio.Event) -> None:
    """Reads `wanted` events of the SSE stream at `path` into `seen`."""
    headers = {"Authorization": f"Bearer {key}", "Accept": "text/event-stream"}
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=60)) as http:
        async with http.stream("GET", url + path, headers=headers) as answer:
            assert answer.status_code == 200
            ready.set()
            async for line in answer.aiter_lines():
                if line.startswith("data:"):
                    event = json.loads(line.removeprefix("data:").strip())
                    event["received"] = time.monotonic()
                    seen.append(event)
                    if len(seen) >= wanted:
                        return


async def test_replica_b_streams_live_what_is_captured_through_replica_a(replicas: Replicas) -> None:
    a, b = replicas.urls
    async with http_client(a, ALICE, mode="legacy") as client:
        await client.call_tool("mcp__fixtures__echo", {"message": "hello"})
        [run] = runs_of(b, ALICE)
        run_seen: list[dict] = []
        all_seen: list[dict] = []
        run_ready, all_ready = asyncio.Event(), asyncio.Event()
        run_stream = asyncio.create_task(
            sse_events(b, ALICE, f"/v1/runs/{run['id']}/events?from_seq=2", 1, run_seen, run_ready)
        )
        all_stream = asyncio.create_task(sse_events(b, ALICE, "/v1/events", 1, all_seen, all_ready))
        await asyncio.wait_for(run_ready.wait(), 10)
        await asyncio.wait_for(all_ready.wait(), 10)
        # The page's stream subscribes to running runs as it answers.
        await asyncio.sleep(0.2)
        started = time.monotonic()
        result = await client.call_tool("mcp__fixtures__image", {})
        stub = STUB.search(all_text(result))
        assert stub, all_text(result)
        await asyncio.wait_for(asyncio.gather(run_stream, all_stream), 5)
    for seen in (run_seen, all_seen):
        [event] = seen
        assert event["kind"] == "file_captured", event
        assert event["data"]["path"] == stub["path"]
        assert event["received"] - started < 1.0, event["received"] - started

    # B serves the file A captured, with the bytes the upstream sent.
    answer = httpx2.get(
        f"{b}/v1/runs/{run['id']}/inbox/{stub['path']}", headers={"Authorization": f"Bearer {ALICE}"}, timeout=30
    )
    assert answer.status_code == 200
    assert sha256(answer.content)[:12] == stub["sha"]
    # Another tenant's probe answers like a missing run, on both replicas.
    for url in replicas.urls:
        theirs = httpx2.get(f"{url}/v1/runs/{run['id']}/events", headers={"Authorization": f"Bearer {BOB}"}, timeout=30)
        missing = httpx2.get(
            f"{url}/v1/runs/0190a4b2-0000-7000-8000-000000000000/events",
            headers={"Authorization": f"Bearer {BOB}"},
            timeout=30,
        )
        assert (theirs.status_code, theirs.text.replace(run["id"], "<id>")) == (
            missing.status_code,
            missing.text.replace("0190a4b2-0000-7000-8000-000000000000", "<id>"),
        )


FILE_BYTES = 4096
ROOM_FOR = 7
CAPTURES = 50


@pytest.fixture
def capped(tmp_path: Path, postgres: Postgres, backend: str, blobs: dict) -> Iterator[Replicas]:
    # Room for exactly ROOM_FOR files after the first one.
    limits = {"limits": {"inbox_max_bytes": 100 + ROOM_FOR * FILE_BYTES}}
    started = replicas_for(tmp_path, postgres, backend, blobs, extra=limits)
    yield started
    started.close()


async def test_captures_racing_through_both_replicas_keep_exactly_what_fits(capped: Replicas) -> None:
    async with http_client(capped.nginx.url, ALICE, mode="legacy") as client:
        first = await client.call_tool("mcp__fixtures__big-blob", {"size": 100})
        assert STUB.search(all_text(first)), all_text(first)
        results = await asyncio.gather(
            *(client.call_tool("mcp__fixtures__big-blob", {"size": FILE_BYTES}) for _ in range(CAPTURES))
        )
    kept = [r for r in results if STUB.search(all_text(r))]
    refused = [r for r in results if NOT_KEPT.search(all_text(r))]
    assert len(kept) + len(refused) == CAPTURES
    for result in refused:
        assert "limit for this run's inbox" in NOT_KEPT.search(all_text(result))["why"]
    served = {line["upstream"] for line in capped.nginx.log() if line["method"] == "POST"}
    assert len(served) == 2, served

    [run] = runs_of(capped.urls[0], ALICE)
    stored = sum(f["size"] for f in run["files"])
    assert (len(kept), stored) == (ROOM_FOR, 100 + ROOM_FOR * FILE_BYTES)
    # Nothing is left reserved once the captures are done.
    assert capped.postgres.psql("SELECT count(*) FROM porter_reservations") == "0"


async def test_postgres_down_for_five_seconds_under_load_fails_clearly_and_recovers(replicas: Replicas) -> None:
    a, b = replicas.urls
    timeout_s = 10.0  # the records' call timeout
    outcomes: list[tuple[str, float, bool, str]] = []
    stop = asyncio.Event()

    async def load(url: str, name: str) -> None:
        async with http_client(url, ALICE, mode="legacy") as client:
            i = 0
            while not stop.is_set():
                i += 1
                started = time.monotonic()
                try:
                    result = await client.call_tool("mcp__fixtures__big-blob", {"size": 1000 + i})
                    text, ok = all_text(result), bool(STUB.search(all_text(result)))
                except Exception as error:  # noqa: BLE001 - every failure is judged below
                    text, ok = f"{type(error).__name__}: {error}", False
                outcomes.append((name, time.monotonic() - started, ok, text))
                await asyncio.sleep(0.05)

    workers = [asyncio.create_task(load(a, "a")), asyncio.create_task(load(b, "b"))]
    # Under load first: both replicas have kept a few files.
    deadline = time.monotonic() + 60
    while any(sum(1 for n, _, ok, _ in outcomes if n == name and ok) < 3 for name in ("a", "b")):
        assert time.monotonic() < deadline, outcomes
        await asyncio.sleep(0.1)
    before = len(outcomes)
    replicas.postgres.stop()
    down_at = time.monotonic()
    await asyncio.sleep(5)
    replicas.postgres.start()
    up_at, answered_before_up = time.monotonic(), len(outcomes)

    def recovered() -> bool:
        return all(
            len(last := [ok for n, _, ok, _ in outcomes[answered_before_up:] if n == name][-3:]) == 3 and all(last)
            for name in ("a", "b")
        )

    # Once it is back, every replica works again: three calls in a row
    # each (judged below), waited for rather than slept on.
    deadline = time.monotonic() + 30
    while not recovered() and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    stop.set()
    await asyncio.wait_for(asyncio.gather(*workers), timeout_s * 3)

    assert before > 0 and all(ok for _, _, ok, _ in outcomes[:before]), outcomes[:before]
    # No call hangs past the timeout (and a little for the upstream's part).
    slowest = max(took for _, took, _, _ in outcomes)
    assert slowest < timeout_s + 3, slowest
    # While it is down, calls fail, saying the database is the trouble.
    failed = [text for _, _, ok, text in outcomes if not ok]
    assert failed, "no call failed while PostgreSQL was down"
    for text in failed:
        assert "records database" in text, text
        assert PG_PASSWORD not in text
    # Once it is back, every replica works again (within 30 s).
    for name in ("a", "b"):
        last = [ok for n, _, ok, _ in outcomes if n == name][-3:]
        assert all(last), [o for o in outcomes if o[0] == name][-3:]
    assert up_at - down_at >= 5

    # Each run's events are numbered 1, 2, 3, … with none lost or twice, and
    # every kept file has its file_captured event.
    for run in runs_of(a, ALICE):
        seqs = replicas.postgres.psql(f"SELECT seq FROM porter_events WHERE run = '{run['id']}' ORDER BY seq").split()
        assert [int(s) for s in seqs] == list(range(1, len(seqs) + 1)), seqs
        captured = replicas.postgres.psql(
            f"SELECT count(*) FROM porter_events WHERE run = '{run['id']}' AND kind = 'file_captured'"
        )
        assert int(captured) == len(run["files"]), (captured, len(run["files"]))


def rpc(url: str, key: str, body: dict, session: str | None = None) -> tuple[httpx2.Response, list[dict]]:
    """One JSON-RPC POST to `/mcp`, and the messages its answer holds."""
    headers = {
        "Authorization": f"Bearer {key}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }
    if session:
        headers["Mcp-Session-Id"] = session
    answer = httpx2.post(url + "/mcp", json=body, headers=headers, timeout=60)
    if answer.headers.get("content-type", "").startswith("text/event-stream"):
        messages = [
            json.loads(line.removeprefix("data:").strip())
            for line in answer.text.splitlines()
            if line.startswith("data:") and line.removeprefix("data:").strip()
        ]
    elif answer.headers.get("content-type", "").startswith("application/json"):
        messages = [answer.json()]
    else:
        messages = []
    return answer, messages


def test_a_session_resumes_on_another_replica_only_for_its_own_key(replicas: Replicas) -> None:
    a, b = replicas.urls
    opened, _ = rpc(
        a,
        ALICE,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
        },
    )
    session = opened.headers["mcp-session-id"]
    rpc(a, ALICE, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    list_tools = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}

    # Another tenant's key with Alice's session id gets no tools from B, and
    # the same answer as for a session that never was.
    theirs, their_messages = rpc(b, BOB, list_tools, session)
    never, never_messages = rpc(b, BOB, list_tools, "no-such-session-0123")
    assert not any("result" in m for m in their_messages), their_messages
    assert theirs.status_code == never.status_code, (theirs.status_code, theirs.text, never.status_code, never.text)

    # Alice's own key resumes it on B, on her run.
    mine, messages = rpc(b, ALICE, list_tools, session)
    assert mine.status_code == 200, mine.text
    [answer] = [m for m in messages if m.get("id") == 2]
    assert any(tool["name"] == "mcp__fixtures__image" for tool in answer["result"]["tools"])
    assert len(runs_of(b, ALICE)) == 1
    assert runs_of(b, BOB) == []


def replica_logs(replicas: Replicas) -> list[Path]:
    return [replicas.root / f"replica-{i}" / "gateway-http.stderr" for i in range(len(replicas.urls))]


async def test_a_session_quiet_past_the_park_time_keeps_its_run_and_a_long_call_its_answer(
    tmp_path: Path, postgres: Postgres
) -> None:
    # Each replica parks the sessions it serves only with nothing in flight
    # there (rmcp's own keep-alive dropped a session mid-call), and parking
    # on the replica that opened a session does not end its run.
    replicas = start_replicas(
        tmp_path / "gw", postgres, keys=KEYS, args=("--session-park", "1s"), env={"RUST_LOG": f"info,{SESSIONS_LOG}"}
    )
    try:
        async with http_client(replicas.nginx.url, ALICE, mode="legacy") as client:
            first = await client.call_tool("mcp__fixtures__big-blob", {"size": 2100})
            assert STUB.search(all_text(first)), all_text(first)
            # Silent for three times the park time, on whichever replica.
            slow = await client.call_tool("mcp__fixtures__slow", {"steps": 1, "ms": 3000})
            assert "done after 1 steps" in all_text(slow), all_text(slow)
            for log in replica_logs(replicas):
                await until_parked(log, 1)
            [run] = runs_of(replicas.urls[0], ALICE)
            assert run.get("ended_at") is None, run
            again = await client.call_tool("mcp__fixtures__big-blob", {"size": 2101})
            assert STUB.search(all_text(again)), all_text(again)
            [same] = runs_of(replicas.urls[1], ALICE)
            assert same["id"] == run["id"] and same.get("ended_at") is None, same
            assert sorted(f["size"] for f in same["files"]) == [2100, 2101], same
        # The client ended its session (a DELETE, on either replica): the
        # run ends with it.
        deadline = time.monotonic() + 15
        while runs_of(replicas.urls[0], ALICE)[0].get("ended_at") is None:
            assert time.monotonic() < deadline, "the run did not end with its session"
            await asyncio.sleep(0.1)
    finally:
        replicas.close()
