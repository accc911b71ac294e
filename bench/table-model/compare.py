#!/usr/bin/env python3
"""porter-vision's table model against ONNX Runtime on the same inputs.

Draws tables (PIL), cuts the true table regions out of the ICDAR 2013 PDFs
in ../shared/pdf-tables and renders the pdf-bench pages whose ground truth
holds a table (pypdfium2), all as grey pictures; porter's `table_tokens`
example reads each and writes the model's input it made; ONNX Runtime runs
the unmodified model on that same input. Prints, per picture and in total,
whether the tokens are the same and how far the boxes are apart, and the
seconds a read took with porter (and, given --before, with an older
`read_table` example binary, e.g. the tract build), next to ONNX Runtime's.

    python3 bench/table-model/compare.py --tokens BIN --models DIR [--before BIN]
        [--after BIN] [--fixture OUT.json]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

import numpy as np
import onnxruntime as ort
import pypdfium2 as pdfium
from PIL import Image, ImageDraw, ImageFont

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared"))
MODEL_FILE = "slanet-plus.onnx"


def drawn_table(rows, columns, seed, ruled=True, span=False):
    """A table of `rows` x `columns` cells with words in them."""
    rng = np.random.default_rng(seed)
    widths = [int(w) for w in rng.integers(60, 160, columns)]
    height = int(rng.integers(22, 34))
    width = sum(widths) + 1
    image = Image.new("L", (width + 20, rows * height + 21), 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default()
    words = ["Total", "2019", "12.5", "North", "n/a", "Revenue", "0.37", "Cost", "Item", "45,210"]
    y = 10
    for r in range(rows):
        x = 10
        for c, w in enumerate(widths):
            if span and r == 0 and c == 1:
                x += w
                continue
            text = words[int(rng.integers(0, len(words)))]
            draw.text((x + 6, y + height // 3), text, fill=0, font=font)
            x += w
        y += height
    if ruled:
        for r in range(rows + 1):
            draw.line([(10, 10 + r * height), (10 + sum(widths), 10 + r * height)], fill=0)
        x = 10
        for c in range(columns + 1):
            top = 10 + height if span and c == 1 else 10
            draw.line([(x, top), (x, 10 + rows * height)], fill=0)
            if c < columns:
                x += widths[c]
    return image


def ruled_table(rows, columns):
    """The picture `ruled_table` in crates/porter-vision/tests/model draws,
    pixel for pixel: the fixture that test checks against is ONNX Runtime's
    answer for it."""
    cell_w, cell_h = 90, 28
    width, height = columns * cell_w + 1, rows * cell_h + 1
    grey = np.full((height, width), 255, dtype=np.uint8)
    for r in range(rows + 1):
        grey[r * cell_h, :] = 0
    for c in range(columns + 1):
        grey[:, c * cell_w] = 0
    for r in range(rows):
        for c in range(columns):
            length = 30 + 13 * ((r * 7 + c * 3) % 4)
            for y in range(r * cell_h + 10, r * cell_h + 18):
                for x in range(c * cell_w + 10, c * cell_w + 10 + length):
                    if (x // 3) % 3 != 0:
                        grey[y, x] = 40
    return Image.fromarray(grey, mode="L")


def icdar_tables(limit):
    """The true table regions of the ICDAR 2013 PDFs, rendered at 144 dpi."""
    folder = os.path.join(SHARED, "pdf-tables", "icdar2013-us")
    out = []
    if limit <= 0:
        return out
    for name in sorted(os.listdir(folder)):
        if not name.endswith("-str.xml"):
            continue
        stem = name[: -len("-str.xml")]
        pdf_path = os.path.join(folder, stem + ".pdf")
        if not os.path.exists(pdf_path):
            pdf_path = os.path.join(folder, stem.rstrip("ab") + "a.pdf")
        if not os.path.exists(pdf_path):
            continue
        pdf = pdfium.PdfDocument(pdf_path)
        for t, table in enumerate(ET.parse(os.path.join(folder, name)).getroot().iter("table")):
            for g, region in enumerate(table.iter("region")):
                # The numbers of each cell's box (the ground truth has a
                # typo or two, such as "26ß": the leading number is taken).
                boxes = [
                    {k: float(re.match(r"-?[0-9.]+", v).group()) for k, v in c.find("bounding-box").attrib.items()}
                    for c in region.iter("cell")
                ]
                if not boxes:
                    continue
                page = pdf[int(region.attrib["page"]) - 1]
                height = page.get_height()
                x0 = min(b["x1"] for b in boxes) - 8
                x1 = max(b["x2"] for b in boxes) + 8
                y0 = min(b["y1"] for b in boxes) - 8
                y1 = max(b["y2"] for b in boxes) + 8
                scale = 2.0
                image = page.render(scale=scale, grayscale=True).to_pil().convert("L")
                crop = (int(x0 * scale), int((height - y1) * scale), int(x1 * scale), int((height - y0) * scale))
                out.append((f"icdar-{stem}-t{t}-r{g}", image.crop(crop)))
                if len(out) >= limit:
                    return out
    return out


def bench_pages(limit):
    """Whole pdf-bench pages whose ground truth holds a table."""
    folder = os.path.join(SHARED, "pdf-bench")
    out = []
    if limit <= 0:
        return out
    for name in sorted(os.listdir(os.path.join(folder, "ground-truth"))):
        with open(os.path.join(folder, "ground-truth", name), encoding="utf-8") as f:
            truth = f.read()
        if "<table" not in truth and not re.search(r"^\|.*\|\s*$", truth, re.M):
            continue
        pdf = pdfium.PdfDocument(os.path.join(folder, "pdfs", name[:-3] + ".pdf"))
        image = pdf[0].render(scale=1.5, grayscale=True).to_pil().convert("L")
        out.append((f"bench-{name[:-3]}", image))
        if len(out) >= limit:
            break
    return out


def pictures(args):
    drawn = [(f"ruled-{r}x{c}", ruled_table(r, c)) for r, c in [(4, 3), (6, 5)]]
    for i, (rows, columns, ruled, span) in enumerate(
        [(3, 3, True, False), (5, 4, True, False), (8, 6, True, True), (4, 2, False, False),
         (12, 5, True, False), (6, 7, False, True), (2, 9, True, False), (15, 3, True, True)]
    ):
        drawn.append((f"drawn-{i}-{rows}x{columns}", drawn_table(rows, columns, seed=i, ruled=ruled, span=span)))
    return drawn + icdar_tables(args.icdar) + bench_pages(args.bench)


def save_pgm(image, path):
    image = image.convert("L")
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % image.size)
        f.write(image.tobytes())


# porter reads at most this many tokens a table (porter-vision's default
# budget, `MAX_PASSES`); ONNX Runtime runs to the model's own trip count.
MAX_PASSES = 500


def ort_tokens(session, raw_path):
    x = np.fromfile(raw_path, dtype="<f4").reshape(1, 3, 488, 488)
    started = time.perf_counter()
    outputs = session.run(None, {session.get_inputs()[0].name: x})
    seconds = time.perf_counter() - started
    boxes = next(o for o in outputs if o.shape[-1] == 8)[0]
    scores = next(o for o in outputs if o.shape[-1] != 8)[0]
    tokens = scores.argmax(axis=-1).tolist()
    end = scores.shape[-1] - 1
    keep = tokens.index(end) + 1 if end in tokens else len(tokens)
    keep = min(keep, MAX_PASSES)
    tokens, boxes = tokens[:keep], boxes[:keep]
    return tokens, boxes, seconds


def before_seconds(binary, models, pgm):
    out = subprocess.run([binary, models, pgm, "1"], capture_output=True, text=True, check=True).stdout
    found = re.search(r"read ([0-9.]+) s: (\d+) passes", out)
    return float(found.group(1)), int(found.group(2))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", required=True, help="the table_tokens example binary")
    parser.add_argument("--models", required=True)
    parser.add_argument("--before", help="an older read_table example binary to time beside")
    parser.add_argument(
        "--after", help="this build's read_table example, timed as --before is (one process a picture)"
    )
    parser.add_argument("--icdar", type=int, default=40)
    parser.add_argument("--bench", type=int, default=16)
    parser.add_argument("--fixture", help="write ONNX Runtime's answer for the ruled tables here")
    args = parser.parse_args()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(os.path.join(args.models, MODEL_FILE), options, providers=["CPUExecutionProvider"])
    work = tempfile.mkdtemp(prefix="table-model-")
    pics = pictures(args)
    paths = []
    for name, image in pics:
        path = os.path.join(work, name + ".pgm")
        save_pgm(image, path)
        paths.append(path)
    print(f"{len(pics)} pictures; load average {os.getloadavg()[0]:.2f}", flush=True)
    run = subprocess.run([args.tokens, args.models, work] + paths, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"table_tokens failed: {run.stderr}")
    ours = [json.loads(line) for line in run.stdout.splitlines()]
    same, worst_box, rows = 0, 0.0, []
    times = {"porter": [], "ort": [], "before": [], "after": []}
    fixture = []
    for (name, _), path, mine in zip(pics, paths, ours):
        tokens, boxes, ort_s = ort_tokens(session, os.path.join(work, name + ".f32"))
        mine_boxes = np.array(mine["boxes"], dtype=np.float64).reshape(-1, 8)
        equal = tokens == mine["tokens"]
        gap = float(np.max(np.abs(mine_boxes - boxes))) if equal and len(tokens) else float("nan")
        same += equal
        if equal and len(tokens):
            worst_box = max(worst_box, gap)
        times["porter"].append(mine["seconds"])
        times["ort"].append(ort_s)
        line = f"{name:44} {len(tokens):4} tokens  same={equal!s:5}  box gap {gap:.2e}  porter {mine['seconds']:.3f} s  ort {ort_s:.3f} s"
        for side in ("before", "after"):
            binary = getattr(args, side)
            if binary:
                seconds, passes = before_seconds(binary, args.models, path)
                times[side].append(seconds)
                line += f"  {side} {seconds:.3f} s ({passes} passes)"
        print(line, flush=True)
        if not equal:
            first = next((i for i, (a, b) in enumerate(zip(tokens, mine["tokens"])) if a != b), min(len(tokens), len(mine["tokens"])))
            rows.append(f"  {name}: first difference at token {first} (ort {tokens[first:first + 3]}, porter {mine['tokens'][first:first + 3]})")
        if args.fixture and name.startswith("ruled-"):
            fixture.append({"name": name, "tokens": tokens, "boxes": [[float(v) for v in b] for b in boxes]})
    print("\n".join(rows))
    print(f"tokens identical on {same} of {len(pics)} pictures; largest box difference where identical: {worst_box:.2e} (boxes are in units of the 488-pixel input)")
    for side, values in times.items():
        if values:
            print(f"{side:7} mean {np.mean(values):.3f} s/table, median {np.median(values):.3f}, total {np.sum(values):.2f} s")
    print(f"load average {os.getloadavg()[0]:.2f}")
    if args.fixture:
        with open(args.fixture, "w", encoding="utf-8") as f:
            json.dump(fixture, f)


if __name__ == "__main__":
    main()
