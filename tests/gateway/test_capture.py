"""Files in upstream results reach the inbox, and the client gets one line.

Each test starts `porter gateway serve` over stdio with the Python `mcp`
SDK as its client, calls an upstream tool through it, and checks both ends:
what the client received, and the bytes on disk against what the upstream
really sent.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import mcp_types as types
import pytest

from harness import (
    HERE,
    NOT_KEPT,
    STUB,
    all_text,
    each_backend,
    pdf_like,
    png,
    pseudo_random,
    sha256,
    stdio_gateway,
    texts,
    tiny_image,
    wav,
    write_config,
)
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

pytestmark = pytest.mark.anyio


def only_text(result: types.CallToolResult) -> None:
    kinds = {block.type for block in result.content}
    assert kinds == {"text"}, f"bytes reached the client: {kinds}"


def stubs(result: types.CallToolResult) -> list[dict[str, str]]:
    return [match.groupdict() for text in texts(result) for match in STUB.finditer(text)]


@each_backend
async def test_the_tiny_image_becomes_a_stub_naming_the_very_png(tmp_path: Path) -> None:
    async with stdio_gateway(tmp_path) as served:
        tools = {tool.name for tool in (await served.client.list_tools()).tools}
        assert {"File", "mcp__everything__get-tiny-image", "mcp__fixtures__audio"} <= tools
        result = await served.client.call_tool("mcp__everything__get-tiny-image", {})
        assert not result.is_error
        only_text(result)
        [stub] = stubs(result)
        original = tiny_image()
        assert len(original) == 4033
        assert stub["type"] == "image/png"
        assert stub["size"].strip() == "3.9 KiB"
        assert stub["origin"] == "mcp:everything/get-tiny-image"
        kept = served.inbox_file(stub["path"]).read_bytes()
        assert sha256(kept) == sha256(original)
        assert sha256(original).startswith(stub["sha"])
        # The tool's own text around the image is still there.
        assert any("tiny" in text.lower() or "image" in text.lower() for text in texts(result) if not STUB.search(text))


async def test_a_blob_resource_reference_becomes_a_stub(tmp_path: Path) -> None:
    async with stdio_gateway(tmp_path) as served:
        result = await served.client.call_tool(
            "mcp__everything__get-resource-reference", {"resourceType": "Blob", "resourceId": 2}
        )
        assert not result.is_error
        only_text(result)
        [stub] = stubs(result)
        assert served.inbox_file(stub["path"]).stat().st_size > 0


async def test_resource_links_become_one_line_each(tmp_path: Path) -> None:
    async with stdio_gateway(tmp_path) as served:
        result = await served.client.call_tool("mcp__everything__get-resource-links", {"count": 4})
        assert not result.is_error
        only_text(result)
        link_lines = [text for text in texts(result) if "demo://resource/" in text]
        assert len(link_lines) == 4, texts(result)
        assert all("\n" not in line for line in link_lines)
        assert not (served.data / "runs").exists() or not list((served.data / "runs").glob("*/inbox/*"))


@each_backend
async def test_a_3_mb_gzip_resource_is_kept_and_the_message_stays_small(tmp_path: Path) -> None:
    payload = pseudo_random(3 * 1024 * 1024, 17)
    data_uri = "data:application/octet-stream;base64," + base64.b64encode(payload).decode()
    async with stdio_gateway(tmp_path) as served:
        result = await served.client.call_tool(
            "mcp__everything__gzip-file-as-resource",
            {"name": "payload.bin.gz", "data": data_uri, "outputType": "resource"},
        )
        assert not result.is_error, all_text(result)
        only_text(result)
        message = result.model_dump_json()
        assert len(message) < 2048, f"the client's message is {len(message)} bytes"
        [stub] = stubs(result)
        assert stub["type"] == "application/gzip"
        assert stub["path"].endswith(".gz")
        kept = served.inbox_file(stub["path"]).read_bytes()
        import gzip

        assert gzip.decompress(kept) == payload


async def test_echo_comes_back_byte_for_byte(tmp_path: Path) -> None:
    message = "héllo · 世界 · \u202e tab\there · " + base64.b64encode(pseudo_random(6000, 3)).decode()
    async with stdio_gateway(tmp_path) as served:
        result = await served.client.call_tool("mcp__everything__echo", {"message": message})
        assert texts(result) == [f"Echo: {message}"]
        ours = await served.client.call_tool("mcp__fixtures__echo", {"message": message})
        assert texts(ours) == [message]


@each_backend
async def test_audio_image_embedded_and_mixed_content_become_stubs(tmp_path: Path) -> None:
    async with stdio_gateway(tmp_path) as served:
        audio = await served.client.call_tool("mcp__fixtures__audio", {})
        only_text(audio)
        [stub] = stubs(audio)
        assert stub["type"] == "audio/wav"
        assert served.inbox_file(stub["path"]).read_bytes() == wav(4000, 7)

        image = await served.client.call_tool("mcp__fixtures__image", {})
        only_text(image)
        [stub] = stubs(image)
        assert served.inbox_file(stub["path"]).read_bytes() == png(64, 48, 11)

        embedded = await served.client.call_tool("mcp__fixtures__embedded", {})
        only_text(embedded)
        pdf, csv = stubs(embedded)
        assert pdf["type"] == "application/pdf" and "report" in pdf["path"]
        assert served.inbox_file(pdf["path"]).read_bytes() == pdf_like(5000, 3)
        assert csv["type"] == "text/csv" and csv["path"].endswith("table.csv")
        assert served.inbox_file(csv["path"]).read_bytes() == b"a,b\n1,2\n"

        mixed = await served.client.call_tool("mcp__fixtures__mixed", {})
        only_text(mixed)
        lines = texts(mixed)
        assert lines[0] == "Here is what you asked for."
        assert lines[-1] == "That is all."
        kinds = [stub["type"] for stub in stubs(mixed)]
        assert kinds == ["image/png", "audio/wav"]
        assert any("annual.pdf" in line and "file:///reports/annual.pdf" in line for line in lines)
        # Every capture so far is in the run's transcript as file_captured.
        [run] = served.runs()
        events = [json.loads(line) for line in (run / "transcript.jsonl").read_text().splitlines()]
        captured = [event for event in events if event["kind"] == "file_captured"]
        assert len(captured) == 6
        assert {event["data"]["origin"] for event in captured} == {
            "mcp:fixtures/audio",
            "mcp:fixtures/image",
            "mcp:fixtures/embedded",
            "mcp:fixtures/mixed",
        }


@each_backend
async def test_base64_in_text_is_kept_only_under_capture_and_only_when_it_is_a_file(tmp_path: Path) -> None:
    async with stdio_gateway(tmp_path) as served:
        # A PDF inside JSON next to its mimeType: only that string is replaced.
        captured = await served.client.call_tool("mcp__fixtures__json-pdf", {})
        plain = await served.client.call_tool("mcp__plain__json-pdf", {})
        [text] = texts(captured)
        document = json.loads(text)
        original = json.loads(texts(plain)[0])
        assert base64.b64decode(original["data"]) == pdf_like(12000, 21)
        assert {k: v for k, v in document.items() if k != "data"} == {k: v for k, v in original.items() if k != "data"}
        stub = STUB.fullmatch(document["data"])
        assert stub, document["data"]
        assert served.inbox_file(stub["path"]).read_bytes() == pdf_like(12000, 21)
        assert stub["type"] == "application/pdf"

        # A random cursor is not a file: untouched under capture.
        cursor = await served.client.call_tool("mcp__fixtures__cursor", {})
        plain_cursor = await served.client.call_tool("mcp__plain__cursor", {})
        assert texts(cursor) == texts(plain_cursor)
        assert len(json.loads(texts(cursor)[0])["nextCursor"]) == 8000

        # Invalid JSON around a PNG: the PNG string goes, the rest stays as it was.
        broken = await served.client.call_tool("mcp__fixtures__broken-json-png", {})
        plain_broken = await served.client.call_tool("mcp__plain__broken-json-png", {})
        [original_text] = texts(plain_broken)
        [text] = texts(broken)
        encoded = base64.b64encode(png(40, 40, 13)).decode()
        assert encoded in original_text
        before, after = original_text.split(encoded)
        assert text.startswith(before) and text.endswith(after)
        stub = STUB.fullmatch(text[len(before) : len(text) - len(after)])
        assert stub, text
        assert served.inbox_file(stub["path"]).read_bytes() == png(40, 40, 13)

        # Under passthrough the image in JSON text stays as it was.
        assert STUB.search(texts(plain)[0]) is None and STUB.search(original_text) is None


async def test_a_65_mib_blob_is_not_kept_and_never_reaches_the_client(tmp_path: Path) -> None:
    size = 65 * 1024 * 1024
    async with stdio_gateway(tmp_path) as served:
        result = await served.client.call_tool("mcp__fixtures__big-blob", {"size": size})
        only_text(result)
        [line] = [text for text in texts(result) if text.startswith("[file not kept")]
        match = NOT_KEPT.fullmatch(line)
        assert match, line
        assert "64 MiB" in match["why"]
        assert match["size"].strip() == "65 MiB"
        assert match["origin"] == "mcp:fixtures/big-blob"
        assert len(result.model_dump_json()) < 1024
        assert not list(served.data.glob("runs/*/inbox/*"))


async def test_an_unknown_tool_is_a_tool_error_naming_the_tools(tmp_path: Path) -> None:
    async with stdio_gateway(tmp_path) as served:
        result = await served.client.call_tool("mcp__nowhere__thing", {})
        assert result.is_error
        assert "nowhere" in all_text(result)
        result = await served.client.call_tool("Fetch", {})
        assert result.is_error
        assert "File" in all_text(result)


async def test_progress_from_the_upstream_reaches_the_client(tmp_path: Path) -> None:
    seen: list[tuple[float, float | None]] = []

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    async with stdio_gateway(tmp_path) as served:
        result = await served.client.call_tool(
            "mcp__fixtures__slow", {"steps": 3, "ms": 50}, progress_callback=progress
        )
        assert texts(result) == ["done after 3 steps"]
        assert seen == [(1, 3), (2, 3), (3, 3)]


async def test_the_upstream_is_started_again_after_it_dies(tmp_path: Path) -> None:
    import signal
    import subprocess

    async with stdio_gateway(tmp_path) as served:
        first = await served.client.call_tool("mcp__fixtures__echo", {"message": "one"})
        assert texts(first) == ["one"]
        # Kill the upstream node processes of this gateway (its children),
        # not those of the gateways other tests run at the same time.
        gateways = subprocess.run(
            ["pgrep", "-f", f"gateway serve --config {tmp_path / 'porter.yaml'}"], capture_output=True, text=True
        ).stdout.split()
        children = [
            pid
            for gateway in gateways
            for pid in subprocess.run(
                ["pgrep", "-P", gateway, "-f", f"{Path(__file__).parent / 'upstream.mjs'}"],
                capture_output=True,
                text=True,
            ).stdout.split()
        ]
        assert children
        for pid in children:
            import os

            os.kill(int(pid), signal.SIGKILL)
        import anyio

        await anyio.sleep(0.5)
        again = await served.client.call_tool("mcp__fixtures__echo", {"message": "two"})
        assert texts(again) == ["two"], all_text(again)


# ---------------------------------------------------------------------------
# server-filesystem (npm), a server no one here wrote, as an upstream over stdio

FIELD_LIMIT = 2048


def filesystem_bin() -> str:
    return str(HERE / "node_modules" / ".bin" / "mcp-server-filesystem")


def filesystem_config(root: Path, share: Path) -> Path:
    """The harness's config with server-filesystem added as `files`, allowed
    `share`, under the default `binary_results: passthrough`."""
    path = write_config(root)
    config = json.loads(path.read_text())
    config["mcp_servers"]["files"] = {"command": filesystem_bin(), "args": [str(share)]}
    path.write_text(json.dumps(config, indent=2) + "\n")
    return path


def long_fields(value: object, where: str = "") -> list[str]:
    """Every string (key or value) in `value` longer than FIELD_LIMIT, by where it is."""
    if isinstance(value, str):
        return [f"{where} ({len(value)} characters)"] if len(value) > FIELD_LIMIT else []
    if isinstance(value, dict):
        found = [f"{where}/<key> ({len(k)})" for k in value if len(k) > FIELD_LIMIT]
        for key, item in value.items():
            found += long_fields(item, f"{where}/{key}")
        return found
    if isinstance(value, list):
        return [hit for i, item in enumerate(value) for hit in long_fields(item, f"{where}/{i}")]
    return []


async def test_server_filesystem_media_reach_the_client_as_stubs_in_every_field(tmp_path: Path) -> None:
    share = tmp_path / "share"
    share.mkdir()
    picture = png(1024, 1024, 5)
    sound = wav(88_000, 9)
    assert len(picture) > 3_000_000 and len(sound) > 170_000
    (share / "big.png").write_bytes(picture)
    (share / "voice.wav").write_bytes(sound)
    async with stdio_gateway(tmp_path, filesystem_config(tmp_path, share)) as served:
        listed = {tool.name: tool for tool in (await served.client.list_tools()).tools}
        # The client validates structured content against this schema itself.
        assert listed["mcp__files__read_media_file"].output_schema
        for name, original, media_type in [("big.png", picture, "image/png"), ("voice.wav", sound, "audio/wav")]:
            before = set(served.data.glob("runs/*/inbox/**/*"))
            result = await served.client.call_tool("mcp__files__read_media_file", {"path": str(share / name)})
            assert not result.is_error, all_text(result)
            whole = json.loads(result.model_dump_json(by_alias=True))
            assert long_fields(whole) == [], name
            assert len(json.dumps(whole)) < FIELD_LIMIT, f"{name}: {len(json.dumps(whole))} characters"
            only_text(result)
            [stub] = stubs(result)
            assert stub["type"] == media_type
            [block] = result.structured_content["content"]
            assert block["data"] == STUB.search(all_text(result)).group(0), "the same stub in both places"
            assert block["type"] == ("image" if media_type.startswith("image") else "audio")
            assert block["mimeType"] == media_type
            # One capture, not two: one new inbox file, equal to the original.
            new = [path for path in set(served.data.glob("runs/*/inbox/**/*")) - before if path.is_file()]
            assert len(new) == 1, new
            kept = served.inbox_file(stub["path"]).read_bytes()
            assert sha256(kept) == sha256(original)
            assert sha256(original).startswith(stub["sha"])


async def test_server_filesystem_text_passes_the_gateway_unchanged(tmp_path: Path) -> None:
    share = tmp_path / "share"
    share.mkdir()
    text = "Notes · ünïcode · 世界\n\ttabbed line\n" + base64.b64encode(pseudo_random(6000, 8)).decode() + "\nend\n"
    (share / "notes.txt").write_text(text)
    params = StdioServerParameters(command=filesystem_bin(), args=[str(share)])
    with open(tmp_path / "direct.stderr", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as direct:
            await direct.list_tools()
            expected = await direct.call_tool("read_text_file", {"path": str(share / "notes.txt")})
    assert texts(expected) == [text]
    async with stdio_gateway(tmp_path, filesystem_config(tmp_path, share)) as served:
        await served.client.list_tools()
        result = await served.client.call_tool("mcp__files__read_text_file", {"path": str(share / "notes.txt")})
    assert [block.model_dump(by_alias=True) for block in result.content] == [
        block.model_dump(by_alias=True) for block in expected.content
    ]
    assert result.structured_content == expected.structured_content
    assert result.is_error == expected.is_error
    assert not list(served.data.glob("runs/*/inbox/*"))


def schema_config(root: Path) -> Path:
    """The harness's config with schema_upstream.mjs added as `schemas`."""
    path = write_config(root)
    config = json.loads(path.read_text())
    config["mcp_servers"]["schemas"] = {"command": "node", "args": [str(HERE / "schema_upstream.mjs")]}
    path.write_text(json.dumps(config, indent=2) + "\n")
    return path


def png_magic(size: int, seed: int) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + pseudo_random(size, seed)


async def test_structured_content_keeps_fitting_the_output_schema_or_is_withheld(tmp_path: Path) -> None:
    picture = png_magic(6000, 21)
    async with stdio_gateway(tmp_path, schema_config(tmp_path)) as served:
        listed = {tool.name: tool for tool in (await served.client.list_tools()).tools}
        assert listed["mcp__schemas__strict-image"].output_schema

        # A stub fits `data: string`: the structure stays, the client's own
        # validation against the schema passes, one file for both places.
        loose = await served.client.call_tool("mcp__schemas__loose-image", {})
        assert not loose.is_error, all_text(loose)
        [stub] = stubs(loose)
        assert loose.structured_content == {
            "image": {"type": "image", "data": STUB.search(all_text(loose)).group(0), "mimeType": "image/png"},
            "caption": "a picture",
        }
        assert served.inbox_file(stub["path"]).read_bytes() == picture
        assert long_fields(json.loads(loose.model_dump_json(by_alias=True))) == []

        # No stub fits a base64 pattern: structuredContent is withheld and
        # said so, with the thumbnail's stub, which was only there.
        strict = await served.client.call_tool("mcp__schemas__strict-image", {})
        assert strict.structured_content is None
        assert strict.is_error
        lines = texts(strict)
        assert len(lines) == 3, lines
        assert STUB.fullmatch(lines[0]) and STUB.fullmatch(lines[2])
        assert lines[1].startswith("[structured content withheld:") and "output schema" in lines[1]
        assert served.inbox_file(STUB.fullmatch(lines[0])["path"]).read_bytes() == picture
        assert served.inbox_file(STUB.fullmatch(lines[2])["path"]).read_bytes() == png_magic(2000, 22)
        assert long_fields(json.loads(strict.model_dump_json(by_alias=True))) == []
