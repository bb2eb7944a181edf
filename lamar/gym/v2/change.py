"""The second design's change and doubt statistics, frozen for the gym's frontier."""

from __future__ import annotations

import math

from lamar.policy.record import SlotRecord

_SIDES = ("up", "down", "doubt")
# Each statistic's excursion: (w_in, s_in, w_out, s_out) slot names.
_EXCURSION = {side: tuple(side + part for part in ("_w_in", "_s_in", "_w_out", "_s_out")) for side in _SIDES}
_DOUBT_EDGE = 0.75  # doubt's null: the lift is at least this share of the segment's estimate
_PRIOR = 10.0  # pseudo-episodes of the bet's prior (the segment's estimate) before the scores since doubt
_BET_CAP = 0.5  # the bet stays below half of what would let the worst outcome wipe the wealth out


class ChangeDetector(SlotRecord):
    """Two-sided CUSUM for a shift of the lift, one for its fall to zero, and their excursions."""

    __slots__ = ("doubted", "claimed", "wealth", "since_n", "since_s", "since_s2") + tuple(
        f"{side}{part}" for side in _SIDES for part in ("", "_w_in", "_s_in", "_w_out", "_s_out"))
    doubted: int
    claimed: int
    wealth: float
    since_n: float
    since_s: float
    since_s2: float
    up: float
    down: float
    doubt: float

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.doubted = 0  # 1 from the doubt threshold until the episodes since prove the lift > 0
        self.claimed = 0  # 1 once this segment's lesson was proven to help: doubt watches it from then on
        for name in self.__slots__[2:]:
            setattr(self, name, 0.0)

    def update(self, psi: float, w: float, reference: float, sigma: float, shift: float,
               reward: float, injected: bool, doubt_threshold: float, low: float, high: float,
               regrant: float) -> bool:
        """Feed one randomized episode's score; ask `fired` afterwards.

        Args:
            psi: the episode's score, w its weight p (1 - p).
            reference: the segment's estimate before this episode.
            sigma: the reward standard deviation (psi has variance about sigma^2 / w).
            shift: the shift the up/down statistics look for, in units of sigma.
            reward, injected: the episode, remembered in the excursions.
            doubt_threshold: the doubt level that withdraws a verdict (inf: no verdict to
                doubt, the doubt statistic stays at 0).
            low, high: the lowest and highest w psi this episode could give (either arm, any
                reward), known before it: they cap the bets.
            regrant: log(1/alpha) of this withdrawal's test: the log-wealth that gives the
                verdict back.

        Returns:
            True when this episode withdrew the verdict (a new withdrawal began).
        """
        s2 = sigma * sigma
        delta = shift * sigma
        m = reference
        y = w * psi
        # Each statistic bets on its alternative with the Gaussian likelihood ratio's slope,
        # capped by the episode's range (docs/decisions.md, "calibrated on bounded scores").
        self._step("up", _log_bet(delta / (2.0 * s2), y - w * (m + delta / 2.0), low - w * (m + delta / 2.0)),
                   reward, injected)
        self._step("down", _log_bet(delta / (2.0 * s2), w * (m - delta / 2.0) - y, w * (m - delta / 2.0) - high),
                   reward, injected)
        watched = doubt_threshold < math.inf  # no claim to doubt: the statistic waits at 0
        edge = _DOUBT_EDGE * max(m, 0.0)  # "the lift is still >= edge" is what doubt bets against
        self._step("doubt", _log_bet(edge / s2, w * edge - y, w * edge - high) if watched else -math.inf,
                   reward, injected)
        if self.doubted:
            self.wealth += _log_bet(self._bet(w, m, s2), y, low)
            self.since_n += 1
            self.since_s += y
            self.since_s2 += y * y
            if self.wealth >= regrant:  # proven again on its own evidence: doubt starts from nothing
                self.doubted = 0
                self._step("doubt", -math.inf, reward, injected)
            return False
        if self.doubt > doubt_threshold:
            self.doubted, self.wealth, self.since_n, self.since_s, self.since_s2 = 1, 0.0, 0, 0.0, 0.0
            return True
        return False

    def _bet(self, w: float, reference: float, s2: float) -> float:
        """The share of wealth bet on "the lift is above 0" this episode: predictable, >= 0.

        A plug-in of the growth-optimal bet, mean / second moment of the scores since the
        withdrawal, shrunk towards the segment's estimate (`_log_bet` caps it).
        """
        n = self.since_n + _PRIOR
        mean = (self.since_s + _PRIOR * w * max(reference, 0.0)) / n
        second = (self.since_s2 + _PRIOR * (w * s2 + (w * reference) ** 2)) / n
        return mean / second if mean > 0.0 and second > 0.0 else 0.0

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


def _log_bet(bet: float, x: float, x_min: float) -> float:
    """log(1 + bet x): one factor of a betting martingale on x, whose least value is `x_min`.

    The bet is cut to half of what the worst value could take, so the wealth never reaches 0;
    when x has conditional mean <= 0, any such predictable bet >= 0 keeps the product a
    nonnegative supermartingale (the property every threshold here relies on).
    """
    if x_min < 0.0:
        bet = min(bet, _BET_CAP / -x_min)
    return math.log1p(bet * x)
