"""Two processes applying at once merges that conflict (two reports made at different times, whose
keepers differ): one merge takes effect, as if the other had been refused, and no evidence is
counted twice or moved into a lesson that is retired."""

from __future__ import annotations

import dataclasses
import multiprocessing
from multiprocessing.synchronize import Barrier

from lamar import Experience, Lamar, Status
from lamar.sleep.proposals import SleepReport
from lamar.store.base import Event
from lamar.store.memory import MemoryStore
from tests.at_once import at_once

_ROUNDS = 3


def _apply(location: str, report: SleepReport, barrier: Barrier, said: multiprocessing.Queue[list[str]]) -> None:
    lam = Lamar(location)
    lam.experiences()
    barrier.wait()  # both reports are checked against the same store
    said.put(lam.apply(report).applied)
    lam.close()


def _reports(lam: Lamar) -> tuple[SleepReport, SleepReport]:
    """The report's merge, and the same lessons merged the other way round (a report made later)."""
    report = lam.sleep()
    (merge,) = [p for p in report.proposals if p.kind == "merge"]
    (source,) = merge.payload["from"]
    other = dataclasses.replace(merge, id=f"{merge.id}_later",
                                payload={"into": source, "from": [merge.payload["into"]]})
    return dataclasses.replace(report, proposals=[merge]), dataclasses.replace(report, proposals=[other])


def test_opposite_merges_applied_at_once_keep_one_lesson(store_location: str) -> None:
    for round_ in range(_ROUNDS):
        lam = Lamar(store_location, seed=round_)
        ids = [lam.add(Experience(f"the build fails after bump {round_}", f"clear DerivedData{end}")) for end in "!."]
        for n in range(12):
            lam.report(lam.recall({}).episode_id, 1.0 if n % 3 else -1.0)
        reports = _reports(lam)
        before = [Event(e.kind, e.data, e.key, 0, e.time) for e in lam.store.read(0)]
        lam.close()
        applied = [pid for said in at_once([(_apply, (store_location, report)) for report in reports]) for pid in said]
        assert len(applied) == 1, f"round {round_}: both merges were applied ({applied})"
        (winner,) = [r for r in reports if r.proposals[0].id == applied[0]]
        # What applying the winner alone gives: the same lesson kept, with the same evidence.
        alone = Lamar(MemoryStore())
        alone.store.append(before)
        alone.rebuild()
        alone.apply(winner)
        kept = winner.proposals[0].payload["into"]
        lam = Lamar(store_location)
        for read in ("as stored", "folded again"):  # PostgreSQL's fold mode: its rows, then the log
            assert [i for i in ids if lam.get(i).status is not Status.RETIRED] == [kept], f"round {round_}, {read}"
            assert lam.evidence(kept) == alone.evidence(kept), f"round {round_}, {read}: the evidence moved twice"
            lam.rebuild()
        lam.close()
