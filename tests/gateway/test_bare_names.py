"""`bare_names: true` on an upstream: its tools and prompts are listed under
their own names and its resources under their own URIs, for clients and
scripts written against that server; the namespaced names still work, and
a name two such servers share stays namespaced for both. Upstreams:
`asking_server.py` (bare) and the reference server-everything (not), over
stdio with the Python SDK on the initialize handshake and on 2026-07-28.
"""

from __future__ import annotations

import sys
from pathlib import Path

import mcp_types as types
import pytest

from harness import HERE, STUB, all_text, everything_bin, png, stdio_gateway, write_config

pytestmark = pytest.mark.anyio


def asking(bare: bool = True) -> dict:
    return {"command": sys.executable, "args": [str(HERE / "asking_server.py")], "bare_names": bare}


def config(root: Path, servers: dict) -> Path:
    return write_config(root, extra={"mcp_servers": servers})


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_bare_names_server_is_listed_and_used_under_its_own_names(tmp_path: Path, mode: str):
    servers = {"asking": asking(), "everything": {"command": everything_bin(), "args": ["stdio"]}}
    async with stdio_gateway(tmp_path, config(tmp_path, servers), mode=mode) as served:
        client = served.client
        tools = {t.name for t in (await client.list_tools()).tools}
        prompts = {p.name for p in (await client.list_prompts()).prompts}
        resources = {r.uri for r in (await client.list_resources()).resources}
        caps = await client.call_tool("caps", {})
        caps_namespaced = await client.call_tool("mcp__asking__caps", {})
        echo = await client.call_tool("mcp__everything__echo", {"message": "hi"})
        greet = await client.get_prompt("greet", {"name": "Ada"})
        names = await client.complete(types.PromptReference(type="ref/prompt", name="greet"), {"name": "name", "value": "G"})
        note = await client.read_resource("note://one")
        picture = await client.read_resource("picture://one.png")
        kept = served.inbox_file(STUB.fullmatch(picture.contents[0].text)["path"]).read_bytes()

    # Its own names, not the namespaced ones; the other server's stay namespaced.
    assert {"caps", "ask", "log", "touch"} <= tools, tools
    assert not any(name.startswith("mcp__asking__") for name in tools), tools
    assert "mcp__everything__echo" in tools and "echo" not in tools, tools
    # The gateway's own tools the local user may call (File and HTTP without
    # a default profile) keep their names beside the bare ones.
    assert {"File", "Documents", "HTTP", "WebFetch"} <= tools, tools
    assert "greet" in prompts and "mcp__asking__greet" not in prompts, prompts
    assert "mcp__everything__simple-prompt" in prompts, prompts
    assert {"note://one", "note://long", "picture://one.png"} <= resources, resources
    assert any(uri.startswith("mcp://everything/") for uri in resources), resources
    # Called by either name.
    assert not caps.is_error and all_text(caps) == all_text(caps_namespaced), all_text(caps)
    assert all_text(echo) == "Echo: hi"
    assert [m.content.text for m in greet.messages] == ["Say hello to Ada."]
    assert names.completion.values == ["Grace"]
    # A resource read by its own URI answers with that URI; a file is still
    # kept in the inbox and answered with its stub.
    assert [(c.uri, c.text) for c in note.contents] == [("note://one", "the first note")]
    assert picture.contents[0].uri == "picture://one.png"
    assert kept == png(64, 64, 5)


async def test_names_two_bare_names_servers_share_stay_namespaced(tmp_path: Path):
    servers = {"first": asking(), "second": asking()}
    async with stdio_gateway(tmp_path, config(tmp_path, servers), mode="legacy") as served:
        tools = {t.name for t in (await served.client.list_tools()).tools}
        prompts = {p.name for p in (await served.client.list_prompts()).prompts}
        resources = {r.uri for r in (await served.client.list_resources()).resources}
        bare = await served.client.call_tool("caps", {})
        first = await served.client.call_tool("mcp__first__caps", {})
    assert {"mcp__first__caps", "mcp__second__caps"} <= tools and "caps" not in tools, tools
    assert {"mcp__first__greet", "mcp__second__greet"} <= prompts and "greet" not in prompts, prompts
    assert {"mcp://first/note://one", "mcp://second/note://one"} <= resources, resources
    assert bare.is_error and 'no tool named "caps"' in all_text(bare), all_text(bare)
    assert not first.is_error, all_text(first)

