"""What several bench scripts share: reading a process's figures from /proc,
finding the gateway a bench started, and timing one `porter extract`.

Each script that uses it puts this folder (bench/) on `sys.path`."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path


def each_process(name: str) -> Iterator[tuple[int, bytes]]:
    """Every process now, with the bytes of its `/proc/<pid>/<name>`; one
    that ended meanwhile is passed over."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            data = (entry / name).read_bytes()
        except OSError:
            continue
        yield int(entry.name), data


def stat_fields(stat: str) -> list[str]:
    """The fields of a `/proc/<pid>/stat` line after the process's name
    (state first, then ppid; utime and stime are 11 and 12). The name is in
    parentheses and may hold spaces, so the line is split after it."""
    return stat.rsplit(")", 1)[1].split()


def status_kib(pid: int, field: str) -> int:
    """A KiB figure of `/proc/<pid>/status`, such as VmRSS or VmHWM."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} for {pid}")


def gateway_pid(config: Path) -> int:
    """The `porter gateway` process started with `config`."""
    for pid, cmdline in each_process("cmdline"):
        args = cmdline.split(b"\0")
        if str(config).encode() in args and b"gateway" in args:
            return pid
    raise RuntimeError("the gateway process was not found")


def timed_extract(porter: Path, source: Path, target: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    """`porter extract SOURCE -o TARGET`: its seconds by the clock, and how
    it ended (its notes, standard error, kept as text)."""
    start = time.perf_counter()
    done = subprocess.run(
        [str(porter), "extract", str(source), "-o", str(target)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    return time.perf_counter() - start, done
