"""`directs_otherwise`: a rule phrased without "never", "must" or an opening verb, as rules files often phrase a
prohibition ("No `git push --force`", "Pushing to main is prohibited"), a permission ("You may ...") or a maxim."""

from __future__ import annotations

import re

# A verdict on an act, or leave to do it: "... is off-limits", "... need confirmation", "Feel free to rebase".
# Whose approval it takes may stand between ("needs a lead's approval", "requires a DBA review"), a few words,
# as may the record a team's process asks for before the act ("requires an ADR", "needs an RFC").
_SAYS = re.compile(
    r"\b(?:under\s+no\s+circumstances|off-limits"
    r"|(?:requires?|needs?)\s+(?:[\w'’-]+\s+){0,3}?(?:confirmation|approval|permission|consent|sign-?off|review"
    r"|adr|rfc|design\s+doc(?:ument)?|go-ahead)(?![\w-])"
    r"|feel\s+free\s+to|you\s+may|(?:^|(?:it['’]?s|it\s+is)\s+)(?:ok|okay|fine|safe)\s+to"
    # "Amending pushed commits is frowned upon", "Skipping hooks is a no-go": a verdict after "is" or "are"
    r"|(?:is|are)\s+(?:(?:strongly|highly|generally|heavily|very)\s+)?(?:discouraged|frowned\s+upon"
    r"|a\s+no-go|unacceptable|not\s+(?:ok|okay|acceptable|fine))(?![\w-]))",
    re.IGNORECASE)
# A verdict a law or a vendor also gives a thing ("The API is banned in some regions"), and leave that also says a
# thing works ("The build is fine on Linux"): a rule when it is on an act (`_ACT`), or on what a project writes.
_BANS = re.compile(r"\b(?:prohibited|disallowed|banned|not\s+(?:allowed|permitted))(?![\w-])", re.IGNORECASE)
_LEAVE = re.compile(r"\b(?:is|are)\s+(?:(?:perfectly|totally|completely|always|generally)\s+)?(?:fine|ok|okay"
                    r"|acceptable|allowed|permitted|encouraged|welcome)(?![\w-])", re.IGNORECASE)
# An act: an -ing form ("Squashing commits", "Force-pushing"), or the use of something. "Something", "String",
# "During" and "Spring" end as one does and name none.
_ACT = re.compile(r"^[*_\s]*(?:(?:the\s+)?(?:use|usage)\s+of\b|(?![a-z]*thing\b|string\b|spring\b|during\b)"
                  r"(?:[a-z]+-)?[a-z]{2,}ing\b)", re.IGNORECASE)
# "The API ...", "Our old vendor ...": a thing the project has or deals with, which a ban on it only reports;
# a code span or a quoted word ("The `any` type") names what the project's code or text holds.
_THING = re.compile(r"^[*_\s]*(?:the|this|that|our|their|its|his|her)\s+[^`'\"“‘]*$", re.IGNORECASE)
# "Composition over inheritance", "Explicit over implicit": a preference said as a maxim, a few words on each side
# and no verb ("Queries over 100ms are logged" states, and a figure after "over" is an amount).
_PREFERENCE = re.compile(r"^[^\s,;:]+(?:\s+[^\s,;:]+){0,3}\s+over\s+(?![\d$])[^\s,;:]+(?:\s+[^\s,;:]+){0,5}$",
                         re.IGNORECASE)
# "Each handler needs a timeout", "Every PR has to pass CI": what each item of a kind must have; "Each service has
# its own Dockerfile" states.
_EVERY = re.compile(r"^(?:every|each|all|any)\s+[^,;]{1,60}?\s+(?:needs?|has\s+to|have\s+to)\b", re.IGNORECASE)
# Symbols a rules file marks an item with (a check mark, a warning sign, a pointing hand, an arrow, a bullet): none
# is the rule's first word. Only those past ASCII: a backtick opens a code span, "#" a channel.
_MARKS = frozenset(["So", "Sk", "Sm", "Mn", "Cf", "Zs", "Po"])
# "No longer <verb> ...": what not to do any more; "(no longer)" in brackets marks a rule taken back instead.
_NO_LONGER = re.compile(r"^[*_`\s]*no\s+longer\s+(\S.*)$", re.IGNORECASE)
# "No <act> ...": what not to do, named with no verb of its own ("No emojis in commit messages"); "No tests
# exist for X" states a fact. A clause after "unless" or "after" may have a verb of its own.
_NO = re.compile(r"^[*_\s]*no\s+(?!one\b|longer\b)(\S.*)$", re.IGNORECASE)
_CLAUSE = re.compile(r"\b(?:unless|until|after|before|when|if|because|since|while|once|that|which|as)\b",
                     re.IGNORECASE)
_FINITE = re.compile(r"\b(?:is|are|was|were|be|been|has|have|had|exists?|existed|seems?|happens?|runs?|works?|gets?"
                     r"|goes|went|lives|takes|means|will|would|can|could|does|did|shows?|contains?|stays?)\b",
                     re.IGNORECASE)
# "No tests yet", "No CI on forks for now": how the project stands today, which names nothing to forbid.
_FOR_NOW = re.compile(r"\b(?:yet|so\s+far|for\s+now|at\s+(?:the\s+moment|present)|currently|right\s+now)\b",
                      re.IGNORECASE)


def directs_otherwise(text: str) -> bool:
    """Whether a block that has no directive word and opens with no instruction's verb still directs.

    >>> [directs_otherwise(t) for t in ("No amend unless asked", "No tests exist for it", "Pushing is prohibited")]
    [True, False, True]
    """
    if _SAYS.search(text) or (_EVERY.match(text) and not text.endswith(":")):  # "All changes need to:" leads in
        return True
    if _PREFERENCE.match(text.rstrip(".!")) and not _FINITE.search(text):
        return True  # "Explicit over implicit"
    ban = _BANS.search(text)
    # The subject is the ban's own clause's: "The branch is protected; force pushes are not allowed" bans an act.
    if ban and (_ACT.match(text) or not _THING.match(re.split(r"[;,:]", text[:ban.start()])[-1])):
        return True
    leave = _LEAVE.search(text)
    if leave and _ACT.match(text):
        return True  # "Squashing commits is fine", not "The build is fine on Linux"
    stops = _NO_LONGER.match(text)
    if stops:
        from lamar.sentence import opens_with_verb

        return opens_with_verb(stops.group(1))  # "No longer commit lockfiles": stop doing it
    act = _NO.match(text)
    if act is None:
        return False
    named = _CLAUSE.split(act.group(1), maxsplit=1)[0]
    return not _FINITE.search(named) and not _FOR_NOW.search(named)


_DONT_MARKS = "❌✗✘🚫⛔"  # what rules files set before a bad example, or what not to do
_DO_MARKS = "✅✔✓☑"


def unmarked(text: str) -> str:
    """`text` without the symbols that mark its item (a warning sign before "Ask first: ...")."""
    import unicodedata

    n = 0
    while n < len(text) and (text[n] == " " or text[n] > "\x7f" and unicodedata.category(text[n]) in _MARKS):
        n += 1
    return text[n:]


def marked_verdict(text: str) -> tuple[str, str]:
    """The verdict a mark before an item gives it and the item without it: ("Don't", ...) after a cross ("❌ bare
    except clauses"), ("Do", ...) after a check mark ("✅ pathlib for paths"), ("", text) for any other.

    >>> marked_verdict("❌ bare except"), marked_verdict("✔️ Use pathlib"), marked_verdict("Use pathlib")
    (("Don't", 'bare except'), ('Do', 'Use pathlib'), ('', 'Use pathlib'))
    """
    for marks, verdict in ((_DONT_MARKS, "Don't"), (_DO_MARKS, "Do")):
        if text[:1] in marks:
            return verdict, text.lstrip("".join(marks) + "\ufe0f ")
    return "", text


def states(text: str) -> bool:
    """Whether `text` has a verb that states, as a description does ("is", "runs", "contains", ...)."""
    return bool(_FINITE.search(text))


__all__ = ["directs_otherwise", "marked_verdict", "states", "unmarked"]
