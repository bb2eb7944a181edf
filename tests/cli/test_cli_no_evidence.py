"""`lamar show` and `lamar ls` print no lift ("n/a") while a lesson's few randomized episodes leave every
lift possible: the estimate could be anything, and printed it reads as a large effect."""

from __future__ import annotations

import json
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
    assert "evidence       unknown: lift n/a: no evidence yet: " in shown.stdout, shown.stdout
    listed = run_cli("ls", "--store", tmp_path / "s.db")
    row = next(line for line in listed.stdout.splitlines() if line.startswith(exp_id))
    assert row.split()[2:4] == ["unknown", "n/a"], row



def test_json_outputs_give_no_lift_while_the_interval_spans_every_lift(tmp_path: Path, run_cli) -> None:
    exp_id, randomized = barely_measured(tmp_path / "s.db")
    listed = json.loads(run_cli("ls", "--json", "--store", tmp_path / "s.db").stdout)
    assert [row["evidence"]["lift"] for row in listed] == [None], listed
    assert listed[0]["evidence"]["measured"] is False and listed[0]["evidence"]["lower"] == -LIFT_LIMIT
    shown = json.loads(run_cli("show", exp_id, "--json", "--store", tmp_path / "s.db").stdout)
    assert shown["evidence"]["lift"] is None and shown["evidence"]["randomized"] == randomized
    last = shown["trajectory"][-1]
    assert last["lift"] is None and last["measured"] is False, last


def test_show_says_why_there_is_no_lift(tmp_path: Path, run_cli) -> None:
    exp_id, randomized = barely_measured(tmp_path / "s.db")
    shown = run_cli("show", exp_id, "--store", tmp_path / "s.db").stdout
    assert (f"evidence       unknown: lift n/a: no evidence yet: {randomized} randomized episodes leave every lift "
            "from -2 to +2 possible") in shown, shown


def test_show_says_the_evidence_restarted_when_it_did(tmp_path: Path, run_cli) -> None:
    # A lesson measured over many episodes reads "no evidence yet" after a restart: it says since when.
    exp_id, _ = barely_measured(tmp_path / "s.db")
    with Lamar(str(tmp_path / "s.db")) as lam:
        lam.edit(exp_id, action="run the formatter, then the linter")
    shown = run_cli("show", exp_id, "--store", tmp_path / "s.db").stdout
    assert ("lift n/a: no evidence yet: 0 randomized episodes since its evidence restarted leave every lift "
            "from -2 to +2 possible") in shown, shown


def test_stats_puts_no_price_on_holding_out_a_lesson_whose_lift_is_noise(tmp_path: Path, run_cli) -> None:
    with Lamar(str(tmp_path / "s.db"), seed=5, holdout=0.5) as lam:
        exp_id = lam.add(Experience("a lint error", "run the formatter first"))
        for _ in range(6):  # every episode it is in ships, every other one is reverted
            rec = lam.recall({"task": "lint"})
            lam.report(rec.episode_id, Signal.SHIPPED if exp_id in rec.ids else Signal.REVERTED)
        ev = lam.evidence(exp_id)
    assert ev.held_out == 3 and ev.lift > 1.9 and (ev.lower, ev.upper) == (-LIFT_LIMIT, LIFT_LIMIT), ev  # 5.9 if priced
    stats = json.loads(run_cli("stats", "--json", "--store", tmp_path / "s.db").stdout)
    assert stats["holdout_cost"] == {"total": 0.0, "per_report": 0.0}, stats["holdout_cost"]
