"""The memory gym: a falsifiable benchmark of lesson selection (`python -m lamar.gym`).

    from lamar.gym import GymConfig, run_gym
    result = run_gym(GymConfig(seeds=5))
    print(result.table())           # the printed report
    rows = result.rows              # flat dicts, for pandas.DataFrame(rows)
"""

from lamar.gym.config import GymConfig
from lamar.gym.policies import POLICIES
from lamar.gym.runner import GymResult, run_gym

__all__ = ["POLICIES", "GymConfig", "GymResult", "run_gym"]
