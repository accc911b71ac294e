"""The gateway's web page in headless Chromium: it asks for the API key,
refuses a wrong one, lists the key's runs, shows a capture made through the
gateway's MCP endpoint live (without a reload), and downloads the file with
the key — under a CSP that blocked nothing the page needed."""

from __future__ import annotations

import hashlib
import json
import os
import queue
import re
import secrets
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from cdp import Chromium, Session

REPO = Path(__file__).resolve().parents[2]
LISTENING = re.compile(r"listening on (http://\S+)")
TOOL = "mcp__everything__get-tiny-image"


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


def porter_bin() -> Path:
    """`$PORTER_BIN`, else the debug build in the target directory."""
    given = os.environ.get("PORTER_BIN")
    if given:
        return Path(given)
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    subprocess.run(["cargo", "build", "--locked", "-q", "-p", "porter"], cwd=REPO, check=True)
    return target / "debug" / "porter"


def everything_bin() -> str:
    """`$EVERYTHING_BIN`, else the upstream installed from tests/gateway's lockfile."""
    given = os.environ.get("EVERYTHING_BIN")
    default = REPO / "tests" / "gateway" / "node_modules" / ".bin" / "mcp-server-everything"
    if not given and not default.exists():
        pytest.fail(f"no upstream MCP server: set EVERYTHING_BIN or run `npm ci --prefix tests/gateway` ({default})")
    return given or str(default)


class Gateway:
    """`porter gateway serve --transport http` on a loopback port, with one key."""

    def __init__(self, workdir: Path) -> None:
        self.key = "web-" + secrets.token_hex(16)
        config = workdir / "porter.yaml"
        config.write_text(
            json.dumps(  # JSON is YAML
                {
                    "data_dir": str(workdir / "data"),
                    "mcp_servers": {"everything": {"command": everything_bin()}},
                    "api_keys": [{"name": "alice", "key": self.key, "tenant": "acme", "role": "user"}],
                }
            )
        )
        self.stderr_path = workdir / "gateway.stderr"
        self.process = subprocess.Popen(
            [str(porter_bin()), "gateway", "serve", "--transport", "http",
             "--listen", "127.0.0.1:0", "--config", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "PORTER_DATA_DIR": str(workdir / "data"), "RUST_LOG": "info"},
        )
        lines: queue.Queue[str] = queue.Queue()

        def pump() -> None:
            assert self.process.stderr is not None
            with open(self.stderr_path, "w") as log:
                for raw in self.process.stderr:
                    line = raw.decode(errors="replace")
                    log.write(line)
                    log.flush()
                    lines.put(line)

        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + 60
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"the gateway never said where it listens; see {self.stderr_path}") from None
            found = LISTENING.search(line)
            if found:
                self.url = found.group(1).rstrip("/")
                break

    def get_json(self, path: str) -> dict:
        request = urllib.request.Request(self.url + path, headers={"Authorization": f"Bearer {self.key}"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.load(answer)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[Gateway]:
    served = Gateway(tmp_path)
    yield served
    served.stop()


@pytest.fixture
def chromium(tmp_path: Path) -> Iterator[Chromium]:
    browser = Chromium(tmp_path)
    yield browser
    browser.close()


def enter_key(page: Session, key: str) -> None:
    """Types the key into the page's form, as a person would, and submits it."""
    page.wait_for("!document.getElementById('login').hidden", what="the key form")
    page.evaluate("document.getElementById('key').focus()")
    page.send("Input.insertText", text=key)
    page.evaluate("document.getElementById('use-key').click()")


def capture_lines(page: Session) -> list[str]:
    return page.evaluate("[...document.querySelectorAll('.capture .line')].map(e => e.textContent)")


@pytest.mark.anyio
async def test_a_capture_appears_live_on_the_page_and_downloads_with_the_key(
    gateway: Gateway, chromium: Chromium, tmp_path: Path
) -> None:
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    browser = chromium.browser()
    browser.send("Browser.setDownloadBehavior", behavior="allow", downloadPath=str(downloads))
    page = chromium.page()
    page.send("Page.enable")
    page.send("Runtime.enable")
    page.send("Log.enable")
    page.send("Page.navigate", url=gateway.url + "/")
    page.wait_for("document.readyState === 'complete'", what="the page to load")

    # A wrong key is refused and asked for again.
    enter_key(page, "not-the-key")
    page.wait_for(
        "document.getElementById('login-message').textContent.includes('not accepted')",
        what="the wrong key to be refused",
    )
    assert page.evaluate("sessionStorage.getItem('porter.apiKey')") is None

    enter_key(page, gateway.key)
    page.wait_for("document.body.dataset.stream === 'live'", what="the live stream")
    assert capture_lines(page) == []
    # Marks this page load: a reload would lose it.
    page.evaluate("window.sameLoad = true")

    headers = {"Authorization": f"Bearer {gateway.key}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with Client(streamable_http_client(gateway.url + "/mcp", http_client=http)) as client:
            result = await client.call_tool(TOOL, {})
            text = " ".join(getattr(block, "text", "") for block in result.content)
            assert "[file: volume:inbox:" in text, text
            lines = await anyio.to_thread.run_sync(
                lambda: page.wait_for(
                    "(() => { const l = [...document.querySelectorAll('.capture .line')]"
                    ".map(e => e.textContent); return l.length ? l : null })()",
                    what="the capture on the page",
                )
            )

    assert page.evaluate("window.sameLoad") is True, "the page reloaded instead of updating live"
    assert len(lines) == 1, lines
    line = lines[0]
    assert re.fullmatch(
        r"⇩ volume:inbox:\S+ · image/png · [0-9.]+ (bytes|KiB) · from mcp:everything/get-tiny-image", line
    ), line
    assert line.split(" · ")[0].removeprefix("⇩ ") in text, (line, text)

    # The download link fetches with the key and saves the exact bytes.
    listed = gateway.get_json("/v1/runs")["runs"]
    record = next(f for run in listed for f in run["files"])
    page.evaluate("document.querySelector('.capture a.download').click()")
    saved = downloads / record["path"].split("/")[-1]
    deadline = time.monotonic() + 20
    while not saved.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert saved.exists(), sorted(p.name for p in downloads.iterdir())
    assert hashlib.sha256(saved.read_bytes()).hexdigest() == record["sha256"]

    # Nothing was blocked by the page's CSP and no script failed.
    page.evaluate("1")  # collects the events sent meanwhile
    problems = [
        event
        for event in page.events
        if event["method"] == "Runtime.exceptionThrown"
        or (
            event["method"] == "Log.entryAdded"
            and "Content Security Policy" in event["params"]["entry"].get("text", "")
        )
    ]
    assert problems == [], problems
