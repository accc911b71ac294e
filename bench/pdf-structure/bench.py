"""Runs porter extract over a PDF set, scores it, prints the table.

Usage: bench.py PORTER_BIN SET_DIR OUT_DIR (see ./run)."""

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchlib import timed_extract  # noqa: E402

PUBLISHED = [
    # engine, overall, NID, TEDS, MHS, s/page (the set's README: 200 pages, Apple M4)
    ("docling 2.65", 0.877, 0.899, 0.887, 0.802, 0.725),
    ("opendataloader 1.5.1", 0.819, 0.913, 0.494, 0.659, 0.050),
    ("pymupdf4llm 0.2.0", 0.732, 0.885, 0.401, 0.412, 0.091),
    ("markitdown", 0.583, 0.879, 0.0, 0.0, 0.041),
]
PAGES = re.compile(r"<!-- page \d+ of (\d+) -->")


def main() -> int:
    porter, set_dir, out = (Path(a) for a in sys.argv[1:4])
    pdfs = sorted((set_dir / "pdfs").glob("*.pdf"))
    if not pdfs:
        print(f"bench/pdf-structure: no PDFs in {set_dir / 'pdfs'}", file=sys.stderr)
        return 2
    pages = 0
    failed = []
    wall = 0.0
    for pdf in pdfs:
        target = out / (pdf.stem + ".md")
        seconds, done = timed_extract(porter, pdf, target)
        wall += seconds
        if done.returncode != 0:
            failed.append((pdf.name, done.returncode, done.stderr.strip()))
            continue
        found = PAGES.search(target.read_text(errors="replace"))
        pages += int(found.group(1)) if found else 1
    scores = out / "scores.csv"
    # The score script runs under this venv's Python, which has its packages.
    result = subprocess.run(
        [sys.executable, str(set_dir / "score"), str(out), "--csv", str(scores)],
        capture_output=True,
        text=True,
        check=True,
    )
    means = dict(
        line.split(": ", 1) for line in result.stdout.splitlines() if ": " in line
    )

    def mean(key: str) -> str:
        value = means.get(key, "None")
        return "  -  " if value == "None" else f"{float(value):.3f}"

    per_page = wall / max(pages, 1)
    print(f"{len(pdfs)} PDFs, {pages} pages, {len(failed)} failed; porter: {porter}")
    print()
    print("| engine | overall | NID | TEDS | MHS | s/page |")
    print("|---|---|---|---|---|---|")
    print(
        f"| **porter (this run)** | {mean('overall')} | {mean('nid')} | {mean('teds')} "
        f"(n={means.get('teds_count', '?')}) | {mean('mhs')} (n={means.get('mhs_count', '?')}) "
        f"| {per_page:.3f} |"
    )
    for name, *row in PUBLISHED:
        print(f"| {name} | " + " | ".join(f"{v:.3f}" for v in row) + " |")
    print()
    with open(scores, newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["overall"] not in ("", "None")]
    rows.sort(key=lambda r: float(r["overall"]))

    def cell(value: str) -> str:
        return "-" if value in ("", "None") else f"{float(value):.2f}"

    print("ten worst pages (overall, NID, TEDS, MHS):")
    for r in rows[:10]:
        print(
            f"  {r['document']}: {cell(r['overall'])}  nid {cell(r['nid'])}  "
            f"teds {cell(r['teds'])}  mhs {cell(r['mhs'])}"
        )
    for name, code, err in failed:
        print(f"  FAILED {name}: exit {code}: {err}")
    print()
    print("load:" + subprocess.run(["uptime"], capture_output=True, text=True).stdout.rstrip())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
