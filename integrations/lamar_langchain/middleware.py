"""`LamarMiddleware`: one recall per agent run, its lessons appended to the system message of
every model call, its episode id kept in the agent state for the report."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ModelCallResult,
    ModelRequest,
    ModelResponse,
    PrivateStateAttr,
)
from langchain_core.callbacks import adispatch_custom_event, dispatch_custom_event
from langchain_core.messages import SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.runtime import Runtime

from lamar import Recall, Signal
from lamar.experience import check_context
from lamar_langchain.conventions import EPISODE_KEY, RECALL_EVENT, context_from_metadata, recall_event_data

ContextFunction = Callable[[Mapping[str, Any], Runtime[Any]], Mapping[str, str]]


class LamarAgentState(AgentState[Any]):
    """The agent state with the run's Lamar episode; it comes back in the `invoke` result."""

    lamar_episode_id: NotRequired[str | None]
    lamar_experience_ids: NotRequired[list[str]]
    # The rendered lessons: read on every model call, never shown in the result.
    lamar_lessons: NotRequired[Annotated[str, PrivateStateAttr]]


class LamarMiddleware(AgentMiddleware[LamarAgentState, Any]):
    """Lessons chosen by outcome, in the system message of an agent made by `create_agent`.

    Recalls once per agent run (`invoke` / `ainvoke`), before the first model call. The
    lessons are appended to the system message of every model call of that run and never
    enter the message history. The episode id is in the result as `"lamar_episode_id"`
    (and the injected lesson ids as `"lamar_experience_ids"`); report it with
    `middleware.report(result, Signal.SHIPPED)` or `lam.report(result["lamar_episode_id"], ...)`.

    The context of a run is `config["metadata"]["lamar_context"]` when the caller gives one,
    else `context`: a mapping, or a function `(state, runtime) -> mapping`.

    Args:
        lamar: the `Lamar` engine.
        context: a mapping of strings, or a function of the state and runtime returning one.
        k: lesson slots per run (default: the engine's `k`).

    Example:
        >>> from lamar import Lamar
        >>> LamarMiddleware(Lamar(":memory:"), {"project": "trace"}).name
        'LamarMiddleware'
    """

    state_schema = LamarAgentState

    def __init__(self, lamar: Any, context: Mapping[str, str] | ContextFunction | None = None, *,
                 k: int | None = None) -> None:
        super().__init__()
        self.lamar = lamar
        self.context = context if context is None or callable(context) else check_context(context)
        self.k = k

    # -- recall once per run -----------------------------------------------------------------

    def before_agent(self, state: LamarAgentState, runtime: Runtime[Any]) -> dict[str, Any]:
        ctx = self._context(state, runtime)
        rec = self.lamar.recall(ctx, k=self.k)
        config = _run_config()
        if config is not None:
            dispatch_custom_event(RECALL_EVENT, recall_event_data(rec.episode_id, rec.ids, ctx), config=config)
        return _state_update(rec)

    async def abefore_agent(self, state: LamarAgentState, runtime: Runtime[Any]) -> dict[str, Any]:
        ctx = self._context(state, runtime)
        rec = await self.lamar.arecall(ctx, k=self.k)
        config = _run_config()
        if config is not None:
            await adispatch_custom_event(RECALL_EVENT, recall_event_data(rec.episode_id, rec.ids, ctx),
                                         config=config)
        return _state_update(rec)

    def _context(self, state: Mapping[str, Any], runtime: Runtime[Any]) -> dict[str, str]:
        config = _run_config()
        given = context_from_metadata(config.get("metadata")) if config is not None else None
        if given is not None:
            return given
        if callable(self.context):
            return check_context(self.context(state, runtime))
        return dict(self.context or {})

    # -- inject on every model call ----------------------------------------------------------

    def wrap_model_call(self, request: ModelRequest[Any],
                        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]) -> ModelCallResult[Any]:
        return handler(_with_lessons(request))

    async def awrap_model_call(
        self, request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult[Any]:
        return await handler(_with_lessons(request))

    # -- report ------------------------------------------------------------------------------

    def report(self, result: Mapping[str, Any] | str, signal: Signal | float | str, *,
               replace: bool = False) -> str:
        """Report the outcome of an agent run.

        Args:
            result: the `invoke` result (or any state holding "lamar_episode_id"), or an episode id.
            signal: a `Signal`, its name, or a reward in [-1, 1].
            replace: replace an outcome already reported.

        Returns:
            The episode id reported.
        """
        episode_id = _episode_of(result)
        self.lamar.report(episode_id, signal, replace=replace)
        return episode_id

    async def areport(self, result: Mapping[str, Any] | str, signal: Signal | float | str, *,
                      replace: bool = False) -> str:
        """`report` without blocking the event loop."""
        return await asyncio.to_thread(self.report, result, signal, replace=replace)


def _run_config() -> RunnableConfig | None:
    try:
        return get_config()
    except RuntimeError:
        return None  # called outside a graph run (a hook invoked by hand): no config, no events


def _state_update(rec: Recall) -> dict[str, Any]:
    return {"lamar_episode_id": rec.episode_id, "lamar_experience_ids": rec.ids,
            "lamar_lessons": rec.as_prompt()}


def _with_lessons(request: ModelRequest[Any]) -> ModelRequest[Any]:
    """The request with this run's lessons appended to its system message (if there are any)."""
    lessons = request.state.get("lamar_lessons")
    if not isinstance(lessons, str) or not lessons:
        return request
    current = request.system_message
    if current is None:
        return request.override(system_message=SystemMessage(content=lessons))
    content: str | list[str | dict[Any, Any]]
    if isinstance(current.content, str):
        content = f"{current.content}\n\n{lessons}" if current.content else lessons
    else:  # content blocks: add the lessons as one more text block
        content = [*current.content, {"type": "text", "text": lessons}]
    return request.override(system_message=current.model_copy(update={"content": content}))


def _episode_of(result: Mapping[str, Any] | str) -> str:
    if isinstance(result, str):
        return result
    episode_id = result.get(EPISODE_KEY) if isinstance(result, Mapping) else None
    if not isinstance(episode_id, str) or not episode_id:
        raise ValueError("no 'lamar_episode_id' in this result: was LamarMiddleware in the agent's "
                         "middleware list, and is this the result of invoke()/ainvoke()?")
    return episode_id


__all__ = ["LamarAgentState", "LamarMiddleware"]
