"""A pipe planted at the name of a file the hooks keep beside the store (their state, its recall note, its lock,
their log): the hook waits on none of them, so the turn keeps its lessons, and says in a log which file to move."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.hook_answers import lessons_given

from .conftest import Hook, payload


def _budget(hook: Hook, seconds: int) -> None:
    # Short, so that a hook stuck on a pipe ends at the budget (injecting nothing) rather than at the test's timeout.
    (Path(hook.env["HOME"]) / ".lamar" / "claude-code.toml").write_text(f"[hook]\nbudget_seconds = {seconds}\n")


@pytest.mark.parametrize("name", [".claude-code.state.json", ".claude-code.state.json.recalling"])
def test_a_pipe_at_the_state_or_its_note_costs_the_turn_nothing(hook: Hook, repo: Path, name: str) -> None:
    _budget(hook, 8)
    pipe = hook.store.with_name(hook.store.name + name)
    os.mkfifo(pipe)
    done = hook(payload("UserPromptSubmit", "s1", repo, prompt="the tests fail"))
    assert done.returncode == 0
    assert "over the 8s budget" not in (hook.log_file.read_text() if hook.log_file.exists() else "")
    lessons_given(hook.store, "s1", done.stdout, "the tests fail")  # the prompt got its own episode
    assert hook.state_file.is_file()  # the state written in the pipe's place


def test_a_pipe_at_the_states_lock_is_named_in_the_log(hook: Hook, repo: Path) -> None:
    _budget(hook, 8)
    lock = hook.store.with_name(hook.store.name + ".claude-code.state.json.lock")
    os.mkfifo(lock)
    done = hook(payload("UserPromptSubmit", "s1", repo, prompt="the tests fail"))
    assert (done.returncode, done.stdout) == (0, b"")
    (line,) = hook.log_file.read_text().splitlines()
    assert f"{lock} is a pipe, not a file: move it away" in line, line


def test_a_pipe_at_the_log_sends_its_line_to_the_home_folder(hook: Hook, repo: Path) -> None:
    _budget(hook, 8)
    os.mkfifo(hook.log_file)
    event = {**payload("UserPromptSubmit", "s1", repo, prompt="the tests fail"), "session_id": 42}
    done = hook(None, raw=json.dumps(event).encode())
    assert (done.returncode, done.stdout) == (0, b"")
    (line,) = (Path(hook.env["HOME"]) / ".lamar" / "claude-code.log").read_text().splitlines()
    assert f"{hook.log_file} could not be written" in line and "is a pipe, not a file: move it away" in line, line
