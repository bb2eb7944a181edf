"""A store path that is not a plain file where a store can be made: a symbolic link, a pipe, a
name too long, a new file on a full disk. Each is used as the user meant or refused with a
StoreError that says what to do, and never hangs or loses what the store held."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope, Signal, StoreError


def _written(path: Path, reports: int = 4) -> None:
    """A store at `path` holding three lessons and `reports` reported episodes, closed."""
    with Lamar(str(path), k=1, seed=1) as lam:
        for i in range(3):
            lam.add(Experience(f"the build fails {i}", "clear the cache", scope=Scope(task="t")))
        for _ in range(reports):
            lam.report(lam.recall({"task": "t"}).episode_id, Signal.SHIPPED)


def _held(path: Path | str) -> tuple[int, int]:
    with Lamar(str(path)) as lam:
        return len(lam.experiences()), lam.stats()["reports"]


def test_a_json_store_reached_through_a_link_is_rewritten_where_the_link_points(tmp_path: Path) -> None:
    """A checkpoint swapped a new file in over the link itself: the link's target kept the old log
    and the two paths went on as two stores, with two writers' locks."""
    real = tmp_path / "shared" / "experience.json"
    real.parent.mkdir()
    _written(real)
    link = tmp_path / "experience.json"
    link.symlink_to(real)
    with Lamar(str(link), k=1, seed=2) as lam:
        lam.report(lam.recall({"task": "t"}).episode_id, Signal.SHIPPED)
        assert lam.checkpoint()
    assert link.is_symlink() and link.resolve() == real
    assert _held(real) == _held(link) == (3, 5)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["experience.json", "shared"]  # sidecars beside the target


@pytest.mark.parametrize("suffix", ["json", "db"])
def test_a_pipe_named_as_a_store_is_refused_at_once_not_waited_on(tmp_path: Path, suffix: str) -> None:
    """Opening a FIFO waits for a writer: the JSON store hung there for ever, and SQLite said only
    "disk I/O error"."""
    pipe = tmp_path / f"experience.{suffix}"
    os.mkfifo(pipe)
    code = ("import sys\nfrom lamar import Lamar, StoreError\ntry: Lamar(sys.argv[1])\n"
            "except StoreError as exc: print(exc)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", code, str(pipe)], capture_output=True, text=True, timeout=60,
                          env=env, check=False)
    assert done.returncode == 0 and not done.stderr, done.stderr
    assert done.stdout.strip() == (f"{pipe} is not a file (a folder, a pipe or a device) but a store is one; it was "
                                   "left untouched: name a file, or move that one away")


@pytest.mark.parametrize("suffix", ["json", "db"])
def test_a_path_longer_than_the_system_allows_is_a_store_error(tmp_path: Path, suffix: str) -> None:
    """`Path.exists` raises on a name too long: that was an OSError traceback."""
    path = tmp_path.joinpath(*["d" * 200] * 25, f"experience.{suffix}")
    with pytest.raises(StoreError, match="File name too long; name another path"):
        Lamar(str(path))


def test_a_json_store_name_its_sidecars_would_take_past_the_limit_is_refused_up_front(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `.NAME.index.PID.tmp` is 19 bytes longer than NAME: past 236 a new store failed part-way
    # with a raw "File name too long".
    longest = tmp_path / ("s" * 231 + ".json")
    with pytest.raises(StoreError, match=r"is 237 bytes long, and this store's name may be at most 236 \(a file "
                                         r"name holds 255.*: use a shorter name"):
        Lamar(str(tmp_path / ("s" * 232 + ".json")))
    assert list(tmp_path.iterdir()) == []
    from lamar.store import Event, JsonStore

    monkeypatch.setattr(os, "getpid", lambda: 4_194_304)  # the longest PID Linux hands out
    store = JsonStore(longest)
    store.append([Event("status", {"id": f"x{i}", "status": "active"}) for i in range(1_100)])  # saves the index
    store.save_state(1_100, "{}")
    assert store.rewrite(1_000, Event("snapshot", {}))  # through a temp file, as a checkpoint
    assert sorted(p.name.removeprefix(longest.name) for p in tmp_path.iterdir()) == [
        "", ".index", ".lock", ".state"]


_NO_ROOM = """
import json, resource, sys
sys.dont_write_bytecode = True  # a capped write would leave a cut .pyc in the shared cache
resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))
from lamar import Lamar, LamarError
try:
    Lamar(sys.argv[1])
except LamarError as exc:
    print(json.dumps([type(exc).__name__, str(exc)]))
"""


@pytest.mark.parametrize("how", ["full disk", "name too long"])
def test_a_new_sqlite_store_that_cannot_be_made_says_why_not_that_it_is_not_a_store(tmp_path: Path, how: str) -> None:
    """SQLite makes the file, then cannot set it up (no room; no name left for its -wal beside it):
    that was a CorruptStore ("not a Lamar SQLite store") or a ROLLBACK's "no transaction is active"."""
    path = tmp_path / ("experience.db" if how == "full disk" else "w" * 250 + ".db")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    code = _NO_ROOM if how == "full disk" else _NO_ROOM.replace("resource.setrlimit", "# ")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120,
                          env=env, check=False)
    assert done.returncode == 0, done.stderr
    kind, message = json.loads(done.stdout)
    assert kind == "StoreError" and message.startswith(f"cannot make a store at {path}: ")
    assert message.endswith("nothing was stored: free some space, or name a writable file (with a shorter name)")
    if how == "full disk":  # room again: the file SQLite left is made a store
        _written(path)
        assert _held(path) == (3, 4)


@pytest.mark.parametrize("location", ["~/.lamar/experience.db", "~/.lamar/experience.json", "~nobody-here/x.db"])
def test_a_path_under_a_home_folder_no_one_can_find_is_a_store_error(location: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # No HOME and no entry in the password database: a container's bare user, as an MCP client may start.
    import pwd

    def _none(key: object) -> object:
        raise KeyError(key)

    monkeypatch.delenv("HOME")
    monkeypatch.setattr(pwd, "getpwuid", _none)
    monkeypatch.setattr(pwd, "getpwnam", _none)
    advice = "give the store's full path" + ("" if location.startswith("~nobody") else ", or set HOME")
    with pytest.raises(StoreError, match=f"names no folder here .*{advice}"):
        Lamar(location)


def test_a_user_no_one_knows_is_named_as_such_while_home_is_set(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # HOME is set: a '~notes.db' names the home of a user 'notes.db', whom this machine lacks, and the message
    # must not send the user to set a HOME they have.
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(StoreError) as caught:
        Lamar("~notes.db")
    assert "no user 'notes.db' is known here" in str(caught.value) and "HOME" not in str(caught.value)
    assert "full path" in str(caught.value)
