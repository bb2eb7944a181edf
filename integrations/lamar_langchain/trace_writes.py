"""What keeps a `LamarCallbackHandler`'s traces from being lost: a write that failed is logged, and the
traces held for a report (`write_on="report"`) are written when the interpreter exits."""

from __future__ import annotations

import atexit
import concurrent.futures
import logging
import weakref
from typing import Any

log = logging.getLogger("lamar_langchain.callbacks")

# Weak, so that a handler made per request is not kept alive by the exit hook: one hook for all of them.
_HOLDING: weakref.WeakSet[Any] = weakref.WeakSet()


def flush_at_exit(handler: Any) -> None:
    """Write `handler`'s held traces (outcome null; sleep joins them by `episode_id`) when Python exits,
    since the runs reported by episode id alone, or from another process, never release them."""
    if handler.write_on != "report" or handler.trace_path is None:
        return
    if not _HOLDING:
        atexit.unregister(_flush_all)  # registered once, however many handlers come and go
        atexit.register(_flush_all)
    _HOLDING.add(handler)


def _flush_all() -> None:
    for handler in list(_HOLDING):
        try:
            handler.flush()
        except Exception:  # fail open: one handler's file must not cost the others theirs
            log.warning("Lamar's callback handler could not write its held traces at exit", exc_info=True)


def log_failure(future: concurrent.futures.Future[None]) -> None:
    if future.exception() is not None:
        log.warning("Lamar's callback handler failed to write", exc_info=future.exception())
