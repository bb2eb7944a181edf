"""An outcome no report node recorded: refused by the store, or sent with the next message to a graph
whose recall runs before its report. The new turn clears it, so each is said with the call that records it."""

from __future__ import annotations

import logging
import warnings
from typing import Any

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


def unreported(outcome: Any, still_open: list[str]) -> None:
    """Warn that the new turn clears `outcome` while the thread's episodes `still_open` (open in the
    state and still pending in the store) wait for one. An outcome already reported leaves none open,
    nor does one another run of the thread reported (a second resume of a review); one the report
    node could not record (a store error) is said here too, as it is lost all the same."""
    if outcome is None or not still_open:
        return
    warnings.warn(f"Lamar's recall node starts a new turn while the state holds the outcome {outcome!r}, which no "
                  f"report node has recorded (the store refused it, or it came with this input): the new turn "
                  f"clears it, and episodes {', '.join(still_open)} stay open for the thread's next outcome. To "
                  f"record this one for them: {_calls(still_open, outcome)}. A report node that ran and could not "
                  "write the store said why in its own warning; if none runs before this one, for an outcome sent "
                  "with the next message put the report node before the recall node (START -> report -> recall "
                  "-> ...)", UserWarning, stacklevel=3)
