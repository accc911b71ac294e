"""Every HTTP server in the porter binary answers without Nagle's delay.

A streamed MCP answer over HTTP leaves in several small writes (headers,
then each event, then the end of the stream). On a connection without
TCP_NODELAY the kernel holds each small write until the one before it is
acknowledged, and the client acknowledges late on purpose: every call then
waits about 40 ms for nothing (bench/gateway/concurrency.py measured 44 ms
at p50 through the gateway against 2 ms straight to the upstream). The
witness is the servers' own system calls, not a clock: under strace, each
connection a server accepts gets TCP_NODELAY before it is answered.

Needs PORTER_BIN (or a debug build) and strace.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from harness import START_TIMEOUT_S, porter_bin, read_log, stop_process

ACCEPTED = re.compile(r"^(\d+)\s+accept4?\(\d+,.*\)\s+=\s+(\d+)", re.MULTILINE)
NODELAY = re.compile(r"^(\d+)\s+setsockopt\((\d+), SOL_TCP, TCP_NODELAY, \[1\], 4\)\s+=\s+0", re.MULTILINE)
# Each server's command, how it announces its address, and a path to ask.
SERVERS = {
    "mattermost": (["mattermost", "serve", "--demo", "--transport", "http", "--port", "0"],
                   r"MCP at (http://127\.0\.0\.1:\d+)", "/mcp"),
    "gateway": (["gateway", "serve", "--transport", "http", "--listen", "127.0.0.1:0"],
                r"listening on (http://127\.0\.0\.1:\d+)", "/mcp"),
    "mmsim": (["mmsim", "--listen", "127.0.0.1:0"], r"MM_URL=(http://127\.0\.0\.1:\d+)", "/api/v4/system/ping"),
}


def answered(url: str) -> None:
    """One request; any HTTP answer (401 and 405 included) will do."""
    try:
        with urllib.request.urlopen(url, timeout=20) as answer:
            answer.read()
    except urllib.error.HTTPError as refused:
        refused.read()


@pytest.mark.parametrize("server", sorted(SERVERS))
def test_each_accepted_connection_is_set_to_send_small_writes_at_once(server: str, tmp_path: Path) -> None:
    if shutil.which("strace") is None:
        pytest.fail("strace is not installed: scripts/test installs it")
    arguments, announced, path = SERVERS[server]
    trace, log = tmp_path / "trace", tmp_path / "stderr"
    process = subprocess.Popen(
        ["strace", "-f", "-qq", "-e", "trace=accept,accept4,setsockopt", "-o", str(trace),
         str(porter_bin()), *arguments],
        cwd=tmp_path, stdin=subprocess.DEVNULL,
        stdout=open(tmp_path / "stdout", "wb"), stderr=open(log, "wb"),  # noqa: SIM115
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        found = None
        while found is None and time.monotonic() < deadline:
            assert process.poll() is None, read_log(log)
            found = re.search(announced, (tmp_path / "stdout").read_text(errors="replace") + read_log(log))
            time.sleep(0.05)
        assert found, f"{server} announced no address:\n{read_log(log)}"
        for _ in range(3):
            answered(found.group(1) + path)
    finally:
        stop_process(process)
    text = trace.read_text()
    accepted = {(pid, fd) for pid, fd in ACCEPTED.findall(text)}
    assert accepted, f"strace saw no accepted connection of {server}:\n{text[-3000:]}"
    set_nodelay = {fd for _, fd in NODELAY.findall(text)}
    missing = sorted(fd for _, fd in accepted if fd not in set_nodelay)
    assert not missing, f"{server}: connections on fds {missing} were answered without TCP_NODELAY"
