"""`porter mattermost serve` (against the emulator, porter mmsim) behind
`porter gateway serve`: `create_post` asks the person through the gateway
before it posts; an accepted question posts exactly once, a declined one
posts nothing. The client is the Python SDK over stdio and over HTTP, on
the initialize handshake (2025-11-25: the question is an
`elicitation/create` the gateway relays during the call) and pinned to
2026-07-28 (the upstream answers "input required", the gateway passes the
question and its sealed state on, and the client's second call carries the
answer back), and pinned to 2025-06-18 over stdio (its elicitation
capability has no modes).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import mcp.client.session
import pytest

from harness import all_text, http_client, porter_bin, start_http, stdio_gateway, write_config

pytestmark = pytest.mark.anyio

# The Mattermost server's own test harness (the emulator, the seed, the
# person who answers), loaded under a name of its own beside ours.
_spec = importlib.util.spec_from_file_location(
    "mattermost_harness", Path(__file__).resolve().parents[1] / "mcp" / "harness.py"
)
assert _spec is not None and _spec.loader is not None
mm = importlib.util.module_from_spec(_spec)
sys.modules["mattermost_harness"] = mm
_spec.loader.exec_module(mm)


@pytest.fixture
def sim(tmp_path: Path):
    sim = mm.Mmsim(mm.write_seed(tmp_path / "seed"), tmp_path / "sim")
    yield sim
    sim.stop()


def gateway_config(root: Path, sim) -> Path:
    env = mm.server_env(sim, mm.Home(root / "machine"), writes=True)
    return write_config(
        root / "gateway",
        extra={"mcp_servers": {"mattermost": {"command": str(porter_bin()), "args": ["mattermost", "serve"], "env": env}}},
    )


def post_creations(log):
    return [r for r in log if r["method"] == "POST" and r["path"] == "/api/v4/posts"]


def assert_asked_once_and_posted_only_on_a_yes(sim, person, message, before, answer, result, log) -> None:
    """The person was asked once, through the gateway; a yes posted `message`
    exactly once, a no posted nothing and said so."""
    assert len(person.questions) == 1, "the person is asked exactly once, through the gateway"
    assert message in mm.question_text(person.questions[0])
    new = [p for p in sim.posts("town-square") if p["id"] not in before]
    if answer == "accept":
        assert not result.is_error, all_text(result)
        assert len(post_creations(log)) == 1, mm.show(log)
        assert [p["message"] for p in new] == [message]
    else:
        assert result.is_error, all_text(result)
        assert "nothing was posted" in all_text(result).lower(), all_text(result)
        assert post_creations(log) == [], mm.show(log)
        assert new == []


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("answer", ["accept", "decline"])
async def test_create_post_asks_through_the_gateway_and_posts_only_on_a_yes(
    sim, tmp_path: Path, transport: str, answer: str, mode: str
):
    person = mm.Person(answer=answer)
    channel = sim.channel_id("town-square")
    before = {p["id"] for p in sim.posts("town-square")}
    config = gateway_config(tmp_path, sim)
    message = f"Through the gateway ({transport}, {mode}, {answer})."
    arguments = {"channel_id": channel, "message": message}
    options = {"mode": mode, "elicitation_callback": person}
    if transport == "stdio":
        async with stdio_gateway(tmp_path / "gateway", config, **options) as served:
            await served.client.list_tools()
            sim.clear()
            result = await served.client.call_tool("mcp__mattermost__create_post", arguments)
            log = sim.requests()
    else:
        process, url = start_http(tmp_path / "gateway", config)
        try:
            async with http_client(url, None, **options) as client:
                await client.list_tools()
                sim.clear()
                result = await client.call_tool("mcp__mattermost__create_post", arguments)
                log = sim.requests()
        finally:
            process.terminate()
            process.wait(timeout=10)

    assert_asked_once_and_posted_only_on_a_yes(sim, person, message, before, answer, result, log)


@pytest.mark.parametrize("answer", ["accept", "decline"])
async def test_create_post_asks_through_the_gateway_for_a_client_on_2025_06_18(
    sim, tmp_path: Path, answer: str, monkeypatch: pytest.MonkeyPatch
):
    # The SDK's handshake offers its newest handshake revision; this client
    # offers 2025-06-18 instead, as a client of that revision would.
    monkeypatch.setattr(mcp.client.session, "LATEST_HANDSHAKE_VERSION", "2025-06-18")
    person = mm.Person(answer=answer)
    channel = sim.channel_id("town-square")
    before = {p["id"] for p in sim.posts("town-square")}
    message = f"Through the gateway on 2025-06-18 ({answer})."
    config = gateway_config(tmp_path, sim)
    async with stdio_gateway(tmp_path / "gateway", config, mode="legacy", elicitation_callback=person) as served:
        assert served.client.protocol_version == "2025-06-18"
        sim.clear()
        result = await served.client.call_tool(
            "mcp__mattermost__create_post", {"channel_id": channel, "message": message}
        )
        log = sim.requests()

    assert_asked_once_and_posted_only_on_a_yes(sim, person, message, before, answer, result, log)
