"""The download benchmark behind `bench/download/run` (see README.md)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "gateway"))
sys.path.insert(0, str(HERE.parent))

from benchlib import gateway_pid, status_kib  # noqa: E402
from harness import all_text, stdio_gateway, write_config  # noqa: E402
from webserver import file_server  # noqa: E402

MIB = 1024 * 1024
SIZE_MIB = int(os.environ.get("SIZE_MIB", "1024"))
ITER = int(os.environ.get("ITER", "3"))


def make_blob(path: Path, size: int) -> None:
    if path.exists() and path.stat().st_size == size:
        return
    with open(path, "wb") as out:
        left = size
        while left:
            step = min(left, 16 * MIB)
            out.write(os.urandom(step))
            left -= step


def timed_curl(url: str, target: Path) -> float:
    started = time.perf_counter()
    subprocess.run(["curl", "-sS", "--fail", "-o", str(target), url], check=True)
    elapsed = time.perf_counter() - started
    target.unlink()
    return elapsed


async def timed_gateway(work: Path, url: str, size: int) -> tuple[list[float], int, int]:
    config = write_config(
        work / "gw",
        extra={
            "mcp_servers": {},
            "http": {"private_hosts": ["127.0.0.1"]},
            "limits": {"file_max_bytes": 2 * size, "inbox_max_bytes": 4 * size},
        },
    )
    times = []
    env = {"MALLOC_ARENA_MAX": os.environ["MALLOC_ARENA_MAX"]} if "MALLOC_ARENA_MAX" in os.environ else None
    async with stdio_gateway(work / "gw", config, env=env) as served:
        pid = gateway_pid(config)
        await served.client.list_tools()
        idle = status_kib(pid, "VmHWM")
        for _ in range(ITER):
            started = time.perf_counter()
            result = await served.client.call_tool("File", {"op": "download", "url": url})
            elapsed = time.perf_counter() - started
            text = all_text(result)
            if result.is_error:
                raise RuntimeError(text)
            times.append(elapsed)
            path = result.structured_content["path"]
            removed = await served.client.call_tool("File", {"op": "rm", "path": path})
            if removed.is_error:
                raise RuntimeError(all_text(removed))
        hwm = status_kib(pid, "VmHWM")
    return times, hwm, idle


def main() -> None:
    size = SIZE_MIB * MIB
    work = Path(os.environ.get("BENCH_DIR", REPO / "target" / "bench-download"))
    shutil.rmtree(work / "gw", ignore_errors=True)
    (work / "serve").mkdir(parents=True, exist_ok=True)
    make_blob(work / "serve" / "blob.bin", size)
    try:
        with file_server(work / "serve") as base:
            url = f"{base}/blob.bin"
            curl = [timed_curl(url, work / "curl.bin") for _ in range(ITER)]
            gateway, hwm, idle = asyncio.run(timed_gateway(work, url, size))
    finally:
        shutil.rmtree(work / "gw", ignore_errors=True)
    curl_mibs = SIZE_MIB / min(curl)
    gateway_mibs = SIZE_MIB / min(gateway)
    ratio = gateway_mibs / curl_mibs
    print(f"file: {SIZE_MIB} MiB from {url}, best of {ITER}")
    print(f"curl -o:          {curl_mibs:8.1f} MiB/s  ({', '.join(f'{t:.2f}s' for t in curl)})")
    print(f"gateway download: {gateway_mibs:8.1f} MiB/s  ({', '.join(f'{t:.2f}s' for t in gateway)})")
    print(f"ratio gateway/curl: {ratio:.2f} (target >= 0.90) {'ok' if ratio >= 0.9 else 'MISSED'}")
    print(f"gateway peak RSS (VmHWM): {hwm / 1024:.1f} MiB (target <= 32 MiB) {'ok' if hwm <= 32 * 1024 else 'MISSED'}")
    print(f"  of which the started, idle gateway: {idle / 1024:.1f} MiB; the downloads added {(hwm - idle) / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
