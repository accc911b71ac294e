"""Headless Chromium driven over the DevTools protocol: just enough to load a
page, type into it, click, read it back, and catch downloads."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import websocket

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--remote-debugging-port=0",
]


class CdpError(RuntimeError):
    """A DevTools command that answered an error, or a page script that threw."""


class Session:
    """One DevTools websocket (the browser's or a page's). Commands are sent
    one at a time; events that arrive meanwhile are kept in `events`."""

    def __init__(self, url: str) -> None:
        # Chromium refuses websocket clients that send an Origin it was not
        # told to allow; a client that sends none is let in.
        self.ws = websocket.create_connection(url, timeout=30, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        ident = self.next_id
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise CdpError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise CdpError(f"{expression!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 20.0, what: str = "") -> Any:
        """Evaluates `expression` until it is truthy; its value."""
        deadline = time.monotonic() + timeout
        value = None
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what or expression} (last value {value!r})")

    def close(self) -> None:
        self.ws.close()


class Chromium:
    """A headless Chromium with a fresh profile, killed on close."""

    def __init__(self, workdir: Path) -> None:
        binary = os.environ.get("CHROMIUM", "chromium")
        if shutil.which(binary) is None:
            raise RuntimeError(f"{binary} is not installed: apt-get install chromium (tests/gateway_web/run does)")
        self.profile = workdir / "chromium-profile"
        self.profile.mkdir(parents=True)
        self.log = open(workdir / "chromium.log", "wb")  # noqa: SIM115
        self.process = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self.port = self._port()

    def _port(self) -> int:
        """The DevTools port Chromium picked, from the file it writes in its profile."""
        marker = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.process.returncode}; see {self.log.name}")
            if marker.exists():
                lines = marker.read_text().splitlines()
                if lines and lines[0].isdigit():
                    return int(lines[0])
            time.sleep(0.05)
        raise RuntimeError("chromium did not open its DevTools port in 30 s")

    def _json(self, path: str) -> Any:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=10) as answer:
            return json.load(answer)

    def browser(self) -> Session:
        return Session(self._json("/json/version")["webSocketDebuggerUrl"])

    def page(self) -> Session:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            pages = [t for t in self._json("/json/list") if t.get("type") == "page"]
            if pages:
                return Session(pages[0]["webSocketDebuggerUrl"])
            time.sleep(0.1)
        raise RuntimeError("chromium shows no page")

    def new_page(self, url: str = "about:blank") -> Session:
        """A second tab, as a person opens one."""
        browser = self.browser()
        target = browser.send("Target.createTarget", url=url)["targetId"]
        browser.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            for found in self._json("/json/list"):
                if found.get("id") == target:
                    return Session(found["webSocketDebuggerUrl"])
            time.sleep(0.1)
        raise RuntimeError("chromium did not open the new tab")

    def close(self) -> None:
        self.process.kill()
        self.process.wait(timeout=10)
        self.log.close()
