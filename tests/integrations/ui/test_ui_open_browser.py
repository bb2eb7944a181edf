"""`lamar ui` opens the browser on a private file that leads to its address: the token is on no
command line, where any local user would read it (`ps`, /proc/PID/cmdline)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from lamar import Experience, Lamar

pytest.importorskip("starlette")

# The browser `webbrowser` starts ($BROWSER): it writes down the command line it was given.
RECORDER = """#!{python}
import json, os, sys
with open(os.environ["LAMAR_TEST_BROWSER_RECORD"] + ".part", "w") as f:
    json.dump(sys.argv, f)
os.replace(os.environ["LAMAR_TEST_BROWSER_RECORD"] + ".part", os.environ["LAMAR_TEST_BROWSER_RECORD"])
"""


class _Launch:
    def __init__(self, proc: subprocess.Popen[str], url: str, argv: list[str]) -> None:
        self.proc, self.url, self.argv = proc, url, argv

    @property
    def page(self) -> Path:
        return Path(urllib.request.url2pathname(urllib.parse.urlsplit(self.argv[-1]).path))


@contextlib.contextmanager
def _launch(tmp_path: Path, env: Mapping[str, str], before: Sequence[str] = ()) -> Iterator[_Launch]:
    store = tmp_path / "lessons.db"
    with Lamar(str(store)) as lam:
        lam.add(Experience("the build fails", "clear the cache"))
    recorder, record = tmp_path / "browser.py", tmp_path / "browser.json"
    recorder.write_text(RECORDER.format(python=sys.executable))
    recorder.chmod(0o700)  # `webbrowser` runs $BROWSER as one program, without arguments of its own
    environ = {key: value for key, value in os.environ.items() if key != "LAMAR_UI_OPEN_DIR"}
    environ.update(env, BROWSER=str(recorder),
                   LAMAR_TEST_BROWSER_RECORD=str(record))
    proc = subprocess.Popen([*before, sys.executable, "-m", "lamar.cli", "ui", "--store", str(store)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environ)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:\d+/\?token=\S+", line)
        assert match, (line, proc.stderr.read() if proc.stderr and proc.poll() is not None else "")
        deadline = time.monotonic() + 20
        while not record.exists():
            assert time.monotonic() < deadline and proc.poll() is None, "the browser was never started"
            time.sleep(0.05)
        yield _Launch(proc, match.group(0), json.loads(record.read_text()))
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def _visit(url: str, headers: Mapping[str, str]) -> tuple[int, str, str]:
    """GET `url` as a browser's first visit does, redirects not followed: status, Set-Cookie, body."""
    return _visit_with_headers(url, headers)[:3]


def _visit_with_headers(url: str, headers: Mapping[str, str]) -> tuple[int, str, str, Mapping[str, str]]:
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(urllib.request.Request(url, headers=dict(headers)), timeout=30) as response:
            return response.status, response.headers.get("Set-Cookie", ""), response.read().decode(), response.headers
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Set-Cookie", ""), exc.read().decode(), exc.headers


def test_the_browser_is_given_a_private_file_not_the_token_and_the_file_leads_to_a_session(tmp_path: Path) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    with _launch(tmp_path, {"XDG_RUNTIME_DIR": str(runtime)}) as launch:
        token = launch.url.split("token=", 1)[1]
        assert not any(token in arg for arg in launch.argv), launch.argv  # nothing for `ps` to show
        assert launch.argv[-1].startswith("file:///")
        page = launch.page
        assert page.parent.parent == runtime and page.parent.name.startswith("lamar-ui-")
        assert _mode(page) == 0o600 and _mode(page.parent) == 0o700
        assert [p.name for p in page.parent.iterdir()] == ["open.html"]

        target = re.search(r'http-equiv="refresh" content="0;url=([^"]+)"', page.read_text())
        assert target, page.read_text()
        url = target.group(1).replace("&amp;", "&")
        assert url == launch.url
        # As a browser sends it on from the file (a cross-site navigation): a page of the server's own
        # moves on, so that the SameSite=Strict cookie it sets rides the next request.
        status, cookie, body = _visit(url, {"Sec-Fetch-Site": "cross-site"})
        assert status == 200 and 'http-equiv="refresh" content="0;url=/"' in body
        name_value = cookie.split(";", 1)[0]
        assert name_value.endswith("=" + token) and "samesite=strict" in cookie.lower()
        status, _, body = _visit(url.split("?", 1)[0], {"Cookie": name_value, "Sec-Fetch-Site": "same-origin"})
        assert status == 200 and "the build fails" in body
    assert not page.exists() and not page.parent.exists()  # the token leaves the disk with the server


@pytest.mark.parametrize("sent", [{}, {"Sec-Fetch-Site": "none"}, {"Sec-Fetch-Site": "same-origin"}])
def test_every_visit_with_the_token_moves_on_with_the_cookie_whatever_the_browser_says(
        tmp_path: Path, sent: dict[str, str]) -> None:
    # A browser that sends no Sec-Fetch-Site (Safari before 16.4) may still hold the SameSite=Strict
    # cookie back from a redirect in a chain the file started: the page that moves on answers
    # every visit, so no browser's first visit depends on what it says of where it came from.
    with _launch(tmp_path, {}) as launch:
        token = launch.url.split("token=", 1)[1]
        status, cookie, body, headers = _visit_with_headers(launch.url, sent)
        assert status == 200 and 'http-equiv="refresh" content="0;url=/"' in body
        assert headers["Referrer-Policy"] == "same-origin" and headers["Cache-Control"] == "no-store"
        assert "frame-ancestors 'none'" in headers["Content-Security-Policy"] and "<script" not in body
        name_value = cookie.split(";", 1)[0]
        assert name_value.endswith("=" + token) and "samesite=strict" in cookie.lower() and "httponly" in cookie.lower()
        status, _, body = _visit(launch.url.split("?", 1)[0], {**sent, "Cookie": name_value})
        assert status == 200 and "the build fails" in body  # the lessons page


@pytest.mark.parametrize("stop", [signal.SIGHUP, signal.SIGTERM, signal.SIGINT])
def test_the_file_and_its_folder_go_when_the_server_is_stopped_or_its_terminal_closed(
        tmp_path: Path, stop: signal.Signals) -> None:
    with _launch(tmp_path, {"XDG_RUNTIME_DIR": str(tmp_path)}) as launch:
        page = launch.page
        assert page.exists()
        launch.proc.send_signal(stop)  # SIGHUP: the terminal `lamar ui` ran in was closed
        launch.proc.wait(timeout=20)
    assert not page.exists() and not page.parent.exists()
    assert launch.proc.returncode == (0 if stop == signal.SIGINT else 128 + stop)
    assert launch.proc.stderr is not None and launch.proc.stderr.read().endswith("lamar ui: stopped\n")


def test_a_server_started_with_hangups_ignored_outlives_its_terminal(tmp_path: Path) -> None:
    # `nohup lamar ui` asks to outlive the terminal: a SIGHUP it ignores must not stop it.
    with _launch(tmp_path, {}, ["nohup"]) as launch:
        launch.proc.send_signal(signal.SIGHUP)
        time.sleep(1)
        assert launch.proc.poll() is None
        cookie = _visit(launch.url, {})[1].split(";", 1)[0]
        assert "the build fails" in _visit(launch.url.split("?", 1)[0], {"Cookie": cookie})[2]
        assert launch.page.exists()


def test_lamar_ui_open_dir_names_a_folder_a_sandboxed_browser_can_read(tmp_path: Path) -> None:
    chosen = tmp_path / "home" / "lamar-ui"  # made when missing, as a snap's browser reads a plain folder of the home
    with _launch(tmp_path, {"LAMAR_UI_OPEN_DIR": str(chosen), "XDG_RUNTIME_DIR": str(tmp_path)}) as launch:
        assert launch.page.parent.parent == chosen and _mode(chosen) == 0o700
        assert _mode(launch.page) == 0o600 and _mode(launch.page.parent) == 0o700
    assert list(chosen.iterdir()) == []


def test_a_lamar_ui_open_dir_that_cannot_be_made_is_refused_with_the_way_out(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    store = tmp_path / "lessons.db"
    Lamar(str(store)).close()
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "ui", "--store", str(store)], check=False,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "LAMAR_UI_OPEN_DIR": str(blocker / "sub"), "BROWSER": "false"})
    assert done.returncode == 1, done
    assert "set LAMAR_UI_OPEN_DIR to a folder you can write, or pass --no-browser" in done.stderr, done.stderr
