"""tools/detector_sweep.py: the fall detector's level and arming, one setting at a time."""

from __future__ import annotations

from lamar.policy import change
from tests.tools import load_tool


def test_each_setting_gets_its_line_and_the_defaults_come_back() -> None:
    fire = change.ChangeDetector._fire
    # A cap of 1 000 episodes never binds in runs this short: it names the setting, changes
    # nothing else, and must be taken off again afterwards.
    lines = load_tool("detector_sweep").sweep(2, tuning=True, gym_first_seed=100, settings=[(4.0, 50, 1000.0)],
                                              workers=1, gym_seeds=1)
    rows = {line.split()[0]: line for line in lines[2:4]}
    default_name = f"{change.LEVEL:g}/{change.WATCH_AFTER}"
    assert set(rows) == {default_name, "4/50/1000"}
    default, hair_trigger = rows[default_name].split(), rows["4/50/1000"].split()
    assert hair_trigger[4].startswith("±")  # paired against the default, by world
    # A level of 4 restarts helpful lessons on noise: the gym's captured share collapses, and the
    # fossil is dropped at once.
    assert float(hair_trigger[-5]) < float(default[-5]) - 30
    assert int(hair_trigger[-1]) < int(default[-1])
    # Each setting's drop is paired with the fading mean's, which gets its own line below them.
    assert "dropped minus river-e.1f" in lines[1] and lines[4].startswith("river-e.1f")
    assert (change.LEVEL, change.WATCH_AFTER) == (16.5, 50)
    assert change.ChangeDetector._fire is fire


def test_a_capped_restart_keeps_the_excursion_means_and_the_detectors_reference() -> None:
    tool = load_tool("detector_sweep")
    assert tool.setting("8/50/5") == (8.0, 50, 5.0) and tool.setting("16.5/50") == (16.5, 50, None)
    detector = change.ChangeDetector()
    detector.stat = change.LEVEL + 1.0
    detector.ex_w_in, detector.ex_s_in, detector.ex_w_out, detector.ex_s_out = 40.0, -8.0, 3.0, 1.5
    assert tool.capped_fire(5.0)(detector) == (5.0, -1.0, 3.0, 1.5)  # the absent arm had fewer than 5
    assert (detector.ref_w, detector.ref_s, detector.stat) == (40.0, -8.0, 0.0)
