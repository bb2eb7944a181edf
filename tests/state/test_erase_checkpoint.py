"""A checkpoint by an engine that folded a lesson before another engine erased it: its snapshot
holds the lesson's text, and it must not land in the log, whether the rewrite comes after the
erase event or between the erase's scrub and its event."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lamar import Lamar
from lamar.policy.fold import ERASED
from lamar.store.memory import MemoryStore
from tests.state.test_erase_window import _SECRET, _copies, _writer


@pytest.fixture(params=["memory", "sqlite", "json", "postgres-log", "postgres-fold"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A store two engines share: one MemoryStore, or the location of a file or a namespace."""
    if request.param == "memory":
        yield MemoryStore()
    elif request.param in ("sqlite", "json"):
        yield str(tmp_path / ("shared.db" if request.param == "sqlite" else "shared.json"))
    else:
        from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

        url = request.getfixturevalue("postgres_url")
        namespace = unique_namespace("ckpt")
        yield namespace_url(url, namespace, lamar_fold="off" if request.param == "postgres-log" else "on")
        drop_namespaces(url, namespace)


def _kept(where: Any) -> list[str]:
    """Where the store still holds the secret."""
    if isinstance(where, MemoryStore):
        found = ["events"] if _SECRET in json.dumps([e.data for e in where.read(0)]) else []
        return found + (["state"] if _SECRET in (where.load_state() or "") else [])
    return _copies(where)


def _check(where: Any, exp_id: str) -> None:
    assert _kept(where) == [], "a snapshot folded before the erase keeps the text"
    lam = Lamar(where)
    assert lam.get(exp_id).action == ERASED and lam.stats()["episodes"] == 40
    lam.close()


def test_a_checkpoint_folded_before_the_erase_and_written_after_its_event_is_refused(where: Any) -> None:
    if isinstance(where, str) and "lamar_fold=on" in where:
        pytest.skip("the fold mode's checkpoint holds the write lock the erase's scrub waits for")
    writer, exp_id = _writer(where)
    rewrite = writer.store.rewrite  # type: ignore[attr-defined]

    def erased_first(through: int, snapshot: Any) -> bool:
        eraser = Lamar(where, k=2, seed=2)
        eraser.erase(exp_id, by="ops")  # the whole erase, between the checkpoint's fold and its rewrite
        if not isinstance(where, MemoryStore):
            eraser.close()
        done: bool = rewrite(through, snapshot)
        return done

    writer.store.rewrite = erased_first  # type: ignore[attr-defined]
    writer.checkpoint()
    writer.store.rewrite = rewrite  # type: ignore[attr-defined]
    _check(where, exp_id)
    if not isinstance(where, MemoryStore):  # a MemoryStore closes with its engine
        writer.close()
        _check(where, exp_id)


def test_a_checkpoint_written_between_the_scrub_and_the_erase_event_is_scrubbed(where: Any) -> None:
    writer, exp_id = _writer(where)
    eraser = Lamar(where, k=2, seed=2)
    scrub = eraser.store.scrub  # type: ignore[attr-defined]
    calls: list[int] = []

    def checkpoint_after(events: Any) -> int:
        done: int = scrub(events)
        calls.append(len(events))
        if len(calls) == 1:
            assert writer.checkpoint()  # it folded the text before the scrub, and reads only what follows
        return done

    eraser.store.scrub = checkpoint_after  # type: ignore[attr-defined]
    eraser.erase(exp_id, by="ops")
    eraser.store.scrub = scrub  # type: ignore[attr-defined]
    _check(where, exp_id)
    if not isinstance(where, MemoryStore):  # a MemoryStore closes with its engine
        writer.close()
        eraser.close()
        _check(where, exp_id)
