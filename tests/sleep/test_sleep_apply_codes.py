"""Why `apply` skipped a proposal, as a code a caller branches on ("applied", "refused", "stale") beside the words."""

from __future__ import annotations

import json
from pathlib import Path

from lamar import ApplyResult, Experience, Lamar, Scope, SleepReport
from lamar.sleep import SKIP_CODES, skip_code


def _twins(path: Path) -> Lamar:
    lam = Lamar(str(path), seed=1)
    lam.add(Experience("a lint error", "run the formatter first", scope=Scope(language="swift")))
    lam.add(Experience("A lint error.", "Run the formatter first.", scope=Scope(language="swift")))
    return lam


def test_each_skip_has_its_code(tmp_path: Path) -> None:
    with _twins(tmp_path / "lessons.db") as lam:
        report = lam.sleep()
        (merge,) = report.proposals
        hostile = SleepReport.from_dict({**report.to_dict(), "proposals": [
            {**merge.to_dict(), "id": "merge_x", "payload": {"into": "exp_gone", "from": ["exp_gone2"]}}]})
        refused = lam.apply(hostile)
        assert refused.codes == {"merge_x": "refused"} and refused.skipped[0][1].startswith("refused")
        lam.retire(merge.experience_ids[0], "by hand")
        stale = lam.apply(report)
        assert stale.applied == [] and stale.codes == {merge.id: "stale"}
        assert "retired" in stale.skipped[0][1]  # the words stay as they were
    with _twins(tmp_path / "again.json") as lam:
        report = lam.sleep()
        assert lam.apply(report).codes == {}
        again = lam.apply(report)
        assert again.skipped == [(report.proposals[0].id, "already applied")]
        assert again.codes == {report.proposals[0].id: "applied"}
        assert skip_code(lam.would_skip(report)[report.proposals[0].id]) == "applied"


def test_codes_survive_a_round_trip_and_an_older_saved_result_gets_them() -> None:
    result = ApplyResult(["a"], [("b", "refused: no such kind"), ("c", "lesson x is retired now")],
                         codes={"b": "refused", "c": "stale"})
    assert ApplyResult.from_dict(json.loads(json.dumps(result.to_dict()))) == result
    older = ApplyResult.from_dict({"applied": [], "skipped": [["d", "already applied (by another writer)"]]})
    assert older.codes == {"d": "applied"} and set(SKIP_CODES) == {"applied", "refused", "stale"}

