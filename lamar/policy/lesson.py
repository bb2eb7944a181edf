"""One lesson's learned state, and the fold that updates it when an outcome arrives."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

from lamar.experience import Experience
from lamar.policy.change import ChangeDetector
from lamar.policy.config import Policy
from lamar.policy.features import Slices
from lamar.policy.ledger import Ledger
from lamar.policy.selection import ArmStats
from lamar.policy.verdicts import Evidence, Verdict, confidence_radius


_CHECKPOINT = 8  # randomized episodes between folds of the bound into its running intersection


class LessonState:
    """Selection model, evidence ledger and change detector of one experience."""

    __slots__ = (
        "experience", "arms", "ledger", "detector",
        "eligible", "injected", "held_out", "restarts", "_verdict_cache", "_best", "slices",
    )

    def __init__(self, experience: Experience) -> None:
        self.experience = experience
        self.arms = ArmStats()
        self.ledger = Ledger()
        self.detector = ChangeDetector()
        self.eligible = 0
        self.injected = 0
        self.held_out = 0
        self.restarts = 0
        self.slices = Slices()  # the context keys the scope leaves free (policy/features.py)
        self._verdict_cache: tuple[int, int, tuple[Verdict, float, float]] | None = None
        # (lessons, lower, upper): the tightest bounds seen at checkpoints since the last
        # restart. An anytime-valid sequence holds at every time at once, so intersecting
        # its past bounds keeps the guarantee and stops a verdict from flickering.
        self._best: tuple[int, float, float] | None = None

    def observe(self, reward: float, injected: bool, p: float, sigma: float, policy: Policy,
                n_lessons: int = 1, context: Mapping[str, str] | None = None) -> None:
        """Fold one reported episode in which this lesson was eligible (p = inclusion probability)."""
        self.eligible += 1
        self.arms.record(reward, injected, policy.discount)
        if context:
            self.slices.observe(context, self.experience.scope.items_key, reward, injected, p, policy.discount)
        if injected:
            self.injected += 1
        elif p > 0.0:
            self.held_out += 1
        if not 0.0 < p < 1.0:
            return  # not randomized: the selection model learns, the ledger does not
        if injected and self.ledger.n_in >= policy.min_evidence:
            self.detector.update(reward, self.ledger.mu_in, sigma, policy.change_drift)
            segment = self.detector.fired(policy.change_threshold)
            if segment is not None:
                self._restart(*segment)
                return
        self.ledger.record(reward, injected, p)
        self._verdict_cache = None
        if self.ledger.n >= policy.min_evidence and self.ledger.n % _CHECKPOINT == 0:
            self._tighten(policy, n_lessons)

    def _tighten(self, policy: Policy, n_lessons: int) -> None:
        """Fold the current bounds into the running intersection (at checkpoints only, so
        the state depends on the ledger alone, never on when someone asked)."""
        lower, upper = self._bounds(policy, n_lessons)
        best = self._best
        if best is None or best[0] < n_lessons:  # bounds for fewer lessons are too narrow now
            self._best = (n_lessons, lower, upper)
        else:
            self._best = (best[0], max(best[1], lower), min(best[2], upper))

    def _bounds(self, policy: Policy, n_lessons: int) -> tuple[float, float]:
        ledger = self.ledger
        lessons = max(n_lessons, 1) * self.slices.inherited
        mean, spread, weight = ledger.mean, ledger.variance_sum, ledger.weight
        # Each verdict reads one side of the bound; a two-sided sequence at 2 alpha puts
        # alpha on each side, so this is a one-sided bound at alpha per lesson.
        lower = mean - confidence_radius(spread, 2 * policy.alpha_helps / lessons) / weight
        upper = mean + confidence_radius(spread, 2 * policy.alpha_harms / lessons) / weight
        return lower, upper

    def _restart(self, weight: int, total: float) -> None:
        """The world changed for this lesson: its old evidence no longer speaks for it."""
        self.ledger = Ledger()
        self._best = None
        self.detector.reset()
        self.arms.restart_injected(weight, total)
        self.slices.restart()
        self.restarts += 1
        self._verdict_cache = None

    def judge(self, policy: Policy, n_lessons: int) -> tuple[Verdict, float, float]:
        """(verdict, lower, upper), Bonferroni-corrected over `n_lessons`."""
        cached = self._verdict_cache
        if cached is not None and cached[0] == self.ledger.n and cached[1] == n_lessons:
            return cached[2]
        ledger = self.ledger
        if ledger.n < 2:
            result = (Verdict.UNKNOWN, -math.inf, math.inf)
        else:
            lower, upper = self._bounds(policy, n_lessons)
            best = self._best
            if best is not None and best[0] >= n_lessons:
                lower, upper = max(lower, best[1]), min(upper, best[2])
            verdict = Verdict.UNKNOWN
            enough = ledger.n >= policy.min_evidence and min(ledger.n_in, ledger.n_out) >= 5
            if enough and lower > 0.0:
                verdict = Verdict.HELPS
            elif enough and upper < 0.0:
                verdict = Verdict.HARMS
            result = (verdict, lower, upper)
        self._verdict_cache = (ledger.n, n_lessons, result)
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
            slices=self.slices.evidence(policy.alpha_helps, policy.alpha_harms, policy.min_evidence, n_lessons),
        )

    _COUNTS: ClassVar[tuple[str, ...]] = ("eligible", "injected", "held_out", "restarts")

    def to_dict(self) -> dict[str, Any]:
        """The lesson and everything learned about it, as plain JSON-safe values."""
        return {
            "experience": self.experience.to_dict(),
            "arms": self.arms.to_dict(),
            "ledger": self.ledger.to_dict(),
            "detector": self.detector.to_dict(),
            **{name: getattr(self, name) for name in self._COUNTS},
            "best": None if self._best is None else list(self._best),
            "slices": self.slices.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LessonState:
        """The inverse of `to_dict`: the same decisions and evidence follow from it."""
        state = cls(Experience.from_dict(data["experience"]))
        state.arms = ArmStats.from_dict(data["arms"])
        state.ledger = Ledger.from_dict(data["ledger"])
        state.detector = ChangeDetector.from_dict(data["detector"])
        for name in cls._COUNTS:
            setattr(state, name, int(data[name]))
        best = data["best"]
        state._best = None if best is None else (int(best[0]), float(best[1]), float(best[2]))
        if "slices" in data:  # absent from a lesson saved before state version 2
            state.slices = Slices.from_dict(data["slices"])
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
        self._best = None

    def narrow(self, key: str, value: str) -> None:
        """The scope now fixes `key` to `value`: the lesson's evidence continues that slice's.

        The lesson-wide ledger and arms mixed every value of `key`; the slice's own ledger and
        arms are exactly the evidence of the narrower lesson (kept at the slice family's
        alpha divisor, see `Slices`). Without such a slice the lesson starts afresh.
        """
        kept = self.slices.narrow(key, value)
        self.ledger = kept.ledger if kept is not None else Ledger()
        self.arms = kept.arms if kept is not None else ArmStats()
        self.detector.reset()
        self._best = None
        self._verdict_cache = None
