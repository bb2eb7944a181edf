"""A JSON store its user made private stays private: a write that swaps a new file in for it, and the
files it keeps beside it (which hold its text too), take the store file's permission bits."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from lamar import Experience, Lamar
from lamar.store import json_file


def _modes(folder: Path) -> dict[str, str]:
    # the lock file holds no text of the store, only where a write starts
    return {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in folder.iterdir() if p.suffix != ".lock"}


@pytest.fixture(autouse=True)
def _wide_umask() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_an_empty_private_file_stays_private_once_the_first_write_makes_it_a_store(tmp_path: Path) -> None:
    with tempfile.NamedTemporaryFile(suffix=".json", dir=tmp_path, delete=False) as made:  # made 0600
        name = Path(made.name).name
    with Lamar(made.name) as lam:
        lam.add(Experience("the build fails", "retry"))
    with Lamar(made.name) as lam:
        assert len(lam.experiences()) == 1
    modes = _modes(tmp_path)
    assert name in modes and f"{name}.state" in modes
    assert modes == dict.fromkeys(modes, oct(0o600))


def test_a_private_store_stays_private_through_an_erase_and_its_index(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "lessons.json"
    with Lamar(str(path)) as lam:
        kept = lam.add(Experience("the build fails", "retry"))
        gone = lam.add(Experience("the deploy fails", "roll back"))
    path.chmod(0o640)
    for name in (f"{path.name}.state", f"{path.name}.index"):
        (tmp_path / name).unlink(missing_ok=True)
    monkeypatch.setattr(json_file, "_INDEX_EVERY", 2)  # a writer saves an index past two lines
    with Lamar(str(path)) as lam:
        lam.erase(gone)  # the whole file is written anew and swapped in
        lam.add(Experience("the tests hang", "kill the stray server"))
        assert kept in {e.id for e in lam.experiences()}
    modes = _modes(tmp_path)
    assert {path.name, f"{path.name}.state", f"{path.name}.index"} <= set(modes)
    assert modes == dict.fromkeys(modes, oct(0o640))
