"""Pictures of text for the OCR tests, made the same way every time with
Pillow (its own bundled font, no system font) and reportlab (a real PDF
writer, with `invariant=1` so the bytes do not change from run to run):

- `scanned_pdf()`: a PDF of three pages; page 1 has a text layer, page 2 is
  a scan (one picture the size of the page, no text), page 3 the same scan
  fed in sideways (turned a quarter).
- `scanned_report()`: a PDF of three scanned pages (no text layer at all),
  each with the same running head at its top edge and its number at the
  foot, under them a section each.
- `photo_jpeg()`: a photo of a page: turned 3 degrees, with noise, saved as
  JPEG at quality 60.

Each comes with the lines it shows, to check what OCR read against.

Used by tests/mcp, tests/gateway and tests/extract (each puts this folder on
`sys.path`).
"""

from __future__ import annotations

import io
import random

from PIL import Image, ImageChops, ImageDraw, ImageFont

# What page 1 says in its text layer.
TEXT_PAGE = ["Harbour board papers", "The scanned minutes follow on the next pages."]

# The scanned page: a heading and a paragraph of running text.
SCAN_HEADING = "Minutes of the Harbour Board"
SCAN_LINES = [
    "The committee met on the fourth of March to review",
    "the budget for the coming year. Members agreed that",
    "the channel dredging should be funded before the new",
    "warehouse, and asked the clerk to prepare a schedule",
    "of payments for the April meeting.",
]

# The photographed page.
PHOTO_HEADING = "Pilot duty roster"
PHOTO_LINES = [
    "Night pilots must report to the tower by nine",
    "and keep the radio on channel sixteen until dawn.",
    "Any vessel longer than ninety metres needs two tugs.",
]


def page_picture(heading: str, lines: list[str], dpi: int) -> Image.Image:
    """A Letter page at `dpi`, text at about 12 pt, heading at 20 pt."""
    width, height = int(8.5 * dpi), int(11 * dpi)
    page = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(page)
    body = ImageFont.load_default(size=round(12 * dpi / 72))
    big = ImageFont.load_default(size=round(20 * dpi / 72))
    x, y = dpi, dpi
    draw.text((x, y), heading, font=big, fill=0)
    y += round(0.6 * dpi)
    for line in lines:
        draw.text((x, y), line, font=body, fill=0)
        y += round(0.25 * dpi)
    return page


def scanned_pdf() -> bytes:
    from reportlab.lib.pagesizes import letter
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    scan = page_picture(SCAN_HEADING, SCAN_LINES, 200)
    sideways = scan.rotate(90, expand=True)
    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=letter, invariant=1)
    pdf.setFont("Helvetica-Bold", 18)
    pdf.drawString(72, 700, TEXT_PAGE[0])
    pdf.setFont("Helvetica", 12)
    pdf.drawString(72, 670, TEXT_PAGE[1])
    pdf.showPage()
    pdf.drawImage(ImageReader(scan), 0, 0, width=letter[0], height=letter[1])
    pdf.showPage()
    # Fed in sideways: the page is landscape, the text runs upwards.
    pdf.setPageSize((letter[1], letter[0]))
    pdf.drawImage(ImageReader(sideways), 0, 0, width=letter[1], height=letter[0])
    pdf.showPage()
    pdf.save()
    return out.getvalue()


# The scanned report: what every page's top edge repeats, and each page's
# section (its heading, then its lines).
REPORT_HEAD = "Harbour Board Annual Report"
REPORT_SECTIONS = [
    ("Channel Dredging", ["The dredger worked the outer channel for six weeks",
                          "and moved forty thousand cubic metres of silt."]),
    ("Warehouse Repairs", ["The roof of the east warehouse was replaced in May",
                           "after the winter storms had lifted its slates."]),
    ("Pilot Service", ["Pilots boarded eleven hundred vessels this year,",
                       "two hundred more than in the year before."]),
]


def report_page(number: int, total: int, dpi: int) -> Image.Image:
    """Page `number` of the report: the running head 0.4 inch from the top
    and "Page N of M" 0.5 inch from the foot, both at 10 pt, and the page's
    section from 1.2 inches down."""
    heading, lines = REPORT_SECTIONS[number - 1]
    width, height = int(8.5 * dpi), int(11 * dpi)
    page = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(page)
    small = ImageFont.load_default(size=round(10 * dpi / 72))
    body = ImageFont.load_default(size=round(12 * dpi / 72))
    big = ImageFont.load_default(size=round(20 * dpi / 72))
    draw.text((dpi, round(0.4 * dpi)), REPORT_HEAD, font=small, fill=0)
    y = round(1.2 * dpi)
    draw.text((dpi, y), heading, font=big, fill=0)
    y += round(0.6 * dpi)
    for line in lines:
        draw.text((dpi, y), line, font=body, fill=0)
        y += round(0.25 * dpi)
    footer = f"Page {number} of {total}"
    draw.text((round(4 * dpi), height - round(0.5 * dpi)), footer, font=small, fill=0)
    return page


def scanned_report() -> bytes:
    from reportlab.lib.pagesizes import letter
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=letter, invariant=1)
    total = len(REPORT_SECTIONS)
    for number in range(1, total + 1):
        scan = report_page(number, total, 200)
        pdf.drawImage(ImageReader(scan), 0, 0, width=letter[0], height=letter[1])
        pdf.showPage()
    pdf.save()
    return out.getvalue()


def noise(size: tuple[int, int], seed: int, spread: int) -> Image.Image:
    """Grey noise from 0 to `spread`, the same for the same seed."""
    rng = random.Random(seed)
    raw = rng.randbytes(size[0] * size[1])
    return Image.frombytes("L", size, raw).point(lambda v: v * spread // 255)


def photo_jpeg() -> bytes:
    """Part of a page as a phone would take it: 1400×900, text about 36 px
    high, turned 3 degrees, noisy, JPEG at quality 60."""
    page = Image.new("L", (1400, 900), 255)
    draw = ImageDraw.Draw(page)
    big = ImageFont.load_default(size=56)
    body = ImageFont.load_default(size=38)
    draw.text((80, 90), PHOTO_HEADING, font=big, fill=0)
    y = 230
    for line in PHOTO_LINES:
        draw.text((80, y), line, font=body, fill=0)
        y += 70
    # A slightly grey sheet under uneven light, turned on the desk.
    page = page.point(lambda v: 40 + v * 190 // 255)
    page = page.rotate(3, resample=Image.BICUBIC, fillcolor=230)
    page = ImageChops.add(page, noise(page.size, 1, 50))
    page = ImageChops.subtract(page, noise(page.size, 2, 50))
    out = io.BytesIO()
    page.convert("RGB").save(out, format="JPEG", quality=60)
    return out.getvalue()


def found(expected: list[str], text: str) -> list[str]:
    """The expected lines that appear in `text`, spaces and case aside."""
    flat = " ".join(text.split()).lower()
    return [line for line in expected if " ".join(line.split()).lower() in flat]


if __name__ == "__main__":
    import sys
    from pathlib import Path

    folder = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "scanned.pdf").write_bytes(scanned_pdf())
    (folder / "photo.jpg").write_bytes(photo_jpeg())
    (folder / "report.pdf").write_bytes(scanned_report())
