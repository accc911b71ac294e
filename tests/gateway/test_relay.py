"""The gateway as a proxy of what an upstream asks and tells during a call:
a question (`elicitation/create`, form and URL mode) and a sampling request
reach the client session that made the call, and its answer reaches the
upstream request that asked; log messages reach the client prefixed with
the server's name and without URL secrets; changed lists and resource
updates are passed on. The upstream is `asking_server.py` (the Python SDK);
the client is the Python SDK too, on the initialize handshake (2025-11-25),
the last revision in which a server asks during a call.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from harness import HERE, STUB, all_text, http_client, png, start_http, stdio_gateway, write_config

pytestmark = pytest.mark.anyio


def asking_config(root: Path) -> Path:
    return write_config(
        root,
        extra={"mcp_servers": {"asking": {"command": sys.executable, "args": [str(HERE / "asking_server.py")]}}},
    )


class Person:
    """An elicitation callback: records each question and answers it."""

    def __init__(self, action: str = "accept", content: dict[str, Any] | None = None):
        self.action = action
        self.content = content
        self.questions: list[types.ElicitRequestParams] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.questions.append(params)
        return types.ElicitResult(action=self.action, content=self.content if self.action == "accept" else None)


class Model:
    """A sampling callback: records each request and answers with `text`."""

    def __init__(self, text: str):
        self.text = text
        self.requests: list[types.CreateMessageRequestParams] = []

    async def __call__(self, context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        self.requests.append(params)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=self.text), model="test-model-7"
        )


@pytest.mark.parametrize("action", ["accept", "decline", "cancel"])
async def test_an_upstream_question_is_put_to_the_client_and_its_answer_reaches_the_upstream(tmp_path: Path, action: str):
    person = Person(action, {"confirm": True, "note": "go ahead"})
    async with stdio_gateway(tmp_path, asking_config(tmp_path), mode="legacy", elicitation_callback=person) as served:
        result = await served.client.call_tool("mcp__asking__ask", {"question": "Post the report to town-square?"})
    assert not result.is_error, all_text(result)
    assert len(person.questions) == 1, person.questions
    question = person.questions[0]
    assert question.message == "Post the report to town-square?"
    schema = question.requested_schema
    props = schema["properties"] if isinstance(schema, dict) else schema.properties
    assert set(props) == {"confirm", "note"}, schema
    if action == "accept":
        assert all_text(result) == "action=accept confirm=True note=go ahead"
    else:
        assert all_text(result) == f"action={action}"


async def test_a_url_mode_question_reaches_the_client_with_its_url(tmp_path: Path):
    person = Person("accept")
    async with stdio_gateway(tmp_path, asking_config(tmp_path), mode="legacy", elicitation_callback=person) as served:
        result = await served.client.call_tool("mcp__asking__ask_url", {"url": "https://login.example.org/start"})
    assert all_text(result) == "action=accept", all_text(result)
    assert len(person.questions) == 1
    question = person.questions[0]
    assert question.mode == "url", question
    assert question.url == "https://login.example.org/start"
    assert question.elicitation_id == "sign-in-1"


async def test_an_upstream_sampling_request_reaches_the_clients_model_and_its_answer_the_upstream(tmp_path: Path):
    model = Model("forty-two")
    async with stdio_gateway(tmp_path, asking_config(tmp_path), mode="legacy", sampling_callback=model) as served:
        result = await served.client.call_tool("mcp__asking__sample", {"prompt": "What is six times seven?"})
    assert not result.is_error, all_text(result)
    assert all_text(result) == "sampled=forty-two model=test-model-7"
    assert len(model.requests) == 1
    request = model.requests[0]
    assert request.system_prompt == "Answer briefly."
    assert request.max_tokens == 64
    assert [m.content.text for m in request.messages] == ["What is six times seven?"]


async def test_the_upstream_is_told_the_gateway_can_be_asked_only_when_its_client_can(tmp_path: Path):
    async with stdio_gateway(
        tmp_path / "can", asking_config(tmp_path / "can"), mode="legacy",
        elicitation_callback=Person(), sampling_callback=Model("x"),
    ) as served:
        can = json.loads(all_text(await served.client.call_tool("mcp__asking__caps", {})))
    assert "sampling" in can and "elicitation" in can, can
    # No callbacks: the client declares neither, so neither is declared to
    # the upstream; one that asks anyway gets a "no", and sampling an error,
    # instead of a call that hangs.
    async with stdio_gateway(tmp_path / "cannot", asking_config(tmp_path / "cannot"), mode="legacy") as served:
        cannot = json.loads(all_text(await served.client.call_tool("mcp__asking__caps", {})))
        asked = await served.client.call_tool("mcp__asking__ask", {"question": "May I?"})
        sampled = await served.client.call_tool("mcp__asking__sample", {"prompt": "Hello?"})
    assert "sampling" not in cannot and "elicitation" not in cannot, cannot
    assert all_text(asked) == "action=decline", all_text(asked)
    assert sampled.is_error and "did not say it can sample" in all_text(sampled), all_text(sampled)


async def test_each_http_session_gets_the_questions_of_its_own_calls(tmp_path: Path):
    config = asking_config(tmp_path)
    process, url = start_http(tmp_path, config)
    try:
        alice = Person("accept", {"confirm": True, "note": "alice"})
        bob = Person("accept", {"confirm": False, "note": "bob"})

        async def ask(person: Person, question: str) -> str:
            async with http_client(url, None, mode="legacy", elicitation_callback=person) as client:
                result = await client.call_tool("mcp__asking__ask", {"question": question})
                return all_text(result)

        answers = await asyncio.gather(ask(alice, "Question for Alice"), ask(bob, "Question for Bob"))
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert answers == ["action=accept confirm=True note=alice", "action=accept confirm=False note=bob"]
    assert [q.message for q in alice.questions] == ["Question for Alice"]
    assert [q.message for q in bob.questions] == ["Question for Bob"]


async def test_upstream_log_messages_reach_the_client_named_by_server_and_without_url_secrets(tmp_path: Path):
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    secret = "s3cr3t-token-value"
    async with stdio_gateway(tmp_path, asking_config(tmp_path), mode="legacy", logging_callback=on_log) as served:
        assert served.client.server_capabilities.logging is not None
        await served.client.set_logging_level("debug")
        result = await served.client.call_tool(
            "mcp__asking__log", {"url": f"https://api.example.org/v1/items?token={secret}&page=2"}
        )
        for _ in range(50):
            if len(logs) >= 2:
                break
            await asyncio.sleep(0.05)
    # The level reached the upstream.
    assert all_text(result) == "logged at level=debug", all_text(result)
    assert len(logs) == 2, logs
    info, warning = logs
    assert info.level == "info" and info.logger == "asking", info
    assert info.data == "fetching https://api.example.org/v1/items?… now", info.data
    assert warning.level == "warning" and warning.logger == "asking/fetcher", warning
    assert warning.data == {"url": "https://api.example.org/v1/items?…", "status": 503}, warning.data
    assert all(secret not in repr(log) for log in logs)


async def test_changed_lists_and_resource_updates_of_an_upstream_reach_the_client(tmp_path: Path):
    seen: list[Any] = []

    async def on_message(message: Any) -> None:
        seen.append(message)

    async with stdio_gateway(tmp_path, asking_config(tmp_path), mode="legacy", message_handler=on_message) as served:
        caps = served.client.server_capabilities
        assert caps.tools.list_changed and caps.prompts.list_changed and caps.resources.list_changed, caps
        assert caps.resources.subscribe, caps
        result = await served.client.call_tool("mcp__asking__touch", {})
        assert all_text(result) == "touched"
        for _ in range(50):
            if len(seen) >= 4:
                break
            await asyncio.sleep(0.05)
    kinds = {type(m).__name__ for m in seen}
    assert {
        "ToolListChangedNotification",
        "PromptListChangedNotification",
        "ResourceListChangedNotification",
        "ResourceUpdatedNotification",
    } <= kinds, kinds
    updated = [m for m in seen if isinstance(m, types.ResourceUpdatedNotification)]
    assert [m.params.uri for m in updated] == ["mcp://asking/note://one"]


async def test_a_question_the_upstream_cancels_is_cancelled_at_the_client_too(tmp_path: Path):
    # The person never answers; the upstream gives up after a second and
    # cancels its question. The gateway must cancel the question it put to
    # the client, not leave the client's dialog open for an answer no one
    # waits for.
    asked = asyncio.Event()
    withdrawn = asyncio.Event()
    started = asyncio.get_running_loop().time()

    async def slow_person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            withdrawn.set()
            raise
        return types.ElicitResult(action="decline")

    async with stdio_gateway(tmp_path, asking_config(tmp_path), mode="legacy", elicitation_callback=slow_person) as served:
        result = await served.client.call_tool("mcp__asking__ask_briefly", {"question": "Still there?", "seconds": 1})
        assert all_text(result) == "gave up", all_text(result)
        assert asked.is_set()
        await asyncio.wait_for(withdrawn.wait(), timeout=10)
    assert asyncio.get_running_loop().time() - started < 30


async def test_log_messages_on_the_shared_connections_go_to_the_gateways_log_named_and_without_secrets(tmp_path: Path):
    # A 2026-07-28 client has no session: its calls use the gateway's shared
    # upstream connections, whose log messages belong to no one client. They
    # go to the gateway's own log, named by server, URL queries hidden.
    secret = "sh4red-s3cret-value"
    process, url = start_http(tmp_path, asking_config(tmp_path))
    try:
        async with http_client(url, None, mode="2026-07-28", log_level="info") as client:
            result = await client.call_tool(
                "mcp__asking__log", {"url": f"https://api.example.org/v1/items?token={secret}&page=2"}
            )
            assert not result.is_error, all_text(result)
        log = ""
        for _ in range(100):
            log = (tmp_path / "gateway-http.stderr").read_text()
            if "fetcher" in log:
                break
            await asyncio.sleep(0.05)
    finally:
        process.terminate()
        process.wait(timeout=10)
    lines = [line for line in log.splitlines() if "upstream log" in line]
    assert any("asking" in line and "fetching https://api.example.org/v1/items?… now" in line for line in lines), log
    assert any("asking/fetcher" in line and "503" in line for line in lines), log
    assert secret not in log


def base64_pieces(data: bytes, size: int = 64) -> list[str]:
    """Pieces of `data`'s base64 that any copy of it in a message would contain."""
    encoded = base64.b64encode(data).decode()
    return [encoded[at : at + size] for at in range(0, len(encoded) - size, size)]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_picture_in_an_upstreams_sampling_request_reaches_the_client_as_its_stub(tmp_path: Path, mode: str):
    picture = png(64, 64, 7)
    model = Model("a red square")
    async with stdio_gateway(tmp_path, asking_config(tmp_path), mode=mode, sampling_callback=model) as served:
        tool = "mcp__asking__sample_picture" if mode == "legacy" else "mcp__asking__sample_picture_in_rounds"
        result = await served.client.call_tool(tool, {})
        assert all_text(result) == "sampled=a red square", all_text(result)
        assert len(model.requests) == 1
        request = model.requests[0]
        first, second = request.messages
        assert isinstance(first.content, types.TextContent), first.content
        stub = STUB.fullmatch(first.content.text)
        assert stub, first.content.text
        assert stub["origin"] == "mcp:asking/sampling/createMessage", stub.group(0)
        assert served.inbox_file(stub["path"]).read_bytes() == picture
    assert second.content.text == "What is in this picture?"
    sent = request.model_dump_json()
    assert not any(piece in sent for piece in base64_pieces(picture)), "the picture's bytes reached the client"


async def test_files_in_upstream_log_messages_reach_the_client_as_stubs(tmp_path: Path):
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    image, attached = png(64, 64, 8), png(64, 64, 9)
    async with stdio_gateway(tmp_path, asking_config(tmp_path), mode="legacy", logging_callback=on_log) as served:
        await served.client.set_logging_level("debug")
        result = await served.client.call_tool("mcp__asking__log_file", {})
        assert all_text(result) == "logged files", all_text(result)
        for _ in range(50):
            if len(logs) >= 2:
                break
            await asyncio.sleep(0.05)
        assert len(logs) == 2, logs
        shown = json.dumps([log.data for log in logs], ensure_ascii=False)
        stubs = STUB.findall(shown)
        kept = sorted(served.inbox_file(path).read_bytes() for path, *_ in stubs)
    assert len(stubs) == 2, shown
    assert kept == sorted([image, attached])
    assert logs[1].logger == "asking/uploader" and logs[1].data.startswith("the upload failed; its body was [file: ")
    for data in (image, attached):
        assert not any(piece in shown for piece in base64_pieces(data)), "a file's bytes reached the client in a log"


# rmcp hands each upstream notification to the relay on a task of its own,
# and keeping a log's file takes longer than passing on a plain text: the
# gateway still passes messages on in the order they came, and all of them
# before the call's answer.
async def test_upstream_log_messages_reach_the_client_in_order_and_before_the_answer(tmp_path: Path):
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async with stdio_gateway(tmp_path, asking_config(tmp_path), mode="legacy", logging_callback=on_log) as served:
        await served.client.set_logging_level("debug")
        result = await served.client.call_tool("mcp__asking__log_in_order", {"count": 20})
        assert all_text(result) == "logged in order", all_text(result)
        shown = [log.data for log in logs]
        assert len(shown) == 21, shown
        stub = STUB.fullmatch(shown[0]["data"])
        assert stub, shown[0]
        assert served.inbox_file(stub["path"]).read_bytes() == png(512, 512, 12)
        assert shown[1:] == [f"line {line}" for line in range(1, 21)], shown


# On 2026-07-28 the question comes back in an "input required" answer,
# which the client's SDK answers and sends again.
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_file_in_an_upstreams_question_reaches_the_client_as_its_stub(tmp_path: Path, mode: str):
    picture = png(64, 64, 10)
    person = Person("decline")
    question = f"Is this your picture? {base64.b64encode(picture).decode()}"
    async with stdio_gateway(tmp_path, asking_config(tmp_path), mode=mode, elicitation_callback=person) as served:
        tool = "mcp__asking__ask" if mode == "legacy" else "mcp__asking__ask_in_rounds"
        result = await served.client.call_tool(tool, {"question": question})
        assert all_text(result) == "action=decline", all_text(result)
        assert len(person.questions) == 1
        asked = person.questions[0].message
        stub = STUB.search(asked)
        assert stub and asked.startswith("Is this your picture? [file: "), asked
        assert stub["origin"] == "mcp:asking/elicitation/create", stub.group(0)
        assert served.inbox_file(stub["path"]).read_bytes() == picture
    assert not any(piece in person.questions[0].model_dump_json() for piece in base64_pieces(picture))
