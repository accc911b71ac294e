"""The capture workload on three storage configurations, in one run.

Each configuration serves the same workload: `CALLS` tool calls (1,000 by
default), each answered by bench/replicas/upstream.mjs with a 256 KiB PNG
that the gateway captures into the inbox and replaces by its stub, from
`SESSIONS` concurrent Python `mcp` client sessions (16) spread over `PROCS`
client processes (4), so that the client's own interpreter is not what
limits the rate.

  a. SQLite + local disk, one `porter gateway serve --transport http`;
  b. PostgreSQL + Garage (S3), one replica;
  c. PostgreSQL + Garage, two replicas behind nginx (round robin).

Printed: calls/s, p50 and p99 latency, peak RSS of each replica (VmHWM in
/proc), the ratios b/a (p50) and c/b (calls/s) beside the issue's targets,
and where the CPU went during each timed phase (CPU seconds of each
process group from /proc, and the machine's total from /proc/stat), with
the load average before and after.

The stores and the gateways are started by tests/gateway's harnesses
(harness.py, replicas.py, s3_stores.py), imported, not copied.

Environment: PORTER_BIN (required), CALLS, SESSIONS, PROCS, WARMUP (calls per
session before the clock starts, 2), MODE (`legacy`, one run per session, the
default; or `2026-07-28`, sessionless), ONLY (e.g. `a,c`).
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "gateway"))
sys.path.insert(0, str(HERE.parent))

import httpx2  # noqa: E402

from benchlib import each_process, stat_fields, status_kib  # noqa: E402
from harness import STUB, all_text, http_client, start_http, write_config  # noqa: E402
from replicas import S3_SECRET_ENV, Postgres, Replicas, s3_section, start_replicas  # noqa: E402

KEY = "bench-replicas-key-0123456789"
KEYS = [{"name": "bench", "key": KEY, "tenant": "bench", "role": "user"}]
SERVERS = {"images": {"command": "node", "args": [str(HERE / "upstream.mjs")]}}
TOOL = "mcp__images__image"
CLK_TCK = os.sysconf("SC_CLK_TCK")

CALLS = int(os.environ.get("CALLS", "1000"))
SESSIONS = int(os.environ.get("SESSIONS", "16"))
PROCS = max(1, min(int(os.environ.get("PROCS", "4")), SESSIONS))
WARMUP = int(os.environ.get("WARMUP", "2"))
MODE = os.environ.get("MODE", "legacy")
ONLY = set((os.environ.get("ONLY") or "a,b,c").split(","))
# Garage's metadata engine: LMDB, the one Garage recommends, or SQLite, the
# one the tests use.
GARAGE_DB = os.environ.get("GARAGE_DB", "lmdb")
# PG_STATS=1: print the statements PostgreSQL spent its time on during the
# timed calls (pg_stat_statements, from Debian's postgresql package).
PG_STATS = os.environ.get("PG_STATS") == "1"

# ---------------------------------------------------------------------------
# One client process: `bench.py --client SPEC`, SPEC = {"url", "mode",
# "calls": [per session]}. Prints `ready` once every session has made its
# warm-up calls, starts on `go`, prints one JSON line of results, and closes
# its sessions on the next line of stdin.


class Countdown:
    """An event that is set once each of `count` sessions has said so."""

    def __init__(self, count: int) -> None:
        self.left = count
        self.event = asyncio.Event()

    def arrive(self) -> None:
        self.left -= 1
        if self.left == 0:
            self.event.set()

    async def wait(self) -> None:
        await self.event.wait()


async def client_main(spec: dict[str, Any]) -> None:
    loop = asyncio.get_running_loop()
    go = asyncio.Event()
    close = asyncio.Event()
    latencies: list[float] = []
    errors: list[str] = []
    sizes: set[str] = set()
    counts: list[int] = spec["calls"]
    ready = Countdown(len(counts))
    finished = Countdown(len(counts))

    async def one(client: Any, timed: bool) -> None:
        started = time.perf_counter()
        try:
            result = await client.call_tool(TOOL, {})
            took = time.perf_counter() - started
            stub = STUB.search(all_text(result))
            if stub and not result.is_error:
                sizes.add(stub["size"].strip())
                if timed:
                    latencies.append(took)
            elif timed:
                errors.append(all_text(result)[:300])
        except Exception as error:  # noqa: BLE001 - every failure is counted and shown
            if timed:
                errors.append(f"{type(error).__name__}: {error}"[:300])
            else:
                raise

    async def session(count: int) -> None:
        async with http_client(spec["url"], KEY, mode=spec["mode"]) as client:
            for _ in range(WARMUP):
                await one(client, timed=False)
            ready.arrive()
            await go.wait()
            for _ in range(count):
                await one(client, timed=True)
            finished.arrive()
            await close.wait()

    async def control() -> None:
        await ready.wait()
        print("ready", flush=True)
        await loop.run_in_executor(None, sys.stdin.readline)
        before = resource.getrusage(resource.RUSAGE_SELF)
        go.set()
        await finished.wait()
        after = resource.getrusage(resource.RUSAGE_SELF)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        print(json.dumps({"latencies": latencies, "errors": errors, "sizes": sorted(sizes), "cpu": cpu}), flush=True)
        await loop.run_in_executor(None, sys.stdin.readline)
        close.set()

    await asyncio.gather(control(), *(session(n) for n in counts))


# ---------------------------------------------------------------------------
# CPU accounting from /proc


def proc_table() -> dict[int, tuple[int, int]]:
    """pid → (ppid, utime + stime in ticks) for every process now."""
    table: dict[int, tuple[int, int]] = {}
    for pid, stat in each_process("stat"):
        fields = stat_fields(stat.decode())
        table[pid] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    return table


def machine_busy() -> int:
    """Ticks every core spent not idle, since boot."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = values[:8]
    return user + nice + system + irq + softirq + steal


def tree(table: dict[int, tuple[int, int]], root: int, *, with_root: bool = True) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        found.add(pid)
        todo.extend(children.get(pid, []))
    if not with_root:
        found.discard(root)
    return found


@dataclass
class Groups:
    """The process groups whose CPU is counted: name → (root pid, whether
    the root itself is in the group)."""

    roots: dict[str, tuple[int, bool]] = field(default_factory=dict)

    def members(self, table: dict[int, tuple[int, int]]) -> dict[str, set[int]]:
        return {name: tree(table, pid, with_root=own) for name, (pid, own) in self.roots.items()}


def cpu_between(groups: Groups, before: dict[int, tuple[int, int]], after: dict[int, tuple[int, int]]) -> dict[str, float]:
    """CPU seconds each group used between two tables (a process that ended
    in between is not counted; none of these should)."""
    used: dict[str, float] = {}
    for name, pids in groups.members(after).items():
        ticks = sum(after[p][1] - before.get(p, (0, 0))[1] for p in pids if p in after)
        used[name] = ticks / CLK_TCK
    return used


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def postmaster_pid(postgres: Postgres) -> int:
    return int((postgres.data / "postmaster.pid").read_text().split()[0])


# ---------------------------------------------------------------------------
# One configuration


@dataclass
class Outcome:
    name: str
    label: str
    calls: int = 0
    ok: int = 0
    wall: float = 0.0
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    sizes: list[str] = field(default_factory=list)
    rss_mib: list[float] = field(default_factory=list)
    cpu: dict[str, float] = field(default_factory=dict)
    machine: float = 0.0
    load_before: str = ""
    load_after: str = ""
    stored: int = 0

    @property
    def rate(self) -> float:
        return self.ok / self.wall if self.wall else 0.0

    def pct(self, p: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] * 1000 if ordered else float("nan")


def split(total: int, parts: int) -> list[int]:
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def run_load(outcome: Outcome, url: str, gateways: list[int], groups: Groups) -> None:
    per_session = split(CALLS, SESSIONS)
    per_proc = [per_session[i::PROCS] for i in range(PROCS)]
    children = [
        subprocess.Popen(
            [sys.executable, __file__, "--client", json.dumps({"url": url, "mode": MODE, "calls": calls})],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for calls in per_proc
    ]
    try:
        for child in children:
            line = child.stdout.readline()
            if line.strip() != "ready":
                raise SystemExit(f"{outcome.name}: a client process did not get ready (it said {line!r})")
        for i, child in enumerate(children):
            groups.roots[f"client {i + 1}"] = (child.pid, True)
        outcome.load_before = uptime()
        table0, busy0 = proc_table(), machine_busy()
        started = time.perf_counter()
        for child in children:
            child.stdin.write("go\n")
            child.stdin.flush()
        results = []
        for child in children:
            line = child.stdout.readline()
            if not line:
                raise SystemExit(f"{outcome.name}: a client process ended without results")
            results.append(json.loads(line))
        outcome.wall = time.perf_counter() - started
        table1, busy1 = proc_table(), machine_busy()
        outcome.load_after = uptime()
        outcome.machine = (busy1 - busy0) / CLK_TCK
        outcome.cpu = cpu_between(groups, table0, table1)
        outcome.rss_mib = [status_kib(pid, "VmHWM") / 1024 for pid in gateways]
        for result in results:
            outcome.latencies += result["latencies"]
            outcome.errors += result["errors"]
            outcome.sizes = sorted(set(outcome.sizes) | set(result["sizes"]))
        outcome.calls = CALLS
        outcome.ok = len(outcome.latencies)
        for child in children:
            child.stdin.write("close\n")
            child.stdin.flush()
        for child in children:
            child.wait(timeout=60)
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()


def stored_files(url: str) -> int:
    answer = httpx2.get(url + "/v1/runs", headers={"Authorization": f"Bearer {KEY}"}, timeout=60)
    answer.raise_for_status()
    return sum(len(run["files"]) for run in answer.json()["runs"])


def config_a(root: Path) -> Outcome:
    outcome = Outcome("a", "SQLite + local disk, 1 replica")
    config = write_config(root, keys=KEYS, extra={"mcp_servers": SERVERS})
    process, url = start_http(root, config)
    try:
        groups = Groups({"gateway": (process.pid, True), "its upstreams": (process.pid, False)})
        run_load(outcome, url, [process.pid], groups)
        outcome.stored = stored_files(url)
    finally:
        process.terminate()
        process.wait(timeout=30)
    return outcome


def config_s3(root: Path, name: str, count: int, garage: Any) -> Outcome:
    label = "PostgreSQL + Garage, 1 replica" if count == 1 else f"PostgreSQL + Garage, {count} replicas, nginx"
    outcome = Outcome(name, label)
    postgres = Postgres(settings="-c shared_preload_libraries=pg_stat_statements" if PG_STATS else "")
    replicas: Replicas | None = None
    try:
        bucket = garage.fresh_bucket()
        replicas = start_replicas(
            root,
            postgres,
            backend="s3",
            keys=KEYS,
            extra={"mcp_servers": SERVERS},
            env={S3_SECRET_ENV: garage.secret},
            count=count,
            s3=s3_section(garage.endpoint, bucket, garage.key_id, prefix="bench"),
        )
        pids = [p.pid for p in replicas.processes]
        groups = Groups()
        for i, pid in enumerate(pids):
            tag = "ABCDEFGH"[i] if count > 1 else ""
            groups.roots[f"gateway {tag}".strip()] = (pid, True)
            groups.roots[f"upstreams of {tag}" if tag else "its upstreams"] = (pid, False)
        groups.roots["postgres"] = (postmaster_pid(postgres), True)
        groups.roots["garage"] = (garage.process.pid, True)
        if count > 1:
            groups.roots["nginx"] = (replicas.nginx.process.pid, True)
        url = replicas.nginx.url if count > 1 else replicas.urls[0]
        if PG_STATS:
            postgres.psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()")
        run_load(outcome, url, pids, groups)
        if PG_STATS:
            print_pg_stats(name, postgres)
        outcome.stored = stored_files(replicas.urls[0])
    finally:
        if replicas:
            replicas.close()
        postgres.close()
    return outcome


def print_pg_stats(name: str, postgres: Postgres) -> None:
    rows = postgres.psql(
        "SELECT calls, round(total_exec_time::numeric, 1), round(mean_exec_time::numeric, 3), "
        "left(regexp_replace(query, '\\s+', ' ', 'g'), 110) FROM pg_stat_statements "
        "ORDER BY total_exec_time DESC LIMIT 12"
    )
    print(f"{name}: PostgreSQL's statements by time spent (calls | total ms | mean ms | statement)")
    for row in rows.splitlines():
        print(f"  {row}")


# ---------------------------------------------------------------------------
# The report


def report(outcomes: dict[str, Outcome]) -> None:
    print()
    print(f"{CALLS} calls, each a 256 KiB PNG captured; {SESSIONS} concurrent sessions ({MODE}) in {PROCS} client processes")
    sizes = sorted({s for o in outcomes.values() for s in o.sizes})
    print(f"file size as the stubs give it: {', '.join(sizes) or '?'}")
    expected = CALLS + SESSIONS * WARMUP
    print(f"files each configuration should have stored: {expected} ({CALLS} timed + {SESSIONS * WARMUP} warm-up calls)")
    print()
    print("| configuration | ok / calls | stored | calls/s | p50 ms | p99 ms | peak RSS per replica (MiB) |")
    print("|---|---|---|---|---|---|---|")
    for o in outcomes.values():
        rss = ", ".join(f"{r:.1f}" for r in o.rss_mib)
        print(
            f"| {o.name}. {o.label} | {o.ok} / {o.calls} | {o.stored} | {o.rate:.1f} | {o.pct(50):.1f} | {o.pct(99):.1f} | {rss} |"
        )
    print()
    a, b, c = outcomes.get("a"), outcomes.get("b"), outcomes.get("c")
    if a and b and a.ok and b.ok:
        ratio = b.pct(50) / a.pct(50)
        verdict = "met" if ratio <= 2.0 else "missed"
        print(f"b/a p50: {ratio:.2f}x (target <= 2.0x: {verdict})")
    if b and c and b.ok and c.ok:
        ratio = c.rate / b.rate
        verdict = "met" if ratio >= 1.6 else "missed"
        print(f"c/b calls/s: {ratio:.2f}x (target >= 1.6x when the upstream is not the bottleneck: {verdict})")
    print()
    print("Where the CPU went while the clock ran (CPU seconds, and % of one core over the wall time):")
    for o in outcomes.values():
        counted = sum(o.cpu.values())
        parts = sorted(o.cpu.items(), key=lambda kv: -kv[1])
        clients = sum(v for k, v in o.cpu.items() if k.startswith("client"))
        shown = [(k, v) for k, v in parts if not k.startswith("client")] + [("clients (Python mcp)", clients)]
        shown.sort(key=lambda kv: -kv[1])
        text = ", ".join(f"{k} {v:.1f} s ({100 * v / o.wall:.0f}%)" for k, v in shown)
        outside = o.machine - counted
        print(f"  {o.name}. wall {o.wall:.1f} s: {text}; everything else on the machine {outside:.1f} s")
        print(
            f"     machine busy {o.machine:.1f} of {o.wall * os.cpu_count():.1f} core-seconds "
            f"({100 * o.machine / (o.wall * os.cpu_count()):.0f}% of {os.cpu_count()} cores); per call: "
            + ", ".join(f"{k} {1000 * v / max(o.ok, 1):.2f} ms" for k, v in shown[:4])
        )
        print(f"     load before: {o.load_before}")
        print(f"     load after:  {o.load_after}")
    for o in outcomes.values():
        if o.errors:
            print(f"{o.name}: {len(o.errors)} calls failed; the first: {o.errors[0]}")


def main() -> None:
    if not os.environ.get("PORTER_BIN"):
        raise SystemExit("set PORTER_BIN to the porter binary to measure (bench/replicas/run builds it in release)")
    print(f"porter: {os.environ['PORTER_BIN']}")
    print(f"start: {uptime()}")
    outcomes: dict[str, Outcome] = {}
    with tempfile.TemporaryDirectory(prefix="porter-bench-replicas-") as tmp:
        root = Path(tmp)
        if "a" in ONLY:
            outcomes["a"] = config_a(root / "a")
            print(f"a done: {outcomes['a'].rate:.1f} calls/s", flush=True)
        if ONLY & {"b", "c"}:
            from s3_stores import start_garage

            garage = start_garage(GARAGE_DB)
            print(f"garage: metadata in {GARAGE_DB}", flush=True)
            try:
                if "b" in ONLY:
                    outcomes["b"] = config_s3(root / "b", "b", 1, garage)
                    print(f"b done: {outcomes['b'].rate:.1f} calls/s", flush=True)
                if "c" in ONLY:
                    outcomes["c"] = config_s3(root / "c", "c", 2, garage)
                    print(f"c done: {outcomes['c'].rate:.1f} calls/s", flush=True)
            finally:
                garage.stop()
    report(outcomes)
    expected = CALLS + SESSIONS * WARMUP
    wrong = [o.name for o in outcomes.values() if o.errors or o.ok != o.calls or o.stored != expected]
    if wrong:
        raise SystemExit(f"calls failed or files are missing in: {', '.join(wrong)}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--client":
        asyncio.run(client_main(json.loads(sys.argv[2])))
    else:
        main()
