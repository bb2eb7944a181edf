"""The family of drawn worlds, the frozen second design, the frontier and the volume table."""

from __future__ import annotations

import types

import pytest

from lamar.gym.__main__ import main
from lamar.gym.family import TUNING_SEEDS, DrawnWorld
from lamar.gym.family_report import paired, wrong_drops
from lamar.gym.family_run import Slate, run_family, spec
from lamar.gym.modes import EVIDENCE_OFF, frontier_specs
from lamar.gym.runner import run_gym
from lamar.gym.volume import proven_at

SMALL = (32, 50)  # two of the family's smallest worlds (about 1 200 episodes each)


def test_worlds_are_drawn_within_the_documented_ranges_and_the_same_from_the_same_seed() -> None:
    worlds = [DrawnWorld(seed) for seed in range(60)]
    for w in worlds:
        assert 2 <= w.n_tasks <= 12 and 1 <= w.k <= 4 and 1000 <= w.episodes <= 10000
        per_task = [sum(lesson.task == t for lesson in w.lessons) for t in range(w.n_tasks)]
        assert min(per_task) >= 4 and max(per_task) <= 30
        assert 0.2 <= w.missing <= 0.5 and 0 <= w.max_delay <= 50
        for lesson in w.lessons:
            assert lesson.kind == "split" or lesson.effect == 0.0 or 0.05 <= abs(lesson.effect) <= 0.3
            if lesson.flip_at is not None:
                assert lesson.effect > 0.0 >= lesson.after and w.episodes // 5 <= lesson.flip_at <= 4 * w.episodes // 5
    # every feature the summary cuts by occurs
    assert {w.k for w in worlds} == {1, 2, 3, 4} and {w.drift for w in worlds} == {"none", "linear", "step"}
    assert any(w.languages for w in worlds) and any(not w.languages for w in worlds)
    again = DrawnWorld(7)
    assert (again.tasks, again.coins, again.reported) == (worlds[7].tasks, worlds[7].coins, worlds[7].reported)
    assert DrawnWorld(TUNING_SEEDS).tasks != worlds[0].tasks


def test_the_family_captures_paired_by_world_and_the_same_rows_come_back() -> None:
    policies = [spec("none"), spec("oracle"), spec("lamar"), spec("lamar off", "lamar", **EVIDENCE_OFF["lamar"]),
                spec("lamar-v2")]
    rows = run_family(SMALL, policies, workers=1)
    by = {(r["policy"], r["world"]): r for r in rows}
    for world in SMALL:
        assert by[("none", world)]["captured"] == 0.0 and by[("oracle", world)]["captured"] == 1.0
        assert -1.0 < by[("lamar", world)]["captured"] < 1.0
        assert by[("lamar", world)]["helpful"] > 0 and by[("lamar", world)]["wrong"] == 0
        # today's engine counts its verdicts of record (e-BH) too; the frozen second design has none
        assert by[("lamar", world)]["ebh_wrong"] == 0 and "ebh_helps" not in by[("lamar-v2", world)]
        # with its coin off nothing is randomized, so nothing is proven
        assert by[("lamar off", world)]["helps"] == by[("lamar off", world)]["harms"] == 0
    assert len(paired(rows, "lamar", "lamar-v2")) == 2
    again = run_family(SMALL, policies, workers=2)
    assert [{k: v for k, v in r.items() if k != "cpu"} for r in again] == \
           [{k: v for k, v in r.items() if k != "cpu"} for r in rows]


def _slate(effects: dict[int, list[float]], injected: list[set[int]], k: int = 1) -> dict[str, int]:
    """Slate's columns for one task whose lessons have these effects over time and a policy that
    injected these sets, episode by episode."""
    lessons = [types.SimpleNamespace(index=i, task=0, kind="helpful") for i in effects]
    world = types.SimpleNamespace(lessons=lessons, k=k, effect=lambda i, t: effects[i][t])
    slate = Slate(world)  # type: ignore[arg-type]
    for t, chosen in enumerate(injected):
        slate.note(t, 0, list(chosen))
    columns: dict[str, int] = slate.columns()
    return columns


def test_a_wrong_drop_is_a_lesson_in_use_dropped_while_the_oracle_would_still_inject_it() -> None:
    steady = {0: [0.2] * 400, 1: [0.1] * 400}
    # Lesson 0 is the best throughout; the policy uses it for 200 episodes, then never again: one
    # wrong drop, counted once however long the drop lasts.
    out = _slate(steady, [{0}] * 200 + [{1}] * 200)
    assert out["wrong_drops"] == 1
    # Its exposure: the episodes in use from the 100th (the first with a full look back) until the
    # drop, at 198, the first whose next 50 inject it fewer than 2.5 times.
    assert out["in_best"] == 99
    # The same drop when lesson 0 stops helping (its truth flips at 200) is right, not wrong.
    flipping = {0: [0.2] * 200 + [-0.2] * 200, 1: [0.1] * 400}
    assert _slate(flipping, [{0}] * 200 + [{1}] * 200)["wrong_drops"] == 0
    # Dropped, taken back for 150 episodes, dropped again: two.
    twice = [{0}] * 150 + [{1}] * 60 + [{0}] * 130 + [{1}] * 60
    assert _slate(steady, twice)["wrong_drops"] == 2
    # A lesson the oracle would not inject (1, the second best with one slot) is never wrongly dropped.
    assert _slate(steady, [{1}] * 200 + [{0}] * 200)["wrong_drops"] == 0
    # Injected in 1 of 10 episodes is not "in use": no exposure, nothing to drop.
    assert _slate(steady, [{0} if t % 10 == 0 else set() for t in range(400)]) == {"wrong_drops": 0, "in_best": 0}
    # The printed rate pools the worlds' drops over their exposure, per 1 000 episodes.
    rows = [{"wrong_drops": 1, "in_best": 500}, {"wrong_drops": 2, "in_best": 1500}]
    assert wrong_drops(rows) == "1.50" and wrong_drops([{"wrong_drops": 0, "in_best": 0}]) == "-"


def test_the_frozen_second_design_still_learns_on_the_gym() -> None:
    result = run_gym(episodes=2000, seeds=1, policies=("none", "oracle", "lamar-v2"), workers=1, sleep_at=())
    (row,) = [r for r in result.runs if r["policy"] == "lamar-v2"]
    assert row["captured_pre"] > 0.3 and row["helpful_end"] == 3
    assert row["holdout_cost_pre"] > 0.0  # its own holdouts: 0.15 unproven, 0.05 proven


def test_the_frontier_runs_both_designs_at_five_budgets_and_with_evidence_off() -> None:
    points = frontier_specs()
    assert [p[0] for p in points].count("lamar") == 6 and [p[0] for p in points].count("lamar-v2") == 6
    assert sum(p[2] is None for p in points) == 2


def test_the_volume_table_finds_when_each_helpful_lesson_is_proven() -> None:
    firsts = proven_at(0, 600, {"holdout": 0.5})
    assert len(firsts) == 6
    assert all(f is None or (0 < f <= 600 and f % 50 == 0) for f in firsts)


def test_the_family_command_prints_its_tables(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--family", "1", "--tuning-seeds", "--quiet", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "Captured share of the oracle's gain over none, paired by world" in out
    assert "price of proof" in out and "Captured share by world feature" in out and "Per world" in out
