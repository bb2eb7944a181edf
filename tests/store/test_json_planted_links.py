"""A JSON store in a folder other users may write: a link planted at the name of one of its temporary files (the
writer's process id is no secret) never has the store's text written through it into another file of its user."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Signal
from lamar.store.files import create_like


def _victim(folder: Path) -> Path:
    victim = folder / "elsewhere" / "notes.txt"  # any file the store's user may write, anywhere
    victim.parent.mkdir()
    victim.write_text("precious\n")
    victim.chmod(0o600)
    return victim


def test_a_link_planted_at_the_saved_states_temporary_name_is_not_written_through(tmp_path: Path) -> None:
    store = tmp_path / "lessons.json"
    lam = Lamar(str(store), seed=1)
    lam.add(Experience("the build fails", "clear the cache"))
    for _ in range(30):
        lam.report(lam.recall({}).episode_id, Signal.SHIPPED)
    victim = _victim(tmp_path)
    # planted after the last write, whose lock removed the temporary files it found: the state is saved at close
    (tmp_path / f".lessons.json.state.{os.getpid()}.tmp").symlink_to(victim)
    lam.close()

    assert victim.read_text() == "precious\n" and stat.S_IMODE(victim.stat().st_mode) == 0o600
    state = tmp_path / "lessons.json.state"
    assert state.is_file() and not state.is_symlink()  # the state went where it belongs
    with Lamar(str(store)) as again:
        assert again.stats()["episodes"] == 30


@pytest.mark.parametrize("name", [".lessons.json.{pid}.tmp", ".lessons.json.index.{pid}.tmp"])
def test_a_link_at_any_temporary_name_is_replaced_not_followed(tmp_path: Path, name: str) -> None:
    # the rewrite's and the index's names, planted after the writers' lock swept the folder
    store = tmp_path / "lessons.json"
    store.write_text("")
    victim, dangling = _victim(tmp_path), tmp_path / "elsewhere" / "made.txt"
    for target, planted in ((victim, tmp_path / name.format(pid=os.getpid())), (dangling, tmp_path / "other.tmp")):
        planted.symlink_to(target)
        with os.fdopen(create_like(planted, store), "wb") as fh:
            fh.write(b"the store's text\n")
        assert not planted.is_symlink() and planted.read_bytes() == b"the store's text\n"
    assert victim.read_text() == "precious\n" and stat.S_IMODE(victim.stat().st_mode) == 0o600
    assert not dangling.exists()
