"""The server checks itself: annotations, which tools each configuration
lists, which tools ask, what the read tools ask Mattermost, the tools
documentation (every tool, its kind and title, and no tool that does not
exist), and that every listed tool is called by some integration test here.
Each scan fails when it finds nothing to check, so an empty listing, an
empty request log, an empty page or an empty test directory can never pass."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from harness import (
    ALL_TOOLS,
    ASKING_TOOLS,
    KINDS,
    LOCAL_TOOLS,
    READ_TOOLS,
    REPO,
    UNASKED_TOOLS,
    WRITE_TOOLS,
    Home,
    Mmsim,
    Person,
    fields_in,
    list_all_tools,
    promises_broken,
    serve,
    server_env,
    show,
    text_of,
    tool_title,
    write_seed,
    writes_in,
)

pytestmark = pytest.mark.anyio

# The catalogue of the spec: parity with mm-mcp.
CATALOGUE_SIZE = 45


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


# The formats JSON Schema 2020-12 defines; anything else (schemars'
# `uint64`, `int32`, `double`, …) makes a standard validator warn.
STANDARD_FORMATS = frozenset(
    {
        "date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname",
        "ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template",
        "json-pointer", "relative-json-pointer", "regex",
    }
)


def nonstandard_formats(schema: Any, where: str) -> list[str]:
    found = []
    if isinstance(schema, dict):
        fmt = schema.get("format")
        if isinstance(fmt, str) and fmt not in STANDARD_FORMATS:
            found.append(f"{where}: format {fmt!r}")
        for key, value in schema.items():
            found += nonstandard_formats(value, f"{where}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            found += nonstandard_formats(value, f"{where}/{index}")
    return found


async def test_every_tool_schema_uses_only_standard_json_schema_formats(read_sim, home: Home, tmp_path: Path):
    tools = await listing(read_sim, home, tmp_path, "stdio", writes=True)
    problems = []
    counted = 0
    for tool in tools.values():
        for kind, schema in (("input", tool.input_schema), ("output", tool.output_schema)):
            problems += nonstandard_formats(schema, f"{tool.name} {kind}")
            counted += json.dumps(schema).count('"minimum": 0')
    assert not problems, "\n".join(problems)
    # The unsigned numbers are still said to be unsigned, in standard words.
    assert counted > 10, counted


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


# --------------------------------------------------------------------------
# What a result tells the model to pass back is in its text

# The tools whose answers page (or window) on the seed: each must have
# handed out a next cursor or line for the check below to mean anything.
PAGED_ON_THE_SEED = frozenset({"read_channel", "get_user_channels", "search_posts", "read_file", "list_team_channels"})


def test_a_cursor_only_in_the_structured_content_is_a_broken_promise():
    page = {"posts": [{"id": "p1"}], "next_cursor": "c-123"}
    assert promises_broken("More posts follow: pass next_cursor as cursor.", page) == [
        "next_cursor = 'c-123' is not in the text"
    ]
    assert promises_broken('More posts follow: pass cursor "c-123".', page) == []
    window = {"window": {"start_line": 1, "next_start_line": 41}}
    assert promises_broken("lines 1-40", window) == ["window.next_start_line = '41' is not in the text"]
    assert promises_broken("lines 1-40; pass start_line=41 for the next window", window) == []
    named = {"files": [{"file_id": "f9", "name": "a.txt"}]}
    assert promises_broken("a.txt", named, description="pass a result's file_id to read_file") == [
        "files[0].file_id = 'f9' is not in the text"
    ]
    assert promises_broken("a.txt (f9)", named, description="pass a result's file_id to read_file") == []
    assert promises_broken("nothing", None) == []


async def test_every_value_a_result_tells_the_model_to_pass_back_is_in_its_text(sim, home: Home, tmp_path: Path):
    """Many clients give the model a tool result's text alone. Every tool of
    the listing is called (reads first, then writes, posting at once), a
    page of one item at a time and a window of two lines, and each answer's
    next cursor, next line and every field its text or description tells
    the model to pass back must be written in its text."""
    thread_root = next(p for p in sim.posts("town-square") if p["message"].startswith("Kickoff"))
    bob = sim.api("GET", "/users/username/bob")
    known = {
        "file_id": sim.file_id("release-notes.txt"),
        "post_id": thread_root["id"],
        "channel_id": "town-square",
        "team_id": "porter",
        "user_id": bob["id"],
        "user_ids": [bob["id"]],
        "username": "bob",
        "usernames": ["bob", "carol"],
        "terms": "release",
        "term": "r",
        "limit": 1,
        "line_count": 2,
        "message": "A note from the governance test.",
        "emoji": "thumbsup",
        "status": "away",
        "name": "governance-check",
    }
    env = server_env(sim, home, writes=True, extra={"MM_MCP_ASK_BEFORE_WRITES": "false"})
    checked: dict[str, str] = {}
    handed_out: set[str] = set()
    problems = []
    async with serve("stdio", env, tmp_path) as served:
        tools = await list_all_tools(served.client)
        assert tools, "no tools listed: nothing to check"
        in_order = sorted(tools, key=lambda t: (t.name not in READ_TOOLS, t.name))
        for tool in in_order:
            properties = tool.input_schema.get("properties", {})
            wanted = [p for p in properties if p in tool.input_schema.get("required", []) or p in known]
            args = {p: guess(p, properties.get(p, {}), known) for p in wanted}
            result = await served.client.call_tool(tool.name, args)
            if result.is_error or result.structured_content is None:
                continue
            text = text_of(result)
            checked[tool.name] = text
            broken = promises_broken(text, result.structured_content, tool.description or "")
            problems += [f"{tool.name}({args}): {b}\n  text: {text[-300:]!r}" for b in broken]
            if any(key.startswith("next_") and value not in (None, "") for _, key, value in fields_in(result.structured_content)):
                handed_out.add(tool.name)
    assert len(checked) >= 30, f"only {len(checked)} tools answered: {sorted(checked)}"
    assert PAGED_ON_THE_SEED <= handed_out, f"no next page or window from {sorted(PAGED_ON_THE_SEED - handed_out)}: nothing to check"
    assert not problems, "\n".join(problems)



TABLE_ROW = re.compile(r"^\| `([a-z_]+)` \| ([RALU]) \| (.+?) \|\s*$", flags=re.M)
HEADING = re.compile(r"^#{2,4} `([a-z_]+)`\s*$", flags=re.M)


def tools_page() -> str:
    doc = REPO / "docs" / "tools.md"
    assert doc.exists(), "docs/tools.md is missing"
    return doc.read_text()


def documented_tools(page: str) -> list[str]:
    """The tools the page has a section for (headings like ### `read_file`)."""
    names = HEADING.findall(page)
    assert names, "docs/tools.md names no tool (headings like ### `read_file`): nothing to check"
    return names


def table_rows(page: str) -> list[tuple[str, str, str]]:
    """The rows of the page's table: (tool, kind, title)."""
    rows = TABLE_ROW.findall(page)
    assert rows, "docs/tools.md has no table rows like | `get_me` | R | Who am I |: nothing to check"
    return rows


def section_kinds(page: str) -> dict[str, str]:
    """The kind each section states first (**R.**, **A.**, …)."""
    kinds = {}
    parts = HEADING.split(page)
    # parts: [before, name1, body1, name2, body2, …]
    for name, body in zip(parts[1::2], parts[2::2]):
        found = re.search(r"\*\*([RALU])\.\*\*", body)
        kinds[name] = found.group(1) if found else "?"
    return kinds


def test_the_harness_knows_the_whole_catalogue_each_tool_of_one_kind():
    groups = [READ_TOOLS, LOCAL_TOOLS, ASKING_TOOLS, UNASKED_TOOLS]
    assert sum(len(g) for g in groups) == len(ALL_TOOLS) == len(KINDS) == CATALOGUE_SIZE, {
        "R": len(READ_TOOLS),
        "L": len(LOCAL_TOOLS),
        "A": len(ASKING_TOOLS),
        "U": len(UNASKED_TOOLS),
    }
    assert WRITE_TOOLS == ASKING_TOOLS | UNASKED_TOOLS


async def test_the_tools_documentation_lists_every_tool_and_only_those(read_sim, home: Home, tmp_path: Path):
    tools = await listing(read_sim, home, tmp_path, "stdio", writes=True)
    assert len(tools) == CATALOGUE_SIZE, f"the server lists {len(tools)} tools, not {CATALOGUE_SIZE}: {sorted(tools)}"
    page = tools_page()
    documented = documented_tools(page)
    assert len(documented) == len(set(documented)), f"a tool is documented twice: {documented}"
    missing = set(tools) - set(documented)
    extra = set(documented) - set(tools)
    assert not missing, f"docs/tools.md lacks {sorted(missing)}"
    assert not extra, f"docs/tools.md documents tools the server does not list: {sorted(extra)}"

    rows = table_rows(page)
    in_table = [name for name, _, _ in rows]
    assert len(in_table) == len(set(in_table)), f"a tool is in the table twice: {in_table}"
    assert set(in_table) == set(tools), f"the table differs from the listing: {sorted(set(in_table) ^ set(tools))}"
    problems = []
    stated = section_kinds(page)
    for name, kind, title in rows:
        if kind != KINDS[name]:
            problems.append(f"{name}: the table says {kind}, the catalogue {KINDS[name]}")
        if stated.get(name) != KINDS[name]:
            problems.append(f"{name}: its section says **{stated.get(name)}.**, the catalogue {KINDS[name]}")
        listed_title = tool_title(tools[name])
        if title.strip() != listed_title:
            problems.append(f"{name}: the table's title {title.strip()!r}, the server's {listed_title!r}")
    assert not problems, "\n".join(problems)


async def test_exactly_the_asking_tools_ask_and_carry_the_claude_code_mark_when_forced(read_sim, home: Home, tmp_path: Path):
    """The A/U split of the catalogue is what the server does: with asking on,
    the descriptions of A tools (only) say porter asks first; with asking off
    and the Claude Code mark forced, exactly the A tools carry it."""
    asking = await listing(read_sim, home, tmp_path, "stdio", writes=True)
    says_it_asks = {name for name, t in asking.items() if "asks the person to confirm" in (t.description or "")}
    assert says_it_asks == ASKING_TOOLS, sorted(says_it_asks ^ ASKING_TOOLS)

    env = server_env(
        read_sim,
        home,
        writes=True,
        extra={"MM_MCP_ASK_BEFORE_WRITES": "false", "MM_MCP_FORCE_HUMAN_IN_THE_LOOP_IN_CLAUDE_CODE": "true"},
    )
    async with serve("stdio", env, tmp_path) as served:
        forced = {t.name: t for t in await list_all_tools(served.client)}
    marked = {name for name, t in forced.items() if (t.meta or {}).get("anthropic/requiresUserInteraction") is True}
    assert marked == ASKING_TOOLS, sorted(marked ^ ASKING_TOOLS)
    assert set(forced) == set(asking), "the listing depends only on MM_MCP_ALLOW_WRITES"


# --------------------------------------------------------------------------
# Every asking tool's box names its own action

# The verbs each asking tool may put in its box ("Yes, <verb> …", "Tick to
# <verb> …"), and the words its answer may use for what did not happen
# ("nothing was <done>") when the person says no. Every verb here is some
# tool's action, so a box that borrows one (a delete that says "post")
# fails, and so does a box that names no action of its own ("Yes, do this").
OWN_ACTIONS: dict[str, tuple[set[str], set[str]]] = {
    "create_post": ({"post"}, {"posted"}),
    "dm": ({"post", "send"}, {"posted", "sent"}),
    "group_message": ({"post", "send"}, {"posted", "sent"}),
    "join_channel": ({"join"}, {"changed", "joined"}),
    "leave_channel": ({"leave"}, {"changed", "left"}),
    "create_channel": ({"create"}, {"changed", "created"}),
    "add_channel_members": ({"add"}, {"changed", "added"}),
    "set_status": ({"set"}, {"changed", "set"}),
    "update_post": ({"edit", "replace"}, {"changed", "edited"}),
    "delete_post": ({"delete"}, {"changed", "deleted"}),
    "add_reaction": ({"add"}, {"changed", "added"}),
    "remove_reaction": ({"remove"}, {"changed", "removed"}),
    "pin_post": ({"pin", "unpin"}, {"changed", "pinned", "unpinned"}),
    "delete_draft": ({"delete"}, {"deleted"}),
}
ACTION_SLOTS = re.compile(r"(?:^|\b)(?:yes,|tick to)\s+(\w+)", re.IGNORECASE)
NOTHING_DONE = re.compile(r"nothing was (\w+)", re.IGNORECASE)


def test_every_asking_tool_has_its_own_actions_and_only_asking_tools_do():
    assert set(OWN_ACTIONS) == ASKING_TOOLS, sorted(set(OWN_ACTIONS) ^ ASKING_TOOLS)


def box_words(question: types.ElicitRequestParams) -> tuple[str, str]:
    """The label and description of the question's one box."""
    schema = question.requested_schema
    if not isinstance(schema, dict):
        schema = schema.model_dump(by_alias=True, exclude_none=True)
    properties = schema.get("properties") or {}
    assert list(properties) == ["confirm"], f"the form has {sorted(properties)}, not one confirm box"
    box = properties["confirm"]
    return box.get("title") or "", box.get("description") or ""


@pytest.fixture
def asking_sim(porter: Path, tmp_path: Path):
    """The shared seed plus what every asking tool needs to reach its
    question: a public channel alice is not in (`ops`) and a team member in
    no channel (`erin`)."""
    path = write_seed(tmp_path / "seed")
    seed = json.loads(path.read_text())
    seed["users"].append({"username": "erin", "token": "demo-erin-token", "first_name": "Erin", "last_name": "Tester"})
    seed["teams"][0]["members"].append("erin")
    seed["channels"].append({"team": "porter", "name": "ops", "display_name": "Ops", "members": ["bob", "carol"]})
    path.write_text(json.dumps(seed))
    sim = Mmsim(path, tmp_path / "sim")
    yield sim
    sim.stop()


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_every_asking_tools_box_names_its_own_action_and_no_other_tools(
    asking_sim, home: Home, tmp_path: Path, mode: str
):
    """Each of the 14 asking tools is called once and declined: its box
    ("Yes, …" / "Tick to …") must name its own action and no other tool's,
    and its answer must say what did not happen in its own words."""
    sim = asking_sim
    me = sim.api("GET", "/users/me")["id"]
    mine = next(p for p in sim.posts("town-square") if p["user_id"] == me and not p["root_id"])
    theirs = next(p for p in sim.posts("town-square") if p["user_id"] != me and not p["root_id"])
    sim.api("POST", "/reactions", {"user_id": me, "post_id": theirs["id"], "emoji_name": "eyes"})
    sim.api("POST", "/drafts", {"user_id": me, "channel_id": sim.channel_id("off-topic"), "root_id": "", "message": "Notes."})
    calls = {
        "create_post": {"channel_id": "town-square", "message": "Hello"},
        "dm": {"username": "bob", "message": "Hello"},
        "group_message": {"usernames": ["bob", "carol"], "message": "Hello"},
        "join_channel": {"channel_id": "ops"},
        "leave_channel": {"channel_id": "off-topic"},
        "create_channel": {"name": "release-plans"},
        "add_channel_members": {"channel_id": "files", "usernames": ["erin"]},
        "set_status": {"status": "away"},
        "update_post": {"post_id": mine["id"], "message": "Changed."},
        "delete_post": {"post_id": mine["id"]},
        "add_reaction": {"post_id": theirs["id"], "emoji": "thumbsup"},
        "remove_reaction": {"post_id": theirs["id"], "emoji": "eyes"},
        "pin_post": {"post_id": theirs["id"]},
        "delete_draft": {"channel_id": "off-topic"},
    }
    assert set(calls) == ASKING_TOOLS, sorted(set(calls) ^ ASKING_TOOLS)
    vocabulary = set().union(*(verbs for verbs, _ in OWN_ACTIONS.values()))
    person = Person(answer="decline")
    problems = []
    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=person, mode=mode) as served:
        sim.clear()
        for tool, args in calls.items():
            asked = len(person.questions)
            result = await served.client.call_tool(tool, args)
            if len(person.questions) != asked + 1:
                problems.append(f"{tool} was not asked: {text_of(result)}")
                continue
            label, about = box_words(person.questions[-1])
            verbs, nothing = OWN_ACTIONS[tool]
            named = [v.lower() for v in ACTION_SLOTS.findall(f"{label}\n{about}")]
            if not named:
                problems.append(f"{tool}: the box names no action: {label!r} / {about!r}")
            for verb in named:
                if verb not in verbs:
                    whose = sorted(t for t, (v, _) in OWN_ACTIONS.items() if verb in v) or ["no tool"]
                    problems.append(
                        f"{tool}: the box says {verb!r} ({', '.join(whose)}'s action"
                        f"{'' if verb in vocabulary else ', or none'}): {label!r} / {about!r}"
                    )
            said = [w.lower() for w in NOTHING_DONE.findall(text_of(result))]
            if not result.is_error or not said:
                problems.append(f"{tool}: a declined answer does not say what did not happen: {text_of(result)}")
            problems += [f"{tool}: a declined answer says 'nothing was {w}': {text_of(result)}" for w in said if w not in nothing]
        log = sim.requests()
    assert not writes_in(log), f"a declined question changed something:\n{show(log)}"
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------
# Every tool is called by some integration test

CALLERS = frozenset({"call_tool", "call"})


def _callee(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _strings(node: ast.AST | None, index: int | None, names: dict[str, ast.AST]) -> set[str]:
    """The string values a parametrize list gives one argument (the
    `index`-th of each tuple, or each element when `index` is None): from a
    literal list or tuple, a module-level list or dict (its keys), `list(X)`
    and `pytest.param(...)`."""
    if node is None:
        return set()
    if isinstance(node, ast.Name):
        return _strings(names.get(node.id), index, names)
    if isinstance(node, ast.Call) and _callee(node.func) in ("list", "tuple", "sorted") and node.args:
        return _strings(node.args[0], index, names)
    if isinstance(node, ast.Dict):
        return {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        found: set[str] = set()
        for element in node.elts:
            if isinstance(element, ast.Call) and _callee(element.func) == "param":
                element = ast.Tuple(elts=element.args) if index is not None else (element.args[0] if element.args else None)
            if index is None:
                if isinstance(element, ast.Constant) and isinstance(element.value, str):
                    found.add(element.value)
            elif isinstance(element, ast.Tuple) and len(element.elts) > index:
                item = element.elts[index]
                if isinstance(item, ast.Constant) and isinstance(item.value, str):
                    found.add(item.value)
        return found
    return set()


def _parametrized(decorator: ast.expr) -> tuple[list[str], ast.AST | None]:
    """The argument names and values of `@pytest.mark.parametrize(...)`."""
    if not (isinstance(decorator, ast.Call) and _callee(decorator.func) == "parametrize" and decorator.args):
        return [], None
    spec = decorator.args[0]
    if isinstance(spec, ast.Constant) and isinstance(spec.value, str):
        argnames = [a.strip() for a in spec.value.split(",")]
    elif isinstance(spec, (ast.Tuple, ast.List)):
        argnames = [e.value for e in spec.elts if isinstance(e, ast.Constant)]
    else:
        return [], None
    return argnames, decorator.args[1] if len(decorator.args) > 1 else None


def tools_called_in(source: str, filename: str = "<test>") -> set[str]:
    """The tool names a test module calls: `call_tool("name", …)` or
    `call("name", …)` with a literal name, and `call_tool(tool, …)` where
    `tool` is a parameter of a parametrized test (its listed values). A name
    computed at run time (`tool.name` from a listing) does not count: it
    proves only that the tool answered, not what it did."""
    tree = ast.parse(source, filename=filename)
    names = {
        target.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _callee(node.func) in CALLERS and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.add(first.value)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            by_parameter = {
                call.args[0].id
                for call in ast.walk(node)
                if isinstance(call, ast.Call)
                and _callee(call.func) in CALLERS
                and call.args
                and isinstance(call.args[0], ast.Name)
            }
            for decorator in node.decorator_list:
                argnames, values = _parametrized(decorator)
                for parameter in by_parameter & set(argnames):
                    index = None if len(argnames) == 1 else argnames.index(parameter)
                    found |= _strings(values, index, names)
    return found


def test_the_call_scan_finds_literal_and_parametrized_calls_but_not_computed_ones():
    source = """
import pytest
CALLS = {"dm": {}, "group_message": {}}

async def helper(served):
    return await served.client.call_tool("read_file", {})

@pytest.mark.parametrize("tool", list(CALLS))
async def test_a(served, tool):
    await served.client.call_tool(tool, {})

@pytest.mark.parametrize(("tool", "args"), [("pin_post", {}), pytest.param("add_reaction", {})])
async def test_b(served, tool, args):
    call = served.client.call_tool
    await call(tool, args)
    await call("get_me", {})

@pytest.mark.parametrize("other", ["not_a_call"])
async def test_c(served, tools, other):
    for t in tools:
        await served.client.call_tool(t.name, {})
"""
    assert tools_called_in(source) == {"read_file", "dm", "group_message", "pin_post", "add_reaction", "get_me"}


async def test_every_listed_tool_is_called_by_some_integration_test(read_sim, home: Home, tmp_path: Path):
    tools = await listing(read_sim, home, tmp_path, "stdio", writes=True)
    here = Path(__file__).resolve().parent
    modules = sorted(p for p in here.glob("test_*.py") if p.name != Path(__file__).name)
    assert modules, f"no test modules beside {Path(__file__).name}: nothing to scan"
    called_by: dict[str, list[str]] = {}
    for module in modules:
        for name in tools_called_in(module.read_text(), str(module)):
            called_by.setdefault(name, []).append(module.name)
    assert called_by, f"the scan of {[m.name for m in modules]} found no tool call at all: the scan is broken"
    uncalled = sorted(set(tools) - set(called_by))
    assert not uncalled, f"no integration test calls {uncalled} (by call_tool(\"<name>\", …) or a parametrized call)"
    unknown = sorted(set(called_by) - set(tools))
    assert not unknown, f"tests call tools the server does not list: {[(n, called_by[n]) for n in unknown]}"
