"""Decoding a log's event texts: the episodes of one selection differ in their id alone, so the
rest of each text is decoded once per distinct text and copied for every event that shares it."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import json
from collections.abc import Iterator
from typing import Any

# The one member (a string) that differs between otherwise equal events of a kind.
_VARYING = {"episode": "id", "outcome": "episode"}
_SCALARS = (str, int, float, bool, type(None))
_UNMET = object()  # a rest not met before
MEMO_LIMIT = 4096  # distinct rests kept; past it, a text whose rest is not among them is decoded whole


@dataclasses.dataclass(frozen=True)
class Spelling:
    """How a store writes an event's data: the `json.dumps` options it uses."""

    separators: tuple[str, str]
    sort_keys: bool
    ensure_ascii: bool

    def dumps(self, value: Any) -> str:
        return json.dumps(value, separators=self.separators, sort_keys=self.sort_keys, ensure_ascii=self.ensure_ascii)

    def member(self, name: str) -> str:
        """How a member named `name` opens."""
        return f'"{name}"{self.separators[1]}'


COMPACT = Spelling((",", ":"), True, True)  # `Event.data_json`: SQLite and PostgreSQL store this
SPACED = Spelling((", ", ": "), False, False)  # a JSON store's line, data in the order it was built


class EventDecoder:
    """`json.loads` of event data texts, for one read of a log.

    An episode's text is its slate and context plus its id. The decoder takes the id's value out
    of the text (an empty string in its place), decodes the rest once, and gives each event a
    copy of it with the id put back, so that no two events share a list or a dict. It decodes the
    whole text instead unless the rest is spelt as the store writes it (`spelling`), names the id
    exactly once, at the top, and nests no deeper than one level of lists and objects of plain
    values; either way the result equals `json.loads(text)`. A read whose
    contexts never repeat fills its memory of rests early, and then stops looking for them.
    """

    def __init__(self, spelling: Spelling = COMPACT) -> None:
        self._spelling = spelling
        # A rest's decoded form and the keys that hold a list or an object (copied per event);
        # None for a rest that fails those checks.
        self._rests: dict[str, tuple[dict[str, Any], tuple[str, ...]] | None] = {}
        self._tried = 0  # texts that looked for their rest
        self._shortcut = True  # False once rests turned out to repeat too rarely to pay

    def __call__(self, kind: str, text: str) -> Any:
        split = split_varying(kind, text, self._spelling) if self._shortcut else None
        if split is None:
            return json.loads(text)
        name, value, rest = split
        self._tried += 1
        if rest in self._rests:
            known = self._rests[rest]
        elif len(self._rests) < MEMO_LIMIT:
            known = self._rests[rest] = shape_of(rest, name, self._spelling)
        else:
            # Full, and most texts so far brought a new rest (contexts that never repeat): looking
            # costs more than it saves, so the rest of this read decodes every text whole.
            self._shortcut = self._tried > 2 * MEMO_LIMIT
            return json.loads(text)
        if known is None:
            return json.loads(text)
        shape, containers = known
        data = shape.copy()
        for key in containers:
            data[key] = data[key].copy()
        data[name] = value
        return data


class Repeats:
    """One read's memory of episode and outcome texts that differ only in their varying member:
    the reader decodes and checks the first text of each rest, files it, and keeps what filing it
    took (`keep`); a later text with the same rest is filed as that one was (`seen`), undecoded.
    A kind whose texts never repeat (a session id in each context) stops being looked up."""

    def __init__(self) -> None:
        # rest -> what filing it took; None for a rest that cannot stand for its texts (`shape_of`)
        self._memos: dict[str, dict[str, Any]] = {"episode": {}, "outcome": {}}
        self._misses = dict.fromkeys(self._memos, 0)
        self._unmet: tuple[str, str, str] | None = None  # (kind, name, rest) of the text last looked up

    def seen(self, kind: str, text: str) -> tuple[str, Any] | None:
        """(its varying value, what filing its rest took) for a text met before; None for any other
        text, which the reader decodes, files, then passes to `keep`."""
        self._unmet = None
        memo = self._memos.get(kind)
        split = None if memo is None else split_varying(kind, text)
        if memo is None or split is None:
            return None
        name, value, rest = split
        known = memo.get(rest, _UNMET)
        if known is _UNMET:
            self._unmet = (kind, name, rest)
            return None
        return None if known is None else (value, known)

    @property
    def waiting(self) -> bool:
        """Whether the text `seen` last looked up was not met before: `keep` what filing it took."""
        return self._unmet is not None

    def keep(self, filed: Any) -> None:
        """Keep `filed`, what filing the text `seen` last did not meet took, for the later texts of
        its rest (when that rest can stand for them)."""
        if self._unmet is None:
            return
        kind, name, rest = self._unmet
        self._unmet = None
        memo = self._memos[kind]
        if len(memo) < MEMO_LIMIT:
            memo[rest] = filed if shape_of(rest, name) is not None else None
            return
        self._misses[kind] += 1
        if self._misses[kind] > MEMO_LIMIT:
            del self._memos[kind]  # texts that never repeat: looking costs more than it saves


def split_varying(kind: str, text: str, spelling: Spelling = COMPACT) -> tuple[str, str, str] | None:
    """(the varying member's name, its value, the text with that value emptied) for an episode or
    an outcome whose value is a plain string; None for any other text. The rest is a key to the
    text's other members only where `shape_of` accepts it."""
    name = _VARYING.get(kind)
    if name is None:
        return None
    opening = spelling.member(name) + '"'
    # A raw quote is never inside a string, so `"id":"` in valid JSON is a member named id
    # with a string value. The value holds no quote, backslash or control character, so
    # emptying it changes one string's content only: the rest is valid exactly when the text is.
    begin = text.find(opening) + len(opening)
    end = text.find('"', begin)
    value = text[begin:end]
    if begin < len(opening) or end < 0 or "\\" in value or not value.isprintable():
        return None
    return name, value, text[:begin] + text[end:]


def shape_of(rest: str, name: str, spelling: Spelling = COMPACT) -> tuple[dict[str, Any], tuple[str, ...]] | None:
    """The decoded rest and its keys that hold a container, if the checks in `EventDecoder` hold
    for it (then every text with this rest decodes to it, its member `name` set); None otherwise."""
    try:
        shape = json.loads(rest)
    except ValueError:
        return None  # so is the text: decoding it whole raises the error
    # Spelt as the store spells it, the rest writes every key as `"key":`, so counting that
    # spelling counts the members named `name` at any depth.
    if not (isinstance(shape, dict) and shape.get(name) == "" and rest.count(spelling.member(name)) == 1
            and _flat(shape) and spelling.dumps(shape) == rest):
        return None
    return shape, tuple(key for key, item in shape.items() if isinstance(item, (dict, list)))


def _flat(shape: dict[str, Any]) -> bool:
    """Whether every list or object in `shape` holds scalars only (so a one-level copy is whole)."""
    for item in shape.values():
        if isinstance(item, dict):
            if not all(isinstance(inner, _SCALARS) for inner in item.values()):
                return False
        elif isinstance(item, list):
            if not all(isinstance(inner, _SCALARS) for inner in item):
                return False
        elif not isinstance(item, _SCALARS):
            return False
    return True


@contextlib.contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Pause the cycle collector while a whole log is decoded or folded: that builds hundreds of
    thousands of objects that hold no cycle, and each full collection on the way would walk
    every one of them again."""
    enabled = gc.isenabled()  # left off if someone else had turned it off
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
