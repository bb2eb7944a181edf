"""`LamarTraceHandler`: write one sleep trace per LlamaIndex query, chat call or agent run, from the
instrumentation's events and spans."""

from __future__ import annotations

import contextvars
import inspect
import logging
import os
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from llama_index.core.agent.workflow import AgentWorkflow, BaseWorkflowAgent
from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.chat_engine.types import BaseChatEngine, StreamingAgentChatResponse
from llama_index.core.instrumentation import Dispatcher, get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.query import QueryEndEvent, QueryStartEvent
from llama_index.core.instrumentation.events.span import SpanDropEvent
from llama_index.core.instrumentation.span_handlers import NullSpanHandler
from llama_index.core.schema import NodeWithScore, QueryBundle

from lamar import InvalidContext, StoreError
from lamar.experience import check_context
from lamar.integration import a_or_an
from lamar.sleep.trace_limits import clip_text
from lamar.sleep.traces import Trace, TraceWriter
from lamar_llamaindex.nodes import episode_id_of, experience_id_of
from lamar_llamaindex.outcomes import EpisodeLog, close_log, episode_ids, open_log

logger = logging.getLogger(__name__)

_MAX_PENDING = 1024  # calls started and not yet ended; a bound so a lost end event cannot leak memory
_QUERIES = frozenset({"query", "aquery"})
_CHATS = frozenset({"chat", "achat", "stream_chat", "astream_chat"})
# The traced calls open in this context, of every handler: a call inside one a handler traces
# already (a query engine tool in an agent's run) belongs to that call's trace, not to one of its own.
_OPEN: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("lamar_llamaindex_traced", default=())


@dataclass
class _Pending:
    started: float
    kind: str  # "query", "chat" or "agent"
    bundle: QueryBundle
    log: EpisodeLog


class LamarTraceHandler(BaseEventHandler):
    """Record every query, chat call and agent run (input, lessons applied, answer, episode) as a sleep trace.

    Register it on the root dispatcher (``handler.register()``) and it appends one line to the
    JSON Lines file when each of these ends, or fails (the error goes to ``tool_errors``):

    - ``query``/``aquery`` of any query engine (``QueryStartEvent``/``QueryEndEvent``);
    - ``chat``/``achat``/``stream_chat``/``astream_chat`` of any chat engine (their spans);
    - the run of an agent (`FunctionAgent`, `ReActAgent`, any `BaseWorkflowAgent`) or of an
      `AgentWorkflow` (its workflow span): one trace per ``run``, however many steps, tool
      calls and handoffs it takes.

    A call made inside one of these (a query engine tool in an agent's run, the query a
    chat engine asks) is part of that call's trace, not one of its own. Added by hand with
    ``get_dispatcher().add_event_handler(handler)``, it hears the query events only. The outcome
    is left null: it is learned later, through the episode id, when the app reports it.

    A trace's fields:

    - ``context``: the context of the call's Lamar recalls, over the handler's own
      ``context`` (a mapping, or a callable of a `QueryBundle` of the call's input);
    - ``input``: the query text, the chat message, or the agent's user message;
      ``output``: the answer text ("" for a stream that has not been read, so that the
      handler never consumes it);
    - ``attempted``: one line per lesson applied, ``"lesson <id>: <text>"``;
    - ``tool_errors``: the call's error, and each tool call of an agent's run that failed;
    - ``episode_id``: the first Lamar episode logged during the call, seen even when
      every wanted lesson was held out; ``metadata`` lists them all, with the
      experience ids, the number of source nodes and the ``kind`` ("query", "chat", "agent").

    Args:
        traces: the .jsonl path, or a `TraceWriter`.
        context: fields for every trace (a mapping, or a callable of the `QueryBundle`).

    Raises:
        InvalidContext: `context` is a mapping whose keys or values are not strings, or neither a
            mapping, a callable nor None.
    """

    traces: Any = Field(description="TraceWriter appending to the JSON Lines file.")
    context: Any = Field(default=None, exclude=True, description="Mapping or callable of the query.")

    _pending: OrderedDict[str, _Pending] = PrivateAttr(default_factory=OrderedDict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _spans: _SpanListener = PrivateAttr()
    _span_targets: list[Dispatcher] = PrivateAttr(default_factory=list)  # where register() put the span listener

    def __init__(self, traces: str | os.PathLike[str] | TraceWriter,
                 context: Mapping[str, str] | Callable[[QueryBundle], Mapping[str, str]] | None = None,
                 **kwargs: Any) -> None:
        if isinstance(context, Mapping):
            context = check_context(context)  # refused now: inside a query it would cost every trace
        elif context is not None and not callable(context):
            raise InvalidContext(f"context must be a mapping of strings, a function of the QueryBundle or None; "
                                  f"got {type(context).__name__}")
        writer = traces if isinstance(traces, TraceWriter) else TraceWriter(traces)
        super().__init__(traces=writer, context=context, **kwargs)
        self._spans = _SpanListener()
        self._spans._owner = self

    @classmethod
    def class_name(cls) -> str:
        return "LamarTraceHandler"

    def register(self, dispatcher: Dispatcher | None = None) -> LamarTraceHandler:
        """Attach to `dispatcher` (default: the root one, which sees every call), for its events
        and its spans; once, however often it is called. Returns self."""
        target = dispatcher or get_dispatcher()
        if not any(h is self for h in target.event_handlers):
            target.add_event_handler(self)
        if not any(h is self._spans for h in target.span_handlers):
            target.add_span_handler(self._spans)
        if not any(t is target for t in self._span_targets):
            self._span_targets.append(target)
        return self

    def unregister(self, dispatcher: Dispatcher | None = None) -> None:
        """Detach from `dispatcher` (default: the root one)."""
        target = dispatcher or get_dispatcher()
        # By identity: pydantic equality would also match another handler with equal fields.
        target.event_handlers = [h for h in target.event_handlers if h is not self]
        target.span_handlers = [h for h in target.span_handlers if h is not self._spans]
        self._span_targets = [t for t in self._span_targets if t is not target]

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        """Dispatch entry point; errors are logged, never raised into the user's query."""
        if isinstance(event, QueryStartEvent):
            self._safely(event, "query", lambda: self._start(event.span_id, "query", event.query,
                                                             event.timestamp.timestamp()))
        elif isinstance(event, QueryEndEvent):
            self._safely(event, "query", lambda: self._end(event.span_id, response=event.response))
        elif isinstance(event, SpanDropEvent):
            if not event.err_str and self._span_targets:
                return  # an error with no text (a CancelledError): the span's drop, heard next, has its type
            self._safely(event, "call", lambda: self._end(event.span_id, error=event.err_str or "failed"))

    def _safely(self, what: Any, goes_on: str, record: Callable[[], None]) -> None:
        name = what if isinstance(what, str) else a_or_an(type(what).__name__)
        try:
            record()
        except StoreError as exc:  # the trace file cannot be written: the message says which and why
            logger.warning("LamarTraceHandler could not record %s (the %s goes on): %s", name, goes_on, exc)
        except Exception:
            logger.exception("LamarTraceHandler could not record %s", name)

    def _start(self, span_id: str | None, kind: str, query: Any, started: float) -> None:
        if span_id is None:
            return
        if any(open_ in self._pending for open_ in _OPEN.get()):
            return  # inside a call traced already: its trace holds this call's episodes
        bundle = query if isinstance(query, QueryBundle) else QueryBundle(query_str=str(query or ""))
        log = EpisodeLog()
        with self._lock:
            # The same start heard twice (the handler on two dispatchers of one query's path, or
            # added twice): a second log would stay open after the one end closes the first.
            if span_id in self._pending:
                return
            self._pending[span_id] = _Pending(started, kind, bundle, log)
            while len(self._pending) > _MAX_PENDING:
                self._pending.popitem(last=False)
        # The handler runs inside the call's own context, so this log catches the episodes
        # logged during this call and no other (see track_episodes).
        open_log(log)
        _OPEN.set((*_OPEN.get(), span_id))

    def _end(self, span_id: str | None, *, response: Any = None, error: str | None = None) -> None:
        if span_id is None or span_id not in self._pending:  # most spans: no lock taken for them
            return
        with self._lock:
            pending = self._pending.pop(span_id, None)
        if pending is None:
            return  # ended already (a drop is heard as an event and as a span), or never started here
        close_log(pending.log)
        _OPEN.set(tuple(open_ for open_ in _OPEN.get() if open_ != span_id))
        nodes: list[NodeWithScore] = list(getattr(response, "source_nodes", None) or [])
        episodes = list(dict.fromkeys(pending.log.ids))
        episodes += [e for e in _carried(response) if e not in episodes]
        lessons = {exp_id: clip_text(n.node.get_content(), 300)
                   for n in nodes if (exp_id := experience_id_of(n)) and episode_id_of(n)}
        for episode in episodes:  # what the memory block and the search tool injected: no node carries it
            for exp_id, text in pending.log.lessons.get(episode, ()):
                lessons.setdefault(exp_id, clip_text(text, 300))
        trace = Trace(
            id=f"llamaindex_{uuid.uuid4().hex}",
            context=self._context(pending, episodes),
            time=pending.started,
            input=pending.bundle.query_str,
            attempted=[f"lesson {exp_id}: {text}" for exp_id, text in lessons.items()],
            tool_errors=([error] if error is not None else []) + _tool_errors(response),
            output=_agent_text(response) if pending.kind == "agent" else _answer_text(response),
            episode_id=episodes[0] if episodes else None,
            metadata={
                "framework": "llamaindex",
                "kind": pending.kind,
                "span_id": span_id,
                "episode_ids": episodes,
                "experience_ids": list(lessons),
                "source_nodes": len(nodes),
            },
        )
        self.traces.write(trace)

    def _context(self, pending: _Pending, episodes: list[str]) -> dict[str, str]:
        merged = dict(self._fields(pending.bundle))
        for episode in episodes:
            merged.update(pending.log.contexts.get(episode, {}))
        return merged


    def _fields(self, bundle: QueryBundle) -> Mapping[str, str]:
        """The handler's own context fields; none, with a warning, when the app's function raised or returned
        no mapping of strings: it runs inside the instrumentation's callback, and the trace is still worth having."""
        if not callable(self.context):
            return self.context or {}
        try:
            return check_context(self.context(bundle), capped=False)  # long values: clipped by the writer
        except Exception as exc:  # noqa: BLE001 - the user's function, inside the user's call: fail open
            logger.warning("LamarTraceHandler's context function failed with %s: %s (the trace is written "
                           "without its fields)", type(exc).__name__, exc)
            return {}


class _SpanListener(NullSpanHandler):
    """The spans of chat engine calls and agent runs, which emit no event of their own, for its handler."""

    _owner: Any = PrivateAttr(default=None)

    def span_enter(self, id_: str, bound_args: inspect.BoundArguments, instance: Any | None = None,
                   parent_id: str | None = None, tags: dict[str, Any] | None = None, **kwargs: Any) -> None:
        try:  # every span of the app passes here: nothing may raise into it
            call = _traced_call(id_, bound_args, instance)
        except Exception:
            logger.exception("LamarTraceHandler could not read the start of %s", _name(id_))
            return
        if call is not None:
            kind, given = call
            self._owner._safely(f"the start of {_name(id_)}", kind,
                                lambda: self._owner._start(id_, kind, given, time.time()))

    def span_exit(self, id_: str, bound_args: inspect.BoundArguments, instance: Any | None = None,
                  result: Any | None = None, **kwargs: Any) -> None:
        pending = self._owner._pending.get(id_)
        if pending is not None:  # a query's end event has written its trace already: only the others
            # An agent's run ends with a StopEvent, which holds its output.
            response = getattr(result, "result", None) if pending.kind == "agent" else result
            self._owner._safely(f"the end of {_name(id_)}", pending.kind,
                                lambda: self._owner._end(id_, response=response))

    def span_drop(self, id_: str, bound_args: inspect.BoundArguments, instance: Any | None = None,
                  err: BaseException | None = None, **kwargs: Any) -> None:
        pending = self._owner._pending.get(id_)
        if pending is not None:
            self._owner._safely(f"the failure of {_name(id_)}", pending.kind,
                                lambda: self._owner._end(id_, error=_said(err)))


def _said(err: BaseException | None) -> str:
    """The trace's text of an error: its message, or its type where it has none (a cancelled call)."""
    return "failed" if err is None else str(err) or type(err).__name__


def _name(span_id: str) -> str:
    """``Class.method`` of a span id (``Class.method-<uuid>``)."""
    return span_id.split("-", 1)[0]


def _traced_call(span_id: str, bound_args: inspect.BoundArguments, instance: Any) -> tuple[str, Any] | None:
    """("query", "chat" or "agent", the call's input) for the spans a trace is written for; None for others."""
    method = _name(span_id).rsplit(".", 1)[-1]
    if isinstance(instance, BaseQueryEngine) and method in _QUERIES:  # a CustomQueryEngine emits no query event
        return "query", bound_args.arguments.get("str_or_query_bundle")
    if isinstance(instance, BaseChatEngine) and method in _CHATS:
        return "chat", bound_args.arguments.get("message")
    if isinstance(instance, (BaseWorkflowAgent, AgentWorkflow)) and "start_event" in bound_args.arguments:
        return "agent", _agent_input(bound_args.arguments["start_event"])
    return None


def _agent_input(start: Any) -> str:
    """The user message of an agent's run: ``user_msg``, else the last user message of ``chat_history``."""
    message = start.get("user_msg") if start is not None else None
    if message is None:
        users = [m for m in (start.get("chat_history") if start is not None else None) or ()
                 if isinstance(m, ChatMessage) and m.role == MessageRole.USER]
        message = users[-1] if users else ""
    return (message.content or "") if isinstance(message, ChatMessage) else str(message)


def _agent_text(output: Any) -> str:
    content = getattr(getattr(output, "response", None), "content", None)
    return content if isinstance(content, str) else ""


def _carried(response: Any) -> list[str]:
    """The episodes a response carries (its source nodes, an agent's tool calls); none for anything else."""
    if hasattr(response, "source_nodes") or hasattr(response, "tool_calls"):
        return episode_ids(response)
    return []


def _tool_errors(response: Any) -> list[str]:
    """The failed tool calls of an agent's run, as ``"<tool>: <error>"``."""
    errors = []
    for call in getattr(response, "tool_calls", None) or ():
        output = getattr(call, "tool_output", None)
        if getattr(output, "is_error", False):
            errors.append(f"{getattr(call, 'tool_name', '')}: {getattr(output, 'content', '')}")
    return errors


def _answer_text(response: Any) -> str:
    # A streamed chat's text lands when the thread draining its stream ends, before or after the call
    # does: a stream is written without it, whichever comes first, as a streamed query is.
    if response is None or isinstance(response, StreamingAgentChatResponse):
        return ""
    # StreamingResponse.__str__ would drain the user's generator; read only settled text.
    text = getattr(response, "response", None)
    if text is None:
        text = getattr(response, "response_txt", None)
    if isinstance(text, str):
        return text
    if hasattr(text, "model_dump_json"):  # PydanticResponse: a structured answer
        return str(text.model_dump_json())
    return ""


__all__ = ["LamarTraceHandler"]
