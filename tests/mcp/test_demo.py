"""The demo a new user meets: every file the built-in demo posts reads
within porter's default limits, in the debug build that scripts/demo runs
(`cargo run`, the dev profile) and that these tests use. A file that only
fitted the limits in a release build failed here: the demo's floor plan was
refused with "it took more than 10 s of CPU time" when every picture went
through OCR at full size."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import Home, Mmsim, read_file, serve, server_env, structured, text_of

pytestmark = pytest.mark.anyio

# Said by porter when a file's worker was stopped by a limit or crashed.
REFUSALS = ("porter could not read it", "took more than", "took longer than", "needed more than")


async def test_every_demo_file_reads_within_the_default_limits(home: Home, tmp_path: Path):
    with Mmsim("demo", tmp_path / "demo-sim") as demo:
        files = [
            (fid, demo.file_info(fid)["name"])
            for post in demo.posts("files")
            for fid in post.get("file_ids") or []
        ]
        assert len(files) >= 8, f"the demo's files channel holds only {files}"
        async with serve("stdio", server_env(demo, home), tmp_path) as served:
            refused = []
            kinds = set()
            for fid, name in files:
                result = await read_file(served, fid)
                text = text_of(result)
                if result.is_error or any(refusal in text for refusal in REFUSALS):
                    refused.append(f"{name}: {text[:300]}")
                    continue
                kinds.add(structured(result).get("kind"))
    assert refused == [], "\n".join(refused)
    # The demo shows each kind the file view has, so each was read here.
    assert {"text", "document", "image", "archive"} <= kinds, kinds
