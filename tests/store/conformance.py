"""The store conformance suite: every backend subclasses `StoreConformance` and must pass it.

A subclass provides `location(tmp_path)` (a string a child process can open too, when
`processes` is True) and may override `open(location)`. The suite covers round-trips of
every event kind, atomic batches, unique keys, reopening, rewrites into a snapshot (also while
other processes write), concurrent writers in separate processes, SIGKILL in the middle of
writes, and corrupt files.
"""

from __future__ import annotations

import math
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from lamar import EventConflict, Experience, Lamar, Scope, Signal
from lamar.store import Event, ExperienceStore
from lamar.store.base import EVENT_KINDS
from tests.state.seam import folded

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


class StoreConformance:
    """Behaviour every store backend must show."""

    persistent = True  # survives close and reopen
    rewritable = True  # has rewrite(through, snapshot): compaction shrinks its log
    processes = True  # can be shared by several OS processes
    opener = DEFAULT_OPENER  # code defining open_store(location) inside a worker process

    def location(self, tmp_path: Path) -> str:
        raise NotImplementedError

    def open(self, location: str) -> Any:
        return ExperienceStore(location)

    # -- fixtures ----------------------------------------------------------------------------

    @pytest.fixture
    def loc(self, tmp_path: Path) -> str:
        return self.location(tmp_path)

    @pytest.fixture
    def store(self, loc: str) -> Any:
        store = self.open(loc)
        yield store
        store.close()

    # -- the log -----------------------------------------------------------------------------

    def test_append_assigns_increasing_sequence_numbers(self, store: Any) -> None:
        first = store.append([Event("status", {"id": "a", "status": "active"})])
        second = store.append([Event("status", {"id": "b", "status": "active"}),
                               Event("status", {"id": "c", "status": "active"})])
        seqs = [e.seq for e in first + second]
        assert seqs == sorted(seqs) and len(set(seqs)) == 3 and seqs[0] >= 1
        assert [e.seq for e in store.read()] == seqs
        assert [e.data["id"] for e in store.read(seqs[0])] == ["b", "c"]
        assert store.read(seqs[-1]) == []

    def test_every_event_kind_round_trips(self, store: Any) -> None:
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
            Event("applied", {"proposal": "retire_1", "kind": "retire"}, key="proposal:retire_1", time=6.0),
            Event("compact", {"episodes": ["ep_0"], "figures": {"reports": 1, "mean": 0.1 + 0.2}}, time=7.0),
            Event("snapshot", {"format": 1, "lessons": [], "rewards": [3, 0.25, 1e-300]}, time=8.0),
        ]
        assert {e.kind for e in written} == EVENT_KINDS  # a kind added to the log is tested here too
        store.append(written)
        back = store.read()
        assert [(e.kind, e.key, e.data, e.time) for e in back] == [
            (e.kind, e.key, e.data, e.time) for e in written]
        assert Experience.from_dict(back[0].data) == exp

    def test_a_duplicate_key_writes_nothing_of_the_batch(self, store: Any) -> None:
        store.append([Event("outcome", {"episode": "e"}, key="outcome:e")])
        with pytest.raises(EventConflict):
            store.append([Event("status", {"id": "x", "status": "active"}),
                          Event("outcome", {"episode": "e"}, key="outcome:e")])
        with pytest.raises(EventConflict):
            store.append([Event("outcome", {"episode": "f"}, key="k"), Event("outcome", {"episode": "g"}, key="k")])
        assert [e.key for e in store.read()] == ["outcome:e"]

    def test_engine_state_survives_reopen(self, loc: str) -> None:
        if not self.persistent:
            pytest.skip("this backend keeps nothing after close")
        store = self.open(loc)
        lam = Lamar(store, k=2, seed=3)
        ids = [lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task="t"))) for i in range(3)]
        rng = random.Random(0)
        for _ in range(60):
            rec = lam.recall({"task": "t"})
            lam.report(rec.episode_id, rng.choice(list(Signal)))
        before = ({i: lam.evidence(i) for i in ids}, lam.stats())
        store.close()
        again = Lamar(self.open(loc), k=2, seed=3)
        after = ({i: again.evidence(i) for i in ids}, again.stats())
        assert after == before
        again.close()

    # -- keyed lookup and the engine's saved state -----------------------------------------

    def test_lookup_finds_committed_events_by_key(self, store: Any) -> None:
        written = store.append([Event("episode", {"id": "e1"}, key="episode:e1"),
                                Event("status", {"id": "x", "status": "active"}),
                                Event("outcome", {"episode": "e1", "reward": 1.0}, key="outcome:e1")])
        found = store.lookup(["outcome:e1", "missing", "episode:e1"])
        assert [(e.seq, e.kind, e.key, e.data) for e in found] == [
            (written[0].seq, "episode", "episode:e1", {"id": "e1"}),
            (written[2].seq, "outcome", "outcome:e1", {"episode": "e1", "reward": 1.0})]
        assert store.lookup(["nothing"]) == [] and store.lookup([]) == []

    def test_a_saved_state_reads_back_and_is_replaced(self, store: Any) -> None:
        assert store.load_state() is None
        store.save_state(3, "abc\n{}")
        assert store.load_state() == "abc\n{}"
        store.save_state(7, "def\n{}")
        assert store.load_state() == "def\n{}"

    def test_a_resumed_engine_matches_a_replay_and_decides_the_same(self, store: Any, loc: str) -> None:
        """Evidence, stats and the next decisions (same seed) of an engine that resumed from the
        saved state equal those of one that folded the whole log; reports of episodes from
        before the state (looked up by key) count the same, duplicates are refused the same."""
        from lamar import DuplicateReport
        from lamar.store import MemoryStore

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
        folded(lam).save()
        lam.report(open_eps.pop(), Signal.SHIPPED)  # a tail after the state
        lam.close()
        events = (store if not self.persistent else self.open(loc)).read()
        replay_store = MemoryStore()
        replay_store.append([Event(e.kind, e.data, e.key, time=e.time) for e in events])
        resumed = Lamar(store if not self.persistent else self.open(loc), k=2, seed=9)
        replayed = Lamar(replay_store, k=2, seed=9)
        stats = resumed.stats()  # a fold-mode engine resumes here, at its first call that folds the log
        assert folded(resumed).cache.partial and not folded(replayed).cache.partial
        assert {i: resumed.evidence(i) for i in ids} == {i: replayed.evidence(i) for i in ids}
        unlike = {"store": None} | ({"events": None} if getattr(resumed.store, "rows", None) is not None else {})
        assert stats | unlike == replayed.stats() | unlike  # (the fold mode's seqs are not dense)
        for engine in (resumed, replayed):
            with pytest.raises(DuplicateReport):
                engine.report(reported[3], Signal.SHIPPED)
        world = random.Random(6)
        for n in range(60):
            context = {"task": f"t{n % 3}", "project": "p"}
            a, b = resumed.recall(context), replayed.recall(context)
            assert (a.ids, a.held_out, a.propensities) == (b.ids, b.held_out, b.propensities)
            signal = world.choice(list(Signal))
            resumed.report(a.episode_id, signal)
            replayed.report(b.episode_id, signal)
            if n < len(open_eps):  # late reports of episodes recalled before the state was saved
                resumed.report(open_eps[n], signal)
                replayed.report(open_eps[n], signal)
        assert resumed.episode(reported[0]).reward == replayed.episode(reported[0]).reward
        assert {i: resumed.evidence(i) for i in ids} == {i: replayed.evidence(i) for i in ids}
        resumed.report(reported[1], -0.5, replace=True)  # unfolds an outcome: the whole log again
        replayed.report(reported[1], -0.5, replace=True)
        assert not folded(resumed).cache.partial
        assert {i: resumed.evidence(i) for i in ids} == {i: replayed.evidence(i) for i in ids}
        resumed.close()

    # -- rewrite (checkpoints) ---------------------------------------------------------------

    def _require_rewrite(self) -> None:
        if not self.rewritable:
            pytest.skip("this backend has no rewrite(): compaction frees the engine's memory, "
                        "but its log keeps growing (documented)")

    def test_rewrite_replaces_the_start_of_the_log_by_a_snapshot(self, store: Any) -> None:
        self._require_rewrite()
        written = store.append([Event("status", {"id": f"s{i}", "status": "active"}, key=f"k{i}")
                                for i in range(5)])
        seqs = [e.seq for e in written]
        snapshot = Event("snapshot", {"format": 1, "figures": [0.1 + 0.2, None]}, time=9.5)
        assert store.rewrite(seqs[2], snapshot) is True
        back = store.read()
        assert [(e.kind, e.seq) for e in back] == [("snapshot", seqs[2]), ("status", seqs[3]), ("status", seqs[4])]
        assert (back[0].data, back[0].time, back[0].key) == (snapshot.data, 9.5, None)
        assert [e.seq for e in store.read(seqs[0])] == [e.seq for e in back]  # behind: the snapshot first
        assert [e.seq for e in store.read(seqs[2])] == seqs[3:]  # past it: the log as it was
        (more,) = store.append([Event("status", {"id": "s5", "status": "active"}, key="k5")])
        assert more.seq > seqs[4]
        with pytest.raises(EventConflict):
            store.append([Event("status", {"id": "again", "status": "active"}, key="k4")])  # kept: still taken
        store.append([Event("status", {"id": "s0", "status": "active"}, key="k0")])  # replaced: free again
        assert store.rewrite(seqs[1], snapshot) is False  # already checkpointed past it
        assert store.read()[0].seq == seqs[2]
        with pytest.raises(ValueError):
            store.rewrite(more.seq + 10, snapshot)

    def test_a_checkpointed_store_reopens_the_same(self, loc: str) -> None:
        self._require_rewrite()
        if not self.persistent:
            pytest.skip("this backend keeps nothing after close")
        lam = self._seed_lessons(loc)
        rng = random.Random(1)
        unreported = []
        for n in range(90):
            rec = lam.recall({"task": f"t{n % 2}"})
            if n % 9:
                lam.report(rec.episode_id, rng.choice(list(Signal)))
            else:
                unreported.append(rec.episode_id)
            if n in (40, 70):
                assert lam.checkpoint() is True
        lam.report(unreported[0], Signal.SHIPPED)  # an episode left open by a checkpoint stays open
        before = ({e.id: lam.evidence(e.id) for e in lam.experiences()}, lam.stats())
        lam.close()
        again = Lamar(self.open(loc), k=2, seed=0)
        assert ({e.id: again.evidence(e.id) for e in again.experiences()}, again.stats()) == before
        assert again.store.read()[0].kind == "snapshot"
        again.close()

    def test_checkpoints_while_other_processes_write_lose_nothing(self, tmp_path: Path, loc: str) -> None:
        self._require_rewrite()
        if not self.processes:
            pytest.skip("this backend lives in one process")
        lam = self._seed_lessons(loc)
        logs = [tmp_path / f"c{i}.log" for i in range(2)]
        workers = [self._worker(tmp_path, loc, log, seed, 120) for seed, log in enumerate(logs)]
        checkpoints = 0
        while any(w.poll() is None for w in workers):
            checkpoints += lam.checkpoint()  # each worker is behind now and then, and re-syncs
            time.sleep(0.05)
        for w in workers:
            _, err = w.communicate(timeout=300)
            assert w.returncode == 0, err.decode()[-2000:]
        done = [line for log in logs for line in log.read_text().split()]
        assert len(done) == 240 and checkpoints > 0
        stats = lam.stats()
        assert stats["episodes"] == 240 and stats["reports"] == 240
        # every report counted exactly once: each episode was eligible for the 2 lessons of its task
        assert sum(lam.evidence(e.id).eligible for e in lam.experiences()) == 480
        reopened = Lamar(self.open(loc), k=2, seed=0)
        assert {e.id: reopened.evidence(e.id) for e in reopened.experiences()} == {
            e.id: lam.evidence(e.id) for e in lam.experiences()}
        assert reopened.stats() == lam.stats()
        reopened.close()
        lam.close()

    # -- processes ---------------------------------------------------------------------------

    def _worker(self, tmp_path: Path, loc: str, log: Path, seed: int, episodes: int) -> subprocess.Popen[bytes]:
        import lamar

        paths = [str(Path(lamar.__file__).parents[1]), str(Path(__file__).parents[2])]
        code = WORKER.format(paths=paths, opener=self.opener, location=loc, seed=seed, log=str(log),
                             episodes=episodes)
        return subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE)

    def _seed_lessons(self, loc: str) -> Lamar:
        lam = Lamar(self.open(loc), k=2, seed=0)
        for i in range(4):
            lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task=f"t{i % 2}")))
        return lam

    def test_two_processes_writing_at_once_lose_nothing(self, tmp_path: Path, loc: str) -> None:
        if not self.processes:
            pytest.skip("this backend lives in one process")
        lam = self._seed_lessons(loc)
        logs = [tmp_path / f"w{i}.log" for i in range(2)]
        workers = [self._worker(tmp_path, loc, log, seed, 150) for seed, log in enumerate(logs)]
        for w in workers:
            _, err = w.communicate(timeout=300)
            assert w.returncode == 0, err.decode()[-2000:]
        done = [line for log in logs for line in log.read_text().split()]
        assert len(done) == 300 and len(set(done)) == 300
        stats = lam.stats()
        assert stats["episodes"] == 300 and stats["reports"] == 300
        live = {e.id: lam.evidence(e.id) for e in lam.experiences()}
        lam.rebuild()
        assert {e.id: lam.evidence(e.id) for e in lam.experiences()} == live
        lam.close()

    def test_sigkill_mid_write_keeps_every_completed_write(self, tmp_path: Path, loc: str) -> None:
        if not self.processes:
            pytest.skip("this backend lives in one process")
        self._seed_lessons(loc).close()
        rng = random.Random(7)
        log = tmp_path / "killed.log"
        for round_ in range(3):
            worker = self._worker(tmp_path, loc, log, rng.randrange(1000), 100_000)
            deadline = time.monotonic() + 120
            # wait until this worker has completed writes (start-up is slow on a busy machine)
            while _lines(log) < 5 * (round_ + 1) and time.monotonic() < deadline and worker.poll() is None:
                time.sleep(0.02)
            time.sleep(rng.random() * 0.3)
            worker.send_signal(signal.SIGKILL)
            worker.wait(timeout=30)
        completed = log.read_text().split()
        assert completed, "the workers completed no episode before being killed"
        lam = Lamar(self.open(loc), k=2, seed=0)
        reported = {e.data["episode"] for e in lam.store.read() if e.kind == "outcome"}
        assert set(completed) <= reported
        assert lam.stats()["reports"] == len(reported)
        for exp in lam.experiences():
            assert math.isfinite(lam.evidence(exp.id).estimate)
        lam.close()


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


class FileStoreConformance(StoreConformance):
    """Extra checks for backends that live in one file."""

    def test_a_corrupt_file_is_a_clear_error_and_is_not_overwritten(self, tmp_path: Path, loc: str) -> None:
        from lamar import CorruptStore

        path = Path(loc)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\x00\x01 this is not a store \xff" * 50)
        before = path.read_bytes()
        with pytest.raises(CorruptStore) as info:
            Lamar(self.open(loc))
        assert str(path) in str(info.value)
        assert path.read_bytes() == before

    def test_a_truncated_file_is_a_clear_error_and_is_not_overwritten(self, tmp_path: Path, loc: str) -> None:
        from lamar import CorruptStore

        lam = self._seed_lessons(loc)
        for _ in range(30):
            lam.report(lam.recall({"task": "t0"}).episode_id, Signal.ACCEPTED)
        lam.close()
        for name in os.listdir(tmp_path):  # fold a SQLite WAL into the main file first
            if name.endswith("-wal"):
                pytest.skip("WAL not checkpointed")
        path = Path(loc)
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
        before = path.read_bytes()
        with pytest.raises(CorruptStore) as info:
            Lamar(self.open(loc))
        assert str(path) in str(info.value)
        assert path.read_bytes() == before
