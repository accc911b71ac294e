"""`File read`, `File extract` and `File import` of a voice memo through the
real binary with the Python mcp client: espeak-ng speaks it while the test
runs, a loopback web server serves it as WAV and as M4A, and the HTTP tool
keeps it in the inbox.

With the speech model (PORTER_MODELS_DIR, installed by scripts/models.sh)
`File read` gives numbered lines with [mm:ss] marks and the audio after
them; `File extract` writes Markdown headed by the file's name and length
with timestamped paragraphs; `File import` makes a Document whose text is
the transcript, so that `Documents search` finds a word that was only ever
spoken."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import STUB, all_text
from test_documents import fetch, imported, numbered_lines, search, web_gateway
from webserver import file_server

pytestmark = pytest.mark.anyio

SAID = "The warehouse inventory is finished. Every shelf in the north aisle was counted twice."


@pytest.fixture
def served_memo(tmp_path: Path) -> Iterator[str]:
    assert os.environ.get("PORTER_MODELS_DIR"), "PORTER_MODELS_DIR is not set: scripts/test installs the speech model and sets it"
    root = tmp_path / "www"
    root.mkdir()
    wav = root / "memo.wav"
    subprocess.run(["espeak-ng", "-v", "en-gb", "-s", "155", "-w", str(wav), SAID], check=True)
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-i", str(wav), "-c:a", "aac", str(root / "memo.m4a")], check=True)
    with file_server(root) as base:
        yield base


def words(text: str) -> list[str]:
    return re.findall(r"[a-z']+", text.lower())


async def test_a_voice_memo_is_read_extracted_and_imported_as_its_words(tmp_path: Path, served_memo: str) -> None:
    async with web_gateway(tmp_path) as served:
        client = served.client
        for name in ("memo.wav", "memo.m4a"):
            path = await fetch(client, f"{served_memo}/{name}")

            read = await client.call_tool("File", {"op": "read", "path": path})
            text = all_text(read)
            assert not read.is_error, text
            assert "its speech transcribed" in text.split("\n", 1)[0], text
            lines = list(numbered_lines(text).values())
            assert lines and all(re.match(r"\[\d\d:\d\d\] ", line) for line in lines), text
            heard = words(" ".join(lines))
            # Words both Whisper models hear in this voice, in their order
            # (base hears "The warehouse" as "But where house", as
            # faster-whisper does with the same weights; how well each
            # model hears is bench/transcribe's measure, not this test's).
            for word in ("inventory", "finished", "counted", "twice"):
                assert word in heard, (word, heard)
            assert heard.index("inventory") < heard.index("finished") < heard.index("counted"), heard
            assert [block.type for block in read.content][-1] == "audio"

            extracted = await client.call_tool("File", {"op": "extract", "path": path})
            text = all_text(extracted)
            assert not extracted.is_error, text
            stub = STUB.search(text)
            assert stub, text
            markdown = served.inbox_file(stub["path"]).read_text()
            assert re.match(rf"# {re.escape(path.rsplit('/', 1)[-1])} \(00:0\d\)\n", markdown), markdown
            assert re.search(r"^\[00:00\] .*\binventory is finished\b", markdown, re.M | re.I), markdown

        document = await imported(client, path)
        found = await search(client, "inventory")
        assert [hit["id"] for hit in found["hits"]] == [document["id"]], found
