"""The gym's report speaks to its reader: no internal references, the goals titled as such, and
every MISS followed by one line that says what it means."""

from __future__ import annotations

import dataclasses
import re

from lamar.gym import GymConfig, render, run_gym
from lamar.gym.report import what_it_shows


def test_every_miss_explains_itself_in_one_line() -> None:
    tiny = run_gym(GymConfig(episodes=600, seeds=1, workers=1))
    slow = dataclasses.replace(tiny, elapsed=600.0)  # a run over a minute misses the speed goal
    text = render(slow)
    assert not re.search(r"\bissue\b", text, flags=re.IGNORECASE)
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Lamar's goals"))
    block = lines[start + 1:]
    misses = [i for i, line in enumerate(block) if line.lstrip().startswith("MISS")]
    assert misses, "a 600-episode run on a slow clock misses at least the speed goal"
    for i in misses:
        why = block[i + 1].strip()
        assert why.startswith("why: ") and len(why) > 20
        assert not block[i + 1].lstrip().startswith(("PASS", "MISS", "n/a"))
    speed = next(i for i in misses if "finishes in under a minute" in block[i])
    assert "busy" in block[speed + 1]
    passes = [i for i, line in enumerate(block) if line.lstrip().startswith("PASS")]
    assert all(not block[i + 1].strip().startswith("why:") for i in passes if i + 1 < len(block))


def test_the_header_says_when_reports_arrive_in_words() -> None:
    """The default run's header read "up to 0 episodes late"."""
    tiny = run_gym(GymConfig(episodes=300, seeds=1, workers=1, policies=("none", "lamar")))
    assert render(tiny).splitlines()[1] == ("6 lessons per task, 100% of episodes reported, "
                                            "each as soon as its episode ends")
    late = dataclasses.replace(tiny, config=dataclasses.replace(tiny.config, report_delay=40))
    assert render(late).splitlines()[1] == "6 lessons per task, 100% of episodes reported, up to 40 episodes late"


def test_a_run_without_none_or_oracle_says_what_captured_needs_not_nan() -> None:
    # --policies lamar printed "lamar captured nan% of the oracle's gain", goals "nan%" marked n/a
    # and a price of proof "nan / nan" marked MISS, and "on 1 workers".
    tiny = run_gym(GymConfig(episodes=200, seeds=1, workers=1, policies=("lamar",)))
    text = render(tiny) + what_it_shows(tiny)
    assert "nan" not in text
    assert "needs none and oracle in --policies" in text
    goals = [line for line in text.splitlines() if "captured" in line and line.lstrip().startswith(("n/a", "MISS"))]
    assert len(goals) >= 3 and all(line.lstrip().startswith("n/a") and "needs none, oracle" in line for line in goals)
    assert "on 1 workers" not in text
