"""`lamar show` and `lamar ls` print no lift ("n/a") while a lesson's few randomized episodes leave every
lift possible: the estimate could be anything, and printed it reads as a large effect."""

from __future__ import annotations

import random
from pathlib import Path

from lamar import Experience, Lamar, Signal
from lamar.cli.render import LIFT_LIMIT


def barely_measured(path: Path) -> tuple[str, int]:
    """A store whose one lesson has a few randomized episodes and an interval over [-2, 2]."""
    world = random.Random(0)
    with Lamar(str(path), seed=5, holdout=0.5) as lam:
        exp_id = lam.add(Experience("a lint error", "run the formatter first"))
        for _ in range(6):
            rec = lam.recall({"task": "lint"})
            lam.report(rec.episode_id, Signal.ACCEPTED if world.random() < 0.5 else Signal.CORRECTED)
        ev = lam.evidence(exp_id)
    assert ev.randomized > 0 and ev.lower <= -LIFT_LIMIT and ev.upper >= LIFT_LIMIT, ev
    return exp_id, ev.randomized


def test_show_and_ls_print_no_lift_while_the_interval_spans_every_lift(tmp_path: Path, run_cli) -> None:
    exp_id, _ = barely_measured(tmp_path / "s.db")
    shown = run_cli("show", exp_id, "--store", tmp_path / "s.db")
    assert "evidence       unknown: lift n/a, interval" in shown.stdout, shown.stdout
    listed = run_cli("ls", "--store", tmp_path / "s.db")
    row = next(line for line in listed.stdout.splitlines() if line.startswith(exp_id))
    assert row.split()[2:4] == ["unknown", "n/a"], row

