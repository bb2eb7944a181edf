"""`create_lamar_tools`: Lamar as agent tools (search lessons; optionally report what the user
did), the way LangMem offers memory tools. The episode id travels in the tool's artifact."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Literal

from langchain_core.callbacks import adispatch_custom_event, dispatch_custom_event
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.prebuilt import ToolRuntime
from pydantic import BaseModel, Field, field_validator

from lamar import DuplicateReport, Recall, StoreError, UnknownEpisode
from lamar.arguments import slots
from lamar.experience import check_context, fit_context
from lamar.integration import engine as checked_engine
from lamar.signals import (
    TOOL_EPISODE,
    TOOL_EVIDENCE,
    TOOL_OUTCOME,
    TOOL_QUERY,
    TOOL_REPORT,
    TOOL_SEARCH,
    signal_named,
    tool_answer,
    tool_recorded,
)
from lamar_langchain.conventions import EPISODE_KEY, RECALL_EVENT, context_from_runtime, recall_event_data

ContextSource = Mapping[str, str] | Callable[[str], Mapping[str, str]] | None

log = logging.getLogger(__name__)

USER_OUTCOMES = ("shipped", "accepted", "reasked", "corrected", "reverted")


class SearchLessons(BaseModel):
    """Arguments of the search tool."""

    query: str = Field(description=TOOL_QUERY)


class ReportOutcome(BaseModel):
    """Arguments of the report tool: only the person's reaction counts, never the agent's view."""

    episode_id: str = Field(description=TOOL_EPISODE)
    outcome: Literal["shipped", "accepted", "reasked", "corrected", "reverted"] = Field(description=TOOL_OUTCOME)
    evidence: str = Field(description=TOOL_EVIDENCE)

    @field_validator("outcome", mode="before")
    @classmethod
    def _named(cls, value: Any) -> Any:
        # Read as `lam.report` reads a signal's name: the description itself spells one "re-asked".
        named = signal_named(value) if isinstance(value, str) else None
        return value if named is None else named.value


def create_lamar_tools(lamar: Any, *, context: ContextSource = None, k: int | None = None,
                       report: bool = False, prefix: str = "lamar") -> list[BaseTool]:
    """Tools an agent calls itself: a lesson search and, optionally, an outcome report.

    The search tool answers with the lessons block and the episode id in its text (so the
    model can name it when it reports) and returns ``{"lamar_episode_id", "experience_ids",
    "context"}`` as the artifact of its `ToolMessage` (``response_format="content_and_artifact"``),
    so the app and `LamarCallbackHandler` find the episode without parsing text. Each call is
    one episode.

    The report tool's schema says whose signal counts: the user's reaction (shipped, accepted,
    re-asked, corrected, reverted), with the evidence quoted, never the model's view of its
    own work. Leave it out (the default) when the app reports outcomes itself.

    Args:
        lamar: the `Lamar` engine.
        context: a mapping of strings, or a function of the query returning one. Default:
            the agent's runtime context (its `lamar_context` entry or attribute if any, else
            all of it), else `{}`.
        k: lesson slots per search (default: the engine's `k`).
        report: also return the report tool.
        prefix: the tools are named ``{prefix}_search_lessons`` and ``{prefix}_report_outcome``.

    Returns:
        ``[search]`` or ``[search, report]``.

    Raises:
        InvalidArgument: `lamar` is not a Lamar engine, or `k` is not a whole number >= 0.
        InvalidContext: `context` is a mapping that is not a mapping of strings.

    Example:
        >>> from lamar import Lamar, Experience
        >>> lam = Lamar(":memory:", seed=1)
        >>> _ = lam.add(Experience("tests are flaky", "rerun them once before debugging"))
        >>> print(*(t.name for t in create_lamar_tools(lam, report=True)))
        lamar_search_lessons lamar_report_outcome
    """
    checked_engine(lamar, "create_lamar_tools")  # inside a tool, a bad one would end the agent's run
    if k is not None:
        slots(k)
    checked = context if context is None or callable(context) else check_context(context)

    def resolve(query: str, runtime: ToolRuntime | None) -> dict[str, str]:
        if callable(checked):
            return fit_context(checked(query), where="the context function's result")
        if checked is not None:
            return dict(checked)
        return context_from_runtime(getattr(runtime, "context", None)) or {}

    def answer(rec: Recall, ctx: dict[str, str]) -> tuple[str, dict[str, Any]]:
        artifact = {EPISODE_KEY: rec.episode_id, "experience_ids": rec.ids, "context": ctx}
        return tool_answer(rec.episode_id, rec.as_prompt() if rec.experiences else ""), artifact

    # Fail open: what goes wrong in Lamar becomes the tool's answer (a ToolException, which
    # `handle_tool_error` hands to the model), never an error that ends the agent's run.
    def search(query: str, runtime: ToolRuntime = None) -> tuple[str, dict[str, Any]]:  # type: ignore[assignment]
        ctx = resolve(query, runtime)
        try:
            rec = lamar.recall(ctx, k=k)
        except StoreError as exc:
            raise _store_failure(NO_LESSONS, exc) from exc
        dispatch_custom_event(RECALL_EVENT, recall_event_data(rec.episode_id, rec.ids, ctx))
        return answer(rec, ctx)

    async def asearch(query: str, runtime: ToolRuntime = None) -> tuple[str, dict[str, Any]]:  # type: ignore[assignment]
        ctx = resolve(query, runtime)
        try:
            rec = await lamar.arecall(ctx, k=k)
        except StoreError as exc:
            raise _store_failure(NO_LESSONS, exc) from exc
        await adispatch_custom_event(RECALL_EVENT, recall_event_data(rec.episode_id, rec.ids, ctx))
        return answer(rec, ctx)

    tools: list[BaseTool] = [StructuredTool.from_function(
        func=search, coroutine=asearch, name=f"{prefix}_search_lessons", args_schema=SearchLessons,
        response_format="content_and_artifact", description=TOOL_SEARCH, handle_tool_error=True)]
    if report:
        def report_outcome(episode_id: str, outcome: str, evidence: str) -> str:
            try:
                lamar.report(episode_id, outcome)
            except StoreError as exc:
                raise _store_failure("the outcome was not recorded", exc) from exc
            except (DuplicateReport, UnknownEpisode) as exc:  # the model's mistake: its answer says so
                raise _not_recorded(exc) from exc
            return tool_recorded(outcome, episode_id)

        async def areport_outcome(episode_id: str, outcome: str, evidence: str) -> str:
            try:
                await lamar.areport(episode_id, outcome)
            except StoreError as exc:
                raise _store_failure("the outcome was not recorded", exc) from exc
            except (DuplicateReport, UnknownEpisode) as exc:  # the model's mistake: its answer says so
                raise _not_recorded(exc) from exc
            return tool_recorded(outcome, episode_id)

        tools.append(StructuredTool.from_function(
            func=report_outcome, coroutine=areport_outcome, name=f"{prefix}_report_outcome",
            args_schema=ReportOutcome, description=TOOL_REPORT, handle_tool_error=True))
    return tools


NO_LESSONS = "no lessons this time (go on without them): Lamar could not read its store"



def _not_recorded(exc: DuplicateReport | UnknownEpisode) -> ToolException:
    """A refused report in words the model can act on: the engine's advice names the Python API's options
    (`replace=True`, which the tool does not take, and must not: a model would use it to change its mind)."""
    said = str(exc).removesuffix(exc.advice)
    if isinstance(exc, DuplicateReport):
        said += "; an episode is reported once and the first report stands" if exc.advice else ""
    else:
        said += ": pass the episode id that the search tool returned for this task"
    return ToolException(f"the outcome was not recorded: {said}")

def _store_failure(said: str, exc: StoreError) -> ToolException:
    """The tool's answer for a store that failed, logged too: the model reads it, and the app's log
    must show it, or a store gone away goes unnoticed while the agent copes without it."""
    log.warning("Lamar's tool went on without its store (%s): %s", said, exc)
    return ToolException(f"{said}: {exc}")


__all__ = ["USER_OUTCOMES", "ReportOutcome", "SearchLessons", "create_lamar_tools"]
