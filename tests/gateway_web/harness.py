"""What the page tests share: a real `porter gateway serve` on loopback, a
page in Debian's Chromium driven by Playwright at a given viewport and colour
scheme, what a person sees of an element, screenshots for a person, and
axe-core's verdict."""

from __future__ import annotations

import json
import os
import queue
import re
import secrets
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from playwright.async_api import Browser, BrowserContext, ConsoleMessage, Page
from playwright.async_api import TimeoutError as PlaywrightTimeout

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import hostile_pdf  # noqa: E402  (the hand-written PDFs' writer)
import processes  # noqa: E402  (tests/processes.py)
import timing  # noqa: E402  (tests/timing.py)

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
# The whole line: stderr is unbuffered, so a read may end mid-address.
LISTENING = re.compile(r"listening on (http://\S+) \(MCP at")
AXE = HERE / "node_modules" / "axe-core" / "axe.min.js"

# (name, width, height, mobile)
DESKTOP = ("desktop", 1280, 800, False)
PHONE = ("phone", 390, 844, True)
VIEWPORTS = [DESKTOP, PHONE]
SCHEMES = ["light", "dark"]


def on_each_screen(test: Any) -> Any:
    """Marks an anyio test to run on each viewport (its `viewport`
    argument) in each colour scheme (its `scheme`)."""
    test = pytest.mark.parametrize("viewport", VIEWPORTS, ids=[v[0] for v in VIEWPORTS])(test)
    test = pytest.mark.parametrize("scheme", SCHEMES)(test)
    return pytest.mark.anyio(test)


def screenshot_dir() -> Path:
    """Where screenshots go for a person to look at: target/gateway_web."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    folder = target / "gateway_web"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


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
    """`porter gateway serve --transport http` on a loopback port, with a
    user key (a profile that may keep into the `shelf` volume and fetch from
    loopback), a key of another tenant that has no runs, and an admin key."""

    def __init__(self, workdir: Path, config_extra: dict | None = None) -> None:
        self.key = "web-" + secrets.token_hex(16)
        self.stranger_key = "other-" + secrets.token_hex(16)
        self.admin_key = "admin-" + secrets.token_hex(16)
        self.shelf = workdir / "shelf"
        self.shelf.mkdir()
        config = workdir / "porter.yaml"
        self.config = config
        self.data = workdir / "data"
        settings = {
            "data_dir": str(workdir / "data"),
            "mcp_servers": {"everything": {"command": everything_bin()}},
            "volumes": {"shelf": {"path": str(self.shelf), "mode": "rw", "tenant": "acme"}},
            "profiles": {"keeper": {"grants": ["File", "Write", "Read", "HTTP"], "volumes": ["shelf"]}},
            "http": {"private_hosts": ["127.0.0.1"]},
            "api_keys": [
                {"name": "alice", "key": self.key, "tenant": "acme", "role": "user", "profile": "keeper"},
                {"name": "bob", "key": self.stranger_key, "tenant": "other", "role": "user"},
                {"name": "root", "key": self.admin_key, "tenant": "ops", "role": "admin"},
            ],
            **(config_extra or {}),
        }
        config.write_text(json.dumps(settings))  # JSON is YAML
        self.workdir = workdir
        self.starts = 0
        self._start("127.0.0.1:0")

    def _start(self, listen: str) -> None:
        with timing.starting("porter gateway (http)"):
            self._start_and_wait(listen)

    def _start_and_wait(self, listen: str) -> None:
        self.starts += 1
        self.stderr_path = self.workdir / f"gateway-{self.starts}.stderr"
        self.process = subprocess.Popen(
            [str(porter_bin()), "gateway", "serve", "--transport", "http",
             "--listen", listen, "--config", str(self.config)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "PORTER_DATA_DIR": str(self.data), "RUST_LOG": "info"},
        )
        lines: queue.Queue[str] = queue.Queue()
        process, stderr_path = self.process, self.stderr_path

        def pump() -> None:
            assert process.stderr is not None
            with open(stderr_path, "w") as log:
                for raw in process.stderr:
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
                self.start_line = line.strip()
                break

    def restart(self) -> None:
        """Stops the gateway and starts it again on the same address and data,
        as an upgrade or a crash and restart would."""
        address = self.url.removeprefix("http://")
        self.stop()
        self._start(address)

    def get_json(self, path: str, key: str | None = None) -> dict:
        request = urllib.request.Request(self.url + path, headers={"Authorization": f"Bearer {key or self.key}"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.load(answer)

    def get_raw(self, path: str, key: str | None = None) -> bytes:
        request = urllib.request.Request(self.url + path, headers={"Authorization": f"Bearer {key or self.key}"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.read()

    def stop(self) -> None:
        processes.stop(self.process)


class Problems:
    """Script errors and anything the page's CSP blocked, as the page goes."""

    def __init__(self, page: Page) -> None:
        self.seen: list[str] = []
        page.on("pageerror", lambda error: self.seen.append(f"script error: {error}"))
        page.on("console", self._console)

    def _console(self, message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text:
            self.seen.append(f"CSP: {message.text}")


async def open_page(browser: Browser, url: str, viewport: tuple, scheme: str,
                    context: BrowserContext | None = None) -> Page:
    """A page at `viewport` in `scheme`, navigated to `url` and loaded: in a
    fresh browser context (a person's own profile), or as another tab of
    `context`. Downloads are allowed; `page.problems` collects script errors
    and CSP refusals."""
    _, width, height, mobile = viewport
    if context is None:
        context = await browser.new_context(
            viewport={"width": width, "height": height},
            device_scale_factor=1,
            is_mobile=mobile,
            has_touch=mobile,
            color_scheme=scheme,
            accept_downloads=True,
        )
    page = await context.new_page()
    page.problems = Problems(page)  # type: ignore[attr-defined]
    await page.goto(url, wait_until="load")
    return page


# What a person sees of an element: it takes up room on screen and nothing
# hides it (display, visibility, opacity, a hidden ancestor).
SEEN_JS = """(selector) => {
  const node = document.querySelector(selector);
  if (!node) return null;
  const box = node.getBoundingClientRect();
  return {
    visible: node.checkVisibility({opacityProperty: true, visibilityProperty: true})
             && box.width > 0 && box.height > 0,
    top: box.top, height: box.height, width: box.width,
  };
}"""


async def seen(page: Page, selector: str) -> dict | None:
    return await page.evaluate(SEEN_JS, selector)


async def shows(page: Page, selector: str) -> bool:
    found = await seen(page, selector)
    return bool(found and found["visible"])


async def wait_for(page: Page, expression: str, timeout: float = 20.0, what: str = "") -> Any:
    """Waits until the JavaScript `expression` is truthy in the page; its value."""
    try:
        # As a function, so Playwright compiles it through the DevTools
        # protocol: the page's CSP forbids `eval` of a string.
        handle = await page.wait_for_function(f"() => ({expression})", timeout=timeout * 1000)
    except PlaywrightTimeout:
        last = await page.evaluate(f"(() => {{ try {{ return {expression} }} catch (e) {{ return String(e) }} }})()")
        raise AssertionError(f"timed out waiting for {what or expression} (last value {last!r})") from None
    return await handle.json_value()


async def screenshot(page: Page, name: str) -> Path:
    """Writes what the page shows now to target/gateway_web/NAME.png."""
    path = screenshot_dir() / f"{name}.png"
    await page.bring_to_front()
    await page.screenshot(path=path, animations="disabled", caret="hide")
    return path


async def axe_violations(page: Page) -> list[dict[str, Any]]:
    """axe-core's WCAG 2.1 A/AA and best-practice violations on the page as it is now."""
    if not AXE.exists():
        pytest.fail(f"axe-core is not installed: npm ci --prefix {HERE} ({AXE})")
    if not await page.evaluate("typeof window.axe === 'object'"):
        # Run through the DevTools protocol, which the page's CSP (no inline
        # scripts, no eval) does not apply to; a <script> tag would be refused.
        devtools = await page.context.new_cdp_session(page)
        await devtools.send("Runtime.evaluate", {"expression": AXE.read_text()})
        await devtools.detach()
    return await page.evaluate(
        "axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', "
        "'best-practice']}, resultTypes: ['violations']}).then(r => r.violations.map(v => ({id: v.id, "
        "help: v.help, nodes: v.nodes.map(n => n.target.join(' ') + ': ' + n.failureSummary)})))"
    )


def page_problems(page: Page) -> list[str]:
    """Script errors and anything the page's CSP blocked, so far."""
    return list(page.problems.seen)  # type: ignore[attr-defined]


async def enter_key(page: Page, key: str) -> None:
    """Types the key into the page's form, as a person would, and submits it."""
    await page.locator("#login").wait_for(state="visible")
    await page.focus("#key")
    await page.locator("#key").select_text()
    await page.keyboard.insert_text(key)
    await page.keyboard.press("Enter")


async def sign_in(page: Page, key: str) -> None:
    """Enters `key` and waits until the page's live stream runs."""
    await enter_key(page, key)
    await wait_for(page, "document.body.dataset.stream === 'live'", what="the live stream")


async def click(page: Page, selector: str) -> None:
    """Clicks an element with the mouse, as a person does: Playwright waits
    until it is visible, steady and enabled, scrolls it into view, and
    refuses when something else would receive the click."""
    await page.click(selector, timeout=10_000)


async def press(page: Page, key: str) -> None:
    """Presses and releases one key in the page (brought to the front, as typing needs)."""
    await page.bring_to_front()
    await page.keyboard.press(key)


def minimal_pdf(text: str) -> bytes:
    """A one-page PDF showing `text` in Helvetica, with a correct xref table."""
    stream = f"BT /F1 24 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    return hostile_pdf.pdf(objects)


async def small_targets(page: Page) -> list[str]:
    """Controls on screen smaller than 44×44 px (WCAG 2.5.5's size for touch)."""
    return await page.evaluate(
        """[...document.querySelectorAll('button, a[href], input, select, summary')]
          .filter(node => node.checkVisibility())
          .map(node => [node, node.getBoundingClientRect()])
          .filter(([node, box]) => box.right > 0 && box.width > 0 && (box.width < 44 || box.height < 44))
          .map(([node, box]) => `${node.tagName} ${node.id || node.getAttribute('aria-label') || node.textContent}`
                                + ` ${Math.round(box.width)}x${Math.round(box.height)}`)"""
    )


def chromium_path() -> str:
    """Debian's Chromium (`$CHROMIUM` to use another build), which Playwright drives."""
    binary = os.environ.get("CHROMIUM", "chromium")
    found = shutil.which(binary)
    if found is None:
        pytest.fail(f"{binary} is not installed: apt-get install chromium (tests/gateway_web/run does)")
    return found
