#!/usr/bin/env python3
"""Builds porter's file-view test corpus.

Usage: make_corpus.py OUT_DIR

Writes two folders under OUT_DIR, plus `manifest.json`:

- `real/`: documents made by the programs that make such files in the wild
  (python-docx, python-pptx, openpyxl, reportlab, fpdf2, Pillow, the system
  `zip` and `tar`, Python's `wave`), each holding known words, colours or
  entry names that the Rust tests in `crates/porter-fileview/tests/corpus`
  look for.
- `hostile/`: files built to hurt a reader (zip bombs, a tar.gz that expands
  past 1 GiB, a 60000x60000 PNG, a 100,000-frame GIF, 2000-deep and
  billion-laughs XML, a looping PDF page tree, truncated and random bytes),
  read by `crates/porter-fileview/tests/hostile`. Each stays a few MB on disk
  and is written in seconds: bombs are built from one deflated megabyte of
  zeros repeated, never by compressing gigabytes.

The output is deterministic (fixed seeds, fixed timestamps, normalised zip
entries) and the script is idempotent: when `manifest.json` already records
this script's hash and every file is present at its size, it does nothing.
Run it with the project venv: `.venv/bin/python scripts/make_corpus.py DIR`.
It needs the `zip`, `tar`, `gzip`, `bzip2`, `xz` and `zstd` commands; the
`.tar.zst` is skipped (and the manifest says so) when `zstd` is missing.
"""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import io
import json
import math
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import time
import wave
import zipfile
import zlib
from pathlib import Path

import hostile_pdf  # the hand-written PDFs' writer, next to this script

# Every timestamp written into a file is this one, so runs agree byte for byte.
FIXED_TIME = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
FIXED_EPOCH = int(FIXED_TIME.timestamp())
ZIP_DATE_TIME = (2024, 1, 2, 3, 4, 6)  # DOS times have two-second steps.

MIB = 1024 * 1024
GIB = 1024 * MIB

# The upright picture every orientation test image shows: a colour per quadrant.
QUADRANTS = {
    "top_left": (255, 0, 0),  # red
    "top_right": (0, 255, 0),  # green
    "bottom_left": (0, 0, 255),  # blue
    "bottom_right": (255, 255, 0),  # yellow
}

# Words on each PDF page, by producer; the tests look for them page by page.
REPORTLAB_PAGES = ["alpha bravo charlie", "delta echo foxtrot", "golf hotel india"]
FPDF_PAGES = ["juliet kilo lima", "mike november oscar", "papa quebec romeo"]

manifest: list[dict] = []


def note(path: Path, what: str) -> None:
    """Records a written file in the manifest with a line saying what it is."""
    manifest.append({"path": path, "what": what})


# --------------------------------------------------------------------------
# Office documents


def normalise_package(path: Path, patch=None) -> None:
    """Rewrites an OOXML package with fixed entry times and fixed core dates.

    python-docx, python-pptx and openpyxl stamp the current time into the zip
    entries and into docProps/core.xml; both are replaced so the corpus is
    the same on every run. `patch(name, data) -> data` may change a part.
    """
    with zipfile.ZipFile(path) as src:
        parts = [(info.filename, src.read(info)) for info in src.infolist()]
    stamp = FIXED_TIME.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for name, data in parts:
            if name == "docProps/core.xml":
                data = re.sub(
                    rb"(<dcterms:(created|modified)[^>]*>)[^<]*(</dcterms:\2>)",
                    rb"\g<1>" + stamp + rb"\g<3>",
                    data,
                )
            if patch is not None:
                name, data = patch(name, data)
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            dst.writestr(info, data)


def make_docx(path: Path) -> None:
    import docx

    document = docx.Document()
    document.core_properties.created = FIXED_TIME.replace(tzinfo=None)
    document.core_properties.modified = FIXED_TIME.replace(tzinfo=None)
    document.add_heading("Quarterly Report Alpha", level=1)
    document.add_paragraph("The first paragraph mentions apples before bananas.")
    paragraph = document.add_paragraph()
    run = paragraph.add_run("Left")
    run.add_tab()
    run.add_text("Right")
    run.add_break()
    run.add_text("Second line")
    document.add_heading("Details Table", level=2)
    table = document.add_table(rows=3, cols=3)
    for row, cells in zip(
        table.rows,
        [("Fruit", "Colour", "Count"), ("Apple", "Red", "3"), ("Banana", "Yellow", "5")],
    ):
        for cell, text in zip(row.cells, cells):
            cell.text = text
    document.add_paragraph("The closing paragraph says goodbye.")
    document.save(path)
    normalise_package(path)

    check = docx.Document(path)
    texts = [p.text for p in check.paragraphs]
    assert "Quarterly Report Alpha" in texts and "Left\tRight\nSecond line" in texts, texts
    assert check.tables[0].cell(2, 1).text == "Yellow"
    note(path, "python-docx: heading, paragraphs, a run with a tab and a break, a 3x3 table")


def make_pptx(path: Path) -> None:
    import pptx
    from pptx.util import Inches

    presentation = pptx.Presentation()
    title_and_body = presentation.slide_layouts[1]
    title_only = presentation.slide_layouts[5]

    def body_slide(title: str, body: str, notes: str | None):
        slide = presentation.slides.add_slide(title_and_body)
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
        return slide

    # Created (and so named slide1.xml ... slide4.xml) in this order, then
    # reordered below so the order shown differs from the file names.
    closing = body_slide("Closing Thoughts", "Thank you all", "Wave goodbye")
    hidden = body_slide("Appendix Figures", "Secret numbers", None)
    hidden._element.set("show", "0")
    opening = body_slide("Opening Remarks", "Welcome everyone", "Remember to smile")
    budget = presentation.slides.add_slide(title_only)
    budget.shapes.title.text = "Budget Table"
    shape = budget.shapes.add_table(3, 2, Inches(1), Inches(2), Inches(6), Inches(2))
    for r, cells in enumerate([("Item", "Cost"), ("Coffee", "12"), ("Paper", "7")]):
        for c, text in enumerate(cells):
            shape.table.cell(r, c).text = text
    budget.notes_slide.notes_text_frame.text = "Mention coffee"

    shown = [opening, budget, hidden, closing]
    id_list = presentation.slides._sldIdLst
    entries = list(id_list)
    for entry in entries:
        id_list.remove(entry)
    for slide in shown:
        (entry,) = [e for e in entries if presentation.part.related_part(e.rId) is slide.part]
        id_list.append(entry)
    presentation.save(path)
    # python-pptx named each slide part when the slide was made (slide1.xml is
    # "Closing Thoughts"), and the list above now shows them in another order.
    normalise_package(path)

    check = pptx.Presentation(path)
    titles = [s.shapes.title.text for s in check.slides]
    assert titles == ["Opening Remarks", "Budget Table", "Appendix Figures", "Closing Thoughts"], titles
    # python-pptx renames parts to the list order when it opens a file, so the
    # names as stored are read from the package itself.
    with zipfile.ZipFile(path) as package:
        rels = package.read("ppt/_rels/presentation.xml.rels").decode()
        listed = re.findall(r'r:id="(rId\d+)"', package.read("ppt/presentation.xml").decode().split("sldIdLst")[1])
    targets = dict(re.findall(r'Id="(rId\d+)"[^>]*Target="slides/(slide\d+)\.xml"', rels))
    targets.update({rid: name for name, rid in re.findall(r'Target="slides/(slide\d+)\.xml"[^>]*Id="(rId\d+)"', rels)})
    stored = [targets[rid] for rid in listed]
    assert stored == ["slide3", "slide4", "slide2", "slide1"], stored
    note(path, "python-pptx: 4 slides shown in another order than their file names, a table, notes, slide 3 hidden")


def make_xlsx(path: Path) -> None:
    import openpyxl

    workbook = openpyxl.Workbook()
    summary = workbook.active
    summary.title = "Summary"
    summary.append(["Name", "Amount"])
    summary.append(["Widget", 42])
    summary.append(["Gadget", 17.5])
    summary.append(["Total", "=SUM(B2:B3)"])
    secret = workbook.create_sheet("Secret")
    secret.sheet_state = "hidden"
    secret.append(["classified", 1])
    timeline = workbook.create_sheet("Timeline")
    timeline.append(["Event", "Day"])
    timeline.append(["Launch", dt.date(2024, 3, 15)])
    timeline.append(["Review", dt.date(2024, 12, 1)])
    for row in (2, 3):
        timeline.cell(row=row, column=2).number_format = "yyyy-mm-dd"
    workbook.properties.created = FIXED_TIME.replace(tzinfo=None)
    workbook.save(path)

    # openpyxl writes formulas without the value Excel caches beside them.
    # The total is 42 + 17.5 = 59.5; it is written as Excel would store it, so
    # the formula cell has the cached value a reader is meant to show.
    def cache_total(name: str, data: bytes) -> bytes:
        if name != "xl/worksheets/sheet1.xml":
            return name, data
        patched, count = re.subn(
            rb"(<c r=\"B4\"[^>]*><f>SUM\(B2:B3\)</f>)(<v\s*/>|<v></v>)?",
            rb"\g<1><v>59.5</v>",
            data,
        )
        assert count == 1, data
        return name, patched

    normalise_package(path, cache_total)

    check = openpyxl.load_workbook(path, data_only=True)
    assert check.sheetnames == ["Summary", "Secret", "Timeline"]
    assert check["Secret"].sheet_state == "hidden"
    assert check["Summary"]["B4"].value == 59.5
    assert check["Timeline"]["B2"].value == dt.datetime(2024, 3, 15)
    note(path, "openpyxl: sheets Summary, Secret (hidden), Timeline; a SUM with cached 59.5; dates as yyyy-mm-dd")


def make_structured_docx(path: Path) -> None:
    """A Word document with the structure Markdown keeps: headings of three
    levels, bulleted and numbered lists, a hyperlink, a table."""
    import docx
    from docx.opc.constants import RELATIONSHIP_TYPE
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    document = docx.Document()
    document.core_properties.created = FIXED_TIME.replace(tzinfo=None)
    document.core_properties.modified = FIXED_TIME.replace(tzinfo=None)
    document.add_heading("Field Guide", level=0)
    document.add_heading("Getting Started", level=1)
    walk = document.add_paragraph("Walk ")
    walk.add_run("slowly").bold = True
    walk.add_run(" on ")
    walk.add_run("wet").italic = True
    walk.add_run(" rocks and ")
    both = walk.add_run("never")
    both.bold = True
    both.italic = True
    walk.add_run(" alone.")
    document.add_paragraph("Pack these things:")
    document.add_paragraph("compass", style="List Bullet")
    document.add_paragraph("water bottle", style="List Bullet")
    document.add_paragraph("spare socks", style="List Bullet 2")
    document.add_heading("Route Steps", level=2)
    document.add_paragraph("leave the car park", style="List Number")
    document.add_paragraph("cross the bridge", style="List Number")
    paragraph = document.add_paragraph("Maps are at ")
    rel_id = paragraph.part.relate_to("https://maps.example.org/trail", RELATIONSHIP_TYPE.HYPERLINK, is_external=True)
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), rel_id)
    run = OxmlElement("w:r")
    text = OxmlElement("w:t")
    text.text = "the trail office"
    run.append(text)
    link.append(run)
    paragraph._p.append(link)
    paragraph.add_run(" for free.")
    document.add_heading("Huts", level=3)
    table = document.add_table(rows=3, cols=2)
    for row, cells in zip(table.rows, [("Hut", "Beds"), ("Ridge Hut", "12"), ("Lake Hut", "8")]):
        for cell, value in zip(row.cells, cells):
            cell.text = value
    document.save(path)
    normalise_package(path)

    check = docx.Document(path)
    styles = [p.style.name for p in check.paragraphs]
    assert "List Bullet 2" in styles and "Title" in styles, styles
    note(path, "python-docx: Title, headings 1-3, bold, italic and bold italic runs, bullets (List Bullet and List Bullet 2), a numbered list, a hyperlink, a 3x2 table")


# --------------------------------------------------------------------------
# PDF


def make_reportlab_pdf(path: Path) -> None:
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path), pagesize=letter, invariant=1)
    for words in REPORTLAB_PAGES:
        pdf.setFont("Helvetica", 14)
        pdf.drawString(72, 700, words)
        pdf.showPage()
    pdf.save()
    note(path, "reportlab: 3 pages, " + " / ".join(REPORTLAB_PAGES))


def make_fpdf_pdf(path: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_creation_date(FIXED_TIME)
    pdf.set_font("helvetica", size=14)
    for words in FPDF_PAGES:
        pdf.add_page()
        pdf.cell(text=words)
    pdf.output(str(path))
    note(path, "fpdf2: 3 pages, " + " / ".join(FPDF_PAGES))


def check_pdf(path: Path, pages: int) -> None:
    """Checks a PDF starts and ends like one and has the pages asked for."""
    data = path.read_bytes()
    assert data.startswith(b"%PDF-") and b"%%EOF" in data[-32:], path
    assert len(re.findall(rb"/Type\s*/Page\b", data)) == pages, path


# --------------------------------------------------------------------------
# Images


def quadrant_picture(width: int, height: int):
    """The upright test picture: one colour per quadrant."""
    from PIL import Image

    picture = Image.new("RGB", (width, height))
    half_w, half_h = width // 2, height // 2
    picture.paste(QUADRANTS["top_left"], (0, 0, half_w, half_h))
    picture.paste(QUADRANTS["top_right"], (half_w, 0, width, half_h))
    picture.paste(QUADRANTS["bottom_left"], (0, half_h, half_w, height))
    picture.paste(QUADRANTS["bottom_right"], (half_w, half_h, width, height))
    return picture


def assert_quadrants(picture, what: str) -> None:
    """Checks the centre of each quadrant of an upright picture, within JPEG noise."""
    picture = picture.convert("RGB")
    width, height = picture.size
    points = {
        "top_left": (width // 4, height // 4),
        "top_right": (3 * width // 4, height // 4),
        "bottom_left": (width // 4, 3 * height // 4),
        "bottom_right": (3 * width // 4, 3 * height // 4),
    }
    for quadrant, point in points.items():
        got = picture.getpixel(point)
        want = QUADRANTS[quadrant]
        assert all(abs(g - w) < 40 for g, w in zip(got, want)), (what, quadrant, got, want)


# Pillow transpose that turns a stored image upright, by EXIF orientation
# (the same table as ImageOps.exif_transpose), and its inverse, which turns
# the upright picture into what is stored.
def orientation_transposes():
    from PIL import Image

    T = Image.Transpose
    to_upright = {
        2: T.FLIP_LEFT_RIGHT,
        3: T.ROTATE_180,
        4: T.FLIP_TOP_BOTTOM,
        5: T.TRANSPOSE,
        6: T.ROTATE_270,
        7: T.TRANSVERSE,
        8: T.ROTATE_90,
    }
    inverse = {**to_upright, 6: T.ROTATE_90, 8: T.ROTATE_270}
    return to_upright, inverse


def exif_with_orientation(orientation: int) -> bytes:
    from PIL import Image

    exif = Image.Exif()
    exif[0x0112] = orientation
    return exif.tobytes()


def make_orientation_jpegs(folder: Path) -> None:
    from PIL import Image, ImageOps

    _, inverse = orientation_transposes()
    upright = quadrant_picture(160, 120)
    for orientation in range(1, 9):
        stored = upright if orientation == 1 else upright.transpose(inverse[orientation])
        path = folder / f"orientation-{orientation}.jpg"
        stored.save(path, "JPEG", quality=92, exif=exif_with_orientation(orientation))
        with Image.open(path) as check:
            assert check.getexif().get(0x0112) == orientation
            shown = ImageOps.exif_transpose(check)
            assert shown.size == (160, 120), shown.size
            assert_quadrants(shown, path.name)
        note(
            path,
            f"Pillow JPEG, EXIF orientation {orientation}; upright 160x120: "
            "red top-left, green top-right, blue bottom-left, yellow bottom-right",
        )


def make_big_photo(path: Path) -> None:
    """A 6000x4000 photo-like JPEG (gradient, texture, noise), EXIF orientation 6.

    Upright it is 4000 wide and 6000 tall, with a red square in its top-left
    corner so a test can tell which way it was turned.
    """
    from PIL import Image

    size = (4000, 6000)  # upright
    ramp = Image.linear_gradient("L").resize(size, Image.Resampling.BILINEAR)
    blotches = Image.effect_noise((250, 375), 60).resize(size, Image.Resampling.BICUBIC)
    grain = Image.effect_noise(size, 10)
    red = Image.blend(ramp, grain, 0.3)
    green = Image.blend(blotches, grain, 0.3)
    blue = Image.blend(ramp.transpose(Image.Transpose.FLIP_TOP_BOTTOM), blotches, 0.5)
    upright = Image.merge("RGB", (red, green, blue))
    upright.paste((255, 0, 0), (0, 0, 1000, 1000))
    _, inverse = orientation_transposes()
    stored = upright.transpose(inverse[6])
    assert stored.size == (6000, 4000)
    stored.save(path, "JPEG", quality=90, exif=exif_with_orientation(6))
    note(path, "Pillow JPEG 6000x4000 stored, EXIF orientation 6 (4000x6000 upright, red square top-left)")


def make_small_images(folder: Path) -> None:
    from PIL import Image

    frames = [Image.new("RGB", (64, 64), colour) for colour in [(255, 0, 0), (0, 255, 0), (0, 0, 255)]]
    gif = folder / "animated.gif"
    frames[0].save(gif, save_all=True, append_images=frames[1:], duration=200, loop=0)
    with Image.open(gif) as check:
        assert check.n_frames == 3
        assert check.convert("RGB").getpixel((32, 32)) == (255, 0, 0)
    note(gif, "Pillow animated GIF 64x64: frames red, green, blue")

    png = folder / "transparent.png"
    rgba = Image.new("RGBA", (64, 64), (255, 255, 255, 0))
    rgba.paste((0, 0, 255, 255), (0, 0, 32, 64))
    rgba.save(png)
    with Image.open(png) as check:
        assert check.mode == "RGBA" and check.getpixel((48, 32))[3] == 0
    note(png, "Pillow RGBA PNG 64x64: left half opaque blue, right half alpha 0")

    for name, fmt in [("picture.bmp", "BMP"), ("picture.tiff", "TIFF")]:
        path = folder / name
        quadrant_picture(64, 48).save(path, fmt)
        with Image.open(path) as check:
            assert check.format == fmt and check.size == (64, 48)
            assert_quadrants(check, name)
        note(path, f"Pillow {fmt} 64x48 with the four quadrant colours")


# --------------------------------------------------------------------------
# Archives made by the system zip and tar


# Entry name -> content of the tree the archives hold.
ARCHIVE_FILES = {
    "docs/readme.txt": b"Read me first, please.\n",  # 23 bytes
    "docs/meeting notes.txt": b"Agenda: corpus, limits, bombs.\n",
    "docs/notes/todo.txt": b"1. write tests\n2. run them\n",
    "data/numbers.csv": b"n,square\n1,1\n2,4\n3,9\n",
}
ARCHIVE_DIRS = ["data/", "docs/", "docs/notes/", "empty-dir/"]


def run(command: list[str], cwd: Path) -> None:
    env = {**os.environ, "TZ": "UTC", "LC_ALL": "C"}
    subprocess.run(command, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)


def make_archives(folder: Path, scratch: Path) -> list[str]:
    """Makes archive.zip and archive.tar{,.gz,.bz2,.xz,.zst}; returns what was skipped."""
    tree = scratch / "tree"
    for name, data in ARCHIVE_FILES.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_bytes(data)
    (tree / "empty-dir").mkdir(parents=True, exist_ok=True)
    (tree / "link-to-readme").symlink_to("docs/readme.txt")
    for path in sorted(tree.rglob("*"), reverse=True):
        os.utime(path, (FIXED_EPOCH, FIXED_EPOCH), follow_symlinks=False)
    os.utime(tree, (FIXED_EPOCH, FIXED_EPOCH))

    members = sorted(ARCHIVE_DIRS + list(ARCHIVE_FILES))
    zip_path = folder / "archive.zip"
    run(["zip", "-X", "-q", str(zip_path.resolve()), *members], tree)
    with zipfile.ZipFile(zip_path) as check:
        assert sorted(check.namelist()) == members, check.namelist()
    note(zip_path, "zip command: " + ", ".join(members))

    tar_common = [
        "tar", "--sort=name", f"--mtime=@{FIXED_EPOCH}", "--owner=0", "--group=0",
        "--numeric-owner", "--format=gnu",
    ]
    entries = ["data", "docs", "empty-dir", "link-to-readme"]
    skipped = []
    variants = [
        ("archive.tar", []),
        ("archive.tar.gz", ["--use-compress-program=gzip -n -9"]),
        ("archive.tar.bz2", ["--bzip2"]),
        ("archive.tar.xz", ["--xz"]),
        ("archive.tar.zst", ["--zstd"]),
    ]
    for name, flags in variants:
        if name.endswith(".zst") and shutil.which("zstd") is None:
            skipped.append(f"{name}: the zstd command is not installed")
            continue
        path = folder / name
        run([*tar_common, *flags, "-cf", str(path.resolve()), *entries], tree)
        if not name.endswith(".zst"):
            with tarfile.open(path) as check:
                names = check.getnames()
                assert "docs/readme.txt" in names and "link-to-readme" in names, names
        note(path, "tar command: " + ", ".join(members + ["link-to-readme -> docs/readme.txt"]))
    return skipped


# --------------------------------------------------------------------------
# Text and sound


def make_texts(folder: Path) -> None:
    lines = folder / "lines.txt"
    lines.write_text(
        "The first line of plain text.\n"
        "Second line: naïve café, ünïcödé ✓.\n"
        "\n"
        "Fourth line after an empty one.\n"
        "A final line without newline counts.",
        encoding="utf-8",
    )
    note(lines, "UTF-8 text, 5 lines, the last without newline")

    utf16 = folder / "utf16le.txt"
    utf16.write_bytes(b"\xff\xfe" + "Grüße aus Köln\n日本語のテキスト\nΕλληνικά γράμματα\n".encode("utf-16-le"))
    note(utf16, "UTF-16 LE with BOM: German, Japanese, Greek lines")

    cp1252 = folder / "windows-1252.txt"
    data = "Café costs 5 € today.\r\n“Quoted” text — with a dash.\r\nPlain ASCII last line.\r\n".encode("cp1252")
    try:
        data.decode("utf-8")
        raise AssertionError("the Windows-1252 sample must not be valid UTF-8")
    except UnicodeDecodeError:
        pass
    cp1252.write_bytes(data)
    note(cp1252, "Windows-1252 text with é, €, curly quotes, em dash; CRLF line ends")

    csv = folder / "table.csv"
    csv.write_text('id,name,comment\n1,Alice,"likes, commas"\n2,Bob,"says ""hi"""\n', encoding="utf-8")
    note(csv, "CSV with a header and quoted fields")

    html = folder / "page.html"
    html.write_text(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>Corpus Page</title></head>\n"
        "<body>\n<h1>Corpus Heading</h1>\n<p>The first paragraph of the page.</p>\n"
        "<ul><li>apple item</li><li>banana item</li></ul>\n</body>\n</html>\n",
        encoding="utf-8",
    )
    note(html, "HTML page: title, heading, paragraph, list")

    article = folder / "article.html"
    article.write_text(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>Harbour Report</title>\n"
        "<style>body { font-family: serif }</style><script>var hidden = 'script words';</script></head>\n"
        "<body>\n<h1>Harbour Report</h1>\n<p>Read the <a href=\"https://port.example.org/tides\">tide tables</a> "
        "and the <a href=\"https://port.example.org/notices?year=2024\">notices</a>.</p>\n"
        "<h2>Arrivals</h2>\n<table>\n<thead><tr><th>Vessel</th><th>Berth</th><th>Day</th></tr></thead>\n"
        "<tbody><tr><td>Sea Lark</td><td>4</td><td>Monday</td></tr>\n"
        "<tr><td>Grey Heron</td><td>7</td><td>Friday</td></tr></tbody>\n</table>\n"
        "<h2>Contacts</h2>\n<ul><li>harbour master</li><li>pilot station</li></ul>\n"
        "<h3>Out of hours</h3>\n<p>Call the <a href=\"https://port.example.org/duty\">duty officer</a>.</p>\n"
        "</body>\n</html>\n",
        encoding="utf-8",
    )
    note(article, "HTML page: h1-h3, a 3x3 table with thead, links, a list, a style and a script")

    numbered = folder / "numbered-10000.txt"
    numbered.write_text("".join(f"line {n} of 10000\n" for n in range(1, 10001)), encoding="ascii")
    note(numbered, "10,000 lines 'line N of 10000'")

    mislabelled = folder / "actually-text.jpg"
    mislabelled.write_text("This file is named like a JPEG but holds text.\n", encoding="utf-8")
    note(mislabelled, "text in a file named .jpg")


def make_wav(path: Path) -> None:
    rate = 8000
    samples = b"".join(
        struct.pack("<h", int(12000 * math.sin(2 * math.pi * 440 * n / rate))) for n in range(rate // 2)
    )
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(samples)
    with wave.open(str(path), "rb") as check:
        assert check.getnframes() == rate // 2
    note(path, "wave module: 0.5 s of 440 Hz, 8 kHz mono 16-bit")


# --------------------------------------------------------------------------
# Hostile files


def deflated_zeros_mib() -> bytes:
    """A raw deflate segment for 1 MiB of zeros, ending in a full flush.

    After a full flush the next segment cannot refer back, so copies of this
    segment can be laid end to end: N copies inflate to N MiB of zeros. That
    builds a gigabyte of real expansion without compressing a gigabyte.
    """
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return compressor.compress(bytes(MIB)) + compressor.flush(zlib.Z_FULL_FLUSH)


def deflated_segment(data: bytes) -> bytes:
    """A raw deflate segment for `data`, ending in a full flush (see above)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush(zlib.Z_FULL_FLUSH)


DEFLATE_END = zlib.compressobj(9, zlib.DEFLATED, -15).flush(zlib.Z_FINISH)  # an empty final block


def crc_of_zeros(mib: int, crc: int = 0) -> int:
    zeros = bytes(MIB)
    for _ in range(mib):
        crc = zlib.crc32(zeros, crc)
    return crc


def dos_time_date() -> tuple[int, int]:
    y, mo, d, h, mi, s = ZIP_DATE_TIME
    return (h << 11) | (mi << 5) | (s // 2), ((y - 1980) << 9) | (mo << 5) | d


def zip_local(name: bytes, crc: int, csize: int, usize: int) -> bytes:
    t, d = dos_time_date()
    return struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, t, d, crc, csize, usize, len(name), 0) + name


def zip_central(name: bytes, crc: int, csize: int, usize: int, offset: int) -> bytes:
    t, d = dos_time_date()
    return (
        struct.pack(
            "<IHHHHHHIIIHHHHHII",
            0x02014B50, 0x031E, 20, 0, 8, t, d, crc, csize, usize, len(name), 0, 0, 0, 0,
            0o100644 << 16, offset,
        )
        + name
    )


def zip_end(count: int, cd_size: int, cd_offset: int) -> bytes:
    return struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, cd_size, cd_offset, 0)


def make_zip_bomb(path: Path, segment: bytes) -> None:
    """Four entries of 1 GiB of zeros each, deflated: ~4 MB that really expand to 4 GiB."""
    entry_mib = 1024
    data = segment * entry_mib + DEFLATE_END
    crc = crc_of_zeros(entry_mib)
    out = bytearray()
    central = bytearray()
    for n in range(1, 5):
        name = f"zeros-{n}.bin".encode()
        offset = len(out)
        out += zip_local(name, crc, len(data), entry_mib * MIB) + data
        central += zip_central(name, crc, len(data), entry_mib * MIB, offset)
    cd_offset = len(out)
    out += central + zip_end(4, len(central), cd_offset)
    path.write_bytes(out)
    note(path, "zip bomb: 4 deflated entries of 1 GiB of zeros each (declared and real)")


def make_overlapping_zip(path: Path, segment: bytes) -> None:
    """One local entry of 64 MiB of zeros, named by 2000 central-directory entries.

    Every central entry points at the same local data (the non-recursive zip
    bomb): about 200 KB that declare 125 GiB.
    """
    entry_mib = 64
    data = segment * entry_mib + DEFLATE_END
    crc = crc_of_zeros(entry_mib)
    usize = entry_mib * MIB
    out = bytearray(zip_local(b"shared-0001.bin", crc, len(data), usize) + data)
    central = bytearray()
    count = 2000
    for n in range(1, count + 1):
        central += zip_central(f"shared-{n:04}.bin".encode(), crc, len(data), usize, 0)
    cd_offset = len(out)
    out += central + zip_end(count, len(central), cd_offset)
    path.write_bytes(out)
    note(path, "overlapping zip: 2000 central entries share one 64 MiB local entry (125 GiB declared)")


def make_tar_gz_bomb(path: Path, segment: bytes) -> None:
    """A tar.gz of three 1 GiB files of zeros and a small file: ~3 MB, 3 GiB expanded."""
    crc = 0
    size = 0

    def header(name: str, length: int) -> bytes:
        info = tarfile.TarInfo(name)
        info.size = length
        info.mtime = FIXED_EPOCH
        info.mode = 0o644
        return info.tobuf(format=tarfile.GNU_FORMAT)

    out = bytearray(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff")  # gzip header, mtime 0
    for n in range(1, 4):
        block = header(f"zeros-{n}.bin", GIB)
        out += deflated_segment(block)
        crc = zlib.crc32(block, crc)
        size += len(block)
        out += segment * 1024
        crc = crc_of_zeros(1024, crc)
        size += GIB
    tail_text = b"This entry lies beyond the first gigabyte.\n"
    tail = header("after-the-cap.txt", len(tail_text)) + tail_text
    tail += bytes(-len(tail) % 512) + bytes(1024)
    out += deflated_segment(tail) + DEFLATE_END
    crc = zlib.crc32(tail, crc)
    size += len(tail)
    out += struct.pack("<II", crc, size & 0xFFFFFFFF)
    path.write_bytes(out)
    note(path, "tar.gz bomb: three 1 GiB entries of zeros then after-the-cap.txt (3 GiB expanded)")


def make_huge_png(path: Path) -> None:
    """A PNG whose IHDR says 60000x60000 RGB (valid CRCs), with one row of data."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", 60000, 60000, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" + bytes(3 * 60000), 9)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b""))
    note(path, "PNG declaring 60000x60000 (3.6 gigapixels) with a tiny IDAT")


def make_many_frame_gif(path: Path, frames: int = 100_000) -> None:
    """A 1x1 GIF with 100,000 frames alternating black and white, written by hand."""
    out = bytearray(b"GIF89a" + struct.pack("<HHBBB", 1, 1, 0x80, 0, 0))
    out += b"\x00\x00\x00\xff\xff\xff"  # global colour table: black, white
    out += b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"  # loop forever
    # LZW, minimum code size 2: clear (4), the pixel's index, end (5).
    pixel = {0: b"\x02\x02\x44\x01\x00", 1: b"\x02\x02\x4c\x01\x00"}
    frame = {
        index: b"\x21\xf9\x04\x00\x01\x00\x00\x00" + b"\x2c" + struct.pack("<HHHHB", 0, 0, 1, 1, 0) + pixel[index]
        for index in (0, 1)
    }
    for n in range(frames):
        out += frame[n % 2]
    out += b"\x3b"
    path.write_bytes(out)
    note(path, f"GIF 1x1 with {frames:,} frames")


W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def docx_with_document(base: Path, path: Path, document_xml: bytes) -> None:
    """Copies a real DOCX package, replacing word/document.xml."""
    with zipfile.ZipFile(base) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = document_xml if info.filename == "word/document.xml" else src.read(info)
            entry = zipfile.ZipInfo(info.filename, date_time=ZIP_DATE_TIME)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            dst.writestr(entry, data)


def make_deep_docx(base: Path, path: Path) -> None:
    """A DOCX whose body nests tables 667 deep: over 2000 levels of XML."""
    levels = 667
    xml = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document xmlns:w="{W_NS}"><w:body>'
        + "<w:tbl><w:tr><w:tc>" * levels
        + "<w:p><w:r><w:t>deep</w:t></w:r></w:p>"
        + "</w:tc></w:tr></w:tbl>" * levels
        + "</w:body></w:document>"
    ).encode()
    docx_with_document(base, path, xml)
    note(path, f"DOCX with tables nested {levels} deep ({3 * levels + 6} XML levels)")


def make_billion_laughs_docx(base: Path, path: Path) -> None:
    """A DOCX whose document.xml declares the billion-laughs entities and uses the last."""
    entities = ['<!ENTITY lol "lol">']
    for n in range(1, 10):
        previous = "lol" if n == 1 else f"lol{n - 1}"
        entities.append(f'<!ENTITY lol{n} "{("&" + previous + ";") * 10}">')
    xml = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        "<!DOCTYPE w:document [\n " + "\n ".join(entities) + "\n]>\n"
        f'<w:document xmlns:w="{W_NS}"><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p>'
        "<w:p><w:r><w:t>after the laughs</w:t></w:r></w:p></w:body></w:document>"
    ).encode()
    docx_with_document(base, path, xml)
    note(path, "DOCX whose document.xml has a billion-laughs DOCTYPE (10^9 'lol' if expanded)")


def make_looping_pdf(path: Path) -> None:
    """A PDF whose page tree loops: a Pages node lists its own parent as a kid.

    Written by hand with a correct xref table, so a reader follows the loop
    rather than giving up on a broken file.
    """
    content = b"BT /F1 14 Tf 72 700 Td (looping page tree) Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R"
        b" /Resources << /Font << /F1 6 0 R >> >> >>",
        b"<< /Type /Pages /Parent 2 0 R /Kids [2 0 R] /Count 1 >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    path.write_bytes(hostile_pdf.pdf(objects))
    note(path, "hand-written PDF whose Pages node 4 has its parent (node 2) as its kid")


def make_truncated_jpeg(path: Path) -> None:
    from PIL import Image

    picture = Image.merge(
        "RGB",
        (
            Image.linear_gradient("L").resize((800, 600)),
            Image.effect_noise((800, 600), 40),
            Image.linear_gradient("L").resize((800, 600)).transpose(Image.Transpose.ROTATE_180),
        ),
    )
    buffer = io.BytesIO()
    picture.save(buffer, "JPEG", quality=90)
    whole = buffer.getvalue()
    path.write_bytes(whole[: len(whole) // 2])
    note(path, f"an 800x600 JPEG cut to its first {len(whole) // 2} of {len(whole)} bytes")


def make_truncated_tar_gz(path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as archive:
        rng = random.Random(7)
        for n in range(200):
            text = "".join(f"file {n} line {m} {rng.random():.12f}\n" for m in range(40)).encode()
            info = tarfile.TarInfo(f"files/file-{n:03}.txt")
            info.size = len(text)
            info.mtime = FIXED_EPOCH
            archive.addfile(info, io.BytesIO(text))
    whole = gzip.compress(buffer.getvalue(), compresslevel=9, mtime=0)
    path.write_bytes(whole[: len(whole) // 2])
    note(path, f"a tar.gz of 200 files cut to its first {len(whole) // 2} of {len(whole)} bytes")


def make_deep_html(path: Path, levels: int = 100_000) -> None:
    path.write_text("<!DOCTYPE html><html><body>" + "<div>" * levels + "deep" + "</div>" * levels + "</body></html>\n")
    note(path, f"HTML page with divs nested {levels:,} deep")


def make_random(path: Path) -> None:
    path.write_bytes(random.Random(1234).randbytes(64 * 1024))
    note(path, "64 KiB of seeded random bytes")


# --------------------------------------------------------------------------


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(MIB), b""):
            digest.update(block)
    return digest.hexdigest()


def up_to_date(out: Path, script_hash: str) -> bool:
    manifest_path = out / "manifest.json"
    try:
        recorded = json.loads(manifest_path.read_text())
    except (OSError, ValueError):
        return False
    if recorded.get("script_sha256") != script_hash:
        return False
    return all((out / f["path"]).is_file() and (out / f["path"]).stat().st_size == f["bytes"] for f in recorded["files"])


def build(root: Path, scratch: Path) -> list[str]:
    real = root / "real"
    hostile = root / "hostile"
    real.mkdir()
    hostile.mkdir()

    make_docx(real / "report.docx")
    make_structured_docx(real / "guide.docx")
    make_pptx(real / "slides.pptx")
    make_xlsx(real / "book.xlsx")
    make_reportlab_pdf(real / "reportlab.pdf")
    check_pdf(real / "reportlab.pdf", 3)
    make_fpdf_pdf(real / "fpdf2.pdf")
    check_pdf(real / "fpdf2.pdf", 3)
    make_orientation_jpegs(real)
    make_big_photo(real / "photo-6000x4000.jpg")
    make_small_images(real)
    skipped = make_archives(real, scratch)
    make_texts(real)
    make_wav(real / "tone.wav")

    segment = deflated_zeros_mib()
    make_zip_bomb(hostile / "zip-bomb.zip", segment)
    make_overlapping_zip(hostile / "overlapping.zip", segment)
    make_tar_gz_bomb(hostile / "bomb.tar.gz", segment)
    make_huge_png(hostile / "huge-dimensions.png")
    make_many_frame_gif(hostile / "frames-100000.gif")
    make_deep_docx(real / "report.docx", hostile / "deep-nesting.docx")
    make_billion_laughs_docx(real / "report.docx", hostile / "billion-laughs.docx")
    make_looping_pdf(hostile / "page-loop.pdf")
    make_truncated_jpeg(hostile / "truncated.jpg")
    make_truncated_tar_gz(hostile / "truncated.tar.gz")
    make_random(hostile / "random.bin")
    make_deep_html(hostile / "deep-nesting.html")
    return skipped


def main() -> int:
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        print("make_corpus: give one folder to write the corpus into (a folder whose name starts with - needs ./ before it)", file=sys.stderr)
        return 2
    out = Path(sys.argv[1])
    missing = [tool for tool in ("zip", "tar", "gzip", "bzip2", "xz") if shutil.which(tool) is None]
    if missing:
        print(f"make_corpus: install {' '.join(missing)} (e.g. apt-get install -y {' '.join(missing)})", file=sys.stderr)
        return 1
    script_hash = sha256_file(Path(__file__))
    if up_to_date(out, script_hash):
        print(f"{out}: corpus is up to date")
        return 0

    started = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    # Built beside its final place, then moved in, so an interrupted run never
    # leaves a half corpus that looks complete.
    with tempfile.TemporaryDirectory(dir=out, prefix=".building-") as temp:
        root = Path(temp) / "corpus"
        scratch = Path(temp) / "scratch"
        root.mkdir()
        scratch.mkdir()
        skipped = build(root, scratch)
        files = []
        for entry in manifest:
            path = entry["path"]
            files.append(
                {
                    "path": str(path.relative_to(root)),
                    "bytes": path.stat().st_size,
                    "sha256": sha256_file(path),
                    "what": entry["what"],
                }
            )
        for folder in ("real", "hostile"):
            if (out / folder).exists():
                shutil.rmtree(out / folder)
            (root / folder).rename(out / folder)
    (out / "manifest.json").write_text(
        json.dumps({"script_sha256": script_hash, "skipped": skipped, "files": files}, indent=1) + "\n"
    )
    total = sum(f["bytes"] for f in files)
    print(f"{out}: wrote {len(files)} files, {total / MIB:.1f} MiB, in {time.monotonic() - started:.1f} s")
    for reason in skipped:
        print(f"skipped {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
