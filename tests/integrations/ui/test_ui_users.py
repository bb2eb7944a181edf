"""`lamar ui` run by an ordinary (not root) user, each side a real process under its own uid: its own
user's requests and browser get in, root's too, another user's get a 403 that says why and no more."""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from lamar import Experience, Lamar
from tests.conftest import IN_CI
from tests.users import OWNER, STRANGER, as_user, need_root, user_env

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

# One visit as a browser makes it: the printed address, the lessons page with the cookie it set, then a POST
# that adds a lesson with the form's token, and the lessons page again. Prints each answer's status and text as JSON.
_CLIENT = r"""
import http.client, json, sys
where, token = sys.argv[1], sys.argv[2]
host, port = where.split(":")
def ask(method, path, headers, body=None):
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.request(method, path, body=body, headers={"Host": where, **headers})
    answer = conn.getresponse()
    return answer.status, answer.getheader("set-cookie") or "", answer.read().decode()
first = ask("GET", "/?token=" + token, {})
cookie = {"Cookie": "lamar_ui_token_%s=%s" % (port, token)}
page = ask("GET", "/", cookie)
form = {**cookie, "Origin": "http://" + where, "Content-Type": "application/x-www-form-urlencoded"}
body = "token=%s&precondition=the+tests+are+slow&action=run+them+in+parallel&scope=&confirm=yes" % token
added = ask("POST", "/add", form, body)
print(json.dumps([first, page, added, ask("GET", "/", cookie)]))
"""

# One request with the cookie and an X-Forwarded-For naming an address of another machine; prints status and text.
_FORWARDED = r"""
import http.client, sys
where, token = sys.argv[1], sys.argv[2]
host, port = where.split(":")
conn = http.client.HTTPConnection(host, int(port), timeout=30)
conn.request("GET", "/", headers={"Host": where, "Cookie": "lamar_ui_token_%s=%s" % (port, token),
                                  "X-Forwarded-For": "203.0.113.7"})
answer = conn.getresponse()
print(answer.status, answer.read().decode())
"""


@pytest.fixture(scope="module")
def owned() -> Iterator[tuple[str, str, Path]]:
    """(host:port, token, store) of `lamar ui` started by OWNER on a store of OWNER's."""
    need_root()
    folder = Path(tempfile.mkdtemp(prefix="lamar-ui-users-"))  # not pytest's: root's alone (0700)
    try:
        store = folder / "lessons.db"
        lam = Lamar(str(store), seed=1)
        lam.add(Experience("the build fails", "clear DerivedData"))
        lam.close()
        for path in (folder, *folder.iterdir()):
            os.chown(path, OWNER, OWNER)
        proc = subprocess.Popen([*as_user(OWNER), sys.executable, "-m", "lamar.cli", "ui", "--store", str(store),
                                 "--no-browser"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=user_env(folder), cwd=folder)
        try:
            assert proc.stdout is not None and proc.stderr is not None
            line = proc.stdout.readline()
            match = re.search(r"http://(127\.0\.0\.1:\d+)/\?token=(\S+)", line)
            assert match, f"no address printed: {line!r} {proc.stderr.read() if proc.poll() is not None else ''}"
            yield match.group(1), match.group(2), store
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _visit(where: str, token: str, prefix: list[str], home: Path) -> list[tuple[int, str, str]]:
    done = subprocess.run([*prefix, sys.executable, "-c", _CLIENT, where, token], capture_output=True, text=True,
                          env=user_env(home), cwd=home, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return [tuple(answer) for answer in json.loads(done.stdout)]  # type: ignore[misc]


def _lessons(where: str, token: str) -> str:
    """The lessons page, asked for by this (root's) process: the store is read by its server alone."""
    conn = http.client.HTTPConnection(*where.split(":"), timeout=30)  # type: ignore[arg-type]
    try:
        conn.request("GET", "/", headers={"Cookie": f"lamar_ui_token_{where.split(':')[1]}={token}"})
        answer = conn.getresponse()
        assert answer.status == 200
        return answer.read().decode()
    finally:
        conn.close()


def test_its_own_user_reads_and_writes(owned: tuple[str, str, Path]) -> None:
    where, token, store = owned
    first, page, added, after = _visit(where, token, as_user(OWNER), store.parent)
    assert first[0] == 200 and f"lamar_ui_token_{where.split(':')[1]}=" in first[1]
    assert page[0] == 200 and "the build fails" in page[2] and "the tests are slow" not in page[2]
    assert added[0] == 303 and after[0] == 200 and "the tests are slow" in after[2]


def test_root_is_let_in(owned: tuple[str, str, Path]) -> None:
    where, token, store = owned  # root can read the token from the server's memory anyway
    first, page, _, _ = _visit(where, token, [], store.parent)
    assert first[0] == 200 and page[0] == 200 and "the build fails" in page[2]


def test_another_user_is_refused_with_a_page_that_says_why(owned: tuple[str, str, Path]) -> None:
    where, token, store = owned
    before = _lessons(where, token)
    answers = _visit(where, token, as_user(STRANGER), store.parent)
    for status, cookie, text in answers:
        assert status == 403 and cookie == ""
        assert "another user" in text and "start `lamar ui` as the user" in text.replace("&#x60;", "`")
        # nothing that helps a stranger: no token, no store, no lesson, no name of the user who started it
        assert token not in text and str(store) not in text and "build" not in text and str(OWNER) not in text
    assert _lessons(where, token) == before


def test_another_user_naming_another_address_in_a_header_is_still_refused(owned: tuple[str, str, Path]) -> None:
    """uvicorn took X-Forwarded-For from any loopback client as the client's address: one the kernel knows no
    socket of, so another user who named an address there was let in."""
    where, token, store = owned
    done = subprocess.run([*as_user(STRANGER), sys.executable, "-c", _FORWARDED, where, token], capture_output=True,
                          text=True, env=user_env(store.parent), cwd=store.parent, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("403 ") and "another user" in done.stdout and "build" not in done.stdout


def test_the_address_on_ipv6_loopback_is_not_served(owned: tuple[str, str, Path]) -> None:
    where, _, _ = owned  # it binds 127.0.0.1 alone: [::1] finds nothing there, so no peer check is skipped
    if not socket.has_ipv6:
        pytest.skip("no IPv6 here")
    with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock, pytest.raises(OSError):
        sock.settimeout(5)
        sock.connect(("::1", int(where.split(":")[1])))


def _chromium(url: str, uid: int) -> str:
    """The page headless Chromium shows for `url`, run as `uid`, once the address's page has moved on."""
    home = Path(tempfile.mkdtemp(prefix="lamar-ui-chromium-"))  # the user's own, as their browser's profile is
    try:
        os.chown(home, uid, uid)
        done = subprocess.run([*as_user(uid), CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu",
                               "--no-first-run", "--disable-background-networking", "--disable-component-update",
                               "--disable-sync", "--disable-dev-shm-usage", f"--user-data-dir={home / 'profile'}",
                               "--virtual-time-budget=5000", "--dump-dom", url],
                              capture_output=True, text=True, env=user_env(home), timeout=120, check=False)
        return done.stdout or done.stderr[-2000:]
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.browser
def test_chromium_of_its_own_user_gets_in_and_another_users_does_not(owned: tuple[str, str, Path]) -> None:
    if not Path(CHROMIUM).exists():
        if IN_CI:
            pytest.fail("headless Chromium is needed (apt-get install chromium)")
        pytest.skip("headless Chromium is needed (apt-get install chromium)")
    where, token, _ = owned
    url = f"http://{where}/?token={token}"
    own = _chromium(url, OWNER)
    assert "the build fails" in own and "<table" in own, own[-2000:]
    theirs = _chromium(url, STRANGER)
    assert "another user" in theirs and "the build fails" not in theirs, theirs[-2000:]
