"""A loopback web server for the HTTP and WebFetch tests (stdlib only).

It listens on 127.0.0.1 on a free port, in a thread, and serves the cases
the tests need: a page with images and file links, PDFs with and without
Content-Disposition, a PNG and a text labelled application/octet-stream,
redirects (same host, other host, to private addresses, in a loop), a body
over a small cap (with and without Content-Length), a slow body, and a page
that echoes its query (to prove the query's secret is masked). Every file is
built here in code, and `FILES` holds the exact bytes served so a test can
compare the inbox's copy with them.

`file_server` serves a folder's files instead, the same way.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from harness import pdf_like, png

PNG = png(4, 3, seed=7)
PDF = pdf_like(3000, seed=11)
NAMED_PDF = pdf_like(2000, seed=12)
TEXT = "plain words, sent as application/octet-stream\nline two\n"
BIG = b"\x00\x01BIN" * 50_000  # 250,000 bytes: over the tests' 100,000-byte cap
SLOW_SECONDS = 4
LONG_TEXT = "".join(f"line {n:06d} of a long text\n" for n in range(12_000))  # about 300 KiB
LONG_PAGE = "<html><body>" + "".join(f"<p>paragraph {n:06d} of a long page</p>" for n in range(12_000)) + "</body></html>"

PAGE = """<!doctype html>
<html><head><title>Fixture page</title><style>p {{ color: red }}</style></head>
<body>
<h1>Quarterly numbers</h1>
<p>The <a href="files/report.pdf">full report</a> and the
<a href="/files/named.pdf">named copy</a> and a <a href="/missing.pdf">missing one</a>.</p>
<p><img src="img/dot.png" alt="a dot"></p>
<p><img src="http://169.254.169.254/latest/meta.png" alt="metadata"></p>
<p>Read <a href="/about">about us</a>.</p>
</body></html>
"""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib name
        pass

    def send_body(self, status: int, body: bytes, content_type: str | None, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_HEAD(self) -> None:  # noqa: N802 - stdlib name
        self.do_GET()

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        parsed = urllib.parse.urlsplit(self.path)
        path, query = parsed.path, urllib.parse.parse_qs(parsed.query)
        port = self.server.server_address[1]
        if path == "/page.html":
            self.send_body(200, PAGE.format().encode(), "text/html; charset=utf-8")
        elif path == "/img/dot.png":
            self.send_body(200, PNG, "image/png")
        elif path in ("/files/report.pdf", "/secret.pdf"):
            self.send_body(200, PDF, "application/pdf")
        elif path in ("/files/named", "/files/named.pdf"):
            self.send_body(
                200, NAMED_PDF, "application/pdf", {"Content-Disposition": 'attachment; filename="Quarterly Report.pdf"'}
            )
        elif path == "/octet/picture":
            self.send_body(200, PNG, "application/octet-stream")
        elif path == "/octet/notes":
            self.send_body(200, TEXT.encode(), "application/octet-stream")
        elif path == "/hello.txt":
            self.send_body(200, b"hello from the same host\n", "text/plain; charset=utf-8")
        elif path == "/redirect/same":
            self.redirect("/hello.txt")
        elif path == "/redirect/to":
            self.redirect(query["target"][0])
        elif path == "/redirect/other":
            self.redirect(f"http://localhost:{port}/hello.txt")
        elif path == "/loop":
            self.redirect(f"/loop?n={int(query.get('n', ['0'])[0]) + 1}")
        elif path == "/big":
            self.send_body(200, BIG, "application/octet-stream")
        elif path == "/big/chunked":
            self.send_response(200)
            self.send_header("Content-Type", "application/zip")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            with contextlib.suppress(OSError):
                for start in range(0, len(BIG), 16384):
                    piece = BIG[start : start + 16384]
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                self.wfile.write(b"0\r\n\r\n")
        elif path == "/slow":
            self.send_response(200)
            self.send_header("Content-Type", "application/pdf")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            with contextlib.suppress(OSError):
                self.wfile.write(b"%PDF-1.7\n")
                self.wfile.flush()
                time.sleep(SLOW_SECONDS)
        elif path == "/long.txt":
            self.send_body(200, LONG_TEXT.encode(), "text/plain; charset=utf-8")
        elif path == "/long.html":
            self.send_body(200, LONG_PAGE.encode(), "text/html")
        elif path == "/echo":
            body = f"you sent {parsed.query}\n".encode()
            self.send_body(200, body, "text/plain", {"Set-Cookie": "session=cookie-value-123; HttpOnly", "X-Echo": parsed.query})
        else:
            self.send_body(404, b"not here\n", "text/plain")


class Files(SimpleHTTPRequestHandler):
    """A folder's files, as they are, without a log line per request."""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib name
        pass


def web_server() -> contextlib.AbstractContextManager[str]:
    """Serves the cases above until the block ends; yields the base URL."""
    return serving(Handler)


def file_server(root: Path) -> contextlib.AbstractContextManager[str]:
    """Serves the files of `root` until the block ends; yields the base URL."""
    return serving(functools.partial(Files, directory=str(root)))


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler] | functools.partial) -> Iterator[str]:
    """Serves with `handler` on 127.0.0.1 (a free port), in a thread, until
    the block ends; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
