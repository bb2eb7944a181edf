"""A SQLite store moved away without its `-wal` (its writers killed, so nothing folded the log into the file) leaves
commits in that `-wal`: a new store opened at the old path refuses it, rather than let SQLite delete it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lamar import Experience, Lamar, StoreError

KILLED_WRITER = """
import os, signal, sys
from lamar import Experience, Lamar
lam = Lamar(sys.argv[1], seed=0)
lam.add(Experience("the build fails", "clear the cache"))
for _ in range(40):
    lam.report(lam.recall({}).episode_id, "shipped")
os.kill(os.getpid(), signal.SIGKILL)  # as kill -9, a crash or a stopped container: no close folds the -wal in
"""


def _killed_writer(path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(path)], capture_output=True, text=True,
                          timeout=120, check=False, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == -9, done.stderr[-500:]


def test_a_new_store_beside_a_moved_stores_wal_is_refused_and_the_wal_kept(tmp_path: Path) -> None:
    path, moved = tmp_path / "lessons.db", tmp_path / "lessons.old.db"
    _killed_writer(path)
    wal = path.with_name("lessons.db-wal")
    assert wal.stat().st_size > 0
    path.rename(moved)  # the file alone, as one renames a file
    with pytest.raises(StoreError) as caught:
        Lamar(str(path))
    said = str(caught.value)
    assert f"{wal} lies beside {path}, which holds no store" in said
    assert "back beside the database it belongs to" in said and "delete it only if that database is gone" in said
    assert wal.stat().st_size > 0 and not path.exists()  # nothing made, nothing deleted
    for suffix in ("-wal", "-shm"):  # moved back beside its file, the -wal gives back every commit
        path.with_name(f"lessons.db{suffix}").rename(moved.with_name(f"lessons.old.db{suffix}"))
    with Lamar(str(moved)) as lam:
        assert (lam.stats()["episodes"], lam.stats()["reports"]) == (40, 40)


def test_an_empty_wal_beside_no_store_is_no_commit_to_keep(tmp_path: Path) -> None:
    path = tmp_path / "lessons.db"
    path.with_name("lessons.db-wal").write_bytes(b"")
    with Lamar(str(path)) as lam:
        lam.add(Experience("the build fails", "clear the cache"))
        assert len(lam.experiences()) == 1
