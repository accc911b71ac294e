"""File download and upload through the gateway, against loopback servers.

Each test starts `porter gateway serve` over stdio (the Python `mcp` SDK as
client) with a config that lets 127.0.0.1 through the private-address guard
and caps one file at 4 MiB, and checks both ends: what the client got, and
what the server received or what is on disk. Every URL carries a secret in
its query; at the end of each test no result, file under the data dir (the
SQLite records, the transcript) or line of stderr may hold it.
"""

from __future__ import annotations

import hashlib
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from harness import NOT_KEPT, STUB, Served, all_text, bucket_keys, each_backend, stdio_gateway, write_config
from transfer_server import GRAPH_ALIGN, TransferServer, blob, body_for

pytestmark = pytest.mark.anyio

SECRET = "sig-0f8a7c2e9d41b6"
FILE_MAX = 4 * 1024 * 1024


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def config(root: Path, hooks: dict[str, Any] | None = None) -> Path:
    (root / "out").mkdir(parents=True, exist_ok=True)
    (root / "src").mkdir(exist_ok=True)
    extra: dict[str, Any] = {
        "mcp_servers": {},
        "http": {"private_hosts": ["127.0.0.1"]},
        "limits": {"file_max_bytes": FILE_MAX},
        "volumes": {
            "out": {"path": str(root / "out"), "mode": "rw"},
            "src": {"path": str(root / "src"), "mode": "ro"},
        },
        "profiles": {"default": {"grants": ["File", "HTTP", "Read", "Write"], "volumes": ["out", "src"]}},
    }
    if hooks:
        extra["hooks"] = hooks
    return write_config(root, extra=extra)


class Calls:
    """Calls the File tool and keeps every answer, to grep them for the secret."""

    def __init__(self, served: Served) -> None:
        self.served = served
        self.answers: list[str] = []

    async def file(self, **arguments: Any):
        result = await self.served.client.call_tool("File", arguments)
        self.answers.append(all_text(result) + json.dumps(result.structured_content or {}))
        return result


def assert_secret_nowhere(root: Path, calls: Calls) -> None:
    for answer in calls.answers:
        assert SECRET not in answer, answer
    for path in root.rglob("*"):
        if path.is_file() and path.name != "porter.yaml":
            assert SECRET.encode() not in path.read_bytes(), f"the secret is in {path}"


def inbox_files(root: Path) -> list[Path]:
    return [p for p in (root / "data" / "runs").glob("*/inbox/**/*") if p.is_file()]


def staged_files(root: Path) -> list[Path]:
    return [p for p in (root / "data" / "runs").glob("*/.staging/*") if p.is_file()]


@each_backend
async def test_a_download_lands_in_the_inbox_named_by_its_headers_and_redirects_stay_on_the_host(tmp_path: Path) -> None:
    with TransferServer() as server:
        async with stdio_gateway(tmp_path, config(tmp_path)) as served:
            calls = Calls(served)
            tools = {tool.name: tool for tool in (await served.client.list_tools()).tools}
            assert "download" in json.dumps(tools["File"].input_schema)

            result = await calls.file(op="download", url=f"{server.base}/files/x.bin?size=300000&cd=Q3%20report.pdf&sig={SECRET}")
            assert not result.is_error, all_text(result)
            stub = STUB.search(all_text(result))
            assert stub, all_text(result)
            assert stub["path"] == "Q3-report.pdf"
            assert stub["type"] == "application/pdf"
            assert stub["origin"] == "file:download"
            kept = served.inbox_file(stub["path"]).read_bytes()
            assert sha256(kept) == sha256(body_for(300000, "application/pdf"))
            assert result.structured_content["sha256"] == sha256(kept)

            # A redirect within the host is followed; the name comes from the final URL.
            result = await calls.file(op="download", url=f"{server.base}/redirect/same?to=/files/moved.pdf&sig={SECRET}")
            assert not result.is_error, all_text(result)
            assert STUB.search(all_text(result))["path"] == "moved.pdf"

            # A redirect to another host is refused, and nothing is kept.
            before = inbox_files(tmp_path)
            result = await calls.file(op="download", url=f"{server.base}/redirect/other?sig={SECRET}")
            assert result.is_error
            assert "another host" in all_text(result) and "localhost" in all_text(result)
            assert inbox_files(tmp_path) == before
            assert not any(r.path.startswith("/files/elsewhere") for r in server.requests)
        assert_secret_nowhere(tmp_path, calls)
        assert SECRET not in served.stderr.read_text()


@each_backend
async def test_a_download_over_the_cap_leaves_nothing_whether_announced_or_not(tmp_path: Path) -> None:
    with TransferServer() as server:
        async with stdio_gateway(tmp_path, config(tmp_path)) as served:
            calls = Calls(served)
            announced = await calls.file(op="download", url=f"{server.base}/files/big.bin?size={FILE_MAX + 1}&sig={SECRET}")
            assert announced.is_error
            assert NOT_KEPT.search(all_text(announced)), all_text(announced)
            assert "nothing of it was left behind" in all_text(announced)

            grown = await calls.file(op="download", url=f"{server.base}/grow?size={FILE_MAX + 700_000}&sig={SECRET}")
            assert grown.is_error
            assert NOT_KEPT.search(all_text(grown)), all_text(grown)

            into_volume = await calls.file(
                op="download", url=f"{server.base}/grow?size={FILE_MAX + 700_000}&sig={SECRET}", to="volume:out:big.bin"
            )
            assert into_volume.is_error and "limit for one file" in all_text(into_volume), all_text(into_volume)

            assert inbox_files(tmp_path) == []
            assert staged_files(tmp_path) == []
            assert bucket_keys() == [], "nothing in the bucket either (on S3)"
            assert list((tmp_path / "out").iterdir()) == []
        assert_secret_nowhere(tmp_path, calls)


async def test_credential_headers_and_a_missing_grant_are_refused_before_anything_is_sent(tmp_path: Path) -> None:
    with TransferServer() as server:
        async with stdio_gateway(tmp_path, config(tmp_path)) as served:
            calls = Calls(served)
            for header in ("Authorization", "X-Api-Key", "Cookie", "X-Auth-Token"):
                result = await calls.file(
                    op="download", url=f"{server.base}/files/a.pdf?sig={SECRET}", headers={header: "token-value-123"}
                )
                assert result.is_error
                assert "looks like a credential" in all_text(result), all_text(result)
                assert "token-value-123" not in all_text(result)
            ok = await calls.file(op="download", url=f"{server.base}/files/a.pdf?size=10&sig={SECRET}", headers={"Accept": "application/pdf"})
            assert not ok.is_error, all_text(ok)
            [request] = [r for r in server.requests]
            assert request.headers.get("accept") == "application/pdf"
            assert SECRET in request.path  # the secret really travelled, so its absence below means something
        assert_secret_nowhere(tmp_path, calls)

    # Without the HTTP grant neither op runs.
    root = tmp_path / "nogrant"
    path = config(root)
    settings = json.loads(path.read_text())
    settings["profiles"]["default"]["grants"] = ["File", "Read", "Write"]
    path.write_text(json.dumps(settings))
    with TransferServer() as server:
        async with stdio_gateway(root, path) as served:
            result = await served.client.call_tool("File", {"op": "download", "url": f"{server.base}/files/a.pdf"})
            assert result.is_error and "HTTP grant" in all_text(result)
        assert server.requests == []


async def test_a_download_into_a_volume_is_renamed_in_and_never_overwrites(tmp_path: Path) -> None:
    with TransferServer() as server:
        async with stdio_gateway(tmp_path, config(tmp_path)) as served:
            calls = Calls(served)
            result = await calls.file(op="download", url=f"{server.base}/files/data.bin?size=123456&type=application/octet-stream&sig={SECRET}", to="volume:out:deep/")
            assert not result.is_error, all_text(result)
            saved = tmp_path / "out" / "deep" / "data.bin"
            assert sha256(saved.read_bytes()) == sha256(body_for(123456, "application/octet-stream"))
            assert "volume:out:deep/data.bin" in all_text(result)

            again = await calls.file(op="download", url=f"{server.base}/files/data.bin?size=10&sig={SECRET}", to="volume:out:deep/data.bin")
            assert again.is_error and "already exists" in all_text(again)
            assert saved.stat().st_size == 123456

            readonly = await calls.file(op="download", url=f"{server.base}/files/data.bin?sig={SECRET}", to="volume:src:x.bin")
            assert readonly.is_error and "read-only" in all_text(readonly)
            assert sorted(p.name for p in (tmp_path / "out" / "deep").iterdir()) == ["data.bin"]
        assert_secret_nowhere(tmp_path, calls)


async def test_progress_notifications_reach_the_client_during_a_slow_download(tmp_path: Path) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    size = 3 * 1024 * 1024
    with TransferServer() as server:
        async with stdio_gateway(tmp_path, config(tmp_path)) as served:
            result = await served.client.call_tool(
                "File", {"op": "download", "url": f"{server.base}/slow?size={size}&sig={SECRET}"}, progress_callback=on_progress
            )
            assert not result.is_error, all_text(result)
    assert len(seen) >= 3, seen
    assert [p for p, _, _ in seen] == sorted(p for p, _, _ in seen)
    assert seen[-1][0] == size and seen[-1][1] == size
    assert all(SECRET not in (m or "") for _, _, m in seen)


async def test_put_and_post_stream_the_file_and_a_redirect_is_reported_not_followed(tmp_path: Path) -> None:
    source = blob(1_500_000, seed=11)
    with TransferServer() as server:
        (tmp_path / "src").mkdir(parents=True)
        (tmp_path / "src" / "report.bin").write_bytes(source)
        async with stdio_gateway(tmp_path, config(tmp_path)) as served:
            calls = Calls(served)
            for method in ("put", "POST"):
                result = await calls.file(op="upload", **{"from": "volume:src:report.bin"}, url=f"{server.base}/put/{method}?sig={SECRET}", method=method)
                assert not result.is_error, all_text(result)
                assert sha256(source) in all_text(result)
                assert server.uploads[f"/put/{method}"] == source
            [post] = [r for r in server.sent_to("/put/POST")]
            assert post.method == "POST" and post.size == len(source)

            redirected = await calls.file(op="upload", **{"from": "volume:src:report.bin"}, url=f"{server.base}/put-redirect?sig={SECRET}", method="put")
            assert redirected.is_error
            assert "307" in all_text(redirected) and "never follow redirects" in all_text(redirected)
            assert "/put/redirected" not in server.uploads
            assert "another-secret-value" not in all_text(redirected)
        assert_secret_nowhere(tmp_path, calls)


async def test_a_graph_upload_session_gets_aligned_chunks_and_resumes_after_a_failed_one(tmp_path: Path) -> None:
    size = 7 * 1024 * 1024 + 12345  # three chunks of 10 × 320 KiB, the last one short
    source = blob(size, seed=5)
    with TransferServer() as server:
        # The server refuses a chunk that is not a multiple of 320 KiB, as Graph does.
        request = urllib.request.Request(
            f"{server.base}/graph/probe", data=b"x" * 1000, method="PUT", headers={"Content-Range": f"bytes 0-999/{size}"}
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request)
        assert refused.value.code == 400

        (tmp_path / "src").mkdir(parents=True)
        (tmp_path / "src" / "big.bin").write_bytes(source)
        seen: list[float] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append(progress)

        async with stdio_gateway(tmp_path, config(tmp_path)) as served:
            result = await served.client.call_tool(
                "File",
                {"op": "upload", "from": "volume:src:big.bin", "url": f"{server.base}/graph/session1?tempauth={SECRET}", "method": "graph"},
                progress_callback=on_progress,
            )
            assert not result.is_error, all_text(result)
            assert "201" in all_text(result)
            assert SECRET not in all_text(result)
        session = server.graph["/graph/session1"]
        assert session.done and session.failed_once
        assert sha256(bytes(session.received)) == sha256(source)
        chunks = [r for r in server.sent_to("/graph/session1")]
        for chunk in chunks[:-1]:
            assert chunk.size % GRAPH_ALIGN == 0, chunk.headers["Content-Range"]
        # Three chunks and one retry of the one that failed.
        assert len(chunks) == 4, [c.headers["Content-Range"] for c in chunks]
        assert any(r.method == "GET" and r.path.startswith("/graph/session1") for r in server.requests)
        assert seen and seen[-1] == size
        assert SECRET not in served.stderr.read_text()


async def test_a_hook_sees_size_and_hash_never_the_bytes_and_its_refusal_sends_nothing(tmp_path: Path) -> None:
    seen = tmp_path / "hook-seen.jsonl"
    hook = tmp_path / "hook.sh"
    hook.write_text(
        "#!/bin/sh\n"
        f"input=$(cat); echo \"$input\" >> '{seen}'\n"
        "case \"$input\" in *'\"method\":\"post\"'*) echo 'posts are not allowed from this run' >&2; exit 1;; esac\n"
        "exit 0\n"
    )
    hook.chmod(0o755)
    canary = b"CANARY-CONTENT-" * 1000
    with TransferServer() as server:
        (tmp_path / "src").mkdir(parents=True)
        (tmp_path / "src" / "note.txt").write_bytes(canary)
        async with stdio_gateway(tmp_path, config(tmp_path, hooks={"command": [str(hook)]})) as served:
            calls = Calls(served)
            refused = await calls.file(op="upload", **{"from": "volume:src:note.txt"}, url=f"{server.base}/put/no?sig={SECRET}", method="post")
            assert refused.is_error
            assert "posts are not allowed from this run" in all_text(refused)
            assert server.requests == []

            allowed = await calls.file(op="upload", **{"from": "volume:src:note.txt"}, url=f"{server.base}/put/yes?sig={SECRET}", method="put")
            assert not allowed.is_error, all_text(allowed)
            assert server.uploads["/put/yes"] == canary

            downloaded = await calls.file(op="download", url=f"{server.base}/files/a.pdf?size=10&sig={SECRET}")
            assert not downloaded.is_error, all_text(downloaded)
        lines = [json.loads(line) for line in seen.read_text().splitlines()]
        assert [line["op"] for line in lines] == ["upload", "upload", "download"]
        assert lines[0] == {
            "op": "upload",
            "from": "volume:src:note.txt",
            "size": len(canary),
            "sha256": sha256(canary),
            "url": f"{server.base}/put/no?…",
            "method": "post",
        }
        assert lines[2] == {"op": "download", "url": f"{server.base}/files/a.pdf?…", "to": "volume:inbox:"}
        assert b"CANARY" not in seen.read_bytes()
        assert_secret_nowhere(tmp_path, calls)
