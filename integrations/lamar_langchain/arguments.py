"""Checks of the LangChain pieces' arguments, made when a piece is made rather than inside the
agent's turn, where a bad one would break the turn or be swallowed by the callbacks."""

from __future__ import annotations

from typing import Any

from lamar import InvalidArgument, InvalidReward, Lamar
from lamar.signals import to_reward


def checked_engine(lamar: Any, who: str) -> Lamar:
    """`lamar` if it is a Lamar engine, else an `InvalidArgument` when the piece is made: a path or a
    store would otherwise fail inside the agent's first turn, or be swallowed by the callbacks."""
    if not isinstance(lamar, Lamar):
        raise InvalidArgument(f"{who} takes a Lamar engine first (Lamar(\"lessons.db\")); got {type(lamar).__name__}")
    return lamar


def checked_outcome(value: Any, name: str) -> Any:
    """`value` if it is None or an outcome (`InvalidReward` otherwise), checked when the piece is
    made: found out only when a run fails or a thread goes on, it would leave episodes pending."""
    if value is not None:
        try:
            to_reward(value)
        except InvalidReward as exc:
            raise InvalidReward(f"{name}: {exc}") from exc
    return value


__all__ = ["checked_engine", "checked_outcome"]
