"""Stores in ~/.lamar are their user's alone: a new SQLite file (and its -wal and -shm) is 0600 whatever the
umask, and a ~/.lamar left open to others is closed when Lamar opens a store there, saying so once."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lamar import Experience, Lamar


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A HOME of the test's own, under the umask most systems give (files 0644, folders 0755)."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    before = os.umask(0o022)
    try:
        yield folder
    finally:
        os.umask(before)


def test_a_new_sqlite_store_in_lamar_home_and_its_wal_and_shm_are_private(home: Path) -> None:
    path = home / ".lamar" / "experience.db"
    with Lamar(str(path)) as lam:
        lam.add(Experience("the build fails", "clear the cache"))
        made = {p.name: _mode(p) for p in path.parent.iterdir()}
    assert made == {"experience.db": 0o600, "experience.db-wal": 0o600, "experience.db-shm": 0o600}
    assert _mode(path.parent) == 0o700


def test_a_store_elsewhere_keeps_the_umasks_mode(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "shared" / "team.db"
    Lamar(str(path)).close()
    assert (_mode(path), _mode(path.parent)) == (0o644, 0o755)  # a team's folder is the team's to set


def test_an_open_lamar_home_is_closed_when_a_store_there_opens_and_said_once(home: Path) -> None:
    path = home / ".lamar" / "experience.json"
    with Lamar(str(path)) as lam:
        lam.add(Experience("the build fails", "clear the cache"))
    os.chmod(path.parent, 0o755)  # made so before Lamar closed it, or by hand

    def ls() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "lamar.cli", "ls"], capture_output=True, text=True,
                              env={**{k: v for k, v in os.environ.items() if k != "LAMAR_STORE"}, "HOME": str(home)},
                              cwd=home, timeout=60, check=False)

    first = ls()
    assert first.returncode == 0 and "clear the cache" in first.stdout, first.stderr
    assert first.stderr == (f"lamar: made {path.parent} readable by you alone (chmod 700, it was 755): the lessons, "
                            "prompts and reports Lamar keeps there are yours\n")
    assert _mode(path.parent) == 0o700
    again = ls()
    assert again.returncode == 0 and again.stderr == "", again.stderr


def test_a_folder_outside_lamar_home_is_made_private_but_an_existing_one_keeps_its_mode(
        home: Path, tmp_path: Path) -> None:
    from lamar.atomic import own_folder

    project = tmp_path / "project"  # where `lamar ui --store project/lamar.db` puts its sleep report
    project.mkdir(mode=0o755)
    own_folder(project)
    own_folder(project / "reports")
    assert (_mode(project), _mode(project / "reports")) == (0o755, 0o700)


def test_a_folder_is_made_without_a_home_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lamar import atomic

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(atomic, "lamar_home", no_home)  # no HOME, no entry in the password database
    atomic.own_folder(tmp_path / "cache" / "lamar")
    assert _mode(tmp_path / "cache" / "lamar") == 0o700
