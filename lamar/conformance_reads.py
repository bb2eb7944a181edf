"""The store conformance suite's part on what engines read back: the lessons in the order they were added
(from every engine, across processes), and what `lamar whatif` reads beyond the events, the stored
texts (`TextStore`) and the episode table (`EpisodeTableStore`), each where a backend has it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lamar._errors import CorruptStore
from lamar.engine import Lamar
from lamar.experience import Experience, Scope
from lamar.signals import Signal
from lamar.store.base import Event, KeyedStore, RewritableStore, TextStore, folded_rows
from lamar.store.memory import MemoryStore

# A writer adding lessons from the start line on, noting for each add its id, when it began and
# ended (CLOCK_MONOTONIC: one clock for every process on the machine) and the ids it then lists.
ADDER = textwrap.dedent(
    """
    import json, os, sys, time
    sys.path[:0] = {paths!r}
    from lamar import Experience, Lamar, Scope
    {opener}
    lam = Lamar(open_store({location!r}), seed=0)
    lam.experiences()
    open({ready!r}, "w").close()
    while not os.path.exists({go!r}):
        time.sleep(0.002)
    adds = []
    for i in range({count}):
        began = time.monotonic()
        added = lam.add(Experience("writer {name} case %d" % i, "do %d" % i, scope=Scope(task="t%d" % (i % 2))))
        adds.append([added, began, time.monotonic(), [e.id for e in lam.experiences()]])
    lam.close()
    print(json.dumps(adds))
    """
)


def _walked(engine: Lamar, status: str | None, context: dict[str, str] | None, listed: list[str]) -> list[str]:
    """The ids on every `Lamar.page` of two lessons, from the first, each page checked against `listed`
    (every lesson in order): its places name its lessons, and its count is the whole walk's."""
    walked: list[str] = []
    counts: set[int] = set()
    start: int | None = 0
    while start is not None:
        page = engine.page(start, 2, status=status, context=context)
        ids = [e.id for e in page.lessons]
        if [listed[at] for at in page.places] != ids or (page.next is not None and len(ids) < 2):
            raise AssertionError(f"page from {start}: places {page.places} for {ids} of {listed}")
        walked, start = walked + ids, page.next
        counts.add(page.count)
    if counts != {len(walked)}:
        raise AssertionError(f"counts {counts} for {len(walked)} lessons walked")
    return walked


if TYPE_CHECKING:  # type checkers see the TestCase this mixin is used with
    from unittest import TestCase

    _Case = TestCase
else:  # at run time a plain class: neither unittest nor pytest collects the suite, only a subclass
    _Case = object


class ReadsConformance(_Case):
    """Mixed into `lamar.conformance.StoreConformance`, which says where a store lives and what it can do."""

    loc: str
    folder: Path
    opener: str
    persistent: bool
    rewritable: bool
    erasable: bool

    def open(self, location: str) -> Any:
        raise NotImplementedError

    def opened(self) -> Any:
        """The store under test, closed when the test ends (`StoreConformance.opened`)."""
        raise NotImplementedError

    def _require(self, *capabilities: str) -> None:
        raise NotImplementedError

    def test_every_engine_lists_the_lessons_in_the_order_they_were_added(self) -> None:
        # Engines pick the first of two copies, draw coins and break ties in this order: two engines
        # on one store, and one that opens it later, must see one order, whatever ids, scopes and
        # changes the lessons have.
        lam = Lamar(self.open(self.loc), k=2, seed=0)
        self.addCleanup(lam.close)
        other = Lamar(self.open(self.loc) if self.persistent else lam.store, k=2, seed=1)
        self.addCleanup(other.close)
        tasks = ["t1", "t0", None, "t1", "t0", "t1", None]

        def add(engine: Lamar, n: int) -> str:
            task = tasks[n]
            return engine.add(Experience(f"case {n}", f"do {n}", scope=Scope(task=task) if task else Scope()))

        added = [add(lam, 0), add(lam, 1), add(other, 2), add(lam, 3), add(other, 4)]
        seen = [lam, other]

        def same(step: str) -> None:
            for n, engine in enumerate(seen):
                listed = [e.id for e in engine.experiences()]
                self.assertEqual(listed, added, f"{step}: engine {n}")
                for task in ("t0", "t1"):
                    self.assertEqual([e.id for e in engine.experiences(scope={"task": task})],
                                     [i for i in listed if engine.get(i).scope.get("task") == task], step)
                self.assertEqual([e.id for e in engine.experiences(status="active")],
                                 [i for i in listed if engine.get(i).status.value == "active"], step)
                for status, context in ((None, None), ("active", None), (None, {"task": "t1", "lang": "py"})):
                    self.assertEqual(_walked(engine, status, context, listed),
                                     [i for i in listed if (status is None or engine.get(i).status.value == status)
                                      and (context is None or engine.get(i).scope.matches(context))], step)

        same("added")
        for n in range(30):
            rec = lam.recall({"task": f"t{n % 2}"})
            other.report(rec.episode_id, 1.0 if n % 3 else -1.0)
        same("recalled")
        other.edit(added[0], action="do 0 first")
        same("edited")
        lam.retire(added[1])
        same("retired")
        lam.store.append([Event("scope", {"id": added[2], "key": "lang", "value": "py",
                                          "reason": "sleep narrow: lang=py"})])  # as sleep narrows
        same("narrowed")
        if self.erasable:
            other.erase(added[3])
            same("erased")
        added.append(add(other, 5))
        same("added after the changes")
        if self.rewritable:
            self.assertIs(lam.checkpoint(), True)
            added.append(add(lam, 6))
            same("checkpointed")
        lam.rebuild()
        same("rebuilt")
        replay = MemoryStore()  # a copy of the store, as `lamar export` makes it
        replay.append([Event(e.kind, e.data, e.key, time=e.time) for e in lam.store.read()])
        seen.append(Lamar(replay))
        same("copied")
        if self.persistent:
            lam.close()
            seen = [Lamar(self.open(self.loc), k=2, seed=2), *seen[1:]]
            self.addCleanup(seen[0].close)
            same("reopened")

    def test_lessons_added_at_once_by_two_processes_are_listed_in_one_order(self) -> None:
        # Every engine, at every moment, lists the lessons it sees in one order, and a lesson whose
        # add had ended before another's began comes before it.
        self._require("processes")
        lam = Lamar(self.open(self.loc), k=2, seed=0)
        self.addCleanup(lam.close)
        first = lam.add(Experience("case before", "do it", scope=Scope(task="t0")))
        go = self.folder / "go-adders"
        writers = []
        for name in ("a", "b"):
            ready = self.folder / f"ready-{name}"
            code = ADDER.format(paths=[p for p in sys.path if p], opener=self.opener, location=self.loc,
                                ready=str(ready), go=str(go), count=12, name=name)
            writers.append(subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE))
            deadline = time.monotonic() + 120
            while not ready.exists() and writers[-1].poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
        go.touch()
        adds = []
        for writer in writers:
            out, err = writer.communicate(timeout=300)
            self.assertEqual(writer.returncode, 0, err.decode()[-2000:])
            adds += json.loads(out)
        order = [e.id for e in lam.experiences()]
        self.assertEqual((len(order), len(set(order))), (25, 25))
        self.assertEqual(order[0], first)
        place = {exp_id: n for n, exp_id in enumerate(order)}
        for exp_id, _, _, listed in adds:
            self.assertIn(exp_id, listed)
            self.assertEqual(listed, sorted(listed, key=place.__getitem__), "an engine saw another order")
        for x, _, ended, _ in adds:
            for y, began, _, _ in adds:
                if ended < began:
                    self.assertLess(place[x], place[y], "a lesson added after another ended is listed before it")
        lam.rebuild()
        self.assertEqual([e.id for e in lam.experiences()], order, "rebuilt")
        if self.rewritable:
            self.assertIs(lam.checkpoint(), True)
        again = Lamar(self.open(self.loc), k=2, seed=0)
        self.addCleanup(again.close)
        self.assertEqual([e.id for e in again.experiences()], order, "reopened")
        if folded_rows(again.store) is None or self.rewritable:
            # The log read in order folds to the same order (a copy of the store lists it so). A
            # store that keeps its lessons' rows orders them by their places in the rows, which two
            # adds at once may have taken in the other order than their events (docs/postgres.md):
            # its log lists them so once a checkpoint's snapshot holds them.
            replay = MemoryStore()
            replay.append([Event(e.kind, e.data, e.key, time=e.time) for e in again.store.read()])
            self.assertEqual([e.id for e in Lamar(replay).experiences()], order, "replayed")

    def test_a_store_that_hands_over_texts_hands_over_what_read_returns(self) -> None:
        store = self.opened()
        if not isinstance(store, TextStore):
            self.skipTest("the store hands over decoded events only (it is no `TextStore`)")
        episodes = [Event("episode", {"id": f"ep_{n}", "context": {"project": "p", "who": "ü"}, "p": {"exp_a": 0.9},
                                      "injected": ["exp_a"] if n % 2 else [], "held_out": [] if n % 2 else ["exp_a"]},
                          key=f"episode:ep_{n}", time=float(n)) for n in range(4)]
        outcomes = [Event("outcome", {"episode": f"ep_{n}", "reward": 1.0, "signal": "shipped", "replace": False},
                          key=f"outcome:ep_{n}", time=10.0 + n) for n in range(4)]
        written = store.append([*episodes, Event("status", {"id": "exp_a", "status": "active"}), *outcomes])
        for after in (0, written[4].seq):
            rows, events = store.read_texts(after), store.read(after)
            self.assertEqual([row.data for row in rows], [event.data_json() for event in events])
            self.assertEqual([(e.seq, e.kind, e.key, e.time, e.data) for e in map(store.decoded, rows)],
                             [(e.seq, e.kind, e.key, e.time, e.data) for e in events])
        first = rows[0]
        for data in ("{", '{"episode":"ep_0","reward":2}'):
            with self.assertRaises(CorruptStore, msg=data):
                store.decoded(first._replace(kind="outcome", data=data))

    def test_a_store_that_keeps_an_episode_table_reads_as_its_log_folds(self) -> None:
        from lamar.store.episode_rows import EpisodeTableStore
        from lamar.whatif.log import read_log

        probe = self.opened()
        if not isinstance(probe, EpisodeTableStore):
            self.skipTest("the store keeps no episode table (`EpisodeTableStore`): `lamar whatif` folds its log")
        lam = Lamar(probe, k=2, seed=5, holdout=0.3)
        for action in ("pin the seeds", "mock the clock", "retry"):
            lam.add(Experience("a test is flaky", action, scope=Scope(task="flaky")))
        ids = [lam.recall({"task": "flaky", "n": str(n % 3)}).episode_id for n in range(40)]
        for n, episode_id in enumerate(ids[:-5]):
            lam.report(episode_id, Signal.SHIPPED if n % 3 else Signal.CORRECTED)
        lam.report(ids[0], Signal.REVERTED, replace=True)
        lam.expire(ids[-1])
        for step in ("saved", "more", "rewritten"):
            if step == "saved" and isinstance(probe, KeyedStore):
                probe.save_state(probe.read(0)[-1].seq, "a state")  # a table caught up at saves, if so
            elif step == "more":
                lam.report(ids[-2], 0.4)
            elif step == "rewritten" and isinstance(probe, RewritableStore):
                lam.checkpoint()
            self.assertEqual(read_log(probe), read_log(probe, cache=False), step)
            table, counts = probe.episodes(), probe.episode_counts()  # the chart's counts, read alike
            self.assertEqual(counts is None, table is None, step)
            if table is not None and counts is not None:
                shapes = [(time, len(table.slates[s][2]), len(table.slates[s][3])) for _, time, s, *_ in table.rows]
                self.assertEqual((counts.rows, counts.last, counts.tail), (shapes, table.last, table.tail), step)
        lam.close()
