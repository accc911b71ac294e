#!/usr/bin/env python3
"""The peer side of the file view benchmark: markitdown for documents, Pillow
for the photo, timed on the corpus that make_bench_corpus.py writes.

Usage: peers.py CORPUS_DIR [ITER] [--only docx,pptx,xlsx,pdf,html,jpeg]

Prints one JSON line per file, shaped like the lines of porter's bench
(crates/porter-fileview/benches/fileview.rs). markitdown is imported only when
a document type is asked for, so a Pillow-only process carries no markitdown
in its memory.

markitdown is measured warm and in-process: one MarkItDown() for the whole
process, one untimed convert() per file, then ITER timed convert(path) calls
(each reads the file from its path, as porter's timed runs do).
"""

import io
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path

DOCUMENTS = [
    ("docx", "report.docx"),
    ("pptx", "deck.pptx"),
    ("xlsx", "sheet.xlsx"),
    ("pdf", "paper.pdf"),
    ("html", "page.html"),
]
PHOTO = ("jpeg", "photo.jpg")
EDGE_PX = 2048
QUALITY = 85

PILLOW_STEPS = (
    "Image.open(path); im.draft('RGB', (2048, 2048)); ImageOps.exif_transpose(im); "
    "thumbnail((2048, 2048)) [default: bicubic, reducing_gap=2.0]; "
    "save(BytesIO, 'JPEG', quality=85) [no EXIF written]"
)


def rss_mib():
    """Peak RSS of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def stats(times):
    return {
        "median_ms": statistics.median(times),
        "min_ms": min(times),
        "max_ms": max(times),
    }


def convert_timed(converter, path, iterations):
    """markitdown warm on one file: one untimed convert(path), whose result
    is answered, then ITER timed convert(path) calls (milliseconds each)."""
    result = converter.convert(str(path))
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        converter.convert(str(path))
        times.append((time.perf_counter() - start) * 1000)
    return result, times


def time_markitdown(corpus, wanted, iterations):
    started = time.perf_counter()
    import markitdown
    from markitdown import MarkItDown

    converter = MarkItDown()
    init_ms = (time.perf_counter() - started) * 1000
    rss_after_init = rss_mib()
    for kind, name in DOCUMENTS:
        if kind not in wanted:
            continue
        path = corpus / name
        line = {"side": "markitdown", "type": kind, "file": name, "bytes": path.stat().st_size}
        try:
            result, times = convert_timed(converter, path, iterations)
            text = result.text_content
        except Exception as err:  # a peer failure is reported, not fatal
            line["error"] = f"{type(err).__name__}: {err}"
            print(json.dumps(line), flush=True)
            continue
        line.update(
            iterations=iterations,
            **stats(times),
            timed=f"MarkItDown().convert(path), markitdown {markitdown.__version__}, warm, in-process",
            import_and_init_ms=init_ms,
            rss_after_import_mib=rss_after_init,
            result={"text_chars": len(text), "lines": text.count("\n") + 1},
        )
        print(json.dumps(line), flush=True)


def pillow_once(path):
    from PIL import Image, ImageOps

    start = time.perf_counter()
    with Image.open(path) as im:
        stored = im.size
        im.draft("RGB", (EDGE_PX, EDGE_PX))
        decoded = im.size
        upright = ImageOps.exif_transpose(im)
        upright.thumbnail((EDGE_PX, EDGE_PX))
        out = io.BytesIO()
        upright.save(out, "JPEG", quality=QUALITY)
    elapsed = (time.perf_counter() - start) * 1000
    return elapsed, {
        "original": list(stored),
        "after_draft": list(decoded),
        "returned": list(upright.size),
        "jpeg_bytes": out.tell(),
    }


def time_pillow(corpus, iterations):
    import PIL
    from PIL import features

    kind, name = PHOTO
    path = corpus / name
    rss_after_import = rss_mib()
    _, result = pillow_once(path)
    times = [pillow_once(path)[0] for _ in range(iterations)]
    turbo = features.version("libjpeg_turbo") if features.check("libjpeg_turbo") else None
    print(
        json.dumps(
            {
                "side": "pillow",
                "type": kind,
                "file": name,
                "bytes": path.stat().st_size,
                "iterations": iterations,
                **stats(times),
                "timed": f"{PILLOW_STEPS}; Pillow {PIL.__version__}, libjpeg-turbo {turbo}",
                "rss_after_import_mib": rss_after_import,
                "result": result,
            }
        ),
        flush=True,
    )


def main():
    args = sys.argv[1:]
    only = os.environ.get("FILEVIEW_ONLY", "")
    positional = []
    while args:
        arg = args.pop(0)
        if arg == "--only":
            only = args.pop(0) if args else ""
        elif arg.startswith("--only="):
            only = arg.split("=", 1)[1]
        else:
            positional.append(arg)
    corpus = Path(positional[0] if positional else os.environ.get("FILEVIEW_CORPUS", "target/bench-corpus"))
    iterations = int(positional[1] if len(positional) > 1 else os.environ.get("ITER", "5"))
    if iterations < 1:
        sys.exit("peers.py: the iteration count must be at least 1")
    if not corpus.is_dir():
        sys.exit(f"peers.py: no corpus at {corpus}; run bench/fileview/make_bench_corpus.py {corpus}")
    wanted = {t.strip() for t in only.split(",") if t.strip()} or {k for k, _ in DOCUMENTS} | {PHOTO[0]}
    if wanted & {k for k, _ in DOCUMENTS}:
        time_markitdown(corpus, wanted, iterations)
    if PHOTO[0] in wanted:
        time_pillow(corpus, iterations)


if __name__ == "__main__":
    main()
