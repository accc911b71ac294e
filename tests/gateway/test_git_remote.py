"""The Git tool's network ops through the gateway with a real MCP client:
clone, commit, push, fetch, pull and ls_remote against a loopback https
smart-HTTP server (`tests/git/https_server.py`: `git http-backend` behind
TLS with a test CA the config trusts through `http.ca_files`). Real git
runs in the fixture only; what the server received is read back from its
request log and its bare repositories."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness import REPO, all_text, stdio_gateway, write_config

pytestmark = pytest.mark.anyio

TOKEN = "tok-9f3e1c2b7a"


def git(cwd: Path, *args: str) -> str:
    env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd), "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def fixture_repo(root: Path, work: Path) -> None:
    """A new repository at `work` (made from `root`) on main, whose commits
    are the fixture's."""
    git(root, "init", "-q", "-b", "main", str(work))
    git(work, "config", "user.email", "fixture@example.invalid")
    git(work, "config", "user.name", "Fixture")


def push_all(work: Path, message: str, bare: Path, branch: str = "main") -> None:
    """Commits everything in `work` and pushes `branch` to `bare`, by real git."""
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", message)
    git(work, "push", "-q", str(bare), branch)


@dataclass
class GitServer:
    root: Path
    port: int

    def url(self, name: str) -> str:
        return f"https://127.0.0.1:{self.port}/{name}"

    def bare(self, name: str) -> Path:
        return self.root / "repos" / name

    def requests(self) -> list[str]:
        log = self.root / "requests.log"
        return log.read_text().splitlines() if log.exists() else []

    def seed(self, name: str) -> None:
        """A bare repository `name` with one commit on main, pushable."""
        bare = self.bare(name)
        git(self.root, "init", "-q", "--bare", "-b", "main", str(bare))
        git(bare, "config", "http.receivepack", "true")
        seed = self.root / f"seed-{name}"
        fixture_repo(self.root, seed)
        (seed / "hello.txt").write_text("hello from the server\n")
        push_all(seed, "seed", bare)

    def advance(self, name: str, file: str, text: str) -> str:
        """A new commit on the server's main, made by real git."""
        seed = self.root / f"seed-{name}"
        git(seed, "pull", "-q", str(self.bare(name)), "main")
        (seed / file).write_text(text)
        push_all(seed, f"server adds {file}", self.bare(name))
        return git(seed, "rev-parse", "HEAD").strip()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[GitServer]:
    root = tmp_path / "server"
    root.mkdir()
    python = os.environ.get("PORTER_PYTHON", sys.executable)
    proc = subprocess.Popen(
        [python, str(REPO / "tests" / "git" / "https_server.py"), str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("port "), f"the git server did not start: {line!r}"
        yield GitServer(root=root, port=int(line.split()[1]))
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)


def config_for(tmp_path: Path, server: GitServer, remote: list[str], **git: Any) -> Path:
    """The gateway's config: a `work` volume, the git server trusted, and the
    `git` section (fields of `git` added or put in place)."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return write_config(
        tmp_path,
        extra={
            "volumes": {"work": {"path": str(work), "mode": "rw"}},
            "profiles": {
                "default": {"grants": ["File", "Read", "Write", "Git"], "volumes": ["work"], "git_remote": remote}
            },
            "http": {"private_hosts": ["127.0.0.1"], "ca_files": [str(server.root / "ca.pem")]},
            "git": {
                "fetch_hosts": ["127.0.0.1"],
                "push_hosts": ["127.0.0.1"],
                "identity": {"name": "Porter Operator", "email": "operator@example.invalid"},
                "credentials": [
                    {"name": "forge", "allowed_urls": [server.url("project.git")], "token": "${GIT_TEST_TOKEN}"}
                ],
                **git,
            },
        },
    )


async def clone(call: Any, repo: str, url: str) -> Any:
    """The Git tool's clone of `url` into `repo`, which must succeed."""
    cloned = await call("Git", {"op": "clone", "repo": repo, "url": url})
    assert not cloned.is_error, all_text(cloned)
    return cloned


async def commit_file(call: Any, work: Path, repo: str, name: str, text: str, **commit: Any) -> Any:
    """Writes `name` into the clone at `work`, then adds and commits it with
    the Git tool (`commit`: the commit's arguments); the commit's answer."""
    (work / name).write_text(text)
    await call("Git", {"op": "add", "repo": repo, "paths": [name]})
    return await call("Git", {"op": "commit", "repo": repo, **commit})


async def test_clone_commit_push_fetch_and_pull_go_through_the_gateway(tmp_path: Path, server: GitServer) -> None:
    server.seed("project.git")
    server.seed("other.git")
    config = config_for(tmp_path, server, ["fetch", "push"])
    repo = "volume:work:project"
    async with stdio_gateway(tmp_path, config, env={"GIT_TEST_TOKEN": TOKEN}) as served:
        call = served.client.call_tool
        cloned = await clone(call, repo, server.url("project.git"))
        assert "on branch main" in all_text(cloned)
        assert (tmp_path / "work" / "project" / "hello.txt").read_text() == "hello from the server\n"

        (tmp_path / "work" / "project" / "notes.md").write_text("from the model\n")
        added = await call("Git", {"op": "add", "repo": repo, "paths": ["notes.md"]})
        assert not added.is_error, all_text(added)
        committed = await call("Git", {"op": "commit", "repo": repo, "message": "Add notes"})
        assert not committed.is_error, all_text(committed)
        pushed = await call("Git", {"op": "push", "repo": repo})
        assert not pushed.is_error, all_text(pushed)

        # The server's main is our commit, by the operator, with the trailer.
        ours = git(tmp_path / "work" / "project", "rev-parse", "HEAD").strip()
        assert git(server.bare("project.git"), "rev-parse", "main").strip() == ours
        message = git(server.bare("project.git"), "log", "-1", "--format=%an%n%B", "main")
        assert message.startswith("Porter Operator\nAdd notes")
        assert "Porter-Run: " in message

        # The server moves on; fetch sees it, pull fast-forwards to it.
        theirs = server.advance("project.git", "server.txt", "later\n")
        listed = await call("Git", {"op": "ls_remote", "repo": repo})
        assert not listed.is_error, all_text(listed)
        assert theirs in all_text(listed)
        fetched = await call("Git", {"op": "fetch", "repo": repo})
        assert not fetched.is_error, all_text(fetched)
        pulled = await call("Git", {"op": "pull", "repo": repo})
        assert not pulled.is_error, all_text(pulled)
        assert git(tmp_path / "work" / "project", "rev-parse", "HEAD").strip() == theirs
        assert (tmp_path / "work" / "project" / "server.txt").read_text() == "later\n"

        # A repository the credential does not cover is cloned without it.
        other = await clone(call, "volume:work:other", server.url("other.git"))

        # Every answer is free of the token.
        for result in (cloned, added, committed, pushed, listed, fetched, pulled, other):
            assert TOKEN not in all_text(result)

    requests = server.requests()
    project = [r for r in requests if "/project.git/" in r]
    others = [r for r in requests if "/other.git/" in r]
    assert any("git-receive-pack" in r for r in project), requests
    assert project and all(" Basic " in r for r in project), project
    assert others and all(r.endswith(" -") for r in others), others
    # The token is in no log, transcript or record the gateway wrote.
    assert TOKEN not in served.stderr.read_text()
    for path in served.data.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path


async def test_a_fetch_only_profile_clones_but_cannot_push(tmp_path: Path, server: GitServer) -> None:
    server.seed("project.git")
    before = git(server.bare("project.git"), "rev-parse", "main").strip()
    config = config_for(tmp_path, server, ["fetch"])
    repo = "volume:work:project"
    async with stdio_gateway(tmp_path, config, env={"GIT_TEST_TOKEN": TOKEN}) as served:
        call = served.client.call_tool
        await clone(call, repo, server.url("project.git"))
        committed = await commit_file(call, tmp_path / "work" / "project", repo, "x.txt", "x\n", message="x")
        assert not committed.is_error, all_text(committed)
        pushed = await call("Git", {"op": "push", "repo": repo})
        assert pushed.is_error
        assert "may not push" in all_text(pushed), all_text(pushed)
        # A host off the fetch list is refused before any request.
        far = await call("Git", {"op": "clone", "repo": "volume:work:far", "url": "https://localhost:1/x.git"})
        assert far.is_error and "refused by policy" in all_text(far), all_text(far)
    assert git(server.bare("project.git"), "rev-parse", "main").strip() == before
    assert not any("git-receive-pack" in r for r in server.requests())
    assert not (tmp_path / "work" / "far").exists()


def make_superproject(server: GitServer, name: str, url: str) -> None:
    """A bare `name` whose main has `.gitmodules` naming submodule lib at
    `url` and a gitlink to sub.git's main commit (made by real git)."""
    sub_head = git(server.bare("sub.git"), "rev-parse", "main").strip()
    bare = server.bare(name)
    git(server.root, "init", "-q", "--bare", "-b", "main", str(bare))
    work = server.root / f"seed-{name}"
    fixture_repo(server.root, work)
    (work / ".gitmodules").write_text(f'[submodule "lib"]\n\tpath = lib\n\turl = {url}\n')
    (work / "top.txt").write_text("the superproject\n")
    git(work, "add", ".gitmodules", "top.txt")
    git(work, "update-index", "--add", "--cacheinfo", f"160000,{sub_head},lib")
    git(work, "commit", "-q", "-m", "superproject with lib")
    git(work, "push", "-q", str(bare), "main")


def ed25519_key(path: Path) -> str:
    """An unencrypted OpenSSH ed25519 key written to `path`; its public line."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    key = ed25519.Ed25519PrivateKey.generate()
    path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption())
    )
    path.chmod(0o600)
    return key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()


def verify(repo: Path, what: str, rev: str, signers: Path) -> subprocess.CompletedProcess[str]:
    env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        ["git", "-c", "gpg.format=ssh", "-c", f"gpg.ssh.allowedSignersFile={signers}", what, rev],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )


async def test_submodules_update_through_the_gateway_and_a_hostile_url_is_refused(
    tmp_path: Path, server: GitServer
) -> None:
    server.seed("sub.git")
    make_superproject(server, "super.git", "../sub.git")
    make_superproject(server, "evil.git", "ext::sh -c touch% pwned")
    config = config_for(tmp_path, server, ["fetch"])
    async with stdio_gateway(tmp_path, config, env={"GIT_TEST_TOKEN": TOKEN}) as served:
        call = served.client.call_tool
        for name in ("super", "evil"):
            await clone(call, f"volume:work:{name}", server.url(f"{name}.git"))
        updated = await call("Git", {"op": "submodule_update", "repo": "volume:work:super"})
        assert not updated.is_error, all_text(updated)
        assert "lib" in all_text(updated) and "cloned" in all_text(updated)
        refused = await call("Git", {"op": "submodule_update", "repo": "volume:work:evil"})
        assert refused.is_error and "refused by policy" in all_text(refused), all_text(refused)

    work = tmp_path / "work"
    assert (work / "super" / "lib" / "hello.txt").read_text() == "hello from the server\n"
    sub_head = git(server.bare("sub.git"), "rev-parse", "main").strip()
    assert git(work / "super" / "lib", "rev-parse", "HEAD").strip() == sub_head
    assert git(work / "super", "status", "--porcelain") == ""
    assert not (work / "evil" / ".git" / "modules").exists()
    assert not any(p.name == "pwned" for p in tmp_path.rglob("*"))


async def test_signed_commits_and_tags_verify_with_real_git(tmp_path: Path, server: GitServer) -> None:
    server.seed("project.git")
    key_file = tmp_path / "signing-key"
    public = ed25519_key(key_file)
    signers = tmp_path / "allowed_signers"
    signers.write_text(f"operator@example.invalid {public}\n")
    config = config_for(tmp_path, server, ["fetch"], signing={"key_file": str(key_file)})
    repo = "volume:work:project"
    project = tmp_path / "work" / "project"
    async with stdio_gateway(tmp_path, config, env={"GIT_TEST_TOKEN": TOKEN}) as served:
        call = served.client.call_tool
        await clone(call, repo, server.url("project.git"))
        committed = await commit_file(call, project, repo, "signed.txt", "signed\n", message="Signed change", sign=True)
        assert not committed.is_error, all_text(committed)
        assert f"signed_by: {' '.join(public.split()[:2])}" in all_text(committed), all_text(committed)
        tagged = await call(
            "Git", {"op": "tag_create", "repo": repo, "name": "v1", "message": "Release 1", "sign": True}
        )
        assert not tagged.is_error, all_text(tagged)
        assert "signed_by:" in all_text(tagged)
        unsigned = await commit_file(call, project, repo, "plain.txt", "plain\n", message="Unsigned change")
        assert not unsigned.is_error and "signed_by" not in all_text(unsigned), all_text(unsigned)
    # The unsigned commit does not verify; the signed one under it does.
    assert verify(project, "verify-commit", "HEAD", signers).returncode != 0
    assert verify(project, "verify-commit", "HEAD~1", signers).returncode == 0
    assert verify(project, "verify-tag", "v1", signers).returncode == 0
    # Trusting another key instead, the same tag and commit do not verify.
    stranger = tmp_path / "stranger"
    signers.write_text(f"operator@example.invalid {ed25519_key(stranger)}\n")
    assert verify(project, "verify-tag", "v1", signers).returncode != 0
    assert verify(project, "verify-commit", "HEAD~1", signers).returncode != 0
    assert "PRIVATE KEY" not in served.stderr.read_text()


async def test_a_push_uses_a_github_app_token_minted_for_it_alone(tmp_path: Path, server: GitServer) -> None:
    server.seed("app-project.git")
    app = {
        "name": "the-app",
        "allowed_urls": [server.url("app-project.git")],
        "github_app": {
            "app_id": 4242,
            "installation_id": 77,
            "private_key_file": str(server.root / "app.pem"),
            "base_url": f"https://127.0.0.1:{server.port}/api/v3",
        },
    }
    config = config_for(tmp_path, server, ["fetch", "push"], credentials=[app])
    repo = "volume:work:app"
    async with stdio_gateway(tmp_path, config) as served:
        call = served.client.call_tool
        await clone(call, repo, server.url("app-project.git"))
        minted_before_push = [r for r in server.requests() if "/access_tokens" in r]
        work = tmp_path / "work" / "app"
        committed = await commit_file(call, work, repo, "change.txt", "pushed with an app token\n", message="App push")
        assert not committed.is_error, all_text(committed)
        pushed = await call("Git", {"op": "push", "repo": repo})
        assert not pushed.is_error, all_text(pushed)
    assert minted_before_push == []
    requests = server.requests()
    assert len([r for r in requests if "/access_tokens" in r]) == 1, requests
    pushes = [r for r in requests if "receive-pack" in r]
    assert pushes and all(" Basic " in r for r in pushes), pushes
    fetches = [r for r in requests if "upload-pack" in r]
    assert fetches and all(r.endswith(" -") for r in fetches), fetches
    ours = git(tmp_path / "work" / "app", "rev-parse", "HEAD").strip()
    assert git(server.bare("app-project.git"), "rev-parse", "main").strip() == ours


async def test_checkout_of_a_remote_branch_tracks_it_and_other_schemes_are_refused_as_not_https(
    tmp_path: Path, server: GitServer
) -> None:
    server.seed("project.git")
    seed = server.root / "seed-project.git"
    git(seed, "checkout", "-q", "-b", "swap")
    (seed / "swap.txt").write_text("swapped\n")
    push_all(seed, "swap work", server.bare("project.git"), "swap")
    swap_tip = git(seed, "rev-parse", "HEAD").strip()
    config = config_for(tmp_path, server, ["fetch"])
    repo = "volume:work:project"
    work = tmp_path / "work" / "project"
    async with stdio_gateway(tmp_path, config, env={"GIT_TEST_TOKEN": TOKEN}) as served:
        call = served.client.call_tool
        cloned = await clone(call, repo, server.url("project.git"))
        # The answer names the folder as the model knows it.
        assert "volume:work:project" in all_text(cloned), all_text(cloned)
        assert str(tmp_path) not in all_text(cloned), all_text(cloned)

        # As `git checkout swap` does: a new branch swap tracking origin/swap.
        switched = await call("Git", {"op": "checkout", "repo": repo, "rev": "swap"})
        assert not switched.is_error, all_text(switched)
        assert git(work, "symbolic-ref", "HEAD").strip() == "refs/heads/swap"
        assert git(work, "rev-parse", "HEAD").strip() == swap_tip
        assert git(work, "rev-parse", "--abbrev-ref", "swap@{upstream}").strip() == "origin/swap"
        assert (work / "swap.txt").read_text() == "swapped\n"

        # Another scheme is refused, saying that only https is used.
        for url in ("ssh://git@127.0.0.1/project.git", "git://127.0.0.1/project.git", "file:///srv/project.git"):
            listed = await call("Git", {"op": "ls_remote", "repo": repo, "url": url})
            assert listed.is_error
            assert "only https remotes are used" in all_text(listed), all_text(listed)
    # The refusal's detail reached the operator's log, by default, on its own target.
    log = served.stderr.read_text()
    audit = [line for line in log.splitlines() if "porter::audit" in line]
    assert any("remote refused by policy" in line for line in audit), log
    assert any("git network operation" in line and "forge" in line for line in audit), log
