"""Makes the scanned twins of a PDF set, runs porter extract over each,
scores them, prints the table.

Usage: bench.py PORTER_BIN SET_DIR OUT_DIR LIMIT TWINS_DIR RUNS (see ./run).

Twins of each PDF (one page each in the set; every page is rendered):
- ocr150, ocr300: pdftoppm at 150 and 300 dpi, grey, wrapped back into a
  PDF with Pillow (JPEG at quality 95 inside, drawn at the page's size);
- scan: the 300 dpi picture turned by a small angle (0.3 to 1.5 degrees
  either way), with noise, saved as JPEG at quality 60 inside the PDF.
The angle and the noise come from a generator seeded with the file's name,
so every run makes the same twins: they are made once into TWINS_DIR
(outside the clone) and taken from there by every later run.
"""

import csv
import os
import random
import subprocess
import sys
import zlib
from pathlib import Path

from PIL import Image, ImageChops

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchlib import timed_extract  # noqa: E402

VARIANTS = [
    ("text", "text layer (the PDFs as they are)"),
    ("ocr150", "OCR, 150 dpi render"),
    ("ocr300", "OCR, 300 dpi render"),
    ("scan", "OCR, degraded scan (turned, noise, JPEG q60)"),
]


def render(pdf: Path, dpi: int, folder: Path) -> list[Image.Image]:
    prefix = folder / f"{pdf.stem}-{dpi}"
    subprocess.run(
        ["pdftoppm", "-r", str(dpi), "-gray", "-png", str(pdf), str(prefix)], check=True
    )
    pages = sorted(folder.glob(f"{pdf.stem}-{dpi}*.png"))
    pictures = [Image.open(p).convert("L") for p in pages]
    for p in pages:
        p.unlink()
    return pictures


def wrap(pictures: list[Image.Image], dpi: int, target: Path, quality: int) -> None:
    first, *rest = pictures
    first.save(target, "PDF", resolution=dpi, quality=quality, save_all=True, append_images=rest)


def noise(size: tuple[int, int], rng: random.Random, spread: int) -> Image.Image:
    raw = rng.randbytes(size[0] * size[1])
    return Image.frombytes("L", size, raw).point(lambda v: v * spread // 255)


def degrade(picture: Image.Image, rng: random.Random) -> Image.Image:
    angle = rng.uniform(0.3, 1.5) * rng.choice((-1, 1))
    turned = picture.rotate(angle, resample=Image.BICUBIC, fillcolor=255)
    # Paper a little grey, ink a little light, then speckle both ways.
    turned = turned.point(lambda v: 25 + v * 215 // 255)
    turned = ImageChops.add(turned, noise(turned.size, rng, 40))
    return ImageChops.subtract(turned, noise(turned.size, rng, 40))


def make_twins(pdf: Path, twins: Path) -> None:
    """Makes the three twins of `pdf` in `twins` unless they are there."""
    targets = [twins / name / pdf.name for name in ("ocr150", "ocr300", "scan")]
    if all(t.exists() for t in targets):
        return
    work = twins / "pictures"
    work.mkdir(exist_ok=True)
    rng = random.Random(zlib.crc32(pdf.name.encode()))
    made = [t.with_name(t.name + ".part") for t in targets]
    wrap(render(pdf, 150, work), 150, made[0], 95)
    clean = render(pdf, 300, work)
    wrap(clean, 300, made[1], 95)
    wrap([degrade(p, rng) for p in clean], 300, made[2], 60)
    # Whole twins only: a run stopped half-way makes them again.
    for part, target in zip(made, targets):
        os.replace(part, target)


def extract(porter: Path, pdf: Path, target: Path) -> tuple[float, str | None, str]:
    """Runs porter extract: its seconds by the clock, why it failed if it
    did, and its notes (standard error)."""
    wall, done = timed_extract(porter, pdf, target)
    failed = None if done.returncode == 0 else f"exit {done.returncode}: {done.stderr.strip()}"
    return wall, failed, done.stderr


def score(set_dir: Path, folder: Path, names: set[str]) -> tuple[float, float, list[dict]]:
    scores = folder / "scores.csv"
    subprocess.run(
        [sys.executable, str(set_dir / "score"), str(folder), "--csv", str(scores)],
        capture_output=True,
        text=True,
        check=True,
    )
    with open(scores, newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["document"] in names]

    def mean(key: str) -> float:
        values = [float(r[key]) for r in rows if r[key] not in ("", "None")]
        return sum(values) / len(values) if values else float("nan")

    return mean("nid"), mean("overall"), rows


def main() -> int:
    porter, set_dir, out = (Path(a) for a in sys.argv[1:4])
    limit = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    twins = Path(sys.argv[5]) if len(sys.argv) > 5 else out
    runs = sys.argv[6].split(",") if len(sys.argv) > 6 and sys.argv[6] else []
    unknown = [r for r in runs if r not in {name for name, _ in VARIANTS}]
    if unknown:
        print(f"bench/ocr: unknown runs {unknown}; RUNS takes text,ocr150,ocr300,scan", file=sys.stderr)
        return 2
    variants = [(name, label) for name, label in VARIANTS if not runs or name in runs]
    pdfs = sorted((set_dir / "pdfs").glob("*.pdf"))
    if limit > 0:
        pdfs = pdfs[:limit]
    if not pdfs:
        print(f"bench/ocr: no PDFs in {set_dir / 'pdfs'}", file=sys.stderr)
        return 2
    for name in ("ocr150", "ocr300", "scan"):
        (twins / name).mkdir(parents=True, exist_ok=True)
    for name, _ in variants:
        (out / (name + "-md")).mkdir(parents=True, exist_ok=True)
    print(f"[bench] the twins of {len(pdfs)} PDFs, in {twins}", file=sys.stderr)
    for pdf in pdfs:
        make_twins(pdf, twins)
    names = {pdf.stem for pdf in pdfs}
    rows = []
    failures = []
    per_document: dict[str, dict[str, str]] = {pdf.stem: {"document": pdf.stem} for pdf in pdfs}
    for name, label in variants:
        print(f"[bench] porter extract: {label}", file=sys.stderr)
        wall = 0.0
        unread = 0
        for pdf in pdfs:
            source = pdf if name == "text" else twins / name / pdf.name
            seconds, failed, notes = extract(
                porter, source, out / (name + "-md") / (pdf.stem + ".md")
            )
            wall += seconds
            per_document[pdf.stem][name + " s"] = f"{seconds:.2f}"
            # A page OCR did not read (its time budget, mostly) scores 0.
            unread += "Not read by OCR" in notes
            (out / (name + "-md") / (pdf.stem + ".notes")).write_text(notes)
            if failed:
                failures.append((name, pdf.name, failed))
        nid, overall, scored = score(set_dir, out / (name + "-md"), names)
        for row in scored:
            per_document[row["document"]][name + " nid"] = row["nid"]
        rows.append((label, nid, overall, wall / len(pdfs), unread))
    # Each document's NID and seconds in each run, to find where it is lost.
    columns = ["document"] + [f"{n} {k}" for n, _ in variants for k in ("nid", "s")]
    with open(out / "per-document.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(per_document.values())
    print(f"{len(pdfs)} one-page PDFs of {set_dir / 'pdfs'}; porter: {porter}")
    print()
    print("| run | NID | overall | s/page | pages not read by OCR |")
    print("|---|---|---|---|---|")
    for label, nid, overall, per_page, unread in rows:
        print(f"| {label} | {nid:.3f} | {overall:.3f} | {per_page:.2f} | {unread} |")
    print()
    print("targets: NID of the degraded scan >= 0.85; <= 1.5 s per page")
    for name, pdf, failed in failures:
        print(f"  FAILED {name}/{pdf}: {failed}")
    print("load:" + subprocess.run(["uptime"], capture_output=True, text=True).stdout.rstrip())
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
