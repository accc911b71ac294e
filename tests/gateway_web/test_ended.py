"""Runs that ended: the page says until when their files stay (the end plus
`inbox_ttl`), and a run that ended without files says so instead of "no
files yet" (hidden unless asked for). The runs are made by `porter gateway
serve` over stdio on the same data, which ends its run when its client
goes; the page, signed in with an admin key, reads them from the HTTP one."""

from __future__ import annotations

import os

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from playwright.async_api import Browser

from harness import (
    DESKTOP,
    Gateway,
    axe_violations,
    click,
    open_page,
    page_problems,
    porter_bin,
    screenshot,
    sign_in,
    wait_for,
)


async def one_stdio_run(gateway: Gateway, tool: str, arguments: dict) -> None:
    params = StdioServerParameters(
        command=str(porter_bin()),
        args=["gateway", "serve", "--config", str(gateway.config)],
        env={**os.environ, "PORTER_DATA_DIR": str(gateway.data)},
    )
    with open(gateway.data.parent / f"stdio-{tool}.stderr", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, result.content


@pytest.mark.anyio
async def test_an_ended_run_says_until_when_its_files_stay_and_an_empty_one_says_it_kept_none(
    gateway: Gateway, browser: Browser
) -> None:
    await one_stdio_run(gateway, "mcp__everything__echo", {"message": "nothing to keep"})
    await one_stdio_run(gateway, "mcp__everything__get-tiny-image", {})
    listed = gateway.get_json("/v1/runs", key=gateway.admin_key)["runs"]
    assert len(listed) == 2 and all(run["ended_at"] for run in listed), listed
    with_file = next(run for run in listed if run["file_count"] == 1)
    assert with_file["expires_at"] == with_file["ended_at"] + 24 * 3600 * 1000

    page = await open_page(browser, gateway.url + "/", DESKTOP, "light")
    await sign_in(page, gateway.admin_key)
    await wait_for(page, "document.querySelectorAll('.run').length === 1", what="the run with a file")
    meta = await page.text_content(".run .meta")
    assert "ended" in meta and "files kept until" in meta and "left)" in meta, meta
    assert "1 without files hidden" in await page.text_content("#summary")

    await click(page, "#filter-empty")
    await wait_for(page, "document.querySelectorAll('.run').length === 2", what="the empty run, when asked for")
    empty = await page.evaluate("[...document.querySelectorAll('.run .empty')].map(e => e.textContent)")
    assert empty == ["This run ended without keeping any files."], empty
    assert "no files yet" not in (await page.inner_text("body")).lower()
    await screenshot(page, "ended-desktop-light")
    assert await axe_violations(page) == []
    assert page_problems(page) == []
