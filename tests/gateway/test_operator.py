"""What an operator meets running `porter gateway serve`: the event stream
carries every event of a run that opened and closed within a fraction of a
second (on SQLite and on PostgreSQL); with the records database away, the
run API answers 503 naming it and MCP calls say the same; a gateway started
without keys on loopback prints its page's address with a one-time token
that the API accepts; log lines cut long arguments and hide URL queries."""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest

from harness import HERE, STUB, all_text, http_client, start_http
from replicas import PG_PASSWORD, storage_config
from webserver import Handler, serving

pytestmark = pytest.mark.anyio

KEY = "operator-key-0123456789"


def gateway_config(
    root: Path, storage: dict[str, Any] | None = None, keys: bool = True, servers: dict[str, Any] | None = None
) -> Path:
    """A gateway (without upstreams unless `servers` names some) whose one
    key (and local user) may fetch from loopback."""
    root.mkdir(parents=True, exist_ok=True)
    body: dict[str, Any] = {
        "data_dir": str(root / "data"),
        "mcp_servers": servers or {},
        "http": {"allow_hosts": ["*"], "private_hosts": ["127.0.0.1"], "timeout": "5s"},
        "profiles": {"web": {"grants": ["File", "HTTP"]}, "default": {"grants": ["File", "HTTP"]}},
    }
    if keys:
        body["api_keys"] = [{"name": "op", "key": KEY, "tenant": "t", "role": "user", "profile": "web"}]
    if storage:
        body["storage"] = storage
    path = root / "porter.yaml"
    path.write_text(json.dumps(body) + "\n")
    return path


def stop(process) -> None:
    process.terminate()
    process.wait(timeout=10)


async def listen(url: str, key: str, seen: list[dict], ready: asyncio.Event, until) -> None:
    """Reads `GET /v1/events` into `seen` until `until(seen)`."""
    headers = {"Authorization": f"Bearer {key}", "Accept": "text/event-stream"}
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=60)) as http:
        async with http.stream("GET", url + "/v1/events", headers=headers) as answer:
            assert answer.status_code == 200
            ready.set()
            async for line in answer.aiter_lines():
                if line.startswith("data:"):
                    seen.append(json.loads(line.removeprefix("data:").strip()))
                    if until(seen):
                        return


@pytest.fixture(params=["sqlite", "postgres"])
def records(request: pytest.FixtureRequest) -> dict[str, Any] | None:
    """The `storage` section of each records store the stream must serve."""
    if request.param == "sqlite":
        return None
    import os

    if os.environ.get("PORTER_SKIP_POSTGRES") == "1":
        pytest.skip("PORTER_SKIP_POSTGRES=1")
    instance = request.getfixturevalue("postgres")
    return storage_config("local", instance.fresh_database())


async def test_a_session_of_a_fifth_of_a_second_reaches_the_event_stream_whole_and_in_order(
    tmp_path: Path, records: dict[str, Any] | None
) -> None:
    with serving(Handler) as web:
        process, url = start_http(tmp_path, gateway_config(tmp_path, records))
        try:
            seen: list[dict] = []
            ready = asyncio.Event()
            ended = lambda events: sum(e["kind"] == "run_ended" for e in events) >= 3  # noqa: E731
            listener = asyncio.create_task(listen(url, KEY, seen, ready, ended))
            await asyncio.wait_for(ready.wait(), 10)
            stubs, lengths = [], []
            # Three sessions, one after the other, each opening, capturing a
            # file and closing well within the stream's old one-second look.
            for _ in range(3):
                started = time.monotonic()
                async with http_client(url, KEY, mode="legacy") as client:
                    result = await client.call_tool("HTTP", {"method": "GET", "url": f"{web}/img/dot.png"})
                    stub = STUB.search(all_text(result))
                    assert stub, all_text(result)
                    stubs.append(stub["path"])
                lengths.append(time.monotonic() - started)
            await asyncio.wait_for(listener, 10)
        finally:
            stop(process)
    assert max(lengths) < 1.0, f"a session took {max(lengths):.2f} s: not short enough to prove anything"
    runs: dict[str, list[dict]] = {}
    for event in seen:
        runs.setdefault(event["run"], []).append(event)
    assert len(runs) == 3, runs
    for run, events in runs.items():
        kinds = [e["kind"] for e in events]
        assert kinds == ["run_started", "file_captured", "run_ended"], (run, kinds)
        assert [e["seq"] for e in events] == [1, 2, 3], (run, events)
    captured = [e["data"]["path"] for e in seen if e["kind"] == "file_captured"]
    assert captured == stubs


async def test_the_run_api_answers_503_naming_the_records_database_while_it_is_away(tmp_path: Path, postgres) -> None:
    with serving(Handler) as web:
        storage = storage_config("local", postgres.fresh_database())
        process, url = start_http(tmp_path, gateway_config(tmp_path, storage))
        try:
            headers = {"Authorization": f"Bearer {KEY}"}
            assert httpx2.get(url + "/v1/runs", headers=headers, timeout=30).status_code == 200
            async with http_client(url, KEY, mode="legacy") as client:
                postgres.stop()
                try:
                    answer = httpx2.get(url + "/v1/runs", headers=headers, timeout=30)
                    result = await client.call_tool("HTTP", {"method": "GET", "url": f"{web}/img/dot.png"})
                    listed = await client.call_tool("File", {"op": "ls"})
                finally:
                    postgres.start()
            body = answer.json()
            assert answer.status_code == 503, (answer.status_code, body)
            assert body["error"] == "unavailable", body
            assert "records database" in body["message"] and "again" in body["message"], body
            assert answer.headers.get("retry-after", "").isdigit(), answer.headers
            for said in (all_text(result), all_text(listed)):
                assert "records database" in said and "again" in said, said
                assert PG_PASSWORD not in said
            assert PG_PASSWORD not in json.dumps(body)
            # Back: the API answers again.
            deadline = time.monotonic() + 30
            while httpx2.get(url + "/v1/runs", headers=headers, timeout=30).status_code != 200:
                assert time.monotonic() < deadline, "the run API did not come back with the database"
                await asyncio.sleep(0.5)
        finally:
            stop(process)


PAGE_LINE = re.compile(r"the web page: (http://127\.0\.0\.1:\d+/#token=([A-Za-z0-9_-]+))")


def test_a_gateway_without_keys_prints_its_page_with_a_one_time_token_the_api_accepts(tmp_path: Path) -> None:
    process, url = start_http(tmp_path, gateway_config(tmp_path, keys=False))
    try:
        deadline = time.monotonic() + 10
        while not (found := PAGE_LINE.search((tmp_path / "gateway-http.stderr").read_text())):
            assert time.monotonic() < deadline, (tmp_path / "gateway-http.stderr").read_text()
            time.sleep(0.05)
        page, token = found.group(1), found.group(2)
        assert page.startswith(url + "/#token=")
        assert len(token) >= 32
        log = (tmp_path / "gateway-http.stderr").read_text()
        assert "api_keys" in log, log
        runs = httpx2.get(url + "/v1/runs", headers={"Authorization": f"Bearer {token}"}, timeout=10)
        assert runs.status_code == 200, runs.text
        wrong = httpx2.get(url + "/v1/runs", headers={"Authorization": f"Bearer {token[:-1]}x"}, timeout=10)
        assert wrong.status_code == 401
    finally:
        stop(process)
    # Another process has another token: the old one is no good any more.
    (tmp_path / "again").mkdir()
    again, url = start_http(tmp_path / "again", gateway_config(tmp_path, keys=False))
    try:
        old = httpx2.get(url + "/v1/runs", headers={"Authorization": f"Bearer {token}"}, timeout=10)
        assert old.status_code == 401
    finally:
        stop(again)


async def test_a_capture_is_logged_with_its_arguments_cut_and_url_queries_hidden(tmp_path: Path) -> None:
    fixtures = {"fixtures": {"command": "node", "args": [str(HERE / "upstream.mjs")]}}
    process, url = start_http(tmp_path, gateway_config(tmp_path, servers=fixtures))
    secret = "s3cr3t-token-value"
    data_uri = "data:image/png;base64," + "iVBORw0KGgo" * 500
    try:
        async with http_client(url, KEY, mode="legacy") as client:
            result = await client.call_tool(
                "mcp__fixtures__image", {"picture": data_uri, "source": f"https://files.example.org/a.png?token={secret}"}
            )
            assert STUB.search(all_text(result)), all_text(result)
    finally:
        stop(process)
    log = (tmp_path / "gateway-http.stderr").read_text()
    assert "file_captured" in log, log
    longest = max(len(line) for line in log.splitlines())
    assert longest < 2000, f"a log line of {longest} characters"
    assert data_uri[:1000] not in log
    assert secret not in log, [line for line in log.splitlines() if secret in line]
