"""`lamar export --out FILE` (and `lamar import` into a new store) writes the new store in a folder
beside FILE and moves it in whole: a kill at any moment leaves FILE as it was, and a FILE that is a
link has its target written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lamar import Lamar
from lamar.cli import move
from lamar.store.files import file_kind
from tests.killed import event_count, kill_when_stalled

# `lamar export` or `lamar import`, stopped for good before or after its copy is written (the parent
# kills it there).
_STALLED = """
import sys, time
from lamar.cli import move

real = move.transfer

def stalled(source, target, **options):
    if sys.argv[1] == "after":
        real(source, target, **options)
    print("stalled", flush=True)
    time.sleep(120)

move.transfer = stalled
from lamar.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _killed(when: str, *args: str | os.PathLike[str]) -> None:
    """Run `lamar ARGS` in a process and SIGKILL it `when` ("before"/"after") the copy."""
    kill_when_stalled(subprocess.Popen([sys.executable, "-c", _STALLED, when, *map(str, args)],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))



@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.parametrize("suffix", ["db", "json"])
def test_an_export_killed_mid_copy_leaves_the_file_force_replaces_as_it_was(json_store, tmp_path, suffix, when):
    notes = tmp_path / f"notes.{suffix}"
    notes.write_bytes(b"my notes")
    os.chmod(notes, 0o600)
    _killed(when, "export", "--store", json_store, "--out", notes, "--force")
    assert notes.read_bytes() == b"my notes" and notes.stat().st_mode & 0o777 == 0o600
    # At most the copy, in a hidden folder beside the file whose name says what it is.
    left = [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert all(p.is_dir() and p.name.startswith(f".notes.{suffix}.") and p.name.endswith(".exporting")
               for p in left), left
    # Run again, the export replaces the file, whole.
    again = subprocess.run([sys.executable, "-m", "lamar.cli", "export", "--store", str(json_store),
                            "--out", str(notes), "--force"], capture_output=True, text=True, check=False, timeout=60)
    assert again.returncode == 0, again.stderr
    assert event_count(notes) == event_count(json_store) and notes.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.parametrize("suffix", ["db", "json"])
def test_an_export_to_a_new_file_killed_mid_copy_leaves_no_store_there(json_store, tmp_path, suffix, when):
    out = tmp_path / "backup" / f"copy.{suffix}"
    _killed(when, "export", "--store", json_store, "--out", out)
    # No half (or unverified) store at the name: a second run is not refused as "already holds events".
    assert not out.exists()
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "export", "--store", str(json_store), "--out", str(out)],
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert event_count(out) == event_count(json_store)


@pytest.mark.parametrize("suffix", ["db", "json"])
def test_an_export_to_a_link_writes_the_store_at_its_target(run_cli, json_store, tmp_path, suffix):
    notes = tmp_path / "kept" / f"notes.{suffix}"
    notes.parent.mkdir()
    notes.write_bytes(b"my notes")
    link = tmp_path / f"link.{suffix}"
    link.symlink_to(notes)
    done = run_cli("export", "--store", json_store, "--out", link, "--force")
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and link.resolve() == notes
    assert file_kind(notes) == ("sqlite" if suffix == "db" else "json")
    with Lamar(str(json_store)) as source, Lamar(str(link)) as copy:
        assert [e.id for e in copy.experiences()] == [e.id for e in source.experiences()]
    # A link to no file yet: the store is made at the name it points to.
    dangling = tmp_path / f"dangling.{suffix}"
    dangling.symlink_to(tmp_path / "kept" / f"new.{suffix}")
    made = run_cli("export", "--store", json_store, "--out", dangling)
    assert made.returncode == 0, made.stderr
    assert dangling.is_symlink() and event_count(tmp_path / "kept" / f"new.{suffix}") == event_count(json_store)
    assert not [p.name for p in tmp_path.rglob(".*")], "a temporary copy was left"


@pytest.mark.parametrize("log", ["-wal", "-journal"])
def test_a_sqlite_log_left_where_the_store_goes_is_refused_not_replayed_into_it(run_cli, json_store, tmp_path, log):
    # A database moved away without its log: SQLite would take the log for the new store's.
    stale = tmp_path / f"copy.db{log}"
    stale.write_bytes(b"a log of another database")
    out = run_cli("export", "--store", json_store, "--out", tmp_path / "copy.db")
    assert out.returncode == 2 and f"{stale} lies beside" in out.stderr and "move it back" in out.stderr
    assert stale.read_bytes() == b"a log of another database" and not (tmp_path / "copy.db").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_file_made_at_the_new_name_during_the_export_is_never_replaced(run_cli, json_store, tmp_path, monkeypatch):
    out = tmp_path / "copy.db"
    real = move.transfer

    def raced(source, target, **options):  # type: ignore[no-untyped-def]
        result = real(source, target, **options)
        out.write_bytes(b"another export's store")  # made at the name while this copy ran
        return result

    monkeypatch.setattr(move, "transfer", raced)
    done = run_cli("export", "--store", json_store, "--out", out)
    assert done.returncode == 1 and f"{out} was made by another process while the copy ran" in done.stderr
    assert out.read_bytes() == b"another export's store"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("made", ["another export's store", "an agent's first write"])
def test_a_store_made_at_the_forced_name_during_the_export_is_never_replaced(run_cli, json_store, tmp_path,
                                                                             monkeypatch, made):
    # --force let the copy replace a file that was no store when checked; one made a store while the copy ran
    # (a store moved in, or an agent writing into the file in place) is a store: never replaced.
    out = tmp_path / "notes.json"
    out.write_text("")  # empty: not a store, and an agent opening it makes it one in place
    real = move.transfer

    def raced(source, target, **options):  # type: ignore[no-untyped-def]
        result = real(source, target, **options)
        if made == "an agent's first write":
            with Lamar(str(out)) as agent:
                agent.report(agent.recall({"project": "demo"}).episode_id, 1.0)
        else:
            with Lamar(str(tmp_path / "other.json")) as agent:
                agent.report(agent.recall({"project": "demo"}).episode_id, 1.0)
            os.replace(tmp_path / "other.json", out)
        return result

    monkeypatch.setattr(move, "transfer", raced)
    done = run_cli("export", "--store", json_store, "--out", out, "--force")
    assert done.returncode == 1 and f"{out} became a Lamar store while the copy ran" in done.stderr, done.stderr
    assert event_count(out) == 2  # theirs, as they left it
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_forced_file_removed_during_the_export_is_made_new(run_cli, json_store, tmp_path, monkeypatch):
    out = tmp_path / "notes.db"
    out.write_text("my notes")
    real = move.transfer

    def raced(source, target, **options):  # type: ignore[no-untyped-def]
        result = real(source, target, **options)
        out.unlink()  # removed while the copy ran: nothing left to replace
        return result

    monkeypatch.setattr(move, "transfer", raced)
    done = run_cli("export", "--store", json_store, "--out", out, "--force")
    assert done.returncode == 0, done.stderr
    assert event_count(out) == event_count(json_store)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("command", ["export", "import"])
def test_a_folder_it_cannot_write_in_is_named_for_the_users_file(run_cli, json_store, tmp_path, monkeypatch, command):
    # As root a read-only folder is writable: the refusal is the one a user's own folder gives.
    made = tmp_path / "locked" / "copy.db"
    made.parent.mkdir()
    real = Path.mkdir

    def refused(self, *args, **options):  # type: ignore[no-untyped-def]
        if self.parent == made.parent:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *args, **options)

    monkeypatch.setattr(Path, "mkdir", refused)
    args = ("export", "--store", json_store, "--out", made) if command == "export" else (
        "import", json_store, "--store", made)
    done = run_cli(*args)
    assert done.returncode == 2, done.stderr
    assert f"{made}: cannot write in {made.parent} (Permission denied)" in done.stderr, done.stderr
    assert "a folder you can write to" in done.stderr and f"{command}ing" not in done.stderr
    assert not list(made.parent.iterdir())


def test_a_store_it_cannot_make_is_named_as_the_user_named_it(run_cli, json_store, tmp_path):
    # A name SQLite cannot add its `-wal` to: the refusal names --out, not the folder it is made in.
    out = tmp_path / ("b" * 250 + ".db")
    done = run_cli("export", "--store", json_store, "--out", out)
    assert done.returncode == 2 and f"cannot make a store at {out}:" in done.stderr, done.stderr
    assert "exporting" not in done.stderr
    assert not [p for p in tmp_path.iterdir() if p.name.startswith((".", "b"))]


def test_a_store_made_at_the_import_s_name_meanwhile_is_imported_into_when_run_again(run_cli, json_store, tmp_path,
                                                                                   monkeypatch):
    # An agent's first write made the store the import was for: a second run fills it, no other name.
    made = tmp_path / "new.db"
    real = move.transfer

    def raced(source, target, **options):  # type: ignore[no-untyped-def]
        result = real(source, target, **options)
        Lamar(str(made)).close()
        return result

    monkeypatch.setattr(move, "transfer", raced)
    done = run_cli("import", json_store, "--store", made)
    assert done.returncode == 1 and "run the import again" in done.stderr and "name another" not in done.stderr
    monkeypatch.setattr(move, "transfer", real)
    again = run_cli("import", json_store, "--store", made)
    assert again.returncode == 0, again.stderr
    assert event_count(made) == event_count(json_store)


@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.parametrize("suffix", ["db", "json"])
def test_an_import_into_a_new_store_killed_mid_copy_leaves_no_store_there(json_store, tmp_path, suffix, when):
    made = tmp_path / f"new.{suffix}"
    _killed(when, "import", json_store, "--store", made)
    assert not made.exists()
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "import", str(json_store), "--store", str(made)],
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"copied {event_count(json_store)} events from {json_store} to {made} (verified)\n"
    assert event_count(made) == event_count(json_store)
    left = [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # the killed run's copy, if any
    assert all(p.is_dir() and p.name.startswith(f".new.{suffix}.") and p.name.endswith(".importing") for p in left)
