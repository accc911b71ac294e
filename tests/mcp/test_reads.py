"""The core read tools through a real client, each answering what the seed
holds: people by name and id (a deactivated one marked so, an unknown one
listed as not found), people by a search term, your teams and channels,
channels by a term, a thread with its replies, and files by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import Home, serve, server_env, structured, text_of

pytestmark = pytest.mark.anyio


async def test_people_are_found_by_name_id_and_term_and_a_deactivated_one_is_marked(read_sim, home: Home, tmp_path: Path):
    dave = read_sim.api("GET", "/users/username/dave")["id"]
    async with serve("stdio", server_env(read_sim, home), tmp_path) as served:
        call = served.client.call_tool
        by_name = await call("get_users", {"usernames": ["bob", "@carol", "nobody-here"]})
        by_id = await call("get_users", {"user_ids": [dave]})
        searched = await call("search_users", {"term": "car"})
    for result in (by_name, by_id, searched):
        assert not result.is_error, text_of(result)
    named = structured(by_name)
    assert sorted(u["username"] for u in named["users"]) == ["bob", "carol"], named
    assert [n.lstrip("@") for n in named["not_found"]] == ["nobody-here"], named
    assert all(u["active"] for u in named["users"]), named
    [deactivated] = structured(by_id)["users"]
    assert deactivated["username"] == "dave" and deactivated["active"] is False, deactivated
    assert [u["username"] for u in structured(searched)["users"]] == ["carol"], structured(searched)


async def test_your_teams_and_channels_are_listed_and_found_by_a_term(read_sim, home: Home, tmp_path: Path):
    async with serve("stdio", server_env(read_sim, home), tmp_path) as served:
        call = served.client.call_tool
        teams = await call("get_user_teams", {})
        channels = await call("get_user_channels", {"team_id": "Porter"})
        found = await call("search_channels", {"term": "topic"})
    for result in (teams, channels, found):
        assert not result.is_error, text_of(result)
    assert [t["name"] for t in structured(teams)["teams"]] == ["porter"], structured(teams)
    mine = {c["name"] for c in structured(channels)["channels"]}
    assert {"town-square", "off-topic", "files"} <= mine, mine
    assert [c["name"] for c in structured(found)["channels"]] == ["off-topic"], structured(found)


async def test_a_thread_is_read_from_any_of_its_posts_and_files_are_found_by_name(read_sim, home: Home, tmp_path: Path):
    kickoff = next(p for p in read_sim.posts("town-square") if p["message"].startswith("Kickoff"))
    reply = next(p for p in read_sim.posts("town-square") if p.get("root_id") == kickoff["id"])
    async with serve("stdio", server_env(read_sim, home), tmp_path) as served:
        call = served.client.call_tool
        thread = await call("read_post", {"post_id": reply["id"]})
        files = await call("search_files", {"terms": "release-notes"})
    for result in (thread, files):
        assert not result.is_error, text_of(result)
    out = structured(thread)
    assert out["post"]["id"] == reply["id"] and out["root"]["id"] == kickoff["id"], out
    assert out["reply_count"] == 2, out
    assert [r["message"] for r in out["replies"]] == [
        "Search with from: and in: filters.",
        "Uploads that keep the field order.",
    ], out["replies"]
    names = [f["name"] for f in structured(files)["files"]]
    assert names == ["release-notes.txt"], names
    assert structured(files)["files"][0]["id"] == read_sim.file_id("release-notes.txt")
