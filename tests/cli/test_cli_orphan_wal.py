"""`lamar` at a SQLite path whose store was moved away without its `-wal`: the `-wal` is named, never deleted."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import Run


@pytest.mark.parametrize("args", [("stats",), ("ls",), ("add", "--create", "--precondition", "x", "--action", "y")])
def test_a_wal_left_where_a_store_was_is_named_by_every_command(run_cli: Run, tmp_path: Path,
                                                                 args: tuple[str, ...]) -> None:
    wal = tmp_path / "lessons.db-wal"
    wal.write_bytes(b"\x37\x7f\x06\x82" + bytes(28))  # a WAL header: its database moved away without it
    done = run_cli("--store", "lessons.db", *args)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("lamar: error: lessons.db-wal lies beside lessons.db, which holds no store"), (
        done.stderr)
    assert wal.stat().st_size == 32 and not (tmp_path / "lessons.db").exists()
