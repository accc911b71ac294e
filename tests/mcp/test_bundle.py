"""The MCP Bundle and the registry entry that scripts/bundle makes: the
official CLI (npm @anthropic-ai/mcpb) validates, packs and unpacks it, the
official library resolves the command a host would start from its manifest,
and that command, started as a host would, serves the emulator to the Python
`mcp` client."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from harness import REPO, Mmsim, porter_bin, text_of, write_seed

pytestmark = pytest.mark.anyio

MCPB = REPO / "packaging" / "node_modules" / ".bin" / "mcpb"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> tuple[Path, Path, Path]:
    """The porter under test without its debug sections (a test build's are
    two thirds of its 500 MB, and zipping them was most of this module's
    time; the code is the very same), and the bundle and registry entry
    scripts/bundle makes of it. Made once per run: the xdist workers that
    get tests of this module share it, under a lock."""
    base = tmp_path_factory.getbasetemp()
    # Under xdist each worker's base is a folder of the run's own one.
    shared = (base.parent if worker_id != "master" else base) / "bundle"
    shared.mkdir(exist_ok=True)
    with open(shared / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        made = shared / "made.json"
        if made.exists():
            return tuple(Path(p) for p in json.loads(made.read_text()))
        stripped = shared / "porter"
        done = subprocess.run(["strip", "-o", str(stripped), str(porter_bin())], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"strip (binutils) is needed to bundle a test build: {done.stderr}"
        done = subprocess.run(
            [str(REPO / "scripts" / "bundle"), "--binary", str(stripped), "--out", str(shared / "out")],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert "Manifest schema validation passes" in done.stdout
        mcpb, server_json = (Path(line) for line in done.stdout.strip().splitlines()[-2:])
        made.write_text(json.dumps([str(stripped), str(mcpb), str(server_json)]))
        return stripped, mcpb, server_json


@pytest.fixture(scope="module")
def unpacked(bundle: tuple[Path, Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("unpacked")
    done = subprocess.run([str(MCPB), "unpack", str(bundle[1]), str(target)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return target


def test_the_packed_bundle_holds_a_valid_manifest_and_the_very_binary(unpacked: Path, bundle: tuple[Path, Path, Path]) -> None:
    manifest = json.loads((unpacked / "manifest.json").read_text())
    done = subprocess.run([str(MCPB), "validate", str(unpacked / "manifest.json")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    entry = unpacked / manifest["server"]["entry_point"]
    assert sha256(entry) == sha256(bundle[0])
    assert os.access(entry, os.X_OK), "the unpacked binary must stay executable"
    assert manifest["version"] == re.search(r'^version = "(.*)"$', (REPO / "Cargo.toml").read_text(), re.M).group(1)
    assert manifest["compatibility"]["platforms"] == ["linux"]
    assert "@" not in json.dumps(manifest["server"]), "a placeholder was left in the manifest"
    # The token is a secret the host must keep as one; the URL and token are
    # needed, the rest have defaults.
    settings = manifest["user_config"]
    assert settings["token"]["sensitive"] is True
    assert {k for k, v in settings.items() if v.get("required")} == {"mattermost_url", "token"}


def resolve(unpacked: Path, tmp: Path, user_config: dict, system_dirs: dict) -> subprocess.CompletedProcess:
    config = tmp / f"config-{len(list(tmp.iterdir()))}.json"
    config.write_text(json.dumps({"user_config": user_config, "system_dirs": system_dirs}))
    return subprocess.run(
        ["node", str(REPO / "packaging" / "mcp-config.mjs"), str(unpacked), str(config)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NODE_PATH": str(REPO / "packaging" / "node_modules")},
        cwd=REPO / "packaging",
    )


def test_a_host_will_not_start_the_bundle_without_the_url_and_token(unpacked: Path, tmp_path: Path) -> None:
    done = resolve(unpacked, tmp_path, {"mattermost_url": "https://chat.example.com"}, {})
    assert done.returncode == 1, done.stdout


def test_settings_left_alone_reach_porter_as_its_own_defaults(unpacked: Path, tmp_path: Path) -> None:
    done = resolve(unpacked, tmp_path, {"mattermost_url": "https://chat.example.com", "token": "t"}, {})
    assert done.returncode == 0, done.stderr
    env = json.loads(done.stdout)["env"]
    # porter reads an empty variable as unset: ~/Downloads, reads only, asks.
    assert env["MM_MCP_DOWNLOAD_DIR"] == ""
    assert env["MM_MCP_ALLOW_WRITES"] == "false"
    assert env["MM_MCP_ASK_BEFORE_WRITES"] == "true"
    assert "${" not in json.dumps(env), "a setting was left unresolved"


async def test_the_bundle_started_as_its_manifest_says_serves_the_emulator(unpacked: Path, tmp_path: Path) -> None:
    with Mmsim(write_seed(tmp_path / "seed"), tmp_path / "sim") as sim:
        downloads = tmp_path / "downloads"
        downloads.mkdir()
        done = resolve(
            unpacked,
            tmp_path,
            {"mattermost_url": sim.url, "token": sim.token, "allow_writes": True, "download_dir": str(downloads)},
            {"DOWNLOADS": str(downloads), "HOME": str(tmp_path)},
        )
        assert done.returncode == 0, done.stderr
        command = json.loads(done.stdout)
        assert command["command"] == str(unpacked.resolve() / "server" / "porter")
        assert command["args"] == ["mattermost", "serve"]
        env = command["env"]
        assert env["MM_MCP_ALLOW_WRITES"] == "true" and env["MM_MCP_ASK_BEFORE_WRITES"] == "true"
        assert env["MM_MCP_DOWNLOAD_DIR"] == str(downloads)
        params = StdioServerParameters(
            command=command["command"],
            args=command["args"],
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), **env},
        )
        with open(tmp_path / "serve.stderr", "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                names = {tool.name for tool in (await client.list_tools()).tools}
                assert {"read_channel", "create_post", "save_file"} <= names
                me = await client.call_tool("get_me", {})
                assert not me.is_error, text_of(me)
                assert "alice" in text_of(me)


def test_the_registry_entry_follows_the_server_json_schema(bundle: tuple[Path, Path, Path]) -> None:
    # Each rule below is one of the registry's documented constraints on
    # server.json (schema 2025-09-29), checked field by field.
    _, mcpb, server_json = bundle
    entry = json.loads(server_json.read_text())
    assert set(entry) <= {"$schema", "name", "description", "version", "repository", "websiteUrl", "packages", "remotes", "_meta"}
    assert entry["$schema"] == "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json"
    assert re.fullmatch(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+", entry["name"]) and 3 <= len(entry["name"]) <= 200
    assert 1 <= len(entry["description"]) <= 100
    assert re.fullmatch(r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?", entry["version"]), "an exact version, never a range"
    (package,) = entry["packages"]
    assert set(package) <= {"registryType", "registryBaseUrl", "identifier", "version", "fileSha256", "runtimeHint", "transport", "runtimeArguments", "packageArguments", "environmentVariables"}
    assert package["registryType"] == "mcpb"
    assert package["identifier"].startswith("https://") and package["identifier"].endswith("/" + mcpb.name)
    assert package["version"] == entry["version"] != "latest"
    assert re.fullmatch(r"[a-f0-9]{64}", package["fileSha256"]) and package["fileSha256"] == sha256(mcpb)
    assert package["transport"] == {"type": "stdio"}
    variables = {v["name"]: v for v in package["environmentVariables"]}
    for variable in variables.values():
        assert set(variable) <= {"name", "description", "isRequired", "format", "value", "isSecret", "default", "placeholder", "choices", "variables"}
        assert variable.get("format", "string") in {"string", "number", "boolean", "filepath"}
        assert all(isinstance(variable.get(k, False), bool) for k in ("isRequired", "isSecret"))
        assert isinstance(variable.get("default", ""), str)
    # What the entry says of each variable is what porter reads.
    assert {name for name, v in variables.items() if v.get("isSecret")} == {"MM_TOKEN"}
    assert {name for name, v in variables.items() if v.get("isRequired")} == {"MM_URL", "MM_TOKEN"}
    configuration = (REPO / "docs" / "configuration.md").read_text()
    for name in variables:
        assert f"| `{name}` |" in configuration, f"{name} is not a documented setting"
