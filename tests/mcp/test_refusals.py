"""Files a post must never carry, and clients that cannot ask: each refused
before Mattermost hears anything and, where the spec says so, before anyone
is asked."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from harness import Home, Person, question_text, serve, server_env, show, text_of

pytestmark = pytest.mark.anyio

PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n"


def make_case(case: str, home: Home) -> str:
    """Lays out what a case needs in the test's home and returns the path the
    model asks to attach."""
    h = home.home
    ssh = h / ".ssh"
    ssh.mkdir(exist_ok=True)
    (ssh / "id_ed25519").write_text(PRIVATE_KEY)
    match case:
        case "unc":
            return r"\\host\share\x"
        case "double-slash":
            return "//host/x"
        case "proc":
            return "/proc/self/environ"
        case "dev":
            return "/dev/zero"
        case "relative":
            (h / "notes.txt").write_text("notes\n")
            return "notes.txt"
        case "directory":
            (h / "Documents").mkdir()
            return str(h / "Documents")
        case "symlink-to-a-key":
            (h / "notes.txt").symlink_to(ssh / "id_ed25519")
            return str(h / "notes.txt")
        case "ssh-key":
            return "~/.ssh/id_ed25519"
        case "dotenv":
            (h / "project").mkdir()
            (h / "project" / ".env").write_text("DATABASE_URL=postgres://u:p@db/x\n")
            return str(h / "project" / ".env")
        case "private-key-content":
            (h / "notes").mkdir()
            (h / "notes" / "key.txt").write_text("my key, for safekeeping:\n" + PRIVATE_KEY)
            return str(h / "notes" / "key.txt")
        case "bidi-name":
            name = "invoice\u202etxt.exe"
            (h / name).write_text("not really a text file\n")
            return str(h / name)
    raise ValueError(case)


PATH_CASES = [
    "unc",
    "double-slash",
    "proc",
    "dev",
    "relative",
    "directory",
    "symlink-to-a-key",
    "ssh-key",
    "dotenv",
    "private-key-content",
    "bidi-name",
]


@pytest.mark.parametrize("case", PATH_CASES)
async def test_a_path_that_must_not_be_posted_is_refused_before_mattermost_hears_anything(
    sim, home: Home, tmp_path: Path, case: str
):
    path = make_case(case, home)
    person = Person()
    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=person) as served:
        sim.clear()
        result = await served.client.call_tool(
            "create_post", {"channel_id": "town-square", "message": "Here it is.", "files": [{"path": path}]}
        )
        log = sim.requests()
    assert result.is_error, f"{case}: {path!r} was not refused: {text_of(result)}"
    assert text_of(result).strip(), "the refusal says why"
    assert not person.questions, f"{case}: the person was asked about a file that is refused"
    assert not log, f"{case}: Mattermost was asked:\n{show(log)}"
    if case == "symlink-to-a-key":
        assert ".ssh" in text_of(result) or "id_ed25519" in text_of(result), text_of(result)


WRITTEN_CASES = {
    "bidi-name": {"name": "invoice\u202etxt.exe", "content": "hello\n"},
    "private-key-content": {"name": "key.txt", "content": PRIVATE_KEY},
    "the-servers-own-token": None,  # filled in with the emulator's token
}


@pytest.mark.parametrize("case", list(WRITTEN_CASES))
async def test_a_written_file_that_must_not_be_posted_is_refused_before_anyone_is_asked(
    sim, home: Home, tmp_path: Path, case: str
):
    file = WRITTEN_CASES[case] or {"name": "config.txt", "content": f"token = {sim.token}\n"}
    person = Person()
    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=person) as served:
        sim.clear()
        result = await served.client.call_tool(
            "create_post", {"channel_id": "town-square", "message": "Here it is.", "files": [file]}
        )
        log = sim.requests()
    assert result.is_error, f"{case} was not refused: {text_of(result)}"
    assert not person.questions
    assert not log, show(log)
    assert sim.token not in text_of(result), "the refusal repeats the token"


async def test_a_symlink_is_followed_and_the_question_names_its_target(sim, home: Home, tmp_path: Path):
    target = home.home / "reports" / "2026" / "report.csv"
    target.parent.mkdir(parents=True)
    target.write_text("month,uploads\njan,120\n")
    link = home.home / "latest.csv"
    link.symlink_to(target)
    person = Person(answer="decline")
    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=person) as served:
        sim.clear()
        await served.client.call_tool(
            "create_post", {"channel_id": "town-square", "message": "Latest.", "files": [{"path": str(link)}]}
        )
        log = sim.requests()
    assert len(person.questions) == 1
    assert str(target) in question_text(person.questions[0]), question_text(person.questions[0])
    assert not [r for r in log if r["method"] != "GET"], show(log)


async def test_an_env_example_file_is_not_taken_for_a_credential(sim, home: Home, tmp_path: Path):
    example = home.home / "project" / ".env.example"
    example.parent.mkdir()
    example.write_text("DATABASE_URL=\n")
    person = Person(answer="decline")
    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, person=person) as served:
        await served.client.call_tool(
            "create_post", {"channel_id": "town-square", "message": "Template.", "files": [{"path": str(example)}]}
        )
    assert len(person.questions) == 1, "a .env.example is an ordinary file: the person is asked"


async def test_over_http_a_path_attachment_is_refused_before_anyone_is_asked(sim, home: Home, tmp_path: Path):
    report = home.home / "report.csv"
    report.write_text("month,uploads\n")
    person = Person()
    async with serve("http", server_env(sim, home, writes=True), tmp_path, person=person) as served:
        sim.clear()
        result = await served.client.call_tool(
            "create_post", {"channel_id": "town-square", "message": "Numbers.", "files": [{"path": str(report)}]}
        )
        log = sim.requests()
    assert result.is_error, text_of(result)
    assert not person.questions
    assert not log, show(log)


ASKING_CALLS = {
    "create_post": {"channel_id": "town-square", "message": "Hello"},
    "dm": {"username": "bob", "message": "Hello"},
    "group_message": {"usernames": ["bob", "carol"], "message": "Hello"},
}


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
@pytest.mark.parametrize("tool", list(ASKING_CALLS))
async def test_a_client_without_elicitation_gets_32021_before_any_request(
    sim, home: Home, tmp_path: Path, tool: str, mode: str
):
    async with serve("stdio", server_env(sim, home, writes=True), tmp_path, mode=mode) as served:
        sim.clear()
        with pytest.raises(MCPError) as raised:
            await served.client.call_tool(tool, ASKING_CALLS[tool])
        log = sim.requests()
    assert raised.value.code == -32021, raised.value
    assert "elicitation" in str(raised.value.data), raised.value.data
    assert "nothing" in raised.value.message.lower(), raised.value.message
    assert not log, f"{tool} asked Mattermost before refusing:\n{show(log)}"


async def test_a_client_without_elicitation_gets_32021_over_http(sim, home: Home, tmp_path: Path):
    async with serve("http", server_env(sim, home, writes=True), tmp_path) as served:
        sim.clear()
        with pytest.raises(MCPError) as raised:
            await served.client.call_tool("create_post", ASKING_CALLS["create_post"])
        log = sim.requests()
    assert raised.value.code == -32021
    assert not log, show(log)
