"""Promise 5, bounded growth: compaction checkpoints the store into one snapshot event, so the
log and the engine stay bounded, and nothing the engine knows or decides changes."""

from __future__ import annotations

import multiprocessing
import os
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lamar import DuplicateReport, Experience, Lamar, Scope, Signal, StoreError, UnknownEpisode
from lamar.store import Event, MemoryStore, open_store
from tests.state.seam import folded

# The first context has enough fields that recall walks the scope index (in its order); the
# others are looked up by subsets of their fields. A checkpoint must keep both paths the same.
CONTEXTS = [{"task": "build", "lang": "swift", "os": "mac"}, {"task": "build", "lang": "go"}, {"task": "test"}]


def _lessons(lam: Lamar) -> list[str]:
    ids = [lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task="build"))) for i in range(4)]
    ids.append(lam.add(Experience("swift case", "clear DerivedData", scope=Scope(task="build", lang="swift"))))
    ids.append(lam.add(Experience("go case", "go clean", scope=Scope(task="build", lang="go"))))
    ids.append(lam.add(Experience("test case", "rerun once", scope=Scope(task="test"))))
    ids.append(lam.add(Experience("only lesson of its scope", "x", scope=Scope(task="gone"))))
    return ids


def _play(lam: Lamar, episodes: int, rng: random.Random, *, skip_every: int = 0,
          contexts: list[dict[str, str]] = CONTEXTS) -> list[str]:
    """Recall and report (leaving every `skip_every`-th episode unreported)."""
    ids = []
    for n in range(episodes):
        rec = lam.recall(rng.choice(contexts))
        ids.append(rec.episode_id)
        if not (skip_every and n % skip_every == 0):
            lam.report(rec.episode_id, rng.choice([*Signal, 0.25, -0.5]))
    return ids


def _copy(events: list[Event]) -> MemoryStore:
    store = MemoryStore()
    store.append([Event(e.kind, e.data, e.key, time=e.time) for e in events])
    return store


def _state(lam: Lamar) -> tuple[Any, ...]:
    stats = lam.stats()
    stats.pop("store")
    return {e.id: lam.evidence(e.id) for e in lam.experiences()}, [e.to_dict() for e in lam.experiences()], stats


def _decisions(lam: Lamar, rng: random.Random, n: int) -> list[tuple[Any, ...]]:
    out = []
    for _ in range(n):
        rec = lam.recall(rng.choice(CONTEXTS))
        lam.report(rec.episode_id, rng.choice(list(Signal)))
        out.append((rec.eligible, tuple(rec.ids), rec.held_out, rec.propensities))
    return out


def test_a_checkpoint_changes_no_evidence_stat_or_decision() -> None:
    lam = Lamar(":memory:", k=2, seed=4)
    ids = _lessons(lam)
    rng = random.Random(4)
    episodes = _play(lam, 900, rng, skip_every=11)
    lam.retire(ids[7], "its scope is gone")  # an empty scope bucket: recall's walk must not change
    lam.retire(ids[3])
    lam.revive(ids[3])
    lam.report(episodes[5], Signal.REVERTED, replace=True)
    compact = lam.sleep(keep_last=200).of_kind("compact")
    lam.store.append([Event("compact", dict(compact[0].payload))])  # a compaction without a checkpoint
    lam.store.append([Event("merge", {"into": ids[0], "from": [ids[1]]})])
    _play(lam, 300, rng, skip_every=7)
    full = _copy(lam.store.read())

    assert lam.checkpoint() is True
    events = lam.store.read()
    assert [e.kind for e in events] == ["snapshot"]
    assert lam.checkpoint() is False  # nothing new since

    folded = Lamar(full, k=2, seed=99)  # the whole log, folded event by event
    restored = Lamar(lam.store, k=2, seed=99)  # the snapshot alone
    assert _state(restored) == _state(folded) == _state(lam)
    assert restored.episode(episodes[-1]).context == folded.episode(episodes[-1]).context
    # the same seed then makes the same 50 decisions, and they teach the same evidence
    assert _decisions(restored, random.Random(8), 50) == _decisions(folded, random.Random(8), 50)
    assert _state(restored) == _state(folded)


class _Journal(MemoryStore):
    """A store that also keeps every event ever appended: the log as it would be uncompacted."""

    def __init__(self) -> None:
        super().__init__()
        self.journal: list[Event] = []

    def append(self, events: Any) -> list[Event]:
        stored = super().append(events)
        self.journal += stored
        return stored


operation = st.one_of(
    st.tuples(st.just("episode"), st.integers(0, 2), st.booleans()),
    st.tuples(st.just("report"), st.integers(0, 99), st.sampled_from([*Signal, 0.5, -0.25]), st.booleans()),
    st.tuples(st.just("status"), st.integers(0, 7), st.sampled_from(["retire", "revive"])),
    st.tuples(st.just("compact"), st.integers(0, 30)),
    st.tuples(st.just("checkpoint")),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(operation, max_size=80), seed=st.integers(0, 2**16))
def test_any_mix_of_checkpoints_and_compactions_folds_like_the_whole_log(ops: list[tuple], seed: int) -> None:
    store = _Journal()
    lam = Lamar(store, k=2, seed=seed)
    ids = _lessons(lam)
    open_or_done: list[str] = []
    for op in ops:
        try:
            if op[0] == "episode":
                rec = lam.recall(CONTEXTS[op[1]])
                open_or_done.append(rec.episode_id)
                if op[2]:
                    lam.report(rec.episode_id, Signal.SHIPPED)
            elif op[0] == "report" and open_or_done:
                lam.report(open_or_done[op[1] % len(open_or_done)], op[2], replace=op[3])
            elif op[0] == "status":
                getattr(lam, op[2])(ids[op[1]])
            elif op[0] == "compact":
                report = lam.sleep(keep_last=op[1])
                lam.apply(report, only=[p.id for p in report.of_kind("compact")])
            elif op[0] == "checkpoint":
                lam.checkpoint()
        except (UnknownEpisode, DuplicateReport):
            pass  # compacted, already reported, or sealed by a checkpoint: refused before any write
    whole = Lamar(_copy(store.journal), k=2, seed=seed + 1)
    again = Lamar(store, k=2, seed=seed + 1)
    assert _state(again) == _state(whole) == _state(lam)
    assert _decisions(again, random.Random(seed), 10) == _decisions(whole, random.Random(seed), 10)


def test_compaction_keeps_the_log_and_the_engine_bounded() -> None:
    lam = Lamar(":memory:", k=3, seed=1)
    for i in range(6):
        lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task="build")))
    rng = random.Random(1)
    longest = cached = 0
    for _ in range(4):  # 20 000 episodes (1 in 10 never reported), compacted every 5 000
        _play(lam, 5_000, random.Random(rng.random()), skip_every=10, contexts=[{"task": "build"}])
        longest = max(longest, len(lam.store.read()))
        cached = max(cached, len(folded(lam).cache.episodes))
        report = lam.sleep(keep_last=1_000, keep_unreported=2_000)
        assert lam.apply(report, only=[p.id for p in report.of_kind("compact")]).applied
        assert len(lam.store.read()) == 1 and len(folded(lam).cache.episodes) <= 1_000 + 100
    assert longest <= 1 + 2 * 5_000 and cached <= 5_000 + 1_100
    stats = lam.stats()
    assert (stats["episodes"], stats["reports"]) == (20_000, 18_000)
    assert stats["compacted"]["episodes"] == 20_000 - len(folded(lam).cache.episodes)
    assert stats["compacted"]["compactions"] == 4
    assert stats["compacted"]["episodes"] - stats["compacted"]["reports"] >= 1_800  # the abandoned ones
    assert sum(lam.evidence(e.id).eligible for e in lam.experiences()) == 6 * 18_000


def test_a_compacted_sqlite_file_stops_growing(tmp_path: Path) -> None:
    path = tmp_path / "bounded.db"
    lam = Lamar(path, k=3, seed=2)
    for i in range(6):
        lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task="build")))
    rng = random.Random(2)
    sizes = []
    for _ in range(5):  # 5 x 1 200 episodes, compacted each time keeping the newest 200
        _play(lam, 1_200, rng)
        report = lam.sleep(keep_last=200)
        lam.apply(report, only=[p.id for p in report.of_kind("compact")])
        sizes.append(sum(os.path.getsize(f"{path}{s}") for s in ("", "-wal") if os.path.exists(f"{path}{s}")))
    # freed pages are reused: after the first cycles the file holds at its high-water mark
    assert max(sizes[2:]) <= sizes[1] * 1.1, sizes
    assert len(lam.store.read()) == 1
    lam.close()
    reopened = Lamar(path, k=3, seed=2)
    assert reopened.stats()["episodes"] == 6_000 and reopened.stats()["reports"] == 6_000


def test_a_report_of_a_compacted_or_checkpointed_episode_is_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "refuse.json"
    lam = Lamar(path, k=2, seed=3)
    _lessons(lam)
    rng = random.Random(3)
    old = _play(lam, 40, rng)
    late = _play(lam, 10, rng, skip_every=1)  # never reported
    report = lam.sleep(keep_last=5)
    lam.apply(report, only=[p.id for p in report.of_kind("compact")])
    kept = _play(lam, 3, rng)
    assert lam.checkpoint() is True
    for engine in (lam, Lamar(path, k=2, seed=3)):  # this process, and a fresh one
        with pytest.raises(UnknownEpisode, match="compacted") as info:
            engine.report(old[0], Signal.SHIPPED)
        assert old[0] in str(info.value)
        with pytest.raises(DuplicateReport, match="final") as final:  # not told to pass replace=True
            engine.report(kept[0], Signal.SHIPPED)
        assert "replace=True" not in str(final.value)
        with pytest.raises(DuplicateReport, match="final"):
            engine.report(kept[0], Signal.REVERTED, replace=True)
    lam.report(late[0], Signal.SHIPPED)  # an open episode outlives compaction and checkpoints
    lam.report(late[0], Signal.REVERTED, replace=True)  # and its new outcome is not sealed yet
    assert lam.episode(late[0]).signal == "reverted"
    assert Lamar(path, k=2, seed=3).stats() | {"store": ""} == lam.stats() | {"store": ""}
    report = lam.sleep(keep_last=0, keep_unreported=0)  # give up waiting for the other 9 reports
    lam.apply(report, only=[p.id for p in report.of_kind("compact")])
    with pytest.raises(UnknownEpisode, match="unreported past keep_unreported"):
        lam.report(late[1], Signal.SHIPPED)
    audit = lam.stats()["compacted"]
    assert lam.stats()["unreported"] == audit["episodes"] - audit["reports"] == 9


class _Racing(MemoryStore):
    """A store that lets another writer act just before the next append lands."""

    def __init__(self) -> None:
        super().__init__()
        self.before_next_append: Any = None

    def append(self, events: Any) -> list[Event]:
        hook, self.before_next_append = self.before_next_append, None
        if hook is not None:
            hook()
        return super().append(events)


@pytest.mark.parametrize("then", ["checkpoint", "compact"])
def test_a_report_racing_a_checkpoint_is_refused_and_counted_once(then: str) -> None:
    store = _Racing()
    mine, other = Lamar(store, k=2, seed=5), Lamar(store, k=2, seed=6)
    _lessons(mine)
    rec = mine.recall(CONTEXTS[0])

    def other_reports_and_checkpoints() -> None:
        other.report(rec.episode_id, 1.0)
        if then == "compact":
            report = other.sleep(keep_last=0)
            other.apply(report, only=[p.id for p in report.of_kind("compact")])
        else:
            other.checkpoint()  # the checkpoint drops the key that refused a second report

    store.before_next_append = other_reports_and_checkpoints
    with pytest.raises(DuplicateReport, match="not counted"):
        mine.report(rec.episode_id, -1.0)
    assert store.read()[-1].kind == "outcome"  # written, and refused by every fold
    for engine in (mine, other, Lamar(store)):
        assert engine.stats()["reports"] == 1
        assert sum(engine.evidence(i).eligible for i in (e.id for e in engine.experiences())) == len(rec.eligible)
    assert _state(mine) == _state(other) == _state(Lamar(store))


def test_a_store_without_rewrite_still_compacts_its_cache() -> None:
    class AppendOnly:  # the store protocol alone
        def __init__(self) -> None:
            self._inner = MemoryStore()
            self.location = "append-only"

        def append(self, events: Any) -> list[Event]:
            return self._inner.append(events)

        def read(self, after: int = 0) -> list[Event]:
            return self._inner.read(after)

        def close(self) -> None:
            pass

    lam = Lamar(AppendOnly(), k=2, seed=1)
    _lessons(lam)
    _play(lam, 50, random.Random(1))
    report = lam.sleep(keep_last=10)
    assert lam.apply(report, only=[p.id for p in report.of_kind("compact")]).applied
    assert len(folded(lam).cache.episodes) == 10 and any(e.kind == "compact" for e in lam.store.read())
    with pytest.raises(StoreError, match="cannot rewrite"):
        lam.checkpoint()


def _writer(path: str, log: str, seed: int, episodes: int) -> None:
    lam = Lamar(path, k=2, seed=seed)
    rng = random.Random(seed)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    for _ in range(episodes):
        rec = lam.recall({"task": f"t{rng.randrange(2)}"})
        lam.report(rec.episode_id, rng.choice(list(Signal)))
        os.write(fd, (rec.episode_id + "\n").encode())


@pytest.mark.parametrize("suffix", ["json", "db"])
def test_compaction_while_other_processes_write_loses_nothing(tmp_path: Path, suffix: str) -> None:
    path = str(tmp_path / f"busy.{suffix}")
    lam = Lamar(path, k=2, seed=0)
    for i in range(4):
        lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task=f"t{i % 2}")))
    ctx = multiprocessing.get_context("fork")
    logs = [str(tmp_path / f"w{i}.log") for i in range(2)]
    workers = [ctx.Process(target=_writer, args=(path, log, i + 1, 150)) for i, log in enumerate(logs)]
    for w in workers:
        w.start()
    compactions = 0
    while any(w.is_alive() for w in workers):
        report = lam.sleep(keep_last=20)
        compactions += len(lam.apply(report, only=[p.id for p in report.of_kind("compact")]).applied)
    for w in workers:
        w.join()
        assert w.exitcode == 0
    done = [line for log in logs for line in Path(log).read_text().split()]
    assert len(done) == len(set(done)) == 300 and compactions > 0
    stats = lam.stats()
    assert (stats["episodes"], stats["reports"]) == (300, 300)
    # each episode was eligible for the 2 lessons of its task: every report counted exactly once
    assert sum(lam.evidence(e.id).eligible for e in lam.experiences()) == 600
    reopened = Lamar(path, k=2, seed=0)
    assert _state(reopened) == _state(lam)
    report = lam.sleep(keep_last=0)
    lam.apply(report, only=[p.id for p in report.of_kind("compact")])
    assert len(open_store(path).read()) == 1  # everything folded into one snapshot
