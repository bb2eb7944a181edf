"""The gym's result: flat rows (dicts) and how they were made. Tables and plots are views over it
(`lamar.gym.report.render`, `lamar.gym.plot.plot_result`); it imports none of them."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from lamar.atomic import write_output
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
        write_rows(path, self.rows)


def write_rows(path: str | os.PathLike[str], rows: list[Row]) -> None:
    """Write `rows` to `path` as one JSON array, whole or not at all: a run stopped or a disk filled
    while writing leaves the file that was there before as it was, and no temporary copy beside it.

    Raises:
        OSError: with the cause's errno, `path` as its filename and a message that says what to do.
    """
    write_output(Path(path), json.dumps(rows, indent=None, separators=(",", ":")) + "\n", "the rows to")


__all__ = ["GymResult", "Row", "write_rows"]
