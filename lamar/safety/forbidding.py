"""`forbids`: whether a heading's, a lead-in's or a label's words say that what they head is forbidden ("Never",
"Don'ts", "Things to avoid"), read by `lamar.safety.prohibitions` and by `lamar.sentence` before a rule's verb."""

from __future__ import annotations

import re

# A label forbids when one of its words forbids and every other word only goes with such a word:
# "Never", "Don'ts", "Do NOT", "Things to avoid", "What not to do", "Never do the following", "Forbidden
# commands". Any other word makes it name something else ("Do's and Don'ts", "Never-ending jobs").
_FORBIDDING = frozenset([
    "never", "not", "don't", "dont", "don'ts", "donts", "dont's", "avoid", "forbidden", "prohibited", "banned",
    "disallowed", "anti-patterns", "antipatterns", "anti-pattern", "no-go", "no-gos", "no-no", "no-nos", "mustn't",
])
_ALONGSIDE = frozenset([
    "do", "to", "what", "things", "thing", "these", "this", "the", "following", "ever", "must", "you", "should",
    "shall", "allowed", "please", "under", "any", "circumstances", "commands", "actions", "practices", "patterns",
    "rules", "list", "strictly", "absolutely", "critical", "important", "hard", "mistakes", "we", "i", "a",
    "at", "all", "here", "are", "is", "be", "done", "in", "repo", "project", "codebase",
])
_WORD = re.compile(r"[a-z][a-z'-]*")


def forbids(label: str) -> bool:
    """Whether a heading's, a lead-in's or a parent item's words say that what they head is forbidden.

    >>> [forbids(h) for h in ("Never", "Don'ts ❌", "**Things to avoid**:", "Do's and Don'ts", "Never push")]
    [True, True, True, False, False]
    """
    words = _WORD.findall(label.casefold().replace("’", "'"))
    return (any(w in _FORBIDDING for w in words)
            and all(w in _FORBIDDING or w in _ALONGSIDE for w in words))


def neutral(text: str) -> bool:
    """Whether a lead-in's words add nothing to the heading's ("The following:" under "## Never")."""
    return all(w in _ALONGSIDE for w in _WORD.findall(text.casefold()))


__all__ = ["forbids", "neutral"]
