"""`lamar export --out FILE.json --force` holds the lock FILE's writers take from its last look at FILE until its
rename: an agent's first write into FILE lands before that look (and is never replaced) or after the rename, into the
copy, never between."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from lamar import Lamar
from lamar.cli import move
from tests.killed import event_count


def _agent_writing(out: Path, wrote: list[BaseException | None]) -> threading.Thread:
    """An agent's thread: it opens `out` and writes its first episode (two events), noting whether it could."""

    def agent() -> None:
        try:
            with Lamar(str(out)) as lam:
                lam.report(lam.recall({"project": "demo"}).episode_id, 1.0)
            wrote.append(None)
        except BaseException as exc:  # noqa: BLE001 (reported by the test)
            wrote.append(exc)

    return threading.Thread(target=agent)


def test_an_agents_first_write_at_the_last_instant_is_never_lost(run_cli, json_store, tmp_path, monkeypatch):
    # The agent writes its first episode into the (empty) file the export replaces, in the instant after the
    # export's last look at it: with the writers' lock held, its write waits for the rename and goes into the copy.
    out = tmp_path / "notes.json"
    out.write_text("")  # empty: not a store, and an agent opening it makes it one in place
    real = move._replaceable
    wrote: list[BaseException | None] = []
    writers: list[threading.Thread] = []

    def raced(*args, **kwargs):  # type: ignore[no-untyped-def]
        answer = real(*args, **kwargs)
        writer = _agent_writing(out, wrote)
        writers.append(writer)
        writer.start()
        writer.join(2.0)  # done by now unless the export's lock holds it back
        return answer

    monkeypatch.setattr(move, "_replaceable", raced)
    done = run_cli("export", "--store", json_store, "--out", out, "--force")
    assert done.returncode == 0, done.stderr
    writers[0].join(30)
    assert wrote == [None]  # the agent's write went through
    assert event_count(out) == event_count(json_store) + 2  # into the copy: the export's events, then its two


def test_a_sqlite_agent_that_opened_the_file_writes_into_the_copy(run_cli, json_store, tmp_path, monkeypatch):
    # The same, into an (empty) .db: the agent opened the file and its opening waits for SQLite's lock, which the
    # export holds until its rename. The file it opened is gone from the name by then: it opens the copy instead,
    # leaving nothing of the file it first opened beside it (a -wal and -shm, named by the path, the copy's readers
    # would take for its own), and its write goes into the copy.
    out = tmp_path / "notes.db"
    out.write_text("")
    real = move._replaceable
    wrote: list[BaseException | None] = []
    writers: list[threading.Thread] = []

    def raced(*args, **kwargs):  # type: ignore[no-untyped-def]
        answer = real(*args, **kwargs)
        writers.append(_agent_writing(out, wrote))
        writers[0].start()
        writers[0].join(2.0)
        return answer

    monkeypatch.setattr(move, "_replaceable", raced)
    done = run_cli("export", "--store", json_store, "--out", out, "--force")
    assert done.returncode == 0, done.stderr
    writers[0].join(30)
    assert wrote == [None]
    assert event_count(out) == event_count(json_store) + 2  # the copy, whole, then the agent's two


def test_a_db_file_removed_as_the_export_locks_it_makes_the_copy_new(run_cli, json_store, tmp_path, monkeypatch):
    # The file --force replaces is removed by someone else in the instant between the export's look for it and its
    # lock's open: nothing is there to replace any more, so the copy is made new, as for no file.
    out = tmp_path / "notes.db"
    out.write_text("")  # empty: not a store, and --force replaces it
    real_move_in, real_lexists = move._move_in, os.path.lexists
    armed: list[bool] = []

    def removed_after_the_look(path):  # type: ignore[no-untyped-def]
        there = real_lexists(path)
        if armed and there and os.fspath(path) == str(out):
            armed.clear()
            out.unlink()
        return there

    def move_in(*args, **kwargs):  # type: ignore[no-untyped-def]
        armed.append(True)
        return real_move_in(*args, **kwargs)

    monkeypatch.setattr(move, "_move_in", move_in)
    monkeypatch.setattr(os.path, "lexists", removed_after_the_look)
    done = run_cli("export", "--store", json_store, "--out", out, "--force")
    assert done.returncode == 0, done.stderr
    assert not armed  # the file went in the race's window
    assert event_count(out) == event_count(json_store)  # the copy, made new
