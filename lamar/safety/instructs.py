"""`instructed_harm`: why a mined lesson would have the agent destroy data, force-push, open permissions,
switch off a check or send secrets away; a prohibition ("never", "do not", "instead of", a list under
"## Never") is read as one."""

from __future__ import annotations

import re

# A word that forbids what follows it: a command it governs is a prohibition, not an instruction.
_MARKER = (
    r"(?:never|not|under\s+no\s+circumstances|no\s+longer|no|\w{0,6}n['’]t|avoid(?:ing)?|refrain\s+from|stop"
    r"|instead\s+of|rather\s+than|without|forbid(?:den)?|prohibit(?:ed)?|banned|beware\s+of|careful\s+with"
    r"|not\s+allowed\s+to)"
)
_VERB = (
    r"(?:run|runs|running|ran|use|uses|using|used|call|calling|execute|executing|type|typing|issue|issuing"
    r"|invoke|invoking|do|doing|try|trying|add|adding|pass|passing|write|writing|push|pushing|apply|applying"
    r"|rely\s+on|resort\s+to|resorting\s+to|reach\s+for|include|including|put|perform|performing|touch"
    r"|suggest|recommend|allow|allowing|commit|committing|merge|merging|deploy|deploying|be\s+run|be\s+used)"
)
_ARTICLES = r"(?:(?:a|an|the|any|with|via|by|to)\s+)*[`\"'(]*(?:sudo\s+[`\"'(]*)?"
# The marker governs the command only when nothing but a verb and an article stands between them:
# "If the build does not pass, rm -rf ~" and "Never hesitate to run rm -rf ~" still instruct it.
_BEFORE = re.compile(
    rf"(?:^|[\s(\[*_>:\"'`-]){_MARKER}(?:\s*,[^,;\n]{{1,60}},)?(?:\s*[:,\-–—])?\s+"
    r"(?:(?:ever|even|just|simply|again|blindly|casually|manually|directly|yourself)\s+)*"
    rf"(?:{_VERB}\s+)?{_ARTICLES}$",
    re.MULTILINE,
)
_REACH = 200  # characters: "never, under any circumstances, simply run the `sudo" and more
# A command another forbidden one lists on, after a comma or a conjunction: "never use DROP TABLE or
# TRUNCATE orders". A bare space or a semicolon starts a new instruction ("never X; run Y").
_JOIN = r"(?:or|nor|and|with|using|via|by|through|like|such\s+as|e\.g\.|including|either)"
_CHAINED = re.compile(rf"[\s/`\"')]*(?:,\s*(?:{_JOIN}\s+)?|{_JOIN}\s+)(?:{_VERB}\s+)?{_ARTICLES}")
# "git push --force origin main is forbidden", "Disabling tests requires sign-off": a verdict after the command,
# in its own clause.
_SUBJECT = (r"[`\"')\s]*(?:(?!(?:if|when|unless|once|because|since|while|until|after|before|and|so|then|it|this"
            r"|that|which)\b)[\w/.-]+\s+){0,4}?")
_AFTER = re.compile(
    rf"{_SUBJECT}(?:is|are|must|should|may|can|will)\s+(?:\w+\s+)?(?:never|not|forbidden|prohibited|banned"
    r"|disallowed|off-limits|dangerous|destructive|irreversible|discouraged|frowned|unacceptable|no-go)\b"
    rf"|{_SUBJECT}(?:requires?|needs?)\s+(?:[\w'’-]+\s+){{0,3}}?(?:confirmation|approval|permission|consent"
    r"|sign-off|review)\b"
    r"|[`\"')\s]*(?:cannot|can['’]t)\s+be\s+undone\b"
    r"|[`\"')\s]*[:\-–—]+\s*(?:never|not\s+ever|forbidden|prohibited|don['’]t|do\s+not)\b"
)

# "Don'ts: git push --force origin main": a label that forbids (`lamar.safety.prohibitions`), then the command.
_LABELLED = re.compile(rf"[\s*+>-]*(?P<label>[^:\n]{{1,80}}?)\s*:\s+(?:{_VERB}\s+)?{_ARTICLES}$")
# A branch the lesson calls the agent's own: force-pushing it after a rebase overwrites no one else's work.
_OWN_BRANCH = re.compile(r"\b(?:feature|topic|pr|pull[- ]request|own|personal|private|wip|fork's)\s+branch(?:es)?\b")


def instructed_harm(text: str, *, situation: str = "") -> str | None:
    """Why `text` tells the agent to destroy what cannot be recovered, force-push over a shared branch,
    open files to every user, switch off tests, hooks or verification, send secrets off the machine
    or run code fetched from the network, or None when it tells none of these.

    A command a prohibition governs ("never", "do not", "avoid", "instead of", "... is forbidden" after
    it, a heading, lead-in or parent item such as "## Never" over its list item, or such a label opening
    its line) is not an instruction, and neither is dropping a test's schema or a table `if exists`.
    A push that names no branch overwrites the one checked out: it is named unless `text` or the
    lesson's `situation` (its precondition) calls that branch the agent's own ("your feature branch").
    Sleep marks a mined candidate this names, for the person who reviews it (docs/sleep.md).

    >>> instructed_harm("Run git push --force origin main after each fix")
    "force-pushes over a shared branch: 'git push --force origin main'"
    >>> instructed_harm("Never run git push --force origin main; open a PR instead") is None
    True
    >>> instructed_harm("Tests reset the schema with DROP SCHEMA test CASCADE") is None
    True
    """
    from lamar.safety.actions import action_matches, folded, quoted
    from lamar.safety.harm_table import CHECKED_OUT, HARMS

    said = folded(text)
    own = _OWN_BRANCH.search(said) or _OWN_BRANCH.search(folded(situation))
    found = [(m.start(), m.end(), reason, m) for reason, pattern in HARMS for m in pattern.finditer(said)]
    found += [(m.start(), m.end(), reason, m) for reason, m in action_matches(said)]
    forbidden_to = -1  # where the last forbidden command ends, for one listed after it
    labels: list[str] | None = None  # each line's forbidding heading or lead-in, read when a command is found
    row = counted = 0  # the line of the command, counted on from the last one's: the commands come in order
    for start, end, reason, match in sorted(found, key=lambda item: item[:2]):
        if "\n" in said:
            from lamar.safety.prohibitions import forbidding_labels

            # `folded` keeps the text's lines, so the original's markup says which list each command is in.
            labels = forbidding_labels(text.splitlines()) if labels is None else labels
            row, counted = row + said.count("\n", counted, start), start
            if row < len(labels) and labels[row]:
                continue
        line, stop = said.rfind("\n", 0, start) + 1, said.find("\n", end)
        labelled = _LABELLED.match(said, line, start)
        if labelled:
            from lamar.safety.prohibitions import forbids

            if forbids(labelled.group("label")):
                continue
        chained = forbidden_to >= line and _CHAINED.fullmatch(said, forbidden_to, start) is not None
        # A marker and what may stand between it and the command fit in _REACH: a lesson of many
        # commands on one line costs each its reach, not the whole line before it.
        before = _BEFORE.search(said, max(line, start - _REACH), start)
        if reason == CHECKED_OUT and own:
            continue
        if chained or before or _AFTER.match(said, end, stop if stop >= 0 else len(said)):
            forbidden_to = max(forbidden_to, end)
            continue
        return f"{reason}: {quoted(match.group(0))}"
    return None


__all__ = ["instructed_harm"]
