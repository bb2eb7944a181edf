"""A checkpoint taken by another process, below what this process has folded: the state this
process saves afterwards must still let a new process find every episode."""

from __future__ import annotations

import subprocess
import sys

import pytest

from lamar import DuplicateReport, Experience, Lamar, Scope, Signal

_CHECKPOINT = "import sys\nfrom lamar import Lamar\nassert Lamar(sys.argv[1]).checkpoint()\n"


def test_a_state_saved_after_another_process_checkpointed_finds_every_episode(store_location: str) -> None:
    lam = Lamar(store_location, k=1, seed=0)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="demo")))
    first = lam.recall({"project": "demo"}).episode_id
    lam.report(first, Signal.SHIPPED)
    lam.stats()  # this engine has folded through the last event
    subprocess.run([sys.executable, "-c", _CHECKPOINT, store_location], check=True)
    for _ in range(300):  # past the point where the writer saves its state beside the log
        lam.report(lam.recall({"project": "demo"}).episode_id, Signal.SHIPPED)
    lam.stats()
    lam.close()
    reopened = Lamar(store_location)  # a new process would resume from that saved state
    assert reopened.episode(first).reports == 1
    with pytest.raises(DuplicateReport):
        reopened.report(first, Signal.REVERTED)
    reopened.close()


def test_an_engine_resumed_before_another_process_checkpointed_still_finds_every_episode(store_location: str) -> None:
    """A process resumed from a saved state finds the episodes the state left out by their keys,
    which another process's checkpoint drops: it called them unknown, and refused a late report
    of an episode it had just recalled (found by tools/engine_fuzz.py)."""
    writer = Lamar(store_location, k=1, seed=0)
    writer.add(Experience("the build fails", "clear the cache", scope=Scope(project="demo")))
    failed, shipped = (writer.recall({"project": "demo"}).episode_id for _ in range(2))
    writer.expire(failed, "the run failed")
    writer.report(shipped, Signal.SHIPPED)
    writer.close()  # saves the state: it leaves out both episodes, which the log has by key
    resumed = Lamar(store_location, k=1, seed=1)
    assert Lamar(store_location).checkpoint()
    assert resumed.episode(shipped).reports == 1
    resumed.report(failed, Signal.ACCEPTED)  # late: it replaces the expiry
    assert Lamar(store_location).episode(failed).signal == "accepted"
    resumed.close()


def test_an_outcome_another_process_checkpointed_is_refused_as_final_and_nothing_is_written(
        store_location: str) -> None:
    """An engine that folded a report before another process's checkpoint sealed it advised replace=True,
    then refused the replacement as "reported by another writer, and compacted, just now", after writing it."""
    lam = Lamar(store_location, k=1, seed=0)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="demo")))
    episode = lam.recall({"project": "demo"}).episode_id
    lam.report(episode, Signal.SHIPPED)
    assert Lamar(store_location).checkpoint()  # another process's
    before = len(lam.store.read(0))
    for replace in (False, True):
        with pytest.raises(DuplicateReport, match=r"is final: it was folded into a checkpoint") as refused:
            lam.report(episode, Signal.REVERTED, replace=replace)
        assert "replace=True" not in str(refused.value)
    assert len(lam.store.read(0)) == before  # no outcome written only to be ignored by every fold
    assert Lamar(store_location).episode(episode).signal == "shipped"
    lam.close()
