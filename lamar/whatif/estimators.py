"""The estimators and their intervals: exact slate IPS, self-normalised IPS, doubly robust, the
pseudo-inverse (additive) estimator and its doubly robust form (docs/whatif.md)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile: two-sided 95% intervals
ESTIMATORS = ("ips", "snips", "dr", "pi", "pi-dr")


@dataclasses.dataclass(frozen=True)
class Estimate:
    """An estimated mean with its 95% interval, from `n` episodes."""

    value: float
    lower: float
    upper: float
    n: int

    def covers(self, truth: float) -> bool:
        return self.lower <= truth <= self.upper

    def within(self, low: float, high: float) -> Estimate:
        """The interval cut to [low, high], the range the outcome can take (so its mean can too);
        the value is left as estimated, even outside (an IPS estimate can be)."""
        return Estimate(self.value, min(max(self.lower, low), high), max(min(self.upper, high), low), self.n)

    def to_dict(self) -> dict[str, float | int]:
        return dataclasses.asdict(self)


class Sums:
    """Running sums of one estimator's terms a + b y over groups of episodes.

    Each term is affine in the episode's outcome y given what the episode logged, and episodes
    that logged the same slate in the same fold share a and b, so a whole group is added at once:
    a log has far fewer slates than episodes, which keeps `lamar whatif` fast.
    """

    __slots__ = ("n", "total", "squares")

    def __init__(self) -> None:
        self.n = 0
        self.total = 0.0
        self.squares = 0.0

    def add(self, n: int, y: float, yy: float, a: float, b: float) -> None:
        """Add `n` episodes whose outcomes sum to `y` (squares to `yy`), each term a + b y_j."""
        self.n += n
        self.total += a * n + b * y
        self.squares += a * a * n + 2.0 * a * b * y + b * b * yy

    def estimate(self) -> Estimate:
        return _interval(self.n, self.total, self.squares)


class RatioSums:
    """Self-normalised IPS: sum w y / sum w, its interval by the delta method."""

    __slots__ = ("n", "w", "wy", "ww", "wwy", "wwyy")

    def __init__(self) -> None:
        self.n = 0
        self.w = self.wy = self.ww = self.wwy = self.wwyy = 0.0

    def add(self, n: int, y: float, yy: float, w: float) -> None:
        self.n += n
        self.w += w * n
        self.wy += w * y
        self.ww += w * w * n
        self.wwy += w * w * y
        self.wwyy += w * w * yy

    def estimate(self) -> Estimate:
        if self.n == 0 or self.w <= 0.0:
            return Estimate(math.nan, math.nan, math.nan, self.n)
        value = self.wy / self.w
        spread = max(0.0, self.wwyy - 2.0 * value * self.wwy + value * value * self.ww)
        half = Z95 * math.sqrt(spread) / self.w
        return Estimate(value, value - half, value + half, self.n)


def _interval(n: int, total: float, squares: float) -> Estimate:
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    mean = total / n
    if n == 1:
        return Estimate(mean, -math.inf, math.inf, 1)
    variance = max(0.0, (squares - n * mean * mean) / (n - 1))
    half = Z95 * math.sqrt(variance / n)
    return Estimate(mean, mean - half, mean + half, n)


def slate_weight(p: Mapping[str, float], injected: frozenset[str], changes: Mapping[str, float]) -> float | None:
    """The exact slate weight: the alternative's probability of the injected set over the log's.

    Only changed lessons enter (an unchanged lesson's ratio is 1). None when the episode is
    outside the support: the alternative moves a lesson whose inclusion the log did not randomize.
    """
    weight = 1.0
    for lesson, new in changes.items():
        old = p.get(lesson, 0.0)
        if new == old:
            continue
        if not 0.0 < old < 1.0:
            return None
        weight *= new / old if lesson in injected else (1.0 - new) / (1.0 - old)
    return weight


def pseudo_inverse(p: Mapping[str, float], injected: frozenset[str], changes: Mapping[str, float]) -> float:
    """The pseudo-inverse weight under independent coins (Swaminathan et al. 2017, closed form):
    1 + sum over changed lessons of (pi - p)(I - p) / (p (1 - p)). Call it on supported episodes."""
    weight = 1.0
    for lesson, new in changes.items():
        old = p[lesson]
        if new != old:
            indicator = 1.0 if lesson in injected else 0.0
            weight += (new - old) * (indicator - old) / (old * (1.0 - old))
    return weight


class Accumulator:
    """Every estimator's sums for one alternative and one outcome (reward or success)."""

    __slots__ = ("logged", "ips", "snips", "dr", "pi", "pi_dr")

    def __init__(self) -> None:
        self.logged = Sums()
        self.ips, self.snips, self.dr = Sums(), RatioSums(), Sums()
        self.pi, self.pi_dr = Sums(), Sums()

    def add(self, n: int, y: float, yy: float, w: float, g: float) -> None:
        """Add `n` supported episodes that share their slate weight `w` and pseudo-inverse weight
        `g`, whose outcomes sum to `y` (their squares to `yy`): the estimators without a model."""
        self.logged.add(n, y, yy, 0.0, 1.0)
        self.ips.add(n, y, yy, 0.0, w)
        self.snips.add(n, y, yy, w)
        self.pi.add(n, y, yy, 0.0, g)

    def add_model(self, w: float, g: float, cells: Iterable[tuple[int, float, float, float, float]]) -> None:
        """The same episodes for the doubly robust estimators, a fold at a time: each cell is
        (n, y, yy, model_pi, model_logged), model_pi being the fold's outcome model's expectation
        under the alternative and model_logged its prediction for the injected set."""
        dr, pi_dr = self.dr, self.pi_dr
        for n, y, yy, model_pi, model_logged in cells:
            dr.add(n, y, yy, model_pi - w * model_logged, w)
            pi_dr.add(n, y, yy, model_pi - g * model_logged, g)

    def estimates(self, low: float, high: float) -> dict[str, Estimate]:
        """Each estimator's estimate, intervals cut to the outcome's range [low, high]."""
        found = {"logged": self.logged.estimate(), "ips": self.ips.estimate(), "snips": self.snips.estimate(),
                 "dr": self.dr.estimate(), "pi": self.pi.estimate(), "pi-dr": self.pi_dr.estimate()}
        return {name: estimate.within(low, high) for name, estimate in found.items()}

    @property
    def effective(self) -> float:
        """Kish's effective sample size of the slate weights, (sum w)^2 / sum w^2: how many
        episodes the exact estimators really rest on (few when the alternative needs coins
        that rarely fell its way)."""
        sums = self.snips
        return sums.w * sums.w / sums.ww if sums.ww > 0.0 else 0.0
