"""The warm daemon behind the installed hook command: later events go to it, it sees other writers,
and it steps aside for changed code or a dead predecessor's socket."""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope
from lamar_claude_code import daemon
from lamar_claude_code.quick import socket_path
from lamar_claude_code.settings import hook_command, invocation
from tests.hook_answers import lessons_given

from .conftest import Hook, payload


def _prompt(hook: Hook, repo: Path, text: str) -> subprocess.CompletedProcess[bytes]:
    event = json.dumps(payload("UserPromptSubmit", "s1", repo, prompt=text)).encode()
    return subprocess.run(shlex.split(invocation(hook_command(str(hook.store)))), input=event, env=hook.env,
                          capture_output=True, timeout=60, check=False)


def _served(path: str, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(path)
            return True
        except OSError:
            time.sleep(0.05)
        finally:
            probe.close()
    return False


def test_later_events_go_to_the_daemon_which_sees_other_writers(hook: Hook, repo: Path) -> None:
    path = socket_path(str(hook.store), hook.env)
    assert path is not None and path.startswith(hook.env["XDG_RUNTIME_DIR"])
    first = _prompt(hook, repo, "add a flag")  # no daemon yet: handled in its own process, which starts one
    assert first.returncode == 0
    assert _served(path)
    with Lamar(str(hook.store)) as lam:  # another process writes while the daemon holds the store open
        added = lam.add(Experience("adding a flag", "document it in --help", scope=Scope(project="shop",
                                                                                           task="feature")))
    assert _prompt(hook, repo, "add another flag").returncode == 0
    latest = max(hook.state()["episodes"].items(), key=lambda item: item[1]["time"])[0]
    with Lamar(str(hook.store)) as lam:
        assert lam.stats()["episodes"] == 2
        assert added in lam.episode(latest).eligible  # the daemon's recall saw the lesson added meanwhile
    assert Path(path).stat().st_mode & 0o077 == 0  # no one else may connect


def test_a_dead_daemons_socket_is_replaced(hook: Hook, repo: Path) -> None:
    path = socket_path(str(hook.store), hook.env)
    assert path is not None
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(path)  # bound, never listening: what a killed daemon leaves
    dead.close()
    assert _prompt(hook, repo, "add a flag").returncode == 0
    assert _served(path)
    assert _prompt(hook, repo, "add one more flag").returncode == 0
    with Lamar(str(hook.store)) as lam:
        assert lam.stats()["episodes"] == 2


def test_a_store_deleted_and_made_again_is_the_one_the_daemon_serves(hook: Hook, repo: Path) -> None:
    # Starting over (the store deleted, then install or import-rules making it again) while the daemon
    # held the old file open: each event failed on the old file, and events kept the daemon alive.
    path = socket_path(str(hook.store), hook.env)
    assert path is not None
    assert _prompt(hook, repo, "add a flag").returncode == 0
    assert _served(path)
    assert _prompt(hook, repo, "add another flag").returncode == 0  # the daemon now holds the store open
    for leftover in hook.store.parent.glob(hook.store.name + "*"):
        leftover.unlink()
    with Lamar(str(hook.store)) as lam:
        lam.add(Experience("adding a flag", "document it in --help", scope=Scope(project="shop")))
    answer = _prompt(hook, repo, "add a third flag")
    given = lessons_given(hook.store, "s1", answer.stdout, "add a third flag")
    assert answer.returncode == 0 and (given is None or "document it in --help" in given)
    assert not hook.log_file.exists() or "replaced by another file" not in hook.log_file.read_text()
    assert _prompt(hook, repo, "add a fourth flag").returncode == 0
    with Lamar(str(hook.store)) as lam:
        assert lam.stats()["episodes"] == 2  # both prompts after the new store, none lost


def test_a_changed_module_retires_the_daemon(tmp_path: Path) -> None:
    source = tmp_path / "extra.py"
    source.write_text("X = 1\n")
    module = types.ModuleType("lamar_claude_code._test_extra")
    module.__file__ = str(source)
    sys.modules[module.__name__] = module
    try:
        assert not daemon._code_changed()
        source.write_text("X = 2\n")  # an upgrade or an edit of code the daemon runs
        assert daemon._code_changed()
    finally:
        del sys.modules[module.__name__]
        daemon._loaded.pop(str(source), None)


def test_a_changed_daemon_module_retires_the_daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The daemon runs as `python -m lamar_claude_code.daemon`: its own module is __main__, which the check
    # passed over, so an edit of daemon.py alone left the old daemon serving.
    source = tmp_path / "lamar_claude_code" / "daemon.py"
    source.parent.mkdir()
    source.write_text("X = 1\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(source)
    monkeypatch.setitem(sys.modules, "__main__", main)
    try:
        assert not daemon._code_changed()
        source.write_text("X = 2\n")
        assert daemon._code_changed()
    finally:
        daemon._loaded.pop(str(source), None)


def test_a_transcript_that_never_ends_costs_the_daemon_nothing(hook: Hook, repo: Path, tmp_path: Path) -> None:
    # A FIFO nobody writes would block the read forever, /dev/zero never ends: either, read inside
    # the state lock, held every later event of every session past its budget.
    fifo = tmp_path / "transcript.jsonl"
    os.mkfifo(fifo)
    path = socket_path(str(hook.store), hook.env)
    assert path is not None
    assert _prompt(hook, repo, "the tests fail").returncode == 0
    assert _served(path)
    for transcript in (str(fifo), "/dev/zero"):
        end = payload("SessionEnd", "s1", repo, reason="exit")
        end["transcript_path"] = transcript
        done = subprocess.run(shlex.split(invocation(hook_command(str(hook.store)))),
                              input=json.dumps(end).encode(), env=hook.env, capture_output=True, timeout=60,
                              check=False)
        assert (done.returncode, done.stdout) == (0, b"")
    later = json.dumps(payload("UserPromptSubmit", "s2", repo, prompt="the tests fail again")).encode()
    done = subprocess.run(shlex.split(invocation(hook_command(str(hook.store)))), input=later, env=hook.env,
                          capture_output=True, timeout=60, check=False)
    given = lessons_given(hook.store, "s2", done.stdout, "the tests fail again")
    assert given is None or given.startswith("<lamar-lessons>")
    log = hook.log_file.read_text()
    assert "budget" not in log
    assert f"{fifo} is not a regular file" in log and "/dev/zero is not a regular file" in log


def test_a_closed_stdin_or_stdout_ends_the_hook_quietly(hook: Hook, repo: Path) -> None:
    # Claude Code may stop reading (its own timeout, a cancelled turn): no traceback, exit 0.
    path = socket_path(str(hook.store), hook.env)
    assert path is not None
    assert _prompt(hook, repo, "the tests fail").returncode == 0
    assert _served(path)  # the answer now comes from the daemon, written by quick.py itself
    event = json.dumps(payload("UserPromptSubmit", "s1", repo, prompt="the tests fail again")).encode()
    cli = shlex.join([sys.executable, "-m", "lamar.cli", "claude-code", "hook", "--store", str(hook.store)])
    for command in (invocation(hook_command(str(hook.store))), cli):
        read, write = os.pipe()
        process = subprocess.Popen(shlex.split(command), stdin=subprocess.PIPE, stdout=write, stderr=subprocess.PIPE,
                                   env=hook.env)
        os.close(write)
        os.close(read)  # the reader is gone before the hook answers
        _, err = process.communicate(event, timeout=60)
        assert (process.returncode, err) == (0, b""), command
        closed = subprocess.run(["sh", "-c", f"{command} <&- >&-"], env=hook.env, capture_output=True, timeout=60,
                                check=False)
        assert (closed.returncode, closed.stderr) == (0, b""), command
