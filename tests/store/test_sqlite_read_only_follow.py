"""A process reading an SQLite store it may not write, while a writer opens and closes it: it never makes a `-wal`
or `-shm` the writer closed meanwhile, and the private copy it reads (of a store left with a `-wal` and no `-shm`, of
one in a folder it may not write) follows the writer."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from lamar import Experience, Lamar
from tests.conftest import as_user

# A reader that counts the lessons at each line it is sent. While the file `pause` is there, each time SQLite is
# about to open the store's own file (not a private copy), it says "opening" and waits for a line: a writer closes
# in that moment. It says "refused" the first time a lock it asks for on the file is refused.
_READER = """
import os, sqlite3, sys
connect = sqlite3.connect
def paused(target, *args, **kwargs):
    if "lamar-ro-" not in str(target) and os.path.exists(sys.argv[2]):
        print("opening", flush=True)
        sys.stdin.readline()
    return connect(target, *args, **kwargs)
sqlite3.connect = paused
import fcntl
lockf = fcntl.lockf
def refused(*args):  # says once that a lock on the file was refused
    try:
        return lockf(*args)
    except OSError:
        if not refused.said:
            print("refused", flush=True)
            refused.said = True
        raise
refused.said = False
fcntl.lockf = refused
from lamar import Lamar
lam = Lamar(sys.argv[1])
print("open", flush=True)
for line in sys.stdin:
    print(len(lam.experiences()), flush=True)
lam.close()
"""


class _Reader:
    def __init__(self, path: Path, pause: Path) -> None:
        self.process = subprocess.Popen([*as_user(), sys.executable, "-c", _READER, str(path), str(pause)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def say(self) -> str:
        """Send a line; the reader's answer."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        return self.process.stdout.readline().strip()

    def heard(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=60)


def _lamar(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*as_user(), sys.executable, "-m", "lamar.cli", "--store", str(path), *args],
                          capture_output=True, text=True, check=False, timeout=60)


@pytest.mark.parametrize("moment", ["at its open", "at a later read"])
def test_a_reader_never_makes_the_log_files_a_writer_closed_as_it_switched_to_them(tmp_path: Path,
                                                                                 moment: str) -> None:
    path, pause = tmp_path / "shelf" / "lessons.db", tmp_path / "pause"
    path.parent.mkdir()
    with Lamar(str(path)) as lam:
        lam.add(Experience("a test flakes", "rerun it"))
    pause.touch()
    if moment == "at its open":
        writer = Lamar(str(path))  # its -wal and -shm are there: the reader reads the file through them
        writer.add(Experience("a build breaks", "clean it"))
        os.chmod(path, 0o444)
        reader = _Reader(path, pause)
        assert reader.heard() == "opening"
    else:
        os.chmod(path, 0o444)
        reader = _Reader(path, pause)
        assert reader.heard() == "open" and reader.say() == "1"  # from a private copy
        os.chmod(path, 0o644)  # the -wal and -shm take the file's mode, as they do where its owner writes
        writer = Lamar(str(path))
        writer.add(Experience("a build breaks", "clean it"))
        os.chmod(path, 0o444)
        assert reader.say() == "opening"
    try:
        writer.close()  # it deletes its -wal and -shm, unless a reader holds the file open
        pause.unlink()
        answer = reader.say()
        if answer == "open":
            answer = reader.say()
        assert answer == "2"
        os.chmod(path, 0o644)
        assert reader.say() == "2"
    finally:
        assert reader.close() == 0
        os.chmod(path, 0o644)
    # a -wal and -shm the reader made would have the file's read-only mode, and refuse its writer from then on
    added = _lamar(path, "add", "--precondition", "a lint fails", "--action", "run the formatter")
    assert added.returncode == 0, added.stderr
    assert sorted(p.name for p in path.parent.iterdir()) == ["lessons.db"]
    with Lamar(str(path)) as lam:
        assert len(lam.experiences()) == 3


@pytest.mark.parametrize("folder", ["read-only", "writable"])
@pytest.mark.parametrize("writer_stays", [False, True])
def test_a_store_left_with_a_wal_and_no_shm_is_read_from_a_copy_that_follows_a_writer(tmp_path: Path, folder: str,
                                                                                      writer_stays: bool) -> None:
    live, path = tmp_path / "live.db", tmp_path / "shelf" / "lessons.db"
    path.parent.mkdir()
    with Lamar(str(live)) as lam:
        lam.add(Experience("a test flakes", "rerun it"))
        for suffix in ("", "-wal"):  # as a backup of a store open elsewhere holds it: its commits in a -wal, no -shm
            shutil.copyfile(f"{live}{suffix}", f"{path}{suffix}")
    assert os.path.getsize(f"{path}-wal") > 0
    os.chmod(path, 0o444)
    if folder == "read-only":
        os.chmod(path.parent, 0o555)  # SQLite cannot make the -shm it needs here
    reader = _Reader(path, tmp_path / "pause")
    try:
        assert reader.heard() == "open" and reader.say() == "1"
        if folder == "writable":  # read in place, SQLite would have made a -shm with the file's read-only mode
            assert sorted(p.name for p in path.parent.iterdir()) == ["lessons.db", "lessons.db-wal"]
        os.chmod(path, 0o644)  # its owner writes: the -shm takes the file's mode
        writer = Lamar(str(path))
        writer.add(Experience("a build breaks", "clean it"))
        os.chmod(path, 0o444)
        if writer_stays:  # read through the writer's -wal and -shm, as a store opened now reads it
            assert reader.say() == "2"
            writer.add(Experience("a deploy hangs", "roll it back"))
            assert reader.say() == "3"
            writer.close()
        else:
            writer.close()
            assert reader.say() == "2"
            os.chmod(path, 0o644)
            with Lamar(str(path)) as again:
                again.add(Experience("a deploy hangs", "roll it back"))
            os.chmod(path, 0o444)
            assert reader.say() == "3"
    finally:
        assert reader.close() == 0
        os.chmod(path.parent, 0o755)
        os.chmod(path, 0o644)
    added = _lamar(path, "add", "--precondition", "a lint fails", "--action", "run the formatter")
    assert added.returncode == 0, added.stderr
    assert sorted(p.name for p in path.parent.iterdir()) == ["lessons.db"]
    with Lamar(str(path)) as lam:
        assert len(lam.experiences()) == 4


@pytest.mark.parametrize("moment", ["as a writer closes", "before any writer"])
def test_a_reader_in_a_folder_it_may_not_write_follows_a_writer(tmp_path: Path, moment: str) -> None:
    path, pause = tmp_path / "shelf" / "lessons.db", tmp_path / "pause"
    path.parent.mkdir()
    with Lamar(str(path)) as lam:
        lam.add(Experience("a test flakes", "rerun it"))
    lessons = ["a build breaks", "a deploy hangs", "a lint fails"]
    if moment == "as a writer closes":
        writer = Lamar(str(path))
        writer.add(Experience(lessons.pop(0), "clean it"))
        pause.touch()
    os.chmod(path, 0o444)
    os.chmod(path.parent, 0o555)  # SQLite can make no -wal nor -shm here: without them, it reads the file immutable
    reader = _Reader(path, pause)
    try:
        if moment == "as a writer closes":
            assert reader.heard() == "opening"
            writer.close()  # its -wal and -shm go: the reader finds neither
            pause.unlink()
            assert reader.say() == "open" and reader.say() == "2"
        else:
            assert reader.heard() == "open" and reader.say() == "1"
        with Lamar(str(path)) as writer:  # the folder's owner
            writer.add(Experience(lessons.pop(0), "clean it"))
        seen = int(reader.say())
        assert seen == 4 - len(lessons)
        with Lamar(str(path)) as writer:  # read through its -wal and -shm while it has the file open
            writer.add(Experience(lessons.pop(0), "clean it"))
            assert reader.say() == str(seen + 1)
    finally:
        assert reader.close() == 0
        os.chmod(path.parent, 0o755)
        os.chmod(path, 0o644)
    with Lamar(str(path)) as lam:  # the last writer's -wal and -shm, left while the reader held the file, go
        assert len(lam.experiences()) == 4 - len(lessons)
    assert sorted(p.name for p in path.parent.iterdir()) == ["lessons.db"]


def test_a_reader_waits_for_a_writer_that_holds_the_file_as_it_closes(tmp_path: Path) -> None:
    path, pause = tmp_path / "shelf" / "lessons.db", tmp_path / "pause"
    path.parent.mkdir()
    with Lamar(str(path)) as lam:
        lam.add(Experience("a test flakes", "rerun it"))
    # A writer holding the file alone holds the lock a writer closing takes to checkpoint and delete its -wal
    # (here it has no -shm), until it closes.
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA locking_mode=EXCLUSIVE")
    writer.execute("PRAGMA user_version = 7")
    assert sorted(p.name for p in path.parent.iterdir()) == ["lessons.db", "lessons.db-wal"]
    pause.touch()  # SQLite reading in place would wait for the lock, then find no -wal and make one
    os.chmod(path, 0o444)
    reader = _Reader(path, pause)
    try:
        assert reader.heard() == "refused"
        writer.close()
        pause.unlink()
        assert reader.heard() == "open" and reader.say() == "1"  # from a copy of the file the writer left
        assert sorted(p.name for p in path.parent.iterdir()) == ["lessons.db"]
    finally:
        writer.close()
        pause.unlink(missing_ok=True)
        assert reader.close() == 0
        os.chmod(path, 0o644)
    added = _lamar(path, "add", "--precondition", "a lint fails", "--action", "run the formatter")
    assert added.returncode == 0, added.stderr
    assert sorted(p.name for p in path.parent.iterdir()) == ["lessons.db"]
