"""The last sleep's time and figures, kept beside the store by `lamar sleep` and `lamar ui`'s Run sleep,
so that `lamar stats` says whether a night's mining worked (`record_sleep`, `last_sleep`, `sleep_lines`)."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lamar.sleep.proposals import SleepReport

FORMAT = "lamar-last-sleep"


def last_sleep_path(location: str) -> Path | None:
    """Where the last sleep of the store at `location` is kept: beside a file store (`STORE.last-sleep.json`);
    in ~/.lamar for a database, named after its URL (as `lamar ui` names its report); None for `:memory:`,
    which no later command can open."""
    if location == ":memory:":
        return None
    if location.startswith(("postgresql://", "postgres://")):
        from lamar.atomic import lamar_home

        digest = hashlib.sha256(location.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        try:
            return lamar_home() / f"last-sleep-{digest}.json"
        except RuntimeError:  # no home folder known (as some MCP clients start a server): nowhere to keep it
            return None
    path = Path(location).expanduser()
    return path.with_name(path.name + ".last-sleep.json")


def record_sleep(location: str, report: SleepReport, *, saved_to: str | None = None) -> None:
    """Keep `report`'s time, proposal count and mining figures as the last sleep of the store at `location`.

    Raises:
        OSError: the file could not be written (the one kept before stays whole).
    """
    path = last_sleep_path(location)
    if path is None:
        return
    from lamar.atomic import own_folder, replace_file

    mining = report.summary.get("mining")
    data = {"format": FORMAT, "created": report.created, "made_at": report.made_at,
            "proposals": len(report.proposals), "mining": dict(mining) if isinstance(mining, Mapping) else {},
            "report": saved_to}
    if path.parent.name == ".lamar":  # Lamar's own folder, made private (the figures quote trace ids)
        own_folder(path.parent)
    replace_file(path, (json.dumps(data, ensure_ascii=False, default=str) + "\n").encode("utf-8"))


def keep_figures(location: str, report: SleepReport, out: str | None) -> None:
    """`record_sleep` for `lamar sleep`: a file that cannot be written costs the sleep nothing but a line."""
    import sys

    try:
        record_sleep(location, report, saved_to=out)
    except OSError as exc:
        print(f"lamar: the last sleep's figures for `lamar stats` were not kept ({exc.strerror or exc})",
              file=sys.stderr)


def last_sleep(location: str) -> dict[str, Any] | None:
    """The last sleep `record_sleep` kept for the store at `location`, or None when none was (or it is unreadable)."""
    path = last_sleep_path(location)
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path is not None else None
    except (OSError, ValueError, RecursionError):  # unreadable, or edited into something else: none to show
        return None
    created = data.get("created") if isinstance(data, dict) else None
    # A hand edit's NaN or 1e300 is no time to print.
    ok = data.get("format") == FORMAT and isinstance(created, (int, float)) and 0 <= created < 1e11 \
        if isinstance(data, dict) else False
    return data if ok else None


def sleep_lines(last: Mapping[str, Any] | None, now: float | None = None) -> list[str]:
    """What `lamar stats` says of the last sleep: when, what it proposed, and what mining did, a failure
    first and with what to do.

    >>> sleep_lines({"created": 86_400.0, "proposals": 2, "mining": {}}, now=93_600.0)
    ['1970-01-02 00:00 UTC (2 h ago): 2 proposals, no traces mined']
    >>> sleep_lines({"created": 0.0, "proposals": 0, "mining": {"traces": 4, "model_calls": 2,
    ...     "error": "no reply of the model held a lesson list (2 of 2 unreadable; ...): check the model, then "
    ...     "run sleep again"}}, now=60.0)[1]
    'MINING FAILED: 4 traces, 2 model calls, no lesson mined: no reply of the model held a lesson list (2 of 2 \
unreadable; ...): check the model, then run sleep again'
    """
    if last is None:  # before the imports: quoting what a sleep kept loads the screen's patterns, stats alone need not
        return ["none recorded (`lamar sleep` and lamar ui's Run sleep record their runs here)"]
    from lamar.cli.render import plural, when
    from lamar.sleep.printed import printed_id, printed_reason  # the file is anyone's to edit: one line each

    created = float(last.get("created") or 0.0)  # `last_sleep` checked it is a number
    found = last.get("mining")
    mining: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    traces = _count(mining.get("traces"))
    saved = last.get("report")
    report = f" (report: {printed_id(saved)})" if isinstance(saved, str) and saved != "-" else ""
    proposals = plural(_count(last.get("proposals")), "proposal")
    head = f"{when(created)} UTC ({_ago((now or time.time()) - created)}): {proposals}"
    if not traces and not mining.get("error"):
        return [f"{head}, no traces mined{report}"]
    calls = plural(_count(mining.get("model_calls")), "model call")
    lines = [f"{head}{report}"]
    error = mining.get("error")
    if isinstance(error, str) and error:
        said = "" if "again" in error else ": fix the model (or its cap), then run sleep again on the same traces"
        failed = f"MINING FAILED: {plural(traces, 'trace')}, {calls}, no lesson mined"
        lines.append(f"{failed}: {printed_reason(error)}{said}")
        return lines
    candidates = plural(_count(mining.get("candidates")), "candidate lesson")
    mined = f"mined {plural(traces, 'trace')} in {calls}: {candidates}"
    lost = mining.get("lost")
    if isinstance(lost, str) and lost:
        replies, lessons = _count(mining.get("unreadable_replies")), _count(mining.get("unreadable_lessons"))
        counts = [f"{replies} unreadable {'reply' if replies == 1 else 'replies'}"] if replies else []
        counts += [plural(lessons, "unreadable lesson")] if lessons else []
        mined += f"; LOST {' and '.join(counts) or 'part of the output'}: {printed_reason(lost)}"  # it says what to do
    return [*lines, mined]


def _count(value: Any) -> int:
    """A count of the kept figures, 0 when a hand edit made it something else."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _ago(seconds: float) -> str:
    """'5 min ago', '7 h ago', '3 days ago'."""
    if seconds < 3600:
        return f"{max(0, int(seconds // 60))} min ago"
    if seconds < 2 * 86400:
        return f"{int(seconds // 3600)} h ago"
    return f"{int(seconds // 86400)} days ago"


__all__ = ["keep_figures", "last_sleep", "last_sleep_path", "record_sleep", "sleep_lines"]
