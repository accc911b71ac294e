"""`porter extract` on scans: a PDF whose pages 2 and 3 are pictures of a
page (page 3 fed in sideways) and a photo of a page (turned, noisy, JPEG at
quality 60) come back as text read by OCR, laid out like any PDF page, with
notes naming the pages read by OCR and their confidence.

The pictures are made by tests/scans.py. Needs PORTER_BIN (a porter built
with OCR, the default) and reportlab and Pillow in the venv.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import scans  # noqa: E402

PORTER = os.environ.get("PORTER_BIN", "")


def extract(path: Path) -> subprocess.CompletedProcess:
    if not PORTER:
        pytest.skip("PORTER_BIN is not set")
    return subprocess.run(
        [PORTER, "extract", str(path)], capture_output=True, text=True, timeout=120
    )


def pages(markdown: str) -> dict[int, str]:
    """The Markdown of each page, by the `<!-- page N of M -->` markers."""
    parts = re.split(r"^<!-- page (\d+) of \d+ -->$", markdown, flags=re.M)
    return {int(parts[i]): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def test_a_scanned_pdf_is_read_by_ocr_page_by_page_and_the_notes_say_which(tmp_path):
    path = tmp_path / "minutes.pdf"
    path.write_bytes(scans.scanned_pdf())
    done = extract(path)
    assert done.returncode == 0, done.stderr
    by_page = pages(done.stdout)
    assert set(by_page) == {1, 2, 3}, done.stdout
    # Page 1 is its own text layer.
    assert scans.found(scans.TEXT_PAGE, by_page[1]) == scans.TEXT_PAGE, by_page[1]
    # Pages 2 and 3 are the same scan, the second sideways: both read, in
    # order, the heading set larger as a heading.
    for number in (2, 3):
        text = by_page[number]
        assert "no text layer" not in text, text
        assert scans.found(scans.SCAN_LINES, text) == scans.SCAN_LINES, (number, text)
        assert re.search(r"^#+ Minutes of the Harbour Board$", text, re.M), (number, text)
        first = " ".join(text.split()).find("The committee met")
        last = " ".join(text.split()).find("of payments for the April meeting")
        assert 0 <= first < last, text
    notes = [line for line in done.stderr.splitlines() if line.startswith("porter: note: ")]
    ocr = [n for n in notes if "read by OCR" in n]
    assert len(ocr) == 1 and "Pages 2–3 were read by OCR" in ocr[0], notes
    assert re.search(r"mean word confidence \d+%", ocr[0]), ocr
    assert any("read upright: page 3." in n for n in notes), notes


def test_a_scanned_report_has_its_running_head_and_page_numbers_set_apart_like_a_born_digital_one(
    tmp_path,
):
    path = tmp_path / "report.pdf"
    path.write_bytes(scans.scanned_report())
    done = extract(path)
    assert done.returncode == 0, done.stderr
    by_page = pages(done.stdout)
    assert set(by_page) == {1, 2, 3}, done.stdout
    for number, (heading, lines) in enumerate(scans.REPORT_SECTIONS, 1):
        text = by_page[number]
        assert scans.found(lines, text) == lines, (number, text)
        # The section's title is the page's one heading; its lines, with
        # or without descenders, are text.
        assert re.findall(r"^#+ (.*)$", text, re.M) == [heading], (number, text)
    # The running head is shown on the first page only, and the printed
    # page numbers not at all, as for a PDF with a text layer.
    head = scans.REPORT_HEAD.lower()
    assert [n for n, t in by_page.items() if head in " ".join(t.split()).lower()] == [1], done.stdout
    assert not re.search(r"^page \d of 3$", done.stdout, re.I | re.M), done.stdout
    # The three sections are set in one type: one level.
    assert len(set(re.findall(r"^(#+) ", done.stdout, re.M))) == 1, done.stdout
    notes = [line for line in done.stderr.splitlines() if line.startswith("porter: note: ")]
    assert any("page numbers printed at the pages' edges are left out" in n for n in notes), notes
    assert any("shown on the first page it is on only (2 repeats left out)" in n for n in notes), notes


def test_a_photo_of_a_page_is_read_by_ocr(tmp_path):
    path = tmp_path / "roster.jpg"
    path.write_bytes(scans.photo_jpeg())
    done = extract(path)
    assert done.returncode == 0, done.stderr
    assert scans.found(scans.PHOTO_LINES, done.stdout) == scans.PHOTO_LINES, done.stdout
    assert scans.found([scans.PHOTO_HEADING], done.stdout), done.stdout
    assert "The text was read from the picture by OCR" in done.stderr, done.stderr


def test_a_picture_without_text_is_not_extracted_and_says_why(tmp_path):
    from PIL import Image

    # A smooth gradient: pixels, no text.
    picture = Image.linear_gradient("L").resize((400, 300))
    path = tmp_path / "sky.png"
    picture.save(path)
    done = extract(path)
    assert done.returncode == 1, done.stdout
    assert "is an image (It shows no lines of text, so OCR did not read it)" in done.stderr, done.stderr
    assert done.stdout == ""
