"""The gateway under concurrent sessions, beside the direct path.

server-everything runs once over streamable HTTP. The same load generator
(raw JSON-RPC over HTTP with httpx, one asyncio loop) opens N MCP sessions,
each calling `echo` back to back for DURATION seconds, first straight to
server-everything and then through `porter gateway serve --transport http`
(which reaches the same server-everything over HTTP), for N = 1, 8 and 32
(SESSIONS=...), ROUNDS times alternating. Prints calls per second, p50 and
p99 of each path and the gateway's share. The client, the gateway and the
upstream share this machine's cores, so the absolute figures are bounded by
the client; the ratio between the two paths is the gateway's cost.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REPO = Path(__file__).resolve().parents[2]
EVERYTHING = REPO / "tests" / "gateway" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
PORTER = os.environ["PORTER_BIN"]
DURATION = float(os.environ.get("DURATION", "5"))
ROUNDS = int(os.environ.get("ROUNDS", "2"))
SESSIONS = [int(n) for n in os.environ.get("SESSIONS", "1,8,32").split(",")]
PROTOCOL = "2025-06-18"
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_line(path: Path, pattern: str, what: str) -> re.Match[str]:
    for _ in range(600):
        match = re.search(pattern, path.read_text(errors="replace"))
        if match:
            return match
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not start: {path.read_text(errors='replace')[-2000:]}")


def answer_of(response: httpx2.Response, request_id: int) -> dict:
    """The JSON-RPC answer to `request_id`, from a JSON body or an SSE stream."""
    response.raise_for_status()
    if response.headers.get("content-type", "").startswith("application/json"):
        return response.json()
    for line in response.text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            message = json.loads(line[5:])
            if message.get("id") == request_id:
                return message
    raise RuntimeError(f"no answer to request {request_id} in {response.text[:500]!r}")


class Session:
    """One MCP session over streamable HTTP, as a minimal client keeps it."""

    def __init__(self, http: httpx2.AsyncClient, url: str) -> None:
        self.http, self.url, self.headers, self.next_id = http, url, dict(HEADERS), 1

    async def request(self, method: str, params: dict) -> dict:
        request_id = self.next_id
        self.next_id += 1
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        return answer_of(await self.http.post(self.url, json=body, headers=self.headers), request_id)

    async def open(self) -> None:
        answer = await self.http.post(self.url, headers=self.headers, json={
            "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": PROTOCOL, "capabilities": {},
                "clientInfo": {"name": "porter-bench", "version": "1"}}})
        answer_of(answer, 0)
        self.headers["mcp-session-id"] = answer.headers["mcp-session-id"]
        self.headers["mcp-protocol-version"] = PROTOCOL
        notified = await self.http.post(self.url, headers=self.headers,
                                        json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        notified.raise_for_status()

    async def close(self) -> None:
        await self.http.delete(self.url, headers=self.headers)


async def load(url: str, tool: str, sessions: int) -> tuple[float, list[float]]:
    """Calls per second and each call's milliseconds with `sessions` sessions
    calling `tool` back to back for DURATION seconds."""
    limits = httpx2.Limits(max_connections=sessions + 4, max_keepalive_connections=sessions + 4)
    async with httpx2.AsyncClient(timeout=60, limits=limits) as http:
        opened = [Session(http, url) for _ in range(sessions)]
        await asyncio.gather(*(session.open() for session in opened))
        for session in opened:  # warm each path
            await session.request("tools/call", {"name": tool, "arguments": {"message": "warm"}})
        latencies: list[float] = []
        deadline = time.perf_counter() + DURATION

        async def calling(session: Session) -> None:
            n = 0
            while time.perf_counter() < deadline:
                start = time.perf_counter()
                answer = await session.request("tools/call", {"name": tool, "arguments": {"message": f"m{n}"}})
                latencies.append((time.perf_counter() - start) * 1000)
                if "error" in answer or answer["result"].get("isError"):
                    raise RuntimeError(f"{tool} failed: {answer}")
                n += 1

        began = time.perf_counter()
        await asyncio.gather(*(calling(session) for session in opened))
        elapsed = time.perf_counter() - began
        await asyncio.gather(*(session.close() for session in opened), return_exceptions=True)
    return len(latencies) / elapsed, latencies


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        port = free_port()
        upstream_log = root / "everything.stderr"
        upstream = subprocess.Popen(
            ["node", str(EVERYTHING), "streamableHttp"], env={**os.environ, "PORT": str(port)},
            stdout=subprocess.DEVNULL, stderr=open(upstream_log, "w"), stdin=subprocess.DEVNULL,
        )
        config = root / "porter.yaml"
        config.write_text(json.dumps({
            "data_dir": str(root / "data"),
            "mcp_servers": {"everything": {"url": f"http://127.0.0.1:{port}/mcp"}},
        }))
        gateway_log = root / "gateway.stderr"
        gateway = subprocess.Popen(
            [PORTER, "gateway", "serve", "--transport", "http", "--listen", "127.0.0.1:0", "--config", str(config)],
            stdout=subprocess.DEVNULL, stderr=open(gateway_log, "w"), stdin=subprocess.DEVNULL,
        )
        try:
            wait_for_line(upstream_log, r"listening on port", "server-everything")
            gateway_url = wait_for_line(gateway_log, r"listening on (http://\S+) \(MCP at", "the gateway").group(1) + "/mcp"
            paths = {"direct": (f"http://127.0.0.1:{port}/mcp", "echo"),
                     "gateway": (gateway_url, "mcp__everything__echo")}
            print(f"echo over streamable HTTP, {DURATION:g} s per run, {ROUNDS} rounds alternating; "
                  f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
            print(f"{'sessions':>8}  {'path':<8} {'calls/s':>9} {'p50 ms':>8} {'p99 ms':>8}")
            for sessions in SESSIONS:
                results: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in paths}
                for _ in range(ROUNDS):
                    for name, (url, tool) in paths.items():
                        rate, latencies = await load(url, tool, sessions)
                        results[name][0].append(rate)
                        results[name][1].extend(latencies)
                figures = {}
                for name, (rates, latencies) in results.items():
                    figures[name] = (statistics.mean(rates), percentile(latencies, 50), percentile(latencies, 99))
                    rate, p50, p99 = figures[name]
                    print(f"{sessions:>8}  {name:<8} {rate:9.0f} {p50:8.3f} {p99:8.3f}")
                (d_rate, d50, d99), (g_rate, g50, g99) = figures["direct"], figures["gateway"]
                print(f"{sessions:>8}  gateway/direct: throughput {g_rate / d_rate:.2f}×, "
                      f"p50 +{g50 - d50:.3f} ms ({g50 / d50:.2f}×), p99 +{g99 - d99:.3f} ms")
            print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        finally:
            for process in (gateway, upstream):
                process.terminate()
                process.wait(timeout=10)


if __name__ == "__main__":
    asyncio.run(main())
