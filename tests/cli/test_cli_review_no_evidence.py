"""`lamar review` says a lesson's interval is unknown the same way whether no randomized episode
or a few left it spanning every lift."""
from __future__ import annotations

from lamar.cli.review import _describe
from lamar.sleep.proposals import Proposal


def _evidence(lower: float, upper: float, randomized: int) -> dict[str, object]:
    return {"verdict": "unknown", "lift": 0.4, "lower": lower, "upper": upper, "randomized": randomized,
            "injected": 9}


def test_review_prints_an_interval_spanning_every_lift_as_unknown_yet() -> None:
    proposal = Proposal(id="merge_x", kind="merge", experience_ids=["exp_a", "exp_b", "exp_c"], reason="same",
                        evidence={"exp_a": _evidence(float("-inf"), float("inf"), 0),
                                  "exp_b": _evidence(-42.3, 43.2, 3),
                                  "exp_c": _evidence(0.1, 0.3, 80)},
                        payload={"into": "exp_a", "from": ["exp_b", "exp_c"]})
    shown = [line for line in _describe(proposal, None) if "evidence when proposed" in line]
    assert len(shown) == 3
    assert "lift n/a, interval n/a, 0 randomized" in shown[0]
    assert "lift n/a, interval n/a, 3 randomized" in shown[1]
    assert "lift +0.40, interval [+0.10, +0.30], 80 randomized" in shown[2]
