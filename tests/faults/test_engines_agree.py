"""Engines sharing a store read what a freshly opened engine reads, after random operations
(a short run of tools/engine_fuzz.py, whose long runs docs/guarantees.md quotes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar.store.base import Event
from tools.engine_fuzz import Run, check, perform, play


@pytest.mark.parametrize(("backend", "seed"), [("memory", 106), ("sqlite", 105)])
def test_two_engines_read_what_a_fresh_engine_reads(tmp_path: Path, backend: str, seed: int) -> None:
    # (an even seed expires every pending episode at each recall, an odd one only when settled)
    ops, found = play(backend, 2, str(tmp_path), seed, None, 80, "outcomes", 4)
    assert (len(ops), found) == (80, [])


def test_the_fuzz_sees_outcomes_a_log_holds_without_the_api_s_keys(tmp_path: Path) -> None:
    """What the old harness met (93 reports against 12): outcomes appended to the log raw, with no
    key, which the API never writes. An engine resumed from a saved state finds an episode's
    outcomes by their keys, so it counts only the keyed ones; one that folds the log counts all."""
    run = Run("sqlite", 2, str(tmp_path), 1)
    try:
        for step, op in enumerate(["add", "recall", "report", *["replace"] * 3]):
            perform(run, {"step": step, "op": op, "engine": 0, "task": "t0", "episode": 1, "signal": 0})
        episode = run.episodes[1]
        run.engines[0].store.append([Event("outcome", {"episode": episode, "reward": -0.5, "signal": None,
                                                       "replace": True}) for _ in range(5)])
        perform(run, {"step": 9, "op": "reopen", "engine": 0})  # its close saves the state
        assert run.engines[1].episode(episode).reports == 9
        assert "episode(1).reports: 9 != 4" in " ".join(check(run, whole=True))
    finally:
        run.finish()
