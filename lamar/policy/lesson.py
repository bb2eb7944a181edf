"""One lesson's learned state, and the fold that updates it when an outcome arrives."""

from __future__ import annotations

import math

from lamar.experience import Experience
from lamar.policy.change import ChangeDetector
from lamar.policy.config import Policy
from lamar.policy.ledger import Ledger
from lamar.policy.selection import ArmStats
from lamar.policy.verdicts import Evidence, Verdict, confidence_radius


class LessonState:
    """Selection model, evidence ledger and change detector of one experience."""

    __slots__ = (
        "experience", "arms", "ledger", "detector",
        "eligible", "injected", "held_out", "restarts", "_verdict_cache",
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
        self._verdict_cache: tuple[int, int, tuple[Verdict, float, float]] | None = None

    def observe(self, reward: float, injected: bool, p: float, sigma: float, policy: Policy) -> None:
        """Fold one reported episode in which this lesson was eligible (p = inclusion probability)."""
        self.eligible += 1
        self.arms.record(reward, injected, policy.discount)
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

    def _restart(self, weight: int, total: float) -> None:
        """The world changed for this lesson: its old evidence no longer speaks for it."""
        self.ledger = Ledger()
        self.detector.reset()
        self.arms.restart_injected(weight, total)
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
            lessons = max(n_lessons, 1)
            mean, spread, weight = ledger.mean, ledger.variance_sum, ledger.weight
            # Each verdict reads one side of the bound; a two-sided sequence at 2 alpha puts
            # alpha on each side, so this is a one-sided bound at alpha per lesson.
            lower = mean - confidence_radius(spread, 2 * policy.alpha_helps / lessons) / weight
            upper = mean + confidence_radius(spread, 2 * policy.alpha_harms / lessons) / weight
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
        )

    def absorb(self, other: LessonState) -> None:
        """Take over a duplicate's evidence (a merge)."""
        self.arms.merge(other.arms)
        self.ledger.merge(other.ledger)
        self.eligible += other.eligible
        self.injected += other.injected
        self.held_out += other.held_out
        self._verdict_cache = None
