"""An event's data text: computed once, checked for every backend, kept by its stored copy."""

from __future__ import annotations

import json
import math

import pytest

from lamar import InvalidEvent
from lamar.store.base import Event, check_appendable


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
