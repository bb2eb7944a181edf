"""A reader opening an SQLite store its agents wrote resumes from their saved state (folds only the tail):
after an erase, which drops the state, and under the agents' tuning, which a `lamar` command takes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lamar import Experience, Lamar, Scope
from lamar.state.follower import Follower
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


def test_a_lamar_command_resumes_from_a_state_its_agents_saved_under_their_tuning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from lamar.cli import main

    path = tmp_path / "s.db"
    _agent_store(path, holdout=0.2, alpha_helps=0.05)
    resumed: list[bool] = []
    resume = Follower.resume

    def spied(self: Follower, through: int | None = None) -> bool:
        resumed.append(resume(self, through))
        return resumed[-1]

    monkeypatch.setattr(Follower, "resume", spied)
    for command in (["stats"], ["ls"]):
        assert main(["--store", str(path), *command]) == 0
    assert resumed == [True, True]
    assert "When step 39 fails" in capsys.readouterr().out



def test_a_command_takes_the_saved_states_tuning_and_the_defaults_when_it_cannot_be_used(tmp_path: Path) -> None:
    import dataclasses
    import sqlite3
    import zlib

    from lamar import Policy
    from lamar.policy.config import SETTLING
    from lamar.state.copied import agents_tuning
    from lamar.store import open_store

    path = tmp_path / "s.db"
    _agent_store(path, episodes=20, holdout=0.2, pending_after=60.0)
    tuned = {k: v for k, v in dataclasses.asdict(Policy(holdout=0.2)).items() if k not in SETTLING}
    store = open_store(str(path))
    assert agents_tuning(store) == tuned  # without the settling knobs, which only an agent needs
    store.close()
    with sqlite3.connect(path) as db:
        (text,) = db.execute("SELECT body FROM state").fetchone()
        body = text.partition("\n")[2].replace('"holdout":0.2', '"holdout":7.0')  # no engine takes it
        digest = f"{zlib.crc32(body.encode()):08x}{len(body.encode()):x}"  # as lamar.state.saved checksums it
        for edited in (text[:-3], f"{digest}\n{body}"):  # torn; whole, with a tuning no engine takes
            db.execute("UPDATE state SET body = ?", (edited,))
            db.commit()
            store = open_store(str(path))
            assert agents_tuning(store) == {}
            store.close()
    db.close()
