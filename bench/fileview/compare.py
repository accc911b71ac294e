#!/usr/bin/env python3
"""Runs porter's file view bench and the peers (markitdown, Pillow) on one
corpus, each type in its own pair of processes, and prints the comparison.

Usage: compare.py --porter BIN --porter-bin PORTER --corpus DIR [--iter N]
                  [--only docx,...] [--out results.jsonl] [--strict]

porter is timed three ways, each beside the peer: in-process (the library
bench, BIN), the whole `porter view` process, and `read_file` through
`porter mattermost serve` (PORTER, the release binary; see binary.py). The
targets are judged on the whole `porter view` process, as a user meets it.

Each side of each type runs as its own child process, so its peak RSS is its
own: the value is the child's ru_maxrss as os.wait4 reports it when the child
ends (the counter getrusage(RUSAGE_CHILDREN) reads, taken per child). With
--strict the exit status is 1 when a target is missed or porter did not
convert a file.
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import binary

TYPES = ["docx", "pptx", "xlsx", "pdf", "html", "jpeg"]
LABELS = {
    "docx": "DOCX (30 paragraphs + table)",
    "pptx": "PPTX (20 slides + notes)",
    "xlsx": "XLSX (10,000 rows x 10)",
    "pdf": "PDF (50 pages)",
    "html": "HTML (~200 KB)",
    "jpeg": "JPEG 6000x4000, EXIF 6 -> <=2048",
}
DOCUMENT_TARGET = 30.0  # `porter view`, whole process, at least 30x faster than markitdown
IMAGE_TARGET = 0.5  # `porter view`, whole process, at most 0.5x Pillow's time
FILES = {
    "docx": "report.docx",
    "pptx": "deck.pptx",
    "xlsx": "sheet.xlsx",
    "pdf": "paper.pdf",
    "html": "page.html",
    "jpeg": "photo.jpg",
}


def run_child(command):
    """Runs one side for one type; returns its JSON lines, exit code and peak RSS in MiB."""
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    out = child.stdout.read()
    child.stdout.close()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    lines = []
    for raw in out.splitlines():
        raw = raw.strip()
        if raw.startswith("{"):
            lines.append(json.loads(raw))
    return lines, child.returncode, usage.ru_maxrss / 1024  # Linux reports KiB


def porter_problem(line):
    """Why porter's number is not a conversion worth comparing, or None."""
    if line is None:
        return "porter printed no result"
    if "error" in line:
        return f"porter failed: {line['error']}"
    result = line.get("result") or {}
    shown = result.get("shown")
    if shown == "described" or shown is None:
        reason = result.get("reason") or "no reason given"
        return f"porter only described the file ({reason})"
    if line["type"] == "jpeg" and shown != "image":
        return f"porter showed the photo as {shown}, not as an image"
    return None


def fmt_ms(value):
    if value is None:
        return "-"
    if value < 10:
        return f"{value:.2f}"
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--porter", required=True, help="the built fileview bench binary")
    parser.add_argument("--porter-bin", required=True, help="the porter release binary")
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--iter", type=int, default=int(os.environ.get("ITER", "5")))
    parser.add_argument("--only", default=os.environ.get("FILEVIEW_ONLY", ""))
    parser.add_argument("--out", help="also write every JSON line (with peak RSS) here")
    parser.add_argument("--strict", action="store_true")
    args = parser.parse_args()

    peers = Path(__file__).with_name("peers.py")
    wanted = [t for t in TYPES if not args.only or t in args.only.split(",")]
    rows, raw = [], []
    failed_children = False
    load_before = os.getloadavg()[0]
    for kind in wanted:
        print(f"[bench] {kind}: porter ...", file=sys.stderr, flush=True)
        p_lines, p_code, p_rss = run_child([args.porter, args.corpus, str(args.iter), "--only", kind])
        peer_name = "Pillow" if kind == "jpeg" else "markitdown"
        print(f"[bench] {kind}: {peer_name} ...", file=sys.stderr, flush=True)
        q_lines, q_code, q_rss = run_child([sys.executable, str(peers), args.corpus, str(args.iter), "--only", kind])
        if p_code != 0 or q_code != 0:
            failed_children = True
        p = next((x for x in p_lines if x.get("type") == kind), None)
        q = next((x for x in q_lines if x.get("type") == kind), None)
        for line, rss, code in ((p, p_rss, p_code), (q, q_rss, q_code)):
            if line is not None:
                line["peak_rss_mib"] = rss
                line["exit_code"] = code
                raw.append(line)
        print(f"[bench] {kind}: porter view, whole process ...", file=sys.stderr, flush=True)
        v = binary.time_view(args.porter_bin, Path(args.corpus) / FILES[kind], args.iter)
        v["type"] = kind
        v["side"] = "porter view (process)"
        raw.append(v)
        rows.append((kind, p, q, p_rss, q_rss, p_code, q_code, v))
    print("[bench] read_file through porter mattermost serve ...", file=sys.stderr, flush=True)
    served = binary.time_read_file(args.porter_bin, {k: Path(args.corpus) / FILES[k] for k in wanted}, args.iter)
    for kind, r in served.items():
        raw.append({"type": kind, "side": "read_file (porter mattermost serve)", **r})

    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "w", encoding="utf-8") as f:
            for line in raw:
                f.write(json.dumps(line) + "\n")

    header = ["type", "in-process", "porter view", "read_file", "peer", "peer ms",
              "ratio in-process", "ratio porter view", "ratio read_file", "target (porter view)", "met",
              "porter RSS", "peer RSS"]
    table, notes, missed = [], [], False
    for kind, p, q, p_rss, q_rss, p_code, q_code, v in rows:
        peer_name = "Pillow" if kind == "jpeg" else "markitdown"
        p_ms = p.get("median_ms") if p else None
        q_ms = q.get("median_ms") if q else None
        v_ms = v.get("median_ms")
        r = served.get(kind) or {}
        r_ms = r.get("median_ms")
        problem = porter_problem(p)
        if p is None and p_code != 0:
            problem = f"porter exited with status {p_code}"
        if v.get("exit_code") != 0:
            problem = f"porter view exited with status {v.get('exit_code')}"
        if r.get("error"):
            notes.append(f"{kind}: read_file failed: {r['error']}")
        if q is None or "error" in (q or {}):
            notes.append(f"{kind}: {peer_name} failed: {(q or {}).get('error', f'exit status {q_code}')}")

        def ratio(ms):
            if not ms or not q_ms:
                return "-", None
            if kind == "jpeg":
                x = ms / q_ms
                return f"{x:.2f}x Pillow's time", x
            x = q_ms / ms
            return (f"{x:,.1f}x faster" if x >= 1 else f"{1 / x:,.1f}x SLOWER"), x

        (r_in, _), (r_view, x_view), (r_read, _) = ratio(p_ms), ratio(v_ms), ratio(r_ms)
        met = "-"
        if kind == "jpeg":
            target = f"<= {IMAGE_TARGET:.1f}x Pillow"
            if x_view is not None:
                met = "yes" if x_view <= IMAGE_TARGET else "NO"
        else:
            target = f">= {DOCUMENT_TARGET:.0f}x faster"
            if x_view is not None:
                met = "yes" if x_view >= DOCUMENT_TARGET else "NO"
        if problem:
            met = "n/a"
            notes.append(f"{kind}: {problem}; its ratio means nothing.")
        if met in ("NO", "n/a"):
            missed = True
        table.append([
            LABELS[kind], fmt_ms(p_ms), fmt_ms(v_ms), fmt_ms(r_ms), peer_name, fmt_ms(q_ms),
            r_in, r_view, r_read, target, met, f"{p_rss:,.0f} MiB", f"{q_rss:,.0f} MiB",
        ])

    widths = [max(len(str(r[i])) for r in [header] + table) for i in range(len(header))]
    print()
    print(f"File view: porter vs peers, median of {args.iter} runs each after one untimed (corpus {args.corpus}); times in ms")
    load_after = os.getloadavg()[0]
    print(f"Load average (1 min) {load_before:.1f} before, {load_after:.1f} after, on {os.cpu_count()} CPUs"
          + ("; the machine was busy, so times are inflated." if max(load_before, load_after) > 1.5 else "."))
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for r in table:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    print()
    print("What is timed:")
    print("  in-process: std::fs::read(path) + porter_fileview::view(.., WindowRequest::default(),"
          " Options::default(), ..) in one process, one warm-up run first; reading the file is inside the timed region.")
    print(f"  porter view: the whole process `{args.porter_bin} view FILE --json`, from fork to exit (its worker,"
          " and any engine it starts, included).")
    print("  read_file: one read_file call through `porter mattermost serve` over stdio from the Python mcp client,"
          " the file cache off (each call downloads the file from porter mmsim and reads it in a warm worker).")
    print("  markitdown: MarkItDown() made once per process, one warm-up convert, then convert(path) (reads the file itself).")
    pillow = next((q for k, _, q, *_ in rows if k == "jpeg" and q), None)
    if pillow:
        print(f"  Pillow:     {pillow.get('timed')}.")
        res = pillow.get("result") or {}
        if res.get("after_draft") == res.get("original"):
            print(f"              draft() kept scale 1/1 here ({res.get('original')} -> {res.get('after_draft')}: JPEG draft only"
                  " shrinks while both edges stay >= 2048), so Pillow decodes all 24 MP.")
        print(f"              Pillow's output: {res.get('returned')} px, {res.get('jpeg_bytes'):,} bytes.")
    pjpeg = next((p for k, p, *_ in rows if k == "jpeg" and p), None)
    if pjpeg and (pjpeg.get("result") or {}).get("image"):
        img = pjpeg["result"]["image"]
        print(f"  porter's output: {img.get('width')}x{img.get('height')} px, {img.get('bytes'):,} bytes {img.get('mime_type')}.")
    print("  Work differs: porter extracts the whole text but returns its first window (500 numbered lines,"
          " 32 KiB); markitdown returns the whole document as Markdown. porter shows HTML as numbered text"
          " (it is text by its bytes); markitdown converts HTML to Markdown.")
    print("  RSS: peak resident set of each side's own process for that type (os.wait4 ru_maxrss when it ends);"
          " the Python figures include the interpreter and its imports:")
    for kind, p, q, *_ in rows:
        if q and "rss_after_import_mib" in q:
            print(f"    {kind}: the {('Pillow' if kind == 'jpeg' else 'markitdown')} process held "
                  f"{q['rss_after_import_mib']:,.0f} MiB after its imports, before the first file.")
    for kind, p, *_ in rows:
        if p and "result" in p:
            r = p["result"]
            print(f"  porter {kind}: shown={r.get('shown')} kind={r.get('kind')} blocks={r.get('blocks')}"
                  f" text_chars={r.get('text_chars')} total_lines={r.get('total_lines')}")
    for kind, _, q, *_ in rows:
        if q and kind != "jpeg" and "result" in q:
            print(f"  markitdown {kind}: {q['result']['text_chars']:,} chars, {q['result']['lines']:,} lines of Markdown")
    if notes:
        print()
        print("Problems:")
        for n in notes:
            print(f"  {n}")
    if args.out:
        print(f"\nEvery JSON line: {args.out}")
    if failed_children:
        return 2
    if args.strict and missed:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
