#!/usr/bin/env python3
"""Prints what a run of scripts/test measured, at its end.

Usage: test_summary.py RESULTS_DIR
       test_summary.py --self-test

RESULTS_DIR is where scripts/test left its records:

- `phases.tsv`: one line per phase (name, seconds, load average at its start
  and at its end, exit status);
- `junit/<suite>.xml`: each suite's tests (pytest's `--junitxml`, nextest's
  JUnit report), with each test's time;
- `counts.tsv`: suites whose runner writes no JUnit report (the doctests,
  the conformance scenarios): suite, passed, failed, skipped;
- `slow.tsv`: their slowest items, where they say (suite, seconds, name);
- `timings/*.jsonl`: every server start the harnesses recorded (tests/timing.py,
  porter-test's `shared::timed`): suite, server, seconds.

It prints the phases with their load, each suite's counts, wall time and the
share of its tests' time spent starting servers, the twenty slowest tests of
each suite, and last a line `total: N passed, N failed, N skipped`. Exits 0;
scripts/test decides the run's status.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

SLOWEST = 20


@dataclass
class Suite:
    name: str
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    tests: list[tuple[float, str]] = field(default_factory=list)
    wall: float | None = None

    @property
    def test_seconds(self) -> float:
        return sum(seconds for seconds, _ in self.tests)


def read_junit(path: Path, suite: Suite) -> None:
    """Adds the test cases of one JUnit report to `suite`."""
    root = ET.parse(path).getroot()
    for case in root.iter("testcase"):
        seconds = float(case.get("time") or 0)
        classname = case.get("classname") or ""
        name = f"{classname}::{case.get('name')}" if classname else str(case.get("name"))
        if case.find("skipped") is not None:
            suite.skipped += 1
        elif case.find("failure") is not None or case.find("error") is not None:
            suite.failed += 1
        else:
            suite.passed += 1
        suite.tests.append((seconds, name))


def read_tsv(path: Path) -> list[list[str]]:
    if not path.is_file():
        return []
    return [line.split("\t") for line in path.read_text().splitlines() if line.strip()]


def minutes(seconds: float) -> str:
    return f"{seconds / 60:5.1f} min" if seconds >= 60 else f"{seconds:5.1f} s  "


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    if sys.argv[1] == "--self-test":
        return self_test()
    summarize(Path(sys.argv[1]))
    return 0


def summarize(results: Path) -> None:
    suites: dict[str, Suite] = {}

    def suite(name: str) -> Suite:
        return suites.setdefault(name, Suite(name))

    for report in sorted((results / "junit").glob("*.xml")):
        try:
            read_junit(report, suite(report.stem))
        except ET.ParseError as error:
            print(f"summary: {report} does not parse ({error}); its tests are not counted", file=sys.stderr)
            suite(report.stem).failed += 1
    for name, passed, failed, skipped in read_tsv(results / "counts.tsv"):
        entry = suite(name)
        entry.passed += int(passed)
        entry.failed += int(failed)
        entry.skipped += int(skipped)
    for name, seconds, test in read_tsv(results / "slow.tsv"):
        suite(name).tests.append((float(seconds), test))

    phases = read_tsv(results / "phases.tsv")
    for name, seconds, _, _, status in (p[:5] for p in phases):
        # A phase named `suite <name>` is that suite's wall time; one that
        # failed with no failing test in its report (it crashed, or its
        # runner failed before any test) counts as one failure.
        if not name.startswith("suite "):
            continue
        entry = suite(name[6:])
        entry.wall = (entry.wall or 0) + float(seconds)
        if status != "0" and entry.failed == 0:
            entry.failed += 1
            print(f"summary: {name} exited {status} with no failing test in its report: counted as one failure", file=sys.stderr)

    starts: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for log in sorted((results / "timings").glob("*.jsonl")):
        for line in log.read_text().splitlines():
            try:
                entry = json.loads(line)
                starts[entry["suite"]][entry["server"]].append(float(entry["seconds"]))
            except (ValueError, KeyError):
                continue

    load_now = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"] * 3
    print(f"\n==> summary of this run (load average now {' '.join(load_now)})")
    if phases:
        print("\nphases (wall time; load average at the start and the end):")
        for name, seconds, load_start, load_end, status in (p[:5] for p in phases):
            mark = "" if status == "0" else f"  exit {status}"
            print(f"  {minutes(float(seconds))}  {name:<58} load {load_start} -> {load_end}{mark}")
        total = sum(float(p[1]) for p in phases)
        print(f"  {minutes(total)}  all phases")

    print("\nsuites (tests' own time is summed over parallel workers; servers = starting them):")
    for entry in suites.values():
        wall = minutes(entry.wall) if entry.wall is not None else "   -     "
        line = (
            f"  {entry.name:<22} {entry.passed:5} passed {entry.failed:4} failed {entry.skipped:4} skipped"
            f"   wall {wall}   tests {minutes(entry.test_seconds)}"
        )
        servers = starts.get(entry.name, {})
        if servers:
            spent = sum(sum(times) for times in servers.values())
            share = f" ({100 * spent / entry.test_seconds:.0f}%)" if entry.test_seconds else ""
            line += f"   servers {minutes(spent)}{share}"
        print(line)
        for server, times in sorted(servers.items(), key=lambda kv: -sum(kv[1])):
            print(f"      {len(times):4} x {server:<34} {minutes(sum(times))}  (mean {sum(times) / len(times):.2f} s)")
    for name, servers in starts.items():
        if name not in suites:
            spent = sum(sum(times) for times in servers.values())
            detail = ", ".join(f"{len(t)} x {s} {sum(t):.1f} s" for s, t in servers.items())
            print(f"  {name:<22} servers {minutes(spent)}: {detail}")

    for entry in suites.values():
        if not entry.tests:
            continue
        print(f"\nslowest tests of {entry.name}:")
        for seconds, name in sorted(entry.tests, reverse=True)[:SLOWEST]:
            print(f"  {seconds:7.2f} s  {name}")

    passed = sum(s.passed for s in suites.values())
    failed = sum(s.failed for s in suites.values())
    skipped = sum(s.skipped for s in suites.values())
    failing = [s.name for s in suites.values() if s.failed]
    if failing:
        print(f"\nsuites with failures: {', '.join(failing)}")
    print(f"\ntotal: {passed} passed, {failed} failed, {skipped} skipped")


def self_test() -> int:
    """Summarizes a made-up run and checks the counts, the failure of a
    suite that crashed, and the order of the slowest tests."""
    import contextlib
    import io
    import tempfile

    with tempfile.TemporaryDirectory() as temp:
        results = Path(temp)
        (results / "junit").mkdir()
        (results / "timings").mkdir()
        (results / "junit" / "mcp.xml").write_text(
            '<testsuites><testsuite name="pytest">'
            '<testcase classname="test_a" name="fast" time="0.5"/>'
            '<testcase classname="test_a" name="slow" time="9.0"/>'
            '<testcase classname="test_b" name="skipped" time="0.0"><skipped/></testcase>'
            '<testcase classname="test_b" name="broken" time="1.0"><failure message="x"/></testcase>'
            "</testsuite></testsuites>"
        )
        (results / "counts.tsv").write_text("rust-doc\t14\t0\t1\n")
        (results / "phases.tsv").write_text(
            "building\t100.0\t1.0\t2.0\t0\nsuite mcp\t30.0\t2.0\t2.5\t1\nsuite hostile\t5.0\t2.5\t2.5\t2\n"
        )
        (results / "timings" / "mcp-1.jsonl").write_text('{"suite": "mcp", "server": "porter mmsim", "seconds": 2.5}\n')
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            summarize(results)
        text = out.getvalue()
    lines = text.strip().splitlines()
    problems = []
    if lines[-1] != "total: 16 passed, 2 failed, 2 skipped":
        problems.append(f"the last line is {lines[-1]!r}")
    slow = [line for line in lines if line.strip().endswith(("test_a::slow", "test_a::fast"))]
    if len(slow) != 2 or "slow" not in slow[0]:
        problems.append(f"the slowest tests are not first: {slow}")
    if "porter mmsim" not in text or "(24%)" not in text:
        problems.append("the share of time starting servers is not shown")
    if problems:
        print("test_summary self-test failed: " + "; ".join(problems) + "\n" + text, file=sys.stderr)
        return 1
    print("test_summary self-test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
