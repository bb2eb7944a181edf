"""Apply of a report edited by hand, or carried out part-way: nothing changes that review did not show."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import Experience, Lamar, SleepReport, Status


def _twins(path: Path) -> Lamar:
    lam = Lamar(str(path), seed=1)
    lam.add(Experience("the build fails after a bump", "clear DerivedData"))
    lam.add(Experience("the build fails after a bump", "clear DerivedData."))
    return lam


@pytest.mark.parametrize("expect", ["removed", "partial"])
def test_a_merge_whose_expect_was_edited_out_is_refused_not_applied_over_a_retirement(
        tmp_path: Path, expect: str) -> None:
    # The statuses a proposal expects are what tells apply a lesson changed since: without them a merge
    # into a lesson retired since went in, and retired the live lesson too.
    with _twins(tmp_path / "s.db") as lam:
        (merge,) = lam.sleep().proposals
        into = merge.payload["into"]
        data = merge.to_dict()
        data["expect"] = {} if expect == "removed" else {i: s for i, s in merge.expect.items() if i != into}
        edited = SleepReport.from_dict({**lam.sleep().to_dict(), "proposals": [data]})
        lam.retire(into, "by hand")
        result = lam.apply(edited)
        assert result.applied == [] and result.codes == {merge.id: "refused"}
        assert f"the report does not say what status lesson {into} had" in result.skipped[0][1]
        assert [e.status for e in lam.experiences()].count(Status.ACTIVE) == 1
