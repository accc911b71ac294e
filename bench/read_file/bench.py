"""Paging a 64 MiB log through `read_file`, with and without the file cache.

Starts `porter mmsim` with one post carrying a 64 MiB log (exactly the most
the file view reads), then for each configuration starts `porter mattermost
serve` over stdio and, through the Python `mcp` client, reads the first
window and then WINDOWS later windows in order (each at the previous
window's next_start_line). It prints the first window's time, the median
of the later windows, and the ratio between the configurations, plus the
client's own round trip (a ping) so the server's share can be told apart.

    bench/read_file/run                  # builds porter --release, then this
    python bench/read_file/bench.py --porter target/release/porter [--windows 20]

The cache is turned off with PORTER_MM_FILE_CACHE_BYTES=0 in the server's
environment. Target: later windows at most 5 ms each with the cache.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "mcp"))

import harness  # noqa: E402
from harness import Home, Mmsim, serve, server_env, structured, text_of, window_of  # noqa: E402

LOG_BYTES = 64 * 1024 * 1024
TARGET_LATER_MS = 5.0


def make_log(path: Path) -> None:
    """A deterministic 64 MiB access log: ~680,000 lines of ~100 bytes."""
    if path.exists() and path.stat().st_size == LOG_BYTES:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    routes = ["/api/v4/users/me", "/api/v4/channels/x/posts", "/api/v4/files/y", "/api/v4/posts/search", "/api/v4/teams"]
    written = 0
    n = 0
    with open(path, "w", encoding="ascii", newline="\n") as out:
        while True:
            line = (
                f"2026-03-02T{(n // 3600) % 24:02}:{(n // 60) % 60:02}:{n % 60:02}.{n % 1000:03}Z INFO "
                f"request {n:07} {routes[n % 5]} served in {3 + (n * 7) % 97} ms status=200\n"
            )
            if written + len(line) > LOG_BYTES:
                rest = LOG_BYTES - written
                out.write(("#" * (rest - 1) + "\n") if rest else "")
                break
            out.write(line)
            written += len(line)
            n += 1
    assert path.stat().st_size == LOG_BYTES


def write_seed(directory: Path, log: Path) -> Path:
    seed = {
        "users": [{"username": "alice", "token": "bench-alice-token"}],
        "teams": [{"name": "bench", "display_name": "Bench", "members": ["alice"]}],
        "channels": [{"team": "bench", "name": "logs", "display_name": "Logs", "members": ["alice"]}],
        "posts": [{"channel": "logs", "user": "alice", "message": "The whole log.", "files": [{"name": "app.log", "path": str(log)}]}],
    }
    path = directory / "seed.json"
    path.write_text(json.dumps(seed))
    return path


def downloads(sim: Mmsim, file_id: str) -> int | None:
    """How many times the emulator served the file since the last clear, or
    None when it has no request log."""
    try:
        return sum(1 for r in sim.requests() if r["method"] == "GET" and r["path"] == f"/api/v4/files/{file_id}")
    except AssertionError:
        return None


async def page(sim: Mmsim, file_id: str, home: Home, workdir: Path, windows: int, cache: bool) -> dict:
    extra = {"RUST_LOG": "warn"}
    if not cache:
        extra["PORTER_MM_FILE_CACHE_BYTES"] = "0"
    env = server_env(sim, home, extra=extra)
    async with serve("stdio", env, workdir, mode="legacy") as served:
        client = served.client
        with contextlib.suppress(AssertionError):
            sim.clear()
        pings = []
        for _ in range(20):
            started = time.perf_counter()
            await client.send_ping()
            pings.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        first = await client.call_tool("read_file", {"file_id": file_id, "start_line": 1})
        first_ms = (time.perf_counter() - started) * 1000
        if first.is_error:
            raise SystemExit(f"read_file failed: {text_of(first)}")
        record = structured(first)
        if record.get("kind") != "text":
            raise SystemExit(f"the log was not read as text: {text_of(first)[:300]}")
        window = window_of(record)
        later = []
        next_line = window.get("next_start_line")
        for _ in range(windows):
            if next_line is None:
                break
            started = time.perf_counter()
            result = await client.call_tool("read_file", {"file_id": file_id, "start_line": next_line})
            later.append((time.perf_counter() - started) * 1000)
            if result.is_error:
                raise SystemExit(f"read_file failed at line {next_line}: {text_of(result)}")
            next_line = window_of(structured(result)).get("next_start_line")
        # One far window too: the end of the file, where a re-scan costs most.
        started = time.perf_counter()
        tail = await client.call_tool("read_file", {"file_id": file_id, "start_line": window["total_lines"]})
        tail_ms = (time.perf_counter() - started) * 1000
        if tail.is_error:
            raise SystemExit(f"read_file failed at the last line: {text_of(tail)}")
        fetched = downloads(sim, file_id)
    return {
        "downloads": fetched,
        "cache": cache,
        "first_ms": round(first_ms, 2),
        "later_median_ms": round(statistics.median(later), 2),
        "later_max_ms": round(max(later), 2),
        "later_windows": len(later),
        "last_line_ms": round(tail_ms, 2),
        "ping_median_ms": round(statistics.median(pings), 3),
        "total_lines": window["total_lines"],
        "lines_per_window": window["end_line"] - window["start_line"] + 1,
    }


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--porter", help="the porter binary (default: $PORTER_BIN, else target/release/porter)")
    parser.add_argument("--windows", type=int, default=int(os.environ.get("WINDOWS", "20")), help="later windows per configuration")
    parser.add_argument("--out", default=str(REPO / "target" / "bench-read-file"), help="where the log and results go")
    parser.add_argument("--strict", action="store_true", help="exit 1 when the target is missed")
    args = parser.parse_args()
    porter = args.porter or os.environ.get("PORTER_BIN") or str(REPO / "target" / "release" / "porter")
    os.environ["PORTER_BIN"] = porter
    harness._BUILT = None
    out = Path(args.out)
    log = out / "app.log"
    make_log(log)
    work = Path(tempfile.mkdtemp(prefix="bench-read-file-"))
    sim = Mmsim(write_seed(work, log), work / "sim")
    try:
        post = sim.api("GET", f"/channels/{sim.api('GET', '/teams/name/bench/channels/name/logs')['id']}/posts")
        file_id = next(iter(post["posts"].values()))["file_ids"][0]
        results = []
        for cache in (True, False):
            windows = args.windows if cache else max(3, min(args.windows, 8))
            results.append(await page(sim, file_id, Home(work / f"home-{cache}"), work, windows, cache))
    finally:
        sim.stop()
    on, off = results
    ratio = off["later_median_ms"] / on["later_median_ms"] if on["later_median_ms"] else float("inf")
    met = on["later_median_ms"] <= TARGET_LATER_MS and on["later_max_ms"] <= TARGET_LATER_MS
    print(f"read_file paging a 64 MiB log ({on['total_lines']:,} lines, {on['lines_per_window']} lines a window), porter {porter}")
    print(f"{'':14}{'first window':>14}{'later median':>14}{'later max':>12}{'last line':>12}   client ping")
    for r in results:
        name = "with cache" if r["cache"] else "without cache"
        print(
            f"{name:14}{r['first_ms']:>11.1f} ms{r['later_median_ms']:>11.2f} ms{r['later_max_ms']:>9.2f} ms"
            f"{r['last_line_ms']:>9.1f} ms   {r['ping_median_ms']:.2f} ms"
        )
    print(f"later windows: {ratio:.1f}x faster with the cache; target <= {TARGET_LATER_MS:.0f} ms each: {'met' if met else 'MISSED'}")
    if on["downloads"] is not None:
        print(f"downloads of the log: {on['downloads']} with the cache, {off['downloads']} without")
        if off["downloads"] is not None and off["downloads"] <= 1:
            print("warning: PORTER_MM_FILE_CACHE_BYTES=0 did not turn the cache off; both rows measure the cache")
    summary = {"bench": "read_file", "with_cache": on, "without_cache": off, "ratio": round(ratio, 1), "target_met": met}
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "results.jsonl", "a") as f:
        f.write(json.dumps(summary) + "\n")
    print(json.dumps(summary))
    return 1 if args.strict and not met else 0


if __name__ == "__main__":
    warnings.simplefilter("ignore")  # ping is deprecated on 2026-07-28; this runs on 2025-11-25
    sys.exit(asyncio.run(main()))
