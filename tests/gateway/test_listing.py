"""`tools/list` offers what the caller's grants allow, and nothing it would
be refused: for each API key over HTTP (with a session and without one),
and for the local user over stdio (the `default` profile's grants, or File
and HTTP without one). A tool left out of the listing is refused when it is
called all the same, with the grant it needs named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import all_text, http_client, start_http, stdio_gateway

pytestmark = pytest.mark.anyio

OWN_TOOLS = {"File", "Documents", "HTTP", "WebFetch", "Git"}

NO_PROFILE = "no-profile-key-0123456789"
FILE_ONLY = "file-only-key-0123456789"
FILE_AND_HTTP = "file-http-key-0123456789"
EVERYTHING = "everything-key-0123456789"

# What each key may use, and so what it is offered of the gateway's own tools.
OFFERED = {
    NO_PROFILE: {"File", "Documents"},
    FILE_ONLY: {"File", "Documents"},
    FILE_AND_HTTP: {"File", "Documents", "HTTP", "WebFetch"},
    EVERYTHING: {"File", "Documents", "HTTP", "WebFetch", "Git"},
}

# A call each tool answers for a caller it is open to, whatever it then
# makes of the arguments.
CALLS = {
    "HTTP": {"method": "GET", "url": "https://example.org/"},
    "WebFetch": {"url": "https://example.org/"},
    "Git": {"op": "status", "repo": "volume:work:repo"},
}


def config(root: Path, default_grants: list[str] | None = None, keys: bool = True) -> Path:
    """A gateway with no upstreams, a volume, and keys of four profiles."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "work").mkdir(exist_ok=True)
    body: dict = {
        "data_dir": str(root / "data"),
        "mcp_servers": {},
        "volumes": {"work": {"path": str(root / "work"), "mode": "rw"}},
        "profiles": {
            "file-only": {"grants": ["File"]},
            "file-http": {"grants": ["File", "HTTP"]},
            "everything": {"grants": ["File", "Read", "Write", "HTTP", "Git"], "volumes": ["work"]},
        },
    }
    if default_grants is not None:
        body["profiles"]["default"] = {"grants": default_grants, "volumes": ["work"]}
    if keys:
        body["api_keys"] = [
            {"name": "none", "key": NO_PROFILE, "tenant": "t", "role": "user"},
            {"name": "file", "key": FILE_ONLY, "tenant": "t", "role": "user", "profile": "file-only"},
            {"name": "web", "key": FILE_AND_HTTP, "tenant": "t", "role": "user", "profile": "file-http"},
            {"name": "all", "key": EVERYTHING, "tenant": "t", "role": "user", "profile": "everything"},
        ]
    path = root / "porter.yaml"
    path.write_text(json.dumps(body) + "\n")
    return path


async def offered(client) -> set[str]:
    listed = {t.name for t in (await client.list_tools()).tools}
    assert listed, "nothing listed: nothing to check"
    return listed & OWN_TOOLS


async def refused_the_rest(client, offered_tools: set[str]) -> list[str]:
    """Calls every own tool left out of the listing; what was not refused
    with a sentence naming a grant."""
    wrong = []
    for name in sorted(OWN_TOOLS - offered_tools):
        result = await client.call_tool(name, CALLS.get(name, {"op": "ls"}))
        if not result.is_error or "grant" not in all_text(result):
            wrong.append(f"{name}: {all_text(result)[:200]}")
    return wrong


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_each_key_is_offered_exactly_the_tools_its_grants_allow(tmp_path: Path, mode: str) -> None:
    """`auto` is the SDK's default: 2026-07-28, a request without a
    session; `legacy` opens a session with initialize."""
    process, url = start_http(tmp_path, config(tmp_path))
    try:
        for key, expected in OFFERED.items():
            async with http_client(url, key, mode=mode) as client:
                got = await offered(client)
                assert got == expected, f"{key}: offered {sorted(got)}, may use {sorted(expected)}"
                assert not await refused_the_rest(client, got)
                # The instructions name only the tools offered.
                said = client.instructions or ""
                assert "mcp__<server>__<tool>" in said, said
                for tool, words in (("HTTP", "HTTP makes one request"), ("Git", "Git works"), ("File", "File tool")):
                    assert (words in said) == (tool in expected), f"{key}: {tool} in {said!r}"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.parametrize(
    ("default_grants", "expected"),
    [
        (None, {"File", "Documents", "HTTP", "WebFetch"}),
        (["File"], {"File", "Documents"}),
        (["Read", "Git"], {"File", "Documents", "Git"}),
    ],
)
async def test_the_local_user_is_offered_what_the_default_profile_allows(
    tmp_path: Path, default_grants: list[str] | None, expected: set[str]
) -> None:
    async with stdio_gateway(tmp_path, config(tmp_path, default_grants, keys=False)) as served:
        got = await offered(served.client)
        assert got == expected, f"offered {sorted(got)}, may use {sorted(expected)}"
        assert not await refused_the_rest(served.client, got)
    process, url = start_http(tmp_path, config(tmp_path / "http", default_grants, keys=False))
    try:
        async with http_client(url, None) as client:
            got = await offered(client)
            assert got == expected, f"over HTTP without keys: offered {sorted(got)}, may use {sorted(expected)}"
    finally:
        process.terminate()
        process.wait(timeout=10)
