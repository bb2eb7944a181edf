"""Verdicts (helps / harms / unknown), the evidence behind them, and the nonasymptotic anytime-valid
bound they rest on (a betting confidence sequence on bounded scores)."""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Mapping, Sequence

# The widest a lift can be: rewards lie in [-1, 1] (lamar.signals). Intersecting a confidence set
# with the values the parameter can take keeps its coverage, so bounds and estimates are kept inside.
LIFT_LIMIT = 2.0


def within_lift_range(value: float) -> float:
    """`value` brought into [-LIFT_LIMIT, LIFT_LIMIT]; an infinite bound (no interval yet) and NaN stay."""
    if math.isinf(value) or math.isnan(value):
        return value
    return min(LIFT_LIMIT, max(-LIFT_LIMIT, value))


def _clip_lift(record: SliceEvidence | Evidence) -> None:
    for name in ("lift", "lower", "upper"):
        object.__setattr__(record, name, within_lift_range(getattr(record, name)))


def measured(lower: float | None, upper: float | None) -> bool:
    """Whether an interval says anything of a lift: not while neither bound is known, nor while it
    spans every lift there can be ([-2, 2]), where a few randomized episodes leave it. Its lift is then
    a number of no meaning, which printed would read as a large effect: every reader shows n/a.

    >>> measured(-0.4, 0.9), measured(-2.0, 2.0), measured(float("-inf"), float("inf")), measured(-9.0, 0.5)
    (True, False, False, True)
    """
    known = [v for v in (lower, upper) if v is not None and math.isfinite(v)]
    if not known:
        return False
    return not (lower is not None and upper is not None and lower <= -LIFT_LIMIT and upper >= LIFT_LIMIT)


def no_evidence_yet(randomized: int, restarts: int = 0) -> str:
    """Why a lift that is not `measured` reads n/a, in the words every reader prints; after a restart, since it,
    so a lesson measured over many episodes does not read as never measured.

    >>> no_evidence_yet(1)
    'no evidence yet: 1 randomized episode leaves every lift from -2 to +2 possible'
    >>> no_evidence_yet(0, restarts=1)[:67]
    'no evidence yet: 0 randomized episodes since its evidence restarted'
    """
    since = " since its evidence restarted" if restarts else ""
    episodes = (f"1 randomized episode{since} leaves" if randomized == 1
                else f"{randomized} randomized episodes{since} leave")
    return f"no evidence yet: {episodes} every lift from -{LIFT_LIMIT:g} to +{LIFT_LIMIT:g} possible"


def _repr(record: SliceEvidence | Evidence) -> str:
    """The dataclass's repr, with what an unmeasured lift means beside its number."""
    shown = []
    for field in dataclasses.fields(record):
        value = getattr(record, field.name)
        text = f"{field.name}={value!r}"
        if field.name == "lift" and not record.measured:
            text += f" (n/a: {no_evidence_yet(record.randomized)})"
        shown.append(text)
    return f"{type(record).__name__}({', '.join(shown)})"


def _plain(record: SliceEvidence | Evidence) -> dict[str, object]:
    """The record's fields as JSON takes them: an infinite bound becomes None, and so does the lift
    while it is not `measured` ("measured": false says why it is missing)."""
    data: dict[str, object] = {field.name: getattr(record, field.name) for field in dataclasses.fields(record)}
    data["verdict"] = record.verdict.value
    for name in ("lift", "lower", "upper", "estimate"):
        value = getattr(record, name, 0.0)
        if not math.isfinite(value) or (name == "lift" and not record.measured):
            data[name] = None
    data["measured"] = record.measured
    return data


class Verdict(str, enum.Enum):
    """What the randomized evidence says about a lesson's effect on reward.

    >>> from lamar import Experience, Lamar, Verdict
    >>> lam = Lamar()
    >>> eid = lam.add(Experience("the build fails", "clear the cache"))
    >>> lam.evidence(eid).verdict  # no randomized episode yet
    <Verdict.UNKNOWN: 'unknown'>
    >>> Verdict("helps") is Verdict.HELPS, str(Verdict.HARMS), lam.experiences(verdict="helps")
    (True, 'harms', [])
    """

    HELPS = "helps"
    HARMS = "harms"
    UNKNOWN = "unknown"

    def __str__(self) -> str:
        return self.value


@dataclasses.dataclass(frozen=True)
class SliceEvidence:
    """One slice's measured effect (a value of a context key the lesson's scope leaves free),
    judged at the slice family's alpha (split over the lesson's slices)."""

    verdict: Verdict
    lift: float
    lower: float
    upper: float
    randomized: int

    def __post_init__(self) -> None:
        _clip_lift(self)

    @property
    def measured(self) -> bool:
        """False while the slice's interval says nothing of its lift (`measured`)."""
        return measured(self.lower, self.upper)

    __repr__ = _repr

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-safe values, as `Evidence.to_dict` gives them."""
        return _plain(self)


@dataclasses.dataclass(frozen=True)
class Evidence:
    """A lesson's measured effect: `lift` on reward with anytime-valid bounds `[lower, upper]`.

    `lower` is the bound at the (stricter) helps level and `upper` at the harms level, both valid
    at every read of the lesson's current segment, so `verdict` is HELPS exactly when lower > 0
    and HARMS exactly when upper < 0. `randomized` counts the episodes where the lesson was wanted
    and its inclusion was a coin of known probability; only those enter `lift`.

    A lift lies in [-2, 2] (rewards lie in [-1, 1]): `lift`, `lower` and `upper` are kept inside
    that range, which loses no coverage. Before the lesson has two randomized episodes its bounds
    are infinite ("no evidence yet"; None in `to_dict`).

    While the interval is unknown or spans all of [-2, 2] (`measured` is False), `lift` is a number
    of no meaning: an average of a few randomized episodes that can sit anywhere in the range. The
    repr says so beside it, `to_dict` gives None, and every text Lamar prints reads n/a with the
    reason (`no_evidence_yet`).

    >>> from lamar import Experience, Lamar
    >>> lam = Lamar()
    >>> ev = lam.evidence(lam.add(Experience("the build fails", "clear the cache")))
    >>> ev.verdict.value, ev.lift, ev.lower, ev.upper, ev.randomized
    ('unknown', 0.0, -inf, inf, 0)
    >>> ev.to_dict()["lower"] is None  # JSON has no infinity
    True
    >>> ev.measured, ev.to_dict()["lift"]
    (False, None)
    """

    experience_id: str
    verdict: Verdict
    lift: float
    lower: float
    upper: float
    randomized: int
    injected: int
    held_out: int
    eligible: int
    restarts: int
    estimate: float  # the selection model's (discounted, non-randomized) view of the lift
    # "key=value" -> evidence within that slice of the context, for slices with enough data
    slices: Mapping[str, SliceEvidence] = dataclasses.field(default_factory=dict)
    # Reported episodes of its scope since the selection last chose it (injected it or held it out), and
    # when that was and when its injected rewards last fell; None where not recorded (`dropped`). Notes
    # beside the evidence, not part of it: equal evidence may differ in them (other stores' clocks, or a
    # PostgreSQL fold-mode row, which keeps none of them).
    unchosen: int | None = dataclasses.field(default=None, compare=False)
    chosen_at: float | None = dataclasses.field(default=None, compare=False)
    fell_at: float | None = dataclasses.field(default=None, compare=False)

    def __post_init__(self) -> None:
        _clip_lift(self)

    @property
    def measured(self) -> bool:
        """False while the interval says nothing of the lift: unknown, or spanning all of [-2, 2]."""
        return measured(self.lower, self.upper)

    @property
    def dropped(self) -> bool:
        """True when the selection has dropped the lesson: no verdict, and an estimate below -0.05, so it is
        rarely chosen and its evidence coin rarely flipped (harm suspected, not proven: `lamar.policy.dropped`)."""
        from lamar.policy.dropped import is_dropped

        return is_dropped(self)

    __repr__ = _repr

    def summary(self) -> str:
        """The evidence in words, as `lamar ui` and the MCP tools give it.

        >>> Evidence("exp_1", Verdict.HELPS, 0.42, 0.1, 0.8, 60, 40, 20, 60, 0, 0.4).summary()
        'lift +0.42, interval [+0.10, +0.80] from 60 randomized episodes'
        >>> Evidence("exp_1", Verdict.UNKNOWN, 1.97, -2.0, 2.0, 7, 1, 6, 7, 0, 0.3).summary()
        'no evidence yet: 7 randomized episodes leave every lift from -2 to +2 possible'
        """
        from lamar.policy.dropped import dropped_text

        dropped = f"; {text}" if (text := dropped_text(self)) else ""  # a verdict's "unknown" is not the whole story
        if not self.measured:
            return no_evidence_yet(self.randomized, self.restarts) + dropped
        lower, upper = (f"{b:+.2f}" if math.isfinite(b) else f"{b:+}" for b in (self.lower, self.upper))
        episodes = "1 randomized episode" if self.randomized == 1 else f"{self.randomized} randomized episodes"
        return f"lift {self.lift:+.2f}, interval [{lower}, {upper}] from {episodes}{dropped}"

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-safe values: an infinite bound (no evidence yet) becomes None, and so does the
        lift while it is not `measured` ("measured": false)."""
        data = _plain(self)
        data["slices"] = {name: s.to_dict() for name, s in self.slices.items()}
        return data


# The bets of the confidence sequence: a fixed geometric grid, each side at alpha / len(LAMBDAS).
LAMBDAS: tuple[float, ...] = (0.9, 0.6, 0.4, 0.25, 0.15, 0.08)


def betting_bounds(a: float, b: float, low: Sequence[float], high: Sequence[float], alpha_lower: float,
                   alpha_upper: float) -> tuple[float, float, float]:
    """(estimate, lower, upper) of a weighted average lift from a segment's sums
    (docs/decisions.md, "The bound").

    Each randomized episode gives a normalized residual xi in [-1, 1] (its weighted score minus
    its prediction, over a predictable half-range c); `a` sums y / c, `b` the weights w / c, and
    for each bet lam of `LAMBDAS`, `low` sums log(1 + lam xi) - lam xi and `high` sums
    log(1 - lam xi) + lam xi. For a fixed lam in [0, 1), (1 + lam xi) exp(-lam m) with m the
    residual's conditional mean has expectation (1 + lam m) exp(-lam m) <= 1, so
    exp(lam (sum xi - sum m) + low) is a nonnegative supermartingale over the segment and, by
    Ville's inequality, stays below 1 / alpha at every episode with probability 1 - alpha (the
    same with -xi for the upper side). The grid costs log(len(LAMBDAS)) on each side.

    >>> est, lo, hi = betting_bounds(30.0, 100.0, [-1.0] * 6, [-1.0] * 6, 0.01, 0.01)
    >>> round(est, 2), round(lo, 3), round(hi, 3)
    (0.3, 0.218, 0.382)
    >>> betting_bounds(0.0, 0.0, [0.0] * 6, [0.0] * 6, 0.01, 0.01)[1:]
    (-inf, inf)
    """
    if b <= 0.0:
        return 0.0, -math.inf, math.inf
    estimate = a / b
    grid = len(LAMBDAS)
    log_low, log_high = math.log(grid / alpha_lower), math.log(grid / alpha_upper)
    below = min((log_low - pen) / lam for lam, pen in zip(LAMBDAS, low, strict=True))
    above = min((log_high - pen) / lam for lam, pen in zip(LAMBDAS, high, strict=True))
    return estimate, estimate - below / b, estimate + above / b
