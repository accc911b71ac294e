"""The file view as a user meets it: the whole `porter view` process, and
`read_file` through `porter mattermost serve`.

`time_view` starts `porter view FILE --json` once untimed, then ITER times,
each timed from the fork to the exit with its output thrown away: what a
person or a script waits for, the process's start, its worker's start and
any engine it loads included.

`time_read_file` starts `porter mmsim` with one post carrying every corpus
file, then `porter mattermost serve` over stdio with the file cache off
(`PORTER_MM_FILE_CACHE_BYTES=0`, so every call downloads and reads the file
again), and through the Python `mcp` client calls `read_file` on each file
once untimed, then ITER times: the round trip a model's client waits for,
the server's warm worker pool included.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "mcp"))


def time_view(porter: str, path: Path, iterations: int) -> dict:
    """Median, min and max milliseconds of `porter view PATH --json`, whole
    process; the shown kind and whether it succeeded, from one run."""
    command = [porter, "view", str(path), "--json"]
    first = subprocess.run(command, capture_output=True, text=True, check=False)
    shown = None
    if first.returncode == 0:
        try:
            shown = json.loads(first.stdout)["structured"].get("shown")
        except (ValueError, KeyError):
            shown = None
    times = []
    for _ in range(iterations):
        started = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append((time.perf_counter() - started) * 1000)
    return {
        "median_ms": statistics.median(times),
        "min_ms": min(times),
        "max_ms": max(times),
        "exit_code": first.returncode,
        "shown": shown,
    }


def time_read_file(porter: str, files: dict[str, Path], iterations: int) -> dict[str, dict]:
    """For each kind in `files`, the median, min and max milliseconds of a
    `read_file` call through `porter mattermost serve` (stdio)."""
    os.environ["PORTER_BIN"] = porter
    import harness

    harness._BUILT = None
    work = Path(tempfile.mkdtemp(prefix="bench-fileview-read-file-"))
    seed = {
        "users": [{"username": "alice", "token": "bench-alice-token"}],
        "teams": [{"name": "bench", "display_name": "Bench", "members": ["alice"]}],
        "channels": [{"team": "bench", "name": "files", "display_name": "Files", "members": ["alice"]}],
        "posts": [
            {"channel": "files", "user": "alice", "message": f"The {kind}.", "files": [{"name": path.name, "path": str(path)}]}
            for kind, path in files.items()
        ],
    }
    (work / "seed.json").write_text(json.dumps(seed))
    sim = harness.Mmsim(work / "seed.json", work / "sim")
    try:
        channel = sim.api("GET", "/teams/name/bench/channels/name/files")["id"]
        posts = sim.api("GET", f"/channels/{channel}/posts")["posts"].values()
        ids = {}
        for post in posts:
            kind = post["message"].removeprefix("The ").removesuffix(".")
            ids[kind] = post["file_ids"][0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return asyncio.run(_calls(harness, sim, work, ids, iterations))
    finally:
        sim.stop()


async def _calls(harness, sim, work: Path, ids: dict[str, str], iterations: int) -> dict[str, dict]:
    env = harness.server_env(sim, harness.Home(work / "home"), extra={"RUST_LOG": "warn", "PORTER_MM_FILE_CACHE_BYTES": "0"})
    results = {}
    async with harness.serve("stdio", env, work, mode="legacy") as served:
        for kind, file_id in ids.items():
            first = await served.client.call_tool("read_file", {"file_id": file_id})
            record = harness.structured(first) if not first.is_error else {}
            times = []
            for _ in range(iterations):
                started = time.perf_counter()
                await served.client.call_tool("read_file", {"file_id": file_id})
                times.append((time.perf_counter() - started) * 1000)
            results[kind] = {
                "median_ms": statistics.median(times),
                "min_ms": min(times),
                "max_ms": max(times),
                "error": harness.text_of(first)[:300] if first.is_error else None,
                "shown": record.get("shown"),
            }
    return results
