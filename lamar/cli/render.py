"""Text and JSON rendering shared by the commands: intervals, scopes, times, charts."""

from __future__ import annotations

import json
import math
import sys
import textwrap
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from lamar.experience import Experience


def jsonable(value: Any) -> Any:
    """`value` with every non-finite float turned into None, so it is valid JSON.

    >>> jsonable({"lower": float("-inf"), "lift": 0.5, "n": [float("nan")]})
    {'lower': None, 'lift': 0.5, 'n': [None]}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def dump_json(value: Any, out: TextIO | None = None) -> None:
    """Print `value` as indented, strictly valid JSON (no Infinity, no NaN); in ASCII on a stream that is
    not UTF-8, so a file it is redirected to reads back in any encoding (`lamar review` reads UTF-8)."""
    from lamar.safety.terminal import narrow_encoding

    stream = out or sys.stdout
    text = json.dumps(jsonable(value), indent=2, ensure_ascii=narrow_encoding(stream) is not None, allow_nan=False,
                      default=str)
    stream.write(text + "\n")


def plural(n: int, noun: str) -> str:
    """
    >>> plural(1, "proposal"), plural(2, "proposal")
    ('1 proposal', '2 proposals')
    """
    return f"{n} {noun}" + ("" if n == 1 else "s")


def number(value: float | None, digits: int = 3) -> str:
    """A signed number, or "n/a" when it is unknown or infinite.

    >>> number(0.25), number(float("inf")), number(None)
    ('+0.250', 'n/a', 'n/a')
    """
    if value is None or not math.isfinite(value):
        return "n/a"
    return f"{value:+.{digits}f}"


LIFT_LIMIT = 2.0  # the widest a lift can be: rewards lie in [-1, 1] (lamar.signals)


def bound(value: float | None, digits: int = 2) -> str:
    if value is None or math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return f"{value:+.{digits}f}"


def interval(lower: float | None, upper: float | None, digits: int = 2) -> str:
    """"[lo, hi]", or "n/a" when neither bound is known yet.

    >>> interval(-0.1, 0.3), interval(float("-inf"), float("inf")), interval(0.1, float("inf"))
    ('[-0.10, +0.30]', 'n/a', '[+0.10, +inf]')
    >>> interval(-42.28, 43.24)
    '[-2.00, +2.00]'
    """
    finite = [v for v in (lower, upper) if v is not None and math.isfinite(v)]
    if not finite:
        return "n/a"
    # A lift is a difference of two mean rewards in [-1, 1], so it lies in [-2, 2]; a confidence
    # bound past that says nothing more than the edge does, and printed it reads as a huge effect.
    if lower is not None and math.isfinite(lower):
        lower = max(lower, -LIFT_LIMIT)
    if upper is not None and math.isfinite(upper):
        upper = min(upper, LIFT_LIMIT)
    return f"[{bound(lower, digits)}, {bound(upper, digits)}]"


def known_interval(lower: float | None, upper: float | None, digits: int = 2) -> str:
    """The interval, or "n/a" while it says nothing (`no_evidence`), as `lift` prints the lift: a line
    of prose reads "[-2.00, +2.00]" as a measurement, where a table's column beside "n/a" does not.

    >>> known_interval(-42.28, 43.24), known_interval(float("-inf"), float("inf")), known_interval(0.1, 0.3)
    ('n/a', 'n/a', '[+0.10, +0.30]')
    """
    return "n/a" if no_evidence(lower, upper) else interval(lower, upper, digits)


def lift(value: float | None, lower: float | None, upper: float | None, digits: int = 2) -> str:
    """The lift, or "n/a" while its interval says nothing (`no_evidence`): an estimate from a few
    randomized episodes can sit anywhere in [-2, 2] and would read as a huge effect.

    >>> lift(0.89, float("-inf"), float("inf")), lift(-1.44, -2.0, 2.0), lift(0.5, 0.1, 0.9)
    ('n/a', 'n/a', '+0.50')
    """
    if no_evidence(lower, upper):
        return "n/a"
    return number(value, digits)


def no_evidence(lower: float | None, upper: float | None) -> bool:
    """True when the interval is unknown or spans every lift there can be ([-2, 2]): it says nothing
    (the one rule, `lamar.policy.verdicts.measured`).

    >>> no_evidence(float("-inf"), float("inf")), no_evidence(-3.1, 2.4), no_evidence(-0.4, 2.5)
    (True, True, False)
    """
    from lamar.policy.verdicts import measured

    return not measured(lower, upper)


def visible(text: str) -> str:
    """`text` on one line, with control and bidi characters written as escapes (ESC as \\x1b).

    Scope and context values come from agents and are printed in columns: a newline would
    break the row, and the rest is what `terminal_safe` shows visibly anyway.
    """
    from lamar.safety.terminal import terminal_safe

    return terminal_safe(text).replace("\n", "\\n").replace("\t", "\\t")


def scope_text(scope: Mapping[str, str]) -> str:
    """'project=trace language=swift', or '*' for a lesson that applies everywhere."""
    return " ".join(f"{visible(k)}={visible(v)}" for k, v in scope.items()) or "*"


def shorten(text: str, width: int) -> str:
    """`text` on one line, cut to `width` characters with "..." where words were left out.

    >>> shorten("When the build fails, clear the cache.", 20), shorten("When the build fails", 3)
    ('When the build...', 'Whe')
    """
    if width <= len("..."):  # no room for the placeholder (`lamar ls --width 1`): cut the text itself
        return " ".join(text.split())[:width]
    return textwrap.shorten(text, width=width, placeholder="...")


def lesson_line(exp: Experience, width: int) -> str:
    """`exp.render()` cut to `width`, its condition to at most two thirds of it when the whole does not fit.

    >>> from lamar.experience import Experience
    >>> lesson_line(Experience("working on shop (Testing › Coverage)", "Run `make cov` before you push"), 56)
    'When working on shop (Testing..., run `make cov`...'
    """
    text = exp.render()
    condition = "When " + " ".join(exp.precondition.split()).rstrip(".") + ", "
    if len(text) <= width or width < 20 or not text.startswith(condition):
        return shorten(text, width)
    # Lessons of one heading share their condition: the start of what to do is what tells them apart.
    rest = text[len(condition):]
    most = width * 2 // 3
    kept = shorten(condition, max(most, width - len(rest))) if len(condition) > most else condition
    if not kept.endswith(", "):
        kept = kept.removesuffix("...").rstrip(", ›") + "..., "
    return kept + shorten(rest, width - len(kept))


def filled(text: str, width: int, first: str, rest: str) -> str:
    """`text` wrapped to `width` after `first` (the first line's indent) and `rest` (the others'), with each
    span in backticks, a command, kept whole on one line so that it can be copied as printed."""
    import re

    whole = re.sub(r"`[^`]*`", lambda span: span.group(0).replace(" ", "\0"), text)
    return textwrap.fill(whole, width, initial_indent=first, subsequent_indent=rest, break_long_words=False,
                         break_on_hyphens=False).replace("\0", " ")


def when(timestamp: float | None) -> str:
    """A UTC time to the minute, e.g. '2025-03-01 14:05'."""
    if not timestamp:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(timestamp))


def size(n_bytes: int) -> str:
    """
    >>> size(512), size(48_300)
    ('512 B', '47.2 KiB')
    """
    value = float(n_bytes)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024 or unit == "MiB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def interval_bar(lift: float | None, lower: float | None, upper: float | None,
                 width: int = 33, lo: float = -1.0, hi: float = 1.0) -> str:
    """One row of a text forest plot: '-' spans the interval, '*' marks the lift, '|' is zero.

    A bound beyond the axis (or infinite) ends in '<' or '>' at the edge.

    >>> interval_bar(0.5, 0.0, 1.0, width=9)
    '....|-*--'
    >>> interval_bar(None, float("-inf"), float("inf"), width=9)
    '<---|--->'
    """
    cells = ["."] * width

    def column(value: float) -> int:
        return round((min(max(value, lo), hi) - lo) / (hi - lo) * (width - 1))

    if lower is not None and upper is not None and not (math.isnan(lower) or math.isnan(upper)):
        for i in range(column(lower), column(upper) + 1):
            cells[i] = "-"
        if lower < lo:
            cells[0] = "<"
        if upper > hi:
            cells[-1] = ">"
    zero = column(0.0)
    if cells[zero] in ".-":
        cells[zero] = "|"
    if lift is not None and math.isfinite(lift):
        cells[column(lift)] = "*"
    return "".join(cells)


def axis_range(values: list[float], limit: float = 2.0) -> tuple[float, float]:
    """[-1, 1] widened to cover `values` in steps of 0.5, never past [-limit, limit].

    A lift is a difference of rewards in [-1, 1], so it lies in [-2, 2]; bounds can be wider.

    >>> axis_range([0.3, 1.2]), axis_range([-7.0]), axis_range([])
    ((-1.0, 1.5), (-2.0, 1.0), (-1.0, 1.0))
    """
    finite = [v for v in values if math.isfinite(v)]
    lo = max(min([-1.0, *finite]), -limit)
    hi = min(max([1.0, *finite]), limit)
    return math.floor(lo * 2) / 2, math.ceil(hi * 2) / 2


def axis_labels(lo: float, hi: float, width: int) -> str:
    """The scale under `interval_bar` rows: lo at the left, 0 at its column, hi at the right.

    >>> axis_labels(-1.0, 1.0, 9)
    '-1  0  +1'
    """
    zero = round((0.0 - lo) / (hi - lo) * (width - 1))
    left, right = f"{lo:g}", f"{hi:+g}"
    cells = list(left.ljust(width))
    cells[zero] = "0"
    text = "".join(cells)
    return text[: width - len(right)] + right
