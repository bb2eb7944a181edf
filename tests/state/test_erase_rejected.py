"""Erasing a lesson erases the reason a rejection of a proposal naming it kept (which quotes the lesson),
in the record's event and in a checkpoint's snapshot, on every backend."""

from __future__ import annotations

import pytest

from lamar import Experience, Lamar, Scope

NAME = "Ottoline Brandquist"


@pytest.mark.parametrize("checkpointed", [False, True])
def test_erasing_a_lesson_erases_it_from_the_rejections_that_quote_it(store_location: str, checkpointed: bool) -> None:
    with Lamar(store_location, seed=1) as lam:
        secret = lam.add(Experience("a UI test times out on CI", f"ask {NAME} for the log", scope=Scope(task="t")))
        lam.add(Experience("a UI test times out on CI", "raise the test timeout", scope=Scope(task="t")))
        report = lam.sleep()
        (contradiction,) = report.of_kind("contradiction")
        lam.reject(report, [contradiction.id])
        assert NAME in lam.rejections()[0].reason
        if checkpointed:
            assert lam.checkpoint()
        lam.erase(secret)
        assert NAME not in str([e.to_dict() for e in lam.store.read()])
        (held,) = lam.rejections()
        assert NAME not in held.reason and held.kind == "contradiction" and secret in held.lessons
    with Lamar(store_location, seed=2) as lam:
        (held,) = lam.rejections()
        assert (held.proposal, held.reason) == (contradiction.id, "[erased]")
