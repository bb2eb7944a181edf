"""tools/detector_sweep.py: the fall detector's level and arming, one setting at a time."""

from __future__ import annotations

from lamar.policy import change
from tests.tools import load_tool


def test_each_setting_gets_its_line_and_the_defaults_come_back() -> None:
    lines = load_tool("detector_sweep").sweep(2, tuning=True, gym_first_seed=100, settings=[(4.0, 50)], workers=1, gym_seeds=1)
    rows = {line.split()[0]: line for line in lines[2:4]}
    default_name = f"{change.LEVEL:g}/{change.WATCH_AFTER}"
    assert set(rows) == {default_name, "4/50"}
    default, hair_trigger = rows[default_name].split(), rows["4/50"].split()
    assert hair_trigger[4].startswith("±")  # paired against the default, by world
    # A level of 4 restarts helpful lessons on noise: the gym's captured share collapses, and the
    # fossil is dropped at once.
    assert float(hair_trigger[-5]) < float(default[-5]) - 30
    assert int(hair_trigger[-1]) < int(default[-1])
    # Each setting's drop is paired with the fading mean's, which gets its own line below them.
    assert "dropped minus river-e.1f" in lines[1] and lines[4].startswith("river-e.1f")
    assert (change.LEVEL, change.WATCH_AFTER) == (16.5, 50)
