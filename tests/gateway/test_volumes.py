"""Volumes as every tool sees them, through a real MCP client.

- A volume of another tenant, named in the profile all the same (the config
  of issue 14), is answered by the Git tool exactly like a volume that does
  not exist, over HTTP with alice's key, and nothing is written into it.
- No answer of any tool (File, its extract, import, download and upload,
  Documents, Git), failures included, names a place by its path on this
  machine: every answer says `volume:<name>:<path>`.
- A hard link planted in a volume is not read through.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness import all_text, http_client, start_http, stdio_gateway, write_config
from transfer_server import TransferServer

pytestmark = pytest.mark.anyio


def git(repo: Path, *args: str) -> str:
    env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo.parent), "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def make_repo(repo: Path, words: str) -> None:
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "fixture@example.invalid")
    git(repo, "config", "user.name", "Fixture")
    (repo / "plan.md").write_text(words)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "globex's secret plan")


def tree(root: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(root)), p.stat().st_mtime_ns if p.is_file() else 0) for p in root.rglob("*"))


async def test_git_over_http_answers_another_tenants_volume_like_a_missing_one_and_writes_nothing(tmp_path: Path) -> None:
    gx = tmp_path / "srv" / "gx"
    make_repo(gx, "globex only\n")
    (tmp_path / "srv" / "pub").mkdir()
    config = write_config(
        tmp_path,
        keys=[{"name": "alice", "key": "alice-key-1", "tenant": "acme", "role": "user", "profile": "full"}],
        extra={
            "mcp_servers": {},
            "volumes": {
                "gx": {"path": str(gx), "mode": "rw", "tenant": "globex"},
                "pub": {"path": str(tmp_path / "srv" / "pub")},
            },
            "profiles": {"full": {"grants": ["File", "Read", "Write", "HTTP", "Git"], "volumes": ["gx", "pub"]}},
            "git": {"identity": {"name": "Porter Operator", "email": "operator@example.invalid"}},
        },
    )
    before = tree(gx)
    process, url = start_http(tmp_path, config)
    try:
        async with http_client(url, "alice-key-1") as client:
            listed = await client.call_tool("File", {"op": "ls", "path": "volume:gx:"})
            assert listed.is_error and 'there is no volume "gx"' in all_text(listed), all_text(listed)
            for op, extra in [
                ("log", {}),
                ("show", {"rev": "HEAD"}),
                ("grep", {"pattern": "globex"}),
                ("status", {}),
                ("init", {}),
            ]:
                path = "newrepo" if op == "init" else ""
                foreign = await client.call_tool("Git", {"op": op, "repo": f"volume:gx:{path}", **extra})
                missing = await client.call_tool("Git", {"op": op, "repo": f"volume:zz:{path}", **extra})
                assert foreign.is_error and missing.is_error, (op, all_text(foreign))
                assert all_text(foreign).replace("gx", "X") == all_text(missing).replace("zz", "X"), op
                assert "globex" not in all_text(foreign), (op, all_text(foreign))
                assert "secret plan" not in all_text(foreign), op
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert tree(gx) == before
    assert not (gx / "newrepo").exists()


class Answers:
    """Every answer of a run, text and structured content, to scan."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.seen: list[str] = []

    async def call(self, tool: str, arguments: dict[str, Any], ok: bool | None = True) -> Any:
        result = await self.client.call_tool(tool, arguments)
        self.seen.append(f"{tool} {arguments}: " + all_text(result) + json.dumps(result.structured_content or {}))
        if ok is not None:
            assert bool(result.is_error) != ok, (tool, arguments, all_text(result))
        return result


async def test_no_answer_of_any_tool_names_a_host_path(tmp_path: Path) -> None:
    root = tmp_path / "srv"
    work = root / "work"
    docs = root / "docs"
    work.mkdir(parents=True)
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n\nSome words.\n")
    (docs / "sub").mkdir()
    make_repo(work / "project", "plan\n")
    secret = tmp_path / "elsewhere.txt"
    secret.write_text("the planted secret\n")
    os.link(secret, docs / "hard.txt")
    os.symlink(secret, docs / "soft.txt")
    config = write_config(
        tmp_path,
        extra={
            "mcp_servers": {},
            "http": {"private_hosts": ["127.0.0.1"]},
            "volumes": {"work": {"path": str(work), "mode": "rw"}, "docs": {"path": str(docs)}},
            "profiles": {
                "default": {"grants": ["File", "Read", "Write", "HTTP", "Git"], "volumes": ["work", "docs"]}
            },
            "git": {"identity": {"name": "Porter Operator", "email": "operator@example.invalid"}},
        },
    )
    with TransferServer() as server:
        async with stdio_gateway(tmp_path, config) as served:
            a = Answers(served.client)
            # File, on both volumes and the inbox.
            await a.call("File", {"op": "ls", "path": ""})
            await a.call("File", {"op": "ls", "path": "volume:docs:"})
            await a.call("File", {"op": "stat", "path": "volume:docs:guide.md"})
            await a.call("File", {"op": "read", "path": "volume:docs:guide.md"})
            await a.call("File", {"op": "read", "path": "volume:docs:sub"}, ok=False)
            await a.call("File", {"op": "read", "path": "volume:docs:none.md"}, ok=False)
            await a.call("File", {"op": "read", "path": "volume:docs:guide.md/x"}, ok=False)
            await a.call("File", {"op": "read", "path": "volume:docs:soft.txt"}, ok=False)
            hard = await a.call("File", {"op": "read", "path": "volume:docs:hard.txt"}, ok=False)
            assert "allow_hard_links" in all_text(hard), all_text(hard)
            assert "planted secret" not in all_text(hard)
            for op in ("stat", "extract", "import"):
                await a.call("File", {"op": op, "path": "volume:docs:hard.txt"}, ok=False)
            await a.call("File", {"op": "extract", "path": "volume:docs:guide.md"})
            await a.call("File", {"op": "import", "path": "volume:docs:guide.md"})
            await a.call("File", {"op": "keep", "path": "guide.md", "to": "volume:work:kept/"})
            await a.call("File", {"op": "keep", "path": "guide.md", "to": "volume:work:kept/"}, ok=False)
            await a.call("File", {"op": "keep", "path": "guide.md", "to": "volume:docs:x.md"}, ok=False)
            # download and upload.
            await a.call("File", {"op": "download", "url": f"{server.base}/files/a.pdf?size=100", "to": "volume:work:"})
            await a.call("File", {"op": "download", "url": f"{server.base}/files/a.pdf?size=100", "to": "volume:work:a.pdf"}, ok=False)
            await a.call("File", {"op": "upload", "from": "volume:work:a.pdf", "url": f"{server.base}/put/x", "method": "put"})
            await a.call("File", {"op": "upload", "from": "volume:docs:hard.txt", "url": f"{server.base}/put/y", "method": "put"}, ok=False)
            # Documents.
            await a.call("Documents", {"op": "search", "query": "words"})
            await a.call("Documents", {"op": "list"})
            # Git, reads, changes and failures.
            repo = "volume:work:project"
            await a.call("Git", {"op": "status", "repo": repo})
            await a.call("Git", {"op": "log", "repo": repo})
            await a.call("Git", {"op": "init", "repo": "volume:work:fresh"})
            await a.call("Git", {"op": "init", "repo": "volume:work:fresh"}, ok=None)
            await a.call("Git", {"op": "log", "repo": "volume:work:kept"}, ok=False)
            await a.call("Git", {"op": "status", "repo": "volume:work:nothing/here"}, ok=False)
            await a.call("Git", {"op": "add", "repo": repo, "paths": ["missing.txt"]}, ok=None)
            await a.call("Git", {"op": "blame", "repo": repo, "path": "missing.txt"}, ok=False)
            (work / "project" / "linked.txt").symlink_to(secret)
            os.link(secret, work / "project" / "hard.txt")
            await a.call("Git", {"op": "diff", "repo": repo}, ok=False)
            await a.call("Git", {"op": "clone", "repo": "volume:work:app", "url": "https://127.0.0.1:1/x.git"}, ok=False)
            await a.call("Git", {"op": "show", "repo": repo, "rev": "nope"}, ok=False)
    places = {str(p) for p in (tmp_path, root, work, docs, tmp_path / "data", secret)}
    places |= {os.path.realpath(p) for p in places}
    for answer in a.seen:
        for place in places:
            assert place not in answer, f"{place} in {answer}"
    joined = "\n".join(a.seen)
    assert "volume:work:fresh" in joined, joined
