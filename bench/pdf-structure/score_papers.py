"""Scores `porter extract` on the synthetic papers (synth_papers.py) with
pdf-bench's own scorer (odl_score: MHS over the headings and the text
under each, NID over the text), per class, and with --show lists the
headings of each paper, the truth's beside porter's.

Usage: score_papers.py PORTER SET_DIR OUT_DIR --scorer PDF_BENCH_DIR [--show]"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

HEADING = re.compile(r"(?m)^#{1,6} .*$")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("porter", type=Path)
    parser.add_argument("papers", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--scorer", type=Path, required=True, help="the folder of odl_score.py")
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(args.scorer))
    import odl_score as score  # noqa: E402  (pdf-bench's own scorer)

    args.out.mkdir(parents=True, exist_ok=True)
    by_class = defaultdict(list)
    seconds = []
    failed = 0
    for pdf in sorted(args.papers.glob("*.pdf")):
        target = args.out / f"{pdf.stem}.md"
        start = time.perf_counter()
        done = subprocess.run([str(args.porter), "extract", str(pdf), "-o", str(target)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
        seconds.append(time.perf_counter() - start)
        if done.returncode:
            failed += 1
            print(f"{pdf.stem}: porter extract ended with {done.returncode}: {done.stderr.strip()[-300:]}")
        pred = target.read_text() if target.exists() else ""
        truth = (args.papers / f"{pdf.stem}.md").read_text()
        got = score.score_document(truth, pred)
        by_class[pdf.stem.rsplit("-", 1)[0]].append(got)
        if args.show:
            print(f"--- {pdf.stem}: MHS {got['mhs']:.3f}, NID {got['nid']:.3f}")
            print("  truth: ", " | ".join(HEADING.findall(truth)))
            print("  porter:", " | ".join(HEADING.findall(pred)))
    rows = [got for scores in by_class.values() for got in scores]
    if not rows:
        print("bench/pdf-structure/papers: no paper to score", file=sys.stderr)
        return 1
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\nsynthetic papers: `porter extract` ({args.porter}), scored by pdf-bench's scorer; load {load}")
    print("| class | papers | MHS | MHS-S | NID |")
    print("|---|---|---|---|---|")
    for name, scores in by_class.items():
        print(f"| {name} | {len(scores)} | {statistics.fmean(s['mhs'] for s in scores):.3f} | "
              f"{statistics.fmean(s['mhs_s'] for s in scores):.3f} | {statistics.fmean(s['nid'] for s in scores):.3f} |")
    print(f"| all | {len(rows)} | {statistics.fmean(s['mhs'] for s in rows):.3f} | "
          f"{statistics.fmean(s['mhs_s'] for s in rows):.3f} | {statistics.fmean(s['nid'] for s in rows):.3f} |")
    print(f"porter extract: median {statistics.median(seconds):.2f} s a paper (whole process)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
