"""The store conformance suite's part on what `lamar whatif` reads of a store beyond its events:
the stored texts (`TextStore`) and the episode table (`EpisodeTableStore`), each where a backend has it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lamar._errors import CorruptStore
from lamar.engine import Lamar
from lamar.experience import Experience, Scope
from lamar.signals import Signal
from lamar.store.base import Event, KeyedStore, RewritableStore, TextStore

if TYPE_CHECKING:  # type checkers see the TestCase this mixin is used with
    from unittest import TestCase

    _Case = TestCase
else:  # at run time a plain class: neither unittest nor pytest collects the suite, only a subclass
    _Case = object


class ReadsConformance(_Case):
    """Mixed into `lamar.conformance.StoreConformance`, which says where a store lives."""

    def opened(self) -> Any:
        """The store under test, closed when the test ends (`StoreConformance.opened`)."""
        raise NotImplementedError

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
        lam.close()
