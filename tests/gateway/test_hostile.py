"""A file cannot take `porter gateway serve` down. PDFs built to overflow a
reader's stack (a 50,000-deep page tree, arrays and dictionaries nested
100,000 deep) lie on a volume; File read answers each with a description
that says why it could not be read, and the same gateway still answers the
next call. Before the isolated worker, the first of them ended the gateway
for every client. PDFs built to exhaust a reader are read within its own
work limits, the page past them named with why."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness import all_text, stdio_gateway, write_config

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import hostile_pdf  # noqa: E402

pytestmark = pytest.mark.anyio

HOSTILE = hostile_pdf.REFUSED


async def test_a_file_that_kills_its_reader_is_described_and_the_gateway_answers_the_next_call(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n\nSome words.\n")
    for name, (_, make) in HOSTILE.items():
        (docs / name).write_bytes(make())
    config = write_config(
        tmp_path,
        extra={
            "mcp_servers": {},
            "volumes": {"docs": {"path": str(docs), "mode": "rw"}},
            "profiles": {"default": {"grants": ["File", "Read", "Write"], "volumes": ["docs"]}},
        },
    )
    async with stdio_gateway(tmp_path, config) as served:
        for op in ("read", "extract"):
            for name, (why, _) in HOSTILE.items():
                result = await served.client.call_tool("File", {"op": op, "path": f"volume:docs:{name}"})
                text = all_text(result)
                assert name in text, (op, text)
                assert why in text, (op, text)

                after = await served.client.call_tool("File", {"op": "read", "path": "volume:docs:guide.md"})
                assert not after.is_error, (op, name, all_text(after))
                assert "Some words." in all_text(after), (op, name, all_text(after))


def png16(width: int, height: int) -> bytes:
    """A `width`×`height` 16-bit RGBA PNG of zeros: a few hundred KiB that
    decode to width × height × 8 bytes."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    row = b"\0" * (1 + width * 8)
    packer = zlib.compressobj(9)
    data = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()
    header = struct.pack(">IIBBBBB", width, height, 16, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")


def read_only_docs(tmp_path: Path, files: dict[str, bytes]) -> Path:
    """A gateway config with one read-only volume `docs` holding `files`
    and a small `guide.md` to read between them."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n\nSome words.\n")
    for name, data in files.items():
        (docs / name).write_bytes(data)
    return write_config(
        tmp_path,
        extra={
            "mcp_servers": {},
            "volumes": {"docs": {"path": str(docs)}},
            "profiles": {"default": {"grants": ["File", "Read"], "volumes": ["docs"]}},
        },
    )


async def test_amplification_files_are_described_within_the_workers_bounds(tmp_path: Path) -> None:
    """A content stream that inflates to 200 MiB of text, one 1 MiB stream
    listed 100,000 times, a font map that inflates to 200 MiB, and a
    7000×7000 16-bit RGBA PNG (379 KiB, 392 MB decoded): each ran to
    gigabytes or past 20 s before. The PDFs are read within the reader's
    own work limits, the page past them named with why; the picture is
    described with a reason; and the gateway answers the next call."""
    files = {
        "text-amplification.pdf": hostile_pdf.text_amplification(),
        "repeated-contents.pdf": hostile_pdf.repeated_contents(),
        "tounicode-bomb.pdf": hostile_pdf.tounicode_bomb(),
        "png16-7000.png": png16(7000, 7000),
    }
    config = read_only_docs(tmp_path, files)
    async with stdio_gateway(tmp_path, config) as served:
        for name in files:
            result = await served.client.call_tool("File", {"op": "read", "path": f"volume:docs:{name}"})
            text = all_text(result)
            if name.endswith(".pdf"):
                assert f"{name}: PDF of 1 page, as Markdown" in text, text
                assert "Page 1 was not read: " in text and "past what porter reads of one page." in text, text
            else:
                assert name in text and "It is not shown because" in text, text
            after = await served.client.call_tool("File", {"op": "read", "path": "volume:docs:guide.md"})
            assert "Some words." in all_text(after), (name, all_text(after))


async def test_every_hostile_family_is_answered_and_the_gateway_answers_the_next_call(tmp_path: Path) -> None:
    """Every family of tests/hostile/make_hostile.py (issue 18's PDFs,
    pictures and terminal text) through File read and File extract on one
    gateway: each call is answered with a result naming the file, an image
    handed back decodes, and the next call still works."""
    import base64
    import io

    from PIL import Image

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hostile"))
    import make_hostile

    made = make_hostile.families()
    config = read_only_docs(tmp_path, made)
    async with stdio_gateway(tmp_path, config) as served:
        for name in sorted(made):
            for op in ("read", "extract"):
                result = await served.client.call_tool("File", {"op": op, "path": f"volume:docs:{name}"})
                text = all_text(result)
                # An extract is kept under the file's stem with `.md`.
                assert Path(name).stem in text, (op, name, text)
                for block in result.content:
                    if block.type == "image":
                        Image.open(io.BytesIO(base64.b64decode(block.data))).load()
                after = await served.client.call_tool("File", {"op": "read", "path": "volume:docs:guide.md"})
                assert "Some words." in all_text(after), (op, name, all_text(after))
