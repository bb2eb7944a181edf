"""Which lines of a Markdown file are inside a fenced code block, as CommonMark reads them: the one
reading both the rules parser and the `@path` import reader use, so they never disagree."""

from __future__ import annotations

import re

_FENCE = re.compile(r"(`{3,}|~{3,})(.*)$")  # an info string may follow the opening fence, never the closing one
_ITEM = re.compile(r"([-*+]|\d{1,9}[.)])([ \t]+|$)")
_TAB = 4  # CommonMark: a tab in indentation moves to the next multiple of four columns
_HEADING = re.compile(r"#{1,6}(?:[ \t]|$)")
_QUOTES = re.compile(r"(?: {0,3}> ?)*")  # block quote markers, each with the space after it that belongs to it


def unquoted(line: str) -> str:
    """`line` without its block quote markers ("> > - Never push" -> "- Never push"): what is quoted
    is Markdown all the same, with its lists and its fences."""
    found = _QUOTES.match(line)  # one match, not one per marker: each cut would copy the rest of the line
    return line[found.end():] if found else line


class Fences:
    """Told each line in turn, says whether it belongs to a fenced code block (its fences included).

    CommonMark's rules: a run of at least three backticks or tildes indented at most three spaces
    (tabs count to the next multiple of four) past the margin of the list item it is in opens a
    block; a backtick fence's info string holds no backtick. A run of the same character, as long
    or longer, indented at most three spaces, with nothing after it but spaces and tabs, closes it;
    so does the end of the list item holding it (a line indented less than the item's text).
    A fence indented four columns or more past that margin, after a blank line, a heading or a
    block, is shown in an indented code block, which holds the lines indented as far after it
    (an indented list is left to the rules: an agent reads it as one).
    """

    def __init__(self) -> None:
        self.fence = ""  # the opening run while inside a block
        self._margin = 0  # the column the open block's list item starts its text at
        self._items: list[int] = []  # the text columns of the list items the line may belong to
        self._open = True  # no paragraph goes on at this line: an indented one starts code (or goes on with it)
        self._shown = False  # inside an indented code block that shows a fence

    def code(self, line: str) -> bool:
        """Whether `line` (the next line of the file) is part of a fenced code block."""
        text = line.lstrip(" \t")
        column = len(line[: len(line) - len(text)].expandtabs(_TAB))
        if not text.strip():
            self._open = self._open or not self.fence
            return bool(self.fence)  # a blank line neither opens, closes nor ends a list item
        if self.fence and column >= self._margin:
            found = _FENCE.match(text)
            if (column - self._margin <= 3 and found and found.group(1)[0] == self.fence[0]
                    and len(found.group(1)) >= len(self.fence) and not found.group(2).strip(" \t")):
                self.fence, self._open = "", True
            return True
        self.fence = ""  # the list item holding the block ended, and the block with it
        while self._items and column < self._items[-1]:
            self._items.pop()
        margin = self._items[-1] if self._items else 0
        if self._open and column - margin >= 4 and (self._shown or _FENCE.match(text)):
            self._shown = True  # a paragraph's lazy line is not code, hence `_open`
            return True
        self._shown = False
        self._open = bool(_HEADING.match(text)) if column - margin <= 3 else False
        item = _ITEM.match(text) if column - margin <= 3 else None
        if item:
            after = len(item.group(2).expandtabs(_TAB))
            gap = after if 1 <= after <= 4 and text[item.end():].strip() else 1
            margin = column + len(item.group(1)) + gap
            self._items.append(margin)
            text, column = text[item.end():], margin
        found = _FENCE.match(text) if column - margin <= 3 else None
        if found and not (found.group(1)[0] == "`" and "`" in found.group(2)):
            self.fence, self._margin = found.group(1), margin
            return True
        return False


__all__ = ["Fences", "unquoted"]
