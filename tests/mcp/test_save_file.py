"""save_file through a real client over stdio: into the download directory,
never over an existing file, and the same file saved again is answered with
the earlier copy."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness import Home, serve, server_env, show, structured, text_of, writes_in

pytestmark = pytest.mark.anyio


def xattrs_work(directory: Path) -> bool:
    probe = directory / ".xattr-probe"
    probe.write_bytes(b"")
    try:
        os.setxattr(probe, "user.porter.probe", b"1")
        return True
    except OSError:
        return False
    finally:
        probe.unlink()


async def test_saving_twice_beside_a_file_of_the_same_name_keeps_it_and_answers_the_earlier_copy(
    sim, home: Home, tmp_path: Path
):
    file_id = sim.file_id("release-notes.txt")
    expected = sim.download(file_id)
    existing = home.downloads / "release-notes.txt"
    existing.write_bytes(b"my own notes, not the attachment\n")
    mark_supported = xattrs_work(home.downloads)

    async with serve("stdio", server_env(sim, home), tmp_path) as served:
        sim.clear()
        first = await served.client.call_tool("save_file", {"file_id": file_id})
        assert not first.is_error, text_of(first)
        record = structured(first)
        saved = Path(record["path"])
        assert saved == home.downloads / "release-notes (2).txt", record
        assert record["size"] == len(expected), record
        assert saved.read_bytes() == expected
        assert existing.read_bytes() == b"my own notes, not the attachment\n", "the existing file was touched"
        assert str(saved) in text_of(first)

        second = await served.client.call_tool("save_file", {"file_id": file_id})
        assert not second.is_error, text_of(second)
        again = structured(second)
        assert again.get("already_saved") is True, again
        assert Path(again["path"]) == saved, again
        log = sim.requests()

    assert sorted(p.name for p in home.downloads.iterdir()) == ["release-notes (2).txt", "release-notes.txt"]
    assert not writes_in(log), f"save_file changed Mattermost:\n{show(log)}"
    assert log, "the request log is empty: the scan had nothing to check"
    if mark_supported:
        origin = os.getxattr(saved, "user.xdg.origin.url").decode()
        assert origin.startswith(sim.url), origin


async def test_a_saved_copy_that_was_removed_is_saved_again(sim, home: Home, tmp_path: Path):
    file_id = sim.file_id("assets.zip")
    async with serve("stdio", server_env(sim, home), tmp_path) as served:
        first = structured(await served.client.call_tool("save_file", {"file_id": file_id}))
        Path(first["path"]).unlink()
        second = await served.client.call_tool("save_file", {"file_id": file_id})
        record = structured(second)
        assert not record.get("already_saved"), record
        assert Path(record["path"]).read_bytes() == sim.download(file_id)
