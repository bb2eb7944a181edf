"""A store in a folder other users may write: the hook's files beside it (its log, its state's temporary copy, named
after the process id any user sees) are never written through a link planted at their names."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lamar_claude_code import quick, state


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    victim = tmp_path / "home" / ".bashrc"  # any file the hook's user may write
    victim.parent.mkdir()
    victim.write_text("precious\n")
    victim.chmod(0o600)
    return victim


def _untouched(victim: Path) -> bool:
    return victim.read_text() == "precious\n" and stat.S_IMODE(victim.stat().st_mode) == 0o600


def test_a_link_at_the_hook_logs_name_is_not_appended_through(tmp_path: Path, victim: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # where the line goes instead
    store = tmp_path / "shared" / "lessons.db"
    store.parent.mkdir()
    log = state.sidecar(str(store), "log")
    log.symlink_to(victim)
    state.log_line(log, "recall: ok; echo owned")
    quick._note(str(store), "the fast path: ok; echo owned")
    assert _untouched(victim)
    assert "echo owned" in (tmp_path / "home" / ".lamar" / "claude-code.log").read_text()  # not lost


def test_a_link_at_the_states_temporary_name_is_replaced_not_followed(tmp_path: Path, victim: Path) -> None:
    path = state.sidecar(str(tmp_path / "lessons.db"), "state")
    (tmp_path / f".{path.name}.{os.getpid()}.tmp").symlink_to(victim)
    state.write_atomically(path, b'{"version": 1}')
    assert _untouched(victim)
    assert path.read_bytes() == b'{"version": 1}' and not path.is_symlink()
