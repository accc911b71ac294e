#!/usr/bin/env python3
"""Runs porter and faster-whisper on the clips of make_clips.py in one run
and prints WER and speed side by side, with the load average.

porter: `porter extract CLIP -o OUT.md`, one whole process per clip (the
model loaded each time, as a user meets it), its peak RSS from os.wait4.
faster-whisper: one process per configuration, the model loaded once
(its load time printed apart), each clip timed warm; its peak RSS is the
whole process's.

usage: compare.py --porter BIN --clips DIR --models DIR [--python PY]"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import jiwer

HERE = Path(__file__).resolve().parent


def normalise(text: str) -> str:
    text = text.lower().replace("harbor", "harbour")
    text = re.sub(r"[^a-z' ]+", " ", text.replace("-", " "))
    return " ".join(text.split())


def porter_text(markdown: str) -> str:
    """The spoken words of porter's Markdown: headings, HTML comments and
    the [mm:ss] marks are porter's own."""
    markdown = re.sub(r"<!--.*?-->", " ", markdown, flags=re.S)
    lines = [l for l in markdown.splitlines() if not l.startswith("#")]
    return re.sub(r"\[\d+:\d\d(:\d\d)?\]", " ", " ".join(lines)).replace("\\", "")


def duration(path: Path) -> float:
    out = subprocess.run(
        ["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", str(path)],
        capture_output=True, text=True, check=True,
    )
    return float(out.stdout.strip())


def run_porter(porter: Path, clip: Path, out: Path, env: dict[str, str]) -> tuple[float, int, str, str]:
    start = time.perf_counter()
    proc = subprocess.Popen([str(porter), "extract", str(clip), "-o", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert proc.stderr is not None
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    text = out.read_text() if out.exists() and os.waitstatus_to_exitcode(status) == 0 else ""
    return seconds, usage.ru_maxrss, text, err


def run_peer(python: str, model: Path, clips: Path, compute: str, beam: int) -> tuple[dict, float, int]:
    proc = subprocess.Popen([python, str(HERE / "faster_whisper_side.py"), str(model), str(clips), compute, str(beam)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    lines = [json.loads(l) for l in proc.stdout]
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"faster-whisper ({compute}, beam {beam}) failed")
    load = lines[0]["load_seconds"]
    return {l["file"]: l for l in lines[1:]}, load, usage.ru_maxrss


def wer_of(rows: list[dict], key: str) -> float:
    refs = [normalise(r["text"]) for r in rows]
    hyps = [normalise(r[key]) for r in rows]
    return jiwer.wer(refs, hyps)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--porter", type=Path, required=True)
    ap.add_argument("--clips", type=Path, required=True)
    ap.add_argument("--models", type=Path, required=True)
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    clips = json.loads((args.clips / "clips.json").read_text())
    # The model porter uses: the first of these installed (porter_speech::MODELS).
    model = next((args.models / m for m in ("whisper-base", "whisper-tiny.en") if (args.models / m / "model.bin").is_file()),
                 args.models / "whisper-tiny.en")
    print(f"model: {model.name} (porter and faster-whisper)")
    env = dict(os.environ, PORTER_MODELS_DIR=str(args.models))
    print(f"load average before: {os.getloadavg()}")
    out_dir = args.clips / "out"
    out_dir.mkdir(exist_ok=True)
    rows = []
    for clip in clips:
        path = args.clips / clip["file"]
        seconds, rss_kib, markdown, err = run_porter(args.porter, path, out_dir / (clip["file"] + ".md"), env)
        rows.append(dict(clip, duration=duration(path), porter_seconds=seconds, porter_rss_kib=rss_kib,
                         porter=porter_text(markdown), porter_err=err.strip()))
    peers = {}
    for compute, beam in (("float32", 5), ("int8", 5)):
        results, load, rss = run_peer(args.python, model, args.clips, compute, beam)
        peers[(compute, beam)] = (load, rss)
        for row in rows:
            row[f"fw_{compute}_{beam}"] = results[row["file"]]["text"]
            row[f"fw_{compute}_{beam}_seconds"] = results[row["file"]]["seconds"]
    print(f"load average after:  {os.getloadavg()}")
    (args.clips / "results.json").write_text(json.dumps(rows, indent=1) + "\n")

    keys = [("porter", "porter_seconds", f"porter ({model.name}, f32, beam 5), `porter extract`, whole process")]
    for (compute, beam), (load, rss) in peers.items():
        keys.append((f"fw_{compute}_{beam}", f"fw_{compute}_{beam}_seconds",
                     f"faster-whisper {compute}, beam {beam}, warm in-process (+{load:.2f} s load once; peak RSS {rss / 1024:.0f} MiB)"))
    speech = [r for r in rows if r["set"] != "no-speech"]
    print()
    print(f"{'clip':52} {'sec':>5} {'porter':>7} " + " ".join(f"{k[:16]:>16}" for k, _, _ in keys[1:]))
    for r in rows:
        cells = [f"{jiwer.wer(normalise(r['text']), normalise(r[k])) if r['text'] else len(normalise(r[k]).split()):>7.2f}" for k, _, _ in keys]
        print(f"{r['file'][:52]:52} {r['duration']:5.1f} " + " ".join(cells))
    print()
    for key, time_key, label in keys:
        by_set = {s: wer_of([r for r in speech if r["set"] == s], key) for s in ("dev", "held-out")}
        rtfs = [r[time_key] / r["duration"] for r in speech]
        total = sum(r[time_key] for r in speech)
        invented = sum(len(normalise(r[key]).split()) for r in rows if r["set"] == "no-speech")
        print(f"{label}\n  WER dev {by_set['dev']:.3f}, held-out {by_set['held-out']:.3f}, all {wer_of(speech, key):.3f}; "
              f"median RTF {statistics.median(rtfs):.3f}; total {total:.1f} s for {sum(r['duration'] for r in speech):.0f} s of speech; "
              f"words written for no speech: {invented}")
    peak = max(r["porter_rss_kib"] for r in rows)
    print(f"porter's peak RSS over all clips: {peak / 1024:.0f} MiB")
    for (compute, beam) in peers:
        ratio = sum(r["porter_seconds"] for r in speech) / sum(r[f"fw_{compute}_{beam}_seconds"] for r in speech)
        print(f"porter's total time / faster-whisper {compute} beam {beam}: {ratio:.2f}x")
    failed = [r["file"] for r in speech if not r["porter"].strip()]
    if failed:
        print(f"clips porter gave no transcript for: {failed}")


if __name__ == "__main__":
    main()
