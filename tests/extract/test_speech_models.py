"""Which speech model `porter extract` uses, told from its output: Whisper
base where it is installed (it hears better and hears other languages),
tiny.en where only tiny.en is, each named in the note the transcript
carries with the language it was heard as; with base, the language is
detected (German is written as German).

Needs PORTER_BIN, PORTER_MODELS_DIR holding whisper-base and
whisper-tiny.en (scripts/models.sh installs both) and espeak-ng.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

PORTER = os.environ.get("PORTER_BIN", "")


def models_dir() -> Path:
    given = os.environ.get("PORTER_MODELS_DIR")
    assert given, "PORTER_MODELS_DIR is not set: scripts/test installs the speech models (scripts/models.sh) and sets it"
    return Path(given)


def spoken(path: Path, text: str, voice: str) -> Path:
    subprocess.run(["espeak-ng", "-v", voice, "-s", "150", "-w", str(path), text], check=True, timeout=60)
    return path


def extract(path: Path, models: Path) -> str:
    if not PORTER:
        pytest.skip("PORTER_BIN is not set")
    done = subprocess.run(
        [PORTER, "extract", str(path)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PORTER_MODELS_DIR": str(models)},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def words(markdown: str) -> list[str]:
    lines = [line for line in markdown.splitlines() if not line.startswith("#") and not line.startswith("<!--")]
    text = re.sub(r"\[\d+:\d\d(:\d\d)?\]", " ", " ".join(lines))
    return re.findall(r"[a-zäöüß']+", text.lower())


def test_base_is_used_where_installed_and_tiny_en_where_it_is_alone(tmp_path):
    memo = spoken(tmp_path / "memo.wav", "Please water the tomato plants on the balcony every evening.", "en-us")
    both = models_dir()
    for name in ("whisper-base", "whisper-tiny.en"):
        assert (both / name / "model.bin").is_file(), f"{name} is not installed in {both}: run scripts/models.sh"
    markdown = extract(memo, both)
    assert "Transcribed by porter with Whisper base (language en;" in markdown, markdown
    assert {"tomato", "balcony", "evening"} <= set(words(markdown)), markdown

    alone = tmp_path / "models"
    alone.mkdir()
    (alone / "whisper-tiny.en").symlink_to(both / "whisper-tiny.en", target_is_directory=True)
    markdown = extract(memo, alone)
    assert "Transcribed by porter with Whisper tiny.en (English;" in markdown, markdown
    assert {"please", "tomato", "evening"} <= set(words(markdown)), markdown


def test_base_detects_the_language_spoken(tmp_path):
    memo = spoken(tmp_path / "zug.wav", "Der Zug nach Berlin hat heute zwanzig Minuten Verspätung.", "de")
    markdown = extract(memo, models_dir())
    assert "Transcribed by porter with Whisper base (language de;" in markdown, markdown
    heard = set(words(markdown))
    assert {"berlin", "heute", "minuten"} <= heard, markdown
