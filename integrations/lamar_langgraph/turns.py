"""Which episode a pass through a recall node belongs to: a turn keeps one open episode for each context it
recalls for, so each branch of a fan-out, and of a second fan-out in the same turn, recalls for its own task."""

from __future__ import annotations

import hashlib
import json
import logging
import warnings
from collections.abc import Mapping
from typing import Any

from lamar import Lamar, LamarError, Recall
from lamar_langgraph.keys import REPORTED, field

log = logging.getLogger(__name__)


def with_context(raw: str, context: Mapping[str, str]) -> str:
    """The turn `raw` prefixed by a digest of its context, as one more namespace segment: the branches of a fan-out
    share the turn and the subgraph, and only their tasks tell them apart. Every entry of the turn still ends in
    "|<raw>", which is how a new turn tells this turn's episodes from earlier ones (`new_turn.started`)."""
    text = json.dumps(sorted(context.items()), ensure_ascii=False)
    return f"ctx:{hashlib.blake2b(text.encode(), digest_size=6).hexdigest()}|{raw}"


def episode_of(state: Any, key: str, legacy: str) -> str | None:
    """The episode the turn already has for this context and (sub)graph, still open; else None.

    A reported one is done: a later pass in the same turn (the workers a review sends back) is new work with its
    own outcome, so it recalls anew. `legacy` is the key a checkpoint written before the context was part of it
    holds (a state written before `lamar_turns` holds only `lamar_turn`)."""
    turns = field(state, "lamar_turns") or {}
    episode = turns.get(key) or turns.get(legacy)
    if episode is None and not turns and field(state, "lamar_turn") == legacy:
        episode = field(state, "lamar_episode_id")
    if episode is None or (field(state, "lamar_episodes") or {}).get(episode) == REPORTED:
        return None
    return str(episode)


def handed_back(lamar: Lamar, state: Any, episode: str, marker: str) -> dict[str, Any]:
    """The update of a pass that keeps the turn's `episode`: nothing when the state's episode is it already (a loop
    back through the node); else that episode's lessons, since a `Send` branch arrives holding the keys of whichever
    branch wrote last, and its model must not get another task's lessons."""
    if field(state, "lamar_episode_id") == episode:
        return {}
    try:
        record = lamar.episode(episode)
        rec = Recall(episode, [lamar.get(lesson) for lesson in record.injected], record.context)
    except LamarError as exc:  # fail open: the pass goes on without lessons rather than with another's
        log.warning("Lamar could not read back the lessons of episode %s (the pass goes on without them): %s",
                    episode, exc)
        return {"lamar_turn": marker, "lamar_episode_id": episode, "lamar_lessons": [], "lamar_prompt": ""}
    return {"lamar_turn": marker, "lamar_episode_id": episode, "lamar_lessons": rec.ids,
            "lamar_prompt": rec.as_prompt()}


def unmarked(state: Any, default_turn: bool) -> None:
    """Warn when a state that holds Lamar's keys has messages but none from the person: a `Send` payload built from
    ``state["messages"][-1:]`` after an AI message (a planner's). Its branch cannot tell which turn it is in, so a
    loop in it recalls again, and it forgets the turn's open episodes, which then get no outcome."""
    messages = field(state, "messages")
    if not default_turn or not messages or not (field(state, "lamar_episodes") or field(state, "lamar_turns")):
        return
    warnings.warn(
        "Lamar's recall node finds messages but none from the person, in a state that holds Lamar's keys: was this "
        "Send given state[\"messages\"][-1:] after an AI message? Its passes cannot tell which turn they belong "
        "to, so the turn's earlier episodes get no outcome. Send the person's last message instead: "
        "\"messages\": [m for m in state[\"messages\"] if m.type == \"human\"][-1:]", UserWarning, stacklevel=4)
