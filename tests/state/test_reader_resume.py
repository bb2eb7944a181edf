"""A reader opening an SQLite store its agents wrote resumes from their saved state (folds only the tail),
after an erase too, which drops the state."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lamar import Experience, Lamar, Scope
from tests.state.seam import folded

LESSONS = 40  # more than 16 per event of a short process's tail: a close alone would not save the state then


def _agent_store(path: Path, episodes: int = 200, **tuning: Any) -> list[str]:
    with Lamar(str(path), k=2, seed=1, **tuning) as agent:
        ids = [agent.add(Experience(f"when step {i} fails", f"do fix {i}", scope=Scope(task="t")))
               for i in range(LESSONS)]
        for n in range(episodes):
            agent.report(agent.recall({"task": "t"}).episode_id, 1.0 if n % 3 else -1.0)
    return ids


def test_an_erase_leaves_a_saved_state_the_next_reader_resumes_from(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    ids = _agent_store(path)
    with Lamar(str(path)) as eraser:  # `lamar erase`: a process that erases one lesson, then closes
        assert folded(eraser).cache.partial
        eraser.erase(ids[0], reason="a secret")
    # The erase's scrub dropped the state saved before it: the eraser saved the state of the scrubbed log.
    with Lamar(str(path)) as reader:
        assert folded(reader).cache.partial and folded(reader).state_seq == folded(reader).cache.seq
        assert reader.get(ids[0]).action == "[erased]"
    assert b"do fix 0." not in path.read_bytes()

