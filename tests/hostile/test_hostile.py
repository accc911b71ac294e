"""Every hostile family (make_hostile.py) through `porter view`, `porter view
--json` and `porter extract`, as a person or a script would run them.

Each run must end by itself with exit 0 (shown) or 1 (refused, with a
reason on stderr), never by a signal, within the file view's bounds: its
process tree peaks at no more than 512 MiB resident and uses no more than
the worker's 10 s of CPU (plus 1 s for porter's own start and the parent's
share). Where an image comes back, it decodes; where text is printed for a
terminal, it holds no control character but tab and newline and no bidi
override."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from make_hostile import families

MIB = 1 << 20
PEAK_LIMIT = 512 * MIB
CPU_LIMIT_S = 11.0
WALL_LIMIT_S = 60.0
PORTER = Path(os.environ["PORTER_BIN"])
FILES = sorted(families().items())
COMMANDS = {
    "view": ["view"],
    "view-json": ["view", "--json"],
    "extract": ["extract"],
}
# What a terminal must never be handed: C0 controls but tab and newline,
# DEL, C1 controls, and the bidi embeddings, overrides and isolates.
UNSAFE = {chr(c) for c in range(0x20) if c not in (0x09, 0x0A)} | {chr(0x7F)}
UNSAFE |= {chr(c) for c in range(0x80, 0xA0)}
UNSAFE |= set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hostile")
    for name, data in FILES:
        (out / name).write_bytes(data)
    return out


def usage_of(args: list[str]) -> dict:
    """Runs porter in a fresh interpreter so that the children's usage it
    reports belongs to this one run alone."""
    probe = (
        "import json, resource, subprocess, sys, time\n"
        "t = time.monotonic()\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, timeout=%r)\n"
        "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "json.dump({'code': p.returncode, 'out': p.stdout.decode('utf-8', 'replace'),"
        " 'err': p.stderr.decode('utf-8', 'replace'), 'cpu': u.ru_utime + u.ru_stime,"
        " 'peak': u.ru_maxrss * 1024, 'wall': time.monotonic() - t}, sys.stdout)\n"
    ) % WALL_LIMIT_S
    done = subprocess.run(
        [os.environ.get("PYTHON", "python3"), "-c", probe, str(PORTER), *args],
        capture_output=True,
        text=True,
        timeout=WALL_LIMIT_S + 30,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("name", [name for name, _ in FILES])
def test_a_hostile_file_is_answered_within_the_bounds(folder: Path, name: str, command: str) -> None:
    args = [*COMMANDS[command], str(folder / name)]
    used = usage_of(args)
    what = f"porter {' '.join(COMMANDS[command])} {name}"
    assert used["code"] in (0, 1), f"{what} ended with {used['code']} (a negative code is a signal): {used['err'][-2000:]}"
    if used["code"] == 1:
        assert used["err"].strip(), f"{what} refused without a reason"
    else:
        assert used["out"].strip(), f"{what} printed nothing"
    assert used["peak"] <= PEAK_LIMIT, f"{what} peaked at {used['peak'] / MIB:.0f} MiB"
    assert used["cpu"] <= CPU_LIMIT_S, f"{what} used {used['cpu']:.1f} s of CPU"

    if command == "view-json":
        shown = json.loads(used["out"])
        for block in shown["content"]:
            if block.get("type") == "image":
                picture = Image.open(io.BytesIO(base64.b64decode(block["data"])))
                picture.load()
                assert picture.width * picture.height <= 4096 * 4096, f"{what} handed back a {picture.size} image"
                assert not (picture.info.keys() & {"icc_profile", "exif", "Comment", "comment"}), (
                    f"{what} carried {sorted(picture.info)} into the image it handed back"
                )
    else:
        unsafe = sorted({f"U+{ord(c):04X}" for c in used["out"] if c in UNSAFE})
        assert not unsafe, f"{what} printed {', '.join(unsafe)} to the terminal"


def test_the_terminal_text_is_shown_with_its_controls_made_visible(folder: Path) -> None:
    used = usage_of(["view", str(folder / "terminal.txt")])
    assert used["code"] == 0, used["err"]
    assert "red and a cleared screen" in used["out"]
    assert "evil.exe" in used["out"]
    assert "\x1b" not in used["out"] and "\u202e" not in used["out"]
