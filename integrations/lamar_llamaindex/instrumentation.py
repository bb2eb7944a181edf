"""`LamarTraceHandler`: write one sleep trace per LlamaIndex query, from the instrumentation events."""

from __future__ import annotations

import logging
import os
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.instrumentation import Dispatcher, get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.query import QueryEndEvent, QueryStartEvent
from llama_index.core.instrumentation.events.span import SpanDropEvent
from llama_index.core.schema import NodeWithScore, QueryBundle

from lamar import InvalidContext, StoreError
from lamar.experience import check_context
from lamar.integration import a_or_an
from lamar.sleep.trace_limits import clip_text
from lamar.sleep.traces import Trace, TraceWriter
from lamar_llamaindex.nodes import episode_id_of, experience_id_of
from lamar_llamaindex.outcomes import EpisodeLog, close_log, episode_ids, open_log

logger = logging.getLogger(__name__)

_MAX_PENDING = 1024  # queries started and not yet ended; a bound so a lost end event cannot leak memory


@dataclass
class _Pending:
    started: float
    bundle: QueryBundle
    log: EpisodeLog


class LamarTraceHandler(BaseEventHandler):
    """Record every query (input, lessons applied, answer, episode) as a sleep trace.

    Register it on the root dispatcher (``handler.register()``, or
    ``get_dispatcher().add_event_handler(handler)``) and each ``query``/``aquery`` of any
    query engine appends one line to the JSON Lines file when it ends, or when it
    fails (the error goes to ``tool_errors``). The outcome is left null: it is learned
    later, through the episode id, when the app reports it.

    A trace's fields:

    - ``context``: the context of the query's Lamar recall, over the handler's own
      ``context`` (a mapping, or a callable of the `QueryBundle`);
    - ``input``: the query text; ``output``: the answer text ("" for a stream that
      has not been read, so that the handler never consumes it);
    - ``attempted``: one line per lesson applied, ``"lesson <id>: <text>"``;
    - ``episode_id``: the first Lamar episode logged during the query, seen even when
      every wanted lesson was held out; ``metadata`` lists them all, with the
      experience ids and the number of source nodes.

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

    @classmethod
    def class_name(cls) -> str:
        return "LamarTraceHandler"

    def register(self, dispatcher: Dispatcher | None = None) -> LamarTraceHandler:
        """Attach to `dispatcher` (default: the root one, which sees every query); once, however
        often it is called. Returns self."""
        target = dispatcher or get_dispatcher()
        if not any(h is self for h in target.event_handlers):
            target.add_event_handler(self)
        return self

    def unregister(self, dispatcher: Dispatcher | None = None) -> None:
        """Detach from `dispatcher` (default: the root one)."""
        target = dispatcher or get_dispatcher()
        # By identity: pydantic equality would also match another handler with equal fields.
        target.event_handlers = [h for h in target.event_handlers if h is not self]

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        """Dispatch entry point; errors are logged, never raised into the user's query."""
        try:
            if isinstance(event, QueryStartEvent):
                self._start(event)
            elif isinstance(event, QueryEndEvent):
                self._end(event.span_id, response=event.response)
            elif isinstance(event, SpanDropEvent):
                self._end(event.span_id, error=event.err_str)
        except StoreError as exc:  # the trace file cannot be written: the message says which and why
            logger.warning("LamarTraceHandler could not record %s (the query goes on): %s",
                           a_or_an(type(event).__name__), exc)
        except Exception:
            logger.exception("LamarTraceHandler could not record %s", a_or_an(type(event).__name__))

    def _start(self, event: QueryStartEvent) -> None:
        if event.span_id is None:
            return
        query = event.query
        bundle = query if isinstance(query, QueryBundle) else QueryBundle(query_str=str(query))
        log = EpisodeLog()
        with self._lock:
            # The same start heard twice (the handler on two dispatchers of one query's path, or
            # added twice): a second log would stay open after the one end closes the first.
            if event.span_id in self._pending:
                return
            self._pending[event.span_id] = _Pending(event.timestamp.timestamp(), bundle, log)
            while len(self._pending) > _MAX_PENDING:
                self._pending.popitem(last=False)
        # The handler runs inside the query's own context, so this log catches the episodes
        # the postprocessor logs during this query and no other (see track_episodes).
        open_log(log)

    def _end(self, span_id: str | None, *, response: Any = None, error: str | None = None) -> None:
        with self._lock:
            pending = self._pending.pop(span_id, None) if span_id is not None else None
        if pending is None:
            return  # a drop of some inner span, or a query that started before registration
        close_log(pending.log)
        nodes: list[NodeWithScore] = list(getattr(response, "source_nodes", None) or [])
        episodes = list(pending.log.ids)
        episodes += [e for e in episode_ids(nodes) if e not in episodes]
        lessons = [(experience_id_of(n), n) for n in nodes if experience_id_of(n) and episode_id_of(n)]
        trace = Trace(
            id=f"llamaindex_{uuid.uuid4().hex}",
            context=self._context(pending, episodes),
            time=pending.started,
            input=pending.bundle.query_str,
            attempted=[f"lesson {exp_id}: {clip_text(n.node.get_content(), 300)}" for exp_id, n in lessons],
            tool_errors=[error] if error is not None else [],
            output=_answer_text(response),
            episode_id=episodes[0] if episodes else None,
            metadata={
                "framework": "llamaindex",
                "span_id": span_id,
                "episode_ids": episodes,
                "experience_ids": [exp_id for exp_id, _ in lessons],
                "source_nodes": len(nodes),
            },
        )
        self.traces.write(trace)

    def _context(self, pending: _Pending, episodes: list[str]) -> dict[str, str]:
        fields = self.context(pending.bundle) if callable(self.context) else (self.context or {})
        merged = dict(fields)
        for episode in episodes:
            merged.update(pending.log.contexts.get(episode, {}))
        return merged


def _answer_text(response: Any) -> str:
    if response is None:
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
