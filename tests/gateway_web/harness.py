"""What the page tests share: a real `porter gateway serve` on loopback, a
headless Chromium page at a given viewport and colour scheme, what a person
sees of an element, screenshots for a person, and axe-core's verdict."""

from __future__ import annotations

import base64
import json
import os
import queue
import re
import secrets
import subprocess
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from cdp import Chromium, Session

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
LISTENING = re.compile(r"listening on (http://\S+)")
AXE = HERE / "node_modules" / "axe-core" / "axe.min.js"

# (name, width, height, mobile)
DESKTOP = ("desktop", 1280, 800, False)
PHONE = ("phone", 390, 844, True)
VIEWPORTS = [DESKTOP, PHONE]
SCHEMES = ["light", "dark"]


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
                self.start_line = line.strip()
                break

    def get_json(self, path: str, key: str | None = None) -> dict:
        request = urllib.request.Request(self.url + path, headers={"Authorization": f"Bearer {key or self.key}"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.load(answer)

    def get_raw(self, path: str, key: str | None = None) -> bytes:
        request = urllib.request.Request(self.url + path, headers={"Authorization": f"Bearer {key or self.key}"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.read()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def open_page(chromium: Chromium, url: str, viewport: tuple, scheme: str, *, new_tab: bool = False) -> Session:
    """A page (the first tab, or a new one) at `viewport` in `scheme`, navigated to `url` and loaded."""
    _, width, height, mobile = viewport
    page = chromium.new_page() if new_tab else chromium.page()
    page.send("Page.enable")
    page.send("Runtime.enable")
    page.send("Log.enable")
    page.send("Emulation.setDeviceMetricsOverride", width=width, height=height,
              deviceScaleFactor=1, mobile=mobile)
    if mobile:
        page.send("Emulation.setTouchEmulationEnabled", enabled=True, maxTouchPoints=5)
    page.send("Emulation.setEmulatedMedia", features=[{"name": "prefers-color-scheme", "value": scheme}])
    page.send("Page.navigate", url=url)
    page.wait_for("document.readyState === 'complete'", what="the page to load")
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


def seen(page: Session, selector: str) -> dict | None:
    return page.evaluate(f"({SEEN_JS})({json.dumps(selector)})")


def shows(page: Session, selector: str) -> bool:
    found = seen(page, selector)
    return bool(found and found["visible"])


def screenshot(page: Session, name: str) -> Path:
    """Writes what the page shows now to target/gateway_web/NAME.png."""
    # A tab in the background draws no frames to capture.
    page.send("Page.bringToFront")
    shot = page.send("Page.captureScreenshot", format="png")
    path = screenshot_dir() / f"{name}.png"
    path.write_bytes(base64.b64decode(shot["data"]))
    return path


def axe_violations(page: Session) -> list[dict[str, Any]]:
    """axe-core's WCAG 2.1 A/AA and best-practice violations on the page as it is now."""
    if not AXE.exists():
        pytest.fail(f"axe-core is not installed: npm ci --prefix {HERE} ({AXE})")
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(AXE.read_text() + "\n;true")
    return page.evaluate(
        "axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', "
        "'best-practice']}, resultTypes: ['violations']}).then(r => r.violations.map(v => ({id: v.id, "
        "help: v.help, nodes: v.nodes.map(n => n.target.join(' ') + ': ' + n.failureSummary)})))"
    )


def page_problems(page: Session) -> list[dict]:
    """Script errors and anything the page's CSP blocked, so far."""
    page.evaluate("1")  # collects the events sent meanwhile
    return [
        event
        for event in page.events
        if event["method"] == "Runtime.exceptionThrown"
        or (
            event["method"] == "Log.entryAdded"
            and "Content Security Policy" in event["params"]["entry"].get("text", "")
        )
    ]


def enter_key(page: Session, key: str) -> None:
    """Types the key into the page's form, as a person would, and submits it."""
    page.wait_for(f"({SEEN_JS})('#login')?.visible", what="the key form on screen")
    page.evaluate("document.getElementById('key').focus(); document.getElementById('key').select()")
    page.send("Input.insertText", text=key)
    page.send("Input.dispatchKeyEvent", type="keyDown", key="Enter", code="Enter",
              windowsVirtualKeyCode=13, text="\r")
    page.send("Input.dispatchKeyEvent", type="keyUp", key="Enter", code="Enter", windowsVirtualKeyCode=13)


def click(page: Session, selector: str) -> None:
    """Clicks the middle of an element with the mouse, as a person does: it
    must be on screen and not covered by anything else."""
    point = page.evaluate(
        f"""(() => {{
          const node = document.querySelector({json.dumps(selector)});
          if (!node) return null;
          node.scrollIntoView({{block: 'center'}});
          const box = node.getBoundingClientRect();
          const x = box.left + box.width / 2, y = box.top + box.height / 2;
          const hit = document.elementFromPoint(x, y);
          return {{x, y, hit: hit === node || node.contains(hit)}};
        }})()"""
    )
    assert point, f"nothing matches {selector}"
    assert point["hit"], f"{selector} is covered by something else"
    for kind in ["mousePressed", "mouseReleased"]:
        page.send("Input.dispatchMouseEvent", type=kind, x=point["x"], y=point["y"], button="left", clickCount=1)


def press(page: Session, key: str, code: str, key_code: int) -> None:
    """Presses and releases one key in the page (brought to the front, as typing needs)."""
    page.send("Page.bringToFront")
    text = {"Enter": "\r"}.get(key)
    extra = {"text": text} if text else {}
    page.send("Input.dispatchKeyEvent", type="keyDown", key=key, code=code, windowsVirtualKeyCode=key_code, **extra)
    page.send("Input.dispatchKeyEvent", type="keyUp", key=key, code=code, windowsVirtualKeyCode=key_code)


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
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def small_targets(page: Session) -> list[str]:
    """Controls on screen smaller than 44×44 px (WCAG 2.5.5's size for touch)."""
    return page.evaluate(
        """[...document.querySelectorAll('button, a[href], input, select, summary')]
          .filter(node => node.checkVisibility())
          .map(node => [node, node.getBoundingClientRect()])
          .filter(([node, box]) => box.right > 0 && box.width > 0 && (box.width < 44 || box.height < 44))
          .map(([node, box]) => `${node.tagName} ${node.id || node.getAttribute('aria-label') || node.textContent}`
                                + ` ${Math.round(box.width)}x${Math.round(box.height)}`)"""
    )
