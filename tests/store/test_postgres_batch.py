"""PostgreSQL's fold of a write (`Batch`, lamar/store/postgres/batch.py) agrees with the engine's
in-process fold on random logs: adds, recalls, reports, replacements, retires, revives, merges and
narrows, driven through the public API of an engine whose rows `Batch` folds, in memory."""

from __future__ import annotations

import contextlib
import json
import random
from collections.abc import Iterator, Sequence
from typing import Any

from lamar import Experience, Lamar, LamarError, Scope
from lamar.experience import Status
from lamar.policy import fold
from lamar.policy.lesson import LessonState
from lamar.store import Event, MemoryStore
from lamar.store.base import RowsView
from lamar.store.postgres.batch import Batch, FoldInputs, merge_shards
from lamar.store.postgres.known import KnownRows
from lamar.store.postgres.rows import SHARDS
from tests.state.seam import folded as folded_log


class MemoryRows:
    """The fold mode's seam (`FoldedRows`) as `LessonRows` fills it, without a server: each write
    folded by `Batch` into rows held here, its reward into one of SHARDS counters; a write `Batch`
    marks stale leaves the rows to be built again from the log by the engine's own fold."""

    def __init__(self, log: MemoryStore, rng: random.Random) -> None:
        self._log, self._rng = log, rng
        self.tuning: str | None = None
        self.states: dict[str, LessonState] = {}
        self.shards: list[tuple[int, float, float]] = [(0, 0.0, 0.0)] * SHARDS
        self.active = 0
        self.batches = self.stale = self.refreshed = 0
        self.staled: str | None = None  # the tuning the last write left stale (`refresh`)

    def build(self, tuning: str, folder: Any, *, force: bool = False) -> None:
        if not force and self.tuning == tuning:
            return
        folded, rewards = folder(_as_stored(self._log.read(0)))  # the log as the server reads it back
        self.states = {s.experience.id: s.copy() for s in folded}
        self.shards = [rewards] + [(0, 0.0, 0.0)] * (SHARDS - 1)
        self.active = sum(s.experience.status is not Status.RETIRED for s in self.states.values())
        self.tuning = tuning

    def _view(self, states: list[LessonState]) -> RowsView:
        n, _, m2 = merge_shards(self.shards)
        return RowsView([s.copy() for s in states], fold.spread(n, m2), self.active, self.tuning)

    def eligible(self, context: dict[str, str]) -> RowsView:
        return self._view([s for s in self.states.values() if s.experience.status is not Status.RETIRED
                           and all(context.get(k) == v for k, v in s.experience.scope.items())])

    def lessons(self, ids: Sequence[str] | None = None) -> RowsView:
        return self._view([s for i, s in self.states.items() if ids is None or i in ids])

    def refresh(self, tuning: str, states: Any, rewards: tuple[int, float, float], active: int, through: int,
                *, whole: bool = False) -> bool:
        """As `locks.refresh`: the rows the replacement changed written from the engine's fold, when the
        last write left rows built under `tuning` stale and the log ends at `through`."""
        staled, self.staled, states = self.staled, None, [s.copy() for s in states]
        if staled != tuning or self.tuning is not None or self.settled() != through or (
                whole and len(states) != len(self.states)) or any(s.experience.id not in self.states for s in states):
            return False
        self.states.update((s.experience.id, s) for s in states)
        self.shards = [rewards] + [(0, 0.0, 0.0)] * (SHARDS - 1)
        self.active, self.tuning = active, tuning
        self.refreshed += 1
        return True

    def append(self, events: list[Event], *, strict: bool = False) -> list[Event]:
        self.staled = None
        if self.tuning is None:  # stale: the log alone, until the engine builds the rows
            return self._log.append(events)
        keys = [f"episode:{e.data.get('episode')}" for e in events if e.kind == "outcome"]
        read = FoldInputs(self.tuning, {e.key: e.data_json() for e in self._log.lookup(keys) if e.key},
                          [], list(self.shards), self.active, created=len(self.states))
        batch = Batch(KnownRows(":memory:").policy(self.tuning), [s.copy() for s in self.states.values()], read,
                      strict, ":memory:")
        out = []
        for event in events:  # as LessonRows._fold handles what a fold raises
            try:
                event = batch.fold(event)
            except LamarError:
                raise
            except (KeyError, TypeError, ValueError, AttributeError):
                batch.stale = True
            out.append(event)
        written = self._log.append(out)
        self.batches += 1
        self.states.update(batch.touched)
        self.states.update(batch.added)
        shard = self._rng.randrange(SHARDS)  # each connection adds to a shard of its own
        self.shards[shard] = merge_shards([self.shards[shard], batch.rewards])
        self.active = batch.active
        if batch.stale:
            self.stale += 1
            self.staled, self.tuning = self.tuning, None
        return written

    def settled(self) -> int:
        events = self._log.read(0)
        return events[-1].seq if events else 0

    def exclusive(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def places(self) -> dict[str, int]:
        return {exp_id: place for place, exp_id in enumerate(self.states)}

    def unscrubbed(self, after: int = 0) -> list[Event]:
        return [e for e in self._log.read(after) if e.kind == "erase" and e.data.get("pending")]

    def erasing(self) -> float | None:
        """When the oldest erase still pending was stored, read from the log here (the server's
        rows carry it in their `folded` text)."""
        return min((e.time for e in self.unscrubbed()), default=None)


class FoldStore(MemoryStore):
    """A memory store in the fold mode: every write goes through `rows`."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__()
        self.rows = MemoryRows(self._log_store(), rng)

    def _log_store(self) -> MemoryStore:
        outer = self

        class Log(MemoryStore):
            def append(self, events: Sequence[Event]) -> list[Event]:
                return MemoryStore.append(outer, events)

            def read(self, after: int = 0) -> list[Event]:
                return MemoryStore.read(outer, after)

            def lookup(self, keys: Sequence[str]) -> list[Event]:
                return MemoryStore.lookup(outer, keys)

        return Log()

    def append(self, events: Sequence[Event]) -> list[Event]:
        return self.rows.append(list(events))


def _random_log(seed: int) -> tuple[Lamar, FoldStore]:
    """An engine in the fold mode, after a random sequence of every kind of write."""
    rng = random.Random(seed)
    store = FoldStore(random.Random(seed + 1))
    lam = Lamar(store, k=rng.choice([1, 2, 3]), seed=seed)
    keys = ["task", "lang", "repo"]
    ids: list[str] = []
    recalled: list[str] = []
    reported: list[str] = []
    for step in range(rng.randrange(120, 260)):
        roll = rng.random()
        if roll < 0.08 or len(ids) < 2:
            scope = {k: rng.choice("ab") for k in keys if rng.random() < 0.4}
            ids.append(lam.add(Experience(f"case {step}", f"do {step}", scope=Scope(**scope))))
        elif roll < 0.55:
            context = {k: rng.choice("ab") for k in keys}
            recalled.append(lam.recall(context).episode_id)
        elif roll < 0.85 and recalled:
            episode = recalled.pop(rng.randrange(len(recalled)))
            if rng.random() < 0.9:  # some episodes are never reported
                lam.report(episode, rng.choice([-1.0, -0.6, 0.0, 0.3, 1.0, rng.uniform(-1, 1)]))
                reported.append(episode)
        elif roll < 0.89 and reported:
            lam.report(rng.choice(reported), rng.uniform(-1, 1), replace=True)
        elif roll < 0.93:
            target = rng.choice(ids)
            (lam.revive if lam.get(target).status is Status.RETIRED else lam.retire)(target)
        elif roll < 0.96:
            into, other = rng.sample(ids, 2)
            store.append([Event("merge", {"into": into, "from": [other]})])
        else:
            exp = lam.get(rng.choice(ids))
            free = [k for k in keys if k not in exp.scope]
            if free:
                store.append([Event("scope", {"id": exp.id, "key": free[0], "value": rng.choice("ab")})])
    return lam, store


def _as_stored(events: list[Event]) -> list[Event]:
    """Events as a store reads them back: each one's data parsed from its stored text (keys sorted)."""
    return [Event(e.kind, json.loads(e.data_json()), e.key, e.seq, e.time) for e in events]


def _replay(events: list[Event]) -> Lamar:
    """The engine's in-process fold of a log as a store reads it back, in a store of its own."""
    memory = MemoryStore()
    memory.append([Event(e.kind, e.data, e.key, 0, e.time) for e in _as_stored(events)])
    return Lamar(memory, seed=0)


@contextlib.contextmanager
def _closing(*engines: Lamar) -> Iterator[None]:
    try:
        yield
    finally:
        for lam in engines:
            lam.close()


def test_the_rows_batch_folds_agree_with_the_in_process_fold_on_random_logs() -> None:
    folded = stale = refreshed = added_late = 0
    for seed in range(40):
        lam, store = _random_log(seed)
        replay = _replay(store.read(0))
        with _closing(lam, replay):
            ids = [e.id for e in replay.experiences()]
            lam.stats()  # the fold mode folds the log for this: then every read below is of the rows
            view = store.rows.lessons()
            if view.tuning is None:  # the last write left the rows stale: the engine builds them
                lam.evidence(ids[0])
            assert {e.id: (e.status, dict(e.scope)) for e in lam.experiences()} == {
                e.id: (e.status, dict(e.scope)) for e in replay.experiences()}, seed
            rows = {s.experience.id: s for s in store.rows.lessons().states}
            ranks = {s.experience.id: s.rank for s in folded_log(replay).cache.lessons.values()}
            for exp_id in ids:
                # A lesson added after a retirement is ranked as the log's fold ranks it: every
                # lesson ever added counts, so its share of alpha is the same either way.
                assert rows[exp_id].rank == ranks[exp_id], (seed, exp_id)
                assert rows[exp_id].evidence(replay.policy, store.rows.active) == replay.evidence(exp_id), (
                    seed, exp_id)
                assert lam.evidence(exp_id) == replay.evidence(exp_id), (seed, exp_id)
            added_late += _added_after_a_retirement(store.read(0))
            folded += store.rows.batches
            stale += store.rows.stale
            refreshed += store.rows.refreshed
    print(f"40 random logs: {folded} writes folded by Batch, {stale} of them left the rows stale, {refreshed} "
          f"rewritten from the replacing engine's fold, {added_late} lessons added after a retirement")
    assert folded > 2000 and stale > 10  # replacements happened, and most writes were folded by Batch
    assert refreshed > stale // 2  # most replacements wrote the rows they changed, not a build
    assert added_late > 10  # the logs exercise the creation rank after a retirement


def _added_after_a_retirement(events: list[Event]) -> int:
    """How many experience events follow a status event that retired a lesson."""
    retired, late = False, 0
    for event in events:
        retired = retired or (event.kind == "status" and event.data.get("status") == "retired")
        late += retired and event.kind == "experience"
    return late


def test_a_batch_refuses_to_fold_a_replacement_and_marks_the_rows_stale() -> None:
    lam, store = _random_log(3)
    with _closing(lam):
        outcome = next(e for e in store.read(0) if e.kind == "outcome" and not e.data.get("replace"))
        tuning = json.dumps({"discount": 0.999})
        read = FoldInputs(tuning, {}, [], [(0, 0.0, 0.0)], 0)
        batch = Batch(KnownRows(":memory:").policy(tuning), [], read, False, ":memory:")
        batch.fold(Event("outcome", {**outcome.data, "replace": True}, key=None))
        assert batch.stale and not batch.touched
