"""The gym's harder worlds: more lessons, missing and late reports, the context variant, and
verdicts monitored after every report."""

from __future__ import annotations

import pytest

from lamar.gym import GymConfig, render, run_gym
from lamar.gym.__main__ import main
from lamar.gym.metrics import column, runs_of
from lamar.gym.policies import Similarity
from lamar.gym.retrieval import BM25, context_query
from lamar.gym.variants import VARIANTS, render_variants, run_variants, variant_row
from lamar.gym.world import LANGUAGES, TASKS, Kind, World, context_of


def test_twenty_lessons_per_task_stay_distinct_and_exactly_tied_for_a_text_retriever() -> None:
    world = World(seed=4, episodes=200, lessons=20)
    assert len(world.lessons) == 20 * len(TASKS)
    bm25 = BM25([f"{lesson.precondition} {lesson.action}" for lesson in world.lessons])
    for task in range(len(TASKS)):
        own = [lesson for lesson in world.lessons if lesson.task == task]
        assert len({lesson.action for lesson in own}) == 20
        kinds = sorted(lesson.kind.value for lesson in own)
        assert kinds.count("inert") == 18
        scores = bm25.scores(context_query(context_of(task)))
        assert len({round(scores[lesson.index], 12) for lesson in own}) == 1
    assert Similarity(world, 2, 0).ranked(0)[0] in {lesson.index for lesson in world.lessons if lesson.task == 0}


def test_variant_coins_leave_the_default_world_as_it_was() -> None:
    plain = World(seed=9, episodes=3000)
    harder = World(seed=9, episodes=3000, report_rate=0.6, report_delay=40, context=True)
    assert (plain.tasks, plain.coins, plain.signal_coins) == (harder.tasks, harder.coins, harder.signal_coins)
    assert all(plain.reported) and set(plain.delays) == {0}
    assert sum(harder.reported) / 3000 == pytest.approx(0.6, abs=0.03)
    assert min(harder.delays) == 0 and max(harder.delays) == 40


def test_the_split_lesson_helps_in_swift_and_hurts_in_python() -> None:
    world = World(seed=2, episodes=400, context=True)
    assert world.split is not None and world.languages is not None
    split = world.lessons[world.split]
    assert split.kind is Kind.SPLIT and split.task != world.fossil_task
    for t in range(400):
        expected = world.help_effect if world.languages[t] == LANGUAGES[0] else -world.hurt_effect
        assert world.effect(world.split, t) == expected
        assert world.context(t, split.task)["language"] == world.languages[t]
    assert 150 < world.languages.count("swift") < 250


def test_missing_and_late_reports_reach_the_engine_late_or_never() -> None:
    result = run_gym(GymConfig(episodes=1200, seeds=1, policies=("lamar",), workers=1, report_rate=0.6,
                               report_delay=40, sleep_at=()))
    (row,) = result.runs
    world = World(0, 1200, report_rate=0.6, report_delay=40)
    delivered = sum(1 for t in range(1200) if world.reported[t] and t + world.delays[t] < 1200)
    assert row["reported_share"] == pytest.approx(sum(world.reported) / 1200)
    # every delivered report was read once per lesson of its task: the monitor saw each of them
    assert row["monitored_reads"] == delivered * 6
    kinds = row["monitored_wrong_kinds"]
    assert row["monitored_wrong_reads"] == (sum(int(part.split(":")[1]) for part in kinds.split(",")) if kinds else 0)


def test_the_context_variant_measures_where_the_split_lesson_goes_and_what_sleep_proposes() -> None:
    config = GymConfig(episodes=6000, seeds=2, policies=("none", "lamar", "oracle"), workers=1, context=True)
    result = run_gym(config)
    lamar = runs_of(result.runs, "lamar")
    swift = column(lamar, "split_rate_swift_last")
    python = column(lamar, "split_rate_python_last")
    assert len(swift) == len(python) == 2
    assert sum(swift) > 3 * sum(python) and sum(swift) / 2 > 0.5  # measured on the last 2000 episodes
    oracle = runs_of(result.runs, "oracle")
    assert column(oracle, "split_rate_swift_2000") == [1.0, 1.0]
    assert column(oracle, "split_rate_python_2000") == [0.0, 0.0]
    for row in lamar:
        assert isinstance(row["sleep_narrow_split_end"], bool) and row["sleep_narrow_wrong_end"] == 0
        assert row["sleep_harmful_2000"] == 4 and row["sleep_harmful_end"] == 5  # four FALSE, then the fossil too
    text = render(result)
    assert "6. Context" in text and "5. lamar's verdicts read after every report" in text
    moving = text[text.index("Lamar's goals in a moving world"):]
    assert "issue" not in moving and "context: sleep proposes narrowing" in moving


def test_the_variants_table_runs_each_world_and_prints_a_line_for_it() -> None:
    base = GymConfig(episodes=600, seeds=1, policies=("none", "qvalue", "lamar", "oracle"), workers=1, sleep_at=())
    results = run_variants(base, names=("default", "context"))
    assert [r.config.context for r in results.values()] == [False, True]
    text = render_variants(results)
    assert text.count("\n") > 3 and "context" in text.splitlines()[3]
    row = variant_row("default", results["default"])
    assert row["harms"].endswith("/4") and row["wrong"] >= 0
    assert set(VARIANTS) >= {"default", "effect 0.10", "20 lessons/task", "40% missing", "<= 40 late", "context"}


def test_the_command_takes_the_variant_options(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["--episodes", "400", "--seeds", "1", "--policies", "none,lamar,oracle", "--workers", "1",
                 "--effect", "0.1", "--lessons", "8", "--report-rate", "0.7", "--report-delay", "5", "--context",
                 "--quiet"])
    assert code == 0
    out = capsys.readouterr().out
    assert "help +0.10, hurt -0.10" in out and "8 lessons per task, 70% of episodes reported" in out
    with pytest.raises(SystemExit):
        main(["--report-rate", "0", "--quiet"])


def test_lamar_can_be_tuned_for_a_run_and_bad_tuning_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    tuned = run_gym(GymConfig(episodes=400, seeds=1, workers=1, policies=("lamar",), sleep_at=(),
                              tuning=(("holdout", 0.5),)))
    plain = run_gym(GymConfig(episodes=400, seeds=1, workers=1, policies=("lamar",), sleep_at=()))
    (a,), (b,) = tuned.runs, plain.runs
    assert a["lamar_tuning"] == "holdout=0.5" and b["lamar_tuning"] is None
    assert a["holdout_q"] == 0.5 and b["holdout_q"] == 0.04
    with pytest.raises(SystemExit):
        main(["--lamar", "nonsense=1", "--quiet"])
    assert "nonsense" in capsys.readouterr().err
