"""An event's data text: computed once, checked for every backend, kept by its stored copy."""

from __future__ import annotations

import json
import math
import random

import pytest

from lamar import InvalidEvent
from lamar.storable import storable_problem
from lamar.store.appendable import check_appendable
from lamar.store.base import Event


@pytest.mark.parametrize("data", [
    {"text": "lone \ud800 surrogate"},
    {"nested": [{"deep": "\udfff"}]},
    {"score": math.inf},
    {"score": -math.inf},
    {"score": math.nan},
    {"text": "a NUL \x00 inside"},
    {"key \x00": 1},
])
def test_data_no_backend_can_store_is_refused(data: dict) -> None:
    with pytest.raises(InvalidEvent, match="nothing was written"):
        check_appendable([Event("status", data)])


@pytest.mark.parametrize(("value", "size"), [(2**63, "9.22e+18"), (10**400, "1329 bits"), (-(10**5000), "16610 bits")],
                         ids=["2**63", "10**400", "-10**5000"])
def test_an_integer_too_large_is_named_without_overflowing(value: int, size: str) -> None:
    # Formatting it with :g overflows past a float's range, and str() past 4 300 digits.
    assert storable_problem({"count": [value]}) == f"holds an integer too large to store ({size})"


@pytest.mark.parametrize("key", ["k\ud800", "k\x00"])
def test_a_key_no_backend_can_store_is_refused(key: str) -> None:
    with pytest.raises(InvalidEvent, match="nothing was written"):
        check_appendable([Event("status", {"id": "a"}, key=key)])


@pytest.mark.parametrize("data", [
    {"text": "NaN and Infinity are words"},  # spelled in a string, not numbers
    {"text": "an emoji \U0001F600 is a surrogate pair once escaped"},
    {"text": "a backslash-u0000 written out: \\u0000"},
    {"text": "\\ud800 written out"},
    {"score": 1e308, "n": -3},
])
def test_storable_data_that_looks_suspicious_in_its_escaped_text_is_accepted(data: dict) -> None:
    event = Event("status", data, key="k")
    check_appendable([event])
    assert json.loads(event.data_json()) == data


def test_a_bad_time_is_refused_even_where_the_data_looked_suspicious() -> None:
    with pytest.raises(InvalidEvent, match="its time"):
        check_appendable([Event("status", {"text": "NaN"}, time=-5.0)])


def test_the_data_text_is_computed_once_and_kept_by_the_numbered_copy() -> None:
    event = Event("status", {"b": 1, "a": [1.5, "x"]}, key="k", time=12.5)
    text = event.data_json()
    assert text == '{"a":[1.5,"x"],"b":1}'  # compact, keys sorted: what every backend writes
    assert event.data_json() is text
    stored = event.numbered(7)
    assert (stored.seq, stored.kind, stored.key, stored.time, stored.data) == (7, "status", "k", 12.5, event.data)
    assert stored.data_json() is text
    assert stored == Event("status", {"b": 1, "a": [1.5, "x"]}, key="k", seq=7, time=12.5)  # the cache is no field


_PIECES = ["a", "é", "\x00", "\ud800", "\udfff", "\U0001F600", "\\", "u0000", "\\u0000", "NaN", "Infinity",
           '"', "\n", " "]


def _value(rng: random.Random, depth: int = 0) -> object:
    roll = rng.random()
    if depth < 3 and roll < 0.25:
        return {"".join(rng.choices(_PIECES, k=rng.randrange(3))): _value(rng, depth + 1)
                for _ in range(rng.randrange(3))}
    if depth < 3 and roll < 0.4:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(3))]
    if roll < 0.55:
        return rng.choice([math.nan, math.inf, -math.inf, 0.5, -1e308, 2**62, 3, True, None])
    return "".join(rng.choices(_PIECES, k=rng.randrange(5)))


@pytest.mark.parametrize("seed", range(5))
def test_the_fast_check_refuses_exactly_what_the_walk_refuses(seed: int) -> None:
    """The check reads the escaped text and walks the data only where that text looks suspicious:
    on 400 random events of strings made of NULs, surrogates, backslashes, spelled NaN and the
    like, it refuses exactly those the walk (`storable_problem`) or strict JSON refuses. (An
    integer beyond 64 bits, which the walk names, passes the check, as it did before the check
    read the sent text: no integer here is that large.)"""
    rng = random.Random(seed)
    for _ in range(400):
        data = {"v": _value(rng)}
        key = rng.choice([None, "k", "k\x00", "k\ud800", "k\\u0000"])
        event = Event("status", data, key=key)
        expected = storable_problem(["status", key, data]) is None and _strict_json(event)
        try:
            check_appendable([event])
            refused = False
        except InvalidEvent:
            refused = True
        assert refused is not expected, (key, data)


def _strict_json(event: Event) -> bool:
    try:
        json.dumps([event.kind, event.key, event.data], allow_nan=False)
        event.data_json()
    except (TypeError, ValueError):
        return False
    return True
