#!/usr/bin/env python3
"""Seeds porter's fuzz targets.

Usage: seeds.py CORPUS_DIR OUT_DIR TARGET...

Copies the files of porter's test corpus (scripts/make_corpus.py) that suit
each target into OUT_DIR/<target>/, and writes the seeds the corpus has no
file for: a WebP, an ODS and an XLS written here byte by byte, tool results
for the capture scanner, URLs and chat messages. Files larger than the
targets' 1 MiB input limit are left out. More folders of files to start
from (real PDFs, say) can be named in FUZZ_EXTRA_SEEDS, separated by `:`.
Seeds are named `seed-*`; running again rewrites them and leaves the inputs
libFuzzer found alone.
"""

from __future__ import annotations

import base64
import io
import json
import os
import struct
import sys
import zipfile
from pathlib import Path

MAX_INPUT = 1 << 20

# The corpus files each file-view target starts from, by name ending.
ENDINGS = {
    "view_zip": (".zip",),
    "view_tar": (".tar",),
    "view_gzip": (".tar.gz",),
    "view_bzip2": (".tar.bz2",),
    "view_xz": (".tar.xz",),
    "view_zstd": (".tar.zst",),
    "view_png": (".png",),
    "view_jpeg": (".jpg",),
    "view_gif": (".gif",),
    "view_webp": (".webp",),
    "view_tiff": (".tiff",),
    "view_bmp": (".bmp",),
    "view_docx": (".docx",),
    "view_pptx": (".pptx",),
    "view_xlsx": (".xlsx",),
    "view_ods": (".ods",),
    "view_xls": (".xls",),
    "view_pdf": (".pdf",),
    "view_html": (".html",),
    "view_text": (".txt", ".csv"),
    "audio_wav": (".wav",),
    "audio_mp3": (".mp3",),
    "audio_flac": (".flac",),
    "audio_ogg": (".ogg",),
    "audio_m4a": (".m4a", ".mp4", ".mov"),
    "audio_mkv": (".webm", ".mkv"),
}


def webp() -> bytes:
    from PIL import Image, ImageDraw

    picture = Image.new("RGB", (64, 48), "white")
    ImageDraw.Draw(picture).rectangle((8, 8, 40, 30), fill=(200, 30, 30))
    out = io.BytesIO()
    picture.save(out, "WEBP", quality=80)
    return out.getvalue()


def ods() -> bytes:
    content = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2">'
        "<office:body><office:spreadsheet>"
        '<table:table table:name="Budget">'
        "<table:table-row><table:table-cell><text:p>Item</text:p></table:table-cell>"
        "<table:table-cell><text:p>Cost</text:p></table:table-cell></table:table-row>"
        '<table:table-row><table:table-cell office:value-type="string"><text:p>Paper</text:p></table:table-cell>'
        '<table:table-cell office:value-type="float" office:value="12.5"><text:p>12.5</text:p></table:table-cell>'
        "</table:table-row>"
        '<table:table-row table:number-rows-repeated="2"><table:table-cell table:number-columns-repeated="3"/></table:table-row>'
        "</table:table></office:spreadsheet></office:body></office:document-content>"
    )
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
        '<manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.spreadsheet"/>'
        '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
        "</manifest:manifest>"
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        package.writestr(
            zipfile.ZipInfo("mimetype", (2020, 1, 1, 0, 0, 0)),
            "application/vnd.oasis.opendocument.spreadsheet",
            compress_type=zipfile.ZIP_STORED,
        )
        for name, text in (("content.xml", content), ("META-INF/manifest.xml", manifest)):
            package.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), text, compress_type=zipfile.ZIP_DEFLATED)
    return out.getvalue()


def record(kind: int, data: bytes = b"") -> bytes:
    return struct.pack("<HH", kind, len(data)) + data


def biff_workbook() -> bytes:
    """A BIFF8 workbook stream: one sheet with a shared string, a label and
    two numbers."""

    def bof(kind: int) -> bytes:
        return record(0x0809, struct.pack("<HHHHII", 0x0600, kind, 0x0DBB, 0x07CC, 0, 0x06))

    def short_string(text: str) -> bytes:
        return struct.pack("<BB", len(text), 0) + text.encode("latin-1")

    def string(text: str) -> bytes:
        return struct.pack("<HB", len(text), 0) + text.encode("latin-1")

    sst = record(0x00FC, struct.pack("<II", 2, 2) + string("Quarter") + string("Revenue"))
    globals_without_sheet = bof(0x0005) + sst
    sheet_entry_size = len(record(0x0085, struct.pack("<IBB", 0, 0, 0) + short_string("Sales")))
    sheet_at = len(globals_without_sheet) + sheet_entry_size + len(record(0x000A))
    globals_part = (
        globals_without_sheet
        + record(0x0085, struct.pack("<IBB", sheet_at, 0, 0) + short_string("Sales"))
        + record(0x000A)
    )
    cells = (
        record(0x00FD, struct.pack("<HHHI", 0, 0, 0, 0))
        + record(0x00FD, struct.pack("<HHHI", 0, 1, 0, 1))
        + record(0x0204, struct.pack("<HHH", 1, 0, 0) + string("Q1"))
        + record(0x0203, struct.pack("<HHHd", 1, 1, 0, 1250.5))
        + record(0x0204, struct.pack("<HHH", 2, 0, 0) + string("Q2"))
        + record(0x0203, struct.pack("<HHHd", 2, 1, 0, -3.25))
    )
    return globals_part + bof(0x0010) + cells + record(0x000A)


def xls() -> bytes:
    """A compound file (version 3, 512-byte sectors) holding one stream,
    `Workbook`, padded to the size that keeps it out of the mini stream."""
    sector = 512
    free, end, fat_sector, no_stream = 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD, 0xFFFFFFFF
    stream = biff_workbook()
    stream += b"\0" * (4096 - len(stream)) if len(stream) < 4096 else b""
    stream_sectors = (len(stream) + sector - 1) // sector
    fat = [fat_sector, end] + [2 + i + 1 for i in range(stream_sectors - 1)] + [end]
    fat += [free] * (sector // 4 - len(fat))
    header = (
        bytes.fromhex("D0CF11E0A1B11AE1")
        + b"\0" * 16
        + struct.pack("<HHHHH", 0x003E, 3, 0xFFFE, 9, 6)
        + b"\0" * 6
        + struct.pack("<IIIIIIIII", 0, 1, 1, 0, 4096, end, 0, end, 0)
        + struct.pack("<I", 0)
        + struct.pack("<I", free) * 108
    )
    assert len(header) == sector

    def entry(name: str, kind: int, child: int, start: int, size: int) -> bytes:
        encoded = (name + "\0").encode("utf-16-le") if name else b""
        return (
            encoded.ljust(64, b"\0")
            + struct.pack("<HBB", len(encoded), kind, 1)
            + struct.pack("<III", no_stream, no_stream, child)
            + b"\0" * 16
            + struct.pack("<I", 0)
            + b"\0" * 16
            + struct.pack("<IQ", start, size)
        )

    directory = (
        entry("Root Entry", 5, 1, end, 0)
        + entry("Workbook", 2, no_stream, 2, len(stream))
        + entry("", 0, no_stream, 0, 0) * 2
    )
    body = struct.pack(f"<{len(fat)}I", *fat) + directory + stream.ljust(stream_sectors * sector, b"\0")
    return header + body


def tool_results() -> list[bytes]:
    png = base64.b64encode(bytes.fromhex("89504E470D0A1A0A") + b"\0" * 40).decode()
    blob = base64.b64encode(bytes(range(256)) * 4).decode()
    results = [
        {"content": [{"type": "text", "text": "hello"}]},
        {"content": [{"type": "image", "data": png, "mimeType": "image/png"}]},
        {"content": [{"type": "audio", "data": blob, "mimeType": "audio/wav"}]},
        {
            "content": [
                {"type": "resource", "resource": {"uri": "file:///r/report.pdf", "blob": blob, "mimeType": "application/pdf"}}
            ]
        },
        {"content": [{"type": "text", "text": f"here it is: {blob}"}], "structuredContent": {"file": {"data": blob, "fileName": "a.bin"}}},
        {"content": [{"type": "text", "text": f"data:image/png;base64,{png}"}]},
        {
            "content": [],
            "structuredContent": {"items": [{"type": "image", "data": png, "mimeType": "image/png"}]},
            "outputSchema": {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "object"}}}},
        },
    ]
    # The first byte picks the policy; seed both.
    return [bytes([flag]) + json.dumps(r).encode() for r in results for flag in (0, 1)]


URLS = [
    "https://example.org/path?token=s3cr3tValue&page=2",
    "http://user:hunter22@example.org:8080/a/b#frag",
    "https://xn--bcher-kva.example/%E2%80%A6?a=%41%42%43%44&b",
    "https://[::1]:443/?q=one+two",
]

MESSAGES = [
    "hi @alice.smith and @bob_, see `@not.this` or mail carol@example.org.",
    "@here @channel @ALL ping @j-doe- and @j-doe",
    "@\u00e9l\u00e8ve @123 @.dot",
]


def tone_wav() -> bytes:
    """Two seconds of a 440 Hz tone, 16-bit mono at 22,050 Hz."""
    import math
    import wave

    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(22050)
        w.writeframes(b"".join(struct.pack("<h", int(8000 * math.sin(2 * math.pi * 440 * i / 22050))) for i in range(44100)))
    return out.getvalue()


def audio_seeds(target: str) -> list[tuple[str, bytes]]:
    """The hostile recordings of scripts/hostile_audio.py for the target's
    containers, and the tone encoded into them by ffmpeg where it is
    installed (scripts/test installs it)."""
    import shutil
    import subprocess
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    import hostile_audio

    endings = ENDINGS[target]
    seeds = [(name, make()) for name, make in hostile_audio.FAMILIES.items()
             if name.endswith(endings) and "minutes" not in name]
    wav = tone_wav()
    if target == "audio_wav":
        seeds.append(("seed-tone.wav", wav))
    elif shutil.which("ffmpeg"):
        with tempfile.TemporaryDirectory() as work:
            source = Path(work) / "tone.wav"
            source.write_bytes(wav)
            for ending in endings:
                made = Path(work) / f"tone{ending}"
                subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-bitexact", "-i", str(source), str(made)], check=True)
                seeds.append((f"seed-tone{ending}", made.read_bytes()))
    return seeds


def main() -> None:
    corpus, out = Path(sys.argv[1]), Path(sys.argv[2])
    targets = sys.argv[3:]
    made = {
        "view_webp": [("seed-made.webp", webp)],
        "view_ods": [("seed-made.ods", ods)],
        "view_xls": [("seed-made.xls", xls)],
    }
    for target in targets:
        folder = out / target
        folder.mkdir(parents=True, exist_ok=True)
        if target in ENDINGS:
            extra = [Path(p) for p in os.environ.get("FUZZ_EXTRA_SEEDS", "").split(":") if p]
            for path in sorted(p for folder_in in [corpus, *extra] for p in folder_in.rglob("*")):
                if path.is_file() and path.name.endswith(ENDINGS[target]) and path.stat().st_size <= MAX_INPUT:
                    (folder / f"seed-{path.parent.name}-{path.name}").write_bytes(path.read_bytes())
            for name, make in made.get(target, []):
                (folder / name).write_bytes(make())
            if target.startswith("audio_"):
                for name, data in audio_seeds(target):
                    (folder / name).write_bytes(data)
        elif target == "capture":
            for i, data in enumerate(tool_results()):
                (folder / f"seed-{i}.json").write_bytes(data)
        elif target == "url":
            for i, text in enumerate(URLS):
                (folder / f"seed-{i}.txt").write_text(text)
        elif target == "mentions":
            for i, text in enumerate(MESSAGES):
                (folder / f"seed-{i}.txt").write_text(text)


if __name__ == "__main__":
    main()
