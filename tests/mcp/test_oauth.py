"""`porter mattermost login --oauth` end to end: a real browser (Debian's
Chromium through Playwright, set as $BROWSER: oauth_browser.py) signs in on
the emulator's login and consent pages and lands on porter's loopback
callback; the sign-in kept in the keychain (a file here) then serves tool
calls through the Python client, is renewed when the emulator expires it
and when its few seconds run out, and a public app's expired sign-in sends
nothing and says how to renew it. A forged state, a denied consent, a busy
port and a missing app each end with a clear message and nothing kept; the
emulator refuses a reused code, a wrong redirect and a missing verifier as
the server does."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from harness import Home, Mmsim, free_port, porter_bin, serve, server_env, show, text_of, write_seed

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
SECRET = "confidential-app-secret"
PASSWORD = "alice-password"


def oauth_seed(directory: Path, port: int, *, lifetime: int, registration: bool = False) -> Path:
    """The usual seed, with alice's password, a confidential and a public
    app whose callback is porter's redirect on `port`, and access tokens
    that last `lifetime` seconds."""
    path = write_seed(directory)
    seed = json.loads(path.read_text())
    seed["config"]["oauth_access_token_seconds"] = lifetime
    seed["config"]["oauth_registration"] = registration
    for user in seed["users"]:
        if user["username"] == "alice":
            user["password"] = PASSWORD
    callback = f"http://127.0.0.1:{port}/callback"
    seed["oauth_apps"] = [
        {"client_id": "confidentialapp0000000000a", "client_secret": SECRET, "name": "porter (confidential)", "callback_urls": [callback]},
        {"client_id": "publicapp00000000000000000a", "name": "porter (public)", "callback_urls": [callback]},
    ]
    path.write_text(json.dumps(seed))
    return path


class Machine:
    """The person's machine: a home, a keychain file, and the browser."""

    def __init__(self, root: Path, sim: Mmsim, port: int):
        self.home = Home(root / "machine")
        self.keychain = root / "keychain.json"
        self.browser_log = root / "browser.json"
        self.sim = sim
        self.port = port

    def env(self, *, client_id: str | None, secret: str | None = None, action: str = "allow") -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home.home),
            "MM_URL": self.sim.url,
            "PORTER_KEYCHAIN_FILE": str(self.keychain),
            "MM_OAUTH_REDIRECT_PORT": str(self.port),
            "BROWSER": f"{sys.executable} {HERE / 'oauth_browser.py'}",
            "OAUTH_BROWSER_LOG": str(self.browser_log),
            "OAUTH_BROWSER_ACTION": action,
            "OAUTH_BROWSER_PASSWORD": PASSWORD,
            "RUST_LOG": "info",
        }
        if os.environ.get("CHROMIUM"):
            env["CHROMIUM"] = os.environ["CHROMIUM"]
        if client_id:
            env["MM_OAUTH_CLIENT_ID"] = client_id
        if secret:
            env["MM_OAUTH_CLIENT_SECRET"] = secret
        return env

    def login(self, env: dict[str, str]) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(porter_bin()), "mattermost", "login", "--oauth"],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            stdin=subprocess.DEVNULL,
        )

    def kept(self) -> dict:
        if not self.keychain.exists():
            return {}
        return json.loads(self.keychain.read_text() or "{}")

    def sign_in(self) -> dict:
        kept = self.kept().get(f"{self.sim.url}#oauth")
        assert kept, f"no OAuth sign-in kept: {self.kept()}"
        return json.loads(kept)

    def browser(self) -> dict:
        return json.loads(self.browser_log.read_text())

    def serve_env(self) -> dict[str, str]:
        env = server_env(None, self.home)
        env["MM_URL"] = self.sim.url
        env["PORTER_KEYCHAIN_FILE"] = str(self.keychain)
        return env

    def porter(self, command: str) -> subprocess.CompletedProcess:
        """`porter mattermost COMMAND` on this machine, as serving sees it."""
        return subprocess.run(
            [str(porter_bin()), "mattermost", command],
            env=self.serve_env(),
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )


def expire_all(sim: Mmsim) -> None:
    request = urllib.request.Request(sim.url + "/__sim/oauth/expire", data=b"", method="POST")
    with urllib.request.urlopen(request, timeout=10):
        pass


def assert_porter_says_who_it_is(log: list[dict], at_least: int) -> None:
    """Every request porter made (the browser's pages aside) says
    `User-Agent: porter/<version>`, the sign-in's included."""
    porters = [r for r in log if r["path"] == "/oauth/access_token" or r["path"].startswith(("/api/v4", "/.well-known"))]
    assert len(porters) >= at_least, show(log)
    for r in porters:
        assert (r.get("user_agent") or "").startswith("porter/"), r


def token_requests(log: list[dict]) -> list[dict]:
    return [r for r in log if r["path"] == "/oauth/access_token"]


@pytest.fixture
def port() -> int:
    return free_port()


def started(tmp_path: Path, port: int, *, lifetime: int, registration: bool = False) -> Mmsim:
    """The emulator with the OAuth seed; stopped when its `with` block ends."""
    return Mmsim(oauth_seed(tmp_path / "seed", port, lifetime=lifetime, registration=registration), tmp_path / "sim")


async def test_a_confidential_app_signs_in_in_the_browser_serves_and_is_renewed(tmp_path: Path, port: int):
    with started(tmp_path, port, lifetime=4) as sim:
        machine = Machine(tmp_path, sim, port)
        sim.clear()
        done = machine.login(machine.env(client_id="confidentialapp0000000000a", secret=SECRET))
        assert_porter_says_who_it_is(sim.requests(), 2)
        assert done.returncode == 0, f"{done.returncode}\n{done.stdout}\n{done.stderr}\nbrowser: {machine.browser_log.read_text() if machine.browser_log.exists() else '(none)'}"
        assert "as @alice with OAuth" in done.stdout, done.stdout
        assert "/oauth/authorize?" in done.stderr, "the address is printed for a person to open by hand"
        seen = machine.browser()
        assert seen.get("landed", "").startswith(f"http://127.0.0.1:{port}/callback?"), seen
        assert "signed in" in seen["said"], seen
        assert seen["pages"] == ["/login", "/oauth/authorize"], seen
        first = machine.sign_in()
        assert first["refresh_token"] and first["access_token"], first
        assert first["client_secret"] == SECRET

        async with serve("stdio", machine.serve_env(), tmp_path / "serve") as served:
            me = await served.client.call_tool("get_me", {})
            assert not me.is_error and "alice" in text_of(me), text_of(me)

            # The emulator ends the token early: the 401 is answered by a renewal.
            expire_all(sim)
            sim.clear()
            found = await served.client.call_tool("search_posts", {"terms": "release"})
            log = sim.requests()
            assert not found.is_error, text_of(found)
            assert len(token_requests(log)) == 1, show(log)
            second = machine.sign_in()
            assert second["refresh_token"] != first["refresh_token"], "the newest refresh token is kept"
            assert second["access_token"] != first["access_token"]

            # Its lifetime runs out: renewed before the request goes out.
            time.sleep(4.5)
            sim.clear()
            again = await served.client.call_tool("search_posts", {"terms": "release"})
            log = sim.requests()
            assert not again.is_error, text_of(again)
            paths = [r["path"] for r in log]
            assert paths[0] == "/oauth/access_token", show(log)
            assert machine.sign_in()["refresh_token"] != second["refresh_token"]

        doctor = machine.porter("doctor")
        assert "signed in with OAuth" in doctor.stdout and "expires" in doctor.stdout, doctor.stdout + doctor.stderr


async def test_a_public_apps_expired_sign_in_sends_nothing_and_says_how_to_renew(tmp_path: Path, port: int):
    # Long enough to start serving on a busy machine, short enough to wait out.
    with started(tmp_path, port, lifetime=6) as sim:
        machine = Machine(tmp_path, sim, port)
        done = machine.login(machine.env(client_id="publicapp00000000000000000a"))
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
        assert "public" in done.stdout, done.stdout
        kept = machine.sign_in()
        assert "refresh_token" not in kept and "client_secret" not in kept, kept
        async with serve("stdio", machine.serve_env(), tmp_path / "serve") as served:
            time.sleep(6.5)
            sim.clear()
            found = await served.client.call_tool("search_posts", {"terms": "release"})
            log = sim.requests()
        assert found.is_error, text_of(found)
        assert "porter mattermost login --oauth" in text_of(found) and "expired" in text_of(found), text_of(found)
        assert log == [], f"a request went out with the expired token:\n{show(log)}"

        start = machine.porter("serve")
        assert start.returncode == 2 and "login --oauth" in start.stderr, start.stderr

        logout = machine.porter("logout")
        assert logout.returncode == 0 and "Removed" in logout.stdout, logout.stdout + logout.stderr
        assert machine.kept() == {}, "logout forgets the OAuth sign-in"


@pytest.mark.parametrize(
    ("action", "words"),
    [("forge-state", "state porter did not send"), ("deny", "declined in the browser")],
)
async def test_a_forged_state_or_a_denied_consent_keeps_nothing(tmp_path: Path, port: int, action: str, words: str):
    with started(tmp_path, port, lifetime=60) as sim:
        machine = Machine(tmp_path, sim, port)
        sim.clear()
        done = machine.login(machine.env(client_id="confidentialapp0000000000a", secret=SECRET, action=action))
        assert done.returncode == 1, f"{done.stdout}\n{done.stderr}"
        assert words in done.stderr and "nothing was stored" in done.stderr, done.stderr
        assert machine.kept() == {}, machine.kept()
        assert machine.browser().get("landed", "").startswith(f"http://127.0.0.1:{port}/callback?"), machine.browser()
        assert not token_requests(sim.requests()), "no code was exchanged"


async def test_a_busy_port_or_no_app_is_a_clear_message_and_opens_no_browser(tmp_path: Path, port: int):
    with started(tmp_path, port, lifetime=60) as sim:
        machine = Machine(tmp_path, sim, port)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
            taken.bind(("127.0.0.1", port))
            taken.listen(1)
            busy = machine.login(machine.env(client_id="confidentialapp0000000000a", secret=SECRET))
        assert busy.returncode == 1, busy.stderr
        assert f"127.0.0.1:{port}" in busy.stderr and "MM_OAUTH_REDIRECT_PORT" in busy.stderr, busy.stderr
        no_app = machine.login(machine.env(client_id=None))
        assert no_app.returncode == 2, no_app.stderr
        assert "MM_OAUTH_CLIENT_ID" in no_app.stderr and f"http://127.0.0.1:{port}/callback" in no_app.stderr, no_app.stderr
        assert machine.kept() == {} and not machine.browser_log.exists()


async def test_dynamic_registration_signs_in_as_a_confidential_client(tmp_path: Path, port: int):
    with started(tmp_path, port, lifetime=60, registration=True) as sim:
        machine = Machine(tmp_path, sim, port)
        sim.clear()
        done = machine.login(machine.env(client_id=None))
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
        assert_porter_says_who_it_is(sim.requests(), 4)
        kept = machine.sign_in()
        assert kept["client_secret"] and kept["refresh_token"], "registered as a confidential client, so it can refresh"


# --------------------------------------------------------------------------
# The emulator refuses what the server refuses


def form_post(url: str, fields: dict[str, str]) -> tuple[int, dict]:
    request = urllib.request.Request(
        url, data=urllib.parse.urlencode(fields).encode(), headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def code_for(sim: Mmsim, redirect: str, challenge: str) -> str:
    """A code, asked for as the consent page does (the session cookie)."""
    request = urllib.request.Request(
        sim.url + "/api/v4/users/login",
        data=json.dumps({"login_id": "alice", "password": PASSWORD}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        token = answer.headers["Token"]
    body = {
        "response_type": "code",
        "client_id": "confidentialapp0000000000a",
        "redirect_uri": redirect,
        "state": "s",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    request = urllib.request.Request(
        sim.url + "/oauth/authorize",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Cookie": f"MMAUTHTOKEN={token}", "X-Requested-With": "XMLHttpRequest"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        redirect_to = json.loads(answer.read())["redirect"]
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(redirect_to).query))
    assert query["state"] == "s", "the state is echoed"
    return query["code"]


def test_the_emulator_refuses_a_reused_code_a_wrong_redirect_and_a_missing_verifier(tmp_path: Path, port: int):
    with started(tmp_path, port, lifetime=60) as sim:
        redirect = f"http://127.0.0.1:{port}/callback"
        verifier = "v" * 50
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        grant = {"grant_type": "authorization_code", "client_id": "confidentialapp0000000000a", "client_secret": SECRET, "redirect_uri": redirect}
        token_url = sim.url + "/oauth/access_token"

        code = code_for(sim, redirect, challenge)
        status, answer = form_post(token_url, {**grant, "code": code})
        assert status == 400 and "code_verifier" in answer["message"], answer

        code = code_for(sim, redirect, challenge)
        status, answer = form_post(token_url, {**grant, "code": code, "code_verifier": verifier, "redirect_uri": redirect + "x"})
        assert status == 400 and "redirect_uri" in answer["message"], answer

        code = code_for(sim, redirect, challenge)
        status, answer = form_post(token_url, {**grant, "code": code, "code_verifier": verifier})
        assert status == 200 and answer["refresh_token"] and answer["token_type"] == "bearer", answer
        status, answer = form_post(token_url, {**grant, "code": code, "code_verifier": verifier})
        assert status == 400 and "invalid_grant" in answer["message"], answer

        # A redirect the app does not list is an error page, never a redirect.
        query = urllib.parse.urlencode({"response_type": "code", "client_id": "confidentialapp0000000000a", "redirect_uri": redirect + "/evil", "state": "s"})
        with pytest.raises(urllib.error.HTTPError) as page:
            urllib.request.urlopen(sim.url + "/oauth/authorize?" + query, timeout=10)
        assert page.value.code == 400


async def test_a_file_holding_the_renewed_token_is_refused_before_anyone_is_asked(tmp_path: Path, port: int):
    from harness import Person

    with started(tmp_path, port, lifetime=60) as sim:
        machine = Machine(tmp_path, sim, port)
        done = machine.login(machine.env(client_id="confidentialapp0000000000a", secret=SECRET))
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
        env = {**machine.serve_env(), "MM_MCP_ALLOW_WRITES": "true"}
        person = Person()
        async with serve("stdio", env, tmp_path / "serve", person=person) as served:
            expire_all(sim)
            renewed = await served.client.call_tool("search_posts", {"terms": "release"})
            assert not renewed.is_error, text_of(renewed)
            token = machine.sign_in()["access_token"]
            sim.clear()
            result = await served.client.call_tool(
                "create_post",
                {"channel_id": "town-square", "message": "Here it is.", "files": [{"name": "config.txt", "content": f"token = {token}\n"}]},
            )
            log = sim.requests()
        assert result.is_error, f"a file holding the renewed token was not refused: {text_of(result)}"
        assert not person.questions
        assert not [r for r in log if r["method"] == "POST"], show(log)
        assert token not in text_of(result)


async def test_a_redirect_the_app_does_not_list_stops_at_mattermost_and_porter_names_the_callback(tmp_path: Path, port: int):
    other = free_port()
    with started(tmp_path, port, lifetime=60) as sim:
        machine = Machine(tmp_path, sim, other)  # porter listens where the app has no callback
        env = {**machine.env(client_id="confidentialapp0000000000a", secret=SECRET), "MM_OAUTH_WAIT_SECONDS": "8"}
        done = machine.login(env)
        assert done.returncode == 1, f"{done.stdout}\n{done.stderr}"
        assert "redirect" in machine.browser().get("error", ""), machine.browser()
        assert f"http://127.0.0.1:{other}/callback" in done.stderr and "nothing was stored" in done.stderr, done.stderr
        assert machine.kept() == {}
