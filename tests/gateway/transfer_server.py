"""Loopback servers for the File download and upload tests.

One `ThreadingHTTPServer` on 127.0.0.1 serves:

- `GET /files/<name>?size=&type=&cd=`: `size` pseudo-random bytes (a PDF
  header first when the type is application/pdf), with Content-Length and,
  when `cd` is given, `Content-Disposition: attachment; filename="<cd>"`.
- `GET /grow?size=`: the same bytes without Content-Length (the body ends
  when the connection closes), so only counting can stop it.
- `GET /slow?size=`: 256 KiB every 50 ms, for progress notifications.
- `GET /redirect/same?to=<path>` and `GET /redirect/other`: a 302 to a path
  of this server, or to the same port under the name `localhost` (another
  host).
- `PUT|POST /put/<name>`: keeps the body; 201 with its size and sha256.
  `PUT|POST /put-redirect`: reads the body and answers 307 elsewhere.
- `PUT /graph/<session>`: Microsoft Graph's upload session: chunks with
  `Content-Range: bytes a-b/total`; a chunk that is not a multiple of
  320 KiB (except the last) gets 400 as Graph answers it, a chunk that does
  not start where the session expects gets 416, the chunk at 10 × 320 KiB
  fails once with 500; 202 with `nextExpectedRanges` until the last byte,
  then 201 with the item. `GET /graph/<session>` is the session's status.

Every request is recorded (`requests`), so a test can prove that nothing
was sent.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

GRAPH_ALIGN = 320 * 1024
GRAPH_FAIL_AT = 10 * GRAPH_ALIGN
PDF_HEADER = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"


def blob(size: int, seed: int = 7) -> bytes:
    """`size` reproducible pseudo-random bytes (fast enough for megabytes)."""
    return random.Random(seed).randbytes(size)


def body_for(size: int, media_type: str, seed: int = 7) -> bytes:
    """What the server sends for `size` and `media_type`."""
    if media_type == "application/pdf":
        return (PDF_HEADER + blob(size, seed))[:size]
    return blob(size, seed)


@dataclass
class GraphSession:
    total: int = 0
    received: bytearray = field(default_factory=bytearray)
    failed_once: bool = False
    done: bool = False


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    size: int


class TransferServer:
    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.uploads: dict[str, bytes] = {}
        self.graph: dict[str, GraphSession] = {}
        self.lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"owner": self})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "TransferServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def sent_to(self, prefix: str) -> list[Recorded]:
        with self.lock:
            return [r for r in self.requests if r.path.startswith(prefix) and r.method in ("PUT", "POST")]


class _Handler(BaseHTTPRequestHandler):
    owner: TransferServer

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
        pass

    # -- helpers

    def _query(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}

    def _route(self) -> str:
        return urlsplit(self.path).path

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _record(self, size: int) -> None:
        with self.owner.lock:
            self.owner.requests.append(Recorded(self.command, self.path, dict(self.headers.items()), size))

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            # The gateway stopped reading (a body over the cap): as meant.
            self.close_connection = True

    def _json(self, status: int, value: object) -> None:
        self._send(status, json.dumps(value).encode(), {"Content-Type": "application/json"})

    # -- downloads

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self._record(0)
        route, query = self._route(), self._query()
        size = int(query.get("size", "100000"))
        if route.startswith("/files/"):
            media_type = query.get("type", "application/pdf")
            headers = {"Content-Type": media_type}
            if "cd" in query:
                headers["Content-Disposition"] = f'attachment; filename="{query["cd"]}"'
            self._send(200, body_for(size, media_type), headers)
        elif route == "/grow":
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            body = body_for(size, "application/octet-stream")
            try:
                for at in range(0, len(body), 64 * 1024):
                    self.wfile.write(body[at : at + 64 * 1024])
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
        elif route == "/slow":
            body = body_for(size, "application/octet-stream")
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                for at in range(0, len(body), 256 * 1024):
                    self.wfile.write(body[at : at + 256 * 1024])
                    self.wfile.flush()
                    time.sleep(0.05)
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif route == "/redirect/same":
            self._send(302, b"", {"Location": query.get("to", "/files/moved.pdf")})
        elif route == "/redirect/other":
            self._send(302, b"", {"Location": f"http://localhost:{self.owner.port}/files/elsewhere.pdf"})
        elif route.startswith("/graph/"):
            with self.owner.lock:
                session = self.owner.graph.get(route)
                if session is None:
                    self._json(404, {"error": {"code": "itemNotFound"}})
                    return
                self._json(200, {"nextExpectedRanges": [f"{len(session.received)}-"]})
        else:
            self._send(404, b"no such fixture\n", {"Content-Type": "text/plain"})

    # -- uploads

    def do_PUT(self) -> None:  # noqa: N802 - the stdlib's name
        self._upload()

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        self._upload()

    def _upload(self) -> None:
        body = self._read_body()
        self._record(len(body))
        route = self._route()
        if route.startswith("/put/"):
            with self.owner.lock:
                self.owner.uploads[route] = body
            self._json(201, {"received": len(body), "sha256": hashlib.sha256(body).hexdigest()})
        elif route == "/put-redirect":
            self._send(307, b"", {"Location": "/put/redirected?sig=another-secret-value"})
        elif route.startswith("/graph/") and self.command == "PUT":
            self._graph_chunk(route, body)
        else:
            self._send(404, b"no such upload target\n", {"Content-Type": "text/plain"})

    def _graph_chunk(self, route: str, body: bytes) -> None:
        match = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+)", self.headers.get("Content-Range", ""))
        if not match:
            self._json(400, {"error": {"code": "invalidRequest", "message": "Content-Range is missing"}})
            return
        start, end, total = (int(g) for g in match.groups())
        with self.owner.lock:
            session = self.owner.graph.setdefault(route, GraphSession(total=total))
            expected = len(session.received)
            if end - start + 1 != len(body) or total != session.total:
                self._json(400, {"error": {"code": "invalidRequest", "message": "Content-Range does not match the body"}})
                return
            if len(body) % GRAPH_ALIGN != 0 and end + 1 != total:
                self._json(
                    400,
                    {"error": {"code": "invalidRequest", "message": "The chunk size must be a multiple of 320 KiB"}},
                )
                return
            if start != expected:
                self._json(416, {"error": {"code": "invalidRange"}, "nextExpectedRanges": [f"{expected}-"]})
                return
            if start == GRAPH_FAIL_AT and not session.failed_once:
                session.failed_once = True
                self._json(500, {"error": {"code": "generalException", "message": "try again"}})
                return
            session.received.extend(body)
            if len(session.received) == total:
                session.done = True
                self._json(201, {"id": "01GRAPHITEM", "name": route.rsplit("/", 1)[-1], "size": total})
            else:
                self._json(
                    202,
                    {"expirationDateTime": "2030-01-01T00:00:00Z", "nextExpectedRanges": [f"{len(session.received)}-"]},
                )
