"""The memory gym: a falsifiable benchmark of lesson selection (`python -m lamar.gym`).

    from lamar.gym import GymConfig, render, run_gym
    result = run_gym(GymConfig(seeds=5))
    print(render(result))           # the printed report, a view over the rows
    rows = result.rows              # flat dicts, for pandas.DataFrame(rows)
"""

from lamar.gym.config import GymConfig
from lamar.gym.plot import plot_result
from lamar.gym.policies import POLICIES
from lamar.gym.report import check_targets, render
from lamar.gym.result import GymResult
from lamar.gym.runner import run_gym

__all__ = ["POLICIES", "GymConfig", "GymResult", "check_targets", "plot_result", "render", "run_gym"]
