#!/usr/bin/env python3
"""Runs porter and faster-whisper on the clips of make_clips.py in one run
and prints WER and speed side by side, with the load average.

The clips are taken one at a time, and each clip by every side before the
next, in an order that turns by one each clip (porter first, then second,
then third), so that every side meets the same load; a machine shared with
others makes the load move by the minute.

porter: `porter extract CLIP -o OUT.md`, one whole process per clip (the
model loaded each time, as a user meets it). Its CPU seconds are the user
and system time of the front process and of the sandboxed worker it starts
(which does the work, and which the front process leaves to exit after it:
this script makes itself their subreaper, so the worker comes back to it
and is waited for here, with its resource usage). Its peak memory is the
worker's (the largest ru_maxrss of the processes of one run).
faster-whisper: one process per setting, the model loaded once (its load
time printed apart), each clip timed warm, wall and CPU (the whole
process's user and system time across its threads); its peak RSS is the
whole process's.

usage: compare.py --porter BIN --clips DIR --models DIR [--python PY]"""

from __future__ import annotations

import argparse
import ctypes
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
PR_SET_CHILD_SUBREAPER = 36
PEERS = (("float32", 5), ("int8", 5))


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


def load1() -> float:
    return os.getloadavg()[0]


def own_children() -> set[int]:
    """This process's children now (those reparented to it included)."""
    kids: set[int] = set()
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as f:
            kids |= {int(pid) for pid in f.read().split()}
    return kids


class Porter:
    def __init__(self, porter: Path, env: dict[str, str], peers: set[int]) -> None:
        self.porter, self.env, self.peers = porter, env, peers
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            sys.exit(f"prctl(PR_SET_CHILD_SUBREAPER): errno {ctypes.get_errno()}")

    def run(self, clip: Path, out: Path) -> dict:
        """One `porter extract`: wall seconds, CPU seconds of the front
        process and its worker(s), the worker's peak RSS, the Markdown."""
        out.unlink(missing_ok=True)
        start = time.perf_counter()
        proc = subprocess.Popen([str(self.porter), "extract", str(clip), "-o", str(out)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.env)
        assert proc.stderr is not None
        err = proc.stderr.read().decode(errors="replace")
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        cpu, peak_kib = usage.ru_utime + usage.ru_stime, usage.ru_maxrss
        # The workers the front process left behind came back to this
        # process; their usage is waited for here (the working one exits
        # when its input closes, an idle one at once).
        for pid in own_children() - self.peers:
            _, _, usage = os.wait4(pid, 0)
            cpu += usage.ru_utime + usage.ru_stime
            peak_kib = max(peak_kib, usage.ru_maxrss)
        text = out.read_text() if out.exists() and os.waitstatus_to_exitcode(status) == 0 else ""
        return dict(porter_seconds=seconds, porter_cpu=cpu, porter_rss_kib=peak_kib,
                    porter=porter_text(text), porter_err=err.strip())


class Peer:
    """A faster-whisper process with the model loaded, asked one clip at a time."""

    def __init__(self, python: str, model: Path, compute: str, beam: int) -> None:
        self.key = f"fw_{compute}_{beam}"
        self.compute, self.beam = compute, beam
        self.proc = subprocess.Popen([python, str(HERE / "faster_whisper_side.py"), str(model), compute, str(beam)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.load_seconds = json.loads(self.answer())["load_seconds"]

    def answer(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            sys.exit(f"faster-whisper ({self.compute}, beam {self.beam}) ended early")
        return line

    def run(self, clip: Path) -> dict:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{clip}\n")
        self.proc.stdin.flush()
        got = json.loads(self.answer())
        return {self.key: got["text"], f"{self.key}_seconds": got["seconds"], f"{self.key}_cpu": got["cpu"]}

    def finish(self) -> int:
        """Ends the process; its peak RSS in KiB."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        _, status, usage = os.wait4(self.proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"faster-whisper ({self.compute}, beam {self.beam}) failed")
        return usage.ru_maxrss


def wer_of(rows: list[dict], key: str) -> float:
    refs = [normalise(r["text"]) for r in rows]
    hyps = [normalise(r[key]) for r in rows]
    return jiwer.wer(refs, hyps)


def measure(args: argparse.Namespace, clips: list[dict], model: Path) -> tuple[list[dict], dict]:
    """Every clip by every side, the order turning by one a clip."""
    peers = [Peer(args.python, model, compute, beam) for compute, beam in PEERS]
    porter = Porter(args.porter, dict(os.environ, PORTER_MODELS_DIR=str(args.models)), {p.proc.pid for p in peers})
    out_dir = args.clips / "out"
    out_dir.mkdir(exist_ok=True)
    rows = []
    for n, clip in enumerate(clips):
        path = args.clips / clip["file"]
        row = dict(clip, duration=duration(path), load=load1())
        sides = [lambda: porter.run(path, out_dir / (clip["file"] + ".md"))] + [lambda p=p: p.run(path) for p in peers]
        turn = n % len(sides)
        for side in sides[turn:] + sides[:turn]:
            row.update(side())
        rows.append(row)
    return rows, {p.key: (p.compute, p.beam, p.load_seconds, p.finish()) for p in peers}


def spread(values: list[float]) -> str:
    return f"{min(values):.1f}-{max(values):.1f} (median {statistics.median(values):.1f})"


def report(rows: list[dict], peers: dict, model: Path) -> None:
    keys = [("porter", f"porter ({model.name}, f32 encoder, 8-bit decoder, beam 5), `porter extract`, whole process")]
    for key, (compute, beam, load, rss) in peers.items():
        keys.append((key, f"faster-whisper {compute}, beam {beam}, warm in-process "
                          f"(+{load:.2f} s load once; peak RSS {rss / 1024:.0f} MiB)"))
    speech = [r for r in rows if r["set"] != "no-speech"]
    loads = spread([r["load"] for r in rows])
    print(f"\n{'clip':46} {'sec':>5} {'load':>5} {'WER':>6} " + " ".join(f"{k[:13]:>13}" for k, _ in keys[1:])
          + f" {'porter s':>9} {'cpu':>6} {'MiB':>5} " + " ".join(f"{k[3:13] + ' cpu':>14}" for k, _ in keys[1:]))
    for r in rows:
        cells = [f"{jiwer.wer(normalise(r['text']), normalise(r[k])) if r['text'] else len(normalise(r[k]).split()):>6.2f}"
                 for k, _ in keys]
        print(f"{r['file'][:46]:46} {r['duration']:5.1f} {r['load']:5.2f} {cells[0]} " + " ".join(f"{c:>13}" for c in cells[1:])
              + f" {r['porter_seconds']:9.2f} {r['porter_cpu']:6.2f} {r['porter_rss_kib'] / 1024:5.0f} "
              + " ".join(f"{r[k + '_cpu']:14.2f}" for k, _ in keys[1:]))
    print(f"\nload average (1 min) at each clip's start: {loads}")
    speech_seconds = sum(r["duration"] for r in speech)
    for key, label in keys:
        wall_key = "porter_seconds" if key == "porter" else f"{key}_seconds"
        cpu_key = "porter_cpu" if key == "porter" else f"{key}_cpu"
        by_set = {s: wer_of([r for r in speech if r["set"] == s], key) for s in ("dev", "held-out")}
        invented = sum(len(normalise(r[key]).split()) for r in rows if r["set"] == "no-speech")
        print(f"{label}\n  WER dev {by_set['dev']:.3f}, held-out {by_set['held-out']:.3f}, all {wer_of(speech, key):.3f}; "
              f"words written for no speech: {invented}\n"
              f"  median RTF wall {statistics.median(r[wall_key] / r['duration'] for r in speech):.3f}, "
              f"CPU {statistics.median(r[cpu_key] / r['duration'] for r in speech):.3f}; "
              f"total wall {sum(r[wall_key] for r in speech):.1f} s, CPU {sum(r[cpu_key] for r in speech):.1f} s "
              f"for {speech_seconds:.0f} s of speech (load {loads})")
    peaks = [r["porter_rss_kib"] / 1024 for r in rows]
    print(f"porter's worker, peak RSS: largest {max(peaks):.0f} MiB, median {statistics.median(peaks):.0f} MiB over all clips "
          f"(load {loads})")
    for key, (compute, beam, _, _) in peers.items():
        wall = sum(r["porter_seconds"] for r in speech) / sum(r[f"{key}_seconds"] for r in speech)
        cpu = sum(r["porter_cpu"] for r in speech) / sum(r[f"{key}_cpu"] for r in speech)
        print(f"porter / faster-whisper {compute} beam {beam}, total over the speech clips: "
              f"wall {wall:.2f}x, CPU {cpu:.2f}x (load {loads})")
    failed = [r["file"] for r in speech if not r["porter"].strip()]
    if failed:
        print(f"clips porter gave no transcript for: {failed}")


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
    print(f"load average before: {os.getloadavg()}")
    rows, peers = measure(args, clips, model)
    print(f"load average after:  {os.getloadavg()}")
    (args.clips / "results.json").write_text(json.dumps(rows, indent=1) + "\n")
    report(rows, peers, model)


if __name__ == "__main__":
    main()
