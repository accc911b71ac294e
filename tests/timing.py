"""How long the Python suites wait for their servers, recorded for the
summary `scripts/test` prints at the end of a run.

`with starting("porter gateway"):` around what starts a server (up to the
moment it answers), or `record("PostgreSQL", seconds)` where a context
manager does not fit, appends one JSON line per start to a file of this
process under `$PORTER_TEST_TIMINGS` (nothing is written when it is unset):
`{"suite": …, "server": …, "seconds": …}`. The suite is
`$PORTER_TEST_SUITE`, which each `tests/<suite>/run` sets. One file per
process, so pytest-xdist's workers never write to the same file.

Used by tests/mcp, tests/gateway and tests/gateway_web (each puts this
folder on `sys.path`), like tests/processes.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

TIMINGS_ENV = "PORTER_TEST_TIMINGS"
SUITE_ENV = "PORTER_TEST_SUITE"


def record(server: str, seconds: float) -> None:
    """Records that starting `server` took `seconds`."""
    folder = os.environ.get(TIMINGS_ENV)
    if not folder:
        return
    suite = os.environ.get(SUITE_ENV, "python")
    line = json.dumps({"suite": suite, "server": server, "seconds": round(seconds, 4)})
    path = Path(folder) / f"{suite}-{os.getpid()}.jsonl"
    with open(path, "a") as out:
        out.write(line + "\n")


@contextlib.contextmanager
def starting(server: str) -> Iterator[None]:
    """Records how long the body took as a start of `server` (also when it
    failed: the wait was spent all the same)."""
    began = time.monotonic()
    try:
        yield
    finally:
        record(server, time.monotonic() - began)
