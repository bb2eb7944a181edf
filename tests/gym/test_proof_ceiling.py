"""tools/proof_ceiling.py: what a price of proof buys, for the engine's e-value and its benchmarks."""

from __future__ import annotations

import math

from tests.tools import load_tool


def test_a_third_of_the_second_designs_price_buys_92_held_out_episodes_per_lesson() -> None:
    tool = load_tool("proof_ceiling")
    # The pre-flip price's share of the pre-flip episodes, spread over the four helpful lessons,
    # plus the post-flip price's share of the post-flip episodes of the three tasks that still help.
    assert tool.budget(4.4, 4.8) == (92, 107)
    assert tool.budget(0.0, 0.0) == (0, 0)


def test_the_likelihood_ratio_is_exact_at_its_first_reachable_count() -> None:
    tool = load_tool("proof_ceiling")
    steps = math.ceil(math.log(tool.THRESHOLD) / math.log(1.5))
    assert tool.likelihood_ratio(steps - 1) == 0.0  # one failure a step cannot get there sooner
    assert math.isclose(tool.likelihood_ratio(steps), 0.6**steps)
    assert tool.likelihood_ratio(92) < tool.likelihood_ratio(107) < 1.0


def test_one_look_keeps_its_level_and_beats_every_read() -> None:
    tool = load_tool("proof_ceiling")
    level = tool.FOUND * tool.ALPHA / tool.LESSONS
    for n in (40, 92, 107):
        power = tool.one_look(n)
        assert 0.0 < power < 1.0
        # its size under a lesson that does nothing (held out succeeds as often as injected)
        cut = max(k for k in range(n + 1) if tool._binom_cdf(k, n, tool.HELD_OUT) <= power)
        assert tool._binom_cdf(cut, n, tool.HELD_IN) <= level
    assert tool.one_look(92) > tool.likelihood_ratio(92)


def test_the_engine_proves_more_with_more_held_out_episodes_and_less_than_the_benchmarks() -> None:
    tool = load_tool("proof_ceiling")
    shares = tool.engine([50, 92, 300], 0.05, 60, 0)
    assert shares[50] <= shares[92] <= shares[300]
    assert shares[300] > 0.8 and shares[50] < 0.2
    assert shares[92] < tool.likelihood_ratio(92)
    best, bet = tool.best_mean_bet(92, 60, 0)
    assert 0.0 < best < 1.0 and 0.3 <= bet <= 0.9
