"""An upstream MCP server (the Python SDK, over stdio) that asks its client
things during a call, for the gateway's relay tests:

- `ask(question)`: a form elicitation (`confirm` boolean, `note` string);
  answers with what came back.
- `ask_url(url)`: a URL-mode elicitation; answers with the action.
- `ask_briefly(question, seconds)`: a form elicitation it gives up on after
  `seconds` (the SDK then sends `notifications/cancelled` for it); answers
  "gave up" or with what came back.
- `sample(prompt)`: a `sampling/createMessage` with the prompt; answers with
  the sampled text and model.
- `log(url)`: sends log messages (one naming `url`, one from a named logger)
  and answers "logged".
- `sample_picture()`: a sampling request whose first message is the image
  `png(64, 64, 7)` and whose second a text; answers with the sampled text.
- `log_file()`: logs the image `png(64, 64, 8)` as an image block, and the
  PNG `png(64, 64, 9)` as base64 inside a text; answers "logged files".
- `log_in_order(count)`: logs the image `png(512, 512, 12)`, then the texts
  "line 1" … "line <count>"; answers "logged in order".
- `ask_in_rounds(question)`, `sample_picture_in_rounds()`: the same as
  `ask` and `sample_picture` in the 2026-07-28 way, as an "input required"
  answer whose answers come with the next call.
- `caps()`: the capabilities its client declared, as JSON.
- `touch()`: tells its client that its tool, prompt and resource lists
  changed and that `note://one` was updated.

It also offers prompts (`greet`, with a completion for its argument, and
`picture_prompt`, an image `png(64, 64, 11)` and a text) and
resources: `note://one` (a short text), `note://long` (LONG_NOTE_BYTES of
text) and `picture://one.png` (the PNG `png(64, 64, 5)` of the harness).
"""

from __future__ import annotations

import base64
import sys
import warnings

import anyio
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import UserMessage
from pydantic import BaseModel

from harness import png

warnings.simplefilter("ignore")

server = MCPServer("asking")


class Answer(BaseModel):
    confirm: bool
    note: str = ""


@server.tool()
async def ask(question: str, ctx: Context) -> str:
    result = await ctx.elicit(question, Answer)
    if result.action == "accept":
        return f"action=accept confirm={result.data.confirm} note={result.data.note}"
    return f"action={result.action}"


@server.tool()
async def ask_briefly(question: str, seconds: float, ctx: Context) -> str:
    with anyio.move_on_after(seconds):
        result = await ctx.elicit(question, Answer)
        return f"action={result.action}"
    return "gave up"


@server.tool()
async def ask_url(url: str, ctx: Context) -> str:
    result = await ctx.elicit_url("Sign in to continue", url, "sign-in-1")
    return f"action={result.action}"


@server.tool()
async def sample(prompt: str, ctx: Context) -> str:
    result = await ctx.request_context.session.create_message(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))],
        max_tokens=64,
        system_prompt="Answer briefly.",
        related_request_id=ctx.request_id,
    )
    text = result.content.text if isinstance(result.content, types.TextContent) else repr(result.content)
    return f"sampled={text} model={result.model}"


@server.tool()
async def sample_picture(ctx: Context) -> str:
    picture = base64.b64encode(png(64, 64, 7)).decode()
    result = await ctx.request_context.session.create_message(
        messages=[
            types.SamplingMessage(role="user", content=types.ImageContent(type="image", data=picture, mime_type="image/png")),
            types.SamplingMessage(role="user", content=types.TextContent(type="text", text="What is in this picture?")),
        ],
        max_tokens=64,
        related_request_id=ctx.request_id,
    )
    return f"sampled={result.content.text}"


@server.tool()
async def log_file(ctx: Context) -> str:
    image = base64.b64encode(png(64, 64, 8)).decode()
    await ctx.info({"type": "image", "data": image, "mimeType": "image/png"})
    attached = base64.b64encode(png(64, 64, 9)).decode()
    await ctx.warning(f"the upload failed; its body was {attached}", logger_name="uploader")
    return "logged files"


@server.tool()
async def log_in_order(count: int, ctx: Context) -> str:
    image = base64.b64encode(png(512, 512, 12)).decode()
    await ctx.info({"type": "image", "data": image, "mimeType": "image/png"})
    for line in range(1, count + 1):
        await ctx.info(f"line {line}")
    return "logged in order"


def answered(ctx: Context, key: str):
    """The client's answer to input request `key` of an earlier round, if any."""
    return (ctx.input_responses or {}).get(key)


@server.tool()
async def ask_in_rounds(question: str, ctx: Context) -> types.InputRequiredResult | str:
    """`ask` for a client on 2026-07-28: the question goes back in an
    "input required" answer and its answer comes with the next call."""
    answer = answered(ctx, "question")
    if answer is not None:
        action = answer.get("action") if isinstance(answer, dict) else getattr(answer, "action", answer)
        return f"action={action}"
    schema = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
    request = types.ElicitRequest(params=types.ElicitRequestFormParams(message=question, requested_schema=schema))
    return types.InputRequiredResult(input_requests={"question": request}, request_state="asked")


@server.tool()
async def sample_picture_in_rounds(ctx: Context) -> types.InputRequiredResult | str:
    """`sample_picture` for a client on 2026-07-28, in an "input required" answer."""
    answer = answered(ctx, "sample")
    if answer is not None:
        content = answer.get("content") if isinstance(answer, dict) else getattr(answer, "content", None)
        text = content.get("text") if isinstance(content, dict) else getattr(content, "text", content)
        return f"sampled={text}"
    picture = base64.b64encode(png(64, 64, 7)).decode()
    request = types.CreateMessageRequest(
        params=types.CreateMessageRequestParams(
            messages=[
                types.SamplingMessage(role="user", content=types.ImageContent(type="image", data=picture, mime_type="image/png")),
                types.SamplingMessage(role="user", content=types.TextContent(type="text", text="What is in this picture?")),
            ],
            max_tokens=64,
        )
    )
    return types.InputRequiredResult(input_requests={"sample": request}, request_state="sampling")


LEVEL: dict[str, str] = {}


async def set_level(ctx, params: types.SetLevelRequestParams) -> types.EmptyResult:
    LEVEL["level"] = params.level
    return types.EmptyResult()


server._lowlevel_server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)


@server.tool()
async def log(url: str, ctx: Context) -> str:
    await ctx.info(f"fetching {url} now")
    await ctx.warning({"url": url, "status": 503}, logger_name="fetcher")
    return f"logged at level={LEVEL.get('level', 'unset')}"


@server.tool()
async def caps(ctx: Context) -> str:
    """What the client (the gateway) said it can be asked, as JSON."""
    declared = ctx.request_context.session.client_params.capabilities
    return declared.model_dump_json(by_alias=True, exclude_none=True)


@server.tool()
async def touch(ctx: Context) -> str:
    session = ctx.request_context.session
    await session.send_tool_list_changed()
    await session.send_prompt_list_changed()
    await session.send_resource_list_changed()
    await session.send_resource_updated("note://one")
    return "touched"


@server.prompt()
def greet(name: str) -> str:
    return f"Say hello to {name}."


@server.prompt()
def picture_prompt() -> list:
    """A prompt whose first message is the image `png(64, 64, 11)`."""
    picture = base64.b64encode(png(64, 64, 11)).decode()
    return [
        UserMessage(content=types.ImageContent(type="image", data=picture, mime_type="image/png")),
        UserMessage(content=types.TextContent(type="text", text="Describe the picture above.")),
    ]


@server.resource("note://one")
def note() -> str:
    return "the first note"


LONG_NOTE_BYTES = 40 * 1024


def long_note() -> str:
    line = "A long note line, repeated to make a text resource bigger than the gateway passes on.\n"
    return (line * (LONG_NOTE_BYTES // len(line) + 1))[:LONG_NOTE_BYTES]


@server.resource("note://long")
def long() -> str:
    return long_note()


@server.resource("picture://one.png", mime_type="image/png")
def picture() -> bytes:
    return png(64, 64, 5)


@server.completion()
async def complete(ref, argument, context):
    if isinstance(ref, types.PromptReference) and ref.name == "greet" and argument.name == "name":
        names = ["Ada", "Alan", "Grace"]
        return types.Completion(values=[n for n in names if n.startswith(argument.value)])
    return None


if __name__ == "__main__":
    server.run()
