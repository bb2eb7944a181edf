"""An outcome sent with a message to an agent whose state holds no earlier run: the mistake of an agent made
without a checkpointer, said aloud, since the outcome would otherwise vanish and the earlier run stay pending."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from enum import Enum
from typing import Any


def unheard(state: Mapping[str, Any], key: str) -> None:
    """Warn when the state's outcome, sent with this message, has no earlier run to go to: the state has never
    held the episode key `key` (a run whose recall failed holds it as None, and its store error was logged)."""
    outcome = state.get("lamar_outcome")
    if outcome is None or key in state:
        return
    shown = repr(outcome.value if isinstance(outcome, Enum) else outcome)  # a Signal as the name to pass
    warnings.warn(
        f"Lamar's middleware got the outcome {shown} with this message, but the agent's state holds no earlier "
        "run's episode to give it to, so it is dropped and the earlier run stays pending. An agent made without a "
        "checkpointer starts every invoke from an empty state: make it with create_agent(..., "
        "checkpointer=InMemorySaver()) and invoke each turn with the same config={'configurable': {'thread_id': "
        f"...}}}}, or report the earlier run from its result: middleware.report(result, {shown})",
        UserWarning, stacklevel=3)
