"""SQLite readers never take the write lock: `stats`, `ls`, `show`, `html` and `export` work
while another process holds it, and on a store that cannot be written (an immutable folder,
a read-only mount). Root ignores file modes, so read-only is made with chattr +i and with a
tmpfs remounted read-only, which bind root too."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope, Signal
from tests.conftest import IN_CI
from tests.mounts import tmpfs

# Readers get 20 s; SQLite's busy timeout is 30 s, so one that waits for the lock fails here.
_PATIENCE = 20.0


def _store(path: Path) -> str:
    lam = Lamar(str(path), k=2, seed=1)
    ids = [lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task="t"))) for i in range(3)]
    for n in range(40):
        rec = lam.recall({"task": "t"})
        lam.report(rec.episode_id, Signal.SHIPPED if n % 3 else Signal.REVERTED)
    lam.close()
    return ids[0]


def _cli(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([sys.executable, "-m", "lamar.cli", "--store", str(store), *args],
                          capture_output=True, text=True, timeout=_PATIENCE, env=env, check=False)


def _read_everything(store: Path, lesson: str, out: Path) -> None:
    for args in (["stats"], ["ls"], ["show", lesson], ["html", "--out", str(out / "page.html")],
                 ["export", "--out", str(out / "copy.json")]):
        done = _cli(store, *args)
        assert done.returncode == 0, (args, done.stderr)
    assert "40" in _cli(store, "stats").stdout  # the episodes are there
    assert Lamar(str(out / "copy.json")).stats()["reports"] == 40


def test_readers_work_while_another_process_holds_the_write_lock(tmp_path: Path) -> None:
    path = tmp_path / "busy.db"
    lesson = _store(path)
    holder = subprocess.Popen(
        [sys.executable, "-c", ("import sqlite3, sys, time\n"
                                "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
                                "db.execute('BEGIN IMMEDIATE')\n"
                                "print('holding', flush=True)\n"
                                "sys.stdin.readline()\n"
                                "db.execute('COMMIT')\n"), str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        out = tmp_path / "out"
        out.mkdir()
        _read_everything(path, lesson, out)
        assert holder.poll() is None  # the lock was held throughout
    finally:
        holder.communicate("\n", timeout=30)
    assert holder.returncode == 0


def _chattr(paths: list[Path], on: bool) -> bool:
    flag = "+i" if on else "-i"
    return all(subprocess.run(["chattr", flag, str(p)], capture_output=True, check=False).returncode == 0
               for p in paths)


def test_readers_work_on_an_immutable_store(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "store.db"
    lesson = _store(path)
    files = sorted(folder.iterdir())
    before = {p.name: p.read_bytes() for p in files}
    if not _chattr([*files, folder], True):
        _chattr([*files, folder], False)
        if IN_CI:
            pytest.fail("chattr +i is needed to make a store read-only for root")
        pytest.skip("chattr +i is not available here")
    try:
        out = tmp_path / "out"
        out.mkdir()
        _read_everything(path, lesson, out)
        assert "cannot be written" in _cli(path, "add", "--precondition", "x", "--action", "y").stderr
    finally:
        _chattr([*files, folder], False)
    assert {p.name: p.read_bytes() for p in sorted(folder.iterdir())} == before


@contextmanager
def _read_only_mount(tmp_path: Path, source: Path) -> Iterator[Path]:
    """A tmpfs holding a copy of `source`'s folder, remounted read-only."""
    with tmpfs(tmp_path / "mnt", "16m") as mount:
        for item in source.iterdir():
            shutil.copy2(item, mount / item.name)
        done = subprocess.run(["mount", "-o", "remount,ro", str(mount)], capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        yield mount


def test_readers_work_on_a_read_only_mount(tmp_path: Path) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    lesson = _store(folder / "store.db")
    with _read_only_mount(tmp_path, folder) as mount:
        path = mount / "store.db"
        with pytest.raises(OSError):
            (mount / "probe").write_text("x")  # the mount really refuses writes, root's too
        out = tmp_path / "out"
        out.mkdir()
        _read_everything(path, lesson, out)
        refused = _cli(path, "add", "--precondition", "x", "--action", "y")
        assert refused.returncode == 2 and "cannot be written" in refused.stderr
