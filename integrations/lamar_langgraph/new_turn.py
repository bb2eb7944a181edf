"""What a new turn does with the thread's open episodes: records the outcome each one waits for, and forgets those
settled, those whose turn ended without an outcome, and the oldest."""

from __future__ import annotations

from typing import Any

from lamar import Lamar
from lamar_langgraph.cleared import settle, unreported
from lamar_langgraph.keys import FORGET, KEPT, OPEN, REPORTED, field, opened, waiting


def owed(state: Any, outcome_key: str) -> dict[str, Any]:
    """Each open episode of the state with the outcome to record for it as a new turn starts: the one the store
    refused for it (in `lamar_waiting`), else the state's outcome, which the new turn clears (sent with this input
    for the turn before, or left by a report node the store refused), else None."""
    own, value = waiting(state), field(state, outcome_key)
    return {episode: own[episode] if own.get(episode) is not None else value for episode in opened(state)}


def started(lamar: Lamar, state: Any, raw: str | None, outcome_key: str) -> dict[str, Any]:
    """The updates of `lamar_turns`, `lamar_episodes` and `lamar_waiting` as a turn (marked `raw`, None when
    unmarked) starts. It records what `owed` gives, then forgets the turns whose episodes are done (but those of
    this same turn in another (sub)graph); the episodes reported, settled by the store (the pending policy, the
    app) or recorded now; those that waited with no outcome and got none, which no later turn's outcome is for
    (they stay pending in the store); and the open ones older than the newest `KEPT` (left to the pending policy).
    Kept, a long-lived thread's checkpoint would grow by an entry of each with every turn."""
    episodes, own, turns = field(state, "lamar_episodes") or {}, waiting(state), field(state, "lamar_turns") or {}
    this_turn = {episode for name, episode in turns.items()
                 if raw is not None and (name == raw or name.endswith(f"|{raw}"))}
    due = owed(state, outcome_key)
    settled, refused = settle(lamar, due)
    unanswered = [episode for episode in due if episode in own and episode not in settled | set(refused)
                  and episode not in this_turn]
    still = [episode for episode in due if episode not in settled and episode not in unanswered]
    unreported(field(state, outcome_key), refused,
               [e for e, outcome in due.items() if outcome is not None and e not in settled and e not in refused])
    settled = settled | set(unanswered) | set(still[:-(KEPT - 1)])  # this turn's episode makes `KEPT` open ones
    kept: set[str] = set()
    forgotten_turns: dict[str, None] = {}
    for name, episode in turns.items():
        if (episodes.get(episode) == OPEN and episode not in settled) or episode in this_turn:
            kept.add(episode)
        else:
            forgotten_turns[name] = None
    gone = {episode: None for episode, status in episodes.items()
            if (status == REPORTED or episode in settled) and episode not in kept}
    waits: dict[str, Any] = {episode: FORGET for episode in own if episode in gone or episodes.get(episode) != OPEN}
    waits.update({episode: outcome for episode, outcome in refused.items() if episode not in gone})
    return {"lamar_turns": forgotten_turns, "lamar_episodes": gone, "lamar_waiting": waits}
