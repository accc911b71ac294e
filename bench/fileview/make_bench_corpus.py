#!/usr/bin/env python3
"""Writes the file view benchmark corpus into OUT_DIR, the same bytes every run.

Usage: make_bench_corpus.py OUT_DIR

Files (names are what crates/porter-fileview/benches/fileview.rs and peers.py
expect):
  report.docx  python-docx: 30 paragraphs under headings, and a 12x5 table
  deck.pptx    python-pptx: 20 slides of bullets (one with a table), each with
               speaker notes
  sheet.xlsx   openpyxl: a header and 10,000 rows x 10 columns of numbers,
               strings, dates and date-times
  paper.pdf    reportlab: 50 pages of text
  page.html    about 200 KB of headings, paragraphs, tables and links
  photo.jpg    Pillow: 6000x4000 photo-like JPEG, quality 90, EXIF orientation 6

Every random choice comes from a seeded generator, document dates are fixed,
the zip packages are rewritten with fixed timestamps and reportlab runs in
invariant mode, so two runs give byte-identical files.
"""

import datetime as dt
import io
import random
import re
import sys
import zipfile
from pathlib import Path

SEED = 20240601
FIXED_TIME = dt.datetime(2024, 6, 1, 12, 0, 0)

WORDS = (
    "the of and to in is that for it as with was on be by this are from at or an "
    "have not which but all were when we there can more if will one about their "
    "port harbour cargo vessel manifest container crane berth tide pilot freight "
    "customs ledger invoice quarter revenue forecast margin supplier warehouse "
    "schedule delivery route inspection report budget audit review summary draft "
    "analysis figure table section appendix result method sample measure value"
).split()
CITIES = [
    "Rotterdam", "Hamburg", "Antwerp", "Valencia", "Genoa", "Piraeus", "Gdansk",
    "Felixstowe", "Le Havre", "Bremerhaven", "Singapore", "Shanghai", "Busan",
    "Yokohama", "Santos", "Durban", "Montréal", "Göteborg", "Málaga", "Zürich",
]
STATUSES = ["open", "shipped", "delivered", "held at customs", "returned", "cancelled"]


def sentence(rng, low=8, high=20):
    words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
    return " ".join(words).capitalize() + "."


def paragraph(rng, sentences=5):
    return " ".join(sentence(rng) for _ in range(sentences))


def normalize_zip(path):
    """Rewrites a zip with a fixed timestamp on every entry (and in the
    document properties, which openpyxl stamps with the time of saving), so
    that the package bytes do not depend on when the corpus was made."""
    with zipfile.ZipFile(path) as src:
        entries = [(info.filename, src.read(info.filename)) for info in src.infolist()]
    stamp = FIXED_TIME.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
    entries = [
        (name, re.sub(rb"(<dcterms:modified[^>]*>)[^<]*(</dcterms:modified>)", rb"\g<1>" + stamp + rb"\g<2>", data))
        if name == "docProps/core.xml"
        else (name, data)
        for name, data in entries
    ]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=(2024, 6, 1, 12, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            dst.writestr(info, data)
    Path(path).write_bytes(buf.getvalue())


def make_docx(path, rng):
    import docx

    doc = docx.Document()
    doc.core_properties.created = FIXED_TIME
    doc.core_properties.modified = FIXED_TIME
    doc.core_properties.title = "Quarterly port operations report"
    doc.core_properties.author = "porter bench"
    doc.add_heading("Quarterly port operations report", level=0)
    for i in range(30):
        if i % 6 == 0:
            doc.add_heading(f"Section {i // 6 + 1}: {sentence(rng, 3, 6)[:-1]}", level=1)
        doc.add_paragraph(paragraph(rng, rng.randint(3, 7)))
        if i == 14:
            table = doc.add_table(rows=1, cols=5)
            table.style = "Table Grid"
            for cell, title in zip(table.rows[0].cells, ["Port", "Calls", "TEU", "Dwell (h)", "Status"]):
                cell.text = title
            for _ in range(12):
                cells = table.add_row().cells
                cells[0].text = rng.choice(CITIES)
                cells[1].text = str(rng.randint(10, 900))
                cells[2].text = f"{rng.randint(1000, 250000):,}"
                cells[3].text = f"{rng.uniform(4, 96):.1f}"
                cells[4].text = rng.choice(STATUSES)
    doc.save(path)
    normalize_zip(path)


def make_pptx(path, rng):
    from pptx import Presentation
    from pptx.util import Inches

    prs = Presentation()
    prs.core_properties.created = FIXED_TIME
    prs.core_properties.modified = FIXED_TIME
    prs.core_properties.revision = 1
    title_layout, content_layout, title_only = prs.slide_layouts[0], prs.slide_layouts[1], prs.slide_layouts[5]
    for n in range(1, 21):
        if n == 1:
            slide = prs.slides.add_slide(title_layout)
            slide.shapes.title.text = "Port operations review"
            slide.placeholders[1].text = "Twenty slides of findings, figures and plans"
        elif n == 10:
            slide = prs.slides.add_slide(title_only)
            slide.shapes.title.text = "Throughput by port"
            shape = slide.shapes.add_table(6, 4, Inches(0.5), Inches(1.5), Inches(9), Inches(3))
            table = shape.table
            for c, title in enumerate(["Port", "Calls", "TEU", "Change"]):
                table.cell(0, c).text = title
            for r in range(1, 6):
                table.cell(r, 0).text = rng.choice(CITIES)
                table.cell(r, 1).text = str(rng.randint(10, 900))
                table.cell(r, 2).text = f"{rng.randint(1000, 250000):,}"
                table.cell(r, 3).text = f"{rng.uniform(-20, 20):+.1f}%"
        else:
            slide = prs.slides.add_slide(content_layout)
            slide.shapes.title.text = f"{n}. {sentence(rng, 3, 6)[:-1]}"
            body = slide.placeholders[1].text_frame
            body.text = sentence(rng, 6, 12)
            for _ in range(rng.randint(3, 5)):
                item = body.add_paragraph()
                item.text = sentence(rng, 5, 12)
                item.level = rng.choice([0, 0, 1])
        slide.notes_slide.notes_text_frame.text = paragraph(rng, rng.randint(2, 4))
    prs.save(path)
    normalize_zip(path)


def make_xlsx(path, rng):
    from openpyxl import Workbook

    wb = Workbook(write_only=True)
    wb.properties.created = FIXED_TIME
    wb.properties.modified = FIXED_TIME
    wb.properties.creator = "porter bench"
    ws = wb.create_sheet("Shipments")
    ws.append(["id", "city", "shipped", "arrived", "weight_kg", "containers",
               "value_eur", "status", "on_time", "note"])
    start = dt.date(2020, 1, 1)
    for i in range(1, 10_001):
        shipped = start + dt.timedelta(days=rng.randint(0, 1500))
        arrived = dt.datetime.combine(shipped, dt.time(rng.randint(0, 23), rng.randint(0, 59))) + dt.timedelta(
            days=rng.randint(1, 40)
        )
        ws.append([
            i,
            rng.choice(CITIES),
            shipped,
            arrived,
            round(rng.uniform(100, 30000), 2),
            rng.randint(1, 60),
            round(rng.lognormvariate(10, 1), 2),
            rng.choice(STATUSES),
            rng.random() < 0.8,
            sentence(rng, 2, 6),
        ])
    wb.save(path)
    normalize_zip(path)


def make_pdf(path, rng):
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=A4, invariant=1)
    c.setTitle("Port operations: fifty pages")
    c.setAuthor("porter bench")
    width, height = A4
    for page in range(1, 51):
        c.setFont("Helvetica-Bold", 14)
        c.drawString(56, height - 60, f"Chapter {page}: {sentence(rng, 3, 6)[:-1]}")
        c.setFont("Helvetica", 10)
        y = height - 90
        while y > 70:
            line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(11, 15)))
            c.drawString(56, y, line)
            y -= 14
        c.setFont("Helvetica", 8)
        c.drawString(width / 2 - 10, 40, f"- {page} -")
        c.showPage()
    c.save()


def make_html(path, rng):
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>Port operations handbook</title>',
        "<style>body{font-family:sans-serif;max-width:60em} table{border-collapse:collapse}"
        " td,th{border:1px solid #999;padding:2px 6px}</style></head><body>",
        '<nav><a href="#s1">Start</a> | <a href="https://example.org/ports">Ports</a></nav>',
        "<h1>Port operations handbook</h1>",
    ]
    section = 0
    while sum(len(p) for p in parts) < 200_000:
        section += 1
        parts.append(f'<h2 id="s{section}">{section}. {sentence(rng, 3, 7)[:-1]}</h2>')
        for sub in range(1, 4):
            parts.append(f"<h3>{section}.{sub} {sentence(rng, 2, 5)[:-1]}</h3>")
            for _ in range(2):
                words = paragraph(rng, 4).split(" ")
                at = rng.randrange(len(words))
                words[at] = f'<a href="https://example.org/{section}/{sub}/{at}">{words[at]}</a>'
                at = rng.randrange(len(words))
                words[at] = f"<strong>{words[at]}</strong>"
                parts.append("<p>" + " ".join(words) + "</p>")
        if section % 2 == 0:
            rows = ["<table><thead><tr><th>Port</th><th>Calls</th><th>TEU</th><th>Link</th></tr></thead><tbody>"]
            for _ in range(10):
                city = rng.choice(CITIES)
                rows.append(
                    f"<tr><td>{city}</td><td>{rng.randint(10, 900)}</td><td>{rng.randint(1000, 250000)}</td>"
                    f'<td><a href="https://example.org/port/{section}/{city}">details</a></td></tr>'
                )
            rows.append("</tbody></table>")
            parts.append("\n".join(rows))
        else:
            items = "".join(f"<li>{sentence(rng, 4, 10)}</li>" for _ in range(5))
            parts.append(f"<ul>{items}</ul>")
    parts.append("<footer><p>Generated for the porter file view benchmark.</p></footer></body></html>")
    Path(path).write_text("\n".join(parts) + "\n", encoding="utf-8")


def make_jpeg(path, rng):
    """A 24 MP image with what makes photos costly to code: smooth gradients,
    soft-edged shapes, sharp edges and sensor-like noise."""
    from PIL import Image, ImageChops, ImageDraw, ImageFilter

    size = (6000, 4000)
    # Gradients of sky and ground, each channel a different direction.
    r = Image.linear_gradient("L").resize(size)
    g = Image.radial_gradient("L").resize(size)
    b = Image.linear_gradient("L").rotate(90).resize(size)
    img = Image.merge("RGB", (r, g, b))
    shapes = Image.new("RGB", size, (0, 0, 0))
    mask = Image.new("L", size, 0)
    draw_shapes, draw_mask = ImageDraw.Draw(shapes), ImageDraw.Draw(mask)
    for _ in range(160):
        x, y = rng.randrange(size[0]), rng.randrange(size[1])
        w, h = rng.randint(60, 1200), rng.randint(60, 900)
        box = (x - w // 2, y - h // 2, x + w // 2, y + h // 2)
        colour = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
        alpha = rng.randint(90, 230)
        if rng.random() < 0.5:
            draw_shapes.ellipse(box, fill=colour)
            draw_mask.ellipse(box, fill=alpha)
        else:
            draw_shapes.rectangle(box, fill=colour)
            draw_mask.rectangle(box, fill=alpha)
    mask = mask.filter(ImageFilter.GaussianBlur(3))
    img = Image.composite(shapes, img, mask)
    # Fine detail: thin lines like branches, wires and text.
    draw = ImageDraw.Draw(img)
    for _ in range(1500):
        x, y = rng.randrange(size[0]), rng.randrange(size[1])
        draw.line(
            (x, y, x + rng.randint(-300, 300), y + rng.randint(-300, 300)),
            fill=(rng.randrange(256), rng.randrange(256), rng.randrange(256)),
            width=rng.randint(1, 4),
        )
    # Sensor noise, the same in every run (effect_noise has its own random
    # source, so the noise is tiled from a seeded, generated block).
    block = Image.frombytes("L", (500, 500), bytes(rng.randrange(112, 145) for _ in range(250_000)))
    noise = Image.new("L", size)
    for ty in range(0, size[1], 500):
        for tx in range(0, size[0], 500):
            noise.paste(block.rotate(90 * ((tx + ty) // 500 % 4)), (tx, ty))
    noise_rgb = Image.merge("RGB", (noise, noise.transpose(Image.Transpose.FLIP_LEFT_RIGHT), noise))
    img = ImageChops.add(img, noise_rgb, 1.0, -128)
    exif = Image.Exif()
    exif[0x0112] = 6  # Orientation: the stored image must turn 90 degrees clockwise.
    exif[0x010F] = "porter bench"  # Make
    exif[0x0110] = "synthetic 24 MP"  # Model
    img.save(path, "JPEG", quality=90, exif=exif.tobytes())


MAKERS = [
    ("report.docx", make_docx),
    ("deck.pptx", make_pptx),
    ("sheet.xlsx", make_xlsx),
    ("paper.pdf", make_pdf),
    ("page.html", make_html),
    ("photo.jpg", make_jpeg),
]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_bench_corpus.py OUT_DIR")
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, make in MAKERS:
        # Each file has its own seed, so changing one maker leaves the others' bytes alone.
        rng = random.Random(f"{SEED}:{name}")
        target = out / name
        partial = out / (name + ".partial")
        make(partial, rng)
        partial.replace(target)
        print(f"{target}\t{target.stat().st_size} bytes")


if __name__ == "__main__":
    main()
