"""`lamar ui --store :memory:` says, at launch and on every page, that its store is thrown away when
it stops; a store on disk says nothing of the kind."""

from __future__ import annotations

import html
import json
import os
import re
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from lamar import Experience, Lamar

pytest.importorskip("starlette")

from tests.integrations.ui.test_ui_trial import _get, _start, _stop, serving

SAID = "nothing added or changed is kept when lamar ui stops (use --store FILE to keep it)"
SHOWN = "This store is :memory:, a throwaway: nothing added or changed here is kept when lamar ui stops."


def test_a_store_in_memory_is_said_to_be_thrown_away_at_launch_and_on_the_page(tmp_path: Path) -> None:
    proc, url = _start(Path(":memory:"), "--report", str(tmp_path / "report.json"))
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == f"lamar ui: the store is :memory:, a throwaway: {SAID}\n"
        for path in ("/", "/add", "/sleep"):
            assert SHOWN in html.unescape(_get(url, path)).replace("<code>", "").replace("</code>", ""), path
    finally:
        _stop(proc)


def test_a_store_on_disk_is_not_said_to_be_thrown_away(tmp_path: Path) -> None:
    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:
        lam.add(Experience("the build fails", "clear the cache"))
    with serving(path) as url:
        assert 'class="throwaway"' not in _get(url, "/")


@pytest.mark.parametrize(("stop", "status"), [(signal.SIGINT, 0), (signal.SIGTERM, 128 + signal.SIGTERM),
                                            (signal.SIGHUP, 128 + signal.SIGHUP)])
def test_a_store_in_memory_keeps_its_sleep_report_only_while_it_runs(tmp_path: Path, stop: signal.Signals,
                                                                     status: int) -> None:
    """Its default sleep report is a temporary file of the server's own, made on a machine with no
    ~/.lamar folder, and removed when the server is stopped (Ctrl+C, SIGTERM from a service manager
    or `kill`, SIGHUP from a closed terminal, which uvicorn hands back): it named lessons that are gone."""
    home, temporary = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    temporary.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "lamar.cli", "ui", "--store", ":memory:", "--no-browser"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "HOME": str(home), "TMPDIR": str(temporary)})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("lamar ui: serving :memory: at http://127.0.0.1:"), (
            line, proc.stderr.read() if proc.stderr and proc.poll() is not None else "")
        folder, = temporary.glob("lamar-ui-report-*")
        report = folder / "sleep-report.json"
        report.write_text("{}")  # as Run sleep writes it
    finally:
        proc.send_signal(stop)
        proc.wait(timeout=10)
    assert proc.returncode == status
    assert not report.exists() and not folder.exists()
    assert proc.stderr is not None and proc.stderr.read().endswith("lamar ui: stopped\n")
    assert not (home / ".lamar").exists()


def test_a_sleep_report_another_user_puts_in_the_temporary_folder_is_neither_read_nor_written(
        tmp_path: Path) -> None:
    """The memory store's report is in a folder of its own, readable by its user alone, under a name no one can
    foresee: a report planted in the shared temporary folder (at the server's process id, which `ps` shows) is
    not offered for review, and the one Run sleep writes is not readable by others."""
    shared = tmp_path / "tmp"
    shared.mkdir(mode=0o1777)
    proc = subprocess.Popen([sys.executable, "-m", "lamar.cli", "ui", "--store", ":memory:", "--no-browser"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(shared)})
    try:
        assert proc.stdout is not None
        url = re.search(r"http://127\.0\.0\.1:\d+/\?token=\S+", proc.stdout.readline())
        assert url is not None
        planted = {"format": "lamar-sleep-report", "made_at": 0, "created": 0.0, "proposals": [
            {"id": "candidate_planted", "kind": "candidate", "experience_ids": [], "evidence": {}, "payload": {},
             "expect": {}, "reason": "PLANTED by another user: approve and apply me"}]}
        (shared / f"lamar-ui-sleep-report-{proc.pid}.json").write_text(json.dumps(planted))
        assert "PLANTED" not in _get(url.group(0), "/sleep")
        _get(url.group(0), "/add", {"precondition": "the build fails", "action": "clear the cache"})
        _get(url.group(0), "/sleep/run", {})
        report, = shared.glob("lamar-ui-report-*/sleep-report.json")
        assert stat.S_IMODE(report.parent.stat().st_mode) == 0o700
        assert json.loads(report.read_text())["format"] == "lamar-sleep-report"
    finally:
        _stop(proc)
    assert not report.parent.exists()


def test_each_database_and_each_memory_store_has_a_default_report_of_its_own(tmp_path: Path) -> None:
    from lamar_ui import default_report_path

    one, other = (default_report_path(f"postgresql://postgres@127.0.0.1:5432/test?lamar_namespace={n}") for n in "ab")
    memory, again = default_report_path(":memory:"), default_report_path(":memory:")
    assert one != other and one.parent == other.parent == Path("~/.lamar").expanduser()
    assert memory.parent.parent == again.parent.parent == Path(tempfile.gettempdir()) and memory != again
    assert stat.S_IMODE(memory.parent.stat().st_mode) == 0o700 and not memory.exists()
    memory.parent.rmdir()
    again.parent.rmdir()
    assert default_report_path(str(tmp_path / "s.db")) == tmp_path / "s.db.sleep-report.json"


def test_a_signal_before_the_server_starts_serving_leaves_nothing_to_warn_of(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # A Ctrl+C or SIGTERM can land after the address is printed but before uvicorn's event loop
    # runs the coroutine it was handed: that coroutine must not be left to warn, at exit, that it
    # was never awaited (it did, on stderr, after "lamar ui: stopped").
    import gc
    import warnings

    import uvicorn.server

    import lamar_ui

    def interrupted(main: object, **_: object) -> None:
        raise KeyboardInterrupt  # before the loop ran `main`

    monkeypatch.setattr(uvicorn.server, "asyncio_run", interrupted)
    lam = Lamar(":memory:")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(KeyboardInterrupt):
            lamar_ui.serve(lam, open_browser=False, report_path=tmp_path / "report.json")
        gc.collect()
    lam.close()
    assert [str(w.message) for w in caught if "never awaited" in str(w.message)] == []
    assert capsys.readouterr().err.endswith("lamar ui: stopped\n")


def test_a_signal_while_the_event_loop_is_built_waits_for_the_server_to_take_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # A Ctrl+C that landed while asyncio was building the event loop left a half-built loop, whose
    # finalizer printed a traceback after "lamar ui: stopped". It is held until uvicorn's handlers
    # are in place, and then stops the server as any Ctrl+C does.
    import asyncio

    import uvicorn

    import lamar_ui

    built: list[asyncio.AbstractEventLoop] = []

    def interrupted_while_building() -> asyncio.AbstractEventLoop:
        # To the main thread, as to `lamar ui`'s one thread: this test process may run others.
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
        built.append(asyncio.SelectorEventLoop())
        return built[-1]

    monkeypatch.setattr(uvicorn.Config, "get_loop_factory", lambda self: interrupted_while_building)
    lam = Lamar(":memory:")
    try:
        with pytest.raises(KeyboardInterrupt):
            lamar_ui.serve(lam, open_browser=False, report_path=tmp_path / "report.json")
    finally:
        lam.close()
    assert len(built) == 1 and built[0].is_closed()  # the loop was built whole, ran, and was closed
    assert capsys.readouterr().err.endswith("lamar ui: stopped\n")
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])  # nothing left held



def test_a_memory_store_that_cannot_be_served_leaves_no_report_folder(tmp_path: Path) -> None:
    import socket

    shared = tmp_path / "tmp"
    shared.mkdir()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "lamar.cli", "ui", "--store", ":memory:", "--no-browser",
                               "--port", str(port)], check=False, capture_output=True, text=True, timeout=60,
                              env={**os.environ, "TMPDIR": str(shared)})
    assert done.returncode != 0 and f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert list(shared.iterdir()) == []  # the report's folder made for it is gone with it


def test_a_database_sleep_report_in_lamar_home_is_readable_by_its_user_alone(tmp_path: Path, postgres_url: str) -> None:
    """A PostgreSQL store's report goes to ~/.lamar, and quotes lessons: the folder Lamar makes is 0700 and the
    report Run sleep writes 0600, under a umask that would leave both readable by anyone."""
    from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

    namespace = unique_namespace("teamfix")
    with Lamar(namespace_url(postgres_url, namespace)) as lam:
        lam.add(Experience(precondition="the build fails", action="clear the cache"))
    home = tmp_path / "home"
    home.mkdir()
    proc = subprocess.Popen(["sh", "-c", 'umask 022; exec "$0" -m lamar.cli ui --store "$1" --no-browser',
                             sys.executable, namespace_url(postgres_url, namespace)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "HOME": str(home)})
    try:
        assert proc.stdout is not None
        url = re.search(r"http://127\.0\.0\.1:\d+/\?token=\S+", proc.stdout.readline())
        assert url is not None
        _get(url.group(0), "/sleep/run", {})
        report, = (home / ".lamar").glob("sleep-report-*.json")
        assert stat.S_IMODE(report.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(report.stat().st_mode) == 0o600
    finally:
        _stop(proc)
        drop_namespaces(postgres_url, namespace)


def test_every_file_lamar_writes_in_its_home_is_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One rule for whatever writes there: a new file in ~/.lamar is 0600, and one an older writer left readable
    by others loses that when it is written again; a file the user named elsewhere keeps the umask's mode."""
    from lamar.atomic import replace_file

    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".lamar").mkdir()
    old = os.umask(0o022)
    try:
        replace_file(tmp_path / ".lamar" / "new.json", b"{}")
        (tmp_path / ".lamar" / "old.json").write_text("{}")
        (tmp_path / ".lamar" / "old.json").chmod(0o644)
        replace_file(tmp_path / ".lamar" / "old.json", b"{}")
        replace_file(tmp_path / "mine.json", b"{}")
        with Lamar(str(tmp_path / ".lamar" / "experience.json")) as lam:
            lam.add(Experience(precondition="the build fails", action="clear the cache"))
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / ".lamar").iterdir() if p.is_file()}
    assert modes["new.json"] == modes["old.json"] == modes["experience.json"] == 0o600, modes
    assert stat.S_IMODE((tmp_path / "mine.json").stat().st_mode) == 0o644
