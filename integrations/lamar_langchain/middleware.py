"""`LamarMiddleware`: one recall per agent run, its lessons appended to the system message of
every model call, its episode id kept in the agent state; the previous turn's outcome may come
with the next message of a checkpointed thread."""

from __future__ import annotations

import asyncio
import logging
import threading
import warnings
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ModelCallResult,
    ModelRequest,
    ModelResponse,
    PrivateStateAttr,
)
from langchain_core.callbacks import BaseCallbackHandler, adispatch_custom_event, dispatch_custom_event
from langchain_core.messages import BaseMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tracers.context import register_configure_hook
from langgraph.config import get_config
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime
from langgraph.types import Command

from lamar import (
    DuplicateReport,
    InvalidArgument,
    InvalidReward,
    Lamar,
    LamarError,
    Recall,
    Signal,
    StoreError,
    UnknownEpisode,
)
from lamar.arguments import slots
from lamar.experience import check_context, fit_context
from lamar.integration import engine as checked_engine
from lamar.integration import not_in_store, settled_as_failed
from lamar.integration import outcome as checked_outcome
from lamar.recall import render_prompt
from lamar.signals import to_reward
from lamar_langchain.arity import state_and_runtime
from lamar_langchain.conventions import (
    EPISODE_KEY,
    RECALL_EVENT,
    context_from_metadata,
    context_from_runtime,
    recall_event_data,
)
from lamar_langchain.unheard import unheard

ContextFunction = Callable[[Mapping[str, Any], Runtime[Any]], Mapping[str, str]]
Outcome = Signal | float | str
OutcomeFunction = Callable[[Mapping[str, Any], Runtime[Any]], Outcome | None]

log = logging.getLogger(__name__)
_PROMPTS_KEPT = 1024
_CUT_SHORT = "the run stopped before it ended"  # never an outcome: every outcome passes to_reward first


class LamarAgentState(AgentState[Any]):
    """The agent state with the run's Lamar episode; it comes back in the `invoke` result.

    `lamar_outcome` is an input: the outcome of the thread's previous turn, sent with the
    next message. No lesson text is kept in state, so none shows in streamed updates.
    """

    lamar_episode_id: NotRequired[str | None]
    lamar_experience_ids: NotRequired[list[str]]
    lamar_outcome: NotRequired[str | float | None]
    lamar_reported: NotRequired[Annotated[str | None, PrivateStateAttr]]
    lamar_running: NotRequired[Annotated[str | None, PrivateStateAttr]]  # recalled, end not reached


class LamarMiddleware(AgentMiddleware[LamarAgentState, Any]):
    """Lessons chosen by outcome, in the system message of an agent made by `create_agent`.

    Recalls once per agent run (`invoke` / `ainvoke`), before the first model call. The
    lessons are appended to the system message of every model call of that run and never
    enter the message history or the state. The episode id is in the result as
    `"lamar_episode_id"` (and the injected lesson ids as `"lamar_experience_ids"`); report it
    with `middleware.report(result, Signal.SHIPPED)` or `lam.report(result["lamar_episode_id"], ...)`.

    On a checkpointed thread the outcome of a turn often shows only in the next message
    ("that broke the build"). Send it with that message, ``agent.invoke({"messages": [...],
    "lamar_outcome": "corrected"}, config)``, or let `outcome` read it from the state; the
    previous turn's episode is reported before the new turn recalls. When the next message
    brings no outcome, `silent_outcome` is reported (None leaves the episode pending, listed
    by `lam.pending()` and settled by the engine's `pending_after` policy).

    Lamar fails open here: a store that cannot be read or written (`StoreError`) costs the
    run its lessons, or the previous turn its report, never the turn itself (a warning is
    logged). A bad context is the caller's error and raises.

    If a model or tool call raises or is cancelled (an interrupt is not an error), the run's
    episode is recorded as expired, or given `failed_outcome`, before the error propagates: a
    failed run leaves no episode behind. A run that stopped between two steps (a stream closed
    by the caller) is settled so when the thread's next turn starts. A late report still
    replaces the expiry. List it before retry and fallback middleware, so that it sees only
    the failures they let through, but
    after a middleware that sets the system message (`dynamic_prompt`), which would replace the
    lessons (a warning says so, once).

    The context of a run is, in order: `config["metadata"]["lamar_context"]`, `context` (a
    mapping, or a function `(state, runtime) -> mapping`), then the agent's runtime context
    (its `lamar_context` entry or attribute if it has one, else all of it). With an empty
    context only unscoped lessons are eligible; the middleware warns once when every lesson
    is scoped, since then nothing can ever be recalled.

    Args:
        lamar: the `Lamar` engine.
        context: a mapping of strings, or a function of the state and runtime returning one.
        k: lesson slots per run (default: the engine's `k`).
        outcome: a function of the state and runtime returning the previous turn's outcome
            (read before `state["lamar_outcome"]` is consulted), or None.
        silent_outcome: what the previous turn gets when the next message brings no outcome.
        failed_outcome: what a run whose model or tool call raised gets (None: expired).

    Raises:
        InvalidArgument: `lamar` is not a Lamar engine, `k` is not a whole number >= 0, or
            `outcome` is not a function.
        InvalidReward: `silent_outcome` or `failed_outcome` is not an outcome.

    Example:
        >>> from lamar import Lamar
        >>> LamarMiddleware(Lamar(":memory:"), {"project": "trace"}).name
        'LamarMiddleware'
    """

    state_schema = LamarAgentState

    def __init__(self, lamar: Any, context: Mapping[str, str] | ContextFunction | None = None, *,
                 k: int | None = None, outcome: OutcomeFunction | None = None,
                 silent_outcome: Outcome | None = None, failed_outcome: Outcome | None = None) -> None:
        super().__init__()
        self.lamar = checked_engine(lamar, "LamarMiddleware")
        self.context = (state_and_runtime(context, "context") if callable(context)
                        else None if context is None else check_context(context))
        self.k = None if k is None else slots(k)
        if outcome is not None and not callable(outcome):
            raise InvalidArgument(f"outcome must be a function (state, runtime) -> outcome, or None; "
                                  f"got {type(outcome).__name__}")
        self.outcome = None if outcome is None else state_and_runtime(outcome, "outcome")
        self.silent_outcome = checked_outcome(silent_outcome, "silent_outcome")
        self.failed_outcome = checked_outcome(failed_outcome, "failed_outcome")
        self._prompts: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()
        self._checked_empty = False
        self._warned_dropped = False

    # -- recall once per run, after reporting the previous turn -----------------------------

    def before_agent(self, state: LamarAgentState, runtime: Runtime[Any]) -> dict[str, Any]:
        previous = self._previous(state, runtime)
        update: dict[str, Any] = {"lamar_outcome": None}  # an outcome counts for one turn only
        if previous is not None:
            self._send_previous(*previous)
            update["lamar_reported"] = previous[0]
        ctx = self._context(state, runtime)
        self._warn_if_nothing_can_match(ctx)
        try:
            rec = self.lamar.recall(ctx, k=self.k)
        except StoreError as exc:
            return {**update, **_without_lessons(exc)}
        config = _run_config()
        if config is not None:
            dispatch_custom_event(RECALL_EVENT, recall_event_data(rec.episode_id, rec.ids, ctx), config=config)
        return {**update, **self._state_update(rec)}

    async def abefore_agent(self, state: LamarAgentState, runtime: Runtime[Any]) -> dict[str, Any]:
        previous = self._previous(state, runtime)
        update: dict[str, Any] = {"lamar_outcome": None}
        if previous is not None:
            await asyncio.to_thread(self._send_previous, *previous)
            update["lamar_reported"] = previous[0]
        ctx = self._context(state, runtime)
        await asyncio.to_thread(self._warn_if_nothing_can_match, ctx)
        try:
            rec = await self.lamar.arecall(ctx, k=self.k)
        except StoreError as exc:
            return {**update, **_without_lessons(exc)}
        config = _run_config()
        if config is not None:
            await adispatch_custom_event(RECALL_EVENT, recall_event_data(rec.episode_id, rec.ids, ctx),
                                         config=config)
        return {**update, **self._state_update(rec)}

    def _previous(self, state: Mapping[str, Any], runtime: Runtime[Any]) -> tuple[str, Outcome, bool] | None:
        """The thread's previous episode, the outcome the new message brings for it, and whether
        that outcome is only the silent default."""
        episode = state.get(EPISODE_KEY)
        if not isinstance(episode, str) or not episode:
            unheard(state, EPISODE_KEY)  # an outcome sent with this message for a run the state never held
            return None
        if state.get("lamar_reported") == episode:
            return None
        value, unread = None, False
        if self.outcome is not None:
            try:
                value = self.outcome(state, runtime)
            except Exception as exc:  # noqa: BLE001 - the app's function, inside the agent's turn: fail open
                log.warning("Lamar's outcome function raised %s: %s (episode %s stays pending)",
                            type(exc).__name__, exc, episode)
                unread = True
        if value is None:
            value = state.get("lamar_outcome")
        if value is not None:
            try:
                to_reward(value)
            except InvalidReward as exc:
                # The input is checkpointed before this hook runs: raising would fail every later
                # turn of the thread on the same stored value, so the turn goes on without it.
                log.warning("Lamar ignored the outcome %r sent for episode %s, which stays pending: %s",
                            value, episode, exc)
                return None
            return episode, value, False
        if state.get("lamar_running") == episode:
            # Its run stopped between two steps (a stream the caller closed, a process that died)
            # and never answered: settled like a cancelled run, never accepted by silence.
            return episode, _CUT_SHORT, True
        if unread:  # an outcome the function could not read is no silence to accept
            return None
        return None if self.silent_outcome is None else (episode, self.silent_outcome, True)

    def _send_previous(self, episode: str, outcome: Outcome, silent: bool) -> None:
        if outcome == _CUT_SHORT:
            self._settle(episode, "the agent run stopped before it ended")
            return
        if silent and settled_as_failed(self.lamar, episode):
            return  # silence after a failed run is no acceptance; only an explicit outcome replaces it
        _report_quietly(self.lamar, episode, outcome)

    def _context(self, state: Mapping[str, Any], runtime: Runtime[Any]) -> dict[str, str]:
        config = _run_config()
        given = context_from_metadata(config.get("metadata")) if config is not None else None
        if given is not None:
            return given
        if callable(self.context):
            return fit_context(self.context(state, runtime), where="the context function's result")
        if self.context is not None:
            return dict(self.context)
        return context_from_runtime(getattr(runtime, "context", None)) or {}

    def _warn_if_nothing_can_match(self, ctx: Mapping[str, str]) -> None:
        if ctx or self._checked_empty:
            return
        try:
            lessons = self.lamar.experiences()
        except StoreError:
            return  # the recall that follows meets the same error, and goes on without lessons
        self._checked_empty = True
        if lessons and all(len(e.scope) for e in lessons if e.status.value != "retired"):
            warnings.warn(
                "LamarMiddleware recalled with an empty context while every lesson is scoped, so no "
                "lesson can be injected: pass context=..., invoke the agent with context={...} "
                "(create_agent(..., context_schema=...)), or set config['metadata']['lamar_context']",
                UserWarning, stacklevel=2)

    def _state_update(self, rec: Recall) -> dict[str, Any]:
        self._remember(rec.episode_id, rec.as_prompt())
        return {EPISODE_KEY: rec.episode_id, "lamar_experience_ids": rec.ids, "lamar_reported": None,
                "lamar_running": rec.episode_id}

    def after_agent(self, state: LamarAgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return {"lamar_running": None} if state.get("lamar_running") else None

    async def aafter_agent(self, state: LamarAgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return self.after_agent(state, runtime)

    # -- inject on every model call, settle a failed run -------------------------------------

    def wrap_model_call(self, request: ModelRequest[Any],
                        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]) -> ModelCallResult[Any]:
        prompt = self._prompt(request.state)
        try:
            with self._watch(prompt):
                return handler(_with_lessons(request, prompt))
        except GraphBubbleUp:
            raise
        except Exception as exc:
            self._settle_failed(request.state, exc)
            raise

    async def awrap_model_call(
        self, request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult[Any]:
        prompt = await asyncio.to_thread(self._prompt, request.state)
        try:
            with self._watch(prompt):
                return await handler(_with_lessons(request, prompt))
        except GraphBubbleUp:
            raise
        except (Exception, asyncio.CancelledError) as exc:
            await self._asettle_failed(request.state, exc)
            raise

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], ToolMessage | Command[Any]]) -> Any:
        try:
            return handler(request)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            self._settle_failed(request.state, exc)
            raise

    async def awrap_tool_call(self, request: Any,
                              handler: Callable[[Any], Awaitable[ToolMessage | Command[Any]]]) -> Any:
        try:
            return await handler(request)
        except GraphBubbleUp:
            raise
        except (Exception, asyncio.CancelledError) as exc:
            await self._asettle_failed(request.state, exc)
            raise

    @contextmanager
    def _watch(self, lessons: str) -> Iterator[None]:
        """Warn once when the model calls made inside never saw the lessons: a middleware listed
        after this one wraps the call inside it, and one that sets the system message drops them."""
        if not lessons:
            yield
            return
        seen = _LessonsSeen(lessons)
        token = _WATCHING.set(seen)
        try:
            yield
        finally:
            _WATCHING.reset(token)
        if seen.calls and not seen.found and not self._warned_dropped:
            self._warned_dropped = True
            warnings.warn(
                "LamarMiddleware's lessons never reached the model: a middleware listed after it "
                "replaced the system message (dynamic_prompt, say). List that middleware before "
                "LamarMiddleware, so that the lessons are appended to the prompt it sets",
                UserWarning, stacklevel=2)

    def _prompt(self, state: Mapping[str, Any]) -> str:
        """This run's lessons block: kept in memory, rebuilt from the store after a restart."""
        episode = state.get(EPISODE_KEY)
        if not isinstance(episode, str):
            return ""
        with self._lock:
            if episode in self._prompts:
                return self._prompts[episode]
        try:
            prompt = render_prompt([self.lamar.get(i) for i in state.get("lamar_experience_ids") or []])
        except LamarError as exc:  # fail open: a lesson gone from the store costs the lessons, not the turn
            log.warning("Lamar could not rebuild the lessons of episode %s: %s", episode, exc)
            prompt = ""
        self._remember(episode, prompt)
        return prompt

    def _remember(self, episode: str, prompt: str) -> None:
        with self._lock:
            self._prompts[episode] = prompt
            while len(self._prompts) > _PROMPTS_KEPT:
                self._prompts.popitem(last=False)

    def _settle_failed(self, state: Mapping[str, Any], exc: BaseException) -> None:
        episode = state.get(EPISODE_KEY)
        if isinstance(episode, str) and state.get("lamar_reported") != episode:
            self._settle(episode, f"the agent run failed: {type(exc).__name__}")

    def _settle(self, episode: str, reason: str) -> None:
        try:
            if self.failed_outcome is None:
                self.lamar.expire(episode, reason)
            else:
                _report_quietly(self.lamar, episode, self.failed_outcome)
        except UnknownEpisode:
            log.warning("%s", not_in_store(self.lamar, episode, "settlement of a failed run"))
        except StoreError as exc:  # fail open in one line: a traceback would bury the agent's own error
            log.warning("Lamar could not settle episode %s of a failed run (it stays pending): %s", episode, exc)
        except Exception:  # fail open: the agent's own error is the one to surface
            log.exception("Lamar could not settle episode %s of a failed run", episode)

    async def _asettle_failed(self, state: Mapping[str, Any], exc: BaseException) -> None:
        """`_settle_failed` off the event loop. A cancelled run (a timeout, an astream closed
        half-way) never answered either: it is settled like one that raised."""
        try:
            await asyncio.to_thread(self._settle_failed, state, exc)
        except asyncio.CancelledError:
            pass  # cancelled again while waiting: the worker thread still records the settlement

    # -- report ------------------------------------------------------------------------------

    def report(self, result: Mapping[str, Any] | str, signal: Signal | float | str, *,
               replace: bool = False) -> str:
        """Report the outcome of an agent run.

        Args:
            result: the `invoke` result (a `GraphOutput` too, with ``version="v2"``; or any state
                holding "lamar_episode_id"), or an episode id.
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


class _LessonsSeen(BaseCallbackHandler):
    """Counts the chat model calls of one wrapped model call, and whether any saw the lessons."""

    run_inline = True

    def __init__(self, lessons: str) -> None:
        self.lessons = lessons
        self.calls = 0
        self.found = False

    def on_chat_model_start(self, serialized: dict[str, Any], messages: list[list[BaseMessage]],
                            **kwargs: Any) -> None:
        self.calls += 1
        self.found = self.found or any(
            isinstance(m, SystemMessage) and self.lessons in m.text for batch in messages for m in batch)


# LangChain adds the handler in this variable to every run started while it is set (as it does
# for its tracers): the only way to see the messages the model got, below the inner middleware.
_WATCHING: ContextVar[_LessonsSeen | None] = ContextVar("lamar_lessons_seen", default=None)
register_configure_hook(_WATCHING, inheritable=True)


def _report_quietly(lamar: Lamar, episode: str, outcome: Outcome) -> None:
    try:
        lamar.report(episode, outcome)
    except DuplicateReport:
        pass  # the app reported it already
    except UnknownEpisode:
        log.warning("%s", not_in_store(lamar, episode, "report"))
    except StoreError as exc:  # fail open: the turn goes on; the episode stays pending
        log.warning("Lamar could not report episode %s: %s", episode, exc)


def _without_lessons(exc: StoreError) -> dict[str, Any]:
    """The state of a run whose recall failed: no episode, no lessons, the agent's turn goes on."""
    log.warning("Lamar could not recall (the run goes on without lessons): %s", exc)
    return {EPISODE_KEY: None, "lamar_experience_ids": [], "lamar_reported": None}


def _run_config() -> RunnableConfig | None:
    try:
        return get_config()
    except RuntimeError:
        return None  # called outside a graph run (a hook invoked by hand): no config, no events


def _with_lessons(request: ModelRequest[Any], lessons: str) -> ModelRequest[Any]:
    """The request with this run's lessons appended to its system message (if there are any)."""
    if not lessons:
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
    if not isinstance(result, Mapping) and isinstance(getattr(result, "value", None), Mapping):
        result = result.value  # a GraphOutput: what invoke(..., version="v2") returns
    episode_id = result.get(EPISODE_KEY) if isinstance(result, Mapping) else None
    if episode_id is None and isinstance(result, Mapping) and EPISODE_KEY in result:  # as _without_lessons leaves it
        raise InvalidArgument("this run has no Lamar episode: its recall failed (a warning was logged) and the run "
                              "went on without lessons, so there is no outcome to report; skip the report when "
                              "result['lamar_episode_id'] is None")
    if not isinstance(episode_id, str) or not episode_id:
        raise InvalidArgument("no 'lamar_episode_id' in this result: was LamarMiddleware in the agent's "
                         "middleware list, and is this the result of invoke()/ainvoke()?")
    return episode_id


__all__ = ["LamarAgentState", "LamarMiddleware"]
