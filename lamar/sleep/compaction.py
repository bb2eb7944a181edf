"""Compaction: fold old, reported episodes into one summary event so the state stays bounded."""

from __future__ import annotations

import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from lamar._errors import echoed
from lamar.sleep.proposals import Proposal
from lamar.storable import whole_number

if TYPE_CHECKING:
    from lamar.sleep.view import SleepView
    from lamar.state.episode import EpisodeRecord

KEEP_LAST = 10_000
"""Default number of newest episodes sleep never folds."""
KEEP_UNREPORTED = 100_000
"""Default number of newer episodes an unreported one waits through for its report."""


def propose_compaction(lam: SleepView, *, keep_last: int | None = KEEP_LAST, older_than: float | None = None,
                       keep_unreported: int | None = KEEP_UNREPORTED, now: float | None = None) -> Proposal | None:
    """A compact proposal for the reported episodes outside both windows, or None.

    An episode's outcome is already folded into every lesson's evidence when it is reported, so
    an old reported episode is only kept for the audit trail. A compact proposal lists such
    episodes and carries the audit figures they add up to (episodes, reports, outcomes by
    signal, and per lesson how often it was eligible, injected and held out); applying it
    appends one `compact` event, after which the engine's cache drops those episodes (and, on a
    store that can rewrite its log, checkpoints it: see `Lamar.checkpoint`). An unreported
    episode waits for a late report until `keep_unreported` newer episodes were recalled; then
    it is folded as never reported, so episodes nobody reports cannot grow the store forever.

    Args:
        lam: the engine (its cache is read, nothing is written).
        keep_last: never fold the newest this many episodes (None: no count window).
        older_than: never fold episodes younger than this many seconds (None: no age window).
        keep_unreported: fold an unreported episode outside `keep_last` (as never reported)
            once this many newer episodes were recalled (None: wait for every report forever).
        now: the clock for `older_than` (default: time.time()).
    """
    for name, value in (("keep_last", keep_last), ("keep_unreported", keep_unreported)):
        if value is not None and not whole_number(value, low=0):
            raise ValueError(f"{name} must be a whole number >= 0 or None; got {value!r}")
    if keep_last is None and older_than is None:
        return None
    if older_than is not None and not older_than >= 0:
        raise ValueError(f"older_than must be seconds >= 0 or None; got {older_than!r}")
    held: list[EpisodeRecord] = list(lam.episodes().values())  # in log order
    episodes = held[:-keep_last] if keep_last else held
    cutoff = None if older_than is None else (time.time() if now is None else now) - older_than
    # episodes numbered below this one have keep_unreported newer ones
    stale = len(held) + lam.compacted_episodes() - keep_unreported if keep_unreported is not None else 0
    folded = [e for e in episodes if (e.reward is not None and (cutoff is None or e.time < cutoff))
              or (e.reward is None and e.number < stale)]
    if not folded:
        return None
    counts = _counts(folded)
    payload = {
        "episodes": [e.id for e in folded],
        "keep_last": keep_last,
        "older_than": older_than,
        "keep_unreported": keep_unreported,
        "counts": counts,
        "lessons": _lesson_counts(folded),
    }
    windows = []
    if keep_last is not None:
        windows.append(f"outside the newest {keep_last}")
    if older_than is not None:
        windows.append(f"older than {older_than:g} s")
    unreported = counts["episodes"] - counts["reports"]
    abandoned = (f", and {unreported} never reported (over {keep_unreported} episodes ago)" if unreported else "")
    return Proposal(
        id=Proposal.make_id("compact", [], {"episodes": payload["episodes"]}),
        kind="compact",
        experience_ids=(),
        reason=(f"fold {len(folded) - unreported} reported episodes ({' and '.join(windows)}){abandoned} into "
                "one summary event; their outcomes stay in the lessons' evidence and the audit counts stay"),
        payload=payload,
    )


def still_folds(lam: SleepView, proposal: Proposal) -> str:
    """Why a compact proposal must not be applied now, or "" when sleep would fold every episode
    it lists that the store still holds: an edited list could drop an episode still waiting for
    its report, and that report would then be refused."""
    payload = proposal.payload
    try:
        foldable = propose_compaction(lam, keep_last=payload.get("keep_last"), older_than=payload.get("older_than"),
                                      keep_unreported=payload.get("keep_unreported"))
    except (TypeError, ValueError) as exc:
        return f"refused: compact proposal {echoed(proposal.id)} has malformed windows ({exc})"
    allowed = set(foldable.payload["episodes"]) if foldable is not None else set()
    held = lam.episodes()
    for episode_id in payload["episodes"]:
        if episode_id in held and episode_id not in allowed:
            return (f"refused: episode {episode_id} is not one its windows fold (the report was edited); "
                    "run sleep again for a compact proposal of the store as it is now")
    if not any(episode_id in held for episode_id in payload["episodes"]):
        # Applied, it would count a compaction of nothing and rewrite the whole log.
        return ("none of the episodes it folds is in this store (compacted since, or the report was made on "
                "another store)")
    return ""


def _counts(folded: list[EpisodeRecord]) -> dict[str, Any]:
    rewards = [e.reward for e in folded if e.reward is not None]
    signals = Counter(e.signal or "reward" for e in folded if e.reward is not None)
    return {
        "episodes": len(folded),
        "reports": len(rewards),
        "by_signal": dict(sorted(signals.items())),
        "reward_sum": sum(rewards),
        "reward_mean": sum(rewards) / len(rewards) if rewards else 0.0,
        "first_time": min(e.time for e in folded),
        "last_time": max(e.time for e in folded),
    }


def _lesson_counts(folded: list[EpisodeRecord]) -> dict[str, dict[str, int]]:
    """Per lesson: how many folded episodes it was eligible in, injected in, held out of."""
    lessons: dict[str, dict[str, int]] = {}
    for episode in folded:
        for exp_id in episode.eligible:
            lessons.setdefault(exp_id, {"eligible": 0, "injected": 0, "held_out": 0})["eligible"] += 1
        for exp_id in episode.injected:
            lessons.setdefault(exp_id, {"eligible": 0, "injected": 0, "held_out": 0})["injected"] += 1
        for exp_id in episode.held_out:
            lessons.setdefault(exp_id, {"eligible": 0, "injected": 0, "held_out": 0})["held_out"] += 1
    return dict(sorted(lessons.items()))


__all__ = ["KEEP_LAST", "KEEP_UNREPORTED", "propose_compaction", "still_folds"]
