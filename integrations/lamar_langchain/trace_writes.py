"""What keeps a `LamarCallbackHandler`'s traces from being lost: a write that failed is logged, and the
traces held for a report (`write_on="report"`) are written when the handler is dropped or the interpreter exits."""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import weakref
from typing import TYPE_CHECKING, Any
from uuid import UUID

from lamar import LamarError, StoreError, UnknownEpisode

if TYPE_CHECKING:
    from lamar.sleep.traces import Trace, TraceWriter
    from lamar_langchain.run_record import RunRecord

log = logging.getLogger("lamar_langchain.callbacks")


def trace_of(lamar: Any, run: RunRecord) -> Trace:
    """`run` in the sleep trace format, its context from the recall event, or else from the store."""
    context = run.context
    if context is None and run.episodes:
        try:
            context = dict(lamar.episode(run.episodes[0]).context)
        except UnknownEpisode:
            context = None
        except StoreError as exc:  # fail open: the trace names its episode, sleep can join it
            log.warning("Lamar could not read the context of episode %s for its trace: %s", run.episodes[0], exc)
            context = None
    return run.to_trace(context or {})


def write_held_when_dropped(handler: Any, lamar: Any, runs: dict[UUID, RunRecord], writer: TraceWriter | None,
                            lock: threading.RLock) -> None:
    """Write `handler`'s held traces (outcome null; sleep joins them by `episode_id`) when it is garbage-collected
    (a handler made per request) or Python exits, since the runs reported by episode id alone, or from another
    process, never release them. The finalizer holds what the writes need, never the handler itself."""
    if handler.write_on == "report" and writer is not None:
        weakref.finalize(handler, _write_held, lamar, runs, writer, lock)


def _write_held(lamar: Any, runs: dict[UUID, RunRecord], writer: TraceWriter, lock: threading.RLock) -> None:
    with lock:
        waiting = [run for run in runs.values() if run.done and not run.written]
        for run in waiting:
            run.written = True
    for run in waiting:
        try:
            with lock:
                trace = trace_of(lamar, run)
            writer.write(trace)
        except Exception:  # fail open: in a finalizer or at exit, one trace must not cost the others theirs
            log.warning("Lamar's callback handler could not write a held trace (run %s)", run.run_id, exc_info=True)


def log_failure(future: concurrent.futures.Future[None]) -> None:
    if future.exception() is not None:
        warn_failed(future.exception())


def warn_failed(exc: BaseException | None) -> None:
    """The warning for a write of the handler's that failed: Lamar's own refusal (a store or trace file that
    cannot be written, a lock held too long) in one line that says what to do, anything else with its traceback."""
    if isinstance(exc, LamarError):
        log.warning("Lamar's callback handler could not write (the run went on; its trace is still in "
                    "handler.traces()): %s", exc)
    else:
        log.warning("Lamar's callback handler failed to write", exc_info=exc)
