"""`File read` and `File extract` of scans through the real binary with the
Python mcp client: a PDF whose pages 2 and 3 are pictures of a page (page 3
fed in sideways) and a photo of a page (turned, noisy, JPEG at quality 60),
fetched into the inbox with the HTTP tool from a loopback web server.

`File read` shows the PDF's scanned pages as text read by OCR, and the
header names them; the photo comes back as numbered lines headed "text read
from the image (OCR)" with the image itself still after them. `File extract`
writes the same text to a Markdown file. The pictures are made by
tests/scans.py.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import STUB, all_text
from test_documents import fetch, numbered_lines, web_gateway
from webserver import file_server

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import scans  # noqa: E402

pytestmark = pytest.mark.anyio


@pytest.fixture
def served_scans(tmp_path: Path) -> Iterator[str]:
    root = tmp_path / "www"
    root.mkdir()
    (root / "minutes.pdf").write_bytes(scans.scanned_pdf())
    (root / "roster.jpg").write_bytes(scans.photo_jpeg())
    with file_server(root) as base:
        yield base


async def test_file_read_and_extract_give_the_text_of_a_scanned_pdf_and_a_photo_of_a_page(
    tmp_path: Path, served_scans: str
) -> None:
    async with web_gateway(tmp_path) as served:
        client = served.client
        pdf = await fetch(client, f"{served_scans}/minutes.pdf")
        photo = await fetch(client, f"{served_scans}/roster.jpg")

        read = await client.call_tool("File", {"op": "read", "path": pdf})
        text = all_text(read)
        assert not read.is_error, text
        shown = "\n".join(numbered_lines(text).values())
        assert scans.found(scans.TEXT_PAGE, shown) == scans.TEXT_PAGE, text
        assert scans.found(scans.SCAN_LINES, shown) == scans.SCAN_LINES, text
        assert "no text layer" not in shown, text
        header = text.split("\n", 1)[0]
        assert "Pages 2–3 were read by OCR" in header, header
        notes = read.structured_content["notes"]
        assert any("Pages 2–3 were read by OCR (mean word confidence" in n for n in notes), notes

        read = await client.call_tool("File", {"op": "read", "path": photo})
        text = all_text(read)
        assert not read.is_error, text
        assert "JPEG image, text read from the image (OCR)" in text.split("\n", 1)[0], text
        shown = "\n".join(numbered_lines(text).values())
        assert scans.found(scans.PHOTO_LINES, shown) == scans.PHOTO_LINES, text
        # The picture itself is still returned, after the text.
        kinds = [block.type for block in read.content]
        assert kinds[0] == "text" and "image" in kinds, kinds
        assert read.structured_content["shown"] == "image"
        assert read.structured_content["image"]["width"] > 0

        for path, expected in ((pdf, scans.SCAN_LINES), (photo, scans.PHOTO_LINES)):
            extracted = await client.call_tool("File", {"op": "extract", "path": path})
            text = all_text(extracted)
            assert not extracted.is_error, text
            stub = STUB.search(text)
            assert stub and stub["path"] == path.rsplit(".", 1)[0] + ".md", text
            markdown = served.inbox_file(stub["path"]).read_text()
            assert scans.found(expected, markdown) == expected, markdown
