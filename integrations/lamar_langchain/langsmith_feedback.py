"""Reported outcomes mirrored to LangSmith as feedback on the root run, when the handler is asked to."""

from __future__ import annotations

import logging
from typing import Any

from lamar.extras import needs_extra
from lamar.signals import Signal
from lamar_langchain.run_record import RunRecord

log = logging.getLogger(__name__)
_ATTEMPTS = 2  # the client's default of 10 backs off for minutes while the app waits on its report


def mirror_outcome(client: Any, run: RunRecord, key: str, reward: float, parsed: Signal | None) -> Any:
    """Send a reported outcome to LangSmith; returns the client (made on first use).

    A copy, never the record: LangSmith unreachable or refusing costs the copy (a warning names the
    run), never the report, which Lamar has already recorded.
    """
    if client is None:
        try:
            from langsmith import Client
        except ImportError as exc:  # pragma: no cover - langsmith ships with langchain-core
            raise ImportError(needs_extra("mirroring outcomes to LangSmith needs the langsmith package",
                                          "langchain", exc)) from exc
        client = Client()
    try:
        client.create_feedback(
            run.run_id, key=key, score=reward, trace_id=run.run_id, stop_after_attempt=_ATTEMPTS,
            value=parsed.value if parsed is not None else None,
            comment="Lamar episodes: " + ", ".join(run.episodes))
    except Exception as exc:  # noqa: BLE001 - whatever the client raises, the report itself succeeded
        log.warning("Lamar recorded the outcome of run %s but could not mirror it to LangSmith: %s",
                    run.run_id, exc)
    return client


__all__ = ["mirror_outcome"]
