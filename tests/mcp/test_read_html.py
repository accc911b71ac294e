"""read_file of an HTML attachment through a real client, over stdio and
HTTP: the page is shown as numbered windows of its Markdown (the file
view's HTML reader: `#` headings, nested list items, a pipe table with its
header row first, a fenced code block, a quote), never as its tags, with an
outline of the heading lines in `structured`."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import Home, Mmsim, numbered_lines, read_ok, serve, server_env, structured, text_of, write_seed

pytestmark = pytest.mark.anyio

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Onboarding handbook</title>
<style>.x { color: red }</style><script>var tracking = "script words";</script></head>
<body>
<nav hidden><a href="/">menu words</a></nav>
<h1>Onboarding handbook</h1>
<p>Welcome to the <strong>harbour</strong> team. Read the <a href="https://example.org/rules">rules</a>&nbsp;first.</p>
<h2>First week</h2>
<ol>
  <li>Get a badge
    <ul><li>from the <em>front desk</em></li><li>before 10:00</li></ul>
  </li>
  <li>Meet your buddy</li>
</ol>
<h2>Contacts</h2>
<table>
  <thead><tr><th>Role</th><th>Name</th><th>Room</th></tr></thead>
  <tbody>
    <tr><td>Harbour master</td><td>Ines Berg</td><td rowspan="2">B-12</td></tr>
    <tr><td>Pilot</td><td>Tom Lake</td></tr>
    <tr><td colspan="3">Night duty: call the desk</td></tr>
  </tbody>
</table>
<h3>Tools &amp; access</h3>
<pre><code class="language-shell">ssh duty@harbour.example
# not a heading
</code></pre>
<blockquote><p>Safety first.</p></blockquote>
</body></html>
"""


@pytest.fixture(scope="module")
def html_sim(porter: Path, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("html-sim")
    page = root / "handbook.html"
    page.write_text(PAGE, encoding="utf-8")
    post = {"channel": "files", "user": "bob", "message": "The handbook.", "files": [{"name": "handbook.html", "path": str(page)}]}
    sim = Mmsim(write_seed(root / "seed", extra_files=[post]), root)
    yield sim
    sim.stop()


async def test_an_html_page_is_read_as_its_markdown_with_an_outline_of_its_heading_lines(
    html_sim: Mmsim, home: Home, transport: str, tmp_path: Path
):
    file_id = html_sim.file_id("handbook.html")
    async with serve(transport, server_env(html_sim, home), tmp_path) as served:
        result = await read_ok(served, file_id)
        text = text_of(result)
        assert "HTML page, as Markdown" in text, text
        lines = dict(numbered_lines(text))
        shown = list(lines.values())
        for line in (
            "# Onboarding handbook",
            "Welcome to the **harbour** team. Read the [rules](https://example.org/rules)\u00a0first.",
            "## First week",
            "1. Get a badge",
            "    - from the *front desk*",
            "    - before 10:00",
            "2. Meet your buddy",
            # A table with spans stays a table with spans: Markdown's pipe
            # tables have none, so it comes as an HTML table, a row a line.
            "<table>",
            "<tr><td>Role</td><td>Name</td><td>Room</td></tr>",
            '<tr><td>Harbour master</td><td>Ines Berg</td><td rowspan="2">B-12</td></tr>',
            "<tr><td>Pilot</td><td>Tom Lake</td></tr>",
            '<tr><td colspan="3">Night duty: call the desk</td></tr>',
            "</table>",
            "### Tools & access",
            "```shell",
            "ssh duty@harbour.example",
            "# not a heading",
            "> Safety first.",
        ):
            assert line in shown, (line, text)
        # The header row comes first, right under its heading.
        header = "<tr><td>Role</td><td>Name</td><td>Room</td></tr>"
        assert shown.index("## Contacts") < shown.index(header) < shown.index("<tr><td>Pilot</td><td>Tom Lake</td></tr>")
        # Nothing else of the page's markup reaches the model.
        for hidden in ("script words", "menu words", "color", "<thead", "<th>", "<h1", "<li", "<em"):
            assert hidden not in text, (hidden, text)

        outline = structured(result)["outline"]
        assert [(h["level"], h["text"]) for h in outline] == [
            (1, "Onboarding handbook"),
            (2, "First week"),
            (2, "Contacts"),
            (3, "Tools & access"),
        ], outline
        for heading in outline:
            assert lines[heading["line"]].lstrip("#").strip().replace("\\", "") == heading["text"], (heading, text)

        # A window asked for at a heading's line starts with that heading.
        contacts = outline[2]["line"]
        section = await read_ok(served, file_id, start_line=contacts, line_count=3)
        assert numbered_lines(text_of(section))[0] == (contacts, "## Contacts"), text_of(section)
