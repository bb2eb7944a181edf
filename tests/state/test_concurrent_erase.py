"""A lesson edited in one process while another erases it: the result is one of the two serial
orders (edited then erased, or erased and the edit refused), and no stored event keeps a text."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
from multiprocessing.synchronize import Barrier

import pytest

from lamar import EventConflict, Experience, InvalidExperience, Lamar
from lamar.policy.fold import ERASED
from lamar.store.base import Event
from lamar.store.memory import MemoryStore
from tests.at_once import at_once

_ROUNDS = 4
_OLD, _NEW = "ask Ottoline Brandquist for the log", "ask Ottoline Brandquist for the core dump"


def _edit(location: str, exp_id: str, barrier: Barrier, said: multiprocessing.Queue[str]) -> None:
    lam = Lamar(location)
    lam.get(exp_id)  # read as an editor does before it edits
    barrier.wait()
    try:
        lam.edit(exp_id, action=_NEW)
        said.put("edited")
    except EventConflict:  # the erase took the next version: reading it again shows it erased
        said.put("refused")
    except InvalidExperience:  # the erase was stored before the edit read the lesson again
        said.put("refused")
    lam.close()


def _erase(location: str, exp_id: str, barrier: Barrier, said: multiprocessing.Queue[str]) -> None:
    lam = Lamar(location)
    lam.get(exp_id)
    barrier.wait()
    lam.erase(exp_id, by="ops")
    said.put("erased")
    lam.close()


def test_an_edit_while_another_process_erases_leaves_no_text(store_location: str) -> None:
    for round_ in range(_ROUNDS):
        lam = Lamar(store_location)
        exp_id = lam.add(Experience(f"the crash of round {round_} is reported", _OLD))
        lam.close()
        outcomes = sorted(at_once([(job, (store_location, exp_id)) for job in (_edit, _erase)]))
        lam = Lamar(store_location)
        stored = json.dumps([event.data for event in lam.store.read(0)])
        assert "Ottoline" not in stored, f"round {round_} ({outcomes}): a stored event keeps the text"
        exp = lam.get(exp_id)
        assert (exp.precondition, exp.action, exp.provenance.get("erased", {}).get("by")) == (ERASED, ERASED, "ops")
        assert exp.version == (2 if "edited" in outcomes else 1), f"round {round_}: {outcomes}"
        lam.close()


def test_an_edit_stored_after_the_erase_brings_no_text_back() -> None:
    """A stale edit the erase's key did not stop (a checkpoint dropped it): the fold keeps the
    lesson erased, as it does for the scrubbed edits before the erase."""
    store = MemoryStore()
    lam = Lamar(store)
    exp_id = lam.add(Experience("the crash is reported", _OLD))
    lam.erase(exp_id, by="ops")
    store.append([Event("edit", {"id": exp_id, "version": 2, "precondition": "the crash is reported",
                                 "action": _NEW, "rationale": "", "scope": {}, "changed": ["action"],
                                 "evidence": "restart", "reason": "r"})])
    for engine in (lam, Lamar(store)):
        engine.rebuild()
        exp = engine.get(exp_id)
        assert (exp.precondition, exp.action, exp.version) == (ERASED, ERASED, 2)


def test_an_engine_that_folded_a_lesson_before_another_erased_it_saves_no_text_at_close(
        store_location: str) -> None:
    """The writer's cache still holds the text when it closes: the state it saves beside the log
    is folded from the scrubbed log, not from that cache."""
    writer = Lamar(store_location, k=2, seed=1)
    for i in range(3):
        writer.add(Experience(f"case {i}", f"do {i}"))
    exp_id = writer.add(Experience("the crash is reported", _OLD))
    for _ in range(40):  # enough writes since its last save for close to save the state
        writer.report(writer.recall({"task": "x"}).episode_id, 0.5)
    # PostgreSQL's fold-mode writes fold nothing here: a call that needs the whole fold does.
    writer.stats()
    eraser = Lamar(store_location, k=2, seed=2)
    eraser.erase(exp_id, by="ops")
    writer.close()
    state = eraser.store.load_state()  # type: ignore[attr-defined]
    assert state is not None and "Ottoline" not in state
    eraser.close()
    lam = Lamar(store_location)
    assert lam.get(exp_id).action == ERASED and lam.stats()["episodes"] == 40
    lam.close()


_ERASE = "import sys\nfrom lamar import Lamar\nwith Lamar(sys.argv[1]) as lam:\n    lam.erase(sys.argv[2], by='ops')\n"


def test_two_erases_at_once_leave_neither_text_in_the_checkpoint_both_lessons_are_in(
        store_location: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each erase rewrites the snapshot both lessons are in from the log as it read it: here another
    process erases the second lesson between this erase's read and its write, whose snapshot put
    the second lesson's text back; both erases had returned."""
    lam = Lamar(store_location)
    first = lam.add(Experience("Ottoline Brandquist reports a crash", "ask Ottoline Brandquist for the log"))
    second = lam.add(Experience("Aurelio Fenwick reports a hang", "ask Aurelio Fenwick for the trace"))
    lam.report(lam.recall({}).episode_id, 1.0)
    assert lam.checkpoint()
    scrub, erased = lam.store.scrub, []  # type: ignore[attr-defined]

    def another_process_erases_meanwhile(events: list[Event]) -> int:
        if events and not erased:
            erased.append(subprocess.run([sys.executable, "-c", _ERASE, store_location, second],
                                         capture_output=True, text=True, timeout=60, check=False))
        return int(scrub(events))

    monkeypatch.setattr(lam.store, "scrub", another_process_erases_meanwhile)
    lam.erase(first, by="ops")
    assert erased[0].returncode == 0, erased[0].stderr
    lam.close()
    with Lamar(store_location) as fresh:
        stored = json.dumps([event.data for event in fresh.store.read(0)])
        assert (fresh.get(first).action, fresh.get(second).action) == (ERASED, ERASED)
    assert "Ottoline" not in stored
    assert "Aurelio" not in stored
