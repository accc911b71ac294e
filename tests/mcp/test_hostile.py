"""A file cannot take `porter mattermost serve` down. PDFs built to overflow
a reader's stack (a 50,000-deep page tree, arrays and dictionaries nested
100,000 deep) are posted as attachments; read_file answers each with a
description that says why it could not be read, and the same server, over
stdio and HTTP, still answers the next call. Before the isolated worker,
the first of them ended the whole server. PDFs built to exhaust a reader
(a font map inflating to 200 MiB, a content stream inflating to 200 MiB of
text, one stream listed 100,000 times) are read within the reader's own
limits: the page that goes past them is named in the Markdown with why."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness import Home, decode_image, image_blocks, read_file, read_ok, serve, server_env, structured, text_of, write_seed
from harness import Mmsim  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import hostile_pdf  # noqa: E402

pytestmark = pytest.mark.anyio

HOSTILE = hostile_pdf.REFUSED

# Read in the worker within the reader's own work limits: the page past
# them is not read, and its place says why (before, the first ran the
# worker out of memory and the others past its CPU time).
NOTED = {
    "tounicode-bomb.pdf": ("a font's ToUnicode map decodes to more than 8 MiB", hostile_pdf.tounicode_bomb),
    "text-amplification.pdf": ("its content streams decode to more than 32 MiB", hostile_pdf.text_amplification),
    "repeated-contents.pdf": ("its content streams draw more than 2,000,000 glyphs", hostile_pdf.repeated_contents),
}


@pytest.fixture(scope="module")
def hostile_sim(porter: Path, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("hostile-sim")
    files = root / "files"
    files.mkdir()
    posts = []
    for name, (_, make) in {**HOSTILE, **NOTED}.items():
        (files / name).write_bytes(make())
        posts.append(
            {"channel": "files", "user": "bob", "message": f"Have a look at {name}.", "files": [{"name": name, "path": str(files / name)}]}
        )
    sim = Mmsim(write_seed(root / "seed", extra_files=posts), root)
    yield sim
    sim.stop()


async def test_a_file_that_kills_its_reader_is_described_and_the_server_answers_the_next_call(
    hostile_sim, home: Home, transport: str, tmp_path: Path
):
    text_id = hostile_sim.file_id("release-notes.txt")
    async with serve(transport, server_env(hostile_sim, home), tmp_path) as served:
        for name, (why, _) in HOSTILE.items():
            result = await read_ok(served, hostile_sim.file_id(name))
            text = text_of(result)
            assert text.startswith(f"{name}: PDF"), text
            assert why in text, text
            record = structured(result)
            assert record["shown"] == "described", record
            assert why in record["reason"], record

            after = await read_file(served, text_id, line_count=3)
            assert not after.is_error, f"after {name}: {text_of(after)}"
            assert "Porter release notes" in text_of(after), f"after {name}: {text_of(after)}"


async def test_a_pdf_past_the_readers_work_limits_is_read_with_a_note_naming_the_page_and_why(
    hostile_sim, home: Home, tmp_path: Path
):
    # Over stdio only: each answer carries the PDF itself (up to 800 KiB,
    # past 1 MiB as base64), more than the SDK's HTTP client takes in one
    # server-sent event.
    text_id = hostile_sim.file_id("release-notes.txt")
    async with serve("stdio", server_env(hostile_sim, home), tmp_path) as served:
        for name, (why, _) in NOTED.items():
            result = await read_ok(served, hostile_sim.file_id(name))
            text = text_of(result)
            assert text.startswith(f"{name}: PDF of 1 page, as Markdown"), text
            assert f"Page 1 was not read: {why}, past what porter reads of one page." in text, text
            assert "could not read it" not in text, text

            after = await read_file(served, text_id, line_count=3)
            assert not after.is_error, f"after {name}: {text_of(after)}"
            assert "Porter release notes" in text_of(after), f"after {name}: {text_of(after)}"


@pytest.fixture(scope="module")
def every_family_sim(porter: Path, tmp_path_factory: pytest.TempPathFactory):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hostile"))
    import make_hostile

    root = tmp_path_factory.mktemp("every-family-sim")
    files = root / "files"
    files.mkdir()
    posts = []
    for name, data in sorted(make_hostile.families().items()):
        (files / name).write_bytes(data)
        posts.append({"channel": "files", "user": "bob", "message": f"Here is {name}.", "files": [{"name": name, "path": str(files / name)}]})
    sim = Mmsim(write_seed(root / "seed", extra_files=posts), root)
    sim.names = [post["files"][0]["name"] for post in posts]
    yield sim
    sim.stop()


async def test_every_hostile_family_is_answered_and_the_server_answers_the_next_call(
    every_family_sim, home: Home, tmp_path: Path
):
    """Every family of tests/hostile/make_hostile.py (issue 18's PDFs,
    pictures and terminal text) through read_file on one server: each call
    is answered with a result naming the file, an image handed back
    decodes, and the next call still works."""
    sim = every_family_sim
    text_id = sim.file_id("release-notes.txt")
    async with serve("stdio", server_env(sim, home), tmp_path) as served:
        for name in sim.names:
            result = await read_file(served, sim.file_id(name))
            text = text_of(result)
            assert name in text, text
            for block in image_blocks(result):
                decode_image(block)
            after = await read_file(served, text_id, line_count=3)
            assert "Porter release notes" in text_of(after), f"after {name}: {text_of(after)}"
