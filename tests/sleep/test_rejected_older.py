"""What the Lamar before rejections were remembered (OLDER) does with a store holding one: it opens it,
folds the record as one more applied proposal id that no proposal of its has, and so proposes the rejected
proposal again; a checkpoint it writes keeps the record, which this Lamar honours after."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope
from tests.store.test_old_stores import older_lamar

OLDER = "228f750d"  # the last commit whose sleep forgot a rejection


_SCRIPT = """
import json, sys
from lamar import Lamar
with Lamar(sys.argv[1], seed=5) as lam:
    report = lam.sleep(keep_last=5)
    kinds = sorted(p.kind for p in report)
    applied = lam.apply(report, only=[p.id for p in report if p.kind == "compact"]).applied
print(json.dumps({"kinds": kinds, "ids": sorted(p.id for p in report), "applied": len(applied)}))
"""


@pytest.mark.parametrize("name", ["lessons.json", "lessons.db"])
def test_the_older_lamar_asks_again_and_keeps_the_record_for_this_one(tmp_path: Path, name: str) -> None:
    (tmp_path / "older").mkdir()
    older = older_lamar(tmp_path / "older", OLDER)
    if older is None:
        pytest.skip(f"commit {OLDER} is not in this clone's history")
    path = tmp_path / name
    with Lamar(str(path), seed=1) as lam:
        for action in ("raise the test timeout", "run the failing test alone first"):
            lam.add(Experience("a UI test times out on CI", action, scope=Scope(project="trace")))
        for _ in range(30):
            lam.report(lam.recall({"project": "trace"}).episode_id, 0.5)
        report = lam.sleep()
        (contradiction,) = report.of_kind("contradiction")
        lam.reject(report, [contradiction.id])
    done = subprocess.run([sys.executable, "-c", _SCRIPT, str(path)], capture_output=True, text=True,
                          env={"PYTHONPATH": str(older)}, cwd=older, check=False)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["kinds"] == ["compact", "contradiction"] and contradiction.id in seen["ids"]
    assert seen["applied"] == 1  # its compaction wrote a checkpoint over the record's event
    with Lamar(str(path), seed=2) as lam:
        assert lam.sleep().proposals == [] and lam.sleep().summary["rejected"] == [contradiction.id]
