"""An outcome no report node recorded: refused by the store, or sent with the next message to a graph whose
recall runs before its report. The new turn's recall records it, or says it with the call that records it."""

from __future__ import annotations

import logging
import warnings
from typing import Any

from lamar import DuplicateReport, InvalidReward, Lamar, LamarError, StoreError, UnknownEpisode
from lamar.signals import to_reward

log = logging.getLogger("lamar_langgraph.nodes")


def _calls(episodes: list[str], outcome: Any) -> str:
    """The `lam.report` calls that record `outcome` for `episodes` (the first three), as a user types them."""
    value = getattr(outcome, "value", outcome)  # a Signal as its name, which lam.report reads the same
    calls = "; ".join(f"lam.report({episode!r}, {value!r})" for episode in episodes[:3])
    return calls + ("; ..." if len(episodes) > 3 else "")


def unsent(episode: str, outcome: Any, exc: Exception) -> None:
    """Log that the store refused `outcome` for `episode`. The store's own advice ("the next call tries
    again") is not enough in a graph: the thread's next outcome, another turn's, is what reaches it next."""
    log.warning("Lamar could not report episode %s: %s. The episode stays open: record its outcome with %s once "
                "the store is back, before the thread's next outcome (another turn's) is reported for it too",
                episode, exc, _calls([episode], outcome))


def settle(lamar: Lamar, opened: list[str], outcome: Any) -> set[str]:
    """The thread's `opened` episodes settled as a new turn starts: those the store holds an outcome for (an
    expiry, a default of the pending policy, an app's report) or no longer holds (compacted), found in one read
    of `pending`, and those the state's `outcome`, which the new turn clears, is now recorded for (`recorded`).
    Fails open: when the store cannot be read, every episode stays open, for the next outcome to report."""
    if not opened:
        return set()
    try:
        waiting = {p.episode_id for p in lamar.pending(only=opened)}
    except LamarError as exc:
        log.info("Lamar could not read the thread's open episodes (they stay open): %s", exc)
        return set()
    settled = set(opened) - waiting
    return settled | recorded(lamar, outcome, [episode for episode in opened if episode not in settled])


def recorded(lamar: Lamar, outcome: Any, still_open: list[str]) -> set[str]:
    """Report `outcome`, which a new turn is about to clear, for the thread's episodes `still_open`, and return
    those the store now holds an outcome for. The outcome is theirs: one the store refused to a report node (it
    is back now), or one sent with this input to a graph whose recall runs before its report, for the turn
    before. Fails open: an episode the store refuses again stays open, said as a report node says it."""
    if outcome is None or not still_open:
        return set()
    try:
        to_reward(outcome)
    except InvalidReward:
        return set()  # said by the report node that read it; the new turn clears it with a warning
    done = set()
    for episode in still_open:
        try:
            lamar.report(episode, outcome)
        except (DuplicateReport, UnknownEpisode):
            pass  # reported meanwhile (an app, another branch of this turn) or compacted away: settled all the same
        except StoreError as exc:
            unsent(episode, outcome, exc)
            continue
        done.add(episode)
    return done


def unreported(outcome: Any, still_open: list[str]) -> None:
    """Warn that the new turn clears `outcome` while the thread's episodes `still_open` (open in the
    state and still pending in the store) wait for one: `recorded` could not record it for them (the
    store refused it again, and said so), or it is not an outcome (the report node said so)."""
    if outcome is None or not still_open:
        return
    try:
        to_reward(outcome)
    except InvalidReward:
        cause, then = "which is not an outcome (a Signal name, or a reward in [-1, 1])", "."
    else:
        cause = "which the store refused for them"
        then = f". To record it once the store is back: {_calls(still_open, outcome)}"
    warnings.warn(f"Lamar's recall node starts a new turn while the state holds the outcome {outcome!r}, {cause}: "
                  f"the new turn clears it, and episodes {', '.join(still_open)} stay open for the thread's next "
                  f"outcome{then}", UserWarning, stacklevel=3)
