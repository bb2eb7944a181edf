"""`add` finds a stored lesson with the same texts and scope through the fold's index of them,
which must answer as a scan of every lesson would after edits, erasures and checkpoints."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope


def _scanned(lam: Lamar, exp: Experience) -> str | None:
    same = (exp.precondition, exp.action, exp.rationale, exp.scope)
    for held in lam.experiences():  # in the order they were added, retired ones included
        if (held.precondition, held.action, held.rationale, held.scope) == same:
            return held.id
    return None


@pytest.mark.parametrize("suffix", [":memory:", ".db", ".json"])
def test_add_finds_the_lesson_a_scan_finds_after_edits_erasures_and_checkpoints(tmp_path: Path,
                                                                                suffix: str) -> None:
    location = suffix if suffix == ":memory:" else str(tmp_path / f"s{suffix}")
    lam = Lamar(location, seed=0)
    one = Experience("the build fails", "clear the cache", scope=Scope(task="a"))
    two = Experience("the tests hang", "kill the server", scope=Scope(task="a"))
    first, second = lam.add(one), lam.add(two)
    assert lam.add(one) == first == _scanned(lam, one)

    lam.edit(first, action="wipe the cache", scope={"task": "b"})  # the old texts are free now
    assert _scanned(lam, one) is None
    moved = Experience("the build fails", "wipe the cache", scope=Scope(task="b"))
    assert lam.add(moved) == first
    third = lam.add(one)
    assert third not in (first, second) and _scanned(lam, one) == third

    lam.erase(second)
    assert _scanned(lam, two) is None and lam.add(two) not in (first, second, third)

    lam.checkpoint()
    if suffix != ":memory:":
        lam.close()
        lam = Lamar(location, seed=0)
    for exp in (one, two, moved):
        found = _scanned(lam, exp)
        assert found is not None and lam.add(exp) == found
    assert len(lam.experiences()) == 4
