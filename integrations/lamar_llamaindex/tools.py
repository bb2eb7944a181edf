"""`create_lamar_tools` for LlamaIndex agents: a lesson search `FunctionTool` (its raw output a
Document carrying the episode id) and, optionally, a report tool for the user's reaction."""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, TypeVar, get_args

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import BaseModel, Field
from llama_index.core.schema import Document
from llama_index.core.storage.chat_store.base_db import MessageStatus
from llama_index.core.tools import FunctionTool
from llama_index.core.workflow import Context

from lamar import DuplicateReport, InvalidArgument, Recall, StoreError, UnknownEpisode
from lamar.experience import check_context, fit_context
from lamar.signals import (
    TOOL_EPISODE,
    TOOL_EVIDENCE,
    TOOL_OUTCOME,
    TOOL_QUERY,
    TOOL_REPORT,
    TOOL_SEARCH,
    did_you_mean,
    signal_named,
    tool_answer,
    tool_recorded,
)
from lamar_llamaindex.memory import LamarMemoryBlock
from lamar_llamaindex.nodes import EPISODE_ID, engine, slots
from lamar_llamaindex.outcomes import record_episode

ContextSource = Mapping[str, str] | Callable[[str], Mapping[str, str]] | None
GO_ON = "no lessons this time (go on without them)"
NO_LESSONS = f"{GO_ON}: Lamar could not use its store"
log = logging.getLogger(__name__)
T = TypeVar("T")


class SearchLessons(BaseModel):
    """Arguments of the search tool."""

    query: str = Field(description=TOOL_QUERY)


Outcome = Literal["shipped", "accepted", "reasked", "corrected", "reverted"]
# Lessons from a `LamarMemoryBlock` reach the model without an episode id (the block's text is the lessons alone,
# gone from the next turn's prompt), so the report then names the turn the user's new message reacts to.
EPISODE = (f"{TOOL_EPISODE} Leave it out when your lessons came with your memory rather than from a search: "
           "the report is then for your previous answer.")
NOTHING_TO_REPORT = "Nothing to report: your previous answer had no lessons (Lamar could not recall them)."
OUTCOMES: tuple[str, ...] = get_args(Outcome)


class ReportOutcome(BaseModel):
    """Arguments of the report tool: only the person's reaction counts, never the agent's view."""

    episode_id: str = Field(default="", description=EPISODE)
    outcome: Outcome = Field(description=TOOL_OUTCOME)
    evidence: str = Field(description=TOOL_EVIDENCE)


def create_lamar_tools(lamar: Any, *, context: ContextSource = None, k: int | None = None,
                       report: bool = False, prefix: str = "lamar") -> list[FunctionTool]:
    """Tools a LlamaIndex agent (`FunctionAgent`, `ReActAgent`) calls itself.

    The search tool's text names the episode and lists the lessons; its raw output is a
    `Document` whose metadata holds ``episode_id`` and ``experience_ids`` (the agent's
    `ToolCallResult.tool_output.raw_output`), and the episode joins any open
    `track_episodes()` log. Each call is one episode, except in an agent whose `Memory` holds a
    `LamarMemoryBlock` on the same engine: there a user turn is one episode, whichever of the
    block and the search recalls first, and every search in the turn answers with its lessons.
    The report tool's schema says whose signal counts: the user's reaction, with the evidence quoted.
    Called without an episode id in such an agent, it reports the block's turn before the current one.

    Args:
        lamar: the `Lamar` engine.
        context: a mapping of strings, or a function of the query returning one (default `{}`).
        k: lesson slots per search (default: the engine's `k`).
        report: also return the report tool.
        prefix: the tools are named ``{prefix}_search_lessons`` and ``{prefix}_report_outcome``.

    Returns:
        ``[search]`` or ``[search, report]``.

    Example:
        >>> from lamar import Lamar
        >>> print(*(t.metadata.name for t in create_lamar_tools(Lamar(":memory:"), report=True)))
        lamar_search_lessons lamar_report_outcome
    """
    engine(lamar, "create_lamar_tools")
    slots(k)
    checked = context if context is None or callable(context) else check_context(context)

    def resolve(query: str) -> dict[str, str]:
        if callable(checked):
            return fit_context(checked(query), where="the context function's result")
        return dict(checked or {})

    def answer(rec: Recall) -> Document:
        text = tool_answer(rec.episode_id, rec.as_prompt() if rec.experiences else "")
        return Document(text=text, metadata={EPISODE_ID: rec.episode_id, "experience_ids": rec.ids,
                                             "context": dict(rec.context)})

    # Fail open: a store that cannot be read or written (read-only, locked), or the app's context function
    # failing, costs the agent its lessons, never its run; the text tells the model to go on, and no
    # episode means no report.
    def without_lessons(exc: Exception, ctx: dict[str, str]) -> Document:
        if isinstance(exc, StoreError):
            log.warning("Lamar could not search its lessons (the agent goes on without them): %s", exc)
            said = f"{NO_LESSONS}: {exc}"
        else:
            log.warning("Lamar's context function failed with %s: %s (the agent goes on without lessons)",
                        type(exc).__name__, exc)
            said = f"{GO_ON}: the application could not say the task's context"
        return Document(text=f"{said}; no episode was logged, so there is none to report.",
                        metadata={"experience_ids": [], "context": ctx})

    def recaller(query: str) -> tuple[Callable[[], Recall | None], list[tuple[Exception, dict[str, str]]]]:
        failed: list[tuple[Exception, dict[str, str]]] = []

        def fresh() -> Recall | None:
            try:
                fields = resolve(query)
            except Exception as exc:  # noqa: BLE001 - the app's function, inside the agent's tool call
                failed.append((exc, {}))
                return None
            try:
                rec: Recall = lamar.recall(fields, k=k)
            except StoreError as exc:
                failed.append((exc, fields))
                return None
            record_episode(rec.episode_id, fields, rec.experiences)
            return rec
        return fresh, failed

    def search(query: str, ctx: Context | None = None) -> Document:
        fresh, failed = recaller(query)
        # Sync inside a turn too (a CodeActAgent's code, a workflow's sync step): the turn is one episode.
        ctx = ctx or _step_context()
        # Never the chat store from here: a driver whose connections belong to the agent's event loop
        # (asyncpg) fails on another loop, or crashes the process while its own loop uses them too.
        turn = _run(_memory_turn(ctx, lamar, history=False)) if ctx is not None else None
        rec = fresh() if turn is None else _join(*turn, fresh)
        return answer(rec) if rec is not None else without_lessons(*failed[0])  # None only when fresh() failed

    async def asearch(query: str, ctx: Context | None = None) -> Document:
        turn = await _memory_turn(ctx or _step_context(), lamar)
        if turn is None:
            try:
                fields = resolve(query)
            except Exception as exc:  # noqa: BLE001 - the app's function, inside the agent's tool call
                return without_lessons(exc, {})
            try:
                rec = await lamar.arecall(fields, k=k)
            except StoreError as exc:
                return without_lessons(exc, fields)
            record_episode(rec.episode_id, fields, rec.experiences)
            return answer(rec)
        # The agent's memory holds Lamar's block: the turn is one episode, whichever reads first.
        fresh, failed = recaller(query)
        rec = await asyncio.to_thread(_join, *turn, fresh)
        return answer(rec) if rec is not None else without_lessons(*failed[0])  # None only when fresh() failed

    search.__name__ = search.__qualname__ = f"{prefix}_search_lessons"  # what a CodeActAgent's code calls
    search.__doc__ = TOOL_SEARCH
    partial: dict[str, Any] = {}
    if hasattr(Context, "get_step_context"):
        # The tool finds the step's Context itself: a `Context` parameter in the signature would make
        # CodeActAgent refuse the tool ("requires context"). An app may still pass ctx= by hand.
        search.__signature__ = inspect.signature(search).replace(  # type: ignore[attr-defined]
            parameters=[inspect.Parameter("query", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=str)],
            return_annotation=Document)
    else:  # an older llama-index-workflows: agents hand a tool its Context by the parameter's annotation
        search.__annotations__["ctx"] = asearch.__annotations__["ctx"] = Context
        partial = {"ctx": None}  # None outside a workflow: called by hand

    tools = [FunctionTool.from_defaults(
        fn=search, async_fn=asearch, name=f"{prefix}_search_lessons", fn_schema=SearchLessons,
        description=TOOL_SEARCH, partial_params=partial)]
    if report:
        def report_outcome(episode_id: Any = None, outcome: Any = None, evidence: Any = None) -> str:
            if episode_id is None or episode_id == "":
                ctx = _step_context()
                episode_id = _previous_turn(_run(_memory_turn(ctx, lamar, history=False)) if ctx is not None else None)
                if episode_id is None:
                    return NOTHING_TO_REPORT
            checked = _report_arguments(episode_id, outcome, evidence)
            try:
                lamar.report(checked.episode_id, checked.outcome)
            except StoreError as exc:
                _log_lost_report(checked.episode_id, exc)
                raise
            except (DuplicateReport, UnknownEpisode) as exc:  # the model's mistake: said in the tool's terms
                raise _not_recorded(exc) from exc
            return tool_recorded(checked.outcome, checked.episode_id)

        async def areport_outcome(episode_id: Any = None, outcome: Any = None, evidence: Any = None) -> str:
            if episode_id is None or episode_id == "":
                episode_id = _previous_turn(await _memory_turn(_step_context(), lamar, history=False))
                if episode_id is None:
                    return NOTHING_TO_REPORT
            checked = _report_arguments(episode_id, outcome, evidence)
            try:
                await lamar.areport(checked.episode_id, checked.outcome)
            except StoreError as exc:
                _log_lost_report(checked.episode_id, exc)
                raise
            except (DuplicateReport, UnknownEpisode) as exc:  # the model's mistake: said in the tool's terms
                raise _not_recorded(exc) from exc
            return tool_recorded(checked.outcome, checked.episode_id)

        report_outcome.__name__ = report_outcome.__qualname__ = f"{prefix}_report_outcome"
        report_outcome.__doc__ = TOOL_REPORT
        tools.append(FunctionTool.from_defaults(
            fn=report_outcome, async_fn=areport_outcome, name=f"{prefix}_report_outcome",
            fn_schema=ReportOutcome, description=TOOL_REPORT))
    return tools


def _step_context() -> Context | None:
    """The Context of the workflow step this call runs in (an agent's tool call), or None outside one."""
    try:
        return Context.get_step_context()
    except Exception:  # noqa: BLE001 - called by hand, outside any workflow: the search is an episode of its own
        return None


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Await from sync code: here when no loop runs in this thread (a worker thread), else in a thread
    of its own, since the loop that called this sync code cannot be awaited from inside it."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(contextvars.copy_context().run, asyncio.run, coroutine).result()


def _join(block: LamarMemoryBlock, session_id: str, messages: list[ChatMessage] | None,
          fresh: Callable[[], Recall | None]) -> Recall | None:
    # No history: the block's last turn in the session, which it read at the start of the agent's step.
    if messages is None:
        return block.session_recall(session_id, fresh)
    return block.turn_recall(messages, session_id, fresh)


async def _memory_turn(ctx: Context | None, lamar: Any, *, history: bool = True
                       ) -> tuple[LamarMemoryBlock, str, list[ChatMessage] | None] | None:
    """The `LamarMemoryBlock` on this engine in the memory of the agent's run (the workflow's
    Context holds it), with its session and, when `history`, its chat history (None when not read,
    or unreadable); None when there is no such block."""
    if ctx is None:
        return None
    try:
        memory = await ctx.store.get("memory", default=None)
        block = next((b for b in getattr(memory, "memory_blocks", None) or ()
                      if isinstance(b, LamarMemoryBlock) and b.lamar is lamar), None)
        if block is None:
            return None
    except Exception as exc:  # noqa: BLE001 - inside the agent's run: the search goes on as its own episode
        log.warning("Lamar could not read the agent's memory (the search is an episode of its own): %s", exc)
        return None
    if not history:
        return block, memory.session_id, None
    try:
        messages = await memory.aget_all(status=MessageStatus.ACTIVE)
    except Exception as exc:  # noqa: BLE001 - inside the agent's run: the block's record of the turn stands in
        log.warning("Lamar could not read the agent's chat history (the search joins the block's last turn): %s", exc)
        return block, memory.session_id, None
    return block, memory.session_id, messages


def _previous_turn(turn: tuple[LamarMemoryBlock, str, list[ChatMessage] | None] | None) -> str | None:
    """The episode a report without an id is for: the previous turn of the agent's `LamarMemoryBlock` (None when
    that turn had no lessons), or the refusal a missing id gets when the agent's memory holds no such block."""
    if turn is None:
        raise InvalidArgument("episode_id must be the episode id the search tool returned; got None")
    block, session_id, _ = turn
    return block.previous_episode_id(session_id)


def _log_lost_report(episode_id: str, exc: StoreError) -> None:
    """The agent reads the store's error as the tool's and goes on; the app's log must show it too,
    or a store gone away goes unnoticed while every report the agent makes is lost."""
    log.warning("Lamar could not record the outcome of episode %s (the agent goes on): %s", episode_id, exc)


def _not_recorded(exc: DuplicateReport | UnknownEpisode) -> DuplicateReport | UnknownEpisode:
    """A refused report in words the model can act on, still the error a Python caller catches: the engine's
    advice names the Python API's options (`replace=True`, which the tool does not take, and must not: a model
    would use it to change the user's verdict; `recall()`, which the model never called)."""
    said = str(exc).removesuffix(exc.advice)
    if isinstance(exc, DuplicateReport):
        stands = "; an episode is reported once and the first report stands" if exc.advice else ""
        return DuplicateReport(said + stands)  # no advice: a compacted outcome, final for anyone
    return UnknownEpisode(f"{said}: pass the episode id that the search tool returned for this task")


def _report_arguments(episode_id: Any, outcome: Any, evidence: Any) -> ReportOutcome:
    """The report tool's arguments, or an `InvalidArgument` the model can act on: the tool's
    error text is what it reads, so it names the field and the values allowed, not a validator's dump."""
    if not isinstance(episode_id, str) or not episode_id:
        raise InvalidArgument(f"episode_id must be the episode id the search tool returned; got {episode_id!r}")
    # Read as every entry point reads a signal's name: the description itself spells one "re-asked".
    named = signal_named(outcome) if isinstance(outcome, str) else None
    if named is None:
        raise InvalidArgument(f"outcome must be one of {', '.join(OUTCOMES)} (what the user did); got {outcome!r}"
                              + did_you_mean(outcome))
    outcome = named.value
    if not isinstance(evidence, str):
        raise InvalidArgument(f"evidence must quote what the user said or did; got {evidence!r}")
    return ReportOutcome(episode_id=episode_id, outcome=outcome, evidence=evidence)


__all__ = ["ReportOutcome", "SearchLessons", "create_lamar_tools"]
