"""The second design's lesson state, frozen for the gym's frontier (in memory only: no history, no persistence)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from lamar.experience import Experience
from lamar.gym.v2.change import ChangeDetector
from lamar.gym.v2.config import Policy
from lamar.gym.v2.features import Slices
from lamar.gym.v2.ledger import Ledger
from lamar.gym.v2.selection import ArmStats
from lamar.gym.v2.verdicts import confidence_radius
from lamar.policy.verdicts import Evidence, Verdict

_DETECT_AFTER = 2  # min_evidence multiples of randomized episodes in a segment before detection


def segment_alpha(alpha: float, segment: int) -> float:
    """The share of `alpha` the `segment`-th segment (1, 2, ...) of a lesson may spend.

    6 / (pi^2 j^2) sums to 1 over j, so however many restarts happen, and whenever, the
    chance that any segment's bound ever misses its target stays below alpha (union bound).

    >>> round(segment_alpha(0.02, 1), 5), round(segment_alpha(0.02, 2), 5)
    (0.01216, 0.00304)
    """
    return alpha * 6.0 / (math.pi**2 * segment * segment)


class LessonState:
    """Selection model, evidence ledger and change detector of one experience."""

    __slots__ = (
        "experience", "arms", "ledger", "detector",
        "eligible", "injected", "held_out", "restarts", "withdrawals", "_verdict_cache", "slices",
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
        self.withdrawals = 0  # doubt withdrawals of a helps verdict, over the lesson's life
        self.slices = Slices()  # the context keys the scope leaves free (policy/features.py)
        self._verdict_cache: tuple[int, int, int, tuple[Verdict, float, float]] | None = None

    def observe(self, reward: float, injected: bool, p: float, sigma: float, policy: Policy,
                n_lessons: int = 1, context: Mapping[str, str] | None = None) -> None:
        """Fold one reported episode in which this lesson was eligible (p = inclusion probability)."""
        self.eligible += 1
        # The selection's fall detector: a lesson whose injected reward fell is dropped at once.
        # It touches no verdict (a fall of the base rate fires it too): a helps verdict that the
        # selector now contradicts is re-tested first by exposure rounds (lamar.policy.choose).
        if self.arms.watch(reward, injected, sigma, policy.drop_drift, policy.drop_threshold, policy.warmup):
            self.slices.restart_arms()  # or a slice's old estimate would keep the lesson chosen
        else:
            self.arms.record(reward, injected, policy.discount)
        if context:
            self.slices.observe(context, self.experience.scope.items_key, reward, injected, p, policy.discount)
        if injected:
            self.injected += 1
        elif p > 0.0:
            self.held_out += 1
        if not 0.0 < p < 1.0:
            return  # not randomized: the selection model learns, the ledger does not
        ledger = self.ledger
        reference = ledger.mean  # the segment's estimate before this episode: predictable
        # Change detection starts once the segment's estimate is steady enough to be a reference
        # (an early, noisy reference would look like a change).
        enough = ledger.n >= _DETECT_AFTER * policy.min_evidence
        low, high = ledger.span(p) if enough else (0.0, 0.0)
        # Doubt watches a claim: from the first proof of help in this segment on (a bound that
        # hovers at 0 must not reset it). Before any proof the segment's estimate is too noisy a
        # reference, and there is nothing to withdraw.
        if enough and not self.detector.claimed and self.judge(policy, n_lessons)[1] > 0.0:
            self.detector.claimed = 1
        psi = ledger.record(reward, injected, p)
        self._verdict_cache = None
        if enough:
            # A withdrawal in force (the k-th) gives its verdict back when the episodes since it
            # prove the lift > 0 at the share segment_alpha(alpha, k + 1) (docs/decisions.md, "Doubt").
            regrant = math.log(max(n_lessons, 1) * self.slices.inherited / segment_alpha(
                policy.alpha_helps, self.withdrawals + 1)) if self.detector.doubted else math.inf
            if self.detector.update(psi, p * (1.0 - p), reference, sigma, policy.change_shift, reward, injected,
                                    policy.doubt_threshold if self.detector.claimed else math.inf, low, high,
                                    regrant):
                self.withdrawals += 1
            excursion = self.detector.fired(policy.change_threshold)
            if excursion is not None:
                self._restart(*excursion)

    def _bounds(self, policy: Policy, n_lessons: int) -> tuple[float, float]:
        """(lower at the helps level, upper at the harms level) of this segment's weighted-average lift."""
        ledger = self.ledger
        lessons = max(n_lessons, 1) * self.slices.inherited
        segment = self.restarts + 1
        mean, spread, weight = ledger.mean, ledger.variance_sum, ledger.weight
        # Each verdict reads one side of the bound; a two-sided sequence at 2 alpha puts
        # alpha on each side, so this is a one-sided bound at alpha per lesson and segment.
        lower = mean - confidence_radius(spread, 2 * segment_alpha(policy.alpha_helps, segment) / lessons) / weight
        upper = mean + confidence_radius(spread, 2 * segment_alpha(policy.alpha_harms, segment) / lessons) / weight
        return lower, upper

    def _restart(self, w_in: float, s_in: float, w_out: float, s_out: float) -> None:
        """A change of the lift is proven: a new segment, and both arms restart from the change."""
        self.ledger = Ledger()
        self.detector.reset()
        self.arms.restart_both(w_in, s_in, w_out, s_out)
        self.slices.restart()
        self.restarts += 1
        self._verdict_cache = None

    def in_doubt(self) -> bool:
        """Whether recent scores made "the lift is now 0" likely enough to withdraw a helps verdict.

        Harms is not withdrawn on doubt: a lesson judged harms is rarely injected (`harm_retest`),
        so its doubt would be noise; a change of a harmful lesson is found by the change detector.
        """
        return bool(self.detector.doubted)

    def judge(self, policy: Policy, n_lessons: int) -> tuple[Verdict, float, float]:
        """(verdict, lower, upper), Bonferroni-corrected over `n_lessons` and spent over segments."""
        cached = self._verdict_cache
        if cached is not None and cached[0] == self.ledger.n and cached[1] == n_lessons \
                and cached[2] == self.restarts:
            return cached[3]
        ledger = self.ledger
        if ledger.n < 2:
            result = (Verdict.UNKNOWN, -math.inf, math.inf)
        else:
            lower, upper = self._bounds(policy, n_lessons)
            verdict = Verdict.UNKNOWN
            enough = ledger.n >= policy.min_evidence and min(ledger.n_in, ledger.n_out) >= 5
            if enough and lower > 0.0 and not self.in_doubt():
                verdict = Verdict.HELPS
            elif enough and upper < 0.0:
                verdict = Verdict.HARMS
            result = (verdict, lower, upper)
        self._verdict_cache = (ledger.n, n_lessons, self.restarts, result)
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
            slices=self.slices.evidence(*self._slice_alphas(policy), policy.min_evidence, n_lessons),
        )

    def _slice_alphas(self, policy: Policy) -> tuple[float, float]:
        """The slice family's (helps, harms) alpha: slices restart with the lesson, so they spend
        the alpha of its current segment."""
        segment = self.restarts + 1
        return segment_alpha(policy.alpha_helps, segment), segment_alpha(policy.alpha_harms, segment)
