"""`storable_problem`: why a value cannot be written to every store backend, or None."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeGuard

from lamar._errors import a_or_an

MAX_DEPTH = 64
MAX_TIME = 32_503_680_000.0  # the year 3000: a later "time" is a unit mistake (ms, us, ns)
_LONE = re.compile("[\ud800-\udfff]")  # once json.loads has joined the pairs, only lone halves are left


def text_problem(text: str) -> str | None:
    """Why a string cannot be stored, or None."""
    if "\x00" in text:
        return "holds a NUL character (PostgreSQL's jsonb cannot store it): remove it"
    try:
        text.encode("utf-8")  # in C: fast on the hot path (every append is checked)
    except UnicodeEncodeError:
        return "holds a lone surrogate (not valid Unicode, so not valid UTF-8): decode the text properly"
    return None


def without_lone_surrogates(value: Any) -> Any:
    """`value` (JSON as `json.loads` returns it) with every lone surrogate in its strings, keys
    included, replaced by U+FFFD: JSON may spell one ("\\udc00"), which UTF-8 cannot hold.

    >>> without_lone_surrogates({"s\\udc00": ["caf\\udce9", 1]})
    {'s\ufffd': ['caf\ufffd', 1]}
    """
    if isinstance(value, str):
        return _LONE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {without_lone_surrogates(key): without_lone_surrogates(item) for key, item in value.items()}
    if isinstance(value, list):
        return [without_lone_surrogates(item) for item in value]
    return value


def storable_problem(value: Any, depth: int = 0) -> str | None:
    """Why `value` cannot be stored as JSON by every backend, or None when it can.

    Every backend keeps events as JSON (PostgreSQL as `jsonb`, which has no NUL character), so a
    value is storable when it is JSON made of strings without NUL or lone surrogates, finite
    numbers, booleans, None, lists and string-keyed mappings, and not nested absurdly deep.

    >>> storable_problem({"source": "manual", "traces": ["t1", "t2"]}) is None
    True
    >>> storable_problem({"score": float("nan")})
    'holds a number that is not finite (nan)'
    >>> storable_problem(10**400)
    'holds an integer too large to store (1329 bits)'
    """
    if depth > MAX_DEPTH:
        return f"is nested more than {MAX_DEPTH} levels deep"
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return text_problem(value)
    if isinstance(value, int):
        if abs(value) < 2**63:
            return None
        # Past a float's range `:g` itself overflows, and past 4 300 digits so does `str`.
        size = f"{value:.3g}" if value.bit_length() <= 1023 else f"{value.bit_length()} bits"
        return f"holds an integer too large to store ({size})"
    if isinstance(value, float):
        return None if math.isfinite(value) else f"holds a number that is not finite ({value})"
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"has a key that is not a string ({type(key).__name__})"
            problem = text_problem(key) or storable_problem(item, depth + 1)
            if problem:
                return problem
        return None
    if isinstance(value, (list, tuple)):
        for item in value:
            problem = storable_problem(item, depth + 1)
            if problem:
                return problem
        return None
    return f"holds {a_or_an(type(value).__name__)}, which is not JSON (use strings, numbers, lists and dicts)"


def storable_copy(value: Any, text: Callable[[str], str] | None = None) -> Any:
    """A copy of a storable value that shares no mapping or list with it (tuples become lists, as
    JSON reads them back), with `text` applied to every string in it but the keys when given.

    >>> original = {"traces": ["t1"]}
    >>> copied = storable_copy(original)
    >>> original["traces"].append("t2"); copied, storable_copy(original, str.upper)
    ({'traces': ['t1']}, {'traces': ['T1', 'T2']})
    """
    if text is not None and isinstance(value, str):
        return text(value)
    if isinstance(value, Mapping):
        return {key: storable_copy(item, text) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [storable_copy(item, text) for item in value]
    return value


def finite_number(value: Any) -> bool:
    """Whether `value` is a real number a float holds finitely (not a bool, NaN, an infinity, or an
    int too large for a float, on which `math.isfinite` itself raises OverflowError).

    >>> [finite_number(v) for v in (3, 0.5, True, float("nan"), 10**400, "1")]
    [True, True, False, False, False, False]
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def whole_number(value: Any, *, low: int | None = None, high: int | None = None) -> TypeGuard[int]:
    """Whether `value` is an int from `low` to `high` (inclusive, each optional): not a bool, which
    Python counts as an int, and not a float such as 3.0.

    >>> [whole_number(v) for v in (3, -2, True, 3.0, "3", None)]
    [True, True, False, False, False, False]
    >>> [whole_number(v, low=1, high=3) for v in (0, 1, 3, 4)]
    [False, True, True, False]
    """
    if isinstance(value, bool) or not isinstance(value, int):
        return False
    return (low is None or value >= low) and (high is None or value <= high)


def time_problem(value: Any) -> str | None:
    """Why `value` is not a usable unix time in seconds, or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"is not a number ({type(value).__name__})"
    if not finite_number(value) or not 0.0 <= value <= MAX_TIME:
        return f"is {value!r}, not a unix time in seconds between 1970 and 3000"
    return None


__all__ = ["MAX_TIME", "finite_number", "storable_copy", "storable_problem", "text_problem", "time_problem",
           "whole_number", "without_lone_surrogates"]
