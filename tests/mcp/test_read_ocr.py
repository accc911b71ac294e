"""read_file of scans through a real client, over stdio and HTTP: a PDF
whose pages 2 and 3 are pictures of a page (page 3 fed in sideways) and a
photo of a page (turned, noisy, JPEG at quality 60), attached to posts in the
emulator.

The PDF's scanned pages come back as text read by OCR where "no text layer"
used to stand, the header naming the pages OCR read and their confidence;
the photo comes back as numbered lines headed "text read from the image
(OCR)", with the image itself still returned after them. The pictures are
made by tests/scans.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness import Home, Mmsim, image_blocks, numbered_lines, read_ok, serve, server_env, structured, text_of, write_seed

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import scans  # noqa: E402

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def scan_sim(porter: Path, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("scan-sim")
    pdf = root / "minutes.pdf"
    pdf.write_bytes(scans.scanned_pdf())
    photo = root / "roster.jpg"
    photo.write_bytes(scans.photo_jpeg())
    posts = [
        {"channel": "files", "user": "bob", "message": "The scanned minutes.", "files": [{"name": "minutes.pdf", "path": str(pdf)}]},
        {"channel": "files", "user": "bob", "message": "Photo of the roster.", "files": [{"name": "roster.jpg", "path": str(photo)}]},
    ]
    sim = Mmsim(write_seed(root / "seed", extra_files=posts), root)
    yield sim
    sim.stop()


async def test_a_scanned_pdf_and_a_photo_of_a_page_are_read_as_text(
    scan_sim: Mmsim, home: Home, transport: str, tmp_path: Path
):
    async with serve(transport, server_env(scan_sim, home), tmp_path) as served:
        result = await read_ok(served, scan_sim.file_id("minutes.pdf"))
        text = text_of(result)
        shown = "\n".join(line for _, line in numbered_lines(text))
        assert scans.found(scans.TEXT_PAGE, shown) == scans.TEXT_PAGE, text
        assert scans.found(scans.SCAN_LINES, shown) == scans.SCAN_LINES, text
        assert "no text layer" not in shown, text
        # Two copies of the scan: each page's lines, each in order.
        assert " ".join(shown.split()).count("The committee met on the fourth of March") == 2, text
        assert "Pages 2–3 were read by OCR (mean word confidence" in text.split("\n", 1)[0], text
        notes = structured(result)["notes"]
        assert any("Scanned sideways or upside down, read upright: page 3." == n for n in notes), notes

        result = await read_ok(served, scan_sim.file_id("roster.jpg"))
        text = text_of(result)
        header = text.split("\n", 1)[0]
        assert "roster.jpg: JPEG image, text read from the image (OCR)" in header, header
        assert "The text was read from the picture by OCR (mean word confidence" in header, header
        shown = "\n".join(line for _, line in numbered_lines(text))
        assert scans.found(scans.PHOTO_LINES, shown) == scans.PHOTO_LINES, text
        assert scans.found([scans.PHOTO_HEADING], shown), text
        # The photo itself still comes back, after the text.
        [image] = image_blocks(result)
        assert result.content[0].type == "text" and result.content[-1] is image
        record = structured(result)
        assert record["shown"] == "image" and record["image"]["original_width"] == 1400, record
