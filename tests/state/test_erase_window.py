"""An engine that folded a lesson before another process erased it saves its state at the worst
moment: between the erase's first drop of the saved state and its event, or after reading the log
and before the erase ended. No copy of the text is left in the store either way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lamar import Experience, Lamar
from lamar.policy.fold import ERASED
from tests.at_once import _CONTEXT

_SECRET = "Ottoline Brandquist"


def _writer(where: Any) -> tuple[Lamar, str]:
    """An engine (on a location or a store) that folded the secret lesson and wrote enough since
    its last save to save at close, or to checkpoint."""
    lam = Lamar(where, k=2, seed=1)
    for i in range(3):
        lam.add(Experience(f"case {i}", f"do {i}"))
    exp_id = lam.add(Experience("the crash is reported", f"ask {_SECRET} for the log"))
    for _ in range(40):
        lam.report(lam.recall({"task": "x"}).episode_id, 0.5)
    return lam, exp_id


def _erase_pausing(location: str, exp_id: str, steps: Any, said: Any) -> None:
    """Erase, holding still after its first scrub (the drop of the saved state before the erase
    event) until told to go on."""
    lam = Lamar(location, k=2, seed=2)
    scrub = lam.store.scrub  # type: ignore[attr-defined]

    def paused(events: Any) -> int:
        done: int = scrub(events)
        steps["scrubbed"].set()
        steps["go"].wait(60)
        return done

    lam.store.scrub = paused  # type: ignore[attr-defined]
    lam.erase(exp_id, by="ops")
    said.put("erased")
    steps["exit"].wait(60)  # open still: its own close would save a state over the stale one
    lam.close()


def _save_pausing(location: str, steps: Any, said: Any) -> None:
    """A writer that reads the log to save its state (at close, or at a read in the fold mode),
    then holds still until told to save it."""
    lam, exp_id = _writer(location)
    save_state = lam.store.save_state  # type: ignore[attr-defined]

    def paused(seq: int, text: str) -> None:
        steps["saving"].set()
        steps["go"].wait(60)
        save_state(seq, text)

    lam.store.save_state = paused  # type: ignore[attr-defined]
    said.put(exp_id)
    steps["close"].wait(60)
    lam.stats()  # a fold-mode engine saves here: it folds the log only to read it
    lam.close()
    said.put("closed")


def _steps(*names: str) -> dict[str, Any]:
    return {name: _CONTEXT.Event() for name in names}


def _copies(location: str) -> list[str]:
    """Where the store keeps the secret: raw file bytes for file stores, rows for PostgreSQL."""
    found = []
    if not location.startswith("postgresql"):
        for path in Path(location).parent.iterdir():
            if path.is_file() and _SECRET.encode() in path.read_bytes():
                found.append(path.name)
        return found
    import psycopg

    from lamar.store.postgres.url import parse_url

    url, namespace, _, _ = parse_url(location, None)
    with psycopg.connect(url) as conn:
        for table in ("lamar_state", "lamar_events", "lamar_lessons"):
            if conn.execute(f"SELECT 1 FROM {table} t WHERE namespace = %s AND row_to_json(t)::text LIKE %s LIMIT 1",
                            (namespace, f"%{_SECRET}%")).fetchone():
                found.append(table)
    return found


def _check(location: str, exp_id: str) -> None:
    assert _copies(location) == []
    lam = Lamar(location)
    assert lam.get(exp_id).action == ERASED and lam.stats()["episodes"] == 40
    assert _SECRET not in json.dumps([e.data for e in lam.store.read(0)])
    lam.close()


def test_a_state_saved_between_the_scrub_and_the_erase_event_is_not_kept(store_location: str) -> None:
    # In PostgreSQL's fold mode the writer's close saves nothing here (its writes went to the rows,
    # not through its fold of the log): the case holds there without a save to refuse.
    writer, exp_id = _writer(store_location)
    steps, said = _steps("scrubbed", "go", "exit"), _CONTEXT.Queue()
    eraser = _CONTEXT.Process(target=_erase_pausing, args=(store_location, exp_id, steps, said))
    eraser.start()
    try:
        assert steps["scrubbed"].wait(60)
        writer.close()  # it has not read the erase event yet: it is not stored
        steps["go"].set()
        assert said.get(timeout=60) == "erased"
        assert _copies(store_location) == [], "a state saved while erase ran keeps the text"
    finally:
        steps["go"].set()
        steps["exit"].set()
        eraser.join(60)
    assert eraser.exitcode == 0
    _check(store_location, exp_id)


def test_a_state_read_before_the_erase_and_saved_after_it_is_not_kept(store_location: str) -> None:
    steps, said = _steps("saving", "go", "close"), _CONTEXT.Queue()
    writer = _CONTEXT.Process(target=_save_pausing, args=(store_location, steps, said))
    writer.start()
    try:
        exp_id = said.get(timeout=60)
        steps["close"].set()
        assert steps["saving"].wait(60)  # it read the log; the erase comes before it saves
        eraser = Lamar(store_location, k=2, seed=2)
        eraser.erase(exp_id, by="ops")
        steps["go"].set()
        assert said.get(timeout=60) == "closed"
        assert _copies(store_location) == [], "a state folded before the erase was saved after it"
        eraser.close()
    finally:
        steps["go"].set()
        steps["close"].set()
        writer.join(60)
    assert writer.exitcode == 0
    _check(store_location, exp_id)
