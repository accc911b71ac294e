from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright

from harness import Gateway, chromium_path
import timing  # noqa: E402  (tests/timing.py, on the path harness puts it)


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[Gateway]:
    served = Gateway(tmp_path)
    yield served
    served.stop()


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    """Debian's Chromium, headless, driven by Playwright; each page opened
    with `harness.open_page` gets a fresh profile of its own."""
    async with async_playwright() as playwright:
        with timing.starting("Chromium"):
            launched = await playwright.chromium.launch(
                executable_path=chromium_path(),
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                      "--disable-component-update", "--disable-sync"],
            )
        yield launched
        await launched.close()
