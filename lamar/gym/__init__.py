"""The memory gym: a falsifiable benchmark of lesson selection (`python -m lamar.gym`).

`run_gym(GymConfig(...))` returns flat rows (for pandas); `render(result)` prints the report over them."""

from lamar.gym.config import GymConfig
from lamar.gym.plot import plot_result
from lamar.gym.policies import POLICIES
from lamar.gym.report import check_targets, render
from lamar.gym.result import GymResult
from lamar.gym.runner import run_gym

__all__ = ["POLICIES", "GymConfig", "GymResult", "check_targets", "plot_result", "render", "run_gym"]
