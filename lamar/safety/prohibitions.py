"""`forbidding_labels`: the heading, lead-in or parent item that forbids each line under it ("## Never", "Do not:",
"- **Don'ts**"), read by the rules import, `lamar add --from` and the harm screen; `forbids` is from
`lamar.safety.forbidding`."""

from __future__ import annotations

import re

from lamar.safety.forbidding import forbids, neutral

_WORD = re.compile(r"[a-z][a-z'-]*")
# The title with its closing "#"s and spaces: `forbids` and `_label` read words only, and a lazy title
# before a trailing run would rescan that run from each of its characters.
_HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*)$")
_UNDERLINE = re.compile(r"^ {0,3}(?:=+|-+)\s*$")
_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?(.*)$")
_FENCE = re.compile(r"^\s*(?:`{3,}|~{3,})")
_QUOTE = re.compile(r"^\s{0,3}(?:>\s?)+")
_BOLD = re.compile(r"(\*\*|__)[^*_]+\1:?")


def forbidding_labels(lines: list[str]) -> list[str]:
    """For each line, the label that forbids it when it is a list item or a paragraph under one, else "".

    A heading governs the items and paragraphs of its section, a lead-in that ends with a colon ("Never do
    these:") the list right after it, in place of the heading, and an item whose words are only such a label
    ("- **Never**:") the items nested under it. A paragraph is governed when it names an act as an item does
    (it opens with a verb, or with an -ing word and no verb of its own: "Exposing user ids"), not when it says
    why (a subject of its own: "These break the build"). An item or a paragraph that opens with what to do
    instead ("Always ...", "Only ...", "Instead ...", "Prefer ...") is governed by none. Code blocks are skipped.
    """
    out: list[str] = []
    section = lead = ""
    lead_said = False  # a lead-in stands between the heading and the list: its word wins, forbidding or not
    parents: list[tuple[int, str]] = []  # (indent, the label it forbids with, or "")
    previous = ""  # the prose line before, which a setext underline makes a heading
    paragraph: list[int] = []  # the lines of the paragraph being read, labelled when it ends
    fenced = False

    def settle() -> None:
        said = " ".join(lines[i] for i in paragraph)
        if paragraph and section and not lead_said and not _OFFERS.match(said.casefold()) and _names_act(said):
            out[paragraph[0]:] = [section] * len(paragraph)
        paragraph.clear()

    for raw in lines:
        line = _QUOTE.sub("", raw)
        if _FENCE.match(line):
            fenced = not fenced
        if fenced or _FENCE.match(line):
            settle()
            out.append("")
            continue
        heading = _HEADING.match(line)
        if heading or (previous and _UNDERLINE.match(line)):
            paragraph.clear()  # its last line was a heading's title (setext), or it ends here
            title = heading.group(1) if heading else previous
            section, lead, lead_said, parents, previous = _label(title) if forbids(title) else "", "", False, [], ""
            out.append("")
            continue
        item = _ITEM.match(line)
        if item:
            settle()
            indent = len(item.group(1).expandtabs(4))
            parents = [p for p in parents if p[0] < indent]
            inherited = next((label for _, label in reversed(parents) if label), "")
            offers = _OFFERS.match(item.group(2).casefold())
            out.append("" if offers else inherited or (lead if lead_said else section))
            parents.append((indent, _label(item.group(2)) if forbids(item.group(2)) else ""))
            previous = ""
            continue
        if not line.strip():
            settle()
            out.append("")
            previous = ""
            continue
        if parents and line[:1].isspace():  # an item's next line
            out.append(out[-1] if out else "")
            continue
        if not paragraph:
            lead, lead_said = "", False  # a paragraph after a lead-in's list is no lead-in
        parents, previous = [], line.strip()
        paragraph.append(len(out))
        # A lead-in ends with a colon; a line all in bold ("**Never**", "**Never:**") stands for a heading.
        if line.rstrip().rstrip("*_").endswith(":") or _BOLD.fullmatch(previous):
            lead, lead_said = (_label(line), True) if forbids(line) else ("", not neutral(line))
            paragraph.clear()  # what leads in to a list names no act of its own
        out.append("")
    settle()
    return out


def opens_forbidding(text: str) -> bool:
    """Whether a rule's own words open with a prohibition ("Never ...", "**Don't** ...", "Avoid ...").

    >>> opens_forbidding("**Never** push to main"), opens_forbidding("Push to main without review")
    (True, False)
    """
    return bool(_OPENS.match(text.casefold().replace("’", "'")))


_OPENS = re.compile(r"^[\s*_`>~\[\]()!-]*(?:never|don't|dont|do\s+not|avoid|no\b|not\b|must\s+not|mustn't"
                    r"|stop|refrain|forbidden|prohibited|under\s+no\s+circumstances)")


# What to do instead opens with its own word: under "## Never", "Always open a PR" is no prohibition.
_OFFERS = re.compile(r"^[\s*_`>~\[\]()!-]*(?:always|only|instead|rather|prefer)\b")
# A verb after an -ing word that opens a sentence makes it the subject: "Breaking them means a revert" says why.
_VERB_AFTER = re.compile(r"\b(?:is|are|was|were|means|has|have|had|will|would|can|could|may|might|should|must"
                         r"|does|did|causes|breaks|leads|makes|costs|takes)\b")


def _names_act(text: str) -> bool:
    """Whether a paragraph names an act as a list item under "## Never" does: its first word is a verb (as
    `lamar.sentence` tells one), or an -ing word with no verb after it."""
    from lamar.sentence import opens_with_verb

    words = _WORD.findall(text.casefold())
    if words and words[0].endswith("ing") and len(words[0]) > 4:
        return not _VERB_AFTER.search(text.casefold())
    return bool(words) and words[0] not in ("note", "see") and opens_with_verb(text.lstrip("*_`~ "))


def _label(text: str) -> str:
    """A label as a lesson carries it: its words without emphasis, emoji or the closing colon."""
    return " ".join(re.sub(r"[^\w\s'’-]", " ", text).split()).strip(" -")


__all__ = ["forbidding_labels", "forbids", "opens_forbidding"]
