"""The store conformance suite: what every backend must show, on the standard library's unittest,
so that any backend (Lamar's own or a third party's) proves itself under unittest or pytest."""

from __future__ import annotations

import math
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lamar._errors import (
    CorruptStore,
    DuplicateReport,
    EventConflict,
    InvalidEvent,
    StoreError,
    UnknownEpisode,
    UnknownExperience,
)
from lamar.conformance_context import ContextConformance
from lamar.conformance_erase import EraseConformance
from lamar.conformance_reads import ReadsConformance
from lamar.engine import Lamar
from lamar.experience import Experience, Scope
from lamar.signals import Signal
from lamar.store import open_store
from lamar.store.base import EVENT_KINDS, Event, folded_rows
from lamar.store.memory import MemoryStore

# A worker that recalls and reports as fast as it can, logging each completed episode id
# with os.write on an O_APPEND descriptor: the kernel keeps it even if we are SIGKILLed.
WORKER = textwrap.dedent(
    """
    import os, random, sys
    sys.path[:0] = {paths!r}
    from lamar import Lamar, Signal
    {opener}
    store = open_store({location!r})
    lam = Lamar(store, k=2, seed={seed})
    log = os.open({log!r}, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    rng = random.Random({seed})
    for i in range({episodes}):
        rec = lam.recall({{"task": "t%d" % (i % 2)}})
        lam.report(rec.episode_id, Signal.SHIPPED if rng.random() < 0.5 else Signal.REVERTED)
        os.write(log, (rec.episode_id + "\\n").encode())
    """
)
DEFAULT_OPENER = "from lamar.store import open_store"

class StoreConformance(ReadsConformance, EraseConformance, ContextConformance):
    """Behaviour every store backend must show: round trips of every event kind, atomic batches,
    unique keys, reopening, the lessons in the order they were added, keyed lookup and the saved
    state, rewrites into a snapshot (also while other processes write), scrubs that leave no copy
    of what they replaced (`stored_bytes`), writers in separate processes, SIGKILL in the middle of
    writes, and a refusal of every read and write after close.

    A backend's test is a subclass with `unittest.TestCase` that says where a store lives, in a
    form a child process can open too (when `processes` is True):

        class TestMyStore(StoreConformance, unittest.TestCase):
            def location(self, folder: Path) -> str:
                return str(folder / "store.db")

    Override `open(location)` when `open_store(location)` does not open it, and `opener`
    (code defining `open_store(location)`) for the child processes. A test that a backend's
    capabilities rule out (`persistent`, `keyed`, `rewritable`, `processes` False) is skipped,
    saying why.
    """

    persistent = True  # survives close and reopen
    keyed = True  # has lookup(keys), load_state() and save_state(seq, text) (`KeyedStore`)
    rewritable = True  # has rewrite(through, snapshot): compaction shrinks its log
    erasable = True  # has scrub(events): Lamar.erase takes a lesson's text out of it (`ErasableStore`)
    processes = True  # can be shared by several OS processes
    opener = DEFAULT_OPENER  # code defining open_store(location) inside a worker process

    def location(self, folder: Path) -> str:
        """Where a fresh store of this backend lives; `folder` is this test's own, empty."""
        raise NotImplementedError

    def open(self, location: str) -> Any:
        return open_store(location)

    def setUp(self) -> None:
        super().setUp()
        self.folder = Path(tempfile.mkdtemp(prefix="lamar-conformance-"))
        self.addCleanup(shutil.rmtree, self.folder, True)
        self.loc = self.location(self.folder)

    def stored_bytes(self, store: Any) -> bytes:
        """Every byte the store keeps: by default every file under this test's folder (a file
        backend's file, journal, index and saved state), or, when it keeps none, its events and
        saved state as read. A server backend overrides this with what its tables hold."""
        files = sorted(p for p in self.folder.rglob("*") if p.is_file() and not p.name.endswith(".log"))
        if files:
            return b"".join(p.read_bytes() for p in files)
        saved = store.load_state() if self.keyed else None
        return "".join([*(e.data_json() for e in store.read()), saved or ""]).encode("utf-8")

    def opened(self) -> Any:
        """The store at `loc`, closed when the test ends."""
        store = self.open(self.loc)
        self.addCleanup(store.close)
        return store

    # -- the log -----------------------------------------------------------------------------

    def test_append_assigns_increasing_sequence_numbers(self) -> None:
        store = self.opened()
        first = store.append([Event("status", {"id": "a", "status": "active"})])
        second = store.append([Event("status", {"id": "b", "status": "active"}),
                               Event("status", {"id": "c", "status": "active"})])
        seqs = [e.seq for e in first + second]
        self.assertTrue(seqs == sorted(seqs) and len(set(seqs)) == 3 and seqs[0] >= 1, seqs)
        self.assertEqual([e.seq for e in store.read()], seqs)
        self.assertEqual([e.data["id"] for e in store.read(seqs[0])], ["b", "c"])
        self.assertEqual(store.read(seqs[-1]), [])

    def test_every_event_kind_round_trips(self) -> None:
        store = self.opened()
        exp = Experience("when ünïcode 🚀 appears", "say so", rationale='quotes " and \\ too',
                         scope=Scope(project="p", lang="swift")).with_identity()
        written = [
            Event("experience", exp.to_dict(), key=f"experience:{exp.id}", time=1.5),
            Event("episode", {"id": "ep_1", "context": {"project": "p"}, "eligible": [exp.id],
                              "injected": [], "held_out": [exp.id], "p": {exp.id: 0.8}},
                  key="episode:ep_1", time=2.25),
            Event("outcome", {"episode": "ep_1", "reward": -0.6, "signal": "corrected", "replace": False},
                  key="outcome:ep_1", time=3.0),
            Event("status", {"id": exp.id, "status": "retired", "reason": "r"}, time=4.0),
            Event("scope", {"id": exp.id, "key": "lang", "value": "swift", "reason": "sleep narrow: r"}, time=4.5),
            Event("merge", {"into": exp.id, "from": ["exp_x"]}, time=5.0),
            Event("edit", {"id": exp.id, "version": 2, "precondition": "when ünïcode 🚀 appears", "action": "say so",
                           "rationale": "", "scope": {"project": "p"}, "changed": ["rationale", "scope"],
                           "evidence": "restart", "reason": "r"}, key=f"edit:{exp.id}:2", time=5.5),
            Event("applied", {"proposal": "retire_1", "kind": "retire"}, key="proposal:retire_1", time=6.0),
            Event("compact", {"episodes": ["ep_0"], "figures": {"reports": 1, "mean": 0.1 + 0.2}}, time=7.0),
            Event("snapshot", {"format": 1, "lessons": [], "rewards": [3, 0.25, 1e-300]}, time=8.0),
            Event("erase", {"id": exp.id, "by": "ops", "reason": "r", "contexts": True, "episodes": ["ep_1"],
                            "events": 2}, time=9.0),
        ]
        self.assertEqual({e.kind for e in written}, EVENT_KINDS)  # a kind added to the log is tested here too
        store.append(written)
        back = store.read()
        self.assertEqual([(e.kind, e.key, e.data, e.time) for e in back],
                         [(e.kind, e.key, e.data, e.time) for e in written])
        self.assertEqual(Experience.from_dict(back[0].data), exp)

    def test_a_duplicate_key_writes_nothing_of_the_batch(self) -> None:
        store = self.opened()
        store.append([Event("outcome", {"episode": "e"}, key="outcome:e")])
        with self.assertRaises(EventConflict):
            store.append([Event("status", {"id": "x", "status": "active"}),
                          Event("outcome", {"episode": "e"}, key="outcome:e")])
        with self.assertRaises(EventConflict):
            store.append([Event("outcome", {"episode": "f"}, key="k"), Event("outcome", {"episode": "g"}, key="k")])
        self.assertEqual([e.key for e in store.read()], ["outcome:e"])

    def test_an_event_no_reader_could_parse_writes_nothing_of_the_batch(self) -> None:
        # Stored, such an event would make the whole log unreadable: refused before any write.
        store = self.opened()
        with self.assertRaises(InvalidEvent):
            store.append([Event("outcome", {"episode": "e"}, key="outcome:e"), Event("note", {"text": "hi"})])
        if self.persistent:  # a key no file or database can hold (the memory store keeps any text)
            for key in ("outcome:\x00", "outcome:\ud800"):
                with self.assertRaises(InvalidEvent):
                    store.append([Event("outcome", {"episode": "e"}, key="outcome:e"),
                                  Event("outcome", {"episode": "f"}, key=key)])
        self.assertEqual(store.read(), [])
        store.append([Event("outcome", {"episode": "e"}, key="outcome:e")])  # and the store takes the next write
        self.assertEqual([e.key for e in store.read()], ["outcome:e"])

    def test_engine_state_survives_reopen(self) -> None:
        self._require("persistent")
        store = self.open(self.loc)
        lam = Lamar(store, k=2, seed=3)
        ids = [lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task="t"))) for i in range(3)]
        rng = random.Random(0)
        for _ in range(60):
            rec = lam.recall({"task": "t"})
            lam.report(rec.episode_id, rng.choice(list(Signal)))
        before = ({i: lam.evidence(i) for i in ids}, lam.stats())
        store.close()
        again = Lamar(self.open(self.loc), k=2, seed=3)
        self.addCleanup(again.close)
        self.assertEqual(({i: again.evidence(i) for i in ids}, again.stats()), before)

    def test_a_closed_store_refuses_every_read_and_write(self) -> None:
        # A use after close is a bug in the caller, even where the data is still within reach (as
        # in memory): it fails at once, saying what to do, and never reads as a corrupt store.
        store = self.open(self.loc)
        lam = Lamar(store, seed=1)
        lam.add(Experience("the build fails", "clear the cache"))
        episode = lam.recall({}).episode_id
        lam.close()
        lam.close()  # twice is harmless
        status = Event("status", {"id": "x", "status": "retired"}, key="k", seq=1, time=1.0)
        calls: dict[str, Any] = {
            "recall": lambda: lam.recall({}), "report": lambda: lam.report(episode, Signal.SHIPPED),
            "add": lambda: lam.add(Experience("a", "b")), "stats": lam.stats,
            "read": store.read, "append": lambda: store.append([status])}
        if self.keyed:
            calls |= {"lookup": lambda: store.lookup(["k"]), "load_state": store.load_state,
                      "save_state": lambda: store.save_state(1, "a state")}
        if self.rewritable:
            calls["rewrite"] = lambda: store.rewrite(1, Event("snapshot", {}))
        if self.erasable:
            calls["scrub"] = lambda: store.scrub([status])
        for name, call in calls.items():
            with self.subTest(name):
                with self.assertRaisesRegex(StoreError, r"is closed\b.*; open ") as caught:
                    call()
                self.assertNotIsInstance(caught.exception, CorruptStore)
        store.close()

    # -- keyed lookup and the engine's saved state -----------------------------------------

    def test_lookup_finds_committed_events_by_key(self) -> None:
        self._require("keyed")
        store = self.opened()
        written = store.append([Event("episode", {"id": "e1"}, key="episode:e1"),
                                Event("status", {"id": "x", "status": "active"}),
                                Event("outcome", {"episode": "e1", "reward": 1.0}, key="outcome:e1")])
        found = store.lookup(["outcome:e1", "missing", "episode:e1"])
        self.assertEqual([(e.seq, e.kind, e.key, e.data) for e in found], [
            (written[0].seq, "episode", "episode:e1", {"id": "e1"}),
            (written[2].seq, "outcome", "outcome:e1", {"episode": "e1", "reward": 1.0})])
        self.assertEqual((store.lookup(["nothing"]), store.lookup([])), ([], []))

    def test_an_id_no_store_can_hold_is_simply_not_found(self) -> None:
        # No write stores a key with a lone surrogate or a NUL, so asking for one is asking for
        # an id that is not there: the caller gets UnknownEpisode or UnknownExperience.
        store = self.opened()
        lam = Lamar(store, seed=1)
        lam.add(Experience("the build fails", "clear the cache"))
        lam.report(lam.recall({}).episode_id, Signal.SHIPPED)
        if self.keyed:
            self.assertEqual(store.lookup(["episode:e\ud800", "outcome:e\x00"]), [])
        again = lam
        if self.persistent:  # a new engine looks the ids up in the store
            lam.close()
            again = Lamar(self.open(self.loc), seed=1)
        self.addCleanup(again.close)
        for bad in ("ep_\udcff", "ep_\x00"):
            with self.assertRaises(UnknownEpisode):
                again.report(bad, Signal.SHIPPED)
            with self.assertRaises(UnknownEpisode):
                again.episode(bad)
        for bad in ("exp_\udcff", "exp_\x00"):
            for call in (again.get, again.evidence, again.retire):
                with self.assertRaises(UnknownExperience):
                    call(bad)

    def test_a_saved_state_reads_back_and_is_replaced(self) -> None:
        self._require("keyed")
        store = self.opened()
        self.assertIsNone(store.load_state())
        store.save_state(3, "abc\n{}")
        self.assertEqual(store.load_state(), "abc\n{}")
        store.save_state(7, "def\n{}")
        self.assertEqual(store.load_state(), "def\n{}")

    def test_a_resumed_engine_matches_a_replay_and_decides_the_same(self) -> None:
        """Evidence, stats and the next decisions (same seed) of an engine that resumed from the
        saved state equal those of one that folded the whole log; reports of episodes from
        before the state (looked up by key) count the same, duplicates are refused the same."""
        self._require("keyed", "persistent")  # a store that does not persist has nothing to resume after close
        store = self.open(self.loc)
        lam = Lamar(store, k=2, seed=4)
        ids = [lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task=f"t{i % 3}"))) for i in range(7)]
        rng = random.Random(5)
        open_eps, reported = [], []
        for n in range(150):
            rec = lam.recall({"task": f"t{n % 3}", "project": "p"})
            if n % 7 == 0:
                open_eps.append(rec.episode_id)
            else:
                lam.report(rec.episode_id, rng.choice(list(Signal)))
                reported.append(rec.episode_id)
        lam.retire(ids[6])
        lam.stats()  # (a fold-mode engine folds the log only for calls such as this one)
        lam.close()  # saves the state
        tail = self.open(self.loc)
        self.addCleanup(tail.close)
        episode = open_eps.pop()  # a report after the state, written as an engine writes it
        tail.append([Event("outcome", {"episode": episode, "reward": 1.0, "signal": "shipped", "replace": False},
                           key=f"outcome:{episode}")])
        replay_store = MemoryStore()
        replay_store.append([Event(e.kind, e.data, e.key, time=e.time) for e in tail.read()])
        noted = self.open(self.loc)
        afters = _note_reads(noted)
        resumed = Lamar(noted, k=2, seed=9)
        self.addCleanup(resumed.close)
        replayed = Lamar(replay_store, k=2, seed=9)
        stats = resumed.stats()  # a fold-mode engine resumes here, at its first call that folds the log
        self.assertTrue(afters and afters[0] > 0, afters)  # from the state, not seq 0
        self.assertEqual({i: resumed.evidence(i) for i in ids}, {i: replayed.evidence(i) for i in ids})
        unlike = {"store": None} | ({"events": None} if folded_rows(noted) is not None else {})
        self.assertEqual(stats | unlike, replayed.stats() | unlike)  # (the fold mode's seqs are not dense)
        for engine in (resumed, replayed):
            with self.assertRaises(DuplicateReport):
                engine.report(reported[3], Signal.SHIPPED)
        world = random.Random(6)
        for n in range(60):
            context = {"task": f"t{n % 3}", "project": "p"}
            a, b = resumed.recall(context), replayed.recall(context)
            self.assertEqual((a.ids, a.held_out, a.propensities), (b.ids, b.held_out, b.propensities))
            signal_ = world.choice(list(Signal))
            resumed.report(a.episode_id, signal_)
            replayed.report(b.episode_id, signal_)
            if n < len(open_eps):  # late reports of episodes recalled before the state was saved
                resumed.report(open_eps[n], signal_)
                replayed.report(open_eps[n], signal_)
        self.assertEqual(resumed.episode(reported[0]).reward, replayed.episode(reported[0]).reward)
        self.assertEqual({i: resumed.evidence(i) for i in ids}, {i: replayed.evidence(i) for i in ids})
        resumed.report(reported[1], -0.5, replace=True)  # unfolds an outcome: the log again from before it
        replayed.report(reported[1], -0.5, replace=True)
        self.assertEqual({i: resumed.evidence(i) for i in ids}, {i: replayed.evidence(i) for i in ids})

    # -- rewrite (checkpoints) ---------------------------------------------------------------

    def test_rewrite_replaces_the_start_of_the_log_by_a_snapshot(self) -> None:
        self._require("rewritable")
        store = self.opened()
        written = store.append([Event("status", {"id": f"s{i}", "status": "active"}, key=f"k{i}")
                                for i in range(5)])
        seqs = [e.seq for e in written]
        snapshot = Event("snapshot", {"format": 1, "figures": [0.1 + 0.2, None]}, time=9.5)
        self.assertIs(store.rewrite(seqs[2], snapshot), True)
        back = store.read()
        self.assertEqual([(e.kind, e.seq) for e in back],
                         [("snapshot", seqs[2]), ("status", seqs[3]), ("status", seqs[4])])
        self.assertEqual((back[0].data, back[0].time, back[0].key), (snapshot.data, 9.5, None))
        self.assertEqual([e.seq for e in store.read(seqs[0])], [e.seq for e in back])  # behind: the snapshot first
        self.assertEqual([e.seq for e in store.read(seqs[2])], seqs[3:])  # past it: the log as it was
        (more,) = store.append([Event("status", {"id": "s5", "status": "active"}, key="k5")])
        self.assertGreater(more.seq, seqs[4])
        with self.assertRaises(EventConflict):
            store.append([Event("status", {"id": "again", "status": "active"}, key="k4")])  # kept: still taken
        store.append([Event("status", {"id": "s0", "status": "active"}, key="k0")])  # replaced: free again
        self.assertIs(store.rewrite(seqs[1], snapshot), False)  # already checkpointed past it
        self.assertEqual(store.read()[0].seq, seqs[2])
        with self.assertRaises(ValueError):  # past the log's end (seqs may come from a server's shared sequence)
            store.rewrite(store.read()[-1].seq + 1, snapshot)

    def test_a_checkpointed_store_reopens_the_same(self) -> None:
        self._require("rewritable", "persistent")
        lam = self.seeded()
        rng = random.Random(1)
        unreported = []
        for n in range(90):
            rec = lam.recall({"task": f"t{n % 2}"})
            if n % 9:
                lam.report(rec.episode_id, rng.choice(list(Signal)))
            else:
                unreported.append(rec.episode_id)
            if n in (40, 70):
                self.assertIs(lam.checkpoint(), True)
        lam.report(unreported[0], Signal.SHIPPED)  # an episode left open by a checkpoint stays open
        before = ({e.id: lam.evidence(e.id) for e in lam.experiences()}, lam.stats())
        lam.close()
        again = Lamar(self.open(self.loc), k=2, seed=0)
        self.addCleanup(again.close)
        self.assertEqual(({e.id: again.evidence(e.id) for e in again.experiences()}, again.stats()), before)
        self.assertEqual(again.store.read()[0].kind, "snapshot")

    def test_checkpoints_while_other_processes_write_lose_nothing(self) -> None:
        self._require("rewritable", "processes")
        lam = self.seeded()
        self.addCleanup(lam.close)
        logs = [self.folder / f"c{i}.log" for i in range(2)]
        workers = [self.worker(log, seed, 120) for seed, log in enumerate(logs)]
        checkpoints = 0
        while any(w.poll() is None for w in workers):
            checkpoints += lam.checkpoint()  # each worker is behind now and then, and re-syncs
            time.sleep(0.05)
        self._finished(workers)
        done = [line for log in logs for line in log.read_text().split()]
        self.assertEqual(len(done), 240)
        self.assertGreater(checkpoints, 0)
        stats = lam.stats()
        self.assertEqual((stats["episodes"], stats["reports"]), (240, 240))
        # every report counted exactly once: each episode was eligible for the 2 lessons of its task
        self.assertEqual(sum(lam.evidence(e.id).eligible for e in lam.experiences()), 480)
        reopened = Lamar(self.open(self.loc), k=2, seed=0)
        self.addCleanup(reopened.close)
        self.assertEqual({e.id: reopened.evidence(e.id) for e in reopened.experiences()},
                         {e.id: lam.evidence(e.id) for e in lam.experiences()})
        self.assertEqual(reopened.stats(), lam.stats())

    # -- processes ---------------------------------------------------------------------------

    def worker(self, log: Path, seed: int, episodes: int) -> subprocess.Popen[bytes]:
        """A child process recalling and reporting `episodes` times on the store at `loc`, noting
        each episode it completed in `log`."""
        code = WORKER.format(paths=[p for p in sys.path if p], opener=self.opener, location=self.loc, seed=seed,
                             log=str(log), episodes=episodes)
        return subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE)

    def seeded(self) -> Lamar:
        """An engine on the store at `loc` holding 4 lessons, 2 for each of tasks t0 and t1."""
        lam = Lamar(self.open(self.loc), k=2, seed=0)
        for i in range(4):
            lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task=f"t{i % 2}")))
        return lam

    # -- scrub (erasure) -------------------------------------------------------------------

    def test_two_processes_writing_at_once_lose_nothing(self) -> None:
        self._require("processes")
        lam = self.seeded()
        self.addCleanup(lam.close)
        logs = [self.folder / f"w{i}.log" for i in range(2)]
        self._finished([self.worker(log, seed, 150) for seed, log in enumerate(logs)])
        done = [line for log in logs for line in log.read_text().split()]
        self.assertEqual((len(done), len(set(done))), (300, 300))
        stats = lam.stats()
        self.assertEqual((stats["episodes"], stats["reports"]), (300, 300))
        live = {e.id: lam.evidence(e.id) for e in lam.experiences()}
        lam.rebuild()
        self.assertEqual({e.id: lam.evidence(e.id) for e in lam.experiences()}, live)

    def test_sigkill_mid_write_keeps_every_completed_write(self) -> None:
        self._require("processes")
        self.seeded().close()
        rng = random.Random(7)
        log = self.folder / "killed.log"
        for round_ in range(3):
            worker = self.worker(log, rng.randrange(1000), 100_000)
            deadline = time.monotonic() + 120
            # wait until this worker has completed writes (start-up is slow on a busy machine)
            while _lines(log) < 5 * (round_ + 1) and time.monotonic() < deadline and worker.poll() is None:
                time.sleep(0.02)
            time.sleep(rng.random() * 0.3)
            worker.send_signal(signal.SIGKILL)
            worker.wait(timeout=30)
        completed = log.read_text().split()
        self.assertTrue(completed, "the workers completed no episode before being killed")
        lam = Lamar(self.open(self.loc), k=2, seed=0)
        self.addCleanup(lam.close)
        reported = {e.data["episode"] for e in lam.store.read() if e.kind == "outcome"}
        self.assertLessEqual(set(completed), reported)
        self.assertEqual(lam.stats()["reports"], len(reported))
        for exp in lam.experiences():
            self.assertTrue(math.isfinite(lam.evidence(exp.id).estimate))

    # -- helpers -----------------------------------------------------------------------------

    def _require(self, *capabilities: str) -> None:
        for name in capabilities:
            if not getattr(self, name):
                self.skipTest(f"{type(self).__name__} declares {name} = False: the backend cannot do this")

    def _finished(self, workers: Sequence[subprocess.Popen[bytes]]) -> None:
        for w in workers:
            _, err = w.communicate(timeout=300)
            self.assertEqual(w.returncode, 0, err.decode()[-2000:])


class FileStoreConformance(StoreConformance):
    """Extra checks for backends that live in one file: `location` names the file."""

    def test_a_corrupt_file_is_a_clear_error_and_is_not_overwritten(self) -> None:
        path = Path(self.loc)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\x00\x01 this is not a store \xff" * 50)
        before = path.read_bytes()
        with self.assertRaises(CorruptStore) as caught:
            Lamar(self.open(self.loc))
        self.assertIn(str(path), str(caught.exception))
        self.assertEqual(path.read_bytes(), before)

    def test_a_truncated_file_is_a_clear_error_and_is_not_overwritten(self) -> None:
        lam = self.seeded()
        for _ in range(30):
            lam.report(lam.recall({"task": "t0"}).episode_id, Signal.ACCEPTED)
        lam.close()
        path = Path(self.loc)
        self.assertFalse(Path(f"{path}-wal").exists() and os.path.getsize(f"{path}-wal"),
                         "a write-ahead log was left beside the file: its contents are not all in the file")
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
        before = path.read_bytes()
        with self.assertRaises(CorruptStore) as caught:
            Lamar(self.open(self.loc))
        self.assertIn(str(path), str(caught.exception))
        self.assertEqual(path.read_bytes(), before)


def _note_reads(store: Any) -> list[int]:
    """The seq each later `store.read` asks after, noted as it is asked. The store object itself is
    patched rather than wrapped: a wrapper would hide the capabilities the engine finds by
    isinstance against the store Protocols (which Python 3.12 checks without `__getattr__`)."""
    afters: list[int] = []
    read = store.read

    def noted(after: int = 0) -> list[Event]:
        afters.append(after)
        return read(after)  # type: ignore[no-any-return]

    store.read = noted
    return afters


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


__all__ = ["DEFAULT_OPENER", "WORKER", "FileStoreConformance", "StoreConformance"]
