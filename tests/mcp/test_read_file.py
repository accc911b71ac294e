"""read_file through a real client, over stdio and HTTP: text in windows,
a Word document as Markdown with its outline, a sideways photo returned
upright, a zip listing, a binary described with its link, and a file over
the cap described without being downloaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import (
    Home,
    decode_image,
    image_blocks,
    mean_colour,
    numbered_lines,
    read_file,
    read_ok,
    serve,
    server_env,
    show,
    structured,
    text_of,
    window_of,
)

pytestmark = pytest.mark.anyio


async def test_a_text_file_is_read_in_windows_with_the_next_start_line_and_its_web_url(
    read_sim, home: Home, transport: str, tmp_path: Path
):
    file_id = read_sim.file_id("release-notes.txt")
    async with serve(transport, server_env(read_sim, home), tmp_path) as served:
        first = await read_ok(served, file_id, start_line=1, line_count=50)
        record = structured(first)
        window = window_of(record)
        assert (window["start_line"], window["end_line"], window["total_lines"]) == (1, 50, 120), record
        assert window["next_start_line"] == 51, record
        assert record["file_id"] == file_id
        assert record["name"] == "release-notes.txt"
        assert record["kind"] == "text"
        assert record["web_url"].startswith(read_sim.url), record["web_url"]
        lines = numbered_lines(text_of(first))
        assert [n for n, _ in lines] == list(range(1, 51))
        assert lines[0][1] == "Porter release notes"
        assert "start_line=51" in text_of(first)

        second = await read_ok(served, file_id, start_line=window["next_start_line"], line_count=50)
        lines = numbered_lines(text_of(second))
        assert [n for n, _ in lines] == list(range(51, 101))
        # Line 51 is entry 48 of the generated notes.
        assert lines[0][1] == " 48. Improved threads: change number 48 of the spring release."
        assert window_of(structured(second))["next_start_line"] == 101

        last = await read_file(served, file_id, start_line=101, line_count=50)
        window = window_of(structured(last))
        assert (window["start_line"], window["end_line"]) == (101, 120)
        assert window.get("next_start_line") is None, "the last window has no next_start_line"
        assert [n for n, _ in numbered_lines(text_of(last))] == list(range(101, 121))

        past = await read_file(served, file_id, start_line=500)
        assert past.is_error, "a window past the end is a tool error the model can read"
        assert "120" in text_of(past), text_of(past)


async def test_a_word_document_is_read_as_its_markdown_with_an_outline_of_its_heading_lines(
    read_sim, home: Home, transport: str, tmp_path: Path
):
    file_id = read_sim.file_id("meeting-notes.docx")
    async with serve(transport, server_env(read_sim, home), tmp_path) as served:
        result = await read_ok(served, file_id)
        record = structured(result)
        assert record["kind"] == "document", record
        text = text_of(result)
        assert "Word document, as Markdown" in text, text
        lines = dict(numbered_lines(text))
        shown = list(lines.values())
        for row in (
            "| Owner | Action | Due |",
            "| Alice | Draft the upload rules | 2026-03-06 |",
            "| Carol | Test the demo on a fresh machine | 2026-03-10 |",
        ):
            assert row in shown, text
        assert "## Decisions" in shown, text

        # The outline names each heading and the line it stands on: the
        # Title on top, the Heading 1 sections under it.
        outline = record["outline"]
        assert [(h["level"], h["text"]) for h in outline] == [
            (1, "Kickoff meeting notes"),
            (2, "Decisions"),
            (2, "Action items"),
        ], outline
        for heading in outline:
            assert lines[heading["line"]] == f"{'#' * heading['level']} {heading['text']}", (heading, text)

        # A window asked for at a heading's line starts with that heading.
        action_items = outline[2]["line"]
        section = await read_ok(served, file_id, start_line=action_items, line_count=3)
        first = numbered_lines(text_of(section))[0]
        assert first == (action_items, "## Action items"), text_of(section)
        assert structured(section)["outline"] == outline


async def test_a_sideways_jpeg_is_returned_upright(read_sim, home: Home, transport: str, tmp_path: Path):
    file_id = read_sim.file_id("whiteboard.jpg")
    async with serve(transport, server_env(read_sim, home), tmp_path) as served:
        result = await read_ok(served, file_id)
        images = image_blocks(result)
        assert len(images) == 1, result.content
        picture = decode_image(images[0])
        # Stored 400x300 with EXIF orientation 6; upright it is 300x400: a
        # sky on top, a lawn below, a red arrow pointing up in the middle.
        assert picture.size == (300, 400), picture.size
        sky = mean_colour(picture, (10, 10, 60, 60))
        lawn = mean_colour(picture, (10, 340, 60, 390))
        arrow = mean_colour(picture, (140, 220, 160, 300))
        assert sky[2] > 200 and sky[2] > sky[0] + 60, f"top-left should be sky blue, is {sky}"
        assert lawn[1] > lawn[0] + 60 and lawn[1] > lawn[2] + 60, f"bottom-left should be lawn green, is {lawn}"
        assert arrow[0] > 150 and arrow[1] < 100 and arrow[2] < 100, f"the middle should be the red arrow, is {arrow}"
        record = structured(result)
        assert record["kind"] == "image"
        facts = record.get("image") or record
        assert facts.get("turned_upright") is True, record


async def test_a_zip_is_listed_not_extracted(read_sim, home: Home, transport: str, tmp_path: Path):
    file_id = read_sim.file_id("assets.zip")
    async with serve(transport, server_env(read_sim, home), tmp_path) as served:
        result = await read_ok(served, file_id)
        assert structured(result)["kind"] == "archive"
        entries = [line for _, line in numbered_lines(text_of(result))]
        for path in ("assets/README.txt", "assets/data/usage.csv", "assets/icons/LICENSE.txt"):
            assert any(entry.startswith(path + "\t") for entry in entries), entries


async def test_a_binary_is_described_with_a_link_a_person_can_open(
    read_sim, home: Home, transport: str, tmp_path: Path
):
    file_id = read_sim.file_id("firmware.bin")
    async with serve(transport, server_env(read_sim, home), tmp_path) as served:
        result = await read_ok(served, file_id)
        record = structured(result)
        assert record["kind"] == "other", record
        assert not image_blocks(result)
        text = text_of(result)
        assert "firmware.bin" in text
        assert "8 KiB" in text, text
        assert record["web_url"] in text, "the description carries the link a person can open"
        assert record["web_url"].startswith(read_sim.url)


async def test_a_file_over_the_cap_is_described_and_never_downloaded(
    read_sim, home: Home, transport: str, tmp_path: Path
):
    file_id = read_sim.file_id("huge.log")
    async with serve(transport, server_env(read_sim, home), tmp_path) as served:
        read_sim.clear()
        result = await read_file(served, file_id)
        log = read_sim.requests()
    assert not result.is_error, text_of(result)
    record = structured(result)
    assert record.get("size", record.get("size_bytes")) == 65 * 1024 * 1024, record
    text = text_of(result)
    assert "huge.log" in text and "65 MiB" in text and "64 MiB" in text, text
    assert any(r["method"] == "GET" and r["path"] == f"/api/v4/files/{file_id}/info" for r in log), show(log)
    downloads = [r for r in log if r["path"] == f"/api/v4/files/{file_id}"]
    assert not downloads, f"the file was downloaded:\n{show(log)}"


async def test_paging_a_file_downloads_it_once(read_sim, home: Home, tmp_path: Path):
    """The cache of recently read files: later windows come from it."""
    file_id = read_sim.file_id("release-notes.txt")
    async with serve("stdio", server_env(read_sim, home), tmp_path) as served:
        read_sim.clear()
        for start in (1, 41, 81):
            await read_ok(served, file_id, start_line=start, line_count=40)
        log = read_sim.requests()
    downloads = [r for r in log if r["method"] == "GET" and r["path"] == f"/api/v4/files/{file_id}"]
    assert len(downloads) == 1, f"three windows should download the file once:\n{show(log)}"
