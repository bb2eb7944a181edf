"""`Lamar.stats`: the folded state counted by status, verdict, episode and report."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lamar.experience import Status
from lamar.policy.config import Policy
from lamar.policy.verdicts import Verdict

if TYPE_CHECKING:
    from lamar.state.cache import FoldCache


def summary(cache: FoldCache, policy: Policy, location: str) -> dict[str, Any]:
    """The counts `Lamar.stats` returns, from one fold (retired lessons get no verdict)."""
    by_status = {s.value: 0 for s in Status}
    by_verdict = {v.value: 0 for v in Verdict}
    for state in cache.lessons.values():
        by_status[state.experience.status.value] += 1
        if state.experience.status is not Status.RETIRED:
            by_verdict[state.judge(policy, cache.n_active)[0].value] += 1
    episodes = cache.n_episodes + cache.compacted["episodes"]
    wanted, held = cache.wanted + cache.compacted["wanted"], cache.held + cache.compacted["held_out"]
    return {
        "experiences": len(cache.lessons),
        "by_status": by_status,
        "by_verdict": by_verdict,
        "episodes": episodes,
        "reports": cache.reports,
        "unreported": episodes - cache.reports,
        "holdout_rate": held / wanted if wanted else 0.0,
        "compacted": dict(cache.compacted, by_signal=dict(cache.compacted["by_signal"])),
        "events": cache.seq,
        "store": location,
    }


__all__ = ["summary"]
