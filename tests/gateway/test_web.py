"""The HTTP and WebFetch tools through the real gateway binary and the Python
mcp client, against the loopback server in webserver.py.

The gateway's config lists 127.0.0.1 in `http.private_hosts` (and nothing
else), so the test server is reachable while every other private address,
and names that resolve to loopback, stay refused.
"""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from harness import NOT_KEPT, STUB, all_text, each_backend, sha256, stdio_gateway, write_config
from webserver import LONG_TEXT, NAMED_PDF, PDF, PNG, TEXT, web_server

pytestmark = pytest.mark.anyio

CAP_BYTES = 100_000
SECRET = "s3cr3t-value"


def config(
    root: Path, *, allow: list[str] | None = None, grants: list[str] | None = None, cap: int = CAP_BYTES
) -> Path:
    extra: dict[str, Any] = {
        "mcp_servers": {},
        "http": {"allow_hosts": allow or ["*"], "private_hosts": ["127.0.0.1"], "timeout": "1s"},
        "limits": {"file_max_bytes": cap},
    }
    if grants is not None:
        extra["profiles"] = {"default": {"grants": grants}}
    return write_config(root, extra=extra)


def inbox_files(data: Path) -> list[Path]:
    return sorted(p for p in (data / "runs").glob("*/inbox/**/*") if p.is_file())


def left_files(data: Path) -> list[Path]:
    """Every file under the runs' folders but their transcripts: kept, staged or temp."""
    return sorted(p for p in (data / "runs").rglob("*") if p.is_file() and p.name != "transcript.jsonl")


def head_and_body(text: str) -> tuple[list[str], str]:
    head, _, body = text.partition("\n\n")
    return head.splitlines(), body


@each_backend
async def test_webfetch_turns_a_page_into_markdown_and_keeps_its_files(tmp_path: Path) -> None:
    with web_server() as base:
        async with stdio_gateway(tmp_path, config(tmp_path)) as served:
            result = await served.client.call_tool("WebFetch", {"url": f"{base}/page.html", "assets": True})
    text = all_text(result)
    assert not result.is_error, text
    assert "# Quarterly numbers" in text
    assert "color: red" not in text
    # Links to fetched files point into the inbox; the others are absolute.
    assert "[full report](volume:inbox:web/127.0.0.1/report.pdf)" in text
    assert "[named copy](volume:inbox:web/127.0.0.1/Quarterly-Report.pdf)" in text
    assert "![a dot](volume:inbox:web/127.0.0.1/dot.png)" in text
    assert f"[about us]({base}/about)" in text
    # Skipped ones stay absolute and say why.
    assert "![metadata](http://169.254.169.254/latest/meta.png)" in text
    assert re.search(r"not fetched: http://169\.254\.169\.254/latest/meta\.png — refused: .*private address", text), text
    assert f"not fetched: {base}/missing.pdf — the server answered 404 Not Found" in text
    stubs = {m["path"]: m for m in STUB.finditer(text)}
    assert set(stubs) == {"web/127.0.0.1/report.pdf", "web/127.0.0.1/Quarterly-Report.pdf", "web/127.0.0.1/dot.png"}
    assert stubs["web/127.0.0.1/dot.png"]["type"] == "image/png"
    assert stubs["web/127.0.0.1/report.pdf"]["origin"] == "webfetch:127.0.0.1"
    for path, data in [("report.pdf", PDF), ("Quarterly-Report.pdf", NAMED_PDF), ("dot.png", PNG)]:
        assert sha256(served.inbox_file(f"web/127.0.0.1/{path}").read_bytes()) == sha256(data)


async def test_webfetch_without_assets_keeps_nothing_and_leaves_links_absolute(tmp_path: Path) -> None:
    with web_server() as base:
        async with stdio_gateway(tmp_path, config(tmp_path)) as served:
            page = await served.client.call_tool("WebFetch", {"url": f"{base}/page.html"})
            pdf = await served.client.call_tool("WebFetch", {"url": f"{base}/files/report.pdf"})
            notes = await served.client.call_tool("WebFetch", {"url": f"{base}/octet/notes"})
    assert f"[full report]({base}/files/report.pdf)" in all_text(page)
    assert "not fetched" not in all_text(page)
    # A file is answered with its stub alone; text labelled octet-stream as it is.
    assert STUB.fullmatch(all_text(pdf)), all_text(pdf)
    assert STUB.fullmatch(all_text(pdf))["origin"] == "webfetch:127.0.0.1"
    assert all_text(notes) == TEXT
    assert [p.name for p in inbox_files(served.data)] == ["report.pdf"]


async def test_http_answers_status_headers_and_the_stub_of_a_file(tmp_path: Path) -> None:
    with web_server() as base:
        async with stdio_gateway(tmp_path, config(tmp_path)) as served:
            plain = await served.client.call_tool("HTTP", {"method": "GET", "url": f"{base}/files/report.pdf"})
            named = await served.client.call_tool("HTTP", {"method": "get", "url": f"{base}/files/named"})
            picture = await served.client.call_tool("HTTP", {"method": "GET", "url": f"{base}/octet/picture"})
            notes = await served.client.call_tool("HTTP", {"method": "GET", "url": f"{base}/octet/notes"})
            head = await served.client.call_tool("HTTP", {"method": "HEAD", "url": f"{base}/files/report.pdf"})
    lines, body = head_and_body(all_text(plain))
    assert lines[0] == "HTTP/1.1 200 OK"
    assert "content-type: application/pdf" in lines
    stub = STUB.fullmatch(body)
    assert stub, body
    assert (stub["path"], stub["type"], stub["origin"]) == ("report.pdf", "application/pdf", "http:127.0.0.1")
    assert sha256(served.inbox_file("report.pdf").read_bytes()) == sha256(PDF)

    # Content-Disposition names the file.
    _, body = head_and_body(all_text(named))
    assert STUB.fullmatch(body)["path"] == "Quarterly-Report.pdf"
    assert sha256(served.inbox_file("Quarterly-Report.pdf").read_bytes()) == sha256(NAMED_PDF)

    # A PNG labelled octet-stream is sniffed as a PNG and kept.
    _, body = head_and_body(all_text(picture))
    assert STUB.fullmatch(body)["type"] == "image/png"
    assert sha256(served.inbox_file("picture.png").read_bytes()) == sha256(PNG)

    # Text labelled octet-stream stays text, and no file is kept for it.
    lines, body = head_and_body(all_text(notes))
    assert "content-type: application/octet-stream" in lines
    assert body == TEXT

    # HEAD has no body to keep.
    lines, body = head_and_body(all_text(head))
    assert lines[0] == "HTTP/1.1 200 OK" and body == ""
    assert len(inbox_files(served.data)) == 3


async def test_redirects_are_followed_only_where_the_policy_allows(tmp_path: Path) -> None:
    with web_server() as base:
        port = base.rsplit(":", 1)[1]
        refusals = {
            "http://127.0.0.2/x": "refused: 127.0.0.2 is a private address",
            "http://169.254.169.254/latest/meta-data/": "refused: 169.254.169.254 is a private address",
            "http://[::ffff:127.0.0.1]/x": "is a private address",
            f"http://localhost:{port}/hello.txt": "refused: localhost resolves to 127.0.0.1, a private address",
        }
        async with stdio_gateway(tmp_path, config(tmp_path)) as served:
            same = await served.client.call_tool("HTTP", {"method": "GET", "url": f"{base}/redirect/same"})
            lines, body = head_and_body(all_text(same))
            assert lines[0] == "HTTP/1.1 200 OK" and body == "hello from the same host\n"

            for target, expected in refusals.items():
                url = f"{base}/redirect/to?target={urllib.parse.quote(target, safe='')}"
                for tool, args in [("HTTP", {"method": "GET", "url": url}), ("WebFetch", {"url": url})]:
                    result = await served.client.call_tool(tool, args)
                    assert result.is_error, all_text(result)
                    assert expected in all_text(result), all_text(result)

            loop = await served.client.call_tool("WebFetch", {"url": f"{base}/loop"})
            assert loop.is_error and "more than 5 redirects" in all_text(loop), all_text(loop)
            assert "redirecting in a loop" in all_text(loop)
        assert left_files(served.data) == []

    # With an allow list of 127.0.0.1 only, a redirect to another host is refused.
    other = tmp_path / "other"
    with web_server() as base:
        async with stdio_gateway(other, config(other, allow=["127.0.0.1"])) as served:
            result = await served.client.call_tool("HTTP", {"method": "GET", "url": f"{base}/redirect/other"})
            assert result.is_error
            assert "refused: localhost is not an allowed host" in all_text(result), all_text(result)


async def test_a_body_over_the_cap_is_not_kept_and_leaves_no_file(tmp_path: Path) -> None:
    with web_server() as base:
        async with stdio_gateway(tmp_path, config(tmp_path)) as served:
            declared = await served.client.call_tool("HTTP", {"method": "GET", "url": f"{base}/big"})
            chunked = await served.client.call_tool("WebFetch", {"url": f"{base}/big/chunked"})
    _, body = head_and_body(all_text(declared))
    not_kept = NOT_KEPT.fullmatch(body)
    assert not_kept, body
    assert "limit for one file" in not_kept["why"] and not_kept["origin"] == "http:127.0.0.1"
    assert not_kept["type"] == "application/octet-stream"
    not_kept = NOT_KEPT.fullmatch(all_text(chunked))
    assert not_kept, all_text(chunked)
    assert (not_kept["type"], not_kept["origin"]) == ("application/zip", "webfetch:127.0.0.1")
    assert left_files(served.data) == []


@each_backend
async def test_text_longer_than_an_answer_holds_is_kept_as_a_file(tmp_path: Path) -> None:
    with web_server() as base:
        async with stdio_gateway(tmp_path, config(tmp_path, cap=4 * 1024 * 1024)) as served:
            text = await served.client.call_tool("HTTP", {"method": "GET", "url": f"{base}/long.txt"})
            page = await served.client.call_tool("WebFetch", {"url": f"{base}/long.html"})
    _, body = head_and_body(all_text(text))
    stub = STUB.match(body)
    assert stub and stub["path"] == "long.txt" and stub["type"] == "text/plain", body
    assert "longer than 256 KiB" in body and "line 000000" not in body
    assert served.inbox_file("long.txt").read_text() == LONG_TEXT
    # A long page's Markdown is cut, and kept whole beside the answer.
    answer = all_text(page)
    assert len(answer.encode()) < 260 * 1024
    stub = STUB.match(answer)
    assert stub and stub["path"] == "long.md" and stub["type"] == "text/markdown", answer[:300]
    assert "paragraph 000000 of a long page" in answer and "paragraph 011999" not in answer
    assert "paragraph 011999 of a long page" in served.inbox_file("long.md").read_text()


async def test_a_body_that_stalls_ends_in_a_timeout_and_leaves_no_file(tmp_path: Path) -> None:
    with web_server() as base:
        async with stdio_gateway(tmp_path, config(tmp_path)) as served:
            result = await served.client.call_tool("HTTP", {"method": "GET", "url": f"{base}/slow"})
    assert result.is_error
    assert f"{base}/slow did not answer within 1 s" in all_text(result), all_text(result)
    assert left_files(served.data) == []


async def test_refusals_without_the_grant_or_with_a_bad_url_say_why(tmp_path: Path) -> None:
    with web_server() as base:
        async with stdio_gateway(tmp_path, config(tmp_path, grants=["File"])) as served:
            result = await served.client.call_tool("WebFetch", {"url": f"{base}/hello.txt"})
            assert result.is_error and "needs the HTTP grant" in all_text(result), all_text(result)
        other = tmp_path / "other"
        async with stdio_gateway(other, config(other)) as served:
            tools = {tool.name: tool for tool in (await served.client.list_tools()).tools}
            assert set(tools["HTTP"].input_schema["required"]) == {"method", "url"}
            assert tools["WebFetch"].input_schema["required"] == ["url"]
            result = await served.client.call_tool("HTTP", {"method": "GET", "url": f'{base}/a b"?token=xyz-secret'})
            assert result.is_error
            text = all_text(result)
            assert "a space at position" in text and "xyz-secret" not in text and base not in text, text


async def test_a_query_secret_appears_nowhere_afterwards(tmp_path: Path) -> None:
    with web_server() as base:
        async with stdio_gateway(tmp_path, config(tmp_path)) as served:
            echo = await served.client.call_tool("HTTP", {"method": "GET", "url": f"{base}/echo?token={SECRET}"})
            kept = await served.client.call_tool("HTTP", {"method": "GET", "url": f"{base}/secret.pdf?token={SECRET}"})
            fetched = await served.client.call_tool("WebFetch", {"url": f"{base}/echo?token={SECRET}&n=2"})
            failed = await served.client.call_tool("HTTP", {"method": "GET", "url": f"{base}/slow?token={SECRET}"})
    texts = [all_text(r) for r in (echo, kept, fetched, failed)]
    lines, body = head_and_body(texts[0])
    # The server echoed the secret in the body and a header: both are masked.
    assert body == "you sent token=…\n", body
    assert "x-echo: token=…" in lines
    assert "set-cookie: …" in lines
    assert STUB.search(texts[1])
    assert "/slow?…" in texts[3]
    for text in texts:
        assert SECRET not in text
    places = [served.stderr, *served.data.glob("runs/*/transcript.jsonl"), served.data / "porter.sqlite3"]
    places += list(served.data.glob("porter.sqlite3*"))
    assert any(p.name == "transcript.jsonl" for p in places)
    for place in places:
        assert SECRET.encode() not in place.read_bytes(), place
