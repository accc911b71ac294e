"""A person's browser for `porter mattermost login --oauth`, set as $BROWSER:
porter starts it with the authorize address as its last argument. It drives
Debian's Chromium through Playwright to the emulator's authorize page, signs
in on the login page, answers the consent page and lands on porter's
loopback callback, then writes what it saw as JSON to $OAUTH_BROWSER_LOG.

$OAUTH_BROWSER_ACTION says what the person does: `allow` (default),
`deny`, or `forge-state` (the address is changed to carry another state
before it is opened, as a page that started its own sign-in would).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from playwright.async_api import async_playwright


async def main(address: str) -> dict:
    action = os.environ.get("OAUTH_BROWSER_ACTION", "allow")
    if action == "forge-state":
        parts = urlsplit(address)
        query = [(k, "forged-state" if k == "state" else v) for k, v in parse_qsl(parts.query)]
        address = urlunsplit(parts._replace(query=urlencode(query)))
    seen: dict = {"action": action, "asked": address, "pages": []}
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=shutil.which(os.environ.get("CHROMIUM", "chromium")),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-sync"],
        )
        try:
            page = await browser.new_page()
            await page.goto(address)
            seen["pages"].append(urlsplit(page.url).path)
            if await page.query_selector("#error"):
                seen["error"] = await page.inner_text("#error")
                return seen
            await page.fill("#login_id", os.environ.get("OAUTH_BROWSER_USER", "alice"))
            await page.fill("#password", os.environ.get("OAUTH_BROWSER_PASSWORD", "alice-password"))
            await page.click("#login")
            await page.wait_for_selector("#allow")
            seen["pages"].append(urlsplit(page.url).path)
            seen["consent"] = await page.inner_text("h1")
            async with page.expect_navigation(url="**/callback**"):
                await page.click("#deny" if action == "deny" else "#allow")
            await page.wait_for_load_state()
            seen["landed"] = page.url
            seen["said"] = await page.inner_text("body")
        finally:
            await browser.close()
    return seen


if __name__ == "__main__":
    try:
        result = asyncio.run(main(sys.argv[-1]))
    except Exception as error:  # noqa: BLE001 - the test reads what failed
        result = {"failed": repr(error)}
    log = os.environ.get("OAUTH_BROWSER_LOG")
    if log:
        with open(log, "w") as out:
            json.dump(result, out)
