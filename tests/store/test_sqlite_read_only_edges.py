"""A process reading an SQLite store it may not write, at the edges: while a writer migrates the file, beside a
`-wal` and `-shm` it may not write (a read-only folder), and across the file being replaced by another store."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope, StoreError
from tests.conftest import as_user

FIXTURES = Path(__file__).parent / "fixtures"

# Counts the episodes and lessons at each line it is sent, or says the error a read raised.
_READER = """
import sys
from lamar import Lamar, LamarError
lam = Lamar(sys.argv[1])
print("open", flush=True)
for line in sys.stdin:
    try:
        print(lam.stats()["episodes"], len(lam.experiences()), flush=True)
    except LamarError as exc:
        print(type(exc).__name__, exc, flush=True)
lam.close()
"""

# Opens an older store (which migrates it) and stops inside the migration's transaction until sent a line; then
# reports 5 episodes at the next line and closes at the last.
_MIGRATING = """
import sys
from lamar.store import sqlite_schema
create = sqlite_schema.episode_rows.create
def paused(db):
    create(db)
    print("migrating", flush=True)
    sys.stdin.readline()
sqlite_schema.episode_rows.create = paused
from lamar import Lamar
lam = Lamar(sys.argv[1])
print("migrated", flush=True)
sys.stdin.readline()
for _ in range(5):
    lam.report(lam.recall({"project": "app", "task": "test", "language": "python"}).episode_id, 1.0)
print("wrote", flush=True)
sys.stdin.readline()
lam.close()
"""


class _Talker:
    def __init__(self, *command: str) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        self.process = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        env=env)

    def heard(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()

    def say(self) -> str:
        assert self.process.stdin is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        return self.heard()

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=60)


def _lamar(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([*as_user(), sys.executable, "-m", "lamar.cli", "--store", str(path), *args],
                          capture_output=True, text=True, check=False, timeout=60, env=env)


def _store(path: Path, episodes: int = 20) -> None:
    with Lamar(str(path), k=2, seed=1) as lam:
        for i in range(3):
            lam.add(Experience(f"when step {i} fails", f"do fix {i}", scope=Scope(task="t")))
        for _ in range(episodes):
            lam.report(lam.recall({"task": "t"}).episode_id, 1.0)


def test_a_reader_reads_a_file_a_writer_is_migrating_as_it_was_then_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copy(FIXTURES / "release-0.1.0.db", path)  # schema version 1: its first writer migrates it
    os.chmod(path, 0o444)  # what the reader may not write; the writer (root here, or the owner) still may
    reader = _Talker(*as_user(), sys.executable, "-c", _READER, str(path))
    writer = _Talker(sys.executable, "-c", _MIGRATING, str(path))
    try:
        assert reader.heard() == "open"
        before = int(reader.say().split()[0])  # read from a private copy: no writer has it open
        assert writer.heard() == "migrating"  # its transaction holds the new schema, not yet committed
        assert reader.say() == f"{before} 4"
        done = _lamar(path, "ls")  # a reader opened meanwhile
        assert done.returncode == 0 and len(done.stdout.splitlines()) == 5, done.stderr
        assert writer.say() == "migrated" and reader.say() == f"{before} 4"
        assert writer.say() == "wrote" and reader.say() == f"{before + 5} 4"
        assert writer.close() == 0
        assert reader.say() == f"{before + 5} 4"
    finally:
        assert reader.close() == 0
        writer.process.kill()
        writer.process.wait()
        os.chmod(path, 0o644)
    with Lamar(str(path)) as lam:
        assert lam.stats()["episodes"] == before + 5


def test_a_write_beside_a_wal_and_shm_it_may_not_write_names_them_and_stores_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "shelf"
    folder.mkdir()
    path = folder / "lessons.db"
    _store(path)
    # A writer (of another user, say) killed with the store open leaves its -wal and -shm, its commits in the -wal.
    killed = subprocess.run([sys.executable, "-c", (
        "import os, sys\nfrom lamar import Lamar\nlam = Lamar(sys.argv[1])\n"
        "lam.report(lam.recall({'task': 't'}).episode_id, 1.0)\nos._exit(0)\n"), str(path)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, check=True)
    assert killed.returncode == 0
    os.chmod(path, 0o666)  # the file may be written; its -wal and -shm, and the folder, may not
    for side in ("-wal", "-shm"):
        os.chmod(f"{path}{side}", 0o444)
    os.chmod(folder, 0o555)
    try:
        read = _lamar(path, "stats")
        assert read.returncode == 0 and "episodes   21" in read.stdout, read.stderr
        for args in (["recall", "task=t"], ["add", "--precondition", "a lint fails", "--action", "format"]):
            done = _lamar(path, *args)
            assert done.returncode == 2, done
            said = done.stderr
            assert f"{path}-wal and {path}-shm cannot" in said and "never delete them" in said, said
            assert "read-only file, folder or mount" not in said, said
    finally:
        os.chmod(folder, 0o755)
    with Lamar(str(path)) as lam:
        assert lam.stats()["episodes"] == 21 and len(lam.experiences()) == 3


def test_a_store_replaced_while_open_leaves_the_new_one_readable_and_the_old_one_whole(tmp_path: Path) -> None:
    path = tmp_path / "lessons.db"
    _store(path)
    other = tmp_path / "made" / "lessons.db"  # a store made aside and moved in, as `lamar import` makes one
    other.parent.mkdir()
    with Lamar(str(other)) as lam:
        lam.add(Experience("another store", "another action", scope=Scope(task="t")))
    writer = Lamar(str(path))
    writer.report(writer.recall({"task": "t"}).episode_id, 1.0)  # committed in its -wal
    os.chmod(path, 0o444)
    reader = _Talker(*as_user(), sys.executable, "-c", _READER, str(path))
    try:
        assert reader.heard() == "open" and reader.say() == "21 3"
        os.rename(path, tmp_path / "kept.db")  # the store put aside, another moved in
        os.rename(other, path)
        os.chmod(path, 0o444)
        with pytest.raises(StoreError, match="replaced by another file"):
            writer.report(writer.recall({"task": "t"}).episode_id, 1.0)
        assert reader.say().startswith("StoreError") and "open the store again" in reader.say()
        done = _lamar(path, "ls")  # the store moved in reads as itself, not through the -wal of the one put aside
        assert done.returncode == 0 and "another store" in done.stdout, done.stderr
    finally:
        assert reader.close() == 0
        writer.close()
    with Lamar(str(tmp_path / "kept.db")) as kept, Lamar(str(path)) as moved_in:
        assert kept.stats()["episodes"] == 21 and len(kept.experiences()) == 3  # the report in its -wal kept
        assert moved_in.stats()["episodes"] == 0 and len(moved_in.experiences()) == 1
