"""A fold-mode lesson row's text: read on every recall and written on every fold, so a fleet pays
for its codec on each episode (docs/postgres.md, "The rows' text").

A row is two lines:

    {"id": ..., "precondition": ...}            the lesson: `Experience.to_dict` as JSON
    ["qdd...", "<base64>", [[key, value], ...], {key: count}, inherited]

The first line changes only with the lesson, so a reader that has parsed it once compares text.
The second holds every number of the state packed, each as its slot holds it (`q`: a 64-bit
int, `d`: a double, bit for bit, so a row decodes to the state that was encoded, types and all),
then the slices' names, the distinct values seen per free key, and the inherited alpha divisor.
In slot order: the arms, the ledger, the detector, the counts, then each slice's arms and ledger.

A state holding anything else where a number belongs (none does today) is written as the
original form, which is still read: one JSON object, `LessonState.to_dict` without the history,
as schema versions up to 6 wrote every row.
"""

from __future__ import annotations

import base64
import json
import operator
import struct
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar

from lamar.experience import Experience
from lamar.policy.change import ChangeDetector
from lamar.policy.features import Slice, Slices
from lamar.policy.ledger import Ledger
from lamar.policy.lesson import LessonState
from lamar.policy.record import SlotRecord
from lamar.policy.selection import ArmStats

_ARMS, _LEDGER, _DETECTOR = ArmStats.__slots__, Ledger.__slots__, ChangeDetector.__slots__
_COUNTS = LessonState._COUNTS
# each record's numbers in slot order, read in one call
_arms, _ledger, _detector, _counts = (operator.attrgetter(*slots) for slots in (_ARMS, _LEDGER, _DETECTOR, _COUNTS))
_CODES = {int: "q", float: "d"}
_R = TypeVar("_R", bound=SlotRecord)


def lesson_text(experience: Experience) -> str:
    """A row's first line: the lesson as JSON."""
    return json.dumps(experience.to_dict(), separators=(",", ":"))


def encode(state: LessonState, lesson: str) -> str:
    """`state` as a row's text; `lesson` is `lesson_text(state.experience)` (a writer keeps it
    while the lesson does not change)."""
    slices = state.slices
    numbers = [*_arms(state.arms), *_ledger(state.ledger), *_detector(state.detector), *_counts(state)]
    for part in slices.slices.values():
        numbers += [*_arms(part.arms), *_ledger(part.ledger)]
    try:
        codes = "".join([_CODES[type(n)] for n in numbers])
        packed = _layout(codes).pack(*numbers)
    except (KeyError, struct.error):  # not a plain int or float, or an int beyond 64 bits
        return json.dumps(stored(state), separators=(",", ":"))
    names = [[key, value] for key, value in slices.slices]
    tail = [codes, base64.b64encode(packed).decode("ascii"), names, slices.values, slices.inherited]
    return lesson + "\n" + json.dumps(tail, separators=(",", ":"))


def decode(text: str, experience: Callable[[str], Experience]) -> LessonState:
    """The state a row's text holds; `experience(line)` parses the lesson's line (or returns the
    one parsed before from that same text)."""
    lesson, packed_form, tail = text.partition("\n")
    if not packed_form:  # the original form: one JSON object (JSON text holds no line break)
        data = json.loads(text)
        return LessonState.from_dict(data, experience(json.dumps(data["experience"])))
    codes, packed, names, values, inherited = json.loads(tail)
    numbers = iter(_layout(codes).unpack(base64.b64decode(packed)))
    state = LessonState(experience(lesson))
    state.arms, state.ledger = _filled(ArmStats, numbers), _filled(Ledger, numbers)
    state.detector = _filled(ChangeDetector, numbers)
    for name in _COUNTS:
        setattr(state, name, next(numbers))
    slices = state.slices = Slices()
    for key, value in names:
        part = slices.slices[(key, value)] = Slice.__new__(Slice)
        part.arms, part.ledger = _filled(ArmStats, numbers), _filled(Ledger, numbers)
    slices.values, slices.inherited = values, inherited
    return state


def stored(state: LessonState) -> dict[str, Any]:
    """`LessonState.to_dict` without the lesson's history: what a row holds. The history (what
    `lamar show` draws) comes from a fold of the log, which alone knows every outcome's seq and
    every recall's counts (docs/postgres.md)."""
    data = state.to_dict()
    del data["history"]
    return data


def _filled(cls: type[_R], numbers: Any) -> _R:
    record = cls.__new__(cls)
    for name in cls.__slots__:
        setattr(record, name, next(numbers))
    return record


@lru_cache(maxsize=64)
def _layout(codes: str) -> struct.Struct:
    """The packing of one sequence of types (rows with as many slices share it)."""
    return struct.Struct("<" + codes)


__all__ = ["decode", "encode", "lesson_text", "stored"]
