"""An erase killed behind its event, before or after it scrubbed the text, while another engine
that folded the lesson before the erase saves its state: every read shows the lesson erased and
retired, and a second erase finishes what the first left."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from lamar import Lamar
from lamar.conformance_erase import erase_stopped_behind_its_event
from lamar.state import erasure
from tests.at_once import _CONTEXT
from tests.state.test_erase_window import _copies, _steps, _writer

_WHEN = ["before the scrub", "after the scrub"]


def _erase_killed(location: str, exp_id: str, when: str, steps: Any) -> None:
    """Erase, and stop for good behind the erase event, before or after the scrub of the text."""
    lam = Lamar(location, k=2, seed=2)
    scrub = lam.store.scrub  # type: ignore[attr-defined]

    def stopping(events: Any) -> int:
        if events and when == "before the scrub":
            steps["stopped"].set()
            steps["never"].wait(120)
        done: int = scrub(events)
        if events:
            steps["stopped"].set()
            steps["never"].wait(120)
        return done

    lam.store.scrub = stopping  # type: ignore[attr-defined]
    lam.erase(exp_id, by="ops")


def _killed(location: str, when: str) -> str:
    """The store as an erase killed `when` leaves it, once an engine that folded the lesson before
    the erase has closed (trying to save its state); the lesson's id."""
    writer, exp_id = _writer(location)
    steps = _steps("stopped", "never")
    eraser = _CONTEXT.Process(target=_erase_killed, args=(location, exp_id, when, steps))
    eraser.start()
    try:
        assert steps["stopped"].wait(60)
        os.kill(eraser.pid or 0, signal.SIGKILL)
    finally:
        eraser.join(60)
    writer.close()  # its fold predates the erase event: every store refuses to save it
    return exp_id


@pytest.mark.parametrize("when", _WHEN)
@pytest.mark.parametrize("suffix", ["db", "json"])
def test_a_reopen_after_an_erase_killed_mid_way_agrees_with_a_rebuild(tmp_path: Path, suffix: str, when: str) -> None:
    location = str(tmp_path / f"shared.{suffix}")
    exp_id = _killed(location, when)
    reopened = Lamar(location)
    shown = reopened.get(exp_id)
    reopened.rebuild()
    folded = reopened.get(exp_id)
    reopened.close()
    assert (shown.action, shown.status) == (folded.action, folded.status) == ("[erased]", folded.status.RETIRED)


@pytest.mark.parametrize("when", _WHEN)
@pytest.mark.parametrize("suffix", ["db", "json"])
def test_a_lesson_whose_erase_was_killed_is_never_injected_and_erasing_again_removes_its_text(
        tmp_path: Path, suffix: str, when: str) -> None:
    location = str(tmp_path / f"shared.{suffix}")
    exp_id = _killed(location, when)
    lam = Lamar(location, seed=3)
    injected = sum(exp_id in [e.id for e in lam.recall({"task": "x"}).experiences] for _ in range(50))
    assert injected == 0
    done = lam.erase(exp_id)  # what the killed erase left: its own event stands, none is added
    lam.close()
    assert done.again and done.by == "ops"
    assert _copies(location) == []


@pytest.mark.parametrize("suffix", ["db", "json"])
def test_the_next_engine_that_writes_finishes_the_scrub_of_an_erase_killed_behind_its_event(
        tmp_path: Path, monkeypatch: Any, suffix: str) -> None:
    location = str(tmp_path / f"shared.{suffix}")
    exp_id = _killed(location, "before the scrub")
    assert _copies(location) != []
    reader = Lamar(location)  # an engine that only reads leaves the store as it was
    reader.stats()
    reader.close()
    assert _copies(location) != []
    lam = Lamar(location, seed=3)
    lam.recall({"task": "x"})  # a writer, before the eraser's grace ran out: the eraser may still scrub
    assert _copies(location) != []
    monkeypatch.setattr(erasure, "GRACE", 0.0)
    lam.recall({"task": "x"})
    assert _copies(location) == []
    assert lam.get(exp_id).action == "[erased]"
    done = lam.erase(exp_id)  # nothing is left to do
    lam.close()
    assert (done.again, done.events) == (True, 0)
    assert _copies(location) == []


def test_a_checkpoint_finishes_the_scrub_of_an_erase_stopped_behind_its_event_first(tmp_path: Path) -> None:
    # The snapshot takes the pending erase event out of the log, and a rewrite frees the replaced
    # rows without compacting: where SQLite does not zero freed pages, they kept the text for good.

    from lamar.experience import Experience

    secret = "Quorvath Zellaby"
    location = str(tmp_path / "s.db")
    lam = Lamar(location, k=2, seed=0)
    exp_id = lam.add(Experience("the build fails", f"page {secret} " + "x" * 2000))
    for i in range(30):  # versions that the snapshot does not keep, so the rewrite frees pages
        lam.edit(exp_id, action=f"page {secret} again, {i} " + "y" * 2000)
    erase_stopped_behind_its_event(lam, exp_id)
    lam.close()
    lam = Lamar(location, k=2, seed=0)
    lam.store._db.execute("PRAGMA secure_delete = OFF")  # type: ignore[attr-defined]  # a build without it
    lam.recall({"task": "x"})  # a writer, within the eraser's grace
    assert lam.checkpoint() is True
    lam.close()
    assert not any(secret.encode() in p.read_bytes() for p in tmp_path.iterdir() if p.is_file())


def test_a_store_that_cannot_scrub_still_saves_its_state_past_a_pending_erase(tmp_path: Path) -> None:
    # A pending erase event copied into a store with no scrub (a custom backend, by `transfer`)
    # can never be finished there: refusing to save for its sake would fold the whole log on
    # every open, for good.

    from lamar import ExperienceStore
    from lamar.experience import Experience
    from lamar.store.base import ErasableStore

    class NoScrub:
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def __getattr__(self, name: str) -> Any:
            if name == "scrub":
                raise AttributeError(name)
            return getattr(self._inner, name)

    location = str(tmp_path / "s.json")
    lam = Lamar(location, k=2, seed=0)
    exp_id = lam.add(Experience("the build fails", "page Quorvath"))
    erase_stopped_behind_its_event(lam, exp_id)
    lam.close()
    store = NoScrub(ExperienceStore(location))
    assert not isinstance(store, ErasableStore)
    lam = Lamar(store, k=2, seed=0)  # type: ignore[arg-type]
    lam.report(lam.recall({"task": "x"}).episode_id, 1.0)
    lam.close()
    assert ExperienceStore(location).load_state() is not None  # type: ignore[attr-defined]
