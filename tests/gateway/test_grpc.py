"""The run events over gRPC (`porter.v1.Runs`), through a client that
grpcio-tools generates here, at test time, from the committed
`proto/porter/v1/runs.proto`: a capture through the gateway's MCP endpoint
streams as `file_captured` on `WatchEvents`, a stream resumed from a seq
gives exactly the later events, `WatchAll` sees every run of the key's
tenant and none of another's, keys are checked as on the run API, and on two
replicas sharing PostgreSQL a capture through replica A streams on replica
B's gRPC within a second.

Each stream is compared with the run's transcript, which the gateway writes
as it records each event, not with what the stream says of itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import grpc
import httpx2
import pytest
from grpc_tools import protoc

from harness import REPO, STUB, all_text, http_client, start_http, write_config
from replicas import ALICE, BOB, KEYS, Postgres, start_replicas

pytestmark = pytest.mark.anyio

MISSING_RUN = "0190a4b2-0000-7000-8000-000000000000"
# How long a stream may take to bring what is expected of it.
STREAM_TIMEOUT_S = 15.0


@pytest.fixture(scope="module")
def stubs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, ModuleType]]:
    """`runs_pb2` and `runs_pb2_grpc`, generated from the committed .proto."""
    out = tmp_path_factory.mktemp("grpc-stubs")
    proto_root = REPO / "proto"
    code = protoc.main(
        [
            "grpc_tools.protoc",
            f"-I{proto_root}",
            f"--python_out={out}",
            f"--grpc_python_out={out}",
            "porter/v1/runs.proto",
        ]
    )
    assert code == 0, "grpcio-tools could not compile proto/porter/v1/runs.proto"
    sys.path.insert(0, str(out))
    try:
        yield importlib.import_module("porter.v1.runs_pb2"), importlib.import_module("porter.v1.runs_pb2_grpc")
    finally:
        sys.path.remove(str(out))
        for name in [n for n in sys.modules if n == "porter" or n.startswith("porter.")]:
            del sys.modules[name]


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    config = write_config(tmp_path, keys=KEYS)
    process, url = start_http(tmp_path, config)
    yield url, tmp_path / "data"
    process.terminate()
    process.wait(timeout=10)


def channel(url: str) -> grpc.aio.Channel:
    """A plaintext (h2c) channel to the gateway at `url`, never through a proxy."""
    return grpc.aio.insecure_channel(url.removeprefix("http://"), options=[("grpc.enable_http_proxy", 0)])


def bearer(key: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {key}")]


async def take(call: Any, wanted: int | Callable[[list[Any]], bool], timeout: float = STREAM_TIMEOUT_S) -> list[Any]:
    """The first `wanted` messages of a server stream (or those until
    `wanted(seen)` holds; the stream itself never ends: it follows the run),
    then cancels it."""
    seen: list[Any] = []
    done = wanted if callable(wanted) else lambda seen: len(seen) >= wanted

    async def read() -> None:
        async for message in call:
            seen.append(message)
            if done(seen):
                return

    try:
        await asyncio.wait_for(read(), timeout)
    finally:
        call.cancel()
    return seen


def transcript(data: Path, run_id: str) -> list[dict]:
    """The run's events as the gateway wrote them down."""
    lines = (data / "runs" / run_id / "transcript.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def as_seen(event: Any) -> tuple[str, int, str, int, str | None]:
    data = json.loads(event.data_json)
    return event.run_id, event.seq, event.kind, event.at_unix_ms, data.get("path")


def as_written(run_id: str, event: dict) -> tuple[str, int, str, int, str | None]:
    return run_id, event["seq"], event["kind"], event["at"], event["data"].get("path")


def runs_of(url: str, key: str) -> list[dict]:
    answer = httpx2.get(url + "/v1/runs", headers={"Authorization": f"Bearer {key}"}, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.json()["runs"]


@contextlib.asynccontextmanager
async def alice_and_runs(rpc: ModuleType, mcp_url: str, grpc_url: str) -> AsyncIterator[tuple[Any, Any]]:
    """Alice's MCP client at `mcp_url`, and the Runs service on a channel to `grpc_url`."""
    async with http_client(mcp_url, ALICE, mode="legacy") as client, channel(grpc_url) as chan:
        yield client, rpc.RunsStub(chan)


async def refusal(
    pb: ModuleType, runs: Any, run_id: str, metadata: list[tuple[str, str]] | None
) -> tuple[grpc.StatusCode, str]:
    """How WatchEvents of `run_id` with `metadata` is refused: its code and details."""
    call = runs.WatchEvents(pb.WatchEventsRequest(run_id=run_id), metadata=metadata)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await take(call, 1)
    return refused.value.code(), refused.value.details()


async def capture(client: Any, tool: str = "mcp__everything__get-tiny-image") -> str:
    """Calls a tool that returns an image; the path its stub names."""
    result = await client.call_tool(tool, {})
    stub = STUB.search(all_text(result))
    assert stub, all_text(result)
    return stub["path"]


async def test_a_capture_streams_as_file_captured_and_a_resumed_stream_has_exactly_the_later_events(
    gateway: tuple[str, Path], stubs: tuple[ModuleType, ModuleType]
) -> None:
    pb, rpc = stubs
    url, data = gateway
    async with alice_and_runs(rpc, url, url) as (client, runs):
        first = await capture(client)
        [run] = runs_of(url, ALICE)
        run_id = run["id"]

        # The backlog: every event written so far, in order, the capture among them.
        written = transcript(data, run_id)
        backlog = await take(runs.WatchEvents(pb.WatchEventsRequest(run_id=run_id), metadata=bearer(ALICE)), len(written))
        assert [as_seen(e) for e in backlog] == [as_written(run_id, e) for e in written]
        assert [e.seq for e in backlog] == list(range(1, len(written) + 1))
        captured = [e for e in backlog if e.kind == "file_captured"]
        assert [json.loads(e.data_json)["path"] for e in captured] == [first]
        assert json.loads(captured[0].data_json)["origin"] == "mcp:everything/get-tiny-image"

        # Live: a stream held open from the next seq gets the next capture.
        after = len(written) + 1
        live = runs.WatchEvents(pb.WatchEventsRequest(run_id=run_id, from_seq=after), metadata=bearer(ALICE))
        reader = asyncio.create_task(take(live, 2))
        await asyncio.sleep(0.3)
        second = await capture(client, "mcp__fixtures__image")
        third = await capture(client)
        got = await reader
        assert [(e.seq, e.kind, json.loads(e.data_json)["path"]) for e in got] == [
            (after, "file_captured", second),
            (after + 1, "file_captured", third),
        ]

        # Resumed from each seq: exactly the events from there on, no gap, no
        # duplicate, the same as the transcript.
        written = transcript(data, run_id)
        for from_seq in range(1, len(written) + 1):
            call = runs.WatchEvents(pb.WatchEventsRequest(run_id=run_id, from_seq=from_seq), metadata=bearer(ALICE))
            resumed = await take(call, len(written) - from_seq + 1)
            assert [as_seen(e) for e in resumed] == [as_written(run_id, e) for e in written[from_seq - 1 :]]
        # Nothing comes after the last one until something happens.
        call = runs.WatchEvents(pb.WatchEventsRequest(run_id=run_id, from_seq=len(written) + 1), metadata=bearer(ALICE))
        with pytest.raises(asyncio.TimeoutError):
            await take(call, 1, timeout=1.0)


async def test_watch_all_sees_every_run_of_the_tenant_and_none_of_another(
    gateway: tuple[str, Path], stubs: tuple[ModuleType, ModuleType]
) -> None:
    pb, rpc = stubs
    url, data = gateway
    async with channel(url) as chan:
        runs = rpc.RunsStub(chan)
        # Opened before either run starts: each run streams from its first event.
        alices = runs.WatchAll(pb.WatchAllRequest(), metadata=bearer(ALICE))
        bobs = runs.WatchAll(pb.WatchAllRequest(from_seq=1), metadata=bearer(BOB))
        alice_reader = asyncio.create_task(take(alices, 4))
        bob_reader = asyncio.create_task(take(bobs, 1, timeout=STREAM_TIMEOUT_S))
        await asyncio.sleep(0.3)
        async with http_client(url, ALICE, mode="legacy") as one, http_client(url, ALICE, mode="legacy") as two:
            paths = [await capture(one), await capture(two, "mcp__fixtures__image")]
            seen = await alice_reader
        by_run: dict[str, list[Any]] = {}
        for event in seen:
            by_run.setdefault(event.run_id, []).append(event)
        assert len(by_run) == 2, seen
        for run_id, events in by_run.items():
            assert [as_seen(e) for e in events] == [as_written(run_id, e) for e in transcript(data, run_id)[:2]]
            assert [e.kind for e in events] == ["run_started", "file_captured"]
        assert sorted(json.loads(e.data_json)["path"] for e in seen if e.kind == "file_captured") == sorted(paths)

        # Another tenant's stream, open all along, got none of it.
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(bob_reader), 1.5)
        bob_reader.cancel()

        # Opened later with from_seq=1: a run going brings its backlog first.
        before = {r["id"] for r in runs_of(url, ALICE)}
        async with http_client(url, ALICE, mode="legacy") as three:
            path = await capture(three)
            [going] = [r["id"] for r in runs_of(url, ALICE) if r["id"] not in before]
            written = transcript(data, going)
            call = runs.WatchAll(pb.WatchAllRequest(from_seq=1), metadata=bearer(ALICE))
            seen = await take(call, lambda seen: len([e for e in seen if e.run_id == going]) >= len(written))
            backlog = [e for e in seen if e.run_id == going]
            assert [as_seen(e) for e in backlog] == [as_written(going, e) for e in written]
            assert backlog[-1].kind == "file_captured" and json.loads(backlog[-1].data_json)["path"] == path
            assert {e.run_id for e in seen} <= before | {going}


async def test_another_tenants_run_is_not_found_like_a_missing_one_and_a_bad_key_is_unauthenticated(
    gateway: tuple[str, Path], stubs: tuple[ModuleType, ModuleType]
) -> None:
    pb, rpc = stubs
    url, _ = gateway
    async with alice_and_runs(rpc, url, url) as (client, runs):
        await capture(client)
        [run] = runs_of(url, ALICE)

        theirs = await refusal(pb, runs, run["id"], bearer(BOB))
        assert theirs == await refusal(pb, runs, MISSING_RUN, bearer(BOB))
        assert theirs == await refusal(pb, runs, "not-a-run-id", bearer(BOB))
        assert theirs[0] == grpc.StatusCode.NOT_FOUND
        assert "GET /v1/runs lists the runs you may read" in theirs[1]

        for metadata in (bearer("not-a-key"), None, [("authorization", f"Basic {ALICE}")]):
            code, details = await refusal(pb, runs, run["id"], metadata)
            assert code == grpc.StatusCode.UNAUTHENTICATED
            assert "authorization: Bearer <key>" in details and "api_keys" in details
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await take(runs.WatchAll(pb.WatchAllRequest(), metadata=metadata), 1)
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED

        # The owner's key on the same call still streams.
        [started] = await take(runs.WatchEvents(pb.WatchEventsRequest(run_id=run["id"]), metadata=bearer(ALICE)), 1)
        assert (started.seq, started.kind) == (1, "run_started")


async def test_a_capture_through_replica_a_streams_on_replica_b_within_a_second(
    tmp_path: Path, postgres: Postgres, stubs: tuple[ModuleType, ModuleType]
) -> None:
    pb, rpc = stubs
    replicas = start_replicas(tmp_path / "gw", postgres, keys=KEYS)
    try:
        a, b = replicas.urls
        async with alice_and_runs(rpc, a, b) as (client, runs):
            await client.call_tool("mcp__fixtures__echo", {"message": "hello"})
            [run] = runs_of(b, ALICE)
            one = runs.WatchEvents(pb.WatchEventsRequest(run_id=run["id"], from_seq=2), metadata=bearer(ALICE))
            every = runs.WatchAll(pb.WatchAllRequest(), metadata=bearer(ALICE))
            received: dict[str, float] = {}

            async def first(call: Any, name: str) -> Any:
                [event] = await take(call, 1)
                received[name] = time.monotonic()
                return event

            readers = [asyncio.create_task(first(one, "one")), asyncio.create_task(first(every, "all"))]
            # WatchAll subscribes to the runs going as it answers.
            await asyncio.sleep(0.5)
            started = time.monotonic()
            path = await capture(client, "mcp__fixtures__image")
            events = await asyncio.wait_for(asyncio.gather(*readers), STREAM_TIMEOUT_S)
        for event in events:
            assert (event.run_id, event.seq, event.kind) == (run["id"], 2, "file_captured"), event
            assert json.loads(event.data_json)["path"] == path
        for name, at in received.items():
            assert at - started < 1.0, (name, at - started)
        # Another tenant's probe answers like a missing run on both replicas.
        for url in replicas.urls:
            async with channel(url) as chan:
                runs = rpc.RunsStub(chan)
                answers = [await refusal(pb, runs, run_id, bearer(BOB)) for run_id in (run["id"], MISSING_RUN)]
                assert answers[0] == answers[1] and answers[0][0] == grpc.StatusCode.NOT_FOUND
    finally:
        replicas.close()


async def test_streams_through_nginx_reach_both_replicas_and_each_sees_a_capture_made_through_nginx(
    tmp_path: Path, postgres: Postgres, stubs: tuple[ModuleType, ModuleType]
) -> None:
    # nginx's grpc_pass balances each call (an HTTP/2 stream) on its own, so
    # two streams on one channel land on the two replicas; each must see a
    # capture made through nginx's MCP port, wherever that call went.
    pb, rpc = stubs
    replicas = start_replicas(tmp_path / "gw", postgres, keys=KEYS, grpc=True)
    try:
        front = replicas.nginx
        async with alice_and_runs(rpc, front.url, front.grpc_url) as (client, runs):
            await client.call_tool("mcp__fixtures__echo", {"message": "hello"})
            [run] = runs_of(front.url, ALICE)
            calls = [
                runs.WatchEvents(pb.WatchEventsRequest(run_id=run["id"], from_seq=2), metadata=bearer(ALICE)),
                runs.WatchAll(pb.WatchAllRequest(), metadata=bearer(ALICE)),
            ]
            readers = [asyncio.create_task(take(call, 1)) for call in calls]
            await asyncio.sleep(0.5)
            path = await capture(client, "mcp__fixtures__image")
            seen = await asyncio.wait_for(asyncio.gather(*readers), STREAM_TIMEOUT_S)
            # Another tenant's probe through nginx answers like a missing run.
            answers = [await refusal(pb, runs, run_id, bearer(BOB)) for run_id in (run["id"], MISSING_RUN)]
        for [event] in seen:
            assert (event.run_id, event.seq, event.kind) == (run["id"], 2, "file_captured"), event
            assert json.loads(event.data_json)["path"] == path
        assert answers[0] == answers[1] and answers[0][0] == grpc.StatusCode.NOT_FOUND, answers
        # nginx writes a call's line when it ends; the streams were just cancelled.
        served: list[str] = []
        for _ in range(50):
            served = [line["upstream"] for line in front.log() if line["uri"].startswith("/porter.v1.Runs/")]
            if len(served) >= 4:
                break
            await asyncio.sleep(0.1)
        assert len(served) == 4, front.log()
        assert set(served[:2]) == {replicas.upstream_of(url) for url in replicas.urls}, served
    finally:
        replicas.close()


async def test_the_gateway_stops_on_ctrl_c_while_event_streams_are_open(
    tmp_path: Path, stubs: tuple[ModuleType, ModuleType]
) -> None:
    # An event stream never ends by itself; a gateway told to stop gives the
    # open ones a short grace (3 s) and then stops anyway, gRPC and SSE alike.
    pb, rpc = stubs
    process, url = start_http(tmp_path, write_config(tmp_path, keys=KEYS))
    try:
        async with channel(url) as chan, httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=None)) as http:
            watching = rpc.RunsStub(chan).WatchAll(pb.WatchAllRequest(), metadata=bearer(ALICE))
            reader = asyncio.create_task(take(watching, 1, timeout=30))
            async with http.stream("GET", url + "/v1/events", headers={"Authorization": f"Bearer {ALICE}"}) as sse:
                assert sse.status_code == 200
                await asyncio.sleep(0.5)
                process.send_signal(signal.SIGINT)
                started = time.monotonic()
                while process.poll() is None and time.monotonic() - started < 10:
                    await asyncio.sleep(0.1)
                assert process.poll() is not None, "the gateway still runs 10 s after Ctrl-C"
                assert time.monotonic() - started < 8
            # The gRPC stream ends with the server, with an error, not silence.
            with pytest.raises(grpc.aio.AioRpcError) as ended:
                await reader
            assert ended.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)
