from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cdp import Chromium
from harness import Gateway


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[Gateway]:
    served = Gateway(tmp_path)
    yield served
    served.stop()


@pytest.fixture
def chromium(tmp_path: Path) -> Iterator[Chromium]:
    browser = Chromium(tmp_path)
    yield browser
    browser.close()
