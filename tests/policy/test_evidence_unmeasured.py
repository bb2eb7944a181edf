"""A lift whose interval spans every lift there can be ([-2, 2]) is a number of no meaning: the
repr says so beside it and the JSON of `to_dict` has none, as every text Lamar prints reads n/a."""

from __future__ import annotations

import math

from lamar.policy.verdicts import Evidence, SliceEvidence, Verdict, measured


def _evidence(lift: float, lower: float, upper: float, randomized: int = 4) -> Evidence:
    part = SliceEvidence(Verdict.UNKNOWN, 1.5, -2.0, 2.0, 1)
    return Evidence("exp_x", Verdict.UNKNOWN, lift, lower, upper, randomized=randomized, injected=2, held_out=2,
                    eligible=4, restarts=0, estimate=0.1, slices={"language=swift": part})


def test_a_lift_over_the_whole_range_is_unmeasured_and_says_so() -> None:
    ev = _evidence(-1.44, -7.3, 8.1)
    assert ev.lift == -1.44 and (ev.lower, ev.upper) == (-2.0, 2.0)  # the documented fields stay
    assert not ev.measured
    assert ("lift=-1.44 (n/a: no evidence yet: 4 randomized episodes leave every lift from -2 to +2 possible)"
            in repr(ev)), repr(ev)
    assert "lift=1.5 (n/a: no evidence yet: 1 randomized episode leaves every lift" in repr(ev)
    data = ev.to_dict()
    assert data["lift"] is None and data["measured"] is False and data["lower"] == -2.0
    assert data["slices"] == {"language=swift": {"verdict": "unknown", "lift": None, "lower": -2.0, "upper": 2.0,
                                                 "randomized": 1, "measured": False}}


def test_a_measured_lift_keeps_its_number_everywhere() -> None:
    ev = _evidence(0.42, 0.1, 0.8, randomized=60)
    assert ev.measured and "lift=0.42," in repr(ev) and "n/a" not in repr(ev).replace(repr(ev.slices), "")
    assert ev.to_dict()["lift"] == 0.42 and ev.to_dict()["measured"] is True
    # one side known is something: an upper bound below zero proves harm whatever the lower one says
    assert measured(-math.inf, -0.2) and measured(-2.0, 1.9)
    assert not measured(-math.inf, math.inf) and not measured(None, None) and not measured(-2.5, 2.0)
