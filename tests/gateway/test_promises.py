"""What the gateway's own tools tell the model to pass back is in their
text: many clients give the model a result's text alone, so a next cursor,
a next line or a field the model is told to send on its next call that
lives only in `structuredContent` is out of its reach. Every tool the
gateway lists of its own is called, each of its ops, and each answer is
held to `promises_broken` (shared with the Mattermost server's test)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from harness import STUB, all_text, stdio_gateway, write_config
from test_documents import budget_xlsx, plan_docx
from webserver import file_server

pytestmark = pytest.mark.anyio

# The Mattermost server's harness holds the check both servers answer to.
_spec = importlib.util.spec_from_file_location(
    "mattermost_harness", Path(__file__).resolve().parents[1] / "mcp" / "harness.py"
)
assert _spec is not None and _spec.loader is not None
mm = sys.modules.get("mattermost_harness") or importlib.util.module_from_spec(_spec)
if "mattermost_harness" not in sys.modules:
    sys.modules["mattermost_harness"] = mm
    _spec.loader.exec_module(mm)

# Ops that take something away: called last, so the others find what they
# look at.
LAST_OPS = ("rm", "clear", "delete", "reset", "branch_delete")

# The answers that page or window here: each must hand out a next value for
# the check to mean anything.
MUST_HAND_OUT = {("File", "read"), ("Documents", "list")}

# The fields each op of a tool takes (a File op refuses fields it does not
# take); an op not named takes every known field its tool lists.
OP_FIELDS = {
    ("File", "stat"): ["path"],
    ("File", "ls"): [],
    ("File", "read"): ["path", "line_count"],
    ("File", "keep"): ["path", "to"],
    ("File", "rm"): ["path"],
    ("File", "clear"): [],
    ("File", "extract"): ["path"],
    ("File", "import"): ["path"],
    ("File", "download"): ["url"],
    ("File", "upload"): ["url"],
    ("Documents", "search"): ["query", "limit"],
    ("Documents", "get"): ["id", "line_count"],
    ("Documents", "list"): ["limit"],
    ("Documents", "delete"): ["id"],
}


def ops_of(tool: Any) -> list[str | None]:
    """The tool's ops (its `op` enum) in a safe order, or [None] for a tool
    without ops."""
    schema = tool.input_schema
    op = schema.get("properties", {}).get("op", {})
    if "$ref" in op:
        op = schema.get("$defs", {}).get(op["$ref"].rsplit("/", 1)[-1], {})
    values = op.get("enum") or [v.get("const") for v in op.get("oneOf", []) if "const" in v]
    if not values:
        return [None]
    return sorted(values, key=lambda name: (name in LAST_OPS, name != "init", name))


async def test_every_value_a_gateway_tool_tells_the_model_to_pass_back_is_in_its_text(tmp_path: Path) -> None:
    www = tmp_path / "www"
    www.mkdir()
    (www / "lines.txt").write_text("".join(f"line {n} of a text kept in the inbox\n" for n in range(1, 31)))
    (www / "plan.docx").write_bytes(plan_docx())
    (www / "budget.xlsx").write_bytes(budget_xlsx())
    (tmp_path / "work").mkdir()
    config = write_config(
        tmp_path,
        extra={
            "mcp_servers": {},
            "http": {"allow_hosts": ["*"], "private_hosts": ["127.0.0.1"], "timeout": "5s"},
            "volumes": {"work": {"path": str(tmp_path / "work"), "mode": "rw"}},
            "profiles": {"default": {"grants": ["File", "Read", "Write", "HTTP", "Git"], "volumes": ["work"]}},
        },
    )
    handed_out: set[tuple[str, str | None]] = set()
    answered: list[tuple[str, str | None]] = []
    problems: list[str] = []
    with file_server(www) as base:
        async with stdio_gateway(tmp_path, config) as served:
            call = served.client.call_tool
            kept = {}
            for name in ("lines.txt", "plan.docx", "budget.xlsx"):
                result = await call("File", {"op": "download", "url": f"{base}/{name}"})
                stub = STUB.search(all_text(result))
                assert stub, all_text(result)
                kept[name] = stub["path"]
            for name in ("plan.docx", "budget.xlsx"):
                assert not (await call("File", {"op": "import", "path": kept[name]})).is_error
            listed = await call("Documents", {"op": "list"})
            document = listed.structured_content["documents"][0]["id"]
            known = {
                "path": kept["lines.txt"],
                "url": f"{base}/lines.txt",
                "method": "GET",
                "repo": "volume:work:repo",
                "limit": 1,
                "line_count": 2,
                "query": "airship",
                "id": document,
                "message": "a commit of the governance test",
                "to": "volume:work:kept.txt",
            }
            tools = [t for t in (await served.client.list_tools()).tools if not t.name.startswith("mcp__")]
            assert {t.name for t in tools} >= {"File", "Documents", "HTTP", "WebFetch", "Git"}, [t.name for t in tools]
            for tool in tools:
                properties = tool.input_schema.get("properties", {})
                for op in ops_of(tool):
                    fields = OP_FIELDS.get((tool.name, op), list(properties))
                    args = {key: value for key, value in known.items() if key in properties and key in fields}
                    if op is not None:
                        args["op"] = op
                    result = await call(tool.name, args)
                    if result.is_error:
                        continue
                    answered.append((tool.name, op))
                    text = all_text(result)
                    for broken in mm.promises_broken(text, result.structured_content, tool.description or ""):
                        problems.append(f"{tool.name} {op}: {broken}\n  text: {text[-300:]!r}")
                    if any(
                        key.startswith("next_") and value not in (None, "")
                        for _, key, value in mm.fields_in(result.structured_content)
                    ):
                        handed_out.add((tool.name, op))
    assert len(answered) >= 15, f"only {answered} answered: nothing much was checked"
    assert MUST_HAND_OUT <= handed_out, f"no next page or window from {sorted(MUST_HAND_OUT - handed_out)}"
    assert not problems, "\n".join(problems)
