"""An outcome no report node recorded: refused by the store, or sent with the next message to a graph whose
recall runs before its report. The new turn's recall records it, or keeps it for its episode and says so."""

from __future__ import annotations

import logging
import warnings
from typing import Any

from lamar import DuplicateReport, InvalidReward, Lamar, LamarError, StoreError, UnknownEpisode
from lamar.signals import to_reward

log = logging.getLogger("lamar_langgraph.nodes")


def is_outcome(value: Any) -> bool:
    """Whether `value` is an outcome the store takes: a Signal, its name, or a reward in [-1, 1]."""
    try:
        to_reward(value)
    except InvalidReward:
        return False
    return True


def calls(owed: dict[str, Any]) -> str:
    """The `lam.report` calls that record each episode's outcome (the first three), as a user types them."""
    said = "; ".join(f"lam.report({episode!r}, {getattr(outcome, 'value', outcome)!r})"
                     for episode, outcome in list(owed.items())[:3])  # a Signal as its name, read the same
    return said + ("; ..." if len(owed) > 3 else "")


def unsent(episode: str, outcome: Any, exc: Exception) -> None:
    """Log that the store refused `outcome` for `episode`: the thread's state keeps it for that episode."""
    log.warning("Lamar could not report episode %s: %s. The episode stays open and keeps this outcome in the "
                "thread's state (lamar_waiting): the thread's next report or recall node records it once the store "
                "is back, or record it now with %s", episode, exc, calls({episode: outcome}))


def settle(lamar: Lamar, owed: dict[str, Any]) -> tuple[set[str], dict[str, Any]]:
    """The thread's open episodes (the keys of `owed`) settled as a new turn starts, and those whose outcome the
    store refused. Settled: those the store holds an outcome for (an expiry, a default of the pending policy, an
    app's report) or no longer holds (compacted), found in one read of `pending`, and those whose outcome in
    `owed` (None: none) is recorded now. Fails open: an outcome the store cannot take stays owed, as refused."""
    if not owed:
        return set(), {}
    try:
        waiting = {p.episode_id for p in lamar.pending(only=list(owed))}
    except LamarError as exc:
        log.info("Lamar could not read the thread's open episodes (they stay open): %s", exc)
        return set(), {episode: outcome for episode, outcome in owed.items()
                       if outcome is not None and is_outcome(outcome)}
    done, refused = recorded(lamar, {episode: owed[episode] for episode in owed if episode in waiting})
    return (set(owed) - waiting) | done, refused


def recorded(lamar: Lamar, owed: dict[str, Any]) -> tuple[set[str], dict[str, Any]]:
    """Report each episode's outcome in `owed` (None, or one that is not an outcome: nothing to report), and return
    the episodes the store now holds an outcome for, and those it refused, each with its outcome. Fails open: an
    episode the store refuses is logged as a report node logs it."""
    done, refused = set(), {}
    for episode, outcome in owed.items():
        if outcome is None or not is_outcome(outcome):  # said by the report node that read it
            continue
        try:
            lamar.report(episode, outcome)
        except (DuplicateReport, UnknownEpisode):
            pass  # reported meanwhile (an app, another branch of this turn) or compacted away: settled all the same
        except StoreError as exc:
            unsent(episode, outcome, exc)
            refused[episode] = outcome
            continue
        done.add(episode)
    return done, refused


def unreported(outcome: Any, refused: dict[str, Any], unheard: list[str]) -> None:
    """Warn, as a new turn starts, of the outcomes the store `refused` for the thread's episodes (kept for them in
    the state), and of the state's `outcome` that is not one, given to the episodes `unheard`: the new turn
    clears it, and they get none from it."""
    if refused:
        warnings.warn(f"Lamar's recall node starts a new turn while the store refused the outcomes of the thread's "
                      f"episodes {', '.join(refused)}: each keeps its own in the thread's state (lamar_waiting), "
                      f"and the thread's next report or recall node records it once the store is back, never "
                      f"another turn's. To record them now: {calls(refused)}", UserWarning, stacklevel=3)
    if unheard:
        warnings.warn(f"Lamar's recall node starts a new turn while the state holds the outcome {outcome!r}, which is "
                      f"not an outcome (a Signal name, or a reward in [-1, 1]): the new turn clears it, and episodes "
                      f"{', '.join(unheard)} get no outcome from it", UserWarning, stacklevel=3)


def ambiguous(outcome: Any, episodes: list[str]) -> None:
    """Warn that the report node gives `outcome` to the open `episodes` missing from `lamar_waiting`: the state
    cannot say whether each is this turn's (a branch, a subgraph's) or an earlier turn's that never got one."""
    if episodes:
        fixes = "; ".join(f"lam.report({episode!r}, <its outcome>, replace=True)" for episode in episodes[:3])
        warnings.warn(f"Lamar's report node records the outcome {getattr(outcome, 'value', outcome)!r} for episodes "
                      f"{', '.join(episodes)} too, which are open in lamar_episodes but missing from lamar_waiting (a "
                      f"checkpoint written before lamar_waiting existed, or a state schema that declares "
                      f"lamar_episodes without it): each may be an earlier turn's, whose own outcome this is not. If "
                      f"one is, correct it with {fixes}{'; ...' if len(episodes) > 3 else ''}",
                      UserWarning, stacklevel=4)
