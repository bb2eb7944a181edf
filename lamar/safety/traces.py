"""`scrub_trace`: scrub every string of a sleep trace, returning a cleaned copy of the same kind."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any, TypeVar

from lamar.safety.secrets import PLACEHOLDER, is_placeholder, scrub, secret_key_kind

T = TypeVar("T")

# A recall asks of each of its context's keys, which are few and come back turn after turn.
_key_kind = functools.lru_cache(maxsize=4096)(secret_key_kind)


def scrub_trace(trace: T) -> tuple[T, list[str]]:
    """Scrub every string in a sleep trace (input, attempted, tool_errors, output, context, metadata).

    Args:
        trace: a trace as a dict, or an object with `to_dict()` (such as `lamar.sleep.traces.Trace`).

    Returns:
        A cleaned copy of the same kind (the input is not modified) and the kinds found.
        Mapping keys are kept as they are; every string value, however deeply nested, is scrubbed.

    Raises:
        TypeError: `trace` is neither a mapping nor has `to_dict()`.

    >>> scrub_trace({"id": "t1", "context": {}, "input": "token=ghp_0123456789abcdefghijABCDEFGHIJ012345"})
    ({'id': 't1', 'context': {}, 'input': 'token=[REDACTED:github-token]'}, ['github-token'])
    """
    kinds: list[str] = []
    if isinstance(trace, Mapping):
        return _scrub_value(trace, kinds), kinds
    to_dict = getattr(trace, "to_dict", None)
    if not callable(to_dict):
        raise TypeError(f"scrub_trace() takes a dict or an object with to_dict(); got {type(trace).__name__}")
    data = to_dict()
    cleaned = _scrub_value(data, kinds)
    if not kinds:
        return trace, kinds
    from_dict = getattr(type(trace), "from_dict", None)
    if callable(from_dict):
        return from_dict(cleaned), kinds
    if dataclasses.is_dataclass(trace):
        names = {f.name for f in dataclasses.fields(trace) if f.init}
        changes = {k: v for k, v in cleaned.items() if k in names and v != data.get(k)}
        return dataclasses.replace(trace, **changes), kinds  # type: ignore[type-var]
    raise TypeError(f"{type(trace).__name__} has to_dict() but no from_dict() to rebuild a scrubbed copy")


def secret_by_key(key: str, value: str) -> str | None:
    """The kind of secret a mapping entry's value is by its key alone ({"password": "hunter2"},
    though "hunter2" alone is none), or None."""
    kind = _key_kind(key)
    if kind is None or is_placeholder(value) or (kind != "password" and value.isdigit() and len(value) <= 10):
        return None
    return kind


def _scrub_entry(key: Any, value: Any, kinds: list[str]) -> Any:
    """A mapping entry: its value scrubbed, or replaced whole where its key makes it a secret."""
    cleaned = _scrub_value(value, kinds)
    if not isinstance(key, str) or not isinstance(cleaned, str) or cleaned != value:
        return cleaned
    kind = secret_by_key(key, value)
    if kind is None:
        return cleaned
    if kind not in kinds:
        kinds.append(kind)
    return PLACEHOLDER.format(kind=kind)


def _scrub_value(value: Any, kinds: list[str]) -> Any:
    if isinstance(value, str):
        cleaned, found = scrub(value)
        kinds.extend(k for k in found if k not in kinds)
        return cleaned
    if isinstance(value, Mapping):
        return {key: _scrub_entry(key, item, kinds) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrub_value(item, kinds) for item in value]
    if isinstance(value, tuple):
        return tuple(_scrub_value(item, kinds) for item in value)
    return value
