"""What a tool call's arguments may be: the limits, and the checks that refuse what is outside them with a
sentence saying what to pass."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from lamar import LamarError, Signal, Status
from lamar.experience import check_context
from lamar_mcp.refusals import shown

MAX_ID = 128
"""Longest id accepted (episode and lesson ids are about 20 characters)."""
MAX_TEXT = 2_000
"""Longest precondition, action or rationale of a proposed lesson."""
MAX_KEYS = 32
"""Most fields in a context or scope."""
MAX_KEY = 64
"""Longest context or scope key."""
MAX_VALUE = 500
"""Longest context or scope value: they are compared as exact strings, never searched."""
MAX_FREE_TEXT = 20_000
"""Characters of recall's free text that are read (the hooks read as much of a prompt)."""

SIGNALS = tuple(s.value for s in Signal)
STATUSES = tuple(s.value for s in Status)
# Words a model types for what the human did, besides the five names (any case; hyphens, underscores
# and a closing full stop aside): their other forms, and the words report's description glosses them
# with. A word that could name two outcomes ("fixed", "correct", "done", "good") is refused: a wrong
# reading would count as evidence, where a refusal costs one more call.
SIGNAL_WORDS = {
    Signal.SHIPPED: frozenset({"ship", "ships", "ship it", "shipped it", "merged", "merged it", "deployed",
                               "deployed it", "released", "released it"}),
    Signal.ACCEPTED: frozenset({"accept", "accepts", "accepted it", "kept", "kept it"}),
    Signal.REASKED: frozenset({"reask", "reasks", "re ask", "re asked", "asked again"}),
    Signal.CORRECTED: frozenset({"corrected it", "corrected the work"}),
    Signal.REVERTED: frozenset({"revert", "reverts", "reverted it", "undid it", "rolled back",
                                "rolled it back"}),
}
# The same words for report's hint: "The user merged it" is refused as a sentence, and named as shipped.
GLOSSES = {signal.value: words for signal, words in SIGNAL_WORDS.items()}


def signal_of(value: Any) -> Signal | None:
    """The outcome a model named: one of the five names, or a word that can mean only that one."""
    if not isinstance(value, str):
        return None
    said = " ".join(value.lower().replace("-", " ").replace("_", " ").split()).rstrip(".!")
    for signal in Signal:
        if said == signal.value or said in SIGNAL_WORDS[signal]:
            return signal
    return None


def checked_id(value: Any, name: str, hint: str) -> str:
    """An episode or lesson id as given, without blanks around it; `hint` says where a good one comes from."""
    if value is None:
        raise ToolError(f"{name} is missing: pass {hint}")
    if not isinstance(value, str) or not value.strip():
        raise ToolError(f"{name} must be a non-empty string: {hint}; got {shown(value)}")
    if len(value) > MAX_ID:
        raise ToolError(f"{name} is {len(value)} characters long; ids are at most {MAX_ID}: pass {hint}")
    return value.strip()  # a model may copy an id with the line's end: no id Lamar makes or takes has blanks around it


def checked_text(value: Any, name: str) -> str:
    """A lesson's precondition, action or rationale (`name`), as given."""
    if value is None:
        raise ToolError(f"{name} is missing: "
                        f"say {'when the lesson applies' if name == 'precondition' else 'what to do'}")
    if not isinstance(value, str):
        raise ToolError(f"{name} must be a string; got {shown(value)}")
    if len(value) > MAX_TEXT:
        raise ToolError(f"{name} is {len(value)} characters long; a lesson field is at most {MAX_TEXT}: "
                        "say it in one or two sentences")
    if name != "rationale" and not value.strip():
        raise ToolError(f"{name} is empty: say {'when the lesson applies' if name == 'precondition' else 'what to do'}")
    return value


def checked_context(value: Any, name: str) -> dict[str, str]:
    """A context or scope: a mapping of strings, small enough to store with every episode."""
    if isinstance(value, Mapping) and len(value) > MAX_KEYS:
        raise ToolError(f"{name} has {len(value)} fields; at most {MAX_KEYS}: keep the few that decide "
                        "which lessons apply (project, language, task, error_class)")
    for key, label in value.items() if isinstance(value, Mapping) else ():
        if isinstance(label, (bool, int, float)) and isinstance(key, str):
            # The engine's advice (str() it) is a Python caller's; a model writes JSON.
            written = shown(label)
            raise ToolError(f"{name}: context value for {shown(key)} must be a string; got {written}: send it as a "
                            + (f'string, "{written}"' if "..." not in written else "string"))
    try:
        ctx = check_context(value, capped=False)  # the field limits first: their message is the more useful
    except LamarError as exc:
        raise ToolError(f"{name}: {exc}") from exc
    for key, text in ctx.items():
        if not text.strip():  # a label no scope holds (nor should: no recall would reach its lesson)
            raise ToolError(f"{name}: context value for {shown(key)} is empty: leave the key out when it has no value")
        if len(key) > MAX_KEY or len(text) > MAX_VALUE:
            raise ToolError(f"{name} field {shown(key)} is too long (keys at most {MAX_KEY} characters, values "
                            f"at most {MAX_VALUE}): use short labels such as task='build_fails', not free text")
    return ctx


__all__ = ["GLOSSES", "MAX_FREE_TEXT", "MAX_ID", "MAX_KEY", "MAX_KEYS", "MAX_TEXT", "MAX_VALUE", "SIGNALS",
           "SIGNAL_WORDS", "STATUSES", "checked_context", "checked_id", "checked_text", "signal_of"]
