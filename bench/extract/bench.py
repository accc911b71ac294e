#!/usr/bin/env python3
"""porter extract vs markitdown, per document type, on the file view's bench
corpus (bench/fileview/make_bench_corpus.py).

Usage: bench.py --porter BIN --inprocess BENCH --corpus DIR [--iter N] [--out FILE.jsonl]

- porter in-process (the compared figure): the `extract` bench of
  porter-fileview (crates/porter-fileview/benches/extract.rs), warm: one
  untimed run, then ITER timed runs of reading the file and `to_markdown`.
- porter as a command: ITER runs of `porter extract FILE -o /dev/null`
  after a warm-up, process start included; its peak RSS from GNU time.
- markitdown: warm and in-process, as in bench/fileview: one MarkItDown()
  for the process, one untimed convert(path) per file, then ITER timed
  convert(path) calls; its peak RSS is this process's.

Prints a table (median, ratio, peak RSS) and writes one JSON line per type.
The target is porter at least 20x faster per type.
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

# The corpus and markitdown's timing are bench/fileview's.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fileview"))

from peers import DOCUMENTS, convert_timed  # noqa: E402

TARGET_RATIO = 20.0


def run_porter(command):
    """Wall milliseconds of one porter process."""
    started = time.perf_counter()
    subprocess.run(command, check=True, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - started) * 1000


def porter_rss_mib(command):
    """porter's own peak RSS in MiB, from GNU time, or None without it.

    Not from wait4 or RUSAGE_CHILDREN: Linux carries the high-water mark of
    the forking process (this Python, with markitdown loaded) across exec,
    so a child of Python reports at least Python's size. GNU time forks
    porter from its own small process."""
    gnu_time = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)
    if gnu_time is None:
        return None
    done = subprocess.run(
        [gnu_time, "-f", "%M", *command], check=True, capture_output=True, text=True
    )
    return int(done.stderr.strip().splitlines()[-1]) / 1024


def time_porter(binary, path, iterations):
    """Median wall milliseconds of `porter extract`, and its peak RSS in MiB."""
    command = [binary, "extract", str(path), "-o", os.devnull]
    run_porter(command)
    times = [run_porter(command) for _ in range(iterations)]
    return statistics.median(times), porter_rss_mib(command)


def time_markitdown(converter, path, iterations):
    _, times = convert_timed(converter, path, iterations)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--porter", required=True)
    parser.add_argument("--inprocess", required=True)
    parser.add_argument("--corpus", required=True, type=Path)
    parser.add_argument("--iter", type=int, default=5)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--strict", action="store_true")
    args = parser.parse_args()

    from markitdown import MarkItDown

    converter = MarkItDown()
    paths = [str(args.corpus / name) for _, name in DOCUMENTS]
    bench = subprocess.run(
        [args.inprocess, *paths],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "ITER": str(args.iter)},
    )
    inprocess = {Path(line["file"]).name: line["median_ms"] for line in map(json.loads, bench.stdout.splitlines())}
    rows = []
    for kind, name in DOCUMENTS:
        path = args.corpus / name
        command_ms, porter_rss = time_porter(args.porter, path, args.iter)
        porter_ms = inprocess[name]
        peer_ms = time_markitdown(converter, path, args.iter)
        peer_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        rows.append(
            {
                "type": kind,
                "file": name,
                "bytes": path.stat().st_size,
                "porter_median_ms": round(porter_ms, 2),
                "porter_command_median_ms": round(command_ms, 2),
                "markitdown_median_ms": round(peer_ms, 2),
                "ratio": round(peer_ms / porter_ms, 1),
                "porter_peak_rss_mib": None if porter_rss is None else round(porter_rss, 1),
                "markitdown_peak_rss_mib": round(peer_rss, 1),
                "iterations": args.iter,
            }
        )
    print(f"{'type':<6}{'porter ms':>11}{'(command)':>11}{'markitdown ms':>15}{'ratio':>8}{'porter RSS':>12}{'md RSS':>9}")
    missed = []
    for row in rows:
        mark = "" if row["ratio"] >= TARGET_RATIO else "  (under 20x)"
        if mark:
            missed.append(row["type"])
        print(
            f"{row['type']:<6}{row['porter_median_ms']:>11.1f}{row['porter_command_median_ms']:>11.1f}{row['markitdown_median_ms']:>15.1f}"
            f"{row['ratio']:>7.1f}x{row['porter_peak_rss_mib'] or 0:>10.1f}Mi{row['markitdown_peak_rss_mib']:>7.1f}Mi{mark}"
        )
    print("porter RSS: its own process for that file (GNU time); markitdown RSS: the Python process so far (cumulative).")
    if args.out:
        with args.out.open("w") as out:
            for row in rows:
                out.write(json.dumps(row) + "\n")
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main())
