"""Issue 38 item 8 against a real `lamar ui` server: a crafted sleep report, a token that is not
ASCII, and a lesson id holding a slash. Each request is sent as raw HTTP, as an attacker would."""

from __future__ import annotations

import http.client
import json
import os
import pwd
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from lamar import Experience, Lamar
from tests.integrations.ui.test_ui_trial import serving

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

SECURITY_HEADERS = ("content-security-policy", "x-content-type-options", "cache-control")
REFRESH = "<meta http-equiv=\"refresh\" content=\"0;url=https://evil.example/\">"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, dict[str, str]]]:
    """(host:port, token, ids) of `lamar ui` over a store with a victim lesson, a lesson whose id
    is the victim's id + '/retire', and a crafted sleep report beside it."""
    folder = tmp_path_factory.mktemp("ui-security")
    store = folder / "lessons.db"
    lam = Lamar(str(store), seed=1)
    victim = lam.add(Experience("the build fails", "clear DerivedData"))
    decoy = lam.add(Experience("the linter complains", "run the formatter", id=f"{victim}/retire"))
    lam.close()
    proposal = {"id": "retire_x", "kind": "retire", "experience_ids": [victim], "reason": "crafted",
                "evidence": {victim: {"verdict": "harms", "lift": -0.2, "lower": -0.4, "upper": -0.1,
                                      "randomized": REFRESH}},
                "payload": {}, "expect": {}}
    report = {"format": "lamar-sleep-report", "made_at": 0, "proposals": [proposal], "dropped": [],
              "events_seen": 0, "summary": {}}
    (folder / "lessons.db.sleep-report.json").write_text(json.dumps(report))
    with serving(store) as url:
        where, token = re.fullmatch(r"http://(127\.0\.0\.1:\d+)/\?token=(\S+)", url).groups()  # type: ignore[union-attr]
        yield where, token, {"victim": victim, "decoy": decoy}


def _request(where: str, method: str, path: str, headers: dict[str, bytes | str],
             body: bytes | None = None) -> tuple[int, dict[str, str], str]:
    host, port = where.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in {"Host": where, **headers}.items():
            conn.putheader(name, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read().decode()
    finally:
        conn.close()


def _cookie(where: str, token: str) -> dict[str, bytes | str]:
    return {"Cookie": f"lamar_ui_token_{where.split(':')[1]}={token}"}


def test_a_crafted_report_is_escaped_on_the_sleep_page(served: tuple[str, str, dict[str, str]]) -> None:
    where, token, _ = served
    status, _, page = _request(where, "GET", "/sleep", _cookie(where, token))
    assert status == 200
    assert "<meta http-equiv" not in page and "&lt;meta http-equiv" in page


@pytest.mark.parametrize("how", ["query", "cookie", "form"])
def test_a_token_that_is_not_ascii_is_refused_with_the_security_headers(
        served: tuple[str, str, dict[str, str]], how: str) -> None:
    where, token, _ = served
    if how == "query":
        status, headers, _ = _request(where, "GET", "/?token=" + quote("tökén"), {})
    elif how == "cookie":
        cookie = f"lamar_ui_token_{where.split(':')[1]}=t\xf6k\xe9n".encode("latin-1")
        status, headers, _ = _request(where, "GET", "/", {"Cookie": cookie})
    else:
        body = ("token=" + quote("tökén") + "&precondition=a&action=b").encode()
        status, headers, _ = _request(where, "POST", "/add", {**_cookie(where, token), "Origin": f"http://{where}",
                                      "Content-Type": "application/x-www-form-urlencoded"}, body)
    assert status == 403
    assert all(name in headers for name in SECURITY_HEADERS)


def test_a_lesson_id_with_a_slash_opens_that_lesson_not_another_ones_lever(
        served: tuple[str, str, dict[str, str]]) -> None:
    where, token, ids = served
    status, _, page = _request(where, "GET", "/lessons/" + quote(ids["decoy"], safe=""), _cookie(where, token))
    assert status == 200
    assert "the linter complains" in page and "Retire this lesson?" not in page
    status, _, page = _request(where, "GET", "/lessons/" + quote(ids["victim"], safe="") + "/retire",
                               _cookie(where, token))
    assert status == 200 and "Retire this lesson?" in page and "the build fails" in page


def test_odd_paths_answer_with_the_security_headers(served: tuple[str, str, dict[str, str]]) -> None:
    where, token, _ = served
    for path in ("/lessons/%ff%fe", "/?verdict=%00", "/lessons/x/%2e%2e", "/lessons/a/b/c"):
        status, headers, _ = _request(where, "GET", path, _cookie(where, token))
        assert status in (200, 404) and all(name in headers for name in SECURITY_HEADERS), (path, status)


def test_a_malformed_report_is_a_message_on_the_sleep_page_not_a_500(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from lamar_ui.app import UI, create_app

    report = tmp_path / "report.json"
    lam = Lamar(":memory:")
    exp_id = lam.add(Experience("the build fails", "clear DerivedData"))
    ui = UI(lam, token="t0k", report_path=report)
    words = {"verdict": "<i>x</i>", "lift": "<i>x</i>", "lower": [], "upper": {}, "randomized": "<i>x</i>"}
    retire = {"id": "retire_x", "kind": "retire", "experience_ids": [exp_id], "reason": "", "evidence": {exp_id: words},
              "payload": {}, "expect": {}}
    with TestClient(create_app(ui), base_url="http://127.0.0.1", raise_server_exceptions=False) as client:
        client.cookies.set("lamar_ui_token_80", "t0k")
        for made_at, proposals, shown in (("<b>soon</b>", [], "cannot read the sleep report"),
                                          (0, [retire], "retire_x")):
            report.write_text(json.dumps({"format": "lamar-sleep-report", "made_at": made_at, "proposals": proposals,
                                          "dropped": [], "events_seen": 0, "summary": {}}))
            page = client.get("/sleep")
            assert page.status_code == 200 and all(name in page.headers for name in SECURITY_HEADERS)
            assert "<b>" not in page.text and "<i>" not in page.text and shown in page.text



def _as_another_user(where: str, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> str:
    """Send one request over a socket that belongs to `nobody`, as another user's process would; the answer."""
    os.seteuid(pwd.getpwnam("nobody").pw_uid)  # the kernel records who made a socket, not who uses it
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    finally:
        os.seteuid(0)
    with sock:
        host, port = where.split(":")
        sock.settimeout(30)
        sock.connect((host, int(port)))
        lines = [f"{method} {path} HTTP/1.1", f"Host: {where}", "Connection: close", f"Content-Length: {len(body)}",
                 *(f"{name}: {value}" for name, value in headers.items())]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer.decode()


@pytest.mark.skipif(not Path("/proc/net/tcp").exists() or not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="needs the kernel's socket table, and root to make a socket as another user")
def test_another_user_of_the_machine_is_refused_even_with_the_token(served: tuple[str, str, dict[str, str]]) -> None:
    where, token, _ = served
    headers = {**_cookie(where, token), "Origin": f"http://{where}",
               "Content-Type": "application/x-www-form-urlencoded"}
    body = f"token={token}&precondition=written+by+another+user&action=x&scope=&confirm=yes".encode()
    for method, path, sent in (("GET", "/", b""), ("GET", f"/?token={token}", b""), ("POST", "/add", body)):
        answer = _as_another_user(where, method, path, {k: str(v) for k, v in headers.items()}, sent)
        assert answer.startswith("HTTP/1.1 403"), answer[:300]
        assert "answers only the user of this machine who started it" in answer
        assert "content-security-policy" in answer.lower()
    status, _, page = _request(where, "GET", "/", _cookie(where, token))  # its own user is still let in
    assert status == 200 and "the build fails" in page and "written by another user" not in page


def test_the_owner_of_a_connection_is_asked_off_the_event_loop(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # where netlink is refused the check reads the machine's whole socket table: the loop must not wait for it
    import threading

    from starlette.testclient import TestClient

    from lamar_ui import guard
    from lamar_ui.app import UI, create_app

    loops: list[threading.Thread] = []
    asked: list[threading.Thread] = []

    def other_user(client: object, server: object) -> bool:
        asked.append(threading.current_thread())
        return False

    monkeypatch.setattr(guard, "other_user", other_user)
    app = create_app(UI(Lamar(":memory:"), token="t0k", report_path=tmp_path / "report.json"))

    async def noting_the_loop(scope: Any, receive: Any, send: Any) -> None:
        loops.append(threading.current_thread())
        await app(scope, receive, send)

    with TestClient(noting_the_loop, base_url="http://127.0.0.1") as client:
        client.cookies.set("lamar_ui_token_80", "t0k")
        assert client.get("/").status_code == 200
    assert asked and loops and all(thread is not loops[0] for thread in asked)


def test_a_forms_kept_answer_is_given_only_with_the_token(served: tuple[str, str, dict[str, str]]) -> None:
    # POST/redirect/GET: the review of an edit is kept under a key its redirect carries. The key alone opens
    # nothing (not even beside /static/, which needs no token), and the decoy's %2F stays in the address.
    where, token, ids = served
    form = {**_cookie(where, token), "Origin": f"http://{where}", "Content-Type": "application/x-www-form-urlencoded"}
    edit = f"/lessons/{quote(ids['decoy'], safe='')}/edit"
    body = f"token={token}&precondition=the+linter+complains&action=run+it+twice&scope=".encode()
    status, headers, _ = _request(where, "POST", edit, form, body)
    assert status == 303 and re.fullmatch(re.escape(edit) + r"\?answer=[\w-]+", headers["location"]), headers
    answer = headers["location"].split("?", 1)[1]
    status, _, page = _request(where, "GET", headers["location"], _cookie(where, token))
    assert status == 200 and "next version?" in page and "run it twice" in page
    for path in (headers["location"], f"/static/ui.css?{answer}", f"/?{answer}"):
        status, _, page = _request(where, "GET", path, {})
        assert status in (403, 200) and "run it twice" not in page, (path, status)


def test_a_forms_redirect_stays_on_the_ui(served: tuple[str, str, dict[str, str]]) -> None:
    # A POST to a path opening with '//' (no page: a 404) is redirected to its answer at the same path: sent
    # as it came, that Location is another host's address (scheme-relative), where the browser would go.
    where, token, _ = served
    form = {**_cookie(where, token), "Origin": f"http://{where}", "Content-Type": "application/x-www-form-urlencoded"}
    for path in ("//evil.example/x", "/\\evil.example/x", "///evil.example"):
        status, headers, _ = _request(where, "POST", path, form, f"token={token}".encode())
        location = headers.get("location", "/")
        assert status != 303 or (location.startswith("/") and location[1:2] not in ("/", "\\")), (path, location)
