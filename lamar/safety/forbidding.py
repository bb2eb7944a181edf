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
# "Never do these without explicit approval:", "## Never unless asked": the prohibition holds until someone who
# may lift it does, so it still heads its list; other words after "without" or "unless" name something else.
_UNLESS = frozenset(["without", "unless"])
_LIFTED_BY = frozenset([
    "explicit", "explicitly", "express", "expressly", "written", "prior", "direct", "user", "user's", "the", "a",
    "an", "my", "your", "human", "maintainer", "maintainer's", "owner", "owner's", "approval", "approved",
    "confirmation", "confirmed", "permission", "consent", "sign-off", "asking", "asked", "told", "instructed",
    "requested", "first", "you", "are", "is", "it", "so", "to", "by", "me", "us", "says", "asks", "request",
])
_WORD = re.compile(r"[a-z][a-z'-]*")


def forbids(label: str) -> bool:
    """Whether a heading's, a lead-in's or a parent item's words say that what they head is forbidden.

    >>> [forbids(h) for h in ("Never", "Don'ts ❌", "**Things to avoid**:", "Do's and Don'ts", "Never push")]
    [True, True, True, False, False]
    >>> forbids("NEVER do these without explicit approval:"), forbids("Never without a timeout")
    (True, False)
    """
    words = _WORD.findall(label.casefold().replace("’", "'"))
    cut = next((n for n, w in enumerate(words) if w in _UNLESS), len(words))
    words, lifted = words[:cut], words[cut + 1:]
    return (any(w in _FORBIDDING for w in words)
            and all(w in _FORBIDDING or w in _ALONGSIDE for w in words)
            and all(w in _LIFTED_BY for w in lifted))


def neutral(text: str) -> bool:
    """Whether a lead-in's words add nothing to the heading's ("The following:" under "## Never")."""
    return all(w in _ALONGSIDE for w in _WORD.findall(text.casefold()))


__all__ = ["forbids", "neutral"]
