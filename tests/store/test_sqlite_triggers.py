"""A SQLite store holding a trigger, which Lamar never makes, is refused: a store shared in a repository or a
folder can carry one that drops or rewrites what Lamar writes (each harmful lesson's bad outcomes, say)."""

from __future__ import annotations

import sqlite3
import subprocess
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

    message = _refused(path, f"trigger {name}", f'DROP TRIGGER "{name}"')
    with sqlite3.connect(path) as db:
        db.execute(f"DROP TRIGGER {name}")  # as the message says
    db.close()
    with Lamar(str(path), seed=1) as lam:
        lam.report(lam.recall({"task": "t"}).episode_id, Signal.REVERTED)
        assert lam.stats()["reports"] == 6
    assert "Lamar makes none" in message



def test_the_command_that_drops_a_trigger_runs_only_that_whatever_its_name(tmp_path: Path) -> None:
    # The trigger's name is the store's, so anyone's: the command the message gives to paste into a shell is that
    # command, and only it, whatever quotes and semicolons the name holds.
    folder = tmp_path / "a shared folder"
    folder.mkdir()
    path = folder / "shared.db"
    _written(path, 5)
    marker = tmp_path / "ran"
    name = f"x'; touch {marker}; echo '\""
    with sqlite3.connect(path) as db:
        quoted = '"' + name.replace('"', '""') + '"'
        db.execute(f"CREATE TRIGGER {quoted} BEFORE INSERT ON events BEGIN SELECT 1; END")
    db.close()

    message = _refused(path, "trigger")
    command = message.split("drop it (", 1)[1].rsplit("); else", 1)[0]
    subprocess.run(["sh", "-c", command], check=True, capture_output=True)
    assert not marker.exists()
    with Lamar(str(path), seed=1) as lam:  # the trigger is gone
        assert lam.stats()["reports"] == 5
