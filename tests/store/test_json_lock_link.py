"""A JSON store in a folder other users may write: its writers' lock, at a name anyone can foresee and into which a
write notes where it starts, is never opened through a link planted there into another file of its user."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from lamar import Experience, Lamar, StoreError


def test_a_link_planted_at_the_lock_is_refused_not_written_through(tmp_path: Path) -> None:
    store = tmp_path / "lessons.json"
    with Lamar(str(store)) as lam:
        lam.add(Experience("the build fails", "clear the cache"))
    victim = tmp_path / "elsewhere" / "notes.txt"  # any file the store's user may write, anywhere
    victim.parent.mkdir()
    victim.write_text("precious line one\nprecious line two\n")
    victim.chmod(0o600)
    lock = tmp_path / "lessons.json.lock"
    lock.unlink()
    lock.symlink_to(victim)
    with Lamar(str(store)) as lam, pytest.raises(StoreError, match="symbolic link") as refused:
        lam.add(Experience("the tests hang", "kill the stray server"))
    assert str(lock) in str(refused.value) and "remove" in str(refused.value)
    assert victim.read_text() == "precious line one\nprecious line two\n"
    assert stat.S_IMODE(victim.stat().st_mode) == 0o600
    lock.unlink()  # what the error says to do
    with Lamar(str(store)) as lam:
        lam.add(Experience("the tests hang", "kill the stray server"))
        assert lam.stats()["experiences"] == 2


def test_a_dangling_link_at_the_lock_makes_no_file(tmp_path: Path) -> None:
    store = tmp_path / "lessons.json"
    made = tmp_path / "elsewhere" / "made.txt"
    made.parent.mkdir()
    (tmp_path / "lessons.json.lock").symlink_to(made)
    with Lamar(str(store)) as lam, pytest.raises(StoreError, match="symbolic link"):
        lam.add(Experience("the build fails", "clear the cache"))
    assert not made.exists()
