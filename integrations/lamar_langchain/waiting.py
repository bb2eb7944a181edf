"""What waits for a root run that has not started: the episodes bound to its run id by hand, and
the run of a LangGraph thread stopped by `interrupt(...)` or a breakpoint, whose episodes the run
that resumes the thread carries."""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any
from uuid import UUID

from langgraph.types import Command

try:
    from langgraph.callbacks import GraphCallbackHandler
except ImportError:  # a LangGraph without lifecycle events: its breakpoints go unseen
    from langchain_core.callbacks import BaseCallbackHandler as GraphCallbackHandler  # type: ignore[assignment]

from lamar import InvalidArgument, UnknownEpisode
from lamar_langchain.run_record import RunRecord


def limits(max_runs: Any, bind_ttl: Any) -> tuple[int, float]:
    """`max_runs` and `bind_ttl`, checked when the handler is made: inside a run, a bad one
    would fail every callback (swallowed by LangChain) and leave failed runs unsettled.

    >>> limits(10, 60)
    (10, 60.0)
    """
    if isinstance(max_runs, bool) or not isinstance(max_runs, int) or max_runs < 1:
        raise InvalidArgument(f"max_runs is how many finished runs to keep, a whole number >= 1; got {max_runs!r}")
    if isinstance(bind_ttl, bool) or not isinstance(bind_ttl, (int, float)) or not 0 <= bind_ttl < math.inf:
        raise InvalidArgument(f"bind_ttl is how long a bind waits for its run, a finite number of seconds >= 0 "
                              f"(default 3600); got {bind_ttl!r}")
    return max_runs, float(bind_ttl)


class Bindings(OrderedDict[UUID, tuple[float, list[str]]]):
    """Run id -> (when bound, episodes bound to it), oldest first."""

    def add(self, run_id: UUID, episode_id: str, ttl: float, limit: int) -> None:
        self.setdefault(run_id, (time.monotonic(), []))[1].append(episode_id)
        self.forget_stale(ttl, limit)

    def take(self, run_id: UUID) -> list[str]:
        return self.pop(run_id, (0.0, []))[1]

    def forget_stale(self, ttl: float, limit: int) -> None:
        """Drop the bindings older than `ttl` seconds, and the oldest beyond `limit`: a run that
        never starts must not hold its bindings for the life of the process."""
        deadline = time.monotonic() - ttl
        while self:
            oldest, (when, _) = next(iter(self.items()))
            if when >= deadline and len(self) <= limit:
                break
            del self[oldest]


class GraphEvents(GraphCallbackHandler):
    """LangGraph's lifecycle events, which reach only a `GraphCallbackHandler`: a run stopped at a
    static breakpoint ends with no error, so `on_interrupt` is the only word that it stopped."""

    _lock: AbstractContextManager[Any]
    _runs: dict[UUID, RunRecord]
    _interrupted: Interrupted
    _attach: Callable[[RunRecord, Any], None]

    def on_interrupt(self, event: Any) -> None:
        run_id = getattr(event, "run_id", None)
        with self._lock:
            run = self._runs.get(run_id) if isinstance(run_id, UUID) else None
            if run is not None and not run.done:  # a root run: a nested graph's stop is not its root's
                run.paused = True
                checkpoint = getattr(event, "checkpoint_id", None)
                run.checkpoint = checkpoint if isinstance(checkpoint, str) and checkpoint else None

    def on_resume(self, event: Any) -> None:
        """A root run resuming from the checkpoint a stopped run of no known thread waits at takes
        over its episodes: the checkpoint links them where the run metadata has no `thread_id`."""
        run_id, checkpoint = getattr(event, "run_id", None), getattr(event, "checkpoint_id", None)
        with self._lock:
            run = self._runs.get(run_id) if isinstance(run_id, UUID) else None
            if run is not None and not run.done and run.resumes is None and isinstance(checkpoint, str):
                for episode_id in self._interrupted.at_checkpoint(run, checkpoint, self._runs):
                    self._attach(run, episode_id)


class Interrupted(OrderedDict[str | tuple[str, str], UUID]):
    """Thread id -> its last root run stopped by `interrupt(...)` or a breakpoint, oldest first;
    ("checkpoint", id) for a run whose thread LangGraph left out of the run metadata (a falsy
    `thread_id` such as 0 or ""), which only the checkpoint it stopped at links to its resume
    (a tuple, so that no thread id can stand for it).

    Only the last run is kept: a run that resumed a thread carries the episodes of the run
    before it, so a thread interrupted again hands all of them on at once.
    """

    def ended(self, run: RunRecord, limit: int) -> None:
        """Note a root run that ended: a stopped one waits for the run that resumes its thread
        (also one that failed: the expiry of its episodes yields to a late report)."""
        key = run.thread if run.thread is not None else (
            ("checkpoint", run.checkpoint) if run.checkpoint is not None else None)
        if run.interrupted and key is not None:
            self.pop(key, None)
            self[key] = run.run_id
            while len(self) > limit:  # threads never resumed: their runs stay reportable by id
                self.popitem(last=False)

    def resume(self, run: RunRecord, metadata: Mapping[str, Any] | None, inputs: Any,
               runs: Mapping[UUID, RunRecord]) -> list[str]:
        """The episodes a new root run takes over: those its thread's interrupted run left unreported.

        Only a resume (a `Command`, or None) takes them: fresh input starts a new turn, and
        the interrupted run keeps its episodes, still reportable by its own run id.
        """
        run.thread = thread_of(metadata)
        prior_id = self.pop(run.thread, None) if run.thread is not None else None
        if not (inputs is None or isinstance(inputs, Command)):
            return []  # a new turn
        # A resume's input is the reviewer's answer, which mining would read as the user's question (and
        # as the outcome told in advance): the trace asks what the run it resumes was asked, if known.
        run.input = ""
        return self._carry(run, prior_id, runs)

    def at_checkpoint(self, run: RunRecord, checkpoint: str, runs: Mapping[UUID, RunRecord]) -> list[str]:
        """The episodes a root run resuming from `checkpoint` takes over (LangGraph resumes only
        on a `Command` or None, so no new turn gets here)."""
        return self._carry(run, self.pop(("checkpoint", checkpoint), None), runs)

    def _carry(self, run: RunRecord, prior_id: UUID | None, runs: Mapping[UUID, RunRecord]) -> list[str]:
        prior = runs.get(prior_id) if prior_id is not None else None
        if prior is None:
            return []  # nothing interrupted, or a run forgotten (max_runs)
        run.resumes = prior.run_id
        run.input = prior.input
        run.carried = [e for e in prior.episodes if e not in prior.reported]
        # LangGraph runs an interrupted node again from its start: what it recalled is recalled anew.
        run.redone = [e for e in prior.recalled_inside(prior.interrupted_parts) if e in run.carried]
        return run.carried

    def chain(self, run: RunRecord, runs: Mapping[UUID, RunRecord]) -> list[RunRecord]:
        """This run and the interrupted runs it resumed that are still remembered."""
        found = [run]
        while (prior := runs.get(found[-1].resumes) if found[-1].resumes else None) is not None:
            if prior in found:
                break
            found.append(prior)
        return found


def has_report(lamar: Any, episode_id: str) -> bool:
    """Whether an episode has a real report (an expiry or a default outcome yields to one)."""
    try:
        record = lamar.episode(episode_id)
    except UnknownEpisode:
        return False
    return bool(record.reports > 0 and record.settled is None)


def thread_of(metadata: Mapping[str, Any] | None) -> str | None:
    """The LangGraph thread a run belongs to: LangGraph copies `thread_id` from `configurable`
    into every run's metadata (as given: an int stays an int, so it is read as a string), but
    only a truthy one: a run of thread 0 or "" has none here (see `GraphEvents.on_resume`)."""
    thread = (metadata or {}).get("thread_id")
    return str(thread) if thread is not None and thread != "" else None


__all__ = ["Bindings", "GraphEvents", "Interrupted", "has_report", "thread_of"]
