"""`porter extract` on PDFs laid out the way reports are (made here with
reportlab, a real PDF writer): headings by size, weight and numbering, two
columns read one after the other, bullets as list items, a ruled table as a
pipe table, a word hyphenated at a line's end joined again.

Needs PORTER_BIN (a porter with `extract`) and reportlab in the venv. Run
with tests/extract/run, or `python -m pytest tests/extract`.
"""

import os
import re
import subprocess
from pathlib import Path

import pytest

PORTER = os.environ.get("PORTER_BIN", "")

LEFT = [
    "The harbour board met in spring to weigh the",
    "new berths, the dredging of the channel and",
    "the fees that ships pay for a night alongside.",
]
RIGHT = [
    "Pilots asked for a second tug to be kept on",
    "call at night, since the larger vessels now",
    "arrive after dark more often than before.",
]


def porter_markdown(path: Path) -> str:
    done = subprocess.run(
        [PORTER, "extract", str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def headings(markdown: str) -> list[str]:
    return [
        re.sub(r"\\(.)", r"\1", m.group(1)).strip()
        for m in re.finditer(r"^#{1,6} (.*)$", markdown, re.M)
    ]


def table_rows(markdown: str) -> list[list[str]]:
    rows = []
    for line in markdown.splitlines():
        line = line.strip()
        if line.startswith("|") and not re.fullmatch(r"\|( *:?-+:? *\|)+", line):
            rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    canvas = pytest.importorskip("reportlab.pdfgen.canvas")
    from reportlab.lib.pagesizes import A4

    path = tmp_path_factory.mktemp("pdf") / "report.pdf"
    pdf = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    _, height = A4
    y = height - 72
    pdf.setFont("Helvetica-Bold", 20)
    pdf.drawString(72, y, "Harbour Board Annual Report")
    y -= 40
    pdf.setFont("Helvetica-Bold", 11)
    pdf.drawString(72, y, "3. FINDINGS OF THE BOARD")
    y -= 24
    pdf.setFont("Helvetica", 10)
    for i, (left, right) in enumerate(zip(LEFT, RIGHT)):
        pdf.drawString(72, y - i * 13, left)
        pdf.drawString(310, y - i * 13, right)
    y -= 3 * 13 + 20
    pdf.setFont("Helvetica-Bold", 14)
    pdf.drawString(72, y, "3.1. Next Steps")
    y -= 22
    pdf.setFont("Helvetica", 10)
    for item in ["Dredge the inner channel", "Hire a second tug crew"]:
        pdf.drawString(80, y, "\u2022")
        pdf.drawString(92, y, item)
        y -= 14
    y -= 6
    pdf.drawString(72, y, "The works are to be tendered in the au-")
    pdf.drawString(72, y - 13, "tumn, once the survey is back.")
    y -= 13 + 30
    # A ruled table: three columns, a header and two rows.
    cells = [["Berth", "Length (m)", "Depth (m)"], ["North", "240", "12.5"], ["South", "180", "9.0"]]
    xs = [72, 192, 312, 432]
    top = y
    row_h = 18
    for r, row in enumerate(cells):
        pdf.setFont("Helvetica-Bold" if r == 0 else "Helvetica", 10)
        for c, text in enumerate(row):
            pdf.drawString(xs[c] + 4, top - (r + 1) * row_h + 5, text)
    for r in range(len(cells) + 1):
        pdf.line(xs[0], top - r * row_h, xs[-1], top - r * row_h)
    for x in xs:
        pdf.line(x, top, x, top - len(cells) * row_h)
    y = top - len(cells) * row_h - 30
    pdf.setFont("Helvetica", 10)
    pdf.drawString(72, y, "Figures are for the year to March.")
    pdf.showPage()
    pdf.save()
    return path


def test_headings_come_from_size_weight_and_numbering(report):
    if not PORTER:
        pytest.skip("PORTER_BIN is not set")
    md = porter_markdown(report)
    assert headings(md) == [
        "Harbour Board Annual Report",
        "3. FINDINGS OF THE BOARD",
        "3.1. Next Steps",
    ], md
    # The title, set largest, is the top level.
    assert re.search(r"^# Harbour Board Annual Report$", md, re.M), md


def test_two_columns_are_read_column_after_column(report):
    if not PORTER:
        pytest.skip("PORTER_BIN is not set")
    text = " ".join(porter_markdown(report).split())
    left, right = " ".join(LEFT), " ".join(RIGHT)
    assert left in text and right in text, text
    assert text.index(left) < text.index(right), text


def test_bullets_are_list_items_and_hyphenated_words_are_joined(report):
    if not PORTER:
        pytest.skip("PORTER_BIN is not set")
    md = porter_markdown(report)
    assert re.search(r"^- Dredge the inner channel\n- Hire a second tug crew$", md, re.M), md
    assert "tendered in the autumn, once" in md, md


def test_a_ruled_table_is_a_pipe_table_after_the_text_above_it(report):
    if not PORTER:
        pytest.skip("PORTER_BIN is not set")
    md = porter_markdown(report)
    assert table_rows(md) == [
        ["Berth", "Length (m)", "Depth (m)"],
        ["North", "240", "12.5"],
        ["South", "180", "9.0"],
    ], md
    assert md.index("| Berth") > md.index("autumn"), md
    assert md.index("| Berth") < md.index("Figures are for the year"), md


@pytest.fixture(scope="module")
def booklet(tmp_path_factory) -> Path:
    """Three pages under one running header, each with its page number in
    the footer and its own body text."""
    canvas = pytest.importorskip("reportlab.pdfgen.canvas")
    from reportlab.lib.pagesizes import A4

    path = tmp_path_factory.mktemp("pdf") / "booklet.pdf"
    pdf = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    width, height = A4
    for page in range(1, 4):
        pdf.setFont("Helvetica", 9)
        pdf.drawString(72, height - 40, "Harbour Board Annual Report 2025")
        pdf.drawCentredString(width / 2, 30, f"Page {page + 10}")
        pdf.setFont("Helvetica", 10)
        pdf.drawString(72, height - 120, f"The body of page {page} tells of berth {page}.")
        pdf.showPage()
    pdf.save()
    return path


def test_running_headers_show_once_and_page_numbers_are_set_apart(booklet):
    if not PORTER:
        pytest.skip("PORTER_BIN is not set")
    done = subprocess.run(
        [PORTER, "extract", str(booklet)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    md = done.stdout
    for page in range(1, 4):
        assert f"The body of page {page} tells of berth {page}." in md, md
    assert md.count("Harbour Board Annual Report 2025") == 1, md
    assert md.index("Harbour Board Annual Report 2025") < md.index("The body of page 1"), md
    for number in (11, 12, 13):
        assert f"Page {number}" not in md, md
    # The notes on what was set apart go to standard error.
    assert "page numbers printed at the pages" in done.stderr, done.stderr
    assert "repeated from page to page" in done.stderr, done.stderr
