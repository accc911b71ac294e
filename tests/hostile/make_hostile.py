#!/usr/bin/env python3
"""The hostile families of issue 18, written deterministically.

Usage: make_hostile.py OUT_DIR

Besides the PDFs of scripts/hostile_pdf.py (deep page trees, deep nesting,
content streams and font maps that inflate to hundreds of MiB, one stream
listed 100,000 times, 100,000 real pages), it writes pictures that cost far
more to decode than to send, pictures whose containers lie, and text that
would steer a terminal:

- a 7000x7000 16-bit RGBA PNG (8 bytes a pixel: 392 MB decoded from a few
  hundred KiB), its Adam7-interlaced twin, and the same picture as a
  deflated 16-bit TIFF;
- small PNGs carrying a zTXt, an iTXt or an iCCP chunk that inflates to
  1 GiB;
- a GIF whose only frame sits at (65000, 65000), outside its 16x16 screen;
- three 35-byte WebPs (lossy, lossless, extended) declaring 16384x16384;
- a text file full of ESC, BEL, C1 controls and bidi overrides;
- the recordings of scripts/hostile_audio.py: WAV, MP3, FLAC, Ogg, M4A and
  WebM files whose containers lie or cannot be, and 70 minutes of silence.

Standard library only; the same bytes on every run. Every file is written
from deflated zeros made once, so the whole set takes a few seconds and
about 20 MB.
"""

from __future__ import annotations

import struct
import sys
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import hostile_audio  # noqa: E402
import hostile_pdf  # noqa: E402

SIDE = 7000
BOMB_BYTES = 1 << 30


def deflated_zeros(count: int) -> bytes:
    """`count` zero bytes as one zlib stream, compressed a MiB at a time."""
    packer = zlib.compressobj(9)
    zeros = bytes(1 << 20)
    out = bytearray()
    left = count
    while left > 0:
        take = min(left, len(zeros))
        out += packer.compress(zeros[:take])
        left -= take
    out += packer.flush()
    return bytes(out)


def png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width: int, height: int, depth: int, colour: int, data: bytes, *, interlace: int = 0, extra: bytes = b"") -> bytes:
    header = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, interlace)
    return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header) + extra + png_chunk(b"IDAT", data) + png_chunk(b"IEND", b"")


def adam7_bytes(width: int, height: int, pixel_bytes: int) -> int:
    """The filtered size of an Adam7-interlaced image: each pass's rows, each
    with its filter byte."""
    passes = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))
    total = 0
    for x0, y0, dx, dy in passes:
        columns = (width - x0 + dx - 1) // dx if width > x0 else 0
        rows = (height - y0 + dy - 1) // dy if height > y0 else 0
        if columns and rows:
            total += rows * (1 + columns * pixel_bytes)
    return total


def big_pngs() -> dict[str, bytes]:
    plain = deflated_zeros(SIDE * (1 + SIDE * 8))
    interlaced = deflated_zeros(adam7_bytes(SIDE, SIDE, 8))
    return {
        "rgba16-7000.png": png(SIDE, SIDE, 16, 6, plain),
        "rgba16-7000-interlaced.png": png(SIDE, SIDE, 16, 6, interlaced, interlace=1),
    }


def tiff16() -> bytes:
    """A 7000x7000 RGBA TIFF, 16 bits a sample, one deflated strip."""
    strip = deflated_zeros(SIDE * SIDE * 8)
    entries = []
    bits_at = 8
    data = struct.pack("<4H", 16, 16, 16, 16)
    strip_at = bits_at + len(data)
    ifd_at = strip_at + len(strip)
    ifd_at += ifd_at % 2

    def entry(tag: int, kind: int, count: int, value: int) -> bytes:
        if kind == 3 and count == 1:
            return struct.pack("<HHIHH", tag, kind, count, value, 0)
        return struct.pack("<HHII", tag, kind, count, value)

    entries = [
        entry(256, 4, 1, SIDE),  # ImageWidth
        entry(257, 4, 1, SIDE),  # ImageLength
        entry(258, 3, 4, bits_at),  # BitsPerSample
        entry(259, 3, 1, 8),  # Compression: deflate
        entry(262, 3, 1, 2),  # Photometric: RGB
        entry(273, 4, 1, strip_at),  # StripOffsets
        entry(277, 3, 1, 4),  # SamplesPerPixel
        entry(278, 4, 1, SIDE),  # RowsPerStrip
        entry(279, 4, 1, len(strip)),  # StripByteCounts
        entry(284, 3, 1, 1),  # PlanarConfiguration: chunky
        entry(338, 3, 1, 2),  # ExtraSamples: unassociated alpha
    ]
    head = b"II*\0" + struct.pack("<I", ifd_at)
    body = head + data + strip
    body += b"\0" * (ifd_at - len(body))
    return body + struct.pack("<H", len(entries)) + b"".join(entries) + struct.pack("<I", 0)


def chunk_bombs() -> dict[str, bytes]:
    bomb = deflated_zeros(BOMB_BYTES)
    small = zlib.compress(b"".join(b"\0" + b"\x80\x40\x20" * 8 for _ in range(8)))
    chunks = {
        "ztxt-bomb.png": png_chunk(b"zTXt", b"Comment\0\0" + bomb),
        "itxt-bomb.png": png_chunk(b"iTXt", b"Comment\0\x01\0\0\0" + bomb),
        "iccp-bomb.png": png_chunk(b"iCCP", b"profile\0\0" + bomb),
    }
    return {name: png(8, 8, 8, 2, small, extra=extra) for name, extra in chunks.items()}


def lzw_zero_pixels(count: int) -> bytes:
    """`count` pixels of colour 0, LZW-coded with the minimum code size 2 as
    GIF wants: a clear code before every two pixels keeps the codes 3 bits
    wide, which is valid if not small."""
    codes = []
    for start in range(0, count, 2):
        codes.append(4)
        codes.extend([0] * min(2, count - start))
    codes.append(5)
    bits = 0
    width = 0
    out = bytearray()
    for code in codes:
        bits |= code << width
        width += 3
        while width >= 8:
            out.append(bits & 0xFF)
            bits >>= 8
            width -= 8
    if width:
        out.append(bits & 0xFF)
    blocks = bytearray([2])
    for at in range(0, len(out), 255):
        piece = out[at : at + 255]
        blocks += bytes([len(piece)]) + piece
    return bytes(blocks + b"\0")


def far_frame_gif() -> bytes:
    screen = b"GIF89a" + struct.pack("<HHBBB", 16, 16, 0x80, 0, 0) + b"\0\0\0\xff\xff\xff"
    frame = b"\x2c" + struct.pack("<HHHHB", 65000, 65000, 16, 16, 0)
    return screen + frame + lzw_zero_pixels(16 * 16) + b"\x3b"


def lying_webps() -> dict[str, bytes]:
    def riff(chunk: bytes) -> bytes:
        body = b"WEBP" + chunk
        return (b"RIFF" + struct.pack("<I", len(body)) + body)[:35].ljust(35, b"\0")

    side = 16384 - 1
    lossy = b"VP8 " + struct.pack("<I", 18) + b"\x10\x02\x00\x9d\x01\x2a" + struct.pack("<HH", side, side) + bytes(6)
    lossless = b"VP8L" + struct.pack("<I", 10) + b"\x2f" + struct.pack("<I", side | (side << 14)) + bytes(5)
    extended = b"VP8X" + struct.pack("<I", 10) + b"\x10\0\0\0" + side.to_bytes(3, "little") + side.to_bytes(3, "little")
    return {"lossy-16384.webp": riff(lossy), "lossless-16384.webp": riff(lossless), "extended-16384.webp": riff(extended)}


def terminal_text() -> bytes:
    lines = [
        "plain line",
        "\x1b[2J\x1b[31mred and a cleared screen\x1b[0m",
        "a bell\x07 and a title \x1b]0;owned\x07",
        "C1 controls: \u0085 \u009b31m \u009d",
        "bidi: \u202eevil.exe\u202c and \u2066isolate\u2069",
        "backspace: abc\x08\x08\x08xyz, a carriage return\rover it",
    ]
    return ("\n".join(lines) + "\n").encode()


def families() -> dict[str, bytes]:
    made: dict[str, bytes] = {name: make() for name, make in hostile_pdf.FAMILIES.items()}
    made.update(big_pngs())
    made["rgba16-7000.tiff"] = tiff16()
    made.update(chunk_bombs())
    made["far-frame.gif"] = far_frame_gif()
    made.update(lying_webps())
    made["terminal.txt"] = terminal_text()
    made.update({name: make() for name, make in hostile_audio.FAMILIES.items()})
    return made


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, data in families().items():
        (out / name).write_bytes(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
