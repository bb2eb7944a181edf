"""tools/detector_sweep.py: the fall detector's level and arming, one setting at a time."""

from __future__ import annotations

import pytest

from lamar.policy import change
from tests.tools import load_tool


def test_each_setting_gets_its_line_and_the_defaults_come_back() -> None:
    fire, update = change.ChangeDetector._fire, change.ChangeDetector.update
    # A cap of 1 000 episodes never binds in runs this short: it names the setting, changes
    # nothing else, and must be taken off again afterwards, as must a level that grows with age.
    settings = [(4.0, 50, 1000.0, None), (16.5, 50, None, (8.0, 500))]
    lines = load_tool("detector_sweep").sweep(2, tuning=True, gym_first_seed=100, settings=settings,
                                              workers=1, gym_seeds=1)
    rows = {line.split()[0]: line for line in lines[2:5]}
    default_name = f"{change.LEVEL:g}/{change.WATCH_AFTER}"
    assert set(rows) == {default_name, "4/50/1000", "16.5/50//8@500"}
    default, hair_trigger = rows[default_name].split(), rows["4/50/1000"].split()
    assert hair_trigger[4].startswith("±")  # paired against the default, by world
    # A level of 4 restarts helpful lessons on noise: the gym's captured share collapses, and the
    # fossil is dropped at once.
    assert float(hair_trigger[-5]) < float(default[-5]) - 30
    assert int(hair_trigger[-1]) < int(default[-1])
    # Each setting's drop is paired with the fading mean's, which gets its own line below them.
    assert "dropped minus river-e.1f" in lines[1] and lines[5].startswith("river-e.1f")
    assert (change.LEVEL, change.WATCH_AFTER) == (16.5, 50)
    assert change.ChangeDetector._fire is fire and change.ChangeDetector.update is update


def test_a_capped_restart_keeps_the_excursion_means_and_the_detectors_reference() -> None:
    tool = load_tool("detector_sweep")
    assert tool.setting("8/50/5") == (8.0, 50, 5.0, None) and tool.setting("16.5/50") == (16.5, 50, None, None)
    detector = change.ChangeDetector()
    detector.stat = change.LEVEL + 1.0
    detector.ex_w_in, detector.ex_s_in, detector.ex_w_out, detector.ex_s_out = 40.0, -8.0, 3.0, 1.5
    assert tool.capped_fire(5.0)(detector) == (5.0, -1.0, 3.0, 1.5)  # the absent arm had fewer than 5
    assert (detector.ref_w, detector.ref_s, detector.stat) == (40.0, -8.0, 0.0)


def test_a_level_that_grows_with_age_starts_low_and_reaches_the_level_by_the_count_named() -> None:
    tool = load_tool("detector_sweep")
    assert tool.setting("16.5/15//8@500") == (16.5, 15, None, (8.0, 500))
    assert tool.setting("16.5/15/10/8@500") == (16.5, 15, 10.0, (8.0, 500))
    assert tool.name_of(16.5, 15, None, (8.0, 500)) == "16.5/15//8@500"
    aged = tool.aged_update(16.5, 15, (8.0, 500))
    detector = change.ChangeDetector()
    levels = []
    try:
        for watched in (0, 15, 100, 500, 5000):
            detector.watched = watched
            aged(detector, 0.0, False, 1.0)  # an episode without the lesson: it only reads the level
            levels.append(change.LEVEL)
    finally:
        change.LEVEL = 16.5
    assert levels[:2] == [8.0, 8.0] and 8.0 < levels[2] < 16.5
    assert levels[3] == pytest.approx(16.5) and levels[4] == 16.5
