"""A report overtaken by another writer's outcome of the same episode, stored between its read of the log and
its write: with `replace=True` it replaces that outcome, and a late report replaces a default, on every backend
that many writers share."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from lamar import DuplicateReport, Experience, Lamar, Scope
from lamar.store import open_store
from lamar.store.base import Event, folded_rows


def test_a_replacement_overtaken_by_another_writer_replaces_its_outcome(store_location: str) -> None:
    setup = Lamar(open_store(store_location), k=2, seed=1)
    for i in range(2):
        setup.add(Experience(f"case {i}", f"do {i}", scope=Scope(project="svc")))
    episode = setup.recall({"project": "svc"}).episode_id
    setup.close()
    other = Lamar(open_store(store_location), k=2, seed=2)
    store = open_store(store_location)
    append = store.append
    overtaken: list[str] = []

    def other_first(events: list[Event]) -> list[Event]:
        # The other writer's report lands after this engine read the log and before its write.
        if not overtaken and any(event.kind == "outcome" for event in events):
            overtaken.append(episode)
            other.report(episode, -1.0)
        return append(events)

    store.append = other_first  # type: ignore[method-assign]
    lam = Lamar(store, k=2, seed=3)
    lam.recall({"project": "svc"})  # this engine has folded the episode, unreported
    lam.report(episode, 1.0, replace=True)
    assert overtaken == [episode]
    lam.close()
    other.close()
    reopened = Lamar(open_store(store_location), k=2, seed=4)
    assert reopened.stats()["reports"] == 1  # one outcome counted: the replacement, not both
    outcomes = [e.data for e in reopened.store.read(0) if e.kind == "outcome"]
    assert [(o["reward"], o["replace"]) for o in outcomes] == [(-1.0, False), (1.0, True)]
    lessons = [exp.id for exp in reopened.experiences()]
    held = [reopened.evidence(exp_id).to_dict() for exp_id in lessons]
    reopened.rebuild()  # the fold this engine opened on (the rows, in the fold mode) is the log's
    assert [reopened.evidence(exp_id).to_dict() for exp_id in lessons] == held
    reopened.close()


@pytest.mark.parametrize("backend", ["sqlite", "json"])
def test_a_replacement_overtaken_at_every_try_says_nothing_of_it_was_stored(tmp_path: Path, backend: str) -> None:
    location = str(tmp_path / f"shared.{'db' if backend == 'sqlite' else 'json'}")
    lam = Lamar(open_store(location), k=2, seed=1)
    lam.add(Experience("case", "do", scope=Scope(project="svc")))
    episode = lam.recall({"project": "svc"}).episode_id
    lam.close()
    other = Lamar(open_store(location), k=2, seed=2)
    store = open_store(location)
    append = store.append
    overtakings: list[float] = []

    def other_first(events: list[Event]) -> list[Event]:
        if any(event.kind == "outcome" for event in events):  # at every try
            overtakings.append(-1.0)
            other.report(episode, -1.0, replace=True)
        return append(events)

    store.append = other_first  # type: ignore[method-assign]
    lam = Lamar(store, k=2, seed=3)
    with pytest.raises(DuplicateReport, match="each of the 7 times") as refused:
        lam.report(episode, 1.0, replace=True)
    assert refused.value.advice == "; nothing of it was stored: report it again with replace=True"
    assert len(overtakings) == 7
    lam.close()
    other.close()
    reopened = Lamar(open_store(location), k=2, seed=4)
    rewards = [e.data["reward"] for e in reopened.store.read(0) if e.kind == "outcome"]
    assert rewards == [-1.0] * 7  # the other writer's seven, none of this one's
    reopened.close()


def test_a_late_report_overtaken_by_another_process_settling_its_default_replaces_the_default(
        store_location: str) -> None:
    settler = Lamar(open_store(store_location), k=2, seed=1, pending_after=60.0, pending_outcome="reasked")
    settler.add(Experience("case", "do", scope=Scope(project="svc")))
    episode = settler.recall({"project": "svc"}).episode_id
    store = open_store(store_location)
    writer: Any = folded_rows(store) or store  # a first report in PostgreSQL's fold mode is written by its rows
    append = writer.append
    settled: list[str] = []

    def settled_first(events: list[Event], **options: Any) -> list[Event]:
        # The other process gives the episode its default after this engine read the log, before its write.
        if not settled and any(event.kind == "outcome" for event in events):
            settled.extend(settler.settle_pending(now=time.time() + 3600))
        return append(events, **options)  # type: ignore[no-any-return]

    writer.append = settled_first
    lam = Lamar(store, k=2, seed=3)
    lam.recall({"project": "svc"})
    lam.report(episode, "shipped")  # a late report replaces a default without replace=True
    assert episode in settled
    lam.close()
    settler.close()
    reopened = Lamar(open_store(store_location), k=2, seed=4)
    outcomes = [e.data for e in reopened.store.read(0) if e.kind == "outcome" and e.data["episode"] == episode]
    assert [(o["signal"], bool(o.get("default")), o["replace"]) for o in outcomes] == [
        ("reasked", True, False), ("shipped", False, True)]
    reopened.close()
