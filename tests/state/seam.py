"""The test seam: the only privates of `Lamar` a test may read, named once here.

`folded(lam)` is the engine's folded state (`lamar.state.follower.Follower`: its `cache`, its
saved state), which tests check against a replay; `coins(lam)` is the engine's random source,
which a test reseeds to compare two engines' next decisions without logging them.
"""

from __future__ import annotations

import random

from lamar import Lamar
from lamar.state.follower import Follower


def folded(lam: Lamar) -> Follower:
    return lam._log


def coins(lam: Lamar) -> random.Random:
    return lam._rng
