"""Read-only commands on an SQLite store the user may not write, in a folder they may: nothing is left
beside the file, every committed event is read, and the file's own writer is not locked out after."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lamar import Experience, Lamar
from tests.conftest import as_user


def _lamar(path: Path, *args: str, user: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*(user or []), sys.executable, "-m", "lamar.cli", "--store", str(path), *args],
                          capture_output=True, text=True, check=False, timeout=60)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store the commands wrote (a lesson, a recall) and closed: each case reads a byte copy of its own."""
    path = tmp_path_factory.mktemp("written") / "lessons.db"
    assert _lamar(path, "add", "--create", "--precondition", "a test flakes", "--action", "rerun it").returncode == 0
    assert _lamar(path, "recall", "project=x").returncode == 0
    assert sorted(p.name for p in path.parent.iterdir()) == ["lessons.db"]  # closed: its log is in the file
    return path


@pytest.mark.parametrize("command", [("ls",), ("stats",), ("show", "exp_"), ("search", "flakes")])
def test_a_read_of_a_file_the_user_may_not_write_leaves_nothing_beside_it(tmp_path: Path, written: Path,
                                                                         command: tuple[str, ...]) -> None:
    path = tmp_path / "lessons.db"
    shutil.copy2(written, path)
    expected = _lamar(path, *command).stdout
    user = as_user()
    os.chmod(path, 0o444)
    try:
        out = _lamar(path, *command, user=user)
    finally:
        os.chmod(path, 0o644)
    assert out.returncode == 0, out.stderr
    if command == ("stats",):  # the store's size on disk is measured, the rest is the same
        out.stdout, expected = (re.sub(r"store .*", "", text) for text in (out.stdout, expected))
    assert out.stdout == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lessons.db"]
    # left beside it, a -shm made with the file's mode refused its writer once it was writable again
    added = _lamar(path, "add", "--precondition", "a build breaks", "--action", "clean it", user=user)
    assert added.returncode == 0, added.stderr


def test_a_read_of_a_file_the_user_may_not_write_sees_what_a_writer_still_holds_in_its_log(tmp_path: Path) -> None:
    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:  # open: its commits are in the -wal, not yet in the file
        lam.add(Experience("a test flakes", "rerun it"))
        user = as_user()
        os.chmod(path, 0o444)
        try:
            out = _lamar(path, "ls", user=user)
        finally:
            os.chmod(path, 0o644)
    assert out.returncode == 0, out.stderr
    assert "When a test flakes, rerun it." in out.stdout


def test_a_write_to_a_file_the_user_may_not_write_says_what_to_do_and_leaves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "lessons.db"
    assert _lamar(path, "add", "--create", "--precondition", "a test flakes", "--action", "rerun it").returncode == 0
    before = path.read_bytes()
    user = as_user()
    os.chmod(path, 0o444)
    try:
        out = _lamar(path, "add", "--precondition", "a build breaks", "--action", "clean it", user=user)
    finally:
        os.chmod(path, 0o644)
    assert out.returncode == 2, out.stderr
    assert f"{path} cannot be written (read-only file, folder or mount); open a writable copy" in out.stderr
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["lessons.db"]


def test_a_copy_that_a_writer_changes_while_it_is_made_is_not_read(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from lamar.store.sqlite_read_only import Hold, private_copy

    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:
        lam.add(Experience("a test flakes", "rerun it"))
    copy = Hold.copy_to
    writer = ("import sys; from lamar import Experience, Lamar\n"
              "with Lamar(sys.argv[1]) as lam: lam.add(Experience('a build breaks', 'clean it'))")

    def copy_while_a_writer_commits(hold: Hold, target: str) -> None:
        copy(hold, target)
        # it commits to its -wal and, on close, moves it into the file; the file held, it leaves both files there
        subprocess.run([sys.executable, "-c", writer, str(path)], check=True, timeout=60)

    monkeypatch.setattr(Hold, "copy_to", copy_while_a_writer_commits)
    folder, _, checked = private_copy(path)
    shutil.rmtree(folder)
    assert not checked
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lessons.db", "lessons.db-shm", "lessons.db-wal"]
    monkeypatch.setattr(Hold, "copy_to", copy)
    with Lamar(str(path)) as lam:
        assert len(lam.experiences()) == 2  # none was lost to the copy
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lessons.db"]


_READER = """
import sys
from lamar import Lamar
lam = Lamar(sys.argv[1])
for line in sys.stdin:
    print(len(lam.experiences()), flush=True)
lam.close()
"""


@contextlib.contextmanager
def _reader(path: Path) -> Iterator[Callable[[], str]]:
    """A store at `path` with one lesson, made read-only, and a process that keeps it open unable to write it;
    what it yields has that process count the lessons (a line: "1\n")."""
    with Lamar(str(path)) as lam:
        lam.add(Experience("a test flakes", "rerun it"))
    os.chmod(path, 0o444)
    reader = subprocess.Popen([*as_user(), sys.executable, "-c", _READER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert reader.stdin is not None and reader.stdout is not None

    def count() -> str:
        assert reader.stdin is not None and reader.stdout is not None
        reader.stdin.write("\n")
        reader.stdin.flush()
        return reader.stdout.readline()

    try:
        yield count
    finally:
        reader.stdin.close()
        assert reader.wait(timeout=60) == 0


def test_a_reader_that_keeps_the_store_open_reads_what_a_writer_added_since(tmp_path: Path) -> None:
    path = tmp_path / "lessons.db"
    try:
        with _reader(path) as count:
            assert count() == "1\n"
            os.chmod(path, 0o644)  # its owner makes it writable, adds a lesson, and makes it read-only again
            with Lamar(str(path)) as writer:
                writer.add(Experience("a build breaks", "clean it"))
            os.chmod(path, 0o444)
            assert count() == "2\n"
    finally:
        os.chmod(path, 0o644)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lessons.db"]


def test_a_copy_sqlite_cannot_open_is_not_read_and_the_file_is_read_in_place(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from lamar.store import sqlite_read_only
    from lamar.store.sqlite import SqliteStore

    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:
        lam.add(Experience("a test flakes", "rerun it"))
    monkeypatch.setattr(sqlite_read_only, "makes_files", lambda _: True)
    monkeypatch.setattr(sqlite_read_only, "private_copy", lambda *_: (str(tmp_path / "gone"), None, True))
    store = SqliteStore(path)  # the copy's folder is gone: SQLite cannot open it
    try:
        assert [e.kind for e in store.read()] == ["experience"]
    finally:
        store.close()


def test_a_reader_that_keeps_the_store_open_reads_what_a_writer_that_keeps_it_open_commits(tmp_path: Path) -> None:
    path = tmp_path / "lessons.db"
    with _reader(path) as count:
        assert count() == "1\n"  # read from a copy: nothing is beside the file yet
        with Lamar(str(path)) as writer:  # its commits stay in its -wal until it closes
            writer.add(Experience("a build breaks", "clean it"))
            assert count() == "2\n"
            writer.add(Experience("a deploy hangs", "roll it back"))
            assert count() == "3\n"
        assert count() == "3\n"
    # the reader kept the writer's -wal and -shm (the writer's own files) from being removed: they
    # refuse no one, and the writer's next close removes them
    with Lamar(str(path)) as writer:
        writer.add(Experience("a lint fails", "run the formatter"))
    os.chmod(path, 0o644)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lessons.db"]
    with Lamar(str(path)) as lam:
        assert len(lam.experiences()) == 4


_NEVER_CLOSED = """
import sys
from lamar import Lamar
lam = Lamar(sys.argv[1])  # a script without `with` and without close()
print(len(lam.experiences()))
"""


@pytest.mark.parametrize("folder_writable", [True, False], ids=["file read-only", "folder read-only"])
def test_a_store_read_from_a_copy_and_never_closed_leaves_no_copy_behind(tmp_path: Path,
                                                                        folder_writable: bool) -> None:
    # The copy holds the whole file: one left in the temporary folder by every reader that never
    # closed its store would fill it.
    folder, temporary = tmp_path / "store", tmp_path / "tmp"
    folder.mkdir()
    temporary.mkdir()
    path = folder / "lessons.db"
    with Lamar(str(path)) as lam:
        lam.add(Experience("a test flakes", "rerun it"))
    user = as_user()
    os.chmod(path, 0o444)
    os.chmod(folder, 0o755 if folder_writable else 0o555)
    try:
        done = subprocess.run([*user, sys.executable, "-c", _NEVER_CLOSED, str(path)], capture_output=True,
                              text=True, check=False, timeout=60, env={**os.environ, "TMPDIR": str(temporary)})
    finally:
        os.chmod(folder, 0o755)
        os.chmod(path, 0o644)
    assert done.returncode == 0 and done.stdout.strip() == "1", done.stderr
    assert list(temporary.iterdir()) == []
