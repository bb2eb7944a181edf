"""One lesson's learned state, and the fold that updates it when an outcome arrives."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

from lamar.experience import Experience
from lamar.policy.alpha import lesson_alpha
from lamar.policy.change import ChangeDetector
from lamar.policy.config import Policy
from lamar.policy.features import Slices
from lamar.policy.history import EvidencePoint, History, LessonHistory, point
from lamar.policy.ledger import Ledger
from lamar.policy.selection import ArmStats
from lamar.policy.verdicts import Evidence, Verdict, betting_bounds, within_lift_range

_PRIOR_OUT = 10.0  # weight of the old without-lesson mean kept when the arms restart on a fall
# The level of a lesson whose creation rank was never folded (a fallback: the fold numbers every lesson).
UNKNOWN_RANK = 1000


class LessonState:
    """Selection model, fall detector and evidence ledger of one experience, and its creation rank."""

    __slots__ = (
        "experience", "arms", "ledger", "detector",
        "eligible", "injected", "held_out", "restarts", "rank", "_verdict_cache", "slices", "history",
    )

    def __init__(self, experience: Experience, rank: int = 0) -> None:
        self.experience = experience
        self.arms = ArmStats()
        self.ledger = Ledger()
        self.detector = ChangeDetector()
        self.eligible = 0
        self.injected = 0
        self.held_out = 0
        self.restarts = 0  # segments closed by the fall detector or by an edit (`renew`)
        self.rank = rank  # the lesson was the rank-th created in its store: fixes its share of alpha
        self.slices = Slices()  # the context keys the scope leaves free (policy/features.py)
        self.history = History()  # what `lamar show` draws: noted as the fold goes (policy/history.py)
        self._verdict_cache: tuple[int, int, tuple[Verdict, float, float]] | None = None

    def observe(self, reward: float, injected: bool, p: float, sigma: float, policy: Policy,
                n_lessons: int = 1, context: Mapping[str, str] | None = None) -> None:
        """Fold one reported episode in which this lesson was eligible (p = inclusion probability).

        `n_lessons` is no longer read (alpha is the lesson's own, by creation rank); it stays so
        that the fold's callers need not change.
        """
        self.eligible += 1
        if injected:
            self.injected += 1
        elif p > 0.0:
            self.held_out += 1
        if injected or p > 0.0:
            self.history.chosen = (self.eligible, 0.0)  # dated by `note_evidence`
        excursion = self.detector.update(reward, injected, sigma)
        if excursion is not None:
            self.history.fell = (self.eligible, 0.0)
            self._restart(*excursion)
            return  # the episode that proved the fall is in the excursion, and after it the new segment starts
        self.arms.record(reward, injected, policy.discount)
        randomized = 0.0 < p < 1.0
        if context:
            self.slices.observe(context, self.experience.scope.items_key, reward, injected, p, policy.discount)
        if randomized:
            self.ledger.record(reward, injected, p)
            self._verdict_cache = None

    def _restart(self, w_in: float, s_in: float, w_out: float, s_out: float) -> None:
        """The injected reward fell: both arms restart from the excursion, and the evidence segment
        closes (the next one spends the next share of the lesson's alpha)."""
        arms = self.arms
        prior = min(arms.w_out, _PRIOR_OUT)
        mean_out = arms.s_out / arms.w_out if arms.w_out > 0.0 else 0.0
        arms.restart_both(w_in, s_in, w_out + prior, s_out + prior * mean_out)
        level_w, level_s = self.ledger.level_w, self.ledger.level_s
        self.ledger = Ledger()
        self.ledger.level_w, self.ledger.level_s = level_w, level_s  # the base rate did not restart
        self.slices.restart()
        self.restarts += 1
        self._verdict_cache = None

    def renew(self) -> None:
        """An edit made the lesson a new treatment: a new evidence segment, as a fall's restart
        opens one (it spends the next share of the lesson's alpha), and a selection model that
        tries the new text afresh (cold again: warm-up tries) against the without-lesson arm it
        had, capped as a restart caps it. The reward level, the slices' alpha divisor and the
        id's counts stay: the base rate and the lesson's history did not change."""
        arms = self.arms
        prior = min(arms.w_out, _PRIOR_OUT)
        self.arms = ArmStats()
        if prior > 0.0:
            self.arms.w_out, self.arms.s_out = prior, prior * arms.s_out / arms.w_out
        level_w, level_s = self.ledger.level_w, self.ledger.level_s
        self.ledger = Ledger()
        self.ledger.level_w, self.ledger.level_s = level_w, level_s
        inherited = self.slices.inherited
        self.slices = Slices()
        self.slices.inherited = inherited
        self.detector = ChangeDetector()
        self.restarts += 1
        self._verdict_cache = None

    def alphas(self, policy: Policy) -> tuple[float, float]:
        """(helps, harms) level of the current segment: the lesson's share by creation rank, the
        segment's share of it, and a narrowed lesson's inherited divisor."""
        rank, segment, divisor = self.rank or UNKNOWN_RANK, self.restarts + 1, self.slices.inherited
        return (lesson_alpha(policy.alpha_helps, rank, segment) / divisor,
                lesson_alpha(policy.alpha_harms, rank, segment) / divisor)

    def judge(self, policy: Policy, n_lessons: int = 0) -> tuple[Verdict, float, float]:
        """(verdict, lower, upper): helps exactly when lower > 0, harms exactly when upper < 0
        (`n_lessons` is not read: see `observe`)."""
        cached = self._verdict_cache
        ledger = self.ledger
        if cached is not None and cached[0] == ledger.n and cached[1] == self.restarts:
            return cached[2]
        if ledger.n < 2:  # one episode is no interval (a valid one would span every lift anyway)
            return Verdict.UNKNOWN, -math.inf, math.inf
        helps, harms = self.alphas(policy)
        _, lower, upper = betting_bounds(ledger.a, ledger.b, *ledger.penalties, helps, harms)
        lower, upper = within_lift_range(lower), within_lift_range(upper)  # a lift lies in [-2, 2]
        verdict = Verdict.HELPS if lower > 0.0 else Verdict.HARMS if upper < 0.0 else Verdict.UNKNOWN
        result = (verdict, lower, upper)
        self._verdict_cache = (ledger.n, self.restarts, result)
        return result

    def evidence(self, policy: Policy, n_lessons: int) -> Evidence:
        verdict, lower, upper = self.judge(policy, n_lessons)
        return Evidence(
            experience_id=self.experience.id,
            verdict=verdict,
            lift=self.ledger.mean,
            lower=lower,
            upper=upper,
            randomized=self.ledger.n,
            injected=self.injected,
            held_out=self.held_out,
            eligible=self.eligible,
            restarts=self.restarts,
            estimate=self.arms.estimate,
            slices=self.slices.evidence(*self.alphas(policy)),
            **self.history.since_chosen(self.eligible),
        )

    def note_evidence(self, seq: int, time: float, policy: Policy, n_lessons: int, *, always: bool = False) -> None:
        """After an outcome (or a merge) that moved the evidence: a history point, when one is due."""
        if self.history.observed(self.eligible, seq, time) or always:
            self.history.add(self._point(seq, time, policy, n_lessons))

    def past(self, policy: Policy, n_lessons: int) -> LessonHistory:
        """The history, ending at the evidence now."""
        h = self.history
        return h.view(self._point(h.last_seq, h.last_time, policy, n_lessons))

    def _point(self, seq: int, time: float, policy: Policy, n_lessons: int) -> EvidencePoint:
        return point(seq, time, self.judge(policy, n_lessons), within_lift_range(self.ledger.mean), self.ledger.n,
                     self.eligible, self.restarts)

    _COUNTS: ClassVar[tuple[str, ...]] = ("eligible", "injected", "held_out", "restarts", "rank")

    def to_dict(self) -> dict[str, Any]:
        """The lesson and everything learned about it, as plain JSON-safe values."""
        return {
            "experience": self.experience.to_dict(),
            "arms": self.arms.to_dict(),
            "ledger": self.ledger.to_dict(),
            "detector": self.detector.to_dict(),
            **{name: getattr(self, name) for name in self._COUNTS},
            "slices": self.slices.to_dict(),
            "history": self.history.to_dict(),
        }

    def copy(self) -> LessonState:
        """An independent copy, equal in `to_dict` (a fold of it leaves this one as it is); the
        lesson itself is shared: an `Experience` is never changed, only replaced."""
        state = LessonState.bare(self.experience)
        state.arms, state.ledger, state.detector = self.arms.copy(), self.ledger.copy(), self.detector.copy()
        for name in self._COUNTS:
            setattr(state, name, getattr(self, name))
        state.slices, state.history = self.slices.copy(), self.history.copy()
        return state

    @classmethod
    def bare(cls, experience: Experience) -> LessonState:
        """A state with its lesson and nothing else: for a copy or a decode, which set every
        other slot (the records `__init__` would build are a fold's hot-path cost)."""
        state = cls.__new__(cls)
        state.experience, state._verdict_cache = experience, None
        return state

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], experience: Experience | None = None) -> LessonState:
        """The inverse of `to_dict`: the same decisions and evidence follow from it.

        `experience`, when given, is `Experience.from_dict(data["experience"])` already parsed
        (a reader of many copies of one lesson parses its text once).
        """
        state = cls(experience if experience is not None else Experience.from_dict(data["experience"]))
        state.arms = ArmStats.from_dict(data["arms"])
        # A lesson saved by the second design keeps its arms and counts; its ledger and detector
        # start afresh (their sums belong to a bound and statistics this design does not have).
        state.ledger = Ledger.from_dict(data["ledger"])
        state.detector = ChangeDetector.from_dict(data["detector"])
        for name in cls._COUNTS:  # rank: absent before state version 8 (the engine then numbers them)
            setattr(state, name, int(data.get(name, 0)))
        if "slices" in data:  # absent from a lesson saved before state version 2
            state.slices = Slices.from_dict(data["slices"])
        if "history" in data:  # absent from a lesson saved before state version 7: its history starts here
            state.history = History.from_dict(data["history"])
        return state

    def absorb(self, other: LessonState) -> None:
        """Take over a duplicate's evidence (a merge)."""
        self.arms.merge(other.arms)
        self.ledger.merge(other.ledger)
        self.eligible += other.eligible
        self.injected += other.injected
        self.held_out += other.held_out
        self.slices.merge(other.slices)
        self._verdict_cache = None

    def narrow(self, key: str, value: str, continued: Mapping[str, Any] | None = None) -> None:
        """The scope now fixes `key` to `value`: the lesson's evidence continues that slice's.

        The lesson-wide ledger and arms mixed every value of `key`; the slice's own ledger and
        arms are exactly the evidence of the narrower lesson (kept at the slice family's
        alpha divisor, see `Slices`). Without such a slice the lesson starts afresh. `continued`
        is the slice as a scope event keeps it once its contexts were erased (`Slices.narrow`).
        """
        kept = self.slices.narrow(key, value, continued)
        self.ledger = kept.ledger if kept is not None else Ledger()
        self.arms = kept.arms if kept is not None else ArmStats()
        self.detector = ChangeDetector()
        self._verdict_cache = None
