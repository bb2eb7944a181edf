"""The betting statistics of `lamar.policy.change`: each factor stays positive, and a withdrawn
verdict comes back by chance no more often than its alpha, however long one watches."""

from __future__ import annotations

import math
import random

from lamar.policy.change import ChangeDetector, _log_bet
from lamar.policy.ledger import Ledger


def test_a_bet_never_risks_the_whole_wealth() -> None:
    for x_min in (-0.01, -1.0, -40.0):
        for bet in (0.0, 0.3, 5.0, 1e6):
            assert math.isfinite(_log_bet(bet, x_min, x_min))  # the worst outcome keeps 1 + bet x > 0


def test_the_span_holds_every_score_the_episode_can_give() -> None:
    rng = random.Random(3)
    ledger = Ledger()
    for _ in range(300):
        p = rng.choice((0.05, 0.5, 0.85, 0.95))
        low, high = ledger.span(p)
        injected = rng.random() < p
        reward = rng.uniform(-1.0, 1.0)
        w = p * (1.0 - p)
        assert low - 1e-12 <= w * ledger.score(reward, injected, p) <= high + 1e-12
        ledger.record(reward, injected, p)


def _withdrawn_then_watched(seed: int, lift: float, episodes: int, level: float) -> bool:
    """A lesson withdrawn on doubt, then `episodes` randomized episodes of true `lift` at p = 0.75:
    True when its verdict came back (the wealth reached `level`)."""
    rng = random.Random(seed)
    ledger, detector = Ledger(), ChangeDetector()
    for _ in range(40):  # a segment that looked like +0.3 before the change
        injected = rng.random() < 0.75
        ledger.record((0.3 if injected else 0.0) + rng.uniform(-0.6, 0.6), injected, 0.75)
    detector.claimed, detector.doubted = 1, 1
    for _ in range(episodes):
        low, high = ledger.span(0.75)
        reference = ledger.mean
        injected = rng.random() < 0.75
        reward = max(-1.0, min(1.0, (lift if injected else 0.0) + rng.uniform(-0.6, 0.6)))
        psi = ledger.record(reward, injected, 0.75)
        detector.update(psi, 0.1875, reference, 0.5, 0.4, reward, injected, math.inf, low, high, level)
        if not detector.doubted:
            return True
    return False


def test_a_stale_verdict_comes_back_no_more_often_than_its_alpha() -> None:
    # lift 0 after the withdrawal, watched for 1 500 randomized episodes, level log(1/0.05):
    # Ville's inequality bounds the chance of ever coming back by 5%.
    back = sum(_withdrawn_then_watched(seed, 0.0, 1500, math.log(20.0)) for seed in range(200))
    assert back <= 10  # 5% of 200 (measured: 4)


def test_a_verdict_that_still_holds_comes_back() -> None:
    back = sum(_withdrawn_then_watched(seed, 0.3, 1500, math.log(20.0)) for seed in range(40))
    assert back >= 36  # a +0.3 lift proves itself again (measured: 40 of 40)
