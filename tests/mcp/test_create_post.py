"""Posting with files through a real client: the person is asked with a
question that names every file, and only their tick posts; a declined,
cancelled or unticked answer, or a file changed after the question, posts
nothing at all. Both elicitation styles: `elicitation/create` during the call
(mode="legacy": the initialize handshake, 2025-11-25) and the input-required
result with sealed request state (the client pinned to 2026-07-28)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import Home, Person, question_text, serve, server_env, show, structured, text_of, writes_in

pytestmark = pytest.mark.anyio

MODES = ["legacy", "2026-07-28"]

CSV = b"month,uploads\njan,120\nfeb,137\n"
SUMMARY = "# Summary\n\nUploads grew 14% from January to February.\n"


def uploads(log):
    return [r for r in log if r["method"] == "POST" and r["path"] == "/api/v4/files"]


def post_creations(log):
    return [r for r in log if r["method"] == "POST" and r["path"] == "/api/v4/posts"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_post_with_a_path_file_and_a_written_file_asks_then_posts_both_byte_identical(
    sim, home: Home, tmp_path: Path, mode: str
):
    report = home.home / "reports" / "report.csv"
    report.parent.mkdir()
    report.write_bytes(CSV)
    channel = sim.channel_id("town-square")
    before = {p["id"] for p in sim.posts("town-square")}
    person = Person()
    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=person, mode=mode) as served:
        sim.clear()
        result = await served.client.call_tool(
            "create_post",
            {
                "channel_id": channel,
                "message": "The upload numbers, as promised.",
                "files": [{"path": str(report)}, {"name": "summary.md", "content": SUMMARY}],
            },
        )
        log = sim.requests()
    assert not result.is_error, text_of(result)

    assert len(person.questions) == 1, "the person is asked exactly once"
    question = person.questions[0]
    text = question_text(question)
    assert "report.csv" in text and str(report) in text, text
    assert "summary.md" in text and "written for this post" in text, text
    assert "The upload numbers, as promised." in text, text
    schema = question.requested_schema
    props = schema["properties"] if isinstance(schema, dict) else schema.properties
    assert list(props) == ["confirm"], schema
    confirm = props["confirm"] if isinstance(props["confirm"], dict) else props["confirm"].model_dump()
    assert confirm["type"] == "boolean" and "default" not in confirm, confirm
    required = schema["required"] if isinstance(schema, dict) else schema.required
    assert list(required) == ["confirm"], schema

    assert len(uploads(log)) == 2, f"each file is uploaded once:\n{show(log)}"
    assert len(post_creations(log)) == 1, show(log)

    new = [p for p in sim.posts("town-square") if p["id"] not in before]
    assert len(new) == 1, new
    post = new[0]
    assert post["message"] == "The upload numbers, as promised."
    assert post.get("props", {}).get("ai_generated_by"), post
    contents = {}
    for file_id in post["file_ids"]:
        contents[sim.file_info(file_id)["name"]] = sim.download(file_id)
    assert contents == {"report.csv": CSV, "summary.md": SUMMARY.encode()}, list(contents)
    assert str(post["id"]) in text_of(result) or post["id"] in str(result.structured_content)


async def test_a_written_file_posts_over_http_too(sim, home: Home, tmp_path: Path):
    person = Person()
    before = {p["id"] for p in sim.posts("town-square")}
    async with serve("http", server_env(sim, home, writes=True), tmp_path, person=person) as served:
        result = await served.client.call_tool(
            "create_post",
            {"channel_id": "town-square", "message": "Summary attached.", "files": [{"name": "summary.md", "content": SUMMARY}]},
        )
    assert not result.is_error, text_of(result)
    assert len(person.questions) == 1
    new = [p for p in sim.posts("town-square") if p["id"] not in before]
    assert len(new) == 1 and len(new[0]["file_ids"]) == 1, new
    assert sim.download(new[0]["file_ids"][0]) == SUMMARY.encode()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("answer", ["decline", "cancel", "untick"])
async def test_a_post_not_approved_uploads_nothing(sim, home: Home, tmp_path: Path, mode: str, answer: str):
    report = home.home / "report.csv"
    report.write_bytes(CSV)
    person = Person(answer="accept", confirm=False) if answer == "untick" else Person(answer=answer)
    channel = sim.channel_id("town-square")
    before = {p["id"] for p in sim.posts("town-square")}
    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=person, mode=mode) as served:
        sim.clear()
        result = await served.client.call_tool(
            "create_post",
            {"channel_id": channel, "message": "Numbers.", "files": [{"path": str(report)}, {"name": "s.md", "content": SUMMARY}]},
        )
        log = sim.requests()
    assert len(person.questions) == 1
    assert not writes_in(log), f"a {answer} answer changed Mattermost:\n{show(log)}"
    assert text_of(result).strip(), "the answer says what happened"
    assert "not" in text_of(result).lower(), text_of(result)
    assert {p["id"] for p in sim.posts("town-square")} == before


@pytest.mark.parametrize("mode", MODES)
async def test_a_file_changed_after_the_question_is_not_uploaded(sim, home: Home, tmp_path: Path, mode: str):
    report = home.home / "report.csv"
    report.write_bytes(CSV)

    def tamper(_question) -> None:
        report.write_bytes(CSV + b"mar,999\n")

    person = Person(before=tamper)
    channel = sim.channel_id("town-square")
    before = {p["id"] for p in sim.posts("town-square")}
    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=person, mode=mode) as served:
        sim.clear()
        result = await served.client.call_tool(
            "create_post", {"channel_id": channel, "message": "Numbers.", "files": [{"path": str(report)}]}
        )
        log = sim.requests()
    assert len(person.questions) == 1
    assert result.is_error, f"a changed file must be refused: {text_of(result)}"
    assert "report.csv" in text_of(result) or "changed" in text_of(result).lower(), text_of(result)
    assert not uploads(log) and not post_creations(log), show(log)
    assert not writes_in(log), show(log)
    assert {p["id"] for p in sim.posts("town-square")} == before


@pytest.mark.parametrize(
    ("tool", "args", "created"),
    [
        ("dm", {"username": "carol"}, "/api/v4/channels/direct"),
        ("group_message", {"usernames": ["bob", "carol"]}, "/api/v4/channels/group"),
    ],
)
async def test_a_new_direct_or_group_channel_is_created_only_after_the_tick(
    sim, home: Home, tmp_path: Path, tool: str, args: dict, created: str
):
    """Alice has no DM with carol and no group with bob and carol: declined,
    nothing is created; accepted, the channel is created, then the file is
    uploaded and the post made."""
    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=Person(answer="decline")) as served:
        sim.clear()
        await served.client.call_tool(tool, {**args, "message": "Hi"})
        log = sim.requests()
    assert not writes_in(log), f"a declined {tool} created something:\n{show(log)}"

    person = Person()
    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=person) as served:
        sim.clear()
        result = await served.client.call_tool(
            tool, {**args, "message": "Hi", "files": [{"name": "note.txt", "content": "hello\n"}]}
        )
        log = sim.requests()
    assert not result.is_error, text_of(result)
    assert "carol" in question_text(person.questions[0])
    order = [r["path"] for r in writes_in(log)]
    assert order == [created, "/api/v4/files", "/api/v4/posts"], show(log)
    posted = structured(result)["post"]
    assert sim.download(posted["files"][0]["id"]) == b"hello\n"


async def test_with_asking_off_the_clients_approval_is_the_only_check(sim, home: Home, tmp_path: Path):
    """MM_MCP_ASK_BEFORE_WRITES=false: no question, no -32021 for a client
    without elicitation, and the tool description says the client's approval
    is the check. MM_MCP_MARK_AI_GENERATED=false: no ai_generated_by prop."""
    env = server_env(
        sim, home, writes=True, extra={"MM_MCP_ASK_BEFORE_WRITES": "false", "MM_MCP_MARK_AI_GENERATED": "false"}
    )
    before = {p["id"] for p in sim.posts("town-square")}
    async with serve("stdio", env, tmp_path) as served:
        tools = {t.name: t for t in (await served.client.list_tools()).tools}
        result = await served.client.call_tool(
            "create_post", {"channel_id": "town-square", "message": "Straight in.", "files": [{"name": "a.txt", "content": "a\n"}]}
        )
    assert not result.is_error, text_of(result)
    assert "approv" in tools["create_post"].description.lower(), tools["create_post"].description
    new = [p for p in sim.posts("town-square") if p["id"] not in before]
    assert len(new) == 1 and new[0]["message"] == "Straight in."
    assert "ai_generated_by" not in (new[0].get("props") or {}), new[0].get("props")


@pytest.mark.parametrize("mode", ["auto", "2026-07-28"])
@pytest.mark.parametrize("answer", ["accept", "decline"])
async def test_a_2026_07_28_client_found_by_discovery_or_pinned_is_asked_and_posts_once_on_a_tick(
    sim, home: Home, tmp_path: Path, mode: str, answer: str
):
    """The SDK's default mode discovers 2026-07-28 through server/discover;
    a write still asks the person (the input-required round trip), posts
    exactly once on a tick and nothing when declined."""
    person = Person(answer=answer)
    before = {p["id"] for p in sim.posts("town-square")}
    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=person, mode=mode) as served:
        assert served.client.protocol_version == "2026-07-28", served.client.protocol_version
        sim.clear()
        result = await served.client.call_tool("create_post", {"channel_id": "town-square", "message": "Found by discovery."})
        log = sim.requests()
    assert len(person.questions) == 1, "the person is asked exactly once"
    assert "Found by discovery." in question_text(person.questions[0])
    new = [p for p in sim.posts("town-square") if p["id"] not in before]
    if answer == "accept":
        assert not result.is_error, text_of(result)
        assert len(post_creations(log)) == 1, show(log)
        assert [p["message"] for p in new] == ["Found by discovery."], new
    else:
        assert result.is_error and "nothing was posted" in text_of(result), text_of(result)
        assert not writes_in(log), show(log)
        assert new == [], new
