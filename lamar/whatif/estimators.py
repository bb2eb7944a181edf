"""The estimators and their intervals: exact slate IPS, self-normalised IPS, doubly robust, the
pseudo-inverse (additive) estimator and its doubly robust form, each with a 95% interval for one
reading of the log and a 95% asymptotic confidence sequence for any number of them (docs/whatif.md)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile: two-sided 95% intervals
TAIL = 0.025  # each side's share of a two-sided 95% interval
ALPHA = 2.0 * TAIL
PLAN_SHARE = 0.25  # a sequence is tightest at a quarter of the episodes asked about (`planned`)
ESTIMATORS = ("ips", "snips", "dr", "pi", "pi-dr")


@dataclasses.dataclass(frozen=True)
class Estimate:
    """An estimated mean with its 95% interval, from `n` episodes.

    [lower, upper] is the interval for one reading of the log as it stands; [anytime_lower,
    anytime_upper] is the confidence sequence, which holds however often the log is read and
    however many episodes the log's own outcomes left carrying a coin (NaN where not computed).
    """

    value: float
    lower: float
    upper: float
    n: int
    se: float = math.nan  # the estimate's standard error
    raw: float | None = None  # set by `inside`: the value as estimated, before it was kept inside the interval
    anytime_lower: float = math.nan
    anytime_upper: float = math.nan

    def covers(self, truth: float) -> bool:
        return self.lower <= truth <= self.upper

    def anytime(self) -> Estimate:
        """The same estimate with the confidence sequence as its interval."""
        return dataclasses.replace(self, lower=self.anytime_lower, upper=self.anytime_upper)

    def spans(self, low: float, high: float) -> bool:
        """The interval reaches both ends of the outcome's range [low, high]: it says nothing."""
        return self.lower <= low and self.upper >= high

    def within(self, low: float, high: float) -> Estimate:
        """The interval cut to [low, high], the range the outcome can take (so its mean can too);
        the value is left as estimated, even outside (an IPS estimate can be)."""
        return dataclasses.replace(self, lower=min(max(self.lower, low), high), upper=max(min(self.upper, high), low))

    def honest(self, low: float, high: float, episodes: float) -> Estimate:
        """The interval cut to [low, high] and never narrower than `narrowest(episodes, high - low)`:
        a sample spread measured on a handful of episodes (zero when their outcomes were all
        equal) says little about the spread itself. A widened interval is centred on the value
        and moved inside the range when it would cross an end."""
        cut = self.within(low, high)
        width = narrowest(episodes, high - low)
        if not math.isfinite(self.value) or cut.upper - cut.lower >= width:
            return cut
        lower = min(max(min(max(self.value, low), high) - width / 2.0, low), high - width)
        return dataclasses.replace(cut, lower=lower, upper=lower + width)

    def inside(self) -> Estimate:
        """The value kept inside its interval, which `honest` keeps inside the outcome's range: an
        IPS or DR estimate can fall outside what the outcome can take, and the nearest point of the
        interval is nearer to every value the interval holds. `raw` keeps the value as estimated."""
        value = self.value
        if math.isfinite(value) and self.lower <= self.upper:
            value = min(max(value, self.lower), self.upper)
        return dataclasses.replace(self, value=value, raw=self.value)

    def to_dict(self) -> dict[str, float | int | None]:
        return dataclasses.asdict(self)


class Sums:
    """Running sums of one estimator's terms a + b y over groups of episodes.

    Each term is affine in the episode's outcome y given what the episode logged, and episodes
    that logged the same slate in the same fold share a and b, so a whole group is added at once:
    a log has far fewer slates than episodes, which keeps `lamar whatif` fast.
    """

    __slots__ = ("n", "total", "squares", "predicted", "about_zero")

    def __init__(self, about_zero: bool = False) -> None:
        """`about_zero`: the predicted variances `add` is given are the terms' second moments about
        zero, from which the estimate takes its own square (a term that is not centred, as IPS's)."""
        self.n = 0
        self.total = 0.0
        self.squares = 0.0
        self.predicted = 0.0
        self.about_zero = about_zero

    def add(self, n: int, y: float, yy: float, a: float, b: float, variance: float = 0.0) -> None:
        """Add `n` episodes whose outcomes sum to `y` (squares to `yy`), each term a + b y_j, and
        each term's variance as the logged coins predict it (0: not predicted)."""
        self.n += n
        self.total += a * n + b * y
        self.squares += a * a * n + 2.0 * a * b * y + b * b * yy
        self.predicted += n * variance

    def estimate(self, planned: float | None) -> Estimate:
        """The mean with its confidence sequence planned for `planned` terms (None: the normal
        interval for this one n)."""
        return _interval(self.n, self.total, self.squares, planned, self.predicted, self.about_zero)


class RatioSums:
    """Self-normalised IPS: sum w y / sum w, its interval by the delta method.

    Its terms are w (y - value) / mean w. Their spread over the coins and the outcome is about
    E[w^2] E[(y - value)^2 | slate]; the log rarely sees the slate a heavy weight needs, so the
    pooled moments of the outcome, `first` and `second` (E[y] and E[y^2] over the log), stand for
    it there, as the outcome's pooled noise does for the doubly robust terms (`second_moments`).
    The interval's spread is never taken below that (all zero: the sample spread alone).
    """

    __slots__ = ("n", "w", "wy", "ww", "wwy", "wwyy", "w2", "first", "second")

    def __init__(self, first: float = 0.0, second: float = 0.0) -> None:
        self.n = 0
        self.w = self.wy = self.ww = self.wwy = self.wwyy = 0.0
        self.w2 = 0.0  # the sum of the terms' E[w^2] over the logging coins
        self.first, self.second = first, second

    def add(self, n: int, y: float, yy: float, w: float, w2: float = 0.0) -> None:
        self.n += n
        self.w += w * n
        self.wy += w * y
        self.ww += w * w * n
        self.wwy += w * w * y
        self.wwyy += w * w * yy
        self.w2 += w2 * n

    def estimate(self, planned: float | None) -> Estimate:
        if self.n == 0 or self.w <= 0.0:
            return Estimate(math.nan, math.nan, math.nan, self.n)
        value = self.wy / self.w
        spread = max(0.0, self.wwyy - 2.0 * value * self.wwy + value * value * self.ww)
        # The coins make sum w equal n on average; a log that missed the heavy weights sums to less.
        predicted = self.w2 * max(0.0, self.second - 2.0 * value * self.first + value * value)
        se = max(math.sqrt(spread) / self.w, math.sqrt(predicted) / self.n)
        half = _z(self.n, planned) * se
        return Estimate(value, value - half, value + half, self.n, se)


def _interval(n: int, total: float, squares: float, planned: float | None, predicted: float = 0.0,
              about_zero: bool = False) -> Estimate:
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    mean = total / n
    if n == 1:
        return Estimate(mean, -math.inf, math.inf, 1)
    # The sample spread, but never less than the coins predict: a term that weighs a rare slate
    # heavily adds to the spread only when that slate happened, and a log in which it seldom did
    # would otherwise look precise exactly where it knows least.
    floor = predicted / n - (mean * mean if about_zero else 0.0)
    variance = max(0.0, (squares - n * mean * mean) / (n - 1), floor)
    se = math.sqrt(variance / n)
    half = _z(n, planned) * se
    return Estimate(mean, mean - half, mean + half, n, se)


def _z(n: float, planned: float | None) -> float:
    return Z95 if planned is None else sequence_z(n, planned)


def sequence_z(n: float, planned: float) -> float:
    """The half-width, in standard errors, of a two-sided 95% asymptotic confidence sequence after
    `n` terms, planned to be tightest at `planned` terms.

    Waudby-Smith, Arbour, Sinha, Kennedy and Ramdas (2024, "Time-uniform central limit theory and
    asymptotic confidence sequences", Annals of Statistics) bound the running mean of terms whose
    conditional means may change, at every n at once, by
    sqrt(2 (n rho^2 + 1) / (n^2 rho^2) log(sqrt(n rho^2 + 1) / alpha)) in units of the terms'
    spread, with rho^2 = (-2 log alpha + log(1 - 2 log alpha)) / planned. Holding at every n is
    what a what-if needs: the engine keeps a lesson's coin only while its verdict is within reach,
    so how many episodes carry a coin depends on their own outcomes, and an interval for one fixed
    n under-covers there. `planned` must not depend on the outcomes (the report plans for a share
    of the episodes asked about); the width changes little away from it.

    >>> round(sequence_z(1000, 1000), 2), round(sequence_z(250, 1000), 2), round(sequence_z(4000, 1000), 2)
    (3.04, 3.26, 3.13)
    """
    if n <= 0.0:
        return math.inf
    shape = -2.0 * math.log(ALPHA)
    u = n * (shape + math.log1p(shape)) / max(planned, 1.0)  # n rho^2
    return math.sqrt(2.0 * (u + 1.0) / u * math.log(math.sqrt(u + 1.0) / ALPHA))


def narrowest(episodes: float, span: float) -> float:
    """The narrowest honest 95% interval for a mean of `episodes` outcomes in a range `span` wide.

    If the mean lies a share u of the range above its low end, an outcome sits at that end with
    probability at most 1 - u, whatever its distribution, so n outcomes all at that end have
    probability at most (1 - u)^n: seeing that rules out only u above 1 - 0.025^(1/n) (the
    Clopper-Pearson bound for n equal outcomes, about 3.7/n). No interval on n episodes can
    honestly be narrower. Weighted estimators pass their effective number of episodes.

    >>> round(narrowest(3, 1.0), 3), round(narrowest(100, 2.0), 3), narrowest(0, 2.0)
    (0.708, 0.072, 2.0)
    """
    if episodes <= 0.0:
        return span
    return -span * math.expm1(math.log(TAIL) / episodes)  # span (1 - TAIL^(1/n))


def kish(total: float, squares: float) -> float:
    """Kish's effective number of episodes, (sum w)^2 / sum w^2, of weights that sum to `total`
    with squares summing to `squares` (0 when no weight is positive overall)."""
    return total * total / squares if squares > 0.0 and total > 0.0 else 0.0


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


def second_moments(p: Mapping[str, float], changes: Mapping[str, float]) -> tuple[float, float]:
    """E[w^2] and E[g^2] over the logging coins, for the exact slate weight w and the
    pseudo-inverse weight g of a supported episode (independent coins).

    A doubly robust term is mu(pi) + w (y - mu(S)); its variance over the coins and the outcome is
    about E[w^2] times the outcome's noise when the model is right, however the coins happened to
    fall. The product over changed lessons of pi^2 / p + (1 - pi)^2 / (1 - p) is E[w^2]; the
    centred indicators being uncorrelated, E[g^2] = 1 + sum (pi - p)^2 / (p (1 - p)).

    >>> w2, g2 = second_moments({"a": 0.96, "b": 0.96}, {"a": 0.0, "b": 0.0})  # both held out: 1 / 0.04^2
    >>> round(w2, 6), round(g2, 6)
    (625.0, 49.0)
    """
    w2 = g2 = 1.0
    for lesson, new in changes.items():
        old = p[lesson]
        if new != old:
            w2 *= new * new / old + (1.0 - new) ** 2 / (1.0 - old)
            g2 += (new - old) ** 2 / (old * (1.0 - old))
    return w2, g2


class Accumulator:
    """Every estimator's sums for one alternative and one outcome (reward or success)."""

    __slots__ = ("logged", "ips", "snips", "dr", "pi", "pi_dr", "g", "gg", "second")

    def __init__(self, first: float = 0.0, second: float = 0.0) -> None:
        """`first` and `second`: the outcome's mean and mean square over the log, which stand for
        its moments on a slate the log rarely saw in IPS's and SNIPS's predicted spreads."""
        self.logged = Sums()
        self.ips, self.snips, self.dr = Sums(about_zero=True), RatioSums(first, second), Sums()
        self.pi, self.pi_dr = Sums(about_zero=True), Sums()
        self.g = self.gg = 0.0  # the pseudo-inverse weights' sum and sum of squares
        self.second = second

    def add(self, n: int, y: float, yy: float, w: float, g: float, w2: float = 0.0, g2: float = 0.0) -> None:
        """Add `n` supported episodes that share their slate weight `w` and pseudo-inverse weight
        `g`, whose outcomes sum to `y` (their squares to `yy`): the estimators without a model.

        `w2` and `g2` are E[w^2] and E[g^2] over the logging coins (`second_moments`; 0: not
        predicted). An IPS term
        w y has variance over the coins and the outcome E[w^2 E[y^2 | slate]] - value^2, about
        E[w^2] E[y^2] - value^2 with the log's pooled mean square standing for E[y^2 | slate],
        which the log cannot measure on a slate it seldom saw; its interval's spread is never
        taken below that, nor SNIPS's below its own (`RatioSums`), nor the pseudo-inverse's below
        E[g^2] E[y^2] - value^2, its term g y being IPS's with g for w."""
        self.logged.add(n, y, yy, 0.0, 1.0)
        self.ips.add(n, y, yy, 0.0, w, w2 * self.second)
        self.snips.add(n, y, yy, w, w2)
        self.pi.add(n, y, yy, 0.0, g, g2 * self.second)
        self.g += g * n
        self.gg += g * g * n

    def add_model(self, w: float, g: float, cells: Iterable[tuple[int, float, float, float, float]],
                  w2: float = 0.0, g2: float = 0.0, noise: float = 0.0) -> None:
        """The same episodes for the doubly robust estimators, a fold at a time: each cell is
        (n, y, yy, model_pi, model_logged), model_pi being the fold's outcome model's expectation
        under the alternative and model_logged its prediction for the injected set. `w2` and `g2`
        are the weights' second moments over the logging coins (`second_moments`) and `noise` the
        outcome's variance given the slate: their products are the terms' predicted variances,
        below which an interval's spread is not taken (0: the sample spread alone)."""
        dr, pi_dr = self.dr, self.pi_dr
        for n, y, yy, model_pi, model_logged in cells:
            dr.add(n, y, yy, model_pi - w * model_logged, w, w2 * noise)
            pi_dr.add(n, y, yy, model_pi - g * model_logged, g, g2 * noise)

    def estimates(self, low: float, high: float, asked: int) -> dict[str, Estimate]:
        """Each estimator's estimate with its normal interval for this one n and its confidence
        sequence (`sequence_z`, planned for a share of the `asked` episodes), both cut to the
        outcome's range [low, high] and no narrower than the episodes the estimate rests on allow
        (`narrowest`): the logged policy's on its episodes, the exact estimators' on their slate
        weights' effective number, the pseudo-inverse ones' on theirs."""
        exact, additive = self.effective, kish(self.g, self.gg)
        planned = PLAN_SHARE * asked
        found: dict[str, tuple[Sums | RatioSums, float]] = {
            "logged": (self.logged, float(self.logged.n)), "ips": (self.ips, exact), "snips": (self.snips, exact),
            "dr": (self.dr, exact), "pi": (self.pi, additive), "pi-dr": (self.pi_dr, additive)}
        out = {}
        for name, (sums, episodes) in found.items():
            sequence = sums.estimate(planned).honest(low, high, episodes)
            out[name] = dataclasses.replace(sums.estimate(None).honest(low, high, episodes),
                                            anytime_lower=sequence.lower, anytime_upper=sequence.upper)
        return out

    @property
    def effective(self) -> float:
        """Kish's effective sample size of the slate weights, (sum w)^2 / sum w^2: how many
        episodes the exact estimators really rest on (few when the alternative needs coins
        that rarely fell its way)."""
        return kish(self.snips.w, self.snips.ww)

    @property
    def predicted(self) -> float:
        """The effective sample size the logging coins predict, n^2 / sum E[w^2] (inf: none
        predicted). A log that never drew the slate a heavy weight needs has no heavy weight for
        `effective` to count, and looks well covered exactly where it saw nothing."""
        snips = self.snips
        return snips.n * snips.n / snips.w2 if snips.w2 > 0.0 else math.inf
