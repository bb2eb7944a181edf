"""The store conformance suite's part on erasing: a scrub that replaces events in place and leaves no
copy, and `Lamar.erase` keeping every verdict, narrowed lessons' included, on every backend that can erase."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from lamar._errors import EventConflict, StoreError
from lamar.engine import Lamar
from lamar.experience import Experience, Scope
from lamar.signals import Signal
from lamar.store.base import Event

if TYPE_CHECKING:  # type checkers see the TestCase this mixin is used with
    from unittest import TestCase

    _Case = TestCase
else:  # at run time a plain class: neither unittest nor pytest collects the suite, only a subclass
    _Case = object


def erase_stopped_behind_its_event(lam: Lamar, exp_id: str, *, contexts: bool = False) -> None:
    """`lam.erase(exp_id)` with the scrub after its event failing, as a process stopped there leaves
    the store: the erase event stored, its scrub pending, the text still in the files."""
    from unittest import mock

    scrub = lam.store.scrub  # type: ignore[attr-defined]

    def failing(events: Any) -> int:
        if events:
            raise StoreError("stopped")
        return int(scrub(events))

    with mock.patch.object(lam.store, "scrub", failing):
        try:
            lam.erase(exp_id, contexts=contexts, by="ops")
        except StoreError:
            return
    raise AssertionError("the erase did not stop at its scrub")


class EraseConformance(_Case):
    """Mixed into `lamar.conformance.StoreConformance`, which says where a store lives and what it can do."""

    loc: str
    keyed: bool
    persistent: bool
    rewritable: bool

    def open(self, location: str) -> Any:
        raise NotImplementedError

    def opened(self) -> Any:
        raise NotImplementedError

    def stored_bytes(self, store: Any) -> bytes:
        raise NotImplementedError

    def _require(self, *capabilities: str) -> None:
        raise NotImplementedError

    def test_scrub_replaces_data_in_place_all_or_nothing(self) -> None:
        self._require("erasable")
        store = self.opened()
        written = store.append([Event("status", {"id": f"s{i}", "status": "active", "reason": f"Zyxwert {i}"},
                                      key=f"k{i}", time=float(i + 1)) for i in range(4)])
        if self.keyed:
            store.save_state(written[-1].seq, "a state that quotes Zyxwert 1")
        wrong = Event("status", {"id": "s3", "status": "active"}, key="other", seq=written[3].seq, time=4.0)
        with self.assertRaises(ValueError):  # named as it is not stored: nothing changes, not even the first
            store.scrub([Event("status", {"id": "s0"}, key="k0", seq=written[0].seq, time=1.0), wrong])
        self.assertEqual([e.data for e in store.read()], [e.data for e in written])
        new = [Event(e.kind, {**e.data, "reason": "[erased]"}, e.key, e.seq, e.time) for e in written[1:3]]
        self.assertEqual(store.scrub(new), 2)
        back = store.read()
        self.assertEqual([(e.seq, e.key, e.time) for e in back], [(e.seq, e.key, e.time) for e in written])
        self.assertEqual([e.data["reason"] for e in back], ["Zyxwert 0", "[erased]", "[erased]", "Zyxwert 3"])
        if self.keyed:
            self.assertEqual(store.lookup(["k1"])[0].data["reason"], "[erased]")
            self.assertIsNone(store.load_state())  # the saved state may hold what was scrubbed
        self.assertFalse(b"Zyxwert 1" in self.stored_bytes(store), "the scrubbed data is still stored")
        self.assertIn(b"Zyxwert 3", self.stored_bytes(store))
        with self.assertRaises(EventConflict):
            store.append([Event("status", {"id": "again", "status": "active"}, key="k1")])  # keys stay taken
        if self.persistent:
            store.close()
            again = self.opened()
            self.assertEqual([e.data for e in again.read()], [e.data for e in back])

    def test_erase_leaves_no_text_and_every_verdict_as_it_was(self) -> None:
        self._require("erasable")
        lam = Lamar(self.open(self.loc), k=2, seed=0)
        self.addCleanup(lam.close)
        secret = lam.add(Experience("Quorvath Ellingsby's build fails", "page Quorvath Ellingsby",
                                    rationale="Quorvath asked", scope=Scope(task="t0")))
        for i in range(3):
            lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task=f"t{i % 2}")))
        rng = random.Random(2)
        for n in range(160):
            # Vexmoor only where the lesson is eligible: its contexts are blanked, the others kept
            rec = lam.recall({"task": f"t{n % 2}", "user": "Vexmoor" if n % 2 == 0 and n % 3 else "plain"})
            lam.report(rec.episode_id, rng.choice(list(Signal)))
            if n == 80 and self.rewritable:
                self.assertIs(lam.checkpoint(), True)  # a snapshot holds the text too
        if self.persistent:
            lam.close()  # saves the state beside the log: one more copy
            lam = Lamar(self.open(self.loc), k=2, seed=0)
            self.addCleanup(lam.close)
        before = {e.id: lam.evidence(e.id) for e in lam.experiences()}
        erased = lam.erase(secret, contexts=True, by="ops")
        self.assertEqual((erased.id, erased.by), (secret, "ops"))
        self.assertGreater(len(erased.episodes), 0)
        after = {e.id: lam.evidence(e.id) for e in lam.experiences()}
        for exp_id, ev in before.items():
            self.assertEqual((after[exp_id].verdict, after[exp_id].lift, after[exp_id].lower, after[exp_id].upper,
                              after[exp_id].randomized, after[exp_id].injected, after[exp_id].eligible),
                             (ev.verdict, ev.lift, ev.lower, ev.upper, ev.randomized, ev.injected, ev.eligible), exp_id)
        self.assertEqual(lam.get(secret).action, "[erased]")
        self.assertEqual(lam.get(secret).status.value, "retired")
        stored = self.stored_bytes(lam.store)
        for word in (b"Quorvath", b"Ellingsby", b"Vexmoor"):
            self.assertFalse(word in stored, f"{word!r} is still stored")
        self.assertIn(b"plain", stored)  # the contexts of episodes it was not eligible in stay
        self.assertEqual(lam.episode(erased.episodes[0]).context, {})
        # A second erase finishes what cleanup the first left, as the first: no second event.
        repeat = lam.erase(secret)
        self.assertEqual((repeat.again, repeat.by, repeat.episodes), (True, "ops", erased.episodes))
        self.assertEqual(sum(e.kind == "erase" for e in lam.store.read()), 1)
        if self.persistent:
            lam.close()
            again = Lamar(self.open(self.loc), k=2, seed=0)
            self.addCleanup(again.close)
            self.assertEqual({e.id: again.evidence(e.id) for e in again.experiences()}, after)
            self.assertEqual([e.kind for e in again.store.read()][-1], "erase")

    def test_erase_with_contexts_keeps_what_narrowed_lessons_continued(self) -> None:
        # A narrowed lesson's evidence continues its slice's, which the blanked contexts fed: the
        # erased lesson's own and another lesson's narrowed alike read as before, and refold so.
        self._require("erasable")
        lam = Lamar(self.open(self.loc), k=2, seed=4)
        self.addCleanup(lam.close)
        secret = lam.add(Experience("the deploy fails", "roll back first", scope=Scope(project="acme")))
        other = lam.add(Experience("the build fails", "clear the cache"))
        lam.add(Experience("a test flakes", "run it again", scope=Scope(customer="Bo")))
        rng = random.Random(4)
        for n in range(120):
            if n == 20 and self.rewritable:
                self.assertIs(lam.checkpoint(), True)  # a snapshot holding slices the contexts fed
            if n == 40:  # two narrowings, as sleep applies them
                lam.store.append([Event("scope", {"id": exp_id, "key": "customer", "value": value,
                                                  "reason": f"sleep narrow: customer={value}"})
                                  for exp_id, value in ((secret, "Quorvath"), (other, "Bo"))])
            rec = lam.recall({"project": "acme", "customer": "Quorvath" if n % 2 else "Bo"})
            lam.report(rec.episode_id, rng.choice(list(Signal)))

        def figures(engine: Lamar) -> dict[str, tuple[Any, ...]]:
            return {e.id: (ev.verdict, ev.lift, ev.lower, ev.upper, ev.randomized, ev.injected, ev.eligible)
                    for e in engine.experiences() for ev in [engine.evidence(e.id)]}

        before = figures(lam)
        lam.erase(secret, contexts=True)
        self.assertEqual(figures(lam), before)
        self.assertFalse(b"Quorvath" in self.stored_bytes(lam.store))
        lam.rebuild()
        self.assertEqual(figures(lam), before)
        if self.persistent:
            lam.close()
            again = Lamar(self.open(self.loc), k=2, seed=4)
            self.addCleanup(again.close)
            self.assertEqual(figures(again), before)

    def test_an_erase_whose_scrub_failed_is_finished_by_the_next_write(self) -> None:
        # Stopped between its event and the scrub: the next write after the grace scrubs, once.
        self._require("erasable")
        from unittest import mock

        from lamar.state import erasure

        lam = Lamar(self.open(self.loc), k=2, seed=0)
        self.addCleanup(lam.close)
        secret = lam.add(Experience("Quorvath's build fails", "page Quorvath", scope=Scope(task="t")))
        for _ in range(5):
            lam.report(lam.recall({"task": "t", "user": "Quorvath"}).episode_id, 1.0)
        erase_stopped_behind_its_event(lam, secret, contexts=True)
        self.assertIn(b"Quorvath", self.stored_bytes(lam.store))
        self.assertEqual(lam.get(secret).action, "[erased]")
        lam.recall({"task": "t"})  # within the grace the eraser may still be scrubbing
        self.assertIn(b"Quorvath", self.stored_bytes(lam.store))
        with mock.patch.object(erasure, "GRACE", 0.0):
            lam.recall({"task": "t"})
            self.assertFalse(b"Quorvath" in self.stored_bytes(lam.store), "the scrub was not finished")
            erases = [e for e in lam.store.read() if e.kind == "erase"]
            self.assertEqual([e.data.get("pending") for e in erases], [None])
            self.assertIs(lam.erase(secret).again, True)
