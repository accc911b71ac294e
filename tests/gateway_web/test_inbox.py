"""The inbox page as a person uses it, against a real gateway with captures
from server-everything (through the Python mcp SDK) and WebFetch of a
loopback PDF: the runs read as titles with counts, sizes and expiry; files
are a table newest first; filters narrow it; previews show porter's scaled
image and extracted text; keep, remove (live on a second tab), download one
and all (streamed by the browser, sha256 checked); on a desktop and a phone,
light and dark, with axe-core clean in every state and a screenshot of each
written to target/gateway_web/."""

from __future__ import annotations

import base64
import hashlib
import http.server
import io
import threading
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from cdp import Chromium, Session
from harness import (
    SCHEMES,
    VIEWPORTS,
    Gateway,
    axe_violations,
    click,
    enter_key,
    minimal_pdf,
    open_page,
    page_problems,
    press,
    screenshot,
    small_targets,
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


def rows(page: Session) -> list[str]:
    """The file names in the table, top to bottom, as shown."""
    return page.evaluate(
        "[...document.querySelectorAll('table.files tbody tr')].filter(r => r.checkVisibility())"
        ".map(r => r.querySelector('td.name button').textContent)"
    )


def wait_rows(page: Session, count: int, what: str) -> list[str]:
    try:
        return page.wait_for(
            f"(() => {{ const r = [...document.querySelectorAll('table.files tbody tr')]"
            f".map(r => r.querySelector('td.name button').textContent); return r.length === {count} ? r : null }})()",
            what=what,
        )
    except AssertionError as timed_out:
        shown = page.evaluate("document.getElementById('runs').textContent")
        raise AssertionError(f"{timed_out}; the page shows {shown!r}") from None


def set_filter(page: Session, field: str, value: str) -> None:
    page.evaluate(f"{{ const f = document.getElementById({field!r}); f.value = {value!r};"
                  " f.dispatchEvent(new Event('input')); }")


def by_label(label: str) -> str:
    return f'button[aria-label="{label}"]'


def check(page: Session, state: str, name: str) -> None:
    """A screenshot of this state for a person, and axe-core's verdict on it."""
    screenshot(page, f"{state}-{name}")
    violations = axe_violations(page)
    assert violations == [], (state, violations)


def wait_download(folder: Path, suffix: str, timeout: float = 20) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = [p for p in folder.iterdir() if p.name.endswith(suffix) and not p.name.endswith(".crdownload")]
        if done:
            return done[0]
        time.sleep(0.1)
    raise AssertionError(f"no download ending in {suffix}: {sorted(p.name for p in folder.iterdir())}")


@pytest.mark.anyio
@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("viewport", VIEWPORTS, ids=[v[0] for v in VIEWPORTS])
async def test_a_person_finds_previews_keeps_downloads_and_removes_captures(
    gateway: Gateway, chromium: Chromium, tmp_path: Path, viewport: tuple, scheme: str
) -> None:
    name = f"{viewport[0]}-{scheme}"
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    browser = chromium.browser()
    browser.send("Browser.setDownloadBehavior", behavior="allow", downloadPath=str(downloads))

    page = open_page(chromium, gateway.url + "/", viewport, scheme)
    enter_key(page, gateway.key)
    page.wait_for("document.body.dataset.stream === 'live'", what="the live stream")
    other = open_page(chromium, gateway.url + "/", viewport, scheme, new_tab=True)
    other.wait_for("document.body.dataset.stream === 'live'", what="the second tab, signed in from session storage") \
        if other.evaluate("sessionStorage.getItem('porter.apiKey') !== null") else enter_key(other, gateway.key)
    other.wait_for("document.body.dataset.stream === 'live'", what="the second tab's live stream")
    page.evaluate("window.sameLoad = true")

    payload = bytes(range(256)) * 24  # 6 KiB, so its data URI is 8 KiB
    data_uri = "data:application/octet-stream;base64," + base64.b64encode(payload).decode()
    headers = {"Authorization": f"Bearer {gateway.key}"}
    with pdf_server() as base:
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            async with Client(streamable_http_client(gateway.url + "/mcp", http_client=http)) as client:
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
                names = await anyio.to_thread.run_sync(lambda: wait_rows(page, 4, "four captures, live"))

                # Newest first; new rows are highlighted and announced, then the highlight fades.
                assert names[0] == "report.pdf", names
                assert names[-1].endswith(".png"), names
                image = names[-1]
                assert page.evaluate("document.querySelectorAll('tr.fresh').length") >= 1
                page.wait_for("document.getElementById('announcer').textContent.startsWith('New file')",
                              what="the new file to be announced")
                check(page, "files-fresh", name)
                page.wait_for("document.querySelectorAll('tr.fresh').length === 0", timeout=15,
                              what="the highlight to fade")
                assert page.evaluate("window.sameLoad") is True

                # The run reads as a title, with its count, size, state and expiry.
                heading = page.evaluate("document.querySelector('.run h3').textContent")
                assert heading.startswith("get-tiny-image · "), heading
                meta = page.evaluate("document.querySelector('.run .meta').textContent")
                assert meta.startswith("4 files, "), meta
                assert "going" in meta and "after the run ends" in meta, meta
                check(page, "files", name)
                if viewport[3]:
                    assert small_targets(page) == []

                # GET /v1/runs does not repeat the 8 KiB data URI.
                listing = gateway.get_raw("/v1/runs")
                assert len(listing) < 4096, len(listing)
                assert b"characters in all" in listing

                # Filters: by text, by kind.
                page.evaluate("document.getElementById('filter-text').focus()")
                page.send("Input.insertText", text="pdf")
                page.wait_for("document.querySelectorAll('table.files tbody tr').length === 1", what="the text filter")
                assert rows(page) == ["report.pdf"]
                check(page, "filtered", name)
                set_filter(page, "filter-text", "")
                set_filter(page, "filter-kind", "image")
                assert rows(page) == [image]
                set_filter(page, "filter-kind", "")
                assert len(rows(page)) == 4

                # Preview an image: porter's scaled PNG, through a blob: URL.
                click(page, by_label(f"Preview {image}"))
                page.wait_for("(() => { const i = document.querySelector('#preview-body img');"
                              " return i && i.complete && i.naturalWidth > 0 })()", what="the image preview")
                assert page.evaluate("document.querySelector('#preview-body img').src.startsWith('blob:')")
                assert page.evaluate("document.getElementById('preview').open")
                check(page, "preview-image", name)
                press(page, "Escape", "Escape", 27)
                page.wait_for("!document.getElementById('preview').open", what="Escape to close the preview")

                # From the keyboard: Enter on a name opens its preview, Escape closes it.
                page.evaluate(f"document.querySelector({by_label('Preview report.pdf')!r}).focus()")
                press(page, "Enter", "Enter", 13)
                page.wait_for("document.getElementById('preview').open", what="Enter to open the preview")
                press(page, "Escape", "Escape", 27)
                page.wait_for("!document.getElementById('preview').open", what="Escape to close it")

                # Preview a PDF: the text porter extracts, as text.
                # Preview an archive: its listing, names as text, never markup.
                click(page, by_label("Preview bundle.zip"))
                page.wait_for("document.getElementById('preview-body').textContent.includes('notes/readme.txt')",
                              what="the zip's listing in the preview")
                assert HOSTILE in page.evaluate("document.getElementById('preview-body').textContent")
                # Nothing of the PDF previewed just before (a slower answer) turns up here.
                time.sleep(0.5)
                assert PDF_TEXT not in page.evaluate("document.getElementById('preview-body').textContent")
                assert page.evaluate("document.querySelectorAll('#preview-body img').length") == 0
                assert page.evaluate("document.title") != "1"
                assert "zip archive" in page.evaluate("document.getElementById('preview-note').textContent")
                check(page, "preview-zip", name)
                click(page, "#preview-close")
                page.wait_for("!document.getElementById('preview').open", what="the preview to close")

                click(page, by_label("Preview report.pdf"))
                page.wait_for(f"document.getElementById('preview-body').textContent.includes({PDF_TEXT!r})",
                              what="the PDF's text in the preview")
                assert page.evaluate("document.querySelectorAll('#preview-body script, #preview-body iframe').length") == 0
                check(page, "preview-pdf", name)
                click(page, "#preview-close")
                page.wait_for("!document.getElementById('preview').open", what="the preview to close")

                # Keep the image to the shelf volume.
                click(page, by_label(f"Keep {image}"))
                page.wait_for("document.getElementById('keep').open", what="the keep dialog")
                page.send("Input.insertText", text="volume:shelf:kept.png")
                check(page, "keep", name)
                click(page, "#keep-go")
                page.wait_for("!document.getElementById('keep').open || document.getElementById('keep-message').textContent",
                              what="the keep to finish")
                assert page.evaluate("document.getElementById('keep-message').textContent") == ""
                assert (gateway.shelf / "kept.png").exists()

                listed = gateway.get_json("/v1/runs")["runs"][0]
                records = {f["path"].split("/")[-1]: f for f in listed["files"]}

                # Download one: a one-use link the browser streams; the key is in no URL.
                click(page, by_label("Download report.pdf"))
                saved = wait_download(downloads, "report.pdf")
                assert hashlib.sha256(saved.read_bytes()).hexdigest() == records["report.pdf"]["sha256"]

                # Download all: a zip streamed by the gateway, every file's bytes exact.
                click(page, '.run button[aria-label^="Download all 4 files"]')
                archive = wait_download(downloads, ".zip")
                with zipfile.ZipFile(io.BytesIO(archive.read_bytes())) as zipped:
                    got = {info.filename: hashlib.sha256(zipped.read(info)).hexdigest() for info in zipped.infolist()}
                assert got == {f["path"]: f["sha256"] for f in listed["files"]}

                # The SHA-256 on demand, still open when the list changes live.
                click(page, 'summary[aria-label="Details of report.pdf"]')
                shown = page.evaluate(
                    "[...document.querySelector('details[data-key$=\"report.pdf\"]').querySelectorAll('dd')]"
                    ".map(d => d.textContent)"
                )
                assert records["report.pdf"]["sha256"] in shown, shown

                # Remove the archive: asked twice, gone here and live on the second tab.
                gz = next(n for n in names if n.endswith(".gz"))
                click(page, by_label(f"Remove {gz}"))
                click(page, f'button[aria-label^="Really remove {gz}"]')
                wait_rows(page, 3, "the removed row to go")
                wait_rows(other, 3, "the removed row to go on the second tab")
                assert gz not in rows(other)
                other.wait_for("document.getElementById('announcer').textContent.includes('was removed')",
                               what="the removal to be announced on the second tab")
                assert page.evaluate("document.querySelector('details[data-key$=\"report.pdf\"]').open")
                check(page, "removed", name)
                assert other.evaluate("document.body.dataset.stream") == "live"

    assert page_problems(page) == []
    assert all(gateway.key not in url for url in page.evaluate("performance.getEntries().map(e => e.name)"))
