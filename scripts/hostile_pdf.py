#!/usr/bin/env python3
"""Hostile PDFs, written by hand with a correct xref table so that a reader
follows them rather than giving up on a broken file. Standard library only,
deterministic: the same bytes on every run.

Used by `scripts/make_corpus.py` (the corpus's `hostile/` folder) and by the
real-client tests in `tests/mcp` and `tests/gateway`, which serve these files
and check that the server still answers after each.

Usage: hostile_pdf.py OUT_DIR  (writes every family into OUT_DIR)
"""

from __future__ import annotations

import sys
import zlib
from pathlib import Path

FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def pdf(objects: list[bytes]) -> bytes:
    """A PDF of these objects (numbered from 1, the first the catalog)."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def stream(data: bytes, *, deflate: bool = False, extra: bytes = b"") -> bytes:
    if deflate:
        data = zlib.compress(data, 9)
        extra += b" /Filter /FlateDecode"
    return b"<< /Length %d%s >>\nstream\n" % (len(data), extra) + data + b"\nendstream"


def one_page(page_extra: bytes = b"", content: bytes = b"BT /F1 14 Tf 72 700 Td (hostile) Tj ET") -> list[bytes]:
    """Catalog, Pages, one Page (with `page_extra` in its dictionary), its
    content and font: objects 1 to 5."""
    return [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >>" + page_extra + b" >>",
        stream(content),
        FONT,
    ]


def deep_page_tree(depth: int = 50_000) -> bytes:
    """A page tree `depth` Pages nodes deep, each the only kid of the one
    above, with one page at the bottom."""
    first = 3  # the first Pages node below the root
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [%d 0 R] /Count 1 >>" % first]
    for level in range(depth):
        number = first + level
        objects.append(b"<< /Type /Pages /Parent %d 0 R /Kids [%d 0 R] /Count 1 >>" % (number - 1, number + 1))
    page = first + depth
    objects.append(
        b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R"
        b" /Resources << /Font << /F1 %d 0 R >> >> >>" % (page - 1, page + 1, page + 2)
    )
    objects.append(stream(b"BT /F1 14 Tf 72 700 Td (the bottom of a deep tree) Tj ET"))
    objects.append(FONT)
    return pdf(objects)


def nested_arrays(depth: int = 100_000) -> bytes:
    """One page whose dictionary holds arrays nested `depth` deep."""
    return pdf(one_page(b" /Deep " + b"[" * depth + b"1" + b"]" * depth))


def nested_dicts(depth: int = 100_000) -> bytes:
    """One page whose dictionary holds dictionaries nested `depth` deep."""
    return pdf(one_page(b" /Deep " + b"<< /A " * depth + b"1" + b" >>" * depth))


def text_amplification(mib: int = 200) -> bytes:
    """One page whose content stream inflates to `mib` MiB of text
    operators (a few hundred KiB deflated)."""
    line = b"BT /F1 1 Tf 0 0 Td (" + b"A" * 200 + b") Tj ET\n"
    content = line * (mib * 1024 * 1024 // len(line))
    objects = one_page()
    objects[3] = stream(content, deflate=True)
    return pdf(objects)


def repeated_contents(times: int = 100_000) -> bytes:
    """One page whose /Contents lists the same 1 MiB stream `times` times."""
    line = b"BT /F1 1 Tf 0 0 Td (" + b"B" * 200 + b") Tj ET\n"
    content = line * (1024 * 1024 // len(line))
    objects = one_page()
    listed = b"[" + b"4 0 R " * times + b"]"
    objects[2] = objects[2].replace(b"/Contents 4 0 R", b"/Contents " + listed)
    objects[3] = stream(content, deflate=True)
    return pdf(objects)


def tounicode_bomb(mib: int = 200) -> bytes:
    """One page whose font's ToUnicode CMap inflates to `mib` MiB."""
    entry = b"<0041> <0042>\n"
    per_block = 100
    block = b"%d beginbfchar\n" % per_block + entry * per_block + b"endbfchar\n"
    body = block * (mib * 1024 * 1024 // len(block))
    cmap = (
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
        b"1 begincodespacerange <0000> <FFFF> endcodespacerange\n" + body + b"endcmap end end\n"
    )
    objects = one_page()
    objects[4] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>"
    objects.append(stream(cmap, deflate=True))
    return pdf(objects)


def many_pages(pages: int = 100_000) -> bytes:
    """`pages` real pages, each with a line of text, sharing one font."""
    kids_first = 4
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + b"".join(b"%d 0 R " % (kids_first + 2 * i) for i in range(pages)) + b"] /Count %d >>" % pages,
        FONT,
    ]
    for i in range(pages):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R"
            b" /Resources << /Font << /F1 3 0 R >> >> >>" % (kids_first + 2 * i + 1)
        )
        objects.append(stream(b"BT /F1 12 Tf 72 700 Td (page %d) Tj ET" % (i + 1)))
    return pdf(objects)


def heavy_pages(pages: int = 2_000, mib: int = 30) -> bytes:
    """`pages` pages sharing one content stream that inflates to `mib` MiB
    (a line of text, then comment lines): each page stays within the limits
    of one page, the document is thousands of times past them."""
    padding = b"% " + b"." * 1020 + b"\n"
    content = b"BT /F1 12 Tf 72 700 Td (a heavy page) Tj ET\n" + padding * (mib * 1024)
    kids_first = 5
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + b"".join(b"%d 0 R " % (kids_first + i) for i in range(pages)) + b"] /Count %d >>" % pages,
        FONT,
        stream(content, deflate=True),
    ]
    for _ in range(pages):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
            b" /Resources << /Font << /F1 3 0 R >> >> >>"
        )
    return pdf(objects)


FAMILIES = {
    "deep-page-tree.pdf": deep_page_tree,
    "nested-arrays.pdf": nested_arrays,
    "nested-dicts.pdf": nested_dicts,
    "text-amplification.pdf": text_amplification,
    "repeated-contents.pdf": repeated_contents,
    "tounicode-bomb.pdf": tounicode_bomb,
    "many-pages.pdf": many_pages,
    "heavy-pages.pdf": heavy_pages,
}


# What a server says of each file, by name (the tests' expectations).
# Refused by the nesting pre-scan before any parser runs, or, past it, the
# worker dies and says how.
REFUSED = {
    "nested-arrays.pdf": ("its objects are nested deeper than 256 levels", nested_arrays),
    "nested-dicts.pdf": ("its objects are nested deeper than 256 levels", nested_dicts),
    "deep-page-tree.pdf": ("porter could not read it: it is nested so deeply", deep_page_tree),
}


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, make in FAMILIES.items():
        (out / name).write_bytes(make())
    return 0


if __name__ == "__main__":
    sys.exit(main())
