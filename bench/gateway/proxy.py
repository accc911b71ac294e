"""Proxy overhead of the gateway, and memory per idle run.

1. The same Python mcp client calls `echo` on tests/gateway/upstream.mjs
   directly (stdio) and through `porter gateway serve` (stdio, the upstream
   behind it), alternating call by call so that machine noise hits both
   alike. Prints p50/p99 of each and the difference at p50 (target
   ≤ 0.5 ms added).
2. `porter gateway serve --transport http` with 1,000 MCP sessions opened
   (initialize + initialized, then idle): the gateway's resident memory
   before and after, divided by the runs. Then the same sessions parked
   (`--session-park`, 5 s here, 5 minutes by default: their machinery
   freed, each rebuilt by its next request) and 1,000 more opened and
   parked: what the second thousand adds is what a parked idle run costs
   once the allocator reuses what the first thousand freed (glibc keeps
   freed memory in the process, so the first burst's peak stays resident).
   One session of the first thousand is then used, to show it resumes.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchlib import status_kib  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
UPSTREAM = REPO / "tests" / "gateway" / "upstream.mjs"
PORTER = os.environ["PORTER_BIN"]
CALLS = int(os.environ.get("CALLS", "2000"))
RUNS = int(os.environ.get("RUNS", "1000"))
# How long the idle sessions wait before they are parked, in seconds.
PARK_S = int(os.environ.get("PARK_S", "5"))


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


async def proxy(root: Path) -> None:
    config = root / "porter.yaml"
    config.write_text(json.dumps({
        "data_dir": str(root / "data"),
        "mcp_servers": {"up": {"command": "node", "args": [str(UPSTREAM)]}},
    }))
    direct_params = StdioServerParameters(command="node", args=[str(UPSTREAM)])
    gateway_params = StdioServerParameters(command=PORTER, args=["gateway", "serve", "--config", str(config)])
    with open(root / "stderr", "w") as errlog:
        async with Client(stdio_client(direct_params, errlog=errlog)) as direct, Client(
            stdio_client(gateway_params, errlog=errlog)
        ) as gateway:
            for _ in range(50):  # warm both paths
                await direct.call_tool("echo", {"message": "warm"})
                await gateway.call_tool("mcp__up__echo", {"message": "warm"})
            direct_ms: list[float] = []
            gateway_ms: list[float] = []
            for i in range(CALLS):
                message = f"call {i}"
                start = time.perf_counter()
                await direct.call_tool("echo", {"message": message})
                direct_ms.append((time.perf_counter() - start) * 1000)
                start = time.perf_counter()
                await gateway.call_tool("mcp__up__echo", {"message": message})
                gateway_ms.append((time.perf_counter() - start) * 1000)
    d50, d99 = percentile(direct_ms, 50), percentile(direct_ms, 99)
    g50, g99 = percentile(gateway_ms, 50), percentile(gateway_ms, 99)
    print(f"echo, {CALLS} calls each, alternating, same client")
    print(f"  direct to the upstream   p50 {d50:7.3f} ms   p99 {d99:7.3f} ms")
    print(f"  through porter gateway   p50 {g50:7.3f} ms   p99 {g99:7.3f} ms")
    print(f"  added by the gateway     p50 {g50 - d50:7.3f} ms   p99 {g99 - d99:7.3f} ms   (target ≤ 0.5 ms at p50)")
    print(f"  ratio gateway/direct     p50 {g50 / d50:.2f}×")


async def idle_runs(root: Path) -> None:
    config = root / "porter-http.yaml"
    config.write_text(json.dumps({"data_dir": str(root / "data-http")}))
    stderr = open(root / "http.stderr", "w")
    process = subprocess.Popen(
        [PORTER, "gateway", "serve", "--transport", "http", "--listen", "127.0.0.1:0", "--config", str(config),
         "--session-park", f"{PARK_S}s"],
        stderr=stderr, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
    )
    try:
        url = None
        for _ in range(300):
            match = re.search(r"listening on (http://\S+) \(MCP at", (root / "http.stderr").read_text())
            if match:
                url = match.group(1) + "/mcp"
                break
            time.sleep(0.05)
        assert url, "the gateway did not start"
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
        async with httpx2.AsyncClient(timeout=60) as http:
            # One session first, so the baseline includes a warmed server.
            async def open_session() -> str:
                response = await http.post(url, json=init, headers=headers)
                response.raise_for_status()
                session = response.headers["mcp-session-id"]
                await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                                headers={**headers, "mcp-session-id": session})
                return session
            async def open_many() -> list[str]:
                opened: list[str] = []
                for start in range(0, RUNS, 50):
                    opened += await asyncio.gather(*(open_session() for _ in range(min(50, RUNS - start))))
                return opened

            await open_session()
            time.sleep(0.5)
            before = status_kib(process.pid, "VmRSS")
            first = await open_many()
            time.sleep(1.0)
            after = status_kib(process.pid, "VmRSS")
            # Parked within PARK_S and a quarter of it (the gateway looks
            # every quarter); twice that to be sure.
            time.sleep(2 * PARK_S)
            parked = status_kib(process.pid, "VmRSS")
            await open_many()
            time.sleep(2 * PARK_S)
            second = status_kib(process.pid, "VmRSS")
            listed = await http.post(
                url,
                json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                headers={**headers, "mcp-session-id": first[0], "mcp-protocol-version": "2025-06-18"},
            )
            resumed = listed.status_code == 200 and '"tools"' in listed.text
        per_run = (after - before) / RUNS
        per_parked = (second - parked) / RUNS
        print(f"\n{RUNS} idle runs over HTTP (each an MCP session with its run recorded), load {os.getloadavg()[0]:.1f}")
        print(f"  open:   gateway RSS {before / 1024:.1f} MiB → {after / 1024:.1f} MiB: {per_run:.1f} KiB per idle run")
        print(f"  parked: {parked / 1024:.1f} MiB after {PARK_S} s quiet; {RUNS} more opened and parked → "
              f"{second / 1024:.1f} MiB: {per_parked:.1f} KiB per parked idle run (target ≤ 32)")
        print(f"  a parked session of the first {RUNS} resumes on its next request: {'yes' if resumed else 'NO'}")
    finally:
        process.terminate()
        process.wait(timeout=10)


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        await proxy(root)
        await idle_runs(root)


if __name__ == "__main__":
    asyncio.run(main())
