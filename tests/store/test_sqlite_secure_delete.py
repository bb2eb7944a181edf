"""A scrub turns SQLite's secure_delete on for its own writes and leaves it as it found it."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import Experience, Lamar


@pytest.mark.parametrize("before", [0, 1])
def test_a_scrub_leaves_secure_delete_as_the_connection_had_it(tmp_path: Path, before: int) -> None:
    # A build (Debian's) or a caller may keep it on for every write; the scrub turned it off after itself.
    lam = Lamar(str(tmp_path / "s.db"), seed=0)
    db = lam.store._db  # type: ignore[attr-defined]
    db.execute(f"PRAGMA secure_delete = {before}")
    lam.erase(lam.add(Experience("a build fails", "page Quorvath")), by="ops")
    assert db.execute("PRAGMA secure_delete").fetchone()[0] == before
    lam.close()
