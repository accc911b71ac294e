"""markitdown's side of bench/pdf-structure: each PDF of a folder converted
warm and in-process, its seconds by the clock.

Usage: markitdown_times.py PDF_DIR OUT.json (run with the repo's venv, which
has markitdown; see ./run).

One MarkItDown() for the process and one untimed convert() of the first PDF
(imports and first-use costs out of the way), then one timed convert(path)
per PDF. Writes {"<stem>": seconds, ...}."""

import json
import sys
import time
from pathlib import Path

from markitdown import MarkItDown


def main() -> int:
    pdf_dir, out = Path(sys.argv[1]), Path(sys.argv[2])
    pdfs = sorted(pdf_dir.glob("*.pdf"))
    converter = MarkItDown()
    if pdfs:
        converter.convert(str(pdfs[0]))
    seconds = {}
    for pdf in pdfs:
        start = time.perf_counter()
        try:
            converter.convert(str(pdf))
        except Exception as error:  # noqa: BLE001 - a failure is reported, not timed
            print(f"markitdown failed on {pdf.name}: {error}", file=sys.stderr)
            continue
        seconds[pdf.stem] = time.perf_counter() - start
    out.write_text(json.dumps(seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
