"""The inbox page as a person uses it, against a real gateway with captures
from server-everything (through the Python mcp SDK) and WebFetch of a
loopback PDF: the runs read as titles with counts, sizes and expiry; files
are a table newest first; filters narrow it; previews show porter's scaled
image and extracted text; keep, remove (live on a second tab), download one
and all (streamed by the browser, sha256 checked); on a desktop and a phone,
light and dark, with axe-core clean in every state and a screenshot of each
written to target/gateway_web/. Then the time filter (the browser's clock
moved on) and reconnection (the gateway restarted under the open page)."""

from __future__ import annotations

import base64
import datetime
import hashlib
import http.server
import io
import json
import threading
import urllib.request
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation
from playwright.async_api import Browser, Page

from harness import (
    DESKTOP,
    Gateway,
    axe_violations,
    click,
    minimal_pdf,
    on_each_screen,
    open_page,
    page_problems,
    press,
    screenshot,
    sign_in,
    small_targets,
    wait_for,
)

PDF_TEXT = "Quarterly numbers for porter"
PDF = minimal_pdf(PDF_TEXT)
# A name that would be markup if the page ever wrote it as HTML.
HOSTILE = '<img src=x onerror="document.title=1">.txt'


def bundle() -> bytes:
    """A zip of two entries, one with a hostile name."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("notes/readme.txt", "hello\n")
        archive.writestr(HOSTILE, "x")
    return out.getvalue()


SERVED = {"/report.pdf": ("application/pdf", PDF), "/bundle.zip": ("application/zip", bundle())}


@contextmanager
def pdf_server() -> Iterator[str]:
    """A loopback web server with a PDF at /report.pdf and a zip at /bundle.zip."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            if self.path not in SERVED:
                self.send_error(404)
                return
            kind, body = SERVED[self.path]
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


# The client as it names itself at initialize; its title leads each run's heading.
CLIENT = Implementation(name="porter-web-test", title="Page test agent", version="1.0")


def rows_js(count: int | None = None) -> str:
    """JavaScript for the file names in the table, top to bottom, as shown
    (or, with `count`, those names once there are that many)."""
    names = ("[...document.querySelectorAll('table.files tbody tr')].filter(r => r.checkVisibility())"
             ".map(r => r.querySelector('td.name button').textContent)")
    if count is None:
        return names
    return f"(() => {{ const r = {names}; return r.length === {count} ? r : null }})()"


async def rows(page: Page) -> list[str]:
    return await page.evaluate(rows_js())


async def wait_rows(page: Page, count: int, what: str) -> list[str]:
    try:
        return await wait_for(page, rows_js(count), what=what)
    except AssertionError as timed_out:
        shown = await page.text_content("#runs")
        raise AssertionError(f"{timed_out}; the page shows {shown!r}") from None


async def set_filter(page: Page, field: str, value: str) -> None:
    """Chooses `value` in a filter as a person does (select or type)."""
    if await page.evaluate(f"document.getElementById({field!r}).tagName") == "SELECT":
        await page.select_option(f"#{field}", value)
    else:
        await page.fill(f"#{field}", value)


def by_label(label: str) -> str:
    return f'button[aria-label="{label}"]'


async def check(page: Page, state: str, name: str) -> None:
    """A screenshot of this state for a person, and axe-core's verdict on it."""
    await screenshot(page, f"{state}-{name}")
    violations = await axe_violations(page)
    assert violations == [], (state, violations)


async def captures(gateway: Gateway, base: str) -> None:
    """Four captures through the gateway, one call after another: an image
    and a gzip resource from server-everything, a zip and a PDF by WebFetch."""
    payload = bytes(range(256)) * 24  # 6 KiB, so its data URI is 8 KiB
    data_uri = "data:application/octet-stream;base64," + base64.b64encode(payload).decode()
    headers = {"Authorization": f"Bearer {gateway.key}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with Client(streamable_http_client(gateway.url + "/mcp", http_client=http),
                          client_info=CLIENT) as client:
            for tool, arguments in [
                ("mcp__everything__get-tiny-image", {}),
                ("mcp__everything__gzip-file-as-resource",
                 {"name": "payload.bin.gz", "data": data_uri, "outputType": "resource"}),
                ("WebFetch", {"url": f"{base}/bundle.zip"}),
                ("WebFetch", {"url": f"{base}/report.pdf"}),
            ]:
                result = await client.call_tool(tool, arguments)
                assert not result.is_error, (tool, result.content)
                await anyio.sleep(0.05)  # distinct capture times


async def signed_in(browser: Browser, gateway: Gateway, viewport: tuple, scheme: str,
                    context=None) -> Page:  # noqa: ANN001
    page = await open_page(browser, gateway.url + "/", viewport, scheme, context=context)
    await sign_in(page, gateway.key)
    return page


@on_each_screen
async def test_a_person_finds_previews_keeps_downloads_and_removes_captures(
    gateway: Gateway, browser: Browser, viewport: tuple, scheme: str
) -> None:
    name = f"{viewport[0]}-{scheme}"
    page = await signed_in(browser, gateway, viewport, scheme)
    # A second tab of the same person (a tab does not share session storage,
    # so it signs in too).
    other = await signed_in(browser, gateway, viewport, scheme, context=page.context)
    await page.evaluate("window.sameLoad = true")

    with pdf_server() as base:
        await captures(gateway, base)
    names = await wait_rows(page, 4, "four captures, live")

    # Newest first; new rows are highlighted and announced, then the highlight fades.
    assert names[0] == "report.pdf", names
    assert names[-1].endswith(".png"), names
    image = names[-1]
    assert await page.evaluate("document.querySelectorAll('tr.fresh').length") >= 1
    await wait_for(page, "document.getElementById('announcer').textContent.startsWith('New file')",
                   what="the new file to be announced")
    await check(page, "files-fresh", name)
    await wait_for(page, "document.querySelectorAll('tr.fresh').length === 0", timeout=15,
                   what="the highlight to fade")
    assert await page.evaluate("window.sameLoad") is True

    # The run reads as a title: the client's name, the first tool, the time;
    # with its count, size, state and expiry.
    heading = await page.text_content(".run h3")
    assert heading.startswith("Page test agent · get-tiny-image · "), heading
    meta = await page.text_content(".run .meta")
    assert meta.startswith("4 files, "), meta
    assert "going" in meta and "after the run ends" in meta, meta
    await check(page, "files", name)
    if viewport[3]:
        assert await small_targets(page) == []

    # GET /v1/runs names the client and does not repeat the 8 KiB data URI.
    listing = gateway.get_raw("/v1/runs")
    assert len(listing) < 4096, len(listing)
    assert b"characters in all" in listing
    assert gateway.get_json("/v1/runs")["runs"][0]["client"] == "Page test agent"

    # Filters: by text (typed), by kind.
    await page.focus("#filter-text")
    await page.keyboard.insert_text("pdf")
    await wait_for(page, "document.querySelectorAll('table.files tbody tr').length === 1", what="the text filter")
    assert await rows(page) == ["report.pdf"]
    await check(page, "filtered", name)
    await set_filter(page, "filter-text", "")
    await set_filter(page, "filter-kind", "image")
    assert await rows(page) == [image]
    await set_filter(page, "filter-kind", "")
    assert len(await rows(page)) == 4

    # Preview an image: porter's scaled PNG, through a blob: URL.
    await click(page, by_label(f"Preview {image}"))
    await wait_for(page, "(() => { const i = document.querySelector('#preview-body img');"
                   " return i && i.complete && i.naturalWidth > 0 })()", what="the image preview")
    assert await page.evaluate("document.querySelector('#preview-body img').src.startsWith('blob:')")
    assert await page.evaluate("document.getElementById('preview').open")
    await check(page, "preview-image", name)
    await press(page, "Escape")
    await wait_for(page, "!document.getElementById('preview').open", what="Escape to close the preview")

    # From the keyboard: Enter on a name opens its preview, Escape closes it.
    await page.focus(by_label("Preview report.pdf"))
    await press(page, "Enter")
    await wait_for(page, "document.getElementById('preview').open", what="Enter to open the preview")
    await press(page, "Escape")
    await wait_for(page, "!document.getElementById('preview').open", what="Escape to close it")

    # Preview an archive: its listing, names as text, never markup.
    await click(page, by_label("Preview bundle.zip"))
    await wait_for(page, "document.getElementById('preview-body').textContent.includes('notes/readme.txt')",
                   what="the zip's listing in the preview")
    assert HOSTILE in await page.text_content("#preview-body")
    # Nothing of the PDF previewed just before (a slower answer) turns up here.
    await anyio.sleep(0.5)
    assert PDF_TEXT not in await page.text_content("#preview-body")
    assert await page.evaluate("document.querySelectorAll('#preview-body img').length") == 0
    assert await page.title() != "1"
    assert "zip archive" in await page.text_content("#preview-note")
    await check(page, "preview-zip", name)
    await click(page, "#preview-close")
    await wait_for(page, "!document.getElementById('preview').open", what="the preview to close")

    # Preview a PDF: the text porter extracts, as text.
    await click(page, by_label("Preview report.pdf"))
    await wait_for(page, f"document.getElementById('preview-body').textContent.includes({PDF_TEXT!r})",
                   what="the PDF's text in the preview")
    assert await page.evaluate("document.querySelectorAll('#preview-body script, #preview-body iframe').length") == 0
    await check(page, "preview-pdf", name)
    await click(page, "#preview-close")
    await wait_for(page, "!document.getElementById('preview').open", what="the preview to close")

    # Keep the image to the shelf volume.
    await click(page, by_label(f"Keep {image}"))
    await wait_for(page, "document.getElementById('keep').open", what="the keep dialog")
    await page.keyboard.insert_text("volume:shelf:kept.png")
    await check(page, "keep", name)
    await click(page, "#keep-go")
    await wait_for(page, "!document.getElementById('keep').open || document.getElementById('keep-message').textContent",
                   what="the keep to finish")
    assert await page.text_content("#keep-message") == ""
    assert (gateway.shelf / "kept.png").exists()

    listed = gateway.get_json("/v1/runs")["runs"][0]
    records = {f["path"].split("/")[-1]: f for f in listed["files"]}

    # Download one: a one-use link the browser streams; the key is in no URL.
    async with page.expect_download() as started:
        await click(page, by_label("Download report.pdf"))
    download = await started.value
    assert download.suggested_filename == "report.pdf"
    saved = Path(await download.path())
    assert hashlib.sha256(saved.read_bytes()).hexdigest() == records["report.pdf"]["sha256"]

    # Download all: a zip streamed by the gateway, every file's bytes exact.
    async with page.expect_download() as started:
        await click(page, '.run button[aria-label^="Download all 4 files"]')
    archive = Path(await (await started.value).path())
    with zipfile.ZipFile(io.BytesIO(archive.read_bytes())) as zipped:
        got = {info.filename: hashlib.sha256(zipped.read(info)).hexdigest() for info in zipped.infolist()}
    assert got == {f["path"]: f["sha256"] for f in listed["files"]}

    # The SHA-256 on demand, still open when the list changes live.
    await click(page, 'summary[aria-label="Details of report.pdf"]')
    shown = await page.evaluate(
        "[...document.querySelector('details[data-key$=\"report.pdf\"]').querySelectorAll('dd')]"
        ".map(d => d.textContent)"
    )
    assert records["report.pdf"]["sha256"] in shown, shown

    # Remove the archive: asked twice, gone here and live on the second tab.
    gz = next(n for n in names if n.endswith(".gz"))
    await click(page, by_label(f"Remove {gz}"))
    await click(page, f'button[aria-label^="Really remove {gz}"]')
    await wait_rows(page, 3, "the removed row to go")
    await wait_rows(other, 3, "the removed row to go on the second tab")
    assert gz not in await rows(other)
    await wait_for(other, "document.getElementById('announcer').textContent.includes('was removed')",
                   what="the removal to be announced on the second tab")
    assert await page.evaluate("document.querySelector('details[data-key$=\"report.pdf\"]').open")
    await check(page, "removed", name)
    assert await other.evaluate("document.body.dataset.stream") == "live"

    assert page_problems(page) == []
    assert page_problems(other) == []
    assert all(gateway.key not in url for url in await page.evaluate("performance.getEntries().map(e => e.name)"))


@pytest.mark.anyio
async def test_the_time_filter_follows_the_clock_of_the_person_looking(
    gateway: Gateway, browser: Browser
) -> None:
    page = await signed_in(browser, gateway, DESKTOP, "light")
    with pdf_server() as base:
        await captures(gateway, base)
    await wait_rows(page, 4, "four captures, live")

    await set_filter(page, "filter-time", "3600000")
    assert len(await rows(page)) == 4, "captured a moment ago is within the last hour"
    # Two hours on (the browser's clock only; the gateway is not touched):
    # nothing was captured in the last hour, all of it in the last day.
    later = datetime.datetime.now(tz=datetime.UTC) + datetime.timedelta(hours=2)
    await page.clock.set_fixed_time(later)
    await set_filter(page, "filter-time", "")
    await set_filter(page, "filter-time", "3600000")
    await wait_for(page, "document.querySelectorAll('table.files tbody tr').length === 0",
                   what="the last hour to hold nothing two hours later")
    await check(page, "filtered-by-time", "desktop-light")
    await set_filter(page, "filter-time", "86400000")
    assert len(await rows(page)) == 4
    assert page_problems(page) == []


@pytest.mark.anyio
async def test_the_page_reconnects_after_the_gateway_restarts_and_shows_what_came_meanwhile(
    gateway: Gateway, browser: Browser
) -> None:
    page = await signed_in(browser, gateway, DESKTOP, "light")
    await page.evaluate("window.sameLoad = true")
    gateway.stop()
    await wait_for(page, "document.body.dataset.stream === 'retrying'", what="the page to notice")
    assert "reconnecting" in await page.text_content("#status")
    await check(page, "reconnecting", "desktop-light")

    gateway.restart()
    with pdf_server() as base:
        await captures(gateway, base)
    await wait_for(page, "document.body.dataset.stream === 'live'", timeout=30, what="the page to reconnect")
    names = await wait_rows(page, 4, "the captures made while it was away")
    assert names[0] == "report.pdf", names
    assert await page.evaluate("window.sameLoad") is True, "it reconnected without a reload"
    assert page_problems(page) == []


@pytest.mark.anyio
async def test_a_file_removed_while_the_page_was_away_is_announced_when_it_is_back(
    gateway: Gateway, browser: Browser
) -> None:
    page = await signed_in(browser, gateway, DESKTOP, "light")
    with pdf_server() as base:
        await captures(gateway, base)
    await wait_rows(page, 4, "four captures, live")

    # The page loses its live stream and cannot open another (as on a network
    # that drops it) while the archive is removed elsewhere: it learns of the
    # removal only from the list it fetches when it is back.
    await page.route("**/v1/events", lambda route: route.abort())
    gateway.restart()
    await wait_for(page, "document.body.dataset.stream === 'retrying'", what="the page to notice")
    run = gateway.get_json("/v1/runs")["runs"][0]
    gone = next(f for f in run["files"] if f["path"].endswith(".gz"))
    request = urllib.request.Request(
        f"{gateway.url}/v1/runs/{run['id']}/file",
        data=json.dumps({"op": "rm", "path": gone.get("ref") or f"volume:inbox:{gone['path']}"}).encode(),
        headers={"Authorization": f"Bearer {gateway.key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert not json.load(answer).get("isError"), "the removal through the API"
    await page.unroute("**/v1/events")

    await wait_for(page, "document.body.dataset.stream === 'live'", timeout=30, what="the page to reconnect")
    names = await wait_rows(page, 3, "the removed row to go")
    assert gone["path"].split("/")[-1] not in names
    await wait_for(page, "document.getElementById('announcer').textContent.includes('was removed')",
                   what="the removal to be announced, as a live removal is")
    assert page_problems(page) == []


@pytest.mark.anyio
async def test_a_list_asked_for_before_a_live_capture_does_not_take_that_capture_away(
    gateway: Gateway, browser: Browser
) -> None:
    page = await signed_in(browser, gateway, DESKTOP, "light")
    # The list the page asks for when it first hears of a run is held back
    # until the run's next capture has reached the page live, as a slow
    # answer on a busy gateway would be.
    asked, release = anyio.Event(), anyio.Event()

    async def held(route) -> None:  # noqa: ANN001
        answer = await route.fetch()
        asked.set()
        await release.wait()
        await route.fulfill(response=answer)

    await page.route("**/v1/runs", held)
    headers = {"Authorization": f"Bearer {gateway.key}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with Client(streamable_http_client(gateway.url + "/mcp", http_client=http),
                          client_info=CLIENT) as client:
            first = await client.call_tool("mcp__everything__get-tiny-image", {})
            assert not first.is_error, first.content
            with anyio.fail_after(20):
                await asked.wait()
            with pdf_server() as base:
                second = await client.call_tool("WebFetch", {"url": f"{base}/report.pdf"})
            assert not second.is_error, second.content
    await wait_rows(page, 2, "both captures, live")
    release.set()
    await wait_for(page, "document.body.dataset.stream === 'live'", what="the page to stay live")
    await anyio.sleep(1.0)  # the held list is read in this time
    assert sorted(await rows(page)) == sorted(["report.pdf", "get-tiny-image.png"]), await rows(page)
    assert "was removed" not in await page.text_content("#announcer")
    assert page_problems(page) == []


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["initialize", "sessionless"])
async def test_a_run_is_named_by_its_client_cleaned_with_or_without_a_session(gateway: Gateway, mode: str) -> None:
    headers = {"Authorization": f"Bearer {gateway.key}"}
    named = Implementation(name="agent-x", title="Agent\u202e X\x1b[31m", version="1")
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with Client(streamable_http_client(gateway.url + "/mcp", http_client=http),
                          client_info=named, mode=mode) as client:
            result = await client.call_tool("mcp__everything__get-tiny-image", {})
            assert not result.is_error, result.content
    runs = gateway.get_json("/v1/runs")["runs"]
    assert [run.get("client") for run in runs if run["file_count"]] == ["Agent X[31m"], runs
