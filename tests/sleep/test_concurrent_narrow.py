"""A sleep report's narrowing applied in one process while another edits the lesson's action: the
narrowing applied is kept (the edit, made from the scope before it, does not undo it)."""

from __future__ import annotations

import dataclasses
import multiprocessing
import random
from multiprocessing.synchronize import Barrier

from lamar import Experience, Lamar, Scope
from lamar.sleep.proposals import SleepReport
from lamar.store import Event, open_store
from tests.at_once import at_once
from tests.policy.test_context import PYTHON, SWIFT, _reward

_ROUNDS = 4
_ACTION = "clear the module cache and the index"


def _split_lesson(location: str, round_: int) -> str:
    """A lesson randomized in Swift and Python episodes, helping in Swift and harming in Python,
    as sleep proposes to narrow (see tests/policy/test_context.py)."""
    rng = random.Random(round_)
    lesson = Experience(f"the build {round_} fails", "clear the module cache", scope=Scope(task="build"))
    lesson = lesson.with_identity()
    events = [Event("experience", lesson.to_dict(), key=f"experience:{lesson.id}")]
    for j in range(1600):
        context, injected = (SWIFT if rng.random() < 0.5 else PYTHON), rng.random() < 0.5
        effect = (0.3 if context is SWIFT else -0.3) if injected else 0.0
        ep = f"ep{round_}_{j}"
        events.append(Event("episode", {"id": ep, "context": context, "eligible": [lesson.id],
                                        "injected": [lesson.id] if injected else [],
                                        "held_out": [] if injected else [lesson.id], "p": {lesson.id: 0.5}},
                            key=f"episode:{ep}"))
        events.append(Event("outcome", {"episode": ep, "reward": _reward(rng, 0.45 + effect), "signal": None,
                                        "replace": False}, key=f"outcome:{ep}"))
    store = open_store(location)
    store.append(events)
    store.close()
    return lesson.id


def _apply(location: str, report: SleepReport, barrier: Barrier, said: multiprocessing.Queue[list[str]]) -> None:
    lam = Lamar(location, k=2, seed=1)
    lam.experiences()
    barrier.wait()
    said.put(lam.apply(report).applied)
    lam.close()


def _edit(location: str, exp_id: str, barrier: Barrier, said: multiprocessing.Queue[list[str]]) -> None:
    lam = Lamar(location, k=2, seed=1)
    lam.get(exp_id)  # the scope before the narrowing
    barrier.wait()
    lam.edit(exp_id, action=_ACTION)
    said.put([])
    lam.close()


def test_an_edit_while_another_process_narrows_keeps_the_narrowing(store_location: str) -> None:
    for round_ in range(_ROUNDS):
        lesson = _split_lesson(store_location, round_)
        lam = Lamar(store_location, k=2, seed=1)
        full = lam.sleep()
        (narrow,) = [p for p in full.of_kind("narrow") if p.experience_ids == (lesson,)]
        report = dataclasses.replace(full, proposals=[narrow])
        lam.close()
        applied = [pid for said in at_once([(_apply, (store_location, report)), (_edit, (store_location, lesson))])
                   for pid in said]
        for rebuilt in (False, True):  # as stored (PostgreSQL's lesson rows), then folded again
            lam = Lamar(store_location)
            if rebuilt:
                lam.rebuild()
            exp = lam.get(lesson)
            assert (exp.action, exp.version) == (_ACTION, 2)
            narrowed = dict(exp.scope) == narrow.payload["scope"]
            assert narrowed == (applied == [narrow.id]), f"round {round_}: applied {applied}, scope {dict(exp.scope)}"
            lam.close()


def test_an_edit_made_from_the_scope_before_a_narrowing_keeps_it() -> None:
    """The log such a race leaves, every time: the scope event, then the edit of the action, whose
    event holds the scope its editor read."""
    from lamar.edit import edit_event
    from lamar.store.memory import MemoryStore

    store = MemoryStore()
    lam = Lamar(store)
    exp_id = lam.add(Experience("the build fails", "clear the module cache", scope=Scope(task="build")))
    before = lam.get(exp_id)
    store.append([Event("scope", {"id": exp_id, "key": "language", "value": "swift"})])
    store.append([edit_event(before, action=_ACTION)])
    for engine in (lam, Lamar(store)):
        engine.rebuild()
        exp = engine.get(exp_id)
        assert (dict(exp.scope), exp.action) == ({"task": "build", "language": "swift"}, _ACTION)
        assert engine.recall({"task": "build", "language": "python"}).ids == []
