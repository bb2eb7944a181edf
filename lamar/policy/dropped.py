"""A lesson the selection dropped: its estimate fell below zero, so it is rarely chosen and its evidence
coin rarely flipped; what is known of it, said without claiming a harm that is not proven."""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lamar.policy.verdicts import Evidence

DROP_MARGIN = 0.05  # "dropped" needs an estimate below -0.05: -0.001 is a zero, not a judgement
# Reported episodes of its scope a dropped lesson goes without being chosen before sleep proposes retiring it:
# long enough that Thompson sampling's exploration would most likely have tried it again were its estimate
# near zero, short enough that a library does not keep a lesson nobody uses for ever.
RETIRE_AFTER = 200


def is_dropped(ev: Evidence) -> bool:
    """Whether the selection has dropped the lesson: no verdict, and the selection's estimate of its lift
    below -DROP_MARGIN (Thompson sampling then draws it above zero, and chooses it, only now and then)."""
    return dropped_by(ev.verdict.value, ev.estimate)


def dropped_by(verdict: str, estimate: float) -> bool:
    """`is_dropped` of a verdict and an estimate given apart, as a sleep report's copy of the evidence holds them."""
    return verdict == "unknown" and math.isfinite(estimate) and estimate < -DROP_MARGIN


def _utc(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(at))


def unchosen_text(ev: Evidence) -> str:
    """How long the lesson has gone unchosen, in words; "" when that was not recorded.

    >>> from lamar.policy.verdicts import Evidence, Verdict
    >>> ev = Evidence("exp_1", Verdict.UNKNOWN, 0.0, -2.0, 2.0, 1, 9, 1, 40, 1, -0.4, unchosen=30,
    ...               chosen_at=86400.0, fell_at=0.0)
    >>> print(unchosen_text(ev).replace("), ", "),\\n"))
    not chosen in the last 30 reported episodes of its scope (last chosen 1970-01-02 00:00 UTC),
    after its injected rewards fell (1970-01-01 00:00 UTC)
    """
    if ev.unchosen is None:
        return ""
    last = f" (last chosen {_utc(ev.chosen_at)})" if ev.chosen_at is not None else ""
    episodes = "reported episode" if ev.unchosen == 1 else "reported episodes"
    text = (f"not chosen in the last {ev.unchosen} {episodes} of its scope{last}" if ev.unchosen
            else "chosen all the same in its latest reported episode (a draw of the selection's exploration)")
    if ev.fell_at is not None:
        text += f", after its injected rewards fell ({_utc(ev.fell_at)})"
    return text


def dropped_text(ev: Evidence) -> str:
    """The sentence every reader shows for a dropped lesson, "" for another: what the selection did, and
    why the verdict stays unknown."""
    if not is_dropped(ev):
        return ""
    since = unchosen_text(ev)
    return (f"dropped by the selection: its estimate of the lift is {ev.estimate:+.2f}, so it is rarely chosen"
            f"{'; ' + since if since else ''}. Harm is not proven: the evidence coin is flipped only for a lesson "
            "the selection chooses, so its verdict stays unknown")


__all__ = ["DROP_MARGIN", "RETIRE_AFTER", "dropped_by", "dropped_text", "is_dropped", "unchosen_text"]
