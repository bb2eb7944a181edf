"""A store in a folder other users may write: the hook's files beside it (its log, its state's temporary copy, named
after the process id any user sees) are never written through a link planted at their names."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lamar import StoreError
from lamar.sleep.traces import Trace, TraceWriter, load_traces
from lamar_claude_code import quick, state

from .conftest import Hook, payload
from .test_claude_code_transcript import FIRST, SECOND, _transcript


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


def test_a_link_at_the_traces_name_is_not_written_through(hook: Hook, repo: Path, tmp_path: Path) -> None:
    victim = tmp_path / "elsewhere" / ".bashrc"  # the hook fixture has made its own home
    victim.parent.mkdir()
    victim.write_text("precious\n")
    victim.chmod(0o600)
    traces = hook.store.with_name(hook.store.name + ".claude-code.traces.jsonl")
    traces.symlink_to(victim)  # planted before the session's prompts are traced
    transcript = _transcript(tmp_path, "linked")
    for prompt in (FIRST, SECOND):
        event = payload("UserPromptSubmit", "linked", repo, prompt=prompt)
        event["transcript_path"] = str(transcript)
        assert hook(event).returncode == 0
    end = payload("SessionEnd", "linked", repo, reason="other")
    end["transcript_path"] = str(transcript)
    assert hook(end).returncode == 0
    assert _untouched(victim) and traces.is_symlink()
    assert f"{traces}: it is a symbolic link" in hook.log_file.read_text()  # said where `status` shows it
    traces.unlink()  # as the log says to
    assert hook(end).returncode == 0
    assert [t.id for t in load_traces(traces)] == ["cc-linked-1", "cc-linked-2"]


def test_a_trace_writer_follows_a_link_named_to_it_but_never_one_planted_later(tmp_path: Path) -> None:
    kept = tmp_path / "data" / "traces.jsonl"
    kept.parent.mkdir()
    named = tmp_path / "traces.jsonl"
    named.symlink_to(kept)  # a user's own link: where the traces are kept
    writer = TraceWriter(named)
    writer.write(Trace("t1", {"project": "x"}, outcome="shipped"))
    assert [t.id for t in load_traces(kept)] == ["t1"]
    other = tmp_path / "elsewhere.jsonl"
    other.write_text("precious\n")
    kept.unlink()
    kept.symlink_to(other)  # planted at the file's name once the writer was made
    with pytest.raises(StoreError, match="symbolic link"):
        writer.write(Trace("t2", {"project": "x"}, outcome="shipped"))
    assert other.read_text() == "precious\n"
