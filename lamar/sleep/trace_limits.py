"""How much of a trace `TraceWriter` keeps: each text field and each line capped, scrubbed past the cut."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from lamar._errors import InvalidArgument, InvalidTrace
from lamar.storable import storable_copy, whole_number

MAX_FIELD_CHARS = 4_000
"""Characters kept of each text in a trace; mining shows at most the first 1 500 of one."""
MAX_LINE_BYTES = 500_000
"""Bytes of one trace line: room for mining's first 40 actions and 40 tool errors at full length."""
CLIPPED = " [...clipped]"
_LISTS = ("attempted", "tool_errors")
_MARKER_BYTES = 32  # the most a "[...N more clipped]" item adds to a line, comma included


def clip_text(text: str, limit: int = MAX_FIELD_CHARS) -> str:
    """`text` cut to at most `limit` characters, ending in " [...clipped]" when cut.

    What a cut leaves of a credential is too short for a scrubber to recognise, so a text that is
    cut is scrubbed first, reading past the cut as far as a credential can reach.

    >>> clip_text("token ghp_" + "a1B2c3D4e5" * 4 + " then the build failed", 30)
    'token [REDACTED:g [...clipped]'
    """
    if len(text) <= limit:
        return text
    from lamar.safety.secrets import scrub_head

    cleaned = scrub_head(text, limit)[0]
    return cleaned if len(cleaned) <= limit else cleaned[:limit - len(CLIPPED)] + CLIPPED


def check_limits(max_field_chars: Any, max_line_bytes: Any) -> None:
    """Raise InvalidArgument unless both limits are whole numbers a trace fits in."""
    if not whole_number(max_field_chars, low=100):
        raise InvalidArgument(f"max_field_chars must be a whole number of at least 100; got {max_field_chars!r}")
    if not whole_number(max_line_bytes, low=1_000):
        raise InvalidArgument(f"max_line_bytes must be a whole number of at least 1000; got {max_line_bytes!r}")


def bounded(data: Mapping[str, Any], max_field_chars: int, max_line_bytes: int) -> dict[str, Any]:
    """The trace record `data` with every text clipped (`clip_text`) and, while its line is over
    `max_line_bytes`, the last of its attempted actions and tool errors dropped, one item saying
    how many. Keys and the id are kept whole. The size is judged before anything is scrubbed, so
    scrubbing costs no more than what is kept.

    Raises:
        InvalidTrace: the line is over `max_line_bytes` even with no action or tool error kept.
    """
    def cut(text: str) -> str:
        return text[:max_field_chars]

    estimate = _texts(data, cut)
    used = _size({**estimate, **{name: [] for name in _LISTS}})
    sizes = {name: [_size(item) + 1 for item in estimate[name]] for name in _LISTS}
    kept = {name: len(sizes[name]) for name in _LISTS}
    used += sum(sum(items) for items in sizes.values())
    if used > max_line_bytes:
        used += len(_LISTS) * _MARKER_BYTES
        # The first actions and errors are the ones mining shows, so the ends of the longer list go first.
        while used > max_line_bytes and any(kept.values()):
            name = max(_LISTS, key=kept.__getitem__)
            kept[name] -= 1
            used -= sizes[name][kept[name]]
    if used > max_line_bytes:
        raise InvalidTrace(f"invalid trace: its line is {used:,} bytes with every text clipped to "
                           f"{max_field_chars:,} characters and no action or tool error kept, over "
                           f"max_line_bytes={max_line_bytes:,}; keep large data out of the id, the "
                           "context keys and the metadata")
    out = _texts({**data, **{name: data[name][:kept[name]] for name in _LISTS}},
                 lambda text: clip_text(text, max_field_chars))
    for name in _LISTS:
        if kept[name] < len(data[name]):
            out[name].append(f"[...{len(data[name]) - kept[name]} more clipped]")
    return out


def scrubbed_line(data: Mapping[str, Any], max_field_chars: int, max_line_bytes: int) -> tuple[dict[str, Any], str]:
    """The trace record `data` as written, `bounded` and scrubbed of secrets, and its JSON line.

    Raises:
        InvalidTrace: no line within `max_line_bytes` can be made of it.
    """
    from lamar.safety.traces import scrub_trace

    budget = max_line_bytes
    for _ in range(3):
        cleaned, _ = scrub_trace(bounded(data, max_field_chars, budget))
        line = json.dumps(cleaned, ensure_ascii=False, separators=(",", ":"))
        # A placeholder can be longer than the secret it replaces: drop that much more and scrub again.
        over = len(line.encode("utf-8")) - max_line_bytes
        if over <= 0:
            return cleaned, line
        budget -= over
    raise InvalidTrace(f"invalid trace: scrubbing its secrets keeps its line over max_line_bytes={max_line_bytes:,}")


def _texts(data: Mapping[str, Any], clip: Callable[[str], str]) -> dict[str, Any]:
    """`data` with `clip` applied to each text: context values, input, output, every action and
    tool error, and every string inside the metadata."""
    return {**data, "context": {key: clip(value) for key, value in data["context"].items()},
            "input": clip(data["input"]), "output": clip(data["output"]),
            **{name: [clip(item) for item in data[name]] for name in _LISTS},
            "metadata": storable_copy(data["metadata"], clip)}


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


__all__ = ["CLIPPED", "MAX_FIELD_CHARS", "MAX_LINE_BYTES", "bounded", "check_limits", "clip_text", "scrubbed_line"]
