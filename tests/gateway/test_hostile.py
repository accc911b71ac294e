"""A file cannot take `porter gateway serve` down. PDFs built to overflow a
reader's stack (a 50,000-deep page tree, arrays and dictionaries nested
100,000 deep) and one whose font map inflates past the worker's memory lie
on a volume; File read answers each with a description that says why it
could not be read, and the same gateway still answers the next call. Before
the isolated worker, the first of them ended the gateway for every client."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness import all_text, stdio_gateway, write_config

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import hostile_pdf  # noqa: E402

pytestmark = pytest.mark.anyio

HOSTILE = {
    # Refused by the nesting pre-scan before any parser runs.
    "nested-arrays.pdf": ("its objects are nested deeper than 256 levels", hostile_pdf.nested_arrays),
    "nested-dicts.pdf": ("its objects are nested deeper than 256 levels", hostile_pdf.nested_dicts),
    # Past the pre-scan: the worker dies, and says how.
    "deep-page-tree.pdf": ("porter could not read it: it is nested so deeply", hostile_pdf.deep_page_tree),
    "tounicode-bomb.pdf": ("porter could not read it: it needed more than 512 MiB of memory", hostile_pdf.tounicode_bomb),
}


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
