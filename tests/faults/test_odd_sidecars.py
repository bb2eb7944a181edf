"""A file a store keeps beside it (SQLite's -wal, -shm, -journal; a JSON store's .lock, .index, .state), or a
JSON store's own file, found as a folder, a pipe or a link that leads nowhere: nothing waits for ever, a refusal
names that file and what to do (never a read-only store or a full disk), and the store is left as it was."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools.store_bitflips import events_of, make

_ADD = ("add", "--precondition", "a test flakes", "--action", "rerun it")
_SQLITE = [("-wal", "folder"), ("-wal", "pipe"), ("-wal", "loop"), ("-shm", "folder"), ("-shm", "pipe"),
           ("-shm", "dangling"), ("-journal", "folder"), ("-journal", "pipe")]


def _plant(side: Path, how: str) -> None:
    if side.exists():
        side.unlink()
    if how == "folder":
        side.mkdir()
    elif how == "loop":
        side.symlink_to(side.name)
    elif how == "dangling":
        side.symlink_to(f"{side.name}.gone")
    else:
        os.mkfifo(side)  # a reader's open of a pipe waits for a writer: for ever, here


def _remove(side: Path) -> None:
    if side.is_dir() and not side.is_symlink():
        shutil.rmtree(side)
    else:
        side.unlink()


def _store(folder: Path, name: str) -> tuple[Path, list[tuple[object, ...]]]:
    path = folder / name
    expected = make(path, episodes=3)
    for extra in folder.iterdir():
        if extra.name.endswith(("-wal", "-shm")):
            extra.unlink()
    return path, expected


def _lamar(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # A timeout rather than a hang: the failure this file guards against is a command that never returns.
    return subprocess.run([sys.executable, "-m", "lamar.cli", "--store", str(store), *args], capture_output=True,
                          text=True, timeout=60, check=False)


@pytest.mark.parametrize(("suffix", "how"), _SQLITE, ids=[f"{s}-{h}" for s, h in _SQLITE])
def test_a_sqlite_sidecar_that_is_no_file_is_named_with_what_to_do(tmp_path: Path, suffix: str, how: str) -> None:
    path, expected = _store(tmp_path, "s.db")
    before = path.read_bytes()
    side = tmp_path / f"s.db{suffix}"
    _plant(side, how)
    done = _lamar(path, *_ADD)
    said = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"{side} is " in said and f"move {side} away" in said, said
    assert "read-only" not in said and "disk is full" not in said, said
    assert path.read_bytes() == before  # the refused write changed nothing
    _remove(side)
    assert events_of(path) == expected  # nothing was lost: the store reads back exactly as written


@pytest.mark.parametrize("how", ["folder", "pipe"])
def test_a_json_lock_that_is_no_file_is_named_with_what_to_do(tmp_path: Path, how: str) -> None:
    path, expected = _store(tmp_path, "s.json")
    before = path.read_bytes()
    lock = tmp_path / "s.json.lock"
    _plant(lock, how)
    done = _lamar(path, *_ADD)
    said = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"{lock} is " in said and f"move {lock} away" in said and "nothing was written" in said, said
    assert path.read_bytes() == before
    _remove(lock)
    assert events_of(path) == expected


@pytest.mark.parametrize("sidecar", [".index", ".state"])
def test_a_pipe_at_a_json_stores_cache_is_passed_over_not_waited_on(tmp_path: Path, sidecar: str) -> None:
    # The index and the saved state are caches: one that cannot be read is folded again from the log.
    path, expected = _store(tmp_path, "s.json")
    _plant(tmp_path / f"s.json{sidecar}", "pipe")
    assert _lamar(path, "stats").returncode == 0
    added = _lamar(path, *_ADD)
    assert added.returncode == 0, added.stderr
    assert events_of(path)[:len(expected)] == expected and len(events_of(path)) == len(expected) + 1


def test_a_json_store_replaced_by_a_pipe_while_open_is_refused_not_waited_on(tmp_path: Path) -> None:
    # A process that keeps the store open (`lamar ui`, `lamar mcp`) reads the file again at each call.
    path, _ = _store(tmp_path, "s.json")
    script = (f"import os, sys\nfrom lamar import Lamar, StoreError\nlam = Lamar({str(path)!r})\n"
              f"os.rename({str(path)!r}, {str(path)!r} + '.moved')\nos.mkfifo({str(path)!r})\n"
              "try:\n    lam.recall({})\nexcept StoreError as exc:\n    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and f"{path} is not a file" in done.stdout, (done.stdout, done.stderr)


@pytest.mark.parametrize("how", ["mode", "owner"])
def test_a_wal_this_user_may_not_open_is_named_with_what_to_do(tmp_path: Path, how: str) -> None:
    # A writer keeps the -wal while it runs; another user's process opening the store after its mode or owner
    # changed gets Lamar's refusal naming the -wal and the fix, not SQLite's "unable to open" nor a copy's errno.
    from lamar import Experience, Lamar
    from tests.conftest import as_user

    path = tmp_path / "s.db"
    lam = Lamar(str(path))
    lam.add(Experience("a test flakes", "rerun it"))
    wal = Path(f"{path}-wal")
    assert wal.exists()
    if how == "mode":
        wal.chmod(0o000)
    else:
        os.chown(wal, 12345, 12345)
        wal.chmod(0o600)
    done = subprocess.run([*as_user(), sys.executable, "-m", "lamar.cli", "--store", str(path), "stats"],
                          capture_output=True, text=True, timeout=60, check=False)
    said = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"may not read or write its {wal}" in said and f"ls -l {wal}" in said and "never delete it" in said, said
    os.chown(wal, 0, 0)
    wal.chmod(0o644)
    lam.close()
    assert len(events_of(path)) == 1
