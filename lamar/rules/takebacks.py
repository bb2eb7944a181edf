"""Rules a rules file takes back itself: struck through (`~~...~~`), marked "(no longer)", "[removed]" or
"(not anymore)", or followed by an item that says "Never mind the rule above"; `lamar.rules.parse` leaves them out."""

from __future__ import annotations

import re
from collections.abc import Sequence

# A struck span reads up to the next "~", so each character is read once whatever the text.
_STRUCK = re.compile(r"~~([^~]+)~~")
_MARK = r"[(\[]\s*(?:no\s+longer|deprecated|obsolete|outdated|retired|withdrawn|superseded|removed)\s*[)\]]"
_MARKED_FIRST = re.compile(rf"^[\s*_]*({_MARK})", re.IGNORECASE)
# At the end only "no longer ..." and "not anymore": "Never call `foo()` (deprecated)" says what is deprecated,
# not the rule.
_MARKED_LAST = re.compile(r"([(\[]\s*(?:no\s+longer(?:\s+[\w-]+){0,3}|not\s+any\s?more)\s*[)\]])[\s.]*$",
                          re.IGNORECASE)
_REF = (r"(?:(?:the|that|this|my)\s+)?(?:(?:previous|last|preceding)\s+)?(?:rule|item|line|point|bullet|one)"
        r"(?:\s+above)?|(?:the\s+)?above|that")
_TAKES_BACK = re.compile(
    rf"^(?:never\s?mind(?:\s+(?:{_REF}))?|(?:scratch|disregard|ignore|forget|strike|undo|cancel|drop)\s+(?:{_REF}))"
    r"(?:\s*[,;:.!\u2013\u2014-].*)?$", re.IGNORECASE)


STRUCK = "struck through: the file takes it back"
_REASONS = ("taken back by line ", "takes back the rule above")


def marked(mark: str) -> str:
    """Why a rule marked as no longer in force is left out."""
    return f"marked '{mark}': the file takes it back"


def is_taken_back(why: str) -> bool:
    """Whether a block was left out because the file takes it back (`lamar.rules.parse` says so in `why`)."""
    return why.endswith(": the file takes it back") or why.startswith(_REASONS)


def unstruck(text: str, spans: Sequence[tuple[int, int]] = ()) -> tuple[str, bool]:
    """`text` without its struck-through words, which the file takes back, and whether it had any; what `spans`
    covers (each code span's start and end, as `lamar.rules.parse` finds them: "`git diff ~~a~~`") is kept.

    >>> unstruck("Run ~~npm~~ pnpm install"), unstruck("~~never push to main~~")
    (('Run pnpm install', True), ('', True))
    """
    if "~~" not in text:
        return text, False
    pieces: list[str] = []
    done = span = 0  # both come in order: the spans that end before a struck part are passed once
    for found in _STRUCK.finditer(text):
        while span < len(spans) and spans[span][1] <= found.start():
            span += 1
        if span < len(spans) and spans[span][0] < found.end():
            continue  # in a code span
        pieces.append(text[done:found.start()])
        done = found.end()
    if not pieces:
        return text, False
    kept = " ".join(("".join(pieces) + text[done:]).split())
    return ("" if not re.search(r"\w", kept) else kept), True


def withdrawn_mark(text: str) -> str:
    """The mark that says a rule is no longer in force ("(no longer)", "[deprecated]" before it, "(no longer
    needed)" after it), or ""."""
    found = _MARKED_FIRST.match(text) or _MARKED_LAST.search(text)
    return " ".join(found.group(1).split()) if found else ""


def takes_back(text: str) -> bool:
    """Whether a rule's words take back the one above it: "Never mind the rule above", "Scratch that".

    >>> takes_back("Never mind the rule above"), takes_back("Ignore the generated files")
    (True, False)
    """
    return bool(_TAKES_BACK.match(text.strip()))


__all__ = ["STRUCK", "is_taken_back", "marked", "takes_back", "unstruck", "withdrawn_mark"]
