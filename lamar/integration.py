"""What every integration checks of the arguments its pieces are made with (an engine, an outcome
kept for later), refused when the piece is made rather than inside the agent's turn, and of an
episode before a silent outcome settles it."""

from __future__ import annotations

from typing import Any

from lamar._errors import InvalidArgument, InvalidReward, LamarError, a_or_an, echoed
from lamar.engine import Lamar
from lamar.signals import to_reward


def engine(lamar: Any, who: str) -> Lamar:
    """`lamar` if it is a Lamar engine, else an `InvalidArgument` naming the piece that took it: a
    store or a path passed by mistake would otherwise fail later, inside a query or an agent's turn."""
    if not isinstance(lamar, Lamar):
        raise InvalidArgument(f"{who} takes a Lamar engine first (Lamar(\"lessons.db\")); got {type(lamar).__name__}")
    return lamar


def outcome(value: Any, name: str) -> Any:
    """`value` if it is None or an outcome (a Signal, its name, a number in [-1, 1]), else an
    `InvalidReward` naming the argument: an outcome kept for later (`silent_outcome=`) is checked
    when it is given, not when the episode it would settle is already lost."""
    if value is not None:
        try:
            to_reward(value)
        except InvalidReward as exc:
            raise InvalidReward(f"{name}: {exc}") from exc
    return value


def settled_as_failed(lamar: Lamar, episode: str) -> bool:
    """Whether `episode` was expired (its run failed or was cut short): a silent outcome must not
    replace that, since silence after a failed run is no acceptance; an explicit outcome still may."""
    try:
        return lamar.episode(episode).settled == "expired"
    except LamarError:
        return False  # unknown or unreadable: the report that follows says so, quietly


__all__ = ["a_or_an", "echoed", "engine", "outcome", "settled_as_failed"]  # a_or_an, echoed: for their messages


def not_in_store(lamar: Lamar, episode: str, what: str) -> str:
    """The warning for an episode that an integration reports or settles and the store does not hold. Sleep
    may have compacted it, which loses nothing; but a worker that opened another store than the one that
    recalled it (a thread resumed elsewhere) loses the outcome, and only the log can say so inside the run."""
    return (f"Lamar's episode {episode} is not in the store {lamar.store.location}, so this {what} was not "
            "recorded: sleep compacted it (nothing is lost), or this process opened another store than the one "
            "that recalled it (another namespace, file or ':memory:'): every process that runs or resumes a "
            "thread must open the same store")
