"""A gym run of lamar on its own memory store writes no saved state, and its rows are those of a
run on a memory store that does (the state is a cache: no decision reads it)."""

from __future__ import annotations

from typing import Any

import pytest

import lamar.state.follower
from lamar import Lamar
from lamar.gym import GymConfig
from lamar.gym.policies import LamarPolicy
from lamar.gym.runner import run_job
from lamar.store import MemoryStore

# Long enough for several saves had the engine kept its state (one per 512 events at least).
CONFIG = GymConfig(episodes=1500, seeds=1, workers=1)


def _rows(monkeypatch: pytest.MonkeyPatch, shared: bool) -> tuple[dict[str, Any], int]:
    """The lamar job's rows (CPU seconds left out), and how many state texts the run wrote."""
    texts = [0]
    state_text = lamar.state.follower.state_text

    def counted(*args: Any) -> str:
        texts[0] += 1
        return state_text(*args)

    with monkeypatch.context() as patch:
        patch.setattr(lamar.state.follower, "state_text", counted)
        if shared:  # a store handed to the engine: others may open it, so its state is saved as it runs
            patch.setattr(LamarPolicy, "engine", lambda self, k, seed, tuning: Lamar(MemoryStore(), k=k, seed=seed))
        rows = run_job(CONFIG, "lamar", 0)
    rows.pop("cpu")
    return rows, texts[0]


def test_a_gym_run_writes_no_state_text_and_decides_as_a_run_that_does(monkeypatch: pytest.MonkeyPatch) -> None:
    rows, texts = _rows(monkeypatch, shared=False)
    forced, forced_texts = _rows(monkeypatch, shared=True)
    assert texts == 0
    assert forced_texts > 2  # the state was written, several times, in the run compared
    assert rows == forced
