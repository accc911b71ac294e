"""Logging in as a person sees it: a wrong key is refused, said aloud and
kept in the field to correct; the right key takes the form off the screen
(checked by what is drawn, not by the `hidden` property) on a desktop and a
phone, light and dark, and axe-core finds nothing wrong with either state."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

import pytest
from PIL import Image, ImageChops
from playwright.async_api import Browser

from harness import (
    DESKTOP,
    Gateway,
    axe_violations,
    enter_key,
    on_each_screen,
    open_page,
    page_problems,
    screenshot,
    seen,
    shows,
    sign_in,
    wait_for,
)


def test_the_start_up_line_names_the_page_as_well_as_the_mcp_endpoint(gateway: Gateway) -> None:
    line = gateway.start_line
    assert "/mcp" in line, line
    assert "page at /" in line or f"{gateway.url}/ " in line, line


def differing_box(before: bytes, after: bytes) -> tuple[int, int, int, int] | None:
    """The box of pixels that differ between two screenshots, or None."""
    first = Image.open(io.BytesIO(before)).convert("RGB")
    second = Image.open(io.BytesIO(after)).convert("RGB")
    assert first.size == second.size, (first.size, second.size)
    return ImageChops.difference(first, second).getbbox()


@on_each_screen
async def test_after_login_the_key_form_is_gone_from_the_screen(
    gateway: Gateway, browser: Browser, viewport: tuple, scheme: str
) -> None:
    name = f"{viewport[0]}-{scheme}"
    page = await open_page(browser, gateway.url + "/", viewport, scheme)
    assert await shows(page, "#login"), await seen(page, "#login")
    login_shot = (await screenshot(page, f"login-{name}")).read_bytes()
    assert await axe_violations(page) == []

    # A wrong key: refused, announced, and still in the field to correct.
    await enter_key(page, "not-the-key")
    await wait_for(page, "document.getElementById('login-message').textContent.includes('not accepted')",
                   what="the wrong key to be refused")
    assert await shows(page, "#login-message")
    assert await page.input_value("#key") == "not-the-key"
    assert await page.get_attribute("#login-message", "role") == "alert"
    assert await page.evaluate("sessionStorage.getItem('porter.apiKey')") is None
    await screenshot(page, f"wrong-key-{name}")
    assert await axe_violations(page) == []

    await sign_in(page, gateway.key)
    # What a person sees: no key field, no button, no old red message.
    for gone in ["#login", "#key", "#use-key", "#login-message"]:
        assert not await shows(page, gone), (gone, await seen(page, gone))
    assert await page.input_value("#key") == ""
    # The runs start right under the header, not a form's height further down.
    runs = await seen(page, "#runs-heading")
    assert runs and runs["visible"] and runs["top"] < 200, runs
    # Tabbing from the top never lands in the form.
    for _ in range(6):
        await page.keyboard.press("Tab")
        assert not await page.evaluate("document.activeElement && document.activeElement.closest('#login') !== null")
    await page.evaluate("document.activeElement && document.activeElement.blur()")

    # Compared by the pixels: the screen with the form in the document is the
    # screen with the form taken out of it, so nothing of it is drawn.
    shot = await screenshot(page, f"logged-in-empty-{name}")
    drawn = shot.read_bytes()
    await page.evaluate("document.getElementById('login').remove()")
    without_form = await page.screenshot(animations="disabled", caret="hide")
    assert differing_box(drawn, without_form) is None, "the key form still changes what is on screen"
    # The comparison can fail: the screen with the form differs.
    assert differing_box(login_shot, drawn) is not None

    assert await axe_violations(page) == []
    assert page_problems(page) == []



PAGE_LINE = re.compile(r"the web page: (http://127\.0\.0\.1:\d+/#token=[0-9a-f]+)")


@pytest.mark.anyio
async def test_a_gateway_without_keys_prints_a_page_address_that_signs_in_by_itself(
    tmp_path: Path, browser: Browser
) -> None:
    """Started without api_keys on loopback, the gateway prints the page's
    address with a one-time key; opened, the page signs in with it, drops it
    from the address bar, and shows the local user's runs."""
    served = Gateway(tmp_path, config_extra={"api_keys": []})
    try:
        deadline = time.monotonic() + 10
        while not (found := PAGE_LINE.search(served.stderr_path.read_text())):
            assert time.monotonic() < deadline, served.stderr_path.read_text()
            time.sleep(0.05)
        address = found.group(1)
        page = await open_page(browser, address, DESKTOP, "light")
        await wait_for(page, "!document.getElementById('inbox').hidden", what="the inbox to show")
        assert not await shows(page, "#login"), await seen(page, "#login")
        assert "#token" not in page.url, page.url
        token = address.split("#token=")[1]
        assert await page.evaluate("sessionStorage.getItem('porter.apiKey')") == token
        assert page_problems(page) == []
    finally:
        served.stop()
