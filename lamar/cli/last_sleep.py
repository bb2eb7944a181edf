"""What `lamar stats` says of the last sleep (`sleep_lines`), kept by `lamar.last_sleep` beside the store,
and `keep_figures` (`figures_kept`), which `lamar sleep` keeps it with once its report is saved."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from lamar.last_sleep import last_sleep, last_sleep_path, record_sleep

if TYPE_CHECKING:
    from lamar.sleep.proposals import SleepReport


def keep_figures(location: str, report: SleepReport, out: str | None) -> None:
    """`record_sleep` for `lamar sleep`, once its report is saved, so that the figures name it (the sleep ran within
    `recorded_by_caller`, so this is its one record): a file that cannot be written costs the sleep only a line."""
    import sys

    from lamar._errors import StoreError

    try:
        record_sleep(location, report, saved_to=out)
    except (OSError, StoreError) as exc:
        said = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        print(f"lamar: the last sleep's figures for `lamar stats` were not kept ({said})", file=sys.stderr)


@contextmanager
def figures_kept(location: str, report: SleepReport, out: str | None) -> Iterator[None]:
    """`keep_figures` once the block has saved the report to `out`; when saving fails, without naming it, since
    the sleep ran all the same."""
    try:
        yield
    except BaseException:
        keep_figures(location, report, None)
        raise
    keep_figures(location, report, out)


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
        return ["none recorded (`lamar sleep`, lamar ui's Run sleep and Lamar.sleep record their runs here)"]
    from lamar.cli.render import plural, when
    from lamar.sleep.printed import printed_id, printed_reason  # the file is anyone's to edit: one line each

    created = float(last.get("created") or 0.0)  # `last_sleep` checked it is a number
    found = last.get("mining")
    mining: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    traces = _count(mining.get("traces"))
    saved = last.get("report")
    report = f" (report: {printed_id(saved)})" if isinstance(saved, str) and saved != "-" else ""
    proposals = plural(_count(last.get("proposals")), "proposal")
    rejected = _count(last.get("rejected"))  # left out by sleep: a person said no to them
    proposals += f" ({rejected} rejected left out)" if rejected else ""
    head = f"{when(created)} UTC ({_ago((now or time.time()) - created)}): {proposals}"
    if mined_nothing(last):
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


def mined_nothing(last: Mapping[str, Any] | None) -> bool:
    """Whether the last sleep (None: none recorded) mined no trace and no mining of its failed.

    >>> mined_nothing(None), mined_nothing({"mining": {}}), mined_nothing({"mining": {"traces": 3}})
    (True, True, False)
    """
    found = (last or {}).get("mining")
    mining: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    return not _count(mining.get("traces")) and not mining.get("error")


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


__all__ = ["figures_kept", "keep_figures", "last_sleep", "last_sleep_path", "record_sleep", "sleep_lines"]
