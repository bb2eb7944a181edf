"""`LamarCallbackHandler`: ties LangChain runs to Lamar episodes, records sleep traces, reports
outcomes by run id or episode id, and counts the implicit signals a run shows."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal
from uuid import UUID

from langchain_core.callbacks import BaseCallbackManager
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.errors import GraphBubbleUp, GraphInterrupt

from lamar import DuplicateReport, InvalidArgument, InvalidContext, LamarError, UnknownEpisode
from lamar.integration import engine, outcome
from lamar.signals import Signal, to_reward
from lamar.sleep.trace_limits import clip_text
from lamar.sleep.traces import Trace, TraceWriter
from lamar_langchain.conventions import EPISODE_KEY, FALLBACKS, RECALL_EVENT, RETRY_TAG, context_from_metadata
from lamar_langchain.langsmith_feedback import mirror_outcome
from lamar_langchain.run_record import ImplicitSignals, RunRecord, handler_key, report_one, run_key, run_name
from lamar_langchain.stream_close import closed_early
from lamar_langchain.trace_text import episodes_in, output_text
from lamar_langchain.trace_writes import log_failure, trace_of, warn_failed, write_held_when_dropped
from lamar_langchain.waiting import Bindings, GraphEvents, Interrupted, has_report, limits

log = logging.getLogger(__name__)


class LamarCallbackHandler(GraphEvents):
    """Attach to any runnable or graph; each root run is tied to the episodes recalled inside it.

    Episodes are found in `LamarRetriever`'s recall events and documents, in outputs or state
    carrying "lamar_episode_id" (as `LamarMiddleware`'s state does), in run metadata under the
    same key, or bound by hand with `bind`. When a root run ends, its trace (input, tool calls,
    tool errors, final output) is kept in the sleep trace format and, with `trace_path`,
    appended to that JSON Lines file. When a root run fails, its unreported episodes are
    recorded as expired (or given `failed_outcome`): a failed run leaves no episode pending.

    In async runs the handler runs on the event loop, so its file and store writes go to
    one worker thread, in order (`flush` waits for them). A `bind` for a run that never
    starts is forgotten after `bind_ttl` seconds or once `max_runs` bindings wait.

    Args:
        lamar: the `Lamar` engine that the runs recall from.
        trace_path: a .jsonl file to append one trace per root run to (None: keep in memory).
        write_on: "end" writes a trace when its root run ends (outcome null; sleep can join it
            to the episode's outcome by `episode_id`); "report" waits for `report` so the trace
            carries the outcome (`flush` writes the unreported ones, and so do dropping the handler
            and Python's exit).
        raise_error: let errors in this handler propagate (LangChain otherwise logs them).
        mirror_to_langsmith: also send each reported outcome to LangSmith as feedback on the
            root run (needs the `langsmith` package and its credentials).
        langsmith_client: a `langsmith.Client` to use (default: one created on first use).
        feedback_key: the LangSmith feedback key.
        max_runs: finished runs kept for `report`; the oldest are forgotten first.
        failed_outcome: what the unreported episodes of a failed root run get (None: expired;
            a late report still replaces the expiry).
        bind_ttl: seconds a `bind` waits for its run to start.

    Raises:
        InvalidArgument: `lamar` is not a Lamar engine, or `write_on` is neither "end" nor "report".
        InvalidReward: `failed_outcome` is not an outcome.

    Example:
        >>> from lamar import Lamar
        >>> from langchain_core.runnables import RunnableLambda
        >>> handler = LamarCallbackHandler(Lamar(":memory:"))
        >>> RunnableLambda(lambda q: q.upper()).invoke("hi", config={"callbacks": [handler]})
        'HI'
        >>> handler.traces()[0].output
        'HI'
    """

    run_inline = True  # cheap bookkeeping; inline keeps events in order under asyncio

    def __init__(self, lamar: Any, trace_path: str | os.PathLike[str] | None = None, *,
                 write_on: Literal["end", "report"] = "end", raise_error: bool = False,
                 mirror_to_langsmith: bool = False, langsmith_client: Any = None,
                 feedback_key: str = "lamar_outcome", max_runs: int = 10_000,
                 failed_outcome: Signal | float | str | None = None, bind_ttl: float = 3600.0) -> None:
        if write_on not in ("end", "report"):
            raise InvalidArgument(f"write_on is 'end' or 'report'; got {write_on!r}")
        self.lamar = engine(lamar, "LamarCallbackHandler")
        self.trace_path = trace_path
        self.write_on = write_on
        self.raise_error = raise_error
        self.mirror_to_langsmith = mirror_to_langsmith
        self.feedback_key = feedback_key
        self.max_runs, self.bind_ttl = limits(max_runs, bind_ttl)
        self.failed_outcome = outcome(failed_outcome, "failed_outcome")
        self._io: concurrent.futures.ThreadPoolExecutor | None = None
        self._client = langsmith_client
        self._writer = TraceWriter(trace_path) if trace_path is not None else None
        self._lock = threading.RLock()
        self._runs: dict[UUID, RunRecord] = {}
        self._root_of: dict[UUID, UUID] = {}
        self._tools: dict[UUID, str] = {}
        self._pending = Bindings()
        self._interrupted = Interrupted()
        self._by_episode: dict[str, UUID] = {}
        write_held_when_dropped(self, self.lamar, self._runs, self._writer, self._lock)

    # -- public API --------------------------------------------------------------------------

    def bind(self, run_id: UUID | str, episode_id: str) -> None:
        """Tie an episode to a run (any run of the tree, or a root run id fixed in advance with
        `config={"run_id": ...}`); before or during the run, so that its trace names it."""
        key = run_key(run_id)
        with self._lock:
            root = self._root_of.get(key, key)
            if root in self._runs:
                self._attach(self._runs[root], episode_id)
            else:
                self._pending.add(key, episode_id, self.bind_ttl, self.max_runs)

    def unbind(self, run_id: UUID | str) -> list[str]:
        """Drop the episodes bound to a run that has not started (it never will, say); [] when none wait for it
        (never bound, forgotten, or its run started). A `run_id` that is no UUID is refused, as `bind` refuses it."""
        key = run_key(run_id)
        with self._lock:
            entry = self._pending.pop(key, None)
        return entry[1] if entry is not None else []

    def episodes(self, run_or_episode: UUID | str) -> list[str]:
        """The episodes of a root run (or of the run that used this episode)."""
        with self._lock:
            return list(self._find(run_or_episode).episodes)

    def implicit_signals(self, run_or_episode: UUID | str) -> ImplicitSignals:
        """Tool errors, retries, model errors and failure of a run, for the app to map to outcomes."""
        with self._lock:
            return self._find(run_or_episode).signals()

    def report(self, run_or_episode: UUID | str, signal: Signal | float | str, *,
               replace: bool = False) -> list[str]:
        """Report an outcome for every episode of a run, or for one episode.

        Args:
            run_or_episode: a root run id (UUID or its string), or an episode id.
            signal: a `Signal`, its name, or a reward in [-1, 1].
            replace: replace an outcome already reported.

        Returns:
            The episode ids reported.

        Raises:
            InvalidArgument: `run_or_episode` is neither a UUID (or its string) nor a string (an episode id).
            UnknownEpisode: the run is unknown to this handler or recalled nothing, or no episode has that id.
            DuplicateReport: an episode was already reported and `replace` is False.
        """
        reward, parsed = to_reward(signal)  # reject a bad signal before reporting anything
        self._drain()  # a failed async run's outcome may still be queued: it goes first, as in a sync run
        key, carried = handler_key(run_or_episode), []
        with self._lock:
            if isinstance(key, str):  # an episode id; its run is known when it was recalled inside one
                episodes = [key]
                root = self._by_episode.get(key)
                run = self._runs.get(root) if root is not None else None
            else:
                run = self._find(key)
                episodes, carried = list(run.episodes), ([] if replace else list(run.carried))
                if not episodes:
                    raise UnknownEpisode(
                        f"run {run_or_episode} recalled no Lamar episode; recall inside the run "
                        "(LamarRetriever, LamarMiddleware) or tie one with handler.bind(run_id, episode_id)")
        # A carried episode may have been reported by the interrupted run's id since: not twice.
        episodes = [e for e in episodes if e not in carried or not has_report(self.lamar, e)]
        if run is None:  # an episode recalled outside this handler's runs: only the store can know it
            return report_one(self.lamar, episodes[0], signal, replace)
        for episode_id in episodes:
            self.lamar.report(episode_id, signal, replace=replace)
        with self._lock:
            run.reported.update(episodes)
            for record in self._interrupted.chain(run, self._runs):  # its interrupted runs' traces too
                if record is run or record.reward is None:
                    record.outcome = parsed.value if parsed is not None else None
                    record.reward = reward
                    if self.write_on == "report" and record.done:
                        self._write(record)
        if self.mirror_to_langsmith:
            self._client = mirror_outcome(self._client, run, self.feedback_key, reward, parsed)
        return episodes

    async def areport(self, run_or_episode: UUID | str, signal: Signal | float | str, *,
                      replace: bool = False) -> list[str]:
        """`report` without blocking the event loop."""
        return await asyncio.to_thread(self.report, run_or_episode, signal, replace=replace)

    def trace(self, run_or_episode: UUID | str) -> Trace:
        """The trace of a finished root run."""
        with self._lock:
            run = self._find(run_or_episode)
            if not run.done:
                raise InvalidArgument(f"run {run.run_id} has not ended yet: read its trace once it returns")
            return self._trace(run)

    def traces(self) -> list[Trace]:
        """The traces of every finished root run still remembered, oldest first."""
        with self._lock:
            return [self._trace(run) for run in self._runs.values() if run.done]

    def flush(self) -> int:
        """Write the traces held for a report (outcome null), wait for async runs' writes; returns how many."""
        self._drain()
        with self._lock:
            waiting = [run for run in self._runs.values() if run.done and not run.written]
            for run in waiting:
                run.written = True
        for run in waiting:
            self._write_now(run)
        return len(waiting)

    def close(self) -> None:
        """Finish queued writes and stop the worker thread (the handler can still be used)."""
        self._drain()
        with self._lock:
            io, self._io = self._io, None
        if io is not None:
            io.shutdown(wait=True)

    def _drain(self) -> None:
        try:
            with self._lock:  # queued under the lock, so that a close in another thread cannot shut the worker first
                done = self._io.submit(lambda: None) if self._io is not None else None
        except RuntimeError:  # at exit: Python has already run the worker's queue to its end
            return
        if done is not None:
            done.result()  # one worker: done once everything before it is

    # -- bookkeeping -------------------------------------------------------------------------

    def _find(self, key: UUID | str) -> RunRecord:
        if isinstance(key, str) and key in self._by_episode:
            return self._runs[self._by_episode[key]]
        run_id = handler_key(key)
        root = self._root_of.get(run_id, run_id) if isinstance(run_id, UUID) else None
        if root is None or root not in self._runs:
            raise UnknownEpisode(f"this handler saw no run or episode {key!r}, or has forgotten it "
                                 f"(it keeps {self.max_runs} "
                                 'runs): give it to the run, config={"callbacks": [handler], "run_id": ...}, or report '
                                 "by episode id, lam.report(episode_id, signal)")
        return self._runs[root]

    def _attach(self, run: RunRecord, episode_id: Any, origin: UUID | None = None) -> None:
        if isinstance(episode_id, str) and episode_id and episode_id not in run.episodes:
            run.episodes.append(episode_id)
            self._by_episode[episode_id] = run.run_id
            if origin is not None:
                run.origin[episode_id] = origin

    def _start(self, run_id: UUID, parent_run_id: UUID | None, name: str, inputs: Any,
               metadata: Mapping[str, Any] | None, tags: Any = None) -> RunRecord:
        with self._lock:
            parent_run_id = parent_run_id or self._enclosing(run_id, name)
            root = self._root_of.get(parent_run_id) if parent_run_id is not None else None
            if root is None or root not in self._runs:
                # No parent, or a parent this handler never saw: this run is a root for us.
                run = self._runs[run_id] = RunRecord(run_id, name, inputs, time.time())
                pending = self._pending.take(run_id)
                for episode_id in [*pending, *self._interrupted.resume(run, metadata, inputs, self._runs)]:
                    self._attach(run, episode_id)
            else:
                run = self._runs[root]
                run.members.add(run_id)
                run.running.add(run_id)
                run.parents[run_id] = root if parent_run_id is None else parent_run_id
            self._root_of[run_id] = run.run_id
            # RunnableRetry sends no retry event: it tags each attempt after the first instead.
            if any(isinstance(tag, str) and tag.startswith(RETRY_TAG) for tag in tags or ()):
                run.counts["retries"] += 1
            if metadata:
                self._attach(run, metadata.get(EPISODE_KEY), run_id)
                if run.context is None:
                    try:
                        run.context = context_from_metadata(metadata, warn=lambda _: None)  # recall warns
                    except InvalidContext:
                        pass  # the recall itself reports a bad context; a trace just omits it
            return run

    def _enclosing(self, run_id: UUID, name: str) -> UUID | None:
        """The fallbacks run whose child config is current: RunnableWithFallbacks (invoke, ainvoke)
        hands each attempt the caller's config, name included, so each attempt starts with no
        parent, as the fallbacks run did. Any other run with no parent was given callbacks of its
        own (a nested `invoke(..., config={"callbacks": [...]})`): a root, as LangChain has it."""
        manager = (var_child_runnable_config.get() or {}).get("callbacks")
        parent = manager.parent_run_id if isinstance(manager, BaseCallbackManager) else None
        run = self._runs.get(parent) if parent is not None and parent != run_id else None
        return parent if run is not None and not run.done and run.name in (FALLBACKS, name) else None

    def _run_of(self, run_id: UUID) -> RunRecord | None:
        return self._runs.get(root) if (root := self._root_of.get(run_id)) is not None else None

    def _end(self, run_id: UUID, outputs: Any = None, error: BaseException | None = None) -> None:
        with self._lock:
            run = self._run_of(run_id)
            if run is not None:
                for episode_id in episodes_in(outputs):
                    self._attach(run, episode_id, run_id)
                if isinstance(error, GraphInterrupt):  # the run stops; a later one may resume it
                    run.interrupt(run_id, error.args[0] if error.args else ())
            if run is None or run_id != run.run_id:
                if run is not None:
                    run.running.discard(run_id)
                    if error is not None and not isinstance(error, GraphBubbleUp):
                        run.failed_parts.add(run_id)
                return
            if error is None and (run.running or closed_early()):
                # A sync stream closed early ends with no error (LangChain swallows the GeneratorExit),
                # its parts running or its lone generator unfinished (`closed_early`): it never answered.
                error = GeneratorExit("the stream was closed before the run ended")
            run.done = True
            run.output = output_text(outputs) if error is None else ""
            run.failed = error is not None
            run.error = clip_text(f"{type(error).__name__}: {error}") if error is not None else ""
            for member in run.members:
                self._root_of.pop(member, None)
                self._tools.pop(member, None)
            run.members.clear()
            run.running.clear()  # parts closed after a stream was: their ends are no longer ours
            # Settled before the trace is written, so a trace file that fails cannot leave the episode open.
            if error is not None and not isinstance(error, GraphBubbleUp) and run.reward is None:
                self._offload(self._settle_failed, list(run.episodes), f"{type(error).__name__}")
            elif error is None and (abandoned := run.abandoned()):
                run.episodes = [e for e in run.episodes if e not in abandoned]
                self._offload(self._settle_failed, abandoned, "the attempt that recalled it raised")
            if self.write_on == "end" or run.reward is not None:  # reported before it ended
                self._write(run)
            self._interrupted.ended(run, self.max_runs)
            self._forget_oldest()
            self._pending.forget_stale(self.bind_ttl, self.max_runs)

    def _forget_oldest(self) -> None:
        if len(self._runs) <= self.max_runs:
            return
        finished = [rid for rid, run in self._runs.items() if run.done]
        for rid in finished[: max(0, len(finished) - self.max_runs)]:
            self._write(run := self._runs.pop(rid))  # a trace held for a report: written, outcome null
            for episode_id in [e for e in run.episodes if self._by_episode.get(e) == rid]:
                self._by_episode.pop(episode_id)  # not a carried one: it points at the run that resumed

    def _count(self, run_id: UUID, what: str) -> None:
        with self._lock:
            if (run := self._run_of(run_id)) is not None:
                run.counts[what] += 1

    def _tool_error(self, run_id: UUID, message: str) -> None:
        run = self._run_of(run_id)
        if run is not None:
            run.counts["tool_errors"] += 1
            run.tool_errors.append(clip_text(f"{self._tools.get(run_id, 'tool')}: {message}", 1000))

    # -- traces and mirroring ----------------------------------------------------------------

    def _trace(self, run: RunRecord) -> Trace:
        return trace_of(self.lamar, run)

    def _write(self, run: RunRecord) -> None:
        if run.written:
            return
        run.written = True
        if self._writer is not None:
            self._offload(self._write_now, run)

    def _write_now(self, run: RunRecord) -> None:
        if self._writer is not None:
            with self._lock:
                trace = self._trace(run)  # may read the store: off the event loop too
            self._writer.write(trace)

    def _settle_failed(self, episodes: list[str], error: str) -> None:
        for episode_id in episodes:
            try:
                if self.failed_outcome is None:
                    self.lamar.expire(episode_id, f"the run failed: {error}")
                else:
                    self.lamar.report(episode_id, self.failed_outcome)
            except DuplicateReport:
                pass  # the app reported it already: nothing is left pending
            except LamarError as exc:  # fail open: the run's own error propagates, this one is only logged
                log.warning("Lamar could not settle episode %s of a failed run: %s", episode_id, exc)

    def _offload(self, work: Callable[..., None], *args: Any) -> None:
        """Run file and store I/O here, or on the worker thread when called on an event loop."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            try:
                work(*args)
            except Exception as exc:  # fail open, as on the worker thread: the run's bookkeeping goes on
                if self.raise_error:
                    raise
                warn_failed(exc)
            return
        with self._lock:  # as in _drain: queued before a close can shut this worker
            if self._io is None:
                self._io = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="lamar-callbacks")
            future = self._io.submit(work, *args)
        future.add_done_callback(log_failure)

    # -- LangChain events --------------------------------------------------------------------

    def on_chain_start(self, serialized: dict[str, Any] | None, inputs: Any, *, run_id: UUID,
                       parent_run_id: UUID | None = None, metadata: dict[str, Any] | None = None,
                       **kwargs: Any) -> None:
        self._start(run_id, parent_run_id, run_name(serialized, kwargs), inputs, metadata, kwargs.get("tags"))

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, outputs)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, error=error)

    def on_chat_model_start(self, serialized: dict[str, Any] | None, messages: list[list[Any]], *,
                            run_id: UUID, parent_run_id: UUID | None = None,
                            metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        self._start(run_id, parent_run_id, run_name(serialized, kwargs), messages[-1] if messages else [],
                    metadata, kwargs.get("tags"))

    def on_llm_start(self, serialized: dict[str, Any] | None, prompts: list[str], *, run_id: UUID,
                     parent_run_id: UUID | None = None, metadata: dict[str, Any] | None = None,
                     **kwargs: Any) -> None:
        self._start(run_id, parent_run_id, run_name(serialized, kwargs), prompts[-1] if prompts else "",
                    metadata, kwargs.get("tags"))

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        generations = getattr(response, "generations", None) or [[]]
        last = generations[-1][-1] if generations[-1] else None
        self._end(run_id, getattr(last, "message", None) or getattr(last, "text", ""))

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._count(run_id, "model_errors")
        self._end(run_id, error=error)

    def on_retriever_start(self, serialized: dict[str, Any] | None, query: str, *, run_id: UUID,
                           parent_run_id: UUID | None = None, metadata: dict[str, Any] | None = None,
                           **kwargs: Any) -> None:
        self._start(run_id, parent_run_id, run_name(serialized, kwargs), query, metadata, kwargs.get("tags"))

    def on_retriever_end(self, documents: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, list(documents))

    def on_retriever_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, error=error)

    def on_tool_start(self, serialized: dict[str, Any] | None, input_str: str, *, run_id: UUID,
                      parent_run_id: UUID | None = None, metadata: dict[str, Any] | None = None,
                      **kwargs: Any) -> None:
        name = run_name(serialized, kwargs)
        run = self._start(run_id, parent_run_id, name, input_str, metadata, kwargs.get("tags"))
        with self._lock:
            call = clip_text(f"{name}({input_str})", 1000)
            self._tools[run_id] = name
            run.counts["tool_calls"] += 1
            if call in run.seen_calls:
                run.counts["retries"] += 1
            run.seen_calls.add(call)
            run.attempted.append(call)

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        if getattr(output, "status", None) == "error":  # a ToolMessage from a handled tool error
            with self._lock:
                self._tool_error(run_id, str(getattr(output, "content", output)))
        self._end(run_id, output)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            self._tool_error(run_id, f"{type(error).__name__}: {error}")
        self._end(run_id, error=error)

    def on_retry(self, retry_state: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._count(run_id, "retries")

    def on_custom_event(self, name: str, data: Any, *, run_id: UUID, **kwargs: Any) -> None:
        if name != RECALL_EVENT or not isinstance(data, Mapping):
            return
        with self._lock:
            run = self._run_of(run_id)
            if run is None:
                return
            self._attach(run, data.get("episode_id"), run_id)
            if run.context is None and isinstance(data.get("context"), Mapping):
                run.context = dict(data["context"])


__all__ = ["ImplicitSignals", "LamarCallbackHandler"]
