"""Fixtures: the binary (built once), emulators per module or per test, and a
fresh home with a download directory per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import Home, Mmsim, porter_bin, write_seed


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def porter() -> Path:
    return porter_bin()


@pytest.fixture(scope="module")
def read_sim(porter: Path, tmp_path_factory: pytest.TempPathFactory):
    """One emulator for a module of read-only tests: its state never changes,
    so the tests share it (and clear its request log when they look at it)."""
    root = tmp_path_factory.mktemp("read-sim")
    sim = Mmsim(write_seed(root / "seed", huge=True), root)
    yield sim
    sim.stop()


@pytest.fixture
def sim(porter: Path, tmp_path: Path):
    """A fresh emulator for a test that writes or counts files."""
    sim = Mmsim(write_seed(tmp_path / "seed"), tmp_path / "sim")
    yield sim
    sim.stop()


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path / "machine")


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return request.param
