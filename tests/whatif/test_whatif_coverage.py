"""tools/whatif_coverage.py: what the reach rule costs the what-if's 95% interval, coin by coin."""

from __future__ import annotations

from lamar import Experience, Lamar
from lamar.policy import choose
from lamar.whatif.check import reach_rule
from lamar.whatif.log import read_log
from tests.tools import load_tool


def wanted_without_a_coin(coin: float, on: bool) -> int:
    """Episodes of a known world in which a lesson was wanted and injected with no coin (p = 1)."""
    with reach_rule(on), Lamar(":memory:", k=2, seed=3, holdout=coin) as lam:
        ids = [lam.add(Experience("a test is flaky", a)) for a in ("pin the seeds", "mock the clock", "retry")]
        for t in range(300):
            recall = lam.recall({"task": "flaky"})
            lam.report(recall.episode_id, 1.0 if (ids[0] in recall.ids) == (t % 4 != 0) else -0.5)
        return sum(1 for episode in read_log(lam.store, cache=False).episodes if 1.0 in episode.slate.p.values())


def test_the_reach_rule_ends_a_coin_on_the_outcomes_and_off_it_never_does() -> None:
    # What the 95% interval does not allow for: with the rule on, a wanted lesson loses its coin
    # when its estimated lift (its held-out outcomes included) puts its verdict out of reach, so an
    # alternative that changes it is read on a sample whose size its own outcomes chose. Off, a
    # wanted lesson keeps a coin (q, or a quarter of it once decided) unless its estimated lift is
    # exactly zero, which happened once here.
    assert wanted_without_a_coin(0.3, on=True) == 230
    assert wanted_without_a_coin(0.3, on=False) == 1
    assert choose.REACH == 4.0  # the rule comes back after each experiment


def test_each_rule_and_coin_gets_its_line_with_both_coverages() -> None:
    tool = load_tool("whatif_coverage")
    lines = tool.sweep([0.3], range(4), 300)
    assert lines[0].startswith("4 worlds (seeds 0-3) x 300 episodes, k = 2")
    rows = {line.split()[0]: line for line in lines[2:]}
    assert set(rows) == {"on/0.3", "off/0.3"}
    for line in rows.values():
        interval, sequence = line.split()[1], line.split("]")[1].split()[0]
        covered, n = map(int, interval.split("/"))
        held = int(sequence.split("/")[0])
        assert n == 48 and covered <= held  # 6 alternatives x 2 outcomes x 4 worlds; the sequence is wider
    assert choose.REACH == 4.0
