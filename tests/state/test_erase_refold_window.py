"""An engine that reads the log between the erase event and the scrub folds the text still
stored; what it checkpoints after the erase ended holds none of it, and a second erase leaves none."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from lamar import Lamar, Signal
from lamar.experience import Experience, Scope
from lamar.store.base import Event

NAME = "Ottoline Brandquist"


def _files(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


@pytest.mark.parametrize("name", ["s.db", "s.json"])
@pytest.mark.parametrize("contexts", [True, False])
def test_an_engine_folding_between_the_event_and_the_scrub_keeps_no_text(
        tmp_path: Path, monkeypatch: Any, name: str, contexts: bool) -> None:
    path = str(tmp_path / name)
    lam = Lamar(path, k=2, seed=4)
    secret = lam.add(Experience("a crash", f"ask {NAME} for the log", scope=Scope(task="t")))
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
    rng = random.Random(4)
    for n in range(60):
        rec = lam.recall({"task": "t", "user": NAME if n % 2 else "plain"})
        lam.report(rec.episode_id, rng.choice(list(Signal)))
    other = Lamar(path, k=2, seed=5)
    other.stats()
    append = lam.store.append

    def late(events: Any) -> Any:
        done = append(events)
        if any(e.kind == "erase" for e in events):
            other.stats()  # it reads the erase event, and folds the log anew as it is stored now
        return done

    monkeypatch.setattr(lam.store, "append", late)
    lam.erase(secret, contexts=contexts, by="ops")
    lam.close()
    assert other.checkpoint() is True
    other.close()
    again = Lamar(path, k=2, seed=6)
    again.erase(secret)  # after a checkpoint took the erase event in, a second erase scrubs again
    again.close()
    if contexts:
        assert NAME.encode() not in _files(tmp_path)
    else:  # the contexts stay; the lesson's text goes
        assert f"ask {NAME}".encode() not in _files(tmp_path)


@pytest.mark.parametrize("name", ["s.db", "s.json"])
def test_a_narrowing_folded_before_the_scrub_leaves_its_value_in_no_checkpoint(
        tmp_path: Path, monkeypatch: Any, name: str) -> None:
    # The other engine notes "scope narrowed to customer=<value>" from the unscrubbed scope event;
    # folding the erase event has to erase that note, or its checkpoint and saved state keep it.
    path = str(tmp_path / name)
    lam = Lamar(path, k=2, seed=4)
    secret = lam.add(Experience("the deploy fails", "roll back first", scope=Scope(project="acme")))
    lam.add(Experience("the build fails", "clear the cache"))
    rng = random.Random(4)
    for n in range(40):
        if n == 10:  # a narrowing, as sleep applies it
            lam.store.append([Event("scope", {"id": secret, "key": "customer", "value": NAME,
                                              "reason": "sleep narrow"})])
        rec = lam.recall({"project": "acme", "customer": NAME if n % 2 else "Bo"})
        lam.report(rec.episode_id, rng.choice(list(Signal)))
    other = Lamar(path, k=2, seed=5)
    append = lam.store.append

    def late(events: Any) -> Any:
        done = append(events)
        if any(e.kind == "erase" for e in events):
            other.stats()  # it folds the narrowing as still stored, then the erase event
        return done

    monkeypatch.setattr(lam.store, "append", late)
    lam.erase(secret, contexts=True, by="ops")
    lam.close()
    assert [note for _, note in other.history(secret).trail if "narrowed" in note] == [
        "scope narrowed to customer=[erased]"]
    assert other.checkpoint() is True
    other.close()
    assert NAME.encode() not in _files(tmp_path)
