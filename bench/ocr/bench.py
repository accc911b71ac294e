"""Makes the scanned twins of a PDF set, runs porter extract over each,
scores them, prints the table.

Usage: bench.py PORTER_BIN SET_DIR OUT_DIR LIMIT (see ./run).

Twins of each PDF (one page each in the set; every page is rendered):
- ocr150, ocr300: pdftoppm at 150 and 300 dpi, grey, wrapped back into a
  PDF with Pillow (JPEG at quality 95 inside, drawn at the page's size);
- scan: the 300 dpi picture turned by a small angle (0.3 to 1.5 degrees
  either way), with noise, saved as JPEG at quality 60 inside the PDF.
The angle and the noise come from a generator seeded with the file's name,
so every run makes the same twins.
"""

import csv
import random
import subprocess
import sys
import time
import zlib
from pathlib import Path

from PIL import Image, ImageChops

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


def make_twins(pdf: Path, out: Path) -> None:
    work = out / "pictures"
    work.mkdir(exist_ok=True)
    rng = random.Random(zlib.crc32(pdf.name.encode()))
    wrap(render(pdf, 150, work), 150, out / "ocr150" / pdf.name, 95)
    clean = render(pdf, 300, work)
    wrap(clean, 300, out / "ocr300" / pdf.name, 95)
    wrap([degrade(p, rng) for p in clean], 300, out / "scan" / pdf.name, 60)


def extract(porter: Path, pdf: Path, target: Path) -> tuple[float, str | None]:
    start = time.perf_counter()
    done = subprocess.run(
        [str(porter), "extract", str(pdf), "-o", str(target)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    return wall, (None if done.returncode == 0 else f"exit {done.returncode}: {done.stderr.strip()}")


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
    pdfs = sorted((set_dir / "pdfs").glob("*.pdf"))
    if limit > 0:
        pdfs = pdfs[:limit]
    if not pdfs:
        print(f"bench/ocr: no PDFs in {set_dir / 'pdfs'}", file=sys.stderr)
        return 2
    for name, _ in VARIANTS:
        (out / name).mkdir(parents=True, exist_ok=True)
        (out / (name + "-md")).mkdir(parents=True, exist_ok=True)
    print(f"[bench] making the twins of {len(pdfs)} PDFs", file=sys.stderr)
    for pdf in pdfs:
        make_twins(pdf, out)
    names = {pdf.stem for pdf in pdfs}
    rows = []
    failures = []
    for name, label in VARIANTS:
        print(f"[bench] porter extract: {label}", file=sys.stderr)
        wall = 0.0
        for pdf in pdfs:
            source = pdf if name == "text" else out / name / pdf.name
            seconds, failed = extract(porter, source, out / (name + "-md") / (pdf.stem + ".md"))
            wall += seconds
            if failed:
                failures.append((name, pdf.name, failed))
        nid, overall, _ = score(set_dir, out / (name + "-md"), names)
        rows.append((label, nid, overall, wall / len(pdfs)))
    print(f"{len(pdfs)} one-page PDFs of {set_dir / 'pdfs'}; porter: {porter}")
    print()
    print("| run | NID | overall | s/page |")
    print("|---|---|---|---|")
    for label, nid, overall, per_page in rows:
        print(f"| {label} | {nid:.3f} | {overall:.3f} | {per_page:.2f} |")
    print()
    print("targets: NID of the degraded scan >= 0.85; <= 1.5 s per page")
    for name, pdf, failed in failures:
        print(f"  FAILED {name}/{pdf}: {failed}")
    print("load:" + subprocess.run(["uptime"], capture_output=True, text=True).stdout.rstrip())
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
