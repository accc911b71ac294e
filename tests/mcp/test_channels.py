"""Teams, channels and people through a real client: the read tools answer
what the emulator holds; every asking tool shows what will change, changes
it only on a tick, leaves the emulator untouched when declined, and refuses
when what it acts on changed between the question and the answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import Home, Mmsim, Person, question_text, serve, server_env, structured, text_of, write_seed

pytestmark = pytest.mark.anyio


@pytest.fixture
def sim(porter: Path, tmp_path: Path):
    """The shared test seed plus a private channel (`design`: alice, bob) and
    an archived one (`launch-2025`), which these tests need."""
    path = write_seed(tmp_path / "seed")
    seed = json.loads(path.read_text())
    seed["channels"] += [
        {"team": "porter", "name": "design", "display_name": "Design", "type": "P", "members": ["alice", "bob"]},
        {"team": "porter", "name": "launch-2025", "display_name": "Launch 2025", "members": ["alice", "bob"], "archived": True},
    ]
    path.write_text(json.dumps(seed))
    sim = Mmsim(path, tmp_path / "sim")
    yield sim
    sim.stop()

MODES = ["legacy", "2026-07-28"]


def state(sim) -> dict:
    return sim._request("GET", "/__sim/state", auth=False)


def members_of(sim, channel: str) -> set[str]:
    channel_id = sim.channel_id(channel)
    return {m["user_id"] for m in state(sim)["channel_members"] if m["channel_id"] == channel_id}


def user_id(sim, name: str) -> str:
    return next(u["id"] for u in state(sim)["users"] if u["username"] == name)


async def test_the_read_tools_show_teams_channels_archives_counts_and_status(sim, home: Home, tmp_path: Path):
    async with serve("stdio", server_env(sim, home), tmp_path) as served:
        call = served.client.call_tool
        team = await call("get_team_info", {})
        assert structured(team)["team"]["name"] == "porter", text_of(team)

        public = await call("list_team_channels", {"team_id": "porter", "limit": 2})
        first = structured(public)
        assert len(first["channels"]) == 2 and first.get("next_cursor"), first
        rest = await call("list_team_channels", {"team_id": "porter", "limit": 2, "cursor": first["next_cursor"]})
        names = [c["name"] for c in first["channels"] + structured(rest)["channels"]]
        assert sorted(names) == ["files", "off-topic", "town-square"], names

        archived = structured(await call("list_archived_channels", {}))
        assert [c["name"] for c in archived["channels"]] == ["launch-2025"], archived
        assert archived["channels"][0]["archived"] is True

        stats = structured(await call("get_channel_stats", {"channel_id": "town-square"}))
        assert stats["member_count"] == 3, stats  # dave is deactivated

        status = await call("get_status", {"usernames": ["bob", "@alice", "nobody-here"]})
        out = structured(status)
        assert [s["username"] for s in out["statuses"]] == ["alice", "bob"] or [
            s["username"] for s in out["statuses"]
        ] == ["bob", "alice"], out
        assert all(s["status"] == "offline" for s in out["statuses"]), out
        assert out["not_found"] == ["nobody-here"], out


@pytest.mark.parametrize("mode", MODES)
async def test_leaving_and_joining_ask_first_and_change_the_membership(sim, home: Home, tmp_path: Path, mode: str):
    me = user_id(sim, "alice")
    person = Person()
    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=person, mode=mode) as served:
        left = await served.client.call_tool("leave_channel", {"channel_id": "~off-topic"})
        assert not left.is_error, text_of(left)
        assert me not in members_of(sim, "off-topic")
        joined = await served.client.call_tool("join_channel", {"channel_id": "off-topic"})
        assert not joined.is_error, text_of(joined)
    assert me in members_of(sim, "off-topic")
    texts = [question_text(q) for q in person.questions]
    assert len(texts) == 2, texts
    assert "@alice leaves ~off-topic" in texts[0] and "members see that you left" in texts[0], texts[0]
    assert "@alice joins ~off-topic" in texts[1], texts[1]


async def test_town_square_cannot_be_left_and_nobody_is_asked(sim, home: Home, tmp_path: Path):
    person = Person()
    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=person) as served:
        result = await served.client.call_tool("leave_channel", {"channel_id": "town-square"})
    assert result.is_error and "Town Square" in text_of(result), text_of(result)
    assert person.questions == []


async def test_a_declined_question_leaves_the_emulator_unchanged(sim, home: Home, tmp_path: Path):
    before = state(sim)
    person = Person(answer="decline")
    calls = [
        ("add_channel_members", {"channel_id": "design", "usernames": ["carol"]}),
        ("create_channel", {"name": "release-2026", "display_name": "Release 2026"}),
        ("set_status", {"status": "dnd", "dnd_until": "2030-01-01T17:00:00Z", "custom_text": "Heads down"}),
        ("join_channel", {"channel_id": "off-topic"}),
    ]
    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=person) as served:
        for name, args in calls:
            result = await served.client.call_tool(name, args)
            assert result.is_error, (name, text_of(result))
    # join_channel is refused before asking: alice is already in off-topic.
    assert len(person.questions) == 3
    add, create, status = (question_text(q) for q in person.questions)
    assert "@carol (Carol Tester)" in add and "~design" in add, add
    assert "public channel ~release-2026" in create and "team porter" in create, create
    assert "offline → dnd until 2030-01-01" in status and "Heads down" in status, status
    assert state(sim) == before


async def test_adding_members_names_everyone_and_adds_only_them(sim, home: Home, tmp_path: Path):
    person = Person()
    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=person) as served:
        result = await served.client.call_tool(
            "add_channel_members", {"channel_id": "design", "usernames": ["carol", "bob"]}
        )
        too_many = await served.client.call_tool(
            "add_channel_members", {"channel_id": "design", "usernames": [f"u{i}" for i in range(21)]}
        )
        gone = await served.client.call_tool("add_channel_members", {"channel_id": "files", "usernames": ["dave"]})
    assert not result.is_error, text_of(result)
    text = question_text(person.questions[0])
    assert "adds 1 person" in text and "@carol" in text and "Already members, left as they are: @bob" in text, text
    assert user_id(sim, "carol") in members_of(sim, "design")
    assert too_many.is_error and "1 to 20" in text_of(too_many)
    assert gone.is_error and "deactivated" in text_of(gone), text_of(gone)
    assert len(person.questions) == 1


async def test_a_channel_is_created_once_and_a_taken_name_is_refused(sim, home: Home, tmp_path: Path):
    person = Person()

    def taken_meanwhile(_params):
        sim.api(
            "POST",
            "/channels",
            {"team_id": sim.team_id(), "name": "ops", "display_name": "Ops", "type": "O"},
        )

    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=person) as served:
        made = await served.client.call_tool(
            "create_channel", {"name": "release-2026", "display_name": "Release 2026", "private": True}
        )
        bad = await served.client.call_tool("create_channel", {"name": "Release Plans"})
        person.before = taken_meanwhile
        raced = await served.client.call_tool("create_channel", {"name": "ops"})
    assert not made.is_error, text_of(made)
    channel = structured(made)["channel"]
    assert channel["kind"] == "private" and channel["name"] == "release-2026", channel
    assert bad.is_error and "release-plans" in text_of(bad), text_of(bad)
    assert raced.is_error and "already has a channel named ~ops" in text_of(raced), text_of(raced)
    assert len([c for c in state(sim)["channels"] if c["name"] == "ops"]) == 1


async def test_a_status_changed_after_the_question_is_not_overwritten(sim, home: Home, tmp_path: Path):
    me = user_id(sim, "alice")

    def changed_meanwhile(_params):
        sim.api("PUT", f"/users/{me}/status", {"user_id": me, "status": "away"})

    person = Person(before=changed_meanwhile)
    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=person) as served:
        refused = await served.client.call_tool("set_status", {"status": "online"})
        person.before = None
        done = await served.client.call_tool(
            "set_status",
            {"status": "dnd", "dnd_until": "2030-01-01T17:00:00Z", "custom_emoji": ":palm_tree:", "custom_text": "Off"},
        )
        shown = await served.client.call_tool("get_status", {})
        cleared = await served.client.call_tool("set_status", {"clear_custom": True})
    assert refused.is_error and "no longer what the person was asked about" in text_of(refused), text_of(refused)
    assert not done.is_error, text_of(done)
    mine = structured(shown)["statuses"][0]
    assert mine["status"] == "dnd" and mine["dnd_until"].startswith("2030-01-01T17:00"), mine
    assert mine["custom_emoji"] == "palm_tree" and mine["custom_text"] == "Off", mine
    assert not cleared.is_error, text_of(cleared)
    assert "customStatus" not in next(u for u in state(sim)["users"] if u["id"] == me).get("props", {})


async def test_marking_a_channel_read_does_not_ask(sim, home: Home, tmp_path: Path):
    person = Person()
    me = user_id(sim, "alice")
    channel = sim.channel_id("town-square")
    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=person) as served:
        result = await served.client.call_tool("mark_channel_read", {"channel_id": "town-square"})
    assert not result.is_error, text_of(result)
    assert person.questions == []
    member = next(m for m in state(sim)["channel_members"] if m["channel_id"] == channel and m["user_id"] == me)
    total = next(c for c in state(sim)["channels"] if c["id"] == channel)["total_msg_count"]
    assert member["msg_count"] == total and member["mention_count"] == 0, member


async def test_channel_stats_send_only_parameters_mattermost_reads_and_count_the_files(sim, home: Home, tmp_path: Path):
    """Mattermost's `GET /channels/{id}/stats` reads only `exclude_files_count`
    and counts files by default; porter sends nothing else."""
    async with serve("stdio", server_env(sim, home), tmp_path) as served:
        sim.clear()
        result = await served.client.call_tool("get_channel_stats", {"channel_id": "files"})
        log = sim.requests()
    assert not result.is_error, text_of(result)
    asked = [r for r in log if r["path"].endswith("/stats")]
    assert asked, f"no stats request:\n{log}"
    for request in asked:
        query = request.get("query") or ""
        assert query == "", f"the stats request carries {query!r}, which Mattermost does not read"
    infos = [f["info"] for f in state(sim)["files"]]
    files = {i["id"] for i in infos if i["channel_id"] == sim.channel_id("files") and not i.get("delete_at")}
    assert files, "the seed's files channel holds no files: nothing to count"
    assert structured(result)["file_count"] == len(files), structured(result)


def old_server(directory: Path, version: str) -> Path:
    """The test seed on a server of `version`, with `ops` (bob only) that
    alice may join and `erin`, in the team but in no channel."""
    path = write_seed(directory)
    seed = json.loads(path.read_text())
    seed["config"]["version"] = version
    seed["users"].append({"username": "erin", "token": "demo-erin-token", "first_name": "Erin", "last_name": "Tester"})
    seed["teams"][0]["members"].append("erin")
    seed["channels"].append({"team": "porter", "name": "ops", "display_name": "Ops", "members": ["bob"]})
    path.write_text(json.dumps(seed))
    return path


@pytest.mark.parametrize("version", ["9.2.0", "10.11.0"])
async def test_joining_and_adding_one_person_use_the_body_every_mattermost_reads(
    porter: Path, home: Home, tmp_path: Path, version: str
):
    """Before 9.3 `POST /channels/{id}/members` reads only `user_id`: joining
    alone and adding one person work on such a server too."""
    with Mmsim(old_server(tmp_path / "seed", version), tmp_path / "sim") as sim:
        person = Person()
        async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=person) as served:
            joined = await served.client.call_tool("join_channel", {"channel_id": "ops"})
            added = await served.client.call_tool("add_channel_members", {"channel_id": "ops", "usernames": ["erin"]})
        assert not joined.is_error, text_of(joined)
        assert not added.is_error, text_of(added)
        assert {user_id(sim, "alice"), user_id(sim, "erin")} <= members_of(sim, "ops")
