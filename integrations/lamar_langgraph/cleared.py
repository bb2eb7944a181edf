"""A new turn clears the outcome key: an outcome no report node has reported yet (sent with the next
message to a graph whose recall runs before its report) would be lost without a word."""

from __future__ import annotations

import warnings
from typing import Any


def unreported(outcome: Any, still_open: list[str]) -> None:
    """Warn that the new turn clears `outcome` while the thread's episodes `still_open` (open in the
    state and still pending in the store) wait for one. An outcome already reported leaves none open,
    nor does one another run of the thread reported (a second resume of a review); one the report
    node could not record (a store error) is said here too, as it is lost all the same."""
    if outcome is None or not still_open:
        return
    warnings.warn(f"Lamar's recall node starts a new turn while the state holds the outcome {outcome!r}, which no "
                  f"report node has recorded: the new turn clears it, and episodes {', '.join(still_open)} stay "
                  "open for the thread's next outcome (or lam.report(episode_id, signal)). A report node that ran "
                  "and could not write the store said so in its own warning; if none runs before this one, for an "
                  "outcome sent with the next message put the report node before the recall node (START -> report "
                  "-> recall -> ...)", UserWarning, stacklevel=3)
