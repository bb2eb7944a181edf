"""tools/detector_sweep.py: the fall detector's level and arming, one setting at a time."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from lamar.policy import change


def _tool():  # type: ignore[no-untyped-def]
    path = Path(__file__).resolve().parents[2] / "tools" / "detector_sweep.py"
    spec = importlib.util.spec_from_file_location("detector_sweep", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_setting_gets_its_line_and_the_defaults_come_back() -> None:
    lines = _tool().sweep(2, tuning=True, gym_first_seed=100, settings=[(4.0, 50)], workers=1, gym_seeds=1)
    rows = {line.split()[0]: line for line in lines[2:4]}
    assert set(rows) == {f"{change.LEVEL:g}/{change.WATCH_AFTER}", "4/50"}
    default, hair_trigger = rows["16/50"].split(), rows["4/50"].split()
    assert hair_trigger[4].startswith("±")  # paired against the default, by world
    # A level of 4 restarts helpful lessons on noise: the gym's captured share collapses, and the
    # fossil is dropped at once.
    assert float(hair_trigger[-5]) < float(default[-5]) - 30
    assert int(hair_trigger[-1]) < int(default[-1])
    assert (change.LEVEL, change.WATCH_AFTER) == (16.0, 50)
