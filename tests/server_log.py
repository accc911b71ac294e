"""Waiting for what a server says in its log, rather than sleeping for
longer than it should take: the session tests of tests/mcp and
tests/gateway wait for their sessions to be parked (each puts this folder
on `sys.path`).

A server started with `SESSIONS_LOG` in `RUST_LOG` says at debug level how
many sessions each sweep of its session keeper parked and ended.
"""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

# What `RUST_LOG` must hold for the server to log its parked sessions.
SESSIONS_LOG = "porter_mcp::sessions=debug"

PARKED = re.compile(r"sessions parked after a quiet spell sessions=(\d+)")
ENDED = re.compile(r"sessions ended: idle or evicted sessions=(\d+)")


def sessions_counted(log: Path, said: re.Pattern[str]) -> int:
    """How many sessions the server writing `log` has said `said` of so far
    (`PARKED` or `ENDED`)."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return 0
    return sum(int(n) for n in said.findall(text))


async def until_counted(log: Path, said: re.Pattern[str], total: int, timeout: float = 30) -> None:
    """Waits until the server writing `log` has said `said` of `total`
    sessions in all; fails, with the log's end, when that takes more than
    `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while sessions_counted(log, said) < total:
        if time.monotonic() > deadline:
            tail = log.read_text(errors="replace")[-4000:] if log.exists() else "(no log)"
            raise AssertionError(f"the log did not reach {total} x {said.pattern!r} within {timeout} s:\n{tail}")
        await asyncio.sleep(0.05)


async def until_parked(log: Path, total: int) -> None:
    """Waits until the server writing `log` has parked `total` sessions."""
    await until_counted(log, PARKED, total)


async def until_ended(log: Path, total: int) -> None:
    """Waits until the server writing `log` has ended `total` sessions."""
    await until_counted(log, ENDED, total)
