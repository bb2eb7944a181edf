"""How `lamar sleep` and `lamar review` print what mining did: a candidate's support, counted by session,
and each lesson mining dropped, with its text beside the reason, so a person can tell which was refused."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lamar.cli.render import plural, shorten
from lamar.sleep.printed import printed_id
from lamar.sleep.proposals import Dropped


def support_line(ev: Mapping[str, Any]) -> str:
    """A mined candidate's support when proposed: it has no arm yet, so what it was judged on is its sessions."""
    outcomes = ev.get("outcomes")
    # An outcome is a trace's own word: printed as an id is, so a trace or an edit cannot start a line.
    said = ", ".join(f"{printed_id(k)} {v}" for k, v in outcomes.items()) if isinstance(outcomes, Mapping) else ""
    said = f" ({said})" if said else ""
    errors = f", {ev.get('with_tool_errors', 0)} with tool errors"
    # Sessions are what a lesson needs two of, and what its outcomes count; a report without them counts traces.
    sessions = ev.get("sessions")
    if isinstance(sessions, int):
        traces = plural(ev["traces"], "trace")
        return f"    support when proposed: {plural(sessions, 'session')}{said}{errors}; {traces}"
    return f"    support when proposed: {plural(ev['traces'], 'trace')}{said}{errors}"


def dropped_lines(dropped: Dropped) -> list[str]:
    """One line for the reason, and one for the lesson's words when the item is a lesson: a reason names
    traces and episodes, which tell a person nothing of which lesson it was."""
    lines = [f"  dropped: {shorten(dropped.reason, 100)}"]
    item = dropped.item
    words = [item.get(key) for key in ("precondition", "action")] if isinstance(item, Mapping) else []
    if words and all(isinstance(word, str) and word.strip() for word in words):
        # The model's words, scrubbed: on one line, and with no character that would move the cursor.
        text = "".join(c if c.isprintable() else " " for c in f"when {words[0]}, {words[1]}")
        lines.append(f"    lesson: {shorten(text, 96)}")
    return lines


__all__ = ["dropped_lines", "support_line"]
