"""Attached files as MCP resources, through the Python SDK client over stdio
and HTTP, and through the TypeScript SDK client over stdio (ts_client.mjs):
the template `mattermost://<host>/files/{file_id}` listed, its file_id
completed as Mattermost's file search finds it, a DOCX, JPEG, zip and PDF
read whole, refusals that name read_file and save_file, and the
resource_link blocks of tool answers followed back to the files."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from harness import (
    REPO,
    Home,
    Mmsim,
    mean_colour,
    porter_bin,
    read_log,
    serve,
    server_env,
    show,
    start_http_server,
    stop_process,
    structured,
    text_of,
    write_seed,
)
from server_log import SESSIONS_LOG  # noqa: E402  (tests/server_log.py, on the path harness sets)

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
BULK = 105  # more files named batch-NNN.csv than one completion holds


def seed_posts() -> list[dict]:
    posts = [
        {"channel": "files", "user": "alice", "message": "The handbook.", "files": [{"name": "handbook.pdf", "generate": "pdf"}]},
        {
            "channel": "files",
            "user": "carol",
            "message": "Two reports in one post.",
            "files": [
                {"name": "quarterly-report.txt", "text": "Quarter one went well.\n"},
                {"name": "weekly-report.txt", "text": "Week nine: the demo shipped.\n"},
            ],
        },
    ]
    for start in range(0, BULK, 10):
        names = [f"batch-{n:03d}.csv" for n in range(start, min(start + 10, BULK))]
        posts.append(
            {
                "channel": "off-topic",
                "user": "bob",
                "message": f"Batch files from {start}.",
                "files": [{"name": name, "text": f"n,{name}\n"} for name in names],
            }
        )
    return posts


@pytest.fixture(scope="module")
def res_sim(porter: Path, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("resource-sim")
    sim = Mmsim(write_seed(root / "seed", huge=True, extra_files=seed_posts()), root)
    yield sim
    sim.stop()


def host_of(sim: Mmsim) -> str:
    return urlsplit(sim.url).netloc


def file_uri(sim: Mmsim, file_id: str) -> str:
    return f"mattermost://{host_of(sim)}/files/{file_id}"


def template_of(sim: Mmsim) -> str:
    return f"mattermost://{host_of(sim)}/files/{{file_id}}"


def ref(sim: Mmsim) -> types.ResourceTemplateReference:
    return types.ResourceTemplateReference(type="ref/resource", uri=template_of(sim))


def newest_first(sim: Mmsim, ids: list[str]) -> list[str]:
    infos = [sim.file_info(i) for i in ids]
    return [i["id"] for i in sorted(infos, key=lambda i: (-i["create_at"], i["id"]))]


def links_of(result) -> list:
    return [b for b in result.content if isinstance(b, types.ResourceLink)]


async def test_the_file_template_is_listed_with_resources_and_completions_declared(
    res_sim, home: Home, transport: str, tmp_path: Path
):
    async with serve(transport, server_env(res_sim, home), tmp_path) as served:
        capabilities = served.client.server_capabilities
        assert capabilities.resources is not None, capabilities
        assert capabilities.completions is not None, capabilities
        listed = await served.client.list_resource_templates()
        assert [t.uri_template for t in listed.resource_templates] == [template_of(res_sim)]
        template = listed.resource_templates[0]
        assert "read_file" in (template.description or ""), template
        resources = await served.client.list_resources()
        assert resources.resources == [], "files are reached through templates, not listed"


async def test_a_file_id_is_completed_as_the_file_search_finds_it_newest_first(
    res_sim, home: Home, transport: str, tmp_path: Path
):
    docx = res_sim.file_id("meeting-notes.docx")
    reports = [res_sim.file_id("quarterly-report.txt"), res_sim.file_id("weekly-report.txt")]
    async with serve(transport, server_env(res_sim, home), tmp_path) as served:
        # The last word, still being typed, is the start of a word.
        typed = await served.client.complete(ref(res_sim), {"name": "file_id", "value": "meet"})
        assert typed.completion.values == [docx], typed
        assert typed.completion.has_more is False

        both = await served.client.complete(ref(res_sim), {"name": "file_id", "value": "report"})
        assert sorted(both.completion.values) == sorted(reports), both
        assert both.completion.values == newest_first(res_sim, reports), "newest first"

        # Each word narrows.
        narrowed = await served.client.complete(ref(res_sim), {"name": "file_id", "value": "weekly rep"})
        assert narrowed.completion.values == [res_sim.file_id("weekly-report.txt")], narrowed

        nothing = await served.client.complete(ref(res_sim), {"name": "file_id", "value": "zebra"})
        assert nothing.completion.values == [] and not nothing.completion.has_more


async def test_a_file_search_that_reached_the_servers_cap_says_more_may_exist(porter: Path, home: Home, tmp_path: Path):
    """Without Elasticsearch, Mattermost's file search ignores `page` and
    `per_page` and answers at most 100 files: when it answered that many,
    others may exist, and both the completion and search_files say so."""
    sim = Mmsim(
        write_seed(tmp_path / "seed", extra_files=seed_posts(), config={"file_search_pages": False}), tmp_path / "sim"
    )
    try:
        async with serve("stdio", server_env(sim, home), tmp_path) as served:
            many = await served.client.complete(ref(sim), {"name": "file_id", "value": "batch"})
            assert len(many.completion.values) == 100, len(many.completion.values)
            assert len(set(many.completion.values)) == 100, "each file once"
            assert many.completion.has_more is True, many.completion
            found = await served.client.call_tool("search_files", {"terms": "batch", "limit": 100})
            assert not found.is_error, text_of(found)
            assert len(structured(found)["files"]) == 100
            said = text_of(found)
            assert "That is the last page." not in said, said[-300:]
            assert "at most 100" in said and "narrow the search" in said.lower(), said[-300:]
            few = await served.client.complete(ref(sim), {"name": "file_id", "value": "batch 10"})
            assert few.completion.has_more is False, few.completion
    finally:
        sim.stop()


async def test_a_full_page_of_completions_says_there_are_more(res_sim, home: Home, tmp_path: Path):
    async with serve("stdio", server_env(res_sim, home), tmp_path) as served:
        many = await served.client.complete(ref(res_sim), {"name": "file_id", "value": "batch"})
        assert len(many.completion.values) == 100, len(many.completion.values)
        assert len(set(many.completion.values)) == 100, "each file once"
        assert many.completion.has_more is True, many.completion
        names = [res_sim.file_info(i)["name"] for i in many.completion.values[:3]]
        assert all(n.startswith("batch-") for n in names), names
        # Narrowed to batch-10x: eleven files (100..104 and 010..019 do not all
        # match "10*"; 010 is its own word "010").
        few = await served.client.complete(ref(res_sim), {"name": "file_id", "value": "batch 10"})
        found = sorted(res_sim.file_info(i)["name"] for i in few.completion.values)
        assert found == [f"batch-{n}.csv" for n in range(100, BULK)], found
        assert few.completion.has_more is False


async def test_completion_of_something_else_is_refused_with_what_there_is(res_sim, home: Home, tmp_path: Path):
    async with serve("stdio", server_env(res_sim, home), tmp_path) as served:
        with pytest.raises(MCPError) as wrong_argument:
            await served.client.complete(ref(res_sim), {"name": "post_id", "value": "x"})
        assert "file_id" in wrong_argument.value.message, wrong_argument.value.message
        other = types.ResourceTemplateReference(type="ref/resource", uri="mattermost://elsewhere.example/files/{file_id}")
        with pytest.raises(MCPError) as wrong_template:
            await served.client.complete(other, {"name": "file_id", "value": "x"})
        assert template_of(res_sim) in wrong_template.value.message, wrong_template.value.message


async def read(served, uri: str) -> types.ReadResourceResult:
    return await served.client.read_resource(uri, cache_mode="refresh")


async def read_attached(
    sim: Mmsim, home: Home, transport: str, workdir: Path, name: str
) -> tuple[str, types.ReadResourceResult]:
    """The attached file `name` read whole as a resource, on a server of its
    own: its file_id and the answer."""
    file_id = sim.file_id(name)
    async with serve(transport, server_env(sim, home), workdir) as served:
        return file_id, await read(served, file_uri(sim, file_id))


def only_piece(result: types.ReadResourceResult, kind: type) -> Any:
    """The one piece a resource read answers, which is a `kind`."""
    assert len(result.contents) == 1, result.contents
    piece = result.contents[0]
    assert isinstance(piece, kind), piece
    return piece


async def test_a_word_document_reads_as_its_markdown_whole(res_sim, home: Home, transport: str, tmp_path: Path):
    file_id, result = await read_attached(res_sim, home, transport, tmp_path, "meeting-notes.docx")
    piece = only_piece(result, types.TextResourceContents)
    assert piece.mime_type == "text/markdown"
    assert piece.uri == file_uri(res_sim, file_id)
    lines = piece.text.splitlines()
    assert "# Kickoff meeting notes" in lines, lines[:3]
    for line in ("## Decisions", "## Action items", "| Alice | Draft the upload rules | 2026-03-06 |"):
        assert line in lines, piece.text
    assert "\t" not in piece.text, "the text is the document's, not numbered lines"


async def test_a_sideways_jpeg_reads_upright_as_a_blob(res_sim, home: Home, transport: str, tmp_path: Path):
    from PIL import Image

    _, result = await read_attached(res_sim, home, transport, tmp_path, "whiteboard.jpg")
    piece = only_piece(result, types.BlobResourceContents)
    assert piece.mime_type == "image/jpeg"
    picture = Image.open(io.BytesIO(base64.b64decode(piece.blob))).convert("RGB")
    assert picture.size == (300, 400), picture.size
    sky = mean_colour(picture, (10, 10, 60, 60))
    assert sky[2] > 200 and sky[2] > sky[0] + 60, f"top-left should be sky blue, is {sky}"


async def test_a_zip_reads_as_its_listing(res_sim, home: Home, tmp_path: Path):
    _, result = await read_attached(res_sim, home, "stdio", tmp_path, "assets.zip")
    piece = only_piece(result, types.TextResourceContents)
    entries = piece.text.splitlines()
    for path in ("assets/README.txt", "assets/data/usage.csv", "assets/icons/LICENSE.txt"):
        assert any(entry.startswith(path + "\t") for entry in entries), entries


async def test_a_pdf_reads_as_its_text_and_itself_only_when_asked(res_sim, home: Home, transport: str, tmp_path: Path):
    """A PDF porter turned into Markdown is that Markdown; its bytes follow
    only with MM_MCP_ATTACH_PDF=true, in read_file and resources/read alike."""
    file_id = res_sim.file_id("handbook.pdf")
    for attach in (False, True):
        extra = {"MM_MCP_ATTACH_PDF": "true"} if attach else {}
        async with serve(transport, server_env(res_sim, home, extra=extra), tmp_path / str(attach)) as served:
            result = await read(served, file_uri(res_sim, file_id))
            called = await served.client.call_tool("read_file", {"file_id": file_id})
        texts = [c for c in result.contents if isinstance(c, types.TextResourceContents)]
        blobs = [c for c in result.contents if isinstance(c, types.BlobResourceContents)]
        assert len(texts) == 1 and len(blobs) == int(attach), (attach, result.contents)
        assert "Porter Team Handbook" in texts[0].text, texts[0].text
        assert "Questions? Ask Alice (alice) or Bob (bob)." in texts[0].text, texts[0].text
        embedded = [b for b in called.content if isinstance(b, types.EmbeddedResource)]
        assert len(embedded) == int(attach), (attach, [type(b).__name__ for b in called.content])
        assert "Porter Team Handbook" in text_of(called)
        assert ("attached as well" in text_of(called)) == attach, text_of(called)[:400]
        if attach:
            assert blobs[0].mime_type == "application/pdf"
            assert base64.b64decode(blobs[0].blob) == res_sim.download(file_id)
            assert base64.b64decode(embedded[0].resource.blob) == res_sim.download(file_id)


async def test_files_that_do_not_fit_in_one_piece_are_refused_naming_read_file_and_save_file(
    res_sim, home: Home, tmp_path: Path
):
    huge = res_sim.file_id("huge.log")
    binary = res_sim.file_id("firmware.bin")
    async with serve("stdio", server_env(res_sim, home), tmp_path) as served:
        res_sim.clear()
        with pytest.raises(MCPError) as too_large:
            await read(served, file_uri(res_sim, huge))
        log = res_sim.requests()
        with pytest.raises(MCPError) as described:
            await read(served, file_uri(res_sim, binary))
    for refusal, name in ((too_large.value, "huge.log"), (described.value, "firmware.bin")):
        assert name in refusal.message, refusal.message
        assert "read_file" in refusal.message and "save_file" in refusal.message, refusal.message
    assert "65 MiB" in too_large.value.message, too_large.value.message
    assert not [r for r in log if r["path"] == f"/api/v4/files/{huge}"], f"the huge file was downloaded:\n{show(log)}"


async def test_a_foreign_host_a_bad_id_and_an_unknown_file_are_clear_errors(res_sim, home: Home, tmp_path: Path):
    file_id = res_sim.file_id("meeting-notes.docx")
    async with serve("stdio", server_env(res_sim, home), tmp_path) as served:
        with pytest.raises(MCPError) as foreign:
            await read(served, f"mattermost://chat.example.com/files/{file_id}")
        with pytest.raises(MCPError) as bad:
            await read(served, file_uri(res_sim, "not-an-id"))
        with pytest.raises(MCPError) as unknown:
            await read(served, file_uri(res_sim, "a" * 26))
        with pytest.raises(MCPError) as other:
            await read(served, "https://example.com/x")
    assert "chat.example.com" in foreign.value.message and host_of(res_sim) in foreign.value.message, foreign.value.message
    assert "not a file id" in bad.value.message, bad.value.message
    # Resource not found: -32002, which 2026-07-28 (the SDK's default) folds into -32602.
    assert unknown.value.code in (-32002, -32602), (unknown.value.code, unknown.value.message)
    assert "a" * 26 in unknown.value.message and "404" in unknown.value.message, unknown.value.message
    assert template_of(res_sim) in other.value.message, other.value.message


async def test_tool_answers_link_each_file_once_in_order_after_their_text(
    res_sim, home: Home, transport: str, tmp_path: Path
):
    post = next(p for p in res_sim.posts("files") if p["message"] == "Two reports in one post.")
    expected = post["file_ids"]  # the post's own order
    assert len(expected) == 2, post
    async with serve(transport, server_env(res_sim, home), tmp_path) as served:
        thread = await served.client.call_tool("read_post", {"post_id": post["id"]})
        assert not thread.is_error, text_of(thread)
        links = links_of(thread)
        assert [link.uri for link in links] == [file_uri(res_sim, f) for f in expected], links
        # The text and structured answer are as before; the links come after.
        assert isinstance(thread.content[0], types.TextContent)
        assert all(isinstance(b, types.ResourceLink) for b in thread.content[-len(links) :])
        first = res_sim.file_info(expected[0])
        assert (links[0].name, links[0].mime_type, links[0].size) == (first["name"], first["mime_type"], first["size"])
        # Followed, a link reads the file.
        body = await read(served, links[1].uri)
        assert body.contents[0].text == "Week nine: the demo shipped.\n", body.contents

        channel = await served.client.call_tool("read_channel", {"channel_id": "files"})
        listed = [f["id"] for p in structured(channel)["posts"] for f in p["files"]]
        assert listed, structured(channel)
        assert [link.uri for link in links_of(channel)] == [file_uri(res_sim, f) for f in dict.fromkeys(listed)]

        found = await served.client.call_tool("search_files", {"terms": "report"})
        named = [f["id"] for f in structured(found)["files"]]
        assert [link.uri for link in links_of(found)] == [file_uri(res_sim, f) for f in named] and len(named) == 2

        none = await served.client.call_tool("get_me", {})
        assert not links_of(none), "an answer naming no file links none"


# --------------------------------------------------------------------------
# The TypeScript SDK client


def run_ts(sim: Mmsim, home: Home, steps: list[dict], url: str | None = None) -> dict:
    """The TS SDK client's answers to `steps`: over stdio to a server it
    starts, or over HTTP to the one at `url`."""
    sdk = HERE / "node_modules" / "@modelcontextprotocol" / "sdk"
    assert sdk.is_dir(), f"the TS SDK is not installed: run npm ci --prefix {HERE} (tests/mcp/run does)"
    plan = {
        "command": str(porter_bin()),
        "args": ["mattermost", "serve"],
        "env": server_env(sim, home),
        "steps": steps,
        "url": url,
    }
    done = subprocess.run(
        ["node", str(HERE / "ts_client.mjs"), json.dumps(plan)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env={**os.environ},
    )
    assert done.returncode == 0, f"the TS client failed ({done.returncode}):\n{done.stderr[-4000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_typescript_sdk_lists_completes_reads_and_follows_links(res_sim, tmp_path: Path):
    from PIL import Image

    home = Home(tmp_path / "machine")
    ids = {name: res_sim.file_id(name) for name in ("meeting-notes.docx", "whiteboard.jpg", "assets.zip", "handbook.pdf")}
    post = next(p for p in res_sim.posts("files") if p["message"] == "Two reports in one post.")
    out = run_ts(
        res_sim,
        home,
        [
            {"op": "templates"},
            {"op": "complete", "uri": template_of(res_sim), "value": "meeting no"},
            {"op": "complete", "uri": template_of(res_sim), "value": "batch"},
            *({"op": "read", "uri": file_uri(res_sim, fid)} for fid in ids.values()),
            {"op": "read", "uri": file_uri(res_sim, res_sim.file_id("firmware.bin"))},
            {"op": "follow", "name": "read_post", "arguments": {"post_id": post["id"]}},
        ],
    )
    assert "resources" in out["capabilities"] and "completions" in out["capabilities"], out["capabilities"]
    templates, meeting, batch, docx, jpeg, zipped, pdf, binary, follow = out["steps"]
    assert [t["uriTemplate"] for t in templates["resourceTemplates"]] == [template_of(res_sim)], templates
    assert meeting["completion"]["values"] == [ids["meeting-notes.docx"]], meeting
    assert len(batch["completion"]["values"]) == 100 and batch["completion"]["hasMore"] is True

    [doc] = docx["contents"]
    assert doc["mimeType"] == "text/markdown" and "## Decisions" in doc["text"].splitlines(), doc
    [photo] = jpeg["contents"]
    assert photo["mimeType"] == "image/jpeg"
    assert Image.open(io.BytesIO(base64.b64decode(photo["blob"]))).size == (300, 400)
    [listing] = zipped["contents"]
    assert any(line.startswith("assets/README.txt\t") for line in listing["text"].splitlines()), listing
    kinds = sorted(("text" in c, c.get("mimeType")) for c in pdf["contents"])
    assert kinds == [(True, "text/markdown")], kinds
    assert "read_file" in binary["error"] and "save_file" in binary["error"], binary

    links = [b for b in follow["result"]["content"] if b["type"] == "resource_link"]
    assert [link["uri"] for link in links] == [file_uri(res_sim, f) for f in post["file_ids"]], links
    texts = sorted(r["contents"][0]["text"] for r in follow["reads"])
    assert texts == ["Quarter one went well.\n", "Week nine: the demo shipped.\n"], follow["reads"]


def test_the_typescript_sdk_goes_on_in_an_http_session_parked_after_a_quiet_spell(res_sim, tmp_path: Path):
    # Parked after a second with nothing in flight; the TS client, like
    # the Python one, never opens a new session on a 404.
    home = Home(tmp_path / "machine")
    env = {**server_env(res_sim, home), "RUST_LOG": f"warn,rmcp::transport::streamable_http_server=debug,{SESSIONS_LOG}"}
    log = tmp_path / "serve-http.stderr"
    process, url = start_http_server(
        [str(porter_bin()), "mattermost", "serve", "--session-park", "1s"], env, tmp_path, log
    )
    try:
        me = {"op": "call", "name": "get_me", "arguments": {}}
        steps = [me, {"op": "until_parked", "log": str(log), "total": 1}, me, {"op": "until_parked", "log": str(log), "total": 2}, me]
        out = run_ts(res_sim, home, steps, url=url)
    finally:
        stop_process(process)
    calls = [step for step in out["steps"] if step is not None]
    assert len(calls) == 3, out
    for answered in calls:
        assert "error" not in answered and not answered.get("isError"), answered
        assert "alice" in json.dumps(answered), answered
    assert read_log(log).count("session restored from external store") == 2, read_log(log)
