"""A SQLite store holding a trigger, which Lamar never makes, is refused: a store shared in a repository or a
folder can carry one that drops or rewrites what Lamar writes (each harmful lesson's bad outcomes, say)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from lamar import Lamar, Signal
from tests.store.test_stores_fail_loudly import _refused, _written

_TRIGGERS = {
    # every report of a bad outcome dropped without a word: its lessons could never be proven harmful
    "hide_harm": "BEFORE INSERT ON events WHEN new.kind = 'outcome' AND json_extract(new.data, '$.reward') < 0 "
                 "BEGIN SELECT RAISE(IGNORE); END",
    "forget": "AFTER INSERT ON episode_rows BEGIN DELETE FROM episode_rows WHERE seq = new.seq; END",
}


@pytest.mark.parametrize("name", sorted(_TRIGGERS))
def test_a_sqlite_store_holding_a_trigger_is_refused_with_how_to_drop_it(tmp_path: Path, name: str) -> None:
    path = tmp_path / "shared.db"
    _written(path, 5)
    with sqlite3.connect(path) as db:
        db.execute(f"CREATE TRIGGER {name} {_TRIGGERS[name]}")
    db.close()

    message = _refused(path, f"trigger {name}", f"DROP TRIGGER {name}")
    with sqlite3.connect(path) as db:
        db.execute(f"DROP TRIGGER {name}")  # as the message says
    db.close()
    with Lamar(str(path), seed=1) as lam:
        lam.report(lam.recall({"task": "t"}).episode_id, Signal.REVERTED)
        assert lam.stats()["reports"] == 6
    assert "Lamar makes none" in message

