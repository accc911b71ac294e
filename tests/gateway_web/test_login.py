"""Logging in as a person sees it: a wrong key is refused, said aloud and
kept in the field to correct; the right key takes the form off the screen
(not just its `hidden` property) on a desktop and a phone, light and dark,
and axe-core finds nothing wrong with either state."""

from __future__ import annotations

import pytest

from cdp import Chromium
from harness import SCHEMES, VIEWPORTS, Gateway, axe_violations, enter_key, open_page, page_problems, screenshot, seen, shows


def test_the_start_up_line_names_the_page_as_well_as_the_mcp_endpoint(gateway: Gateway) -> None:
    line = gateway.start_line
    assert "/mcp" in line, line
    assert "page at /" in line or f"{gateway.url}/ " in line, line


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("viewport", VIEWPORTS, ids=[v[0] for v in VIEWPORTS])
def test_after_login_the_key_form_is_gone_from_the_screen(
    gateway: Gateway, chromium: Chromium, viewport: tuple, scheme: str
) -> None:
    name = f"{viewport[0]}-{scheme}"
    page = open_page(chromium, gateway.url + "/", viewport, scheme)
    assert shows(page, "#login"), seen(page, "#login")
    screenshot(page, f"login-{name}")
    assert axe_violations(page) == []

    # A wrong key: refused, announced, and still in the field to correct.
    enter_key(page, "not-the-key")
    page.wait_for("document.getElementById('login-message').textContent.includes('not accepted')",
                  what="the wrong key to be refused")
    assert shows(page, "#login-message")
    assert page.evaluate("document.getElementById('key').value") == "not-the-key"
    assert page.evaluate("document.getElementById('login-message').getAttribute('role')") == "alert"
    assert page.evaluate("sessionStorage.getItem('porter.apiKey')") is None
    screenshot(page, f"wrong-key-{name}")
    assert axe_violations(page) == []

    enter_key(page, gateway.key)
    page.wait_for("document.body.dataset.stream === 'live'", what="the live stream")
    # What a person sees: no key field, no button, no old red message.
    for gone in ["#login", "#key", "#use-key", "#login-message"]:
        assert not shows(page, gone), (gone, seen(page, gone))
    assert page.evaluate("document.getElementById('key').value") == ""
    # The runs start right under the header, not a form's height further down.
    runs = seen(page, "#runs-heading")
    assert runs and runs["visible"] and runs["top"] < 200, runs
    # Tabbing from the top never lands in the form.
    for _ in range(6):
        page.send("Input.dispatchKeyEvent", type="keyDown", key="Tab", code="Tab", windowsVirtualKeyCode=9)
        page.send("Input.dispatchKeyEvent", type="keyUp", key="Tab", code="Tab", windowsVirtualKeyCode=9)
        focused = page.evaluate("document.activeElement && document.activeElement.closest('#login') !== null")
        assert not focused
    screenshot(page, f"logged-in-empty-{name}")
    assert axe_violations(page) == []
    assert page_problems(page) == []
