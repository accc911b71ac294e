"""The server checks itself: annotations, which tools each configuration
lists, what the read tools ask Mattermost, and the tools documentation.
Each scan fails when it finds nothing to check, so an empty listing or an
empty request log can never pass."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from harness import (
    LOCAL_TOOLS,
    READ_TOOLS,
    REPO,
    WRITE_TOOLS,
    Home,
    list_all_tools,
    serve,
    server_env,
    show,
    text_of,
    tool_title,
    writes_in,
)

pytestmark = pytest.mark.anyio


async def listing(sim, home: Home, tmp_path: Path, transport: str, writes: bool) -> dict[str, types.Tool]:
    async with serve(transport, server_env(sim, home, writes=writes), tmp_path) as served:
        tools = await list_all_tools(served.client)
    assert tools, f"{transport} (writes={writes}) lists no tools: nothing to check"
    names = [t.name for t in tools]
    assert len(names) == len(set(names)), f"a tool is listed twice: {names}"
    return {t.name: t for t in tools}


async def test_every_tool_has_a_title_and_all_four_hints_and_none_is_open_world(
    read_sim, home: Home, tmp_path: Path
):
    tools = await listing(read_sim, home, tmp_path, "stdio", writes=True)
    problems = []
    for tool in tools.values():
        if not tool_title(tool):
            problems.append(f"{tool.name}: no title")
        hints = tool.annotations
        if hints is None:
            problems.append(f"{tool.name}: no annotations")
            continue
        for hint in ("read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint"):
            if getattr(hints, hint) is None:
                problems.append(f"{tool.name}: {hint} missing")
        if hints.open_world_hint is not False:
            problems.append(f"{tool.name}: openWorldHint is {hints.open_world_hint}, not false")
        if not tool.description:
            problems.append(f"{tool.name}: no description")
    assert not problems, "\n".join(problems)


async def test_each_configuration_lists_exactly_its_tools(read_sim, home: Home, tmp_path: Path):
    seen = {
        (transport, writes): await listing(read_sim, home, tmp_path, transport, writes)
        for transport in ("stdio", "http")
        for writes in (False, True)
    }
    read_only_stdio = set(seen[("stdio", False)])
    assert read_only_stdio == READ_TOOLS | LOCAL_TOOLS, sorted(read_only_stdio ^ (READ_TOOLS | LOCAL_TOOLS))
    assert set(seen[("http", False)]) == READ_TOOLS, sorted(set(seen[("http", False)]) ^ READ_TOOLS)
    added_stdio = set(seen[("stdio", True)]) - read_only_stdio
    added_http = set(seen[("http", True)]) - set(seen[("http", False)])
    assert added_stdio == WRITE_TOOLS, sorted(added_stdio)
    assert added_http == WRITE_TOOLS, sorted(added_http)
    assert read_only_stdio <= set(seen[("stdio", True)]), "allowing writes took a tool away"
    for (transport, _), tools in seen.items():
        assert ("save_file" in tools) == (transport == "stdio"), f"save_file listed over {transport}: {sorted(tools)}"
    every = seen[("stdio", True)]
    for name in READ_TOOLS:
        assert every[name].annotations.read_only_hint is True, f"{name} is a read tool but says it is not read-only"
    for name in WRITE_TOOLS:
        hints = every[name].annotations
        assert hints.read_only_hint is False, f"{name} writes but says it is read-only"
    assert every["save_file"].annotations.destructive_hint is False, "save_file never overwrites"


def guess(name: str, schema: dict[str, Any], known: dict[str, Any]) -> Any:
    """A plausible value for a parameter, from its name and type."""
    lowered = name.lower()
    for key, value in known.items():
        if lowered == key:
            return value
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "array":
        return [guess(name.rstrip("s"), schema.get("items", {}), known)]
    if kind == "integer" or kind == "number":
        return max(1, schema.get("minimum", 1))
    if kind == "boolean":
        return False
    return "release"


async def test_read_tools_issue_only_reads_and_search_posts(read_sim, home: Home, tmp_path: Path):
    bob = read_sim.api("GET", "/users/username/bob")
    thread_root = next(p for p in read_sim.posts("town-square") if p["message"].startswith("Kickoff"))
    known = {
        "file_id": read_sim.file_id("release-notes.txt"),
        "post_id": thread_root["id"],
        "channel_id": "town-square",
        "channel": "town-square",
        "channel_name": "town-square",
        "team_id": "porter",
        "team": "porter",
        "team_name": "porter",
        "user_id": bob["id"],
        "user_ids": [bob["id"]],
        "username": "bob",
        "usernames": ["bob", "carol"],
        "terms": "release",
        "term": "release",
        "query": "release",
        "search": "release",
        "limit": 5,
    }
    checked: dict[str, list] = {}
    failures = []
    async with serve("stdio", server_env(read_sim, home), tmp_path) as served:
        tools = await list_all_tools(served.client)
        readers = [t for t in tools if t.name in READ_TOOLS | LOCAL_TOOLS]
        assert readers, "no read tools listed: nothing to check"
        for tool in readers:
            schema = tool.input_schema
            properties = schema.get("properties", {})
            # Every required parameter, and the optional ones a test knows a
            # good value for (usernames for get_users, the team, a limit).
            wanted = [p for p in properties if p in schema.get("required", []) or p in known]
            args = {p: guess(p, properties.get(p, {}), known) for p in wanted}
            read_sim.clear()
            result = await served.client.call_tool(tool.name, args)
            log = read_sim.requests()
            checked[tool.name] = log
            if result.is_error:
                failures.append(f"{tool.name}({args}) answered an error: {text_of(result)[:300]}")
            if writes_in(log):
                failures.append(f"{tool.name} changed Mattermost:\n{show(writes_in(log))}")
    assert set(checked) == READ_TOOLS | LOCAL_TOOLS, sorted(set(checked))
    assert sum(len(log) for log in checked.values()) > 0, "the read tools made no request at all: nothing to check"
    assert not failures, "\n".join(failures)


def documented_tools() -> list[str]:
    doc = REPO / "docs" / "tools.md"
    assert doc.exists(), "docs/tools.md is missing"
    names = re.findall(r"^#{2,4} `([a-z_]+)`", doc.read_text(), flags=re.M)
    assert names, "docs/tools.md names no tool (headings like ### `read_file`): nothing to check"
    return names


async def test_the_tools_documentation_lists_every_tool_and_only_those(read_sim, home: Home, tmp_path: Path):
    tools = await listing(read_sim, home, tmp_path, "stdio", writes=True)
    documented = documented_tools()
    assert len(documented) == len(set(documented)), f"a tool is documented twice: {documented}"
    missing = set(tools) - set(documented)
    extra = set(documented) - set(tools)
    assert not missing, f"docs/tools.md lacks {sorted(missing)}"
    assert not extra, f"docs/tools.md documents tools the server does not list: {sorted(extra)}"
