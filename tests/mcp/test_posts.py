"""Reading more and changing posts through a real client: the five read
tools (unread, followed threads, pinned, saved, mentions); the five changes
(edit, delete, react, unreact, pin), each asking with what will change; a
declined change leaving the emulator exactly as it was; an edit refused when
the post changed between question and answer; and the message checks before
a post (an unknown @name with the closest names, a deactivated account, and
@channel in a channel of 12 counted)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from harness import Home, Mmsim, Person, question_text, serve, server_env, structured, text_of, write_seed

pytestmark = pytest.mark.anyio

MODES = ["legacy", "2026-07-28"]
BIG_ROOM_PEOPLE = [f"member{n:02}" for n in range(1, 10)]  # with alice, bob, carol: 12


@pytest.fixture
def sim(porter: Path, tmp_path: Path):
    """The usual seed plus nine more people and ~big-room, a channel of 12."""
    path = write_seed(tmp_path / "seed")
    seed = json.loads(path.read_text())
    for name in BIG_ROOM_PEOPLE:
        seed["users"].append({"username": name, "token": f"demo-{name}-token"})
    seed["teams"][0]["members"].extend(BIG_ROOM_PEOPLE)
    seed["channels"].append(
        {"team": "porter", "name": "big-room", "display_name": "Big Room", "members": ["alice", "bob", "carol", *BIG_ROOM_PEOPLE]}
    )
    path.write_text(json.dumps(seed))
    sim = Mmsim(path, tmp_path / "sim")
    yield sim
    sim.stop()


def as_bob(sim: Mmsim, method: str, path: str, body: Any = None) -> Any:
    request = urllib.request.Request(
        sim.url + "/api/v4" + path,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": "Bearer demo-bob-token", "Content-Type": "application/json"},
        method=method,
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read() or b"null")


def state(sim: Mmsim) -> Any:
    return sim._request("GET", "/__sim/state", auth=False)


def me(sim: Mmsim) -> str:
    return sim.api("GET", "/users/me")["id"]


async def test_the_read_tools_find_unread_threads_pinned_saved_and_mentions(sim, home: Home, tmp_path: Path):
    town = sim.channel_id("town-square")
    alice = me(sim)
    mention = as_bob(sim, "POST", "/posts", {"channel_id": town, "message": "@alice can you look at the build?"})
    root = sim.api("POST", "/posts", {"channel_id": town, "message": "Which release date works?"})
    as_bob(sim, "POST", "/posts", {"channel_id": town, "root_id": root["id"], "message": "Friday works."})
    sim.api("POST", f"/posts/{mention['id']}/pin")
    sim.api("PUT", "/users/me/preferences", [{"user_id": alice, "category": "flagged_post", "name": root["id"], "value": "true"}])
    async with serve("stdio", server_env(sim, home), tmp_path) as served:
        call = served.client.call_tool
        unread = await call("read_unread", {"limit": 1})
        threads = await call("list_threads", {})
        pinned = await call("list_pinned_posts", {"channel_id": "town-square"})
        saved = await call("list_saved", {})
        mentions = await call("list_mentions", {})
        more = await call("read_unread", {"limit": 1, "cursor": structured(unread)["next_cursor"]})
    for result in (unread, threads, pinned, saved, mentions, more):
        assert not result.is_error, text_of(result)
    first = structured(unread)["channels"]
    assert len(first) == 1 and first[0]["unread"] > 0, first
    assert first[0]["channel"]["name"] == "town-square", "the channel with the newest post comes first"
    assert mention["id"] in [p["id"] for p in first[0]["posts"]]
    assert structured(more)["channels"][0]["channel"]["name"] != "town-square", "the cursor moves on"
    listed = structured(threads)["threads"]
    assert listed[0]["root"]["id"] == root["id"] and listed[0]["unread_replies"] == 1, listed
    assert [p["id"] for p in structured(pinned)["posts"]] == [mention["id"]]
    assert [p["id"] for p in structured(saved)["posts"]] == [root["id"]]
    assert [p["id"] for p in structured(mentions)["posts"]] == [mention["id"]]
    assert "their words" in text_of(mentions), "what others wrote is marked as theirs"


async def test_each_change_asks_with_what_will_change_then_acts(sim, home: Home, tmp_path: Path):
    town = sim.channel_id("town-square")
    mine = sim.api("POST", "/posts", {"channel_id": town, "message": "Teh release is on Friday."})
    thread = sim.api("POST", "/posts", {"channel_id": town, "message": "A thread that goes."})
    for n in range(2):
        as_bob(sim, "POST", "/posts", {"channel_id": town, "root_id": thread["id"], "message": f"reply {n}"})
    theirs = as_bob(sim, "POST", "/posts", {"channel_id": town, "message": "Ship it?"})
    person = Person()
    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=person, mode="legacy") as served:
        call = served.client.call_tool
        edited = await call("update_post", {"post_id": mine["id"], "message": "The release is on Friday."})
        reacted = await call("add_reaction", {"post_id": theirs["id"], "emoji": "👍"})
        reactions_after_add = sim.api("GET", f"/posts/{theirs['id']}/reactions")
        unreacted = await call("remove_reaction", {"post_id": theirs["id"], "emoji": ":+1:"})
        pinned = await call("pin_post", {"post_id": theirs["id"]})
        deleted = await call("delete_post", {"post_id": thread["id"]})
    for result in (edited, reacted, unreacted, pinned, deleted):
        assert not result.is_error, text_of(result)
    texts = [question_text(q) for q in person.questions]
    assert len(texts) == 5, texts
    assert "Teh release is on Friday." in texts[0] and "The release is on Friday." in texts[0], texts[0]
    assert "old text" in texts[0] and "new text" in texts[0], texts[0]
    assert ":+1:" in texts[1] and "Ship it?" in texts[1] and "@bob" in texts[1], texts[1]
    assert ":+1:" in texts[2] and "removes" in texts[2], texts[2]
    assert "pins this post" in texts[3] and "Ship it?" in texts[3], texts[3]
    assert "2 replies are deleted with it" in texts[4], texts[4]
    post = sim.api("GET", f"/posts/{mine['id']}")
    assert post["message"] == "The release is on Friday." and post["edit_at"] > 0
    assert post["props"].get("ai_generated_by") == me(sim), post["props"]
    assert [r["emoji_name"] for r in reactions_after_add] == ["+1"]
    assert sim.api("GET", f"/posts/{theirs['id']}/reactions") in ([], None)
    assert sim.api("GET", f"/posts/{theirs['id']}")["is_pinned"] is True
    assert structured(deleted)["replies_deleted"] == 2
    assert thread["id"] not in [p["id"] for p in sim.posts("town-square")]
    assert not any(p["root_id"] == thread["id"] for p in sim.posts("town-square"))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tool", ["update_post", "delete_post", "add_reaction", "remove_reaction", "pin_post"])
async def test_a_declined_change_leaves_the_emulator_unchanged(sim, home: Home, tmp_path: Path, tool: str, mode: str):
    town = sim.channel_id("town-square")
    post = sim.api("POST", "/posts", {"channel_id": town, "message": "Leave me be."})
    sim.api("POST", "/reactions", {"user_id": me(sim), "post_id": post["id"], "emoji_name": "eyes"})
    args = {
        "update_post": {"post_id": post["id"], "message": "Changed."},
        "delete_post": {"post_id": post["id"]},
        "add_reaction": {"post_id": post["id"], "emoji": "tada"},
        "remove_reaction": {"post_id": post["id"], "emoji": "eyes"},
        "pin_post": {"post_id": post["id"]},
    }[tool]
    before = state(sim)
    person = Person(answer="decline")
    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=person, mode=mode) as served:
        result = await served.client.call_tool(tool, args)
    assert len(person.questions) == 1
    assert result.is_error and "nothing was changed" in text_of(result), text_of(result)
    assert state(sim) == before, "a declined change changed the emulator"


@pytest.mark.parametrize("mode", MODES)
async def test_an_edit_whose_post_changed_between_question_and_answer_is_refused(sim, home: Home, tmp_path: Path, mode: str):
    town = sim.channel_id("town-square")
    post = sim.api("POST", "/posts", {"channel_id": town, "message": "Version one."})
    person = Person(before=lambda _: sim.api("PUT", f"/posts/{post['id']}/patch", {"message": "Version two, by hand."}))
    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=person, mode=mode) as served:
        result = await served.client.call_tool("update_post", {"post_id": post["id"], "message": "Version three."})
    assert len(person.questions) == 1
    assert result.is_error and "changed between the question and the answer" in text_of(result), text_of(result)
    assert sim.api("GET", f"/posts/{post['id']}")["message"] == "Version two, by hand."


async def test_mentions_are_checked_before_anyone_is_asked(sim, home: Home, tmp_path: Path):
    person = Person()
    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=person, mode="legacy") as served:
        call = served.client.call_tool
        unknown = await call("create_post", {"channel_id": "town-square", "message": "@alcie please review"})
        gone = await call("dm", {"username": "bob", "message": "ask @dave about it"})
        asked_before_broadcast = len(person.questions)
        broadcast = await call("create_post", {"channel_id": "big-room", "message": "@channel the build is green"})
    assert unknown.is_error and "@alcie is not an account" in text_of(unknown), text_of(unknown)
    assert "@alice" in text_of(unknown), "the closest name is suggested"
    assert gone.is_error and "@dave is a deactivated account" in text_of(gone), text_of(gone)
    assert asked_before_broadcast == 0, "a refused message is never asked about"
    assert not broadcast.is_error, text_of(broadcast)
    assert "@channel notifies 11 people" in question_text(person.questions[-1]), question_text(person.questions[-1])
