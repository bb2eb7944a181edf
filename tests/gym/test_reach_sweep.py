"""tools/reach_sweep.py: the evidence coin's reach rule on and off, one setting at a time."""

from __future__ import annotations

import argparse

import pytest

from lamar.policy import choose
from tests.tools import load_tool


def test_each_setting_gets_its_line_and_the_reach_rule_comes_back() -> None:
    tool = load_tool("reach_sweep")
    lines = tool.sweep([(True, 0.04), (False, 0.3)], worlds=2, tuning=True, gym_first_seed=100, workers=1,
                       gym_seeds=1, whatif_seeds=1, volume_seeds=1, episodes=1200, volume_episodes=2000)
    rows = {line.split()[0]: line.split() for line in lines[2:4]}
    assert set(rows) == {"on/0.04", "off/0.3"}
    default, everywhere = rows["on/0.04"], rows["off/0.3"]
    # A coin of 0.3 on every wanted lesson gives up far more of the helpful lessons' effect than
    # the default coin spent only where a verdict is within reach.
    assert float(everywhere[4]) > float(default[4]) + 3.0
    float(everywhere[10])
    assert everywhere[11].startswith("±")  # paired against the first line, by world
    assert default[-5].endswith("%") and default[-1].count("/") == 1  # what-if coverage, its least covered alternative
    assert choose.REACH == 4.0


def test_a_setting_names_the_rule_and_the_coin() -> None:
    tool = load_tool("reach_sweep")
    assert tool.setting("off/0.02") == (False, 0.02)
    assert tool.name((True, 0.04)) == "on/0.04"
    with pytest.raises(argparse.ArgumentTypeError, match="on/Q or off/Q"):
        tool.setting("maybe/0.1")
