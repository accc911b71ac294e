"""The server as a process: start-up checks and exit codes, stdout carrying
only JSON-RPC, unknown methods answered, the token never logged, the HTTP
transport's loopback rule, bearer token and Host check, and the two protocol
eras a current client negotiates."""

from __future__ import annotations

import json
import socket
import re
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from harness import (
    Home,
    free_port,
    porter_bin,
    read_log,
    serve,
    server_env,
    stop_process,
    structured,
    text_of,
    start_http_server,
)
from server_log import SESSIONS_LOG, until_ended, until_parked  # noqa: E402  (tests/server_log.py, on the path harness sets)

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}


def run_serve(env: dict[str, str], *args: str, stdin: bytes = b"", timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(porter_bin()), "mattermost", "serve", *args],
        env=env,
        input=stdin,
        capture_output=True,
        timeout=timeout,
    )


def test_stdout_carries_only_json_rpc_and_an_unknown_method_is_answered_with_an_error(read_sim, home: Home):
    messages = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "porter/no-such-method", "params": {}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}},
    ]
    process = subprocess.Popen(
        [str(porter_bin()), "mattermost", "serve"],
        env=server_env(read_sim, home),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin and process.stdout
    answers: dict[int, dict] = {}
    lines: list[bytes] = []
    try:
        for message in messages:
            process.stdin.write(json.dumps(message).encode() + b"\n")
            process.stdin.flush()
            if "id" in message:
                while message["id"] not in answers:
                    line = process.stdout.readline()
                    assert line, f"stdout closed early; stderr:\n{process.stderr.read().decode(errors='replace') if process.stderr else ''}"
                    lines.append(line)
                    decoded = json.loads(line)
                    assert decoded.get("jsonrpc") == "2.0", line
                    if "id" in decoded:
                        answers[decoded["id"]] = decoded
        process.stdin.close()
        code = process.wait(timeout=10)
        rest = process.stdout.read()
        stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
    finally:
        stop_process(process)
    for line in rest.splitlines():
        if line.strip():
            json.loads(line)
    assert "error" in answers[2], answers[2]
    assert answers[2]["error"]["code"] == -32601, answers[2]
    assert answers[3]["result"]["tools"], answers[3]
    assert code == 0, f"stdin closed: exit {code}\n{stderr}"
    assert read_sim.token not in stderr


def test_a_bad_token_exits_2_with_the_fix(read_sim, home: Home):
    env = server_env(read_sim, home, extra={"MM_TOKEN": "not-a-real-token"})
    done = run_serve(env, stdin=json.dumps(INITIALIZE).encode() + b"\n")
    assert done.returncode == 2, done
    stderr = done.stderr.decode(errors="replace")
    assert "token" in stderr.lower(), stderr
    assert "not-a-real-token" not in stderr + done.stdout.decode(errors="replace"), "the token was printed"
    assert not done.stdout.strip() or all(json.loads(l) for l in done.stdout.splitlines() if l.strip())


def test_a_missing_url_exits_2(home: Home):
    env = server_env(None, home, extra={"MM_TOKEN": "x"})
    done = run_serve(env)
    assert done.returncode == 2, done
    assert b"MM_URL" in done.stderr, done.stderr


def test_a_bad_boolean_exits_2(read_sim, home: Home):
    env = server_env(read_sim, home, extra={"MM_MCP_ALLOW_WRITES": "perhaps"})
    done = run_serve(env)
    assert done.returncode == 2, done
    assert b"MM_MCP_ALLOW_WRITES" in done.stderr, done.stderr


@pytest.mark.anyio
async def test_an_unreachable_mattermost_is_warned_about_and_served_anyway(home: Home, tmp_path: Path):
    env = server_env(None, home, extra={"MM_URL": f"http://127.0.0.1:{free_port()}", "MM_TOKEN": "x"})
    async with serve("stdio", env, tmp_path) as served:
        tools = await served.client.list_tools()
        assert tools.tools
    assert read_log(served.stderr).strip(), "no warning on stderr"


@pytest.mark.anyio
async def test_the_token_never_reaches_the_logs(read_sim, home: Home, tmp_path: Path):
    env = server_env(read_sim, home, extra={"RUST_LOG": "trace"})
    async with serve("stdio", env, tmp_path) as served:
        await served.client.call_tool("get_me", {})
        await served.client.call_tool("read_file", {"file_id": read_sim.file_id("release-notes.txt")})
    log = read_log(served.stderr)
    assert log.strip(), "trace logging wrote nothing: nothing to check"
    assert read_sim.token not in log


@pytest.mark.anyio
async def test_the_instructions_say_others_text_is_not_instructions_and_writes_ask(read_sim, home: Home, tmp_path: Path):
    async with serve("stdio", server_env(read_sim, home, writes=True), tmp_path, mode="legacy") as served:
        instructions = (served.client.instructions or "").lower()
    assert re.search(r"\b(?:not|never)\b[^.]*\binstructions\b", instructions), instructions
    assert re.search(r"\bask", instructions), instructions


@pytest.mark.anyio
@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", None), ("2026-07-28", "2026-07-28")])
async def test_each_protocol_era_a_current_client_speaks_is_served(
    read_sim, home: Home, tmp_path: Path, mode: str, version: str | None
):
    """legacy: initialize at 2025-11-25; auto: server/discover first, falling
    back to initialize on an error (the SDK's default); pinned: 2026-07-28
    without a handshake."""
    async with serve("stdio", server_env(read_sim, home), tmp_path, mode=mode) as served:
        if version is not None:
            assert served.client.protocol_version == version
        result = await served.client.call_tool("get_me", {})
        assert not result.is_error, text_of(result)
        assert "alice" in text_of(result) or structured(result).get("username") == "alice"


@pytest.mark.anyio
async def test_an_http_session_parked_after_a_quiet_spell_goes_on(read_sim, home: Home, tmp_path: Path):
    """rmcp frees a quiet session's machinery (after five minutes by
    default, one second here). Neither SDK client opens a new session on a
    404, so the server keeps what the client said at `initialize` and
    rebuilds the session on its next request."""
    args = ("--session-park", "1s")
    # rmcp says at debug level when it rebuilds a session from the store,
    # porter when it parks one.
    env = {**server_env(read_sim, home), "RUST_LOG": f"warn,rmcp::transport::streamable_http_server=debug,{SESSIONS_LOG}"}
    async with serve("http", env, tmp_path, mode="legacy", args=args) as served:
        for parked in (1, 2):
            await until_parked(served.stderr, parked)
            again = await served.client.call_tool("get_me", {})
            assert not again.is_error, text_of(again)
            assert "alice" in text_of(again) or structured(again).get("username") == "alice"
    assert read_log(served.stderr).count("session restored from external store") == 2, read_log(served.stderr)


@pytest.mark.anyio
async def test_an_http_session_quiet_past_its_idle_time_ends(read_sim, home: Home, tmp_path: Path):
    args = ("--session-park", "1s", "--session-idle", "2s")
    env = {**server_env(read_sim, home), "RUST_LOG": f"warn,{SESSIONS_LOG}"}
    async with serve("http", env, tmp_path, mode="legacy", args=args) as served:
        await until_ended(served.stderr, 1)
        with pytest.raises(Exception) as ended:
            await served.client.call_tool("get_me", {})
        assert "terminated" in str(ended.value).lower() or "404" in str(ended.value), ended.value


def test_session_times_that_cannot_be_met_are_refused(read_sim, home: Home):
    done = run_serve(server_env(read_sim, home), "--transport", "http", "--session-park", "1h", "--session-idle", "10m", timeout=15)
    assert done.returncode == 2, done
    assert b"--session-park" in done.stderr and b"--session-idle" in done.stderr, done.stderr


def start_http(env: dict[str, str], tmp_path: Path, *args: str) -> tuple[subprocess.Popen, int, Path]:
    log = tmp_path / f"http-{time.monotonic_ns()}.stderr"
    process, url = start_http_server([str(porter_bin()), "mattermost", "serve"], env, tmp_path, log, *args)
    return process, int(url.rsplit(":", 1)[1].split("/")[0]), log


def post_initialize(port: int, headers: dict[str, str]) -> int:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp",
        data=json.dumps(INITIALIZE).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read(1)
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_http_binds_a_non_loopback_address_only_with_a_bearer_token(read_sim, home: Home):
    done = run_serve(server_env(read_sim, home), "--transport", "http", "--host", "0.0.0.0", "--port", str(free_port()), timeout=15)
    assert done.returncode == 2, done
    assert b"PORTER_MCP_HTTP_TOKEN" in done.stderr, done.stderr


def test_http_with_a_bearer_token_refuses_requests_without_it(read_sim, home: Home, tmp_path: Path):
    env = server_env(read_sim, home, extra={"PORTER_MCP_HTTP_TOKEN": "s3cret-for-clients"})
    process, port, log = start_http(env, tmp_path)
    try:
        assert post_initialize(port, {}) == 401
        assert post_initialize(port, {"Authorization": "Bearer wrong"}) == 401
        assert post_initialize(port, {"Authorization": "Bearer s3cret-for-clients"}) == 200
    finally:
        stop_process(process)
    assert "s3cret-for-clients" not in read_log(log)


def refusal_head(port: int, headers: str) -> str:
    """The head of the answer to a POST that declares 100,000 bytes of body
    but has sent 1,000 when the server answers, lower-cased."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        raw.sendall(
            f"POST /mcp HTTP/1.1\r\n{headers}Content-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n".encode()
            + b"{" * 1000
        )
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = raw.recv(65536)
            assert chunk, answer
            answer += chunk
    return answer.split(b"\r\n\r\n")[0].decode().lower()


def test_a_refusal_sent_before_the_body_arrived_says_the_connection_closes(read_sim, home: Home, tmp_path: Path):
    # The server answers a wrong token or a foreign Host before reading the
    # body and then closes the connection; a client not told so reuses it
    # and gets "server disconnected" instead of its next answer.
    env = server_env(read_sim, home, extra={"PORTER_MCP_HTTP_TOKEN": "s3cret-for-clients"})
    process, port, _ = start_http(env, tmp_path)
    try:
        for headers in (f"Host: 127.0.0.1:{port}\r\nAuthorization: Bearer wrong\r\n",
                        "Host: evil.example.com\r\nAuthorization: Bearer s3cret-for-clients\r\n"):
            head = refusal_head(port, headers)
            assert head.startswith("http/1.1 4"), head
            assert "\r\nconnection: close" in head, head
    finally:
        stop_process(process)


def test_http_refuses_a_foreign_host_or_origin(read_sim, home: Home, tmp_path: Path):
    process, port, _ = start_http(server_env(read_sim, home), tmp_path)
    try:
        assert 400 <= post_initialize(port, {"Host": "evil.example.com"}) < 500
        assert 400 <= post_initialize(port, {"Origin": "http://evil.example.com"}) < 500
        assert post_initialize(port, {"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}) == 200
    finally:
        stop_process(process)


def test_serve_demo_starts_its_own_emulator(home: Home, tmp_path: Path):
    env = server_env(None, home)
    messages = (
        json.dumps(INITIALIZE)
        + "\n"
        + json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
        + "\n"
        + json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_me", "arguments": {}}})
        + "\n"
    )
    process = subprocess.Popen(
        [str(porter_bin()), "mattermost", "serve", "--demo"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdin and process.stdout
        process.stdin.write(messages)
        process.stdin.flush()
        deadline = time.monotonic() + 30
        answer = None
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            decoded = json.loads(line)
            if decoded.get("id") == 2:
                answer = decoded
                break
    finally:
        stop_process(process)
    assert answer is not None, process.stderr.read() if process.stderr else ""
    assert "alice" in json.dumps(answer["result"]), answer


def test_doctor_says_what_is_fine_and_what_to_fix(read_sim, home: Home):
    porter = str(porter_bin())
    fine = subprocess.run([porter, "mattermost", "doctor"], env=server_env(read_sim, home), capture_output=True, timeout=30)
    assert fine.returncode == 0, fine
    assert b"alice" in fine.stdout, fine.stdout
    assert read_sim.token.encode() not in fine.stdout + fine.stderr

    bad = subprocess.run(
        [porter, "mattermost", "doctor"],
        env=server_env(read_sim, home, extra={"MM_TOKEN": "not-a-real-token"}),
        capture_output=True,
        timeout=30,
    )
    assert bad.returncode == 2, bad
    assert b"FAIL" in bad.stdout and b"not-a-real-token" not in bad.stdout + bad.stderr, bad.stdout


WARN_LINE = re.compile(r"^\S*\s*WARN\b|\bWARN\s+\S+:", re.MULTILINE)


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_python_sdk_session_in_its_default_mode_leaves_no_warning_on_the_servers_terminal(
    read_sim, home: Home, tmp_path: Path, transport: str
):
    """The SDK's default ("auto") probes server/discover first: the probe is
    normal traffic, answered as 2026-07-28 discovery, and leaves no WARN."""
    async with serve(transport, server_env(read_sim, home), tmp_path) as served:
        assert served.client.protocol_version == "2026-07-28", served.client.protocol_version
        result = await served.client.call_tool("get_me", {})
        assert not result.is_error, text_of(result)
    log = read_log(served.stderr)
    assert "signed in" in log, f"the server logged nothing at info: nothing to check\n{log}"
    assert not WARN_LINE.search(log), log


def declared_only(port: int, length: int, wait: float) -> str:
    """Sends the head of a POST to /mcp declaring `length` body bytes and
    not one byte of the body; the status line that comes back within `wait`
    seconds, or "" while the server still waits for the body."""
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=wait) as conn:
        conn.sendall(
            (
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n\r\n"
            ).encode()
        )
        try:
            data = conn.recv(4096)
        except TimeoutError:
            return ""
    return data.decode("latin-1").split("\r\n", 1)[0]


def test_http_refuses_a_body_declared_over_the_limit_on_its_header_alone(read_sim, home: Home, tmp_path: Path):
    process, port, _ = start_http(server_env(read_sim, home), tmp_path)
    try:
        started = time.monotonic()
        status = declared_only(port, 2 * 1024**3, wait=5)
        assert " 413 " in status, status
        assert time.monotonic() - started < 5
        # At exactly the limit (4 MiB) the header passes and the server waits for the body.
        assert declared_only(port, 4 * 1024**2, wait=0.5) == ""
        assert " 413 " in declared_only(port, 4 * 1024**2 + 1, wait=5)
    finally:
        stop_process(process)
