"""Change detection and doubt on a lesson's randomized scores psi (both arms at once).

Three CUSUMs of Gaussian log-likelihood ratios on the weighted scores w * psi (bounded, so
no single held-out episode can move them far), against the segment's running estimate m
of the lift (predictable: fitted before the episode):

- `up` / `down` test "the lift is still m" against a shift of +-delta;
- `doubt` tests "the lift is still m" against "the lift is 0".

Crossing the change threshold with any of them is a proven change: the lesson's evidence
restarts, and its selection model restarts from that statistic's excursion (the episodes
since it last stood at zero, with and without the lesson alike). Crossing the lower doubt
threshold only withdraws a verdict, which claims less and spends no alpha. The withdrawal
holds until the reverse statistic `trust` ("still m" against "0", accumulated since the
withdrawal) crosses the release threshold: returning to a verdict after a real change then
needs a fluke of likelihood ratio e^release, so a stale verdict does not flicker back while
the segment's estimate is still being dragged down by the change. psi's conditional mean is
the lift whatever the base rate does, so a drifting base rate moves none of the three
(docs/decisions.md).
"""

from __future__ import annotations

from lamar.policy.record import SlotRecord

_SIDES = ("up", "down", "doubt")
# Each statistic's excursion: (w_in, s_in, w_out, s_out) slot names.
_EXCURSION = {side: tuple(side + part for part in ("_w_in", "_s_in", "_w_out", "_s_out")) for side in _SIDES}


class ChangeDetector(SlotRecord):
    """Two-sided CUSUM for a shift of the lift, one for its fall to zero, and their excursions."""

    __slots__ = ("doubted", "trust") + tuple(f"{side}{part}" for side in _SIDES
                                     for part in ("", "_w_in", "_s_in", "_w_out", "_s_out"))
    doubted: int
    trust: float
    up: float
    down: float
    doubt: float

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.doubted = 0  # 1 from the doubt threshold until `trust` reaches the release threshold
        for name in self.__slots__[1:]:
            setattr(self, name, 0.0)

    def update(self, psi: float, w: float, reference: float, sigma: float, shift: float,
               reward: float, injected: bool, doubt_threshold: float, release: float) -> None:
        """Feed one randomized episode's score; ask `fired` afterwards.

        Args:
            psi: the episode's score, w its weight p (1 - p).
            reference: the segment's estimate before this episode.
            sigma: the reward standard deviation (psi has variance about sigma^2 / w).
            shift: the shift the up/down statistics look for, in units of sigma.
            reward, injected: the episode, remembered in the excursions.
            doubt_threshold: the doubt level that withdraws a verdict.
            release: the trust level that gives it back.
        """
        s2 = sigma * sigma
        delta = shift * sigma
        half = w * delta / 2.0
        m = reference
        self._step("up", delta / s2 * (w * (psi - m) - half), reward, injected)
        self._step("down", delta / s2 * (w * (m - psi) - half), reward, injected)
        towards_zero = w * m / s2 * (m / 2.0 - psi)
        self._step("doubt", towards_zero, reward, injected)
        if self.doubted:
            self.trust = max(0.0, self.trust - towards_zero)
            if self.trust > release:
                self.doubted, self.trust = 0, 0.0
        elif self.doubt > doubt_threshold:
            self.doubted, self.trust = 1, 0.0

    def _step(self, side: str, increment: float, reward: float, injected: bool) -> None:
        slots = _EXCURSION[side]
        value = getattr(self, side) + increment
        if value > 0.0:
            setattr(self, side, value)
            w_name, s_name = slots[0:2] if injected else slots[2:4]
            setattr(self, w_name, getattr(self, w_name) + 1.0)
            setattr(self, s_name, getattr(self, s_name) + reward)
        elif getattr(self, side) != 0.0 or getattr(self, slots[0]) or getattr(self, slots[2]):
            setattr(self, side, 0.0)
            for name in slots:
                setattr(self, name, 0.0)

    def fired(self, threshold: float) -> tuple[float, float, float, float] | None:
        """(w_in, s_in, w_out, s_out) of the post-change excursion when a change is proven, else None."""
        for side in ("doubt", "down", "up"):
            if getattr(self, side) > threshold:
                w_in, s_in, w_out, s_out = (float(getattr(self, name)) for name in _EXCURSION[side])
                return w_in, s_in, w_out, s_out
        return None
