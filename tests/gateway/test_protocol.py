"""The gateway as the Python SDK meets it in its default mode: the
`server/discover` probe the SDK sends first is normal traffic, answered as
2026-07-28 discovery, and leaves no WARN line on the gateway's terminal,
over stdio and over streamable HTTP."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness import LISTENING, http_client, start_http, stdio_gateway

pytestmark = pytest.mark.anyio

WARN_LINE = re.compile(r"^\S*\s*WARN\b|\bWARN\s+\S+:", re.MULTILINE)


def bare_config(root: Path) -> Path:
    """A gateway with no upstream servers: only its own tools."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / "porter.yaml"
    path.write_text(json.dumps({"data_dir": str(root / "data"), "mcp_servers": {}}) + "\n")
    return path


def no_warnings(log: str) -> None:
    assert "run_started" in log or "listening on" in log, f"the gateway logged nothing: nothing to check\n{log}"
    assert not WARN_LINE.search(log), log


async def test_a_default_python_sdk_session_over_stdio_is_discovered_without_a_warning(tmp_path: Path):
    async with stdio_gateway(tmp_path, bare_config(tmp_path)) as served:
        assert served.client.protocol_version == "2026-07-28", served.client.protocol_version
        tools = await served.client.list_tools()
        assert any(t.name == "File" for t in tools.tools), [t.name for t in tools.tools]
        listed = await served.client.call_tool("File", {"op": "ls", "path": "volume:inbox:"})
        assert not listed.is_error, listed
    no_warnings(served.stderr.read_text(errors="replace"))


async def test_a_default_python_sdk_session_over_http_is_discovered_without_a_warning(tmp_path: Path):
    process, url = start_http(tmp_path, bare_config(tmp_path))
    try:
        async with http_client(url, None) as client:
            assert client.protocol_version == "2026-07-28", client.protocol_version
            tools = await client.list_tools()
            assert any(t.name == "File" for t in tools.tools), [t.name for t in tools.tools]
            listed = await client.call_tool("File", {"op": "ls", "path": "volume:inbox:"})
            assert not listed.is_error, listed
    finally:
        process.terminate()
        process.wait(timeout=10)
    no_warnings((tmp_path / "gateway-http.stderr").read_text(errors="replace"))


async def test_the_gateways_own_tools_use_only_standard_json_schema_formats(tmp_path: Path):
    standard = {"date-time", "date", "time", "duration", "email", "hostname", "ipv4", "ipv6", "uri", "uri-reference", "uuid", "regex"}

    def odd(schema, where):
        if isinstance(schema, dict):
            fmt = schema.get("format")
            found = [f"{where}: format {fmt!r}"] if isinstance(fmt, str) and fmt not in standard else []
            return found + [p for k, v in schema.items() for p in odd(v, f"{where}/{k}")]
        if isinstance(schema, list):
            return [p for i, v in enumerate(schema) for p in odd(v, f"{where}/{i}")]
        return []

    # Every own tool is offered only to a caller its grants let call it: a
    # default profile of every grant lists them all.
    config = bare_config(tmp_path)
    body = json.loads(config.read_text())
    body["profiles"] = {"default": {"grants": ["File", "Read", "Write", "HTTP", "Git"]}}
    config.write_text(json.dumps(body) + "\n")
    async with stdio_gateway(tmp_path, config) as served:
        tools = (await served.client.list_tools()).tools
    assert {"File", "Documents", "HTTP", "WebFetch", "Git"} <= {t.name for t in tools}
    problems = [p for t in tools for p in odd(t.input_schema, t.name) + odd(t.output_schema, t.name)]
    assert not problems, "\n".join(problems)


def test_the_listening_line_is_read_only_once_the_address_is_whole() -> None:
    # CI once read "listening on http://127.0.0.1:" before the port was
    # written, and nginx refused the upstream "127.0.0.1:".
    line = "porter: gateway listening on http://127.0.0.1:43215 (MCP at /mcp, the web page at /)\n"
    for cut in range(len(line)):
        found = LISTENING.search(line[:cut])
        assert found is None or found.group(1) == "http://127.0.0.1:43215", line[:cut]
    assert LISTENING.search(line).group(1) == "http://127.0.0.1:43215"
