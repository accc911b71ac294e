"""`porter extract` against markitdown on the same corpus files: the same
STRUCTURE (headings, table cells, link targets), not the same text.

Needs PORTER_BIN (a porter with `extract`) and PORTER_CORPUS (made by
scripts/make_corpus.py); markitdown[docx,pptx,xlsx,pdf] in the venv. Run
with tests/extract/run, or `python -m pytest tests/extract`.
"""

import os
import re
import subprocess
from pathlib import Path

import pytest

PORTER = os.environ.get("PORTER_BIN", "")
CORPUS = Path(os.environ.get("PORTER_CORPUS", "target/corpus"))

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\)")
SEPARATOR = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$")


def porter_markdown(path: Path) -> str:
    done = subprocess.run(
        [PORTER, "extract", str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="session")
def markitdown():
    from markitdown import MarkItDown

    return MarkItDown()


def peer_markdown(markitdown, path: Path) -> str:
    return markitdown.convert(str(path)).text_content


def unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def headings(markdown: str) -> list[str]:
    found = []
    for line in markdown.splitlines():
        match = HEADING.match(line)
        if match:
            found.append(unescape(match.group(2)))
    return found


def table_cells(markdown: str) -> set[str]:
    """Every non-empty cell of every GFM table, whitespace collapsed."""
    cells = set()
    for line in markdown.splitlines():
        line = line.strip()
        if not line.startswith("|") or SEPARATOR.match(line):
            continue
        for cell in re.split(r"(?<!\\)\|", line.strip("|")):
            cell = " ".join(unescape(cell).split())
            if cell:
                cells.add(cell)
    return cells


def links(markdown: str) -> set[str]:
    return set(LINK.findall(markdown))


def number(cell: str) -> str:
    """A cell as a number where it is one ("42.0" and "42" agree)."""
    try:
        value = float(cell)
    except ValueError:
        return cell
    return repr(value)


def skip_without_tools():
    if not PORTER or not Path(PORTER).is_file():
        pytest.skip("PORTER_BIN does not name a porter binary")
    if not (CORPUS / "real").is_dir():
        pytest.skip("PORTER_CORPUS has no real/ folder")


@pytest.mark.parametrize("name", ["report.docx", "guide.docx", "article.html", "page.html"])
def test_documents_have_the_same_headings_table_cells_and_links(markitdown, name):
    skip_without_tools()
    path = CORPUS / "real" / name
    ours, theirs = porter_markdown(path), peer_markdown(markitdown, path)
    # markitdown (mammoth) writes a Title-styled paragraph as plain text,
    # where porter makes it a top heading; every heading markitdown finds,
    # porter finds at the same level and in the same order.
    their_headings = headings(theirs)
    our_headings = [h for h in headings(ours) if h in their_headings]
    assert our_headings == their_headings, (ours, theirs)
    assert table_cells(ours) == table_cells(theirs), (ours, theirs)
    assert links(ours) == links(theirs), (ours, theirs)


def test_slides_have_the_same_titles_table_cells_and_notes(markitdown):
    skip_without_tools()
    path = CORPUS / "real" / "slides.pptx"
    ours, theirs = porter_markdown(path), peer_markdown(markitdown, path)
    # markitdown heads each slide "# <title>"; porter "## Slide N: <title>".
    our_titles = [
        re.sub(r"^Slide \d+: ", "", h).removesuffix(" (hidden)")
        for h in headings(ours)
        if h.startswith("Slide ")
    ]
    their_titles = [h for h in headings(theirs) if not h.startswith("Notes")]
    assert our_titles == their_titles, (ours, theirs)
    assert table_cells(ours) == table_cells(theirs), (ours, theirs)
    for words in ["Remember to smile", "Mention coffee", "Wave goodbye"]:
        assert words in ours and words in theirs


def test_sheets_have_the_same_names_and_cells(markitdown):
    skip_without_tools()
    path = CORPUS / "real" / "book.xlsx"
    ours, theirs = porter_markdown(path), peer_markdown(markitdown, path)
    assert [h.removesuffix(" (hidden)") for h in headings(ours)] == headings(theirs)
    # markitdown (pandas) writes whole numbers as floats and dates with a
    # time of 00:00:00 unless the format hides it; compare values.
    ours_cells = {number(c) for c in table_cells(ours)}
    theirs_cells = {number(c.removesuffix(" 00:00:00")) for c in table_cells(theirs)}
    assert ours_cells == theirs_cells, (ours, theirs)


@pytest.mark.parametrize("name", ["reportlab.pdf", "fpdf2.pdf"])
def test_pdf_pages_hold_the_same_words_in_order(markitdown, name):
    skip_without_tools()
    path = CORPUS / "real" / name
    ours, theirs = porter_markdown(path), peer_markdown(markitdown, path)
    markers = re.findall(r"<!-- page (\d+) of (\d+) -->", ours)
    assert markers == [("1", "3"), ("2", "3"), ("3", "3")], ours
    strip = lambda text: re.sub(r"<!--.*?-->", " ", text).split()
    assert strip(ours) == strip(theirs), (ours, theirs)
