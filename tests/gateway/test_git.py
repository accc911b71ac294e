"""The Git tool through the gateway with a real MCP client: a repository in
a read-write volume (made by real git, in the fixture only), read and change
ops from the model, and the commit's trailer checked by real git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness import all_text, stdio_gateway, write_config

pytestmark = pytest.mark.anyio


def git(repo: Path, *args: str) -> str:
    env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo.parent), "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def make_repo(root: Path) -> Path:
    repo = root / "work" / "project"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "fixture@example.invalid")
    git(repo, "config", "user.name", "Fixture")
    (repo / "README.md").write_text("# Project\n\nThe needle is here.\n")
    (repo / "src").mkdir()
    (repo / "src" / "lib.rs").write_text("pub fn answer() -> u32 { 42 }\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "First commit")
    return repo


async def test_git_reads_and_commits_in_a_volume_with_the_run_trailer(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    config = write_config(
        tmp_path,
        extra={
            "volumes": {"work": {"path": str(tmp_path / "work"), "mode": "rw"}},
            "profiles": {"default": {"grants": ["File", "Read", "Write", "Git"], "volumes": ["work"]}},
            "git": {"identity": {"name": "Porter Operator", "email": "operator@example.invalid"}},
        },
    )
    async with stdio_gateway(tmp_path, config) as served:
        tools = {tool.name for tool in (await served.client.list_tools()).tools}
        assert "Git" in tools
        log = await served.client.call_tool("Git", {"op": "log", "repo": "volume:work:project"})
        assert not log.is_error, all_text(log)
        assert "First commit" in all_text(log)
        grep = await served.client.call_tool("Git", {"op": "grep", "repo": "volume:work:project", "pattern": "nee+dle"})
        assert "README.md" in all_text(grep) and "needle" in all_text(grep)

        (repo / "NOTES.md").write_text("notes\n")
        added = await served.client.call_tool("Git", {"op": "add", "repo": "volume:work:project", "paths": ["NOTES.md"]})
        assert not added.is_error, all_text(added)
        commit = await served.client.call_tool(
            "Git", {"op": "commit", "repo": "volume:work:project", "message": "Add notes"}
        )
        assert not commit.is_error, all_text(commit)

        # Paths that leave the repository are refused, and nothing is written.
        escape = await served.client.call_tool("Git", {"op": "add", "repo": "volume:work:project", "paths": ["../x"]})
        assert escape.is_error
        hostile = await served.client.call_tool("Git", {"op": "add", "repo": "volume:work:project", "paths": [".git/config"]})
        assert hostile.is_error

    message = git(repo, "log", "-1", "--format=%B")
    assert message.startswith("Add notes")
    import re

    assert re.search(r"^Porter-Run: [0-9a-f-]{36}$", message, re.M), message
    assert git(repo, "log", "-1", "--format=%an <%ae>").strip() == "Porter Operator <operator@example.invalid>"
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["NOTES.md"]


async def test_git_needs_its_grant_and_network_ops_need_git_remote(tmp_path: Path) -> None:
    make_repo(tmp_path)
    config = write_config(
        tmp_path,
        extra={
            "volumes": {"work": {"path": str(tmp_path / "work"), "mode": "rw"}},
            "profiles": {"default": {"grants": ["File", "Read"], "volumes": ["work"]}},
        },
    )
    async with stdio_gateway(tmp_path, config) as served:
        refused = await served.client.call_tool("Git", {"op": "log", "repo": "volume:work:project"})
        assert refused.is_error and "Git grant" in all_text(refused)
