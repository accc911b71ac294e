"""Resources, prompts and completion through the gateway: the upstreams'
resources listed as `mcp://<server>/<uri>` and their prompts as
`mcp__<server>__<prompt>`; a resource read that is a file (a blob, or a
text longer than the gateway passes on) kept in the run's inbox and answered
with its stub, the inbox file equal to the upstream's bytes; a short text
passed on as it is. Upstreams: `asking_server.py` (exact bytes) and the
reference server-everything (npm).
"""

from __future__ import annotations

import base64
import hashlib
import re
import sys
from pathlib import Path

import anyio
import mcp_types as types
import pytest

from harness import HERE, STUB, everything_bin, http_client, png, start_http, stdio_gateway, write_config

pytestmark = pytest.mark.anyio

sys.path.insert(0, str(HERE))
from asking_server import LONG_NOTE_BYTES, long_note  # noqa: E402


def config(root: Path) -> Path:
    return write_config(
        root,
        extra={
            "mcp_servers": {
                "asking": {"command": sys.executable, "args": [str(HERE / "asking_server.py")]},
                "everything": {"command": everything_bin(), "args": ["stdio"]},
            }
        },
    )


def only_stub(result: types.ReadResourceResult) -> tuple[str, re.Match]:
    assert len(result.contents) == 1, result.contents
    content = result.contents[0]
    assert isinstance(content, types.TextResourceContents), content
    match = STUB.fullmatch(content.text)
    assert match, content.text
    return content.uri, match


async def test_resources_and_templates_of_every_upstream_are_listed_under_the_gateways_scheme(tmp_path: Path):
    async with stdio_gateway(tmp_path, config(tmp_path), mode="legacy") as served:
        resources = (await served.client.list_resources()).resources
        templates = (await served.client.list_resource_templates()).resource_templates
    uris = {r.uri for r in resources}
    assert {"mcp://asking/note://one", "mcp://asking/picture://one.png"} <= uris, uris
    assert any(u.startswith("mcp://everything/demo://resource/static/document/") for u in uris), uris
    assert all(u.startswith(("mcp://asking/", "mcp://everything/")) for u in uris), uris
    assert "mcp://everything/demo://resource/dynamic/blob/{resourceId}" in {t.uri_template for t in templates}


async def test_a_blob_resource_is_kept_in_the_inbox_and_answered_with_its_stub(tmp_path: Path):
    picture = png(64, 64, 5)
    async with stdio_gateway(tmp_path, config(tmp_path), mode="legacy") as served:
        result = await served.client.read_resource("mcp://asking/picture://one.png")
        uri, stub = only_stub(result)
        kept = served.inbox_file(stub["path"]).read_bytes()
    assert uri == "mcp://asking/picture://one.png"
    assert stub["type"] == "image/png", stub.group(0)
    assert stub["origin"] == "mcp:asking/resources/read", stub.group(0)
    assert kept == picture
    assert hashlib.sha256(kept).hexdigest().startswith(stub["sha"])
    assert base64.b64encode(picture).decode()[:64] not in str(result)


async def test_a_long_text_resource_is_kept_and_a_short_one_passes_as_it_is(tmp_path: Path):
    async with stdio_gateway(tmp_path, config(tmp_path), mode="legacy") as served:
        long = await served.client.read_resource("mcp://asking/note://long")
        short = await served.client.read_resource("mcp://asking/note://one")
        _, stub = only_stub(long)
        kept = served.inbox_file(stub["path"]).read_bytes()
    assert kept == long_note().encode() and len(kept) == LONG_NOTE_BYTES
    assert len(str(long)) < 1000, str(long)
    [content] = short.contents
    assert isinstance(content, types.TextResourceContents)
    assert (content.uri, content.text) == ("mcp://asking/note://one", "the first note")


async def test_server_everythings_blob_resource_is_kept_byte_for_byte(tmp_path: Path):
    async with stdio_gateway(tmp_path, config(tmp_path), mode="legacy") as served:
        result = await served.client.read_resource("mcp://everything/demo://resource/dynamic/blob/3")
        uri, stub = only_stub(result)
        kept = served.inbox_file(stub["path"]).read_bytes()
    assert uri == "mcp://everything/demo://resource/dynamic/blob/3"
    # What server-everything encodes: "Resource 3: This is a base64 blob
    # created at <time>".
    assert re.fullmatch(rb"Resource 3: This is a base64 blob created at .+", kept), kept
    assert hashlib.sha256(kept).hexdigest().startswith(stub["sha"])


async def test_a_resource_the_gateway_does_not_name_gets_a_clear_error(tmp_path: Path):
    async with stdio_gateway(tmp_path, config(tmp_path), mode="legacy") as served:
        with pytest.raises(Exception) as refused:
            await served.client.read_resource("demo://resource/static/document/architecture.md")
        with pytest.raises(Exception) as unknown:
            await served.client.read_resource("mcp://nosuch/demo://x")
    assert "mcp://<server>/" in str(refused.value), refused.value
    assert "nosuch" in str(unknown.value), unknown.value


async def test_prompts_are_listed_and_got_under_their_gateway_names(tmp_path: Path):
    async with stdio_gateway(tmp_path, config(tmp_path), mode="legacy") as served:
        names = {p.name for p in (await served.client.list_prompts()).prompts}
        greet = await served.client.get_prompt("mcp__asking__greet", {"name": "Ada"})
        args = await served.client.get_prompt("mcp__everything__args-prompt", {"city": "Lisbon"})
        embedded = await served.client.get_prompt(
            "mcp__everything__resource-prompt", {"resourceType": "Blob", "resourceId": "2"}
        )
        stubs = [
            STUB.fullmatch(m.content.text)
            for m in embedded.messages
            if isinstance(m.content, types.TextContent) and STUB.fullmatch(m.content.text)
        ]
        kept = [served.inbox_file(s["path"]).read_bytes() for s in stubs]
    assert {"mcp__asking__greet", "mcp__everything__simple-prompt", "mcp__everything__args-prompt"} <= names, names
    assert [m.content.text for m in greet.messages] == ["Say hello to Ada."]
    assert any("Lisbon" in m.content.text for m in args.messages if isinstance(m.content, types.TextContent))
    # The embedded blob resource of the prompt is a file: kept, not passed on.
    assert len(stubs) == 1, embedded.messages
    assert stubs[0]["origin"] == "mcp:everything/prompts/get", stubs[0].group(0)
    assert re.fullmatch(rb"Resource 2: This is a base64 blob created at .+", kept[0]), kept
    assert not any(isinstance(m.content, types.EmbeddedResource) for m in embedded.messages)


async def test_completion_reaches_the_upstream_of_the_prompt_or_template(tmp_path: Path):
    async with stdio_gateway(tmp_path, config(tmp_path), mode="legacy") as served:
        assert served.client.server_capabilities.completions is not None
        names = await served.client.complete(
            types.PromptReference(type="ref/prompt", name="mcp__asking__greet"), {"name": "name", "value": "A"}
        )
        kinds = await served.client.complete(
            types.PromptReference(type="ref/prompt", name="mcp__everything__resource-prompt"),
            {"name": "resourceType", "value": "B"},
        )
        ids = await served.client.complete(
            types.ResourceTemplateReference(
                type="ref/resource", uri="mcp://everything/demo://resource/dynamic/text/{resourceId}"
            ),
            {"name": "resourceId", "value": "7"},
        )
    assert names.completion.values == ["Ada", "Alan"]
    assert kinds.completion.values == ["Blob"]
    assert ids.completion.values == ["7"]


async def test_log_level_and_subscriptions_pass_to_server_everything(tmp_path: Path):
    logs: list[types.LoggingMessageNotificationParams] = []
    updates: list[str] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async def on_message(message) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(message.params.uri)

    uri = "mcp://everything/demo://resource/dynamic/text/1"
    async with stdio_gateway(
        tmp_path, config(tmp_path), mode="legacy", logging_callback=on_log, message_handler=on_message
    ) as served:
        await served.client.set_logging_level("info")
        await served.client.subscribe_resource(uri)
        await served.client.call_tool("mcp__everything__toggle-subscriber-updates", {})
        with anyio.fail_after(20):
            while not updates:
                await anyio.sleep(0.1)
        await served.client.unsubscribe_resource(uri)
    assert updates[0] == uri
    # server-everything logs each subscription at info, named by the gateway.
    subscribed = [log for log in logs if "Subscribe" in str(log.data)]
    assert subscribed and subscribed[0].logger == "everything", logs
    assert "demo://resource/dynamic/text/1" in str(subscribed[0].data)


async def test_a_2026_07_28_client_over_http_reads_resources_and_prompts_through_the_shared_connections(tmp_path: Path):
    # Requests without a session (2026-07-28) go through the gateway's shared
    # upstream connections; the capture holds there as well.
    process, url = start_http(tmp_path, config(tmp_path))
    try:
        async with http_client(url, None, mode="2026-07-28") as client:
            uris = {r.uri for r in (await client.list_resources()).resources}
            picture = await client.read_resource("mcp://asking/picture://one.png")
            greet = await client.get_prompt("mcp__asking__greet", {"name": "Grace"})
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert "mcp://asking/picture://one.png" in uris, uris
    _, stub = only_stub(picture)
    found = list((tmp_path / "data" / "runs").glob(f"*/inbox/{stub['path']}"))
    assert len(found) == 1, found
    assert found[0].read_bytes() == png(64, 64, 5)
    assert [m.content.text for m in greet.messages] == ["Say hello to Grace."]


@pytest.mark.parametrize("images", ["capture", "view"])
async def test_an_image_in_a_prompt_is_kept_and_stubbed_under_the_servers_images_setting(tmp_path: Path, images: str):
    path = write_config(
        tmp_path,
        extra={
            "mcp_servers": {
                "asking": {"command": sys.executable, "args": [str(HERE / "asking_server.py")], "images": images}
            }
        },
    )
    picture = png(64, 64, 11)
    async with stdio_gateway(tmp_path, path, mode="legacy") as served:
        prompt = await served.client.get_prompt("mcp__asking__picture_prompt")
        first = prompt.messages[0]
        assert isinstance(first.content, types.TextContent), first
        stub = STUB.fullmatch(first.content.text)
        assert stub and stub["origin"] == "mcp:asking/prompts/get", first.content.text
        assert served.inbox_file(stub["path"]).read_bytes() == picture
    rest = prompt.messages[1:]
    if images == "capture":
        assert [m.content.text for m in rest] == ["Describe the picture above."]
        assert base64.b64encode(picture).decode()[:200] not in prompt.model_dump_json()
    else:
        # The view (the file view's line about the image, and the image
        # scaled) comes as messages of their own, from the same role, between
        # the stub and the text that follows.
        view, last = rest[:-1], rest[-1]
        assert [type(m.content).__name__ for m in view] == ["TextContent", "ImageContent"], view
        assert all(m.role == "user" for m in rest)
        assert last.content.text == "Describe the picture above."
