"""Engines start on first need, told from outside without timing anything:
`porter view` and `porter extract` of a born-digital document or a photo
without text start no OCR engine, and a scan or a photo of a page starts
one; a recording starts the speech engine, and a PDF page with a ruled
table the table engine. Two witnesses for each file: porter's own report
(`RUST_LOG=porter=debug`: "file view engines started: …", which counts its
workers' engines) and the files the whole process tree opens, seen by
strace (Tesseract's `eng.traineddata` and `osd.traineddata`).

Needs PORTER_BIN, PORTER_CORPUS (scripts/make_corpus.py), strace,
PORTER_TEST_IMAGES (scripts/test_images.sh: the sample photographs of the
scikit-image wheel), and for the recording PORTER_MODELS_DIR (the speech
model, scripts/models.sh) and espeak-ng; for the tables the table model
and reportlab.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import scans  # noqa: E402

PORTER = os.environ.get("PORTER_BIN", "")
CORPUS = Path(os.environ.get("PORTER_CORPUS", "")) / "real"
IMAGES = Path(os.environ.get("PORTER_TEST_IMAGES", ""))

REPORT = re.compile(r"file view engines started: (.+)$", re.M)


def started(command: str, path: Path) -> tuple[str, set[str]]:
    """What porter reported it started reading `path`, and the Tesseract
    data files its process tree opened."""
    if not PORTER:
        pytest.skip("PORTER_BIN is not set")
    if shutil.which("strace") is None:
        pytest.fail("strace is not installed: scripts/test installs it")
    with tempfile.TemporaryDirectory() as scratch:
        trace = Path(scratch) / "trace"
        done = subprocess.run(
            ["strace", "-f", "-qq", "-e", "trace=open,openat", "-o", str(trace), PORTER, command, str(path)],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "RUST_LOG": "porter=debug"},
        )
        opened = set(re.findall(r"(\w+)\.traineddata", trace.read_text(errors="replace")))
    assert done.returncode in (0, 1), done.stderr
    report = REPORT.search(done.stderr)
    return (report.group(1).strip() if report else f"no report in:\n{done.stderr[-2000:]}"), opened


BORN_DIGITAL = ["reportlab.pdf", "fpdf2.pdf", "report.docx", "slides.pptx", "book.xlsx", "page.html"]


@pytest.mark.parametrize("name", BORN_DIGITAL)
@pytest.mark.parametrize("command", ["view", "extract"])
def test_a_born_digital_document_starts_no_engine(command, name):
    path = CORPUS / name
    if not path.exists():
        pytest.fail(f"{path} is missing: run scripts/make_corpus.py")
    report, opened = started(command, path)
    assert opened == set(), f"{name} made porter open Tesseract's data: {opened}"
    assert report == "none", report


# Photographs in which no OCR should run: an animal, a drink, textures that
# look most like rows of marks (bricks, gravel, grass), the moon, a retina.
# And the corpus's 24 MP camera-sized JPEG, turned by its EXIF orientation.
PHOTOS = ["chelsea.png", "coffee.png", "brick.png", "gravel.png", "grass.png", "moon.png", "retina.jpg", "corpus:photo-6000x4000.jpg"]


@pytest.mark.parametrize("name", PHOTOS)
def test_a_photo_without_text_starts_no_engine(name):
    path = CORPUS / name.removeprefix("corpus:") if name.startswith("corpus:") else IMAGES / name
    if not path.exists():
        pytest.fail(f"{path} is missing: run scripts/test (scripts/make_corpus.py, scripts/test_images.sh)")
    report, opened = started("view", path)
    assert opened == set(), f"{name} made porter open Tesseract's data: {opened}"
    assert report == "none", report


def test_a_photographed_page_starts_ocr_and_reads_its_text():
    path = IMAGES / "page.png"
    if not path.exists():
        pytest.fail(f"{path} is missing: PORTER_TEST_IMAGES must be filled by scripts/test_images.sh")
    report, opened = started("view", path)
    assert "eng" in opened, opened
    assert report == "ocr", report
    done = subprocess.run([PORTER, "extract", str(path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "segmentation" in done.stdout.lower(), done.stdout


def test_a_scan_and_a_photo_of_a_page_start_ocr(tmp_path):
    scanned = tmp_path / "minutes.pdf"
    scanned.write_bytes(scans.scanned_pdf())
    report, opened = started("extract", scanned)
    assert "eng" in opened, opened
    assert report == "ocr", report
    photo = tmp_path / "roster.jpg"
    photo.write_bytes(scans.photo_jpeg())
    report, opened = started("view", photo)
    assert "eng" in opened, opened
    assert report == "ocr", report


def test_a_recording_starts_the_speech_engine_and_nothing_else(tmp_path):
    models = os.environ.get("PORTER_MODELS_DIR")
    assert models, "PORTER_MODELS_DIR is not set: scripts/test installs the speech model and sets it"
    memo = tmp_path / "memo.wav"
    subprocess.run(
        ["espeak-ng", "-w", str(memo), "The ferry leaves at nine from the north pier."],
        check=True,
        timeout=60,
    )
    report, opened = started("extract", memo)
    assert opened == set(), f"a recording made porter open Tesseract's data: {opened}"
    assert report == "speech", report


def ruled_table_pdf(path: Path) -> None:
    """A one-page PDF from reportlab: a heading over a 3-column table drawn
    with a full grid of ruling lines."""
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import letter
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate, Table, TableStyle

    rows = [
        ["Station", "Rain (mm)", "Wind (km/h)"],
        ["Ashford", "12.5", "31"],
        ["Bexley", "8.0", "17"],
        ["Crowhurst", "21.3", "44"],
    ]
    table = Table(rows)
    table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.75, colors.black)]))
    heading = Paragraph("Weather stations, March", getSampleStyleSheet()["Heading2"])
    SimpleDocTemplate(str(path), pagesize=letter, invariant=1).build([heading, table])


def test_a_pdf_page_with_a_ruled_table_starts_the_table_engine_and_no_ocr(tmp_path):
    models = os.environ.get("PORTER_MODELS_DIR")
    assert models, "PORTER_MODELS_DIR is not set: scripts/test installs the table model and sets it"
    pdf = tmp_path / "stations.pdf"
    ruled_table_pdf(pdf)
    report, opened = started("extract", pdf)
    assert opened == set(), f"a born-digital table made porter open Tesseract's data: {opened}"
    assert report == "tables", report
    done = subprocess.run([PORTER, "extract", str(pdf)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "| Crowhurst | 21.3 | 44 |" in done.stdout, done.stdout
    assert "Tables read by the table model: 1 of 1." in done.stderr, done.stderr


def test_without_the_table_model_a_ruled_table_is_read_by_the_rules_and_says_so(tmp_path):
    pdf = tmp_path / "stations.pdf"
    ruled_table_pdf(pdf)
    empty = tmp_path / "no-models"
    empty.mkdir()
    done = subprocess.run(
        [PORTER, "extract", str(pdf)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PORTER_MODELS_DIR": str(empty), "RUST_LOG": "porter=debug"},
    )
    assert done.returncode == 0, done.stderr
    assert "| Crowhurst | 21.3 | 44 |" in done.stdout, done.stdout
    assert "slanet-plus.onnx is not installed in" in done.stderr, done.stderr
    assert REPORT.search(done.stderr).group(1).strip() == "none", done.stderr
