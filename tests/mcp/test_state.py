"""A person's own state through a real client: typing, following threads,
saved posts, reminders in the person's time zone, drafts (save never
replaces a different one; delete asks, bound to the draft's text), diagnose,
who asks (MM_MCP_ASK_BEFORE_WRITES, MM_MCP_FORCE_HUMAN_IN_THE_LOOP_IN_CLAUDE_CODE),
and `porter mattermost login` / `logout` against a keychain stand-in (a token
file) where no Secret Service runs."""

from __future__ import annotations

import calendar
import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from harness import (
    Home,
    Mmsim,
    Person,
    list_all_tools,
    porter_bin,
    question_text,
    serve,
    server_env,
    show,
    structured,
    text_of,
    write_seed,
    writes_in,
)

pytestmark = pytest.mark.anyio

MODES = ["legacy", "2026-07-28"]
U_TOOLS = {"typing", "follow_thread", "save_post", "set_post_reminder", "save_draft"}


def state_seed(directory: Path) -> Path:
    """The shared test seed, with alice in Europe/Berlin and passwords (bob
    with MFA) for signing in."""
    path = write_seed(directory)
    seed = json.loads(path.read_text())
    for user in seed["users"]:
        user["password"] = f"pw-{user['username']}"
        if user["username"] == "alice":
            user["timezone"] = "Europe/Berlin"
        if user["username"] == "bob":
            user["mfa_code"] = "424242"
    path.write_text(json.dumps(seed))
    return path


@pytest.fixture
def own(porter: Path, tmp_path: Path):
    sim = Mmsim(state_seed(tmp_path / "seed"), tmp_path / "sim")
    yield sim
    sim.stop()


def sim_state(sim: Mmsim) -> dict:
    return sim._request("GET", "/__sim/state", auth=False)


def my_drafts(sim: Mmsim) -> list[dict]:
    return sim.api("GET", f"/users/me/teams/{sim.team_id()}/drafts")


def root_post(sim: Mmsim) -> dict:
    return next(p for p in sim.posts("town-square") if p["message"].startswith("Kickoff thread"))


async def test_own_state_tools_act_at_once_and_never_ask(own, home: Home, tmp_path: Path):
    root = root_post(own)
    reply = next(p for p in own.posts("town-square") if p["root_id"] == root["id"])
    person = Person()
    async with serve("stdio", server_env(own, home, writes=True), tmp_path, person=person) as served:
        c = served.client
        typing = await c.call_tool("typing", {"channel_id": "town-square", "root_id": root["id"]})
        follow = await c.call_tool("follow_thread", {"post_id": reply["id"]})
        saved = await c.call_tool("save_post", {"post_id": own.url + "/_redirect/pl/" + root["id"]})
        state = sim_state(own)
        unfollow = await c.call_tool("follow_thread", {"post_id": root["id"], "follow": False})
        unsaved = await c.call_tool("save_post", {"post_id": root["id"], "saved": False})
        after = sim_state(own)
    for result in (typing, follow, saved, unfollow, unsaved):
        assert not result.is_error, text_of(result)
    assert person.questions == [], "an own-state tool asked the person"
    me = next(u["id"] for u in state["users"] if u["username"] == "alice")
    assert [(t["channel_id"], t["parent_id"]) for t in state["own"]["typing"]] == [(own.channel_id("town-square"), root["id"])]
    assert [(f["user_id"], f["thread_id"]) for f in state["own"]["following"]] == [(me, root["id"])], "a reply follows its thread's root"
    assert state["own"]["preferences"] == [{"user_id": me, "category": "flagged_post", "name": root["id"], "value": "true"}]
    assert structured(follow) == {"id": root["id"], "state": "following"}
    assert after["own"]["following"] == [] and after["own"]["preferences"] == []


async def test_a_reminder_without_an_offset_is_read_in_the_persons_time_zone(own, home: Home, tmp_path: Path):
    root = root_post(own)
    async with serve("stdio", server_env(own, home, writes=True), tmp_path) as served:
        winter = await served.client.call_tool("set_post_reminder", {"post_id": root["id"], "at": "2030-01-15T09:00"})
        summer = await served.client.call_tool("set_post_reminder", {"post_id": root["id"], "at": "2030-07-15T09:00"})
        offset = await served.client.call_tool("set_post_reminder", {"post_id": root["id"], "at": "2030-07-15T09:00+09:00"})
        past = await served.client.call_tool("set_post_reminder", {"post_id": root["id"], "at": "2001-01-01T09:00"})
        garbage = await served.client.call_tool("set_post_reminder", {"post_id": root["id"], "at": "next tuesday"})
        reminders = sim_state(own)["own"]["reminders"]
    assert not winter.is_error, text_of(winter)
    assert structured(winter)["time_zone"] == "Europe/Berlin"
    assert structured(winter)["target_time"] == calendar.timegm((2030, 1, 15, 8, 0, 0)), "09:00 in Berlin in winter is 08:00 UTC"
    assert structured(summer)["target_time"] == calendar.timegm((2030, 7, 15, 7, 0, 0)), "and 07:00 UTC in summer"
    assert structured(offset)["target_time"] == calendar.timegm((2030, 7, 15, 0, 0, 0)), "an explicit offset wins"
    assert "Europe/Berlin" in text_of(winter), text_of(winter)
    assert past.is_error and "not in the future" in text_of(past), text_of(past)
    assert garbage.is_error and "ISO 8601" in text_of(garbage), text_of(garbage)
    assert [r["target_time"] for r in reminders] == [structured(offset)["target_time"]], "one reminder per post, the last one"


async def test_save_draft_never_replaces_a_different_draft(own, home: Home, tmp_path: Path):
    person = Person()
    async with serve("stdio", server_env(own, home, writes=True), tmp_path, person=person) as served:
        c = served.client
        first = await c.call_tool("save_draft", {"channel_id": "Town Square", "message": "First thoughts on the release."})
        same = await c.call_tool("save_draft", {"channel_id": "town-square", "message": "First thoughts on the release."})
        own.clear()
        other = await c.call_tool("save_draft", {"channel_id": "~town-square", "message": "Something else entirely."})
        log = own.requests()
    assert not first.is_error, text_of(first)
    assert structured(first)["outcome"] == "saved"
    assert structured(same)["outcome"] == "unchanged", text_of(same)
    assert other.is_error, text_of(other)
    assert "First thoughts on the release." in text_of(other), "the refusal shows the draft that is there"
    assert "never replaces" in text_of(other), text_of(other)
    assert not writes_in(log), f"a refused draft was written:\n{show(log)}"
    assert [d["message"] for d in my_drafts(own)] == ["First thoughts on the release."]
    assert person.questions == []


async def test_list_drafts_pages_by_cursor_newest_first(own, home: Home, tmp_path: Path):
    root = root_post(own)
    async with serve("stdio", server_env(own, home, writes=True), tmp_path) as served:
        c = served.client
        for channel, message, root_id in [
            ("town-square", "draft one", None),
            ("off-topic", "draft two", None),
            ("town-square", "draft three, a reply", root["id"]),
        ]:
            args = {"channel_id": channel, "message": message}
            if root_id:
                args["root_id"] = root_id
            saved = await c.call_tool("save_draft", args)
            assert not saved.is_error, text_of(saved)
            time.sleep(0.01)
        own.clear()
        first = await c.call_tool("list_drafts", {"limit": 2})
        second = await c.call_tool("list_drafts", {"limit": 2, "cursor": structured(first)["next_cursor"]})
        tampered = await c.call_tool("list_drafts", {"team_id": "porter", "cursor": structured(first)["next_cursor"]})
        log = own.requests()
    page1 = structured(first)
    assert [d["message"] for d in page1["drafts"]] == ["draft three, a reply", "draft two"]
    assert page1["drafts"][0]["root_id"] == root["id"] and page1["drafts"][0]["channel"] == "~town-square"
    assert [d["message"] for d in structured(second)["drafts"]] == ["draft one"]
    assert "next_cursor" not in structured(second)
    assert tampered.is_error, "a cursor is bound to the other arguments"
    assert not writes_in(log), show(log)


def put_draft(sim: Mmsim, channel: str, message: str) -> None:
    me = sim.api("GET", "/users/me")["id"]
    sim.api("POST", "/drafts", {"user_id": me, "channel_id": sim.channel_id(channel), "root_id": "", "message": message})


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("answer", ["decline", "cancel", "untick"])
async def test_a_declined_delete_draft_leaves_the_emulator_unchanged(own, home: Home, tmp_path: Path, mode: str, answer: str):
    put_draft(own, "off-topic", "Notes I still need.")
    person = Person(answer="accept", confirm=False) if answer == "untick" else Person(answer=answer)
    before = sim_state(own)
    async with serve("stdio", server_env(own, home, writes=True), tmp_path, person=person, mode=mode) as served:
        own.clear()
        result = await served.client.call_tool("delete_draft", {"channel_id": "off-topic"})
        log = own.requests()
    assert len(person.questions) == 1
    text = question_text(person.questions[0])
    assert "Notes I still need." in text and "~off-topic" in text, text
    assert result.is_error and "nothing was deleted" in text_of(result), text_of(result)
    assert not writes_in(log), show(log)
    assert sim_state(own) == before


@pytest.mark.parametrize("mode", MODES)
async def test_an_approved_delete_draft_deletes_exactly_that_draft(own, home: Home, tmp_path: Path, mode: str):
    put_draft(own, "off-topic", "Delete me.")
    put_draft(own, "town-square", "Keep me.")
    person = Person()
    async with serve("stdio", server_env(own, home, writes=True), tmp_path, person=person, mode=mode) as served:
        result = await served.client.call_tool("delete_draft", {"channel_id": "Off-Topic"})
        missing = await served.client.call_tool("delete_draft", {"channel_id": "off-topic"})
    assert not result.is_error, text_of(result)
    assert structured(result)["deleted"]["message"] == "Delete me."
    assert [d["message"] for d in my_drafts(own)] == ["Keep me."]
    assert missing.is_error and "no draft" in text_of(missing), text_of(missing)
    assert len(person.questions) == 1, "a missing draft is not asked about"


@pytest.mark.parametrize("mode", MODES)
async def test_a_draft_edited_while_the_person_decides_is_not_deleted(own, home: Home, tmp_path: Path, mode: str):
    put_draft(own, "off-topic", "Version one.")
    person = Person(before=lambda _params: put_draft(own, "off-topic", "Version two, edited meanwhile."))
    async with serve("stdio", server_env(own, home, writes=True), tmp_path, person=person, mode=mode) as served:
        result = await served.client.call_tool("delete_draft", {"channel_id": "off-topic"})
    assert len(person.questions) == 1
    assert result.is_error, text_of(result)
    assert "changed" in text_of(result) and "nothing was deleted" in text_of(result), text_of(result)
    assert [d["message"] for d in my_drafts(own)] == ["Version two, edited meanwhile."]


async def test_delete_draft_from_a_client_without_elicitation_answers_32021_before_any_request(own, home: Home, tmp_path: Path):
    put_draft(own, "off-topic", "Still here.")
    async with serve("stdio", server_env(own, home, writes=True), tmp_path) as served:
        own.clear()
        with pytest.raises(MCPError) as raised:
            await served.client.call_tool("delete_draft", {"channel_id": "off-topic"})
        log = own.requests()
    assert raised.value.code == -32021
    assert not log, show(log)
    assert [d["message"] for d in my_drafts(own)] == ["Still here."]


async def test_with_asking_off_delete_draft_acts_at_once_and_says_the_client_is_the_check(own, home: Home, tmp_path: Path):
    put_draft(own, "off-topic", "Gone without a question.")
    env = server_env(own, home, writes=True, extra={"MM_MCP_ASK_BEFORE_WRITES": "false"})
    async with serve("stdio", env, tmp_path) as served:
        tools = {t.name: t for t in await list_all_tools(served.client)}
        result = await served.client.call_tool("delete_draft", {"channel_id": "off-topic"})
    assert not result.is_error, text_of(result)
    assert my_drafts(own) == []
    assert "the only check" in tools["delete_draft"].description
    assert "the only check" not in tools["save_draft"].description
    assert all((t.meta or {}).get("anthropic/requiresUserInteraction") is None for t in tools.values())


async def test_forcing_the_human_in_the_loop_marks_only_the_asking_tools(own, home: Home, tmp_path: Path):
    base = server_env(own, home, writes=True)
    forced = dict(base, MM_MCP_ASK_BEFORE_WRITES="false", MM_MCP_FORCE_HUMAN_IN_THE_LOOP_IN_CLAUDE_CODE="true")
    async with serve("stdio", forced, tmp_path) as served:
        tools = {t.name: t for t in await list_all_tools(served.client)}
    async with serve("stdio", base, tmp_path) as served:
        plain = {t.name for t in await list_all_tools(served.client)}
    marked = {name for name, t in tools.items() if (t.meta or {}).get("anthropic/requiresUserInteraction") is True}
    assert {"create_post", "dm", "group_message", "delete_draft"} <= marked, marked
    assert not (marked & U_TOOLS), marked
    assert "list_drafts" not in marked and "diagnose" not in marked
    assert set(tools) == plain, "the listing depends only on MM_MCP_ALLOW_WRITES"


def test_asking_and_forcing_claude_code_at_once_is_refused_at_start(read_sim, home: Home):
    env = server_env(read_sim, home, writes=True, extra={"MM_MCP_FORCE_HUMAN_IN_THE_LOOP_IN_CLAUDE_CODE": "true"})
    done = subprocess.run([str(porter_bin()), "mattermost", "serve"], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done
    assert "MM_MCP_FORCE_HUMAN_IN_THE_LOOP_IN_CLAUDE_CODE" in done.stderr and "asked twice" in done.stderr, done.stderr
    assert done.stdout == ""


async def test_diagnose_reports_the_server_and_whether_questions_reach_the_person(own, home: Home, tmp_path: Path):
    person = Person()
    async with serve("stdio", server_env(own, home, writes=True), tmp_path, person=person, mode="legacy") as served:
        own.clear()
        plain = await served.client.call_tool("diagnose", {})
        asked = await served.client.call_tool("diagnose", {"ask_test_question": True})
        log = own.requests()
    out = structured(plain)
    assert out["ok"] is True, text_of(plain)
    whats = " | ".join(c["what"] for c in out["checks"])
    assert own.url in whats and "10.11.0" in whats and "@alice" in whats, whats
    assert "can show porter's questions" in whats, whats
    assert len(person.questions) == 1, "only the second call asks a test question"
    assert "Nothing will change" in question_text(person.questions[0])
    assert any("reached the person" in c["what"] for c in structured(asked)["checks"])
    assert all(r["method"] == "GET" for r in log), show(log)


async def test_diagnose_says_what_to_fix_for_a_client_that_cannot_be_asked(own, home: Home, tmp_path: Path):
    async with serve("stdio", server_env(own, home, writes=True), tmp_path) as served:
        result = await served.client.call_tool("diagnose", {})
    out = structured(result)
    assert out["ok"] is False
    failed = [c for c in out["checks"] if c["level"] == "fail"]
    assert failed and "elicitation" in failed[0]["fix"], out


# ----- login / logout -----


def porter_run(args: list[str], env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([str(porter_bin()), *args], env=env, input=stdin, capture_output=True, text=True, timeout=60)


def login_env(home: Home, keys: Path | None) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home.home), "RUST_LOG": "debug"}
    if keys is not None:
        env["PORTER_KEYCHAIN_FILE"] = str(keys)
    return env


async def test_login_by_token_stores_it_and_serve_uses_it_until_logout(own, home: Home, tmp_path: Path):
    keys = tmp_path / "keychain.json"
    env = login_env(home, keys)
    wrong = porter_run(["mattermost", "login", "--url", own.url + "/api/v4"], env, "not-a-token\n")
    assert wrong.returncode == 2 and "Nothing was stored" in wrong.stderr, wrong
    assert "not-a-token" not in wrong.stderr + wrong.stdout
    assert not keys.exists() or json.loads(keys.read_text()) == {}
    done = porter_run(["mattermost", "login", "--url", own.url + "/api/v4"], env, own.token + "\n")
    assert done.returncode == 0, done
    assert "@alice" in done.stdout and own.token not in done.stdout + done.stderr
    assert json.loads(keys.read_text()) == {own.url: own.token}, "stored under the normalised URL"
    serve_env = server_env(own, home)
    del serve_env["MM_TOKEN"]
    serve_env["PORTER_KEYCHAIN_FILE"] = str(keys)
    async with serve("stdio", serve_env, tmp_path) as served:
        me = await served.client.call_tool("get_me", {})
    assert not me.is_error, text_of(me)
    assert structured(me)["user"]["username"] == "alice"
    out = porter_run(["mattermost", "logout"], dict(env, MM_URL=own.url))
    assert out.returncode == 0 and "Removed" in out.stdout, out
    assert json.loads(keys.read_text()) == {}
    again = porter_run(["mattermost", "serve"], dict(serve_env, MM_URL=own.url), "")
    assert again.returncode == 2 and "MM_TOKEN is not set" in again.stderr and "porter mattermost login" in again.stderr, again


def test_mm_token_wins_over_the_stored_token(own, home: Home, tmp_path: Path):
    keys = tmp_path / "keychain.json"
    keys.write_text(json.dumps({own.url: "a-stale-token"}))
    env = dict(login_env(home, keys), MM_URL=own.url, MM_MCP_DOWNLOAD_DIR=str(home.downloads))
    stale = porter_run(["mattermost", "doctor"], env)
    assert stale.returncode == 2, stale
    assert "a-stale-token" not in stale.stdout + stale.stderr
    fine = porter_run(["mattermost", "doctor"], dict(env, MM_TOKEN=own.token))
    assert fine.returncode == 0 and "@alice" in fine.stdout, fine


def test_login_by_password_asks_for_the_mfa_code_when_the_account_has_one(own, home: Home, tmp_path: Path):
    keys = tmp_path / "keychain.json"
    env = login_env(home, keys)
    wrong = porter_run(["mattermost", "login", "--url", own.url, "--username", "alice"], env, "nope\n")
    assert wrong.returncode == 2 and "refused the sign-in" in wrong.stderr, wrong
    assert "nope" not in wrong.stderr
    no_code = porter_run(["mattermost", "login", "--url", own.url, "--username", "bob"], env, "pw-bob\n")
    assert no_code.returncode == 2 and "MFA" in no_code.stderr, no_code
    done = porter_run(["mattermost", "login", "--url", own.url, "--username", "bob"], env, "pw-bob\n424242\n")
    assert done.returncode == 0 and "@bob" in done.stdout, done
    token = json.loads(keys.read_text())[own.url]
    assert token and token not in done.stdout + done.stderr
    check = porter_run(["mattermost", "doctor"], dict(env, MM_URL=own.url, MM_MCP_DOWNLOAD_DIR=str(home.downloads)))
    assert "signs in as @bob" in check.stdout, check


def test_without_a_keychain_login_says_to_use_mm_token(own, home: Home):
    env = login_env(home, None)
    env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/porter-test-bus"
    done = porter_run(["mattermost", "login", "--url", own.url], env, own.token + "\n")
    assert done.returncode == 1, done
    assert "no OS keychain" in done.stderr and "MM_TOKEN" in done.stderr, done.stderr
    assert own.token not in done.stderr + done.stdout


async def test_a_reminder_on_a_server_without_reminders_says_so_not_that_the_post_is_missing(
    porter: Path, home: Home, tmp_path: Path
):
    """A server without the reminder route answers 404 for any post; porter
    tells that from a missing post by looking the post up."""
    path = state_seed(tmp_path / "seed")
    seed = json.loads(path.read_text())
    seed["config"]["post_reminders"] = False
    path.write_text(json.dumps(seed))
    sim = Mmsim(path, tmp_path / "sim")
    try:
        root = root_post(sim)
        async with serve("stdio", server_env(sim, home, writes=True), tmp_path) as served:
            there = await served.client.call_tool("set_post_reminder", {"post_id": root["id"], "at": "2030-01-15T09:00"})
            gone = await served.client.call_tool("set_post_reminder", {"post_id": "x" * 26, "at": "2030-01-15T09:00"})
    finally:
        sim.stop()
    assert there.is_error, text_of(there)
    assert "not found" not in text_of(there) and "does not seem to support post reminders" in text_of(there), text_of(there)
    assert gone.is_error and "not found" in text_of(gone), text_of(gone)
