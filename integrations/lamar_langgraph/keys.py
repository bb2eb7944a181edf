"""The reducers of LamarState's keys, and how the nodes read a key from a state of any schema (TypedDict,
dataclass, pydantic)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lamar import Signal

OPEN = "open"
REPORTED = "reported"
# A `lamar_waiting` entry the node that writes it forgets (None there means "no outcome yet").
FORGET = "lamar:forget"
# A parent whose recalls all run in `Send` branches or subgraphs never starts a turn in its own
# state, so no recall forgets what they merge into it: the reducers keep only the newest reported
# episodes and turns, more than one turn's fan-out lists. A thread whose outcomes the store keeps
# refusing keeps as many open episodes (its recall node forgets the oldest), so its checkpoint and
# the next outcome's reports stay bounded too. A `Send` fan-out's branches see none of the parent's
# state, so only the reducer can bound what they merge: it keeps more open episodes than one turn's
# fan-out usually has, or a report node after the join would miss the oldest branches.
KEPT = 100
KEPT_OPEN = 10 * KEPT


def last_value(left: Any, right: Any) -> Any:
    """Reducer of the single-valued keys: several branches may write them in one step (a
    `Send` fan-out, two recall nodes side by side); the last write stands, and every
    episode stays listed in `lamar_episodes`."""
    return right


def last_outcome(left: Any, right: Any) -> Any:
    """`last_value` for the outcome, a Signal kept as its name: LangGraph's checkpointers read an
    enum of another package back with a warning, or not at all under LANGGRAPH_STRICT_MSGPACK.
    LangGraph stores a key's first value without its reducer: the recall node's None comes first."""
    return named(right)


def named(outcome: Any) -> Any:
    """`outcome` as a checkpointer keeps it: a Signal as its name, anything else as it is."""
    return outcome.value if isinstance(outcome, Signal) else outcome


def merge_episodes(left: dict[str, str] | None, right: dict[str, str | None] | None) -> dict[str, str]:
    """Reducer of `lamar_episodes` (episode id -> "open" or "reported"): a union in which
    "reported" wins, so parallel branches, subgraphs and a later report all merge. None
    forgets an episode (a new turn forgets the reported ones, the ones whose turn got no outcome
    and the oldest open ones). Only the newest `KEPT` reported and `KEPT_OPEN` open episodes stay:
    an older one stays pending in the store, for the store's pending policy."""
    merged = dict(left or {})
    for episode, status in (right or {}).items():
        if status is None:
            merged.pop(episode, None)
        elif merged.get(episode) != REPORTED:
            merged[episode] = status
    for kind, kept in ((REPORTED, KEPT), (OPEN, KEPT_OPEN)):
        listed = [episode for episode, status in merged.items() if status == kind]
        for episode in listed[:-kept]:  # the oldest first: an episode keeps its place once listed
            del merged[episode]
    return merged


def merge_turns(left: dict[str, str] | None, right: dict[str, str | None] | None) -> dict[str, str]:
    """Reducer of `lamar_turns` (turn -> its episode): a union, so a subgraph's turn and its
    parent's, both written back into one state, are each remembered. None forgets a turn; only
    the newest `KEPT` stay."""
    merged = {**(left or {}), **(right or {})}
    kept = [(turn, episode) for turn, episode in merged.items() if episode is not None]
    return dict(kept[-KEPT:])  # a turn forgotten this way comes back only as a new turn's marker


def merge_waiting(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer of `lamar_waiting` (open episode id -> the outcome the store refused for it, or None
    while it has none): a union in which an outcome is never replaced by None (a subgraph hands back
    its copy of the parent's entries), `FORGET` forgets an episode, and the newest `KEPT_OPEN` stay."""
    merged = {episode: outcome for episode, outcome in (left or {}).items() if outcome != FORGET}
    for episode, outcome in (right or {}).items():
        if outcome == FORGET:
            merged.pop(episode, None)
        elif outcome is not None or merged.get(episode) is None:
            merged[episode] = named(outcome)
    return dict(list(merged.items())[-KEPT_OPEN:])


def field(state: Any, key: str) -> Any:
    """`state[key]` of a state of any schema; None when it has no such key."""
    if isinstance(state, Mapping):
        return state.get(key)
    return getattr(state, key, None)


def waiting(state: Any) -> dict[str, Any]:
    """The state's `lamar_waiting`, without the entries a first write left unreduced (`FORGET`)."""
    return {episode: outcome for episode, outcome in (field(state, "lamar_waiting") or {}).items()
            if outcome != FORGET}


def opened(state: Any) -> list[str]:
    """The episodes open in the state's `lamar_episodes`, oldest first."""
    return [episode for episode, status in (field(state, "lamar_episodes") or {}).items() if status == OPEN]
