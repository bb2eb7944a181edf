"""Printed intervals stay inside what a lift can be: a lift lies in [-2, 2]."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from lamar import Experience, Lamar, Scope, Signal


def test_a_lesson_with_two_reports_shows_bounds_no_wider_than_a_lift(tmp_path: Path) -> None:
    store = tmp_path / "young.db"
    lam = Lamar(str(store), k=2, seed=1)
    ids = [lam.add(Experience("the build fails", f"remedy {i}", scope=Scope(task="b"))) for i in range(2)]
    for signal in (Signal.SHIPPED, Signal.REVERTED, Signal.SHIPPED):
        lam.report(lam.recall({"task": "b"}).episode_id, signal)
    evidence = [lam.evidence(i) for i in ids]
    lam.close()
    finite = [x for ev in evidence for x in (ev.lift, ev.lower, ev.upper) if abs(x) != float("inf")]
    assert all(-2.0 <= x <= 2.0 for x in finite)  # Evidence itself keeps inside what a lift can be
    assert any(abs(x) == 2.0 for x in finite)  # the case: a bound that three reports leave at the edge
    printed = ""
    for command in (["ls"], ["show", ids[0]], ["show", ids[1]]):
        done = subprocess.run([sys.executable, "-m", "lamar.cli", *command, "--store", str(store)],
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        printed += done.stdout
    bounds = [float(x) for x in re.findall(r"\[([+-]\d+\.\d+), [+-]\d+\.\d+\]", printed)]
    bounds += [float(x) for x in re.findall(r"\[[+-]\d+\.\d+, ([+-]\d+\.\d+)\]", printed)]
    assert bounds and all(-2.0 <= b <= 2.0 for b in bounds), printed
