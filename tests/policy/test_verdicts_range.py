"""Evidence keeps its lift and bounds inside [-2, 2], the range of a lift when rewards lie in [-1, 1]."""

from __future__ import annotations

import math

from lamar.policy.verdicts import Evidence, SliceEvidence, Verdict


def _evidence(lift: float, lower: float, upper: float, verdict: Verdict = Verdict.UNKNOWN) -> Evidence:
    return Evidence("exp_x", verdict, lift, lower, upper, randomized=3, injected=2, held_out=1, eligible=3,
                    restarts=0, estimate=0.0)


def test_bounds_and_lift_beyond_what_a_lift_can_be_are_brought_inside() -> None:
    ev = _evidence(6.94, -70.52, 82.85)
    assert (ev.lift, ev.lower, ev.upper) == (2.0, -2.0, 2.0)
    assert ev.to_dict()["lower"] == -2.0


def test_a_verdict_never_changes_side_and_no_evidence_stays_infinite() -> None:
    helps = _evidence(2.5, 0.3, 9.0, Verdict.HELPS)
    assert helps.lower == 0.3 and helps.upper == 2.0 and helps.lower > 0.0
    none = _evidence(0.0, -math.inf, math.inf)
    assert (none.lower, none.upper) == (-math.inf, math.inf)
    assert none.to_dict()["lower"] is None
    assert SliceEvidence(Verdict.UNKNOWN, -3.0, -9.0, 0.5, 4).lower == -2.0
