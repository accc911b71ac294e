"""Runs porter extract over both PDF structure sets, scores each, prints
dev and held-out numbers side by side, and the time per page through the
binary, in-process and markitdown's, with and without tables.

Usage: bench.py --porter BIN --pages DIR --tables DIR --out DIR
                [--inprocess BENCH] [--peer-python PY]   (see ./run)

The split (kept fixed; see bench/README.md): the rules are tuned on the
development set `pdf-bench` (100 pages of opendataloader-bench) and on the
synthetic government-style tables that synth_tables.py draws (seeded),
and the ICDAR 2013 US tables (`pdf-tables`) are held out. All three are
printed every run, so a rule that helps one and hurts another shows."""

import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
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
DEV, HELD_OUT, SYNTHETIC = "pdf-bench", "pdf-tables", "synthetic"
HERE = Path(__file__).resolve().parent


def load() -> str:
    """The load average, as uptime prints it."""
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def extract_all(porter: Path, pdfs: list[Path], out: Path):
    """`porter extract` on each PDF: seconds per PDF stem, pages, failures."""
    seconds, pages, failed = {}, {}, []
    for pdf in pdfs:
        target = out / (pdf.stem + ".md")
        took, done = timed_extract(porter, pdf, target)
        if done.returncode != 0:
            failed.append((pdf.name, done.returncode, done.stderr.strip()))
            continue
        seconds[pdf.stem] = took
        found = PAGES.search(target.read_text(errors="replace"))
        pages[pdf.stem] = int(found.group(1)) if found else 1
    return seconds, pages, failed


def score_pages(set_dir: Path, out: Path) -> tuple[dict, list]:
    """The set's own scorer over the Markdown in `out`: its means and rows."""
    scores = out / "scores.csv"
    # The score script runs under this venv's Python, which has its packages.
    result = subprocess.run(
        [sys.executable, str(set_dir / "score"), str(out), "--csv", str(scores)],
        capture_output=True,
        text=True,
        check=True,
    )
    means = dict(line.split(": ", 1) for line in result.stdout.splitlines() if ": " in line)
    with open(scores, newline="") as fh:
        rows = list(csv.DictReader(fh))
    return means, rows


def score_tables(porter: Path, tables_dir: Path, out: Path, name: str = "tables", env=None,
                 scorer: Path | None = None) -> dict:
    """The held-out set's own scorer (it runs `porter extract` itself, one
    whole process per PDF, and times it): its JSON summary. The synthetic
    set is scored by the same scorer (`scorer`), its truth being written in
    the same structure files."""
    work = out / name
    work.mkdir(parents=True, exist_ok=True)
    summary = out / f"{name}.json"
    scorer = scorer or tables_dir.parent / "score_tables.py"
    done = subprocess.run(
        [sys.executable, str(scorer), str(porter), str(tables_dir), str(work), "--json", str(summary)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    if done.returncode != 0 or not summary.exists():
        print(f"bench/pdf-structure: the tables' scorer failed:\n{done.stdout}{done.stderr}", file=sys.stderr)
        return {}
    return json.loads(summary.read_text())


def synthetic_set(out: Path, seed: int, per_genre: int) -> Path | None:
    """Draws the synthetic set (synth_tables.py, seeded) into `out`: the
    same pages for the same seed on every run."""
    target = out / "synthetic-set"
    done = subprocess.run(
        [sys.executable, str(HERE / "synth_tables.py"), str(target), "--seed", str(seed), "--per-genre", str(per_genre)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        print(f"bench/pdf-structure: the synthetic set was not drawn: {done.stderr.strip()[-400:]}", file=sys.stderr)
        return None
    return target


def by_genre(rows: list[dict], genres_json: Path) -> list[tuple[str, int, int, float, float]]:
    """(genre, tables, found, TEDS, TEDS-S) per genre of the synthetic set,
    from the scorer's rows (a page's name is GENRE-NN)."""
    pages = json.loads(genres_json.read_text())["pages"]
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(pages.get(r["doc"], {}).get("genre", r["doc"].rsplit("-", 1)[0]), []).append(r)
    order = list(json.loads(genres_json.read_text())["genres"])
    return [
        (g, len(rs), sum(r["found"] for r in rs), statistics.fmean(r["teds"] for r in rs),
         statistics.fmean(r["teds_s"] for r in rs))
        for g, rs in sorted(groups.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99)
    ]


def print_synthetic(summary: dict, genres_json: Path, seed: int) -> None:
    print()
    print(f"{SYNTHETIC} (drawn by bench/pdf-structure/synth_tables.py, seed {seed}; government-style tables "
          f"made for this bench, not real documents; dev: the rules may be tuned on it):")
    print("| genre | tables | found | TEDS | TEDS-S |")
    print("|---|---|---|---|---|")
    for genre, n, found, teds, teds_s in by_genre(summary["rows"], genres_json):
        print(f"| {genre} | {n} | {found} | {teds:.3f} | {teds_s:.3f} |")
    print(f"| all | {summary['tables']} | {summary['found']} | {summary['teds']:.3f} | {summary['teds_s']:.3f} |")
    print(f"({summary['extra']} tables made on pages with none; {summary['s_per_page']:.3f} s/page)")
    low = sorted(summary["rows"], key=lambda r: r["teds"])[:8]
    print(f"lowest tables of {SYNTHETIC}: " + ", ".join(f"{r['doc']} t{r['table']} {r['teds']:.2f}" for r in low))


def inprocess_times(bench: Path, pdfs: list[Path], out: Path) -> dict:
    """porter-fileview's `extract` bench (to_markdown in-process, warm, with
    the table model where PORTER_MODELS_DIR names it): the median seconds
    per PDF stem over ITER runs (1 unless ITER is set); the Markdown of the
    first run lands in `out`."""
    env = dict(os.environ)
    env.setdefault("ITER", "1")
    out.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [str(bench), "--out", str(out), *map(str, pdfs)], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        print(f"bench/pdf-structure: the in-process bench failed: {done.stderr.strip()}", file=sys.stderr)
    times = {}
    for line in done.stdout.splitlines():
        record = json.loads(line)
        times[Path(record["file"]).stem] = record["median_ms"] / 1000
    return times


def markitdown_times(python: str, pdf_dir: Path) -> dict:
    """markitdown warm and in-process, seconds per PDF stem (empty when the
    peer's venv is missing)."""
    script = Path(__file__).resolve().parent / "markitdown_times.py"
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        done = subprocess.run([python, str(script), str(pdf_dir), out.name], capture_output=True, text=True)
        if done.returncode != 0:
            print(f"bench/pdf-structure: markitdown did not run: {done.stderr.strip()[-300:]}", file=sys.stderr)
            return {}
        return json.loads(Path(out.name).read_text() or "{}")


def fmt(value) -> str:
    return "  -  " if value in (None, "", "None") else f"{float(value):.3f}"


def per_page(times: dict, pages: dict, stems: list[str]) -> float | None:
    stems = [s for s in stems if s in times]
    if not stems:
        return None
    return sum(times[s] for s in stems) / max(1, sum(pages.get(s, 1) for s in stems))


def print_scores(means: dict, tables: dict, pages_n: int, per_page_all: float | None) -> None:
    print(f"split: dev = {DEV} (the rules are tuned on it), held out = {HELD_OUT} (never tuned on)")
    print()
    print("| set | role | overall | NID | TEDS | TEDS-S | MHS | tables found |")
    print("|---|---|---|---|---|---|---|---|")
    print(
        f"| {DEV} ({pages_n} pages) | dev | {fmt(means.get('overall'))} | {fmt(means.get('nid'))} "
        f"| {fmt(means.get('teds'))} (n={means.get('teds_count', '?')}) | - "
        f"| {fmt(means.get('mhs'))} (n={means.get('mhs_count', '?')}) | - |"
    )
    if tables:
        print(
            f"| {HELD_OUT} (ICDAR 2013 US, {tables['tables']} tables) | held out | - | - "
            f"| {tables['teds']:.3f} | {tables['teds_s']:.3f} | - "
            f"| {tables['found']}/{tables['tables']} (+{tables['extra']} on pages with none) |"
        )
        gap = float(means.get("teds") or 0) - tables["teds"]
        print()
        print(f"TEDS dev - held out: {gap:+.3f}" + ("  (more than 0.03: explain it in the note)" if abs(gap) > 0.03 else ""))
    print()
    print("published engines on the whole benchmark (200 pages, Apple M4):")
    print("| engine | overall | NID | TEDS | MHS | s/page |")
    print("|---|---|---|---|---|---|")
    print(f"| porter (this run, {DEV}) | {fmt(means.get('overall'))} | {fmt(means.get('nid'))} "
          f"| {fmt(means.get('teds'))} | {fmt(means.get('mhs'))} | {fmt(per_page_all)} |")
    for name, *row in PUBLISHED:
        print(f"| {name} | " + " | ".join(f"{v:.3f}" for v in row) + " |")


def print_inprocess(means: dict, tables: dict) -> None:
    """The same two sets scored on the Markdown porter-fileview makes
    in-process: where the confined worker cannot load the table model
    (until it starts engines before confining itself), this is the row
    that carries the model."""
    model = os.environ.get("PORTER_MODELS_DIR") or "none"
    print()
    print(f"in-process (to_markdown; models: {model}):")
    print("| set | role | overall | NID | TEDS | TEDS-S | MHS | tables found |")
    print("|---|---|---|---|---|---|---|---|")
    print(
        f"| {DEV} | dev | {fmt(means.get('overall'))} | {fmt(means.get('nid'))} "
        f"| {fmt(means.get('teds'))} | - | {fmt(means.get('mhs'))} | - |"
    )
    if tables:
        print(
            f"| {HELD_OUT} | held out | - | - | {tables['teds']:.3f} | {tables['teds_s']:.3f} | - "
            f"| {tables['found']}/{tables['tables']} (+{tables['extra']} on pages with none) |"
        )
        gap = float(means.get("teds") or 0) - tables["teds"]
        print(f"TEDS dev - held out: {gap:+.3f}" + ("  (more than 0.03: explain it in the note)" if abs(gap) > 0.03 else ""))


def print_times(seconds, inproc, peer, pages, with_tables, without, tables) -> None:
    print()
    print(f"time per page on {DEV}: `porter extract` whole process (worker included), "
          "porter in-process (to_markdown, warm), markitdown (warm, in-process)")
    print("| pages | n | porter extract | in-process | extract - in-process | markitdown | extract / markitdown |")
    print("|---|---|---|---|---|---|---|")
    for label, stems in (("with tables", with_tables), ("without tables", without), ("all", with_tables + without)):
        whole = per_page(seconds, pages, stems)
        inside = per_page(inproc, pages, stems)
        theirs = per_page(peer, pages, stems)
        overhead = None if whole is None or inside is None else whole - inside
        ratio = f"{whole / theirs:.2f}x" if whole and theirs else "-"
        print(f"| {label} | {len(stems)} | {fmt(whole)} | {fmt(inside)} | {fmt(overhead)} | {fmt(theirs)} | {ratio} |")
    print("targets: <= 0.030 s/page without tables; all pages <= markitdown's time per page")
    if tables:
        print(f"{HELD_OUT}: `porter extract` {tables['s_per_page']:.3f} s/page over its documents (every one has a table)")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--porter", required=True, type=Path)
    parser.add_argument("--pages", required=True, type=Path)
    parser.add_argument("--tables", type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--inprocess", type=Path)
    parser.add_argument("--peer-python")
    parser.add_argument("--synthetic-seed", type=int, default=2013)
    parser.add_argument("--synthetic-per-genre", type=int, default=6)
    parser.add_argument("--synthetic-only", action="store_true",
                        help="score the synthetic set alone (quick, while tuning)")
    args = parser.parse_args()
    before = load()
    synthetic, synthetic_dir = {}, synthetic_set(args.out, args.synthetic_seed, args.synthetic_per_genre)
    if synthetic_dir and args.tables:
        synthetic = score_tables(args.porter, synthetic_dir, args.out, "synthetic", scorer=args.tables.parent / "score_tables.py")
    if args.synthetic_only:
        if synthetic:
            print_synthetic(synthetic, synthetic_dir / "genres.json", args.synthetic_seed)
        print(f"load before: {before}")
        print(f"load after:  {load()}")
        return 0 if synthetic else 1
    pdfs = sorted((args.pages / "pdfs").glob("*.pdf"))
    if not pdfs:
        print(f"bench/pdf-structure: no PDFs in {args.pages / 'pdfs'}", file=sys.stderr)
        return 2
    seconds, pages, failed = extract_all(args.porter, pdfs, args.out)
    means, rows = score_pages(args.pages, args.out)
    truth = args.pages / "ground-truth"
    with_tables = [p.stem for p in pdfs if "<table" in (truth / f"{p.stem}.md").read_text(errors="replace")]
    without = [p.stem for p in pdfs if p.stem not in with_tables]
    tables = score_tables(args.porter, args.tables, args.out) if args.tables else {}
    inproc = inprocess_times(args.inprocess, pdfs, args.out / "inprocess") if args.inprocess else {}
    inproc_means, inproc_tables = {}, {}
    if args.inprocess:
        inproc_means, _ = score_pages(args.pages, args.out / "inprocess")
        if args.tables:
            wrapper = Path(__file__).resolve().parent / "inprocess_extract"
            env = dict(os.environ, INPROCESS_BENCH=str(args.inprocess))
            inproc_tables = score_tables(wrapper, args.tables, args.out, "tables-inprocess", env)
    peer = markitdown_times(args.peer_python, args.pages / "pdfs") if args.peer_python else {}
    print(f"{len(pdfs)} PDFs of {DEV}, {sum(pages.values())} pages, {len(failed)} failed; porter: {args.porter}")
    print()
    print_scores(means, tables, sum(pages.values()), per_page(seconds, pages, list(seconds)))
    if args.inprocess:
        print_inprocess(inproc_means, inproc_tables)
    if synthetic:
        print_synthetic(synthetic, synthetic_dir / "genres.json", args.synthetic_seed)
    print_times(seconds, inproc, peer, pages, with_tables, without, tables)
    print()
    rows = [r for r in rows if r["overall"] not in ("", "None")]
    rows.sort(key=lambda r: float(r["overall"]))

    def cell(value: str) -> str:
        return "-" if value in ("", "None") else f"{float(value):.2f}"

    print(f"ten worst pages of {DEV} (overall, NID, TEDS, MHS):")
    for r in rows[:10]:
        print(f"  {r['document']}: {cell(r['overall'])}  nid {cell(r['nid'])}  teds {cell(r['teds'])}  mhs {cell(r['mhs'])}")
    if tables:
        low = sorted(tables["rows"], key=lambda r: r["teds"])[:8]
        print(f"lowest tables of {HELD_OUT}: " + ", ".join(f"{r['doc']} p{r['page']} t{r['table']} {r['teds']:.2f}" for r in low))
    for name, code, err in failed:
        print(f"  FAILED {name}: exit {code}: {err}")
    print()
    print(f"load before: {before}")
    print(f"load after:  {load()}")
    if seconds:
        print(f"porter extract per page: median {statistics.median(seconds.values()):.3f} s, "
              f"max {max(seconds.values()):.3f} s ({max(seconds, key=seconds.get)})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
