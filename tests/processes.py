"""Stopping the processes a test started, the same way in every Python
suite: ask each to stop with a signal, wait, and kill one still running.

Used by tests/mcp, tests/gateway and tests/gateway_web (each puts this
folder on `sys.path`).
"""

from __future__ import annotations

import contextlib
import signal
import subprocess


def stop(*processes: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 10) -> None:
    """Sends `sig` to each of `processes` still running, all at once, then
    waits up to `timeout` seconds for each and kills one not ended by then."""
    for process in processes:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(sig)
    for process in processes:
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=timeout)
