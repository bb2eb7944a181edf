"""tools/drop_anatomy.py: a turned lesson's drop delay, split at the fall detector's first alarm."""

from __future__ import annotations

from typing import Any

import pytest

from lamar.policy import change, features, lesson
from tests.tools import load_tool


def test_the_split_adds_up_to_the_drop_and_the_patches_come_off() -> None:
    tool = load_tool("drop_anatomy")
    restart, fire = lesson.LessonState._restart, change.ChangeDetector._fire
    rows = tool.anatomy(range(100003, 100006), workers=1)
    assert lesson.LessonState._restart is restart and change.ChangeDetector._fire is fire
    assert {row["policy"] for row in rows} == {"lamar", "river-e.1f"}
    fossils = [f for row in rows if row["policy"] == "lamar" for f in row["fossils"]]
    on = [f for f in fossils if tool.alarmed(f)]
    assert on, "these worlds have fossils the fall detector sees"
    for fossil in on:
        first, rest = tool.split(fossil)
        assert first >= 0 and rest >= 0 and first + rest == fossil["drop"]
        assert fossil["statistic"] in ("fast", "slow") and fossil["excursion_in"] > 0
    steady = [s for row in rows if row["policy"] == "lamar" for s in row["steady"]]
    assert all(0 < age <= s["watched"] + 1 for s in steady for age in s["alarms"])  # an alarm needs injected episodes
    lines = tool.report(rows, "title")
    assert lines[0] == "title" and any(line.lstrip().startswith("(b) alarmed") for line in lines)
    assert any("if (b) = 0" in line for line in lines)


def test_a_fossil_read_a_few_episodes_into_its_drop_window_counts_as_alarmed() -> None:
    tool = load_tool("drop_anatomy")
    late_report = {"alarm": 75, "drop": 74}
    assert tool.alarmed(late_report) and tool.split(late_report) == (74, 0)
    assert not tool.alarmed({"alarm": 200, "drop": 74}) and not tool.alarmed({"alarm": None, "drop": 74})
    assert tool.split({"alarm": 30, "drop": 111}) == (30, 81)


def test_the_spread_sweep_runs_each_spread_under_its_patch_and_restores_it(monkeypatch: pytest.MonkeyPatch) -> None:
    tool = load_tool("drop_anatomy")
    default = features.SLICE_SPREAD
    seen: list[tuple[str, float]] = []

    def against_peer(subject: str, label: str, width: int, settings: list[tuple[str, Any]], *args: Any,
                     **kwargs: Any) -> list[str]:
        for name, patch in settings:
            with patch():
                seen.append((name, features.SLICE_SPREAD))
        return []

    monkeypatch.setattr(tool.sweep_frame, "against_peer", against_peer)
    tool.main(["3", "--tuning-seeds", "--spreads", "0.05,0"])
    assert seen == [("default", default), ("tau 0.05", 0.05), ("tau 0", 0.0)]
    assert features.SLICE_SPREAD == default


def test_no_world_is_refused_before_any_run(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    tool = load_tool("drop_anatomy")
    monkeypatch.setattr(tool, "anatomy", lambda *a, **k: pytest.fail("it ran"))
    with pytest.raises(SystemExit) as exit_info:
        tool.main(["0", "--tuning-seeds"])
    assert exit_info.value.code == 2 and "worlds is the number of worlds to draw" in capsys.readouterr().err
