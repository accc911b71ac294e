"""read_file of recordings through a real client, over stdio and HTTP: a
voice memo espeak-ng speaks while the test runs, attached as WAV and as
M4A (AAC, as phones record) to posts in the emulator.

With the speech model (PORTER_MODELS_DIR, installed by scripts/models.sh)
the memo comes back as numbered lines with [mm:ss] marks, headed as
transcribed, its words in order, the recording itself still returned after
them as audio. Without it the memo is described as before, attached as
audio, and the text says how to install the model."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from mcp import types

from harness import Home, Mmsim, numbered_lines, read_ok, serve, server_env, structured, text_of, write_seed

pytestmark = pytest.mark.anyio

SAID = "The delivery truck arrives at nine. Please keep the loading door open until the pallets are inside."


def words(text: str) -> list[str]:
    return re.findall(r"[a-z']+", text.lower())


@pytest.fixture(scope="module")
def memo_sim(porter: Path, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("memo-sim")
    wav = root / "memo.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "160", "-w", str(wav), SAID], check=True)
    m4a = root / "memo.m4a"
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-i", str(wav), "-c:a", "aac", "-b:a", "64k", str(m4a)], check=True)
    posts = [
        {"channel": "files", "user": "bob", "message": "Voice memo.", "files": [{"name": "memo.wav", "path": str(wav)}]},
        {"channel": "files", "user": "bob", "message": "The same, from my phone.", "files": [{"name": "memo.m4a", "path": str(m4a)}]},
    ]
    sim = Mmsim(write_seed(root / "seed", extra_files=posts), root)
    yield sim
    sim.stop()


def models_dir() -> str:
    given = os.environ.get("PORTER_MODELS_DIR")
    assert given, "PORTER_MODELS_DIR is not set: scripts/test installs the speech model (scripts/models.sh) and sets it"
    return given


async def test_a_voice_memo_is_read_as_its_words_with_marks_and_the_audio_after(
    memo_sim: Mmsim, home: Home, transport: str, tmp_path: Path
):
    env = server_env(memo_sim, home, extra={"PORTER_MODELS_DIR": models_dir()})
    async with serve(transport, env, tmp_path) as served:
        for name, mime in (("memo.wav", "audio/wav"), ("memo.m4a", "audio/mp4")):
            result = await read_ok(served, memo_sim.file_id(name))
            text = text_of(result)
            header = text.split("\n", 1)[0]
            assert f"{name}: " in header and "its speech transcribed" in header, header
            assert re.search(r"Transcribed by porter with Whisper (base \(language en|tiny\.en \(English)", header), header
            lines = [line for _, line in numbered_lines(text)]
            assert lines and all(re.match(r"\[\d\d:\d\d\] \S", line) for line in lines), text
            heard = words(" ".join(re.sub(r"^\[\d\d:\d\d\] ", "", line) for line in lines))
            for word in ("delivery", "truck", "loading", "door", "open", "inside"):
                assert word in heard, (word, heard)
            assert heard.index("truck") < heard.index("door") < heard.index("inside"), heard
            audio = result.content[-1]
            assert isinstance(audio, types.AudioContent) and audio.mime_type == mime, result.content[-1]
            record = structured(result)
            assert record["kind"] == "audio" and record["shown"] == "audio", record


async def test_without_the_model_a_memo_is_described_and_the_text_says_how_to_install_it(
    memo_sim: Mmsim, home: Home, transport: str, tmp_path: Path
):
    env = server_env(memo_sim, home)
    async with serve(transport, env, tmp_path) as served:
        result = await read_ok(served, memo_sim.file_id("memo.wav"))
        text = text_of(result)
        assert text.startswith("memo.wav: WAV audio (audio/wav)"), text
        assert "no speech model is installed (run scripts/models.sh" in text, text
        assert not numbered_lines(text), text
        assert isinstance(result.content[-1], types.AudioContent)


async def test_a_client_that_asks_for_progress_hears_how_far_the_transcription_has_got(
    memo_sim: Mmsim, home: Home, transport: str, tmp_path: Path
):
    env = server_env(memo_sim, home, extra={"PORTER_MODELS_DIR": models_dir()})
    reports: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        reports.append((done, total, message))

    async with serve(transport, env, tmp_path) as served:
        result = await served.client.call_tool(
            "read_file", {"file_id": memo_sim.file_id("memo.m4a")}, progress_callback=progress
        )
        assert not result.is_error, text_of(result)
    assert len(reports) >= 2, reports
    # From the start to the whole recording, never backwards, in seconds of it.
    assert reports[0][0] == 0.0 and reports[-1][0] == reports[-1][1], reports
    assert all(a[0] <= b[0] for a, b in zip(reports, reports[1:])), reports
    assert all(message == "memo.m4a: transcribing the recording" for _, _, message in reports), reports
