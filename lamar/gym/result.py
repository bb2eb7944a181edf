"""The gym's result: flat rows (dicts) and how they were made. Tables and plots are views over it
(`lamar.gym.report.render`, `lamar.gym.plot.plot_result`); it imports none of them."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from lamar.gym.config import GymConfig

Row = dict[str, Any]


@dataclasses.dataclass
class GymResult:
    """The gym's output: flat rows (dicts) that pandas takes as they are; tables and plots are views.

    Attributes:
        config: what was run.
        runs: one row per (policy, seed): success by phase, captured share, slot shares,
            fossil latency and, for lamar, its verdicts against the truth.
        lessons: one row per (lamar seed, lesson): its truth, verdicts, bounds, provability.
        series: per (policy, seed), windowed success and fossil slot share; for lamar, each
            lesson's lift and bounds at checkpoints.
        elapsed: wall-clock seconds of the run.
        workers: processes that ran the jobs.
        cpu: CPU seconds the jobs took, summed over workers (the wall clock also counts
            whatever else the machine was doing).
    """

    config: GymConfig
    runs: list[Row]
    lessons: list[Row]
    series: list[Row]
    elapsed: float = 0.0
    workers: int = 1
    cpu: float = 0.0

    @property
    def rows(self) -> list[Row]:
        """Every row of every table, each tagged with its `table` ("run", "lesson", "series")."""
        return self.runs + self.lessons + self.series

    def to_json(self, path: str | os.PathLike[str]) -> None:
        """Write `rows` as one JSON array of flat objects (`pandas.read_json(path)` reads it)."""
        Path(path).write_text(json.dumps(self.rows, indent=None, separators=(",", ":")) + "\n")


__all__ = ["GymResult", "Row"]
