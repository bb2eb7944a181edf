"""A proposal is applied once, checkpoints included: a checkpoint keeps refusing the keys of the
proposals it folded, in every store, however the writers of one report interleave with it."""

from __future__ import annotations

import multiprocessing
import random
import time
from pathlib import Path
from typing import Any

import pytest

import lamar.sleep
from lamar import EventConflict, Experience, Lamar, Scope, SleepReport
from lamar.store import Event
from lamar.store.memory import MemoryStore
from tests.sleep.test_sleep_end_to_end import noticing_model, write_sessions


def made(lam: Lamar, traces: Path) -> tuple[SleepReport, str]:
    """A report that merges two near-duplicates and adds a mined candidate; the lesson the merge keeps."""
    docs = Scope(project="docs")
    kept = lam.add(Experience("tests are flaky", "rerun the failing test once", scope=docs))
    lam.add(Experience("Tests are flaky.", "Rerun the failing test once!", scope=docs))
    lam.add(Experience("a test fails", "read the whole log first", scope=Scope(project="trace")))
    write_sessions(traces, lam)
    report = lam.sleep(traces=traces, model=noticing_model())
    assert sorted(p.kind for p in report) == ["candidate", "merge"]
    return report, kept


def merged_from(lam: Lamar, into: str) -> list[str]:
    return list(lam.get(into).provenance.get("merged_from", []))


def test_apply_checkpoint_apply_applies_nothing_the_second_time(store_location: str, tmp_path: Path) -> None:
    lam = Lamar(store_location, k=2, seed=1)
    report, into = made(lam, tmp_path / "traces.jsonl")
    assert lam.apply(report).applied == [p.id for p in report]
    assert lam.checkpoint()
    lam.close()
    again = Lamar(store_location, k=2, seed=1)
    result = again.apply(SleepReport.from_dict(report.to_dict()))
    assert result.applied == [] and result.skipped == [(p.id, "already applied") for p in report]
    assert len(merged_from(again, into)) == 1
    # The store refuses each proposal's key too, as before the checkpoint: a writer that checked
    # before the checkpoint is refused when it writes.
    for proposal in report:
        with pytest.raises(EventConflict, match=f"proposal:{proposal.id}"):
            again.store.append([Event("applied", {"proposal": proposal.id, "kind": proposal.kind},
                                      key=f"proposal:{proposal.id}")])
    again.close()


def test_a_checkpoint_between_the_check_and_the_write_still_refuses_the_write(
        store_location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lam = Lamar(store_location, k=2, seed=1)
    report, into = made(lam, tmp_path / "traces.jsonl")
    late = Lamar(store_location, k=2, seed=1)
    checked = lamar.sleep._checked
    first = report.proposals[0].id

    def meanwhile(view: Any, proposal: Any, removed: dict[str, str]) -> Any:
        out = checked(view, proposal, removed)
        if view.store is late.store and proposal.id == first:
            # `late` found the proposal unapplied; another engine applies the report and
            # checkpoints before `late` writes.
            assert lam.apply(report).applied == [p.id for p in report]
            assert lam.checkpoint()
        return out

    monkeypatch.setattr(lamar.sleep, "_checked", meanwhile)
    result = late.apply(report)
    assert result.applied == []
    assert result.skipped == [(first, "already applied (by another writer)"),
                              *[(p.id, "already applied") for p in report.proposals[1:]]]
    assert merged_from(late, into) == merged_from(lam, into) and len(merged_from(late, into)) == 1
    late.close()
    lam.close()


def test_the_memory_store_refuses_a_key_its_checkpoint_holds() -> None:
    store = MemoryStore()
    written = store.append([Event("applied", {"proposal": "merge_1", "kind": "merge"}, key="proposal:merge_1")])
    store.append([Event("status", {"id": "x", "status": "retired"})])
    assert store.rewrite(written[0].seq, Event("snapshot", {"applied": ["merge_1"]}))
    with pytest.raises(EventConflict, match="proposal:merge_1"):
        store.append([Event("applied", {"proposal": "merge_1", "kind": "merge"}, key="proposal:merge_1")])
    assert [e.kind for e in store.read(0)] == ["snapshot", "status"]
    assert store.append([Event("applied", {"proposal": "merge_2", "kind": "merge"}, key="proposal:merge_2")])


# Two processes apply the same report, round after round; one of them checkpoints before each
# proposal it checks. Each waits a moment (drawn from a fixed seed) between its check and its
# write: the window in which the other's write and checkpoint land.
ROUNDS = 6


def _apply_rounds(locations: list[str], reports: list[dict[str, Any]], checkpoints: bool, seed: int,
                  barrier: Any, results: Any) -> None:
    rng = random.Random(seed)
    checked = lamar.sleep._checked
    for location, data in zip(locations, reports, strict=True):
        try:
            lam = Lamar(location, k=2, seed=1)

            def slowly(view: Any, proposal: Any, removed: dict[str, str], lam: Lamar = lam) -> Any:
                if checkpoints:
                    lam.checkpoint()
                out = checked(view, proposal, removed)
                time.sleep(rng.uniform(0.0, 0.05))
                return out

            lamar.sleep._checked = slowly  # type: ignore[assignment]
            barrier.wait(timeout=60)
            result = lam.apply(SleepReport.from_dict(data))
            lam.checkpoint()
            results.put((location, result.applied))
            lam.close()
        except BaseException as exc:  # the test fails with it, rather than waiting for this round
            results.put((location, f"{type(exc).__name__}: {exc}"))
            barrier.abort()
            raise


def test_two_processes_apply_each_proposal_once_while_one_checkpoints(
        store_location: str, tmp_path: Path) -> None:
    locations, reports, targets = [], [], {}
    for round_ in range(ROUNDS):
        location = (store_location.replace("lamar_namespace=", f"lamar_namespace=r{round_}")
                    if "lamar_namespace=" in store_location else str(Path(store_location).with_stem(f"shared{round_}")))
        lam = Lamar(location, k=2, seed=1)
        report, targets[location] = made(lam, tmp_path / f"traces{round_}.jsonl")
        lam.close()
        locations.append(location)
        reports.append(report.to_dict())
    try:
        ctx = multiprocessing.get_context("fork")
        barrier, results = ctx.Barrier(2), ctx.Queue()
        procs = [ctx.Process(target=_apply_rounds, args=(locations, reports, checkpoints, 7 + n, barrier, results))
                 for n, checkpoints in enumerate((True, False))]
        for proc in procs:
            proc.start()
        outcomes: list[tuple[str, list[str] | str]] = []
        while len(outcomes) < 2 * ROUNDS and not any(isinstance(why, str) for _, why in outcomes):
            outcomes.append(results.get(timeout=300))
        assert [why for _, why in outcomes if isinstance(why, str)] == []
        for proc in procs:
            proc.join(timeout=60)
            assert proc.exitcode == 0
        for location, data in zip(locations, reports, strict=True):
            applied = [pid for at, ids in outcomes if at == location for pid in ids]
            assert sorted(applied) == sorted(p["id"] for p in data["proposals"]), location
            lam = Lamar(location, k=2, seed=1)
            assert len(merged_from(lam, targets[location])) == 1, location
            lam.close()
    finally:
        if "lamar_namespace=" in store_location:
            from tests.conftest import POSTGRES_URL
            from tests.store.test_postgres import drop_namespaces

            drop_namespaces(POSTGRES_URL, *[loc.split("lamar_namespace=")[1].split("&")[0] for loc in locations])


@pytest.mark.parametrize("json1", [True, False])
def test_sqlite_reads_the_held_keys_with_or_without_json1(json1: bool) -> None:
    import sqlite3

    from lamar.store.held import refuse_in_sqlite

    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY, kind TEXT, key TEXT, data TEXT)")
    db.execute("""INSERT INTO events VALUES (5, 'snapshot', NULL, '{"applied":["merge_1"]}')""")

    class WithoutJson1:  # a SQLite built without the JSON functions
        def execute(self, sql: str, *args: Any) -> Any:
            if "json_each" in sql:
                raise sqlite3.OperationalError("no such function: json_each")
            return db.execute(sql, *args)

    conn: Any = db if json1 else WithoutJson1()
    with pytest.raises(sqlite3.IntegrityError, match="proposal:merge_1"):
        refuse_in_sqlite(conn, [Event("applied", {"proposal": "merge_1", "kind": "merge"}, key="proposal:merge_1")])
    refuse_in_sqlite(conn, [Event("applied", {"proposal": "merge_2", "kind": "merge"}, key="proposal:merge_2")])
