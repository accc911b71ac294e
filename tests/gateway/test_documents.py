"""`File read`, `File extract`, `File import` and the `Documents` tool
through the real binary with the Python mcp client.

The XLSX, PPTX and DOCX are built here with openpyxl, python-pptx and
python-docx, served by a loopback web server and fetched into the inbox with
the gateway's own HTTP tool, so each imported document has a real origin
(`http:127.0.0.1`). A word that occurs only in one table cell of the
workbook, and one that occurs only in the speaker notes of one slide, must
each be found under the right heading; a document of one tenant must be
invisible to another; `File read` shows a Word document as Markdown with the
line of each heading in its outline.
"""

from __future__ import annotations

import contextlib
import io
import re
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from docx import Document
from openpyxl import Workbook
from pptx import Presentation
from pptx.util import Inches

from harness import STUB, all_text, each_backend, http_client, start_http, stdio_gateway, write_config
from webserver import file_server

pytestmark = pytest.mark.anyio

CELL_WORD = "zeppelinium"
NOTES_WORD = "quokkanote"


def budget_xlsx() -> bytes:
    book = Workbook()
    summary = book.active
    summary.title = "Summary"
    summary.append(["Quarter", "Total"])
    summary.append(["Q1", 1200])
    sheet = book.create_sheet("Budget")
    sheet.append(["Item", "Cost", "Supplier"])
    sheet.append(["Airship", 90000, CELL_WORD])
    sheet.append(["Hangar", 25000, "Acme Sheds"])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def roadmap_pptx() -> bytes:
    deck = Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[1])
    first.shapes.title.text = "Introduction"
    first.placeholders[1].text = "Where we stand"
    first.notes_slide.notes_text_frame.text = "Welcome everyone."
    second = deck.slides.add_slide(deck.slide_layouts[1])
    second.shapes.title.text = "Roadmap"
    second.placeholders[1].text = "Ship the airship"
    second.notes_slide.notes_text_frame.text = f"Mention the {NOTES_WORD} milestone only here."
    third = deck.slides.add_slide(deck.slide_layouts[5])
    third.shapes.title.text = "Closing"
    third.shapes.add_textbox(Inches(1), Inches(2), Inches(4), Inches(1)).text_frame.text = "Thanks"
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def plan_docx() -> bytes:
    document = Document()
    document.add_heading("Launch plan", level=1)
    document.add_paragraph("The airship flies in May.")
    document.add_heading("Costs", level=2)
    table = document.add_table(rows=2, cols=3)
    for row, values in zip(table.rows, [("Item", "Cost", "Owner"), ("Airship", "90000", "Alice")]):
        for cell, value in zip(row.cells, values):
            cell.text = value
    document.add_paragraph("Paid from the spring budget.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


NUMBERED = re.compile(r"^\s*(\d+)\t(.*)$")


def numbered_lines(text: str) -> dict[int, str]:
    """The numbered lines of a read window, by their numbers."""
    return {int(m.group(1)): m.group(2) for line in text.splitlines() if (m := NUMBERED.match(line))}


@pytest.fixture
def served_files(tmp_path: Path) -> Iterator[str]:
    root = tmp_path / "www"
    root.mkdir()
    (root / "budget.xlsx").write_bytes(budget_xlsx())
    (root / "roadmap.pptx").write_bytes(roadmap_pptx())
    (root / "plan.docx").write_bytes(plan_docx())
    with file_server(root) as base:
        yield base


def web_extra() -> dict[str, Any]:
    return {
        "mcp_servers": {},
        "http": {"allow_hosts": ["*"], "private_hosts": ["127.0.0.1"], "timeout": "5s"},
    }


@contextlib.asynccontextmanager
async def web_gateway(tmp_path: Path) -> AsyncIterator[Any]:
    """A stdio gateway whose default profile has File and HTTP, fetching
    from loopback."""
    config = write_config(tmp_path, extra={**web_extra(), "profiles": {"default": {"grants": ["File", "HTTP"]}}})
    async with stdio_gateway(tmp_path, config) as served:
        yield served


async def fetch(client: Any, url: str) -> str:
    """GETs `url` with the HTTP tool; answers the inbox path of the kept file."""
    result = await client.call_tool("HTTP", {"method": "GET", "url": url})
    text = all_text(result)
    assert not result.is_error, text
    stub = STUB.search(text)
    assert stub, text
    assert stub["origin"] == "http:127.0.0.1", text
    return stub["path"]


async def imported(client: Any, path: str, **extra: Any) -> dict[str, Any]:
    result = await client.call_tool("File", {"op": "import", "path": path, **extra})
    assert not result.is_error, all_text(result)
    return result.structured_content


async def search(client: Any, query: str) -> dict[str, Any]:
    result = await client.call_tool("Documents", {"op": "search", "query": query})
    assert not result.is_error, all_text(result)
    return result.structured_content


@each_backend
async def test_search_finds_a_table_cell_and_speaker_notes_under_their_headings(tmp_path: Path, served_files: str) -> None:
    async with web_gateway(tmp_path) as served:
        client = served.client
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert {"File", "Documents"} <= tools

        xlsx = await fetch(client, f"{served_files}/budget.xlsx")
        pptx = await fetch(client, f"{served_files}/roadmap.pptx")
        workbook = await imported(client, xlsx, title="Airship budget")
        deck = await imported(client, pptx)
        assert workbook["title"] == "Airship budget"
        assert workbook["source_path"] == f"volume:inbox:{xlsx}"
        assert workbook["origin"] == "http:127.0.0.1"
        assert deck["title"]  # its own title, else its file name

        found = await search(client, CELL_WORD)
        [hit] = found["hits"]
        assert hit["id"] == workbook["id"]
        assert f"**{CELL_WORD}**" in hit["snippet"]
        # The cell sits in the Budget sheet's table, not the Summary sheet's.
        assert "Budget" in hit["heading"], hit
        assert hit["heading"].startswith("#"), hit

        found = await search(client, NOTES_WORD)
        [hit] = found["hits"]
        assert hit["id"] == deck["id"]
        assert f"**{NOTES_WORD}**" in hit["snippet"]
        assert "Notes" in hit["heading"], hit
        # The notes are those of slide 2, not of slide 1 or 3.
        assert any(line.lstrip("#").strip().startswith("Slide 2") for line in hit["trail"]), hit
        assert not any("Slide 1" in line or "Slide 3" in line for line in hit["trail"]), hit

        # A word in neither, and a query FTS5 would choke on if passed raw.
        assert (await search(client, "nonexistentword"))["hits"] == []
        odd = await client.call_tool("Documents", {"op": "search", "query": 'NEAR("a" OR) * -'})
        assert not odd.is_error, all_text(odd)
        bad = await client.call_tool("Documents", {"op": "search", "query": '"unclosed'})
        assert bad.is_error and "not closed" in all_text(bad)
        assert "sql" not in all_text(bad).lower()

        # get pages the Markdown like the file view; list shows both.
        page = await client.call_tool("Documents", {"op": "get", "id": workbook["id"], "line_count": 3})
        assert not page.is_error, all_text(page)
        assert page.structured_content["window"]["end_line"] == 3
        assert "     1\t" in all_text(page)
        listed = await client.call_tool("Documents", {"op": "list"})
        ids = [doc["id"] for doc in listed.structured_content["documents"]]
        assert ids == [deck["id"], workbook["id"]]

        # extract writes <name>.md next to the file, recorded as from file:extract.
        extracted = await client.call_tool("File", {"op": "extract", "path": xlsx})
        text = all_text(extracted)
        assert not extracted.is_error, text
        stub = STUB.search(text)
        assert stub and stub["path"] == xlsx.rsplit(".", 1)[0] + ".md", text
        assert stub["origin"] == "file:extract" and stub["type"] == "text/markdown", text
        assert CELL_WORD in served.inbox_file(stub["path"]).read_text()
        assert CELL_WORD in text  # the first window of the Markdown


async def test_file_read_shows_a_word_document_as_markdown_with_an_outline_of_its_heading_lines(
    tmp_path: Path, served_files: str
) -> None:
    async with web_gateway(tmp_path) as served:
        client = served.client
        path = await fetch(client, f"{served_files}/plan.docx")
        result = await client.call_tool("File", {"op": "read", "path": path})
        text = all_text(result)
        assert not result.is_error, text
        assert "Word document, as Markdown" in text, text
        lines = numbered_lines(text)
        shown = list(lines.values())
        assert "# Launch plan" in shown, text
        assert "## Costs" in shown, text
        assert "| Item | Cost | Owner |" in shown, text
        assert "| Airship | 90000 | Alice |" in shown, text
        # The table comes after its heading, as in the document.
        assert shown.index("## Costs") < shown.index("| Item | Cost | Owner |")

        outline = result.structured_content["outline"]
        assert [(h["level"], h["text"]) for h in outline] == [(1, "Launch plan"), (2, "Costs")], outline
        for heading in outline:
            assert lines[heading["line"]] == "#" * heading["level"] + " " + heading["text"], (heading, text)

        # A window asked for at a heading's line starts with that heading.
        costs = outline[1]["line"]
        section = await client.call_tool("File", {"op": "read", "path": path, "start_line": costs, "line_count": 4})
        assert not section.is_error, all_text(section)
        assert min(numbered_lines(all_text(section)).items()) == (costs, "## Costs")
        assert section.structured_content["outline"] == outline


KEYS = [
    {"name": "alice", "key": "alice-docs-key-0123", "tenant": "acme", "role": "user", "profile": "web"},
    {"name": "carol", "key": "carol-docs-key-0123", "tenant": "acme", "role": "user", "profile": "web"},
    {"name": "bob", "key": "bob-docs-key-0123", "tenant": "globex", "role": "user", "profile": "web"},
    {"name": "ops", "key": "ops-docs-key-0123", "tenant": "acme", "role": "tenant_operator", "profile": "web"},
]


@each_backend
async def test_a_document_of_one_tenant_is_invisible_to_another(tmp_path: Path, served_files: str) -> None:
    extra = {**web_extra(), "profiles": {"web": {"grants": ["File", "HTTP"]}}}
    config = write_config(tmp_path, keys=KEYS, extra=extra)
    process, url = start_http(tmp_path, config)
    try:
        async with http_client(url, "alice-docs-key-0123") as alice:
            xlsx = await fetch(alice, f"{served_files}/budget.xlsx")
            document = await imported(alice, xlsx)
            assert [hit["id"] for hit in (await search(alice, CELL_WORD))["hits"]] == [document["id"]]

            async with http_client(url, "bob-docs-key-0123") as bob:
                assert (await search(bob, CELL_WORD))["hits"] == []
                listed = await bob.call_tool("Documents", {"op": "list"})
                assert listed.structured_content["documents"] == []
                missing_id = str(uuid.uuid4())
                theirs = await bob.call_tool("Documents", {"op": "get", "id": document["id"]})
                missing = await bob.call_tool("Documents", {"op": "get", "id": missing_id})
                assert theirs.is_error and missing.is_error
                assert all_text(theirs).replace(document["id"], "<id>") == all_text(missing).replace(missing_id, "<id>")
                gone = await bob.call_tool("Documents", {"op": "delete", "id": document["id"]})
                assert all_text(gone).replace(document["id"], "<id>") == all_text(missing).replace(missing_id, "<id>")

            # The same tenant's other user finds it but may not delete it.
            async with http_client(url, "carol-docs-key-0123") as carol:
                assert [hit["id"] for hit in (await search(carol, CELL_WORD))["hits"]] == [document["id"]]
                refused = await carol.call_tool("Documents", {"op": "delete", "id": document["id"]})
                missing = await carol.call_tool("Documents", {"op": "delete", "id": missing_id})
                assert refused.is_error
                assert all_text(refused).replace(document["id"], "<id>") == all_text(missing).replace(missing_id, "<id>")

            # From outside, another tenant's key cannot import from alice's run.
            runs = httpx2.get(f"{url}/v1/runs", headers={"Authorization": "Bearer alice-docs-key-0123"}).json()["runs"]
            run_id = runs[0]["id"]
            outside = httpx2.post(
                f"{url}/v1/runs/{run_id}/file",
                headers={"Authorization": "Bearer bob-docs-key-0123"},
                json={"op": "import", "path": xlsx},
            )
            assert outside.status_code == 404
            # Its tenant's operator, a reader of the run, may import from outside.
            by_ops = httpx2.post(
                f"{url}/v1/runs/{run_id}/file",
                headers={"Authorization": "Bearer ops-docs-key-0123"},
                json={"op": "import", "path": xlsx, "title": "Imported by ops"},
            ).json()
            assert by_ops.get("isError") is not True, by_ops
            assert by_ops["structuredContent"]["title"] == "Imported by ops"

            deleted = await alice.call_tool("Documents", {"op": "delete", "id": document["id"]})
            assert not deleted.is_error, all_text(deleted)
            remaining = [hit["id"] for hit in (await search(alice, CELL_WORD))["hits"]]
            assert remaining == [by_ops["structuredContent"]["id"]]
    finally:
        process.terminate()
        process.wait(timeout=10)
