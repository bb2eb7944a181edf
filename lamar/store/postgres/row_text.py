"""A fold-mode lesson row's text: read on every recall and written on every fold, so a fleet pays
for its codec on each episode (docs/postgres.md, "The rows' text")."""

from __future__ import annotations

import base64
import json
import operator
import struct
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from lamar.experience import Experience
from lamar.policy.change import ChangeDetector
from lamar.policy.features import Slice, Slices
from lamar.policy.history import UNKNOWN, History
from lamar.policy.ledger import Ledger
from lamar.policy.lesson import LessonState
from lamar.policy.selection import ArmStats

# A row is two lines:
#
#     {"id": ..., "precondition": ...}            the lesson: `Experience.to_dict` as JSON
#     ["qdd...", "<base64>", [[key, value], ...], {key: count}, inherited]
#
# The first line changes only with the lesson, so a reader that has parsed it once compares text.
# The second holds every number of the state packed, each as its slot holds it (`q`: a 64-bit
# int, `d`: a double, bit for bit, so a row decodes to the state that was encoded, types and all),
# then the slices' names, the distinct values seen per free key, and the inherited alpha divisor.
# In slot order: the arms, the ledger, the detector, the counts, then each slice's arms and ledger.
# A state holding anything else where a number belongs (none does) is written in the JSON form,
# which is always read: one object, `LessonState.to_dict` without the history.

# how many numbers each record packs
_ARMS, _LEDGER, _DETECTOR = len(ArmStats.__slots__), len(Ledger.__slots__), len(ChangeDetector.__slots__)
_DETECTOR_BEFORE = 8  # a row written before the detector's second statistic: it starts at rest
_SLICE = _ARMS + _LEDGER
_COUNTS = LessonState._COUNTS
_counts = operator.attrgetter(*_COUNTS)  # the counts in order, read in one call
_CODES = {int: "q", float: "d"}


def lesson_text(experience: Experience) -> str:
    """A row's first line: the lesson as JSON."""
    return json.dumps(experience.to_dict(), separators=(",", ":"))


def encode(state: LessonState, lesson: str) -> str:
    """`state` as a row's text; `lesson` is `lesson_text(state.experience)` (a writer keeps it
    while the lesson does not change)."""
    slices = state.slices
    numbers = [*ArmStats.values(state.arms), *Ledger.values(state.ledger), *ChangeDetector.values(state.detector),
               *_counts(state)]
    for part in slices.slices.values():
        numbers += [*ArmStats.values(part.arms), *Ledger.values(part.ledger)]
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
    numbers = _layout(codes).unpack(base64.b64decode(packed))
    state = LessonState.bare(experience(lesson))
    detector = _DETECTOR
    if len(numbers) == _ARMS + _LEDGER + _DETECTOR_BEFORE + len(_COUNTS) + _SLICE * len(names):
        detector = _DETECTOR_BEFORE
    at = _ARMS + _LEDGER + detector
    state.arms, state.ledger = ArmStats.filled(numbers[:_ARMS]), Ledger.filled(numbers[_ARMS:_ARMS + _LEDGER])
    state.detector = ChangeDetector.filled([*numbers[_ARMS + _LEDGER:at], *[0.0] * (_DETECTOR - detector)])
    for name, number in zip(_COUNTS, numbers[at:at + len(_COUNTS)], strict=True):
        setattr(state, name, number)
    at += len(_COUNTS)
    state.history = History()  # a row keeps none (`stored`), nor when the lesson was last chosen
    state.history.chosen = state.history.fell = UNKNOWN
    slices = state.slices = Slices()
    for key, value in names:
        part = slices.slices[(key, value)] = Slice.__new__(Slice)
        part.arms, part.ledger = ArmStats.filled(numbers[at:at + _ARMS]), Ledger.filled(numbers[at + _ARMS:at + _SLICE])
        at += _SLICE
    if at != len(numbers):
        raise ValueError(f"a row packs {len(numbers)} numbers where its slots take {at}")
    slices.values, slices.inherited = values, inherited
    return state


def stored(state: LessonState) -> dict[str, Any]:
    """`LessonState.to_dict` without the lesson's history: what a row holds. The history (what
    `lamar show` draws) comes from a fold of the log, which alone knows every outcome's seq and
    every recall's counts (docs/postgres.md)."""
    data = state.to_dict()
    del data["history"]
    return data


@lru_cache(maxsize=64)
def _layout(codes: str) -> struct.Struct:
    """The packing of one sequence of types (rows with as many slices share it)."""
    return struct.Struct("<" + codes)


__all__ = ["decode", "encode", "lesson_text", "stored"]
